/*
 * core/rules/context: what every rule sees besides its own topic file:
 * rule_report() and the out-of-line config helpers declared in
 * core/rules_int.h (the inline cfg_* lookups live there).  Pure.
 */
#include "core/rules_int.h"

#include <limits.h>
#include <stdarg.h>
#include <string.h>

#include "core/plan.h"

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
	const struct doc_pair *pl = cfg_pair(rc, "plugins");

	return pl != NULL && doc_seq_has(pl->value, needle);
}

bool
ep_plugin(const struct rule_ctx *rc)
{
	const struct doc_pair *pl = cfg_pair(rc, "plugins");
	size_t i;

	for (i = 0; pl != NULL && pl->value->kind == DOC_SEQ &&
	    i < pl->value->n; i++)
		if (pl->value->items[i]->kind == DOC_STR &&
		    strstr(pl->value->items[i]->text, ".expert_parallel.") !=
		    NULL)
			return true;
	return false;
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

int
fsdp_version(const struct rule_ctx *rc)
{
	const struct doc_pair *top = cfg_pair(rc, "fsdp_version");
	const struct doc_pair *f = cfg_pair(rc, "fsdp_config");
	long long v;

	if (top != NULL && node_int(top->value, &v))
		return (int)v;
	if (top != NULL && top->value->kind == DOC_STR)
		return top->value->text[0] == '2' ? 2 : 1;
	if (f == NULL || !doc_truthy(f->value))
		return cfg_on(rc, "fsdp") ? 1 : 0;
	if (f->value->kind == DOC_MAP) {
		const struct doc_pair *n = doc_map_get(f->value, "version");

		if (n == NULL)
			n = doc_map_get(f->value, "fsdp_version");
		if (n != NULL && node_int(n->value, &v))
			return (int)v;
	}
	return 1;
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
	return NULL;
}

bool
packing_backend(const char *be)
{
	static const char *const ok[] = { "flash_attention_2",
	    "flash_attention_3", "flex_attention", "xformers", "sage",
	    "kernels-community/flash-attn2", "kernels-community/flash-attn3" };
	size_t i;

	for (i = 0; be != NULL && i < sizeof(ok) / sizeof(ok[0]); i++)
		if (strcmp(be, ok[i]) == 0)
			return true;
	return false;
}
