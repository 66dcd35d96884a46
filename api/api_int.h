/*
 * api/api_int: declarations shared by the api/ modules (not for callers).
 */
#ifndef API_API_INT_H
#define API_API_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "api/api.h"
#include "core/context.h"
#include "core/err.h"

#define QUERY_MAX 32

struct query {
	const char *key[QUERY_MAX];	/* decoded, arena */
	const char *value[QUERY_MAX];	/* decoded, arena */
	int n;
};

struct route_match {
	const char *param[2];	/* decoded {id} / {name}, arena */
	int nparam;
};

typedef void handler_fn(struct api_ctx *ctx, const struct api_req *req,
    const struct query *q, const struct route_match *m,
    struct api_resp *resp);

/* The value of hex digit c, or -1. */
int api_hexval(char c);

/*
 * Percent-decode s[0..n) into a (plus_space: '+' is a space, as in query
 * strings).  NULL when malformed, when it decodes to a NUL or a control
 * character, or when the arena is spent.
 */
char *api_pct_decode(const char *s, size_t n, bool plus_space,
    struct arena *a);

/* Is s (NUL-terminated) well-formed UTF-8: no overlong form, surrogate
   or code point past U+10FFFF (what JSON text may carry)? */
bool api_is_utf8(const char *s);

/* Split and decode a raw query string into q (keys unique); -1 with a
   400 problem in resp. */
int api_query_parse(struct query *q, const char *raw, struct arena *a,
    struct api_resp *resp);

/* The value of key, or NULL. */
const char *query_get(const struct query *q, const char *key);

/*
 * 0 when every key of q is in allowed (NULL-terminated); otherwise fills
 * resp with a 400 problem naming the key and returns -1.
 */
int query_only(const struct query *q, const char *const *allowed,
    struct api_resp *resp);

/* Fill resp with an RFC 9457 problem.  loc may be NULL. */
void api_problem(struct api_resp *resp, int status, const char *slug,
    const char *title, const struct err_loc *loc, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));

/* resp gets status and j as compact JSON; steals j. */
void api_json(struct api_resp *resp, int status, json_t *j);

/* resp gets status and the JSON text body (malloc'd; stolen). */
void api_json_text(struct api_resp *resp, int status, char *body,
    size_t len);

/* Add a header; name and value must outlive resp (static or arena). */
void api_header(struct api_resp *resp, const char *name,
    const char *value);

/* The problem for an err from the core or the store. */
void api_problem_err(struct api_resp *resp, const struct err *e);

/* Parse a decimal integer in [min, max]; -1 if it is not one. */
int api_parse_long(long *out, const char *s, long min, long max);

/* RFC 3339 (or YYYY-MM-DD) -> Unix ms; -1 if malformed. */
int api_parse_time(int64_t *out, const char *s);

/* Unix ms -> "2026-12-02T10:20:17.123Z" into out (>= 32 bytes). */
void api_format_time(char *out, size_t cap, int64_t ms);

/* A new id, strictly after every id ctx made before: 26 chars + NUL. */
void api_new_id(char out[27], struct api_ctx *ctx, int64_t ms);

/* Is s a well-formed id (26 Crockford base32 characters)? */
bool api_is_id(const char *s);

/* ---- submissions (api/submit_body.c) -------------------------------- */

/* A decoded POST body: the config and where it should run. */
struct submission {
	const char *config;	/* borrowed from json or the request */
	size_t config_len;
	struct context ctx;
	const char *name;	/* "" when not given */
	json_t *labels;		/* object of strings; owned */
	json_t *source;		/* CI: {repo, commit, ...}; borrowed, json */
	json_t *json;		/* the decoded JSON body; owned */
	bool dry_run;
};

enum sub_kind {
	SUB_CHECK,		/* POST /v1/checks: JSON or YAML, dry_run */
	SUB_ESTIMATE,		/* POST /v1/estimate: JSON or YAML */
	SUB_CI			/* POST /v1/ci/checks: JSON with source */
};

/*
 * Decode a POST body (JSON or raw YAML with the context in the query
 * string) into s and resolve its context.  On failure resp holds the
 * problem and -1 is returned; s must be submission_fini'd either way.
 */
int submission_decode(struct submission *s, const struct api_req *req,
    const struct query *q, enum sub_kind kind, struct api_resp *resp);

/* Release what s owns (its JSON and labels). */
void submission_fini(struct submission *s);

/* 0 when name is a config name a check may carry (at most 1,024 bytes,
   no control character); else -1 with a 422 problem in resp. */
int api_check_name(const char *name, struct api_resp *resp);

/* ---- lists and histories (api/list.c) ------------------------------- */

#define LIST_DEFAULT 50		/* items of a page without ?limit */
#define LIST_MAX 200		/* the largest ?limit */
/* A page of a list or a history holds at most this many bytes of JSON
   (and at least one item): a page that would be larger ends early with a
   cursor, so a client that never reads its answer pins little. */
#define PAGE_BYTES ((size_t)256 << 10)

/* Id bounds for cursor, since and until, kept beside the query that
   borrows them. */
struct list_bounds {
	char cursor[32];
	char since[27];
	char until[27];
};

struct store_query;
struct store_check;

/*
 * The filters listChecks and getHistory share (team, limit, cursor,
 * since, until) from q into sq, with bd holding the ids it borrows.
 * -1 with a 400 problem in resp when one is malformed.
 */
int list_query(struct store_query *sq, struct list_bounds *bd,
    const struct api_req *req, const struct query *q,
    struct api_resp *resp);

/* Items of a page out of the n rows a list query read (see list.c). */
size_t list_page_len(const struct store_check *items, size_t n,
    const struct store_query *sq);

/* The rows of a list query and the page they make; -1 when resp is
   answered instead (a HEAD, or the store's problem). */
int list_fetch(struct store_check **items, size_t *n, size_t *page,
    struct api_ctx *ctx, const struct api_req *req,
    const struct store_query *sq, struct api_resp *resp);

/* The opaque cursor after the item with this id, into out. */
void list_cursor_encode(char *out, size_t cap, const char *id);

/* HEAD of a collection: its status and type, without building it. */
void api_head_answer(struct api_resp *resp);

/* Handlers (api/submit.c, api/list.c, api/history.c, api/catalog.c,
   api/ui.c). */
handler_fn h_post_check, h_ci_check, h_list_checks, h_get_check, h_diff, h_history,
    h_rule_stats, h_estimate, h_rules, h_rule, h_gpus, h_models, h_keys,
    h_get_config, h_ui_page, h_ui_asset;

/* Handlers (api/diagnose.c, issue #19). */
handler_fn h_diagnose, h_measurements;

/*
 * Add "failures" (the diagnoses stored with each check: id, diagnosis,
 * measured peak, summary) to the items of a config's history (getHistory),
 * an array of objects with "id"; items without any get [].  Best effort:
 * a store error leaves them without.
 */
void diagnose_history(struct api_ctx *ctx, const struct api_req *req,
    const char *team, const char *name, json_t *items);

#endif /* API_API_INT_H */
