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

void jw_init(struct jsonw *w);
void jw_raw(struct jsonw *w, const char *s, size_t n);
void jw_lit(struct jsonw *w, const char *s);	/* jw_raw of a C string */
/* A JSON string; NULL writes null.  Invalid UTF-8 becomes U+FFFD. */
void jw_str(struct jsonw *w, const char *s);
void jw_int(struct jsonw *w, long long v);
void jw_bool(struct jsonw *w, bool v);
/* A number rounded to 2 decimals; NaN and infinities write null. */
void jw_num2(struct jsonw *w, double v);
/* `"key":` (key is a trusted literal: no escaping). */
void jw_key(struct jsonw *w, const char *key);

/* The text (caller frees) and its length, or NULL when out of memory. */
char *jw_take(struct jsonw *w, size_t *len);
void jw_fini(struct jsonw *w);

#endif /* API_JSONW_H */
