/*
 * core/checks: rules over the raw config, one function each, registered
 * in the table in core/rules.c.  Conditions are rules.md's, which cites
 * the Axolotl source of each.  No I/O; a rule only reads and reports.
 */
#include "checks.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "arena.h"
#include "plan.h"
#include "rules_int.h"

/* ---- helpers -------------------------------------------------------- */

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

const struct doc_pair *
first_of_sizes(const struct rule_ctx *rc)
{
	static const char *const keys[] = { "dp_shard_size",
	    "dp_replicate_size", "tensor_parallel_size",
	    "context_parallel_size", "expert_parallel_size" };
	size_t i;

	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (cfg_pair(rc, keys[i]) != NULL)
			return cfg_pair(rc, keys[i]);
	return NULL;
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

const struct doc_pair *
fsdp_pair(const struct rule_ctx *rc, const char *key)
{
	return plan_fsdp_get(rc->root, key);
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

static bool
uses_flash_lib(const char *backend)
{
	return backend != NULL && (strcmp(backend, "flash_attention_2") == 0 ||
	    strcmp(backend, "flash_attention_3") == 0 ||
	    strcmp(backend, "kernels-community/flash-attn2") == 0 ||
	    strcmp(backend, "kernels-community/flash-attn3") == 0);
}

/* ---- rules ---------------------------------------------------------- */

/* attn.legacy_flag_with_attn_implementation */
int
check_attn_legacy_with_impl(struct rule_ctx *rc)
{
	static const char *const flags[] = { "xformers_attention",
	    "sage_attention", "flex_attention", "flash_attention",
	    "sdp_attention", "eager_attention" };
	size_t i;
	int rv;

	if (cfg_str(rc, "attn_implementation") == NULL)
		return 0;
	for (i = 0; i < sizeof(flags) / sizeof(flags[0]); i++)
		if (cfg_on(rc, flags[i])) {
			rv = rule_report(rc, cfg_pair(rc, flags[i]),
			    "%s is a legacy flag and attn_implementation is "
			    "set too; Axolotl refuses the mix", flags[i]);
			if (rv != 0)
				return rv;
		}
	return 0;
}

/* batch.gas_and_batch_size_both_set */
int
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

/* batch.two_of_three_required */
int
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

/* cp.packing_requires_mbs_one */
int
check_cp_packing_mbs(struct rule_ctx *rc)
{
	long long cp = cfg_int(rc, "context_parallel_size", 1);
	long long mbs = cfg_int(rc, "micro_batch_size", 1);

	if (cp <= 1 || cfg_on(rc, "use_glm_dsa_kernels") ||
	    !cfg_on(rc, "sample_packing") || mbs <= 1)
		return 0;
	return rule_report(rc, cfg_pair(rc, "micro_batch_size"),
	    "context_parallel_size (%lld) with sample_packing needs "
	    "micro_batch_size 1, got %lld", cp, mbs);
}

/* cp.requires_flash_attention */
int
check_cp_requires_flash(struct rule_ctx *rc)
{
	long long cp = cfg_int(rc, "context_parallel_size", 1);
	const char *be = attn_backend(rc);
	const struct doc_pair *at = cfg_pair(rc, "attn_implementation");

	if (cp <= 1 || cfg_on(rc, "use_glm_dsa_kernels") ||
	    uses_flash_lib(be))
		return 0;
	return rule_report(rc, at != NULL ? at :
	    cfg_pair(rc, "context_parallel_size"),
	    "context_parallel_size (%lld) needs flash attention, but the "
	    "attention backend is %s", cp, be != NULL ? be : "not set");
}

/* fsdp.deepspeed_exclusive_legacy */
int
check_fsdp_deepspeed_legacy(struct rule_ctx *rc)
{
	if (!cfg_on(rc, "deepspeed") || !cfg_on(rc, "fsdp"))
		return 0;
	return rule_report(rc, cfg_pair(rc, "fsdp"),
	    "deepspeed and fsdp are both set; Axolotl refuses two sharding "
	    "strategies");
}

/* gc.activation_offloading_requires_gc */
int
check_gc_offload_requires_gc(struct rule_ctx *rc)
{
	if (!cfg_on(rc, "activation_offloading") ||
	    cfg_on(rc, "gradient_checkpointing"))
		return 0;
	return rule_report(rc, cfg_pair(rc, "activation_offloading"),
	    "activation_offloading needs gradient_checkpointing, which is "
	    "off");
}

/* lora_kernels.lora_8bit */
int
check_lora_kernels_8bit(struct rule_ctx *rc)
{
	static const char *const k[] = { "lora_mlp_kernel", "lora_qkv_kernel",
	    "lora_o_kernel" };
	const char *ad = cfg_str(rc, "adapter");
	size_t i;

	if (ad == NULL || strcmp(ad, "lora") != 0 ||
	    !cfg_on(rc, "load_in_8bit"))
		return 0;
	for (i = 0; i < 3; i++)
		if (cfg_on(rc, k[i]))
			return rule_report(rc, cfg_pair(rc, k[i]),
			    "%s does not work with an 8-bit LoRA "
			    "(load_in_8bit); Axolotl refuses it", k[i]);
	return 0;
}

/* optim.fsdp1_offload_8bit */
int
check_optim_fsdp1_offload_8bit(struct rule_ctx *rc)
{
	const char *opt = cfg_str(rc, "optimizer");
	const struct doc_pair *off = fsdp_pair(rc, "offload_params");

	if (!cfg_on(rc, "fsdp_config") || opt == NULL ||
	    strstr(opt, "8bit") == NULL || off == NULL ||
	    !doc_truthy(off->value) || fsdp_version(rc) == 2)
		return 0;
	return rule_report(rc, cfg_pair(rc, "optimizer"),
	    "optimizer %s with FSDP1 param offload (offload_params) is "
	    "refused", opt);
}

/* optim.muon_sharding */
int
check_optim_muon_sharding(struct rule_ctx *rc)
{
	const char *opt = cfg_str(rc, "optimizer");
	int v;

	if (opt == NULL || strcmp(opt, "muon") != 0)
		return 0;
	if (cfg_on(rc, "deepspeed"))
		return rule_report(rc, cfg_pair(rc, "optimizer"),
		    "optimizer muon does not work with DeepSpeed");
	v = cfg_on(rc, "fsdp_config") ? fsdp_version(rc) : 0;
	if (v != 0 && v != 2)
		return rule_report(rc, cfg_pair(rc, "optimizer"),
		    "optimizer muon needs FSDP2, this is FSDP%d", v);
	return 0;
}

/* packing.kto_incompatible */
int
check_packing_kto(struct rule_ctx *rc)
{
	const char *rl = cfg_str(rc, "rl");
	const struct doc_pair *ruc = cfg_pair(rc, "remove_unused_columns");

	if (rl == NULL || strcmp(rl, "kto") != 0)
		return 0;
	if (cfg_on(rc, "sample_packing") || cfg_on(rc, "eval_sample_packing"))
		return rule_report(rc, cfg_pair(rc, cfg_on(rc,
		    "sample_packing") ? "sample_packing" :
		    "eval_sample_packing"), "rl: kto does not work with "
		    "sample packing");
	if (ruc == NULL || doc_truthy(ruc->value))
		return rule_report(rc, ruc != NULL ? ruc : cfg_pair(rc, "rl"),
		    "rl: kto needs remove_unused_columns: false");
	return 0;
}

/* packing.rl_incompatible */
int
check_packing_rl(struct rule_ctx *rc)
{
	const struct doc_pair *rl = cfg_pair(rc, "rl");

	if (rl == NULL || rl->value->kind == DOC_NULL ||
	    !cfg_on(rc, "sample_packing"))
		return 0;
	if (rl->value->kind == DOC_BOOL && !rl->value->b)
		return 0;
	return rule_report(rc, cfg_pair(rc, "sample_packing"),
	    "sample_packing does not work with rl: %s",
	    rl->value->text != NULL ? rl->value->text : "set");
}

/* quant.kbit_requires_adapter */
int
check_quant_kbit_adapter(struct rule_ctx *rc)
{
	const char *k = cfg_on(rc, "load_in_4bit") ? "load_in_4bit" :
	    cfg_on(rc, "load_in_8bit") ? "load_in_8bit" : NULL;

	if (k == NULL || cfg_on(rc, "adapter") || cfg_on(rc, "inference"))
		return 0;
	return rule_report(rc, cfg_pair(rc, k), "%s without an adapter: "
	    "Axolotl does not fully fine-tune a quantized model", k);
}

/* quant.qlora_requires_4bit */
int
check_quant_qlora_4bit(struct rule_ctx *rc)
{
	const char *ad = cfg_str(rc, "adapter");
	bool b8 = cfg_on(rc, "load_in_8bit"), gptq = cfg_on(rc, "gptq");
	bool b4 = cfg_on(rc, "load_in_4bit");

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
