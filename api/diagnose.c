/*
 * api/diagnose: see diagnose.h.  POST /v1/diagnose runs core/diagnose on
 * the log; with a config it stores the config as a check exactly as POST
 * /v1/checks does (the request goes through h_post_check, so decoding,
 * policy, team and storage are that handler's), holds the log's CUDA OOM
 * against the estimate and stores the diagnosis with that check; with a
 * check_id it uses the team's stored check (another team's is a 404).
 */
#include "api/diagnose.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_int.h"
#include "api/encode.h"
#include "core/arena.h"
#include "core/report.h"

#define LIST_DEFAULT 50
#define LIST_MAX 200

/* ---- HTTP ----------------------------------------------------------- */

static void
bad(struct api_resp *resp, const char *msg)
{
	api_problem(resp, 422, "invalid-field", "Unprocessable request", NULL,
	    "%s", msg);
}

/*
 * Run h_post_check on {config, context, name} (dry: not stored) in req's
 * arena: its report (with the resolved context) into *r, the stored id
 * into id, the bytes it stored added to resp->stored_bytes (the team's
 * --quota-bytes-per-day: http.c charges any answer that stored bytes).
 * On failure resp holds its problem and -1 is returned.
 */
static int
check_via_checks(const struct report **r, char id[27], struct api_ctx *ctx,
    const struct api_req *req, json_t *body, bool dry,
    struct api_resp *resp)
{
	struct api_req sub = *req;
	struct api_resp sr;
	struct query q = { .n = 0 };
	struct route_match m = { .nparam = 0 };
	json_t *stored;
	char *text = json_dumps(body, JSON_COMPACT);

	if (text == NULL) {
		api_problem(resp, 500, "internal", "Internal Server Error",
		    NULL, "out of memory");
		return -1;
	}
	sub.method = "POST";
	sub.path = "/v1/checks";
	sub.query = dry ? "dry_run=true" : "";
	sub.content_type = "application/json";
	sub.idem_key = NULL;
	sub.wake = NULL;	/* its answer is needed here, now */
	sub.body = text;
	sub.body_len = strlen(text);
	if (dry) {
		q.key[0] = "dry_run";
		q.value[0] = "true";
		q.n = 1;
	}
	memset(&sr, 0, sizeof(sr));
	h_post_check(ctx, &sub, &q, &m, &sr);
	free(text);
	if (sr.status != 200 && sr.status != 201) {
		const char *route = resp->route;

		api_resp_fini(resp);
		*resp = sr;	/* its problem is ours: the config is */
		resp->route = route;
		return -1;
	}
	*r = sr.report;
	resp->stored_bytes += sr.stored_bytes;	/* the team's quota */
	id[0] = '\0';
	stored = dry ? NULL : json_loadb(sr.body, sr.body_len, 0, NULL);
	if (stored != NULL)
		snprintf(id, 27, "%s", json_string_value(json_object_get(stored,
		    "id")) != NULL ? json_string_value(json_object_get(stored,
		    "id")) : "");
	json_decref(stored);
	api_resp_fini(&sr);
	if (*r == NULL || (!dry && id[0] == '\0')) {
		api_problem(resp, 500, "internal", "Internal Server Error",
		    NULL, "the check could not be stored");
		return -1;
	}
	return 0;
}

/* The decoded request. */
struct drequest {
	json_t *json;		/* the body; owned */
	const char *log;	/* borrowed from json */
	size_t log_len;
	json_t *config;		/* string, or NULL */
	const char *check_id;
	json_t *context;	/* object, or NULL */
	json_t *name;		/* string, or NULL */
};

static int
decode(struct drequest *d, const struct api_req *req, struct api_resp *resp)
{
	char mt[64];
	json_error_t jerr;
	const char *key, *ct = req->content_type;
	json_t *v;
	size_t i = 0;

	memset(d, 0, sizeof(*d));
	while (ct != NULL && *ct == ' ')
		ct++;
	for (; ct != NULL && ct[i] != '\0' && ct[i] != ';' && ct[i] != ' ' &&
	    i + 1 < sizeof(mt); i++)
		mt[i] = (char)(ct[i] >= 'A' && ct[i] <= 'Z' ? ct[i] + 32 :
		    ct[i]);
	mt[i] = '\0';
	if (strcmp(mt, "application/json") != 0) {
		api_problem(resp, 415, "unsupported-media-type",
		    "Unsupported Media Type", NULL, "send Content-Type: "
		    "application/json: {\"log\": ..., \"config\" or "
		    "\"check_id\", \"context\", \"name\"}");
		return -1;
	}
	d->json = json_loadb(req->body != NULL ? req->body : "",
	    req->body_len, JSON_REJECT_DUPLICATES, &jerr);
	if (d->json == NULL || !json_is_object(d->json)) {
		struct err_loc loc = { 0 };

		loc.line = jerr.line > 0 ? (unsigned)jerr.line : 1;
		loc.col = jerr.column > 0 ? (unsigned)jerr.column : 1;
		api_problem(resp, 400, "invalid-json", "Invalid JSON",
		    d->json == NULL ? &loc : NULL, "%s", d->json == NULL ?
		    jerr.text : "the body must be a JSON object");
		return -1;
	}
	json_object_foreach(d->json, key, v) {
		if (strcmp(key, "log") == 0 && json_is_string(v)) {
			d->log = json_string_value(v);
			d->log_len = json_string_length(v);
		} else if (strcmp(key, "config") == 0 && json_is_string(v)) {
			d->config = v;
		} else if (strcmp(key, "check_id") == 0 && json_is_string(v)) {
			d->check_id = json_string_value(v);
		} else if (strcmp(key, "context") == 0 && json_is_object(v)) {
			d->context = v;
		} else if (strcmp(key, "name") == 0 && json_is_string(v)) {
			d->name = v;
		} else if (strcmp(key, "log") == 0 ||
		    strcmp(key, "config") == 0 ||
		    strcmp(key, "check_id") == 0 || strcmp(key, "name") == 0) {
			api_problem(resp, 422, "invalid-field",
			    "Unprocessable request", NULL, "%s must be a "
			    "string", key);
			return -1;
		} else if (strcmp(key, "context") == 0) {
			bad(resp, "context must be an object");
			return -1;
		} else {
			api_problem(resp, 422, "invalid-field",
			    "Unprocessable request", NULL, "unknown field "
			    "'%.64s'; known: log, config, check_id, context, "
			    "name", key);
			return -1;
		}
	}
	if (d->log == NULL) {
		bad(resp, "log is required: the failed run's output, as text");
		return -1;
	}
	if (d->config != NULL && d->check_id != NULL) {
		bad(resp, "give config or check_id, not both");
		return -1;
	}
	if (d->config == NULL && (d->context != NULL || d->name != NULL)) {
		bad(resp, d->check_id != NULL ? "a stored check brings its own "
		    "context and name" : "context and name describe a config: "
		    "send config too");
		return -1;
	}
	return 0;
}

/* The body for a check of the stored check c (its config and context). */
static json_t *
stored_body(const struct store_check *c)
{
	json_t *ctxj = json_loads(c->context_json, 0, NULL);

	if (ctxj == NULL)
		return NULL;
	json_object_del(ctxj, "gpus_per_node");	/* derived */
	return json_pack("{s:s%, s:o}", "config", c->config, c->config_len,
	    "context", ctxj);
}

/* The diagnosis row for check check_id of team and store it. */
static int
store_diagnosis(struct api_ctx *ctx, const struct api_req *req,
    const struct diag_report *d, const struct report *r, json_t *out,
    const char *team, const char *check_id, const char *name,
    const char *sha, struct api_resp *resp)
{
	struct store_diagnosis row;
	struct err e = { 0 };
	char created[40], *json = NULL, *lines = NULL, *ctxj = NULL;
	json_t *lj = json_array();
	size_t i;
	int rv = -1;

	memset(&row, 0, sizeof(row));
	row.created_at_ms = ctx->now_ms(ctx->env);
	api_new_id(row.id, ctx, row.created_at_ms);
	api_format_time(created, sizeof(created), row.created_at_ms);
	json_object_set_new(out, "id", json_string(row.id));
	json_object_set_new(out, "created_at", json_string(created));
	json_object_set_new(out, "team", json_string(team));
	json_object_set_new(out, "check_id", json_string(check_id));
	json_object_set_new(out, "name", json_string(name));
	row.team = team;
	row.check_id = check_id;
	row.name = name;
	row.config_sha256 = sha;
	row.gpu = r->ctx.gpu;
	row.first = d->n > 0 ? d->items[0].sig->id : NULL;
	if ((d->oom.have & (DIAG_OOM_NEEDED | DIAG_OOM_CAPACITY)) ==
	    (DIAG_OOM_NEEDED | DIAG_OOM_CAPACITY)) {
		row.measured = true;
		row.measured_peak_gib = d->oom.needed_gib;
		row.capacity_gib = d->oom.capacity_gib;
	}
	for (i = 0; lj != NULL && i < d->n; i++)
		if (d->items[i].sig->extract == DIAG_X_CUDA_OOM) {
			size_t k;

			for (k = 0; k < d->items[i].nlines; k++)
				json_array_append_new(lj,
				    diagnose_encode_line(&d->items[i].lines[k]));
			break;
		}
	lines = lj != NULL ? json_dumps(lj, JSON_COMPACT) : NULL;
	json = json_dumps(out, JSON_COMPACT);
	ctxj = encode_context_json_text(&r->ctx);
	row.lines_json = lines;
	row.json = json;
	row.context_json = ctxj;
	if (lines == NULL || json == NULL || ctxj == NULL) {
		api_problem(resp, 500, "internal", "Internal Server Error",
		    NULL, "out of memory");
		goto out;
	}
	if (ctx->store.ops->put_diagnosis(ctx->store.self, &row, &e) != 0) {
		api_problem_err(resp, &e);
		goto out;
	}
	resp->stored_bytes += strlen(json) + strlen(lines) + strlen(ctxj);
	rv = 0;
out:
	(void)req;
	json_decref(lj);
	free(lines);
	free(json);
	free(ctxj);
	return rv;
}

/* diagnose: POST /v1/diagnose */
void
h_diagnose(struct api_ctx *ctx, const struct api_req *req,
    const struct query *q, const struct route_match *m,
    struct api_resp *resp)
{
	static const char *const none[] = { NULL };
	struct drequest dr;
	struct diag_limits dl;
	struct diag_report *d;
	struct store_check c;
	const struct report *r = NULL;
	struct err e = { 0 };
	char id[27], sha[65] = "";
	const char *team = req->team, *name = "";
	json_t *body = NULL, *out = NULL;
	char *text;

	(void)m;
	memset(&dr, 0, sizeof(dr));
	if (query_only(q, none, resp) != 0 || decode(&dr, req, resp) != 0)
		goto done;
	diag_limits_default(&dl);
	if (diagnose_log(&d, dr.log, dr.log_len, &dl, req->arena, &e) != 0) {
		api_problem_err(resp, &e);
		goto done;
	}
	if (dr.check_id != NULL) {
		if (!api_is_id(dr.check_id) ||
		    ctx->store.ops->get_check(ctx->store.self, &c,
		    dr.check_id, req->admin ? NULL : req->team, req->arena,
		    &e) != 0) {
			if (e.code == ERR_OK || e.code == ERR_NOTFOUND)
				api_problem(resp, 404, "not-found",
				    "Not Found", NULL, "no such check");
			else
				api_problem_err(resp, &e);
			goto done;
		}
		body = stored_body(&c);
		if (body == NULL || check_via_checks(&r, id, ctx, req, body,
		    true, resp) != 0)
			goto done;
		snprintf(id, sizeof(id), "%s", c.id);
		snprintf(sha, sizeof(sha), "%s", c.config_sha256);
		team = c.team;
		name = c.name;
		if (diagnose_config(d, c.config, c.config_len, &r->ctx,
		    &ctx->lim, req->arena, &e) != 0) {
			api_problem_err(resp, &e);
			goto done;
		}
	} else if (dr.config != NULL) {
		body = json_pack("{s:O, s:O?, s:O?}", "config", dr.config,
		    "context", dr.context, "name", dr.name);
		if (body == NULL || check_via_checks(&r, id, ctx, req, body,
		    false, resp) != 0)
			goto done;
		snprintf(sha, sizeof(sha), "%s", r->config_sha256);
		name = dr.name != NULL ? json_string_value(dr.name) : "";
		if (diagnose_config(d, json_string_value(dr.config),
		    json_string_length(dr.config), &r->ctx, &ctx->lim,
		    req->arena, &e) != 0) {
			api_problem_err(resp, &e);
			goto done;
		}
	}
	out = diagnose_encode_json(d, NULL);
	if (out == NULL) {
		api_problem(resp, 500, "internal", "Internal Server Error",
		    NULL, "out of memory");
		goto done;
	}
	if (r != NULL && store_diagnosis(ctx, req, d, r, out, team, id, name,
	    sha, resp) != 0)
		goto done;
	text = json_dumps(out, JSON_COMPACT | JSON_REAL_PRECISION(10));
	if (text == NULL)
		api_problem(resp, 500, "internal", "Internal Server Error",
		    NULL, "out of memory");
	else
		api_json_text(resp, 200, text, strlen(text));
done:
	json_decref(out);
	json_decref(body);
	json_decref(dr.json);
}

/* "failed: oom.activations, needed at least 71.30 GiB of 79.19 GiB on
   h100-sxm" (just the id without a measurement) into out. */
static void
summary_of(char *out, size_t cap, const struct store_diagnosis *s)
{
	if (s->measured)
		snprintf(out, cap, "failed: %s, needed at least %.2f GiB of "
		    "%.2f GiB on %s", s->first != NULL ? s->first :
		    "no known signature", s->measured_peak_gib,
		    s->capacity_gib, s->gpu);
	else
		snprintf(out, cap, "failed: %s on %s", s->first != NULL ?
		    s->first : "no known signature", s->gpu);
}

void
diagnose_history(struct api_ctx *ctx, const struct api_req *req,
    const char *team, const char *name, json_t *items)
{
	struct store_mquery sq;
	struct store_diagnosis *rows;
	struct err e = { 0 };
	size_t n = 0, i, k;
	json_t *item;
	char summary[256];

	memset(&sq, 0, sizeof(sq));
	sq.team = team;
	sq.name = name;
	sq.limit = LIST_MAX * 4;
	sq.all = true;
	if (ctx->store.ops->list_measurements(ctx->store.self, &rows, &n, &sq,
	    req->arena, &e) != 0)
		n = 0;
	json_array_foreach(items, i, item) {
		json_t *f = json_array();
		const char *id = json_string_value(json_object_get(item,
		    "id"));

		for (k = 0; f != NULL && id != NULL && k < n; k++) {
			if (strcmp(rows[k].check_id, id) != 0)
				continue;
			summary_of(summary, sizeof(summary), &rows[k]);
			json_array_append_new(f, json_pack("{s:s, s:s?, s:o, "
			    "s:s}", "id", rows[k].id, "diagnosis",
			    rows[k].first, "measured_peak_gib",
			    rows[k].measured ? diagnose_encode_gib(rows[k].measured_peak_gib) :
			    json_null(), "summary", summary));
		}
		json_object_set_new(item, "failures", f);
	}
}

/* A measurement as listMeasurements serves it. */
static json_t *
measurement_json(const struct store_diagnosis *s)
{
	char created[40], summary[256];
	json_t *ctxj = json_loads(s->context_json, 0, NULL);
	json_t *lines = json_loads(s->lines_json, 0, NULL);

	api_format_time(created, sizeof(created), s->created_at_ms);
	summary_of(summary, sizeof(summary), s);
	return json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:o, s:s?, "
	    "s:o, s:o, s:s, s:o}", "id", s->id, "created_at", created,
	    "team", s->team, "check_id", s->check_id, "name", s->name,
	    "config_sha256", s->config_sha256, "gpu", s->gpu,
	    "context", ctxj != NULL ? ctxj : json_object(),
	    "diagnosis", s->first,
	    "measured_peak_gib", diagnose_encode_gib(s->measured_peak_gib),
	    "capacity_gib", diagnose_encode_gib(s->capacity_gib), "summary", summary,
	    "lines", lines != NULL ? lines : json_array());
}

/* listMeasurements: GET /v1/measurements */
void
h_measurements(struct api_ctx *ctx, const struct api_req *req,
    const struct query *q, const struct route_match *m,
    struct api_resp *resp)
{
	static const char *const allowed[] = { "name", "config_sha256",
	    "limit", "cursor", "team", NULL };
	struct store_mquery sq;
	struct store_diagnosis *items;
	struct err e = { 0 };
	const char *v;
	long n = LIST_DEFAULT;
	size_t got, i, page;
	json_t *arr, *out;
	char *text;

	(void)m;
	if (query_only(q, allowed, resp) != 0)
		return;
	memset(&sq, 0, sizeof(sq));
	sq.team = req->admin ? query_get(q, "team") : req->team;
	sq.name = query_get(q, "name");
	sq.config_sha256 = query_get(q, "config_sha256");
	if ((v = query_get(q, "limit")) != NULL &&
	    api_parse_long(&n, v, 1, LIST_MAX) != 0) {
		api_problem(resp, 400, "bad-query", "Bad query string", NULL,
		    "limit must be an integer from 1 to %d", LIST_MAX);
		return;
	}
	if ((v = query_get(q, "cursor")) != NULL) {
		if (!api_is_id(v)) {
			api_problem(resp, 400, "bad-query", "Bad query string",
			    NULL, "cursor is not one this server issued");
			return;
		}
		sq.before_id = v;
	}
	sq.limit = (unsigned)n + 1;	/* one more: is there a next page? */
	if (ctx->store.ops->list_measurements(ctx->store.self, &items, &got,
	    &sq, req->arena, &e) != 0) {
		api_problem_err(resp, &e);
		return;
	}
	page = got < sq.limit ? got : sq.limit - 1;
	arr = json_array();
	for (i = 0; arr != NULL && i < page; i++)
		json_array_append_new(arr, measurement_json(&items[i]));
	out = json_pack("{s:o, s:o}", "items", arr, "next_cursor",
	    got > page && page > 0 ? json_string(items[page - 1].id) :
	    json_null());
	text = out != NULL ? json_dumps(out, JSON_COMPACT |
	    JSON_REAL_PRECISION(10)) : NULL;
	json_decref(out);
	if (text == NULL)
		api_problem(resp, 500, "internal", "Internal Server Error",
		    NULL, "out of memory");
	else
		api_json_text(resp, 200, text, strlen(text));
}
