/*
 * core/plan: what Axolotl would actually do with a config on a context,
 * after its own defaults and derivations (rules.md section 2): strategy,
 * mesh, precision, attention, batch arithmetic.  The report's "plan", and
 * the input of the parallel.* rules and the estimator.
 */
#ifndef CORE_PLAN_H
#define CORE_PLAN_H

#include <stdbool.h>
#include <stddef.h>

struct arena;
struct err;
struct context;
struct doc;
struct doc_node;

/* Axolotl's DeepSpeed presets, embedded (build/gen/tables.c). */
struct ds_preset {
	const char *name;	/* "zero3_bf16.json" */
	const char *json;	/* the file */
};

extern const struct ds_preset ds_presets[];
extern const size_t ds_presets_len;

/* Presets whose parsed documents plan.c keeps for the process (Axolotl
   ships 8; test_estimate fails when the table outgrows this). */
#define DS_PRESETS_MAX 32

/* The preset whose name ends path ("deepspeed_configs/zero2.json"). */
const struct ds_preset *ds_preset_find(const char *path);

enum ds_source {
	DS_NONE = 0,		/* no deepspeed */
	DS_PRESET,		/* one of the embedded presets */
	DS_INLINE,		/* a mapping in the YAML */
	DS_UNREADABLE		/* a path preflight cannot open */
};

/* Axolotl's legacy attention flags and the attn_implementation each
   stands for (rules.md 2.3), in the order Axolotl checks them. */
struct legacy_attn {
	const char *flag;	/* "flash_attention" */
	const char *impl;	/* "flash_attention_2" */
};

extern const struct legacy_attn plan_legacy_attn[];
extern const size_t plan_legacy_attn_len;

/*
 * Whether pydantic makes m's key the bool true: true, 1, or a string it
 * reads as true ('true', 'yes', '1', ...).  What Axolotl reads after
 * validation (resolve_dtype, the loaders) is that bool: bf16: 'true' is
 * bf16, fp16: 'false' is off.
 */
bool plan_py_on(const struct doc_node *m, const char *key);

struct plan {
	const char *strategy;	/* single|ddp|deepspeed|fsdp1|fsdp2 */
	int zero_stage;		/* 1-3 under DeepSpeed; 0 unknown/none */
	enum ds_source ds;	/* where the DeepSpeed config came from */
	const char *ds_name;	/* preset or path, or NULL */
	bool ds_offload_optimizer;	/* zero_optimization.offload_optimizer */
	bool ds_offload_param;	/* zero_optimization.offload_param */
	int ds_bf16;		/* bf16.enabled: 1 true, 0 false, -1 auto/unset */
	int ds_fp16;		/* fp16.enabled, the same way */
	const struct doc_node *ds_map;	/* the DeepSpeed config, or NULL */
	long long world;	/* W, the number of GPUs */
	long long dp_replicate;	/* the mesh; product = world when valid */
	long long dp_shard;
	long long tp;
	long long cp;
	long long ep;
	const char *mesh_error;	/* why the layout cannot be built, or NULL */
	const char *precision;	/* fp8|bf16|fp16|fp32 */
	const char *attention;	/* backend name; "sdpa" when none is set */
	const char *adapter;	/* lora|qlora|... or NULL (full) */
	bool load_in_4bit;
	bool load_in_8bit;
	bool gradient_checkpointing;
	const char *activation_offloading;	/* NULL, "true", "disk", ... */
	bool sample_packing;
	long long micro_batch_size;
	long long gradient_accumulation_steps;
	long long batch_size;	/* per data-parallel rank */
	long long global_batch_size;	/* per optimizer step, all ranks */
	long long sequence_len;
	long long tokens_per_step;	/* global_batch_size x sequence_len */
	const char *optimizer;	/* as written, or adamw_torch_fused */
};

/* fsdp_config.<key>, or its old spelling fsdp_<key>: the pair, or NULL. */
const struct doc_pair *plan_fsdp_get(const struct doc_node *root,
    const char *key);

/*
 * Derive the plan of d on ctx (resolved).  Strings are borrowed from d
 * or static; a is for the parse of a DeepSpeed config the caller read.
 * 0, or (set in e) ERR_NOMEM, ERR_SCHEMA when that config is not JSON,
 * ERR_INTERNAL.
 */
int plan_build(struct plan *out, const struct doc *d,
    const struct context *ctx, struct arena *a, struct err *e);

/* Parse every embedded DeepSpeed preset once per process (core_init);
   0, ERR_NOMEM, or ERR_INTERNAL. */
int plan_init(struct err *e);

#endif /* CORE_PLAN_H */
