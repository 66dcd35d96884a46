/*
 * tests/test_hfconfig: a Hugging Face config.json -> the estimator's
 * model facts.  Parameter counts are checked against every catalog row
 * that models.tsv computed from a config (the row's columns written back
 * as config.json), and against real configs of the architectures whose
 * rows leave out fields (DeepSeek MLA, Llama 4 interleaving); then the
 * errors, the estimate with a model given by the caller, and the CLI's
 * --model-config.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/arena.h"
#include "core/check.h"
#include "core/doc.h"
#include "core/estimate.h"
#include "core/hfconfig.h"
#include "core/models.h"
#include "tests/fixture.h"

struct parsed {
	struct arena a;
	const struct model_def *m;
	struct err e;
	int rv;
};

static void
parse(struct parsed *p, const char *json)
{
	struct limits lim;

	memset(p, 0, sizeof(*p));
	limits_default(&lim);
	arena_init(&p->a, (size_t)4 << 20);
	p->rv = hfconfig_parse(&p->m, json, strlen(json), "test/model",
	    "model_config", &lim, &p->a, &p->e);
}

/* Append ,"key":value when the TSV cell is a value ("-": absent). */
static void
add(char *buf, size_t cap, const char *key, const char *cell)
{
	size_t n = strlen(buf);

	if (strcmp(cell, "-") == 0 || *cell == '\0')
		return;
	snprintf(buf + n, cap - n, ",\"%s\":%s", key, cell);
}

/* Families whose rows leave out fields the count needs: MLA ranks
   (DeepSeek, GLM-4.7-Flash) and Llama 4's interleave step. */
static bool
row_lacks_fields(const char *type)
{
	return strstr(type, "deepseek") != NULL ||
	    strstr(type, "glm4_moe_lite") != NULL ||
	    strstr(type, "llama4") != NULL;
}

/* Families with bias terms models.tsv counted its own way (LayerNorm and
   projection biases, attention sinks): within 0.05%. */
static bool
bias_family(const char *type)
{
	static const char *const t[] = { "phi-msft", "gpt_oss", "falcon",
	    "gpt_neox", "gptj", "gpt2", "stablelm", "starcoder2", "mimo",
	    NULL };
	size_t i;

	for (i = 0; t[i] != NULL; i++)
		if (strcmp(type, t[i]) == 0)
			return true;
	return false;
}

/* Every row computed from a config: its columns back as config.json give
   the row's total exactly (Llama-style families) or within 0.05%. */
static void
test_hfconfig__catalog_rows(void **state)
{
	char path[512], *text, *cur, *f[23], json[2048], *type;
	size_t len, n, exact = 0, close = 0;
	struct parsed p;

	(void)state;
	snprintf(path, sizeof(path), "%s/reference/models.tsv",
	    fixture_shared());
	text = fixture_read(path, &len);
	assert_non_null(text);
	cur = text;
	fixture_tsv_next(&cur, f, 23);	/* header */
	while (fixture_tsv_next(&cur, f, 23) == 23) {
		long long want = atoll(f[16]);
		double rel;

		if (strncmp(f[18], "computed", 8) != 0 ||
		    row_lacks_fields(f[1]))
			continue;
		type = strrchr(f[1], '/') != NULL ? strrchr(f[1], '/') + 1 :
		    f[1];
		snprintf(json, sizeof(json), "{\"model_type\":\"%s\"", type);
		add(json, sizeof(json), "hidden_size", f[2]);
		add(json, sizeof(json), "num_hidden_layers", f[3]);
		add(json, sizeof(json), "num_attention_heads", f[4]);
		add(json, sizeof(json), "num_key_value_heads", f[5]);
		add(json, sizeof(json), "head_dim", f[6]);
		add(json, sizeof(json), "intermediate_size", f[7]);
		add(json, sizeof(json), "vocab_size", f[8]);
		add(json, sizeof(json), "tie_word_embeddings",
		    strcmp(f[10], "True") == 0 ? "true" :
		    strcmp(f[10], "False") == 0 ? "false" : "-");
		add(json, sizeof(json), "num_local_experts", f[11]);
		add(json, sizeof(json), "num_experts_per_tok", f[12]);
		add(json, sizeof(json), "moe_intermediate_size", f[13]);
		if (strncmp(f[14], "1x", 2) == 0)
			add(json, sizeof(json),
			    "shared_expert_intermediate_size", f[14] + 2);
		else
			add(json, sizeof(json), "n_shared_experts", f[14]);
		add(json, sizeof(json), "first_k_dense_replace", f[15]);
		n = strlen(json);
		snprintf(json + n, sizeof(json) - n, "}");
		parse(&p, json);
		if (p.rv != 0)
			fail_msg("%s: %s", f[0], p.e.msg);
		rel = fabs((double)p.m->total_params - (double)want) /
		    (double)want;
		if (bias_family(type)) {
			if (rel > 5e-4)
				fail_msg("%s: %lld, catalog %lld", f[0],
				    p.m->total_params, want);
			close++;
		} else {
			if (p.m->total_params != want)
				fail_msg("%s (%s): %lld, catalog %lld", f[0],
				    type, p.m->total_params, want);
			exact++;
		}
		arena_fini(&p.a);
	}
	free(text);
	/* The table holds 132 computed rows; most are Llama-style. */
	assert_true(exact >= 90);
	assert_true(exact + close >= 110);
}

/* estimator.md section 1's independent totals, from real config.json
   texts whose rows in models.tsv leave out fields. */
static void
test_hfconfig__published_totals(void **state)
{
	static const struct {
		const char *json;
		long long total, active;
	} cases[] = {
		/* deepseek-ai/DeepSeek-V3 (MLA, 1 shared expert, router bias) */
		{ "{\"model_type\":\"deepseek_v3\",\"hidden_size\":7168,"
		  "\"num_hidden_layers\":61,\"num_attention_heads\":128,"
		  "\"num_key_value_heads\":128,\"intermediate_size\":18432,"
		  "\"moe_intermediate_size\":2048,\"n_routed_experts\":256,"
		  "\"n_shared_experts\":1,\"first_k_dense_replace\":3,"
		  "\"num_experts_per_tok\":8,\"q_lora_rank\":1536,"
		  "\"kv_lora_rank\":512,\"qk_nope_head_dim\":128,"
		  "\"qk_rope_head_dim\":64,\"v_head_dim\":128,"
		  "\"vocab_size\":129280,\"tie_word_embeddings\":false,"
		  "\"topk_method\":\"noaux_tc\"}", 671026419200LL, -1 },
		/* meta-llama/Llama-4-Maverick: text_config, MoE every 2nd */
		{ "{\"model_type\":\"llama4\",\"text_config\":{\"model_type\":"
		  "\"llama4_text\",\"hidden_size\":5120,\"num_hidden_layers\":"
		  "48,\"num_attention_heads\":40,\"num_key_value_heads\":8,"
		  "\"head_dim\":128,\"intermediate_size\":8192,"
		  "\"intermediate_size_mlp\":16384,\"num_local_experts\":128,"
		  "\"num_experts_per_tok\":1,\"vocab_size\":202048,"
		  "\"interleave_moe_layer_step\":2}}", 400711848960LL,
		  17184691200LL },
		/* meta-llama/Llama-4-Scout */
		{ "{\"model_type\":\"llama4\",\"text_config\":{\"model_type\":"
		  "\"llama4_text\",\"hidden_size\":5120,\"num_hidden_layers\":"
		  "48,\"num_attention_heads\":40,\"num_key_value_heads\":8,"
		  "\"head_dim\":128,\"intermediate_size\":8192,"
		  "\"intermediate_size_mlp\":16384,\"num_local_experts\":16,"
		  "\"num_experts_per_tok\":1,\"vocab_size\":202048,"
		  "\"interleave_moe_layer_step\":1}}", 107769861120LL,
		  17172894720LL },
		/* mistralai/Mistral-7B-v0.1, as published (1e-05 is a float) */
		{ "{\"architectures\":[\"MistralForCausalLM\"],"
		  "\"hidden_size\":4096,\"intermediate_size\":14336,"
		  "\"max_position_embeddings\":32768,\"model_type\":\"mistral\","
		  "\"num_attention_heads\":32,\"num_hidden_layers\":32,"
		  "\"num_key_value_heads\":8,\"rms_norm_eps\":1e-05,"
		  "\"rope_theta\":10000.0,\"sliding_window\":4096,"
		  "\"tie_word_embeddings\":false,\"vocab_size\":32000}",
		  7241732096LL, 7241732096LL },
	};
	struct parsed p;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		parse(&p, cases[i].json);
		if (p.rv != 0)
			fail_msg("case %zu: %s", i, p.e.msg);
		assert_int_equal(p.m->total_params, cases[i].total);
		if (cases[i].active > 0)
			assert_int_equal(p.m->active_params, cases[i].active);
		assert_true(p.m->active_params <= p.m->total_params);
		assert_string_equal(p.m->verification, "config");
		arena_fini(&p.a);
	}
}

/*
 * Hybrid architectures counted from their config.json fields (the
 * Mamba, Mamba-2, Gated DeltaNet, KDA and short-conv mixers, the layer
 * pattern, and where the experts are) against the totals their model
 * cards publish (rounded there, so within the rounding).
 */
static void
test_hfconfig__hybrid_totals(void **state)
{
	static const struct {
		const char *name, *json;
		double total, tol, active;
	} cases[] = {
		/* ai21labs/Jamba-v0.1: card "52B total, 12B active"; Mamba
		   fields at JambaConfig's defaults. */
		{ "Jamba-v0.1", "{\"model_type\":\"jamba\",\"hidden_size\":4096,"
		  "\"num_hidden_layers\":32,\"num_attention_heads\":32,"
		  "\"num_key_value_heads\":8,\"intermediate_size\":14336,"
		  "\"vocab_size\":65536,\"num_experts\":16,"
		  "\"num_experts_per_tok\":2,\"tie_word_embeddings\":false}",
		  52e9, 0.01, 12e9 },
		/* ai21labs/AI21-Jamba-1.5-Large: "398B total, 94B active". */
		{ "Jamba-1.5-Large", "{\"model_type\":\"jamba\","
		  "\"hidden_size\":8192,\"num_hidden_layers\":72,"
		  "\"num_attention_heads\":64,\"num_key_value_heads\":8,"
		  "\"intermediate_size\":24576,\"vocab_size\":65536,"
		  "\"num_experts\":16,\"num_experts_per_tok\":2,"
		  "\"attn_layer_period\":8,\"attn_layer_offset\":4,"
		  "\"expert_layer_period\":2,\"expert_layer_offset\":1,"
		  "\"tie_word_embeddings\":false}", 398e9, 0.005, 94e9 },
		/* LiquidAI/LFM2-350M: 354M; 10 short-conv + 6 GQA layers,
		   MLP 2/3 of block_ff_dim rounded up to 256. */
		{ "LFM2-350M", "{\"model_type\":\"lfm2\",\"vocab_size\":65536,"
		  "\"hidden_size\":1024,\"num_hidden_layers\":16,"
		  "\"num_attention_heads\":16,\"num_key_value_heads\":8,"
		  "\"conv_bias\":false,\"conv_L_cache\":3,"
		  "\"full_attn_idxs\":[2,5,8,10,12,14],\"block_ff_dim\":6656,"
		  "\"block_multiple_of\":256,\"block_ffn_dim_multiplier\":1.0,"
		  "\"block_auto_adjust_ff_dim\":true}", 354e6, 0.005, -1 },
		/* LiquidAI/LFM2-8B-A1B: "8.3B total, 1.5B active". */
		{ "LFM2-8B-A1B", "{\"model_type\":\"lfm2_moe\","
		  "\"vocab_size\":65536,\"hidden_size\":2048,"
		  "\"intermediate_size\":7168,\"moe_intermediate_size\":1792,"
		  "\"num_hidden_layers\":24,\"num_attention_heads\":32,"
		  "\"num_key_value_heads\":8,\"conv_L_cache\":3,"
		  "\"num_dense_layers\":2,\"num_experts\":32,"
		  "\"num_experts_per_tok\":4,\"layer_types\":[\"conv\",\"conv\","
		  "\"full_attention\",\"conv\",\"conv\",\"conv\","
		  "\"full_attention\",\"conv\",\"conv\",\"conv\","
		  "\"full_attention\",\"conv\",\"conv\",\"conv\","
		  "\"full_attention\",\"conv\",\"conv\",\"conv\","
		  "\"full_attention\",\"conv\",\"conv\",\"full_attention\","
		  "\"conv\",\"conv\"]}", 8.3e9, 0.01, 1.5e9 },
		/* Qwen/Qwen3-Next-80B-A3B: "80B total, 3B active"; every 4th
		   layer full attention with a gated query. */
		{ "Qwen3-Next-80B-A3B", "{\"model_type\":\"qwen3_next\","
		  "\"hidden_size\":2048,\"num_hidden_layers\":48,"
		  "\"num_attention_heads\":16,\"num_key_value_heads\":2,"
		  "\"head_dim\":256,\"intermediate_size\":5120,"
		  "\"vocab_size\":151936,\"num_experts\":512,"
		  "\"num_experts_per_tok\":10,\"moe_intermediate_size\":512,"
		  "\"shared_expert_intermediate_size\":512,"
		  "\"full_attention_interval\":4,\"linear_num_key_heads\":16,"
		  "\"linear_num_value_heads\":32,\"linear_key_head_dim\":128,"
		  "\"linear_value_head_dim\":128,\"linear_conv_kernel_dim\":4,"
		  "\"tie_word_embeddings\":false}", 80e9, 0.01, 3e9 },
		/* ibm-granite/granite-4.0-h-small: "32B total, 9B active";
		   36 Mamba-2 + 4 attention layers, experts in every layer. */
		{ "granite-4.0-h-small", "{\"model_type\":\"granitemoehybrid\","
		  "\"hidden_size\":4096,\"num_hidden_layers\":40,"
		  "\"num_attention_heads\":32,\"num_key_value_heads\":8,"
		  "\"num_local_experts\":72,\"num_experts_per_tok\":10,"
		  "\"shared_intermediate_size\":1536,\"intermediate_size\":768,"
		  "\"mamba_d_state\":128,\"mamba_d_conv\":4,"
		  "\"mamba_expand\":2,\"mamba_n_heads\":128,\"mamba_d_head\":64,"
		  "\"tie_word_embeddings\":true,\"vocab_size\":100352,"
		  "\"layer_types\":[\"mamba\",\"mamba\",\"mamba\",\"mamba\","
		  "\"mamba\",\"attention\",\"mamba\",\"mamba\",\"mamba\",\"mamba\","
		  "\"mamba\",\"mamba\",\"mamba\",\"mamba\",\"mamba\",\"attention\","
		  "\"mamba\",\"mamba\",\"mamba\",\"mamba\",\"mamba\",\"mamba\","
		  "\"mamba\",\"mamba\",\"mamba\",\"attention\",\"mamba\",\"mamba\","
		  "\"mamba\",\"mamba\",\"mamba\",\"mamba\",\"mamba\",\"mamba\","
		  "\"mamba\",\"attention\",\"mamba\",\"mamba\",\"mamba\","
		  "\"mamba\"]}", 32e9, 0.02, 9e9 },
	};
	struct parsed p;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		double t, a;

		parse(&p, cases[i].json);
		if (p.rv != 0)
			fail_msg("%s: %s", cases[i].name, p.e.msg);
		t = (double)p.m->total_params;
		a = (double)p.m->active_params;
		if (fabs(t - cases[i].total) > cases[i].tol * cases[i].total)
			fail_msg("%s: %.4g parameters, the card says %.4g",
			    cases[i].name, t, cases[i].total);
		/* Cards round active counts harder, and some leave the
		   embeddings out of them. */
		if (cases[i].active > 0 && fabs(a - cases[i].active) > 0.3 *
		    cases[i].active)
			fail_msg("%s: %.4g active, the card says %.4g",
			    cases[i].name, a, cases[i].active);
		assert_true(a <= t);
		arena_fini(&p.a);
	}
}

/* Wrong input says which field, where, and what was expected. */
static void
test_hfconfig__errors(void **state)
{
	struct parsed p;

	(void)state;
	parse(&p, "{\n  \"model_type\": \"llama\",\n  \"hidden_size\": 4096,\n"
	    "  \"num_hidden_layers\": 32,\n  \"vocab_size\": 32000\n}");
	assert_int_equal(p.rv, ERR_SCHEMA);
	assert_string_equal(p.e.loc.path, "num_attention_heads");
	assert_non_null(strstr(p.e.msg, "num_attention_heads"));
	assert_int_equal(p.e.loc.line, 1);
	arena_fini(&p.a);

	parse(&p, "{\n  \"hidden_size\": \"4096\",\n  \"num_hidden_layers\": "
	    "32,\n  \"num_attention_heads\": 32,\n  \"vocab_size\": 32000\n}");
	assert_int_equal(p.rv, ERR_SCHEMA);
	assert_string_equal(p.e.loc.path, "hidden_size");
	assert_int_equal(p.e.loc.line, 2);
	assert_int_equal(p.e.loc.col, 18);
	assert_non_null(strstr(p.e.msg, "must be an integer"));
	arena_fini(&p.a);

	parse(&p, "{\"hidden_size\": -1, \"num_hidden_layers\": 2, "
	    "\"num_attention_heads\": 2, \"vocab_size\": 10}");
	assert_int_equal(p.rv, ERR_SCHEMA);
	arena_fini(&p.a);

	parse(&p, "{\"hidden_size\": 1048577, \"num_hidden_layers\": 2, "
	    "\"num_attention_heads\": 2, \"vocab_size\": 10}");
	assert_int_equal(p.rv, ERR_SCHEMA);
	arena_fini(&p.a);

	/* The largest shape the bounds allow still refuses 10^15 params. */
	parse(&p, "{\"hidden_size\": 1048576, \"num_hidden_layers\": 65536, "
	    "\"num_attention_heads\": 65536, \"vocab_size\": 16777216, "
	    "\"num_local_experts\": 65536, \"intermediate_size\": 1048576}");
	assert_int_equal(p.rv, ERR_SCHEMA);
	assert_non_null(strstr(p.e.msg, "10^15"));
	arena_fini(&p.a);

	/* Hybrids the count cannot take, with the field to blame: a
	   shared-block hybrid (Zamba), one that does not say which layers
	   are attention, a pattern without one letter per layer. */
	{
		static const struct {
			const char *json, *path, *msg;
		} bad[] = {
			{ "{\"model_type\": \"zamba2\", \"hidden_size\": 2560, "
			  "\"num_hidden_layers\": 54, \"num_attention_heads\": "
			  "32, \"vocab_size\": 32000}", "model_type",
			  "state-space" },
			{ "{\"model_type\": \"granitemoehybrid\", "
			  "\"hidden_size\": 1536, \"num_hidden_layers\": 40, "
			  "\"num_attention_heads\": 12, \"vocab_size\": 49160}",
			  "model_type", "layer_types" },
			{ "{\"model_type\": \"nemotron_h\", \"hidden_size\": 64, "
			  "\"num_hidden_layers\": 4, \"num_attention_heads\": 2, "
			  "\"vocab_size\": 100, \"hybrid_override_pattern\": "
			  "\"M*-\"}", "hybrid_override_pattern", "one letter" },
		};
		size_t i;

		for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			parse(&p, bad[i].json);
			assert_int_equal(p.rv, ERR_SCHEMA);
			assert_string_equal(p.e.loc.path, bad[i].path);
			assert_non_null(strstr(p.e.msg, bad[i].msg));
			arena_fini(&p.a);
		}
	}

	parse(&p, "{\"model_type\": \"x\", \"hidden_size\": 64, "
	    "\"num_hidden_layers\": 2, \"num_attention_heads\": 2, "
	    "\"vocab_size\": 100, \"layer_types\": [\"full_attention\", "
	    "\"linear_attention\", \"mamba\"]}");
	assert_int_equal(p.rv, ERR_SCHEMA);
	assert_non_null(strstr(p.e.msg, "'linear_attention' layers"));
	assert_string_equal(p.e.loc.path, "layer_types");
	arena_fini(&p.a);

	parse(&p, "[1, 2]");
	assert_int_equal(p.rv, ERR_PARSE);
	arena_fini(&p.a);

	parse(&p, "{\"hidden_size\": ");
	assert_int_equal(p.rv, ERR_PARSE);
	assert_true(p.e.loc.line >= 1);
	arena_fini(&p.a);
}

/* A model given by the caller replaces the catalog: the same facts give
   the same estimate, and the report says where they came from. */
static void
test_hfconfig__estimate_with_a_given_model(void **state)
{
	static const char llama3[] =
	    "{\"model_type\":\"llama\",\"hidden_size\":4096,"
	    "\"intermediate_size\":14336,\"num_attention_heads\":32,"
	    "\"num_hidden_layers\":32,\"num_key_value_heads\":8,"
	    "\"tie_word_embeddings\":false,\"vocab_size\":128256}";
	static const char cfg[] =
	    "base_model: %s\nsequence_len: 4096\nmicro_batch_size: 2\n"
	    "gradient_accumulation_steps: 4\nbf16: true\n"
	    "gradient_checkpointing: true\nflash_attention: true\n"
	    "datasets:\n  - path: x\n    type: alpaca\n";
	const struct model_def *given;
	struct context ctx;
	struct limits lim;
	struct err e = { 0 };
	struct arena a;
	struct report *r1, *r2, *r3;
	char b1[512], b2[512];
	struct parsed p;

	(void)state;
	parse(&p, llama3);
	assert_int_equal(p.rv, 0);
	given = p.m;
	limits_default(&lim);
	arena_init(&a, (size_t)64 << 20);
	context_default(&ctx);
	ctx.gpus = 8;
	snprintf(b1, sizeof(b1), cfg, "meta-llama/Meta-Llama-3-8B");
	snprintf(b2, sizeof(b2), cfg, "/mnt/models/my-llama");
	assert_int_equal(check_run(&r1, b1, strlen(b1), &ctx, &lim, &a, &e),
	    0);
	assert_int_equal(check_run(&r2, b2, strlen(b2), &ctx, &lim, &a, &e),
	    0);
	/* Not in the catalog: no estimate. */
	assert_false(r2->estimate->known);
	assert_string_equal(r2->estimate->source, "unknown");
	ctx.model = given;
	assert_int_equal(check_run(&r3, b2, strlen(b2), &ctx, &lim, &a, &e),
	    0);
	assert_true(r1->estimate->known && r3->estimate->known);
	assert_string_equal(r1->estimate->source, "catalog");
	assert_string_equal(r3->estimate->source, "model_config");
	assert_int_equal(r3->estimate->params, r1->estimate->params);
	assert_true(fabs(r3->estimate->per_gpu_peak_gib -
	    r1->estimate->per_gpu_peak_gib) < 1e-9);
	assert_true(fabs(r3->estimate->tokens_per_second -
	    r1->estimate->tokens_per_second) < 1e-6);
	arena_fini(&a);
	arena_fini(&p.a);
}

/* The daemon's reader is asked only when the catalog has no entry. */
static int lookups;

static const struct model_def *
lookup(void *arg, const char *id, struct arena *a)
{
	struct limits lim;
	struct err e = { 0 };
	const struct model_def *m;

	lookups++;
	limits_default(&lim);
	if (strcmp(id, "org/cached") != 0)
		return NULL;
	return hfconfig_parse(&m, arg, strlen(arg), id, "hf_cache", &lim, a,
	    &e) == 0 ? m : NULL;
}

static void
test_hfconfig__lookup_only_on_a_catalog_miss(void **state)
{
	static char json[] = "{\"model_type\":\"qwen2\",\"hidden_size\":896,"
	    "\"intermediate_size\":4864,\"num_attention_heads\":14,"
	    "\"num_hidden_layers\":24,\"num_key_value_heads\":2,"
	    "\"tie_word_embeddings\":true,\"vocab_size\":151936}";
	static const char *const bodies[] = {
	    "base_model: org/cached\n", "base_model: Qwen/Qwen2.5-0.5B\n",
	    "base_model: org/absent\n" };
	struct context ctx;
	struct limits lim;
	struct err e = { 0 };
	struct arena a;
	struct report *r;
	const char *src[3];
	int calls[3];
	size_t i;

	(void)state;
	limits_default(&lim);
	context_default(&ctx);
	ctx.model_lookup = lookup;
	ctx.model_lookup_arg = json;
	arena_init(&a, (size_t)64 << 20);
	for (i = 0; i < 3; i++) {
		lookups = 0;
		assert_int_equal(check_run(&r, bodies[i], strlen(bodies[i]),
		    &ctx, &lim, &a, &e), 0);
		src[i] = r->estimate->source;
		calls[i] = lookups;
	}
	assert_string_equal(src[0], "hf_cache");
	assert_int_equal(calls[0], 1);
	assert_string_equal(src[1], "catalog");
	assert_int_equal(calls[1], 0);
	assert_string_equal(src[2], "unknown");
	assert_int_equal(calls[2], 1);
	arena_fini(&a);
}

static struct report *
check_text(const char *text, long gpus, struct arena *a)
{
	struct context ctx;
	struct limits lim;
	struct err e = { 0 };
	struct report *r = NULL;

	limits_default(&lim);
	context_default(&ctx);
	ctx.gpus = gpus;
	if (check_run(&r, text, strlen(text), &ctx, &lim, a, &e) != 0)
		fail_msg("%s", e.msg);
	return r;
}

static bool
has_finding(const struct report *r, const char *rule, const char *text)
{
	size_t i;

	for (i = 0; i < r->nfindings; i++)
		if (strcmp(r->findings[i].rule, rule) == 0 &&
		    strstr(r->findings[i].message, text) != NULL)
			return true;
	return false;
}

/* Catalog rows with their architecture but no verified total (models.tsv
   "not derived (hybrid/special arch)") are counted with the same
   formula and say so; a hybrid the formula cannot count has no
   estimate.  The hybrid rows (Jamba, LFM2, Kimi-Linear) now carry the
   totals the hybrid count gives, so none is left here. */
static void
test_hfconfig__catalog_rows_without_a_total(void **state)
{
	char text[512];
	struct arena a;
	struct report *r;
	long long total, active;
	size_t i, derived = 0, hybrid = 0;

	(void)state;
	for (i = 0; i < models_table_len; i++) {
		const struct model_def *m = &models_table[i];

		if (m->total_params > 0 || m->hidden_size <= 0)
			continue;
		arena_init(&a, (size_t)64 << 20);
		snprintf(text, sizeof(text), "base_model: %s\nsequence_len: "
		    "2048\nmicro_batch_size: 1\ngradient_accumulation_steps: "
		    "1\ndatasets:\n  - path: x\n    type: alpaca\n",
		    m->hf_id);
		r = check_text(text, 8, &a);
		if (hfconfig_count(m, &total, &active)) {
			assert_true(r->estimate->known);
			assert_true(r->estimate->derived);
			assert_int_equal(r->estimate->params, total);
			assert_true(active > 0 && active <= total);
			assert_true(has_finding(r, "estimate.model_unknown",
			    "no verified parameter count"));
			derived++;
		} else {
			assert_false(r->estimate->known);
			assert_true(has_finding(r, "estimate.model_unknown",
			    "no size"));
			hybrid++;
		}
		arena_fini(&a);
	}
	/* DeepSeek-V4-Flash, GLM-5.2, MiniMax-M2. */
	assert_true(derived >= 3);
	assert_int_equal(hybrid, 0);
}

/* The GLM-5.2 NVFP4 example says it runs on 8 x H100 (its first line:
   "FSDP2 multi-GPU (2xB200 / 8xH100)"); under pure expert parallelism
   (dp_shard_size 1) FSDP gathers nothing and a rank holds only its own
   experts, in NVFP4 bytes. */
static void
test_hfconfig__glm52_example_fits_8_h100(void **state)
{
	char path[512];
	char *text;
	size_t len;
	struct arena a;
	struct report *r;

	(void)state;
	snprintf(path, sizeof(path), "%s/corpus/axolotl/examples/glm_moe_dsa/"
	    "glm-5.2-nvfp4-lora.yaml", fixture_shared());
	text = fixture_read(path, &len);
	assert_non_null(text);
	arena_init(&a, (size_t)64 << 20);
	r = check_text(text, 8, &a);
	assert_true(r->estimate->known && r->estimate->derived);
	/* Within the calibration spread of 80 GB: the estimate (experts
	   split 8 ways, DeepEP's 4 GiB buffer included) is close to the
	   capacity, so the example's claim is plausible but not a
	   margin. */
	assert_true(r->estimate->range_gib[0] < r->estimate->capacity_gib);
	assert_true(r->estimate->per_gpu_peak_gib <
	    1.1 * r->estimate->capacity_gib);
	assert_true(r->estimate->breakdown.buffers_gib >= 4.0 &&
	    r->estimate->breakdown.buffers_gib < 8);
	arena_fini(&a);
	free(text);
}

/* preflight check --model-config: used, and a bad file is exit 2 with
   file:line:col. */
static void
test_hfconfig__cli_model_config(void **state)
{
	static const char cfg[] = "base_model: /mnt/models/private\n"
	    "learning_rate: 0.0002\n"
	    "sequence_len: 2048\nmicro_batch_size: 1\n"
	    "gradient_accumulation_steps: 1\n"
	    "datasets:\n  - path: x\n    type: alpaca\n";
	static const char good[] = "{\"model_type\":\"mistral\","
	    "\"hidden_size\":4096,\"intermediate_size\":14336,"
	    "\"num_attention_heads\":32,\"num_hidden_layers\":32,"
	    "\"num_key_value_heads\":8,\"vocab_size\":32000}";
	static const char bad[] = "{\n  \"hidden_size\": 4096,\n"
	    "  \"num_hidden_layers\": \"many\"\n}";
	char pc[64], pg[64], pb[64];
	char *args[8];
	struct run r;

	(void)state;
	assert_int_equal(fixture_write_tmp(pc, sizeof(pc), cfg, strlen(cfg)),
	    0);
	assert_int_equal(fixture_write_tmp(pg, sizeof(pg), good,
	    strlen(good)), 0);
	assert_int_equal(fixture_write_tmp(pb, sizeof(pb), bad, strlen(bad)),
	    0);
	args[0] = (char *)(uintptr_t)fixture_bin();
	args[1] = (char *)(uintptr_t)"check";
	args[2] = pc;
	args[3] = (char *)(uintptr_t)"--format";
	args[4] = (char *)(uintptr_t)"json";
	args[5] = (char *)(uintptr_t)"--model-config";
	args[6] = pg;
	args[7] = NULL;
	assert_int_equal(fixture_run(&r, args, NULL), 0);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "\"params\": 7241732096"));
	assert_non_null(strstr(r.out, "\"source\": \"model_config\""));
	assert_non_null(strstr(r.out, "\"id\": \"/mnt/models/private\""));
	assert_null(strstr(r.out, "estimate.model_unknown"));
	fixture_run_free(&r);
	args[6] = pb;
	assert_int_equal(fixture_run(&r, args, NULL), 0);
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, ":3:24: error: config.json "
	    "num_hidden_layers must be an integer from 1 to 65536, got "
	    "many"));
	fixture_run_free(&r);
	args[6] = (char *)(uintptr_t)"/nonexistent/config.json";
	assert_int_equal(fixture_run(&r, args, NULL), 0);
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "--model-config"));
	fixture_run_free(&r);
	remove(pc);
	remove(pg);
	remove(pb);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hfconfig__catalog_rows),
		cmocka_unit_test(test_hfconfig__published_totals),
		cmocka_unit_test(test_hfconfig__hybrid_totals),
		cmocka_unit_test(test_hfconfig__errors),
		cmocka_unit_test(test_hfconfig__estimate_with_a_given_model),
		cmocka_unit_test(test_hfconfig__lookup_only_on_a_catalog_miss),
		cmocka_unit_test(test_hfconfig__catalog_rows_without_a_total),
		cmocka_unit_test(test_hfconfig__glm52_example_fits_8_h100),
		cmocka_unit_test(test_hfconfig__cli_model_config),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
