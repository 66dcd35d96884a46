/*
 * tests/test_security: the defences of issue 13 that live below the
 * socket: one route match for every decision, HEAD without a body, the
 * truth about store failures under Idempotency-Key, signed CI deliveries
 * (skew, replay, the query), the findings cap, and YAML keys crafted to
 * collide.  tests/security.py attacks a real server.
 */
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
#include "api/digest.h"
#include "api/replay.h"
#include "core/arena.h"
#include "core/check.h"
#include "core/doc.h"
#include "core/report.h"
#include "server/store_sqlite.h"
#include "tests/fixture_api.h"

/* ---- one route match -------------------------------------------------- */

static void
test_security__non_canonical_targets_are_refused(void **state)
{
	static const char *const bad[] = {
		"/%761/checks", "/v%31/checks", "/%6detrics", "/%6Detrics",
		"/v1/%63hecks", "/v1/checks/%30123", "/v1/./checks",
		"/v1/../metrics", "/v1/checks/%2e%2e", "/v1/checks/%2E",
		"/./healthz", "/v1/checks%00", "/v1/configs/a%01b/checks",
		"/v1/c hecks", "/v1/checks/\x7f", "/v1/checks/%zz",
		"/v1/checks/%4", "healthz", "/%761/ci/checks",
		"/v1/configs/%7Ea/checks", NULL
	};
	struct api_route rt;
	struct arena a;
	size_t i;

	(void)state;
	arena_init(&a, (size_t)1 << 20);
	for (i = 0; bad[i] != NULL; i++) {
		if (api_route(&rt, "GET", bad[i], &a) != 400)
			fail_msg("%s: status %d, want 400", bad[i], rt.status);
		assert_string_equal(rt.pattern, "unmatched");
		assert_int_equal(rt.access, ACCESS_OPEN);
		assert_non_null(rt.why);
	}
	arena_fini(&a);
}

static void
test_security__routes_decide_access_and_decode_params_once(void **state)
{
	struct api_route rt;
	struct arena a;

	(void)state;
	arena_init(&a, (size_t)1 << 20);
	assert_int_equal(api_route(&rt, "GET", "/metrics", &a), 0);
	assert_int_equal(rt.access, ACCESS_METRICS);
	assert_int_equal(api_route(&rt, "POST", "/v1/ci/checks", &a), 0);
	assert_int_equal(rt.access, ACCESS_CI);
	assert_int_equal(api_route(&rt, "GET", "/healthz", &a), 0);
	assert_int_equal(rt.access, ACCESS_OPEN);
	assert_int_equal(api_route(&rt, "HEAD", "/v1/checks", &a), 0);
	assert_int_equal(rt.access, ACCESS_TEAM);
	assert_string_equal(rt.pattern, "/v1/checks");
	/* An encoded '/' (and ':') is data in a parameter, decoded once. */
	assert_int_equal(api_route(&rt, "GET",
	    "/v1/configs/org%2Fml%3Aa.yaml/checks", &a), 0);
	assert_int_equal(rt.nparam, 1);
	assert_string_equal(rt.param[0], "org/ml:a.yaml");
	assert_int_equal(api_route(&rt, "GET", "/v1/configs/a%252F/checks",
	    &a), 0);
	assert_string_equal(rt.param[0], "a%2F");
	/* Another method on a served path keeps that path's access. */
	assert_int_equal(api_route(&rt, "DELETE", "/v1/checks", &a), 405);
	assert_int_equal(rt.access, ACCESS_TEAM);
	assert_non_null(strstr(rt.allow, "POST"));
	assert_int_equal(api_route(&rt, "GET", "/v2/checks", &a), 404);
	assert_int_equal(api_route(&rt, "GET", "/v1/checks/", &a), 404);
	assert_int_equal(api_route(&rt, "GET", "//v1/checks", &a), 404);
	arena_fini(&a);
}

/* ---- a store that counts and fails on demand -------------------------- */

struct spy {
	struct store real;
	int lists;
	int stats;
	int puts;
	bool fail_put;
};

static struct spy spy;

static int
spy_put(void *self, const struct store_check *c, struct err *e)
{
	(void)self;
	spy.puts++;
	if (spy.fail_put)
		return err_set(e, ERR_STORE, NULL, "disk I/O error");
	return spy.real.ops->put_check(spy.real.self, c, e);
}

static int
spy_get(void *self, struct store_check *out, const char *id,
    const char *team, struct arena *a, struct err *e)
{
	(void)self;
	return spy.real.ops->get_check(spy.real.self, out, id, team, a, e);
}

static int
spy_idem(void *self, struct store_check *out, const char *team,
    const char *key, struct arena *a, struct err *e)
{
	(void)self;
	return spy.real.ops->get_by_idem(spy.real.self, out, team, key, a, e);
}

static int
spy_list(void *self, struct store_check **out, size_t *n,
    const struct store_query *q, struct arena *a, struct err *e)
{
	(void)self;
	spy.lists++;
	return spy.real.ops->list_checks(spy.real.self, out, n, q, a, e);
}

static int
spy_stats(void *self, struct store_rule_stat **out, size_t *n,
    const char *team, const char *since_id, struct arena *a, struct err *e)
{
	(void)self;
	spy.stats++;
	return spy.real.ops->rule_stats(spy.real.self, out, n, team,
	    since_id, a, e);
}

static int
spy_ready(void *self, struct err *e)
{
	(void)self;
	return spy.real.ops->ready(spy.real.self, e);
}

static void
spy_info(void *self, struct store_info *out)
{
	(void)self;
	spy.real.ops->info(spy.real.self, out);
}

static const struct store_ops spy_ops = {
	.put_check = spy_put,
	.get_check = spy_get,
	.get_by_idem = spy_idem,
	.list_checks = spy_list,
	.rule_stats = spy_stats,
	.ready = spy_ready,
	.info = spy_info,
};

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
	fixture_api_ctx(&env->ctx, env->store, &env->fakes, 3);
	memset(&spy, 0, sizeof(spy));
	spy.real = env->ctx.store;
	env->ctx.store.ops = &spy_ops;
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

static const char cfg[] =
    "base_model: meta-llama/Llama-3.1-8B\nadapter: lora\n"
    "micro_batch_size: 1\ngradient_accumulation_steps: 1\n"
    "datasets:\n  - path: tatsu-lab/alpaca\n    type: alpaca\n";

/* One request; the status, and the body into *body (malloc'd). */
static int
req(struct env *env, const char *method, const char *path,
    const char *query, const char *body, const char *idem,
    const char *sig, const char *ts, const char *delivery, char **out)
{
	struct api_req rq;
	struct api_resp rs;
	struct arena a;
	int status;

	memset(&rq, 0, sizeof(rq));
	arena_init(&a, (size_t)32 << 20);
	rq.method = method;
	rq.path = path;
	rq.query = query;
	rq.content_type = body != NULL && body[0] == '{' ? "application/json" :
	    "application/yaml";
	rq.body = body;
	rq.body_len = body != NULL ? strlen(body) : 0;
	rq.idem_key = idem;
	rq.signature = sig;
	rq.timestamp = ts;
	rq.delivery = delivery;
	rq.team = "default";
	rq.admin = true;
	rq.head = strcmp(method, "HEAD") == 0;
	rq.arena = &a;
	api_handle(&env->ctx, &rq, &rs);
	status = rs.status;
	if (out != NULL) {
		*out = calloc(1, rs.body_len + 1);
		assert_non_null(*out);
		if (rs.body_len > 0)
			memcpy(*out, rs.body, rs.body_len);
	}
	api_resp_fini(&rs);
	arena_fini(&a);
	return status;
}

static void
test_security__head_builds_no_body(void **state)
{
	struct env *env = *state;
	char *body;

	assert_int_equal(req(env, "POST", "/v1/checks", "name=a", cfg, NULL,
	    NULL, NULL, NULL, NULL), 201);
	spy.lists = spy.stats = 0;
	assert_int_equal(req(env, "HEAD", "/v1/checks", "limit=200", NULL,
	    NULL, NULL, NULL, NULL, &body), 200);
	assert_string_equal(body, "");
	free(body);
	assert_int_equal(req(env, "HEAD", "/v1/configs/a/checks", "", NULL,
	    NULL, NULL, NULL, NULL, NULL), 200);
	assert_int_equal(req(env, "HEAD", "/v1/stats/rules", "", NULL, NULL,
	    NULL, NULL, NULL, NULL), 200);
	assert_int_equal(spy.lists, 0);
	assert_int_equal(spy.stats, 0);
	/* A bad query is still a 400, and GET still reads the store. */
	assert_int_equal(req(env, "HEAD", "/v1/checks", "limit=0", NULL, NULL,
	    NULL, NULL, NULL, NULL), 400);
	assert_int_equal(req(env, "GET", "/v1/checks", "", NULL, NULL, NULL,
	    NULL, NULL, NULL), 200);
	assert_int_equal(spy.lists, 1);
}

/* A store failure after the Idempotency-Key lookup is the store's: 503,
   which clients retry, never the lookup's 404. */
static void
test_security__store_failure_under_idempotency_key_is_503(void **state)
{
	struct env *env = *state;
	char *body, *again;

	spy.fail_put = true;
	assert_int_equal(req(env, "POST", "/v1/checks", "name=i", cfg, "k-1",
	    NULL, NULL, NULL, &body), 503);
	assert_non_null(strstr(body, "store-unavailable"));
	free(body);
	spy.fail_put = false;
	assert_int_equal(req(env, "POST", "/v1/checks", "name=i", cfg, "k-1",
	    NULL, NULL, NULL, &body), 201);
	assert_int_equal(req(env, "POST", "/v1/checks", "name=i", cfg, "k-1",
	    NULL, NULL, NULL, &again), 200);
	assert_string_equal(body, again);
	free(body);
	free(again);
	assert_int_equal(req(env, "POST", "/v1/checks", "name=j", cfg, "k-1",
	    NULL, NULL, NULL, NULL), 409);
}

/* ---- signed CI deliveries --------------------------------------------- */

static void
sign(char out[80], const char *secret, const char *ts, const char *dl,
    const char *query, const char *body)
{
	char msg[4096], hex[65];

	snprintf(msg, sizeof(msg), "v1\n%s\n%s\n%s\n%s", ts, dl, query, body);
	assert_int_equal(digest_hmac_sha256_hex(hex, secret, msg,
	    strlen(msg)), 0);
	snprintf(out, 80, "sha256=%s", hex);
}

static void
test_security__ci_signature_time_delivery_and_query(void **state)
{
	static const char secret[] = "0123456789abcdef-ci";
	struct env *env = *state;
	char body[2048], sig[80], ts[32], old[32];
	json_t *j = json_pack("{s:s, s:{s:s, s:s}}", "config", cfg, "source",
	    "repo", "org/ml", "path", "a.yaml");
	char *text = json_dumps(j, JSON_COMPACT);

	json_decref(j);
	snprintf(body, sizeof(body), "%s", text);
	free(text);
	env->ctx.ci_secret = secret;
	snprintf(ts, sizeof(ts), "%lld",
	    (long long)(env->fakes.clock_ms / 1000));
	snprintf(old, sizeof(old), "%lld",
	    (long long)(env->fakes.clock_ms / 1000 - 301));
	sign(sig, secret, ts, "d-1", "format=json", body);
	assert_int_equal(req(env, "POST", "/v1/ci/checks", "format=json", body,
	    NULL, sig, ts, "d-1", NULL), 201);
	/* The same delivery again: refused, whatever else. */
	assert_int_equal(req(env, "POST", "/v1/ci/checks", "format=json", body,
	    NULL, sig, ts, "d-1", NULL), 409);
	/* The signature covers the query string. */
	sign(sig, secret, ts, "d-2", "format=json", body);
	assert_int_equal(req(env, "POST", "/v1/ci/checks", "format=sarif",
	    body, NULL, sig, ts, "d-2", NULL), 401);
	/* ... and the timestamp and the delivery id. */
	assert_int_equal(req(env, "POST", "/v1/ci/checks", "format=json",
	    body, NULL, sig, ts, "d-3", NULL), 401);
	sign(sig, secret, old, "d-4", "", body);
	assert_int_equal(req(env, "POST", "/v1/ci/checks", "", body, NULL, sig,
	    old, "d-4", NULL), 401);
	sign(sig, secret, ts, "d-5", "", body);
	assert_int_equal(req(env, "POST", "/v1/ci/checks", "", body, NULL, sig,
	    ts, NULL, NULL), 401);
	assert_int_equal(req(env, "POST", "/v1/ci/checks", "", body, NULL, sig,
	    ts, "d-5", NULL), 201);
	env->ctx.ci_secret = NULL;
}

static void
test_security__replay_set_forgets_only_expired(void **state)
{
	struct replay *r = replay_new();
	char id[32];
	int i;

	(void)state;
	assert_non_null(r);
	assert_int_equal(replay_check(r, "a", 1000, 2000), REPLAY_NEW);
	assert_int_equal(replay_check(r, "a", 1500, 2500), REPLAY_SEEN);
	assert_int_equal(replay_check(r, "b", 1500, 2500), REPLAY_NEW);
	assert_int_equal(replay_check(r, "a", 2001, 3000), REPLAY_NEW);
	/* A full table of live ids refuses new ones, expired slots free. */
	for (i = 0; i < REPLAY_SLOTS; i++) {
		snprintf(id, sizeof(id), "x%d", i);
		if (replay_check(r, id, 5000, 9000) == REPLAY_FULL)
			break;
	}
	assert_true(i >= REPLAY_SLOTS - 3);
	assert_int_equal(replay_check(r, "late", 5000, 9000), REPLAY_FULL);
	assert_int_equal(replay_check(r, "later", 9001, 12000), REPLAY_NEW);
	replay_free(r);
}

/* ---- the findings cap ------------------------------------------------- */

static void
test_security__findings_cap_keeps_the_most_severe(void **state)
{
	struct context ctx;
	struct limits lim;
	struct report *r;
	struct arena a;
	struct err e = { 0 };
	char *buf;
	size_t len = 0, cap = 1 << 20, i, errors = 0, notes = 0;
	int k;

	(void)state;
	buf = malloc(cap);
	assert_non_null(buf);
	len += (size_t)snprintf(buf + len, cap - len, "%s",
	    "base_model: meta-llama/Llama-3.1-8B\nlr_scheduler_kwargs:\n");
	for (k = 0; k < 3000; k++)
		len += (size_t)snprintf(buf + len, cap - len,
		    "  k%d: 1\n  k%d: 2\n", k, k);
	/* Errors after the warnings: a cap by line would drop them. */
	len += (size_t)snprintf(buf + len, cap - len, "%s",
	    "deepspeed: deepspeed_configs/zero3.json\nfsdp_version: 2\n"
	    "fsdp_config:\n  offload_params: true\n");
	context_default(&ctx);
	ctx.gpus = 8;
	limits_default(&lim);
	arena_init(&a, (size_t)64 << 20);
	assert_int_equal(check_run(&r, buf, len, &ctx, &lim, &a, &e), 0);
	assert_int_equal(r->nfindings, REPORT_MAX_FINDINGS);
	for (i = 0; i < r->nfindings; i++) {
		errors += r->findings[i].severity == SEV_ERROR;
		notes += strcmp(r->findings[i].rule, "report.truncated") == 0;
		if (i > 0 && r->findings[i - 1].line > r->findings[i].line)
			fail_msg("findings out of line order at %zu", i);
	}
	assert_int_equal(notes, 1);
	assert_true(errors >= 1);
	assert_int_equal(errors, r->count[SEV_ERROR]);
	assert_true(r->count[SEV_WARNING] >= 3000);
	assert_int_equal(r->verdict, VERDICT_FAIL);
	arena_fini(&a);
	free(buf);
}

/* ---- keys crafted to collide ------------------------------------------ */

/* Integers whose unkeyed hash shares its low 32 bits (doc.c's hash_u64
   inverted), so they all fall in one cluster of an unkeyed index. */
static long long
colliding(unsigned i)
{
	const uint64_t cinv = 0x4f74430c22a54005ULL;	/* 1/C mod 2^64 */
	uint64_t x = ((uint64_t)i << 32) | 0x1234;

	x ^= x >> 33;
	x *= cinv;
	x ^= x >> 33;
	return (long long)x;
}

static char *
flood(unsigned n, size_t *len)
{
	size_t cap = (size_t)n * 32 + 256, k = 0;
	char *buf = malloc(cap);
	unsigned i;

	assert_non_null(buf);
	k += (size_t)snprintf(buf + k, cap - k, "a: 1\nm:\n  name: x\n");
	for (i = 1; i <= n; i++)
		k += (size_t)snprintf(buf + k, cap - k, "  %lld: %u\n",
		    colliding(i), i);
	/* One key written twice among them: still a duplicate. */
	k += (size_t)snprintf(buf + k, cap - k, "  %lld: again\n",
	    colliding(7));
	*len = k;
	return buf;
}

static void
test_security__colliding_keys_switch_to_the_keyed_index(void **state)
{
	const uint64_t key[2] = { 0x0123456789abcdefULL, 0xfedcba9876543210ULL };
	const struct doc_node *m;
	const struct doc_pair *p;
	struct limits lim;
	struct arena a;
	struct err e = { 0 };
	struct doc *d;
	size_t len;
	char *buf = flood(5000, &len);

	(void)state;
	limits_set_hash_key(key);
	limits_default(&lim);
	assert_memory_equal(lim.hash_key, key, sizeof(key));
	arena_init(&a, (size_t)64 << 20);
	assert_int_equal(doc_parse(&d, buf, len, &lim, &a, &e), 0);
	m = doc_map_value(d->root, "m");
	assert_non_null(m);
	assert_int_equal(m->n, 5001);
	assert_true((m->slot_mask & DOC_SLOTS_KEYED) != 0);
	/* The root (no collisions) keeps the unkeyed, foldable index. */
	assert_true((d->root->slot_mask & DOC_SLOTS_KEYED) == 0);
	p = doc_map_get(m, "name");
	assert_non_null(p);
	assert_string_equal(p->value->text, "x");
	assert_null(doc_map_get(m, "nam"));
	/* The duplicate was noted once, at its second spelling. */
	assert_non_null(d->dups);
	assert_null(d->dups->next);
	assert_int_equal(d->dups->first_line, 3 + 7);
	assert_int_equal(d->dups->loc.line, 3 + 5000 + 1);
	arena_fini(&a);
	free(buf);
	memset(&lim, 0, sizeof(lim));
	limits_set_hash_key(lim.hash_key);
}

static void
test_security__keys_per_mapping_are_capped(void **state)
{
	struct limits lim;
	struct arena a;
	struct err e = { 0 };
	struct doc *d;
	size_t len;
	char *buf = flood(10000, &len);
	char merge[256];

	(void)state;
	limits_default(&lim);
	arena_init(&a, (size_t)64 << 20);
	assert_int_equal(doc_parse(&d, buf, len, &lim, &a, &e), ERR_LIMIT);
	assert_non_null(strstr(e.msg, "max_map_keys"));
	assert_int_equal(e.loc.line, 3 + 10000);
	arena_fini(&a);
	free(buf);
	/* Merges count too. */
	lim.max_map_keys = 3;
	snprintf(merge, sizeof(merge), "a: &x {p: 1, q: 2}\nb:\n  <<: *x\n"
	    "  r: 3\n  s: 4\n");
	arena_init(&a, (size_t)1 << 20);
	memset(&e, 0, sizeof(e));
	assert_int_equal(doc_parse(&d, merge, strlen(merge), &lim, &a, &e),
	    ERR_LIMIT);
	assert_non_null(strstr(e.msg, "max_map_keys"));
	arena_fini(&a);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(
		    test_security__non_canonical_targets_are_refused),
		cmocka_unit_test(
		    test_security__routes_decide_access_and_decode_params_once),
		cmocka_unit_test_setup_teardown(
		    test_security__head_builds_no_body, setup, teardown),
		cmocka_unit_test_setup_teardown(
		    test_security__store_failure_under_idempotency_key_is_503,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(
		    test_security__ci_signature_time_delivery_and_query, setup,
		    teardown),
		cmocka_unit_test(test_security__replay_set_forgets_only_expired),
		cmocka_unit_test(
		    test_security__findings_cap_keeps_the_most_severe),
		cmocka_unit_test(
		    test_security__colliding_keys_switch_to_the_keyed_index),
		cmocka_unit_test(test_security__keys_per_mapping_are_capped),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
