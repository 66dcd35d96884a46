/*
 * core/report: findings, the launch context and the verdict.
 *
 * This is DESIGN.md's report: every reason for a verdict is a finding with
 * a rule id, findings are ordered by line then rule id, and the verdict is
 * fail when any finding is an error, warn when any is a warning, else pass.
 * Everything lives in the request arena.
 */
#ifndef CORE_REPORT_H
#define CORE_REPORT_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

#include "err.h"

struct arena;
struct doc;
struct estimate;
struct model_def;
struct suggestion;
struct plan;
struct policy;

enum severity {
	SEV_INFO = 0,
	SEV_WARNING,
	SEV_ERROR
};

enum verdict {
	VERDICT_PASS = 0,
	VERDICT_WARN,
	VERDICT_FAIL
};

struct finding {
	const char *rule;	/* stable id, "schema.duplicate_key" */
	enum severity severity;
	const char *message;	/* plain words, names the values involved */
	const char *hint;	/* how to fix it, or NULL */
	const char *path;	/* dotted config path, "" for the root */
	unsigned line;		/* 1-based, of the key (or value) to change */
	unsigned col;		/* 1-based */
	struct finding *next;	/* report_add() order, until report_finish */
	const char *reason;	/* why it was suppressed, or NULL */
};

/* Where the config is meant to run (DESIGN.md "context"). */
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

struct report {
	enum verdict verdict;	/* set by report_finish() */
	char config_sha256[65];	/* hex digest of the submitted bytes; core
				   cannot hash, so the caller fills it */
	struct context ctx;	/* resolved context */
	const struct doc *doc;	/* the parsed document; borrowed (arena) */
	const struct plan *plan;	/* what Axolotl would do (arena) */
	const struct estimate *estimate;	/* per-GPU memory (arena) */
	const struct suggestion *suggestions;	/* nsuggestions (arena) */
	size_t nsuggestions;
	struct finding *findings;	/* nfindings, sorted */
	size_t nfindings;
	struct finding *suppressed;	/* moved by inline comments, sorted;
					   message then reason in hint */
	size_t nsuppressed;
	size_t count[3];	/* findings per enum severity */
	struct finding *head;	/* unsorted, while collecting */
	struct finding *tail;
};

/* "2.11" or "2.5.1" -> 2110 / 2051 into *out; -1 when malformed. */
int context_parse_torch(int *out, const char *s);

/* A memory size in GiB for gpu_memory_gib / host_memory_gib: 0.1 to
   1048576 (NaN is not). */
bool context_gib_valid(double v);

/* "80" or "79.5" -> *out when context_gib_valid; else -1. */
int context_parse_gib(double *out, const char *s);

/* A dataset_tokens count, "1000000000" -> *out (>= 1); else -1. */
int context_parse_tokens(long long *out, const char *s);

/* Fill c with the defaults: 1 GPU, 1 node, h100-sxm, link of the GPU. */
void context_default(struct context *c);

/*
 * Check c and derive gpus_per_node and a default interconnect (the GPU's
 * link on one node, infiniband across nodes).  ERR_SCHEMA with a message
 * naming the field: gpus < 1, nodes < 1, gpus not a multiple of nodes,
 * unknown GPU id (the message lists the ids), unknown interconnect.
 */
int context_resolve(struct context *c, struct err *e);

/*
 * Append a finding; strings are copied into a.  Returns 0 or ERR_NOMEM.
 * The message is printf-formatted.
 */
int report_add(struct report *r, struct arena *a, const char *rule,
    enum severity sev, const char *path, unsigned line, unsigned col,
    const char *hint, const char *fmt, ...)
    __attribute__((format(printf, 9, 10)));

/* report_add() with the message's arguments in ap. */
int report_addv(struct report *r, struct arena *a, const char *rule,
    enum severity sev, const char *path, unsigned line, unsigned col,
    const char *hint, const char *fmt, va_list ap)
    __attribute__((format(printf, 9, 0)));

/* Findings (and suppressed findings) a report keeps at most; past it
   the most severe are kept and one report.truncated note counts the
   rest (report_finish). */
#define REPORT_MAX_FINDINGS 1000

/* Sort the findings (line, then rule id), cap them at
   REPORT_MAX_FINDINGS, and set the verdict from every finding. */
int report_finish(struct report *r, struct arena *a, struct err *e);

const char *severity_name(enum severity s);	/* "info" ... */
const char *verdict_name(enum verdict v);	/* "pass" ... */

#endif /* CORE_REPORT_H */
