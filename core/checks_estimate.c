/*
 * core/checks_estimate: the findings of the memory estimate (DESIGN.md:
 * every reason for a verdict is a finding).  Reads rc->r->estimate.
 */
#include "checks.h"

#include <stddef.h>

#include "estimate.h"
#include "gpu.h"
#include "models.h"
#include "report.h"
#include "rules_int.h"

static const struct doc_pair *
model_key(const struct rule_ctx *rc)
{
	return cfg_first(rc, "base_model", "base_model_config");
}

/* estimate.model_unknown */
int
check_estimate_model_unknown(struct rule_ctx *rc)
{
	const struct estimate *e = rc->r->estimate;
	const struct doc_pair *k = model_key(rc);

	if (e == NULL || k == NULL || k->value->kind != DOC_STR ||
	    gpu_find(rc->ctx->gpu) == NULL || (e->known && !e->nominal))
		return 0;
	if (e->model != NULL && e->nominal)
		return rule_report(rc, k, "the catalog's architecture facts "
		    "for %.200s are unverified: the memory estimate assumes a "
		    "Llama-like shape of its nominal %.1fB parameters and a "
		    "128k vocabulary", e->model->hf_id,
		    (double)e->params / 1e9);
	if (e->model != NULL)
		return rule_report(rc, k, "the catalog has no size for %.200s, "
		    "so its memory is not estimated", e->model->hf_id);
	return rule_report(rc, k, "%.200s is not in the model catalog, so its "
	    "memory is not estimated", k->value->text);
}

/* memory.exceeds_capacity */
int
check_memory_exceeds(struct rule_ctx *rc)
{
	const struct estimate *e = rc->r->estimate;

	if (e == NULL || !e->known || e->fits)
		return 0;
	return rule_report(rc, model_key(rc), "estimated peak %.1f GiB per GPU "
	    "exceeds the %.1f GiB of %s; the largest term is %s (%.1f GiB)",
	    e->per_gpu_peak_gib, e->capacity_gib, rc->ctx->gpu,
	    e->largest_term, e->largest_gib);
}

/* memory.low_headroom */
int
check_memory_headroom(struct rule_ctx *rc)
{
	const struct estimate *e = rc->r->estimate;

	if (e == NULL || !e->known || !e->fits ||
	    e->per_gpu_peak_gib < 0.9 * e->capacity_gib)
		return 0;
	return rule_report(rc, model_key(rc), "estimated peak %.1f GiB per GPU "
	    "leaves %.1f GiB of the %.1f GiB of %s free (under 10%%)",
	    e->per_gpu_peak_gib, e->capacity_gib - e->per_gpu_peak_gib,
	    e->capacity_gib, rc->ctx->gpu);
}
