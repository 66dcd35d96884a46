/*
 * tests/test_plan: the launch plan against rules.md section 2's formulas
 * (batch arithmetic, bf16: auto per GPU, attention mapping, strategy,
 * DeepSpeed stage, Axolotl's mesh builder).  One row per config.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/arena.h"
#include "core/check.h"
#include "core/doc.h"
#include "core/plan.h"

struct prow {
	const char *name;
	const char *yaml;	/* added to a minimal valid config */
	long gpus;
	const char *gpu;
	const char *strategy;
	int zero;		/* 0: none */
	long long R, S, tp, cp;	/* the mesh */
	const char *precision;
	const char *attention;
	long long mbs, gas, global;
	long long tokens;	/* -1: not checked */
};

#define MB(m, g) "micro_batch_size: " #m "\ngradient_accumulation_steps: " #g "\n"
#define FS2 "fsdp_version: 2\nfsdp_config:\n  reshard_after_forward: true\n"

static const struct prow rows[] = {
	/* Batch arithmetic: mbs * gas * (W // cp // tp) (rules.md 2.2). */
	{ "batch_w1", MB(2, 4), 1, "h100", "single", 0, 1, 1, 1, 1,
	  "bf16", "sdpa", 2, 4, 8, 32768 },
	{ "batch_w4_ddp", MB(2, 4), 4, "h100", "ddp", 0, 4, 1, 1, 1, "bf16",
	  "sdpa", 2, 4, 32, -1 },
	{ "batch_w4_cp2", MB(2, 4) "context_parallel_size: 2\n" FS2, 4, "h100",
	  "fsdp2", 0, 1, 2, 1, 2, "bf16", "sdpa", 2, 4, 16, -1 },
	{ "batch_w4_cp4", MB(2, 4) "context_parallel_size: 4\n" FS2, 4, "h100",
	  "fsdp2", 0, 1, 1, 1, 4, "bf16", "sdpa", 2, 4, 8, -1 },
	{ "batch_w4_tp2", MB(2, 4) "tensor_parallel_size: 2\n" FS2, 4, "h100",
	  "fsdp2", 0, 1, 2, 2, 1, "bf16", "sdpa", 2, 4, 16, -1 },
	{ "batch_w4_tp4", MB(2, 4) "tensor_parallel_size: 4\n" FS2, 4, "h100",
	  "fsdp2", 0, 1, 1, 4, 1, "bf16", "sdpa", 2, 4, 8, -1 },
	/* Degrees as pydantic's lax int parses a string (the rules read
	   them from the plan); what it refuses leaves the default. */
	{ "tp_string", MB(2, 4) "tensor_parallel_size: ' 2 '\n" FS2, 4,
	  "h100", "fsdp2", 0, 1, 2, 2, 1, "bf16", "sdpa", 2, 4, 16, -1 },
	{ "cp_string_underscore_fraction", MB(2, 4)
	  "context_parallel_size: '0_2.00'\n" FS2, 4, "h100", "fsdp2", 0, 1,
	  2, 1, 2, "bf16", "sdpa", 2, 4, 16, -1 },
	{ "sp_degree_string", MB(2, 4) "sequence_parallel_degree: '+2'\n" FS2,
	  4, "h100", "fsdp2", 0, 1, 2, 1, 2, "bf16", "sdpa", 2, 4, 16, -1 },
	{ "tp_not_an_int", MB(2, 4) "tensor_parallel_size: '2e0'\n" FS2, 4,
	  "h100", "fsdp2", 0, 1, 4, 1, 1, "bf16", "sdpa", 2, 4, 32, -1 },
	{ "tp_trailing_underscore", MB(2, 4) "tensor_parallel_size: '2_'\n"
	  FS2, 4, "h100", "fsdp2", 0, 1, 4, 1, 1, "bf16", "sdpa", 2, 4, 32, -1 },
	{ "tp_bare_point", MB(2, 4) "tensor_parallel_size: '2.'\n" FS2, 4,
	  "h100", "fsdp2", 0, 1, 4, 1, 1, "bf16", "sdpa", 2, 4, 32, -1 },
	{ "batch_size_no_gas_key", "micro_batch_size: 1\nbatch_size: 16\n", 8,
	  "h100", "ddp", 0, 8, 1, 1, 1, "bf16", "sdpa", 1, 1, 128, -1 },
	{ "batch_size_gas_null", "micro_batch_size: 2\nbatch_size: 16\n"
	  "gradient_accumulation_steps: null\n", 1, "h100", "single", 0, 1, 1,
	  1, 1, "bf16", "sdpa", 2, 8, 16, -1 },
	{ "ddp_false_no_scaling", MB(2, 2) "ddp: false\n", 2, "h100", "ddp",
	  0, 2, 1, 1, 1, "bf16", "sdpa", 2, 2, 4, -1 },
	{ "ddp_false_fsdp_scales", MB(2, 2) "ddp: false\nfsdp_config:\n"
	  "  offload_params: false\n", 2, "h100", "fsdp1", 0, 1, 2, 1, 1,
	  "bf16", "sdpa", 2, 2, 8, -1 },
	{ "tokens_per_step", MB(2, 4) "sequence_len: 4096\n", 1, "h100",
	  "single", 0, 1, 1, 1, 1, "bf16", "sdpa", 2, 4, 8, 32768 },
	{ "tokens_8gpus", MB(1, 8) "sequence_len: 2048\n", 8, "a100", "ddp",
	  0, 8, 1, 1, 1, "bf16", "sdpa", 1, 8, 64, 131072 },
	{ "defaults", "", 1, "h100", "single", 0, 1, 1, 1, 1, "bf16", "sdpa",
	  1, 1, 1, 512 },
	/* Precision (rules.md 2.3): bf16 defaults to auto. */
	{ "bf16_auto_h100", MB(1, 1), 1, "h100", "single", 0, 1, 1, 1, 1,
	  "bf16", "sdpa", 1, 1, 1, -1 },
	{ "bf16_auto_t4", MB(1, 1), 1, "t4", "single", 0, 1, 1, 1, 1, "fp16",
	  "sdpa", 1, 1, 1, -1 },
	{ "bf16_auto_v100", MB(1, 1), 1, "v100", "single", 0, 1, 1, 1, 1,
	  "fp16", "sdpa", 1, 1, 1, -1 },
	{ "bf16_auto_a100", MB(1, 1) "bf16: auto\n", 1, "a100", "single", 0, 1,
	  1, 1, 1, "bf16", "sdpa", 1, 1, 1, -1 },
	{ "bf16_auto_mi300x", MB(1, 1), 1, "mi300x", "single", 0, 1, 1, 1, 1,
	  "bf16", "sdpa", 1, 1, 1, -1 },
	{ "bf16_false", MB(1, 1) "bf16: false\n", 1, "h100", "single", 0, 1, 1,
	  1, 1, "fp32", "sdpa", 1, 1, 1, -1 },
	/* resolve_dtype reads the validated config: a string or 0/1 that
	   pydantic makes a bool is that bool. */
	{ "bf16_string_true", MB(1, 1) "bf16: 'true'\n", 1, "h100", "single",
	  0, 1, 1, 1, 1, "bf16", "sdpa", 1, 1, 1, -1 },
	{ "bf16_int_one", MB(1, 1) "bf16: 1\n", 1, "h100", "single", 0, 1, 1,
	  1, 1, "bf16", "sdpa", 1, 1, 1, -1 },
	{ "bf16_string_off", MB(1, 1) "bf16: 'off'\n", 1, "h100", "single",
	  0, 1, 1, 1, 1, "fp32", "sdpa", 1, 1, 1, -1 },
	{ "fp16_string_yes", MB(1, 1) "bf16: false\nfp16: 'yes'\n", 1, "h100",
	  "single", 0, 1, 1, 1, 1, "fp16", "sdpa", 1, 1, 1, -1 },
	{ "fp16_string_false_auto", MB(1, 1) "fp16: 'false'\n", 1, "h100",
	  "single", 0, 1, 1, 1, 1, "bf16", "sdpa", 1, 1, 1, -1 },
	{ "fp16_true", MB(1, 1) "bf16: false\nfp16: true\n", 1, "h100",
	  "single", 0, 1, 1, 1, 1, "fp16", "sdpa", 1, 1, 1, -1 },
	{ "bf16_true_on_t4", MB(1, 1) "bf16: true\n", 1, "t4", "single", 0, 1,
	  1, 1, 1, "bf16", "sdpa", 1, 1, 1, -1 },
	{ "fp8", MB(1, 1) "fp8: true\n", 1, "h100", "single", 0, 1, 1, 1, 1,
	  "fp8", "sdpa", 1, 1, 1, -1 },
	{ "auto_with_fp16", MB(1, 1) "bf16: auto\nfp16: true\n", 1, "h100",
	  "single", 0, 1, 1, 1, 1, "fp16", "sdpa", 1, 1, 1, -1 },
	{ "auto_t4_float16", MB(1, 1) "float16: true\n", 1, "t4", "single", 0,
	  1, 1, 1, 1, "fp32", "sdpa", 1, 1, 1, -1 },
	/* Attention (rules.md 2.4). */
	{ "attn_flash_flag", MB(1, 1) "flash_attention: true\n", 1, "h100",
	  "single", 0, 1, 1, 1, 1, "bf16", "flash_attention_2", 1, 1, 1, -1 },
	{ "attn_sdp_flag", MB(1, 1) "sdp_attention: true\n", 1, "h100",
	  "single", 0, 1, 1, 1, 1, "bf16", "sdpa", 1, 1, 1, -1 },
	{ "attn_priority", MB(1, 1) "flash_attention: true\n"
	  "xformers_attention: true\n", 1, "h100", "single", 0, 1, 1, 1, 1,
	  "bf16", "xformers", 1, 1, 1, -1 },
	{ "attn_impl", MB(1, 1) "attn_implementation: eager\n", 1, "h100",
	  "single", 0, 1, 1, 1, 1, "bf16", "eager", 1, 1, 1, -1 },
	{ "attn_flex", MB(1, 1) "flex_attention: true\n", 1, "h100", "single",
	  0, 1, 1, 1, 1, "bf16", "flex_attention", 1, 1, 1, -1 },
	{ "attn_false_flag", MB(1, 1) "flash_attention: false\n", 1, "h100",
	  "single", 0, 1, 1, 1, 1, "bf16", "sdpa", 1, 1, 1, -1 },
	/* Strategy, DeepSpeed stage and mesh (rules.md 2.5, 2.6, 2.10). */
	{ "fsdp1_default_version", MB(1, 1) "fsdp_config:\n"
	  "  offload_params: false\n", 8, "h100", "fsdp1", 0, 1, 8, 1, 1,
	  "bf16", "sdpa", 1, 1, 8, -1 },
	{ "fsdp2_all_shard", MB(1, 1) FS2, 8, "h100", "fsdp2", 0, 1, 8, 1, 1,
	  "bf16", "sdpa", 1, 1, 8, -1 },
	{ "fsdp2_nested_version", MB(1, 1) "fsdp_config:\n  fsdp_version: 2\n",
	  8, "h100", "fsdp2", 0, 1, 8, 1, 1, "bf16", "sdpa", 1, 1, 8, -1 },
	{ "fsdp2_tp2_cp2", MB(1, 1) "tensor_parallel_size: 2\n"
	  "context_parallel_size: 2\n" FS2, 8, "h100", "fsdp2", 0, 1, 2, 2, 2,
	  "bf16", "sdpa", 1, 1, 2, -1 },
	{ "hsdp_replicate", MB(1, 1) "dp_replicate_size: 2\n" FS2, 8, "h100",
	  "fsdp2", 0, 2, 4, 1, 1, "bf16", "sdpa", 1, 1, 8, -1 },
	{ "hsdp_shard_given", MB(1, 1) "dp_shard_size: 2\n" FS2, 8, "h100",
	  "fsdp2", 0, 4, 2, 1, 1, "bf16", "sdpa", 1, 1, 8, -1 },
	{ "two_nodes", MB(1, 1) "dp_shard_size: 8\n" FS2, 16, "h100", "fsdp2",
	  0, 2, 8, 1, 1, "bf16", "sdpa", 1, 1, 16, -1 },
	{ "muon_builder", MB(1, 1) "optimizer: muon\n", 8, "h100", "ddp", 0, 1,
	  8, 1, 1, "bf16", "sdpa", 1, 1, 8, -1 },
	{ "zero3_preset", MB(1, 1) "deepspeed: deepspeed_configs/zero3.json\n",
	  8, "h100", "deepspeed", 3, 1, 8, 1, 1, "bf16", "sdpa", 1, 1, 8, -1 },
	{ "zero2_preset", MB(1, 1) "deepspeed: ./deepspeed_configs/zero2.json\n",
	  8, "h100", "deepspeed", 2, 1, 8, 1, 1, "bf16", "sdpa", 1, 1, 8, -1 },
	{ "zero1_inline", MB(1, 1) "deepspeed:\n  zero_optimization:\n"
	  "    stage: 1\n", 8, "h100", "deepspeed", 1, 1, 8, 1, 1, "bf16",
	  "sdpa", 1, 1, 8, -1 },
	{ "zero3_unreadable", MB(1, 1) "deepspeed: my/ds_zero3_offload.json\n",
	  8, "h100", "deepspeed", 3, 1, 8, 1, 1, "bf16", "sdpa", 1, 1, 8, -1 },
	{ "fsdp_beats_deepspeed", MB(1, 1) "deepspeed: deepspeed_configs/"
	  "zero3.json\nfsdp_config:\n  offload_params: false\n", 8, "h100",
	  "fsdp1", 0, 1, 8, 1, 1, "bf16", "sdpa", 1, 1, 8, -1 },
	{ "sequence_parallel_degree", MB(1, 1) "sequence_parallel_degree: 2\n"
	  FS2, 4, "h100", "fsdp2", 0, 1, 2, 1, 2, "bf16", "sdpa", 1, 1, 2,
	  -1 },
};

static void
test_plan__derives_like_axolotl(void **state)
{
	const struct prow *w = *state;
	static const char base[] = "base_model: HuggingFaceTB/SmolLM2-135M\n"
	    "datasets:\n  - path: a/b\n    type: alpaca\n";
	char yaml[1024];
	struct context ctx;
	struct limits lim;
	struct arena a;
	struct err e = { 0 };
	struct report *r;
	const struct plan *p;

	snprintf(yaml, sizeof(yaml), "%s%s%s", base, w->yaml,
	    strstr(w->yaml, "sequence_len") == NULL &&
	    strcmp(w->name, "defaults") != 0 ? "sequence_len: 4096\n" : "");
	context_default(&ctx);
	ctx.gpus = w->gpus;
	ctx.nodes = w->gpus > 8 ? w->gpus / 8 : 1;
	ctx.gpu = w->gpu;
	limits_default(&lim);
	arena_init(&a, (size_t)16 << 20);
	if (check_run(&r, yaml, strlen(yaml), &ctx, &lim, &a, &e) != 0)
		fail_msg("%s: %s", w->name, e.msg);
	p = r->plan;
	assert_non_null(p);
#define EQS(f, want) if (strcmp(p->f, want) != 0) \
	fail_msg("%s: " #f " %s, want %s", w->name, p->f, want)
#define EQI(f, want) if ((long long)(p->f) != (long long)(want)) \
	fail_msg("%s: " #f " %lld, want %lld", w->name, (long long)p->f, \
	    (long long)(want))
	EQS(strategy, w->strategy);
	EQI(zero_stage, w->zero);
	EQI(dp_replicate, w->R);
	EQI(dp_shard, w->S);
	EQI(tp, w->tp);
	EQI(cp, w->cp);
	EQS(precision, w->precision);
	EQS(attention, w->attention);
	EQI(micro_batch_size, w->mbs);
	EQI(gradient_accumulation_steps, w->gas);
	EQI(global_batch_size, w->global);
	if (w->tokens >= 0)
		EQI(tokens_per_step, w->tokens);
	arena_fini(&a);
}

/*
 * The flags the estimator reads from the plan are the validated values:
 * a string pydantic reads as a bool is that bool ('false' is off, and
 * gradient_checkpointing: 'false' is not an offload mode).
 */
static void
test_plan__flags_as_pydantic_parses_them(void **state)
{
	static const struct {
		const char *yaml;
		bool packing, q4, q8, gc;
		const char *offload;
	} cases[] = {
		{ "sample_packing: 'false'\nload_in_8bit: 'false'\n"
		  "gradient_checkpointing: 'false'\n", false, false, false,
		  false, NULL },
		{ "sample_packing: 'yes'\nload_in_4bit: 'true'\n"
		  "gradient_checkpointing: 'true'\n", true, true, false, true,
		  NULL },
		{ "sample_packing: 1\nload_in_8bit: 1\n"
		  "gradient_checkpointing: offload\n", true, false, true, true,
		  "true" },
	};
	static const char base[] = "base_model: HuggingFaceTB/SmolLM2-135M\n"
	    "datasets:\n  - path: a/b\n    type: alpaca\n";
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char yaml[512];
		struct context ctx;
		struct limits lim;
		struct arena a;
		struct err e = { 0 };
		struct report *r;
		const struct plan *p;

		snprintf(yaml, sizeof(yaml), "%s%s", base, cases[i].yaml);
		context_default(&ctx);
		limits_default(&lim);
		arena_init(&a, (size_t)16 << 20);
		if (check_run(&r, yaml, strlen(yaml), &ctx, &lim, &a, &e) != 0)
			fail_msg("case %zu: %s", i, e.msg);
		p = r->plan;
		assert_non_null(p);
		assert_int_equal(p->sample_packing, cases[i].packing);
		assert_int_equal(p->load_in_4bit, cases[i].q4);
		assert_int_equal(p->load_in_8bit, cases[i].q8);
		assert_int_equal(p->gradient_checkpointing, cases[i].gc);
		if (cases[i].offload == NULL)
			assert_null(p->activation_offloading);
		else
			assert_string_equal(p->activation_offloading,
			    cases[i].offload);
		arena_fini(&a);
	}
}

/*
 * A DeepSpeed config the caller read (--deepspeed-config) that is not
 * JSON: plan_build itself says so, with ERR_SCHEMA in e (c-style section
 * 4: set where found); one that is JSON gives its stage.
 */
static void
test_plan__deepspeed_config_error_set_where_found(void **state)
{
	static const char yaml[] = "base_model: HuggingFaceTB/SmolLM2-135M\n"
	    "deepspeed: /elsewhere/ds.json\n";
	static const char bad[] = "{\"zero_optimization\": {\"stage\": 3";
	static const char good[] = "{\"zero_optimization\": {\"stage\": 2}}";
	struct context ctx;
	struct limits lim;
	struct arena a;
	struct err e = { 0 };
	struct doc *d;
	struct plan p;
	int rv;

	(void)state;
	context_default(&ctx);
	ctx.gpus = 8;
	assert_int_equal(context_resolve(&ctx, &e), 0);
	limits_default(&lim);
	arena_init(&a, (size_t)16 << 20);
	assert_int_equal(doc_parse(&d, yaml, strlen(yaml), &lim, &a, &e), 0);
	ctx.ds_config = bad;
	ctx.ds_config_len = strlen(bad);
	rv = plan_build(&p, d, &ctx, &a, &e);
	assert_int_equal(rv, ERR_SCHEMA);
	assert_int_equal(e.code, ERR_SCHEMA);
	assert_string_equal(e.msg, "the DeepSpeed config given is not valid "
	    "JSON");
	memset(&e, 0, sizeof(e));
	ctx.ds_config = good;
	ctx.ds_config_len = strlen(good);
	assert_int_equal(plan_build(&p, d, &ctx, &a, &e), 0);
	assert_int_equal(e.code, ERR_OK);
	assert_int_equal(p.zero_stage, 2);
	assert_string_equal(p.strategy, "deepspeed");
	arena_fini(&a);
}

int
main(void)
{
	size_t n = sizeof(rows) / sizeof(rows[0]), i;
	struct CMUnitTest *t = calloc(n + 2, sizeof(*t));
	char (*names)[96] = calloc(n, sizeof(*names));
	int failed;

	if (t == NULL || names == NULL)
		return 1;
	for (i = 0; i < n; i++) {
		snprintf(names[i], sizeof(names[i]),
		    "test_plan__derives_like_axolotl[%s]", rows[i].name);
		t[i].name = names[i];
		t[i].test_func = test_plan__derives_like_axolotl;
		t[i].initial_state = (void *)(uintptr_t)&rows[i];
	}
	t[n].name = "test_plan__deepspeed_config_error_set_where_found";
	t[n].test_func = test_plan__deepspeed_config_error_set_where_found;
	t[n + 1].name = "test_plan__flags_as_pydantic_parses_them";
	t[n + 1].test_func = test_plan__flags_as_pydantic_parses_them;
	failed = _cmocka_run_group_tests("plan", t, n + 2, NULL, NULL);
	free(t);
	free(names);
	return failed;
}
