/*
 * core/estimate: see estimate.h.  Section numbers refer to
 * ../shared/reference/estimator.md, where each formula's source is given.
 */
#include "estimate.h"
#include "hfconfig.h"

#include <math.h>
#include <string.h>

#include "doc.h"
#include "gpu.h"
#include "models.h"
#include "plan.h"
#include "report.h"

#define GIB 1073741824.0

/* ---- reading the config -------------------------------------------- */

static double
num(const struct doc_node *v, double dflt)
{
	if (v != NULL && v->kind == DOC_INT)
		return (double)v->i;
	if (v != NULL && v->kind == DOC_FLOAT)
		return v->f;
	return dflt;
}

/* Is module name targeted by LoRA (lora_target_linear or the list)? */
static bool
targeted(const struct doc *d, const char *name)
{
	const struct doc_node *t = doc_map_value(d->root, "lora_target_modules");
	size_t i;

	if (doc_truthy(doc_map_value(d->root, "lora_target_linear")))
		return true;
	if (t == NULL || t->kind == DOC_NULL)
		return true;	/* nothing given: count all (upper bound) */
	if (t->kind == DOC_STR)	/* a regex: assume it takes them all */
		return true;
	for (i = 0; t->kind == DOC_SEQ && i < t->n; i++)
		if (t->items[i]->kind == DOC_STR &&
		    strcmp(t->items[i]->text, name) == 0)
			return true;
	return false;
}

/* fsdp_config.<key> (either spelling), or NULL. */
static const struct doc_node *
fsdp_value(const struct doc *d, const char *key)
{
	const struct doc_pair *p = plan_fsdp_get(d->root, key);

	return p != NULL ? p->value : NULL;
}

/* ---- section 2.2: optimizer state bytes per trainable parameter ------ */

static double
optim_bytes(const char *opt, double param_bytes)
{
	if (opt == NULL)
		return 2 * param_bytes;
	if (strstr(opt, "4bit") != NULL)
		return 1.03;
	if (strstr(opt, "8bit") != NULL || strstr(opt, "fp8") != NULL)
		return 2.03;
	if (strstr(opt, "adafactor") != NULL || strstr(opt, "came") != NULL)
		return 0.0;
	if (strcmp(opt, "sgd") == 0)
		return 0.0;
	if (strncmp(opt, "lion", 4) == 0 || strcmp(opt, "muon") == 0)
		return param_bytes;
	if (strstr(opt, "32bit") != NULL)
		return 8.0;
	return 2 * param_bytes;	/* AdamW family: m and v */
}

/*
 * Section 3.3, pre-quantized checkpoints: bytes per linear weight read
 * from the model id (NVFP4 0.5625, MXFP4 0.53, GPTQ/AWQ int4 0.53, bnb
 * NF4 0.5159), or 0 for a 16-bit checkpoint.
 */
static double
prequant_bytes(const char *id)
{
	if (doc_text_has_ci(id, "nvfp4"))
		return 0.5625;
	if (doc_text_has_ci(id, "mxfp4") || doc_text_has_ci(id, "gptq") ||
	    doc_text_has_ci(id, "awq"))
		return 0.53;
	if (doc_text_has_ci(id, "bnb-4bit") || doc_text_has_ci(id, "bnb-nf4"))
		return 0.5159;
	return 0;
}

/* ---- the estimate ---------------------------------------------------- */

struct arch {
	double h, L, a, akv, d, I, V, E, k, Ie, N;
	double Na;		/* active parameters per token (MoE) */
	bool tied;
};

/*
 * A catalog row with only a nominal size (verification "unverified"):
 * guess a Llama-like dense shape with that many parameters.  Judgement,
 * not a published fact: head size 128, h = 128 L (Llama-2/3 and Qwen
 * widths sit near it), SwiGLU I = 8h/3, N ~ 12 L h^2, and a 128k vocabulary
 * (the common size of recent models).  The finding says so.
 */
static bool
arch_nominal(struct arch *x, const struct model_def *m)
{
	double h;

	if (m == NULL || m->total_params <= 0)
		return false;
	x->N = x->Na = (double)m->total_params;
	h = cbrt(x->N * 128 / 12);
	h = h < 512 ? 512 : (double)(long long)(h / 128 + 0.5) * 128;
	x->h = h;
	x->L = (double)(long long)(h / 128 + 0.5);
	x->a = x->akv = h / 128;
	x->d = 128;
	x->I = 8 * h / 3;
	/* Embeddings stay under a third of a small model's parameters. */
	x->V = 128256;
	if (2 * x->V * h > x->N / 3)
		x->V = x->N / 3 / (2 * h);
	x->E = x->k = 0;
	x->Ie = x->I;
	x->tied = false;
	return true;
}

/*
 * The architecture of catalog row (or config.json) m.  A row with its
 * architecture but no verified total (a "special" architecture in
 * models.tsv) gets estimator.md section 1's count, and *derived says so.
 */
static bool
arch_of(struct arch *x, const struct model_def *m, bool *derived)
{
	long long total = m != NULL ? m->total_params : 0;
	long long active = m != NULL ? m->active_params : 0;

	*derived = false;
	if (m == NULL || m->hidden_size <= 0 || m->num_hidden_layers <= 0 ||
	    m->num_attention_heads <= 0 || m->vocab_size <= 0)
		return false;
	if (total <= 0) {
		if (!hfconfig_count(m, &total, &active))
			return false;
		*derived = true;
	}
	x->h = (double)m->hidden_size;
	x->L = (double)m->num_hidden_layers;
	x->a = (double)m->num_attention_heads;
	x->akv = m->num_key_value_heads > 0 ?
	    (double)m->num_key_value_heads : x->a;
	x->d = m->head_dim > 0 ? (double)m->head_dim : x->h / x->a;
	x->I = m->intermediate_size > 0 ? (double)m->intermediate_size :
	    4 * x->h;
	x->V = (double)m->vocab_size;
	x->E = m->num_experts > 0 ? (double)m->num_experts : 0;
	x->k = m->num_experts_per_tok > 0 ? (double)m->num_experts_per_tok :
	    0;
	x->Ie = m->moe_intermediate_size > 0 ?
	    (double)m->moe_intermediate_size : x->I;
	x->N = (double)total;
	x->Na = active > 0 ? (double)active : x->N;
	x->tied = m->tie_word_embeddings == 1;
	return true;
}

static const char *
largest(const struct mem_breakdown *b, double *gib)
{
	static const char *const names[] = { "weights", "gradients",
	    "optimizer", "activations", "logits", "buffers", "runtime" };
	double v[7];
	size_t i, best = 0;

	v[0] = b->weights_gib;
	v[1] = b->gradients_gib;
	v[2] = b->optimizer_gib;
	v[3] = b->activations_gib;
	v[4] = b->logits_gib;
	v[5] = b->buffers_gib;
	v[6] = b->runtime_gib;
	for (i = 1; i < 7; i++)
		if (v[i] > v[best])
			best = i;
	*gib = v[best];
	return names[best];
}

/*
 * Collective bandwidth per GPU, GB/s each way, for the run's interconnect
 * (estimator.md 11, practical column): the GPU's own fabric on one node,
 * InfiniBand NDR or 100 GbE across nodes.
 */
static double
link_gbps(const struct context *ctx, const struct gpu *g, bool across)
{
	const char *ic = ctx->interconnect != NULL ? ctx->interconnect :
	    g->link;

	if (strcmp(ic, "infiniband") == 0)
		return across ? 45 : g->link_gbps;
	if (strcmp(ic, "ethernet") == 0)
		return across || strcmp(g->link, "ethernet") == 0 ? 10 :
		    g->link_gbps;
	if (strcmp(ic, "pcie") == 0 && strcmp(g->link, "pcie") != 0)
		return 22;
	return g->link_gbps;
}

/*
 * Sections 10 and 11: FLOPs per token over peak x MFU for compute, ring
 * collective bytes over link bandwidth for communication, per optimizer
 * step.  MFU is judgement within estimator.md's planning ranges: full
 * fine-tune 40% with packing and 30% without, LoRA 35%, QLoRA 25%, MoE
 * 20% (QLoRA on MoE 7%, below).  Communication overlaps compute, so the
 * step takes the larger.
 */
static void
throughput(struct estimate *e, const struct doc *d, const struct plan *p,
    const struct context *ctx, const struct gpu *g, const struct arch *x,
    bool lora, bool qlora, double n_lora, double n_linear, double n_embed,
    bool fsdp, bool ds, bool ddp)
{
	double na = x->Na, f, mfu, T, ga, world, dp, n, S, bytes = 0, bw;
	double tp = (double)(p->tp > 1 ? p->tp : 1);
	double cp = (double)(p->cp > 1 ? p->cp : 1);
	double hq = x->a * x->d, s = (double)p->sequence_len;
	bool gc = p->gradient_checkpointing;
	bool across;

	if (g->tflops16 <= 0)
		return;
	/* FLOPs per trained token (section 10). */
	if (lora)
		f = 4 * na + 6 * n_lora + (gc ? 2 * na : 0);
	else
		f = 6 * na + (gc ? 2 * na : 0);
	f += 6 * x->L * s * hq * (gc ? 4.0 / 3 : 1);
	if (qlora)
		f *= 1.2;	/* dequantisation, 10-30% */
	/* QLoRA on a MoE: 7%, calibrated on Axolotl's published Llama-4
	   Scout QLoRA figure, 519 tokens/s on one H100 (axolotl:
	   examples/llama-4/README.md:23, cited in estimator.md 10). */
	mfu = x->E > 0 ? (qlora ? 0.07 : 0.20) : qlora ? 0.25 : lora ? 0.35 :
	    p->sample_packing ? 0.40 : 0.30;
	world = (double)(p->world > 0 ? p->world : 1);
	ga = (double)(p->gradient_accumulation_steps > 0 ?
	    p->gradient_accumulation_steps : 1);
	dp = world / (tp * cp);
	if (dp < 1)
		dp = 1;
	T = (double)p->micro_batch_size * s;
	e->compute_time_s = ga * T * f / (tp * cp * g->tflops16 * 1e12 * mfu);

	/* Bytes per GPU per optimizer step (section 11). */
	n = fsdp ? (double)(p->dp_shard > 1 ? p->dp_shard : 1) * cp :
	    ds ? world / tp : dp;
	S = lora ? (qlora && fsdp ? 0.516 * n_linear + 2 * n_embed :
	    4 * n_lora) : 2 * x->N;
	if (n > 1) {
		double r = (n - 1) / n;

		if (ds && p->zero_stage == 3)
			bytes = ga * 3 * r * S;
		else if (ds && p->zero_stage == 2)
			bytes = ga * r * S + r * S;
		else if (ds || ddp)
			bytes = 2 * r * S;
		else if (fsdp) {
			const struct doc_node *raf = fsdp_value(d,
			    "reshard_after_forward");

			bytes = ga * (raf != NULL && raf->kind == DOC_BOOL &&
			    !raf->b ? 2 : 3) * r * S;
		}
	}
	if (tp > 1)
		bytes += ga * x->L * 4 * 2 * (tp - 1) / tp * 2 * T * x->h;
	if (cp > 1)
		bytes += ga * x->L * 3 * (cp - 1) * 2 * (T / cp) *
		    (x->akv * x->d) * 2;
	across = ctx->nodes > 1 && (n > (double)ctx->gpus_per_node ||
	    tp > (double)ctx->gpus_per_node);
	bw = link_gbps(ctx, g, across);
	e->comm_gb = bytes / 1e9;
	e->comm_time_s = bw > 0 ? bytes / (bw * 1e9) : 0;
	e->step_time_s = e->compute_time_s > e->comm_time_s ?
	    e->compute_time_s : e->comm_time_s;
	e->bound = e->comm_time_s > e->compute_time_s ? "communication" :
	    "compute";
	e->tokens_per_second = e->step_time_s > 0 ? ga * T * dp /
	    e->step_time_s : 0;
	if (ctx->dataset_tokens > 0 && e->tokens_per_second > 0) {
		e->epoch_time_s = (double)ctx->dataset_tokens /
		    e->tokens_per_second;
		e->gpu_hours_per_epoch = e->epoch_time_s * world / 3600;
	}
}

const struct model_def *
estimate_model(const struct doc *d)
{
	const struct doc_node *bm = doc_map_value(d->root, "base_model");
	const struct doc_node *bc = doc_map_value(d->root,
	    "base_model_config");
	const struct model_def *m = NULL;

	if (bm != NULL && bm->kind == DOC_STR)
		m = models_find(bm->text);
	if (m == NULL && bc != NULL && bc->kind == DOC_STR)
		m = models_find(bc->text);
	return m;
}

void
estimate_run(struct estimate *e, const struct doc *d, const struct plan *p,
    const struct context *ctx)
{
	const struct gpu *g = gpu_find(ctx->gpu);
	const struct doc_node *bm = doc_map_value(d->root, "base_model");
	struct arch x;
	struct mem_breakdown *b = &e->breakdown;
	double hq, hkv, n_embed, n_linear, n_lora = 0, r, T, Tl, a_layer;
	double wbytes, gbytes, obytes, lora_state, G, tp, cp, ep;
	double weights = 0, grads = 0, optim = 0, buffers = 0, cpu = 0;
	double act, logits, alloc;
	const char *ad = p->adapter;
	bool lora = ad != NULL && (strcmp(ad, "lora") == 0 ||
	    strcmp(ad, "qlora") == 0);
	bool qlora = lora && (strcmp(ad, "qlora") == 0 || p->load_in_4bit);
	bool fsdp = strncmp(p->strategy, "fsdp", 4) == 0;
	bool ds = strcmp(p->strategy, "deepspeed") == 0;
	bool ddp = strcmp(p->strategy, "ddp") == 0;
	const struct doc_node *gc = doc_map_value(d->root, "gradient_checkpointing");

	memset(e, 0, sizeof(*e));
	e->model_id = bm != NULL && bm->kind == DOC_STR ? bm->text : NULL;
	e->model = ctx->model != NULL ? ctx->model : estimate_model(d);
	e->source = e->model == NULL ? "unknown" : e->model->verification !=
	    NULL && strcmp(e->model->verification, "config") == 0 ?
	    e->model->source : "catalog";
	if (e->model != NULL)
		e->params = e->model->total_params;
	/* Usable memory: the nominal size less ~0.5% the driver keeps
	   (an 80 GB H100 reports 79.6 GiB, DESIGN.md's example). */
	e->capacity_gib = ctx->gpu_memory_gib > 0 ? ctx->gpu_memory_gib :
	    g != NULL ? g->memory_gib * 0.995 : 0;
	if (g == NULL)
		return;
	if (!arch_of(&x, e->model, &e->derived)) {
		if (!arch_nominal(&x, e->model))
			return;
		e->nominal = true;
	}
	e->known = true;
	e->params = (long long)x.N;

	/* Section 1: where the parameters are. */
	hq = x.a * x.d;
	hkv = x.akv * x.d;
	n_embed = x.V * x.h * (x.tied ? 1 : 2);
	n_linear = x.N - n_embed - x.L * 2 * x.h - x.h;
	if (n_linear < 0)
		n_linear = 0;

	/* Mesh: sharding ranks, tensor, context and expert degrees. */
	tp = (double)(p->tp > 1 ? p->tp : 1);
	cp = (double)(p->cp > 1 ? p->cp : 1);
	ep = (double)(p->ep > 1 ? p->ep : 1);
	/* Ranks that share the model states: FSDP2 shards over the
	   flattened dp_shard x cp mesh; DeepSpeed partitions over every
	   rank outside tensor parallelism (Axolotl's context parallelism is
	   invisible to it); DDP replicates. */
	if (fsdp)
		G = (double)(p->dp_shard > 1 ? p->dp_shard : 1) * cp;
	else
		G = (double)(p->world / p->tp > 1 ? p->world / p->tp : 1);

	/* Section 2.1: bytes per parameter in the training dtype. */
	wbytes = strcmp(p->precision, "fp32") == 0 ? 4 : 2;
	if (strcmp(p->precision, "fp16") == 0 && !lora)
		wbytes = 4;	/* fp16 AMP keeps fp32 weights */
	gbytes = wbytes;
	obytes = optim_bytes(p->optimizer, wbytes);

	/* Section 3.1: LoRA parameters per layer. */
	if (lora) {
		/* With lora_target_parameters naming the fused experts,
		   module targets reach only the dense or shared MLP. */
		bool fused = doc_map_value(d->root, "lora_target_parameters") != NULL;
		double per = 0, mlp_in = x.E > 0 && !fused ? x.E : 1;
		double Im = x.E > 0 && !fused ? x.Ie : x.I;

		r = num(doc_map_value(d->root, "lora_r"), 8);
		if (!(r >= 1 && r <= 65536))	/* also NaN */
			r = 8;
		if (targeted(d, "q_proj"))
			per += x.h + hq;
		if (targeted(d, "k_proj"))
			per += x.h + hkv;
		if (targeted(d, "v_proj"))
			per += x.h + hkv;
		if (targeted(d, "o_proj"))
			per += hq + x.h;
		if (targeted(d, "gate_proj"))
			per += mlp_in * (x.h + Im);
		if (targeted(d, "up_proj"))
			per += mlp_in * (x.h + Im);
		if (targeted(d, "down_proj"))
			per += mlp_in * (Im + x.h);
		/* Section 3.1: lora_target_parameters puts LoRA on fused
		   3-D expert tensors, E x r x (d_in + d_out) each. */
		if (x.E > 0) {
			const struct doc_node *tps = doc_map_value(d->root,
			    "lora_target_parameters");
			size_t q;

			for (q = 0; tps != NULL && tps->kind == DOC_SEQ &&
			    q < tps->n; q++) {
				const char *t = tps->items[q]->kind ==
				    DOC_STR ? tps->items[q]->text : "";

				if (strstr(t, "gate_up_proj") != NULL)
					per += x.E * (x.h + 2 * x.Ie);
				else if (strstr(t, "down_proj") != NULL)
					per += x.E * (x.Ie + x.h);
			}
		}
		n_lora = x.L * r * per;
	}
	e->trainable_params = (lora ? n_lora : x.N) < 9e18 ?
	    (long long)(lora ? n_lora : x.N) : 0;

	if (lora) {
		/* Section 3.2-3.3: frozen base, fp32 adapters. */
		double lin = prequant_bytes(e->model->hf_id);
		double base = lin > 0 ? n_linear * lin + n_embed * 2 :
		    qlora ? n_linear * 0.5159 + n_embed * 2 :
		    p->load_in_8bit ? n_linear * 1.0 + n_embed * 2 :
		    (n_linear + n_embed) * wbytes;
		double shard = (fsdp || (ds && p->zero_stage == 3)) ? G : 1;

		/* DeepSpeed runs the whole model in 16 bits (its fp32
		   master copy lives in the optimizer) and partitions the
		   gradients from ZeRO-2 on. */
		double lb = ds ? 2 : 4;

		lora_state = optim_bytes(p->optimizer, 4);
		weights = (base + n_lora * lb) / shard;
		grads = n_lora * lb / (ds && p->zero_stage >= 2 ? G : shard);
		optim = n_lora * lora_state / (ds || fsdp ? G : 1);
		/* 3.4: one dequantized matrix; under ZeRO-3 the gathered
		   16-bit embedding (the largest module) bounds it. */
		if ((qlora || lin > 0) && !(ds && p->zero_stage == 3)) {
			double mat = x.h * (x.E > 0 ? x.Ie : x.I);

			buffers += 2 * (mat < n_linear / x.L ? mat :
			    n_linear / x.L);
		}
		if (fsdp && doc_truthy(fsdp_value(d, "offload_params"))) {
			cpu += weights + grads + optim;
			weights = grads = optim = 0;
		}
		if (ds && p->zero_stage == 3) {
			/* The largest module gathered in 16 bits (4.2: the
			   embedding; frozen, so no gradient), and ZeRO-3's
			   offload of params and optimizer. */
			buffers += 2 * x.V * x.h;
			if (p->ds_offload_param) {
				cpu += weights + grads;
				weights = grads = 0;
			}
		}
		if (ds && p->ds_offload_optimizer) {
			cpu += optim;
			optim = 0;
		}
		if (fsdp) {
			/* Section 4.3: gathered units, with prefetch, in
			   the bytes the base is stored in; under expert
			   parallelism a rank gathers only its own experts
			   (section 4.4). */
			double unit = n_linear / x.L, ex;

			if (ep > 1 && x.E > 0 && unit > 0) {
				ex = x.E * 3 * x.h * x.Ie / unit;
				unit *= 1 - (1 - 1 / ep) * (ex < 1 ? ex : 1);
			}
			buffers += (lin > 0 ? lin : qlora ? 0.5159 : wbytes) *
			    unit * 2 + 2 * x.V * x.h;
		}
	} else if (ds) {
		/* Section 4.2: DeepSpeed's own estimator, current code. */
		double P = x.N, Lg = x.V * x.h;

		if (p->zero_stage == 3) {
			buffers += 4 * Lg;
			if (p->ds_offload_param && p->ds_offload_optimizer)
				cpu += 18 * P / G * 1.5;
			else if (p->ds_offload_optimizer) {
				weights = 2 * P / G;
				cpu += 16 * P / G * 1.5;
			} else {
				weights = 2 * P / G;
				grads = 6 * P / G;
				optim = 10 * P / G;
			}
		} else if (p->zero_stage == 2 || p->zero_stage == 0) {
			/* Outside the model-state formula: one layer's
			   16-bit gradients exist before they are reduced. */
			buffers += 2 * n_linear / x.L;
			weights = 2 * P;
			if (p->ds_offload_optimizer)
				cpu += P * (4 * G > 16 ? 4 * G : 16) * 1.5 / G;
			else {
				grads = 6 * P / G;
				optim = 12 * P / G;
			}
		} else {	/* ZeRO-1 */
			buffers += 2 * n_linear / x.L;
			weights = 2 * P;
			grads = 2 * P;
			optim = 12 * P / G;
		}
	} else if (fsdp) {
		/* Section 4.3: FULL_SHARD states, gathered working units. */
		const struct doc_node *raf = fsdp_value(d, "reshard_after_forward");
		const struct doc_node *ss = fsdp_value(d, "sharding_strategy");

		weights = x.N * wbytes / G;
		grads = x.N * gbytes / G;
		optim = x.N * obytes / G;
		buffers += wbytes * (n_linear / x.L) * 3 + 2 * x.V * x.h;
		if ((raf != NULL && raf->kind == DOC_BOOL && !raf->b) ||
		    (ss != NULL && ss->kind == DOC_STR &&
		    strcmp(ss->text, "SHARD_GRAD_OP") == 0))
			buffers += wbytes * x.N * (1 - 1 / G);
		if (doc_truthy(fsdp_value(d, "offload_params"))) {
			cpu += weights + grads + optim;
			weights = grads = optim = 0;
		}
	} else {
		/* Single GPU or DDP: everything on every rank (4.1). */
		weights = x.N * wbytes;
		grads = x.N * gbytes;
		optim = x.N * obytes;
		if (ddp)
			buffers += grads;	/* bucket copy of the grads */
	}
	/* Section 4.4: tensor and expert parallel split the states. */
	weights /= tp;
	grads /= tp;
	optim /= tp;
	if (ep > 1 && x.E > 0) {
		double ef = 1 - (1 - 1 / ep) * (n_linear > 0 ?
		    (x.L * x.E * 3 * x.h * x.Ie) / (n_linear + n_embed) : 0);

		if (ef > 0 && ef < 1) {
			weights *= ef;
			grads *= ef;
			optim *= ef;
		}
	}

	/* Section 5: activations, per micro-batch of T tokens. */
	T = (double)p->micro_batch_size * (double)p->sequence_len;
	{
		/* Section 6: preference pairs concatenate chosen and
		   rejected; DPO-style methods add a frozen reference model
		   unless an adapter lets the base serve as one. */
		const struct doc_node *rl = doc_map_value(d->root, "rl");
		bool ref = false;

		if (rl != NULL && rl->kind == DOC_STR) {
			ref = strcmp(rl->text, "dpo") == 0 ||
			    strcmp(rl->text, "ipo") == 0 ||
			    strcmp(rl->text, "kto") == 0;
			if (ref || strcmp(rl->text, "orpo") == 0 ||
			    strcmp(rl->text, "simpo") == 0)
				T *= 2;
		}
		if (ref && !lora)
			weights += x.N * wbytes / (fsdp || (ds &&
			    p->zero_stage == 3) ? G : 1) / tp;
	}
	Tl = T / cp;
	{
		double mlp = doc_truthy(doc_map_value(d->root,
		    "liger_glu_activation")) ? 4 : 8;
		double inner = 2 * hq + 4 * hkv + 2 * hq;

		if (x.E > 0)
			inner += (x.k > 0 ? x.k : 1) * mlp * x.Ie + x.E * 4 +
			    (x.k > 0 ? x.k : 1) * x.h * 2;
		else
			inner += mlp * x.I;
		a_layer = Tl * (8 * x.h + inner / tp);
		if (strcmp(p->attention, "eager") == 0)
			a_layer += 6 * x.a / tp * (double)p->sequence_len *
			    (double)p->sequence_len *
			    (double)p->micro_batch_size / cp;
		if (lora && num(doc_map_value(d->root, "lora_dropout"), 0) > 0 &&
		    !p->gradient_checkpointing)
			a_layer += Tl * 3 * (3 * x.h + hq + 2 * x.h + x.I);
	}
	if (p->gradient_checkpointing || (fsdp && doc_truthy(fsdp_value(d,
	    "activation_checkpointing")))) {
		double ckpt = x.L * 2 * Tl * x.h;

		if (gc != NULL && gc->kind == DOC_STR &&
		    strncmp(gc->text, "offload", 7) == 0) {
			cpu += ckpt;
			ckpt = 4 * Tl * x.h;
		} else if (p->activation_offloading != NULL &&
		    strcmp(p->activation_offloading, "false") != 0) {
			cpu += ckpt;
			ckpt = 4 * Tl * x.h;
		}
		act = ckpt + a_layer * 1.5;
	} else if (p->activation_offloading != NULL &&
	    strcmp(p->activation_offloading, "false") != 0) {
		cpu += x.L * a_layer;
		act = 2 * a_layer;
	} else
		act = x.L * a_layer + 2 * Tl * x.h;

	/* Section 6: logits and loss. */
	if (doc_seq_has(doc_map_value(d->root, "plugins"), "CutCrossEntropy") ||
	    doc_truthy(doc_map_value(d->root, "cut_cross_entropy")))
		logits = Tl * x.h * 2;
	else if (doc_truthy(doc_map_value(d->root,
	    "liger_fused_linear_cross_entropy"))) {
		double chunks = x.V / x.h;

		logits = Tl / (chunks < 1 ? 1 : chunks) * x.V * 8;
	} else
		logits = 10 * Tl * x.V / tp;

	throughput(e, d, p, ctx, g, &x, lora, qlora, n_lora, n_linear,
	    n_embed, fsdp, ds, ddp);

	/* Section 7: CUDA context, libraries and allocator slack (1 GiB
	   plus 5% of the allocated peak: the low end of the ranges). */
	alloc = weights + grads + optim + act + logits + buffers;
	b->weights_gib = weights / GIB;
	b->gradients_gib = grads / GIB;
	b->optimizer_gib = optim / GIB;
	b->activations_gib = act / GIB;
	b->logits_gib = logits / GIB;
	b->buffers_gib = buffers / GIB;
	b->runtime_gib = 1.0 + 0.05 * alloc / GIB;
	e->per_gpu_peak_gib = b->weights_gib + b->gradients_gib +
	    b->optimizer_gib + b->activations_gib + b->logits_gib +
	    b->buffers_gib + b->runtime_gib;
	e->cpu_offload_gib = cpu / GIB;
	e->fits = e->per_gpu_peak_gib <= e->capacity_gib;
	e->largest_term = largest(b, &e->largest_gib);
}
