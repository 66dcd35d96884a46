/*
 * tests/test_corpus: every Axolotl example config loads, and its document
 * tree equals what PyYAML's safe_load builds (tests/fixtures/corpus/
 * golden.json, generated once by tests/gen/corpus_golden.py): same keys in
 * the same order, same types, same values, at every depth.
 */
#include <math.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "core/arena.h"
#include "core/doc.h"
#include "tests/fixture.h"

static json_t *golden;

/* Why n differs from the golden node g, or NULL when equal. */
static const char *
differ(const struct doc_node *n, json_t *g, char *why, size_t cap)
{
	const char *kind = json_string_value(json_array_get(g, 0));
	json_t *v = json_array_get(g, 1);
	size_t i;

	if (kind == NULL)
		return "malformed golden node";
	if (strcmp(kind, doc_kind_name(n->kind)) != 0) {
		snprintf(why, cap, "line %u: type %s, PyYAML %s", n->loc.line,
		    doc_kind_name(n->kind), kind);
		return why;
	}
	switch (n->kind) {
	case DOC_BOOL:
		if (n->b != json_is_true(v))
			goto value;
		return NULL;
	case DOC_INT: {
		char buf[32];

		snprintf(buf, sizeof(buf), "%lld", n->i);
		if (n->big || strcmp(buf, json_string_value(v)) != 0)
			goto value;
		return NULL;
	}
	case DOC_FLOAT: {
		double want = strtod(json_string_value(v), NULL);

		if (isnan(want) ? !isnan(n->f) : n->f != want)
			goto value;
		return NULL;
	}
	case DOC_STR:
		if (strlen(json_string_value(v)) != n->len ||
		    memcmp(json_string_value(v), n->text, n->len) != 0)
			goto value;
		return NULL;
	case DOC_SEQ:
		if (json_array_size(v) != n->n) {
			snprintf(why, cap, "line %u: %zu items, PyYAML %zu",
			    n->loc.line, n->n, json_array_size(v));
			return why;
		}
		for (i = 0; i < n->n; i++)
			if (differ(n->items[i], json_array_get(v, i), why,
			    cap) != NULL)
				return why;
		return NULL;
	case DOC_MAP:
		if (json_array_size(v) != n->n) {
			snprintf(why, cap, "line %u: %zu keys, PyYAML %zu",
			    n->loc.line, n->n, json_array_size(v));
			return why;
		}
		for (i = 0; i < n->n; i++) {
			json_t *kv = json_array_get(v, i);

			if (differ(n->pairs[i].key, json_array_get(kv, 0),
			    why, cap) != NULL ||
			    differ(n->pairs[i].value, json_array_get(kv, 1),
			    why, cap) != NULL)
				return why;
		}
		return NULL;
	case DOC_NULL:
	case DOC_TIMESTAMP:
		return NULL;
	}
	return "unknown kind";
value:
	snprintf(why, cap, "line %u:%u: value '%.60s' differs from PyYAML's",
	    n->loc.line, n->loc.col, n->text != NULL ? n->text : "");
	return why;
}

static void
test_corpus__tree_equals_pyyaml(void **state)
{
	const char *rel = *state;
	char path[1024], why[256];
	struct limits lim;
	struct arena a;
	struct err e = { 0 };
	struct doc *d;
	size_t len;
	char *buf;
	const char *bad;
	json_t *g;

	snprintf(path, sizeof(path), "%s/corpus/axolotl/%s",
	    fixture_shared(), rel);
	buf = fixture_read(path, &len);
	assert_non_null(buf);
	g = json_object_get(json_object_get(golden, "files"), rel);
	assert_non_null(g);
	limits_default(&lim);
	arena_init(&a, (size_t)64 << 20);
	if (doc_parse(&d, buf, len, &lim, &a, &e) != 0) {
		arena_fini(&a);
		free(buf);
		fail_msg("%s:%u:%u: %s", rel, e.loc.line, e.loc.col, e.msg);
	}
	bad = differ(d->root, g, why, sizeof(why));
	arena_fini(&a);
	free(buf);
	if (bad != NULL)
		fail_msg("%s: %s", rel, bad);
}

/* Every config on disk has a golden entry, and the other way round. */
static void
test_corpus__golden_covers_every_example(void **state)
{
	char dir[1024];
	size_t n;

	(void)state;
	snprintf(dir, sizeof(dir), "%s/corpus/axolotl/examples",
	    fixture_shared());
	n = fixture_count_configs(dir);
	assert_true(n > 0);
	assert_int_equal(json_object_size(json_object_get(golden, "files")),
	    n);
}

int
main(void)
{
	json_error_t jerr;
	json_t *files;
	struct CMUnitTest *t;
	const char *key;
	json_t *val;
	size_t n = 0;
	int failed;

	golden = json_load_file("tests/fixtures/corpus/golden.json", 0,
	    &jerr);
	if (golden == NULL) {
		fprintf(stderr, "test_corpus: golden.json: %s\n", jerr.text);
		return 1;
	}
	files = json_object_get(golden, "files");
	t = calloc(json_object_size(files) + 1, sizeof(*t));
	if (t == NULL)
		return 1;
	t[n].name = "test_corpus__golden_covers_every_example";
	t[n++].test_func = test_corpus__golden_covers_every_example;
	json_object_foreach(files, key, val) {
		t[n].name = key;
		t[n].test_func = test_corpus__tree_equals_pyyaml;
		t[n++].initial_state = (void *)(uintptr_t)key;
	}
	failed = _cmocka_run_group_tests("corpus", t, n, NULL, NULL);
	free(t);
	json_decref(golden);
	return failed;
}
