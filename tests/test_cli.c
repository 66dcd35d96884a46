/*
 * tests/test_cli: `preflight check` and `preflight version` from the
 * outside: exit codes, stdout and stderr as DESIGN.md's CLI contract says.
 */
#include <dirent.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "tests/fixture.h"

#define MAX_ARGS 400

static char *args[MAX_ARGS];
static int nargs;

static void
arg_reset(void)
{
	nargs = 0;
	args[nargs++] = (char *)(uintptr_t)fixture_bin();
	args[nargs] = NULL;
}

static void
arg(const char *s)
{
	assert_true(nargs + 1 < MAX_ARGS);
	args[nargs++] = (char *)(uintptr_t)s;
	args[nargs] = NULL;
}

static void
run(struct run *r, const char *stdin_path)
{
	assert_int_equal(fixture_run(r, args, stdin_path), 0);
}

static char corpus_paths[300][512];
static int ncorpus;

static void
collect(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *ent;

	assert_non_null(d);
	while ((ent = readdir(d)) != NULL) {
		char sub[512];
		size_t l = strlen(ent->d_name);

		if (ent->d_name[0] == '.')
			continue;
		snprintf(sub, sizeof(sub), "%s/%s", dir, ent->d_name);
		if ((l > 5 && strcmp(ent->d_name + l - 5, ".yaml") == 0) ||
		    (l > 4 && strcmp(ent->d_name + l - 4, ".yml") == 0)) {
			assert_true(ncorpus < 300);
			memcpy(corpus_paths[ncorpus++], sub, sizeof(sub));
		} else if (ent->d_type == DT_DIR) {
			collect(sub);
		}
	}
	closedir(d);
}

/*
 * All 252 examples in one process: a JSON array of 252 reports, each with
 * its file, and the exit code is 1 exactly when some report fails (and
 * only the configs Axolotl itself rejects fail).
 */
static void
test_cli__all_corpus_configs_give_a_json_array(void **state)
{
	char dir[512];
	struct run r;
	json_t *j;
	json_error_t jerr;
	size_t i, fails = 0;
	int k;

	(void)state;
	snprintf(dir, sizeof(dir), "%s/corpus/axolotl/examples",
	    fixture_shared());
	ncorpus = 0;
	collect(dir);
	assert_int_equal(ncorpus, 252);
	arg_reset();
	arg("check");
	for (k = 0; k < ncorpus; k++)
		arg(corpus_paths[k]);
	arg("--format");
	arg("json");
	run(&r, NULL);
	assert_int_equal(r.err_len, 0);
	j = json_loads(r.out, 0, &jerr);
	if (j == NULL)
		fail_msg("not JSON: %s", jerr.text);
	assert_true(json_is_array(j));
	assert_int_equal(json_array_size(j), 252);
	for (i = 0; i < json_array_size(j); i++) {
		json_t *rep = json_array_get(j, i);
		const char *v = json_string_value(json_object_get(rep,
		    "verdict"));

		assert_string_equal(json_string_value(json_object_get(rep,
		    "file")), corpus_paths[i]);
		assert_int_equal(strlen(json_string_value(json_object_get(rep,
		    "config_sha256"))), 64);
		if (strcmp(v, "fail") == 0)
			fails++;
	}
	assert_int_equal(r.status, fails > 0 ? 1 : 0);
	json_decref(j);
	fixture_run_free(&r);
}

/* The last sequence_len wins; 2 x 1024 tokens keep the run far from an
   H100's capacity, so the duplicate is the only warning. */
static const char dup_yaml[] =
    "base_model: meta-llama/Llama-3.1-8B\n"
    "sequence_len: 2048\n"
    "micro_batch_size: 2\n"
    "sequence_len: 1024\n"
    "gradient_accumulation_steps: 4\n"
    "adapter: lora\n"
    "lora_r: 8\n"
    "lora_target_linear: true\n"
    "datasets:\n"
    "  - path: tatsu-lab/alpaca\n"
    "    type: alpaca\n";

static void
test_cli__text_is_compiler_style(void **state)
{
	char path[256], want[4096];
	struct run r;

	(void)state;
	assert_int_equal(fixture_write_tmp(path, sizeof(path), dup_yaml,
	    sizeof(dup_yaml) - 1), 0);
	arg_reset();
	arg("check");
	arg(path);
	run(&r, NULL);
	unlink(path);
	assert_int_equal(r.status, 0);
	snprintf(want, sizeof(want),
	    "%s:1:1: info: no dataloader settings: Axolotl uses 1 worker, "
	    "pinned memory and prefetch 256 [batch.dataloader_defaults]\n"
	    "%s:1:1: info: eval_batch_size is unset: Axolotl uses "
	    "micro_batch_size (2) [batch.eval_batch_size_default]\n"
	    "%s:1:1: info: bf16: auto resolves to bf16 on h100-sxm "
	    "[precision.bf16_auto_resolution]\n"
	    "%s:1:1: info: tf32: auto resolves to true on h100-sxm "
	    "[precision.tf32_auto]\n"
	    "%s:4:1: warning: key 'sequence_len' appears twice (first at "
	    "line 2) [schema.duplicate_key]\n"
	    "%s:6:1: info: Axolotl turns the LoRA kernels on "
	    "(lora_mlp/qkv/o/embedding_kernel) [lora_kernels.auto_enable]\n"
	    "%s: warn (0 errors, 1 warning, 5 info) on 1 x h100-sxm\n",
	    path, path, path, path, path, path, path);
	assert_string_equal(r.out, want);
	assert_null(strchr(r.out, '\033'));
	assert_int_equal(r.err_len, 0);
	fixture_run_free(&r);
}

/* --gpu-memory-gib, --host-memory-gib and --dataset-tokens reach the
   estimate: a 16 GiB card cannot hold what fits an H100, and the epoch
   time is the dataset over the throughput. */
static void
test_cli__estimate_context_flags(void **state)
{
	char path[256];
	struct run r;
	json_t *j, *est, *tp;

	(void)state;
	assert_int_equal(fixture_write_tmp(path, sizeof(path), dup_yaml,
	    sizeof(dup_yaml) - 1), 0);
	arg_reset();
	arg("check");
	arg(path);
	arg("--format");
	arg("json");
	arg("--gpu-memory-gib");
	arg("16");
	arg("--dataset-tokens");
	arg("100000000");
	run(&r, NULL);
	unlink(path);
	assert_int_equal(r.status, 1);
	j = json_loads(r.out, 0, NULL);
	assert_non_null(j);
	est = json_object_get(j, "estimate");
	assert_true(json_number_value(json_object_get(json_object_get(est,
	    "memory"), "capacity_gib")) == 16.0);
	assert_true(json_is_false(json_object_get(json_object_get(est,
	    "memory"), "fits")));
	tp = json_object_get(est, "throughput");
	assert_true(fabs(json_number_value(json_object_get(tp,
	    "epoch_time_s")) - 1e8 / json_number_value(json_object_get(tp,
	    "tokens_per_second"))) < 0.01 * json_number_value(
	    json_object_get(tp, "epoch_time_s")));
	assert_true(json_array_size(json_object_get(j, "suggestions")) > 0);
	json_decref(j);
	fixture_run_free(&r);
}

static void
test_cli__stdin_dash_reads_standard_input(void **state)
{
	char path[256];
	struct run r;
	json_t *j;

	(void)state;
	assert_int_equal(fixture_write_tmp(path, sizeof(path), dup_yaml,
	    sizeof(dup_yaml) - 1), 0);
	arg_reset();
	arg("check");
	arg("-");
	arg("--format");
	arg("json");
	arg("--world-size");
	arg("4");
	run(&r, path);
	unlink(path);
	assert_int_equal(r.status, 0);
	j = json_loads(r.out, 0, NULL);
	assert_non_null(j);
	assert_string_equal(json_string_value(json_object_get(j, "file")),
	    "-");
	assert_string_equal(json_string_value(json_object_get(j, "verdict")),
	    "warn");
	assert_int_equal(json_integer_value(json_object_get(
	    json_object_get(j, "context"), "gpus")), 4);
	json_decref(j);
	fixture_run_free(&r);
}

static void
test_cli__version_names_the_axolotl_commit(void **state)
{
	struct run r;

	(void)state;
	arg_reset();
	arg("version");
	run(&r, NULL);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out,
	    "067b021c8b87a9e5e380b9173c704cf7340e30f5"));
	assert_true(strncmp(r.out, "preflight ", 10) == 0);
	fixture_run_free(&r);
}

/* Bad invocations: exit 2 and a message that names the problem. */
struct bad_call {
	const char *name;
	const char *argv[6];
	const char *msg;
};

static const struct bad_call bad_calls[] = {
	{ "missing_file", { "check", "/nonexistent/x.yaml" },
	  "/nonexistent/x.yaml: error: cannot read" },
	{ "unknown_gpu", { "check", "-", "--gpu", "h900" },
	  "unknown gpu 'h900'; known ids: h100-sxm" },
	{ "zero_gpus", { "check", "-", "--gpus", "0" },
	  "--gpus must be an integer" },
	{ "gpus_not_number", { "check", "-", "--gpus", "8x" },
	  "--gpus must be an integer" },
	{ "nodes_do_not_divide", { "check", "-", "--gpus", "6", "--nodes",
	  "4" }, "gpus (6) must be a multiple of nodes (4)" },
	{ "unknown_format", { "check", "-", "--format", "xml" },
	  "--format must be" },
	{ "bad_interconnect", { "check", "-", "--interconnect", "smoke" },
	  "interconnect must be" },
	{ "gpu_memory_not_number", { "check", "-", "--gpu-memory-gib",
	  "lots" }, "--gpu-memory-gib must be a number of GiB" },
	{ "host_memory_negative", { "check", "-", "--host-memory-gib",
	  "-4" }, "--host-memory-gib must be a number of GiB" },
	{ "dataset_tokens_zero", { "check", "-", "--dataset-tokens", "0" },
	  "--dataset-tokens must be a positive integer" },
	{ "no_file", { "check" }, "no config given" },
	{ "unknown_command", { "launch" }, "unknown command 'launch'" },
};

static void
test_cli__bad_invocation_exits_2(void **state)
{
	const struct bad_call *b = *state;
	struct run r;
	int i;

	arg_reset();
	for (i = 0; i < 6 && b->argv[i] != NULL; i++)
		arg(b->argv[i]);
	run(&r, NULL);
	if (r.status != 2)
		fail_msg("%s: exit %d, want 2", b->name, r.status);
	if (strstr(r.err, b->msg) == NULL)
		fail_msg("%s: stderr lacks '%s': %s", b->name, b->msg, r.err);
	assert_int_equal(r.out_len, 0);
	fixture_run_free(&r);
}

static void
test_cli__exit_code_is_the_worst_of_all_files(void **state)
{
	char good[256], bad[256];
	struct run r;
	json_t *j;

	(void)state;
	assert_int_equal(fixture_write_tmp(good, sizeof(good), dup_yaml,
	    sizeof(dup_yaml) - 1), 0);
	assert_int_equal(fixture_write_tmp(bad, sizeof(bad), "- a\n", 4), 0);
	arg_reset();
	arg("check");
	arg(good);
	arg(bad);
	arg("--format");
	arg("json");
	run(&r, NULL);
	unlink(good);
	unlink(bad);
	assert_int_equal(r.status, 2);
	/* The good file is still reported; the bad one on stderr. */
	j = json_loads(r.out, 0, NULL);
	assert_non_null(j);
	assert_int_equal(json_array_size(j), 1);
	assert_non_null(strstr(r.err, ":1:1: error: the document root"));
	json_decref(j);
	fixture_run_free(&r);
}

/* docs/rules.md is what `preflight rules --format markdown` prints. */
static void
test_cli__rules_doc_is_current(void **state)
{
	struct run r;
	char *doc;

	(void)state;
	arg_reset();
	arg("rules");
	arg("--format");
	arg("markdown");
	run(&r, NULL);
	assert_int_equal(r.status, 0);
	doc = fixture_read("docs/rules.md", NULL);
	assert_non_null(doc);
	if (strcmp(doc, r.out) != 0)
		fail_msg("docs/rules.md is stale: run make docs");
	assert_non_null(strstr(doc, "`schema.type`"));
	free(doc);
	fixture_run_free(&r);
}

int
main(void)
{
	static const struct CMUnitTest fixed[] = {
		cmocka_unit_test(test_cli__rules_doc_is_current),
		cmocka_unit_test(
		    test_cli__all_corpus_configs_give_a_json_array),
		cmocka_unit_test(test_cli__text_is_compiler_style),
		cmocka_unit_test(test_cli__stdin_dash_reads_standard_input),
		cmocka_unit_test(test_cli__estimate_context_flags),
		cmocka_unit_test(test_cli__version_names_the_axolotl_commit),
		cmocka_unit_test(test_cli__exit_code_is_the_worst_of_all_files),
	};
	size_t nf = sizeof(fixed) / sizeof(fixed[0]);
	size_t nb = sizeof(bad_calls) / sizeof(bad_calls[0]);
	struct CMUnitTest t[32];
	char names[16][96];
	size_t i, n = 0;

	for (i = 0; i < nf; i++)
		t[n++] = fixed[i];
	for (i = 0; i < nb; i++) {
		snprintf(names[i], sizeof(names[i]),
		    "test_cli__bad_invocation_exits_2[%s]", bad_calls[i].name);
		memset(&t[n], 0, sizeof(t[n]));
		t[n].name = names[i];
		t[n].test_func = test_cli__bad_invocation_exits_2;
		t[n++].initial_state = (void *)(uintptr_t)&bad_calls[i];
	}
	return _cmocka_run_group_tests("cli", t, n, NULL, NULL);
}
