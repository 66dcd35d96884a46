/*
 * tests/test_config: annotation parsing and pydantic's lax coercion
 * (tests/fixtures/config/coercion.tsv, generated with pydantic by
 * tests/gen/coercion.py), and the typed-config rules over documents.
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
#include "core/doc.h"
#include "core/keys.h"
#include "core/types.h"
#include "tests/fixture.h"

struct row {
	char *type;
	char *value;
	int ok;
	char name[160];
};

static struct row *rows;
static size_t nrows;
static char *file;

static int
load(void)
{
	char *p, *f[3];
	size_t cap = 0, k;

	file = fixture_read("tests/fixtures/config/coercion.tsv", NULL);
	if (file == NULL)
		return -1;
	p = file;
	while ((k = fixture_tsv_next(&p, f, 3)) > 0) {
		if (k < 3)
			return -1;
		if (nrows == cap) {
			struct row *nr;

			cap = cap == 0 ? 256 : cap * 2;
			nr = realloc(rows, cap * sizeof(*rows));
			if (nr == NULL)
				return -1;
			rows = nr;
		}
		rows[nrows].type = f[0];
		rows[nrows].value = f[1];
		rows[nrows].ok = f[2][0] == '1';
		snprintf(rows[nrows].name, sizeof(rows[nrows].name),
		    "test_config__coerces_like_pydantic[%.60s <- %.40s]", f[0],
		    f[1]);
		nrows++;
	}
	return 0;
}

static void
test_config__coerces_like_pydantic(void **state)
{
	const struct row *r = *state;
	struct limits lim;
	struct arena a;
	struct err e = { 0 };
	struct doc *d;
	struct ty *t;
	char yaml[256];

	limits_default(&lim);
	arena_init(&a, 1 << 20);
	t = ty_parse(r->type, &a);
	if (t == NULL)
		fail_msg("cannot parse type '%s'", r->type);
	snprintf(yaml, sizeof(yaml), "v: %s\n", r->value);
	assert_int_equal(doc_parse(&d, yaml, strlen(yaml), &lim, &a, &e), 0);
	if (ty_accepts(t, d->root->pairs[0].value) != (r->ok != 0))
		fail_msg("%s <- %s: preflight says %s, pydantic %s", r->type,
		    r->value, r->ok ? "invalid" : "valid",
		    r->ok ? "valid" : "invalid");
	arena_fini(&a);
}

/* Every annotation in the key tables parses. */
static void
test_config__every_key_type_parses(void **state)
{
	struct arena a;
	size_t i, unparsed = 0;

	(void)state;
	arena_init(&a, (size_t)16 << 20);
	for (i = 0; i < keys_table_len; i++)
		if (ty_parse(keys_table[i].type, &a) == NULL) {
			print_error("unparsed: %s: %s\n", keys_table[i].key,
			    keys_table[i].type);
			unparsed++;
		}
	arena_fini(&a);
	assert_int_equal(unparsed, 0);
}

static void
test_config__describes_types(void **state)
{
	struct arena a;
	char buf[200];

	(void)state;
	arena_init(&a, 1 << 20);
	ty_describe(buf, sizeof(buf), ty_parse(
	    "Union[Literal['auto'], bool, NoneType]", &a));
	assert_string_equal(buf, "one of 'auto', a boolean or null");
	ty_describe(buf, sizeof(buf), ty_parse("list[str] | None", &a));
	assert_string_equal(buf, "a list of a string or null");
	arena_fini(&a);
}

int
main(void)
{
	static const struct CMUnitTest fixed[] = {
		cmocka_unit_test(test_config__every_key_type_parses),
		cmocka_unit_test(test_config__describes_types),
	};
	struct CMUnitTest *t;
	size_t nf = sizeof(fixed) / sizeof(fixed[0]), i, n = 0;
	int failed;

	if (load() != 0 || nrows < 100) {
		fprintf(stderr, "test_config: cannot read coercion.tsv\n");
		return 1;
	}
	t = calloc(nf + nrows, sizeof(*t));
	if (t == NULL)
		return 1;
	for (i = 0; i < nf; i++)
		t[n++] = fixed[i];
	for (i = 0; i < nrows; i++) {
		t[n].name = rows[i].name;
		t[n].test_func = test_config__coerces_like_pydantic;
		t[n++].initial_state = &rows[i];
	}
	failed = _cmocka_run_group_tests("config", t, n, NULL, NULL);
	free(t);
	free(rows);
	free(file);
	return failed;
}
