/*
 * core/rules/fsdp: FSDP: fsdp_version, fsdp_config keys and values, the
 * legacy fsdp list, and what FSDP1/FSDP2 support.  Pure: a rule reads the
 * config through its struct rule_ctx and reports (docs/rules-howto.md).
 */
#include "core/rules_int.h"

static const char *const fsdp_keys[] = { "fsdp_version", "version",
    "activation_checkpointing", "offload_params", "sync_module_states",
    "cpu_ram_efficient_loading", "cpu_offload_pin_memory", "use_orig_params",
    "state_dict_type", "final_state_dict_type", "auto_wrap_policy",
    "transformer_layer_cls_to_wrap", "min_num_params",
    "reshard_after_forward", "mixed_precision_policy" };

/* fsdp.prefixed_keys_renamed */
static int
check_fsdp_prefixed(struct rule_ctx *rc)
{
	const struct doc_pair *f = cfg_pair(rc, "fsdp_config");
	size_t i;

	if (f == NULL || f->value->kind != DOC_MAP)
		return 0;
	for (i = 0; i < f->value->n; i++) {
		const struct doc_pair *p = &f->value->pairs[i];

		if (p->key->kind == DOC_STR && strncmp(p->key->text, "fsdp_",
		    5) == 0 && strcmp(p->key->text, "fsdp_version") != 0)
			return rule_report(rc, p, "fsdp_config keys lost their "
			    "fsdp_ prefix (%.60s is read as %.60s)",
			    p->key->text, p->key->text + 5);
	}
	return 0;
}

/* fsdp.deepspeed_exclusive_legacy */
static int
check_fsdp_deepspeed_legacy(struct rule_ctx *rc)
{
	if (!cfg_on(rc, "deepspeed") || !cfg_on(rc, "fsdp"))
		return 0;
	return rule_report(rc, cfg_pair(rc, "fsdp"),
	    "deepspeed and fsdp are both set; Axolotl refuses two sharding "
	    "strategies");
}

/* fsdp.deepspeed_with_fsdp_config */
static int
check_fsdp_deepspeed_config(struct rule_ctx *rc)
{
	if (!cfg_on(rc, "deepspeed") || !cfg_on(rc, "fsdp_config"))
		return 0;
	return rule_report(rc, cfg_pair(rc, "fsdp_config"),
	    "deepspeed and fsdp_config are both set: two sharding strategies "
	    "for one run");
}

/* fsdp.empty_config */
static int
check_fsdp_empty(struct rule_ctx *rc)
{
	const struct doc_pair *p = cfg_pair(rc, "fsdp_config");
	size_t i;

	if (p == NULL || p->value->kind != DOC_MAP)
		return 0;
	for (i = 0; i < p->value->n; i++)
		if (p->value->pairs[i].value->kind != DOC_NULL)
			return 0;
	return rule_report(rc, p, "an empty fsdp_config turns FSDP off");
}

/* fsdp.enum_values */
static int
check_fsdp_enum_values(struct rule_ctx *rc)
{
	static const char *const sd[] = { "FULL_STATE_DICT",
	    "LOCAL_STATE_DICT", "SHARDED_STATE_DICT" };
	const struct doc_pair *ps[3];
	const struct doc_pair *wrap = fsdp_pair(rc, "auto_wrap_policy");
	const struct doc_pair *mnp = fsdp_pair(rc, "min_num_params");
	size_t i, k;
	int rv;

	ps[0] = fsdp_pair(rc, "state_dict_type");
	ps[1] = fsdp_pair(rc, "final_state_dict_type");
	ps[2] = cfg_pair(rc, "fsdp_final_state_dict_type");
	for (i = 0; i < 3; i++) {
		bool ok = false;

		if (ps[i] == NULL || ps[i]->value->kind == DOC_NULL)
			continue;
		for (k = 0; k < 3 && ps[i]->value->kind == DOC_STR; k++)
			if (strcmp(ps[i]->value->text, sd[k]) == 0)
				ok = true;
		if (!ok) {
			rv = rule_report(rc, ps[i], "%s must be "
			    "FULL_STATE_DICT, LOCAL_STATE_DICT or "
			    "SHARDED_STATE_DICT", ps[i]->key->text);
			if (rv != 0)
				return rv;
		}
	}
	if (wrap != NULL && wrap->value->kind != DOC_NULL &&
	    !(wrap->value->kind == DOC_STR &&
	    (strcmp(wrap->value->text, "TRANSFORMER_BASED_WRAP") == 0 ||
	    strcmp(wrap->value->text, "SIZE_BASED_WRAP") == 0))) {
		rv = rule_report(rc, wrap, "auto_wrap_policy must be "
		    "TRANSFORMER_BASED_WRAP or SIZE_BASED_WRAP");
		if (rv != 0)
			return rv;
	}
	if (mnp != NULL && mnp->value->kind == DOC_INT && mnp->value->i < 1)
		return rule_report(rc, mnp, "min_num_params must be >= 1");
	return 0;
}

/* fsdp.falcon_unsupported */
static int
check_fsdp_falcon(struct rule_ctx *rc)
{
	use_parsed(rc);  /* an after-validator */

	if (!doc_text_has_ci(cfg_str(rc, "base_model"), "falcon") ||
	    !cfg_on(rc, "fsdp"))
		return 0;
	return rule_report(rc, cfg_pair(rc, "fsdp"), "Axolotl does not run "
	    "Falcon models with the legacy fsdp list");
}

/* fsdp.final_state_dict_type_toplevel_ignored */
static int
check_fsdp_final_toplevel(struct rule_ctx *rc)
{
	if (!cfg_set(rc, "fsdp_final_state_dict_type"))
		return 0;
	return rule_report(rc, cfg_pair(rc, "fsdp_final_state_dict_type"), "a "
	    "top-level fsdp_final_state_dict_type is never read; set "
	    "fsdp_config.final_state_dict_type");
}

/* fsdp.fp32_norm_classes_ignored */
static int
check_fsdp_fp32_classes(struct rule_ctx *rc)
{
	if (!cfg_set(rc, "fp32_norm_classes") || cfg_on(rc, "fp32_norms"))
		return 0;
	return rule_report(rc, cfg_pair(rc, "fp32_norm_classes"),
	    "fp32_norm_classes does nothing without fp32_norms: true");
}

/* fsdp.fp32_norms_requires_fsdp2 */
static int
check_fsdp_fp32_norms_v2(struct rule_ctx *rc)
{
	use_parsed(rc);  /* an after-validator */

	if (!cfg_on(rc, "fp32_norms") || !cfg_set(rc, "fsdp_config") ||
	    fsdp_version(rc) == 2)
		return 0;
	return rule_report(rc, cfg_pair(rc, "fp32_norms"),
	    "fp32_norms needs fsdp_version: 2");
}

/* fsdp.fp32_norms_requires_fsdp_config */
static int
check_fsdp_fp32_norms_config(struct rule_ctx *rc)
{
	use_parsed(rc);  /* an after-validator */

	if (!cfg_on(rc, "fp32_norms") || cfg_set(rc, "fsdp_config"))
		return 0;
	return rule_report(rc, cfg_pair(rc, "fp32_norms"),
	    "fp32_norms needs fsdp_config (FSDP2)");
}

/* fsdp.fsdp2_quantized_preference_rl */
static int
check_fsdp_fsdp2_quant_rl(struct rule_ctx *rc)
{
	const char *rl = cfg_str(rc, "rl");
	const struct doc_node *v = fsdp_version_node(rc);
	double n;

	/* OptimizationValidationMixin.check_fsdp2_base_model_quant_rl runs
	   after the version inside fsdp_config is copied to the top, and
	   compares it with == 2 (so "2" does not count, 2.0 does). */
	if (!node_num(v, &n) || n != 2.0 || v->kind == DOC_BOOL || rl == NULL ||
	    !(strcmp(rl, "dpo") == 0 || strcmp(rl, "kto") == 0 ||
	    strcmp(rl, "orpo") == 0 || strcmp(rl, "ipo") == 0) ||
	    !(cfg_on(rc, "load_in_8bit") || cfg_on(rc, "load_in_4bit")))
		return 0;
	return rule_report(rc, cfg_pair(rc, "rl"), "rl: %s with a quantized "
	    "model does not work under FSDP2", rl);
}

/* fsdp.fsdp2_torch_version */
static int
check_fsdp_fsdp2_torch(struct rule_ctx *rc)
{
	/* AxolotlConfigWCapabilities.check_fsdp_torch_version runs first of
	   all: the top-level fsdp_version as written, str() == "2". */
	const struct doc_pair *v = raw_pair(rc, "fsdp_version");

	if (!cfg_on(rc, "fsdp_config") || v == NULL ||
	    !node_str_is_2(v->value) || rc->ctx->torch >= 2070)
		return 0;
	return rule_report(rc, cfg_pair(rc, "fsdp_version"), "FSDP2 needs "
	    "torch 2.7 or newer");
}

/* fsdp.gpt_oss_mxfp4_ram_loading */
static int
check_fsdp_mxfp4_ram(struct rule_ctx *rc)
{
	const struct doc_pair *p = fsdp_pair(rc, "cpu_ram_efficient_loading");

	if (!cfg_is(rc, "model_quantization_config", "Mxfp4Config") ||
	    p == NULL || p->value->kind != DOC_BOOL || !p->value->b)
		return 0;
	return rule_report(rc, p, "cpu_ram_efficient_loading does not work "
	    "with model_quantization_config: Mxfp4Config");
}

/* fsdp.legacy_list_deprecated */
static int
check_fsdp_legacy_list(struct rule_ctx *rc)
{
	if (!cfg_set(rc, "fsdp"))
		return 0;
	return rule_report(rc, cfg_pair(rc, "fsdp"), "the fsdp list is deprecated; "
	    "use fsdp_version and fsdp_config");
}

/* fsdp.legacy_list_type */
static int
check_fsdp_legacy_type(struct rule_ctx *rc)
{
	const struct doc_pair *p = cfg_pair(rc, "fsdp");
	size_t i;

	if (p == NULL || p->value->kind == DOC_NULL)
		return 0;
	if (p->value->kind == DOC_SEQ) {
		for (i = 0; i < p->value->n; i++)
			if (p->value->items[i]->kind != DOC_STR)
				break;
		if (i == p->value->n)
			return 0;
	}
	return rule_report(rc, p, "fsdp must be a list of words, e.g. "
	    "[full_shard, auto_wrap]");
}

/* fsdp.legacy_list_without_fsdp_config */
static int
check_fsdp_legacy_no_config(struct rule_ctx *rc)
{
	if (!cfg_on(rc, "fsdp") || cfg_set(rc, "fsdp_config"))
		return 0;
	return rule_report(rc, cfg_pair(rc, "fsdp"), "the fsdp list without "
	    "fsdp_config fails at launch");
}

/* fsdp.offload_with_cp_torchao_optimizer */
static int
check_fsdp_offload_cp_ao(struct rule_ctx *rc)
{
	const struct doc_pair *off = fsdp_pair(rc, "offload_params");
	const char *o = cfg_str(rc, "optimizer");

	if (off == NULL || !doc_truthy(off->value) || cp_of(rc) <= 1 ||
	    o == NULL || strncmp(o, "adamw_torch_", 12) != 0 ||
	    strstr(o, "bit") == NULL)
		return 0;
	return rule_report(rc, cfg_pair(rc, "optimizer"), "param offload with "
	    "context parallelism and a torchao low-bit optimizer is known to "
	    "fail");
}

/* fsdp.pin_memory_off_requires_fsdp2 */
static int
check_fsdp_pin_fsdp2(struct rule_ctx *rc)
{
	const struct doc_pair *p = fsdp_pair(rc, "cpu_offload_pin_memory");

	/* check_fsdp2_cpu_offload_pin_memory: str(fsdp_version) != "2",
	   after the copy from fsdp_config. */
	if (!cfg_on(rc, "fsdp_config") || p == NULL ||
	    p->value->kind != DOC_BOOL || p->value->b ||
	    node_str_is_2(fsdp_version_node(rc)))
		return 0;
	return rule_report(rc, p, "cpu_offload_pin_memory: false needs "
	    "fsdp_version: 2");
}

/* fsdp.pin_memory_off_requires_offload */
static int
check_fsdp_pin_offload(struct rule_ctx *rc)
{
	const struct doc_pair *p = fsdp_pair(rc, "cpu_offload_pin_memory");
	const struct doc_pair *off = fsdp_pair(rc, "offload_params");

	if (!cfg_on(rc, "fsdp_config") || p == NULL ||
	    p->value->kind != DOC_BOOL || p->value->b ||
	    (off != NULL && doc_truthy(off->value)))
		return 0;
	return rule_report(rc, p, "cpu_offload_pin_memory: false needs "
	    "offload_params: true");
}

/* fsdp.relora_unsupported */
static int
check_fsdp_relora(struct rule_ctx *rc)
{
	use_parsed(rc);  /* an after-validator */

	/* Truthiness of the parsed values: an empty fsdp_config is an
	   FSDPConfig (true in the parsed view), an empty list is not. */
	if (!cfg_on(rc, "relora") || !(cfg_on(rc, "fsdp") ||
	    cfg_on(rc, "fsdp_config") || cfg_on(rc, "deepspeed")))
		return 0;
	return rule_report(rc, cfg_pair(rc, "relora"), "relora does not work "
	    "with FSDP or DeepSpeed");
}

/* fsdp.sharded_final_save */
static int
check_fsdp_sharded_save(struct rule_ctx *rc)
{
	const struct doc_pair *f = fsdp_pair(rc, "final_state_dict_type");

	if (f == NULL)
		f = fsdp_pair(rc, "state_dict_type");
	if (!fsdp_on(rc) || f == NULL || f->value->kind != DOC_STR ||
	    strcmp(f->value->text, "SHARDED_STATE_DICT") != 0)
		return 0;
	return rule_report(rc, f, "the final save is sharded; Axolotl "
	    "merges the shards afterwards");
}

/* fsdp.size_wrap_needs_min_num_params */
static int
check_fsdp_size_wrap(struct rule_ctx *rc)
{
	const struct doc_pair *wrap = fsdp_pair(rc, "auto_wrap_policy");
	const struct doc_pair *mnp = fsdp_pair(rc, "min_num_params");

	if (wrap == NULL || wrap->value->kind != DOC_STR ||
	    strcmp(wrap->value->text, "SIZE_BASED_WRAP") != 0 ||
	    (mnp != NULL && mnp->value->kind != DOC_NULL))
		return 0;
	return rule_report(rc, wrap, "auto_wrap_policy: SIZE_BASED_WRAP "
	    "needs fsdp_config.min_num_params");
}

/* fsdp.unknown_fsdp_config_key */
static int
check_fsdp_unknown_key(struct rule_ctx *rc)
{
	const struct doc_pair *f = cfg_pair(rc, "fsdp_config");
	size_t i, k;
	int rv;

	if (f == NULL || f->value->kind != DOC_MAP)
		return 0;
	for (i = 0; i < f->value->n; i++) {
		const struct doc_pair *p = &f->value->pairs[i];
		const char *key = p->key->text;
		bool known = false;

		if (p->key->kind != DOC_STR)
			continue;
		if (strncmp(key, "fsdp_", 5) == 0 &&
		    strcmp(key, "fsdp_version") != 0)
			key += 5;
		for (k = 0; k < sizeof(fsdp_keys) / sizeof(fsdp_keys[0]); k++)
			if (strcmp(key, fsdp_keys[k]) == 0)
				known = true;
		if (known)
			continue;
		rv = rule_report(rc, p, "fsdp_config.%.60s is not an FSDP "
		    "setting Axolotl knows; it is dropped%s", key,
		    strcmp(key, "sharding_strategy") == 0 ? " (FSDP2: use "
		    "reshard_after_forward)" : "");
		if (rv != 0)
			return rv;
	}
	return 0;
}

/* fsdp.v1_deprecated */
static int
check_fsdp_v1(struct rule_ctx *rc)
{
	if (!cfg_on(rc, "fsdp_config") || fsdp_version(rc) == 2)
		return 0;
	return rule_report(rc, cfg_pair(rc, "fsdp_config"), "FSDP1 is deprecated; "
	    "set fsdp_version: 2");
}

/* fsdp.version_conflict */
static int
check_fsdp_version_conflict(struct rule_ctx *rc)
{
	const struct doc_pair *top = cfg_pair(rc, "fsdp_version");
	const struct doc_pair *in = fsdp_pair(rc, "version");
	long long a, b;

	if (in == NULL)
		in = fsdp_pair(rc, "fsdp_version");
	if (top == NULL || in == NULL || !node_version(top->value, &a) ||
	    !node_version(in->value, &b) || a == b)
		return 0;
	return rule_report(rc, top, "fsdp_version is %lld at the top and %lld "
	    "in fsdp_config; Axolotl uses the top one", a, b);
}

/* fsdp.version_default_pinned */
static int
check_fsdp_version_pinned(struct rule_ctx *rc)
{
	if (!cfg_on(rc, "fsdp_config") || cfg_set(rc, "fsdp_version") ||
	    fsdp_pair(rc, "version") != NULL)
		return 0;
	return rule_report(rc, cfg_pair(rc, "fsdp_config"), "no fsdp_version: "
	    "Axolotl pins FSDP1");
}

/* fsdp.version_in_fsdp_config */
static int
check_fsdp_version_nested(struct rule_ctx *rc)
{
	const struct doc_pair *in = cfg_sub(rc, "fsdp_config", "version");

	if (in == NULL)
		in = cfg_sub(rc, "fsdp_config", "fsdp_version");
	if (in == NULL || cfg_set(rc, "fsdp_version"))
		return 0;
	return rule_report(rc, in, "fsdp_version inside fsdp_config is copied "
	    "to the top level");
}

/* fsdp.version_only_nested */
static int
check_fsdp_version_only_nested(struct rule_ctx *rc)
{
	if (cfg_set(rc, "fsdp_version") || fsdp_version(rc) != 2 ||
	    !cfg_on(rc, "fsdp_config"))
		return 0;
	return rule_report(rc, cfg_pair(rc, "fsdp_config"), "FSDP2 is declared only "
	    "inside fsdp_config; some checks read the top-level "
	    "fsdp_version, so write it there");
}

/* fsdp.version_values: the version accelerate's FSDP plugin gets: the
   top-level fsdp_version once the one in fsdp_config is copied there. */
static int
check_fsdp_version_values(struct rule_ctx *rc)
{
	const struct doc_node *v = fsdp_version_node(rc);
	const struct doc_pair *ps[3];
	long long n;
	size_t i;

	if (v == NULL || v->kind == DOC_NULL || (node_version(v, &n) &&
	    (n == 1 || n == 2)))
		return 0;
	ps[0] = cfg_pair(rc, "fsdp_version");
	ps[1] = fsdp_pair(rc, "version");
	ps[2] = fsdp_pair(rc, "fsdp_version");
	for (i = 0; i < 3; i++)
		if (ps[i] != NULL && ps[i]->value == v)
			return rule_report(rc, ps[i], "fsdp_version must be 1 or "
			    "2, got %.40s", v->text != NULL ? v->text :
			    "a collection");
	return 0;
}

const struct rule_row rules_fsdp[] = {
	{ "fsdp.deepspeed_exclusive_legacy", SEV_ERROR,
	  "deepspeed and the legacy fsdp list together",
	  "keep one sharding strategy",
	  check_fsdp_deepspeed_legacy },
	{ "fsdp.deepspeed_with_fsdp_config", SEV_ERROR,
	  "deepspeed and fsdp_config together",
	  "keep one sharding strategy",
	  check_fsdp_deepspeed_config },
	{ "fsdp.empty_config", SEV_WARNING,
	  "an empty fsdp_config",
	  "fill fsdp_config, or remove it",
	  check_fsdp_empty },
	{ "fsdp.enum_values", SEV_ERROR,
	  "an FSDP setting outside its allowed values",
	  "use the documented FSDP values",
	  check_fsdp_enum_values },
	{ "fsdp.falcon_unsupported", SEV_ERROR,
	  "Falcon with the legacy fsdp list",
	  "use fsdp_config (FSDP2) instead of the fsdp list",
	  check_fsdp_falcon },
	{ "fsdp.final_state_dict_type_toplevel_ignored", SEV_WARNING,
	  "a top-level fsdp_final_state_dict_type",
	  "move it to fsdp_config.final_state_dict_type",
	  check_fsdp_final_toplevel },
	{ "fsdp.fp32_norm_classes_ignored", SEV_WARNING,
	  "fp32_norm_classes without fp32_norms",
	  "set fp32_norms: true",
	  check_fsdp_fp32_classes },
	{ "fsdp.fp32_norms_requires_fsdp2", SEV_ERROR,
	  "fp32_norms without FSDP2",
	  "set fsdp_version: 2",
	  check_fsdp_fp32_norms_v2 },
	{ "fsdp.fp32_norms_requires_fsdp_config", SEV_ERROR,
	  "fp32_norms without fsdp_config",
	  "add fsdp_config with fsdp_version: 2",
	  check_fsdp_fp32_norms_config },
	{ "fsdp.fsdp2_quantized_preference_rl", SEV_ERROR,
	  "quantized preference RL under FSDP2",
	  "drop load_in_4bit/8bit or FSDP2",
	  check_fsdp_fsdp2_quant_rl },
	{ "fsdp.fsdp2_torch_version", SEV_ERROR,
	  "FSDP2 on torch older than 2.7",
	  "upgrade torch, or use fsdp_version: 1",
	  check_fsdp_fsdp2_torch },
	{ "fsdp.gpt_oss_mxfp4_ram_loading", SEV_ERROR,
	  "Mxfp4 with cpu_ram_efficient_loading",
	  "set cpu_ram_efficient_loading: false",
	  check_fsdp_mxfp4_ram },
	{ "fsdp.legacy_list_deprecated", SEV_WARNING,
	  "the legacy fsdp list",
	  "use fsdp_version and fsdp_config",
	  check_fsdp_legacy_list },
	{ "fsdp.legacy_list_type", SEV_ERROR,
	  "fsdp that is not a list of words",
	  "write fsdp: [full_shard, auto_wrap]",
	  check_fsdp_legacy_type },
	{ "fsdp.legacy_list_without_fsdp_config", SEV_ERROR,
	  "the fsdp list without fsdp_config",
	  "add fsdp_config, or drop the fsdp list",
	  check_fsdp_legacy_no_config },
	{ "fsdp.offload_with_cp_torchao_optimizer", SEV_WARNING,
	  "param offload with context parallelism and a torchao low-bit optimizer",
	  "drop offload_params or use another optimizer",
	  check_fsdp_offload_cp_ao },
	{ "fsdp.pin_memory_off_requires_fsdp2", SEV_ERROR,
	  "cpu_offload_pin_memory: false without FSDP2",
	  "set fsdp_version: 2",
	  check_fsdp_pin_fsdp2 },
	{ "fsdp.pin_memory_off_requires_offload", SEV_ERROR,
	  "cpu_offload_pin_memory: false without param offload",
	  "set offload_params: true",
	  check_fsdp_pin_offload },
	{ "fsdp.prefixed_keys_renamed", SEV_WARNING,
	  "fsdp_config keys with the old fsdp_ prefix",
	  "drop the fsdp_ prefix",
	  check_fsdp_prefixed },
	{ "fsdp.relora_unsupported", SEV_ERROR,
	  "ReLoRA with FSDP or DeepSpeed",
	  "drop relora or the sharding",
	  check_fsdp_relora },
	{ "fsdp.sharded_final_save", SEV_INFO,
	  "the final save is sharded",
	  "set final_state_dict_type: FULL_STATE_DICT for one file",
	  check_fsdp_sharded_save },
	{ "fsdp.size_wrap_needs_min_num_params", SEV_ERROR,
	  "SIZE_BASED_WRAP without min_num_params",
	  "set fsdp_config.min_num_params",
	  check_fsdp_size_wrap },
	{ "fsdp.unknown_fsdp_config_key", SEV_WARNING,
	  "an fsdp_config key Axolotl does not know",
	  "fix the key, or remove it (FSDP2: reshard_after_forward)",
	  check_fsdp_unknown_key },
	{ "fsdp.v1_deprecated", SEV_WARNING,
	  "FSDP1 is deprecated",
	  "set fsdp_version: 2",
	  check_fsdp_v1 },
	{ "fsdp.version_conflict", SEV_WARNING,
	  "two different fsdp_version values",
	  "write fsdp_version once, at the top level",
	  check_fsdp_version_conflict },
	{ "fsdp.version_default_pinned", SEV_INFO,
	  "no fsdp_version: FSDP1 is pinned",
	  "set fsdp_version: 2 (or 1) explicitly",
	  check_fsdp_version_pinned },
	{ "fsdp.version_in_fsdp_config", SEV_INFO,
	  "fsdp_version inside fsdp_config is moved up",
	  "write fsdp_version at the top level",
	  check_fsdp_version_nested },
	{ "fsdp.version_only_nested", SEV_WARNING,
	  "FSDP2 declared only inside fsdp_config",
	  "write fsdp_version: 2 at the top level",
	  check_fsdp_version_only_nested },
	{ "fsdp.version_values", SEV_ERROR,
	  "an fsdp_version other than 1 or 2",
	  "set fsdp_version: 1 or 2",
	  check_fsdp_version_values },
};
const size_t rules_fsdp_len =
    sizeof(rules_fsdp) / sizeof(rules_fsdp[0]);
