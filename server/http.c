/*
 * server/http: libmicrohttpd (internal epoll thread) <-> api_handle().
 *
 * Request lifecycle:
 *   uri_logger()        allocate struct req, keep the raw URI, start clock
 *   on_request() #1     headers known: refuse an announced oversize body
 *   on_request() #2..   body chunks, buffered up to max_body, then dropped
 *   on_request() last   call the API, queue the response; or, when the
 *                       API queued a write (resp.pending), suspend the
 *                       connection until the store's writer calls wake()
 *   on_request() again  after the resume: api_finish(), queue the response
 *   on_completed()      free the arena and the body on every path
 *
 * So no thread waits for a commit (issue #16): an MHD thread serves its
 * other connections while a check is being written, and the writer
 * resumes exactly the connection whose check it committed.
 */
#include "http.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <microhttpd.h>

#include "core/arena.h"
#include "server/auth.h"
#include "server/deadline.h"
#include "server/framing.h"
#include "server/limits.h"
#include "server/log.h"
#include "server/metrics.h"
#include "server/quota.h"

struct http_server {
	struct MHD_Daemon *d;
	struct http_config cfg;
	struct api_ctx *api;
	struct metrics *m;
	struct deadline *dl;	/* requests must arrive in time */
	pthread_mutex_t mu;	/* the fields below, and each req's
				   suspended/write_done */
	pthread_cond_t cv;	/* stopping: a write is done */
	unsigned in_flight;
	size_t body_bytes;	/* request bodies buffered, all connections
				   (under mu) */
	unsigned suspended;	/* connections waiting for their write */
	bool stopping;		/* http_stop: no more suspensions */
	struct gate *gate;	/* requests of a team at once (limits.h) */
	uint16_t port;
	bool quiesced;
};

struct req {
	struct http_server *s;
	struct arena arena;
	char *uri;		/* raw request target, malloc'd */
	char *body;		/* malloc'd, up to max_body bytes */
	size_t len;
	size_t cap;
	bool too_large;		/* body went past max_body */
	bool busy;		/* bodies of all connections past body_memory:
				   the rest is dropped, then 503 */
	bool answered;		/* a response was queued */
	struct timespec t0;
	char request_id[72];
	char team[65];		/* who is calling (auth) */
	bool admin;
	bool entered;		/* holds a place of its team (gate_enter) */
	size_t unread;		/* its answer's bytes, counted until sent */
	struct api_route rt;	/* the route, matched once (first call) */
	const char *query;	/* into uri, after the '?' ("" if none) */
	bool close;		/* answer with Connection: close */
	struct MHD_Connection *conn;
	struct api_req ar;	/* what api_dispatch got; api_finish too */
	struct api_resp resp;	/* its answer, pending while written */
	bool suspended;		/* waiting for wake() (under s->mu) */
	bool write_done;	/* wake() ran (under s->mu) */
};

static double
since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)(t.tv_sec - t0->tv_sec) +
	    (double)(t.tv_nsec - t0->tv_nsec) / 1e9;
}

static void req_drop(void *arg);

static void *
uri_logger(void *cls, const char *uri, struct MHD_Connection *c)
{
	struct http_server *s = cls;
	struct req *r = calloc(1, sizeof(*r));

	deadline_start(c);	/* from the request line on */
	if (r == NULL)
		return NULL;
	r->s = s;
	r->uri = strdup(uri != NULL ? uri : "/");
	r->rt.pattern = "unmatched";	/* until on_headers() routes it */
	r->rt.index = -1;
	r->query = "";
	clock_gettime(CLOCK_MONOTONIC, &r->t0);
	arena_init(&r->arena, s->cfg.request_memory);
	pthread_mutex_lock(&s->mu);
	s->in_flight++;
	pthread_mutex_unlock(&s->mu);
	deadline_hold(c, r, req_drop);	/* until on_completed() */
	return r;
}

/* Whose bodies r's counts against (limits.h): its team's, but not the CI
   team's, whose requests anyone can send unsigned (NULL: none). */
static const char *
body_owner(const struct req *r)
{
	return r->rt.access == ACCESS_CI ? NULL : r->team;
}

/* Give n bytes r had taken back to the server's body budget and to its
   team's (body_reserve). */
static void
body_release(struct req *r, size_t n)
{
	pthread_mutex_lock(&r->s->mu);
	r->s->body_bytes -= n;
	pthread_mutex_unlock(&r->s->mu);
	gate_hold(r->s->gate, body_owner(r), -(long long)n, false);
}

/* Free r's body and give its bytes back to the server's budget. */
static void
body_free(struct req *r)
{
	if (r->cap > 0)
		body_release(r, r->cap);
	free(r->body);
	r->body = NULL;
	r->len = r->cap = 0;
}

/* Take cap - r->cap more bytes of the server's body budget; false (and
   nothing taken) when that would pass it. */
static bool
body_reserve(struct req *r, size_t cap)
{
	struct http_server *s = r->s;
	size_t more = cap - r->cap;
	bool ok;

	if (!gate_hold(s->gate, body_owner(r), (long long)more, true))
		return false;	/* this team's quarter (limits.h) */
	pthread_mutex_lock(&s->mu);
	ok = s->cfg.body_memory == 0 || s->body_bytes + more <=
	    s->cfg.body_memory;
	if (ok)
		s->body_bytes += more;
	pthread_mutex_unlock(&s->mu);
	if (!ok)
		gate_hold(s->gate, body_owner(r), -(long long)more, false);
	return ok;
}

/* r is answered or dropped: its team's place passes on (limits.h). */
static void
leave(struct req *r)
{
	if (r->entered)
		gate_leave(r->s->gate, r->team);
	r->entered = false;
}

/* Free r: on_completed(), or closing a connection MHD refused it on. */
static void
req_drop(void *arg)
{
	struct req *r = arg;
	struct http_server *s = r->s;

	/* Dropped after its write was done but before it was answered. */
	leave(r);
	gate_hold(s->gate, r->team, -(long long)r->unread, false);
	api_pending_free(&r->resp);
	api_resp_fini(&r->resp);
	arena_fini(&r->arena);
	body_free(r);
	free(r->uri);
	free(r);
	pthread_mutex_lock(&s->mu);
	s->in_flight--;
	pthread_mutex_unlock(&s->mu);
}

static void
on_completed(void *cls, struct MHD_Connection *c, void **req_cls,
    enum MHD_RequestTerminationCode toe)
{
	(void)cls;
	(void)toe;
	deadline_done(c);	/* freed here; the next request's clock */
	if (*req_cls != NULL)
		req_drop(*req_cls);
	*req_cls = NULL;
}

static void
set_request_id(struct req *r, struct MHD_Connection *c)
{
	const char *v = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
	    "X-Request-Id");
	unsigned char rnd[12];
	size_t i;

	if (framing_request_id_ok(v)) {
		snprintf(r->request_id, sizeof(r->request_id), "%s", v);
		return;
	}
	r->s->api->random(r->s->api->env, rnd, sizeof(rnd));
	for (i = 0; i < sizeof(rnd); i++)
		snprintf(r->request_id + 2 * i, 3, "%02x", rnd[i]);
}

/*
 * Queue ar.  Everything the request held (its arena, up to
 * request_memory, and its body) is released before the response is
 * queued, so a client that never reads its answer pins only the answer.
 */
static enum MHD_Result
respond(struct req *r, struct MHD_Connection *c, const char *method,
    struct api_resp *ar)
{
	struct MHD_Response *resp;
	enum MHD_Result ok;
	double secs;
	int i;

	if (strcmp(method, "HEAD") == 0) {
		api_resp_fini(ar);
		resp = framing_head_response();
	} else {
		resp = MHD_create_response_from_buffer(ar->body_len,
		    ar->body != NULL ? ar->body : (char *)(uintptr_t)"",
		    ar->body != NULL ? MHD_RESPMEM_MUST_FREE :
		    MHD_RESPMEM_PERSISTENT);
	}
	if (resp == NULL) {
		api_resp_fini(ar);
		return MHD_NO;
	}
	r->unread = ar->body != NULL ? ar->body_len : 0;	/* until sent */
	gate_hold(r->s->gate, r->team, (long long)r->unread, false);
	ar->body = NULL;	/* MHD owns it now */
	if (ar->content_type != NULL)
		MHD_add_response_header(resp, "Content-Type",
		    ar->content_type);
	MHD_add_response_header(resp, "X-Request-Id", r->request_id);
	MHD_add_response_header(resp, "Cache-Control",
	    ar->cache_control != NULL ? ar->cache_control : "no-store");
	MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
	for (i = 0; i < ar->nheaders; i++)
		if (ar->headers[i].value != NULL)
			MHD_add_response_header(resp, ar->headers[i].name,
			    ar->headers[i].value);
	if (r->close)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_CONNECTION,
		    "close");
	r->answered = true;
	secs = since(&r->t0);
	metrics_request(r->s->m, r->rt.pattern, method, ar->status, secs);
	if (ar->report != NULL && ar->status < 300)
		metrics_check(r->s->m, ar->report);
	log_json("info", json_pack("{s:s, s:s, s:s, s:i, s:f, s:s, s:s?}",
	    "request_id", r->request_id, "method",
	    framing_method_ok(method) ? method : "-", "route",
	    r->rt.pattern, "status", ar->status, "duration_ms", secs * 1e3,
	    "team", r->team, "verdict", ar->verdict));
	/* Whatever stored bytes: a 201, or a diagnosis (200) and the check
	   POST /v1/diagnose stores with a config. */
	if (r->s->cfg.quota != NULL && ar->stored_bytes > 0)
		quota_charge(r->s->cfg.quota, r->team, ar->stored_bytes);
	/* Headers are copied by MHD; the report was last read above. */
	leave(r);
	arena_fini(&r->arena);
	body_free(r);
	ok = MHD_queue_response(c, (unsigned)ar->status, resp);
	MHD_destroy_response(resp);
	return ok;
}

/* The CORS headers of an allowed Origin, on an answer api/ did not give. */
static void
cors(struct req *r, struct MHD_Connection *c, struct api_resp *ar)
{
	struct api_req q;

	memset(&q, 0, sizeof(q));
	q.origin = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Origin");
	api_cors(r->s->api, &q, ar);
}

static enum MHD_Result
too_large(struct req *r, struct MHD_Connection *c, const char *method)
{
	struct api_resp ar;

	memset(&ar, 0, sizeof(ar));
	api_too_large(&ar, r->s->cfg.max_body);
	cors(r, c, &ar);
	r->close = true;
	return respond(r, c, method, &ar);
}

/* 401, 429 or 503 before the body is read. */
static enum MHD_Result
refuse(struct req *r, struct MHD_Connection *c, const char *method,
    enum auth_verdict v)
{
	struct api_resp ar;

	memset(&ar, 0, sizeof(ar));
	if (v == AUTH_UNAVAILABLE)
		api_unavailable(&ar, "the token store cannot be read right "
		    "now; retry later", 5);
	else
		api_auth_problem(&ar, v == AUTH_LIMIT ? 429 : 401);
	cors(r, c, &ar);
	r->too_large = true;	/* drop any body */
	return respond(r, c, method, &ar);
}

/* A request the protocol layer refuses, before routing: close after. */
static enum MHD_Result
bad_framing(struct req *r, struct MHD_Connection *c, const char *method,
    int status, const char *detail)
{
	struct api_resp ar;

	memset(&ar, 0, sizeof(ar));
	api_framing_problem(&ar, status, detail);
	r->too_large = true;
	r->close = true;
	return respond(r, c, method, &ar);
}

/* Transfer-Encoding, Content-Length and Host as RFC 9112 requires them
   (server/framing.c): else 400 or 501, and the connection closed. */
static enum MHD_Result
check_framing(struct req *r, struct MHD_Connection *c, const char *method,
    const char *version)
{
	const char *detail = NULL;
	int status = framing_problem(c, method, version, &detail);

	return status != 0 ? bad_framing(r, c, method, status, detail) :
	    MHD_YES;
}

/* First call: headers are in, no body yet.  Route once, then decide. */
static enum MHD_Result
on_headers(struct req *r, struct MHD_Connection *c, const char *method,
    const char *version)
{
	struct http_server *s = r->s;
	const union MHD_ConnectionInfo *ci;
	const struct sockaddr *peer;
	enum auth_verdict v;
	struct api_resp ar;
	const char *cl;
	char *qm;
	int retry;

	set_request_id(r, c);
	if (check_framing(r, c, method, version) != MHD_YES || r->answered)
		return MHD_YES;
	if (s->cfg.loopback_only) {
		const char *host = MHD_lookup_connection_value(c,
		    MHD_HEADER_KIND, MHD_HTTP_HEADER_HOST);

		if (host != NULL && !framing_loopback_host(host,
		    s->cfg.allowed_hosts, s->cfg.nallowed_hosts)) {
			memset(&ar, 0, sizeof(ar));
			api_problem_host(&ar);
			r->too_large = true;
			r->close = true;
			return respond(r, c, method, &ar);
		}
	}
	qm = strchr(r->uri, '?');
	r->query = "";
	if (qm != NULL) {
		*qm = '\0';
		r->query = qm + 1;
	}
	api_route(&r->rt, method, r->uri, &r->arena);
	if (r->rt.status == 400) {
		memset(&ar, 0, sizeof(ar));
		api_route_problem(&ar, &r->rt);
		cors(r, c, &ar);
		r->too_large = true;
		r->close = true;
		return respond(r, c, method, &ar);
	}
	ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	peer = ci != NULL ? ci->client_addr : NULL;
	v = strcmp(method, "OPTIONS") == 0 && r->rt.status == 405 ?
	    AUTH_PASS : auth_request(s->cfg.auth, r->rt.access,
	    MHD_lookup_connection_value(c, MHD_HEADER_KIND,
	    MHD_HTTP_HEADER_AUTHORIZATION), peer, framing_forwarded(c), r->team,
	    &r->admin);
	if (v != AUTH_PASS)
		return refuse(r, c, method, v);
	if (r->rt.status == 0 && s->cfg.quota != NULL &&
	    strcmp(method, "POST") == 0 &&
	    (retry = quota_admit(s->cfg.quota, r->team,
	    r->rt.access != ACCESS_CI)) > 0) {
		memset(&ar, 0, sizeof(ar));
		api_quota_problem(&ar, retry, &r->arena);
		cors(r, c, &ar);
		r->too_large = true;
		return respond(r, c, method, &ar);
	}
	cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
	    MHD_HTTP_HEADER_CONTENT_LENGTH);
	if (cl != NULL && strtoull(cl, NULL, 10) > s->cfg.max_body) {
		/* Refuse before reading; MHD closes afterwards. */
		r->too_large = true;
		return too_large(r, c, method);
	}
	return MHD_YES;
}

/* The writer is done with r's write: resume r if suspended (answer() sees
   write_done otherwise) after unlocking, so the request thread does not
   wake into a held s->mu; s->suspended counts r until then (http_stop). */
static void
wake(void *arg)
{
	struct req *r = arg;
	struct http_server *s = r->s;
	struct MHD_Connection *resume;

	pthread_mutex_lock(&s->mu);
	r->write_done = true;
	resume = r->suspended ? r->conn : NULL;
	r->suspended = false;
	pthread_mutex_unlock(&s->mu);
	if (resume != NULL)
		MHD_resume_connection(resume);	/* r may be gone after this */
	pthread_mutex_lock(&s->mu);
	if (resume != NULL)
		s->suspended--;
	if (s->stopping)
		pthread_cond_broadcast(&s->cv);
	pthread_mutex_unlock(&s->mu);
}

/*
 * After api_dispatch(), and again after the resume: while the API's
 * write is queued, suspend the connection (MHD calls on_request again
 * once wake() resumed it); once it is done, finish and queue the answer.
 * While stopping, wait here instead: MHD cannot stop with a connection
 * suspended.
 */
static enum MHD_Result
answer(struct req *r, struct MHD_Connection *c, const char *method)
{
	struct http_server *s = r->s;
	const union MHD_ConnectionInfo *ci;

	if (r->resp.pending != NULL) {
		pthread_mutex_lock(&s->mu);
		if (!r->write_done && !s->stopping) {
			r->suspended = true;
			s->suspended++;
			MHD_suspend_connection(c);
			pthread_mutex_unlock(&s->mu);
			return MHD_YES;
		}
		while (!r->write_done)
			pthread_cond_wait(&s->cv, &s->mu);
		pthread_mutex_unlock(&s->mu);
		api_finish(s->api, &r->ar, &r->resp);
	}
	if (r->rt.access == ACCESS_CI && r->resp.status != 401)
		quota_admit(s->cfg.quota, r->team, true);	/* signed */
	if (r->rt.access == ACCESS_CI && r->resp.status == 401) {
		ci = MHD_get_connection_info(c,
		    MHD_CONNECTION_INFO_CLIENT_ADDRESS);
		auth_ci_failure(s->cfg.auth, ci != NULL ? ci->client_addr :
		    NULL);
	}
	return respond(r, c, method, &r->resp);
}

static enum MHD_Result
on_request(void *cls, struct MHD_Connection *c, const char *url,
    const char *method, const char *version, const char *upload_data,
    size_t *upload_data_size, void **req_cls)
{
	struct http_server *s = cls;
	struct req *r = *req_cls;
	struct api_req *ar;
	enum gate_verdict v;

	(void)url;
	if (r == NULL)
		return MHD_NO;	/* uri_logger could not allocate */
	if (r->request_id[0] == '\0')
		return on_headers(r, c, method, version);
	if (r->resp.pending != NULL)
		return answer(r, c, method);	/* resumed */
	if (*upload_data_size > 0) {
		size_t n = *upload_data_size;

		*upload_data_size = 0;
		if (r->too_large || r->busy || r->answered)
			return MHD_YES;
		if (n > s->cfg.max_body - r->len) {
			/* Keep reading (and dropping) to the end, then 413. */
			r->too_large = true;
			body_free(r);
			return MHD_YES;
		}
		if (r->len + n > r->cap) {
			size_t cap = r->cap == 0 ? 16384 : r->cap;
			char *nb;

			while (cap < r->len + n)
				cap *= 2;
			if (cap > s->cfg.max_body)
				cap = s->cfg.max_body;
			if (!body_reserve(r, cap)) {
				/* Every connection's bodies together are at
				   the server's budget: drop this one, 503. */
				r->busy = true;
				body_free(r);
				return MHD_YES;
			}
			nb = realloc(r->body, cap);
			if (nb == NULL) {
				body_release(r, cap - r->cap);
				return MHD_NO;
			}
			r->body = nb;
			r->cap = cap;
		}
		memcpy(r->body + r->len, upload_data, n);
		r->len += n;
		return MHD_YES;
	}
	deadline_stop(c);	/* the request is in */
	if (r->answered)
		return MHD_YES;
	if (r->too_large)
		return too_large(r, c, method);
	if (r->busy) {
		memset(&r->resp, 0, sizeof(r->resp));
		api_unavailable(&r->resp, "the server holds as many request "
		    "bodies as it may (--body-memory); retry shortly", 2);
		cors(r, c, &r->resp);
		return respond(r, c, method, &r->resp);
	}
	/* Not the CI route: anyone may send it unsigned (body_owner). */
	if (r->rt.access == ACCESS_TEAM && r->rt.status == 0 && !r->entered) {
		v = gate_enter(s->gate, r->team, c, &r->entered);
		if (v == GATE_PARKED)
			return MHD_YES;	/* called again once resumed */
		if (v != GATE_RUN) {
			memset(&r->resp, 0, sizeof(r->resp));
			api_busy_problem(&r->resp, v == GATE_FULL ?
			    API_BUSY_WAITING : v == GATE_UNREAD ?
			    API_BUSY_UNREAD : API_BUSY_UNREAD_ALL);
			cors(r, c, &r->resp);
			return respond(r, c, method, &r->resp);
		}
	}
	ar = &r->ar;
	memset(ar, 0, sizeof(*ar));
	ar->method = method;
	ar->path = r->uri;
	ar->query = r->query;
	ar->content_type = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
	    MHD_HTTP_HEADER_CONTENT_TYPE);
	ar->idem_key = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
	    "Idempotency-Key");
	ar->origin = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
	    "Origin");
	ar->accept = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
	    MHD_HTTP_HEADER_ACCEPT);
	ar->signature = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
	    "X-Preflight-Signature");
	ar->timestamp = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
	    "X-Preflight-Timestamp");
	ar->delivery = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
	    "X-Preflight-Delivery");
	ar->if_none_match = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
	    MHD_HTTP_HEADER_IF_NONE_MATCH);
	ar->body = r->body;
	ar->body_len = r->len;
	ar->team = r->team;
	ar->admin = r->admin;
	ar->head = strcmp(method, "HEAD") == 0;
	ar->arena = &r->arena;
	ar->wake = wake;
	ar->wake_arg = r;
	r->conn = c;
	api_dispatch(s->api, &r->rt, ar, &r->resp);
	return answer(r, c, method);
}

/* libmicrohttpd's messages, printf-style: the attribute lets both
   compilers check the vsnprintf below (clang's -Wformat-nonliteral). */
static void mhd_log(void *cls, const char *fmt, va_list ap)
    __attribute__((format(printf, 2, 0)));

static void
mhd_log(void *cls, const char *fmt, va_list ap)
{
	char msg[512];
	size_t n;

	(void)cls;
	vsnprintf(msg, sizeof(msg), fmt, ap);
	n = strlen(msg);
	while (n > 0 && (msg[n - 1] == '\n' || msg[n - 1] == '\r'))
		msg[--n] = '\0';
	log_msg("warn", "libmicrohttpd: %s", msg);
}

/* Keep URIs raw: api/ decodes each path segment and query value. */
static size_t
no_unescape(void *cls, struct MHD_Connection *c, char *s)
{
	(void)cls;
	(void)c;
	return strlen(s);
}

int
http_start(struct http_server **out, const struct http_config *cfg,
    struct api_ctx *api, struct metrics *m, struct err *e)
{
	struct http_server *s;
	struct sockaddr_storage ss;
	socklen_t sslen;
	unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL |
	    MHD_USE_ITC | MHD_USE_ERROR_LOG | MHD_ALLOW_SUSPEND_RESUME;
	struct MHD_OptionItem tls[4];
	const union MHD_DaemonInfo *info;

	*out = NULL;
	memset(&ss, 0, sizeof(ss));
	if (inet_pton(AF_INET, cfg->host,
	    &((struct sockaddr_in *)&ss)->sin_addr) == 1) {
		struct sockaddr_in *sin = (struct sockaddr_in *)&ss;

		sin->sin_family = AF_INET;
		sin->sin_port = htons(cfg->port);
		sslen = sizeof(*sin);
	} else if (inet_pton(AF_INET6, cfg->host,
	    &((struct sockaddr_in6 *)&ss)->sin6_addr) == 1) {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&ss;

		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons(cfg->port);
		sslen = sizeof(*sin6);
		flags |= MHD_USE_IPv6;
	} else {
		return err_set(e, ERR_INTERNAL, NULL,
		    "listen address '%s' is not a numeric IPv4 or IPv6 "
		    "address", cfg->host);
	}
	(void)sslen;
	s = calloc(1, sizeof(*s));
	if (s == NULL)
		return err_set(e, ERR_NOMEM, NULL, "out of memory");
	s->cfg = *cfg;
	s->api = api;
	s->m = m;
	pthread_mutex_init(&s->mu, NULL);
	pthread_cond_init(&s->cv, NULL);
	s->dl = deadline_new(cfg->conn_timeout, cfg->conn_limit);
	s->gate = gate_new(cfg->at_once, HTTP_PARK_MAX, cfg->team_memory);
	memset(tls, 0, sizeof(tls));
	tls[0].option = tls[1].option = tls[2].option = tls[3].option =
	    MHD_OPTION_END;
	if (cfg->tls_cert != NULL) {
		flags |= MHD_USE_TLS;
		tls[0].option = MHD_OPTION_HTTPS_MEM_CERT;
		tls[0].ptr_value = (void *)(uintptr_t)cfg->tls_cert;
		tls[1].option = MHD_OPTION_HTTPS_MEM_KEY;
		tls[1].ptr_value = (void *)(uintptr_t)cfg->tls_key;
		tls[2].option = MHD_OPTION_HTTPS_PRIORITIES;
		tls[2].ptr_value = (void *)(uintptr_t)HTTP_TLS_PRIORITIES;
	}
	s->d = MHD_start_daemon(flags, cfg->port, NULL, NULL, on_request, s,
	    MHD_OPTION_ARRAY, tls,
	    MHD_OPTION_EXTERNAL_LOGGER, mhd_log, NULL,
	    MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss,
	    MHD_OPTION_URI_LOG_CALLBACK, uri_logger, s,
	    MHD_OPTION_NOTIFY_COMPLETED, on_completed, s,
	    MHD_OPTION_NOTIFY_CONNECTION, deadline_notify, s->dl,
	    MHD_OPTION_UNESCAPE_CALLBACK, no_unescape, NULL,
	    MHD_OPTION_CONNECTION_LIMIT, cfg->conn_limit,
	    MHD_OPTION_PER_IP_CONNECTION_LIMIT, cfg->per_address,
	    MHD_OPTION_STRICT_FOR_CLIENT, 1,
	    MHD_OPTION_CONNECTION_TIMEOUT, cfg->conn_timeout,
	    MHD_OPTION_CONNECTION_MEMORY_LIMIT, cfg->conn_memory,
	    MHD_OPTION_LISTEN_BACKLOG_SIZE, 1024u,
	    MHD_OPTION_THREAD_POOL_SIZE, cfg->threads,
	    MHD_OPTION_END);
	if (s->d == NULL) {
		deadline_free(s->dl);
		gate_free(s->gate);
		pthread_cond_destroy(&s->cv);
		pthread_mutex_destroy(&s->mu);
		free(s);
		return err_set(e, ERR_INTERNAL, NULL,
		    "cannot listen on %s:%u (address in use, or not local)",
		    cfg->host, cfg->port);
	}
	info = MHD_get_daemon_info(s->d, MHD_DAEMON_INFO_BIND_PORT);
	s->port = info != NULL ? info->port : cfg->port;
	*out = s;
	return 0;
}

uint16_t
http_port(const struct http_server *s)
{
	return s->port;
}

void
http_quiesce(struct http_server *s)
{
	MHD_socket fd;

	if (s->quiesced)
		return;
	fd = MHD_quiesce_daemon(s->d);
	if (fd != MHD_INVALID_SOCKET)
		close(fd);
	s->quiesced = true;
}

unsigned
http_in_flight(struct http_server *s)
{
	unsigned n;

	pthread_mutex_lock(&s->mu);
	n = s->in_flight;
	pthread_mutex_unlock(&s->mu);
	return n;
}

void
http_stop(struct http_server *s)
{
	if (s == NULL)
		return;
	/* MHD cannot stop with a connection suspended: from now on a
	   request waits for its write in answer(), and the suspended ones
	   are resumed by the writer (the store closes after this). */
	gate_open(s->gate);	/* parked requests are served now */
	pthread_mutex_lock(&s->mu);
	s->stopping = true;
	while (s->suspended > 0)
		pthread_cond_wait(&s->cv, &s->mu);
	pthread_mutex_unlock(&s->mu);
	MHD_stop_daemon(s->d);
	deadline_free(s->dl);
	gate_free(s->gate);
	pthread_cond_destroy(&s->cv);
	pthread_mutex_destroy(&s->mu);
	free(s);
}
