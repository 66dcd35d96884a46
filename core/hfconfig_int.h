/*
 * core/hfconfig_int: what hfconfig.c (shapes and counts) shares with
 * hfconfig_layers.c (hybrid layers).  Not for other modules.
 */
#ifndef CORE_HFCONFIG_INT_H
#define CORE_HFCONFIG_INT_H

#include <stdbool.h>

#include "doc.h"
#include "err.h"

struct fields {
	const struct doc_node *map;	/* the text model's mapping */
	const char *type;		/* model_type, "" when absent */
};

/* Hybrids: the token mixer that stands in for attention in some layers
   (docs/estimator.md "Hybrid architectures"). */
enum mixer { MIX_NONE, MIX_MAMBA1, MIX_MAMBA2, MIX_GDN, MIX_KDA, MIX_CONV };

/* The layers of a hybrid: how many mix tokens with attention, how many
   with the other mixer (and its parameters), which carry routed experts
   or a dense MLP. */
struct layers {
	enum mixer mix;		/* MIX_NONE: not a hybrid */
	double n_attn;		/* layers with attention */
	double n_other;		/* layers with the other mixer */
	double other;		/* parameters of one such mixer */
	double n_moe;		/* layers with routed experts, or -1 */
	double n_dense;		/* layers with a dense MLP, or -1 */
	double I;		/* the dense MLP width when it is derived, or -1 */
};

/* l at p's value (or nowhere when p is NULL), with path key. */
void hf_loc_of(struct err_loc *l, const struct doc_pair *p, const char *key);

/* Is f's model_type one of types (NULL-terminated)? */
bool hf_type_is(const struct fields *f, const char *const *types);

/* A number under the first of names (integer or float), or dflt. */
double hf_fnum(const struct doc_node *map, const char *const *names,
    double dflt);

/* A bool under key, or dflt. */
bool hf_bool_or(const struct doc_node *map, const char *key, bool dflt);

/* Is f an architecture whose layers the counts do not cover? */
bool hf_refused(const struct fields *f);

/* The mixer of a hybrid model_type, MIX_NONE for any other. */
enum mixer hf_mixer_of(const char *type);

/*
 * The layers of f's model (L layers of width h) into ly: for a hybrid,
 * which are attention and the other mixer's parameters.  0, or
 * ERR_SCHEMA at the key that is wrong.
 */
int hf_read_layers(struct layers *ly, const struct fields *f, double L,
    double h, struct err *e);

#endif /* CORE_HFCONFIG_INT_H */
