/*
 * tests/test_doc: the YAML document layer against PyYAML's behaviour.
 *
 * The scalar table (tests/fixtures/doc/scalars.tsv) was generated once with
 * PyYAML by tests/gen/scalars.py; each row is its own test.  The error
 * table checks code, line, column and message of every refusal.
 */
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/arena.h"
#include "core/doc.h"
#include "tests/fixture.h"

#define CAP ((size_t)64 << 20)

/* Parse text with the default limits; the arena stays for inspection. */
static int
parse(struct doc **d, struct arena *a, struct err *e, const char *text)
{
	struct limits lim;

	limits_default(&lim);
	arena_init(a, CAP);
	memset(e, 0, sizeof(*e));
	return doc_parse(d, text, strlen(text), &lim, a, e);
}

/* ---- scalar table -------------------------------------------------- */

struct scalar_row {
	char *input;
	char *type;
	char *value;
	char name[112];
};

static struct scalar_row *rows;
static size_t nrows;

static void
unescape(char *s)
{
	char *w = s;

	for (; *s != '\0'; s++) {
		if (*s == '\\' && s[1] != '\0') {
			s++;
			*w++ = *s == 'n' ? '\n' : *s == 't' ? '\t' : *s;
		} else {
			*w++ = *s;
		}
	}
	*w = '\0';
}

static char *scalar_file;

static int
load_scalars(void)
{
	char *p, *f[3];
	size_t cap = 0, k;

	scalar_file = fixture_read("tests/fixtures/doc/scalars.tsv", NULL);
	if (scalar_file == NULL)
		return -1;
	p = scalar_file;
	while ((k = fixture_tsv_next(&p, f, 3)) > 0) {
		if (k < 3)
			return -1;
		if (nrows == cap) {
			struct scalar_row *nr;

			cap = cap == 0 ? 64 : cap * 2;
			nr = realloc(rows, cap * sizeof(*rows));
			if (nr == NULL)
				return -1;
			rows = nr;
		}
		rows[nrows].input = f[0];
		rows[nrows].type = f[1];
		rows[nrows].value = f[2];
		unescape(rows[nrows].input);
		unescape(rows[nrows].value);
		snprintf(rows[nrows].name, sizeof(rows[nrows].name),
		    "test_doc__scalar_typed_like_pyyaml[%.60s]",
		    rows[nrows].input);
		for (char *c = rows[nrows].name; *c != '\0'; c++)
			if (*c == '\n')
				*c = ' ';
		nrows++;
	}
	return 0;
}

static void
test_doc__scalar_typed_like_pyyaml(void **state)
{
	const struct scalar_row *r = *state;
	char text[512];
	struct arena a;
	struct err e;
	struct doc *d;
	const struct doc_pair *p;
	int rv;

	snprintf(text, sizeof(text), "k: %s\n", r->input);
	rv = parse(&d, &a, &e, text);
	if (strcmp(r->type, "error") == 0) {
		if (rv == 0)
			fail_msg("'%s' parsed, PyYAML refuses it", r->input);
		assert_int_equal(rv, ERR_PARSE);
		assert_true(e.loc.line >= 1);
		arena_fini(&a);
		return;
	}
	if (rv != 0)
		fail_msg("'%s': %s", r->input, e.msg);
	p = doc_map_get(d->root, "k");
	assert_non_null(p);
	assert_string_equal(doc_kind_name(p->value->kind), r->type);
	switch (p->value->kind) {
	case DOC_BOOL:
		assert_string_equal(p->value->b ? "true" : "false", r->value);
		break;
	case DOC_INT: {
		char buf[32];

		snprintf(buf, sizeof(buf), "%lld", p->value->i);
		assert_false(p->value->big);
		assert_string_equal(buf, r->value);
		break;
	}
	case DOC_FLOAT: {
		double want = strtod(r->value, NULL);

		if (isnan(want))
			assert_true(isnan(p->value->f));
		else if (p->value->f != want)
			fail_msg("'%s': got %.17g, PyYAML %s", r->input,
			    p->value->f, r->value);
		break;
	}
	case DOC_STR:
		assert_string_equal(p->value->text, r->value);
		break;
	default:
		break;
	}
	arena_fini(&a);
}

/* ---- structure ----------------------------------------------------- */

static void
test_doc__locations_point_at_keys_and_values(void **state)
{
	static const char yaml[] =
	    "base_model: meta-llama/Llama-3.1-8B\n"
	    "fsdp_config:\n"
	    "  fsdp_offload_params:   true\n"
	    "datasets:\n"
	    "  - path: x\n"
	    "    type: alpaca\n";
	const struct doc_pair *p, *q;
	struct arena a;
	struct err e;
	struct doc *d;

	(void)state;
	assert_int_equal(parse(&d, &a, &e, yaml), 0);
	assert_int_equal(d->root->loc.line, 1);
	p = doc_map_get(d->root, "fsdp_config");
	assert_non_null(p);
	assert_int_equal(p->key_loc.line, 2);
	assert_int_equal(p->key_loc.col, 1);
	q = doc_map_get(p->value, "fsdp_offload_params");
	assert_non_null(q);
	assert_int_equal(q->key_loc.line, 3);
	assert_int_equal(q->key_loc.col, 3);
	assert_int_equal(q->value_loc.line, 3);
	assert_int_equal(q->value_loc.col, 26);
	assert_int_equal(q->value->kind, DOC_BOOL);
	p = doc_map_get(d->root, "datasets");
	assert_int_equal(p->value->kind, DOC_SEQ);
	assert_int_equal(p->value->n, 1);
	q = doc_map_get(p->value->items[0], "type");
	assert_int_equal(q->key_loc.line, 6);
	assert_int_equal(q->key_loc.col, 5);
	assert_string_equal(q->value->text, "alpaca");
	arena_fini(&a);
}

static void
test_doc__columns_count_characters_not_bytes(void **state)
{
	struct arena a;
	struct err e;
	struct doc *d;
	const struct doc_pair *p;

	(void)state;
	assert_int_equal(parse(&d, &a, &e,
	    "k: {\xc3\xa9\xc3\xa9: 1, x: 2}\n"), 0);
	p = doc_map_get(doc_map_get(d->root, "k")->value, "x");
	assert_non_null(p);
	assert_int_equal(p->key_loc.col, 12);
	arena_fini(&a);
}

static void
test_doc__alias_resolves_to_anchored_node(void **state)
{
	static const char yaml[] =
	    "a: &lr 0.0002\n"
	    "b: *lr\n"
	    "c: &m {x: 1}\n"
	    "d: *m\n";
	struct arena a;
	struct err e;
	struct doc *d;
	const struct doc_pair *b, *dd;

	(void)state;
	assert_int_equal(parse(&d, &a, &e, yaml), 0);
	b = doc_map_get(d->root, "b");
	assert_int_equal(b->value->kind, DOC_FLOAT);
	assert_true(b->value->f == 0.0002);
	/* The value is the anchored node; value_loc is the alias's. */
	assert_int_equal(b->value->loc.line, 1);
	assert_int_equal(b->value_loc.line, 2);
	assert_int_equal(b->value_loc.col, 4);
	dd = doc_map_get(d->root, "d");
	assert_ptr_equal(dd->value, doc_map_get(d->root, "c")->value);
	arena_fini(&a);
}

static void
test_doc__merge_key_explicit_keys_win(void **state)
{
	static const char yaml[] =
	    "base: &b {lr: 1, mbs: 2, gas: 3}\n"
	    "run:\n"
	    "  mbs: 8\n"
	    "  <<: *b\n";
	struct arena a;
	struct err e;
	struct doc *d;
	const struct doc_node *run;

	(void)state;
	assert_int_equal(parse(&d, &a, &e, yaml), 0);
	run = doc_map_get(d->root, "run")->value;
	assert_int_equal(run->n, 3);
	/* dict order: merged keys first, explicit ones win. */
	assert_string_equal(run->pairs[0].key->text, "lr");
	assert_string_equal(run->pairs[1].key->text, "mbs");
	assert_int_equal(run->pairs[1].value->i, 8);
	assert_int_equal(run->pairs[1].key_loc.line, 3);
	assert_false(run->pairs[1].merged);
	assert_true(run->pairs[0].merged);
	assert_null(d->dups);
	arena_fini(&a);
}

static void
test_doc__merge_list_first_mapping_wins(void **state)
{
	static const char yaml[] =
	    "a: &a {x: 1, y: 1}\n"
	    "b: &b {x: 2, z: 2}\n"
	    "c:\n"
	    "  <<: [*a, *b]\n";
	struct arena a;
	struct err e;
	struct doc *d;
	const struct doc_node *c;

	(void)state;
	assert_int_equal(parse(&d, &a, &e, yaml), 0);
	c = doc_map_get(d->root, "c")->value;
	/* PyYAML: {'x': 1, 'z': 2, 'y': 1} */
	assert_int_equal(c->n, 3);
	assert_string_equal(c->pairs[0].key->text, "x");
	assert_int_equal(c->pairs[0].value->i, 1);
	assert_string_equal(c->pairs[1].key->text, "z");
	assert_string_equal(c->pairs[2].key->text, "y");
	arena_fini(&a);
}

static void
test_doc__duplicate_key_keeps_last_and_is_reported(void **state)
{
	static const char yaml[] =
	    "sequence_len: 2048\n"
	    "lr: 1\n"
	    "fsdp_config:\n"
	    "  a: 1\n"
	    "  a: 2\n"
	    "sequence_len: 4096\n";
	struct arena a;
	struct err e;
	struct doc *d;
	const struct doc_pair *p;

	(void)state;
	assert_int_equal(parse(&d, &a, &e, yaml), 0);
	p = doc_map_get(d->root, "sequence_len");
	assert_int_equal(p->value->i, 4096);
	/* First position, last value: a Python dict. */
	assert_ptr_equal(p, &d->root->pairs[0]);
	assert_int_equal(p->key_loc.line, 6);
	assert_non_null(d->dups);
	assert_string_equal(d->dups->key, "a");
	assert_string_equal(d->dups->path, "fsdp_config.a");
	assert_int_equal(d->dups->loc.line, 5);
	assert_int_equal(d->dups->first_line, 4);
	assert_non_null(d->dups->next);
	assert_string_equal(d->dups->next->key, "sequence_len");
	assert_int_equal(d->dups->next->loc.line, 6);
	assert_int_equal(d->dups->next->loc.col, 1);
	assert_int_equal(d->dups->next->first_line, 1);
	assert_null(d->dups->next->next);
	arena_fini(&a);
}

static void
test_doc__numeric_keys_compare_like_python(void **state)
{
	struct arena a;
	struct err e;
	struct doc *d;

	(void)state;
	/* {1: a, 1.0: b, true: c} is one key in Python. */
	assert_int_equal(parse(&d, &a, &e, "1: a\n1.0: b\ntrue: c\n"), 0);
	assert_int_equal(d->root->n, 1);
	assert_string_equal(d->root->pairs[0].value->text, "c");
	arena_fini(&a);
}

static void
test_doc__custom_limits_apply(void **state)
{
	static const char yaml[] = "a: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]\n";
	struct limits lim;
	struct arena a;
	struct err e = { 0 };
	struct doc *d;

	(void)state;
	limits_default(&lim);
	lim.max_nodes = 10;
	arena_init(&a, CAP);
	assert_int_equal(doc_parse(&d, yaml, sizeof(yaml) - 1, &lim, &a, &e),
	    ERR_LIMIT);
	assert_non_null(strstr(e.msg, "max_nodes"));
	assert_null(d);
	arena_fini(&a);
	limits_default(&lim);
	lim.max_bytes = 10;
	memset(&e, 0, sizeof(e));
	arena_init(&a, CAP);
	assert_int_equal(doc_parse(&d, yaml, sizeof(yaml) - 1, &lim, &a, &e),
	    ERR_LIMIT);
	assert_non_null(strstr(e.msg, "max_bytes"));
	arena_fini(&a);
}

/* Every budget, small to large, fails cleanly or succeeds. */
static void
test_doc__every_allocation_failure_is_clean(void **state)
{
	char path[512];
	struct limits lim;
	size_t len, cap;
	char *buf;

	(void)state;
	snprintf(path, sizeof(path), "%s/corpus/axolotl/examples/llama-3/"
	    "qlora-fsdp-70b.yaml", fixture_shared());
	buf = fixture_read(path, &len);
	assert_non_null(buf);
	limits_default(&lim);
	for (cap = 64; cap < ((size_t)4 << 20); cap += cap / 8 + 1) {
		struct arena a;
		struct err e = { 0 };
		struct doc *d;
		int rv;

		arena_init(&a, cap);
		rv = doc_parse(&d, buf, len, &lim, &a, &e);
		arena_fini(&a);
		if (rv == 0) {
			free(buf);
			return;
		}
		assert_int_equal(rv, ERR_NOMEM);
		assert_null(d);
	}
	free(buf);
	fail_msg("parse never succeeded within 4 MiB");
}

/* Every byte of budget on a small document that uses each constructor
   (ints and floats with underscores go through scratch memory): running
   out is ERR_NOMEM wherever it happens, never a parse error. */
static void
test_doc__every_budget_byte_fails_as_nomem(void **state)
{
	static const char yaml[] = "base: &b {lr: 1_000.5, n: 0b1_0}\n"
	    "<<: *b\nint: 1_000\nhex: 0x_1F\noct: 0o17\nsex: 1:30\n"
	    "float: 2.5e+3\nfsex: 1:30.5\ninf: -.inf\nbool: Yes\nnull: ~\n"
	    "date: 2001-12-14\ntagged: !!int '42'\ntf: !!float '1_0.5'\n"
	    "list: [1, 2.0, x]\nint: 7\n";
	struct limits lim;
	size_t cap;

	(void)state;
	limits_default(&lim);
	for (cap = 0; cap < ((size_t)1 << 20); cap++) {
		struct arena a;
		struct err e = { 0 };
		struct doc *d;
		int rv;

		arena_init(&a, cap);
		rv = doc_parse(&d, yaml, sizeof(yaml) - 1, &lim, &a, &e);
		if (rv == 0) {
			assert_int_equal(doc_map_value(d->root, "int")->i, 7);
			assert_true(doc_map_value(d->root, "tf")->f == 10.5);
			arena_fini(&a);
			return;
		}
		arena_fini(&a);
		if (rv != ERR_NOMEM)
			fail_msg("budget %zu: error %d (%s), not ERR_NOMEM",
			    cap, rv, e.msg);
		assert_null(d);
	}
	fail_msg("parse never succeeded within 1 MiB");
}

/* ---- refusals ------------------------------------------------------ */

struct bad {
	const char *name;
	const char *yaml;
	size_t len;		/* 0: strlen(yaml) */
	int code;
	unsigned line;
	unsigned col;
	const char *msg;	/* substring of the message */
};

static const struct bad bads[] = {
	{ "unknown_alias", "a: 1\nb: *nope\n", 0, ERR_PARSE, 2, 4,
	  "unknown alias '*nope'" },
	{ "recursive_alias", "a: &x\n  b: *x\n", 0, ERR_PARSE, 2, 6,
	  "recursive alias" },
	{ "two_documents", "a: 1\n---\nb: 2\n", 0, ERR_PARSE, 2, 1,
	  "more than one YAML document" },
	{ "scalar_root", "hello\n", 0, ERR_PARSE, 1, 1, "got a str" },
	{ "list_root", "- a\n- b\n", 0, ERR_PARSE, 1, 1, "got a list" },
	{ "empty", "", 0, ERR_PARSE, 1, 1, "empty document" },
	{ "only_comments", "# nothing\n", 0, ERR_PARSE, 1, 1,
	  "empty document" },
	{ "null_root", "---\n~\n", 0, ERR_PARSE, 2, 1, "empty document" },
	{ "tab_indent", "a:\n\tb: 1\n", 0, ERR_PARSE, 2, 1, "tab" },
	{ "unterminated_quote", "a: \"abc\nb: 1\n", 0, ERR_PARSE, 3, 1,
	  "quoted scalar" },
	{ "invalid_utf8", "a: 1\nb: \xff\n", 0, ERR_PARSE, 2, 4,
	  "invalid UTF-8 at byte offset 8" },
	{ "overlong_utf8", "a: \xc0\xaf\n", 0, ERR_PARSE, 1, 4,
	  "invalid UTF-8" },
	{ "surrogate_utf8", "a: \xed\xa0\x80\n", 0, ERR_PARSE, 1, 4,
	  "invalid UTF-8" },
	{ "nul_byte", "a: 1\nb: x\0y\n", 12, ERR_PARSE, 2, 5,
	  "NUL byte at byte offset 9" },
	{ "control_char", "a: \x01\n", 0, ERR_PARSE, 1, 4,
	  "control character U+0001" },
	/* An encoding fault wins over a parse error before it, as if the
	   whole input were checked first. */
	{ "alias_then_bad_utf8", "a: *nope\nb: 1\nc: \xff\n", 0, ERR_PARSE,
	  3, 4, "invalid UTF-8 at byte offset 17" },
	{ "deep_then_nul", "a: [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["
	  "[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]"
	  "]]]]]]]]]]]]]]]]]\nb: x\0y\n", 141, ERR_PARSE, 2, 5,
	  "NUL byte" },
	{ "two_docs_then_control", "a: 1\n---\nb: 2\nc: \x01\n", 0,
	  ERR_PARSE, 4, 4, "control character U+0001" },
	{ "too_deep", "a: [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["
	  "[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]"
	  "]]]]]]]]]]]]]]]]\n", 0, ERR_LIMIT, 1, 67, "max_depth" },
	{ "merge_of_scalar", "a: 1\nb:\n  <<: 5\n", 0, ERR_PARSE, 3, 7,
	  "merge key" },
	{ "merge_list_of_scalar", "a: &a {x: 1}\nb:\n  <<: [*a, 3]\n", 0,
	  ERR_PARSE, 3, 7, "only mappings" },
	{ "unknown_tag", "a: !custom x\n", 0, ERR_PARSE, 1, 4,
	  "unsupported tag '!custom'" },
	{ "set_tag", "a: !!set {x: 1}\n", 0, ERR_PARSE, 1, 4,
	  "unsupported tag" },
	{ "bad_tagged_int", "a: !!int abc\n", 0, ERR_PARSE, 1, 4,
	  "not a valid !!int" },
	{ "duplicate_anchor", "a: &x 1\nb: &x 2\n", 0, ERR_PARSE, 2, 4,
	  "duplicate anchor '&x' (first at line 1)" },
	{ "merge_as_value", "a: <<\n", 0, ERR_PARSE, 1, 4,
	  "only valid as a mapping key" },
	{ "collection_key", "? [a, b]\n: 1\n", 0, ERR_PARSE, 1, 3,
	  "mapping key must be a scalar" },
	{ "bad_indent", "a: 1\n b: 2\n", 0, ERR_PARSE, 2, 3,
	  "mapping values are not allowed" },
};

static void
test_doc__refuses_with_location(void **state)
{
	const struct bad *b = *state;
	struct limits lim;
	struct arena a;
	struct err e = { 0 };
	struct doc *d;
	int rv;

	limits_default(&lim);
	arena_init(&a, CAP);
	rv = doc_parse(&d, b->yaml, b->len > 0 ? b->len : strlen(b->yaml),
	    &lim, &a, &e);
	arena_fini(&a);
	if (rv != b->code)
		fail_msg("%s: code %d (%s), want %d", b->name, rv, e.msg,
		    b->code);
	assert_null(d);
	if (strstr(e.msg, b->msg) == NULL)
		fail_msg("%s: message '%s' lacks '%s'", b->name, e.msg,
		    b->msg);
	if (e.loc.line != b->line || e.loc.col != b->col)
		fail_msg("%s: at %u:%u, want %u:%u (%s)", b->name, e.loc.line,
		    e.loc.col, b->line, b->col, e.msg);
}

static void
test_doc__error_path_names_the_key(void **state)
{
	struct arena a;
	struct err e;
	struct doc *d;

	(void)state;
	assert_int_equal(parse(&d, &a, &e,
	    "fsdp_config:\n  inner:\n    k: *missing\n"), ERR_PARSE);
	assert_string_equal(e.loc.path, "fsdp_config.inner.k");
	arena_fini(&a);
}

/* What doc_map_get answered before mappings had an index: the first
   string key with these bytes, by a scan. */
static const struct doc_pair *
scan_get(const struct doc_node *m, const char *key)
{
	size_t i, n = strlen(key);

	for (i = 0; i < m->n; i++)
		if (m->pairs[i].key->kind == DOC_STR &&
		    m->pairs[i].key->len == n &&
		    memcmp(m->pairs[i].key->text, key, n) == 0)
			return &m->pairs[i];
	return NULL;
}

static void
test_doc__index_finds_what_a_scan_finds(void **state)
{
	static const char *const probes[] = { "a", "b", "base", "x", "1",
	    "true", "null", "", "k17", "k1999", "k2000",
	    "key_with_a_longer_name_than_eight",
	    "key_with_a_longer_name_than_eighx", "c" };
	struct arena a;
	struct err e;
	struct doc *d;
	struct doc_node copy;
	char *yaml = malloc(64 * 1024), key[16];
	size_t i, n = 0;

	(void)state;
	assert_non_null(yaml);
	n += (size_t)snprintf(yaml + n, 64 * 1024 - n, "base: &b {x: 1, c: 2}\n"
	    "<<: *b\na: 1\nb: 2\na: 3\n1: int\n'1': str\ntrue: bool\n"
	    "'true': s\n? null\n: n\n'': empty\nkey_with_a_longer_name_than_"
	    "eight: 1\n");
	for (i = 0; i < 2000; i++)
		n += (size_t)snprintf(yaml + n, 64 * 1024 - n, "k%zu: %zu\n",
		    i, i);
	assert_int_equal(parse(&d, &a, &e, yaml), 0);
	assert_non_null(d->root->slots);
	for (i = 0; i < sizeof(probes) / sizeof(probes[0]); i++)
		assert_ptr_equal(doc_map_get(d->root, probes[i]),
		    scan_get(d->root, probes[i]));
	for (i = 0; i < 2001; i++) {
		snprintf(key, sizeof(key), "k%zu", i);
		assert_ptr_equal(doc_map_get(d->root, key),
		    scan_get(d->root, key));
	}
	assert_string_equal(doc_map_value(d->root, "a")->text, "3");
	assert_string_equal(doc_map_value(d->root, "1")->text, "str");
	assert_string_equal(doc_map_value(d->root, "x")->text, "1");
	/* Pairs laid out by hand (a merge): reversed, with a repeat. */
	copy = *d->root;
	copy.pairs = ARENA_NEW(&a, struct doc_pair, d->root->n + 1);
	assert_non_null(copy.pairs);
	for (i = 0; i < d->root->n; i++)
		copy.pairs[i] = d->root->pairs[d->root->n - 1 - i];
	copy.pairs[d->root->n] = d->root->pairs[0];
	copy.n = d->root->n + 1;
	doc_map_index(&copy, &a);
	assert_non_null(copy.slots);
	assert_ptr_not_equal(copy.slots, d->root->slots);
	for (i = 0; i < sizeof(probes) / sizeof(probes[0]); i++)
		assert_ptr_equal(doc_map_get(&copy, probes[i]),
		    scan_get(&copy, probes[i]));
	/* Without an index lookups scan, with the same answers. */
	copy.slots = NULL;
	for (i = 0; i < sizeof(probes) / sizeof(probes[0]); i++)
		assert_ptr_equal(doc_map_get(&copy, probes[i]),
		    scan_get(&copy, probes[i]));
	arena_fini(&a);
	free(yaml);
}

static const void *_Atomic shared_slot;

static void *
take_shared(void *arg)
{
	const struct doc **out = arg;

	*out = doc_parse_shared(&shared_slot,
	    "{\"zero_optimization\": {\"stage\": 3}, \"bf16\": "
	    "{\"enabled\": \"auto\"}}");
	return NULL;
}

static void
test_doc__shared_parse_is_kept_once_per_process(void **state)
{
	static const void *_Atomic bad_slot;
	pthread_t t[8];
	const struct doc *got[8], *again;
	size_t i;

	(void)state;
	/* Eight threads race the first use: all get the one document. */
	for (i = 0; i < 8; i++)
		assert_int_equal(pthread_create(&t[i], NULL, take_shared,
		    &got[i]), 0);
	for (i = 0; i < 8; i++)
		assert_int_equal(pthread_join(t[i], NULL), 0);
	assert_non_null(got[0]);
	for (i = 1; i < 8; i++)
		assert_ptr_equal(got[i], got[0]);
	take_shared(&again);
	assert_ptr_equal(again, got[0]);
	assert_int_equal(doc_map_value(doc_map_value(got[0]->root,
	    "zero_optimization"), "stage")->i, 3);
	/* Text that does not parse: NULL, and nothing kept. */
	assert_null(doc_parse_shared(&bad_slot, "a: [1, 2\n"));
	assert_null(bad_slot);
	assert_null(doc_parse_shared(&bad_slot, "- not a mapping\n"));
}

int
main(void)
{
	static const struct CMUnitTest fixed[] = {
		cmocka_unit_test(test_doc__locations_point_at_keys_and_values),
		cmocka_unit_test(test_doc__columns_count_characters_not_bytes),
		cmocka_unit_test(test_doc__alias_resolves_to_anchored_node),
		cmocka_unit_test(test_doc__merge_key_explicit_keys_win),
		cmocka_unit_test(test_doc__merge_list_first_mapping_wins),
		cmocka_unit_test(
		    test_doc__duplicate_key_keeps_last_and_is_reported),
		cmocka_unit_test(test_doc__numeric_keys_compare_like_python),
		cmocka_unit_test(test_doc__index_finds_what_a_scan_finds),
		cmocka_unit_test(
		    test_doc__shared_parse_is_kept_once_per_process),
		cmocka_unit_test(test_doc__custom_limits_apply),
		cmocka_unit_test(test_doc__every_allocation_failure_is_clean),
		cmocka_unit_test(test_doc__every_budget_byte_fails_as_nomem),
		cmocka_unit_test(test_doc__error_path_names_the_key),
	};
	size_t nfixed = sizeof(fixed) / sizeof(fixed[0]);
	size_t nbad = sizeof(bads) / sizeof(bads[0]);
	struct CMUnitTest *t;
	char (*names)[96];
	size_t i, n = 0;
	int failed;

	if (load_scalars() != 0 || nrows < 80) {
		fprintf(stderr, "test_doc: cannot read the scalar table\n");
		return 1;
	}
	t = calloc(nfixed + nrows + nbad, sizeof(*t));
	names = calloc(nbad, sizeof(*names));
	if (t == NULL || names == NULL)
		return 1;
	for (i = 0; i < nfixed; i++)
		t[n++] = fixed[i];
	for (i = 0; i < nrows; i++) {
		t[n].name = rows[i].name;
		t[n].test_func = test_doc__scalar_typed_like_pyyaml;
		t[n++].initial_state = &rows[i];
	}
	for (i = 0; i < nbad; i++) {
		snprintf(names[i], sizeof(names[i]),
		    "test_doc__refuses_with_location[%s]", bads[i].name);
		t[n].name = names[i];
		t[n].test_func = test_doc__refuses_with_location;
		t[n++].initial_state = (void *)(uintptr_t)&bads[i];
	}
	failed = _cmocka_run_group_tests("doc", t, n, NULL, NULL);
	free(t);
	free(names);
	free(rows);
	free(scalar_file);
	return failed;
}
