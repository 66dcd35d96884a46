/*
 * core/types: a recursive-descent parser for Python annotations and a
 * checker with pydantic v2 lax-mode semantics (verified against pydantic
 * by tests/fixtures/config/coercion.tsv).  No I/O, arena memory only.
 *
 *   type  := alt ('|' alt)*
 *   alt   := NAME ['[' type (',' type)* ']'] | "<class '" NAME "'>"
 *   Literal[...] takes values: 'str', "str", int, True, False, None
 *   Annotated[T, constraint...] is T with the constraints pydantic checks
 *     that this file knows: MinLen, MaxLen, Ge/Gt/Le/Lt and a
 *     StringConstraints pattern of the form '^literal'
 *
 * A class name stays a name until ty_link() points it at a model's fields
 * or an enum's values (core/schema_facts.c links them from core/data/
 * axolotl-models.tsv); unlinked, a model is any mapping and an enum any
 * string or int.
 */
#include "types.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "doc.h"

#define TY_MAX_DEPTH 16

struct p {
	const char *s;		/* next character */
	struct arena *a;
	int depth;
	bool bad;
};

static void
ws(struct p *p)
{
	while (*p->s == ' ')
		p->s++;
}

static bool
eat(struct p *p, char c)
{
	ws(p);
	if (*p->s != c)
		return false;
	p->s++;
	return true;
}

static struct ty *
mk(struct p *p, enum ty_kind k)
{
	struct ty *t = ARENA_NEW(p->a, struct ty, 1);

	if (t == NULL)
		p->bad = true;
	else
		t->kind = k;
	return t;
}

static void
add_arg(struct p *p, struct ty *t, struct ty *arg)
{
	struct ty **n;

	if (t == NULL || arg == NULL) {
		p->bad = true;
		return;
	}
	n = ARENA_NEW(p->a, struct ty *, t->nargs + 1);
	if (n == NULL) {
		p->bad = true;
		return;
	}
	if (t->nargs > 0)
		memcpy(n, t->args, t->nargs * sizeof(*n));
	n[t->nargs++] = arg;
	t->args = n;
}

/* Skip one bracketed/parenthesized or quoted stretch up to , or ]. */
static void
skip_arg(struct p *p)
{
	int depth = 0;

	for (; *p->s != '\0'; p->s++) {
		char c = *p->s;

		if (c == '\'' || c == '"') {
			const char *end = strchr(p->s + 1, c);

			if (end == NULL) {
				p->bad = true;
				return;
			}
			p->s = end;
		} else if (c == '[' || c == '(') {
			depth++;
		} else if (c == ']' || c == ')') {
			if (depth == 0)
				return;
			depth--;
		} else if (c == ',' && depth == 0) {
			return;
		}
	}
}

static struct doc_node *
literal_value(struct p *p)
{
	struct doc_node *n = ARENA_NEW(p->a, struct doc_node, 1);
	const char *start;

	ws(p);
	if (n == NULL) {
		p->bad = true;
		return NULL;
	}
	start = p->s;
	if (*p->s == '\'' || *p->s == '"') {
		const char *end = strchr(p->s + 1, *p->s);

		if (end == NULL) {
			p->bad = true;
			return NULL;
		}
		n->kind = DOC_STR;
		n->len = (size_t)(end - start - 1);
		n->text = arena_strndup(p->a, start + 1, n->len);
		p->s = end + 1;
		if (n->text == NULL)
			p->bad = true;
		return n;
	}
	while (*p->s != '\0' && *p->s != ',' && *p->s != ']' &&
	    *p->s != ' ')
		p->s++;
	if (p->s - start == 4 && memcmp(start, "True", 4) == 0) {
		n->kind = DOC_BOOL;
		n->b = true;
	} else if (p->s - start == 5 && memcmp(start, "False", 5) == 0) {
		n->kind = DOC_BOOL;
	} else if (p->s - start == 4 && memcmp(start, "None", 4) == 0) {
		n->kind = DOC_NULL;
	} else if (p->s > start) {
		char *end;

		n->kind = DOC_INT;
		n->i = strtoll(start, &end, 10);
		if (end != p->s)
			p->bad = true;
	} else {
		p->bad = true;
	}
	return n;
}

static struct ty *parse_type(struct p *p);

/* A model or enum node that keeps its class name. */
static struct ty *
class_of(struct p *p, enum ty_kind k, const char *name, size_t len)
{
	struct ty *t = mk(p, k);

	if (t != NULL) {
		t->name = arena_strndup(p->a, name, len);
		if (t->name == NULL)
			p->bad = true;
	}
	return t;
}

/* A number after "key=" in text[0..n), if there. */
static bool
number_after(const char *text, size_t n, const char *key, double *out)
{
	size_t k = strlen(key), i;
	char buf[48];

	for (i = 0; i + k <= n; i++) {
		size_t j = 0;

		if (memcmp(text + i, key, k) != 0 ||
		    (i > 0 && (text[i - 1] == '_' || (text[i - 1] >= 'a' &&
		    text[i - 1] <= 'z'))))
			continue;
		i += k;
		while (i < n && j + 1 < sizeof(buf) && text[i] != ',' &&
		    text[i] != ')' && text[i] != ';')
			buf[j++] = text[i++];
		buf[j] = '\0';
		if (strcmp(buf, "None") == 0 || j == 0)
			return false;
		*out = strtod(buf, NULL);
		return true;
	}
	return false;
}

/*
 * The constraints in one Annotated argument text[0..n) ("MinLen(
 * min_length=1)", "Ge(ge=0)", "StringConstraints(..., pattern='^x')")
 * merged into *b.
 */
static void
bounds_add(struct ty_bounds *b, const char *text, size_t n, struct arena *a)
{
	const char *pat;
	double v;

	if (number_after(text, n, "min_length=", &v))
		b->min_len = (long)v;
	if (number_after(text, n, "max_length=", &v))
		b->max_len = (long)v;
	if (number_after(text, n, "ge=", &v)) {
		b->has_ge = true;
		b->ge = v;
	}
	if (number_after(text, n, "gt=", &v)) {
		b->has_gt = true;
		b->gt = v;
	}
	if (number_after(text, n, "le=", &v)) {
		b->has_le = true;
		b->le = v;
	}
	if (number_after(text, n, "lt=", &v)) {
		b->has_lt = true;
		b->lt = v;
	}
	/* pattern='^literal': a prefix; any other pattern is not checked. */
	for (pat = text; pat + 10 <= text + n; pat++) {
		const char *q, *end;

		if (memcmp(pat, "pattern='^", 10) != 0)
			continue;
		q = pat + 10;
		end = memchr(q, '\'', (size_t)(text + n - q));
		if (end == NULL)
			return;
		for (; q < end; q++)
			if (strchr(".^$*+?{}[]\\|()", *q) != NULL)
				return;
		b->prefix = arena_strndup(a, pat + 10,
		    (size_t)(end - pat - 10));
		return;
	}
}

static struct ty_bounds *
bounds_new(struct arena *a)
{
	struct ty_bounds *b = ARENA_NEW(a, struct ty_bounds, 1);

	if (b != NULL) {
		b->min_len = -1;
		b->max_len = -1;
	}
	return b;
}

struct ty_bounds *
ty_bounds_parse(const char *text, struct arena *a)
{
	struct ty_bounds *b;

	if (text == NULL || *text == '\0')
		return NULL;
	b = bounds_new(a);
	if (b != NULL)
		bounds_add(b, text, strlen(text), a);
	return b;
}

/* Known builtin and typing names. */
static struct ty *
named(struct p *p, const char *name, size_t len)
{
#define IS(lit) (len == sizeof(lit) - 1 && memcmp(name, lit, len) == 0)
	if (IS("None") || IS("NoneType"))
		return mk(p, TY_NONE);
	if (IS("bool"))
		return mk(p, TY_BOOL);
	if (IS("int"))
		return mk(p, TY_INT);
	if (IS("float"))
		return mk(p, TY_FLOAT);
	if (IS("str"))
		return mk(p, TY_STR);
	if (IS("Any") || IS("object"))
		return mk(p, TY_ANY);
	if (IS("list") || IS("List") || IS("Sequence"))
		return mk(p, TY_LIST);
	if (IS("dict") || IS("Dict"))
		return mk(p, TY_DICT);
	if (IS("tuple") || IS("Tuple"))
		return mk(p, TY_TUPLE);
	if (IS("Union") || IS("Optional"))
		return mk(p, TY_UNION);
	if (IS("Literal"))
		return mk(p, TY_LITERAL);
#undef IS
	/* A dotted class: enums are scalars, other classes mappings. */
	if (memchr(name, '.', len) != NULL) {
		const char *last = name + len;

		while (last > name && last[-1] != '.')
			last--;
		if (strstr(name, ".enums.") != NULL &&
		    (size_t)(last - name) < len)
			return class_of(p, TY_ENUM, name, len);
		if (len >= 4 && (memcmp(name + len - 4, "Type", 4) == 0 ||
		    memcmp(name + len - 4, "Func", 4) == 0))
			return class_of(p, TY_ENUM, name, len);
		if (strncmp(name, "axolotl.", 8) == 0)
			return class_of(p, TY_MODEL, name, len);
	}
	return mk(p, TY_ANY);
}

static struct ty *
parse_alt(struct p *p)
{
	const char *name;
	size_t len;
	struct ty *t;
	bool optional, annotated;

	ws(p);
	if (strncmp(p->s, "<class '", 8) == 0 ||
	    strncmp(p->s, "<enum '", 7) == 0) {
		bool is_enum = p->s[1] == 'e';
		const char *end;

		p->s += is_enum ? 7 : 8;
		end = strchr(p->s, '\'');
		if (end == NULL || end[1] != '>') {
			p->bad = true;
			return NULL;
		}
		t = is_enum ? class_of(p, TY_ENUM, p->s, (size_t)(end - p->s)) :
		    named(p, p->s, (size_t)(end - p->s));
		p->s = end + 2;
		return t;
	}
	name = p->s;
	while ((*p->s >= 'a' && *p->s <= 'z') || (*p->s >= 'A' &&
	    *p->s <= 'Z') || (*p->s >= '0' && *p->s <= '9') || *p->s == '_' ||
	    *p->s == '.')
		p->s++;
	len = (size_t)(p->s - name);
	if (len == 0) {
		p->bad = true;
		return NULL;
	}
	optional = len == 8 && memcmp(name, "Optional", 8) == 0;
	annotated = len == 9 && memcmp(name, "Annotated", 9) == 0;
	if (annotated) {
		if (!eat(p, '[')) {
			p->bad = true;
			return NULL;
		}
		t = parse_type(p);
		while (eat(p, ',')) {
			const char *arg = p->s;

			skip_arg(p);
			if (t == NULL)
				continue;
			if (t->bounds == NULL) {
				t->bounds = bounds_new(p->a);
				if (t->bounds == NULL) {
					p->bad = true;
					return NULL;
				}
			}
			bounds_add(t->bounds, arg, (size_t)(p->s - arg), p->a);
		}
		if (!eat(p, ']'))
			p->bad = true;
		return t;
	}
	t = named(p, name, len);
	if (t == NULL || !eat(p, '['))
		return t;
	if (t->kind == TY_LITERAL) {
		do {
			struct doc_node *v = literal_value(p);
			struct doc_node **n;

			if (v == NULL)
				return NULL;
			n = ARENA_NEW(p->a, struct doc_node *, t->nlit + 1);
			if (n == NULL) {
				p->bad = true;
				return NULL;
			}
			if (t->nlit > 0)
				memcpy(n, t->lit, t->nlit * sizeof(*n));
			n[t->nlit++] = v;
			t->lit = n;
		} while (eat(p, ','));
	} else if (t->kind == TY_ANY || t->kind == TY_MODEL ||
	    t->kind == TY_ENUM) {
		/* Generic class: keep it, ignore its parameters. */
		skip_arg(p);
		while (eat(p, ','))
			skip_arg(p);
	} else {
		do {
			add_arg(p, t, parse_type(p));
		} while (!p->bad && eat(p, ','));
	}
	if (!eat(p, ']'))
		p->bad = true;
	if (optional)
		add_arg(p, t, mk(p, TY_NONE));
	return t;
}

static struct ty *
parse_type(struct p *p)
{
	struct ty *first, *u;

	if (++p->depth > TY_MAX_DEPTH) {
		p->bad = true;
		return NULL;
	}
	first = parse_alt(p);
	ws(p);
	if (*p->s != '|') {
		p->depth--;
		return first;
	}
	u = mk(p, TY_UNION);
	add_arg(p, u, first);
	while (!p->bad && eat(p, '|'))
		add_arg(p, u, parse_alt(p));
	p->depth--;
	return u;
}

struct ty *
ty_parse(const char *text, struct arena *a)
{
	struct p p = { text, a, 0, false };
	struct ty *t = parse_type(&p);

	ws(&p);
	if (p.bad || *p.s != '\0')
		return NULL;
	return t;
}

void
ty_link(struct ty *t, ty_model_fn *model, ty_enum_fn *en, const void *arg)
{
	size_t i;

	if (t == NULL)
		return;
	if (t->kind == TY_MODEL && t->name != NULL) {
		t->model = model(t->name, strlen(t->name), arg);
		/* A class the table knows as an enum is one. */
		if (t->model == NULL) {
			const char *last = strrchr(t->name, '.');

			last = last != NULL ? last + 1 : t->name;
			t->members = en(last, strlen(last), arg);
			if (t->members != NULL)
				t->kind = TY_ENUM;
		}
	} else if (t->kind == TY_ENUM && t->name != NULL) {
		const char *last = strrchr(t->name, '.');

		last = last != NULL ? last + 1 : t->name;
		t->members = en(last, strlen(last), arg);
	}
	for (i = 0; i < t->nargs; i++)
		ty_link(t->args[i], model, en, arg);
}

/* ---- checking ------------------------------------------------------- */

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

/* pydantic's str -> int: optional sign, digits (underscores between). */
static bool
str_is_int(const char *s, size_t len)
{
	size_t i = 0;
	bool digit = false;

	while (len > 0 && (*s == ' ' || *s == '\t' || *s == '\n')) {
		s++;
		len--;
	}
	while (len > 0 && (s[len - 1] == ' ' || s[len - 1] == '\t' ||
	    s[len - 1] == '\n'))
		len--;
	if (len > 0 && (s[0] == '+' || s[0] == '-'))
		i++;
	for (; i < len; i++) {
		if (s[i] >= '0' && s[i] <= '9') {
			digit = true;
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
			return digit;
		} else {
			return false;
		}
	}
	return digit;
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
static const struct doc_pair *
field_pair(const struct doc_node *map, const struct ty_field *f)
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
static bool
model_knows(const struct ty_model *m, const struct doc_node *key)
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
static bool kind_accepts(const struct ty *t, const struct doc_node *n);

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
		   field_pair() finds (the first of its names present). */
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
			if (field_pair(n, f) != p)
				continue;
			if ((f->type != NULL && !accepts(f->type, p->value)) ||
			    !ty_within(f->bounds, p->value))
				return false;
		}
		for (i = 0; i < m->nrequired; i++)
			if (field_pair(n, &m->fields[m->required[i]]) == NULL)
				return false;
		return true;
	}
	for (i = 0; i < m->nfields; i++) {
		const struct ty_field *f = &m->fields[i];
		const struct doc_pair *p = field_pair(n, f);

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
		if (!model_knows(m, n->pairs[i].key))
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
	return kind_accepts(t, n);
}

static bool
kind_accepts(const struct ty *t, const struct doc_node *n)
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
			return str_is_int(n->text, n->len);
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

struct out {
	char *p;
	size_t cap;
	size_t n;
};

static void
put(struct out *o, const char *s)
{
	int w;

	if (o->n >= o->cap)
		return;
	w = snprintf(o->p + o->n, o->cap - o->n, "%s", s);
	if (w > 0)
		o->n += (size_t)w;
	if (o->n >= o->cap)
		o->n = o->cap - 1;
}

static void
describe(struct out *o, const struct ty *t)
{
	size_t i;

	switch (t->kind) {
	case TY_ANY:
		put(o, "anything");
		return;
	case TY_NONE:
		put(o, "null");
		return;
	case TY_BOOL:
		put(o, "a boolean");
		return;
	case TY_INT:
		put(o, "a whole number");
		return;
	case TY_FLOAT:
		put(o, "a number");
		return;
	case TY_STR:
		put(o, "a string");
		return;
	case TY_LIST:
		put(o, "a list");
		if (t->nargs > 0 && t->args[0]->kind != TY_ANY) {
			put(o, " of ");
			describe(o, t->args[0]);
		}
		return;
	case TY_TUPLE:
		put(o, "a list of fixed length");
		return;
	case TY_DICT:
		put(o, "a mapping");
		return;
	case TY_MODEL:
		put(o, "a mapping of settings");
		return;
	case TY_ENUM:
		if (t->members == NULL) {
			put(o, "one of the documented names");
			return;
		}
		put(o, "one of ");
		{
			const char *m = t->members;
			char buf[80];
			int k;

			for (k = 0; *m != '\0' && k < 12; k++) {
				const char *end = strchr(m, '\t');
				int len = end != NULL ? (int)(end - m) :
				    (int)strlen(m);

				snprintf(buf, sizeof(buf), "%s'%.*s'",
				    k > 0 ? ", " : "", len > 60 ? 60 : len, m);
				put(o, buf);
				if (end == NULL)
					break;
				m = end + 1;
			}
			if (*m != '\0' && strchr(m, '\t') != NULL)
				put(o, ", ...");
		}
		return;
	case TY_LITERAL:
		put(o, "one of ");
		for (i = 0; i < t->nlit; i++) {
			const struct doc_node *v = t->lit[i];
			char buf[80];

			if (i > 0)
				put(o, ", ");
			if (v->kind == DOC_STR)
				snprintf(buf, sizeof(buf), "'%.60s'", v->text);
			else if (v->kind == DOC_BOOL)
				snprintf(buf, sizeof(buf), "%s",
				    v->b ? "true" : "false");
			else if (v->kind == DOC_NULL)
				snprintf(buf, sizeof(buf), "null");
			else
				snprintf(buf, sizeof(buf), "%lld", v->i);
			put(o, buf);
		}
		return;
	case TY_UNION:
		for (i = 0; i < t->nargs; i++) {
			size_t k;

			/* Several models read "a mapping of settings": once. */
			for (k = 0; k < i; k++)
				if (t->args[k]->kind == TY_MODEL &&
				    t->args[i]->kind == TY_MODEL)
					break;
			if (k < i)
				continue;
			if (i > 0)
				put(o, i + 1 == t->nargs ? " or " : ", ");
			describe(o, t->args[i]);
		}
		return;
	}
}

/* What the bounds ask, after "must": "be >= 0 and <= 1", "have at least
   1 item", "start with 'x'". */
static void
describe_bounds(struct out *o, const struct ty_bounds *b)
{
	char buf[64];
	const char *sep = "be ";

	if (b == NULL)
		return;
	if (b->min_len >= 0 || b->max_len >= 0) {
		if (b->min_len >= 0) {
			snprintf(buf, sizeof(buf), "have at least %ld item%s%s",
			    b->min_len, b->min_len == 1 ? "" : "s",
			    b->max_len >= 0 ? " and " : "");
			put(o, buf);
		}
		if (b->max_len >= 0) {
			snprintf(buf, sizeof(buf), "%sat most %ld",
			    b->min_len >= 0 ? "" : "have ", b->max_len);
			put(o, buf);
		}
		return;
	}
	if (b->prefix != NULL) {
		snprintf(buf, sizeof(buf), "start with '%.40s'", b->prefix);
		put(o, buf);
		return;
	}
	if (b->has_ge) {
		snprintf(buf, sizeof(buf), "%s>= %g", sep, b->ge);
		put(o, buf);
		sep = " and ";
	}
	if (b->has_gt) {
		snprintf(buf, sizeof(buf), "%s> %g", sep, b->gt);
		put(o, buf);
		sep = " and ";
	}
	if (b->has_le) {
		snprintf(buf, sizeof(buf), "%s<= %g", sep, b->le);
		put(o, buf);
		sep = " and ";
	}
	if (b->has_lt) {
		snprintf(buf, sizeof(buf), "%s< %g", sep, b->lt);
		put(o, buf);
	}
}

void
ty_describe_bounds(char *out, size_t cap, const struct ty_bounds *b)
{
	struct out o = { out, cap, 0 };

	if (cap == 0)
		return;
	out[0] = '\0';
	describe_bounds(&o, b);
}

void
ty_show(char *out, size_t cap, const struct doc_node *v)
{
	if (cap == 0)
		return;
	switch (v->kind) {
	case DOC_NULL:
		snprintf(out, cap, "null");
		return;
	case DOC_SEQ:
		snprintf(out, cap, "a list of %zu item%s", v->n,
		    v->n == 1 ? "" : "s");
		return;
	case DOC_MAP:
		snprintf(out, cap, "a mapping");
		return;
	case DOC_STR:
		snprintf(out, cap, "the string '%.40s%s'", v->text,
		    v->len > 40 ? "..." : "");
		return;
	case DOC_TIMESTAMP:
		snprintf(out, cap, "the date %.40s", v->text);
		return;
	default:
		snprintf(out, cap, "%s %.40s", doc_kind_name(v->kind), v->text);
		return;
	}
}

static bool
explain(struct out *o, const struct ty *t, const struct doc_node *n,
    const char *path, const struct doc_node **at, int depth);

/* path + "." + field (or "[i]") into buf. */
static const char *
sub_path(char *buf, size_t cap, const char *path, const char *field,
    size_t index)
{
	if (field != NULL)
		snprintf(buf, cap, "%s.%s", path, field);
	else
		snprintf(buf, cap, "%s[%zu]", path, index);
	return buf;
}

/* The first field of a mapping model m rejects, explained. */
static bool
explain_model(struct out *o, const struct ty_model *m,
    const struct doc_node *n, const char *path, const struct doc_node **at,
    int depth)
{
	char buf[200], sp[160];
	size_t i;

	for (i = 0; i < m->nfields; i++) {
		const struct ty_field *f = &m->fields[i];
		const struct doc_pair *p = field_pair(n, f);

		sub_path(sp, sizeof(sp), path, f->field, 0);
		if (p == NULL) {
			if (!f->required)
				continue;
			*at = n;
			snprintf(buf, sizeof(buf), "%s is required", sp);
			put(o, buf);
			return true;
		}
		if (f->type != NULL && explain(o, f->type, p->value, sp, at,
		    depth + 1))
			return true;
		if (!ty_within(f->bounds, p->value)) {
			char got[96];

			*at = p->value;
			ty_show(got, sizeof(got), p->value);
			snprintf(buf, sizeof(buf), "%s must ", sp);
			put(o, buf);
			describe_bounds(o, f->bounds);
			snprintf(buf, sizeof(buf), ", got %s", got);
			put(o, buf);
			return true;
		}
	}
	for (i = 0; m->forbid && i < n->n; i++)
		if (!model_knows(m, n->pairs[i].key)) {
			*at = n->pairs[i].key;
			snprintf(buf, sizeof(buf), "%s.%.60s is not a setting "
			    "(extra keys are refused)", path,
			    n->pairs[i].key->text != NULL ?
			    n->pairs[i].key->text : "?");
			put(o, buf);
			return true;
		}
	return false;
}

static bool
explain(struct out *o, const struct ty *t, const struct doc_node *n,
    const char *path, const struct doc_node **at, int depth)
{
	char buf[200], sp[160], got[96];
	const struct ty *cand = NULL;
	size_t i;

	if (accepts(t, n))
		return false;
	if (depth < 8 && kind_accepts(t, n) && t->bounds != NULL &&
	    !ty_within(t->bounds, n))
		goto plain;
	if (depth < 8 && t->kind == TY_MODEL && t->model != NULL &&
	    n->kind == DOC_MAP && explain_model(o, t->model, n, path, at,
	    depth))
		return true;
	if (depth < 8 && (t->kind == TY_LIST || t->kind == TY_TUPLE) &&
	    n->kind == DOC_SEQ && t->nargs > 0)
		for (i = 0; i < n->n; i++) {
			const struct ty *it = t->kind == TY_LIST ? t->args[0] :
			    i < t->nargs ? t->args[i] : NULL;

			if (it != NULL && explain(o, it, n->items[i],
			    sub_path(sp, sizeof(sp), path, NULL, i), at,
			    depth + 1))
				return true;
		}
	if (depth < 8 && t->kind == TY_DICT && n->kind == DOC_MAP &&
	    t->nargs == 2)
		for (i = 0; i < n->n; i++)
			if (n->pairs[i].key->kind == DOC_STR &&
			    explain(o, t->args[1], n->pairs[i].value,
			    sub_path(sp, sizeof(sp), path,
			    n->pairs[i].key->text, 0), at, depth + 1))
				return true;
	/* A union: the branch the value's shape points at. */
	if (depth < 8 && t->kind == TY_UNION)
		for (i = 0; i < t->nargs && cand == NULL; i++) {
			const struct ty *alt = t->args[i];

			if ((n->kind == DOC_MAP && alt->kind == TY_MODEL &&
			    alt->model != NULL) || (n->kind == DOC_SEQ &&
			    (alt->kind == TY_LIST || alt->kind == TY_TUPLE)))
				cand = alt;
		}
	if (cand != NULL && explain(o, cand, n, path, at, depth + 1))
		return true;
plain:
	*at = n;
	ty_show(got, sizeof(got), n);
	if (kind_accepts(t, n) && t->bounds != NULL) {
		snprintf(buf, sizeof(buf), "%s must ", path);
		put(o, buf);
		describe_bounds(o, t->bounds);
	} else {
		snprintf(buf, sizeof(buf), "%s must be ", path);
		put(o, buf);
		describe(o, t);
	}
	snprintf(buf, sizeof(buf), ", got %s", got);
	put(o, buf);
	return true;
}

bool
ty_explain(char *out, size_t cap, const struct ty *t,
    const struct doc_node *n, const char *path, const struct doc_node **at)
{
	struct out o = { out, cap, 0 };

	*at = n;
	if (cap == 0)
		return !accepts(t, n);
	out[0] = '\0';
	return explain(&o, t, n, path, at, 0);
}

void
ty_describe(char *out, size_t cap, const struct ty *t)
{
	struct out o = { out, cap, 0 };

	if (cap == 0)
		return;
	out[0] = '\0';
	describe(&o, t);
}
