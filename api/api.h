/*
 * api/api: HTTP semantics without sockets.  A handler fills a struct
 * api_resp from a struct api_req; server/http.c moves them to and from
 * libmicrohttpd, and the tests call api_handle() directly.
 *
 * Routes are DESIGN.md's and openapi.yaml's (operationIds in comments).
 * Errors are RFC 9457 application/problem+json.
 */
#ifndef API_API_H
#define API_API_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "api/store.h"
#include "core/doc.h"

struct arena;
struct model_def;
struct policy;
struct replay;
struct report;

#define API_MAX_HEADERS 12

struct api_header {
	const char *name;	/* borrowed: static or request arena */
	const char *value;
};

struct api_req {
	const char *method;	/* "GET", "POST", ... */
	const char *path;	/* raw, still percent-encoded, no query */
	const char *query;	/* raw query string without '?'; "" if none */
	const char *content_type;	/* Content-Type, or NULL */
	const char *idem_key;	/* Idempotency-Key, or NULL */
	const char *origin;	/* Origin, or NULL */
	const char *accept;	/* Accept, or NULL */
	const char *signature;	/* X-Preflight-Signature, or NULL */
	const char *timestamp;	/* X-Preflight-Timestamp, or NULL */
	const char *delivery;	/* X-Preflight-Delivery, or NULL */
	const char *if_none_match;	/* If-None-Match, or NULL (pages) */
	const char *body;	/* the request body (not NUL-terminated) */
	size_t body_len;
	const char *team;	/* the caller's team ("default" without auth) */
	bool admin;		/* may see every team */
	bool head;		/* HEAD: status and headers only, so a
				   handler skips building a body */
	struct arena *arena;	/* the request's arena */
	/* Non-NULL: a handler may queue its write and return with
	   resp->pending set instead of waiting for the commit; wake(
	   wake_arg) then runs once, on the store's writer thread, when the
	   write is done, and the caller finishes with api_finish().  NULL:
	   handlers wait (the tests, and handlers calling handlers). */
	void (*wake)(void *wake_arg);
	void *wake_arg;
};

struct api_pending;

struct api_resp {
	int status;		/* HTTP status */
	const char *content_type;	/* static string */
	const char *cache_control;	/* static string; NULL: no-store */
	char *body;		/* malloc'd; the caller frees it */
	size_t body_len;
	struct api_header headers[API_MAX_HEADERS];	/* extra headers */
	int nheaders;
	const char *route;	/* matched route pattern, for logs/metrics */
	const char *verdict;	/* verdict of a check, for logs; or NULL */
	const struct report *report;	/* the check's report (arena) */
	size_t stored_bytes;	/* bytes the answer stored: a check's
				   201, a diagnosis that stored its
				   check (the bytes-per-day quota) */
	/* A write queued for req->wake (status still 0): finish with
	   api_finish() after the wake, or release with api_pending_free()
	   when the request is dropped.  Request arena. */
	struct api_pending *pending;
};

struct api_ctx {
	struct store store;	/* the backend; borrowed */
	struct limits lim;	/* document limits for submitted configs */
	size_t max_body;	/* body bytes (the server enforces it) */
	const char *ci_secret;	/* HMAC key of POST /v1/ci/checks, or NULL */
	const char *const *cors_origins;	/* allowed Origins */
	size_t ncors;
	void *env;		/* passed to the callbacks below */
	int64_t (*now_ms)(void *env);	/* wall clock, Unix ms */
	void (*random)(void *env, void *buf, size_t n);	/* CSPRNG */
	/* The policy in force (reloaded on SIGHUP), or NULL; borrowed for
	   the rest of the request.  NULL function: no policy. */
	const struct policy *(*policy)(void *env);
	/* The architecture of a model the catalog lacks (the daemon's
	   --hf-cache), allocated from a, or NULL; NULL function: none. */
	const struct model_def *(*model_lookup)(void *env, const char *id,
	    struct arena *a);
	/* Prometheus text for GET /metrics: malloc'd into *out. */
	int (*metrics)(void *env, char **out, size_t *len);
	/* CI deliveries seen in the signature window (api_ctx_init). */
	struct replay *replay;
	/* Id state: ids are strictly increasing within one ctx. */
	pthread_mutex_t id_mu;	/* guards last_ms and last_rand */
	int64_t last_ms;
	unsigned char last_rand[10];
};

/* How far X-Preflight-Timestamp may be from the server's clock, and so
   how long a delivery id is remembered. */
#define API_CI_SKEW_MS (5 * 60 * 1000)

/* Zero ctx and set up its lock and replay set; the caller then fills the
   fields. */
void api_ctx_init(struct api_ctx *ctx);

/* Release what api_ctx_init() set up. */
void api_ctx_fini(struct api_ctx *ctx);

/* Who may call a route. */
enum api_access {
	ACCESS_OPEN,		/* probes, 404s: no credentials */
	ACCESS_METRICS,		/* /metrics: the metrics token, if set */
	ACCESS_TEAM,		/* /v1: a team's bearer token */
	ACCESS_CI		/* /v1/ci: the HMAC signature (handler) */
};

/*
 * A request target matched against the route table, once: the server
 * authenticates, limits, counts and logs by this, and api_dispatch()
 * runs the same match, so no decision is taken on a different path.
 */
struct api_route {
	int status;		/* 0 matched; 400 non-canonical target; 404
				   no route; 405 path served under another
				   method (OPTIONS answers it); 413 no memory */
	const char *pattern;	/* the route pattern, or "unmatched" */
	enum api_access access;	/* of the route whose path matched */
	int index;		/* row of the route table, -1 when none */
	const char *param[2];	/* {id} / {name}, decoded once, arena */
	int nparam;
	const char *why;	/* status 400: what is wrong with the target */
	char allow[128];	/* status 405: the methods served there */
};

/*
 * Match method and path (raw, still percent-encoded, no query) against
 * the routes.  Fixed segments match only byte for byte as written; a
 * target with an escaped unreserved character ("/%761/checks"), a dot
 * segment, a NUL or control character, or bytes that must be escaped
 * is refused (status 400) before any route is tried.  Parameters are
 * decoded into a.  Returns out->status.
 */
int api_route(struct api_route *out, const char *method, const char *path,
    struct arena *a);

/*
 * Answer req on the route rt (from api_route() on req->path).  Always
 * fills resp (status 500 on a bug, never aborts).  Safe to call from
 * several threads at once when the store is.
 */
void api_dispatch(struct api_ctx *ctx, const struct api_route *rt,
    const struct api_req *req, struct api_resp *resp);

/*
 * Finish a request whose handler returned with resp->pending, once
 * req->wake ran: fills resp as api_dispatch() would have (the stored
 * check's 201, the winner of an Idempotency-Key race, a 503).  req is
 * the one given to api_dispatch(), still valid.
 */
void api_finish(struct api_ctx *ctx, const struct api_req *req,
    struct api_resp *resp);

/* Release what resp->pending holds, for a request dropped after its
   wake without api_finish(); no-op when nothing is pending. */
void api_pending_free(struct api_resp *resp);

/* api_route() then api_dispatch(): for callers without a server. */
void api_handle(struct api_ctx *ctx, const struct api_req *req,
    struct api_resp *resp);

/* Fill resp with the 400 problem of a refused request target. */
void api_route_problem(struct api_resp *resp, const struct api_route *rt);

/* The CORS headers for req's Origin when it is allowed (any status). */
void api_cors(struct api_ctx *ctx, const struct api_req *req,
    struct api_resp *resp);

/*
 * The smallest id of millisecond ms ("0000000000" + ms in base 32 ...):
 * every id made at or after ms sorts at or above it.  out: 27 bytes.
 */
void api_id_floor(char out[27], int64_t ms);

/* Fill resp with the 401 (WWW-Authenticate: Bearer) or 429 problem. */
void api_auth_problem(struct api_resp *resp, int status);

/* Fill resp with a 503 problem (detail, Retry-After: retry_s). */
void api_unavailable(struct api_resp *resp, const char *detail, int retry_s);

/* Fill resp with the 403 of a Host that is not this loopback server. */
void api_problem_host(struct api_resp *resp);

/* Fill resp with a 400/501 problem about the request's HTTP framing. */
void api_framing_problem(struct api_resp *resp, int status,
    const char *detail);

/* Fill resp with the 429 of a team past its write quota; Retry-After
   retry_s (formatted into a). */
void api_quota_problem(struct api_resp *resp, int retry_s, struct arena *a);

/* Why a team's request is refused before it is served (server/limits.h):
   as many of its requests waiting for a place as it may have (429), as
   many bytes of its answers unread (429), or of every team's (503). */
enum api_busy { API_BUSY_WAITING, API_BUSY_UNREAD, API_BUSY_UNREAD_ALL };

/* Fill resp with the problem of why; Retry-After: 1 (503: 2). */
void api_busy_problem(struct api_resp *resp, enum api_busy why);

/* Fill resp with the 413 problem for a body over max_body bytes. */
void api_too_large(struct api_resp *resp, size_t max_body);

/* Free resp->body; resp may be reused after. */
void api_resp_fini(struct api_resp *resp);

/* Every route pattern served, "METHOD /path", NULL-terminated. */
const char *const *api_routes(void);

#endif /* API_API_H */
