/*
 * core/estimate: see estimate.h.  Section numbers refer to
 * ../shared/reference/estimator.md, where each formula's source is given.
 */
#include "estimate.h"
#include "estimate_int.h"
#include "hfconfig.h"

#include <math.h>
#include <stdio.h>
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

/* Where a LoRA target reaches: the attention or a dense MLP, a MoE
   layer's shared experts, its routed experts (nn.Linear experts only). */
#define HIT_DENSE	1
#define HIT_SHARED	2
#define HIT_ROUTED	4
#define HIT_ALL		(HIT_DENSE | HIT_SHARED | HIT_ROUTED)

/*
 * Which modules named name LoRA targets (lora_target_linear or the
 * lora_target_modules list): PEFT takes a target that equals a module's
 * name or ends with "." and it (peft: tuners_utils.check_target_module_
 * exists), so "self_attn.q_proj" is q_proj and "shared_expert.gate_proj"
 * only the shared expert's.  A HIT_* mask; 0 when not targeted.
 */
static int
targeted(const struct doc *d, const char *name)
{
	const struct doc_node *t = doc_map_value(d->root, "lora_target_modules");
	size_t i, n = strlen(name);
	int hit = 0;

	if (doc_truthy(doc_map_value(d->root, "lora_target_linear")))
		return HIT_ALL;
	if (t == NULL || t->kind == DOC_NULL)
		return HIT_ALL;	/* nothing given: count all (upper bound) */
	if (t->kind == DOC_STR)	/* a regex: assume it takes them all */
		return HIT_ALL;
	for (i = 0; t->kind == DOC_SEQ && i < t->n; i++) {
		const char *s = t->items[i]->kind == DOC_STR ?
		    t->items[i]->text : "";
		size_t k = strlen(s);

		if (k < n || strcmp(s + k - n, name) != 0 ||
		    (k > n && s[k - n - 1] != '.'))
			continue;
		if (strstr(s, "shared_expert") != NULL)
			hit |= HIT_SHARED;
		else if (strstr(s, "experts") != NULL)
			hit |= HIT_ROUTED;
		else
			hit |= HIT_ALL;
	}
	return hit;
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
	x->E = x->k = x->kdense = x->ns = 0;
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
	x->ns = x->E > 0 && m->shared_experts > 0 &&
	    m->shared_experts < 64 ? (double)m->shared_experts : 0;
	x->kdense = x->E > 0 && m->first_k_dense > 0 &&
	    m->first_k_dense < m->num_hidden_layers ?
	    (double)m->first_k_dense : 0;
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

/* ---- the memory terms (docs/estimator.md gives each one's source) ---- */

/*
 * The judgement terms, fitted by `make calibrate` (tests/calibrate) on
 * ../shared/reference/memory-measured.tsv with leave-one-model-family-out
 * cross-validation; docs/estimator.md has the table.  Everything else in
 * this file is a count of tensors.
 */
const struct estimate_calib estimate_calib_default = {
	/* 4% of the states: they are allocated once, in large blocks. */
	.reserve_static = 0.04,
	/* 28% of what is freed and reallocated each step, both phases
	   (activations and the loss's buffers, DDP and dequantization
	   buffers). */
	.reserve_transient = 0.28,
	/* 120% of a sharded run's gathered units and collective buffers:
	   blocks cached on the collectives' streams. */
	.reserve_sharded = 1.20,
	/* CUDA context, cuBLAS/cuDNN workspaces, kernels (estimator.md 7
	   gives 0.5-1.5 GiB). */
	.context_gib = 0.60,
	/* NCCL communicators and their channel buffers on more than one
	   GPU: judgement, not fitted (too few multi-GPU rows to fit it
	   apart from the sharded reserve). */
	.comm_gib = 0.50,
	/* measured / estimate over the cross-validated rows: 10th and 90th
	   percentiles. */
	.range_low = 0.75,
	.range_high = 1.53,
};

/* What the memory sections share, derived once per run. */
struct run {
	const struct doc *d;
	const struct plan *p;
	const char *model_type;	/* config.json's, or NULL */
	struct arch x;
	bool lora, qlora, q8, fsdp, fsdp1, ds, ddp;
	double G, tp, cp, ep;
	double wbytes;		/* training dtype: 2, or 4 (fp32, fp16 AMP) */
	double wc;		/* compute dtype of gathered units */
	double n_embed;		/* embedding (+ untied head) */
	double n_norm;		/* norms */
	double n_linear;	/* everything else: the layers' matrices */
	double n_exp;		/* of which routed experts */
	double L_moe;		/* layers with routed experts */
	double unit;		/* parameters of the largest decoder layer */
	double unit_exp;	/* of which routed experts */
	double n_lora;
	double n_mts;		/* lora_modules_to_save: fully trainable */
	double lb;		/* bytes per LoRA weight: fp32, or the
				   training dtype without PEFT's autocast */
	double n_train;		/* trainable parameters of a full fine-tune
				   (unfrozen_parameters), else N */
	double pre;		/* bytes per weight of a pre-quantized
				   checkpoint, or 0 */
	double lin;		/* bytes per frozen (dense) linear weight */
	double exb;		/* bytes per frozen expert weight */
	bool fused;		/* MoE experts are fused 3-D parameters */
	bool exp_replicated;	/* quantized experts FSDP does not shard */
	bool exp_parametrized;	/* experts quantized on load (3-D) */
};

struct terms {
	double weights, grads, optim, act, logits, buffers, cpu;
};

/*
 * bitsandbytes optimizers (Hugging Face's OptimizerNames): FSDP cannot
 * shard their 8-bit state, so they keep 32-bit states there (estimator.md
 * 4.3, from axolotl: examples/archived/dbrx/README.md).
 */
static bool
bnb_optimizer(const char *opt)
{
	return opt != NULL && (strstr(opt, "bnb") != NULL ||
	    strncmp(opt, "paged_", 6) == 0 || strcmp(opt, "adamw_8bit") == 0 ||
	    strncmp(opt, "lion_", 5) == 0);
}

/* LoRA on a d_in x d_out matrix for each targeted (gate, up, down) of
   an MLP of width I: r x (d_in + d_out) without the rank. */
static double
lora_mlp(int gate, int up, int down, int mask, double h, double I)
{
	return ((gate & mask) ? h + I : 0) + ((up & mask) ? h + I : 0) +
	    ((down & mask) ? I + h : 0);
}

/*
 * Section 3.1: LoRA parameters of the whole model.  Module targets reach
 * the attention and the dense MLPs, a MoE layer's shared experts, and
 * its routed experts only when they are nn.Linear modules (r->fused is
 * false); fused 3-D experts take LoRA through lora_target_parameters,
 * E x r x (d_in + d_out) per tensor.
 */
static double
lora_params(const struct run *r)
{
	const struct doc *d = r->d;
	const struct arch *x = &r->x;
	double hq = x->a * x->d, hkv = x->akv * x->d, rank, attn = 0;
	double dense, moe = 0;
	int g = targeted(d, "gate_proj"), u = targeted(d, "up_proj");
	int dn = targeted(d, "down_proj");

	rank = num(doc_map_value(d->root, "lora_r"), 8);
	if (!(rank >= 1 && rank <= 65536))	/* also NaN */
		rank = 8;
	if (targeted(d, "q_proj"))
		attn += x->h + hq;
	if (targeted(d, "k_proj"))
		attn += x->h + hkv;
	if (targeted(d, "v_proj"))
		attn += x->h + hkv;
	if (targeted(d, "o_proj"))
		attn += hq + x->h;
	dense = lora_mlp(g, u, dn, HIT_DENSE, x->h, x->I);
	if (x->E > 0) {
		const struct doc_node *tps = doc_map_value(d->root,
		    "lora_target_parameters");
		size_t q;

		if (!r->fused)
			moe += x->E * lora_mlp(g, u, dn, HIT_ROUTED, x->h,
			    x->Ie);
		if (x->ns > 0)
			moe += lora_mlp(g, u, dn, HIT_SHARED, x->h,
			    x->ns * x->Ie);
		for (q = 0; tps != NULL && tps->kind == DOC_SEQ &&
		    q < tps->n; q++) {
			const char *t = tps->items[q]->kind == DOC_STR ?
			    tps->items[q]->text : "";

			if (strstr(t, "gate_up_proj") != NULL)
				moe += x->E * (x->h + 2 * x->Ie);
			else if (strstr(t, "down_proj") != NULL)
				moe += x->E * (x->Ie + x->h);
		}
	}
	return rank * (x->L * attn + (x->L - r->L_moe) * dense +
	    r->L_moe * moe);
}

/*
 * lora_modules_to_save: PEFT wraps each named module in a
 * ModulesToSaveWrapper that keeps the frozen original and trains a copy
 * (peft: utils/other.py), so the copy has weights, gradients and
 * optimizer states.  Counted for the embedding and the head, the modules
 * Axolotl's examples name (vocabulary changes); other modules are small.
 */
static double
mts_params(const struct run *r)
{
	const struct doc_node *m = doc_map_value(r->d->root,
	    "lora_modules_to_save");
	const struct arch *x = &r->x;
	double n = 0;
	bool embed = false, head = false;
	size_t i;

	for (i = 0; m != NULL && m->kind == DOC_SEQ && i < m->n; i++) {
		const char *s = m->items[i]->kind == DOC_STR ?
		    m->items[i]->text : "";

		if (strstr(s, "embed") != NULL || strcmp(s, "wte") == 0)
			embed = true;
		else if (strstr(s, "lm_head") != NULL ||
		    strcmp(s, "output") == 0)
			head = true;
	}
	if (embed)
		n += x->V * x->h;
	if (head)
		n += x->V * x->h;
	return n;
}

static void
run_init(struct run *r, const struct doc *d, const struct plan *p,
    const struct model_def *m)
{
	struct arch *x = &r->x;
	const char *ad = p->adapter;
	const char *id = m != NULL ? m->hf_id : NULL;
	double per_exp;

	r->d = d;
	r->p = p;
	r->model_type = m != NULL ? m->model_type : NULL;
	r->lora = ad != NULL && (strcmp(ad, "lora") == 0 ||
	    strcmp(ad, "qlora") == 0);
	r->qlora = r->lora && (strcmp(ad, "qlora") == 0 || p->load_in_4bit);
	r->q8 = r->lora && !r->qlora && p->load_in_8bit;
	r->fsdp = strncmp(p->strategy, "fsdp", 4) == 0;
	r->fsdp1 = strcmp(p->strategy, "fsdp1") == 0;
	r->ds = strcmp(p->strategy, "deepspeed") == 0;
	r->ddp = strcmp(p->strategy, "ddp") == 0;
	r->tp = (double)(p->tp > 1 ? p->tp : 1);
	r->cp = (double)(p->cp > 1 ? p->cp : 1);
	r->ep = (double)(p->ep > 1 ? p->ep : 1);
	/* Ranks that share the model states: FSDP2 shards over the
	   flattened dp_shard x cp mesh; DeepSpeed partitions over every
	   rank outside tensor parallelism (Axolotl's context parallelism is
	   invisible to it); DDP replicates. */
	if (r->fsdp)
		r->G = (double)(p->dp_shard > 1 ? p->dp_shard : 1) * r->cp;
	else
		r->G = (double)(p->world / p->tp > 1 ? p->world / p->tp : 1);

	/* Section 2.1: bytes per parameter in the training dtype. */
	r->wbytes = strcmp(p->precision, "fp32") == 0 ? 4 : 2;
	if (strcmp(p->precision, "fp16") == 0 && !r->lora)
		r->wbytes = 4;	/* fp16 AMP keeps fp32 weights */
	r->wc = strcmp(p->precision, "fp32") == 0 ? 4 : 2;

	/* Section 1: where the parameters are. */
	r->n_embed = x->V * x->h * (x->tied ? 1 : 2);
	r->n_norm = x->L * 2 * x->h + x->h;
	r->n_linear = x->N - r->n_embed - r->n_norm;
	if (r->n_linear < 0)
		r->n_linear = 0;
	r->L_moe = x->E > 0 ? x->L - x->kdense : 0;
	per_exp = 3 * x->h * x->Ie;
	r->n_exp = r->L_moe * x->E * per_exp;
	if (r->n_exp > 0.98 * r->n_linear)
		r->n_exp = 0.98 * r->n_linear;
	r->unit = (r->n_linear - r->n_exp) / x->L + r->n_norm / x->L;
	r->unit_exp = r->L_moe > 0 ? r->n_exp / r->L_moe : 0;
	r->unit += r->unit_exp;

	/* Sections 3.3 and 8: bytes of the frozen base.  Transformers v5
	   keeps MoE experts as fused 3-D parameters, which bitsandbytes
	   does not quantize and LoRA's module targets do not reach: they
	   stay 16-bit unless quantize_moe_experts quantizes them on load
	   (axolotl: docs/expert_quantization.qmd).  Experts are nn.Linear
	   modules, quantized and targeted like any other, in a "Linearized"
	   checkpoint and under trust_remote_code, where the model's own
	   modeling file runs (Jamba's and Kimi-Linear's keep a ModuleList
	   of MLPs).  PEFT's prepare_model_for_kbit_training, which Axolotl
	   runs for 4- and 8-bit LoRA outside FSDP-QLoRA, FSDP's
	   cpu_ram_efficient_loading and ZeRO-3, casts every 16-bit
	   parameter that is not a Params4bit to fp32 ("cast all non INT8
	   parameters to fp32", peft: utils/other.py); Axolotl casts the
	   norms and embeddings back (axolotl: loaders/model.py,
	   _convert_embedding_modules_dtype), not the experts: 16-bit
	   experts are held in fp32.  Under FSDP experts quantized on load
	   are not all sharded ("FSDP2 may use more VRAM per GPU than single
	   GPU training", expert_quantization.qmd): counted whole on every
	   rank. */
	r->pre = id != NULL ? prequant_bytes(id) : 0;
	r->lin = r->pre > 0 ? r->pre : r->qlora ? 0.5159 : r->q8 ? 1.0 :
	    r->wbytes;
	r->exb = r->lin;
	r->fused = x->E > 0 && !doc_text_has_ci(id, "linearized") &&
	    !doc_truthy(doc_map_value(d->root, "trust_remote_code"));
	if (x->E > 0 && (r->qlora || r->q8) && r->pre == 0) {
		bool quantized = doc_truthy(doc_map_value(d->root,
		    "quantize_moe_experts"));
		bool prepared = !(r->fsdp && (r->qlora ||
		    doc_truthy(fsdp_value(d, "cpu_ram_efficient_loading")))) &&
		    !(r->ds && p->zero_stage == 3);

		if (r->fused && !quantized)
			r->exb = prepared ? 4 : 2;
		r->exp_replicated = quantized && r->fsdp;
		r->exp_parametrized = quantized;
	}
	r->n_lora = r->lora ? lora_params(r) : 0;
	r->n_mts = r->lora ? mts_params(r) : 0;
	/* PEFT creates the adapter weights in fp32 and keeps them there
	   (get_peft_model(autocast_adapter_dtype=True), Axolotl's
	   peft_autocast_adapter_dtype, default true: ref. 3.2); with it
	   off they stay in the training dtype. */
	{
		const struct doc_node *ac = doc_map_value(d->root,
		    "peft_autocast_adapter_dtype");

		r->lb = ac != NULL && ac->kind == DOC_BOOL && !ac->b ?
		    r->wc : 4;
	}
	r->n_train = r->lora ? 0 : estimate_unfrozen_count(d, x, r->n_embed,
	    r->n_linear);
}

/* The frozen base of a LoRA run, bytes, all ranks together. */
static double
base_bytes(const struct run *r)
{
	return (r->n_linear - r->n_exp) * r->lin + r->n_exp * r->exb +
	    (r->n_embed + r->n_norm) * (r->wbytes > 2 ? r->wbytes : 2);
}

/* Bytes per parameter of a lora_modules_to_save copy: the module's dtype
   when PEFT copies it (16-bit after Axolotl's cast back, fp32 for an fp32
   load). */
static double
mts_bytes(const struct run *r)
{
	return r->wbytes > 2 ? r->wbytes : 2;
}

/*
 * Section 3.4: one dequantized matrix per matmul (bitsandbytes and the
 * LoRA kernels free it at once).  Experts quantized on load by
 * quantize_moe_experts are a parametrization of the fused 3-D tensor:
 * reading it dequantizes every expert of the layer at once, and the
 * matmul keeps that 16-bit copy for its input gradient, so the layer
 * being computed and the one recomputed for backward hold one each.
 */
static double
dequant_scratch(const struct run *r)
{
	const struct arch *x = &r->x;
	double mat = x->h * (x->E > 0 ? x->Ie : x->I);

	if (!(r->qlora || r->q8 || r->pre > 0))
		return 0;
	if (r->exp_parametrized)
		return 2 * 2 * r->unit_exp;
	return 2 * (mat < r->n_linear / x->L ? mat : r->n_linear / x->L);
}

/* Single GPU and DDP: everything on every rank (sections 2, 3, 4.1). */
static void
states_replicated(struct terms *t, const struct run *r)
{
	double N = r->x.N;

	if (r->lora) {
		double mb = mts_bytes(r);

		t->weights = base_bytes(r) + r->n_lora * r->lb + r->n_mts * mb;
		t->grads = r->n_lora * r->lb + r->n_mts * mb;
		t->optim = r->n_lora * optim_bytes(r->p->optimizer, r->lb) +
		    r->n_mts * optim_bytes(r->p->optimizer, mb);
		t->buffers += dequant_scratch(r);
	} else {
		t->weights = N * r->wbytes;
		t->grads = r->n_train * r->wbytes;
		t->optim = r->n_train * optim_bytes(r->p->optimizer, r->wbytes);
	}
	/* DDP's gradient buckets hold a second copy of the gradients
	   unless gradient_as_bucket_view (section 4.1). */
	if (r->ddp)
		t->buffers += t->grads;
}

/* DeepSpeed ZeRO: DeepSpeed's own estimator, current code (4.2). */
static void
states_deepspeed(struct terms *t, const struct run *r)
{
	const struct plan *p = r->p;
	const struct arch *x = &r->x;
	double G = r->G, P = x->N, Pt = r->n_train, Lg = x->V * x->h;

	if (r->lora) {
		/* DeepSpeed runs the whole model in 16 bits (its fp32
		   master copy lives in the optimizer) and partitions the
		   gradients from ZeRO-2 on. */
		double shard = p->zero_stage == 3 ? G : 1;

		t->weights = (base_bytes(r) + (r->n_lora + r->n_mts) * 2) /
		    shard;
		t->grads = (r->n_lora + r->n_mts) * 2 / (p->zero_stage >= 2 ?
		    G : 1);
		t->optim = (r->n_lora + r->n_mts) * optim_bytes(p->optimizer,
		    4) / G;
		if (p->zero_stage == 3) {
			/* The largest module gathered in 16 bits (the
			   embedding; frozen, so no gradient), and ZeRO-3's
			   offload of params. */
			t->buffers += 2 * Lg;
			if (p->ds_offload_param) {
				t->cpu += t->weights + t->grads;
				t->weights = t->grads = 0;
			}
		} else
			t->buffers += dequant_scratch(r);
		if (p->ds_offload_optimizer) {
			t->cpu += t->optim;
			t->optim = 0;
		}
		return;
	}
	/* Frozen parameters (unfrozen_parameters) keep only their 16-bit
	   copy: the gradient, master and optimizer terms take Pt. */
	if (p->zero_stage == 3) {
		t->buffers += 4 * Lg;
		if (p->ds_offload_param && p->ds_offload_optimizer)
			t->cpu += (2 * P + 16 * Pt) / G * 1.5;
		else if (p->ds_offload_optimizer) {
			t->weights = 2 * P / G;
			t->cpu += 16 * Pt / G * 1.5;
		} else {
			t->weights = 2 * P / G;
			t->grads = 6 * Pt / G;
			t->optim = 10 * Pt / G;
		}
	} else if (p->zero_stage == 2 || p->zero_stage == 0) {
		/* Outside the model-state formula: one layer's 16-bit
		   gradients exist before they are reduced. */
		t->buffers += 2 * r->n_linear / x->L;
		t->weights = 2 * P;
		if (p->ds_offload_optimizer)
			t->cpu += Pt * (4 * G > 16 ? 4 * G : 16) * 1.5 / G;
		else {
			t->grads = 6 * Pt / G;
			t->optim = 12 * Pt / G;
		}
	} else {	/* ZeRO-1 */
		t->buffers += 2 * r->n_linear / x->L;
		t->weights = 2 * P;
		t->grads = 2 * Pt;
		t->optim = 12 * Pt / G;
	}
}

/*
 * FSDP1 / FSDP2 FULL_SHARD (docs/estimator.md "Sharded runs"):
 *
 *   states    sharded over G; FSDP1 through accelerate upcasts trainable
 *             flat parameters to fp32 under mixed precision, Axolotl's
 *             FSDP2 path keeps the loaded dtype
 *   working   the gathered unit and the prefetched next one in the
 *             compute dtype; in backward the unit's unsharded gradients
 *             and the reduce-scatter output; the root unit (embeddings,
 *             head) stays gathered from forward to backward, and its
 *             gradients wait for the root's post-backward
 *   padding   FSDP2 shards dim 0: E experts over G ranks hold
 *             ceil(E/G)/E of them each, not 1/G
 *   no reshard  reshard_after_forward false / SHARD_GRAD_OP keep every
 *             unit gathered between forward and backward
 *   offload   states to pinned host memory; the GPU keeps the working
 *             set plus the staged shards of the unit and the next
 */
static void
states_fsdp(struct terms *t, const struct run *r)
{
	const struct doc *d = r->d;
	const struct arch *x = &r->x;
	const struct doc_node *raf = fsdp_value(d, "reshard_after_forward");
	const struct doc_node *ss = fsdp_value(d, "sharding_strategy");
	bool keep = (raf != NULL && raf->kind == DOC_BOOL && !raf->b) ||
	    (ss != NULL && ss->kind == DOC_STR &&
	    strcmp(ss->text, "SHARD_GRAD_OP") == 0);
	bool offload = doc_truthy(fsdp_value(d, "offload_params"));
	double G = r->G, N = x->N, wc = r->wc, fe = 1 / G, staged;
	double unit, unit_exp;

	if (!r->fsdp1 && x->E > 0 && G > 1)
		fe = ceil(x->E / G) / x->E;
	/* Under expert parallelism a rank gathers only its own experts
	   (section 4.4). */
	unit_exp = r->unit_exp / r->ep;
	unit = r->unit - r->unit_exp + unit_exp;
	if (!r->lora) {
		double sw = r->fsdp1 ? 4 : r->wbytes;
		double ob = optim_bytes(bnb_optimizer(r->p->optimizer) ?
		    "adamw" : r->p->optimizer, sw);
		double per = (N - r->n_exp) / G + r->n_exp * fe;

		t->weights = per * sw;
		t->grads = per * sw * r->n_train / N;
		t->optim = per * ob * r->n_train / N;
		if (G > 1)
			t->buffers += wc * unit * 3 + sw * unit / G +
			    2 * wc * r->n_embed;
		if (keep)
			t->buffers += wc * N * (1 - 1 / G);
		staged = 2 * sw * unit / G;
	} else {
		double base = base_bytes(r), exp = r->n_exp * r->exb;
		double lstate = optim_bytes(bnb_optimizer(r->p->optimizer) ?
		    "adamw" : r->p->optimizer, r->lb);
		double unit_stored = (unit - unit_exp) * r->lin +
		    (r->exp_replicated ? 0 : unit_exp * r->exb);
		const struct doc_node *uop = fsdp_value(d, "use_orig_params");

		t->weights = (base - exp) / G + exp * (r->exp_replicated ? 1 :
		    fe) + (r->n_lora * r->lb + r->n_mts * mts_bytes(r)) / G;
		t->grads = (r->n_lora * r->lb + r->n_mts * mts_bytes(r)) / G;
		t->optim = (r->n_lora * lstate + r->n_mts * optim_bytes(
		    bnb_optimizer(r->p->optimizer) ? "adamw" : r->p->optimizer,
		    mts_bytes(r))) / G;
		/* FSDP1 with use_orig_params mixes frozen and trainable
		   parameters in one flat parameter: its gradient (and
		   accelerate's fp32 upcast) covers the whole flat parameter,
		   "equivalent to not freezing those parameters" (PyTorch
		   FSDP docs). */
		if (r->fsdp1 && doc_truthy(uop) && r->pre == 0 && !r->qlora &&
		    !r->q8) {
			t->weights += r->n_linear * (4 - r->lin) / G;
			t->grads += r->n_linear * 4 / G;
		}
		t->buffers += dequant_scratch(r);
		if (G > 1)
			t->buffers += 2 * unit_stored + wc * r->n_embed;
		if (keep)
			t->buffers += (base - (r->exp_replicated ? exp : 0)) *
			    (1 - 1 / G);
		staged = 2 * unit_stored / G;
	}
	if (offload) {
		double stay = r->lora && r->exp_replicated ?
		    r->n_exp * r->exb : 0;

		t->cpu += t->weights + t->grads + t->optim - stay;
		t->weights = stay;
		t->grads = t->optim = 0;
		t->buffers += staged;
	}
}

/* Whether model_type t starts with one of the prefixes in list. */
static bool
type_in(const char *t, const char *const *list)
{
	size_t i;

	for (i = 0; t != NULL && list[i] != NULL; i++)
		if (strncmp(t, list[i], strlen(list[i])) == 0)
			return true;
	return false;
}

/*
 * Section 5, counted from what autograd keeps (docs/estimator.md
 * "Activations"): bytes one decoder layer saves per token, before tensor
 * parallelism.  Transformers' RMSNorm upcasts its input to fp32 and the
 * pow and the multiply keep that copy (4h), the next matmul keeps the
 * 16-bit output (2h), and a trainable norm weight keeps the normalized
 * value too (2h, full fine-tune).  Liger's RMSNorm, and torch.compile's
 * fused kernels, keep the 16-bit input and the output only (4h).  The
 * attention keeps the rotated q, k, v and its output (flash attention:
 * no score matrix); SDPA's output is made contiguous for o_proj, one more
 * copy.  Families with q/k norms (Qwen3, Gemma 3/4, OLMo 2/3, ...) norm
 * q and k the same way.  A SwiGLU MLP keeps the gate and up outputs, the
 * SiLU output and the product (8I); Liger's fused SwiGLU and compile's
 * keep gate, up and the product (6I).  Gemma 2/3/4 norm before and after
 * each block: four norms.
 */
static double
layer_bytes(const struct run *r, bool fused)
{
	static const char *const sandwich[] = { "gemma2", "gemma3", "gemma4",
	    NULL };
	static const char *const qknorm[] = { "qwen3", "gemma3", "gemma4",
	    "olmo2", "olmo3", "hunyuan", "apertus", "lfm2", "afmoe", NULL };
	const struct doc *d = r->d;
	const struct arch *x = &r->x;
	const char *t = r->model_type;
	double hq = x->a * x->d, hkv = x->akv * x->d, norms, per_norm, b;
	bool fnorm = fused || doc_truthy(doc_map_value(d->root,
	    "liger_rms_norm"));
	bool fglu = fused || doc_truthy(doc_map_value(d->root,
	    "liger_glu_activation"));
	double mlp = fglu ? 6 : 8;

	norms = type_in(t, sandwich) ? 4 : 2;
	per_norm = fnorm ? 4 : 6 + (r->lora ? 0 : 2);
	b = norms * per_norm * x->h;
	if (type_in(t, qknorm))
		b += (fnorm ? 2 : 4 + (r->lora ? 0 : 2)) * (hq + hkv);
	b += 2 * hq + 4 * hkv + 2 * hq;
	if (strcmp(r->p->attention, "sdpa") == 0)
		b += 2 * hq;
	if (x->E > 0) {
		double k = x->k > 0 ? x->k : 1;

		/* Routed token slots: the permuted copy and each expert's
		   MLP; the router's fp32 logits. */
		b += k * mlp * x->Ie + x->E * 4 + k * x->h * 2;
	} else
		b += mlp * x->I;
	return b;
}

/* Section 5: saved activations at the peak, per micro batch of T; *tail
   is what is left at the end of the backward pass (the first layer's,
   recomputed under checkpointing, and its gradients), *rec the layer
   recomputed under checkpointing (0 without). */
static double
activations(struct terms *t, const struct run *r, double T, double *tail,
    double *rec)
{
	const struct doc *d = r->d;
	const struct plan *p = r->p;
	const struct arch *x = &r->x;
	const struct doc_node *gc = doc_map_value(d->root,
	    "gradient_checkpointing");
	double hq = x->a * x->d, Tl = T / r->cp, a_layer, act;
	bool compiled = doc_truthy(doc_map_value(d->root, "torch_compile"));

	a_layer = Tl * layer_bytes(r, compiled) / r->tp;
	if (strcmp(p->attention, "eager") == 0)
		a_layer += 6 * x->a / r->tp * (double)p->sequence_len *
		    (double)p->sequence_len * (double)p->micro_batch_size /
		    r->cp;
	/* LoRA dropout keeps a dropped-out copy of each adapted input and
	   its mask (5.2), in every stored layer and in the recomputed
	   one. */
	if (r->lora && num(doc_map_value(d->root, "lora_dropout"), 0) > 0)
		a_layer += Tl * 3 * (3 * x->h + hq + 2 * x->h + x->I);
	*tail = a_layer * 1.5;
	*rec = 0;
	if (p->gradient_checkpointing || (r->fsdp && doc_truthy(fsdp_value(d,
	    "activation_checkpointing")))) {
		double ckpt = x->L * 2 * Tl * x->h;

		if ((gc != NULL && gc->kind == DOC_STR &&
		    strncmp(gc->text, "offload", 7) == 0) ||
		    (p->activation_offloading != NULL &&
		    strcmp(p->activation_offloading, "false") != 0)) {
			t->cpu += ckpt;
			ckpt = 4 * Tl * x->h;
		}
		*rec = a_layer * 1.5;
		act = ckpt + *rec;
	} else if (p->activation_offloading != NULL &&
	    strcmp(p->activation_offloading, "false") != 0) {
		t->cpu += x->L * a_layer;
		act = 2 * a_layer;
	} else
		act = x->L * a_layer + 2 * Tl * x->h;
	return act;
}

/* Section 6: logits and loss. */
static double
loss_bytes(const struct run *r, double T)
{
	const struct doc *d = r->d;
	const struct arch *x = &r->x;
	double Tl = T / r->cp;

	if (doc_seq_has(doc_map_value(d->root, "plugins"), "CutCrossEntropy") ||
	    doc_truthy(doc_map_value(d->root, "cut_cross_entropy")))
		return Tl * x->h * 2;
	if (doc_truthy(doc_map_value(d->root,
	    "liger_fused_linear_cross_entropy"))) {
		double chunks = x->V / x->h;

		return Tl / (chunks < 1 ? 1 : chunks) * x->V * 8;
	}
	/* Chunked cross-entropy keeps the 16-bit logits and upcasts one
	   chunk at a time (section 6: torchtune's CEWithChunkedOutputLoss,
	   Axolotl's chunked_cross_entropy, 8 chunks by default). */
	if (doc_truthy(doc_map_value(d->root, "chunked_cross_entropy")))
		return 3 * Tl * x->V / r->tp;
	return 10 * Tl * x->V / r->tp;
}

void
estimate_run(struct estimate *e, const struct doc *d, const struct plan *p,
    const struct context *ctx)
{
	estimate_run_calib(e, d, p, ctx, &estimate_calib_default);
}

void
estimate_run_calib(struct estimate *e, const struct doc *d,
    const struct plan *p, const struct context *ctx,
    const struct estimate_calib *c)
{
	const struct gpu *g = gpu_find(ctx->gpu);
	const struct doc_node *bm = doc_map_value(d->root, "base_model");
	struct mem_breakdown *b = &e->breakdown;
	struct terms t;
	struct run r;
	double T, stat, trans, gib, reserve, head, tail = 0, rec = 0, churn;
	bool sharded;

	memset(e, 0, sizeof(*e));
	memset(&t, 0, sizeof(t));
	memset(&r, 0, sizeof(r));
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
	if (!arch_of(&r.x, e->model, &e->derived)) {
		if (!arch_nominal(&r.x, e->model))
			return;
		e->nominal = true;
	}
	e->known = true;
	e->params = (long long)r.x.N;
	e->unverified_shape = e->nominal || e->derived ||
	    (e->model->verification != NULL &&
	    (strncmp(e->model->verification, "partial", 7) == 0 ||
	    strncmp(e->model->verification, "unverified", 10) == 0));
	run_init(&r, d, p, e->model);
	e->trainable_params = (r.lora ? r.n_lora + r.n_mts : r.n_train) <
	    9e18 ? (long long)(r.lora ? r.n_lora + r.n_mts : r.n_train) : 0;

	/* Gathered units and reduce-scatter buffers of a sharded run live
	   on the collectives' own CUDA stream. */
	sharded = r.fsdp || (r.ds && p->zero_stage == 3);
	if (r.fsdp)
		states_fsdp(&t, &r);
	else if (r.ds)
		states_deepspeed(&t, &r);
	else
		states_replicated(&t, &r);
	/* Section 4.4: tensor and expert parallel split the states. */
	t.weights /= r.tp;
	t.grads /= r.tp;
	t.optim /= r.tp;
	if (r.ep > 1 && r.x.E > 0) {
		double ef = 1 - (1 - 1 / r.ep) * (r.n_linear > 0 ?
		    r.n_exp / (r.n_linear + r.n_embed) : 0);

		if (ef > 0 && ef < 1) {
			t.weights *= ef;
			t.grads *= ef;
			t.optim *= ef;
		}
		/* Section 4.4: DeepEP's fixed dispatch/combine buffers
		   (expert_parallel_num_nvl_bytes, e.g. 4 GiB in axolotl:
		   examples/glm_moe_dsa/glm-5.2-nvfp4-lora.yaml). */
		t.buffers += num(doc_map_value(d->root,
		    "expert_parallel_num_nvl_bytes"), 0) +
		    num(doc_map_value(d->root,
		    "expert_parallel_num_rdma_bytes"), 0);
	}

	/* Section 5: T tokens per micro batch, sequence_len x
	   micro_batch_size: packing fills it, and without packing the
	   longest batch is padded to it (the worst case a gate needs). */
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
		if (ref && !r.lora)
			t.weights += r.x.N * r.wbytes / (r.fsdp || (r.ds &&
			    p->zero_stage == 3) ? r.G : 1) / r.tp;
	}
	e->activation_tokens = T;
	e->padded = !p->sample_packing;
	t.act = activations(&t, &r, T, &tail, &rec);
	t.logits = loss_bytes(&r, T);
	churn = t.act + t.logits;
	/* Under checkpointing the loss's buffers are freed (its backward
	   runs first, then the head's) before the first layer is
	   recomputed: the two never coexist, and the breakdown shows the
	   larger, at the peak. */
	if (rec > 0) {
		if (t.logits >= rec)
			t.act -= rec;
		else
			t.logits = 0;
	}
	/* The gradients of a full fine-tune are set to None at every
	   optimizer step (optimizer.zero_grad(set_to_none=True), PyTorch's
	   default since 2.0, and the HF Trainer's model.zero_grad()), and
	   backward frees each layer's activations as it writes its
	   gradients.  With one micro batch per step they never coexist in
	   full: the peak is the larger of the end of the forward pass (the
	   activations and the loss, the head's gradient the first written)
	   and the end of the backward pass (every gradient, the first
	   layer's activations).  With accumulation the gradients of the
	   previous micro batches stay through the next forward.  DeepSpeed
	   keeps its gradient partitions allocated: not there. */
	if (!r.lora && !r.ds && p->gradient_accumulation_steps <= 1 &&
	    t.grads > 0) {
		double hg = r.n_train > 0 ? t.grads * (r.x.V * r.x.h) /
		    r.n_train : 0;
		double fwd = t.act + t.logits + (hg < t.grads ? hg :
		    t.grads);
		double bwd = t.grads + tail;

		if (bwd >= fwd) {
			t.act = tail;
			t.logits = 0;
		} else
			t.grads = hg < t.grads ? hg : t.grads;
	}

	throughput(e, d, p, ctx, g, &r.x, r.lora, r.qlora, r.n_lora,
	    r.n_linear, r.n_embed, r.fsdp, r.ds, r.ddp);

	/* Section 7: the caching allocator's reserve grows with what is
	   freed and reallocated every step (activations, logits, gathered
	   units) far more than with states allocated once, and most with
	   a sharded run's gathered units: the allocator caches blocks per
	   stream, and FSDP and ZeRO-3 gather and reduce on their own
	   streams, so those blocks are not reused by the compute stream's
	   tensors (PyTorch "CUDA semantics": memory management is per
	   stream; FSDP's limit_all_gathers exists to bound it).  The CUDA
	   context and libraries, and NCCL's communicators on more than one
	   GPU, sit outside PyTorch's accounting. */
	/* The reserve grows with the transient tensors of both phases of
	   the step: the blocks the loss frees stay cached when the
	   recomputed layers or the gradients ask for other sizes. */
	stat = t.weights + t.grads + t.optim;
	trans = churn + (sharded ? 0 : t.buffers);
	e->churn_gib = churn / GIB;
	b->weights_gib = t.weights / GIB;
	b->gradients_gib = t.grads / GIB;
	b->optimizer_gib = t.optim / GIB;
	b->activations_gib = t.act / GIB;
	b->logits_gib = t.logits / GIB;
	b->buffers_gib = t.buffers / GIB;
	reserve = (c->reserve_static * stat + c->reserve_transient * trans +
	    (sharded ? c->reserve_sharded * t.buffers : 0)) / GIB;
	b->runtime_gib = c->context_gib + (p->world > 1 ? c->comm_gib : 0);
	gib = b->weights_gib + b->gradients_gib + b->optimizer_gib +
	    b->activations_gib + b->logits_gib + b->buffers_gib;
	/* The allocator caches only what the device has: when a cudaMalloc
	   fails it frees its unused cached blocks and retries (PyTorch
	   "CUDA semantics", memory management), so the reserve a device
	   shows is bounded by the headroom.  The same run reads 16.2 GB on
	   a 24 GB RTX 4090 and 30.3 GB on a 48 GB RTX A6000 in torchtune's
	   table (memory-measured.tsv).  What does not fit in the headroom
	   is the risk of a fragmentation OOM: range_gib's high end keeps
	   it, and memory.low_headroom reports it. */
	head = e->capacity_gib - gib - b->runtime_gib;
	b->reserve_gib = reserve < head ? reserve : head > 0 ? head : 0;
	e->allocated_peak_gib = gib;
	e->per_gpu_peak_gib = gib + b->reserve_gib + b->runtime_gib;
	e->range_gib[0] = e->per_gpu_peak_gib * c->range_low;
	e->range_gib[1] = (gib + reserve + b->runtime_gib) * c->range_high;
	e->cpu_offload_gib = t.cpu / GIB;
	e->fits = e->per_gpu_peak_gib <= e->capacity_gib;
	e->largest_term = largest(b, &e->largest_gib);
}
