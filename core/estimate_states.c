/*
 * core/estimate_states: the model states and the frozen base (sections
 * 2-4 of ../shared/reference/estimator.md; docs/estimator.md section 2
 * for what changed): what a run derives once (estimate_run_init), LoRA's
 * parameters, and the weights, gradients, optimizer states and buffers of
 * each strategy (single GPU or DDP, DeepSpeed ZeRO, FSDP).  No I/O.
 */
#include "estimate.h"
#include "estimate_int.h"

#include <math.h>
#include <string.h>

#include "doc.h"
#include "models.h"
#include "plan.h"

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
 * NF4, NF4_BYTES), or 0 for a 16-bit checkpoint.
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
		return NF4_BYTES;
	return 0;
}

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

/* Whether model_type's nn.Linear experts are named w1, w2, w3. */
static bool
w_experts(const char *type)
{
	static const char *const w[] = { "mixtral", "phimoe", "minimax",
	    "lfm2_moe", "kimi", NULL };
	size_t i;

	for (i = 0; type != NULL && w[i] != NULL; i++)
		if (strncmp(type, w[i], strlen(w[i])) == 0)
			return true;
	return false;
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

	rank = estimate_num(doc_map_value(d->root, "lora_r"), 8);
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

		/* nn.Linear experts keep their family's names: w1 (gate),
		   w3 (up), w2 (down) in Mixtral, PhiMoE, MiniMax, LFM2-MoE
		   (Transformers 4.x: Lfm2MoeMLP) and Kimi-Linear's modeling
		   file (KimiBlockSparseMLP, whose shared experts are
		   gate_proj/up_proj/down_proj); gate_proj, up_proj,
		   down_proj elsewhere (Qwen2/3-MoE, OLMoE, DeepSeek,
		   Jamba). */
		if (!r->fused && w_experts(r->model_type))
			moe += x->E * lora_mlp(targeted(d, "w1"),
			    targeted(d, "w3"), targeted(d, "w2"),
			    HIT_DENSE | HIT_ROUTED, x->h, x->Ie);
		else if (!r->fused)
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

void
estimate_run_init(struct run *r, const struct doc *d, const struct plan *p,
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
	r->lin = r->pre > 0 ? r->pre : r->qlora ? NF4_BYTES : r->q8 ? 1.0 :
	    r->wbytes;
	r->exb = r->lin;
	r->fused = x->E > 0 && !r->linear_experts &&
	    !doc_text_has_ci(id, "linearized") &&
	    !doc_truthy(doc_map_value(d->root, "trust_remote_code"));
	if (x->E > 0 && (r->qlora || r->q8) && r->pre == 0) {
		bool quantized = doc_truthy(doc_map_value(d->root,
		    "quantize_moe_experts"));
		bool prepared = !(r->fsdp && (r->qlora ||
		    doc_truthy(estimate_fsdp_value(d, "cpu_ram_efficient_loading")))) &&
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

/*
 * bitsandbytes' 4-bit quantization state (the absmax constants, ref. 3.3:
 * NF4_BYTES - 0.5 per weight) is not a parameter: Linear4bit keeps it on
 * the module and puts it back on the weight when FSDP has converted the
 * parameter ("the quant state got lost when the parameter got converted.
 * This happens for example for fsdp", bitsandbytes: nn/modules.py,
 * fix_4bit_weight_quant_state_from_module).  FSDP shards and offloads
 * flat parameters only, so every rank keeps the whole state on the GPU.
 * (ZeRO-3 keeps the parameter object and partitions its data; whether
 * the state follows is not documented, and it is not counted there.)
 * Bytes, all of it; 0 unless the base is bitsandbytes 4-bit.
 */
static double
quant_state_bytes(const struct run *r)
{
	double qs = NF4_BYTES - 0.5, n = 0;

	if (r->lin == NF4_BYTES)
		n += r->n_linear - r->n_exp;
	if (r->exb == NF4_BYTES && !r->exp_replicated)
		n += r->n_exp;
	return n * qs;
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
	const struct doc_node *raf = estimate_fsdp_value(d, "reshard_after_forward");
	const struct doc_node *ss = estimate_fsdp_value(d, "sharding_strategy");
	bool keep = (raf != NULL && raf->kind == DOC_BOOL && !raf->b) ||
	    (ss != NULL && ss->kind == DOC_STR &&
	    strcmp(ss->text, "SHARD_GRAD_OP") == 0);
	bool offload = doc_truthy(estimate_fsdp_value(d, "offload_params"));
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
		const struct doc_node *uop = estimate_fsdp_value(d, "use_orig_params");

		t->weights = (base - exp) / G + exp * (r->exp_replicated ? 1 :
		    fe) + (r->n_lora * r->lb + r->n_mts * mts_bytes(r)) / G;
		/* The 4-bit quantization state is not sharded. */
		t->weights += quant_state_bytes(r) * (1 - 1 / G);
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
		/* What offload leaves on the GPU: experts FSDP does not
		   shard, and the 4-bit quantization state, which is not a
		   parameter. */
		double stay = (r->lora && r->exp_replicated ?
		    r->n_exp * r->exb : 0) + (r->lora ?
		    quant_state_bytes(r) : 0);

		t->cpu += t->weights + t->grads + t->optim - stay;
		t->weights = stay;
		t->grads = t->optim = 0;
		t->buffers += staged;
	}
}

/*
 * Sections 2-4: the model states (weights, gradients, optimizer) and
 * the buffers of the run's strategy, per GPU; then section 4.4: tensor
 * and expert parallel split the states, and DeepEP adds its buffers.
 */
void
estimate_states(struct terms *t, const struct run *r)
{
	const struct doc *d = r->d;

	if (r->fsdp)
		states_fsdp(t, r);
	else if (r->ds)
		states_deepspeed(t, r);
	else
		states_replicated(t, r);
	t->weights /= r->tp;
	t->grads /= r->tp;
	t->optim /= r->tp;
	if (r->ep > 1 && r->x.E > 0) {
		double ef = 1 - (1 - 1 / r->ep) * (r->n_linear > 0 ?
		    r->n_exp / (r->n_linear + r->n_embed) : 0);

		if (ef > 0 && ef < 1) {
			t->weights *= ef;
			t->grads *= ef;
			t->optim *= ef;
		}
		/* DeepEP's fixed dispatch/combine buffers
		   (expert_parallel_num_nvl_bytes, e.g. 4 GiB in axolotl:
		   examples/glm_moe_dsa/glm-5.2-nvfp4-lora.yaml). */
		t->buffers += estimate_num(doc_map_value(d->root,
		    "expert_parallel_num_nvl_bytes"), 0) +
		    estimate_num(doc_map_value(d->root,
		    "expert_parallel_num_rdma_bytes"), 0);
	}
}
