/*
 * core/types_explain: annotations and values in words - a type as a
 * reader would write it, and why a value is refused, naming the deepest
 * field at fault.  No I/O.
 */
#include "types.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "doc.h"
#include "types_int.h"

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
		const struct doc_pair *p = ty_field_pair(n, f);

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
		if (!ty_model_knows(m, n->pairs[i].key)) {
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

	if (ty_accepts(t, n))
		return false;
	if (depth < 8 && ty_kind_accepts(t, n) && t->bounds != NULL &&
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
	if (ty_kind_accepts(t, n) && t->bounds != NULL) {
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
		return !ty_accepts(t, n);
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
