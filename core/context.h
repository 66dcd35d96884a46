/*
 * core/context: where a config is meant to run (DESIGN.md "context"), the
 * input every check gets beside the YAML.
 *
 * One decoder for the three places a context comes from: the CLI's flags
 * (server/cli.c), the JSON body's "context" object and the query string of
 * a YAML body (api/submit_body.c).  Each names a field the same way (the
 * CLI writes '-' for '_'), and each field's range is written once, here.
 * No I/O.
 */
#ifndef CORE_CONTEXT_H
#define CORE_CONTEXT_H

#include <stdbool.h>
#include <stddef.h>

#include "err.h"

struct arena;
struct model_def;
struct policy;

struct context {
	long gpus;		/* world size, >= 1 */
	long nodes;		/* >= 1, divides gpus */
	long gpus_per_node;	/* gpus / nodes, derived */
	const char *gpu;	/* catalog id, "h100-sxm" */
	const char *interconnect;	/* nvlink|pcie|infiniband|ethernet */
	const struct policy *policy;	/* the organization's, or NULL */
	const char *ds_config;	/* DeepSpeed JSON the caller read for a
				   path preflight cannot open, or NULL */
	size_t ds_config_len;
	double gpu_memory_gib;	/* capacity override, GiB; 0: the catalog's */
	double host_memory_gib;	/* host RAM per node, GiB; 0: unknown */
	long long dataset_tokens;	/* tokens per epoch; 0: unknown */
	/* The model's architecture from the caller (--model-config,
	   context.model), used instead of the catalog; or NULL.  check_run
	   resolves it once for the report's own context. */
	const struct model_def *model;
	/* When the catalog has no base_model: the daemon's --hf-cache
	   reader (server/), or NULL.  Returns the model or NULL, allocated
	   from a; never fails the check. */
	const struct model_def *(*model_lookup)(void *arg, const char *id,
	    struct arena *a);
	void *model_lookup_arg;
	int torch;		/* torch version as major*1000 + minor*10 +
				   patch (2.11 is 2110, 2.5.1 is 2051);
				   0: the default, 2.11 */
};

/* The most GPUs (and nodes) a context may name. */
#define CONTEXT_COUNT_MAX 1000000L

/* How a field's value is written and bounded. */
enum context_kind {
	CONTEXT_COUNT,		/* integer, 1..CONTEXT_COUNT_MAX */
	CONTEXT_GIB,		/* number of GiB, context_gib_valid */
	CONTEXT_TOKENS,		/* integer >= 1 */
	CONTEXT_TORCH,		/* "2.11" or "2.5.1" */
	CONTEXT_TEXT		/* an id context_resolve checks */
};

struct context_field {
	const char *name;	/* "gpus": the JSON member, the query
				   parameter; the flag is "--" + name with
				   '-' for '_' */
	const char *canon;	/* the name errors use ("gpus" for
				   "world_size") */
	enum context_kind kind;
};

/*
 * The fields a context decoder takes (gpus, world_size, nodes, gpu,
 * interconnect, torch, gpu_memory_gib, host_memory_gib, dataset_tokens),
 * in that order, ending with a NULL name.  Borrowed (static).  The
 * model, policy and DeepSpeed config come from files or objects and are
 * each decoder's own.
 */
extern const struct context_field context_fields[];

/* The field named name ("gpus", "world_size"), or NULL.  Borrowed. */
const struct context_field *context_field_find(const char *name);

/*
 * Set field f of c from its text (a flag's or a query parameter's value;
 * a TEXT value is borrowed, not copied).  ERR_SCHEMA when the text is not
 * a value of the field's kind and range, with e->msg "<subject> must be
 * an integer from 1 to 1000000" (or "a number of GiB from 0.1 to
 * 1048576", "a positive integer", "a version like 2.11"); subject is how
 * the caller names the field ("--gpus", "context.gpus").
 */
int context_set(struct context *c, const struct context_field *f,
    const char *text, const char *subject, struct err *e);

/* context_set for a JSON integer (COUNT, TOKENS) or number (GIB): the
   same ranges and messages.  ERR_SCHEMA for a field of another kind. */
int context_set_long(struct context *c, const struct context_field *f,
    long long v, const char *subject, struct err *e);
int context_set_double(struct context *c, const struct context_field *f,
    double v, const char *subject, struct err *e);

/* "2.11" or "2.5.1" -> 2110 / 2051 into *out; ERR_SCHEMA when
   malformed (*out unchanged). */
int context_parse_torch(int *out, const char *s);

/* A memory size in GiB for gpu_memory_gib / host_memory_gib: 0.1 to
   1048576 (NaN is not). */
bool context_gib_valid(double v);

/* Fill c with the defaults: 1 GPU, 1 node, h100-sxm, link of the GPU. */
void context_default(struct context *c);

/*
 * Check c and derive gpus_per_node and a default interconnect (the GPU's
 * link on one node, infiniband across nodes).  ERR_SCHEMA with a message
 * naming the field: gpus < 1, nodes < 1, gpus not a multiple of nodes,
 * unknown GPU id (the message lists the ids), unknown interconnect.
 */
int context_resolve(struct context *c, struct err *e);

#endif /* CORE_CONTEXT_H */
