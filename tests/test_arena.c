/*
 * tests/test_arena: the request allocator keeps its budget.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "core/arena.h"
#include "core/core.h"
#include "core/err.h"
#include "core/models.h"

static void
test_arena__memory_is_zeroed_and_aligned(void **state)
{
	struct arena a;
	long long *p;
	char *c;

	(void)state;
	arena_init(&a, 1 << 20);
	c = ARENA_NEW(&a, char, 3);
	p = ARENA_NEW(&a, long long, 16);
	assert_non_null(c);
	assert_non_null(p);
	assert_int_equal((uintptr_t)p % _Alignof(long long), 0);
	for (int i = 0; i < 16; i++)
		assert_int_equal(p[i], 0);
	arena_fini(&a);
}

static void
test_arena__budget_is_enforced(void **state)
{
	struct arena a;
	size_t total = 0;
	void *p;

	(void)state;
	arena_init(&a, 100000);
	while ((p = arena_alloc(&a, 1000, 8, 1)) != NULL)
		total += 1000;
	assert_true(total > 0);
	assert_true(total <= 100000);
	assert_true(a.used <= a.cap);
	arena_fini(&a);
}

static void
test_arena__huge_count_does_not_wrap(void **state)
{
	struct arena a;

	(void)state;
	arena_init(&a, 1 << 20);
	assert_null(arena_alloc(&a, 16, 8, SIZE_MAX / 8));
	assert_null(arena_alloc(&a, SIZE_MAX / 2, 8, 3));
	assert_non_null(arena_alloc(&a, 16, 8, 1));
	arena_fini(&a);
}

static void
test_arena__strndup_and_printf_copy(void **state)
{
	struct arena a;
	char src[] = "abc\0def";
	char *s, *p;

	(void)state;
	arena_init(&a, 1 << 20);
	s = arena_strndup(&a, src, 7);
	assert_non_null(s);
	assert_memory_equal(s, src, 7);
	assert_int_equal(s[7], '\0');
	p = arena_printf(&a, "%s-%d-%300s", "x", 42, "y");
	assert_non_null(p);
	assert_int_equal(strlen(p), 2 + 3 + 300);
	assert_true(strncmp(p, "x-42-", 5) == 0);
	arena_fini(&a);
}

static void
test_arena__fini_then_reuse(void **state)
{
	struct arena a;

	(void)state;
	arena_init(&a, 4096);
	assert_non_null(arena_alloc(&a, 1, 1, 100));
	arena_fini(&a);
	assert_int_equal(a.used, 0);
	assert_non_null(arena_alloc(&a, 1, 1, 100));
	arena_fini(&a);
}

/*
 * core_init builds the per-process tables (tests/fixture.c ran it before
 * this test); a second call succeeds without touching e, and the tables
 * answer: the model index finds a catalog model by any case.
 */
static void
test_arena__core_init_is_idempotent(void **state)
{
	struct err e = { 0 };
	const struct model_def *m;

	(void)state;
	assert_int_equal(core_init(&e), 0);
	assert_int_equal(e.code, ERR_OK);
	assert_string_equal(e.msg, "");
	assert_int_equal(core_init(&e), 0);
	m = models_find("meta-llama/Llama-3.1-8B");
	assert_non_null(m);
	assert_ptr_equal(models_find("META-LLAMA/llama-3.1-8b"), m);
	assert_null(models_find("no-such/model"));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_arena__memory_is_zeroed_and_aligned),
		cmocka_unit_test(test_arena__budget_is_enforced),
		cmocka_unit_test(test_arena__huge_count_does_not_wrap),
		cmocka_unit_test(test_arena__strndup_and_printf_copy),
		cmocka_unit_test(test_arena__fini_then_reuse),
		cmocka_unit_test(test_arena__core_init_is_idempotent),
	};

	return cmocka_run_group_tests_name("arena", tests, NULL, NULL);
}
