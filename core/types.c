/*
 * core/types: a recursive-descent parser for Python annotations and a
 * checker with pydantic v2 lax-mode semantics (verified against pydantic
 * by tests/fixtures/config/coercion.tsv).  No I/O, arena memory only.
 *
 *   type  := alt ('|' alt)*
 *   alt   := NAME ['[' type (',' type)* ']'] | "<class '" NAME "'>"
 *   Literal[...] takes values: 'str', "str", int, True, False, None
 *   Annotated[T, constraint...] is T (constraints are not checked)
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
			return mk(p, TY_ENUM);
		if (len >= 4 && (memcmp(name + len - 4, "Type", 4) == 0 ||
		    memcmp(name + len - 4, "Func", 4) == 0))
			return mk(p, TY_ENUM);
		if (strncmp(name, "axolotl.", 8) == 0)
			return mk(p, TY_MODEL);
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
		t = is_enum ? mk(p, TY_ENUM) : named(p, p->s,
		    (size_t)(end - p->s));
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
		while (eat(p, ','))
			skip_arg(p);
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

bool
ty_accepts(const struct ty *t, const struct doc_node *n)
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
			if (!ty_accepts(t->args[0], n->items[i]))
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
			if (!ty_accepts(t->args[i], n->items[i]))
				return false;
		return true;
	case TY_DICT:
		if (n->kind != DOC_MAP)
			return false;
		for (i = 0; t->nargs == 2 && i < n->n; i++)
			if (!ty_accepts(t->args[0], n->pairs[i].key) ||
			    !ty_accepts(t->args[1], n->pairs[i].value))
				return false;
		return true;
	case TY_LITERAL:
		for (i = 0; i < t->nlit; i++)
			if (literal_eq(t->lit[i], n))
				return true;
		return false;
	case TY_MODEL:
		return n->kind == DOC_MAP;
	case TY_ENUM:
		return n->kind == DOC_STR || n->kind == DOC_INT;
	case TY_UNION:
		for (i = 0; i < t->nargs; i++)
			if (ty_accepts(t->args[i], n))
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
		put(o, "one of the documented names");
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
			if (i > 0)
				put(o, i + 1 == t->nargs ? " or " : ", ");
			describe(o, t->args[i]);
		}
		return;
	}
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
