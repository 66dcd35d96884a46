/*
 * api/checks: submitting, reading, listing, diffing checks and rule
 * statistics (openapi.yaml: createCheck, getCheck, listChecks, diffChecks,
 * getHistory, getRuleStats, estimate).
 */
#include "api/api_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "api/digest.h"
#include "api/encode.h"
#include "api/formats.h"
#include "api/replay.h"
#include "core/arena.h"
#include "core/check.h"
#include "core/hfconfig.h"
#include "core/models.h"
#include "core/version.h"

#define NAME_MAX_BYTES 1024
#define LABELS_MAX 32
#define LIST_DEFAULT 50
#define LIST_MAX 200
/* A page of a list or a history holds at most this many bytes of JSON
   (and at least one item): a page that would be larger ends early with a
   cursor, so a client that never reads its answer pins little. */
#define PAGE_BYTES ((size_t)256 << 10)

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

static void
submission_fini(struct submission *s)
{
	json_decref(s->labels);
	json_decref(s->json);
}

/* The media type of a Content-Type value, lowercased, into out. */
static void
media_type(char *out, size_t cap, const char *ct)
{
	size_t i = 0;

	while (*ct == ' ' || *ct == '\t')
		ct++;
	for (; *ct != '\0' && *ct != ';' && *ct != ' ' && i + 1 < cap; ct++)
		out[i++] = (char)(*ct >= 'A' && *ct <= 'Z' ? *ct + 32 : *ct);
	out[i] = '\0';
}

static bool
is_yaml_type(const char *mt)
{
	return strcmp(mt, "application/yaml") == 0 ||
	    strcmp(mt, "application/x-yaml") == 0 ||
	    strcmp(mt, "text/yaml") == 0 || strcmp(mt, "text/x-yaml") == 0;
}

static int
check_name(const char *name, struct api_resp *resp)
{
	const unsigned char *p;

	if (strlen(name) > NAME_MAX_BYTES) {
		api_problem(resp, 422, "invalid-field", "Unprocessable request",
		    NULL, "name is longer than %d bytes", NAME_MAX_BYTES);
		return -1;
	}
	for (p = (const unsigned char *)name; *p != '\0'; p++)
		if (*p < 0x20 || *p == 0x7F) {
			api_problem(resp, 422, "invalid-field",
			    "Unprocessable request", NULL,
			    "name contains a control character");
			return -1;
		}
	return 0;
}

static int
parse_bool(bool *out, const char *v)
{
	if (v == NULL)
		return 0;
	if (strcmp(v, "true") == 0 || strcmp(v, "1") == 0)
		*out = true;
	else if (strcmp(v, "false") == 0 || strcmp(v, "0") == 0)
		*out = false;
	else
		return -1;
	return 0;
}

static int bad_field(struct api_resp *resp, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static int
bad_field(struct api_resp *resp, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	api_problem(resp, 422, "invalid-field", "Unprocessable request", NULL,
	    "%s", msg);
	return -1;
}

/*
 * context.model: a catalog id, or the model's config.json as an object,
 * counted by core/hfconfig into a (the request arena).
 */
static int
decode_model(struct context *c, json_t *v, struct arena *a,
    struct api_resp *resp)
{
	struct limits lim;
	struct err e = { 0 };
	char *text;
	int rv;

	if (json_is_string(v)) {
		c->model = models_find(json_string_value(v));
		if (c->model == NULL)
			return bad_field(resp, "context.model '%.200s' is not "
			    "in the model catalog (GET /v1/catalog/models); "
			    "send the model's config.json as an object",
			    json_string_value(v));
		return 0;
	}
	if (!json_is_object(v))
		return bad_field(resp, "context.model must be a catalog model "
		    "id or the model's config.json object");
	text = json_dumps(v, JSON_COMPACT);
	if (text == NULL) {
		api_problem(resp, 500, "internal", "Internal Server Error",
		    NULL, "out of memory");
		return -1;
	}
	limits_default(&lim);
	rv = hfconfig_parse(&c->model, text, strlen(text), "context.model",
	    "context", &lim, a, &e);
	free(text);
	if (rv == 0)
		return 0;
	if (rv == ERR_NOMEM) {
		api_problem_err(resp, &e);
		return -1;
	}
	return bad_field(resp, "context.model: %s", e.msg);
}

/* context object -> struct context (strings borrowed from j); the
   fields, their ranges and their messages are core/context's. */
static int
decode_context(struct context *c, json_t *j, struct arena *a,
    struct api_resp *resp)
{
	const struct context_field *f;
	struct err e = { 0 };
	char subject[80];
	const char *key;
	int rv;
	json_t *v;

	if (j == NULL || json_is_null(j))
		return 0;
	if (!json_is_object(j))
		return bad_field(resp, "%s must be an object", "context");
	json_object_foreach(j, key, v) {
		if (strcmp(key, "model") == 0) {
			if (decode_model(c, v, a, resp) != 0)
				return -1;
			continue;
		}
		f = context_field_find(key);
		if (f == NULL) {
			api_problem(resp, 422, "invalid-field",
			    "Unprocessable request", NULL,
			    "unknown context field '%.64s'; known: gpus, "
			    "nodes, gpu, interconnect, torch, gpu_memory_gib, "
			    "host_memory_gib, dataset_tokens, model", key);
			return -1;
		}
		snprintf(subject, sizeof(subject), "context.%s", key);
		switch (f->kind) {
		case CONTEXT_COUNT:
		case CONTEXT_TOKENS:
			if (!json_is_integer(v))
				return bad_field(resp, "%s must be %s", subject,
				    f->kind == CONTEXT_COUNT ? "an integer" :
				    "a positive integer");
			rv = context_set_long(c, f, json_integer_value(v),
			    subject, &e);
			break;
		case CONTEXT_GIB:
			if (!json_is_number(v))
				return bad_field(resp, "%s must be a number "
				    "of GiB from 0.1 to 1048576", subject);
			rv = context_set_double(c, f, json_number_value(v),
			    subject, &e);
			break;
		case CONTEXT_TORCH:
		case CONTEXT_TEXT:
		default:
			if (!json_is_string(v))
				return bad_field(resp, "%s must be %s", subject,
				    f->kind == CONTEXT_TORCH ? "a version "
				    "like 2.11" : "a string");
			rv = context_set(c, f, json_string_value(v), subject,
			    &e);
			break;
		}
		if (rv != 0)
			return bad_field(resp, "%s", e.msg);
	}
	return 0;
}

static int
decode_labels(json_t **out, json_t *j, struct api_resp *resp)
{
	const char *key;
	json_t *v;

	*out = json_object();
	if (j == NULL || json_is_null(j))
		return 0;
	if (!json_is_object(j) || json_object_size(j) > LABELS_MAX) {
		api_problem(resp, 422, "invalid-field", "Unprocessable request",
		    NULL, "labels must be an object of at most %d strings",
		    LABELS_MAX);
		return -1;
	}
	json_object_foreach(j, key, v) {
		if (!json_is_string(v) || strlen(key) > 64 ||
		    json_string_length(v) > 256) {
			api_problem(resp, 422, "invalid-field",
			    "Unprocessable request", NULL,
			    "label '%.64s' must be a string of at most 256 "
			    "bytes with a key of at most 64", key);
			return -1;
		}
	}
	json_object_update(*out, j);
	return 0;
}

/* CI source: {repo, commit, ref, path: strings; pull_request: int}. */
static int
decode_source(json_t *j, struct api_resp *resp)
{
	const char *key;
	json_t *v;

	if (!json_is_object(j))
		return bad_field(resp, "%s is required for CI checks and must "
		    "be an object {repo, commit, ref, path, pull_request}",
		    "source");
	json_object_foreach(j, key, v) {
		if (strcmp(key, "pull_request") == 0) {
			if (!json_is_integer(v) && !json_is_null(v))
				return bad_field(resp, "source.%s must be an "
				    "integer or null", key);
		} else if (strcmp(key, "repo") == 0 ||
		    strcmp(key, "commit") == 0 || strcmp(key, "ref") == 0 ||
		    strcmp(key, "path") == 0) {
			if (!json_is_string(v) || json_string_length(v) > 512)
				return bad_field(resp, "source.%s must be a "
				    "string of at most 512 bytes", key);
		} else {
			return bad_field(resp, "unknown source field '%.64s'; "
			    "known: repo, commit, ref, path, pull_request",
			    key);
		}
	}
	if (json_object_get(j, "repo") == NULL ||
	    json_object_get(j, "path") == NULL)
		return bad_field(resp, "%s needs at least repo and path",
		    "source");
	return 0;
}

static int
decode_json_body(struct submission *s, const struct api_req *req,
    bool ci, struct api_resp *resp)
{
	json_error_t jerr;
	const char *key;
	json_t *v, *cfg;

	s->json = json_loadb(req->body != NULL ? req->body : "",
	    req->body_len, JSON_REJECT_DUPLICATES, &jerr);
	if (s->json == NULL) {
		struct err_loc loc = { 0 };

		loc.line = jerr.line > 0 ? (unsigned)jerr.line : 1;
		loc.col = jerr.column > 0 ? (unsigned)jerr.column : 1;
		api_problem(resp, 400, "invalid-json", "Invalid JSON", &loc,
		    "%s", jerr.text);
		return -1;
	}
	if (!json_is_object(s->json)) {
		api_problem(resp, 400, "invalid-json", "Invalid JSON", NULL,
		    "the body must be a JSON object");
		return -1;
	}
	json_object_foreach(s->json, key, v) {
		if (strcmp(key, "config") != 0 && strcmp(key, "context") != 0 &&
		    strcmp(key, "name") != 0 && strcmp(key, "labels") != 0 &&
		    (!ci || strcmp(key, "source") != 0)) {
			api_problem(resp, 422, "invalid-field",
			    "Unprocessable request", NULL,
			    "unknown field '%.64s'; known: config, context, "
			    "name, labels%s", key, ci ? ", source" : "");
			return -1;
		}
	}
	if (ci) {
		s->source = json_object_get(s->json, "source");
		if (decode_source(s->source, resp) != 0)
			return -1;
	}
	cfg = json_object_get(s->json, "config");
	if (!json_is_string(cfg))
		return bad_field(resp, "%s is required and must be a string "
		    "holding the YAML", "config");
	s->config = json_string_value(cfg);
	s->config_len = json_string_length(cfg);
	v = json_object_get(s->json, "name");
	if (v != NULL && !json_is_null(v)) {
		if (!json_is_string(v))
			return bad_field(resp, "%s must be a string", "name");
		s->name = json_string_value(v);
	}
	if (decode_context(&s->ctx, json_object_get(s->json, "context"),
	    req->arena, resp) != 0)
		return -1;
	return decode_labels(&s->labels, json_object_get(s->json, "labels"),
	    resp);
}

static int
decode_yaml_body(struct submission *s, const struct api_req *req,
    const struct query *q, struct api_resp *resp)
{
	const struct context_field *f;
	struct err e = { 0 };
	const char *v;

	s->config = req->body != NULL ? req->body : "";
	s->config_len = req->body_len;
	for (f = context_fields; f->name != NULL; f++) {
		v = query_get(q, f->name);
		/* world_size is the other name of gpus, read when gpus is
		   not given. */
		if (v == NULL || (strcmp(f->name, "world_size") == 0 &&
		    query_get(q, "gpus") != NULL))
			continue;
		if (context_set(&s->ctx, f, v, f->canon, &e) != 0)
			return bad_field(resp, "%s", e.msg);
	}
	if ((v = query_get(q, "name")) != NULL)
		s->name = v;
	s->labels = json_object();
	return 0;
}

enum sub_kind {
	SUB_CHECK,		/* POST /v1/checks: JSON or YAML, dry_run */
	SUB_ESTIMATE,		/* POST /v1/estimate: JSON or YAML */
	SUB_CI			/* POST /v1/ci/checks: JSON with source */
};

/*
 * Decode a POST body (JSON or raw YAML) into s.  On failure resp holds
 * the problem and -1 is returned; s must be fini'd either way.
 */
static int
decode_submission(struct submission *s, const struct api_req *req,
    const struct query *q, enum sub_kind kind, struct api_resp *resp)
{
	static const char *const json_q[] = { "dry_run", NULL };
	static const char *const ci_q[] = { "format", NULL };
	bool ci = kind == SUB_CI, allow_dry_run = kind == SUB_CHECK;
	static const char *const yaml_q[] = { "dry_run", "gpus",
	    "world_size", "nodes", "gpu", "interconnect", "name", "torch",
	    "gpu_memory_gib", "host_memory_gib", "dataset_tokens", NULL };
	char mt[64];
	struct err e = { 0 };

	memset(s, 0, sizeof(*s));
	context_default(&s->ctx);
	s->name = "";
	if (req->content_type == NULL) {
		api_problem(resp, 415, "unsupported-media-type",
		    "Unsupported Media Type", NULL,
		    "send Content-Type: application/json or "
		    "application/yaml");
		return -1;
	}
	media_type(mt, sizeof(mt), req->content_type);
	if (strcmp(mt, "application/json") == 0) {
		if (query_only(q, ci ? ci_q : allow_dry_run ? json_q :
		    json_q + 1, resp) != 0 ||
		    decode_json_body(s, req, ci, resp) != 0)
			return -1;
	} else if (ci) {
		api_problem(resp, 415, "unsupported-media-type",
		    "Unsupported Media Type", NULL,
		    "CI checks are JSON: {config, context, name, labels, "
		    "source}");
		return -1;
	} else if (is_yaml_type(mt)) {
		if (query_only(q, allow_dry_run ? yaml_q : yaml_q + 1,
		    resp) != 0 || decode_yaml_body(s, req, q, resp) != 0)
			return -1;
	} else {
		api_problem(resp, 415, "unsupported-media-type",
		    "Unsupported Media Type", NULL,
		    "Content-Type '%.64s' is not supported; send "
		    "application/json or application/yaml", mt);
		return -1;
	}
	if (s->labels == NULL) {
		api_problem(resp, 500, "internal", "Internal Server Error",
		    NULL, "out of memory");
		return -1;
	}
	if (parse_bool(&s->dry_run, query_get(q, "dry_run")) != 0)
		return bad_field(resp, "%s must be true or false", "dry_run");
	if (check_name(s->name, resp) != 0)
		return -1;
	if (context_resolve(&s->ctx, &e) != 0) {
		api_problem_err(resp, &e);
		return -1;
	}
	return 0;
}

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

static bool
valid_idem_key(const char *k)
{
	size_t n = strlen(k), i;

	if (n == 0 || n > 255)
		return false;
	for (i = 0; i < n; i++)
		if ((unsigned char)k[i] < 0x21 || (unsigned char)k[i] > 0x7E)
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
	struct store_check *c;
	struct report *r;
	char created[40], fp[65];
	char *text;
	size_t i;
	int rv;
	bool queue = !s->dry_run && req->wake != NULL &&
	    ops->put_check_async != NULL;

	if (req->idem_key != NULL && !s->dry_run) {
		if (!valid_idem_key(req->idem_key)) {
			api_problem(resp, 400, "bad-idempotency-key",
			    "Bad Request", NULL, "Idempotency-Key must be 1 "
			    "to 255 visible ASCII characters");
			return;
		}
		body_fingerprint(fp, req);
		rv = answer_prior(ctx, req, team, fp, resp);
		if (rv != ERR_NOTFOUND)
			return;	/* answered: the stored check, 409 or 503 */
	}
	/* The writer may hold a commit back for this check (group commit);
	   every way out below either queues it or takes the hint back. */
	if (queue && ops->expect != NULL)
		ops->expect(ctx->store.self, 1);
	if (run_check(&r, ctx, req, s, resp) != 0)
		goto unexpect;
	if (s->dry_run) {
		size_t len;

		text = encode_report_json_text(r, NULL, &len);
		if (text == NULL)
			goto nomem;
		api_json_text(resp, 200, text, len);
		return;
	}
	p = ARENA_NEW(req->arena, struct api_pending, 1);
	if (p == NULL) {
		api_problem(resp, 413, "request-too-large",
		    "Request exceeds its memory budget", NULL,
		    "the request needs more memory than one request may use");
		goto unexpect;
	}
	c = &p->c;
	c->created_at_ms = ctx->now_ms(ctx->env);
	api_new_id(c->id, ctx, c->created_at_ms);
	api_format_time(created, sizeof(created), c->created_at_ms);
	p->text = stored_json(r, c, created, team, s);
	p->context_json = encode_context_json_text(&r->ctx);
	p->rows = calloc(r->nfindings + 1, sizeof(*p->rows));
	if (p->text == NULL || p->context_json == NULL || p->rows == NULL) {
		pending_release(p);
		goto nomem;
	}
	for (i = 0; i < r->nfindings; i++) {
		p->rows[i].rule = r->findings[i].rule;
		p->rows[i].severity = severity_name(r->findings[i].severity);
		p->rows[i].line = r->findings[i].line;
	}
	/* The submission is the write's now: c->config may point into
	   its JSON, which must live until the commit. */
	p->s = *s;
	s->json = NULL;
	s->labels = NULL;
	p->r = r;
	p->team = team;
	p->fmt = fmt;
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
	if (queue) {
		/* Suspended until the commit: no thread waits for it. */
		p->w.done = pending_wake;
		p->w.expected = ops->expect != NULL;
		p->wake = req->wake;
		p->wake_arg = req->wake_arg;
		if (ops->put_check_async(ctx->store.self, &p->w) == 0) {
			resp->pending = p;
			return;
		}
		p->w.rv = p->w.e.code != ERR_OK ? p->w.e.code : ERR_STORE;
		if (ops->expect != NULL)
			ops->expect(ctx->store.self, -1);
	} else {
		p->w.rv = ops->put_check(ctx->store.self, c, &p->w.e);
	}
	finish_check(ctx, req, p, resp);
	return;
nomem:
	api_problem(resp, 500, "internal", "Internal Server Error", NULL,
	    "out of memory");
unexpect:
	if (queue && ops->expect != NULL)
		ops->expect(ctx->store.self, -1);
}

/* createCheck: POST /v1/checks */
void
h_post_check(struct api_ctx *ctx, const struct api_req *req,
    const struct query *q, const struct route_match *m,
    struct api_resp *resp)
{
	struct submission s;

	(void)m;
	if (decode_submission(&s, req, q, SUB_CHECK, resp) == 0)
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

/* 1-128 visible ASCII characters (a UUID, a CI job id). */
static bool
valid_delivery(const char *d)
{
	size_t n = d != NULL ? strlen(d) : 0, i;

	if (n == 0 || n > 128)
		return false;
	for (i = 0; i < n; i++)
		if ((unsigned char)d[i] < 0x21 || (unsigned char)d[i] > 0x7E)
			return false;
	return true;
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
	    99999999999L) != 0 || !valid_delivery(req->delivery)) {
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
	if (decode_submission(&s, req, q, SUB_CI, resp) == 0) {
		if (s.name[0] == '\0') {
			/* The history of repo:path is the config's. */
			const char *n = arena_printf(req->arena, "%s:%s",
			    json_string_value(json_object_get(s.source,
			    "repo")), json_string_value(json_object_get(
			    s.source, "path")));

			s.name = n != NULL ? n : "";
		}
		if (check_name(s.name, resp) == 0)
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
	if (decode_submission(&s, req, q, SUB_ESTIMATE, resp) != 0 ||
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
static const char b64[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

static void
cursor_encode(char *out, size_t cap, const char *id)
{
	size_t n = strlen(id), i, k = 0;

	for (i = 0; i < n && k + 5 < cap; i += 3) {
		unsigned v = (unsigned)(unsigned char)id[i] << 16;

		if (i + 1 < n)
			v |= (unsigned)(unsigned char)id[i + 1] << 8;
		if (i + 2 < n)
			v |= (unsigned char)id[i + 2];
		out[k++] = b64[(v >> 18) & 63];
		out[k++] = b64[(v >> 12) & 63];
		if (i + 1 < n)
			out[k++] = b64[(v >> 6) & 63];
		if (i + 2 < n)
			out[k++] = b64[v & 63];
	}
	out[k] = '\0';
}

static int
cursor_decode(char *out, size_t cap, const char *s)
{
	size_t n = strlen(s), i, k = 0;
	unsigned v = 0;
	int bits = 0;

	for (i = 0; i < n; i++) {
		const char *p = strchr(b64, s[i]);

		if (p == NULL || s[i] == '\0')
			return -1;
		v = (v << 6) | (unsigned)(p - b64);
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			if (k + 1 >= cap)
				return -1;
			out[k++] = (char)((v >> bits) & 0xFF);
		}
	}
	out[k] = '\0';
	return api_is_id(out) ? 0 : -1;
}

/* Shared by listChecks and getHistory: filters common to both. */
/* Id bounds for since/until, kept beside the query. */
struct bounds {
	char cursor[32];
	char since[27];
	char until[27];
};

static int
list_query(struct store_query *sq, struct bounds *bd,
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

/* Append to a malloc'd growing buffer; -1 when out of memory. */
struct sbuf {
	char *p;
	size_t n;
	size_t cap;
};

static int
sb_put(struct sbuf *b, const char *s, size_t n)
{
	if (b->n + n + 1 > b->cap) {
		size_t cap = b->cap == 0 ? 4096 : b->cap;
		char *np;

		while (b->n + n + 1 > cap)
			cap *= 2;
		np = realloc(b->p, cap);
		if (np == NULL)
			return -1;
		b->p = np;
		b->cap = cap;
	}
	memcpy(b->p + b->n, s, n);
	b->n += n;
	b->p[b->n] = '\0';
	return 0;
}

static int
sb_str(struct sbuf *b, const char *s)
{
	return sb_put(b, s, strlen(s));
}

/*
 * Items of a page out of the n rows a list query read: all but the one
 * read to see whether there is a next page, or, when the store stopped
 * at its byte cap, all but the row that crossed it.
 */
static size_t
page_len(const struct store_check *items, size_t n,
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
static void
head_answer(struct api_resp *resp)
{
	api_json_text(resp, 200, NULL, 0);
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
	struct sbuf b = { 0 };
	struct err e = { 0 };
	struct bounds bd;
	char next[64];
	const char *v;
	size_t n, i, page;
	int bad = 0;

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
	if (req->head) {
		head_answer(resp);
		return;
	}
	if (ctx->store.ops->list_checks(ctx->store.self, &items, &n, &sq,
	    req->arena, &e) != 0) {
		api_problem_err(resp, &e);
		return;
	}
	page = page_len(items, n, &sq);
	bad |= sb_str(&b, "{\"items\":[");
	for (i = 0; i < page; i++) {
		size_t len = strlen(items[i].json);

		if (i > 0 && b.n + len > PAGE_BYTES) {
			page = i;	/* the rest on the next page */
			break;
		}
		if (i > 0)
			bad |= sb_str(&b, ",");
		bad |= sb_put(&b, items[i].json, len);
	}
	bad |= sb_str(&b, "],\"next_cursor\":");
	if (n > page && page > 0) {
		cursor_encode(next, sizeof(next), items[page - 1].id);
		bad |= sb_str(&b, "\"");
		bad |= sb_str(&b, next);
		bad |= sb_str(&b, "\"}");
	} else {
		bad |= sb_str(&b, "null}");
	}
	if (bad != 0) {
		free(b.p);
		api_problem(resp, 500, "internal", "Internal Server Error",
		    NULL, "out of memory");
		return;
	}
	api_json_text(resp, 200, b.p, b.n);
}

/* The findings array of a parsed stored check (borrowed), else empty. */
static json_t *
stored_findings(json_t *j, json_t *empty)
{
	json_t *f = json_object_get(j, "findings");

	return json_is_array(f) ? f : empty;
}

static double
stored_peak(json_t *j, bool *known)
{
	json_t *p = json_object_get(json_object_get(json_object_get(j,
	    "estimate"), "memory"), "per_gpu_peak_gib");

	*known = json_is_number(p);
	return json_is_number(p) ? json_number_value(p) : 0.0;
}

/* {per_gpu_peak_gib, capacity_gib, fits} of a parsed stored check (each
   null when unknown): a new object. */
static json_t *
stored_memory(json_t *j)
{
	json_t *m = json_object_get(json_object_get(j, "estimate"), "memory");
	json_t *p = json_object_get(m, "per_gpu_peak_gib");
	json_t *c = json_object_get(m, "capacity_gib");
	json_t *f = json_object_get(m, "fits");

	return json_pack("{s:O, s:O, s:O}",
	    "per_gpu_peak_gib", json_is_number(p) ? p : json_null(),
	    "capacity_gib", json_is_number(c) ? c : json_null(),
	    "fits", json_is_boolean(f) ? f : json_null());
}

/* A finding's identity across checks: its rule and its config path
   (lines move when a config is edited above them). */
static const char *
finding_key(char *buf, size_t cap, json_t *f)
{
	const char *rule = json_string_value(json_object_get(f, "rule"));
	const char *path = json_string_value(json_object_get(f, "path"));

	snprintf(buf, cap, "%s\x1f%s", rule != NULL ? rule : "",
	    path != NULL ? path : "");
	return buf;
}

/* Findings of `to` not in `from` (by rule and path): a new reference.
   Linear: `from` goes into a hash set first (jansson's objects hash with
   a per-process random seed). */
static json_t *
findings_minus(json_t *to, json_t *from)
{
	json_t *out = json_array(), *seen = json_object(), *x;
	char key[512];
	size_t i;

	if (out == NULL || seen == NULL) {
		json_decref(seen);
		return out;
	}
	json_array_foreach(from, i, x)
		json_object_set_new(seen, finding_key(key, sizeof(key), x),
		    json_true());
	json_array_foreach(to, i, x)
		if (json_object_get(seen, finding_key(key, sizeof(key), x)) ==
		    NULL)
			json_array_append(out, x);
	json_decref(seen);
	return out;
}

/*
 * The context fields that differ between two stored checks (issue #18: a
 * change of GPU count or type explains a memory delta), as a new object
 * {field: {from, to}}; a field one side lacks is null there.  Empty when
 * both ran in the same context.
 */
static json_t *
context_changes(json_t *cn, json_t *co)
{
	json_t *out = json_object(), *v;
	const char *key;

	if (out == NULL)
		return NULL;
	json_object_foreach(cn, key, v)
		if (!json_equal(v, json_object_get(co, key)))
			json_object_set_new(out, key, json_pack("{s:O?, s:O}",
			    "from", json_object_get(co, key), "to", v));
	json_object_foreach(co, key, v)
		if (json_object_get(cn, key) == NULL)
			json_object_set_new(out, key, json_pack("{s:O, s:n}",
			    "from", v, "to"));
	return out;
}

/* The memory breakdown of a parsed stored check (borrowed), or NULL. */
static json_t *
stored_breakdown(json_t *j)
{
	json_t *b = json_object_get(json_object_get(json_object_get(j,
	    "estimate"), "memory"), "breakdown_gib");

	return json_is_object(b) ? b : NULL;
}

/* Per term of the memory breakdown, newer minus older (a term one side
   lacks counts 0 there); null unless both have a breakdown. */
static json_t *
breakdown_delta(json_t *jn, json_t *jo)
{
	json_t *bn = stored_breakdown(jn), *bo = stored_breakdown(jo);
	json_t *out, *v;
	const char *key;

	if (bn == NULL || bo == NULL)
		return json_null();
	out = json_object();
	if (out == NULL)
		return NULL;
	json_object_foreach(bn, key, v)
		json_object_set_new(out, key, json_real(jw_round2(
		    json_number_value(v) -
		    json_number_value(json_object_get(bo, key)))));
	json_object_foreach(bo, key, v)
		if (json_object_get(bn, key) == NULL)
			json_object_set_new(out, key, json_real(jw_round2(
			    -json_number_value(v))));
	return out;
}

/* The change from `older` to `newer`: a new JSON object. */
static json_t *
changes(const struct store_check *newer, const struct store_check *older,
    json_t *jn, json_t *jo)
{
	json_t *empty = json_array();
	json_t *fn = stored_findings(jn, empty);
	json_t *fo = stored_findings(jo, empty);
	bool kn, ko;
	double pn = stored_peak(jn, &kn);
	double po = stored_peak(jo, &ko);
	json_t *j = json_pack("{s:b, s:{s:s, s:s}, s:o, s:o}",
	    "config_changed", strcmp(newer->config_sha256,
	    older->config_sha256) != 0,
	    "verdict", "from", older->verdict, "to", newer->verdict,
	    "findings_added", findings_minus(fn, fo),
	    "findings_removed", findings_minus(fo, fn));

	if (j != NULL) {
		json_object_set_new(j, "memory_delta_gib", kn && ko ?
		    json_real(jw_round2(pn - po)) : json_null());
		json_object_set_new(j, "memory_delta_by_term_gib",
		    breakdown_delta(jn, jo));
		json_object_set_new(j, "context_changes", context_changes(
		    json_object_get(jn, "context"),
		    json_object_get(jo, "context")));
	}
	json_decref(empty);
	return j;
}

/* getHistory: GET /v1/configs/{name}/checks */
void
h_history(struct api_ctx *ctx, const struct api_req *req,
    const struct query *q, const struct route_match *m,
    struct api_resp *resp)
{
	static const char *const allowed[] = { "since", "until", "limit",
	    "cursor", "team", NULL };
	struct store_query sq;
	struct store_check *items;
	struct err e = { 0 };
	struct bounds bd;
	char next[64], created[40];
	json_t *out, *arr, **parsed;
	size_t n, i, page, bytes = 0;

	if (query_only(q, allowed, resp) != 0 ||
	    list_query(&sq, &bd, req, q, resp) != 0 ||
	    check_name(m->param[0], resp) != 0)
		return;
	sq.name = m->param[0];
	if (req->head) {
		head_answer(resp);
		return;
	}
	if (ctx->store.ops->list_checks(ctx->store.self, &items, &n, &sq,
	    req->arena, &e) != 0) {
		api_problem_err(resp, &e);
		return;
	}
	page = page_len(items, n, &sq);
	/* Each stored report parsed once: item i is compared with i + 1. */
	parsed = ARENA_NEW(req->arena, json_t *, n + 1);
	if (parsed == NULL) {
		err_set(&e, ERR_NOMEM, NULL, "out of memory");
		api_problem_err(resp, &e);
		return;
	}
	for (i = 0; i < n; i++)
		parsed[i] = json_loads(items[i].json, 0, NULL);
	arr = json_array();
	for (i = 0; i < page; i++) {
		const struct store_check *c = &items[i];
		json_t *item;
		size_t len;

		api_format_time(created, sizeof(created), c->created_at_ms);
		item = json_pack("{s:s, s:s, s:s, s:s, s:s, s:I, s:I, s:I}",
		    "id", c->id, "created_at", created, "team", c->team,
		    "verdict", c->verdict, "config_sha256", c->config_sha256,
		    "errors", (json_int_t)c->errors,
		    "warnings", (json_int_t)c->warnings,
		    "infos", (json_int_t)c->infos);
		if (item == NULL)
			continue;
		/* What the history chart draws (issue #18): where the check
		   ran and its peak against the GPU's capacity. */
		json_object_set(item, "context", json_object_get(parsed[i],
		    "context") != NULL ? json_object_get(parsed[i], "context") :
		    json_null());
		json_object_set_new(item, "memory", stored_memory(parsed[i]));
		if (i + 1 < n) {
			json_object_set_new(item, "previous_id",
			    json_string(items[i + 1].id));
			json_object_set_new(item, "changes",
			    changes(c, &items[i + 1], parsed[i],
			    parsed[i + 1]));
		} else {
			json_object_set_new(item, "previous_id", json_null());
			json_object_set_new(item, "changes", json_null());
		}
		len = json_dumpb(item, NULL, 0, JSON_COMPACT);
		if (i > 0 && bytes + len > PAGE_BYTES) {
			json_decref(item);
			page = i;	/* the rest on the next page */
			break;
		}
		bytes += len;
		json_array_append_new(arr, item);
	}
	for (i = 0; i < n; i++)
		json_decref(parsed[i]);
	diagnose_history(ctx, req, sq.team, m->param[0], arr);	/* #19 */
	out = json_pack("{s:s, s:o}", "name", m->param[0], "items", arr);
	if (out != NULL && n > page && page > 0) {
		cursor_encode(next, sizeof(next), items[page - 1].id);
		json_object_set_new(out, "next_cursor", json_string(next));
	} else if (out != NULL) {
		json_object_set_new(out, "next_cursor", json_null());
	}
	api_json(resp, 200, out);
}

/* diffChecks: GET /v1/checks/{id}/diff?against={other} */
void
h_diff(struct api_ctx *ctx, const struct api_req *req,
    const struct query *q, const struct route_match *m,
    struct api_resp *resp)
{
	static const char *const allowed[] = { "against", NULL };
	const char *against = query_get(q, "against");
	const char *team = req->admin ? NULL : req->team;
	struct store_check a, b;
	struct err e = { 0 };
	json_t *ja, *jb;
	json_t *j;

	if (query_only(q, allowed, resp) != 0)
		return;
	if (against == NULL) {
		api_problem(resp, 400, "bad-query", "Bad query string", NULL,
		    "against (the id to compare with) is required");
		return;
	}
	if (!api_is_id(m->param[0]) || !api_is_id(against)) {
		api_problem(resp, 404, "not-found", "Not Found", NULL,
		    "no such check");
		return;
	}
	if (ctx->store.ops->get_check(ctx->store.self, &a, m->param[0], team,
	    req->arena, &e) != 0 ||
	    ctx->store.ops->get_check(ctx->store.self, &b, against, team,
	    req->arena, &e) != 0) {
		api_problem_err(resp, &e);
		return;
	}
	if (req->head) {
		head_answer(resp);
		return;
	}
	ja = json_loads(a.json, 0, NULL);
	jb = json_loads(b.json, 0, NULL);
	j = changes(&a, &b, ja, jb);
	json_decref(ja);
	json_decref(jb);
	if (j != NULL) {
		json_object_set_new(j, "id", json_string(a.id));
		json_object_set_new(j, "against", json_string(b.id));
	}
	api_json(resp, 200, j);
}

/* getRuleStats: GET /v1/stats/rules?since= */
void
h_rule_stats(struct api_ctx *ctx, const struct api_req *req,
    const struct query *q, const struct route_match *m,
    struct api_resp *resp)
{
	static const char *const allowed[] = { "since", "team", NULL };
	struct store_rule_stat *rows;
	struct err e = { 0 };
	int64_t since = 0;
	char since_id[27];
	const char *v;
	json_t *items, *cur = NULL;
	size_t n, i;

	(void)m;
	if (query_only(q, allowed, resp) != 0)
		return;
	if ((v = query_get(q, "since")) != NULL &&
	    api_parse_time(&since, v) != 0) {
		api_problem(resp, 400, "bad-query", "Bad query string", NULL,
		    "since must be an RFC 3339 time, e.g. "
		    "2026-12-02T10:00:00Z");
		return;
	}
	api_id_floor(since_id, since);
	if (req->head) {
		head_answer(resp);
		return;
	}
	if (ctx->store.ops->rule_stats(ctx->store.self, &rows, &n,
	    req->admin ? query_get(q, "team") : req->team, since_id,
	    req->arena, &e) != 0) {
		api_problem_err(resp, &e);
		return;
	}
	/* Rows come sorted by rule: one item per rule. */
	items = json_array();
	for (i = 0; i < n; i++) {
		json_t *by;

		if (cur == NULL || strcmp(json_string_value(json_object_get(
		    cur, "rule")), rows[i].rule) != 0) {
			cur = json_pack("{s:s, s:I, s:I, s:{}}", "rule",
			    rows[i].rule, "findings", (json_int_t)0, "checks",
			    (json_int_t)0, "by_verdict");
			if (cur == NULL)
				break;
			json_array_append_new(items, cur);
		}
		by = json_object_get(cur, "by_verdict");
		json_object_set_new(by, rows[i].verdict, json_pack("{s:I, s:I}",
		    "findings", (json_int_t)rows[i].count, "checks",
		    (json_int_t)rows[i].checks));
		json_object_set_new(cur, "findings", json_integer(
		    json_integer_value(json_object_get(cur, "findings")) +
		    rows[i].count));
		json_object_set_new(cur, "checks", json_integer(
		    json_integer_value(json_object_get(cur, "checks")) +
		    rows[i].checks));
	}
	api_json(resp, 200, json_pack("{s:o, s:o}", "since", v != NULL ?
	    json_string(v) : json_null(), "items", items));
}
