/*
 * core/rules_int: what rule functions see (core/checks.c), not for
 * callers outside core.
 */
#ifndef CORE_RULES_INT_H
#define CORE_RULES_INT_H

#include <stdbool.h>
#include <string.h>

#include "doc.h"
#include "report.h"
#include "rules.h"

struct rule_ctx {
	const struct doc_node *root;	/* the config mapping */
	const struct context *ctx;	/* where it runs */
	const struct plan *plan;	/* Axolotl's derived plan */
	const struct rule_def *rule;	/* the row being run */
	struct report *r;
	struct arena *a;
};

/*
 * Report a finding of the running rule at a key (or, when p is NULL, at
 * the root mapping).  Id, severity and hint come from the row.
 */
int rule_report(struct rule_ctx *rc, const struct doc_pair *p,
    const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* rule_report() with another severity than the row's. */
int rule_report_sev(struct rule_ctx *rc, const struct doc_pair *p,
    enum severity sev, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* The first parallel-size key written (dp_shard_size, ...), or NULL. */
const struct doc_pair *first_of_sizes(const struct rule_ctx *rc);

/*
 * Lookups of top-level keys.  Inline, so that a literal key's length and
 * hash are constants (doc_map_get): rules make hundreds per check.
 */

/* The top-level pair for key, or NULL. */
static inline const struct doc_pair *
cfg_pair(const struct rule_ctx *rc, const char *key)
{
	return doc_map_get(rc->root, key);
}

/* Python truthiness of a value; a missing key is false. */
static inline bool
cfg_on(const struct rule_ctx *rc, const char *key)
{
	const struct doc_pair *p = cfg_pair(rc, key);

	return p != NULL && doc_truthy(p->value);
}

/* A string value, or NULL when absent or not a string. */
static inline const char *
cfg_str(const struct rule_ctx *rc, const char *key)
{
	const struct doc_pair *p = cfg_pair(rc, key);

	return p != NULL && p->value->kind == DOC_STR ? p->value->text : NULL;
}

/* p's value as an integer (floats with no fraction too), else def. */
long long cfg_int_of(const struct doc_pair *p, long long def);

/* An integer value (floats with no fraction too), else def. */
static inline long long
cfg_int(const struct rule_ctx *rc, const char *key, long long def)
{
	return cfg_int_of(cfg_pair(rc, key), def);
}

/* The string value of key equals want. */
static inline bool
cfg_is(const struct rule_ctx *rc, const char *key, const char *want)
{
	const char *v = cfg_str(rc, key);

	return v != NULL && strcmp(v, want) == 0;
}

/* a x b, saturated at LLONG_MIN/LLONG_MAX: config numbers are arbitrary,
   and a product of them must not overflow. */
long long mul_sat(long long a, long long b);

/* key is written as true / false (a bool, not a truthy value). */
static inline bool
cfg_true(const struct rule_ctx *rc, const char *key)
{
	const struct doc_pair *p = cfg_pair(rc, key);

	return p != NULL && p->value->kind == DOC_BOOL && p->value->b;
}

static inline bool
cfg_false(const struct rule_ctx *rc, const char *key)
{
	const struct doc_pair *p = cfg_pair(rc, key);

	return p != NULL && p->value->kind == DOC_BOOL && !p->value->b;
}

/* key is present and not null. */
static inline bool
cfg_set(const struct rule_ctx *rc, const char *key)
{
	const struct doc_pair *p = cfg_pair(rc, key);

	return p != NULL && p->value->kind != DOC_NULL;
}

/* inner of a mapping-valued key, or NULL; and its truthiness. */
static inline const struct doc_pair *
cfg_sub(const struct rule_ctx *rc, const char *key, const char *inner)
{
	const struct doc_pair *p = cfg_pair(rc, key);

	return p != NULL && p->value->kind == DOC_MAP ?
	    doc_map_get(p->value, inner) : NULL;
}

static inline bool
cfg_sub_on(const struct rule_ctx *rc, const char *key, const char *inner)
{
	const struct doc_pair *p = cfg_sub(rc, key, inner);

	return p != NULL && doc_truthy(p->value);
}

/* The pair of a, else of b, or NULL. */
static inline const struct doc_pair *
cfg_first(const struct rule_ctx *rc, const char *a, const char *b)
{
	const struct doc_pair *p = cfg_pair(rc, a);

	return p != NULL ? p : cfg_pair(rc, b);
}

/* A plugins entry contains needle. */
bool cfg_plugin(const struct rule_ctx *rc, const char *needle);

/*
 * A key of fsdp_config under either spelling ("offload_params" or
 * "fsdp_offload_params"), or NULL.
 */
const struct doc_pair *fsdp_pair(const struct rule_ctx *rc,
    const char *key);

/* FSDP version as Axolotl resolves it (rules.md 2.5); 0 without FSDP. */
int fsdp_version(const struct rule_ctx *rc);

/*
 * The attention backend after rules.md 2.4's mapping: attn_implementation,
 * else the first truthy legacy flag mapped; NULL when none is set.
 */
const char *attn_backend(const struct rule_ctx *rc);


#endif /* CORE_RULES_INT_H */
