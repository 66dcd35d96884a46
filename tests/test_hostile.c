/*
 * tests/test_hostile: hostile configs through the real binary.
 *
 * Each input must end the check with exit 2 and exactly one
 * `file:line:col: error: ...` line on stderr, quickly, with no sanitizer
 * report (the sanitizer build exits non-zero or writes a second line).
 * HOSTILE_MAX_MS bounds each run (default 2000: a hang and quadratic-walk
 * guard for the sanitizer build; `make test` also runs the release binary
 * with 100, the target).  Each input is also checked in process.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/arena.h"
#include "core/check.h"
#include "tests/fixture.h"

struct buf {
	char *p;
	size_t n;
	size_t cap;
};

static void
put(struct buf *b, const char *s, size_t n)
{
	if (b->n + n + 1 > b->cap) {
		size_t cap = b->cap == 0 ? 4096 : b->cap;

		while (b->n + n + 1 > cap)
			cap *= 2;
		b->p = realloc(b->p, cap);
		assert_non_null(b->p);
		b->cap = cap;
	}
	memcpy(b->p + b->n, s, n);
	b->n += n;
	b->p[b->n] = '\0';
}

static void
puts_(struct buf *b, const char *s)
{
	put(b, s, strlen(s));
}

static void
repeat(struct buf *b, const char *s, size_t times)
{
	size_t i;

	for (i = 0; i < times; i++)
		puts_(b, s);
}

typedef void gen_fn(struct buf *b);

static void
gen_billion_laughs(struct buf *b)
{
	char line[256];
	int i;

	puts_(b, "a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n");
	for (i = 1; i < 10; i++) {
		snprintf(line, sizeof(line), "a%d: &a%d [*a%d, *a%d, *a%d, "
		    "*a%d, *a%d, *a%d, *a%d, *a%d, *a%d]\n", i, i, i - 1,
		    i - 1, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1);
		puts_(b, line);
	}
}

static void
gen_deep_flow(struct buf *b)
{
	puts_(b, "a: ");
	repeat(b, "[", 100000);
	repeat(b, "]", 100000);
	puts_(b, "\n");
}

static void
gen_deep_block(struct buf *b)
{
	size_t i;

	for (i = 0; i < 3000; i++) {
		repeat(b, " ", i);
		puts_(b, "k:\n");
	}
	repeat(b, " ", 3000);
	puts_(b, "leaf: 1\n");
}

static void
gen_invalid_utf8(struct buf *b)
{
	puts_(b, "base_model: meta-llama/Llama-3.1-8B\nname: caf\xe9\n");
}

static void
gen_nul(struct buf *b)
{
	puts_(b, "base_model: x\nlr: 1");
	put(b, "\0", 1);
	puts_(b, "\n");
}

static void
gen_two_docs(struct buf *b)
{
	puts_(b, "base_model: x\n---\nbase_model: y\n");
}

static void
gen_scalar_root(struct buf *b)
{
	puts_(b, "just a string\n");
}

static void
gen_list_root(struct buf *b)
{
	puts_(b, "- base_model: x\n- base_model: y\n");
}

static void
gen_empty(struct buf *b)
{
	put(b, "", 0);
}

static void
gen_tab(struct buf *b)
{
	puts_(b, "fsdp_config:\n\tfsdp_version: 2\n");
}

static void
gen_unterminated(struct buf *b)
{
	puts_(b, "base_model: \"meta-llama/Llama-3.1-8B\nlr: 0.1\n");
}

static void
gen_recursive(struct buf *b)
{
	puts_(b, "a: &loop\n  b: [*loop]\n");
}

static void
gen_unknown_alias(struct buf *b)
{
	puts_(b, "learning_rate: *lr\n");
}

static void
gen_long_key(struct buf *b)
{
	repeat(b, "k", 200000);
	puts_(b, ": 1\n");
}

static void
gen_long_explicit_key(struct buf *b)
{
	puts_(b, "? ");
	repeat(b, "k", 200000);
	puts_(b, "\n: 1\n");
}

static void
gen_many_keys(struct buf *b)
{
	char line[32];
	int i;

	for (i = 0; i < 200000; i++) {
		snprintf(line, sizeof(line), "k%d: %d\n", i, i);
		puts_(b, line);
	}
}

static void
gen_huge_scalar(struct buf *b)
{
	puts_(b, "k: ");
	repeat(b, "xxxxxxxxxxxxxxxx", 80000);
	puts_(b, "\n");
}

static void
gen_oversize(struct buf *b)
{
	size_t i;

	puts_(b, "k: [");
	for (i = 0; i < 2000000; i++)
		puts_(b, "1111, ");
	puts_(b, "1]\n");
}

static void
gen_alias_fanout(struct buf *b)
{
	/* Few bytes, many merged keys: merges count against max_nodes. */
	char line[64];
	int i;

	puts_(b, "base: &b {");
	for (i = 0; i < 2000; i++) {
		snprintf(line, sizeof(line), "%sk%d: %d", i ? ", " : "", i, i);
		puts_(b, line);
	}
	puts_(b, "}\n");
	for (i = 0; i < 200; i++) {
		snprintf(line, sizeof(line), "m%d: {<<: *b}\n", i);
		puts_(b, line);
	}
}

struct hostile {
	const char *name;
	gen_fn *gen;
	const char *msg;	/* substring of the error */
	int code;		/* what check_run returns in process */
};

static const struct hostile cases[] = {
	{ "billion_laughs", gen_billion_laughs, "max_nodes", ERR_LIMIT },
	{ "flow_nesting_100000", gen_deep_flow, "max_depth", ERR_LIMIT },
	{ "block_nesting_3000", gen_deep_block, "max_depth", ERR_LIMIT },
	{ "invalid_utf8", gen_invalid_utf8, "invalid UTF-8", ERR_PARSE },
	{ "nul_byte", gen_nul, "NUL byte", ERR_PARSE },
	{ "two_documents", gen_two_docs, "more than one", ERR_PARSE },
	{ "scalar_root", gen_scalar_root, "root must be a mapping",
	  ERR_PARSE },
	{ "list_root", gen_list_root, "root must be a mapping", ERR_PARSE },
	{ "empty_file", gen_empty, "empty document", ERR_PARSE },
	{ "tab_indentation", gen_tab, "tab", ERR_PARSE },
	{ "unterminated_quote", gen_unterminated, "quoted scalar",
	  ERR_PARSE },
	{ "recursive_alias", gen_recursive, "recursive alias", ERR_PARSE },
	{ "unknown_alias", gen_unknown_alias, "unknown alias", ERR_PARSE },
	{ "key_200000_chars", gen_long_key, "longer than 1024 characters",
	  ERR_PARSE },
	{ "explicit_key_200000_chars", gen_long_explicit_key, "max_key",
	  ERR_LIMIT },
	{ "keys_200000", gen_many_keys, "max_map_keys", ERR_LIMIT },
	{ "scalar_1280000_bytes", gen_huge_scalar, "max_scalar",
	  ERR_LIMIT },
	{ "file_over_8mib", gen_oversize, "max_bytes", ERR_LIMIT },
	{ "merge_fanout", gen_alias_fanout, "max_nodes", ERR_LIMIT },
};

static double max_seconds = 2.0;

/* One line, "path:line:col: error: <msg>\n", msg containing want. */
static void
assert_one_error_line(const char *err, const char *path, const char *want)
{
	size_t pl = strlen(path);
	const char *p = err;
	char *end;

	if (strncmp(p, path, pl) != 0 || p[pl] != ':')
		fail_msg("stderr does not start with the path: %.300s", err);
	p += pl + 1;
	if (strtoul(p, &end, 10) < 1 || *end != ':')
		fail_msg("no line number: %.300s", err);
	p = end + 1;
	if (strtoul(p, &end, 10) < 1 || strncmp(end, ": error: ", 9) != 0)
		fail_msg("no column: %.300s", err);
	if (strchr(err, '\n') != err + strlen(err) - 1)
		fail_msg("not exactly one line: %.300s", err);
	if (strstr(err, want) == NULL)
		fail_msg("message lacks '%s': %.300s", want, err);
}

static void
test_hostile__cli_exits_2_with_one_located_line(void **state)
{
	const struct hostile *h = *state;
	struct buf b = { 0 };
	char path[256];
	struct run r;
	char *argv[5];

	h->gen(&b);
	assert_int_equal(fixture_write_tmp(path, sizeof(path), b.p, b.n), 0);
	free(b.p);
	argv[0] = (char *)(uintptr_t)fixture_bin();
	argv[1] = (char *)(uintptr_t)"check";
	argv[2] = path;
	argv[3] = NULL;
	assert_int_equal(fixture_run(&r, argv, NULL), 0);
	unlink(path);
	if (r.status != 2)
		fail_msg("%s: exit %d, want 2; stderr: %.500s", h->name,
		    r.status, r.err);
	assert_int_equal(r.out_len, 0);
	assert_one_error_line(r.err, path, h->msg);
	if (r.seconds > max_seconds)
		fail_msg("%s took %.0f ms, limit %.0f ms", h->name,
		    r.seconds * 1e3, max_seconds * 1e3);
	print_message("%-28s %7.1f ms  %s", h->name, r.seconds * 1e3, r.err);
	fixture_run_free(&r);
}

static void
test_hostile__core_refuses_in_process(void **state)
{
	const struct hostile *h = *state;
	struct buf b = { 0 };
	struct context ctx;
	struct limits lim;
	struct arena a;
	struct err e = { 0 };
	struct report *r;
	int rv;

	h->gen(&b);
	context_default(&ctx);
	limits_default(&lim);
	arena_init(&a, (size_t)256 << 20);
	rv = check_run(&r, b.p != NULL ? b.p : "", b.n, &ctx, &lim, &a, &e);
	arena_fini(&a);
	free(b.p);
	if (rv != h->code)
		fail_msg("%s: code %d (%s), want %d", h->name, rv, e.msg,
		    h->code);
	assert_null(r);
	assert_true(e.loc.line >= 1);
	assert_non_null(strstr(e.msg, h->msg));
}

int
main(void)
{
	size_t n = sizeof(cases) / sizeof(cases[0]), i, k = 0;
	struct CMUnitTest *t = calloc(2 * n, sizeof(*t));
	char (*names)[96] = calloc(2 * n, sizeof(*names));
	const char *ms = getenv("HOSTILE_MAX_MS");
	int failed;

	if (t == NULL || names == NULL)
		return 1;
	if (ms != NULL)
		max_seconds = strtod(ms, NULL) / 1e3;
	for (i = 0; i < n; i++) {
		snprintf(names[k], sizeof(names[k]),
		    "test_hostile__cli_exits_2[%s]", cases[i].name);
		t[k].name = names[k];
		t[k].test_func = test_hostile__cli_exits_2_with_one_located_line;
		t[k].initial_state = (void *)(uintptr_t)&cases[i];
		k++;
		snprintf(names[k], sizeof(names[k]),
		    "test_hostile__core_refuses[%s]", cases[i].name);
		t[k].name = names[k];
		t[k].test_func = test_hostile__core_refuses_in_process;
		t[k].initial_state = (void *)(uintptr_t)&cases[i];
		k++;
	}
	failed = _cmocka_run_group_tests("hostile", t, k, NULL, NULL);
	free(t);
	free(names);
	return failed;
}
