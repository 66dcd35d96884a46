/*
 * core/check: run the core pipeline on one config.  No I/O.
 */
#include "check.h"

#include "arena.h"
#include "doc.h"
#include "err.h"
#include "estimate.h"
#include "plan.h"
#include "policy.h"
#include "rules.h"
#include "schema.h"
#include "suggest.h"
#include "suppress.h"

/* schema.duplicate_key: PyYAML keeps the last; say so at the second. */
static int
report_dups(struct report *r, const struct doc *d, struct arena *a,
    struct err *e)
{
	const struct rule_def *rd = rules_find("schema.duplicate_key");
	const struct doc_dup *k;
	int rv;

	if (rd == NULL)	/* core_init() builds the catalog at start */
		return err_while(e, ERR_NOMEM, NULL, "building the rule "
		    "catalog");
	for (k = d->dups; k != NULL; k = k->next) {
		rv = report_add(r, a, rd->id, rd->severity, k->path,
		    k->loc.line, k->loc.col, rd->hint,
		    "key '%.200s' appears twice (first at line %u)", k->key,
		    k->first_line);
		if (rv != 0) {
			struct err_loc loc = { .line = k->loc.line,
			    .col = k->loc.col };

			return err_while(e, rv, &loc, "reporting the "
			    "duplicate key '%.60s'", k->key);
		}
	}
	return 0;
}

/* The caller's reader (the daemon's --hf-cache) for base_model, then
   base_model_config; NULL when it has neither. */
static const struct model_def *
lookup_model(const struct context *ctx, const struct doc *d,
    struct arena *a)
{
	static const char *const keys[] = { "base_model",
	    "base_model_config" };
	const struct model_def *m;
	const struct doc_node *v;
	size_t i;

	for (i = 0; i < 2; i++) {
		v = doc_map_value(d->root, keys[i]);
		if (v == NULL || v->kind != DOC_STR)
			continue;
		m = ctx->model_lookup(ctx->model_lookup_arg, v->text, a);
		if (m != NULL)
			return m;
	}
	return NULL;
}

int
check_run(struct report **out, const char *buf, size_t len,
    const struct context *ctx, const struct limits *lim, struct arena *a,
    struct err *e)
{
	struct report *r;
	struct plan *plan;
	struct doc *d;
	struct estimate *est;
	int rv;

	*out = NULL;
	r = ARENA_NEW(a, struct report, 1);
	if (r == NULL)
		return err_set(e, ERR_NOMEM, NULL,
		    "request memory budget spent");
	r->ctx = *ctx;
	rv = context_resolve(&r->ctx, e);
	if (rv != 0)
		return rv;
	rv = doc_parse(&d, buf, len, lim, a, e);
	if (rv != 0)
		return rv;
	r->doc = d;
	plan = ARENA_NEW(a, struct plan, 1);
	if (plan == NULL)
		return err_set(e, ERR_NOMEM, NULL,
		    "request memory budget spent");
	rv = plan_build(plan, d, &r->ctx, a, e);
	if (rv != 0)
		return rv;
	r->plan = plan;
	est = ARENA_NEW(a, struct estimate, 1);
	if (est == NULL)
		return err_set(e, ERR_NOMEM, NULL,
		    "request memory budget spent");
	/* The model once per check (the suggestions re-estimate with it):
	   the caller's, else the catalog's, else the caller's reader's. */
	if (r->ctx.model == NULL)
		r->ctx.model = estimate_model(d);
	if (r->ctx.model == NULL && r->ctx.model_lookup != NULL)
		r->ctx.model = lookup_model(&r->ctx, d, a);
	estimate_run(est, d, plan, &r->ctx);
	r->estimate = est;
	rv = report_dups(r, d, a, e);
	if (rv != 0)
		return rv;
	rv = schema_check(r, d, a, e);
	if (rv != 0)
		return rv;
	rv = rules_run(r, d, &r->ctx, plan, a, e);
	if (rv != 0)
		return rv;
	rv = suggest_run(r, &r->ctx, lim, a, e);
	if (rv != 0)
		return rv;
	rv = suppress_apply(r, buf, len, ctx->policy != NULL &&
	    ctx->policy->forbid_inline_suppression, a, e);
	if (rv != 0)
		return rv;
	if (ctx->policy != NULL) {
		rv = policy_apply(r, ctx->policy, a, e);
		if (rv != 0)
			return rv;
	}
	rv = report_finish(r, a, e);
	if (rv != 0)
		return rv;
	*out = r;
	return 0;
}
