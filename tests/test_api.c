/*
 * tests/test_api: the HTTP API without sockets: api_handle() against a
 * fully migrated SQLite store in memory (c-style.md section 10).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "api/api.h"
#include "api/digest.h"
#include "core/arena.h"
#include "core/doc.h"
#include "server/store_sqlite.h"
#include "tests/fixture.h"
#include "tests/fixture_api.h"

struct env {
	struct store_sqlite *store;
	struct api_ctx ctx;
	struct fixture_fakes fakes;	/* ctx.env */
};

static int
fake_metrics(void *p, char **out, size_t *len)
{
	(void)p;
	*out = strdup("m 1\n");
	*len = 4;
	return *out != NULL ? 0 : -1;
}

static int
setup(void **state)
{
	struct env *env = calloc(1, sizeof(*env));
	struct err e = { 0 };

	if (env == NULL || store_sqlite_open(&env->store, ":memory:", false,
	    &e) != 0)
		return -1;
	fixture_api_ctx(&env->ctx, env->store, &env->fakes, 0);
	env->ctx.metrics = fake_metrics;
	*state = env;
	return 0;
}

static int
teardown(void **state)
{
	struct env *env = *state;

	store_sqlite_close(env->store);
	api_ctx_fini(&env->ctx);
	free(env);
	return 0;
}

struct call {
	int status;
	json_t *json;		/* parsed body, or NULL */
	char *body;
	const char *location;
	const char *allow;
	const char *content_type;
	char headers[512];	/* "Name: value\n"... */
};

static void
call_ex(struct call *c, struct env *env, const char *method,
    const char *target, const char *ctype, const char *body,
    const char *idem, const char *origin, const char *team, bool admin)
{
	struct arena a;
	struct api_req rq;
	struct api_resp rs;
	char path[1024];
	const char *q;
	int i;

	memset(c, 0, sizeof(*c));
	memset(&rq, 0, sizeof(rq));
	arena_init(&a, (size_t)32 << 20);
	q = strchr(target, '?');
	snprintf(path, sizeof(path), "%.*s", q != NULL ?
	    (int)(q - target) : (int)strlen(target), target);
	rq.method = method;
	rq.path = path;
	rq.query = q != NULL ? q + 1 : "";
	rq.content_type = ctype;
	rq.body = body;
	rq.body_len = body != NULL ? strlen(body) : 0;
	rq.idem_key = idem;
	rq.origin = origin;
	rq.team = team;
	rq.admin = admin;
	rq.arena = &a;
	api_handle(&env->ctx, &rq, &rs);
	c->status = rs.status;
	c->content_type = rs.content_type;
	c->body = calloc(1, rs.body_len + 1);
	assert_non_null(c->body);
	if (rs.body_len > 0)
		memcpy(c->body, rs.body, rs.body_len);
	c->json = json_loads(c->body, 0, NULL);
	for (i = 0; i < rs.nheaders; i++) {
		size_t n = strlen(c->headers);

		snprintf(c->headers + n, sizeof(c->headers) - n, "%s: %s\n",
		    rs.headers[i].name, rs.headers[i].value);
		if (strcmp(rs.headers[i].name, "Location") == 0)
			c->location = strstr(c->headers + n, ": ") + 2;
		if (strcmp(rs.headers[i].name, "Allow") == 0)
			c->allow = strstr(c->headers + n, ": ") + 2;
	}
	/* Terminate header values in place for location/allow. */
	for (i = 0; c->headers[i] != '\0'; i++)
		if (c->headers[i] == '\n')
			c->headers[i] = '\0';
	api_resp_fini(&rs);
	arena_fini(&a);
}

static void
call(struct call *c, struct env *env, const char *method, const char *target,
    const char *ctype, const char *body)
{
	call_ex(c, env, method, target, ctype, body, NULL, NULL, "default",
	    true);
}

static void
call_fini(struct call *c)
{
	json_decref(c->json);
	free(c->body);
}

static const char *
jstr(json_t *j, const char *key)
{
	return json_string_value(json_object_get(j, key));
}

static void
assert_problem(struct call *c, int status, const char *detail_part)
{
	if (c->status != status)
		fail_msg("status %d, want %d: %s", c->status, status, c->body);
	assert_string_equal(c->content_type, "application/problem+json");
	assert_non_null(c->json);
	assert_int_equal(json_integer_value(json_object_get(c->json,
	    "status")), status);
	assert_non_null(jstr(c->json, "type"));
	assert_non_null(jstr(c->json, "title"));
	if (strstr(jstr(c->json, "detail"), detail_part) == NULL)
		fail_msg("detail '%s' lacks '%s'", jstr(c->json, "detail"),
		    detail_part);
}

/* LoRA, so the memory estimate fits one GPU of any size used here. */
/* Gradient checkpointing keeps both well inside an 80 GB GPU, so the
   duplicate key is cfg_dup's only warning (without it, 8192 tokens of
   activations bring memory.low_headroom). */
static const char cfg_ok[] =
    "base_model: meta-llama/Llama-3.1-8B\nsequence_len: 4096\n"
    "learning_rate: 0.0002\n"
    "micro_batch_size: 1\ngradient_accumulation_steps: 4\n"
    "adapter: lora\nlora_r: 8\nlora_alpha: 16\nlora_target_linear: true\n"
    "gradient_checkpointing: true\n"
    "datasets:\n  - path: tatsu-lab/alpaca\n    type: alpaca\n";
static const char cfg_dup[] =
    "base_model: meta-llama/Llama-3.1-8B\nsequence_len: 4096\n"
    "learning_rate: 0.0002\n"
    "micro_batch_size: 1\ngradient_accumulation_steps: 4\n"
    "adapter: lora\nlora_r: 8\nlora_alpha: 16\nlora_target_linear: true\n"
    "gradient_checkpointing: true\n"
    "datasets:\n  - path: tatsu-lab/alpaca\n    type: alpaca\n"
    "sequence_len: 8192\n";

/* POST a YAML config and return the new id (static buffer). */
static const char *
post_yaml(struct env *env, const char *target, const char *yaml)
{
	static char id[32];
	struct call c;

	call(&c, env, "POST", target, "application/yaml", yaml);
	if (c.status != 201)
		fail_msg("POST %s: %d %s", target, c.status, c.body);
	snprintf(id, sizeof(id), "%s", jstr(c.json, "id"));
	call_fini(&c);
	return id;
}

static void
test_api__probes(void **state)
{
	struct env *env = *state;
	struct call c;

	call(&c, env, "GET", "/healthz", NULL, NULL);
	assert_int_equal(c.status, 200);
	assert_string_equal(jstr(c.json, "status"), "ok");
	call_fini(&c);
	call(&c, env, "GET", "/readyz", NULL, NULL);
	assert_int_equal(c.status, 200);
	assert_string_equal(jstr(c.json, "status"), "ready");
	call_fini(&c);
	call(&c, env, "GET", "/metrics", NULL, NULL);
	assert_int_equal(c.status, 200);
	assert_string_equal(c.body, "m 1\n");
	call_fini(&c);
	call(&c, env, "HEAD", "/healthz", NULL, NULL);
	assert_int_equal(c.status, 200);
	call_fini(&c);
}

static size_t
count_not_info(json_t *findings)
{
	size_t i, n = 0;

	for (i = 0; i < json_array_size(findings); i++)
		if (strcmp(jstr(json_array_get(findings, i), "severity"),
		    "info") != 0)
			n++;
	return n;
}

static json_t *
item_for_rule(json_t *items, const char *rule)
{
	size_t i;

	for (i = 0; i < json_array_size(items); i++)
		if (strcmp(jstr(json_array_get(items, i), "rule"), rule) == 0)
			return json_array_get(items, i);
	return NULL;
}

static void
test_api__post_json_stores_and_reads_back(void **state)
{
	struct env *env = *state;
	struct call c, g;
	char target[64];
	json_t *body = json_pack("{s:s, s:{s:i, s:s}, s:s, s:{s:s}}",
	    "config", cfg_dup, "context", "gpus", 8, "gpu", "a100",
	    "name", "llama-8b.yaml", "labels", "owner", "ml-infra");
	char *text = json_dumps(body, 0);

	call(&c, env, "POST", "/v1/checks", "application/json", text);
	free(text);
	json_decref(body);
	assert_int_equal(c.status, 201);
	assert_non_null(c.location);
	snprintf(target, sizeof(target), "/v1/checks/%s", jstr(c.json, "id"));
	assert_string_equal(c.location, target);
	assert_string_equal(jstr(c.json, "verdict"), "warn");
	assert_string_equal(jstr(c.json, "name"), "llama-8b.yaml");
	assert_string_equal(jstr(c.json, "team"), "default");
	assert_string_equal(jstr(json_object_get(c.json, "labels"), "owner"),
	    "ml-infra");
	assert_string_equal(jstr(json_object_get(c.json, "context"), "gpu"),
	    "a100-80gb");
	/* One warning (the duplicate key); the rest are info notes on
	   what Axolotl fills in (eval_batch_size, dataloader, ...). */
	assert_int_equal(count_not_info(json_object_get(c.json, "findings")),
	    1);
	assert_non_null(strstr(jstr(c.json, "created_at"), "2025-12-02T"));
	call(&g, env, "GET", target, NULL, NULL);
	assert_int_equal(g.status, 200);
	assert_true(json_equal(c.json, g.json));
	call_fini(&g);
	call_fini(&c);
}

static void
test_api__post_yaml_takes_context_from_query(void **state)
{
	struct env *env = *state;
	struct call c;

	call(&c, env, "POST", "/v1/checks?gpus=16&nodes=2&gpu=h200&name=x%2Fy"
	    ".yaml", "application/yaml; charset=utf-8", cfg_ok);
	assert_int_equal(c.status, 201);
	assert_string_equal(jstr(c.json, "verdict"), "pass");
	assert_string_equal(jstr(c.json, "name"), "x/y.yaml");
	assert_int_equal(json_integer_value(json_object_get(json_object_get(
	    c.json, "context"), "gpus_per_node")), 8);
	assert_string_equal(jstr(json_object_get(c.json, "context"),
	    "interconnect"), "infiniband");
	call_fini(&c);
}

static void
test_api__dry_run_stores_nothing(void **state)
{
	struct env *env = *state;
	struct call c, l;

	call(&c, env, "POST", "/v1/checks?dry_run=true", "application/yaml",
	    cfg_dup);
	assert_int_equal(c.status, 200);
	assert_null(json_object_get(c.json, "id"));
	assert_string_equal(jstr(c.json, "verdict"), "warn");
	call_fini(&c);
	call(&l, env, "GET", "/v1/checks", NULL, NULL);
	assert_int_equal(l.status, 200);
	assert_int_equal(json_array_size(json_object_get(l.json, "items")), 0);
	assert_true(json_is_null(json_object_get(l.json, "next_cursor")));
	call_fini(&l);
}

static void
test_api__idempotency_key(void **state)
{
	struct env *env = *state;
	struct call a, b, c;

	call_ex(&a, env, "POST", "/v1/checks?name=a", "application/yaml",
	    cfg_ok, "key-1", NULL, "default", true);
	assert_int_equal(a.status, 201);
	call_ex(&b, env, "POST", "/v1/checks?name=a", "application/yaml",
	    cfg_ok, "key-1", NULL, "default", true);
	assert_int_equal(b.status, 200);
	assert_string_equal(jstr(a.json, "id"), jstr(b.json, "id"));
	assert_string_equal(a.location, b.location);
	call_ex(&c, env, "POST", "/v1/checks?name=a", "application/yaml",
	    cfg_dup, "key-1", NULL, "default", true);
	assert_problem(&c, 409, "different request");
	call_fini(&a);
	call_fini(&b);
	call_fini(&c);
	call_ex(&c, env, "POST", "/v1/checks", "application/yaml", cfg_ok,
	    "bad key with spaces", NULL, "default", true);
	assert_problem(&c, 400, "Idempotency-Key");
	call_fini(&c);
}

/* Error statuses a client can cause. */
struct bad_req {
	const char *name;
	const char *method;
	const char *target;
	const char *ctype;
	const char *body;
	int status;
	const char *detail;
	unsigned line;		/* problem line, 0: none expected */
};

static const struct bad_req bad_reqs[] = {
	{ "yaml_syntax", "POST", "/v1/checks", "application/yaml",
	  "a: 1\n b: 2\n", 400, "mapping values", 2 },
	{ "yaml_list_root", "POST", "/v1/checks", "application/yaml",
	  "- a\n", 400, "root must be a mapping", 1 },
	{ "json_syntax", "POST", "/v1/checks", "application/json",
	  "{\"config\": ", 400, "", 1 },
	{ "json_not_object", "POST", "/v1/checks", "application/json",
	  "[1]", 400, "JSON object", 0 },
	{ "json_duplicate_key", "POST", "/v1/checks", "application/json",
	  "{\"config\": \"a: 1\", \"config\": \"b: 2\"}", 400, "duplicate", 1 },
	{ "json_no_config", "POST", "/v1/checks", "application/json",
	  "{\"name\": \"x\"}", 422, "config is required", 0 },
	{ "json_unknown_field", "POST", "/v1/checks", "application/json",
	  "{\"config\": \"a: 1\", \"gpus\": 8}", 422, "unknown field 'gpus'",
	  0 },
	{ "json_bad_gpus", "POST", "/v1/checks", "application/json",
	  "{\"config\": \"a: 1\", \"context\": {\"gpus\": 0}}", 422,
	  "context.gpus must be an integer from 1", 0 },
	{ "json_gpus_string", "POST", "/v1/checks", "application/json",
	  "{\"config\": \"a: 1\", \"context\": {\"gpus\": \"8\"}}", 422,
	  "context.gpus must be an integer", 0 },
	{ "unknown_gpu", "POST", "/v1/checks?gpu=h900", "application/yaml",
	  "a: 1\n", 422, "unknown gpu 'h900'", 0 },
	{ "nodes_do_not_divide", "POST", "/v1/checks?gpus=3&nodes=2",
	  "application/yaml", "a: 1\n", 422, "multiple of nodes", 0 },
	{ "yaml_query_gpus_zero", "POST", "/v1/checks?gpus=0",
	  "application/yaml", "a: 1\n", 422, "gpus must be", 0 },
	{ "too_deep", "POST", "/v1/checks", "application/yaml",
	  "a: [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["
	  "[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]"
	  "]]]\n", 413, "max_depth", 1 },
	{ "no_content_type", "POST", "/v1/checks", NULL, "a: 1\n", 415,
	  "Content-Type", 0 },
	{ "xml", "POST", "/v1/checks", "application/xml", "<a/>", 415,
	  "application/xml", 0 },
	{ "unknown_query", "GET", "/v1/checks?colour=red", NULL, NULL, 400,
	  "unknown query parameter 'colour'", 0 },
	{ "repeated_query", "GET", "/v1/checks?limit=1&limit=2", NULL, NULL,
	  400, "repeated", 0 },
	{ "bad_percent", "GET", "/v1/checks?name=%zz", NULL, NULL, 400,
	  "percent-encoding", 0 },
	{ "limit_too_big", "GET", "/v1/checks?limit=201", NULL, NULL, 400,
	  "limit must be", 0 },
	{ "bad_cursor", "GET", "/v1/checks?cursor=nope", NULL, NULL, 400,
	  "cursor", 0 },
	{ "bad_since", "GET", "/v1/checks?since=yesterday", NULL, NULL, 400,
	  "RFC 3339", 0 },
	{ "bad_verdict", "GET", "/v1/checks?verdict=ok", NULL, NULL, 400,
	  "verdict must be", 0 },
	{ "unknown_check", "GET", "/v1/checks/01ARZ3NDEKTSV4RRFFQ69G5FAV",
	  NULL, NULL, 404, "no such check", 0 },
	{ "malformed_id", "GET", "/v1/checks/../../etc/passwd", NULL, NULL,
	  400, "'..' segment", 0 },
	{ "unknown_route", "GET", "/v2/checks", NULL, NULL, 404, "no such",
	  0 },
	{ "diff_without_against", "GET",
	  "/v1/checks/01ARZ3NDEKTSV4RRFFQ69G5FAV/diff", NULL, NULL, 400,
	  "against", 0 },
	{ "unknown_rule", "GET", "/v1/rules/no.such_rule", NULL, NULL, 404,
	  "no rule", 0 },
	{ "put_checks", "PUT", "/v1/checks", NULL, NULL, 405, "PUT", 0 },
	{ "post_healthz", "POST", "/healthz", "application/json", "{}", 405,
	  "POST", 0 },
	{ "control_in_name", "GET", "/v1/configs/a%01b/checks", NULL, NULL,
	  400, "control character", 0 },
	{ "estimate_no_type", "POST", "/v1/estimate", NULL, "a: 1\n", 415,
	  "Content-Type", 0 },
	{ "estimate_dry_run", "POST", "/v1/estimate?dry_run=true",
	  "application/yaml", "a: 1\n", 400, "unknown query parameter", 0 },
};

static void
test_api__bad_request_gets_a_problem(void **state)
{
	struct env *env = ((void **)*state)[0];
	const struct bad_req *b = ((void **)*state)[1];
	struct call c;

	call(&c, env, b->method, b->target, b->ctype, b->body);
	if (c.status != b->status)
		fail_msg("%s: %d, want %d: %s", b->name, c.status, b->status,
		    c.body);
	assert_problem(&c, b->status, b->detail);
	if (b->line > 0)
		assert_int_equal(json_integer_value(json_object_get(c.json,
		    "line")), b->line);
	if (b->status == 405)
		assert_non_null(c.allow);
	call_fini(&c);
}

static void
test_api__pagination_is_stable_while_inserting(void **state)
{
	struct env *env = *state;
	char seen[16][32], target[256];
	const char *cursor = NULL;
	char cur[128];
	int nseen = 0, page, i, k;

	for (i = 0; i < 6; i++)
		post_yaml(env, "/v1/checks?name=pg", cfg_ok);
	for (page = 0; page < 4; page++) {
		struct call c;
		json_t *items, *it;
		size_t j;

		if (cursor == NULL)
			snprintf(target, sizeof(target),
			    "/v1/checks?name=pg&limit=2");
		else
			snprintf(target, sizeof(target),
			    "/v1/checks?name=pg&limit=2&cursor=%s", cursor);
		call(&c, env, "GET", target, NULL, NULL);
		assert_int_equal(c.status, 200);
		items = json_object_get(c.json, "items");
		json_array_foreach(items, j, it) {
			for (k = 0; k < nseen; k++)
				assert_string_not_equal(seen[k],
				    jstr(it, "id"));
			snprintf(seen[nseen++], sizeof(seen[0]), "%s",
			    jstr(it, "id"));
		}
		/* Newer checks arrive between pages: they must not show up
		   in later pages nor shift them. */
		post_yaml(env, "/v1/checks?name=pg", cfg_ok);
		if (json_is_null(json_object_get(c.json, "next_cursor"))) {
			call_fini(&c);
			break;
		}
		snprintf(cur, sizeof(cur), "%s", jstr(c.json, "next_cursor"));
		cursor = cur;
		call_fini(&c);
	}
	assert_int_equal(page, 2);	/* pages 0, 1, 2 */
	assert_int_equal(nseen, 6);
	for (k = 1; k < nseen; k++)
		assert_true(strcmp(seen[k - 1], seen[k]) > 0);
}

static void
test_api__filters(void **state)
{
	struct env *env = *state;
	struct call c;

	post_yaml(env, "/v1/checks?name=f1", cfg_ok);
	post_yaml(env, "/v1/checks?name=f1", cfg_dup);
	post_yaml(env, "/v1/checks?name=f2", cfg_dup);
	call(&c, env, "GET", "/v1/checks?verdict=warn", NULL, NULL);
	assert_int_equal(json_array_size(json_object_get(c.json, "items")), 2);
	call_fini(&c);
	call(&c, env, "GET", "/v1/checks?rule=schema.duplicate_key&name=f1",
	    NULL, NULL);
	assert_int_equal(json_array_size(json_object_get(c.json, "items")), 1);
	call_fini(&c);
	/* The rule filter matches error and warning findings; info notes
	   (on every check here) are counted by the stats, not indexed. */
	call(&c, env, "GET", "/v1/checks?rule=batch.dataloader_defaults",
	    NULL, NULL);
	assert_int_equal(c.status, 200);
	assert_int_equal(json_array_size(json_object_get(c.json, "items")), 0);
	call_fini(&c);
	call(&c, env, "GET", "/v1/stats/rules", NULL, NULL);
	assert_int_equal(c.status, 200);
	assert_non_null(strstr(c.body, "batch.dataloader_defaults"));
	call_fini(&c);
	call(&c, env, "GET", "/v1/checks?since=2025-12-02T00:00:00Z&until="
	    "2025-12-03T00:00:00Z", NULL, NULL);
	assert_int_equal(json_array_size(json_object_get(c.json, "items")), 3);
	call_fini(&c);
	call(&c, env, "GET", "/v1/checks?since=2030-01-01", NULL, NULL);
	assert_int_equal(json_array_size(json_object_get(c.json, "items")), 0);
	call_fini(&c);
}

static void
test_api__history_and_diff(void **state)
{
	struct env *env = *state;
	char first[32], second[32], target[128];
	struct call c;
	json_t *items, *ch;

	snprintf(first, sizeof(first), "%s", post_yaml(env,
	    "/v1/checks?name=team%2Fllama.yaml", cfg_ok));
	snprintf(second, sizeof(second), "%s", post_yaml(env,
	    "/v1/checks?name=team%2Fllama.yaml", cfg_dup));
	call(&c, env, "GET", "/v1/configs/team%2Fllama.yaml/checks", NULL,
	    NULL);
	assert_int_equal(c.status, 200);
	assert_string_equal(jstr(c.json, "name"), "team/llama.yaml");
	items = json_object_get(c.json, "items");
	assert_int_equal(json_array_size(items), 2);
	assert_string_equal(jstr(json_array_get(items, 0), "id"), second);
	assert_string_equal(jstr(json_array_get(items, 0), "previous_id"),
	    first);
	ch = json_object_get(json_array_get(items, 0), "changes");
	assert_true(json_is_true(json_object_get(ch, "config_changed")));
	assert_string_equal(jstr(json_object_get(ch, "verdict"), "from"),
	    "pass");
	assert_string_equal(jstr(json_object_get(ch, "verdict"), "to"),
	    "warn");
	assert_int_equal(json_array_size(json_object_get(ch,
	    "findings_added")), 1);
	assert_true(json_is_null(json_object_get(json_array_get(items, 1),
	    "changes")));
	call_fini(&c);
	snprintf(target, sizeof(target), "/v1/checks/%s/diff?against=%s",
	    first, second);
	call(&c, env, "GET", target, NULL, NULL);
	assert_int_equal(c.status, 200);
	assert_string_equal(jstr(c.json, "id"), first);
	assert_int_equal(json_array_size(json_object_get(c.json,
	    "findings_removed")), 1);
	assert_int_equal(json_array_size(json_object_get(c.json,
	    "findings_added")), 0);
	/* The duplicate key makes the second run 8192 tokens long, not
	   4096: the first needs less memory. */
	assert_true(json_is_number(json_object_get(c.json,
	    "memory_delta_gib")));
	assert_true(json_number_value(json_object_get(c.json,
	    "memory_delta_gib")) < -0.5);
	call_fini(&c);
}

static void
test_api__rule_stats(void **state)
{
	struct env *env = *state;
	struct call c;
	json_t *it;

	post_yaml(env, "/v1/checks", cfg_dup);
	post_yaml(env, "/v1/checks", cfg_dup);
	post_yaml(env, "/v1/checks", cfg_ok);
	call(&c, env, "GET", "/v1/stats/rules?since=2025-01-01T00:00:00Z",
	    NULL, NULL);
	assert_int_equal(c.status, 200);
	it = item_for_rule(json_object_get(c.json, "items"),
	    "schema.duplicate_key");
	assert_non_null(it);
	assert_int_equal(json_integer_value(json_object_get(it, "findings")),
	    2);
	assert_int_equal(json_integer_value(json_object_get(json_object_get(
	    json_object_get(it, "by_verdict"), "warn"), "checks")), 2);
	call_fini(&c);
}

static void
test_api__teams_see_their_own(void **state)
{
	struct env *env = *state;
	struct call a, b;
	char target[64];

	call_ex(&a, env, "POST", "/v1/checks", "application/yaml", cfg_ok,
	    NULL, NULL, "red", false);
	assert_int_equal(a.status, 201);
	snprintf(target, sizeof(target), "/v1/checks/%s", jstr(a.json, "id"));
	call_ex(&b, env, "GET", target, NULL, NULL, NULL, NULL, "blue", false);
	assert_problem(&b, 404, "no such check");
	call_fini(&b);
	call_ex(&b, env, "GET", "/v1/checks", NULL, NULL, NULL, NULL, "blue",
	    false);
	assert_int_equal(json_array_size(json_object_get(b.json, "items")), 0);
	call_fini(&b);
	call_ex(&b, env, "GET", target, NULL, NULL, NULL, NULL, "red", false);
	assert_int_equal(b.status, 200);
	call_fini(&b);
	call_fini(&a);
}

static void
test_api__catalogs(void **state)
{
	struct env *env = *state;
	struct call c;
	json_t *it;
	size_t i;
	bool found = false;

	call(&c, env, "GET", "/v1/rules", NULL, NULL);
	assert_int_equal(c.status, 200);
	assert_true(json_array_size(json_object_get(c.json, "items")) >= 1);
	call_fini(&c);
	call(&c, env, "GET", "/v1/rules/schema.duplicate_key", NULL, NULL);
	assert_int_equal(c.status, 200);
	assert_string_equal(jstr(c.json, "severity"), "warning");
	call_fini(&c);
	call(&c, env, "GET", "/v1/catalog/gpus", NULL, NULL);
	assert_int_equal(json_array_size(json_object_get(c.json, "items")), 27);
	call_fini(&c);
	call(&c, env, "GET", "/v1/catalog/models", NULL, NULL);
	assert_true(json_array_size(json_object_get(c.json, "items")) >= 150);
	call_fini(&c);
	call(&c, env, "GET", "/v1/keys", NULL, NULL);
	assert_int_equal(c.status, 200);
	/* 388 schema keys and 118 plugin-only ones, each once. */
	assert_int_equal(json_array_size(json_object_get(c.json, "items")),
	    506);
	json_array_foreach(json_object_get(c.json, "items"), i, it) {
		if (i > 0)
			assert_true(strcmp(jstr(json_array_get(json_object_get(
			    c.json, "items"), i - 1), "key"), jstr(it, "key"))
			    < 0);
		if (strcmp(jstr(it, "key"), "bf16") != 0)
			continue;
		found = true;
		assert_string_equal(jstr(it, "default"), "auto");
		assert_string_equal(json_string_value(json_array_get(
		    json_object_get(it, "allowed"), 0)), "auto");
	}
	assert_true(found);
	call_fini(&c);
}

static void
test_api__cors(void **state)
{
	struct env *env = *state;
	static const char *const origins[] = { "https://form.example" };
	struct call c;

	env->ctx.cors_origins = origins;
	env->ctx.ncors = 1;
	call_ex(&c, env, "OPTIONS", "/v1/checks", NULL, NULL, NULL,
	    "https://form.example", "default", true);
	assert_int_equal(c.status, 204);
	assert_non_null(strstr(c.body, "") );
	call_fini(&c);
	call_ex(&c, env, "OPTIONS", "/v1/checks", NULL, NULL, NULL,
	    "https://evil.example", "default", true);
	assert_problem(&c, 403, "not allowed");
	call_fini(&c);
	call_ex(&c, env, "GET", "/healthz", NULL, NULL, NULL,
	    "https://evil.example", "default", true);
	assert_int_equal(c.status, 200);
	assert_null(strstr(c.headers, "Access-Control-Allow-Origin"));
	call_fini(&c);
	call_ex(&c, env, "GET", "/healthz", NULL, NULL, NULL,
	    "https://form.example", "default", true);
	assert_non_null(strstr(c.headers, "Access-Control-Allow-Origin"));
	call_fini(&c);
	env->ctx.ncors = 0;
}

/* RFC 4231 test case 2, and the constant-time comparison's answers. */
static void
test_api__hmac_and_equal(void **state)
{
	char out[65];

	(void)state;
	assert_int_equal(digest_hmac_sha256_hex(out, "Jefe",
	    "what do ya want for nothing?", 28), 0);
	assert_string_equal(out, "5bdcc146bf60754e6a042426089575c75a003f08"
	    "9d2739839dec58b964ec3843");
	assert_true(digest_equal("abc", "abc"));
	assert_false(digest_equal("abc", "abd"));
	assert_false(digest_equal("abc", "abcd"));
	assert_false(digest_equal("abcd", "abc"));
	assert_false(digest_equal("", "a"));
}

static void
test_api__ci_needs_a_secret_and_a_signature(void **state)
{
	struct env *env = *state;
	struct call c;

	call(&c, env, "POST", "/v1/ci/checks", "application/json", "{}");
	assert_problem(&c, 503, "not configured");
	call_fini(&c);
	env->ctx.ci_secret = "0123456789abcdef";
	call(&c, env, "POST", "/v1/ci/checks", "application/json", "{}");
	assert_problem(&c, 401, "X-Preflight-Timestamp");
	assert_non_null(strstr(c.headers, "WWW-Authenticate"));
	call_fini(&c);
	env->ctx.ci_secret = NULL;
}

/* Every route served is a path+method in openapi.yaml and back. */
static void
test_api__routes_match_openapi(void **state)
{
	const char *const *routes = api_routes();
	const struct doc_pair *paths;
	struct limits lim;
	struct arena a;
	struct err e = { 0 };
	struct doc *d;
	size_t len, i, j, nspec = 0, nserved = 0;
	char *buf;

	(void)state;
	buf = fixture_read("openapi.yaml", &len);
	assert_non_null(buf);
	limits_default(&lim);
	arena_init(&a, (size_t)64 << 20);
	assert_int_equal(doc_parse(&d, buf, len, &lim, &a, &e), 0);
	paths = doc_map_get(d->root, "paths");
	assert_non_null(paths);
	for (i = 0; routes[i] != NULL; i++)
		nserved++;
	for (i = 0; i < paths->value->n; i++) {
		const struct doc_pair *p = &paths->value->pairs[i];

		for (j = 0; j < p->value->n; j++) {
			char want[160], up[16];
			const char *m = p->value->pairs[j].key->text;
			size_t k;
			bool found = false;

			if (strcmp(m, "parameters") == 0)
				continue;
			for (k = 0; m[k] != '\0' && k + 1 < sizeof(up); k++)
				up[k] = (char)(m[k] - 32);
			up[k] = '\0';
			snprintf(want, sizeof(want), "%s %s", up,
			    p->key->text);
			for (k = 0; routes[k] != NULL; k++)
				if (strcmp(routes[k], want) == 0)
					found = true;
			if (!found)
				fail_msg("openapi.yaml has %s, the server "
				    "does not serve it", want);
			nspec++;
		}
	}
	arena_fini(&a);
	free(buf);
	assert_int_equal(nspec, nserved);
}

int
main(void)
{
	static const struct CMUnitTest fixed[] = {
		cmocka_unit_test_setup_teardown(test_api__probes, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(
		    test_api__post_json_stores_and_reads_back, setup, teardown),
		cmocka_unit_test_setup_teardown(
		    test_api__post_yaml_takes_context_from_query, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_api__dry_run_stores_nothing,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_api__idempotency_key,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(
		    test_api__pagination_is_stable_while_inserting, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_api__filters, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_api__history_and_diff,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_api__rule_stats, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_api__teams_see_their_own,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_api__catalogs, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_api__cors, setup,
		    teardown),
		cmocka_unit_test(test_api__routes_match_openapi),
		cmocka_unit_test(test_api__hmac_and_equal),
		cmocka_unit_test_setup_teardown(
		    test_api__ci_needs_a_secret_and_a_signature, setup,
		    teardown),
	};
	size_t nf = sizeof(fixed) / sizeof(fixed[0]);
	size_t nb = sizeof(bad_reqs) / sizeof(bad_reqs[0]);
	struct CMUnitTest *t = calloc(nf + nb, sizeof(*t));
	char (*names)[96] = calloc(nb, sizeof(*names));
	void *(*states)[2] = calloc(nb, sizeof(*states));
	struct env *shared_env;
	size_t i, n = 0;
	int failed;

	if (t == NULL || names == NULL || states == NULL ||
	    setup((void **)&shared_env) != 0)
		return 1;
	for (i = 0; i < nf; i++)
		t[n++] = fixed[i];
	for (i = 0; i < nb; i++) {
		snprintf(names[i], sizeof(names[i]),
		    "test_api__bad_request_gets_a_problem[%s]",
		    bad_reqs[i].name);
		states[i][0] = shared_env;
		states[i][1] = (void *)(uintptr_t)&bad_reqs[i];
		t[n].name = names[i];
		t[n].test_func = test_api__bad_request_gets_a_problem;
		t[n++].initial_state = states[i];
	}
	failed = _cmocka_run_group_tests("api", t, n, NULL, NULL);
	teardown((void **)&shared_env);
	free(t);
	free(names);
	free(states);
	return failed;
}
