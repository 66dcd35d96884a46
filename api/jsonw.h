/*
 * api/jsonw: a small append-only JSON text writer for the hot paths (the
 * report of every check).  Building a jansson tree for each report costs
 * more than the check itself; this writes the same JSON straight into one
 * buffer.  Out of memory is sticky: every call after it does nothing and
 * jw_take() returns NULL.
 */
#ifndef API_JSONW_H
#define API_JSONW_H

#include <stdbool.h>
#include <stddef.h>

struct jsonw {
	char *buf;		/* malloc'd, NUL-terminated while not oom */
	size_t len, cap;
	bool oom;
};

/* Length of the valid UTF-8 sequence at s (1..4; left bytes there),
   or 0: no overlong forms, surrogates or code points past U+10FFFF. */
size_t jw_utf8_len(const unsigned char *s, size_t left);

void jw_init(struct jsonw *w);
void jw_raw(struct jsonw *w, const char *s, size_t n);
void jw_lit(struct jsonw *w, const char *s);	/* jw_raw of a C string */
/* A JSON string; NULL writes null.  Invalid UTF-8 becomes U+FFFD. */
void jw_str(struct jsonw *w, const char *s);
void jw_int(struct jsonw *w, long long v);
/* s escaped for XML text or a quoted attribute (the JUnit writer):
   & < > " ' and line breaks as entities; other control characters and
   invalid UTF-8 become U+FFFD, which XML 1.0 allows. */
void jw_xml(struct jsonw *w, const char *s);
void jw_bool(struct jsonw *w, bool v);
/*
 * A number rounded to 2 decimals without trailing zeros past the first
 * decimal (5.93, 46.2, 0.0): the one number format of every JSON the CLI
 * and the API write.  NaN and infinities write null.
 */
void jw_num2(struct jsonw *w, double v);
/* v rounded to 2 decimals as jw_num2 prints it, for a number that goes
   through jansson (dumped with JSON_REAL_PRECISION(15) it prints the
   same text). */
double jw_round2(double v);
/*
 * Append compact JSON text (as this writer makes it) re-indented the way
 * json_dumps(JSON_INDENT(2)) lays it out, starting at nesting depth
 * depth: for people reading the CLI's --format json.
 */
void jw_indent(struct jsonw *w, const char *text, size_t len,
    unsigned depth);
/* `"key":` (key is a trusted literal: no escaping). */
void jw_key(struct jsonw *w, const char *key);

/* The text (caller frees) and its length, or NULL when out of memory. */
char *jw_take(struct jsonw *w, size_t *len);
void jw_fini(struct jsonw *w);

#endif /* API_JSONW_H */
