/*
 * tests/test_ui: the review pages below the browser (issue #18): the page
 * and asset routes, their headers (CSP, ETag, 304), the canonical-target
 * rules on them, what the embedded files may not contain, and the API
 * additions the pages read: GET /v1/checks/{id}/config (team rules) and
 * the context and per-term memory changes of the history and the diff.
 * tests/ui_browser.py drives the same pages in Chromium.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "api/api.h"
#include "api/ui.h"
#include "core/arena.h"
#include "server/store_sqlite.h"
#include "tests/fixture.h"
#include "tests/fixture_api.h"

struct env {
	struct store_sqlite *store;
	struct api_ctx ctx;
	struct fixture_fakes fakes;
};

static int
setup(void **state)
{
	struct env *env = calloc(1, sizeof(*env));
	struct err e = { 0 };

	if (env == NULL || store_sqlite_open(&env->store, ":memory:", false,
	    &e) != 0)
		return -1;
	fixture_api_ctx(&env->ctx, env->store, &env->fakes, 7);
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

/* One answer, copied out of the response. */
struct got {
	int status;
	char type[64];
	char cache[64];
	char *body;		/* NUL-terminated copy */
	size_t len;
	json_t *json;		/* parsed body, or NULL */
	char headers[2048];	/* "Name: value\n"... */
};

struct ask {
	const char *method;	/* default GET */
	const char *target;	/* path?query */
	const char *team;	/* default "default" */
	bool admin;
	const char *inm;	/* If-None-Match */
	const char *ctype;
	const char *body;
};

static void
got_fini(struct got *g)
{
	free(g->body);
	json_decref(g->json);
	memset(g, 0, sizeof(*g));
}

static void
request(struct got *g, struct env *env, const struct ask *k)
{
	struct arena a;
	struct api_req rq;
	struct api_resp rs;
	char path[1024];
	const char *q = strchr(k->target, '?');
	int i;

	memset(g, 0, sizeof(*g));
	memset(&rq, 0, sizeof(rq));
	arena_init(&a, (size_t)32 << 20);
	snprintf(path, sizeof(path), "%.*s", q != NULL ?
	    (int)(q - k->target) : (int)strlen(k->target), k->target);
	rq.method = k->method != NULL ? k->method : "GET";
	rq.head = strcmp(rq.method, "HEAD") == 0;
	rq.path = path;
	rq.query = q != NULL ? q + 1 : "";
	rq.team = k->team != NULL ? k->team : "default";
	rq.admin = k->admin;
	rq.if_none_match = k->inm;
	rq.content_type = k->ctype;
	rq.body = k->body;
	rq.body_len = k->body != NULL ? strlen(k->body) : 0;
	rq.arena = &a;
	api_handle(&env->ctx, &rq, &rs);
	g->status = rs.status;
	snprintf(g->type, sizeof(g->type), "%s", rs.content_type != NULL ?
	    rs.content_type : "");
	snprintf(g->cache, sizeof(g->cache), "%s", rs.cache_control != NULL ?
	    rs.cache_control : "");
	g->body = calloc(1, rs.body_len + 1);
	assert_non_null(g->body);
	if (rs.body_len > 0)
		memcpy(g->body, rs.body, rs.body_len);
	g->len = rs.body_len;
	g->json = json_loadb(g->body, g->len, 0, NULL);
	for (i = 0; i < rs.nheaders; i++) {
		size_t n = strlen(g->headers);

		snprintf(g->headers + n, sizeof(g->headers) - n, "%s: %s\n",
		    rs.headers[i].name, rs.headers[i].value);
	}
	api_resp_fini(&rs);
	arena_fini(&a);
}

/* The value of header name in g (into out), or NULL. */
static const char *
header(char *out, size_t cap, const struct got *g, const char *name)
{
	size_t n = strlen(name);
	const char *p = g->headers;

	while (*p != '\0') {
		const char *end = strchr(p, '\n');

		if (strncmp(p, name, n) == 0 && p[n] == ':') {
			snprintf(out, cap, "%.*s", (int)(end - p) - (int)n - 2,
			    p + n + 2);
			return out;
		}
		p = end + 1;
	}
	return NULL;
}

static const struct ui_asset *
must_find(const char *name)
{
	const struct ui_asset *a = ui_asset_find(name);

	if (a == NULL)
		fail_msg("ui/%s is not embedded", name);
	return a;
}

/* Every page route answers the HTML shell with the strict policy. */
static void
test_ui__pages_serve_the_shell(void **state)
{
	static const char *const pages[] = { "/", "/checks/01KAAAAAAAAAAAAAAAAAAAAAAA",
	    "/checks/01KAAAAAAAAAAAAAAAAAAAAAAA/diff/01KBBBBBBBBBBBBBBBBBBBBBBB",
	    "/configs/org%2Fllama.yaml", "/try", "/rules",
	    "/rules/schema.duplicate_key", "/?verdict=fail&cursor=x" };
	const struct ui_asset *shell = must_find("index.html");
	struct env *env = *state;
	char v[512];
	size_t i;

	for (i = 0; i < sizeof(pages) / sizeof(pages[0]); i++) {
		struct got g;
		struct ask k = { .target = pages[i] };

		request(&g, env, &k);
		if (g.status != 200)
			fail_msg("%s: %d %s", pages[i], g.status, g.body);
		assert_string_equal(g.type, "text/html; charset=utf-8");
		assert_int_equal(g.len, shell->len);
		assert_memory_equal(g.body, shell->data, shell->len);
		assert_string_equal(g.cache, "no-cache");
		assert_non_null(header(v, sizeof(v), &g, "ETag"));
		assert_string_equal(v, shell->etag);
		assert_non_null(header(v, sizeof(v), &g,
		    "Content-Security-Policy"));
		assert_non_null(strstr(v, "default-src 'self'"));
		assert_non_null(strstr(v, "frame-ancestors 'none'"));
		assert_non_null(strstr(v, "object-src 'none'"));
		assert_null(strstr(v, "unsafe-inline"));
		assert_null(strstr(v, "unsafe-eval"));
		assert_null(strstr(v, "http"));	/* no other host */
		got_fini(&g);
	}
}

/* Assets: type, ETag, 304 on a matching If-None-Match, HEAD, 404. */
static void
test_ui__assets_revalidate_with_etags(void **state)
{
	struct env *env = *state;
	const struct ui_asset *js = must_find("app.js");
	char weak[64], list[128], v[256];
	struct got g;
	struct ask k = { .target = "/ui/app.js" };

	request(&g, env, &k);
	assert_int_equal(g.status, 200);
	assert_string_equal(g.type, "text/javascript; charset=utf-8");
	assert_int_equal(g.len, js->len);
	assert_non_null(header(v, sizeof(v), &g, "ETag"));
	assert_string_equal(v, js->etag);
	got_fini(&g);

	k.inm = js->etag;
	request(&g, env, &k);
	assert_int_equal(g.status, 304);
	assert_int_equal(g.len, 0);
	assert_string_equal(g.cache, "no-cache");
	assert_non_null(header(v, sizeof(v), &g, "ETag"));
	got_fini(&g);

	snprintf(weak, sizeof(weak), "W/%s", js->etag);
	snprintf(list, sizeof(list), "\"0123\", %s", weak);
	k.inm = list;
	request(&g, env, &k);
	assert_int_equal(g.status, 304);
	got_fini(&g);

	k.inm = "\"0123456789abcdef0123\"";	/* someone else's version */
	request(&g, env, &k);
	assert_int_equal(g.status, 200);
	assert_int_equal(g.len, js->len);
	got_fini(&g);

	k.inm = NULL;
	k.method = "HEAD";
	request(&g, env, &k);
	assert_int_equal(g.status, 200);
	assert_int_equal(g.len, 0);
	assert_string_equal(g.type, "text/javascript; charset=utf-8");
	got_fini(&g);

	k.method = NULL;
	k.target = "/ui/nothing.js";
	request(&g, env, &k);
	assert_int_equal(g.status, 404);
	assert_string_equal(g.type, "application/problem+json");
	assert_string_equal(g.cache, "");	/* the server's no-store */
	got_fini(&g);

	k.target = "/ui/app.css";
	request(&g, env, &k);
	assert_int_equal(g.status, 200);
	assert_string_equal(g.type, "text/css; charset=utf-8");
	got_fini(&g);
}

static void
test_ui__etag_matching(void **state)
{
	static const struct {
		const char *inm;
		bool match;
	} cases[] = {
		{ "\"abc\"", true }, { "W/\"abc\"", true }, { "*", true },
		{ "\"x\", \"abc\"", true }, { " \"x\" ,W/\"abc\" ", true },
		{ "\"abcd\"", false }, { "\"ab\"", false }, { "", false },
		{ "abc", false }, { "\"abc", false }, { ",,,", false },
		{ "W/", false }, { "\"x\",", false },
	};
	size_t i;

	(void)state;
	assert_false(ui_etag_matches(NULL, "\"abc\""));
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		if (ui_etag_matches(cases[i].inm, "\"abc\"") != cases[i].match)
			fail_msg("If-None-Match [%s]: expected %s", cases[i].inm,
			    cases[i].match ? "a match" : "no match");
}

/* The page routes keep the canonical-target rules of every route. */
static void
test_ui__page_targets_are_canonical(void **state)
{
	static const struct {
		const char *method;
		const char *target;
		int status;
	} cases[] = {
		{ "GET", "/%74ry", 400 }, { "GET", "/./try", 400 },
		{ "GET", "/rules/%2e%2e", 400 }, { "GET", "/ui/%61pp.js", 400 },
		{ "GET", "/ui/..", 400 }, { "GET", "/checks/a%00", 400 },
		{ "GET", "/try/", 404 }, { "GET", "/configs", 404 },
		{ "GET", "/ui/", 404 }, { "GET", "//", 404 },
		{ "POST", "/", 405 }, { "POST", "/try", 405 },
		{ "GET", "/ui/app.js%2F..", 404 },
	};
	struct env *env = *state;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct got g;
		struct ask k = { .method = cases[i].method,
		    .target = cases[i].target };

		request(&g, env, &k);
		if (g.status != cases[i].status)
			fail_msg("%s %s: %d, expected %d", cases[i].method,
			    cases[i].target, g.status, cases[i].status);
		got_fini(&g);
	}
}

static size_t
count(const struct ui_asset *a, const char *needle)
{
	size_t n = strlen(needle), i, k = 0;

	for (i = 0; i + n <= a->len; i++)
		if (memcmp(a->data + i, needle, n) == 0)
			k++;
	return k;
}

/* needle, other than as the SVG namespace name (which is never fetched). */
static bool
contains(const struct ui_asset *a, const char *needle)
{
	if (strcmp(needle, "http://") == 0)
		return count(a, needle) > count(a,
		    "'http://www.w3.org/2000/svg'");
	return count(a, needle) > 0;
}

/*
 * What the embedded files may not hold: inline script or style (the CSP
 * would refuse it), HTML built from strings (data is attacker-controlled),
 * eval, persistent token storage, another host.  And every file the HTML
 * or a script names is embedded, all under 300 KB.
 */
static void
test_ui__assets_hold_no_holes(void **state)
{
	static const char *const never_js[] = { "innerHTML", "outerHTML",
	    "insertAdjacentHTML", "document.write", "eval(", "new Function",
	    "localStorage", "http://", "https://", "setAttribute('style'",
	    "cssText" };
	static const char *const never_html[] = { "<script>", " style=",
	    "<style", " onclick=", " onload=", "javascript:", "http://",
	    "https://" };
	size_t i, j, total = 0;

	(void)state;
	for (i = 0; i < ui_assets_count; i++) {
		const struct ui_asset *a = &ui_assets[i];
		const char *name = a->name;
		size_t n = strlen(name);

		total += a->len;
		if (n > 3 && strcmp(name + n - 3, ".js") == 0) {
			for (j = 0; j < sizeof(never_js) / sizeof(never_js[0]);
			    j++)
				if (contains(a, never_js[j]))
					fail_msg("ui/%s uses %s", name,
					    never_js[j]);
		}
		if (n > 5 && strcmp(name + n - 5, ".html") == 0) {
			for (j = 0; j < sizeof(never_html) /
			    sizeof(never_html[0]); j++)
				if (contains(a, never_html[j]))
					fail_msg("ui/%s has %s", name,
					    never_html[j]);
		}
		/* Every import './x.js' is embedded. */
		for (j = 0; j + 12 < a->len; j++) {
			const char *p = (const char *)a->data + j;
			char want[64];
			size_t k;

			if (memcmp(p, "from './", 8) != 0 &&
			    memcmp(p, "src=\"/ui/", 9) != 0 &&
			    memcmp(p, "href=\"/ui/", 10) != 0)
				continue;
			p = strchr(p, '/') + (p[0] == 'f' ? 1 : 4);
			for (k = 0; k + 1 < sizeof(want) && p[k] != '\'' &&
			    p[k] != '"'; k++)
				want[k] = p[k];
			want[k] = '\0';
			must_find(want);
		}
	}
	assert_true(total < 300 * 1024);
	assert_true(contains(must_find("index.html"),
	    "<script type=\"module\" src=\"/ui/app.js\"></script>"));
}

static char *
post_check(struct env *env, const char *team, const char *name,
    const char *config, int gpus, const char *gpu)
{
	json_t *body = json_pack("{s:s, s:s, s:{s:i, s:s}}", "config", config,
	    "name", name, "context", "gpus", gpus, "gpu", gpu);
	char *text = json_dumps(body, JSON_COMPACT), *id;
	struct got g;
	struct ask k = { .method = "POST", .target = "/v1/checks",
	    .team = team, .ctype = "application/json", .body = text };

	request(&g, env, &k);
	if (g.status != 201)
		fail_msg("POST: %d %s", g.status, g.body);
	id = strdup(json_string_value(json_object_get(g.json, "id")));
	got_fini(&g);
	free(text);
	json_decref(body);
	return id;
}

static const char CONFIG[] =
    "base_model: meta-llama/Llama-3.1-8B\n"
    "adapter: lora\n"
    "lora_r: 16\n"
    "sequence_len: 4096\n"
    "micro_batch_size: 2\n"
    "gradient_accumulation_steps: 4\n"
    "datasets:\n"
    "  - path: tatsu-lab/alpaca\n"
    "    type: alpaca\n"
    "bf16: true\n";

/* The submitted bytes, to their team only (another team's id: 404). */
static void
test_ui__config_route_keeps_team_rules(void **state)
{
	struct env *env = *state;
	char *id = post_check(env, "red", "a.yaml", CONFIG, 8, "h100-sxm");
	char target[128], v[256];
	struct got g;
	struct ask k = { .target = target, .team = "red" };

	snprintf(target, sizeof(target), "/v1/checks/%s/config", id);
	request(&g, env, &k);
	assert_int_equal(g.status, 200);
	assert_string_equal(g.type, "application/yaml; charset=utf-8");
	assert_int_equal(g.len, strlen(CONFIG));
	assert_memory_equal(g.body, CONFIG, g.len);
	assert_string_equal(g.cache, "");	/* no-store, like all data */
	assert_non_null(header(v, sizeof(v), &g, "Content-Security-Policy"));
	assert_string_equal(v, "default-src 'none'; sandbox");
	got_fini(&g);

	k.team = "blue";
	request(&g, env, &k);
	assert_int_equal(g.status, 404);
	got_fini(&g);

	k.admin = true;	/* an admin token sees every team */
	request(&g, env, &k);
	assert_int_equal(g.status, 200);
	assert_int_equal(g.len, strlen(CONFIG));
	got_fini(&g);

	k.admin = false;
	k.team = "red";
	k.method = "HEAD";
	request(&g, env, &k);
	assert_int_equal(g.status, 200);
	assert_int_equal(g.len, 0);
	got_fini(&g);

	k.method = NULL;
	snprintf(target, sizeof(target), "/v1/checks/%s/config?x=1", id);
	request(&g, env, &k);
	assert_int_equal(g.status, 400);
	got_fini(&g);

	k.target = "/v1/checks/not-an-id/config";
	request(&g, env, &k);
	assert_int_equal(g.status, 404);
	got_fini(&g);
	free(id);
}

/* The history and the diff say when the GPUs or the GPU type changed,
   and the memory change per term. */
static void
test_ui__changes_name_context_and_terms(void **state)
{
	struct env *env = *state;
	char *a = post_check(env, "default", "h.yaml", CONFIG, 8, "h100-sxm");
	char *b = post_check(env, "default", "h.yaml", CONFIG, 16, "h100-sxm");
	char *c = post_check(env, "default", "h.yaml", CONFIG, 16, "a100-40gb");
	char target[160];
	json_t *items, *ch, *cc, *terms, *ma, *mb, *v;
	const char *key;
	struct got g, ga, gb;
	struct ask k = { .target = "/v1/configs/h.yaml/checks" };
	double sum = 0;

	request(&g, env, &k);
	assert_int_equal(g.status, 200);
	items = json_object_get(g.json, "items");
	assert_int_equal(json_array_size(items), 3);
	/* Newest first: c (GPU type changed), b (GPU count), a (first). */
	ch = json_object_get(json_array_get(items, 0), "changes");
	cc = json_object_get(ch, "context_changes");
	assert_int_equal(json_object_size(cc), 1);
	assert_string_equal(json_string_value(json_object_get(
	    json_object_get(cc, "gpu"), "from")), "h100-sxm");
	assert_string_equal(json_string_value(json_object_get(
	    json_object_get(cc, "gpu"), "to")), "a100-40gb");
	assert_false(json_is_true(json_object_get(ch, "config_changed")));
	cc = json_object_get(json_object_get(json_array_get(items, 1),
	    "changes"), "context_changes");
	assert_int_equal(json_integer_value(json_object_get(
	    json_object_get(cc, "gpus"), "from")), 8);
	assert_int_equal(json_integer_value(json_object_get(
	    json_object_get(cc, "gpus"), "to")), 16);
	assert_null(json_object_get(cc, "gpu"));
	assert_true(json_is_null(json_object_get(json_array_get(items, 2),
	    "changes")));
	/* Each item carries its context and its peak for the chart. */
	assert_int_equal(json_integer_value(json_object_get(json_object_get(
	    json_array_get(items, 2), "context"), "gpus")), 8);
	assert_true(json_is_number(json_object_get(json_object_get(
	    json_array_get(items, 0), "memory"), "per_gpu_peak_gib")));
	assert_true(json_is_number(json_object_get(json_object_get(
	    json_array_get(items, 0), "memory"), "capacity_gib")));
	got_fini(&g);

	/* The diff of c against a: both context fields, terms that add up to
	   the peak's delta. */
	snprintf(target, sizeof(target), "/v1/checks/%s/diff?against=%s", c,
	    a);
	k.target = target;
	request(&g, env, &k);
	assert_int_equal(g.status, 200);
	cc = json_object_get(g.json, "context_changes");
	assert_non_null(json_object_get(cc, "gpus"));
	assert_non_null(json_object_get(cc, "gpu"));
	snprintf(target, sizeof(target), "/v1/checks/%s", c);
	request(&gb, env, &k);
	snprintf(target, sizeof(target), "/v1/checks/%s", a);
	request(&ga, env, &k);
	ma = json_object_get(json_object_get(json_object_get(ga.json,
	    "estimate"), "memory"), "breakdown_gib");
	mb = json_object_get(json_object_get(json_object_get(gb.json,
	    "estimate"), "memory"), "breakdown_gib");
	terms = json_object_get(g.json, "memory_delta_by_term_gib");
	assert_int_equal(json_object_size(terms), json_object_size(mb));
	json_object_foreach(terms, key, v) {
		double want = json_number_value(json_object_get(mb, key)) -
		    json_number_value(json_object_get(ma, key));

		assert_true(json_is_number(v));
		assert_true(fabs(json_number_value(v) - want) < 0.006);
		sum += json_number_value(v);
	}
	assert_true(fabs(sum - json_number_value(json_object_get(g.json,
	    "memory_delta_gib"))) < 0.1);
	got_fini(&ga);
	got_fini(&gb);
	got_fini(&g);

	/* Same context: an empty object, not a missing one. */
	snprintf(target, sizeof(target), "/v1/checks/%s/diff?against=%s", b,
	    b);
	request(&g, env, &k);
	assert_int_equal(g.status, 200);
	assert_true(json_is_object(json_object_get(g.json,
	    "context_changes")));
	assert_int_equal(json_object_size(json_object_get(g.json,
	    "context_changes")), 0);
	got_fini(&g);
	free(a);
	free(b);
	free(c);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_ui__pages_serve_the_shell,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(
		    test_ui__assets_revalidate_with_etags, setup, teardown),
		cmocka_unit_test(test_ui__etag_matching),
		cmocka_unit_test_setup_teardown(
		    test_ui__page_targets_are_canonical, setup, teardown),
		cmocka_unit_test(test_ui__assets_hold_no_holes),
		cmocka_unit_test_setup_teardown(
		    test_ui__config_route_keeps_team_rules, setup, teardown),
		cmocka_unit_test_setup_teardown(
		    test_ui__changes_name_context_and_terms, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
