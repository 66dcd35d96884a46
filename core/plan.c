/*
 * core/plan: Axolotl's derivations (rules.md section 2), in the order
 * Axolotl applies them.  No I/O: an embedded DeepSpeed preset is parsed
 * from memory with core/doc (JSON is YAML); a path that is not a preset is
 * DS_UNREADABLE and the stage is guessed from its name.
 */
#include "plan.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "arena.h"
#include "doc.h"
#include "gpu.h"
#include "report.h"
#include "rules_int.h"
#include "types.h"

const struct ds_preset *
ds_preset_find(const char *path)
{
	size_t i, n = strlen(path);

	for (i = 0; i < ds_presets_len; i++) {
		size_t k = strlen(ds_presets[i].name);

		if (n >= k && strcmp(path + n - k, ds_presets[i].name) == 0 &&
		    (n == k || path[n - k - 1] == '/'))
			return &ds_presets[i];
	}
	return NULL;
}

const struct doc_pair *
plan_fsdp_get(const struct doc_node *root, const char *key)
{
	const struct doc_node *f = doc_map_value(root, "fsdp_config");
	const struct doc_pair *p;
	char prefixed[96];

	if (f == NULL || f->kind != DOC_MAP)
		return NULL;
	p = doc_map_get(f, key);
	if (p != NULL)
		return p;
	snprintf(prefixed, sizeof(prefixed), "fsdp_%s", key);
	return doc_map_get(f, prefixed);
}

static bool
on(const struct doc_node *m, const char *key)
{
	return doc_truthy(doc_map_value(m, key));
}

static long long
clamp31(long long v)
{
	return v > 2147483647LL ? 2147483647LL : v < -2147483647LL ?
	    -2147483647LL : v;
}

static long long
num(const struct doc_node *m, const char *key, long long def)
{
	const struct doc_node *v = doc_map_value(m, key);

	if (v != NULL && v->kind == DOC_INT && !v->big)
		return v->i;
	/* In range first: converting a larger float is undefined. */
	if (v != NULL && v->kind == DOC_FLOAT && v->f >= -9.2e18 &&
	    v->f <= 9.2e18 && v->f == (double)(long long)v->f)
		return (long long)v->f;
	return def;
}

/*
 * A parallel degree (tensor_parallel_size, context_parallel_size,
 * sequence_parallel_degree, expert_parallel_size) as the after-validators
 * and the launch see it, pydantic having parsed it: num(), or a string
 * ty_python_int() reads; else def.  The rules read the degrees from the
 * plan, never from the keys (one source).
 */
static long long
degree(const struct doc_node *m, const char *key, long long def)
{
	const struct doc_node *v = doc_map_value(m, key);
	long long n;

	if (v != NULL && v->kind == DOC_STR &&
	    ty_python_int(v->text, v->len, &n))
		return n;
	return num(m, key, def);
}

static const char *
str(const struct doc_node *m, const char *key)
{
	const struct doc_node *v = doc_map_value(m, key);

	return v != NULL && v->kind == DOC_STR ? v->text : NULL;
}

/* DeepSpeed facts from a config mapping (a preset or inline). */
static void
ds_read(struct plan *p, const struct doc_node *ds)
{
	const struct doc_node *z = doc_map_value(ds, "zero_optimization");
	const struct doc_node *oo = doc_map_value(z, "offload_optimizer");
	const struct doc_node *op = doc_map_value(z, "offload_param");
	const struct doc_node *bf = doc_map_value(doc_map_value(ds, "bf16"),
	    "enabled");
	const struct doc_node *fp = doc_map_value(doc_map_value(ds, "fp16"),
	    "enabled");
	const char *dev;

	p->ds_map = ds;
	p->ds_fp16 = fp != NULL && fp->kind == DOC_BOOL ? fp->b : -1;
	p->zero_stage = (int)num(z, "stage", 0);
	dev = str(oo, "device");
	p->ds_offload_optimizer = dev != NULL && strcmp(dev, "none") != 0;
	dev = str(op, "device");
	p->ds_offload_param = dev != NULL && strcmp(dev, "none") != 0;
	p->ds_bf16 = bf != NULL && bf->kind == DOC_BOOL ? bf->b : -1;
}

/* The embedded presets' documents, parsed once per process. */
static const void *_Atomic preset_docs[DS_PRESETS_MAX];

static int
plan_deepspeed(struct plan *p, const struct doc_node *root,
    const char *ctx_ds, size_t ctx_ds_len, struct arena *a, struct err *e)
{
	const struct doc_node *v = doc_map_value(root, "deepspeed");
	const struct ds_preset *pr;
	struct limits lim;
	struct err de = { 0 };
	const struct doc *shared;
	struct doc *d;

	if (!doc_truthy(v))
		return 0;
	if (v->kind == DOC_MAP) {
		p->ds = DS_INLINE;
		ds_read(p, v);
		return 0;
	}
	if (v->kind != DOC_STR)
		return 0;
	p->ds_name = v->text;
	pr = ds_preset_find(v->text);
	if (pr == NULL && ctx_ds != NULL) {
		/* The caller read the file (--deepspeed-config). */
		limits_default(&lim);
		if (doc_parse(&d, ctx_ds, ctx_ds_len, &lim, a, &de) != 0)
			return de.code == ERR_NOMEM ? err_set(e, ERR_NOMEM,
			    NULL, "%s", de.msg) : err_set(e, ERR_SCHEMA, NULL,
			    "the DeepSpeed config given is not valid JSON");
		p->ds = DS_INLINE;
		ds_read(p, d->root);
		return 0;
	}
	if (pr == NULL) {
		p->ds = DS_UNREADABLE;
		p->zero_stage = strstr(v->text, "zero3") != NULL ? 3 :
		    strstr(v->text, "zero2") != NULL ? 2 :
		    strstr(v->text, "zero1") != NULL ? 1 : 0;
		p->ds_bf16 = -1;
		return 0;
	}
	p->ds = DS_PRESET;
	if ((size_t)(pr - ds_presets) >= DS_PRESETS_MAX)	/* test_estimate */
		return err_set(e, ERR_INTERNAL, NULL, "more DeepSpeed presets "
		    "than DS_PRESETS_MAX");
	/* Parsed once per process; NULL only without memory (every preset
	   parses: test_estimate). */
	shared = doc_parse_shared(&preset_docs[pr - ds_presets], pr->json);
	if (shared == NULL)
		return err_set(e, ERR_NOMEM, NULL, "no memory for the "
		    "DeepSpeed preset %s", pr->name);
	ds_read(p, shared->root);
	return 0;
}

static int
fsdp_version_of(const struct doc_node *root)
{
	const struct doc_node *top = doc_map_value(root, "fsdp_version");
	const struct doc_node *f = doc_map_value(root, "fsdp_config");
	const struct doc_node *n;

	if (top != NULL && top->kind == DOC_INT)
		return (int)top->i;
	if (top != NULL && top->kind == DOC_STR)
		return top->text[0] == '2' ? 2 : 1;
	if (!doc_truthy(f))
		return on(root, "fsdp") ? 1 : 0;
	n = doc_map_value(f, "version");
	if (n == NULL)
		n = doc_map_value(f, "fsdp_version");
	if (n != NULL && n->kind == DOC_INT)
		return (int)n->i;
	return 1;
}

/* Axolotl's mesh builder (rules.md 2.6); error text or NULL. */
static const char *
build_mesh(struct plan *p, const struct doc_node *root, bool fsdp)
{
	long long rem = p->world;
	long long rs = num(root, "dp_replicate_size", 0);
	long long ss = num(root, "dp_shard_size", 0);

	p->dp_replicate = p->dp_shard = 1;
	if (p->ep > 1) {
		if (p->world % p->ep != 0)
			return "expert_parallel_size does not divide the GPUs";
		rem /= p->ep;
	}
	if (p->tp > 1)
		rem /= p->tp;
	if (p->cp > 1)
		rem /= p->cp;
	if (ss <= 0 && rs <= 1 && rem > 1) {
		p->dp_shard = rem;
		rem = 1;
	}
	if (rs > 1) {
		p->dp_replicate = rs;
		rem /= rs;
	}
	if (rem > 1 && ss > 1) {
		if (!fsdp)
			return "dp_shard_size needs FSDP";
		p->dp_shard = ss;
		rem /= ss;
		if (rem > 1 && rs <= 0) {
			p->dp_replicate = rem;
			rem = 1;
		}
	}
	if (rem > 1 && ss <= 0 && fsdp) {
		p->dp_shard = rem;
		rem = 1;
	}
	if (rem > 1)
		return "the parallel sizes leave GPUs unassigned";
	return NULL;
}

bool
plan_py_on(const struct doc_node *m, const char *key)
{
	const struct doc_node *v = doc_map_value(m, key);
	bool b = false;

	if (v == NULL)
		return false;
	if (v->kind == DOC_BOOL)
		return v->b;
	if (v->kind == DOC_INT)
		return v->i == 1;
	return py_bool_word(v, &b) && b;
}

static const char *
precision(const struct doc_node *root, const struct gpu *g)
{
	const struct doc_node *bf = doc_map_value(root, "bf16");
	bool bf_auto = bf == NULL || bf->kind == DOC_NULL ||
	    (bf->kind == DOC_STR && strcmp(bf->text, "auto") == 0);

	if (plan_py_on(root, "fp8"))
		return "fp8";
	if ((bf_auto && g != NULL && g->bf16 && !plan_py_on(root, "fp16")) ||
	    plan_py_on(root, "bf16"))
		return "bf16";
	if (plan_py_on(root, "fp16"))
		return "fp16";
	/* bf16: auto on a GPU without bf16 turns fp16 on (resolve_dtype). */
	if (bf_auto && g != NULL && !g->bf16 && !plan_py_on(root, "float16") &&
	    doc_map_value(root, "fp16") == NULL)
		return "fp16";
	return "fp32";
}

const struct legacy_attn plan_legacy_attn[] = {
	{ "xformers_attention", "xformers" },
	{ "sage_attention", "sage" },
	{ "flex_attention", "flex_attention" },
	{ "flash_attention", "flash_attention_2" },
	{ "sdp_attention", "sdpa" },
	{ "eager_attention", "eager" },
};
const size_t plan_legacy_attn_len = sizeof(plan_legacy_attn) /
    sizeof(plan_legacy_attn[0]);

static const char *
attention(const struct doc_node *root)
{
	const char *impl = str(root, "attn_implementation");
	size_t i;

	if (impl != NULL)
		return impl;
	for (i = 0; i < plan_legacy_attn_len; i++)
		if (on(root, plan_legacy_attn[i].flag))
			return plan_legacy_attn[i].impl;
	return "sdpa";
}

int
plan_build(struct plan *p, const struct doc *d, const struct context *ctx,
    struct arena *a, struct err *e)
{
	const struct doc_node *root = d->root;
	const struct gpu *g = gpu_find(ctx->gpu);
	const struct doc_node *gc = doc_map_value(root, "gradient_checkpointing");
	const struct doc_node *ao = doc_map_value(root, "activation_offloading");
	const struct doc_node *ddpv = doc_map_value(root, "ddp");
	bool fsdp, ddp, builder;
	long long bs, gas, mbs, cpv;
	int fv, rv;

	memset(p, 0, sizeof(*p));
	p->world = ctx->gpus;
	p->tp = degree(root, "tensor_parallel_size", 1);
	cpv = degree(root, "context_parallel_size", 0);
	p->cp = cpv > 0 ? cpv : degree(root, "sequence_parallel_degree", 1);
	p->ep = degree(root, "expert_parallel_size", 1);
	if (p->tp < 1)
		p->tp = 1;
	if (p->cp < 1)
		p->cp = 1;
	if (p->ep < 1)
		p->ep = 1;
	rv = plan_deepspeed(p, root, ctx->ds_config, ctx->ds_config_len, a,
	    e);
	if (rv != 0)
		return rv;
	fv = fsdp_version_of(root);
	fsdp = fv != 0;
	/* FSDP wins over DeepSpeed in Axolotl's dispatch. */
	if (fsdp)
		p->strategy = fv == 2 ? "fsdp2" : "fsdp1";
	else if (p->ds != DS_NONE)
		p->strategy = "deepspeed";
	else if (p->world > 1)
		p->strategy = "ddp";
	else
		p->strategy = "single";
	if (!(p->ds != DS_NONE && !fsdp))
		p->zero_stage = 0;
	builder = fv == 2 || p->tp > 1 || p->cp > 1 ||
	    (str(root, "optimizer") != NULL &&
	    (strcmp(str(root, "optimizer"), "muon") == 0 ||
	    strcmp(str(root, "optimizer"), "dion") == 0 ||
	    strcmp(str(root, "optimizer"), "sinkgd") == 0));
	if (builder) {
		p->mesh_error = build_mesh(p, root, fsdp);
	} else if (fsdp || strcmp(p->strategy, "deepspeed") == 0) {
		p->dp_replicate = 1;
		p->dp_shard = p->world;
	} else {
		p->dp_replicate = p->world;
		p->dp_shard = 1;
	}
	p->precision = precision(root, g);
	p->attention = attention(root);
	p->adapter = str(root, "adapter");
	p->load_in_4bit = plan_py_on(root, "load_in_4bit");
	p->load_in_8bit = plan_py_on(root, "load_in_8bit");
	p->gradient_checkpointing = doc_truthy(gc);
	/* 'false' is off and 'true' on, not an offload mode. */
	if (!py_bool_word(gc, &p->gradient_checkpointing) && gc != NULL &&
	    gc->kind == DOC_STR)
		p->activation_offloading = strcmp(gc->text, "offload_disk") ==
		    0 ? "disk" : "true";
	if (doc_truthy(ao))
		p->activation_offloading = ao->kind == DOC_STR ? ao->text :
		    "true";
	p->sample_packing = plan_py_on(root, "sample_packing");
	p->optimizer = str(root, "optimizer") != NULL ?
	    str(root, "optimizer") : "adamw_torch_fused";
	/* Batch arithmetic (rules.md 2.2) on model-phase values, each held
	   under 2^31 so the products below and in the rules cannot
	   overflow (no real run comes near). */
	mbs = clamp31(num(root, "micro_batch_size", 1));
	if (mbs < 1)
		mbs = 1;
	gas = doc_map_value(root, "gradient_accumulation_steps") == NULL ? 1 :
	    clamp31(num(root, "gradient_accumulation_steps", 0));
	bs = clamp31(num(root, "batch_size", 0));
	if (gas <= 0)
		gas = bs > 0 ? bs / mbs : 1;
	if (gas < 1)
		gas = 1;
	if (bs <= 0)
		bs = clamp31(mbs * gas);
	p->micro_batch_size = mbs;
	p->gradient_accumulation_steps = gas;
	p->batch_size = bs;
	ddp = ddpv != NULL && ddpv->kind == DOC_BOOL ? ddpv->b : p->world != 1;
	p->global_batch_size = bs;
	if (p->world != 1 && (fsdp || ddp))
		p->global_batch_size = mul_sat(bs, (p->world / p->cp) /
		    p->tp);
	p->sequence_len = clamp31(num(root, "sequence_len", 512));
	p->tokens_per_step = mul_sat(p->global_batch_size, p->sequence_len);
	return 0;
}

int
plan_init(struct err *e)
{
	size_t i;

	if (ds_presets_len > DS_PRESETS_MAX)	/* test_estimate */
		return err_set(e, ERR_INTERNAL, NULL, "more DeepSpeed presets "
		    "than DS_PRESETS_MAX");
	for (i = 0; i < ds_presets_len; i++)
		if (doc_parse_shared(&preset_docs[i], ds_presets[i].json) ==
		    NULL)
			return err_set(e, ERR_NOMEM, NULL, "no memory for the "
			    "DeepSpeed preset %s", ds_presets[i].name);
	return 0;
}
