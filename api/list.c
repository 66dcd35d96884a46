/*
 * api/list: reading stored checks (openapi.yaml: getCheck, getCheckConfig,
 * listChecks) and the paging listChecks and getHistory share: filters,
 * opaque cursors, pages bounded in items and bytes.
 */
#include "api/api_int.h"

#include <stdlib.h>
#include <string.h>

#include "api/digest.h"
#include "api/jsonw.h"
#include "core/arena.h"

/*
 * The stored check m->param[0] of the caller's team (any team for an
 * admin) into *c, for getCheck and getCheckConfig; -1 with resp holding
 * the problem (a bad query, no such check for this team, the store).
 */
static int
find_check(struct store_check *c, struct api_ctx *ctx,
    const struct api_req *req, const struct query *q,
    const struct route_match *m, struct api_resp *resp)
{
	static const char *const none[] = { NULL };
	struct err e = { 0 };

	if (query_only(q, none, resp) != 0)
		return -1;
	if (!api_is_id(m->param[0])) {
		api_problem(resp, 404, "not-found", "Not Found", NULL,
		    "no such check");
		return -1;
	}
	if (ctx->store.ops->get_check(ctx->store.self, c, m->param[0],
	    req->admin ? NULL : req->team, req->arena, &e) != 0) {
		api_problem_err(resp, &e);
		return -1;
	}
	return 0;
}

/* getCheck: GET /v1/checks/{id} */
void
h_get_check(struct api_ctx *ctx, const struct api_req *req,
    const struct query *q, const struct route_match *m,
    struct api_resp *resp)
{
	struct store_check c;
	char *text;

	if (find_check(&c, ctx, req, q, m, resp) != 0)
		return;
	text = strdup(c.json);
	if (text == NULL) {
		api_problem(resp, 500, "internal", "Internal Server Error",
		    NULL, "out of memory");
		return;
	}
	api_json_text(resp, 200, text, strlen(text));
}

/*
 * getCheckConfig: GET /v1/checks/{id}/config, the submitted bytes (issue
 * #18: the check page shows them with each finding on its line).  Same
 * team rules as getCheck.  The bytes are the caller's own input, so they
 * go out as YAML that no browser renders, under a policy that runs
 * nothing even if one did.
 */
void
h_get_config(struct api_ctx *ctx, const struct api_req *req,
    const struct query *q, const struct route_match *m,
    struct api_resp *resp)
{
	struct store_check c;

	if (find_check(&c, ctx, req, q, m, resp) != 0)
		return;
	api_resp_fini(resp);
	resp->status = 200;
	resp->content_type = "application/yaml; charset=utf-8";
	api_header(resp, "Content-Security-Policy",
	    "default-src 'none'; sandbox");
	if (req->head || c.config_len == 0)
		return;
	resp->body = malloc(c.config_len);
	if (resp->body == NULL) {
		api_problem(resp, 500, "internal", "Internal Server Error",
		    NULL, "out of memory");
		return;
	}
	memcpy(resp->body, c.config, c.config_len);
	resp->body_len = c.config_len;
}

/* Opaque cursors: base64url of the last id served. */
void
list_cursor_encode(char *out, size_t cap, const char *id)
{
	digest_base64url(out, cap, id, strlen(id));
}

static int
cursor_decode(char *out, size_t cap, const char *s)
{
	if (digest_base64url_decode(out, cap, s) != 0)
		return -1;
	return api_is_id(out) ? 0 : -1;
}

/* Shared by listChecks and getHistory: filters common to both. */
int
list_query(struct store_query *sq, struct list_bounds *bd,
    const struct api_req *req, const struct query *q,
    struct api_resp *resp)
{
	const char *v;
	long n = LIST_DEFAULT;
	int64_t ms;

	memset(sq, 0, sizeof(*sq));
	sq->team = req->admin ? query_get(q, "team") : req->team;
	if ((v = query_get(q, "limit")) != NULL &&
	    api_parse_long(&n, v, 1, LIST_MAX) != 0) {
		api_problem(resp, 400, "bad-query", "Bad query string", NULL,
		    "limit must be an integer from 1 to %d", LIST_MAX);
		return -1;
	}
	sq->limit = (unsigned)n + 1;	/* one more: is there a next page? */
	sq->max_bytes = PAGE_BYTES;
	if ((v = query_get(q, "cursor")) != NULL) {
		if (cursor_decode(bd->cursor, sizeof(bd->cursor), v) != 0) {
			api_problem(resp, 400, "bad-query", "Bad query string",
			    NULL, "cursor is not one this server issued");
			return -1;
		}
		sq->before_id = bd->cursor;
	}
	if ((v = query_get(q, "since")) != NULL) {
		if (api_parse_time(&ms, v) != 0) {
			api_problem(resp, 400, "bad-query", "Bad query string",
			    NULL, "since must be an RFC 3339 time, e.g. "
			    "2026-12-02T10:00:00Z");
			return -1;
		}
		api_id_floor(bd->since, ms);
		sq->since_id = bd->since;
	}
	if ((v = query_get(q, "until")) != NULL) {
		if (api_parse_time(&ms, v) != 0) {
			api_problem(resp, 400, "bad-query", "Bad query string",
			    NULL, "until must be an RFC 3339 time, e.g. "
			    "2026-12-02T10:00:00Z");
			return -1;
		}
		api_id_floor(bd->until, ms);
		sq->until_id = bd->until;
	}
	return 0;
}

/*
 * Items of a page out of the n rows a list query read: all but the one
 * read to see whether there is a next page, or, when the store stopped
 * at its byte cap, all but the row that crossed it.
 */
size_t
list_page_len(const struct store_check *items, size_t n,
    const struct store_query *sq)
{
	size_t got = 0, i;

	if (n >= sq->limit)
		return sq->limit - 1;
	for (i = 0; i < n; i++)
		got += strlen(items[i].json);
	if (sq->max_bytes > 0 && n >= 2 && got > sq->max_bytes)
		return n - 1;
	return n;
}

/* HEAD of a collection: its status and type, without building it. */
void
api_head_answer(struct api_resp *resp)
{
	api_json_text(resp, 200, NULL, 0);
}

/* The rows of a list query and the page they make (list_page_len);
   -1 when resp is answered instead: a HEAD, or the store's problem. */
int
list_fetch(struct store_check **items, size_t *n, size_t *page,
    struct api_ctx *ctx, const struct api_req *req,
    const struct store_query *sq, struct api_resp *resp)
{
	struct err e = { 0 };

	if (req->head) {
		api_head_answer(resp);
		return -1;
	}
	if (ctx->store.ops->list_checks(ctx->store.self, items, n, sq,
	    req->arena, &e) != 0) {
		api_problem_err(resp, &e);
		return -1;
	}
	*page = list_page_len(*items, *n, sq);
	return 0;
}

/* listChecks: GET /v1/checks */
void
h_list_checks(struct api_ctx *ctx, const struct api_req *req,
    const struct query *q, const struct route_match *m,
    struct api_resp *resp)
{
	static const char *const allowed[] = { "name", "verdict", "rule",
	    "since", "until", "limit", "cursor", "team", NULL };
	struct store_query sq;
	struct store_check *items;
	struct jsonw w;
	struct list_bounds bd;
	char next[64];
	const char *v;
	size_t n, i, page, len;
	char *text;

	(void)m;
	if (query_only(q, allowed, resp) != 0 ||
	    list_query(&sq, &bd, req, q, resp) != 0)
		return;
	sq.name = query_get(q, "name");
	sq.rule = query_get(q, "rule");
	if ((v = query_get(q, "verdict")) != NULL) {
		if (strcmp(v, "pass") != 0 && strcmp(v, "warn") != 0 &&
		    strcmp(v, "fail") != 0) {
			api_problem(resp, 400, "bad-query", "Bad query string",
			    NULL, "verdict must be pass, warn or fail");
			return;
		}
		sq.verdict = v;
	}
	if (list_fetch(&items, &n, &page, ctx, req, &sq, resp) != 0)
		return;
	jw_init(&w);
	jw_lit(&w, "{\"items\":[");
	for (i = 0; i < page; i++) {
		len = strlen(items[i].json);
		if (i > 0 && w.len + len > PAGE_BYTES) {
			page = i;	/* the rest on the next page */
			break;
		}
		if (i > 0)
			jw_lit(&w, ",");
		jw_raw(&w, items[i].json, len);
	}
	jw_lit(&w, "],\"next_cursor\":");
	if (n > page && page > 0) {
		list_cursor_encode(next, sizeof(next), items[page - 1].id);
		jw_lit(&w, "\"");
		jw_lit(&w, next);
		jw_lit(&w, "\"}");
	} else {
		jw_lit(&w, "null}");
	}
	text = jw_take(&w, &len);
	if (text == NULL) {
		api_problem(resp, 500, "internal", "Internal Server Error",
		    NULL, "out of memory");
		return;
	}
	api_json_text(resp, 200, text, len);
}
