/*
 * core/rules/quant: quantization: load_in_4bit/8bit, QLoRA, QAT,
 * quantization configs.  Pure: a rule reads the config through its struct
 * rule_ctx and reports (docs/rules-howto.md).
 */
#include "core/rules_int.h"

#include "core/models.h"
#include "core/plan.h"

/* quant.fsdp_qlora_model_types */
static int
check_quant_fsdp_qlora_types(struct rule_ctx *rc)
{
	const struct model_def *m = model_of(rc);

	if (!fsdp_on(rc) || !cfg_is(rc, "adapter", "qlora") || m == NULL ||
	    m->model_type == NULL || strcmp(m->model_type, "llama") == 0 ||
	    strcmp(m->model_type, "mistral") == 0 ||
	    strcmp(m->model_type, "mixtral") == 0)
		return 0;
	return rule_report(rc, cfg_pair(rc, "adapter"), "FSDP QLoRA is documented "
	    "for llama, mistral and mixtral; %s is %s", m->hf_id,
	    m->model_type);
}

/* quant.fsdp_qlora_quant_storage */
static int
check_quant_fsdp_storage(struct rule_ctx *rc)
{
	const struct doc_pair *qs = cfg_sub(rc, "bnb_config_kwargs",
	    "bnb_4bit_quant_storage");
	const char *prec = rc->plan->precision;

	if (!fsdp_on(rc) || !cfg_is(rc, "adapter", "qlora"))
		return 0;
	if (qs != NULL && qs->value->kind == DOC_STR &&
	    strstr(qs->value->text, strcmp(prec, "fp16") == 0 ? "float16" :
	    "bfloat16") == NULL)
		return rule_report(rc, qs, "FSDP needs the QLoRA storage dtype "
		    "(%.40s) to match the training dtype (%s)", qs->value->text,
		    prec);
	if (qs == NULL && strcmp(prec, "fp16") == 0)
		return rule_report(rc, cfg_pair(rc, "adapter"), "FSDP QLoRA stores "
		    "4-bit weights as bfloat16 but this run is fp16; set "
		    "bnb_config_kwargs.bnb_4bit_quant_storage: float16");
	return 0;
}

/* quant.kbit_requires_adapter */
static int
check_quant_kbit_adapter(struct rule_ctx *rc)
{
	const char *k = cfg_on(rc, "load_in_4bit") ? "load_in_4bit" :
	    cfg_on(rc, "load_in_8bit") ? "load_in_8bit" : NULL;

	if (k == NULL || cfg_on(rc, "adapter") || cfg_on(rc, "inference"))
		return 0;
	return rule_report(rc, cfg_pair(rc, k), "%s without an adapter: "
	    "Axolotl does not fully fine-tune a quantized model", k);
}

/* quant.model_quant_config_vs_bnb */
static int
check_quant_config_vs_bnb(struct rule_ctx *rc)
{
	if (!cfg_on(rc, "model_quantization_config") ||
	    !(cfg_on(rc, "load_in_8bit") || cfg_on(rc, "load_in_4bit")))
		return 0;
	return rule_report(rc, cfg_pair(rc, "model_quantization_config"),
	    "model_quantization_config and load_in_4bit/load_in_8bit "
	    "quantize twice; pick one");
}

/* quant.qat_conflicts */
static int
check_quant_qat_conflicts(struct rule_ctx *rc)
{
	if (!cfg_on(rc, "qat"))
		return 0;
	if (cfg_on(rc, "peft") || cfg_on(rc, "load_in_8bit") ||
	    cfg_on(rc, "load_in_4bit"))
		return rule_report(rc, cfg_pair(rc, "qat"), "qat does not work "
		    "with peft or load_in_4bit/load_in_8bit");
	return 0;
}

/* quant.qat_torch_version: the last of check_qat_config's refusals. */
static int
check_quant_qat_torch(struct rule_ctx *rc)
{
	if (!cfg_on(rc, "qat") || cfg_on(rc, "peft") ||
	    cfg_on(rc, "load_in_8bit") || cfg_on(rc, "load_in_4bit") ||
	    rc->ctx->torch >= 2060)
		return 0;
	return rule_report(rc, cfg_pair(rc, "qat"), "QAT needs torch 2.6 or "
	    "newer");
}

/* quant.qat_dtype_values */
static int
check_quant_qat_dtype(struct rule_ctx *rc)
{
	static const char *const ok[] = { "int4", "int8", "float8_e4m3fn",
	    "fp8", "float8", "nvfp4", "mxfp4" };
	static const char *const owners[] = { "qat", "quantization" };
	static const char *const keys[] = { "weight_dtype",
	    "activation_dtype" };
	size_t o, k, i;

	for (o = 0; o < 2; o++)
		for (k = 0; k < 2; k++) {
			const struct doc_pair *p = cfg_sub(rc, owners[o], keys[k]);
			bool good = false;

			if (p == NULL || p->value->kind == DOC_NULL)
				continue;
			for (i = 0; i < sizeof(ok) / sizeof(ok[0]) &&
			    p->value->kind == DOC_STR; i++)
				if (strcmp(p->value->text, ok[i]) == 0)
					good = true;
			if (!good)
				return rule_report(rc, p, "%s.%s must be one "
				    "of int4, int8, float8_e4m3fn, fp8, float8, "
				    "nvfp4, mxfp4", owners[o], keys[k]);
		}
	return 0;
}

/* quant.qlora_requires_4bit */
static int
check_quant_qlora_4bit(struct rule_ctx *rc)
{
	const char *ad;
	bool b8, gptq, b4;

	use_parsed(rc);  /* an after-validator */
	ad = cfg_str(rc, "adapter");
	b8 = cfg_on(rc, "load_in_8bit");
	gptq = cfg_on(rc, "gptq");
	b4 = cfg_on(rc, "load_in_4bit");

	if (ad == NULL || strcmp(ad, "qlora") != 0)
		return 0;
	if (cfg_on(rc, "merge_lora")) {
		if (b8 || gptq || b4)
			return rule_report(rc, cfg_pair(rc, "adapter"),
			    "merging a QLoRA adapter (merge_lora) needs the "
			    "base model unquantized: unset load_in_4bit, "
			    "load_in_8bit and gptq");
		return 0;
	}
	if (b8 || gptq || !b4)
		return rule_report(rc, cfg_pair(rc, "adapter"),
		    "adapter: qlora needs load_in_4bit: true%s",
		    b8 ? " and not load_in_8bit" : gptq ? " and not gptq" :
		    "");
	return 0;
}

/* quant.qlora_sharded_loading_inert */
static int
check_quant_sharded_loading(struct rule_ctx *rc)
{
	const struct doc_pair *cr = fsdp_pair(rc, "cpu_ram_efficient_loading");

	if (!cfg_true(rc, "qlora_sharded_model_loading") ||
	    (fsdp_on(rc) && cfg_is(rc, "adapter", "qlora") && cr != NULL &&
	    doc_truthy(cr->value)))
		return 0;
	return rule_report(rc, cfg_pair(rc, "qlora_sharded_model_loading"),
	    "qlora_sharded_model_loading does nothing without FSDP, QLoRA and "
	    "cpu_ram_efficient_loading");
}

/* quant.qlora_zero3_non_reentrant */
static int
check_quant_qlora_zero3(struct rule_ctx *rc)
{
	const struct doc_pair *ur = cfg_sub(rc, "gradient_checkpointing_kwargs",
	    "use_reentrant");
	const char *ds = cfg_str(rc, "deepspeed");

	if (!cfg_is(rc, "adapter", "qlora") || ur == NULL ||
	    ur->value->kind != DOC_BOOL || ur->value->b || ds == NULL ||
	    strstr(ds, "zero3") == NULL)
		return 0;
	return rule_report(rc, cfg_pair(rc, "gradient_checkpointing_kwargs"),
	    "QLoRA with ZeRO-3 and use_reentrant: false is known to fail in "
	    "the backward pass");
}

const struct rule_row rules_quant[] = {
	{ "quant.fsdp_qlora_model_types", SEV_WARNING,
	  "FSDP QLoRA on an undocumented architecture",
	  "test at small scale first",
	  check_quant_fsdp_qlora_types },
	{ "quant.fsdp_qlora_quant_storage", SEV_WARNING,
	  "FSDP QLoRA storage dtype differs from the training dtype",
	  "set bnb_4bit_quant_storage to the training dtype",
	  check_quant_fsdp_storage },
	{ "quant.kbit_requires_adapter", SEV_ERROR,
	  "a quantized model without an adapter",
	  "set adapter: qlora (4-bit) or lora (8-bit)",
	  check_quant_kbit_adapter },
	{ "quant.model_quant_config_vs_bnb", SEV_ERROR,
	  "model_quantization_config with bitsandbytes loading",
	  "keep one quantization",
	  check_quant_config_vs_bnb },
	{ "quant.qat_conflicts", SEV_ERROR,
	  "QAT with peft or bitsandbytes loading",
	  "drop peft / load_in_4bit / load_in_8bit",
	  check_quant_qat_conflicts },
	{ "quant.qat_dtype_values", SEV_ERROR,
	  "a QAT dtype Axolotl does not know",
	  "use int4, int8, float8_e4m3fn, fp8, float8, nvfp4 or mxfp4",
	  check_quant_qat_dtype },
	{ "quant.qat_torch_version", SEV_ERROR,
	  "QAT on torch older than 2.6",
	  "upgrade torch to 2.6 or newer",
	  check_quant_qat_torch },
	{ "quant.qlora_requires_4bit", SEV_ERROR,
	  "QLoRA with the wrong quantization",
	  "set load_in_4bit: true and unset load_in_8bit and gptq",
	  check_quant_qlora_4bit },
	{ "quant.qlora_sharded_loading_inert", SEV_WARNING,
	  "qlora_sharded_model_loading without its prerequisites",
	  "use it with FSDP, QLoRA and cpu_ram_efficient_loading",
	  check_quant_sharded_loading },
	{ "quant.qlora_zero3_non_reentrant", SEV_WARNING,
	  "QLoRA under ZeRO-3 with non-reentrant checkpointing",
	  "set use_reentrant: true",
	  check_quant_qlora_zero3 },
};
const size_t rules_quant_len =
    sizeof(rules_quant) / sizeof(rules_quant[0]);
