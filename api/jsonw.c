/*
 * api/jsonw: see jsonw.h.  Output matches json_dumps(JSON_COMPACT): no
 * spaces, UTF-8 kept as is, '"' '\\' and control characters escaped.
 */
#include "jsonw.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void
jw_init(struct jsonw *w)
{
	memset(w, 0, sizeof(*w));
}

static bool
grow(struct jsonw *w, size_t n)
{
	size_t cap;
	char *b;

	if (w->oom)
		return false;
	if (w->cap - w->len > n)
		return true;
	cap = w->cap == 0 ? 1024 : w->cap;
	while (cap - w->len <= n) {
		if (cap > (size_t)-1 / 2) {
			w->oom = true;
			return false;
		}
		cap *= 2;
	}
	b = realloc(w->buf, cap);
	if (b == NULL) {
		w->oom = true;
		return false;
	}
	w->buf = b;
	w->cap = cap;
	return true;
}

void
jw_raw(struct jsonw *w, const char *s, size_t n)
{
	if (!grow(w, n))
		return;
	memcpy(w->buf + w->len, s, n);
	w->len += n;
	w->buf[w->len] = '\0';
}

void
jw_lit(struct jsonw *w, const char *s)
{
	jw_raw(w, s, strlen(s));
}

/* jsonw.h */
size_t
jw_utf8_len(const unsigned char *s, size_t left)
{
	size_t n, i;
	unsigned long cp;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		n = 2, cp = s[0] & 0x1fu;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		n = 3, cp = s[0] & 0x0fu;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		n = 4, cp = s[0] & 0x07u;
	else
		return 0;
	if (n > left)
		return 0;
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3fu);
	}
	if ((n == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
	    (n == 4 && (cp < 0x10000 || cp > 0x10ffff)))
		return 0;
	return n;
}

void
jw_str(struct jsonw *w, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t left;

	if (s == NULL) {
		jw_lit(w, "null");
		return;
	}
	left = strlen(s);
	jw_raw(w, "\"", 1);
	while (left > 0) {
		size_t run = 0, n;

		/* Copy the longest run that needs no escaping at once. */
		while (run < left && p[run] >= 0x20 && p[run] < 0x80 &&
		    p[run] != '"' && p[run] != '\\')
			run++;
		if (run > 0) {
			jw_raw(w, (const char *)p, run);
			p += run;
			left -= run;
			continue;
		}
		if (*p == '"' || *p == '\\') {
			char e[2] = { '\\', (char)*p };

			jw_raw(w, e, 2);
			n = 1;
		} else if (*p < 0x20) {
			char e[8];
			const char *esc = *p == '\n' ? "\\n" : *p == '\t' ?
			    "\\t" : *p == '\r' ? "\\r" : *p == '\b' ? "\\b" :
			    *p == '\f' ? "\\f" : NULL;

			if (esc != NULL)
				jw_lit(w, esc);
			else {
				snprintf(e, sizeof(e), "\\u%04x", *p);
				jw_lit(w, e);
			}
			n = 1;
		} else if ((n = jw_utf8_len(p, left)) > 0) {
			jw_raw(w, (const char *)p, n);
		} else {
			jw_lit(w, "\\ufffd");
			n = 1;
		}
		p += n;
		left -= n;
	}
	jw_raw(w, "\"", 1);
}

void
jw_xml(struct jsonw *w, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t left = strlen(s), n;

	while (left > 0) {
		const char *esc = NULL;

		switch (*p) {
		case '&':
			esc = "&amp;";
			break;
		case '<':
			esc = "&lt;";
			break;
		case '>':
			esc = "&gt;";
			break;
		case '"':
			esc = "&quot;";
			break;
		case '\'':
			esc = "&apos;";
			break;
		case '\n':
			esc = "&#10;";
			break;
		case '\r':
			esc = "&#13;";
			break;
		case '\t':
			esc = "&#9;";
			break;
		default:
			break;
		}
		if (esc != NULL) {
			jw_lit(w, esc);
			n = 1;
		} else if (*p < 0x20 || (n = jw_utf8_len(p, left)) == 0) {
			/* Not allowed in XML 1.0, or not UTF-8. */
			jw_lit(w, "\xef\xbf\xbd");
			n = 1;
		} else {
			jw_raw(w, (const char *)p, n);
		}
		p += n;
		left -= n;
	}
}

void
jw_int(struct jsonw *w, long long v)
{
	char b[24];
	int n = snprintf(b, sizeof(b), "%lld", v);

	jw_raw(w, b, (size_t)n);
}

/*
 * The one number format of every JSON preflight writes (issue 17): the
 * value rounded to 2 decimals, then trailing zeros dropped down to one
 * decimal: 5.93, 46.2, 0.0.  For every value below 10^13 this is the
 * shortest text that reads back as the rounded double, which is what
 * jansson prints with JSON_REAL_PRECISION(15) and Python's json prints,
 * so a report reads the same whichever path wrote it.
 */
void
jw_num2(struct jsonw *w, double v)
{
	char b[48];
	size_t n;
	int k;

	if (!isfinite(v)) {
		jw_lit(w, "null");
		return;
	}
	k = snprintf(b, sizeof(b), "%.2f", v);
	if (k < 0 || (size_t)k >= sizeof(b)) {
		jw_lit(w, "null");
		return;
	}
	n = (size_t)k;
	while (b[n - 1] == '0' && b[n - 2] != '.')
		n--;
	if (strncmp(b, "-0.0", n) == 0 && n == 4) {
		jw_lit(w, "0.0");
		return;
	}
	jw_raw(w, b, n);
}

double
jw_round2(double v)
{
	char b[48];
	double r;

	/* Through the same "%.2f" as jw_num2, so the two never disagree on
	   a value halfway between two cents (1.115 is 1.11 in both). */
	if (!isfinite(v) || snprintf(b, sizeof(b), "%.2f", v) >=
	    (int)sizeof(b))
		return v;
	r = strtod(b, NULL);
	return r == 0.0 ? 0.0 : r;
}

/* A newline and "  " * depth, in one append. */
static void
newline(struct jsonw *w, unsigned depth)
{
	static const char nl[] = "\n                                "
	    "                                ";
	size_t n = 1 + (size_t)depth * 2;

	if (n <= sizeof(nl) - 1) {
		jw_raw(w, nl, n);
		return;
	}
	jw_raw(w, nl, 1);
	for (n--; n > 0; n--)
		jw_raw(w, " ", 1);
}

void
jw_indent(struct jsonw *w, const char *text, size_t len, unsigned depth)
{
	size_t i = 0;

	while (i < len) {
		char c = text[i];

		if (c == '"') {
			size_t j = i + 1;

			while (j < len && text[j] != '"')
				j += text[j] == '\\' ? 2 : 1;
			if (j >= len)
				j = len - 1;
			jw_raw(w, text + i, j + 1 - i);
			i = j + 1;
		} else if (c == '{' || c == '[') {
			char close = c == '{' ? '}' : ']';

			if (i + 1 < len && text[i + 1] == close) {
				jw_raw(w, text + i, 2);
				i += 2;
				continue;
			}
			jw_raw(w, &c, 1);
			newline(w, ++depth);
			i++;
		} else if (c == '}' || c == ']') {
			newline(w, depth > 0 ? --depth : 0);
			jw_raw(w, &c, 1);
			i++;
		} else if (c == ',') {
			jw_raw(w, ",", 1);
			newline(w, depth);
			i++;
		} else if (c == ':') {
			jw_raw(w, ": ", 2);
			i++;
		} else {
			size_t j = i;

			/* A number or a literal; anything else (the writer
			   never emits whitespace) is copied byte by byte. */
			do
				j++;
			while (j < len && text[j] != '"' && text[j] != '{' &&
			    text[j] != '[' && text[j] != '}' &&
			    text[j] != ']' && text[j] != ',' &&
			    text[j] != ':');
			jw_raw(w, text + i, j - i);
			i = j;
		}
	}
}

void
jw_bool(struct jsonw *w, bool v)
{
	jw_lit(w, v ? "true" : "false");
}

void
jw_key(struct jsonw *w, const char *key)
{
	jw_raw(w, "\"", 1);
	jw_lit(w, key);
	jw_raw(w, "\":", 2);
}

char *
jw_take(struct jsonw *w, size_t *len)
{
	char *b;

	if (w->buf == NULL && !w->oom)
		jw_raw(w, "", 0);
	if (w->oom) {
		jw_fini(w);
		return NULL;
	}
	b = w->buf;
	if (len != NULL)
		*len = w->len;
	memset(w, 0, sizeof(*w));
	return b;
}

void
jw_fini(struct jsonw *w)
{
	free(w->buf);
	memset(w, 0, sizeof(*w));
}
