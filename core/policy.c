/*
 * core/policy: policy files and their application to a report.  No I/O.
 */
#include "policy.h"

#include <stdio.h>
#include <string.h>

#include "arena.h"
#include "doc.h"
#include "gpu.h"
#include "plan.h"
#include "report.h"
#include "rules.h"

static int
bad(struct err *e, enum err_code code, const struct doc_loc *at,
    const char *what, const char *detail)
{
	struct err_loc l;

	memset(&l, 0, sizeof(l));
	if (at != NULL) {
		l.line = at->line;
		l.col = at->col;
	}
	return err_set(e, code, &l, "policy: %s%s", what, detail);
}

static int
parse_severity(const char *s)
{
	if (strcmp(s, "off") == 0)
		return POLICY_OFF;
	if (strcmp(s, "info") == 0)
		return SEV_INFO;
	if (strcmp(s, "warning") == 0)
		return SEV_WARNING;
	if (strcmp(s, "error") == 0)
		return SEV_ERROR;
	return -2;
}

/*
 * Resolve pattern into *out (severity left to the caller); NULL, or what
 * is wrong with it.  An exact id points at the catalog's string; a
 * prefix's id at pattern itself, '*' included: the caller copies it.
 */
static const char *
resolve(struct policy_rule *out, const char *pattern)
{
	const struct rule_def *all, *rd;
	const char *star = strchr(pattern, '*');
	size_t n, i, len;

	memset(out, 0, sizeof(*out));
	if (star == NULL) {
		rd = rules_find(pattern);
		if (rd == NULL)
			return "unknown rule ";
		out->id = rd->id;
		return NULL;
	}
	len = (size_t)(star - pattern);
	if (star[1] != '\0')
		return "a pattern has one '*', at its end: ";
	all = rules_all(&n);
	for (i = 0; i < n; i++)
		if (strncmp(all[i].id, pattern, len) == 0)
			break;
	if (i == n)
		return "no rule id starts with ";
	out->id = pattern;
	out->prefix = true;
	return NULL;
}

int
policy_pattern(struct policy_rule *out, const char *pattern,
    struct arena *a, struct err *e)
{
	const char *why = resolve(out, pattern);

	if (why != NULL)
		return err_set(e, ERR_SCHEMA, NULL, "%s'%.100s'", why,
		    pattern);
	if (out->prefix) {
		out->id = arena_strndup(a, pattern, strlen(pattern) - 1);
		if (out->id == NULL)
			return err_set(e, ERR_NOMEM, NULL, "out of memory");
	}
	out->severity = POLICY_OFF;
	return 0;
}

int
policy_add_ignore(struct policy *p, const char *pattern, struct arena *a,
    struct err *e)
{
	struct policy_rule *grown;
	int rv;

	grown = ARENA_NEW(a, struct policy_rule, p->nignore + 1);
	if (grown == NULL)
		return err_set(e, ERR_NOMEM, NULL, "out of memory");
	if (p->nignore > 0)
		memcpy(grown, p->ignore, p->nignore * sizeof(*grown));
	rv = policy_pattern(&grown[p->nignore], pattern, a, e);
	if (rv != 0)
		return rv;
	p->ignore = grown;
	p->nignore++;
	return 0;
}

/* Does r match id?  An exact id, or a prefix of it. */
static bool
matches(const struct policy_rule *r, const char *id)
{
	if (!r->prefix)
		return strcmp(r->id, id) == 0;
	return strncmp(r->id, id, strlen(r->id)) == 0;
}

int
policy_severity(const struct policy *p, const char *id, int sev)
{
	const struct policy_rule *best = NULL;
	size_t i;

	for (i = 0; i < p->nignore; i++)
		if (matches(&p->ignore[i], id))
			return POLICY_OFF;
	/* The exact id, else the longest prefix; a later entry wins a
	   tie. */
	for (i = 0; i < p->nrules; i++) {
		const struct policy_rule *r = &p->rules[i];

		if (!matches(r, id))
			continue;
		if (best == NULL || !r->prefix ||
		    (best->prefix && strlen(r->id) >= strlen(best->id)))
			best = r;
		if (!r->prefix)
			break;
	}
	return best != NULL ? best->severity : sev;
}

int
policy_parse(struct policy **out, const char *buf, size_t len,
    struct arena *a, struct err *e)
{
	struct limits lim;
	struct policy *p;
	struct doc *d;
	size_t i, k;
	int rv;

	*out = NULL;
	limits_default(&lim);
	lim.max_bytes = 1 << 20;
	rv = doc_parse(&d, buf, len, &lim, a, e);
	if (rv != 0)
		return rv;
	p = ARENA_NEW(a, struct policy, 1);
	if (p == NULL)
		return err_set(e, ERR_NOMEM, NULL, "out of memory");
	for (i = 0; i < d->root->n; i++) {
		const struct doc_pair *kv = &d->root->pairs[i];
		const char *key = kv->key->text;
		const struct doc_node *v = kv->value;

		if (kv->key->kind != DOC_STR)
			return bad(e, ERR_SCHEMA, &kv->key_loc, "keys are "
			    "rules, max_gpus, allowed_gpus, require_bf16, "
			    "forbid_inline_suppression", "");
		if (strcmp(key, "rules") == 0) {
			if (v->kind != DOC_MAP)
				return bad(e, ERR_SCHEMA, &kv->value_loc,
				    "rules must map rule ids to off, info, "
				    "warning or error", "");
			p->rules = ARENA_NEW(a, struct policy_rule, v->n);
			if (v->n > 0 && p->rules == NULL)
				return err_set(e, ERR_NOMEM, NULL,
				    "out of memory");
			for (k = 0; k < v->n; k++) {
				const struct doc_pair *r = &v->pairs[k];
				int sev = r->value->kind == DOC_STR ?
				    parse_severity(r->value->text) :
				    r->value->kind == DOC_BOOL && !r->value->b ?
				    POLICY_OFF : -2;
				const char *why = r->key->kind == DOC_STR ?
				    resolve(&p->rules[p->nrules],
				    r->key->text) : "a rule id or a pattern, "
				    "not ";

				if (why != NULL)
					return bad(e, ERR_SCHEMA, &r->key_loc,
					    why, r->key->kind == DOC_STR ?
					    r->key->text : "a number");
				if (p->rules[p->nrules].prefix) {
					const char *t = r->key->text;

					p->rules[p->nrules].id =
					    arena_strndup(a, t, strlen(t) - 1);
					if (p->rules[p->nrules].id == NULL)
						return err_set(e, ERR_NOMEM,
						    NULL, "out of memory");
				}
				if (sev == -2)
					return bad(e, ERR_SCHEMA,
					    &r->value_loc, "severity must be "
					    "off, info, warning or error", "");
				p->rules[p->nrules++].severity = sev;
			}
		} else if (strcmp(key, "max_gpus") == 0) {
			if (v->kind != DOC_INT || v->i < 1)
				return bad(e, ERR_SCHEMA, &kv->value_loc,
				    "max_gpus must be a whole number >= 1", "");
			p->max_gpus = (long)v->i;
		} else if (strcmp(key, "allowed_gpus") == 0) {
			if (v->kind != DOC_SEQ)
				return bad(e, ERR_SCHEMA, &kv->value_loc,
				    "allowed_gpus must be a list of GPU ids",
				    "");
			p->allowed_gpus = ARENA_NEW(a, const char *, v->n);
			if (v->n > 0 && p->allowed_gpus == NULL)
				return err_set(e, ERR_NOMEM, NULL,
				    "out of memory");
			for (k = 0; k < v->n; k++) {
				const struct gpu *g = v->items[k]->kind ==
				    DOC_STR ? gpu_find(v->items[k]->text) :
				    NULL;

				if (g == NULL)
					return bad(e, ERR_SCHEMA,
					    &v->items[k]->loc, "unknown GPU id ",
					    v->items[k]->text != NULL ?
					    v->items[k]->text : "");
				p->allowed_gpus[p->nallowed++] = g->id;
			}
		} else if (strcmp(key, "require_bf16") == 0 ||
		    strcmp(key, "forbid_inline_suppression") == 0) {
			if (v->kind != DOC_BOOL)
				return bad(e, ERR_SCHEMA, &kv->value_loc, key,
				    " must be true or false");
			if (key[0] == 'r')
				p->require_bf16 = v->b;
			else
				p->forbid_inline_suppression = v->b;
		} else {
			return bad(e, ERR_SCHEMA, &kv->key_loc, "unknown key ",
			    key);
		}
	}
	*out = p;
	return 0;
}

static int
add(struct report *r, struct arena *a, const char *rule, const char *hint,
    const char *msg)
{
	return report_add(r, a, rule, SEV_ERROR, "", 1, 1, hint, "%s", msg);
}

int
policy_apply(struct report *r, const struct policy *p, struct arena *a,
    struct err *e)
{
	struct finding *f, **link = &r->head;
	char msg[256];
	size_t i;
	int rv;

	if (p->max_gpus > 0 && r->ctx.gpus > p->max_gpus) {
		snprintf(msg, sizeof(msg), "%ld GPUs requested; the policy "
		    "allows at most %ld", r->ctx.gpus, p->max_gpus);
		rv = add(r, a, "policy.max_gpus", "ask for fewer GPUs", msg);
		if (rv != 0)
			return err_set(e, rv, NULL, "request memory "
			    "budget spent while applying the policy");
	}
	if (p->nallowed > 0) {
		bool ok = false;

		for (i = 0; i < p->nallowed; i++)
			if (strcmp(p->allowed_gpus[i], r->ctx.gpu) == 0)
				ok = true;
		if (!ok) {
			snprintf(msg, sizeof(msg), "GPU %s is not allowed by "
			    "the policy", r->ctx.gpu);
			rv = add(r, a, "policy.allowed_gpus", "use one of the "
			    "policy's allowed_gpus", msg);
			if (rv != 0)
				return err_set(e, rv, NULL, "request "
				    "memory budget spent while applying the "
				    "policy");
		}
	}
	if (p->require_bf16 && r->plan != NULL &&
	    strcmp(r->plan->precision, "bf16") != 0) {
		snprintf(msg, sizeof(msg), "the run resolves to %s; the policy "
		    "requires bf16", r->plan->precision);
		rv = add(r, a, "policy.require_bf16", "set bf16: true (on a GPU "
		    "with bf16)", msg);
		if (rv != 0)
			return err_set(e, rv, NULL, "request memory "
			    "budget spent while applying the policy");
	}
	/* Severity overrides, and rules turned off (policy.* too). */
	r->tail = NULL;
	r->nfindings = 0;
	memset(r->count, 0, sizeof(r->count));
	while ((f = *link) != NULL) {
		int sev = policy_severity(p, f->rule, (int)f->severity);

		if (sev == POLICY_OFF) {
			*link = f->next;
			continue;
		}
		f->severity = (enum severity)sev;
		r->count[f->severity]++;
		r->nfindings++;
		r->tail = f;
		link = &f->next;
	}
	return 0;
}
