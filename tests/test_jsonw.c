/*
 * tests/test_jsonw: the direct JSON writer agrees with jansson: whatever
 * it writes parses back to the same value, escaping included, and bad
 * UTF-8 becomes U+FFFD instead of invalid JSON.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "api/jsonw.h"

/* Write s as a JSON string and parse it back with jansson. */
static json_t *
round_trip(const char *s)
{
	struct jsonw w;
	size_t len;
	char *text;
	json_t *j;

	jw_init(&w);
	jw_str(&w, s);
	text = jw_take(&w, &len);
	assert_non_null(text);
	j = json_loadb(text, len, JSON_DECODE_ANY, NULL);
	free(text);
	assert_non_null(j);
	return j;
}

static void
test_jsonw__strings_round_trip(void **state)
{
	static const char *const cases[] = {
		"", "plain", "quote \" and backslash \\",
		"controls \n\t\r\b\f \x01\x1f end", "slash / stays",
		"utf-8: \xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80",
		"key 'sequence_len' appears twice",
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		json_t *j = round_trip(cases[i]);

		assert_string_equal(json_string_value(j), cases[i]);
		json_decref(j);
	}
}

static void
test_jsonw__bad_utf8_becomes_replacement(void **state)
{
	/* A lone continuation byte, a truncated sequence, an overlong
	   encoding and a UTF-16 surrogate. */
	static const char *const bad[][2] = {
		{ "a\x80z", "a\xef\xbf\xbdz" },
		{ "a\xc3", "a\xef\xbf\xbd" },
		{ "\xc0\xaf", "\xef\xbf\xbd\xef\xbf\xbd" },
		{ "\xed\xa0\x80", "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd" },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		json_t *j = round_trip(bad[i][0]);

		assert_string_equal(json_string_value(j), bad[i][1]);
		json_decref(j);
	}
}

static void
test_jsonw__values_and_null(void **state)
{
	struct jsonw w;
	char *text;
	json_t *j;

	(void)state;
	jw_init(&w);
	jw_lit(&w, "{");
	jw_key(&w, "n");
	jw_int(&w, -9223372036854775807LL - 1);
	jw_lit(&w, ",");
	jw_key(&w, "b");
	jw_bool(&w, true);
	jw_lit(&w, ",");
	jw_key(&w, "s");
	jw_str(&w, NULL);
	jw_lit(&w, "}");
	text = jw_take(&w, NULL);
	assert_string_equal(text, "{\"n\":-9223372036854775808,\"b\":true,"
	    "\"s\":null}");
	j = json_loads(text, 0, NULL);
	assert_non_null(j);
	json_decref(j);
	free(text);
}

int
main(void)
{
	static const struct CMUnitTest t[] = {
		cmocka_unit_test(test_jsonw__strings_round_trip),
		cmocka_unit_test(test_jsonw__bad_utf8_becomes_replacement),
		cmocka_unit_test(test_jsonw__values_and_null),
	};

	return cmocka_run_group_tests_name("jsonw", t, NULL, NULL);
}
