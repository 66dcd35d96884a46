/*
 * core/rules/optim: optimizers: what each needs (sharding, adapters,
 * torch) and settings that do nothing.  Pure: a rule reads the config
 * through its struct rule_ctx and reports (docs/rules-howto.md).
 */
#include "core/rules_int.h"

/* optim.adamw_params_without_adamw */
static int
check_optim_adamw_params(struct rule_ctx *rc)
{
	const char *o = cfg_str(rc, "optimizer");

	if (!(cfg_set(rc, "adam_beta1") || cfg_set(rc, "adam_beta2") ||
	    cfg_set(rc, "adam_epsilon")) || (o != NULL &&
	    strstr(o, "adamw") != NULL) || o == NULL)
		return 0;
	return rule_report(rc, cfg_first(rc, "adam_beta1", "adam_beta2"),
	    "adam_* settings do nothing with optimizer %.40s", o);
}

/* optim.adopt_torch_version */
static int
check_optim_adopt_torch(struct rule_ctx *rc)
{
	const char *opt = cfg_str(rc, "optimizer");

	if (opt == NULL || strstr(opt, "adopt") == NULL ||
	    rc->ctx->torch >= 2051)
		return 0;
	return rule_report(rc, cfg_pair(rc, "optimizer"), "optimizer %s "
	    "needs torch 2.5.1 or newer", opt);
}

/* optim.ao_deprecated */
static int
check_optim_ao(struct rule_ctx *rc)
{
	const char *o = cfg_str(rc, "optimizer");

	if (o == NULL || !(strcmp(o, "ao_adamw_4bit") == 0 ||
	    strcmp(o, "ao_adamw_8bit") == 0))
		return 0;
	return rule_report(rc, cfg_pair(rc, "optimizer"), "%s is deprecated; use "
	    "adamw_torch_%s", o, o + 9);
}

/*
 * OptimizationValidationMixin._resolve_fsdp_version's answer is not "2"
 * while FSDP is on (fsdp or fsdp_config truthy): the version after the
 * copy from fsdp_config, else fsdp_config's fsdp_version, else 1.
 */
static bool
fsdp_not_2(const struct rule_ctx *rc)
{
	const struct doc_node *v = fsdp_version_node(rc);

	if (!cfg_on(rc, "fsdp") && !cfg_on(rc, "fsdp_config"))
		return false;
	return v == NULL || !node_str_is_2(v);
}

/* optim.flash_optimizers_sharding */
static int
check_optim_flash_sharding(struct rule_ctx *rc)
{
	const char *opt = cfg_str(rc, "optimizer");

	if (opt == NULL || strncmp(opt, "flash_", 6) != 0)
		return 0;
	if (!cfg_on(rc, "deepspeed") && !fsdp_not_2(rc))
		return 0;
	return rule_report(rc, cfg_pair(rc, "optimizer"), "optimizer %s "
	    "needs DDP or FSDP2", opt);
}

/* optim.fsdp1_offload_8bit: self.fsdp_config.offload_params is the
   parsed bool ('false' is off). */
static int
check_optim_fsdp1_offload_8bit(struct rule_ctx *rc)
{
	const char *opt;
	const struct doc_pair *off;
	bool b;

	use_parsed(rc);  /* an after-validator */
	opt = cfg_str(rc, "optimizer");
	off = fsdp_pair(rc, "offload_params");

	if (!cfg_on(rc, "fsdp_config") || opt == NULL ||
	    strstr(opt, "8bit") == NULL || off == NULL ||
	    !(py_bool_word(off->value, &b) ? b : doc_truthy(off->value)) ||
	    fsdp_version(rc) == 2)
		return 0;
	return rule_report(rc, cfg_pair(rc, "optimizer"),
	    "optimizer %s with FSDP1 param offload (offload_params) is "
	    "refused", opt);
}

/* optim.muon_sharding */
static int
check_optim_muon_sharding(struct rule_ctx *rc)
{
	const char *opt = cfg_str(rc, "optimizer");

	if (opt == NULL || strcmp(opt, "muon") != 0)
		return 0;
	if (cfg_on(rc, "deepspeed"))
		return rule_report(rc, cfg_pair(rc, "optimizer"),
		    "optimizer muon does not work with DeepSpeed");
	if (fsdp_not_2(rc))
		return rule_report(rc, cfg_pair(rc, "optimizer"),
		    "optimizer muon needs FSDP2 (fsdp_version: 2)");
	return 0;
}

/* optim.qgalore_adapter */
static int
check_optim_qgalore_adapter(struct rule_ctx *rc)
{
	if (!cfg_is(rc, "optimizer", "q_galore_adamw8bit") ||
	    !cfg_on(rc, "adapter"))
		return 0;
	return rule_report(rc, cfg_pair(rc, "optimizer"),
	    "q_galore_adamw8bit does not work with an adapter");
}

/* optim.qgalore_fp32_and_targets */
static int
check_optim_qgalore_fp32(struct rule_ctx *rc)
{
	if (!cfg_is(rc, "optimizer", "q_galore_adamw8bit"))
		return 0;
	if (!cfg_on(rc, "bf16") && !cfg_on(rc, "bfloat16") &&
	    !cfg_on(rc, "fp16"))
		return rule_report(rc, cfg_pair(rc, "optimizer"), "Q-GaLore without "
		    "bf16 or fp16 written runs in fp32");
	if (!cfg_set(rc, "optim_target_modules"))
		return rule_report_sev(rc, cfg_pair(rc, "optimizer"), SEV_INFO,
		    "Q-GaLore targets attn and mlp modules by default");
	return 0;
}

/* optim.qgalore_sharding */
static int
check_optim_qgalore_sharding(struct rule_ctx *rc)
{
	const struct doc_pair *uop = fsdp_pair(rc, "use_orig_params");
	bool fsdp = cfg_on(rc, "fsdp") || cfg_on(rc, "fsdp_config");

	/* check_qgalore: an adapter first (optim.qgalore_adapter), then
	   DeepSpeed, then FSDP: version 2 with use_orig_params: true. */
	if (!cfg_is(rc, "optimizer", "q_galore_adamw8bit") ||
	    cfg_on(rc, "adapter"))
		return 0;
	if (cfg_on(rc, "deepspeed") || fsdp_not_2(rc) || (fsdp &&
	    !(uop != NULL && uop->value->kind == DOC_BOOL && uop->value->b)))
		return rule_report(rc, cfg_pair(rc, "optimizer"),
		    "q_galore_adamw8bit needs DDP, or FSDP2 with "
		    "use_orig_params: true");
	return 0;
}

const struct rule_row rules_optim[] = {
	{ "optim.adamw_params_without_adamw", SEV_WARNING,
	  "adam_* settings with a non-AdamW optimizer",
	  "remove them, or use an AdamW optimizer",
	  check_optim_adamw_params },
	{ "optim.adopt_torch_version", SEV_ERROR,
	  "ADOPT on torch older than 2.5.1",
	  "upgrade torch, or pick another optimizer",
	  check_optim_adopt_torch },
	{ "optim.ao_deprecated", SEV_WARNING,
	  "ao_adamw_* optimizers are deprecated",
	  "use adamw_torch_4bit or adamw_torch_8bit",
	  check_optim_ao },
	{ "optim.flash_optimizers_sharding", SEV_ERROR,
	  "a flash_* optimizer with DeepSpeed or FSDP1",
	  "use DDP or FSDP2",
	  check_optim_flash_sharding },
	{ "optim.fsdp1_offload_8bit", SEV_ERROR,
	  "an 8-bit optimizer with FSDP1 param offload",
	  "use fsdp_version: 2 with adamw_torch_8bit, or offload_params: false",
	  check_optim_fsdp1_offload_8bit },
	{ "optim.fsdp2_bnb_8bit", SEV_ERROR,
	  "bitsandbytes 8-bit AdamW under FSDP2",
	  "set optimizer: adamw_torch_8bit",
	  NULL },
	{ "optim.muon_sharding", SEV_ERROR,
	  "Muon with DeepSpeed or FSDP1",
	  "use DDP or FSDP2 (fsdp_version: 2)",
	  check_optim_muon_sharding },
	{ "optim.qgalore_adapter", SEV_ERROR,
	  "Q-GaLore with an adapter",
	  "remove the adapter or pick another optimizer",
	  check_optim_qgalore_adapter },
	{ "optim.qgalore_fp32_and_targets", SEV_WARNING,
	  "Q-GaLore in fp32",
	  "write bf16: true",
	  check_optim_qgalore_fp32 },
	{ "optim.qgalore_sharding", SEV_ERROR,
	  "Q-GaLore with DeepSpeed, FSDP1, or FSDP2 without use_orig_params",
	  "use DDP, or FSDP2 with use_orig_params: true",
	  check_optim_qgalore_sharding },
};
const size_t rules_optim_len =
    sizeof(rules_optim) / sizeof(rules_optim[0]);
