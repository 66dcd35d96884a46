/*
 * core/estimate_int.h: what core/estimate.c shares with its parts
 * (core/estimate_unfrozen.c).  Not for other modules.
 */
#ifndef CORE_ESTIMATE_INT_H
#define CORE_ESTIMATE_INT_H

#include <stdbool.h>

struct doc;

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

#endif /* CORE_ESTIMATE_INT_H */
