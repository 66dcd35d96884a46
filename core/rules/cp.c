/*
 * core/rules/cp: context (sequence) parallelism: sizes, attention, packing
 * and GRPO under it.  Pure: a rule reads the config through its struct
 * rule_ctx and reports (docs/rules-howto.md).
 */
#include "core/rules_int.h"

#include "core/models.h"

static bool
uses_flash_lib(const char *backend)
{
	return backend != NULL && (strcmp(backend, "flash_attention_2") == 0 ||
	    strcmp(backend, "flash_attention_3") == 0 ||
	    strcmp(backend, "kernels-community/flash-attn2") == 0 ||
	    strcmp(backend, "kernels-community/flash-attn3") == 0);
}

/* cp.glm_dsa_exemption */
static int
check_cp_glm_dsa(struct rule_ctx *rc)
{
	if (cp_of(rc) <= 1 || !cfg_on(rc, "use_glm_dsa_kernels"))
		return 0;
	return rule_report(rc, cfg_pair(rc, "use_glm_dsa_kernels"), "GLM DSA "
	    "kernels bring their own context parallelism; ring attention "
	    "settings are ignored");
}

/* cp.grpo_async */
static int
check_cp_grpo_async(struct rule_ctx *rc)
{
	const struct doc_pair *a = cfg_sub(rc, "trl", "async_prefetch");
	const struct doc_pair *d = cfg_sub(rc, "trl", "use_data_producer");

	if (!cfg_is(rc, "rl", "grpo") || cp_of(rc) <= 1 ||
	    !((a != NULL && doc_truthy(a->value)) ||
	    (d != NULL && doc_truthy(d->value))))
		return 0;
	return rule_report(rc, cfg_pair(rc, "trl"), "asynchronous GRPO generation "
	    "does not work with context parallelism");
}

/* cp.grpo_liger_loss */
static int
check_cp_grpo_liger(struct rule_ctx *rc)
{
	/* A before-validator: it reads context_parallel_size as written
	   (sequence_parallel_degree is mapped later). */
	if (!cfg_is(rc, "rl", "grpo") || !cfg_sub_on(rc, "trl", "use_liger_loss") ||
	    cfg_int_of(raw_pair(rc, "context_parallel_size"), 1) <= 1)
		return 0;
	return rule_report(rc, cfg_pair(rc, "trl"), "trl.use_liger_loss does "
	    "not work with context parallelism in GRPO");
}

/* cp.heads_k_stride_divides_kv_heads */
static int
check_cp_heads_k_stride(struct rule_ctx *rc)
{
	const struct model_def *m = model_of(rc);
	long long s = cfg_int(rc, "heads_k_stride", 0);

	if (cp_of(rc) <= 1 || s <= 0 || m == NULL ||
	    m->num_key_value_heads <= 0 || m->num_key_value_heads % s == 0)
		return 0;
	return rule_report(rc, cfg_pair(rc, "heads_k_stride"), "heads_k_stride "
	    "(%lld) must divide the model's %lld key/value heads", s,
	    m->num_key_value_heads);
}

/* cp.loss_reporting_note */
static int
check_cp_loss_note(struct rule_ctx *rc)
{
	if (cp_of(rc) <= 1 || cfg_on(rc, "use_glm_dsa_kernels"))
		return 0;
	return rule_report(rc, NULL, "with context parallelism the logged "
	    "loss is averaged across the context-parallel group");
}

/* cp.packing_requires_mbs_one */
static int
check_cp_packing_mbs(struct rule_ctx *rc)
{
	long long cp;
	long long mbs;

	use_parsed(rc);  /* an after-validator */
	cp = cp_of(rc);
	mbs = cfg_int(rc, "micro_batch_size", 1);

	if (cp <= 1 || cfg_on(rc, "use_glm_dsa_kernels") ||
	    !cfg_on(rc, "sample_packing") || mbs <= 1)
		return 0;
	return rule_report(rc, cfg_pair(rc, "micro_batch_size"),
	    "context_parallel_size (%lld) with sample_packing needs "
	    "micro_batch_size 1, got %lld", cp, mbs);
}

/* cp.requires_flash_attention */
static int
check_cp_requires_flash(struct rule_ctx *rc)
{
	long long cp;
	const char *be;
	const struct doc_pair *at;

	use_parsed(rc);  /* an after-validator */
	cp = cp_of(rc);
	be = attn_backend(rc);
	at = cfg_pair(rc, "attn_implementation");

	if (cp <= 1 || cfg_on(rc, "use_glm_dsa_kernels") ||
	    uses_flash_lib(be))
		return 0;
	return rule_report(rc, at != NULL ? at :
	    cfg_pair(rc, "context_parallel_size"),
	    "context_parallel_size (%lld) needs flash attention, but the "
	    "attention backend is %s", cp, be != NULL ? be : "not set");
}

/* cp.ring_attn_func_default */
static int
check_cp_ring_default(struct rule_ctx *rc)
{
	if (cp_of(rc) <= 1 || cfg_set(rc, "ring_attn_func") ||
	    cfg_on(rc, "use_glm_dsa_kernels"))
		return 0;
	return rule_report(rc, NULL, "context parallelism uses ring_attn_func "
	    "%s", cfg_on(rc, "sample_packing") ? "varlen_llama3" :
	    "batch_ring");
}

/* cp.ring_attn_func_values */
static int
check_cp_ring_attn_func(struct rule_ctx *rc)
{
	const char *v = cfg_str(rc, "ring_attn_func");

	if (v == NULL || strcmp(v, "varlen_llama3") == 0 ||
	    strcmp(v, "batch_ring") == 0)
		return 0;
	return rule_report(rc, cfg_pair(rc, "ring_attn_func"),
	    "ring_attn_func must be varlen_llama3 or batch_ring, got "
	    "'%.60s'", v);
}

/* cp.sequence_parallel_degree_renamed */
static int
check_cp_spd_renamed(struct rule_ctx *rc)
{
	const struct doc_pair *cp = raw_pair(rc, "context_parallel_size");

	if (!cfg_on(rc, "sequence_parallel_degree") ||
	    (cp != NULL && doc_truthy(cp->value)))
		return 0;
	return rule_report(rc, cfg_pair(rc, "sequence_parallel_degree"),
	    "sequence_parallel_degree is renamed context_parallel_size");
}

/* cp.ssm_hybrid_unvalidated */
static int
check_cp_ssm_hybrid(struct rule_ctx *rc)
{
	const struct model_def *m = model_of(rc);

	if (cp_of(rc) <= 1 || m == NULL || m->model_type == NULL ||
	    !(strcmp(m->model_type, "nemotron_h") == 0 ||
	    strcmp(m->model_type, "falcon_h1") == 0 ||
	    strcmp(m->model_type, "granitemoehybrid") == 0))
		return 0;
	return rule_report(rc, NULL, "context parallelism on the hybrid SSM "
	    "model type %s is not validated", m->model_type);
}

/* cp.world_divisibility */
static int
check_cp_world(struct rule_ctx *rc)
{
	long long cp, w = rc->ctx->gpus;

	use_parsed(rc);  /* launch-time: the validated config */
	cp = cp_of(rc);

	if (cp <= 1 || (w >= cp && w % cp == 0))
		return 0;
	return rule_report(rc, cfg_pair(rc, "context_parallel_size"),
	    "context_parallel_size (%lld) must "
	    "divide the number of GPUs (%lld); the launch fails building the "
	    "device mesh", cp, w);
}

const struct rule_row rules_cp[] = {
	{ "cp.glm_dsa_exemption", SEV_WARNING,
	  "GLM DSA kernels with context parallelism",
	  "drop the ring attention settings",
	  check_cp_glm_dsa },
	{ "cp.grpo_async", SEV_ERROR,
	  "asynchronous GRPO with context parallelism",
	  "turn async_prefetch and use_data_producer off",
	  check_cp_grpo_async },
	{ "cp.grpo_liger_loss", SEV_ERROR,
	  "GRPO Liger loss with context parallelism",
	  "set trl.use_liger_loss: false",
	  check_cp_grpo_liger },
	{ "cp.heads_k_stride_divides_kv_heads", SEV_ERROR,
	  "heads_k_stride does not divide the KV heads",
	  "pick a heads_k_stride that divides the model's KV heads",
	  check_cp_heads_k_stride },
	{ "cp.loss_reporting_note", SEV_WARNING,
	  "the loss is averaged over the context-parallel group",
	  "nothing to fix; read the loss accordingly",
	  check_cp_loss_note },
	{ "cp.packing_requires_mbs_one", SEV_ERROR,
	  "context parallelism with packing needs micro_batch_size 1",
	  "set micro_batch_size: 1 and raise gradient_accumulation_steps",
	  check_cp_packing_mbs },
	{ "cp.requires_flash_attention", SEV_ERROR,
	  "context parallelism without flash attention",
	  "set attn_implementation: flash_attention_2",
	  check_cp_requires_flash },
	{ "cp.ring_attn_func_default", SEV_INFO,
	  "ring_attn_func is chosen for you",
	  "set ring_attn_func to choose",
	  check_cp_ring_default },
	{ "cp.ring_attn_func_values", SEV_ERROR,
	  "a ring_attn_func Axolotl does not know",
	  "use varlen_llama3 or batch_ring",
	  check_cp_ring_attn_func },
	{ "cp.sequence_parallel_degree_renamed", SEV_WARNING,
	  "sequence_parallel_degree is renamed",
	  "rename it to context_parallel_size",
	  check_cp_spd_renamed },
	{ "cp.ssm_hybrid_unvalidated", SEV_WARNING,
	  "context parallelism on a hybrid SSM model",
	  "test it at small scale first",
	  check_cp_ssm_hybrid },
	{ "cp.world_divisibility", SEV_ERROR,
	  "context_parallel_size does not divide the GPUs",
	  "use a context_parallel_size that divides the number of GPUs",
	  check_cp_world },
};
const size_t rules_cp_len =
    sizeof(rules_cp) / sizeof(rules_cp[0]);
