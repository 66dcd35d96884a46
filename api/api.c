/*
 * api/api: the route table, routing, CORS and the probes of the HTTP API
 * (problems and responses: api/problem.c; query strings, times and ids:
 * api/parse.c).  No sockets, no SQL: the store comes in through ctx.
 */
#include "api.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_int.h"
#include "api/replay.h"
#include "core/arena.h"

#define MAX_SEGMENTS 8

/* ---- the context --------------------------------------------------- */

void
api_ctx_init(struct api_ctx *ctx)
{
	memset(ctx, 0, sizeof(*ctx));
	pthread_mutex_init(&ctx->id_mu, NULL);
	ctx->replay = replay_new();	/* NULL: CI answers 503 */
}

void
api_ctx_fini(struct api_ctx *ctx)
{
	pthread_mutex_destroy(&ctx->id_mu);
	replay_free(ctx->replay);
	ctx->replay = NULL;
}

/* ---- probes --------------------------------------------------------- */

static void
h_healthz(struct api_ctx *ctx, const struct api_req *req,
    const struct query *q, const struct route_match *m,
    struct api_resp *resp)
{
	(void)ctx;
	(void)req;
	(void)q;
	(void)m;
	api_json(resp, 200, json_pack("{s:s}", "status", "ok"));
}

static void
h_readyz(struct api_ctx *ctx, const struct api_req *req,
    const struct query *q, const struct route_match *m,
    struct api_resp *resp)
{
	struct err e = { 0 };

	(void)req;
	(void)q;
	(void)m;
	if (ctx->store.ops->ready(ctx->store.self, &e) != 0) {
		api_problem(resp, 503, "not-ready", "Service Unavailable",
		    NULL, "the check store is not writable or not migrated");
		return;
	}
	api_json(resp, 200, json_pack("{s:s}", "status", "ready"));
}

static void
h_metrics(struct api_ctx *ctx, const struct api_req *req,
    const struct query *q, const struct route_match *m,
    struct api_resp *resp)
{
	char *text = NULL;
	size_t len = 0;

	(void)req;
	(void)q;
	(void)m;
	if (ctx->metrics == NULL || ctx->metrics(ctx->env, &text, &len) !=
	    0) {
		api_problem(resp, 500, "internal", "Internal Server Error",
		    NULL, "metrics are not available");
		return;
	}
	api_resp_fini(resp);
	resp->status = 200;
	resp->content_type = "text/plain; version=0.0.4; charset=utf-8";
	resp->body = text;
	resp->body_len = len;
}

/* ---- routing -------------------------------------------------------- */

struct route {
	const char *method;
	const char *pattern;	/* "/v1/checks/{id}" */
	enum api_access access;	/* who may call it */
	handler_fn *fn;
};

/* openapi.yaml operationIds in comments; test_openapi checks the set. */
static const struct route routes[] = {
	{ "GET", "/healthz", ACCESS_OPEN, h_healthz },	/* getHealth */
	{ "GET", "/readyz", ACCESS_OPEN, h_readyz },	/* getReady */
	{ "GET", "/metrics", ACCESS_METRICS, h_metrics },	/* getMetrics */
	{ "POST", "/v1/checks", ACCESS_TEAM, h_post_check },	/* createCheck */
	{ "GET", "/v1/checks", ACCESS_TEAM, h_list_checks },	/* listChecks */
	{ "GET", "/v1/checks/{id}", ACCESS_TEAM, h_get_check },	/* getCheck */
	{ "GET", "/v1/checks/{id}/diff", ACCESS_TEAM, h_diff },	/* diffChecks */
	{ "GET", "/v1/configs/{name}/checks", ACCESS_TEAM, h_history },
							/* getHistory */
	{ "GET", "/v1/stats/rules", ACCESS_TEAM, h_rule_stats },
							/* getRuleStats */
	{ "POST", "/v1/estimate", ACCESS_TEAM, h_estimate },	/* estimate */
	{ "POST", "/v1/ci/checks", ACCESS_CI, h_ci_check },	/* createCiCheck */
	{ "GET", "/v1/rules", ACCESS_TEAM, h_rules },	/* listRules */
	{ "GET", "/v1/rules/{id}", ACCESS_TEAM, h_rule },	/* getRule */
	{ "GET", "/v1/catalog/gpus", ACCESS_TEAM, h_gpus },	/* listGpus */
	{ "GET", "/v1/catalog/models", ACCESS_TEAM, h_models },
							/* listModels */
	{ "GET", "/v1/keys", ACCESS_TEAM, h_keys },	/* listKeys */
	{ "POST", "/v1/diagnose", ACCESS_TEAM, h_diagnose },	/* diagnose */
	{ "GET", "/v1/measurements", ACCESS_TEAM, h_measurements },
							/* listMeasurements */
	{ "GET", "/v1/checks/{id}/config", ACCESS_TEAM, h_get_config },
							/* getCheckConfig */
	/* The review pages (issue #18): static, no data, so open; the
	   script fetches /v1 with the user's token. */
	{ "GET", "/", ACCESS_OPEN, h_ui_page },		/* pageChecks */
	{ "GET", "/checks/{id}", ACCESS_OPEN, h_ui_page },	/* pageCheck */
	{ "GET", "/checks/{id}/diff/{other}", ACCESS_OPEN, h_ui_page },
							/* pageDiff */
	{ "GET", "/configs/{name}", ACCESS_OPEN, h_ui_page },	/* pageHistory */
	{ "GET", "/try", ACCESS_OPEN, h_ui_page },	/* pageTry */
	{ "GET", "/rules", ACCESS_OPEN, h_ui_page },	/* pageRules */
	{ "GET", "/rules/{id}", ACCESS_OPEN, h_ui_page },	/* pageRule */
	{ "GET", "/ui/{file}", ACCESS_OPEN, h_ui_asset },	/* uiAsset */
};

#define NROUTES (sizeof(routes) / sizeof(routes[0]))

const char *const *
api_routes(void)
{
	static const char *list[NROUTES + 1];
	static char buf[NROUTES][64];
	size_t i;

	for (i = 0; i < NROUTES; i++) {
		snprintf(buf[i], sizeof(buf[i]), "%s %s", routes[i].method,
		    routes[i].pattern);
		list[i] = buf[i];
	}
	list[NROUTES] = NULL;
	return list;
}

/* RFC 3986 unreserved characters: the only ones fixed segments use. */
static bool
is_unreserved(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_' ||
	    c == '~';
}

/* A raw segment, as written in the request target. */
struct rawseg {
	const char *p;
	size_t n;
};

/*
 * Split the raw path into segments without decoding them.  -1 when the
 * target is not in the one form we serve: not starting with '/', bytes
 * outside visible ASCII, a malformed or NUL/control percent-escape, an
 * escaped unreserved character (RFC 3986 6.2.2.2: "%76" is "v"), or a
 * dot segment, written or escaped.  *why says which.
 */
static int
split_raw(struct rawseg *seg, int *nseg, const char *path, const char **why)
{
	const char *p = path;
	int n = 0;

	if (p == NULL || *p != '/') {
		*why = "the request target must start with '/'";
		return -1;
	}
	while (*p == '/') {
		const char *start = ++p;
		size_t dots = 0, len, i;

		while (*p != '\0' && *p != '/')
			p++;
		len = (size_t)(p - start);
		for (i = 0; i < len; i++) {
			unsigned char c = (unsigned char)start[i];

			if (c <= 0x20 || c >= 0x7F) {
				*why = "the path holds a byte that must be "
				    "percent-encoded";
				return -1;
			}
			if (c == '%') {
				int hi, lo;
				unsigned char d;

				if (i + 2 >= len) {
					*why = "malformed percent-encoding in "
					    "the path";
					return -1;
				}
				hi = api_hexval(start[i + 1]);
				lo = api_hexval(start[i + 2]);
				if (hi < 0 || lo < 0) {
					*why = "malformed percent-encoding in "
					    "the path";
					return -1;
				}
				d = (unsigned char)(hi * 16 + lo);
				if (d < 0x20 || d == 0x7F) {
					*why = "the path encodes a NUL or "
					    "control character";
					return -1;
				}
				if (is_unreserved(d)) {
					*why = "the path percent-encodes a "
					    "character that needs no encoding";
					return -1;
				}
				i += 2;
				continue;
			}
			if (c == '.')
				dots++;
		}
		if (len > 0 && dots == len && len <= 2) {
			*why = "the path has a '.' or '..' segment";
			return -1;
		}
		if (len == 0 && *p == '\0' && n > 0) {
			*why = NULL;	/* trailing slash: no such resource */
			return -1;
		}
		if (n == MAX_SEGMENTS) {
			*why = NULL;	/* deeper than any route */
			return -1;
		}
		seg[n].p = start;
		seg[n++].n = len;
	}
	*nseg = n;
	return 0;
}

/* Does pattern match the raw segments?  Fixed parts compare byte for
   byte with what was written; {params} are kept raw in m. */
static bool
match(const char *pattern, const struct rawseg *seg, int nseg,
    struct rawseg raw[2], int *nraw)
{
	const char *p = pattern + 1;
	int i = 0;

	*nraw = 0;
	if (*p == '\0')	/* "/": the one empty segment */
		return nseg == 1 && seg[0].n == 0;
	while (*p != '\0') {
		const char *end = strchr(p, '/');
		size_t len = end != NULL ? (size_t)(end - p) : strlen(p);

		if (i >= nseg)
			return false;
		if (p[0] == '{') {
			if (seg[i].n == 0 || *nraw == 2)
				return false;
			raw[(*nraw)++] = seg[i];
		} else if (seg[i].n != len || memcmp(seg[i].p, p, len) != 0) {
			return false;
		}
		i++;
		p = end != NULL ? end + 1 : p + len;
	}
	return i == nseg;
}

int
api_route(struct api_route *out, const char *method, const char *path,
    struct arena *a)
{
	struct rawseg seg[MAX_SEGMENTS], raw[2];
	const char *why = NULL;
	bool head = strcmp(method, "HEAD") == 0;
	size_t i, used;
	int nseg = 0, nraw, k;

	memset(out, 0, sizeof(*out));
	out->pattern = "unmatched";
	out->access = ACCESS_OPEN;
	out->index = -1;
	if (split_raw(seg, &nseg, path, &why) != 0) {
		out->status = why != NULL ? 400 : 404;
		out->why = why;
		return out->status;
	}
	for (i = 0; i < NROUTES; i++) {
		if (!match(routes[i].pattern, seg, nseg, raw, &nraw))
			continue;
		if (strcmp(routes[i].method, method) == 0 ||
		    (head && strcmp(routes[i].method, "GET") == 0)) {
			out->index = (int)i;
			out->pattern = routes[i].pattern;
			out->access = routes[i].access;
			for (k = 0; k < nraw; k++) {
				/* Parameters are decoded once, here. */
				out->param[k] = api_pct_decode(raw[k].p, raw[k].n,
				    false, a);
				if (out->param[k] == NULL) {
					out->status = 413;
					out->why = NULL;
					return out->status;
				}
				if (!api_is_utf8(out->param[k])) {
					out->status = 400;
					out->why = "a path parameter decodes to "
					    "bytes that are not UTF-8";
					return out->status;
				}
			}
			out->nparam = nraw;
			out->status = 0;
			return 0;
		}
		/* The path exists under another method: 405 (or OPTIONS),
		   and the route's own access rules still apply. */
		out->pattern = routes[i].pattern;
		out->access = routes[i].access;
		used = strlen(out->allow);
		snprintf(out->allow + used, sizeof(out->allow) - used,
		    "%s%s%s", used > 0 ? ", " : "", routes[i].method,
		    strcmp(routes[i].method, "GET") == 0 ? ", HEAD" : "");
	}
	out->status = out->allow[0] != '\0' ? 405 : 404;
	return out->status;
}

static bool
origin_allowed(const struct api_ctx *ctx, const char *origin)
{
	size_t i;

	for (i = 0; origin != NULL && i < ctx->ncors; i++)
		if (strcmp(ctx->cors_origins[i], origin) == 0)
			return true;
	return false;
}

void
api_cors(struct api_ctx *ctx, const struct api_req *req,
    struct api_resp *resp)
{
	if (ctx->ncors > 0 && req->origin != NULL &&
	    origin_allowed(ctx, req->origin)) {
		api_header(resp, "Access-Control-Allow-Origin", req->origin);
		api_header(resp, "Vary", "Origin");
		api_header(resp, "Access-Control-Expose-Headers",
		    "Location, X-Request-Id, Retry-After");
	}
}

void
api_route_problem(struct api_resp *resp, const struct api_route *rt)
{
	api_problem(resp, 400, "bad-request-target", "Bad Request", NULL,
	    "%s; send the path in its canonical form (e.g. /v1/checks)",
	    rt->why != NULL ? rt->why : "malformed request target");
}

void
api_dispatch(struct api_ctx *ctx, const struct api_route *rt,
    const struct api_req *req, struct api_resp *resp)
{
	struct route_match m;
	struct query q;
	const struct route *hit;
	const char *method = req->method;

	memset(resp, 0, sizeof(*resp));
	resp->route = rt->pattern;
	api_cors(ctx, req, resp);
	if (rt->status == 400) {
		api_route_problem(resp, rt);
		return;
	}
	if (rt->status == 413) {
		api_problem(resp, 413, "request-too-large",
		    "Request exceeds its memory budget", NULL,
		    "the request needs more memory than one request may use");
		return;
	}
	if (rt->status == 405) {
		char *a = arena_printf(req->arena, "%s, OPTIONS", rt->allow);

		if (strcmp(method, "OPTIONS") == 0) {
			/* CORS preflight for allowed origins only. */
			if (req->origin != NULL &&
			    !origin_allowed(ctx, req->origin)) {
				api_problem(resp, 403, "cors-forbidden",
				    "Forbidden", NULL,
				    "origin '%.100s' is not allowed",
				    req->origin);
				return;
			}
			resp->status = 204;
			api_header(resp, "Allow", a != NULL ? a : rt->allow);
			if (req->origin != NULL) {
				api_header(resp,
				    "Access-Control-Allow-Methods",
				    a != NULL ? a : rt->allow);
				api_header(resp,
				    "Access-Control-Allow-Headers",
				    "Authorization, Content-Type, "
				    "Idempotency-Key, X-Request-Id, "
				    "X-Preflight-Signature, "
				    "X-Preflight-Timestamp, "
				    "X-Preflight-Delivery");
				api_header(resp, "Access-Control-Max-Age",
				    "600");
			}
			return;
		}
		api_problem(resp, 405, "method-not-allowed",
		    "Method Not Allowed", NULL,
		    "%s is not allowed here; allowed: %s", method, rt->allow);
		api_header(resp, "Allow", a != NULL ? a : rt->allow);
		return;
	}
	if (rt->status != 0 || rt->index < 0 || (size_t)rt->index >= NROUTES) {
		api_problem(resp, 404, "not-found", "Not Found", NULL,
		    "no such resource");
		return;
	}
	hit = &routes[rt->index];
	m.param[0] = rt->param[0];
	m.param[1] = rt->param[1];
	m.nparam = rt->nparam;
	if (api_query_parse(&q, req->query != NULL ? req->query : "",
	    req->arena, resp) != 0)
		return;
	hit->fn(ctx, req, &q, &m, resp);
	if (resp->status == 0 && resp->pending == NULL)
		api_problem(resp, 500, "internal", "Internal Server Error",
		    NULL, "the handler gave no answer");
}

void
api_handle(struct api_ctx *ctx, const struct api_req *req,
    struct api_resp *resp)
{
	struct api_route rt;

	api_route(&rt, req->method, req->path, req->arena);
	api_dispatch(ctx, &rt, req, resp);
}
