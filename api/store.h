/*
 * api/store: the storage interface the API needs, declared here so that a
 * backend (server/store_sqlite.c today, PostgreSQL tomorrow) plugs in
 * without api/ knowing it.  A backend fills a struct store with its ops.
 *
 * Ids sort by creation time (their first 10 characters are the
 * millisecond timestamp), so time ranges are id ranges.
 *
 * Every op returns 0 or a negative enum err_code: ERR_NOTFOUND when no row
 * matches, ERR_STORE for a storage failure (the message says what, for
 * logs, never for clients), ERR_NOMEM when the arena is spent.  Strings
 * coming out are copied into the caller's arena.
 */
#ifndef API_STORE_H
#define API_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/err.h"

struct arena;

/* One finding row, for the rule, list and stats queries; its strings
   are borrowed like a store_check's. */
struct store_finding {
	const char *rule;	/* borrowed: "schema.duplicate_key" */
	const char *severity;	/* borrowed (static): "error" | "warning" |
				   "info" */
	unsigned line;		/* 1-based */
};

/*
 * A stored check.  json is what GET /v1/checks/{id} returns, verbatim.
 *
 * Ownership (jansson's words): no field is ever the holder's to free.
 * Going in (put_check, put_check_async) every pointer is borrowed from
 * the caller until put_check returns or done(w) has run, and the store
 * copies what it keeps (api/submit.c owns the malloc'd buffers in its
 * struct api_pending and frees them itself).  Coming out (get_check,
 * get_by_idem, list_checks) every pointer is borrowed from the caller's
 * arena a: valid while a lives, freed with it.
 */
struct store_check {
	char id[27];		/* owned (inline): 26 Crockford base32
				   chars, time-sortable */
	int64_t created_at_ms;	/* Unix time, milliseconds */
	const char *team;	/* borrowed: owner team */
	const char *name;	/* borrowed: config name, "" when not given */
	const char *config_sha256;	/* borrowed: of the config bytes */
	const char *verdict;	/* borrowed (static): "pass" | "warn" |
				   "fail" */
	long errors;		/* findings per severity */
	long warnings;
	long infos;
	const char *context_json;	/* borrowed: the context object */
	const char *json;	/* borrowed: the whole stored check as JSON
				   text */
	const char *config;	/* borrowed: the submitted config text
				   (config_len bytes, may hold NULs) */
	size_t config_len;
	const char *idem_key;	/* borrowed: Idempotency-Key, or NULL */
	const char *body_sha256;	/* borrowed: of the request body
					   (idempotency) */
	const struct store_finding *findings;	/* borrowed: nfindings rows
						   (put only; NULL out) */
	size_t nfindings;
};

/* Filters for list_checks; zero/NULL fields do not filter. */
struct store_query {
	const char *team;	/* NULL: every team (admin) */
	const char *name;
	const char *verdict;
	const char *rule;	/* checks with at least one such finding */
	const char *since_id;	/* id >= since_id (api_id_floor of a time) */
	const char *until_id;	/* id < until_id */
	const char *before_id;	/* cursor: only ids < before_id */
	unsigned limit;		/* rows wanted, >= 1 */
	size_t max_bytes;	/* stop once the rows read hold more than this
				   many bytes of json, after at least two
				   rows; 0: no cap */
};

/* How often a rule fired, per verdict of its check (strings borrowed
   from the caller's arena). */
struct store_rule_stat {
	const char *rule;
	const char *verdict;
	long count;		/* findings */
	long checks;		/* distinct checks */
};

/* A stored diagnosis of a failed run (issue #19); json is what POST
   /v1/diagnose answered.  Every pointer is borrowed as a store_check's
   are: from the caller going in, from the caller's arena coming out. */
struct store_diagnosis {
	char id[27];		/* like a check's */
	int64_t created_at_ms;	/* Unix time, milliseconds */
	const char *team;	/* owner team */
	const char *check_id;	/* the check of the config that ran */
	const char *name;	/* the config's name, "" when not given */
	const char *config_sha256;
	const char *gpu;	/* context GPU id, "h100-sxm" */
	const char *context_json;	/* the context object */
	const char *first;	/* first diagnosis id, or NULL: none known */
	bool measured;		/* a CUDA OOM gave the two numbers below */
	double measured_peak_gib;	/* what the failed step needed, at
					   least */
	double capacity_gib;	/* the device's */
	const char *lines_json;	/* [{line, text}] the numbers rest on */
	const char *json;	/* the whole diagnosis as JSON text */
};

/* Filters of list_measurements; NULL fields do not filter. */
struct store_mquery {
	const char *team;	/* NULL: every team (admin) */
	const char *name;
	const char *config_sha256;
	const char *before_id;	/* cursor: only ids < before_id */
	unsigned limit;		/* rows wanted, >= 1 */
	bool all;		/* diagnoses without a measured peak too */
};

struct store_info {
	long long db_bytes;	/* database size on disk */
	long long write_errors;	/* failed writes since start */
	int schema_version;	/* applied migrations */
	int schema_latest;	/* migrations this binary knows */
	long long committed;	/* checks committed since start */
	long long commits;	/* transactions that committed them */
	long long syncs;	/* fsyncs of the database and its journal */
	long long bytes_written;	/* bytes written to them */
	long long checkpoints;	/* checkpoint passes that copied pages */
};

/*
 * A check queued for the writer (put_check_async).  The caller fills c,
 * done and arg, and keeps w, c and everything c points to alive and
 * unchanged until done(w) has run.  Nobody is told "committed" before
 * COMMIT returned.
 */
struct store_write {
	const struct store_check *c;	/* borrowed until done */
	/* Called once, on the store's writer thread, after COMMIT returned
	   (rv 0) or the write failed (rv and e say why); it must not block
	   or call the store. */
	void (*done)(struct store_write *w);
	void *arg;			/* the caller's */
	int rv;				/* 0 or a negative enum err_code */
	struct err e;			/* why, when rv != 0 */
	struct store_write *next;	/* the store's queue link */
};

struct store_ops {
	/* Insert c and its findings; 0 once committed. */
	int (*put_check)(void *self, const struct store_check *c,
	    struct err *e);
	/* The check id, if team is NULL or owns it, into *out. */
	int (*get_check)(void *self, struct store_check *out, const char *id,
	    const char *team, struct arena *a, struct err *e);
	/* The check stored under (team, key) for Idempotency-Key. */
	int (*get_by_idem)(void *self, struct store_check *out,
	    const char *team, const char *key, struct arena *a,
	    struct err *e);
	/* Up to q->limit checks, newest first, into *out (arena). */
	int (*list_checks)(void *self, struct store_check **out, size_t *n,
	    const struct store_query *q, struct arena *a, struct err *e);
	/* Rule firing counts in checks with id >= since_id (NULL: all) of
	   team (NULL: all). */
	int (*rule_stats)(void *self, struct store_rule_stat **out,
	    size_t *n, const char *team, const char *since_id,
	    struct arena *a, struct err *e);
	/* Insert d (its check_id must exist); 0 once committed. */
	int (*put_diagnosis)(void *self, const struct store_diagnosis *d,
	    struct err *e);
	/* Up to q->limit diagnoses with a measured peak (every one with
	   q->all), newest first, into *out (arena). */
	int (*list_measurements)(void *self, struct store_diagnosis **out,
	    size_t *n, const struct store_mquery *q, struct arena *a,
	    struct err *e);
	/* Queue w->c for the next commit: 0 when queued, and then
	   w->done(w) runs once it is committed or failed; otherwise an
	   error (the store is closing) and done never runs.  NULL: the
	   backend only has put_check. */
	int (*put_check_async)(void *self, struct store_write *w);
	/* 0 when a write succeeds and the schema is current. */
	int (*ready)(void *self, struct err *e);
	/* Size and error counters; cannot fail. */
	void (*info)(void *self, struct store_info *out);
};

struct store {
	const struct store_ops *ops;	/* borrowed, static */
	void *self;			/* the backend's state */
};

#endif /* API_STORE_H */
