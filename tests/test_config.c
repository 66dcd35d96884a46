/*
 * tests/test_config: annotation parsing and pydantic's lax coercion
 * (tests/fixtures/config/coercion.tsv, generated with pydantic by
 * tests/gen/coercion.py), and the typed-config rules over documents.
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
#include "core/keys.h"
#include "core/types.h"
#include "tests/fixture.h"

struct row {
	char *type;
	char *value;
	int ok;
	char name[160];
};

static struct row *rows;
static size_t nrows;
static char *file;

static int
load(void)
{
	char *p, *f[3];
	size_t cap = 0, k;

	file = fixture_read("tests/fixtures/config/coercion.tsv", NULL);
	if (file == NULL)
		return -1;
	p = file;
	while ((k = fixture_tsv_next(&p, f, 3)) > 0) {
		if (k < 3)
			return -1;
		if (nrows == cap) {
			struct row *nr;

			cap = cap == 0 ? 256 : cap * 2;
			nr = realloc(rows, cap * sizeof(*rows));
			if (nr == NULL)
				return -1;
			rows = nr;
		}
		rows[nrows].type = f[0];
		rows[nrows].value = f[1];
		rows[nrows].ok = f[2][0] == '1';
		snprintf(rows[nrows].name, sizeof(rows[nrows].name),
		    "test_config__coerces_like_pydantic[%.60s <- %.40s]", f[0],
		    f[1]);
		nrows++;
	}
	return 0;
}

static void
test_config__coerces_like_pydantic(void **state)
{
	const struct row *r = *state;
	struct limits lim;
	struct arena a;
	struct err e = { 0 };
	struct doc *d;
	struct ty *t;
	char yaml[256];

	limits_default(&lim);
	arena_init(&a, 1 << 20);
	t = ty_parse(r->type, &a);
	if (t == NULL)
		fail_msg("cannot parse type '%s'", r->type);
	snprintf(yaml, sizeof(yaml), "v: %s\n", r->value);
	assert_int_equal(doc_parse(&d, yaml, strlen(yaml), &lim, &a, &e), 0);
	if (ty_accepts(t, d->root->pairs[0].value) != (r->ok != 0))
		fail_msg("%s <- %s: preflight says %s, pydantic %s", r->type,
		    r->value, r->ok ? "invalid" : "valid",
		    r->ok ? "valid" : "invalid");
	arena_fini(&a);
}

/* Every annotation in the key tables parses. */
static void
test_config__every_key_type_parses(void **state)
{
	struct arena a;
	size_t i, unparsed = 0;

	(void)state;
	arena_init(&a, (size_t)16 << 20);
	for (i = 0; i < keys_table_len; i++)
		if (ty_parse(keys_table[i].type, &a) == NULL) {
			print_error("unparsed: %s: %s\n", keys_table[i].key,
			    keys_table[i].type);
			unparsed++;
		}
	arena_fini(&a);
	assert_int_equal(unparsed, 0);
}

static void
test_config__describes_types(void **state)
{
	struct arena a;
	char buf[200];

	(void)state;
	arena_init(&a, 1 << 20);
	ty_describe(buf, sizeof(buf), ty_parse(
	    "Union[Literal['auto'], bool, NoneType]", &a));
	assert_string_equal(buf, "one of 'auto', a boolean or null");
	ty_describe(buf, sizeof(buf), ty_parse("list[str] | None", &a));
	assert_string_equal(buf, "a list of a string or null");
	arena_fini(&a);
}

/*
 * Values below the top level, and constraints, the way pydantic checks
 * them (each row's verdict and the place pydantic names were checked with
 * ../shared/tools/axolotl-oracle when written): nested models, enum
 * members, MinLen, ge/le, a '^prefix' pattern, fsdp_config with the fsdp_
 * prefix dropped, datasets entries as the model validate_config builds,
 * plugin models only with the plugin.
 */
static void
test_config__nested_models_like_pydantic(void **state)
{
	static const char base[] =
	    "base_model: HuggingFaceTB/SmolLM2-135M\n"
	    "learning_rate: 1.0e-4\n"
	    "micro_batch_size: 1\n"
	    "gradient_accumulation_steps: 1\n";	/* 4 lines */
	static const char ds[] = "datasets:\n  - path: a/b\n    type: "
	    "alpaca\n";				/* 3 lines */
	static const struct {
		const char *body;	/* after base (and ds unless it has
					   datasets:) */
		unsigned line;		/* the schema.type error, 0: none */
	} cases[] = {
		{ "trl:\n  beta: fast\n", 9 },
		{ "trl:\n  beta: 0.1\n  num_generations: 4\n", 0 },
		{ "fsdp_version: 2\nfsdp_config:\n  fsdp_offload_params: "
		  "maybe\n", 10 },
		{ "fsdp_version: 2\nfsdp_config:\n  fsdp_offload_params: "
		  "true\n", 0 },
		{ "fsdp_version: 2\nfsdp_config:\n  min_num_params: 0\n"
		  "  auto_wrap_policy: SIZE_BASED_WRAP\n", 10 },
		/* A truthy nested version replaces fsdp_version when the
		   top level has none; a falsy nested fsdp_version becomes 1. */
		{ "fsdp_config:\n  fsdp_version: 2\n  version: int8\n", 10 },
		{ "fsdp_version: 2\nfsdp_config:\n  version: int8\n"
		  "  offload_params: true\n", 0 },
		{ "fsdp_config:\n  fsdp_version: \"\"\n  offload_params: "
		  "true\n", 0 },
		{ "rl: bogus\n", 8 },
		{ "rl: orpo\n", 0 },
		{ "chat_template: my_template\n", 8 },
		{ "chat_template: tokenizer_default_fallback_chatml\n", 0 },
		{ "test_datasets: []\n", 8 },
		{ "relora_prune_ratio: 1.5\n", 8 },
		{ "relora_prune_ratio: 0.5\n", 0 },
		{ "datasets:\n  - path: a/b\n    type: alpaca\n    shards: "
		  "many\n", 8 },
		{ "rl: dpo\ndatasets:\n  - path: a/b\n    split: train\n", 0 },
		{ "lr_groups:\n  - name: head\n    lr: 1.0e-5\n", 9 },
		{ "plugins:\n  - axolotl.integrations.mora.MoraPlugin\nmora:\n"
		  "  mora_type: 1\n", 0 },
		{ "plugins:\n  - axolotl.integrations.mora.MoraPlugin\nmora:\n"
		  "  mora_type: 2\n", 11 },
		{ "plugins:\n  - axolotl.integrations.hatchery.HatcheryPlugin\n"
		  "hatchery:\n  lora_rank: 512\n", 11 },
		/* A datasets type may be the user-defined prompt model
		   (UserDefinedPrompterType / DPOType / KTOType). */
		{ "datasets:\n  - path: a/b\n    type:\n      "
		  "field_instruction: q\n      format: '[INST] {instruction}'\n",
		  0 },
		{ "datasets:\n  - path: a/b\n    type:\n      "
		  "field_instruction: [a, b]\n", 8 },
		{ "datasets:\n  - path: a/b\n    type: 3\n", 7 },
		/* Never type-checked: the legacy attention flags are mapped
		   to attn_implementation and popped before validation, and
		   the CLI sets axolotl_config_path to the file's path (each
		   row checked with the oracle). */
		{ "flash_attention: maybe\n", 0 },
		{ "sdp_attention: 2\n", 0 },
		{ "xformers_attention: [1]\n", 0 },
		{ "axolotl_config_path: [x]\n", 0 },
		{ "attn_implementation: [x]\n", 8 },
		/* dataset_processes beside dataset_num_proc is deleted; alone
		   it is checked (as dataset_num_proc, the same int). */
		{ "dataset_processes: abc\ndataset_num_proc: 4\n", 0 },
		{ "dataset_processes: abc\n", 8 },
		{ "rl: dpo\ndatasets:\n  - path: a/b\n    type:\n      "
		  "field_prompt: prompt\n", 0 },
		{ "rl: dpo\ndatasets:\n  - path: a/b\n    type:\n      "
		  "field_prompt: {x: 1}\n", 9 },
		{ "rl: kto\nremove_unused_columns: false\ndatasets:\n  - path: "
		  "a/b\n    type:\n      field_prompt: p\n      field_label: "
		  "3\n", 11 },
	};
	size_t i, k;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct context ctx;
		struct limits lim;
		struct arena a;
		struct err e = { 0 };
		struct report *r;
		char text[1024];
		unsigned got = 0;
		int n = snprintf(text, sizeof(text), "%s%s%s", base,
		    strncmp(cases[i].body, "datasets:", 9) == 0 ||
		    strstr(cases[i].body, "\ndatasets:") != NULL ? "" : ds,
		    cases[i].body);

		context_default(&ctx);
		limits_default(&lim);
		arena_init(&a, (size_t)64 << 20);
		if (check_run(&r, text, (size_t)n, &ctx, &lim, &a, &e) != 0)
			fail_msg("row %zu: %s", i, e.msg);
		for (k = 0; k < r->nfindings && got == 0; k++)
			if (strcmp(r->findings[k].rule, "schema.type") == 0)
				got = r->findings[k].line;
		if (got != cases[i].line)
			fail_msg("row %zu (%s): schema.type at line %u, want %u",
			    i, cases[i].body, got, cases[i].line);
		arena_fini(&a);
	}
}

int
main(void)
{
	static const struct CMUnitTest fixed[] = {
		cmocka_unit_test(test_config__every_key_type_parses),
		cmocka_unit_test(test_config__describes_types),
		cmocka_unit_test(test_config__nested_models_like_pydantic),
	};
	struct CMUnitTest *t;
	size_t nf = sizeof(fixed) / sizeof(fixed[0]), i, n = 0;
	int failed;

	if (load() != 0 || nrows < 100) {
		fprintf(stderr, "test_config: cannot read coercion.tsv\n");
		return 1;
	}
	t = calloc(nf + nrows, sizeof(*t));
	if (t == NULL)
		return 1;
	for (i = 0; i < nf; i++)
		t[n++] = fixed[i];
	for (i = 0; i < nrows; i++) {
		t[n].name = rows[i].name;
		t[n].test_func = test_config__coerces_like_pydantic;
		t[n++].initial_state = &rows[i];
	}
	failed = _cmocka_run_group_tests("config", t, n, NULL, NULL);
	free(t);
	free(rows);
	free(file);
	return failed;
}
