/*
 * core/types_check: whether a value is accepted by a parsed annotation,
 * with pydantic v2 lax-mode semantics (core/types.c parses them; verified
 * against pydantic by tests/fixtures/config/coercion.tsv).  No I/O.
 */
#include "types.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "doc.h"
#include "types_int.h"


static bool
ieq(const char *a, const char *b)
{
	for (; *a != '\0' && *b != '\0'; a++, b++) {
		char x = *a >= 'A' && *a <= 'Z' ? (char)(*a + 32) : *a;

		if (x != *b)
			return false;
	}
	return *a == *b;
}

/* pydantic's str -> float: Python float() on the stripped text. */
static bool
str_is_float(const char *s, size_t len)
{
	char buf[64], *end;
	size_t i, n = 0;

	while (len > 0 && (*s == ' ' || *s == '\t' || *s == '\n')) {
		s++;
		len--;
	}
	while (len > 0 && (s[len - 1] == ' ' || s[len - 1] == '\t' ||
	    s[len - 1] == '\n'))
		len--;
	if (len == 0 || len >= sizeof(buf))
		return false;
	for (i = 0; i < len; i++) {
		char c = s[i];

		/* Python float() takes digits, one dot, e, sign, inf, nan
		   and single underscores between digits. */
		if (c == '_') {
			if (i == 0 || i + 1 == len || !(s[i - 1] >= '0' &&
			    s[i - 1] <= '9') || !(s[i + 1] >= '0' &&
			    s[i + 1] <= '9'))
				return false;
			continue;
		}
		if (c == 'x' || c == 'X' || c == 'p' || c == 'P')
			return false;	/* strtod would take hex floats */
		buf[n++] = c;
	}
	buf[n] = '\0';
	if (ieq(buf, "inf") || ieq(buf, "+inf") || ieq(buf, "-inf") ||
	    ieq(buf, "infinity") || ieq(buf, "+infinity") ||
	    ieq(buf, "-infinity") || ieq(buf, "nan") || ieq(buf, "+nan") ||
	    ieq(buf, "-nan"))
		return true;
	for (i = 0; i < n; i++)
		if (!((buf[i] >= '0' && buf[i] <= '9') || buf[i] == '.' ||
		    buf[i] == 'e' || buf[i] == 'E' || buf[i] == '+' ||
		    buf[i] == '-'))
			return false;
	strtod(buf, &end);
	return end == buf + n && n > 0;
}

bool
ty_python_float(const char *s, size_t len)
{
	return str_is_float(s, len);
}

bool
ty_python_int(const char *s, size_t len, long long *out)
{
	size_t i = 0;
	bool digit = false, neg = false;
	long long v = 0;
	int ndigits = 0;

	while (len > 0 && (*s == ' ' || *s == '\t' || *s == '\n')) {
		s++;
		len--;
	}
	while (len > 0 && (s[len - 1] == ' ' || s[len - 1] == '\t' ||
	    s[len - 1] == '\n'))
		len--;
	if (len > 0 && (s[0] == '+' || s[0] == '-'))
		neg = s[i++] == '-';
	for (; i < len; i++) {
		if (s[i] >= '0' && s[i] <= '9') {
			digit = true;
			if (++ndigits <= 18)
				v = v * 10 + (s[i] - '0');
		} else if (s[i] == '_' && digit && i + 1 < len &&
		    s[i + 1] >= '0' && s[i + 1] <= '9') {
			continue;
		} else if (s[i] == '.') {
			/* "2.0" is an int to pydantic; "2.5" and "2." not. */
			if (i + 1 == len)
				return false;
			for (i++; i < len; i++)
				if (s[i] != '0')
					return false;
			break;
		} else {
			return false;
		}
	}
	if (!digit || (out != NULL && ndigits > 18))
		return false;
	if (out != NULL)
		*out = neg ? -v : v;
	return true;
}

/* A number's value as Python sees it (True == 1 == 1.0). */
static bool
as_number(const struct doc_node *n, double *out)
{
	if (n->kind == DOC_BOOL)
		*out = n->b ? 1.0 : 0.0;
	else if (n->kind == DOC_INT && !n->big)
		*out = (double)n->i;
	else if (n->kind == DOC_FLOAT)
		*out = n->f;
	else
		return false;
	return true;
}

/* Python ==, which is what matching a Literal comes down to. */
static bool
literal_eq(const struct doc_node *want, const struct doc_node *got)
{
	double x, y;

	if (as_number(want, &x) && as_number(got, &y))
		return x == y;
	if (want->kind != got->kind)
		return false;
	switch (want->kind) {
	case DOC_NULL:
		return true;
	case DOC_BOOL:
		return want->b == got->b;
	case DOC_INT:
		return !got->big && want->i == got->i;
	case DOC_STR:
		return want->len == got->len &&
		    memcmp(want->text, got->text, got->len) == 0;
	default:
		return false;
	}
}

/* Characters (UTF-8 code points) of a string. */
static long
chars(const struct doc_node *n)
{
	long c = 0;
	size_t i;

	for (i = 0; i < n->len; i++)
		if (((unsigned char)n->text[i] & 0xc0) != 0x80)
			c++;
	return c;
}

bool
ty_within(const struct ty_bounds *b, const struct doc_node *n)
{
	double v;
	long len = -1;

	if (b == NULL || n->kind == DOC_NULL)
		return true;
	if (n->kind == DOC_SEQ || n->kind == DOC_MAP)
		len = (long)n->n;
	else if (n->kind == DOC_STR)
		len = chars(n);
	if (len >= 0 && ((b->min_len >= 0 && len < b->min_len) ||
	    (b->max_len >= 0 && len > b->max_len)))
		return false;
	if (b->prefix != NULL && n->kind == DOC_STR &&
	    strncmp(n->text, b->prefix, strlen(b->prefix)) != 0)
		return false;
	if (!(b->has_ge || b->has_gt || b->has_le || b->has_lt))
		return true;
	if (n->kind == DOC_STR) {
		char *end;

		v = strtod(n->text, &end);
		if (end == n->text)
			return true;	/* not a number: the type's to say */
	} else if (!as_number(n, &v)) {
		return true;
	}
	return !((b->has_ge && !(v >= b->ge)) || (b->has_gt && !(v > b->gt)) ||
	    (b->has_le && !(v <= b->le)) || (b->has_lt && !(v < b->lt)));
}

/* Is the string or int n one of the tab-separated members? */
static bool
enum_has(const char *members, const struct doc_node *n)
{
	const char *m = members;

	if (!(n->kind == DOC_STR || (n->kind == DOC_INT && !n->big)))
		return false;
	while (*m != '\0') {
		const char *end = strchr(m, '\t');
		size_t len = end != NULL ? (size_t)(end - m) : strlen(m);

		if (len == n->len && memcmp(m, n->text, len) == 0)
			return true;
		if (end == NULL)
			break;
		m = end + 1;
	}
	return false;
}

/* The pair of map for a field, under any of its names. */
const struct doc_pair *
ty_field_pair(const struct doc_node *map, const struct ty_field *f)
{
	const char *s = f->names != NULL ? f->names : f->field;

	while (*s != '\0') {
		const char *end = strchr(s, ',');
		size_t len = end != NULL ? (size_t)(end - s) : strlen(s);
		const struct doc_pair *p = doc_map_find(map, s, len,
		    doc_hash_bytes_rt(s, len, DOC_HASH_SEED ^
		    (uint64_t)DOC_STR));

		if (p != NULL)
			return p;
		if (end == NULL)
			break;
		s = end + 1;
	}
	return NULL;
}

static int
name_cmp(const void *x, const void *y)
{
	const struct ty_name *a = x, *b = y;
	size_t n = a->len < b->len ? a->len : b->len;
	int c = memcmp(a->s, b->s, n);

	if (c != 0)
		return c;
	return a->len < b->len ? -1 : a->len > b->len ? 1 :
	    a->field < b->field ? -1 : a->field > b->field;
}

bool
ty_model_index(struct ty_model *m, struct arena *a)
{
	size_t i, n = 0, k = 0;

	for (i = 0; i < m->nfields; i++) {
		const char *s = m->fields[i].names != NULL ?
		    m->fields[i].names : m->fields[i].field;

		for (n++; *s != '\0'; s++)
			n += *s == ',';
		k += m->fields[i].required;
	}
	m->index = ARENA_NEW(a, struct ty_name, n + 1);
	m->required = ARENA_NEW(a, size_t, k + 1);
	if (m->index == NULL || m->required == NULL) {
		m->index = NULL;
		return false;
	}
	m->nindex = m->nrequired = 0;
	for (i = 0; i < m->nfields; i++) {
		const char *s = m->fields[i].names != NULL ?
		    m->fields[i].names : m->fields[i].field;

		for (;;) {
			const char *end = strchr(s, ',');
			size_t len = end != NULL ? (size_t)(end - s) : strlen(s);

			m->index[m->nindex++] = (struct ty_name){ s, len, i };
			if (end == NULL)
				break;
			s = end + 1;
		}
		if (m->fields[i].required)
			m->required[m->nrequired++] = i;
	}
	qsort(m->index, m->nindex, sizeof(m->index[0]), name_cmp);
	return true;
}

/* The index of the field of m (indexed) one of whose names is key, or -1. */
static long
model_lookup(const struct ty_model *m, const struct doc_node *key)
{
	struct ty_name probe = { key->text, key->len, 0 };
	size_t lo = 0, hi = m->nindex;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct ty_name *e = &m->index[mid];
		size_t n = e->len < probe.len ? e->len : probe.len;
		int c = memcmp(probe.s, e->s, n);

		if (c == 0)
			c = probe.len < e->len ? -1 : probe.len > e->len;
		if (c == 0)
			return (long)e->field;
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return -1;
}

/* Is key one of the names of a field of m? */
bool
ty_model_knows(const struct ty_model *m, const struct doc_node *key)
{
	size_t i;

	if (key->kind != DOC_STR)
		return false;
	if (m->index != NULL)
		return model_lookup(m, key) >= 0;
	for (i = 0; i < m->nfields; i++) {
		const char *s = m->fields[i].names;

		while (s != NULL && *s != '\0') {
			const char *end = strchr(s, ',');
			size_t len = end != NULL ? (size_t)(end - s) : strlen(s);

			if (len == key->len && memcmp(s, key->text, len) == 0)
				return true;
			s = end != NULL ? end + 1 : NULL;
		}
	}
	return false;
}

static bool accepts(const struct ty *t, const struct doc_node *n);

/* A mapping for model m: every field it has accepted, the required ones
   there, no unknown key under extra="forbid". */
static bool
model_accepts(const struct ty_model *m, const struct doc_node *n)
{
	size_t i;

	if (n->kind != DOC_MAP)
		return false;
	if (m->index != NULL) {
		/* By the mapping's keys: a field is checked on the pair
		   ty_field_pair() finds (the first of its names present). */
		for (i = 0; i < n->n; i++) {
			const struct doc_pair *p = &n->pairs[i];
			const struct ty_field *f;
			long k = p->key->kind == DOC_STR ?
			    model_lookup(m, p->key) : -1;

			if (k < 0) {
				if (m->forbid)
					return false;
				continue;
			}
			f = &m->fields[k];
			if (ty_field_pair(n, f) != p)
				continue;
			if ((f->type != NULL && !accepts(f->type, p->value)) ||
			    !ty_within(f->bounds, p->value))
				return false;
		}
		for (i = 0; i < m->nrequired; i++)
			if (ty_field_pair(n, &m->fields[m->required[i]]) == NULL)
				return false;
		return true;
	}
	for (i = 0; i < m->nfields; i++) {
		const struct ty_field *f = &m->fields[i];
		const struct doc_pair *p = ty_field_pair(n, f);

		if (p == NULL) {
			if (f->required)
				return false;
			continue;
		}
		if ((f->type != NULL && !accepts(f->type, p->value)) ||
		    !ty_within(f->bounds, p->value))
			return false;
	}
	for (i = 0; m->forbid && i < n->n; i++)
		if (!ty_model_knows(m, n->pairs[i].key))
			return false;
	return true;
}

bool
ty_accepts(const struct ty *t, const struct doc_node *n)
{
	return accepts(t, n);
}

static bool
accepts(const struct ty *t, const struct doc_node *n)
{
	if (t->bounds != NULL && !ty_within(t->bounds, n))
		return false;
	return ty_kind_accepts(t, n);
}

bool
ty_kind_accepts(const struct ty *t, const struct doc_node *n)
{
	size_t i;

	switch (t->kind) {
	case TY_ANY:
		return true;
	case TY_NONE:
		return n->kind == DOC_NULL;
	case TY_BOOL:
		if (n->kind == DOC_BOOL)
			return true;
		if (n->kind == DOC_INT)
			return !n->big && (n->i == 0 || n->i == 1);
		if (n->kind == DOC_FLOAT)
			return n->f == 0.0 || n->f == 1.0;
		if (n->kind == DOC_STR) {
			static const char *const ok[] = { "0", "1", "true",
			    "false", "yes", "no", "on", "off", "t", "f", "y",
			    "n" };

			for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
				if (ieq(n->text, ok[i]))
					return true;
		}
		return false;
	case TY_INT:
		if (n->kind == DOC_INT || n->kind == DOC_BOOL)
			return true;
		if (n->kind == DOC_FLOAT)
			return isfinite(n->f) && n->f == floor(n->f);
		if (n->kind == DOC_STR)
			return ty_python_int(n->text, n->len, NULL);
		return false;
	case TY_FLOAT:
		if (n->kind == DOC_INT || n->kind == DOC_FLOAT ||
		    n->kind == DOC_BOOL)
			return true;
		if (n->kind == DOC_STR)
			return str_is_float(n->text, n->len);
		return false;
	case TY_STR:
		return n->kind == DOC_STR;
	case TY_LIST:
		if (n->kind != DOC_SEQ)
			return false;
		for (i = 0; t->nargs > 0 && i < n->n; i++)
			if (!accepts(t->args[0], n->items[i]))
				return false;
		return true;
	case TY_TUPLE:
		if (n->kind != DOC_SEQ)
			return false;
		if (t->nargs == 2 && t->args[1]->kind == TY_ANY)
			return true;	/* tuple[T, ...] */
		if (t->nargs > 0 && n->n != t->nargs)
			return false;
		for (i = 0; i < n->n && i < t->nargs; i++)
			if (!accepts(t->args[i], n->items[i]))
				return false;
		return true;
	case TY_DICT:
		if (n->kind != DOC_MAP)
			return false;
		for (i = 0; t->nargs == 2 && i < n->n; i++)
			if (!accepts(t->args[0], n->pairs[i].key) ||
			    !accepts(t->args[1], n->pairs[i].value))
				return false;
		return true;
	case TY_LITERAL:
		for (i = 0; i < t->nlit; i++)
			if (literal_eq(t->lit[i], n))
				return true;
		return false;
	case TY_MODEL:
		return t->model != NULL ? model_accepts(t->model, n) :
		    n->kind == DOC_MAP;
	case TY_ENUM:
		return t->members != NULL ? enum_has(t->members, n) :
		    n->kind == DOC_STR || n->kind == DOC_INT;
	case TY_UNION:
		for (i = 0; i < t->nargs; i++)
			if (accepts(t->args[i], n))
				return true;
		return false;
	}
	return false;
}
