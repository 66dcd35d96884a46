/*
 * tests/test_rules: the rule table and its fixtures (c-style.md section 6).
 * Ids are unique and sorted; every rule has tests/fixtures/rules/<id>.pass.yaml
 * (no finding of that rule) and <id>.fail.yaml whose `# expect: <id>`
 * markers are exactly the lines where it fires.
 */
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
#include "core/schema.h"
#include "core/keys.h"
#include "core/rules.h"
#include "core/rules_int.h"
#include "tests/fixture.h"

/*
 * The catalog merged from the topic files (core/rules/<topic>.c): ids
 * unique and sorted, every row complete, its docs anchor the id without
 * its dots (the heading anchor of docs/rules.md), and the same table on
 * every call (built once).
 */
static void
test_rules__ids_unique_sorted_complete(void **state)
{
	const struct rule_def *all, *again;
	size_t n, n2, i, k;

	(void)state;
	all = rules_all(&n);
	assert_non_null(all);
	assert_true(n >= 200);
	again = rules_all(&n2);
	assert_ptr_equal(again, all);
	assert_int_equal(n2, n);
	for (i = 0; i < n; i++) {
		char want[160];
		const char *id = all[i].id;

		assert_non_null(all[i].title);
		assert_non_null(all[i].hint);
		assert_non_null(all[i].docs);
		assert_ptr_equal(rules_find(id), &all[i]);
		if (i > 0 && strcmp(all[i - 1].id, id) >= 0)
			fail_msg("%s is not after %s", id, all[i - 1].id);
		k = (size_t)snprintf(want, sizeof(want), "docs/rules.md#");
		for (; *id != '\0' && k + 1 < sizeof(want); id++)
			if (*id != '.')
				want[k++] = *id;
		want[k] = '\0';
		assert_string_equal(all[i].docs, want);
		/* "<topic>.<name>": one dot, lowercase words. */
		assert_non_null(strchr(all[i].id, '.'));
		assert_null(strchr(strchr(all[i].id, '.') + 1, '.'));
	}
	assert_null(rules_find("no.such_rule"));
	assert_null(rules_find(""));
}

/*
 * Every rule of shared/reference/rules.md is either in the catalog or in
 * the "not checked" list with a reason, never both, and the unchecked ones
 * stay at most 10% of rules.md.
 */
static void
test_rules__catalog_covers_rules_md(void **state)
{
	const struct rule_unchecked *u;
	char path[512], *text, *p;
	size_t nu, i, nmd = 0, missing = 0;

	(void)state;
	u = rules_unchecked(&nu);
	for (i = 0; i < nu; i++) {
		assert_non_null(u[i].why);
		if (rules_find(u[i].id) != NULL)
			fail_msg("%s is both checked and unchecked", u[i].id);
		if (i > 0 && strcmp(u[i - 1].id, u[i].id) >= 0)
			fail_msg("%s is not after %s", u[i].id, u[i - 1].id);
	}
	snprintf(path, sizeof(path), "%s/reference/rules.md",
	    fixture_shared());
	text = fixture_read(path, NULL);
	assert_non_null(text);
	for (p = strstr(text, "\n#### `"); p != NULL;
	    p = strstr(p + 1, "\n#### `")) {
		char id[128];
		bool listed = false;

		if (sscanf(p, "\n#### `%127[a-z0-9_.]`", id) != 1)
			continue;
		nmd++;
		for (i = 0; i < nu; i++)
			if (strcmp(u[i].id, id) == 0)
				listed = true;
		if (rules_find(id) == NULL && !listed) {
			fprintf(stderr, "rules.md rule %s is neither checked "
			    "nor listed as unchecked\n", id);
			missing++;
		}
	}
	free(text);
	assert_true(nmd >= 200);
	assert_int_equal(missing, 0);
	assert_true(nu * 10 <= nmd);
}

/* Run a fixture; its report stays in a (the caller frees it). */
static struct report *
run_fixture(const char *path, struct arena *a, char **text)
{
	struct context ctx;
	struct limits lim;
	struct err e = { 0 };
	struct report *r;
	size_t len;

	*text = fixture_read(path, &len);
	if (*text == NULL)
		fail_msg("missing fixture %s", path);
	context_default(&ctx);
	/* Header comments set the context: # gpus: N, # nodes: N,
	   # gpu: ID, # torch: X.Y, # host-memory-gib: X (rules that need
	   them). */
	{
		static char gpu[32];
		const char *p = *text;

		while (strncmp(p, "# ", 2) == 0) {
			if (strncmp(p, "# gpus: ", 8) == 0)
				ctx.gpus = strtol(p + 8, NULL, 10);
			else if (strncmp(p, "# nodes: ", 9) == 0)
				ctx.nodes = strtol(p + 9, NULL, 10);
			else if (strncmp(p, "# host-memory-gib: ", 19) == 0)
				ctx.host_memory_gib = strtod(p + 19, NULL);
			else if (strncmp(p, "# gpu: ", 7) == 0 &&
			    sscanf(p + 7, "%31s", gpu) == 1)
				ctx.gpu = gpu;
			else if (strncmp(p, "# torch: ", 9) == 0)
				ctx.torch = (int)(strtol(p + 9, NULL, 10) * 1000
				    + strtol(strchr(p + 9, '.') + 1, NULL, 10) *
				    10);
			p = strchr(p, '\n');
			if (p == NULL)
				break;
			p++;
		}
	}
	limits_default(&lim);
	if (check_run(&r, *text, len, &ctx, &lim, a, &e) != 0)
		fail_msg("%s:%u:%u: %s", path, e.loc.line, e.loc.col, e.msg);
	return r;
}

static void
test_rules__pass_fixture_has_no_finding(void **state)
{
	const struct rule_def *rd = *state;
	struct arena a;
	struct report *r;
	char path[256], *text;
	size_t i;

	snprintf(path, sizeof(path), "tests/fixtures/rules/%s.pass.yaml",
	    rd->id);
	arena_init(&a, (size_t)16 << 20);
	r = run_fixture(path, &a, &text);
	for (i = 0; i < r->nfindings; i++)
		if (strcmp(r->findings[i].rule, rd->id) == 0)
			fail_msg("%s:%u: %s fired: %s", path,
			    r->findings[i].line, rd->id,
			    r->findings[i].message);
	arena_fini(&a);
	free(text);
}

static void
test_rules__fail_fixture_fires_where_marked(void **state)
{
	const struct rule_def *rd = *state;
	struct arena a;
	struct report *r;
	char path[256], marker[160], *text, *p;
	unsigned want[64], got[64];
	size_t nwant = 0, ngot = 0, i;
	unsigned line = 1;

	snprintf(path, sizeof(path), "tests/fixtures/rules/%s.fail.yaml",
	    rd->id);
	snprintf(marker, sizeof(marker), "# expect: %s", rd->id);
	arena_init(&a, (size_t)16 << 20);
	r = run_fixture(path, &a, &text);
	for (p = text; *p != '\0'; p++) {
		char *nl = strchr(p, '\n');
		char *hit = strstr(p, marker);

		if (hit != NULL && (nl == NULL || hit < nl)) {
			char after = hit[strlen(marker)];

			if ((after == '\0' || after == '\n' || after == ' ' ||
			    after == ',') && nwant < 64)
				want[nwant++] = line;
		}
		if (nl == NULL)
			break;
		p = nl;
		line++;
	}
	for (i = 0; i < r->nfindings; i++)
		if (strcmp(r->findings[i].rule, rd->id) == 0 && ngot < 64)
			got[ngot++] = r->findings[i].line;
	assert_true(nwant > 0);
	if (nwant != ngot)
		fail_msg("%s: %zu markers, %zu findings", path, nwant, ngot);
	for (i = 0; i < nwant; i++)
		if (want[i] != got[i])
			fail_msg("%s: marker at line %u, finding at line %u",
			    path, want[i], got[i]);
	arena_fini(&a);
	free(text);
}

/* Append code point cp to out as UTF-8. */
static size_t
put_utf8(char *out, unsigned long cp)
{
	if (cp < 0x80) {
		out[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		out[0] = (char)(0xc0 | cp >> 6);
		out[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		out[0] = (char)(0xe0 | cp >> 12);
		out[1] = (char)(0x80 | (cp >> 6 & 0x3f));
		out[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	out[0] = (char)(0xf0 | cp >> 18);
	out[1] = (char)(0x80 | (cp >> 12 & 0x3f));
	out[2] = (char)(0x80 | (cp >> 6 & 0x3f));
	out[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

/* Python's unicode_escape decoding of s into out (UTF-8); its length. */
static size_t
unescape(char *out, const char *s)
{
	size_t n = 0;

	while (*s != '\0') {
		int digits = 0;

		if (*s != '\\') {
			out[n++] = *s++;
			continue;
		}
		s++;
		switch (*s) {
		case 'x': digits = 2; break;
		case 'u': digits = 4; break;
		case 'U': digits = 8; break;
		case 'n': out[n++] = '\n'; s++; continue;
		case 't': out[n++] = '\t'; s++; continue;
		case 'r': out[n++] = '\r'; s++; continue;
		default: out[n++] = *s++; continue;
		}
		{
			char hex[9] = { 0 };

			memcpy(hex, s + 1, (size_t)digits);
			n += put_utf8(out + n, strtoul(hex, NULL, 16));
			s += 1 + digits;
		}
	}
	out[n] = '\0';
	return n;
}

/*
 * lora.target_modules_regex's check agrees with Python's re.compile() on
 * every pattern of tests/fixtures/rules/pyre.tsv (tests/gen/pyre_cases.py
 * ran them through Python).
 */
static void
test_rules__pyre_matches_python(void **state)
{
	char *text = fixture_read("tests/fixtures/rules/pyre.tsv", NULL), *p;
	size_t checked = 0;

	(void)state;
	assert_non_null(text);
	for (p = text; p != NULL && *p != '\0';) {
		char *nl = strchr(p, '\n'), *tab, pat[512], why[96];
		size_t len;
		bool want, got;

		if (nl != NULL)
			*nl = '\0';
		tab = strrchr(p, '\t');
		if (*p != '#' && tab != NULL) {
			*tab = '\0';
			want = tab[1] == '1';
			len = unescape(pat, p);
			got = pyre_valid(pat, len, why, sizeof(why));
			if (got != want)
				fail_msg("pattern '%s': Python %s, preflight %s "
				    "(%s)", p, want ? "accepts" : "refuses",
				    got ? "accepts" : "refuses", why);
			checked++;
		}
		p = nl != NULL ? nl + 1 : NULL;
	}
	free(text);
	assert_true(checked >= 100);
}

/* The line of the first finding of rule in a check of text on gpus, or
   0 when it does not fire. */
static unsigned
fires_at(const char *text, long gpus, const char *rule)
{
	struct context ctx;
	struct limits lim;
	struct arena a;
	struct err e = { 0 };
	struct report *r;
	unsigned line = 0;
	size_t i;

	context_default(&ctx);
	ctx.gpus = gpus;
	limits_default(&lim);
	arena_init(&a, (size_t)64 << 20);
	if (check_run(&r, text, strlen(text), &ctx, &lim, &a, &e) != 0)
		fail_msg("%s", e.msg);
	for (i = 0; i < r->nfindings && line == 0; i++)
		if (strcmp(r->findings[i].rule, rule) == 0)
			line = r->findings[i].line;
	arena_fini(&a);
	return line;
}

/* A valid config the value tests add lines to (7 lines). */
static const char base[] =
    "base_model: HuggingFaceTB/SmolLM2-135M\n"
    "learning_rate: 1.0e-4\n"
    "datasets:\n  - path: mhenrichsen/alpaca_2k_test\n"
    "    type: alpaca\n"
    "micro_batch_size: 1\n"
    "gradient_accumulation_steps: 1\n";

/*
 * Renamed keys are mapped the way Axolotl maps them before its validators
 * look (deprecated_view): the rules of the new name see the old key, and
 * report at its line; the rename findings stay.
 */
static void
test_rules__renamed_keys_are_mapped(void **state)
{
	char text[1024];

	(void)state;
	snprintf(text, sizeof(text), "%ssequence_parallel_degree: 2\n",
	    base);
	assert_int_equal(fires_at(text, 2, "cp.requires_flash_attention"), 8);
	assert_int_equal(fires_at(text, 2,
	    "cp.sequence_parallel_degree_renamed"), 8);
	/* context_parallel_size wins when it is set. */
	snprintf(text, sizeof(text), "%sattn_implementation: sdpa\n"
	    "sequence_parallel_degree: 2\ncontext_parallel_size: 1\n", base);
	assert_int_equal(fires_at(text, 2, "cp.requires_flash_attention"), 0);
	snprintf(text, sizeof(text), "%sval_set_size: 0.1\neval_steps: 10\n"
	    "evaluation_strategy: epoch\n", base);
	assert_int_equal(fires_at(text, 1, "eval.strategy_steps_mismatch"), 10);
	assert_int_equal(fires_at(text, 1, "deprecated.evaluation_strategy"),
	    10);
	snprintf(text, sizeof(text), "%snoisy_embedding_alpha: -1\n", base);
	assert_int_equal(fires_at(text, 1, "train.neftune_alpha_positive"), 8);
	/* A before-validator sees the key as written: GRPO + Liger + CP reads
	   context_parallel_size, not sequence_parallel_degree. */
	snprintf(text, sizeof(text), "%sattn_implementation: "
	    "flash_attention_2\nrl: grpo\ntrl:\n  use_liger_loss: true\n"
	    "sequence_parallel_degree: 2\n", base);
	assert_int_equal(fires_at(text, 2, "cp.grpo_liger_loss"), 0);
}

/*
 * The after-validators' rules see values as pydantic parsed them: a bool
 * or number written as a string counts as that bool or number, while a
 * Literal's own value stays a string; an empty mapping for a model field
 * is a model instance, which is truthy.
 */
static void
test_rules__values_as_pydantic_parses_them(void **state)
{
	static const char *const bools[] = { "'TRUE'", "'yes'", "'On'",
	    "'t'", "'N'", "'0'", "'1'", "'false'" };
	char text[1024];
	size_t i;

	(void)state;
	snprintf(text, sizeof(text), "%scontext_parallel_size: '2'\n", base);
	assert_int_equal(fires_at(text, 2, "cp.requires_flash_attention"), 8);
	snprintf(text, sizeof(text), "%scontext_parallel_size: '1'\n", base);
	assert_int_equal(fires_at(text, 2, "cp.requires_flash_attention"), 0);
	for (i = 0; i < sizeof(bools) / sizeof(bools[0]); i++) {
		snprintf(text, sizeof(text), "%sbf16: %s\n", base, bools[i]);
		assert_int_equal(fires_at(text, 1,
		    "precision.bf16_full_rejected"), 0);
		assert_int_equal(fires_at(text, 1, "schema.type"), 0);
	}
	/* An empty mapping for a model field is a (truthy) model. */
	snprintf(text, sizeof(text), "%sselective_checkpointing: {}\n", base);
	assert_int_equal(fires_at(text, 1, "gc.selective_requires_gc"), 8);
	snprintf(text, sizeof(text), "%sselective_checkpointing: {}\n"
	    "gradient_checkpointing: true\n", base);
	assert_int_equal(fires_at(text, 1, "gc.selective_requires_gc"), 0);
	/* A before-validator compares the value as written with 1: null
	   fails there as a string does (each row checked with the oracle). */
	snprintf(text, sizeof(text), "%splugins:\n  - axolotl.integrations."
	    "liger.LigerPlugin\nliger_rms_norm: true\ntensor_parallel_size: "
	    "null\n", base);
	assert_int_equal(fires_at(text, 2, "schema.compared_as_number"), 11);
	snprintf(text, sizeof(text), "%sliger_rms_norm: true\n"
	    "tensor_parallel_size: null\n", base);	/* no Liger plugin */
	assert_int_equal(fires_at(text, 2, "schema.compared_as_number"), 0);
	snprintf(text, sizeof(text), "%srl: grpo\ntrl:\n  use_liger_loss: "
	    "true\ncontext_parallel_size: null\n", base);
	assert_int_equal(fires_at(text, 2, "schema.compared_as_number"), 11);
	snprintf(text, sizeof(text), "%srl: grpo\ntrl:\n  use_liger_loss: "
	    "false\ncontext_parallel_size: null\n", base);
	assert_int_equal(fires_at(text, 2, "schema.compared_as_number"), 0);
	/* A plugin model's float written as a string Python's float()
	   takes (YAML 1.1 reads 1e-3 as one): min 0.1 > max 0.001. */
	snprintf(text, sizeof(text), "%splugins:\n  - axolotl.integrations."
	    "diffusion.DiffusionPlugin\ndiffusion:\n  max_mask_ratio: 1e-3\n",
	    base);
	assert_int_equal(fires_at(text, 1, "plugin.diffusion_mask_ratios"),
	    10);
	snprintf(text, sizeof(text), "%splugins:\n  - axolotl.integrations."
	    "diffusion.DiffusionPlugin\ndiffusion:\n  max_mask_ratio: 95e-2\n",
	    base);
	assert_int_equal(fires_at(text, 1, "plugin.diffusion_mask_ratios"),
	    0);
	/* An after-validator reads fsdp_config's fields parsed too. */
	snprintf(text, sizeof(text), "%sfsdp:\n  - full_shard\n  - auto_wrap"
	    "\nfsdp_config:\n  offload_params: 'false'\noptimizer: "
	    "adamw_bnb_8bit\n", base);
	assert_int_equal(fires_at(text, 2, "optim.fsdp1_offload_8bit"), 0);
	snprintf(text, sizeof(text), "%sfsdp:\n  - full_shard\n  - auto_wrap"
	    "\nfsdp_config:\n  offload_params: 'true'\noptimizer: "
	    "adamw_bnb_8bit\n", base);
	assert_int_equal(fires_at(text, 2, "optim.fsdp1_offload_8bit"), 13);
	/* The plan's dtype too: bf16: 'true' is bf16 for a bf16 preset. */
	snprintf(text, sizeof(text), "%sbf16: 'true'\ndeepspeed: "
	    "deepspeed_configs/zero3_bf16.json\n", base);
	assert_int_equal(fires_at(text, 2,
	    "deepspeed.bf16_preset_requires_bf16"), 0);
	snprintf(text, sizeof(text), "%sbf16: 'false'\ndeepspeed: "
	    "deepspeed_configs/zero3_bf16.json\n", base);
	assert_int_equal(fires_at(text, 2,
	    "deepspeed.bf16_preset_requires_bf16"), 9);
	snprintf(text, sizeof(text), "%sbf16: 'full'\n", base);
	assert_int_equal(fires_at(text, 1, "precision.bf16_full_rejected"), 8);
	snprintf(text, sizeof(text), "%sbf16: 'AUTO'\n", base);
	assert_int_equal(fires_at(text, 1, "precision.bf16_full_rejected"), 8);
	/* The degree from the plan, parsed as pydantic does: the after-
	   validator sees 2; the before-validator compares the string with 1
	   (a TypeError, schema.compared_as_number, not the Liger rule). */
	snprintf(text, sizeof(text), "%splugins:\n  - axolotl.integrations."
	    "liger.LigerPlugin\nliger_fused_linear_cross_entropy: true\n"
	    "tensor_parallel_size: '2'\n", base);
	assert_int_equal(fires_at(text, 2, "parallel.tp_liger_flce"), 10);
	snprintf(text, sizeof(text), "%splugins:\n  - axolotl.integrations."
	    "liger.LigerPlugin\nliger_rms_norm: true\n"
	    "tensor_parallel_size: '2'\n", base);
	assert_int_equal(fires_at(text, 2, "parallel.tp_liger_rms_norm"), 0);
	assert_int_equal(fires_at(text, 2, "schema.compared_as_number"), 11);
	/* A kernel flag pydantic reads as true is on, as Axolotl reads it. */
	snprintf(text, sizeof(text), "%srl: dpo\nadapter: lora\n"
	    "lora_mlp_kernel: 1\n", base);
	assert_int_equal(fires_at(text, 1, "lora_kernels.rl_not_supported"),
	    8);
}

/*
 * What the schema's own before-validators change before the mixins look
 * (each row checked with the oracle): gemma4_hybrid_attn_impl picks
 * flash_attention_2 when no backend is chosen; the KernelsPlugin turns
 * lora_mlp_kernel off under the DeepSeek-V4 MoE kernels.
 */
static void
test_rules__values_the_before_validators_set(void **state)
{
	static const char kernels[] = "adapter: lora\nlora_mlp_kernel: true\n"
	    "trust_remote_code: true\nplugins:\n  - axolotl.integrations."
	    "kernels.KernelsPlugin\nuse_kernels: true\nuse_scattermoe: true\n";
	char text[1024];

	(void)state;
	snprintf(text, sizeof(text), "%sgemma4_hybrid_attn_impl: true\n"
	    "context_parallel_size: 2\n", base);
	assert_int_equal(fires_at(text, 2, "cp.requires_flash_attention"), 0);
	snprintf(text, sizeof(text), "%ssdp_attention: true\n"
	    "gemma4_hybrid_attn_impl: true\ncontext_parallel_size: 2\n", base);
	assert_int_equal(fires_at(text, 2, "cp.requires_flash_attention"), 10);
	snprintf(text, sizeof(text), "%s%s", base, kernels);
	assert_int_equal(fires_at(text, 1, "lora_kernels.trust_remote_code"), 10);
	snprintf(text, sizeof(text), "%s%suse_dsv4_kernels: true\n", base,
	    kernels);
	assert_int_equal(fires_at(text, 1, "lora_kernels.trust_remote_code"), 0);
}

/* Misspellings from the corpus and common ones get the right key. */
static void
test_rules__typos_get_the_right_suggestion(void **state)
{
	static const char *const typos[][2] = {
		{ "context_parapllel_size", "context_parallel_size" },
		{ "gradient_acumulation_steps", "gradient_accumulation_steps" },
		{ "micro_batchsize", "micro_batch_size" },
		{ "sequence_length", "sequence_len" },
		{ "learning_rte", "learning_rate" },
		{ "lora_alpah", "lora_alpha" },
		{ "lora_dropuot", "lora_dropout" },
		{ "num_epoch", "num_epochs" },
		{ "warmup_step", "warmup_steps" },
		{ "gradient_checkpointng", "gradient_checkpointing" },
		{ "sample_paking", "sample_packing" },
		{ "flash_atention", "flash_attention" },
		{ "deepspeeed", "deepspeed" },
		{ "fsdp_confg", "fsdp_config" },
		{ "tensor_paralel_size", "tensor_parallel_size" },
		{ "dp_shard_sise", "dp_shard_size" },
		{ "optimzer", "optimizer" },
		{ "lr_schedular", "lr_scheduler" },
		{ "base_modle", "base_model" },
		{ "output_dri", "output_dir" },
		{ "load_in_4bits", "load_in_4bit" },
		{ "pad_to_sequence_length", "pad_to_sequence_len" },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(typos) / sizeof(typos[0]); i++) {
		const char *s = schema_suggest(typos[i][0]);

		if (s == NULL || strcmp(s, typos[i][1]) != 0)
			fail_msg("%s: suggested %s, want %s", typos[i][0],
			    s != NULL ? s : "(none)", typos[i][1]);
	}
	assert_null(schema_suggest("provider"));
	assert_null(schema_suggest("xyzzy"));
}

/* Optimal string alignment distance, the whole table: the reference
   schema_suggest's band, early exit and letter floor must agree with. */
static unsigned
osa_full(const char *a, const char *b)
{
	static unsigned d[65][65];
	size_t la = strlen(a), lb = strlen(b), i, j;

	if (la > 64 || lb > 64)
		return 1000;
	for (i = 0; i <= la; i++)
		d[i][0] = (unsigned)i;
	for (j = 0; j <= lb; j++)
		d[0][j] = (unsigned)j;
	for (i = 1; i <= la; i++)
		for (j = 1; j <= lb; j++) {
			unsigned best = d[i - 1][j] + 1;

			if (d[i][j - 1] + 1 < best)
				best = d[i][j - 1] + 1;
			if (d[i - 1][j - 1] + (a[i - 1] != b[j - 1]) < best)
				best = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] &&
			    a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < best)
				best = d[i - 2][j - 2] + 1;
			d[i][j] = best;
		}
	return d[la][lb];
}

/* schema_suggest's contract by brute force (config.h). */
static const char *
suggest_ref(const char *key)
{
	size_t i, len = strlen(key);
	unsigned best = 1000, limit = len < 6 ? 1 : len < 16 ? 2 : 3, dd;
	const char *hit = NULL;

	for (i = 0; i < keys_table_len; i++) {
		const char *k = keys_table[i].key;
		size_t kl = strlen(k);

		if (kl >= 8 && len > kl && len - kl <= 4 &&
		    strncmp(key, k, kl) == 0)
			dd = limit;
		else if ((kl > len ? kl - len : len - kl) > limit)
			continue;	/* plainly more than limit apart */
		else
			dd = osa_full(key, k);
		if (dd < best) {
			best = dd;
			hit = k;
		}
	}
	return best <= limit ? hit : NULL;
}

static void
test_rules__suggestion_equals_brute_force(void **state)
{
	static const char alphabet[] = "abcdefghijklmnopqrstuvwxyz_0123456789";
	uint64_t x = 0x9e3779b97f4a7c15ULL;
	char key[80];
	size_t i, n, at, len, checked = 0;
	const char *want, *got;

	(void)state;
	/* Every known key, each with one or two random edits, and random
	   strings: what the filtered search finds, the full one finds. */
	for (i = 0; i < keys_table_len * 3 + 2000; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		if (i < keys_table_len * 3) {
			snprintf(key, sizeof(key), "%s",
			    keys_table[i / 3].key);
			for (n = 0; n <= (i % 3) / 2; n++) {
				len = strlen(key);
				at = (size_t)(x >> 8) % (len + 1);
				switch ((x >> 20) % 4) {
				case 0:	/* delete */
					if (at < len)
						memmove(key + at, key + at + 1,
						    len - at);
					break;
				case 1:	/* insert */
					if (len + 1 < sizeof(key)) {
						memmove(key + at + 1, key + at,
						    len - at + 1);
						key[at] = alphabet[(x >> 32) %
						    (sizeof(alphabet) - 1)];
					}
					break;
				case 2:	/* substitute */
					if (at < len)
						key[at] = alphabet[(x >> 32) %
						    (sizeof(alphabet) - 1)];
					break;
				default:	/* swap */
					if (at + 1 < len) {
						char c = key[at];

						key[at] = key[at + 1];
						key[at + 1] = c;
					}
				}
				x = x * 6364136223846793005ULL + 1;
			}
		} else {
			len = 1 + (size_t)(x >> 40) % 30;
			for (n = 0; n < len; n++)
				key[n] = alphabet[(x >> (n % 50)) %
				    (sizeof(alphabet) - 1)];
			key[len] = '\0';
		}
		if (key[0] == '\0')
			continue;
		want = suggest_ref(key);
		got = schema_suggest(key);
		if ((want == NULL) != (got == NULL) ||
		    (want != NULL && strcmp(want, got) != 0))
			fail_msg("%s: suggested %s, brute force %s", key,
			    got != NULL ? got : "(none)",
			    want != NULL ? want : "(none)");
		checked++;
	}
	assert_true(checked > keys_table_len * 2);
}

/* Whether checking "base_model: x\n<key>: <value>\n" reports key with
   rule. */
static bool
key_reported(const char *key, const char *value, const char *rule)
{
	struct context ctx;
	struct limits lim;
	struct arena a;
	struct err e = { 0 };
	struct report *r;
	char text[512];
	size_t i;
	bool hit = false;
	int n = snprintf(text, sizeof(text), "base_model: x\n%s: %s\n", key,
	    value);

	context_default(&ctx);
	limits_default(&lim);
	arena_init(&a, (size_t)64 << 20);
	if (check_run(&r, text, (size_t)n, &ctx, &lim, &a, &e) != 0)
		fail_msg("%s: %s", key, e.msg);
	for (i = 0; i < r->nfindings; i++)
		if (strcmp(r->findings[i].rule, rule) == 0 &&
		    strcmp(r->findings[i].path, key) == 0)
			hit = true;
	arena_fini(&a);
	return hit;
}

/* schema_check finds every key and alias through its process-wide index,
   with its type: none is unknown, a list is refused where the type takes
   no list, and a key nobody knows is still unknown. */
static void
test_rules__every_key_and_alias_is_known(void **state)
{
	size_t i, aliases = 0;

	(void)state;
	for (i = 0; i < keys_table_len; i++) {
		const struct key_def *k = &keys_table[i];

		if (key_reported(k->key, "null",
		    "schema.unknown_key_dropped"))
			fail_msg("%s reported unknown", k->key);
		if (k->alias != NULL) {
			aliases++;
			if (key_reported(k->alias, "null",
			    "schema.unknown_key_dropped"))
				fail_msg("alias %s reported unknown", k->alias);
		}
	}
	assert_true(aliases > 0);
	assert_true(key_reported("sequence_len", "[1, 2]", "schema.type"));
	assert_true(key_reported("learning_rate", "{a: 1}", "schema.type"));
	assert_false(key_reported("learning_rate", "0.0002", "schema.type"));
	assert_true(key_reported("not_an_axolotl_key", "1",
	    "schema.unknown_key_dropped"));
}

/*
 * Axolotl's own verdicts (shared/corpus/axolotl-verdicts.tsv): every
 * rejection gets an error finding - in scope or not, since every validator
 * Axolotl runs is modelled (docs/compat.md; the 12 rows the verdicts call
 * out of scope are method checks and Axolotl's own EBFT crash, which
 * rl.ebft_refused reports); every config Axolotl accepts at a world size
 * gets none there (memory.* findings are the estimator's) but the
 * launch-time failures docs/compat.md lists.
 */
struct verdict_row {
	char file[256];
	bool accept[2];		/* at 1 and at 8 GPUs */
	bool in_scope;
	char name[320];
};

/* docs/compat.md: accepted configs preflight fails on purpose. */
struct compat {
	char file[256];
	long gpus;
	char rule[96];
};

static struct compat compat[64];
static size_t ncompat;

static int
load_compat(void)
{
	char *text = fixture_read("docs/compat.md", NULL), *p;

	if (text == NULL)
		return -1;
	for (p = text; p != NULL && *p != '\0';) {
		char *nl = strchr(p, '\n');

		if (nl != NULL)
			*nl = '\0';
		if (strncmp(p, "| examples/", 11) == 0 && ncompat < 64) {
			struct compat *c = &compat[ncompat];

			if (sscanf(p, "| %255s | %ld | %95s |", c->file, &c->gpus,
			    c->rule) == 3)
				ncompat++;
		}
		p = nl != NULL ? nl + 1 : NULL;
	}
	free(text);
	return 0;
}

/* The rule compat.md allows for (file, gpus), or NULL. */
static const char *
compat_rule(const char *file, long gpus)
{
	size_t i;

	for (i = 0; i < ncompat; i++)
		if (strcmp(compat[i].file, file) == 0 && compat[i].gpus == gpus)
			return compat[i].rule;
	return NULL;
}

/*
 * Does the check of rel at gpus have an error?  With allowed, errors of
 * that rule do not count, and *seen says whether it fired.
 */
static bool
has_error_but(const char *rel, long gpus, const char *allowed, bool *seen)
{
	struct context ctx;
	struct limits lim;
	struct arena a;
	struct err e = { 0 };
	struct report *r;
	char path[512], *text;
	size_t len, i;
	bool err = false;

	snprintf(path, sizeof(path), "%s/corpus/axolotl/%s",
	    fixture_shared(), rel);
	text = fixture_read(path, &len);
	if (text == NULL)
		fail_msg("missing %s", path);
	context_default(&ctx);
	ctx.gpus = gpus;
	limits_default(&lim);
	arena_init(&a, (size_t)64 << 20);
	if (check_run(&r, text, len, &ctx, &lim, &a, &e) != 0)
		fail_msg("%s: %s", rel, e.msg);
	for (i = 0; i < r->nfindings; i++) {
		if (r->findings[i].severity != SEV_ERROR ||
		    strncmp(r->findings[i].rule, "memory.", 7) == 0)
			continue;
		if (allowed != NULL && strcmp(r->findings[i].rule, allowed) == 0)
			*seen = true;
		else
			err = true;
	}
	arena_fini(&a);
	free(text);
	return err;
}

static void
test_rules__agrees_with_axolotl(void **state)
{
	const struct verdict_row *v = *state;
	static const long ws[2] = { 1, 8 };
	int k;

	for (k = 0; k < 2; k++) {
		const char *allowed = compat_rule(v->file, ws[k]);
		bool seen = false;
		bool err = has_error_but(v->file, ws[k], v->accept[k] ? allowed :
		    NULL, &seen);

		if (allowed != NULL && v->accept[k] && !seen)
			fail_msg("%s: docs/compat.md expects %s at %ld GPUs, "
			    "it did not fire", v->file, allowed, ws[k]);
		if (v->accept[k] && err)
			fail_msg("%s: Axolotl accepts it at %ld GPUs, "
			    "preflight reports an error", v->file, ws[k]);
		if (!v->accept[k] && !err)
			fail_msg("%s: Axolotl rejects it at %ld GPUs (%s), "
			    "preflight reports no error", v->file, ws[k],
			    v->in_scope ? "in scope" : "out of scope");
	}
}

static struct verdict_row *
load_verdicts(size_t *n)
{
	char path[512], *text, *p;
	struct verdict_row *rows = NULL;
	size_t cap = 0;

	*n = 0;
	snprintf(path, sizeof(path), "%s/corpus/axolotl-verdicts.tsv",
	    fixture_shared());
	text = fixture_read(path, NULL);
	if (text == NULL)
		return NULL;
	for (p = text; p != NULL && *p != '\0';) {
		char *nl = strchr(p, '\n'), *f[5];
		int i;

		if (nl != NULL)
			*nl = '\0';
		f[0] = p;
		p = nl != NULL ? nl + 1 : NULL;
		if (f[0][0] == '#' || strncmp(f[0], "file\t", 5) == 0)
			continue;
		for (i = 1; i < 5; i++) {
			f[i] = f[i - 1] != NULL ? strchr(f[i - 1], '\t') : NULL;
			if (f[i] != NULL)
				*f[i]++ = '\0';
		}
		if (f[4] == NULL)
			continue;
		if (*n == cap) {
			struct verdict_row *g;

			cap = cap == 0 ? 256 : cap * 2;
			g = realloc(rows, cap * sizeof(*rows));
			if (g == NULL)
				break;
			rows = g;
		}
		snprintf(rows[*n].file, sizeof(rows[*n].file), "%s", f[0]);
		rows[*n].accept[0] = strcmp(f[1], "accept") == 0;
		rows[*n].accept[1] = strcmp(f[2], "accept") == 0;
		rows[*n].in_scope = strcmp(f[4], "yes") == 0;
		snprintf(rows[*n].name, sizeof(rows[*n].name),
		    "test_rules__agrees_with_axolotl[%s]", f[0]);
		(*n)++;
	}
	free(text);
	return rows;
}

/*
 * A stage that runs out of request memory says where (issue #20's one
 * error convention).  The document and plan of one check, then the schema
 * pass and the rule pass alone over arenas of every budget from 0 bytes up
 * (16-byte steps) until one suffices: each failure is ERR_NOMEM with
 * "request memory budget spent while ..." set by the stage; the schema
 * pass names the key (with its line and path), the rule pass the rule that
 * was running.  Exact budgets, so the same under both allocators.
 */
static void
test_rules__out_of_memory_says_where(void **state)
{
	static const char text[] =
	    "base_model: NousResearch/Llama-3.2-1B\n"
	    "adaptr: lora\n"
	    "learning_rat: 0.0002\n"
	    "deepspeed: deepspeed_configs/zero3.json\n"
	    "fsdp_version: 2\n"
	    "fsdp_config:\n  offload_params: true\n"
	    "micro_batch_size: 2\n"
	    "warmup_steps: 10\n"
	    "warmup_ratio: 0.1\n"
	    "sequence_len: 4096\n"
	    "datasets:\n  - path: a/b\n    type: alpaca\n";
	struct context ctx;
	struct limits lim;
	struct arena big;
	struct err e0 = { 0 };
	struct report *whole;
	bool saw_key = false, saw_rule = false;
	int stage;

	(void)state;
	context_default(&ctx);
	ctx.gpus = 8;
	limits_default(&lim);
	arena_init(&big, (size_t)64 << 20);
	assert_int_equal(check_run(&whole, text, sizeof(text) - 1, &ctx, &lim,
	    &big, &e0), 0);
	for (stage = 0; stage < 2; stage++) {
		size_t cap;
		int rv = ERR_NOMEM;

		for (cap = 0; rv != 0 && cap < ((size_t)4 << 20); cap += 16) {
			struct report r = { .ctx = whole->ctx,
			    .doc = whole->doc, .plan = whole->plan };
			struct err e = { 0 };
			struct arena a;

			arena_init(&a, cap);
			rv = stage == 0 ? schema_check(&r, whole->doc, &a, &e) :
			    rules_run(&r, whole->doc, &r.ctx, whole->plan, &a,
			    &e);
			arena_fini(&a);
			if (rv == 0)
				break;
			assert_int_equal(rv, ERR_NOMEM);
			assert_int_equal(e.code, ERR_NOMEM);
			assert_non_null(strstr(e.msg, "request memory budget "
			    "spent while "));
			if (strstr(e.msg, "while checking key '") != NULL) {
				saw_key = true;
				assert_true(e.loc.line >= 1);
				assert_true(e.loc.path[0] != '\0');
			}
			if (strstr(e.msg, "while running rule ") != NULL) {
				saw_rule = true;
				assert_non_null(rules_find(strstr(e.msg,
				    "rule ") + 5));
			}
		}
		assert_int_equal(rv, 0);
	}
	arena_fini(&big);
	assert_true(saw_key);
	assert_true(saw_rule);
}

int
main(void)
{
	static const struct CMUnitTest fixed[] = {
		cmocka_unit_test(test_rules__ids_unique_sorted_complete),
		cmocka_unit_test(test_rules__typos_get_the_right_suggestion),
		cmocka_unit_test(test_rules__suggestion_equals_brute_force),
		cmocka_unit_test(test_rules__every_key_and_alias_is_known),
		cmocka_unit_test(test_rules__catalog_covers_rules_md),
		cmocka_unit_test(test_rules__pyre_matches_python),
		cmocka_unit_test(test_rules__renamed_keys_are_mapped),
		cmocka_unit_test(test_rules__values_as_pydantic_parses_them),
		cmocka_unit_test(test_rules__values_the_before_validators_set),
		cmocka_unit_test(test_rules__out_of_memory_says_where),
	};
	const struct rule_def *all;
	struct CMUnitTest *t;
	char (*names)[128];
	size_t n, nf = sizeof(fixed) / sizeof(fixed[0]), i, k = 0;
	int failed;

	struct verdict_row *vrows;
	char dir[1024];
	size_t nv, j;

	/* One verdict row per example config on disk. */
	snprintf(dir, sizeof(dir), "%s/corpus/axolotl/examples",
	    fixture_shared());
	vrows = load_verdicts(&nv);
	if (vrows == NULL || nv == 0 || nv != fixture_count_configs(dir) ||
	    load_compat() != 0) {
		fprintf(stderr, "test_rules: cannot read the verdicts, or "
		    "they do not cover every example config\n");
		return 1;
	}
	all = rules_all(&n);
	t = calloc(nf + 2 * n + nv, sizeof(*t));
	names = calloc(2 * n, sizeof(*names));
	if (t == NULL || names == NULL)
		return 1;
	for (i = 0; i < nf; i++)
		t[k++] = fixed[i];
	for (i = 0; i < n; i++) {
		/* policy.* needs a policy: tests/test_policy.c. */
		if (strncmp(all[i].id, "policy.", 7) == 0)
			continue;
		snprintf(names[2 * i], sizeof(names[0]),
		    "test_rules__pass_fixture[%s]", all[i].id);
		snprintf(names[2 * i + 1], sizeof(names[0]),
		    "test_rules__fail_fixture[%s]", all[i].id);
		t[k].name = names[2 * i];
		t[k].test_func = test_rules__pass_fixture_has_no_finding;
		t[k++].initial_state = (void *)(uintptr_t)&all[i];
		t[k].name = names[2 * i + 1];
		t[k].test_func = test_rules__fail_fixture_fires_where_marked;
		t[k++].initial_state = (void *)(uintptr_t)&all[i];
	}
	for (j = 0; j < nv; j++) {
		t[k].name = vrows[j].name;
		t[k].test_func = test_rules__agrees_with_axolotl;
		t[k++].initial_state = &vrows[j];
	}
	failed = _cmocka_run_group_tests("rules", t, k, NULL, NULL);
	free(t);
	free(names);
	free(vrows);
	return failed;
}
