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

/* The one number format: 2 decimals at most, no trailing zero past the
   first decimal, what jansson prints at JSON_REAL_PRECISION(15). */
static void
test_jsonw__numbers_have_one_format(void **state)
{
	static const struct {
		double v;
		const char *want;
	} cases[] = {
		{ 5.93, "5.93" }, { 5.9299999999999997, "5.93" },
		{ 46.15, "46.15" }, { 46.2, "46.2" }, { 0.0, "0.0" },
		{ -0.001, "0.0" }, { 15.109, "15.11" }, { 79.6, "79.6" },
		{ 48582.37, "48582.37" }, { 1e9, "1000000000.0" },
		{ -3.5, "-3.5" }, { 0.005, "0.01" }, { 1.115, "1.11" },
		{ 2.675, "2.67" },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct jsonw w;
		json_t *j;
		char *text, *jan;

		jw_init(&w);
		jw_num2(&w, cases[i].v);
		text = jw_take(&w, NULL);
		assert_non_null(text);
		if (strcmp(text, cases[i].want) != 0)
			fail_msg("%.17g: got %s, want %s", cases[i].v, text,
			    cases[i].want);
		j = json_real(jw_round2(cases[i].v));
		jan = json_dumps(j, JSON_ENCODE_ANY | JSON_REAL_PRECISION(15));
		assert_string_equal(jan, text);
		free(jan);
		json_decref(j);
		free(text);
	}
}

/* jw_indent lays compact text out as json_dumps(JSON_INDENT(2)). */
static void
test_jsonw__indent_matches_jansson(void **state)
{
	static const char compact[] = "{\"a\":[1,2,{\"b\":\"x,y:{[\\\"]}\"}],"
	    "\"e\":[],\"o\":{},\"n\":null,\"r\":0.5}";
	struct jsonw w;
	json_t *j;
	char *ours, *jan;

	(void)state;
	jw_init(&w);
	jw_indent(&w, compact, strlen(compact), 0);
	ours = jw_take(&w, NULL);
	j = json_loads(compact, 0, NULL);
	assert_non_null(j);
	jan = json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER |
	    JSON_REAL_PRECISION(15));
	assert_string_equal(ours, jan);
	free(ours);
	free(jan);
	json_decref(j);
}

/* XML escaping: markup and quotes as entities, control bytes and bad
   UTF-8 as U+FFFD, good UTF-8 kept. */
static void
test_jsonw__xml_escaping(void **state)
{
	struct jsonw w;
	char *text;

	(void)state;
	jw_init(&w);
	jw_xml(&w, "a<b>&\"c'\n\x01\xc3\xa9\x80");
	text = jw_take(&w, NULL);
	assert_string_equal(text, "a&lt;b&gt;&amp;&quot;c&apos;&#10;"
	    "\xef\xbf\xbd\xc3\xa9\xef\xbf\xbd");
	free(text);
}

int
main(void)
{
	static const struct CMUnitTest t[] = {
		cmocka_unit_test(test_jsonw__strings_round_trip),
		cmocka_unit_test(test_jsonw__bad_utf8_becomes_replacement),
		cmocka_unit_test(test_jsonw__values_and_null),
		cmocka_unit_test(test_jsonw__numbers_have_one_format),
		cmocka_unit_test(test_jsonw__indent_matches_jansson),
		cmocka_unit_test(test_jsonw__xml_escaping),
	};

	return cmocka_run_group_tests_name("jsonw", t, NULL, NULL);
}
