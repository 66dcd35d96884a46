/*
 * core/rules/ray: Ray launches: what preflight cannot resolve until the
 * workers run.  Pure: a rule reads the config through its struct rule_ctx
 * and reports (docs/rules-howto.md).
 */
#include "core/rules_int.h"

#include "core/gpu.h"

/* ray.batch_derivation_on_worker */
static int
check_ray_batch(struct rule_ctx *rc)
{
	if (!cfg_on(rc, "use_ray"))
		return 0;
	return rule_report(rc, cfg_pair(rc, "use_ray"), "with Ray the batch size is "
	    "derived on each worker");
}

/* ray.bf16_auto_unresolved */
static int
check_ray_bf16(struct rule_ctx *rc)
{
	const struct doc_pair *bf = cfg_pair(rc, "bf16");
	const struct gpu *g = gpu_find(rc->ctx->gpu);

	if (!cfg_on(rc, "use_ray") || !(bf == NULL ||
	    (bf->value->kind == DOC_STR && strcmp(bf->value->text, "auto") ==
	    0)) || cfg_set(rc, "fp16") || g == NULL || g->bf16)
		return 0;
	return rule_report(rc, cfg_pair(rc, "use_ray"), "with Ray, bf16: auto is "
	    "not resolved and %s has no bf16; set bf16: false and fp16: true",
	    g->id);
}

/* ray.capability_checks_deferred */
static int
check_ray_deferred(struct rule_ctx *rc)
{
	if (!cfg_on(rc, "use_ray"))
		return 0;
	return rule_report(rc, cfg_pair(rc, "use_ray"), "with Ray, GPU capability "
	    "checks run on the workers; preflight checks against %s",
	    rc->ctx->gpu);
}

/* ray.world_size_is_num_workers */
static int
check_ray_world(struct rule_ctx *rc)
{
	if (!cfg_on(rc, "use_ray"))
		return 0;
	return rule_report(rc, cfg_pair(rc, "use_ray"), "with Ray the world size is "
	    "ray_num_workers (%lld)", cfg_int(rc, "ray_num_workers", 1));
}

const struct rule_row rules_ray[] = {
	{ "ray.batch_derivation_on_worker", SEV_INFO,
	  "with Ray the batch is derived on the workers",
	  "nothing to fix",
	  check_ray_batch },
	{ "ray.bf16_auto_unresolved", SEV_ERROR,
	  "Ray with bf16: auto on GPUs without bf16",
	  "set bf16: false and fp16: true",
	  check_ray_bf16 },
	{ "ray.capability_checks_deferred", SEV_INFO,
	  "Ray runs capability checks on the workers",
	  "check with the workers' GPU",
	  check_ray_deferred },
	{ "ray.world_size_is_num_workers", SEV_INFO,
	  "with Ray the world size is ray_num_workers",
	  "set ray_num_workers",
	  check_ray_world },
};
const size_t rules_ray_len =
    sizeof(rules_ray) / sizeof(rules_ray[0]);
