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
 * This file parses; core/types_check.c decides whether a value is
 * accepted (ty_accepts, ty_within) and core/types_explain.c puts types and
 * refusals in words (ty_describe, ty_explain, ty_show).
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

		/*
		 * A class the table knows as a model is one, whatever its
		 * name ends with (datasets' UserDefinedPrompterType).
		 */
		t->model = model(t->name, strlen(t->name), arg);
		if (t->model != NULL) {
			t->kind = TY_MODEL;
		} else {
			last = last != NULL ? last + 1 : t->name;
			t->members = en(last, strlen(last), arg);
		}
	}
	for (i = 0; i < t->nargs; i++)
		ty_link(t->args[i], model, en, arg);
}
