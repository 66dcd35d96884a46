/*
 * core/diagnose: read a failed run's log and say what broke (issue #19).
 *
 * The failure signatures are data: one row per signature in a table
 * (core/diagnose_sig.c) with its fixed-string patterns, what to extract,
 * the cause and fix templates and the related rule ids.  A log is
 * untrusted input: it is examined under limits (the last max_bytes, the
 * last max_lines, the head of each line up to max_line bytes) with one
 * Aho-Corasick automaton over every pattern, so the work is linear in the
 * bytes examined whatever the log holds; nothing backtracks.
 *
 * Pure: no I/O, no clock.  The log buffer is only borrowed during
 * diagnose_log(); everything the report points at is in the arena.
 */
#ifndef CORE_DIAGNOSE_H
#define CORE_DIAGNOSE_H

#include <stdbool.h>
#include <stddef.h>

#include "err.h"

struct arena;
struct context;
struct limits;
struct report;
struct suggestion;

#define DIAG_ANY 5		/* patterns a row may match on */
#define DIAG_ALSO 2		/* patterns it also needs, or must not have */
#define DIAG_LINES 4		/* evidence lines kept per diagnosis */
#define DIAG_LAST_ERRORS 5	/* error lines quoted when nothing matched */
#define DIAG_QUOTE 400		/* bytes of a quoted line, at most */
#define DIAG_VARS 12		/* values extracted per diagnosis */
#define DIAG_VERSIONS 16	/* version lines a report keeps */

/* What a log is examined under (hostile input). */
struct diag_limits {
	size_t max_bytes;	/* only the last max_bytes are read */
	size_t max_lines;	/* only the last max_lines lines are read */
	size_t max_line;	/* bytes of one line (or \r segment) matched;
				   the rest of a longer line is skipped */
};

/* The defaults: 64 MiB, 2,000,000 lines, 16 KiB per line. */
void diag_limits_default(struct diag_limits *l);

/* When a row applies beyond its patterns. */
enum diag_when {
	DIAG_ALWAYS = 0,
	DIAG_OTHER_PROCESS,	/* CUDA OOM: memory held outside the process */
	DIAG_FRAGMENTED,	/* CUDA OOM: reserved but unallocated is large */
	DIAG_PHASE_WEIGHTS,	/* CUDA OOM while loading or moving weights */
	DIAG_PHASE_OPTIMIZER,	/* CUDA OOM in the optimizer step */
	DIAG_PHASE_LOGITS,	/* CUDA OOM in the LM head or the loss */
	DIAG_PHASE_ACTIVATIONS,	/* CUDA OOM in forward or backward */
	DIAG_NEAR_RAY		/* a Ray marker within the last 200 lines */
};

/* What a row reads out of its line (the template {names} it fills). */
enum diag_extract {
	DIAG_X_NONE = 0,
	DIAG_X_CUDA_OOM,	/* the allocator's numbers: {tried} {capacity}
				   {free} {allocated} {reserved} {in_use}
				   {other} {needed} {gpu} */
	DIAG_X_SYMBOL,		/* {symbol} {library} */
	DIAG_X_MODULE,		/* {module} */
	DIAG_X_CUDA_VERSIONS,	/* {installed} {torch_cuda} */
	DIAG_X_DRIVER,		/* {found} {driver_cuda} */
	DIAG_X_SHAPES,		/* {param} {ckpt_shape} {model_shape} */
	DIAG_X_NCCL_WORK,	/* {op} {timeout_ms} {ran_ms} */
	DIAG_X_RANKS,		/* {rank_a} {rank_b} {device} */
	DIAG_X_DTYPES,		/* {dtype_a} {dtype_b} */
	DIAG_X_LOCAL_RANK	/* {local_rank} */
};

/*
 * One signature.  A line matches when it holds one of any[], every one of
 * all[] and none of none[] (fixed strings, case-sensitive) and `when`
 * holds.  Rows are ordered by precedence: a line belongs to the first row
 * it matches, and diagnoses are listed in row order, so a root cause (a
 * broken install, a CUDA OOM) comes before what it sets off (a watchdog
 * timeout on the other ranks).  Templates name extracted values as
 * {name}; a [bracketed] part is left out when a value in it is missing.
 */
struct diag_sig {
	const char *id;		/* stable: "oom.activations" */
	const char *klass;	/* oom | host | nccl | env | config | ray |
				   checkpoint | cuda */
	const char *title;	/* one line, plain words */
	const char *any[DIAG_ANY];	/* NULL-terminated when short */
	const char *all[DIAG_ALSO];
	const char *none[DIAG_ALSO];
	enum diag_when when;
	enum diag_extract extract;
	const char *cause;	/* template: what happened and why */
	const char *fix;	/* template: what to change */
	const char *env;	/* environment to set, "VAR=value" lines, or
				   NULL */
	const char *yaml;	/* config keys to set, YAML, or NULL */
	const char *cmd;	/* commands to run, one a line, or NULL */
	const char *rules;	/* related rule ids, comma-separated, or NULL */
};

/* The table, in precedence order; *n gets its length.  Static. */
const struct diag_sig *diagnose_signatures(size_t *n);

/* The row for id, or NULL.  Static. */
const struct diag_sig *diagnose_find(const char *id);

/* A line of the log as quoted back. */
struct diag_line {
	unsigned line;		/* 1-based, counted in the whole log */
	const char *text;	/* valid UTF-8, no control characters, at
				   most DIAG_QUOTE bytes ("..." marks a cut);
				   arena */
};

/* Which numbers a CUDA OOM message gave (struct diag_oom.have). */
enum {
	DIAG_OOM_TRIED = 1 << 0,
	DIAG_OOM_CAPACITY = 1 << 1,
	DIAG_OOM_FREE = 1 << 2,
	DIAG_OOM_ALLOCATED = 1 << 3,
	DIAG_OOM_RESERVED = 1 << 4,	/* reserved but unallocated */
	DIAG_OOM_IN_USE = 1 << 5,	/* this process, non-PyTorch included */
	DIAG_OOM_OTHER = 1 << 6,	/* derived: held outside the process */
	DIAG_OOM_NEEDED = 1 << 7	/* derived: what the step needed */
};

/* The numbers of a CUDA out-of-memory message, GiB. */
struct diag_oom {
	unsigned line;		/* the message's line; 0: no CUDA OOM */
	unsigned have;		/* DIAG_OOM_* bits */
	int gpu;		/* device index, -1 when not given */
	double tried_gib;	/* the allocation that failed */
	double capacity_gib;	/* the device's total */
	double free_gib;	/* free on the device */
	double allocated_gib;	/* allocated by PyTorch */
	double reserved_gib;	/* reserved by PyTorch but unallocated */
	double in_use_gib;	/* held by this process */
	double other_gib;	/* held by other processes (derived) */
	double needed_gib;	/* at least: in use + tried (derived) */
	const char *phase;	/* "weights" | "optimizer" | "logits" |
				   "activations" | NULL: from the traceback */
	unsigned phase_line;	/* the frame that showed it, 0: none */
};

/* A value read out of the log for a template. */
struct diag_var {
	const char *name;	/* "symbol" (static) */
	const char *value;	/* arena */
};

struct diagnosis {
	const struct diag_sig *sig;	/* its row; static */
	struct diag_line lines[DIAG_LINES];	/* the first lines it rests
						   on, and the last */
	size_t nlines;
	size_t count;		/* lines of the log that matched */
	struct diag_var vars[DIAG_VARS];	/* extracted values */
	size_t nvars;
	const char *cause;	/* expanded template; arena */
	const char *fix;	/* expanded template; arena */
};

/* The OOM measured against the config's estimate (diagnose_config()). */
struct diag_memory {
	const struct report *check;	/* the config checked at the device's
					   real capacity; arena */
	bool known;		/* the estimator could size the model */
	double capacity_gib;	/* the capacity used: the log's, else the
				   context's GPU */
	double estimate_gib;	/* the estimator's per-GPU peak */
	bool fits;		/* the estimator says it fits */
	const char *term;	/* the most likely term: "activations",
				   "logits", "optimizer", "weights",
				   "gradients", "buffers", "fragmentation",
				   "other_process"; or NULL */
	const char *term_why;	/* why that term; arena */
	double term_gib;	/* the estimate of that term, 0 if none */
	double calibrated_capacity_gib;	/* when the estimate fit but the run
					   did not: the capacity scaled by
					   estimate / measured, under which the
					   suggestions were searched; else 0 */
	const struct suggestion *suggestions;	/* nsuggestions (arena), the
						   estimator's: those that keep
						   what is trained (no adapter
						   change) first, each group
						   fastest first */
	size_t nsuggestions;
};

struct diag_report {
	struct diagnosis *items;	/* best first; arena */
	size_t n;
	struct diag_oom oom;	/* the top OOM diagnosis's numbers */
	struct diag_line last_exception;	/* the last exception line
						   (line 0: none) */
	struct diag_line last_errors[DIAG_LAST_ERRORS];	/* the last lines
							   that read as
							   errors, oldest
							   first */
	size_t nlast_errors;
	size_t bytes;		/* of the whole log */
	unsigned lines;		/* in the whole log */
	unsigned first_line;	/* the first line examined */
	bool cut;		/* the head was not examined (limits) */
	size_t long_lines;	/* lines matched on their head only */
	struct diag_var versions[DIAG_VERSIONS];	/* what the log says is
							   installed ("nccl":
							   "2.20.5"), the last
							   line of each; name
							   static, value arena */
	size_t nversions;
	struct diag_memory *mem;	/* diagnose_config()'s, or NULL */
};

/* Build the per-process signature matcher diagnose_log uses
   (core_init); 0, or ERR_INTERNAL when it cannot be built. */
int diagnose_init(struct err *e);

/*
 * Diagnose log[0..len) under lim into *out (arena a).  A log with no known
 * signature gives n == 0 and the last error lines; never a guess.
 * Errors: ERR_NOMEM (the arena's budget), ERR_INTERNAL (the signature
 * table does not fit the matcher: a bug).  On failure *out is NULL.
 */
int diagnose_log(struct diag_report **out, const char *log, size_t len,
    const struct diag_limits *lim, struct arena *a, struct err *e);

/*
 * Hold d's CUDA OOM against the config cfg[0..len) on ctx: check it
 * through core/check at the capacity the log reports (else ctx's),
 * name the most likely term and keep the suggestions the estimator says
 * fit (searched at a calibrated capacity when the estimate fit but the
 * run did not).  Sets d->mem; a log without a CUDA OOM still gets the
 * check.  Errors: those of check_run() (ERR_PARSE, ERR_SCHEMA, ERR_LIMIT,
 * ERR_NOMEM), with e->loc in the config.
 */
int diagnose_config(struct diag_report *d, const char *cfg, size_t len,
    const struct context *ctx, const struct limits *lim, struct arena *a,
    struct err *e);

/* The value of extracted name in g, or NULL. */
const char *diagnosis_var(const struct diagnosis *g, const char *name);

#endif /* CORE_DIAGNOSE_H */
