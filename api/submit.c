/*
 * api/submit: checking a submission, storing it and answering
 * (openapi.yaml: createCheck, createCiCheck, estimate), with the
 * Idempotency-Key replay and the write queued to the store's writer.
 */
#include "api/api_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/digest.h"
#include "api/encode.h"
#include "api/formats.h"
#include "api/jsonw.h"
#include "api/replay.h"
#include "core/arena.h"
#include "core/check.h"
#include "core/version.h"

/* Run the core check; on failure resp holds the problem. */
static int
run_check(struct report **r, struct api_ctx *ctx, const struct api_req *req,
    const struct submission *s, struct api_resp *resp)
{
	struct err e = { 0 };
	struct context c = s->ctx;

	c.policy = ctx->policy != NULL ? ctx->policy(ctx->env) : NULL;
	c.model_lookup = ctx->model_lookup;
	c.model_lookup_arg = ctx->env;
	if (check_run(r, s->config, s->config_len, &c, &ctx->lim,
	    req->arena, &e) != 0 ||
	    digest_sha256_hex((*r)->config_sha256, s->config,
	    s->config_len) != 0) {
		if (e.code == ERR_OK)
			err_set(&e, ERR_INTERNAL, NULL, "hash failed");
		api_problem_err(resp, &e);
		return -1;
	}
	resp->report = *r;
	resp->verdict = verdict_name((*r)->verdict);
	return 0;
}

/* The idempotency fingerprint: what was asked, not how it was sent. */
static void
body_fingerprint(char out[65], const struct api_req *req)
{
	size_t n = req->body_len + strlen(req->query != NULL ? req->query :
	    "") + 2 + (req->content_type != NULL ? strlen(req->content_type) :
	    0);
	char *buf = malloc(n + 1);

	if (buf == NULL) {
		out[0] = '\0';
		return;
	}
	snprintf(buf, n + 1, "%s\n%s\n", req->content_type != NULL ?
	    req->content_type : "", req->query != NULL ? req->query : "");
	if (req->body_len > 0)
		memcpy(buf + strlen(buf), req->body, req->body_len);
	digest_sha256_hex(out, buf, n);
	free(buf);
}

/* 1 to max visible ASCII characters: an Idempotency-Key (255), an
   X-Preflight-Delivery (128: a UUID, a CI job id). */
static bool
visible_ascii(const char *s, size_t max)
{
	size_t n = s != NULL ? strlen(s) : 0, i;

	if (n == 0 || n > max)
		return false;
	for (i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x21 || (unsigned char)s[i] > 0x7E)
			return false;
	return true;
}

enum out_format {
	OUT_JSON,		/* the stored check */
	OUT_SARIF,
	OUT_GITHUB,
	OUT_GITLAB
};

/*
 * The check stored earlier under req's Idempotency-Key for team: 200 with
 * it, 409 when the key came with a different request, 503 when the store
 * cannot say.  ERR_NOTFOUND (resp untouched) when there is none.
 */
static int
answer_prior(struct api_ctx *ctx, const struct api_req *req,
    const char *team, const char *fp, struct api_resp *resp)
{
	struct store_check prior;
	struct err e = { 0 };
	char *text;
	int rv;

	rv = ctx->store.ops->get_by_idem(ctx->store.self, &prior, team,
	    req->idem_key, req->arena, &e);
	if (rv == ERR_NOTFOUND)
		return rv;
	if (rv != 0) {
		api_problem_err(resp, &e);
		return rv;
	}
	if (strcmp(prior.body_sha256, fp) != 0) {
		api_problem(resp, 409, "idempotency-conflict", "Conflict", NULL,
		    "Idempotency-Key was already used with a different "
		    "request");
		return 0;
	}
	text = strdup(prior.json);
	if (text == NULL) {
		api_problem(resp, 500, "internal", "Internal Server Error",
		    NULL, "out of memory");
		return ERR_NOMEM;
	}
	api_json_text(resp, 200, text, strlen(text));
	api_header(resp, "Location", arena_printf(req->arena,
	    "/v1/checks/%s", prior.id));
	return 0;
}

/* Append `,"key":<v as compact JSON>` (nothing for NULL). */
static void
json_member(struct jsonw *w, const char *key, const json_t *v)
{
	char *t;

	if (v == NULL)
		return;
	t = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
	if (t == NULL) {
		w->oom = true;
		return;
	}
	jw_lit(w, ",");
	jw_key(w, key);
	jw_lit(w, t);
	free(t);
}

/* The stored record: the report, then id, created_at, team, name,
   labels and source.  malloc'd, or NULL when out of memory. */
static char *
stored_json(const struct report *r, const struct store_check *c,
    const char *created, const char *team, const struct submission *s)
{
	struct jsonw w;

	jw_init(&w);
	encode_report_members(&w, r, NULL);
	jw_lit(&w, ",\"id\":");
	jw_str(&w, c->id);
	jw_lit(&w, ",\"created_at\":");
	jw_str(&w, created);
	jw_lit(&w, ",\"team\":");
	jw_str(&w, team);
	jw_lit(&w, ",\"name\":");
	jw_str(&w, s->name);
	json_member(&w, "labels", s->labels);
	json_member(&w, "source", s->source);
	jw_lit(&w, "}");
	return jw_take(&w, NULL);
}

/*
 * A stored check on its way to the store: what the write reads, and what
 * the answer needs once it is committed.  In the request arena; it owns
 * the malloc'd buffers and the submission until finish_check().
 */
struct api_pending {
	struct store_write w;
	struct store_check c;
	struct store_finding *rows;	/* malloc'd */
	char *text;		/* the stored JSON, malloc'd */
	char *context_json;	/* malloc'd */
	struct submission s;	/* owned: c.config may point into it */
	struct report *r;	/* request arena */
	const char *team;	/* the request's */
	enum out_format fmt;
	char fp[65];		/* the idempotency fingerprint */
	void (*wake)(void *arg);	/* the server's, from api_req */
	void *wake_arg;
};

static void
pending_release(struct api_pending *p)
{
	free(p->text);
	free(p->context_json);
	free(p->rows);
	p->text = p->context_json = NULL;
	p->rows = NULL;
	submission_fini(&p->s);
}

/* The store's done(): the write is committed or failed; wake the
   server (writer thread, so nothing else). */
static void
pending_wake(struct store_write *w)
{
	struct api_pending *p = w->arg;

	p->wake(p->wake_arg);
}

/*
 * The answer to a check whose write is done: 201 with the stored check
 * (or the same report in a CI format); on failure the winner of an
 * Idempotency-Key race (200), else 503, which clients retry, never a 4xx
 * they would not.
 */
static void
finish_check(struct api_ctx *ctx, const struct api_req *req,
    struct api_pending *p, struct api_resp *resp)
{
	struct err e = p->w.e;
	json_t *j;
	char *text = p->text;

	p->text = NULL;
	if (p->w.rv != 0) {
		free(text);
		if (req->idem_key != NULL && answer_prior(ctx, req, p->team,
		    p->fp, resp) != ERR_NOTFOUND)
			goto out;
		if (e.code == ERR_OK)
			e.code = (enum err_code)p->w.rv;
		if (e.code != ERR_NOMEM)
			e.code = ERR_STORE;
		api_problem_err(resp, &e);
		goto out;
	}
	resp->stored_bytes = strlen(text) + p->c.config_len;
	api_header(resp, "Location", arena_printf(req->arena,
	    "/v1/checks/%s", p->c.id));
	if (p->fmt == OUT_JSON) {
		api_json_text(resp, 201, text, strlen(text));
		goto out;
	}
	free(text);
	{
		json_t *src = p->s.source;
		const char *file = json_string_value(json_object_get(src,
		    "path"));
		struct format_input in = { p->r, file != NULL ? file :
		    p->s.name };

		if (p->fmt == OUT_SARIF)
			j = formats_sarif(&in, 1, PREFLIGHT_VERSION);
		else if (p->fmt == OUT_GITHUB)
			j = formats_github(&in, 1);
		else
			j = formats_gitlab(&in, 1);
		api_json(resp, 201, j);
		if (p->fmt == OUT_SARIF && resp->status == 201)
			resp->content_type = "application/sarif+json";
	}
out:
	pending_release(p);
}

void
api_finish(struct api_ctx *ctx, const struct api_req *req,
    struct api_resp *resp)
{
	struct api_pending *p = resp->pending;

	resp->pending = NULL;
	if (p != NULL)
		finish_check(ctx, req, p, resp);
}

void
api_pending_free(struct api_resp *resp)
{
	if (resp->pending != NULL)
		pending_release(resp->pending);
	resp->pending = NULL;
}

/*
 * The write of report r for team: the stored record, its findings' rows,
 * and s, taken over (c->config may point into its JSON, which must live
 * until the commit).  NULL with the problem in resp when out of memory
 * (s is then still the caller's).
 */
static struct api_pending *
pending_new(struct api_ctx *ctx, const struct api_req *req,
    struct report *r, struct submission *s, const char *team,
    const char *fp, struct api_resp *resp)
{
	struct api_pending *p = ARENA_NEW(req->arena, struct api_pending, 1);
	struct store_check *c;
	char created[40];
	size_t i;

	if (p == NULL) {
		api_problem(resp, 413, "request-too-large",
		    "Request exceeds its memory budget", NULL,
		    "the request needs more memory than one request may use");
		return NULL;
	}
	c = &p->c;
	c->created_at_ms = ctx->now_ms(ctx->env);
	api_new_id(c->id, ctx, c->created_at_ms);
	api_format_time(created, sizeof(created), c->created_at_ms);
	p->text = stored_json(r, c, created, team, s);
	p->context_json = encode_context_json_text(&r->ctx);
	p->rows = calloc(r->nfindings + 1, sizeof(*p->rows));
	if (p->text == NULL || p->context_json == NULL || p->rows == NULL) {
		free(p->text);
		free(p->context_json);
		free(p->rows);
		api_problem(resp, 500, "internal", "Internal Server Error",
		    NULL, "out of memory");
		return NULL;
	}
	for (i = 0; i < r->nfindings; i++) {
		p->rows[i].rule = r->findings[i].rule;
		p->rows[i].severity = severity_name(r->findings[i].severity);
		p->rows[i].line = r->findings[i].line;
	}
	p->s = *s;
	s->json = NULL;
	s->labels = NULL;
	p->r = r;
	p->team = team;
	if (req->idem_key != NULL)
		memcpy(p->fp, fp, sizeof(p->fp));
	c->team = team;
	c->name = p->s.name;
	c->config_sha256 = r->config_sha256;
	c->verdict = verdict_name(r->verdict);
	c->errors = (long)r->count[SEV_ERROR];
	c->warnings = (long)r->count[SEV_WARNING];
	c->infos = (long)r->count[SEV_INFO];
	c->json = p->text;
	c->context_json = p->context_json;
	c->config = p->s.config;
	c->config_len = p->s.config_len;
	c->idem_key = req->idem_key;
	c->body_sha256 = req->idem_key != NULL ? p->fp : r->config_sha256;
	c->findings = p->rows;
	c->nfindings = r->nfindings;
	p->w.c = c;
	p->w.arg = p;
	return p;
}

/*
 * Check s, store it for team and answer 201 (or 200 for a dry run or an
 * idempotent retry).  With req->wake the write is queued and resp is
 * left pending (api_finish answers); without, this waits for the commit.
 * Takes over s's JSON and labels.
 */
static void
store_and_answer(struct api_ctx *ctx, const struct api_req *req,
    struct submission *s, const char *team, enum out_format fmt,
    struct api_resp *resp)
{
	const struct store_ops *ops = ctx->store.ops;
	struct api_pending *p;
	struct report *r;
	char fp[65];
	char *text;
	size_t len;
	bool queue = !s->dry_run && req->wake != NULL &&
	    ops->put_check_async != NULL;

	if (req->idem_key != NULL && !s->dry_run) {
		if (!visible_ascii(req->idem_key, 255)) {
			api_problem(resp, 400, "bad-idempotency-key",
			    "Bad Request", NULL, "Idempotency-Key must be 1 "
			    "to 255 visible ASCII characters");
			return;
		}
		body_fingerprint(fp, req);
		if (answer_prior(ctx, req, team, fp, resp) != ERR_NOTFOUND)
			return;	/* answered: the stored check, 409 or 503 */
	}
	if (run_check(&r, ctx, req, s, resp) != 0)
		return;
	if (s->dry_run) {
		text = encode_report_json_text(r, NULL, &len);
		if (text == NULL) {
			api_problem(resp, 500, "internal",
			    "Internal Server Error", NULL, "out of memory");
			return;
		}
		api_json_text(resp, 200, text, len);
		return;
	}
	p = pending_new(ctx, req, r, s, team, fp, resp);
	if (p == NULL)
		return;
	p->fmt = fmt;
	if (queue) {
		/* Suspended until the commit: no thread waits for it. */
		p->w.done = pending_wake;
		p->wake = req->wake;
		p->wake_arg = req->wake_arg;
		if (ops->put_check_async(ctx->store.self, &p->w) == 0) {
			resp->pending = p;
			return;
		}
		p->w.rv = p->w.e.code != ERR_OK ? p->w.e.code : ERR_STORE;
	} else {
		p->w.rv = ops->put_check(ctx->store.self, &p->c, &p->w.e);
	}
	finish_check(ctx, req, p, resp);
}

/* createCheck: POST /v1/checks */
void
h_post_check(struct api_ctx *ctx, const struct api_req *req,
    const struct query *q, const struct route_match *m,
    struct api_resp *resp)
{
	struct submission s;

	(void)m;
	if (submission_decode(&s, req, q, SUB_CHECK, resp) == 0)
		store_and_answer(ctx, req, &s, req->team, OUT_JSON, resp);
	submission_fini(&s);
}

/* The output format of a CI call: ?format= first, then Accept. */
static int
ci_format(enum out_format *out, const struct api_req *req,
    const struct query *q, struct api_resp *resp)
{
	const char *f = query_get(q, "format");

	if (f == NULL) {
		*out = req->accept != NULL &&
		    strstr(req->accept, "application/sarif+json") != NULL ?
		    OUT_SARIF : OUT_JSON;
		return 0;
	}
	if (strcmp(f, "json") == 0)
		*out = OUT_JSON;
	else if (strcmp(f, "sarif") == 0)
		*out = OUT_SARIF;
	else if (strcmp(f, "github") == 0)
		*out = OUT_GITHUB;
	else if (strcmp(f, "gitlab") == 0)
		*out = OUT_GITLAB;
	else {
		api_problem(resp, 400, "bad-query", "Bad query string", NULL,
		    "format must be json, sarif, github or gitlab");
		return -1;
	}
	return 0;
}

/*
 * The CI signature: HMAC-SHA256 with the CI secret over
 *   "v1\n" <X-Preflight-Timestamp> "\n" <X-Preflight-Delivery> "\n"
 *   <the raw query string> "\n" <the raw body>
 * so neither the time, the delivery, the answer's format nor the config
 * can be changed, and docs/ci.md shows it in shell.  hex gets 65 bytes.
 */
static int
ci_signature(char hex[65], const char *secret, const struct api_req *req)
{
	const char *q = req->query != NULL ? req->query : "";
	size_t head = 3 + strlen(req->timestamp) + 1 + strlen(req->delivery) +
	    1 + strlen(q) + 1;
	char *buf = malloc(head + req->body_len + 1);
	int rv;

	if (buf == NULL)
		return -1;
	snprintf(buf, head + 1, "v1\n%s\n%s\n%s\n", req->timestamp,
	    req->delivery, q);
	if (req->body_len > 0)
		memcpy(buf + head, req->body, req->body_len);
	rv = digest_hmac_sha256_hex(hex, secret, buf, head + req->body_len);
	free(buf);
	return rv;
}

static void
ci_refuse(struct api_resp *resp, const char *slug, const char *detail)
{
	api_problem(resp, 401, slug, "Unauthorized", NULL, "%s", detail);
	api_header(resp, "WWW-Authenticate", "HMAC realm=\"preflight-ci\"");
}

/*
 * createCiCheck: POST /v1/ci/checks, authenticated by
 * X-Preflight-Signature: sha256=<hex> (ci_signature above), with
 * X-Preflight-Timestamp (Unix seconds, within API_CI_SKEW_MS of the
 * server's clock) and X-Preflight-Delivery (a new id per request,
 * remembered for the window, so a captured request cannot be replayed).
 * The comparison is digest_equal(): constant time by construction.
 */
void
h_ci_check(struct api_ctx *ctx, const struct api_req *req,
    const struct query *q, const struct route_match *m,
    struct api_resp *resp)
{
	struct submission s;
	enum out_format fmt;
	char want[65];
	const char *sig = req->signature;
	long ts;
	int64_t now, ts_ms;
	enum replay_result seen;

	(void)m;
	memset(&s, 0, sizeof(s));
	if (ctx->ci_secret == NULL || ctx->replay == NULL) {
		api_problem(resp, 503, "ci-not-configured",
		    "Service Unavailable", NULL, "the CI webhook is not "
		    "configured on this server (PREFLIGHT_CI_SECRET)");
		return;
	}
	if (req->timestamp == NULL || api_parse_long(&ts, req->timestamp, 1,
	    99999999999L) != 0 || !visible_ascii(req->delivery, 128)) {
		ci_refuse(resp, "bad-signature", "send X-Preflight-Timestamp "
		    "(Unix seconds) and X-Preflight-Delivery (a new id of 1 "
		    "to 128 visible characters per request); see docs/ci.md");
		return;
	}
	if (sig == NULL || strncmp(sig, "sha256=", 7) != 0 ||
	    ci_signature(want, ctx->ci_secret, req) != 0 ||
	    !digest_equal(sig + 7, want)) {
		ci_refuse(resp, "bad-signature", "X-Preflight-Signature must "
		    "be sha256=<hex HMAC-SHA256 with the CI secret of \"v1\\n"
		    "<timestamp>\\n<delivery>\\n<query>\\n<body>\">; see "
		    "docs/ci.md");
		return;
	}
	now = ctx->now_ms(ctx->env);
	ts_ms = (int64_t)ts * 1000;
	if (ts_ms < now - API_CI_SKEW_MS || ts_ms > now + API_CI_SKEW_MS) {
		ci_refuse(resp, "stale-signature", "X-Preflight-Timestamp is "
		    "more than 5 minutes from the server's clock; sign each "
		    "request when it is sent (and check the CI host's clock)");
		return;
	}
	seen = replay_check(ctx->replay, req->delivery, now,
	    ts_ms + API_CI_SKEW_MS + 1000);
	if (seen == REPLAY_SEEN) {
		api_problem(resp, 409, "replayed-delivery", "Conflict", NULL,
		    "X-Preflight-Delivery '%.128s' was already accepted; "
		    "every request needs a new delivery id", req->delivery);
		return;
	}
	if (seen == REPLAY_FULL) {
		api_unavailable(resp, "too many CI deliveries in the last "
		    "minutes; retry later", 10);
		return;
	}
	if (ci_format(&fmt, req, q, resp) != 0)
		return;
	if (submission_decode(&s, req, q, SUB_CI, resp) == 0) {
		if (s.name[0] == '\0') {
			/* The history of repo:path is the config's. */
			const char *n = arena_printf(req->arena, "%s:%s",
			    json_string_value(json_object_get(s.source,
			    "repo")), json_string_value(json_object_get(
			    s.source, "path")));

			s.name = n != NULL ? n : "";
		}
		if (api_check_name(s.name, resp) == 0)
			store_and_answer(ctx, req, &s, req->team, fmt, resp);
	}
	submission_fini(&s);
}

/* estimate: POST /v1/estimate (nothing stored) */
void
h_estimate(struct api_ctx *ctx, const struct api_req *req,
    const struct query *q, const struct route_match *m,
    struct api_resp *resp)
{
	struct submission s;
	struct report *r;
	json_t *full, *j;

	(void)m;
	if (submission_decode(&s, req, q, SUB_ESTIMATE, resp) != 0 ||
	    run_check(&r, ctx, req, &s, resp) != 0)
		goto out;
	full = encode_report_json(r, NULL);
	/* The estimate part of the report: what the estimator computed. */
	j = full == NULL ? NULL : json_pack("{s:O, s:O, s:O, s:O, s:s}",
	    "context", json_object_get(full, "context"),
	    "plan", json_object_get(full, "plan"),
	    "estimate", json_object_get(full, "estimate"),
	    "suggestions", json_object_get(full, "suggestions"),
	    "config_sha256", r->config_sha256);
	json_decref(full);
	api_json(resp, 200, j);
out:
	submission_fini(&s);
}
