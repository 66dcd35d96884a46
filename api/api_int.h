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

/* Handlers (api/checks.c, api/catalog.c, api/ui.c). */
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
