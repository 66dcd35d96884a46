/*
 * core/estimate_int.h: what core/estimate.c (the driver, activations and
 * the loss) shares with its parts: estimate_states.c (sections 2-4),
 * estimate_speed.c (10-11) and estimate_unfrozen.c.  Not for other modules.
 */
#ifndef CORE_ESTIMATE_INT_H
#define CORE_ESTIMATE_INT_H

#include <stdbool.h>

#include "doc.h"
#include "plan.h"

struct context;
struct estimate;
struct gpu;
struct model_def;

#define GIB 1073741824.0

/*
 * Bytes per weight of bitsandbytes NF4 with double quantization (QLoRA's
 * storage): 4 bits, an 8-bit absmax per block of 64 weights and an fp32
 * absmax per 256 of those blocks, 0.5 + 1/64 + 4/16384 = 0.5159 (Dettmers
 * et al. 2023, arXiv:2305.14314; ../shared/reference/estimator.md 3.3).
 */
#define NF4_BYTES 0.5159

/* A model's architecture as the estimate counts it (estimator.md 1). */
struct arch {
	double h, L, a, akv, d, I, V, E, k, Ie, N;
	double kdense;		/* leading dense layers of a MoE */
	double ns;		/* shared experts (of width Ie) per MoE layer */
	double Na;		/* active parameters per token (MoE) */
	bool tied;
};

/*
 * How many parameters Axolotl's unfrozen_parameters leaves trainable in
 * a full fine-tune of x (all of them, x->N, when the key is absent or a
 * pattern is outside the matcher's subset); n_embed is the embedding
 * (and untied head), n_linear the layers' matrices.
 */
double estimate_unfrozen_count(const struct doc *d, const struct arch *x,
    double n_embed, double n_linear);

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
	bool linear_experts;	/* the run's Transformers (4.x) kept them
				   as nn.Linear (estimate_calib) */
	bool exp_replicated;	/* quantized experts FSDP does not shard */
	bool exp_parametrized;	/* experts quantized on load (3-D) */
};

struct terms {
	double weights, grads, optim, act, logits, buffers, cpu;
};


static inline double
estimate_num(const struct doc_node *v, double dflt)
{
	if (v != NULL && v->kind == DOC_INT)
		return (double)v->i;
	if (v != NULL && v->kind == DOC_FLOAT)
		return v->f;
	return dflt;
}

/* fsdp_config.<key> (either spelling), or NULL. */
static inline const struct doc_node *
estimate_fsdp_value(const struct doc *d, const char *key)
{
	const struct doc_pair *p = plan_fsdp_get(d->root, key);

	return p != NULL ? p->value : NULL;
}

/* Derive what the memory sections share for model m (estimate_states.c);
   r->x must hold the architecture. */
void estimate_run_init(struct run *r, const struct doc *d,
    const struct plan *p, const struct model_def *m);

/* Sections 2-4 and 4.4 into t (zeroed by the caller). */
void estimate_states(struct terms *t, const struct run *r);

/* Sections 10-11: e's compute, communication and step time, tokens per
   second and epoch time (estimate_speed.c). */
void estimate_throughput(struct estimate *e, const struct doc *d,
    const struct plan *p, const struct context *ctx, const struct gpu *g,
    const struct arch *x, bool lora, bool qlora, double n_lora,
    double n_linear, double n_embed, bool fsdp, bool ds, bool ddp);

#endif /* CORE_ESTIMATE_INT_H */
