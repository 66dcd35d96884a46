/*
 * api/submit_body: a POST body (createCheck, createCiCheck, estimate) into
 * a struct submission: the JSON object or the raw YAML with its context
 * in the query string, each decoded through core/context's one decoder.
 */
#include "api/api_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/arena.h"
#include "core/hfconfig.h"
#include "core/models.h"

#define NAME_MAX_BYTES 1024
#define LABELS_MAX 32

void
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

int
api_check_name(const char *name, struct api_resp *resp)
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

/* Decode a POST body (api_int.h). */
int
submission_decode(struct submission *s, const struct api_req *req,
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
	if (api_check_name(s->name, resp) != 0)
		return -1;
	if (context_resolve(&s->ctx, &e) != 0) {
		api_problem_err(resp, &e);
		return -1;
	}
	return 0;
}
