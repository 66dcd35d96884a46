/*
 * api/history: how checks changed (openapi.yaml: getHistory, diffChecks)
 * and rule statistics (getRuleStats), from the stored reports.
 */
#include "api/api_int.h"

#include <stdio.h>
#include <string.h>

#include "api/jsonw.h"
#include "core/arena.h"

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
	struct list_bounds bd;
	char next[64], created[40];
	json_t *out, *arr, **parsed;
	size_t n, i, page, bytes = 0;

	if (query_only(q, allowed, resp) != 0 ||
	    list_query(&sq, &bd, req, q, resp) != 0 ||
	    api_check_name(m->param[0], resp) != 0)
		return;
	sq.name = m->param[0];
	if (list_fetch(&items, &n, &page, ctx, req, &sq, resp) != 0)
		return;
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
		list_cursor_encode(next, sizeof(next), items[page - 1].id);
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
		api_head_answer(resp);
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
		api_head_answer(resp);
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
