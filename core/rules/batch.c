/*
 * core/rules/batch: batch arithmetic: micro_batch_size,
 * gradient_accumulation_steps, batch_size, batch flattening, GRPO
 * generation batches, and what Axolotl fills in.  Pure: a rule reads the
 * config through its struct rule_ctx and reports (docs/rules-howto.md).
 */
#include "core/rules_int.h"

#include <stdlib.h>

#include "core/plan.h"

/* Python's int(v) for a number or a numeric string; false where int()
   raises (a collection, null, other text). */
static bool
py_int(const struct doc_node *v, long long *out)
{
	char *end;

	switch (v->kind) {
	case DOC_BOOL:
		*out = v->b;
		return true;
	case DOC_INT:
		*out = v->i;
		return true;
	case DOC_FLOAT:
		if (!(v->f > -9.2e18 && v->f < 9.2e18))
			return false;
		*out = (long long)v->f;
		return true;
	case DOC_STR:
		*out = strtoll(v->text, &end, 10);
		while (*end == ' ' || *end == '\t' || *end == '\n')
			end++;
		return end != v->text && *end == '\0';
	default:
		return false;
	}
}

/*
 * batch.grpo_generation_divisibility and batch.grpo_world_groups share the
 * numbers of RLValidationMixin.check_grpo_batch_size_divisibility: G
 * generations per step, num_generations per prompt.  0: not GRPO or no
 * num_generations; 1: *g and *n set; -1: the validator itself fails on
 * the values (a num_generations it cannot compare, a size int() refuses).
 */
static int
grpo_numbers(const struct rule_ctx *rc, long long *g, long long *n)
{
	const struct doc_pair *trl = cfg_pair(rc, "trl");
	const struct doc_pair *ng, *gb;
	long long mb = 1, ga = 1;

	if (!cfg_is(rc, "rl", "grpo") || trl == NULL ||
	    !doc_truthy(trl->value))
		return 0;
	if (trl->value->kind != DOC_MAP)
		return -1;
	ng = doc_map_get(trl->value, "num_generations");
	gb = doc_map_get(trl->value, "generation_batch_size");
	if (ng == NULL || ng->value->kind == DOC_NULL)
		return 0;
	if (!(ng->value->kind == DOC_INT || ng->value->kind == DOC_BOOL ||
	    (ng->value->kind == DOC_FLOAT && ng->value->f ==
	    (double)(long long)ng->value->f)))
		return -1;
	*n = ng->value->kind == DOC_FLOAT ? (long long)ng->value->f :
	    ng->value->kind == DOC_BOOL ? ng->value->b : ng->value->i;
	if (*n < 2)
		return 1;
	if (gb != NULL && gb->value->kind != DOC_NULL)
		return py_int(gb->value, g) ? 1 : -1;
	if (cfg_on(rc, "micro_batch_size") &&
	    !py_int(cfg_pair(rc, "micro_batch_size")->value, &mb))
		return -1;
	if (cfg_on(rc, "gradient_accumulation_steps") &&
	    !py_int(cfg_pair(rc, "gradient_accumulation_steps")->value, &ga))
		return -1;
	*g = mul_sat(mb, ga);
	return 1;
}

/* batch.batch_size_discouraged */
static int
check_batch_bs_discouraged(struct rule_ctx *rc)
{
	if (!cfg_on(rc, "batch_size"))
		return 0;
	return rule_report(rc, cfg_pair(rc, "batch_size"), "batch_size is "
	    "deprecated; Axolotl derives it from micro_batch_size and "
	    "gradient_accumulation_steps");
}

/* batch.batch_size_floor_division */
static int
check_batch_bs_floor(struct rule_ctx *rc)
{
	const struct doc_pair *gas = cfg_pair(rc, "gradient_accumulation_steps");
	long long bs = cfg_int(rc, "batch_size", 0);
	long long mbs = cfg_int(rc, "micro_batch_size", 1);

	if (bs <= 0 || cfg_on(rc, "gradient_accumulation_steps"))
		return 0;
	if (gas == NULL)
		/* Wasteful, not fatal: Axolotl accepts it and the
		 * run starts, so warn (rules.md suggests error). */
		return rule_report_sev(rc, cfg_pair(rc, "batch_size"),
		    SEV_WARNING, "batch_size %lld with "
		    "gradient_accumulation_steps omitted: the schema's "
		    "default 1 wins and batch_size is not divided", bs);
	if (mbs > 0 && bs < mbs)
		return rule_report(rc, cfg_pair(rc, "batch_size"), "batch_size %lld "
		    "< micro_batch_size %lld: gradient_accumulation_steps "
		    "becomes 0", bs, mbs);
	if (mbs > 0 && bs % mbs != 0)
		return rule_report_sev(rc, cfg_pair(rc, "batch_size"), SEV_WARNING,
		    "batch_size %lld is not a multiple of micro_batch_size "
		    "%lld; the remainder is dropped", bs, mbs);
	return 0;
}

/* batch.dataloader_defaults */
static int
check_batch_dataloader(struct rule_ctx *rc)
{
	if (cfg_set(rc, "dataloader_num_workers") ||
	    cfg_set(rc, "dataloader_pin_memory") ||
	    cfg_set(rc, "dataloader_prefetch_factor"))
		return 0;
	return rule_report(rc, NULL, "no dataloader settings: Axolotl uses "
	    "%ld worker%s, pinned memory and prefetch 256", rc->ctx->gpus,
	    rc->ctx->gpus == 1 ? "" : "s");
}

/* batch.ddp_false_multi_gpu */
static int
check_batch_ddp_false(struct rule_ctx *rc)
{
	if (!cfg_false(rc, "ddp") || rc->plan->world <= 1 || fsdp_on(rc))
		return 0;
	return rule_report(rc, cfg_pair(rc, "ddp"), "ddp: false on %lld GPUs: the "
	    "batch is not scaled by the GPU count", rc->plan->world);
}

/* batch.eval_batch_size_default */
static int
check_batch_eval_default(struct rule_ctx *rc)
{
	if (cfg_set(rc, "eval_batch_size"))
		return 0;
	return rule_report(rc, NULL, "eval_batch_size is unset: Axolotl uses "
	    "micro_batch_size (%lld)", rc->plan->micro_batch_size);
}

/* batch.eval_mbs_mismatch */
static int
check_batch_eval_mbs(struct rule_ctx *rc)
{
	long long e = cfg_int(rc, "eval_batch_size", 0);
	long long m = cfg_int(rc, "micro_batch_size", 0);

	if (!cfg_on(rc, "eval_batch_size") || !cfg_on(rc, "micro_batch_size") ||
	    e == m)
		return 0;
	return rule_report(rc, cfg_pair(rc, "eval_batch_size"), "eval_batch_size "
	    "(%lld) differs from micro_batch_size (%lld)", e, m);
}

/* batch.flattening_auto_resolution */
static int
check_batch_flattening_auto(struct rule_ctx *rc)
{
	if (!cfg_is(rc, "batch_flattening", "auto"))
		return 0;
	return rule_report(rc, cfg_pair(rc, "batch_flattening"), "batch_flattening: "
	    "auto turns on only with micro_batch_size > 1, no packing and a "
	    "varlen backend");
}

/* batch.flattening_mbs_one */
static int
check_batch_flattening_mbs1(struct rule_ctx *rc)
{
	use_parsed(rc);  /* an after-validator */

	if (!cfg_true(rc, "batch_flattening") || rc->plan->micro_batch_size != 1)
		return 0;
	return rule_report(rc, cfg_pair(rc, "batch_flattening"), "batch_flattening "
	    "with micro_batch_size 1 has nothing to flatten");
}

/* batch.flattening_requires_varlen_attention */
static int
check_batch_flattening_varlen(struct rule_ctx *rc)
{
	const char *be;

	use_parsed(rc);  /* an after-validator */
	be = attn_backend(rc);

	if (!cfg_true(rc, "batch_flattening") || packing_backend(be))
		return 0;
	return rule_report(rc, cfg_pair(rc, "batch_flattening"), "batch_flattening "
	    "needs a varlen attention backend (flash attention), not %s",
	    be != NULL ? be : "the default");
}

/* batch.flattening_with_sample_packing */
static int
check_batch_flattening_packing(struct rule_ctx *rc)
{
	use_parsed(rc);  /* an after-validator */

	if (!cfg_true(rc, "batch_flattening") || !cfg_on(rc, "sample_packing"))
		return 0;
	return rule_report(rc, cfg_pair(rc, "batch_flattening"),
	    "batch_flattening: true and sample_packing are two ways to pack; "
	    "Axolotl takes one");
}

/* batch.gas_and_batch_size_both_set */
static int
check_batch_gas_and_bs(struct rule_ctx *rc)
{
	if (!cfg_on(rc, "gradient_accumulation_steps") ||
	    !cfg_on(rc, "batch_size"))
		return 0;
	return rule_report(rc, cfg_pair(rc, "batch_size"),
	    "batch_size (%lld) and gradient_accumulation_steps (%lld) are "
	    "both set; Axolotl takes only one of them",
	    cfg_int(rc, "batch_size", 0),
	    cfg_int(rc, "gradient_accumulation_steps", 0));
}

/* batch.global_batch_world_scaling */
static int
check_batch_world_scaling(struct rule_ctx *rc)
{
	const struct plan *p = rc->plan;

	if (p->world == 1 || p->global_batch_size == p->batch_size)
		return 0;
	return rule_report(rc, NULL, "on %lld GPUs the batch per optimizer "
	    "step is %lld (micro_batch_size %lld x gradient_accumulation_steps "
	    "%lld x %lld data-parallel ranks)", p->world, p->global_batch_size,
	    p->micro_batch_size, p->gradient_accumulation_steps,
	    p->global_batch_size / (p->batch_size > 0 ? p->batch_size : 1));
}

/* batch.grpo_generation_divisibility */
static int
check_batch_grpo_divisibility(struct rule_ctx *rc)
{
	long long g = 0, n = 0;
	int k = grpo_numbers(rc, &g, &n);

	if (k == 0)
		return 0;
	if (k < 0)
		return rule_report(rc, cfg_pair(rc, "trl"), "Axolotl's GRPO "
		    "batch check fails on these values: trl.num_generations and "
		    "the batch sizes must be numbers");
	if (n >= 2 && g % n == 0)
		return 0;
	return rule_report(rc, cfg_pair(rc, "trl"), n < 2 ?
	    "trl.num_generations is %lld; GRPO needs at least 2 (generation "
	    "batch %lld)" : "the generation batch (%lld) is not a multiple of "
	    "trl.num_generations (%lld)", n < 2 ? n : g, n < 2 ? g : n);
}

/* batch.grpo_sp_group_divisibility */
static int
check_batch_grpo_sp(struct rule_ctx *rc)
{
	const struct doc_pair *ng = cfg_sub(rc, "trl", "num_generations");
	long long b, n;

	if (!cfg_is(rc, "rl", "grpo") || cp_of(rc) <= 1 || ng == NULL ||
	    ng->value->kind != DOC_INT)
		return 0;
	n = ng->value->i;
	b = rc->plan->micro_batch_size * (rc->plan->world / cp_of(rc));
	if (n >= 2 && n <= b && b % n == 0)
		return 0;
	return rule_report(rc, cfg_pair(rc, "trl"), "with context parallelism "
	    "GRPO needs num_generations (%lld) between 2 and %lld dividing "
	    "it (micro_batch_size x GPUs / cp)", n, b);
}

/* batch.grpo_world_groups */
static int
check_batch_grpo_world(struct rule_ctx *rc)
{
	long long g = 0, n = 0, w = rc->ctx->gpus;

	if (grpo_numbers(rc, &g, &n) != 1 || n < 2 || g % n != 0 || w <= 1 ||
	    g >= mul_sat(n, w))
		return 0;
	return rule_report(rc, cfg_pair(rc, "trl"), "on %lld GPUs GRPO needs "
	    "a generation batch of at least num_generations x GPUs = %lld, "
	    "got %lld", w, mul_sat(n, w), g);
}

/* batch.two_of_three_required */
static int
check_batch_two_of_three(struct rule_ctx *rc)
{
	int n = cfg_on(rc, "micro_batch_size") +
	    cfg_on(rc, "gradient_accumulation_steps") +
	    cfg_on(rc, "batch_size");

	if (n >= 2)
		return 0;
	return rule_report(rc, NULL, "set two of micro_batch_size, "
	    "gradient_accumulation_steps and batch_size (%d %s set); Axolotl "
	    "refuses the config", n, n == 1 ? "is" : "are");
}

const struct rule_row rules_batch[] = {
	{ "batch.batch_size_discouraged", SEV_WARNING,
	  "batch_size is deprecated",
	  "set micro_batch_size and gradient_accumulation_steps instead",
	  check_batch_bs_discouraged },
	{ "batch.batch_size_floor_division", SEV_ERROR,
	  "batch_size that does not divide into accumulation steps",
	  "set gradient_accumulation_steps instead of batch_size",
	  check_batch_bs_floor },
	{ "batch.dataloader_defaults", SEV_INFO,
	  "dataloader defaults are filled in",
	  "set dataloader_num_workers, _pin_memory, _prefetch_factor to change them",
	  check_batch_dataloader },
	{ "batch.ddp_false_multi_gpu", SEV_WARNING,
	  "ddp: false on several GPUs",
	  "remove ddp: false",
	  check_batch_ddp_false },
	{ "batch.eval_batch_size_default", SEV_INFO,
	  "eval_batch_size defaults to micro_batch_size",
	  "set eval_batch_size to change it",
	  check_batch_eval_default },
	{ "batch.eval_mbs_mismatch", SEV_WARNING,
	  "eval_batch_size differs from micro_batch_size",
	  "use the same value, or accept different memory in evaluation",
	  check_batch_eval_mbs },
	{ "batch.flattening_auto_resolution", SEV_INFO,
	  "batch_flattening: auto is resolved",
	  "set true or false to decide",
	  check_batch_flattening_auto },
	{ "batch.flattening_mbs_one", SEV_WARNING,
	  "batch_flattening with micro_batch_size 1",
	  "raise micro_batch_size, or drop batch_flattening",
	  check_batch_flattening_mbs1 },
	{ "batch.flattening_requires_varlen_attention", SEV_ERROR,
	  "batch_flattening without a varlen attention backend",
	  "set attn_implementation: flash_attention_2",
	  check_batch_flattening_varlen },
	{ "batch.flattening_with_sample_packing", SEV_ERROR,
	  "batch_flattening and sample_packing together",
	  "keep one of them",
	  check_batch_flattening_packing },
	{ "batch.gas_and_batch_size_both_set", SEV_ERROR,
	  "gradient_accumulation_steps and batch_size are both set",
	  "keep only one of them",
	  check_batch_gas_and_bs },
	{ "batch.global_batch_world_scaling", SEV_INFO,
	  "the batch is multiplied by the data-parallel ranks",
	  "size micro_batch_size and gradient_accumulation_steps for the global batch you want",
	  check_batch_world_scaling },
	{ "batch.grpo_generation_divisibility", SEV_ERROR,
	  "GRPO generations do not divide the generation batch",
	  "make the generation batch a multiple of trl.num_generations (>= 2)",
	  check_batch_grpo_divisibility },
	{ "batch.grpo_sp_group_divisibility", SEV_ERROR,
	  "GRPO generations do not fit the context-parallel groups",
	  "choose num_generations dividing micro_batch_size x GPUs / cp",
	  check_batch_grpo_sp },
	{ "batch.grpo_world_groups", SEV_ERROR,
	  "GRPO generation batch smaller than num_generations x GPUs",
	  "raise micro_batch_size x gradient_accumulation_steps or trl.generation_batch_size",
	  check_batch_grpo_world },
	{ "batch.two_of_three_required", SEV_ERROR,
	  "fewer than two of micro_batch_size, gradient_accumulation_steps, batch_size",
	  "set micro_batch_size and gradient_accumulation_steps",
	  check_batch_two_of_three },
};
const size_t rules_batch_len =
    sizeof(rules_batch) / sizeof(rules_batch[0]);
