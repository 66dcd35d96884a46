/*
 * core/rules/context: what every rule sees besides its own topic file:
 * rule_report() and the out-of-line config helpers declared in
 * core/rules_int.h (the inline cfg_* lookups live there).  Pure.
 */
#include "core/rules_int.h"

#include <ctype.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "core/arena.h"
#include "core/keys.h"
#include "core/plan.h"
#include "core/types.h"

/* A finding of the running rule at p (NULL: the root), formatted once. */
static int
report_at(struct rule_ctx *rc, const struct doc_pair *p, enum severity sev,
    const char *fmt, va_list ap)
    __attribute__((format(printf, 4, 0)));

static int
report_at(struct rule_ctx *rc, const struct doc_pair *p, enum severity sev,
    const char *fmt, va_list ap)
{
	return report_addv(rc->r, rc->a, rc->rule->id, sev,
	    p != NULL && p->key->text != NULL ? p->key->text : "",
	    p != NULL ? p->key_loc.line : rc->root->loc.line,
	    p != NULL ? p->key_loc.col : rc->root->loc.col, rc->rule->hint,
	    fmt, ap);
}

int
rule_report(struct rule_ctx *rc, const struct doc_pair *p, const char *fmt,
    ...)
{
	va_list ap;
	int rv;

	va_start(ap, fmt);
	rv = report_at(rc, p, rc->rule->severity, fmt, ap);
	va_end(ap);
	return rv;
}

int
rule_report_sev(struct rule_ctx *rc, const struct doc_pair *p,
    enum severity sev, const char *fmt, ...)
{
	va_list ap;
	int rv;

	va_start(ap, fmt);
	rv = report_at(rc, p, sev, fmt, ap);
	va_end(ap);
	return rv;
}

static bool
node_int(const struct doc_node *v, long long *out)
{
	if (v->kind == DOC_INT && !v->big) {
		*out = v->i;
		return true;
	}
	/* In range first: converting a larger float is undefined. */
	if (v->kind == DOC_FLOAT && v->f >= -9.2e18 && v->f <= 9.2e18 &&
	    v->f == (double)(long long)v->f) {
		*out = (long long)v->f;
		return true;
	}
	return false;
}

bool
node_num(const struct doc_node *v, double *out)
{
	if (v == NULL)
		return false;
	switch (v->kind) {
	case DOC_BOOL:
		*out = v->b ? 1.0 : 0.0;
		return true;
	case DOC_INT:
		*out = (double)v->i;
		return !v->big;
	case DOC_FLOAT:
		*out = v->f;
		return true;
	default:
		return false;
	}
}

bool
node_eq(const struct doc_node *a, const struct doc_node *b)
{
	double x, y;

	if (a == NULL || b == NULL)
		return a == b;
	if (node_num(a, &x) && node_num(b, &y))
		return x == y;
	if (a->kind != b->kind)
		return false;
	switch (a->kind) {
	case DOC_NULL:
		return true;
	case DOC_STR:
	case DOC_TIMESTAMP:
		return a->len == b->len && memcmp(a->text, b->text, a->len) == 0;
	default:
		return a == b;
	}
}

const char *
node_lower(const struct doc_node *v, char *buf, size_t cap)
{
	size_t i;

	if (cap == 0)
		return "";
	buf[0] = '\0';
	if (v == NULL || v->kind == DOC_SEQ || v->kind == DOC_MAP)
		return buf;
	if (v->kind == DOC_NULL)
		return "none";
	if (v->kind == DOC_BOOL)
		return v->b ? "true" : "false";
	for (i = 0; i + 1 < cap && i < v->len; i++)
		buf[i] = (char)(v->text[i] >= 'A' && v->text[i] <= 'Z' ?
		    v->text[i] - 'A' + 'a' : v->text[i]);
	buf[i] = '\0';
	return buf;
}

long long
cfg_int_of(const struct doc_pair *p, long long def)
{
	long long v;

	return p != NULL && node_int(p->value, &v) ? v : def;
}

long long
mul_sat(long long a, long long b)
{
	long long r;

	if (__builtin_mul_overflow(a, b, &r))
		return (a < 0) != (b < 0) ? LLONG_MIN : LLONG_MAX;
	return r;
}

bool
cfg_plugin(const struct rule_ctx *rc, const char *needle)
{
	return rc->plugins != NULL && doc_seq_has(rc->plugins, needle);
}

static bool
plugin_listed_in(const struct doc_node *pl, const char *module)
{
	size_t i, n;

	if (pl == NULL || pl->kind != DOC_SEQ)
		return false;
	n = strlen(module);
	for (i = 0; i < pl->n; i++) {
		const struct doc_node *v = pl->items[i];
		const char *hit;

		if (v->kind != DOC_STR)
			continue;
		/* "<module>.Class": load_plugin retries it under
		   axolotl.integrations. */
		if (strncmp(v->text, module, n) == 0 && v->text[n] == '.')
			return true;
		for (hit = strstr(v->text, module); hit != NULL;
		    hit = strstr(hit + 1, module))
			if (hit > v->text && hit[-1] == '.' && hit[n] == '.')
				return true;
	}
	return false;
}

bool
plugin_on(const struct rule_ctx *rc, const char *module)
{
	struct plugin_memo *m = rc->memo;
	size_t i;
	bool on;

	if (rc->plugins == NULL)
		return false;
	/* The rules ask about a few modules, each many times. */
	for (i = 0; m != NULL && i < m->n; i++)
		if (m->module[i] == module)
			return m->on[i];
	on = plugin_listed_in(rc->plugins, module);
	if (m != NULL && m->n < sizeof(m->module) / sizeof(m->module[0])) {
		m->module[m->n] = module;
		m->on[m->n++] = on;
	}
	return on;
}

bool
ep_plugin(const struct rule_ctx *rc)
{
	return plugin_on(rc, "expert_parallel");
}

long long
ep_size(const struct rule_ctx *rc)
{
	return ep_plugin(rc) ? rc->plan->ep : 1;	/* the plan's degree */
}

const struct doc_pair *
fsdp_pair(const struct rule_ctx *rc, const char *key)
{
	return plan_fsdp_get(rc->root, key);
}

bool
node_version(const struct doc_node *v, long long *out)
{
	if (v->kind == DOC_INT) {
		*out = v->i;
		return true;
	}
	if (v->kind == DOC_STR && (strcmp(v->text, "1") == 0 ||
	    strcmp(v->text, "2") == 0)) {
		*out = v->text[0] - '0';
		return true;
	}
	return false;
}

const struct doc_node *
fsdp_version_node(const struct rule_ctx *rc)
{
	static const struct doc_node one = { .kind = DOC_INT, .i = 1,
	    .text = "1", .len = 1 };
	const struct doc_pair *top = cfg_pair(rc, "fsdp_version");
	const struct doc_pair *f = cfg_pair(rc, "fsdp_config");
	const struct doc_node *v;

	if (top != NULL && doc_truthy(top->value))
		return top->value;
	if (f == NULL || !doc_truthy(f->value) || f->value->kind != DOC_MAP)
		return top != NULL ? top->value : NULL;
	v = doc_map_value(f->value, "version");
	if (v == NULL || !doc_truthy(v))
		v = doc_map_value(f->value, "fsdp_version");
	return v != NULL && doc_truthy(v) ? v : &one;
}

int
fsdp_version(const struct rule_ctx *rc)
{
	const struct doc_node *v = fsdp_version_node(rc);
	long long n;

	if (v == NULL || v->kind == DOC_NULL)
		return cfg_on(rc, "fsdp") || cfg_on(rc, "fsdp_config") ? 1 : 0;
	if (node_int(v, &n))
		return n == 2 ? 2 : n == 1 ? 1 : (int)(n > 0 && n < 100 ? n : 1);
	if (v->kind == DOC_STR)
		return strcmp(v->text, "2") == 0 ? 2 : 1;
	return 1;
}

bool
node_str_is_2(const struct doc_node *v)
{
	return v != NULL && ((v->kind == DOC_INT && v->i == 2 && !v->big) ||
	    (v->kind == DOC_STR && strcmp(v->text, "2") == 0));
}

const char *
attn_backend(const struct rule_ctx *rc)
{
	const char *impl = cfg_str(rc, "attn_implementation");
	size_t i;

	if (impl != NULL)
		return impl;
	for (i = 0; i < plan_legacy_attn_len; i++)
		if (cfg_on(rc, plan_legacy_attn[i].flag))
			return plan_legacy_attn[i].impl;
	/* normalize_attn_implementation: gemma4_hybrid_attn_impl picks FA2
	   when nothing else is chosen. */
	if (cfg_on(rc, "gemma4_hybrid_attn_impl"))
		return "flash_attention_2";
	return NULL;
}

bool
py_bool_word(const struct doc_node *v, bool *b)
{
	static const char *const yes[] = { "true", "yes", "on", "t", "y", "1" };
	static const char *const no[] = { "false", "no", "off", "f", "n", "0" };
	char buf[8];
	size_t i;

	if (v == NULL || v->kind != DOC_STR || v->len >= sizeof(buf))
		return false;
	node_lower(v, buf, sizeof(buf));
	for (i = 0; i < 6; i++)
		if (strcmp(buf, yes[i]) == 0 || strcmp(buf, no[i]) == 0) {
			if (b != NULL)
				*b = strcmp(buf, yes[i]) == 0;
			return true;
		}
	return false;
}

/* Whether the type string lists v (a string) as one of its Literal values. */
static bool
literal_value(const char *type, const struct doc_node *v)
{
	const char *p = type;

	while ((p = strchr(p, '\'')) != NULL) {
		if (strncmp(p + 1, v->text, v->len) == 0 && p[1 + v->len] == '\'')
			return true;
		p = strchr(p + 1, '\'');
		if (p == NULL)
			break;
		p++;
	}
	return false;
}

/*
 * Whether the type string names the type `word` (an identifier outside
 * the quoted Literal values: "int" is not in Literal['interleave']).
 */
static bool
type_has(const char *type, const char *word)
{
	size_t n = strlen(word);
	const char *p = type;

	while (*p != '\0') {
		if (*p == '\'' || *p == '"') {
			const char *q = strchr(p + 1, *p);

			if (q == NULL)
				return false;
			p = q + 1;
			continue;
		}
		if ((p == type || !(isalnum((unsigned char)p[-1]) ||
		    p[-1] == '_')) && strncmp(p, word, n) == 0 &&
		    !(isalnum((unsigned char)p[n]) || p[n] == '_'))
			return true;
		p++;
	}
	return false;
}

/* What a key's type parses a string to (PARSE_*), per key. */
enum { PARSE_BOOL = 1, PARSE_INT = 2, PARSE_FLOAT = 4, PARSE_LIT = 8,
	PARSE_MODEL = 16 };

/* Does the type name a pydantic model of the schema at its top level
   (not inside list[...])? */
static bool
type_is_model(const char *t)
{
	size_t i;

	for (i = 0; i < schema_models_len; i++) {
		size_t n = strlen(schema_models[i].name);
		const char *at = strstr(t, schema_models[i].name);

		if (at != NULL && (at == t || at[-1] == ' ' || at[-1] == '[' ||
		    at[-1] == ',') && !(isalnum((unsigned char)at[n]) ||
		    at[n] == '_' || at[n] == '.') && strstr(t, "list[") == NULL)
			return true;
	}
	return false;
}

static const void *_Atomic parse_kinds_kept;

/* arena_once()'s build: PARSE_* bits of keys_table[i].type; 0 when the
   type takes strings (or is unknown), so a string stays one. */
static const void *
parse_kinds_build(struct arena *a, const void *arg)
{
	unsigned char *m = ARENA_NEW(a, unsigned char, keys_table_len + 1);
	size_t i;

	(void)arg;
	for (i = 0; m != NULL && i < keys_table_len; i++) {
		const char *t = keys_table[i].type;

		if (t != NULL && strncmp(t, "axolotl.", 8) == 0 &&
		    type_is_model(t))
			m[i] |= PARSE_MODEL;
		if (t == NULL || type_has(t, "str"))
			continue;
		m[i] |= (unsigned char)((type_has(t, "bool") ? PARSE_BOOL : 0) |
		    (type_has(t, "int") ? PARSE_INT : 0) |
		    (type_has(t, "float") ? PARSE_FLOAT : 0));
		if ((m[i] & ~PARSE_MODEL) != 0 && strstr(t, "Literal[") != NULL)
			m[i] |= PARSE_LIT;
	}
	return m;
}

/*
 * *out gets the node pydantic makes of the string v for key k's type, or
 * NULL when it stays a string (the type takes strings, or v is no bool or
 * number).  0 or ERR_NOMEM.
 */
static int
parse_as(struct doc_node **out, const struct key_def *k,
    const struct doc_node *v, const unsigned char *kinds, struct arena *a)
{
	bool is_bool = false, b = false, is_num = false, is_int = false;
	unsigned kind = kinds[k - keys_table];
	char *end;
	double f = 0.0;

	*out = NULL;
	/* A Literal's own value stays a string; another one is parsed as
	   the union's bool or number (pydantic's lax mode). */
	if ((kind & (PARSE_BOOL | PARSE_INT | PARSE_FLOAT)) == 0 ||
	    v->kind != DOC_STR ||
	    ((kind & PARSE_LIT) && literal_value(k->type, v)))
		return 0;
	if (kind & PARSE_BOOL)
		is_bool = py_bool_word(v, &b);
	if (!is_bool && (kind & (PARSE_INT | PARSE_FLOAT))) {
		f = strtod(v->text, &end);
		is_num = end != v->text && *end == '\0' &&
		    ty_python_float(v->text, v->len);
		/* The range first: casting a double outside long long's
		   (or a NaN) is undefined. */
		is_int = is_num && (kind & PARSE_INT) &&
		    f > -9.2e18 && f < 9.2e18 && f == (double)(long long)f;
	}
	if (!is_bool && !is_num)
		return 0;
	*out = ARENA_NEW(a, struct doc_node, 1);
	if (*out == NULL)
		return ERR_NOMEM;
	**out = *v;
	(*out)->kind = is_bool ? DOC_BOOL : is_int ? DOC_INT : DOC_FLOAT;
	(*out)->b = b;
	(*out)->i = is_int ? (long long)f : 0;
	(*out)->f = f;
	return 0;
}

/* Could pydantic read the string v as a bool or a number?  (A cheap
   test ahead of the key's type: most strings are names and paths.) */
static bool
maybe_parsed(const struct doc_node *v)
{
	size_t i;

	/* The first character of a bool word, a number or inf/nan. */
	if (v->len == 0 || strchr("tfyno0123456789.-+ \t\n\ri",
	    tolower((unsigned char)v->text[0])) == NULL)
		return false;
	if (v->len <= 5 && py_bool_word(v, NULL))
		return true;
	/* Digits, signs, '.', '_', exponents, blanks, inf/infinity/nan. */
	for (i = 0; i < v->len; i++)
		switch (tolower((unsigned char)v->text[i])) {
		case '0': case '1': case '2': case '3': case '4': case '5':
		case '6': case '7': case '8': case '9': case '.': case '-':
		case '+': case '_': case 'e': case ' ': case '\t': case '\n':
		case '\r': case 'i': case 'n': case 'f': case 't': case 'y':
		case 'a':
			break;
		default:
			return false;
		}
	return true;
}

int
parsed_view(const struct doc_node **out, const struct doc_node *root,
    struct arena *a)
{
	const unsigned char *kinds = arena_once(&parse_kinds_kept, 4096,
	    parse_kinds_build, NULL);
	struct doc_node *view = NULL;
	size_t i;
	int rv;

	*out = root;
	if (kinds == NULL)
		return ERR_NOMEM;
	for (i = 0; i < root->n; i++) {
		const struct doc_pair *p = &root->pairs[i];
		const struct key_def *k;
		struct doc_node *n;

		if (p->key->kind != DOC_STR || !((p->value->kind == DOC_STR &&
		    maybe_parsed(p->value)) || (p->value->kind == DOC_MAP &&
		    p->value->n == 0)))
			continue;
		k = keys_find(p->key->text);
		if (k == NULL)
			continue;
		if (p->value->kind == DOC_MAP) {
			/* An empty mapping for a model field is a model
			   instance, which is truthy: true says so here. */
			if (!(kinds[k - keys_table] & PARSE_MODEL))
				continue;
			n = ARENA_NEW(a, struct doc_node, 1);
			if (n == NULL)
				return ERR_NOMEM;
			*n = *p->value;
			n->kind = DOC_BOOL;
			n->b = true;
			n->text = "true";
			n->len = 4;
		} else {
			rv = parse_as(&n, k, p->value, kinds, a);
			if (rv != 0)
				return rv;
			if (n == NULL)
				continue;
		}
		if (view == NULL) {
			struct doc_pair *pairs = ARENA_NEW(a, struct doc_pair,
			    root->n);

			view = ARENA_NEW(a, struct doc_node, 1);
			if (view == NULL || pairs == NULL)
				return ERR_NOMEM;
			*view = *root;
			memcpy(pairs, root->pairs, root->n * sizeof(pairs[0]));
			view->pairs = pairs;
		}
		view->pairs[i].value = n;
	}
	if (view != NULL) {
		doc_map_index(view, a);
		*out = view;
	}
	return 0;
}

bool
packing_backend(const char *be)
{
	/* ATTN_IMPLS_SUPPORTING_PACKING (schemas/enums.py). */
	static const char *const ok[] = { "flash_attention_2",
	    "flash_attention_3", "flex_attention", "xformers", "sage",
	    "kernels-community/flash-attn2", "kernels-community/flash-attn3",
	    "kernels-community/sage-attention" };
	size_t i;

	for (i = 0; be != NULL && i < sizeof(ok) / sizeof(ok[0]); i++)
		if (strcmp(be, ok[i]) == 0)
			return true;
	return false;
}
