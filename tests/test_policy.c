/*
 * tests/test_policy: policy files (severity overrides, off, "*" and
 * prefix patterns, --ignore, GPU limits, bf16) and inline suppressions,
 * including a policy that forbids them.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/arena.h"
#include "core/check.h"
#include "core/policy.h"

static const char base[] =
    "base_model: HuggingFaceTB/SmolLM2-135M\n"
    "learning_rate: 0.0002\n"
    "datasets:\n  - path: a/b\n    type: alpaca\n"
    "micro_batch_size: 1\ngradient_accumulation_steps: 1\n";

struct run {
	struct arena a;
	struct report *r;
};

/* Check base + extra with an optional policy; keeps the arena. */
static void
run(struct run *w, const char *extra, const char *policy, long gpus,
    const char *gpu)
{
	char yaml[2048];
	struct context ctx;
	struct limits lim;
	struct err e = { 0 };
	struct policy *p = NULL;

	arena_init(&w->a, (size_t)16 << 20);
	if (policy != NULL && policy_parse(&p, policy, strlen(policy), &w->a,
	    &e) != 0)
		fail_msg("policy: %s", e.msg);
	snprintf(yaml, sizeof(yaml), "%s%s", base, extra);
	context_default(&ctx);
	ctx.gpus = gpus;
	ctx.gpu = gpu;
	ctx.policy = p;
	limits_default(&lim);
	if (check_run(&w->r, yaml, strlen(yaml), &ctx, &lim, &w->a, &e) != 0)
		fail_msg("check: %s", e.msg);
}

static const struct finding *
find(const struct report *r, const char *rule)
{
	size_t i;

	for (i = 0; i < r->nfindings; i++)
		if (strcmp(r->findings[i].rule, rule) == 0)
			return &r->findings[i];
	return NULL;
}

static void
test_policy__overrides_and_off(void **state)
{
	struct run w;

	(void)state;
	run(&w, "context_parapllel_size: 2\n"
	    "deepspeed: deepspeed_configs/zero1.json\n",
	    "rules:\n  schema.unknown_key_dropped: error\n"
	    "  deepspeed.single_gpu: off\n", 1, "h100");
	assert_non_null(find(w.r, "schema.unknown_key_dropped"));
	assert_int_equal(find(w.r, "schema.unknown_key_dropped")->severity,
	    SEV_ERROR);
	assert_null(find(w.r, "deepspeed.single_gpu"));
	assert_int_equal(w.r->verdict, VERDICT_FAIL);
	arena_fini(&w.a);
}

static void
test_policy__gpu_limits_and_bf16(void **state)
{
	static const char pol[] = "max_gpus: 4\nallowed_gpus: [h100, a100]\n"
	    "require_bf16: true\n";
	struct run w;

	(void)state;
	run(&w, "", pol, 8, "t4");
	assert_non_null(find(w.r, "policy.max_gpus"));
	assert_non_null(find(w.r, "policy.allowed_gpus"));
	assert_non_null(find(w.r, "policy.require_bf16"));
	arena_fini(&w.a);
	run(&w, "", pol, 4, "a100-80gb");
	assert_null(find(w.r, "policy.max_gpus"));
	assert_null(find(w.r, "policy.allowed_gpus"));
	assert_null(find(w.r, "policy.require_bf16"));
	assert_int_equal(w.r->verdict, VERDICT_PASS);
	arena_fini(&w.a);
}

static void
test_policy__bad_files_are_refused(void **state)
{
	static const char *const bad[][2] = {
		{ "rules:\n  no.such_rule: off\n", "unknown rule" },
		{ "rules:\n  schema.type: loud\n", "severity must be" },
		{ "max_gpus: 0\n", "max_gpus" },
		{ "allowed_gpus: [tpu]\n", "unknown GPU id" },
		{ "require_bf16: maybe\n", "must be true or false" },
		{ "colour: blue\n", "unknown key" },
		{ "- a\n", "root must be a mapping" },
		{ "rules:\n  \"nope.*\": off\n", "no rule id starts with" },
		{ "rules:\n  \"fsdp.*.x\": off\n", "one '*', at its end" },
		{ "rules:\n  \"*\": loud\n", "severity must be" },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct arena a;
		struct err e = { 0 };
		struct policy *p;

		arena_init(&a, 1 << 20);
		assert_true(policy_parse(&p, bad[i][0], strlen(bad[i][0]), &a,
		    &e) != 0);
		assert_null(p);
		if (strstr(e.msg, bad[i][1]) == NULL)
			fail_msg("'%s': %s", bad[i][0], e.msg);
		assert_true(e.loc.line >= 1);
		arena_fini(&a);
	}
}

static void
test_policy__inline_suppression(void **state)
{
	struct run w;

	(void)state;
	run(&w, "debug: true  # preflight: ignore[schema.unknown_key_dropped]"
	    " set by our launcher\n", NULL, 1, "h100");
	assert_null(find(w.r, "schema.unknown_key_dropped"));
	assert_int_equal(w.r->nsuppressed, 1);
	assert_string_equal(w.r->suppressed[0].reason, "set by our launcher");
	assert_int_equal(w.r->verdict, VERDICT_PASS);
	arena_fini(&w.a);
	/* The line above, when it holds only the comment. */
	run(&w, "# preflight: ignore[schema.unknown_key_dropped] legacy\n"
	    "debug: true\n", NULL, 1, "h100");
	assert_int_equal(w.r->nsuppressed, 1);
	arena_fini(&w.a);
	/* Another rule's marker suppresses nothing. */
	run(&w, "debug: true  # preflight: ignore[schema.type] no\n", NULL, 1,
	    "h100");
	assert_non_null(find(w.r, "schema.unknown_key_dropped"));
	assert_int_equal(w.r->nsuppressed, 0);
	arena_fini(&w.a);
}

static void
test_policy__can_forbid_suppressions(void **state)
{
	struct run w;

	(void)state;
	run(&w, "debug: true  # preflight: ignore[schema.unknown_key_dropped]"
	    " set by our launcher\n", "forbid_inline_suppression: true\n", 1,
	    "h100");
	assert_non_null(find(w.r, "schema.unknown_key_dropped"));
	assert_non_null(find(w.r, "policy.inline_suppression"));
	assert_int_equal(find(w.r, "policy.inline_suppression")->line, 8);
	assert_int_equal(w.r->nsuppressed, 0);
	assert_int_equal(w.r->verdict, VERDICT_FAIL);
	arena_fini(&w.a);
}

/*
 * Patterns: the exact id beats any prefix, the longer prefix beats the
 * shorter, "*" is the last resort; --ignore beats them all.
 */
static void
test_policy__patterns_resolve_by_specificity(void **state)
{
	static const char pol[] = "rules:\n"
	    "  \"*\": off\n"
	    "  \"schema.*\": info\n"
	    "  \"schema.dup*\": error\n"
	    "  schema.type: warning\n";
	struct arena a;
	struct err e = { 0 };
	struct policy *p;

	(void)state;
	arena_init(&a, 1 << 20);
	assert_int_equal(policy_parse(&p, pol, strlen(pol), &a, &e), 0);
	assert_int_equal(policy_severity(p, "schema.duplicate_key",
	    SEV_WARNING), SEV_ERROR);
	assert_int_equal(policy_severity(p, "schema.type", SEV_ERROR),
	    SEV_WARNING);
	assert_int_equal(policy_severity(p, "schema.unknown_key_dropped",
	    SEV_WARNING), SEV_INFO);
	assert_int_equal(policy_severity(p, "fsdp.v1_deprecated",
	    SEV_WARNING), POLICY_OFF);
	assert_int_equal(policy_add_ignore(p, "schema.d*", &a, &e), 0);
	assert_int_equal(policy_severity(p, "schema.duplicate_key",
	    SEV_WARNING), POLICY_OFF);
	assert_int_equal(policy_severity(p, "schema.type", SEV_ERROR),
	    SEV_WARNING);
	assert_int_not_equal(policy_add_ignore(p, "no.such_rule", &a, &e), 0);
	assert_int_equal(e.code, ERR_SCHEMA);
	assert_int_equal(p->nignore, 1);
	arena_fini(&a);
}

/* "*": off on a report: nothing left, the verdict passes; an exact id
   turned back on keeps just that rule (policy.* findings included). */
static void
test_policy__star_off_applies_to_reports(void **state)
{
	struct run w;

	(void)state;
	run(&w, "context_parapllel_size: 2\n", "rules:\n  \"*\": off\n", 1,
	    "h100");
	assert_int_equal(w.r->nfindings, 0);
	assert_int_equal(w.r->verdict, VERDICT_PASS);
	arena_fini(&w.a);
	run(&w, "context_parapllel_size: 2\n", "max_gpus: 4\nrules:\n"
	    "  \"*\": off\n  schema.unknown_key_dropped: error\n", 8, "h100");
	assert_int_equal(w.r->nfindings, 1);
	assert_int_equal(find(w.r, "schema.unknown_key_dropped")->severity,
	    SEV_ERROR);
	assert_int_equal(w.r->count[SEV_ERROR], 1);
	arena_fini(&w.a);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_policy__overrides_and_off),
		cmocka_unit_test(test_policy__gpu_limits_and_bf16),
		cmocka_unit_test(test_policy__bad_files_are_refused),
		cmocka_unit_test(test_policy__inline_suppression),
		cmocka_unit_test(test_policy__can_forbid_suppressions),
		cmocka_unit_test(test_policy__patterns_resolve_by_specificity),
		cmocka_unit_test(test_policy__star_off_applies_to_reports),
	};

	return cmocka_run_group_tests_name("policy", tests, NULL, NULL);
}
