/*
 * tests/test_cli: `preflight check`, `rules ID`, `--help` and `version`
 * from the outside: exit codes, stdout and stderr as DESIGN.md's CLI
 * contract and issue 17 say (text output, severity flags, --ignore,
 * policies and .preflight.yaml, directories and the Axolotl-config
 * detection, one number format).
 */
#include <dirent.h>
#include <limits.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "api/ruledoc.h"
#include "core/rules.h"
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

/* JSON text without the whitespace outside strings. */
static char *
compact(const char *text)
{
	char *out = malloc(strlen(text) + 1);
	bool in_str = false;
	size_t k = 0;

	assert_non_null(out);
	for (; *text != '\0'; text++) {
		if (in_str) {
			out[k++] = *text;
			if (*text == '\\' && text[1] != '\0')
				out[k++] = *++text;
			else if (*text == '"')
				in_str = false;
		} else if (*text == '"') {
			in_str = true;
			out[k++] = *text;
		} else if (*text != ' ' && *text != '\n') {
			out[k++] = *text;
		}
	}
	out[k] = '\0';
	return out;
}

/* No number outside strings has more than 2 decimals or a trailing zero
   past the first decimal ("5.93", "46.2", "0.0"). */
static bool
no_long_decimals(const char *text)
{
	bool in_str = false;

	for (; *text != '\0'; text++) {
		if (in_str) {
			if (*text == '\\' && text[1] != '\0')
				text++;
			else if (*text == '"')
				in_str = false;
		} else if (*text == '"') {
			in_str = true;
		} else if (*text == '.' && text[-1] >= '0' &&
		    text[-1] <= '9') {
			size_t d = strspn(text + 1, "0123456789");

			if (d == 0 || d > 2 || (d == 2 && text[2] == '0'))
				return false;
		}
	}
	return true;
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
	/* One number format: what the fast writer printed is what jansson
	   prints for the same values at JSON_REAL_PRECISION(15) (the API's
	   jansson paths), byte for byte once the layout is set aside. */
	{
		char *jan = json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER |
		    JSON_REAL_PRECISION(15));
		char *ours = compact(r.out);

		assert_non_null(jan);
		if (strcmp(jan, ours) != 0) {
			size_t b = 0;

			while (jan[b] == ours[b])
				b++;
			fail_msg("number formats differ at byte %zu: "
			    "'%.40s' vs jansson '%.40s'", b,
			    ours + (b > 20 ? b - 20 : 0),
			    jan + (b > 20 ? b - 20 : 0));
		}
		assert_true(no_long_decimals(r.out));
		free(jan);
		free(ours);
	}
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
    "    type: alpaca\n"
    "learning_rate: 0.0002\n";

/* Write text to dir/name (dir/sub/name: sub must exist). */
static void
write_file(const char *dir, const char *name, const char *text)
{
	char path[PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fputs(text, f) >= 0, 1);
	assert_int_equal(fclose(f), 0);
}

/* A fresh temporary directory into out. */
static void
tmp_dir(char *out, size_t cap)
{
	const char *t = getenv("TMPDIR");

	snprintf(out, cap, "%s/preflight-cli-XXXXXX", t != NULL ? t : "/tmp");
	assert_non_null(mkdtemp(out));
}

static void
rm_tree(const char *dir)
{
	char cmd[PATH_MAX + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

/* Run args with the working directory dir (the binary by absolute
   path). */
static void
run_in(struct run *r, const char *dir)
{
	char bin[PATH_MAX], here[PATH_MAX];

	assert_non_null(realpath(fixture_bin(), bin));
	assert_non_null(getcwd(here, sizeof(here)));
	args[0] = bin;
	assert_int_equal(chdir(dir), 0);
	run(r, NULL);
	assert_int_equal(chdir(here), 0);
	args[0] = (char *)(uintptr_t)fixture_bin();
}

/*
 * Default text: errors and warnings with their hint on the next line,
 * the memory line, then a summary that still counts the info findings
 * it does not show; no colour when stdout is not a terminal.
 */
static void
test_cli__text_shows_hints_memory_and_hides_info(void **state)
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
	assert_int_equal(r.status, 0);
	snprintf(want, sizeof(want),
	    "%s:4:1: warning: key 'sequence_len' appears twice (first at "
	    "line 2) [schema.duplicate_key]\n"
	    "    fix: remove one of the two; Axolotl uses the last value\n",
	    path);
	if (strncmp(r.out, want, strlen(want)) != 0)
		fail_msg("got:\n%s", r.out);
	snprintf(want, sizeof(want), "\n%s: memory: ", path);
	assert_non_null(strstr(r.out, want));
	assert_non_null(strstr(r.out, " GiB per GPU ("));
	assert_non_null(strstr(r.out, " tokens/s\n"));
	snprintf(want, sizeof(want), "%s: warn (0 errors, 1 warning, 5 info; "
	    "5 not shown, --verbose shows them) on 1 x h100-sxm\n", path);
	assert_non_null(strstr(r.out, want));
	assert_null(strstr(r.out, ": info: "));
	assert_null(strchr(r.out, '\033'));
	assert_int_equal(r.err_len, 0);
	fixture_run_free(&r);

	/* --verbose and --min-severity info show the five. */
	arg_reset();
	arg("check");
	arg(path);
	arg("--verbose");
	run(&r, NULL);
	snprintf(want, sizeof(want), "%s:1:1: info: no dataloader settings",
	    path);
	assert_non_null(strstr(r.out, want));
	assert_non_null(strstr(r.out, "(0 errors, 1 warning, 5 info) on"));
	fixture_run_free(&r);
	arg_reset();
	arg("check");
	arg(path);
	arg("--min-severity");
	arg("info");
	run(&r, NULL);
	assert_non_null(strstr(r.out, want));
	fixture_run_free(&r);

	/* --min-severity error hides the warning too; the verdict stays. */
	arg_reset();
	arg("check");
	arg(path);
	arg("--min-severity");
	arg("error");
	run(&r, NULL);
	unlink(path);
	assert_int_equal(r.status, 0);
	assert_null(strstr(r.out, "schema.duplicate_key"));
	assert_non_null(strstr(r.out, ": warn (0 errors, 1 warning, 5 info; "
	    "6 not shown"));
	fixture_run_free(&r);
}

/*
 * Golden text for three corpus configs, colour off: a run that does not
 * fit (the suggestion that would), warnings, and an error.  Each file in
 * tests/fixtures/cli/ starts with `# args:` (relative to the examples);
 * PREFLIGHT_UPDATE_GOLDEN=1 rewrites them from the current output.
 */
static void
test_cli__golden_text_of_three_corpus_configs(void **state)
{
	static const char *const names[] = { "fft-8b-rtx4090",
	    "qlora-fsdp-70b-8xh100", "hsdp-tp-8xh100" };
	char examples[PATH_MAX], gold[256];
	size_t i;

	(void)state;
	snprintf(examples, sizeof(examples), "%s/corpus/axolotl/examples",
	    fixture_shared());
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		char *text, *body, *line, *tok, *save = NULL;
		struct run r;

		snprintf(gold, sizeof(gold), "tests/fixtures/cli/%s.txt",
		    names[i]);
		text = fixture_read(gold, NULL);
		assert_non_null(text);
		assert_true(strncmp(text, "# args: ", 8) == 0);
		body = strchr(text, '\n');
		assert_non_null(body);
		*body++ = '\0';
		line = strdup(text + 8);
		arg_reset();
		arg("check");
		for (tok = strtok_r(line, " ", &save); tok != NULL;
		    tok = strtok_r(NULL, " ", &save))
			arg(tok);
		run_in(&r, examples);
		if (getenv("PREFLIGHT_UPDATE_GOLDEN") != NULL) {
			FILE *f = fopen(gold, "w");

			assert_non_null(f);
			fprintf(f, "%s\n%s", text, r.out);
			fclose(f);
		} else if (strcmp(r.out, body) != 0) {
			fail_msg("%s differs (PREFLIGHT_UPDATE_GOLDEN=1 "
			    "rewrites it); got:\n%s", gold, r.out);
		}
		assert_null(strchr(r.out, '\033'));
		free(line);
		free(text);
		fixture_run_free(&r);
	}
}

/* --fail-on warning turns a warn verdict into exit 1. */
static void
test_cli__fail_on_warning(void **state)
{
	char path[256];
	struct run r;

	(void)state;
	assert_int_equal(fixture_write_tmp(path, sizeof(path), dup_yaml,
	    sizeof(dup_yaml) - 1), 0);
	arg_reset();
	arg("check");
	arg(path);
	arg("--fail-on");
	arg("warning");
	run(&r, NULL);
	assert_int_equal(r.status, 1);
	fixture_run_free(&r);
	arg_reset();
	arg("check");
	arg(path);
	arg("--fail-on");
	arg("error");
	run(&r, NULL);
	unlink(path);
	assert_int_equal(r.status, 0);
	fixture_run_free(&r);
}

/* --ignore by id and by prefix drops the finding and its verdict. */
static void
test_cli__ignore_exact_and_prefix(void **state)
{
	static const char *const pats[] = { "schema.duplicate_key",
	    "schema.*", "*" };
	char path[256];
	struct run r;
	size_t i;

	(void)state;
	assert_int_equal(fixture_write_tmp(path, sizeof(path), dup_yaml,
	    sizeof(dup_yaml) - 1), 0);
	for (i = 0; i < sizeof(pats) / sizeof(pats[0]); i++) {
		arg_reset();
		arg("check");
		arg(path);
		arg("--fail-on");
		arg("warning");
		arg("--ignore");
		arg(pats[i]);
		run(&r, NULL);
		if (r.status != 0)
			fail_msg("--ignore %s: exit %d: %s", pats[i], r.status,
			    r.out);
		assert_null(strstr(r.out, "schema.duplicate_key"));
		assert_non_null(strstr(r.out, ": pass (0 errors, 0 warnings"));
		fixture_run_free(&r);
	}
	/* Another prefix leaves it alone. */
	arg_reset();
	arg("check");
	arg(path);
	arg("--fail-on");
	arg("warning");
	arg("--ignore");
	arg("fsdp.*");
	run(&r, NULL);
	unlink(path);
	assert_int_equal(r.status, 1);
	assert_non_null(strstr(r.out, "[schema.duplicate_key]"));
	fixture_run_free(&r);
}

/*
 * A policy's "*": off silences every rule the policy does not name; a
 * longer prefix or an exact id beats a shorter one.
 */
static void
test_cli__policy_star_and_prefixes(void **state)
{
	static const struct {
		const char *policy;
		int status;
		const char *want;	/* in stdout; NULL: no finding */
	} cases[] = {
		{ "rules:\n  \"*\": off\n", 0, NULL },
		{ "rules:\n  \"*\": off\n  schema.duplicate_key: error\n", 1,
		  ":4:1: error: key 'sequence_len'" },
		{ "rules:\n  \"schema.*\": error\n  \"*\": info\n", 1,
		  ":4:1: error: key 'sequence_len'" },
		{ "rules:\n  \"schema.*\": off\n"
		  "  \"schema.dup*\": warning\n", 0,
		  ":4:1: warning: key 'sequence_len'" },
	};
	char path[256], pol[256];
	struct run r;
	size_t i;

	(void)state;
	assert_int_equal(fixture_write_tmp(path, sizeof(path), dup_yaml,
	    sizeof(dup_yaml) - 1), 0);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(fixture_write_tmp(pol, sizeof(pol),
		    cases[i].policy, strlen(cases[i].policy)), 0);
		arg_reset();
		arg("check");
		arg(path);
		arg("--policy");
		arg(pol);
		arg("--verbose");
		run(&r, NULL);
		unlink(pol);
		if (r.status != cases[i].status)
			fail_msg("case %zu: exit %d: %s%s", i, r.status, r.out,
			    r.err);
		if (cases[i].want != NULL)
			assert_non_null(strstr(r.out, cases[i].want));
		else
			assert_null(strstr(r.out, ": info: "));
		fixture_run_free(&r);
	}
	unlink(path);
}

/*
 * Without --policy, .preflight.yaml in the working directory or its
 * nearest parent applies; --no-policy and --policy override it; a broken
 * one stops the run with its location.
 */
static void
test_cli__policy_file_is_found_in_parents(void **state)
{
	char dir[PATH_MAX], sub[PATH_MAX + 8];
	struct run r;

	(void)state;
	tmp_dir(dir, sizeof(dir));
	snprintf(sub, sizeof(sub), "%s/a/b", dir);
	write_file(dir, "c.yaml", dup_yaml);
	write_file(dir, ".preflight.yaml",
	    "rules:\n  schema.duplicate_key: error\n");
	snprintf(sub, sizeof(sub), "%s/a", dir);
	assert_int_equal(mkdir(sub, 0700), 0);
	snprintf(sub, sizeof(sub), "%s/a/b", dir);
	assert_int_equal(mkdir(sub, 0700), 0);
	arg_reset();
	arg("check");
	arg("../../c.yaml");
	run_in(&r, sub);
	assert_int_equal(r.status, 1);
	assert_non_null(strstr(r.out, ":4:1: error: key 'sequence_len'"));
	fixture_run_free(&r);

	arg_reset();
	arg("check");
	arg("../../c.yaml");
	arg("--no-policy");
	run_in(&r, sub);
	assert_int_equal(r.status, 0);
	fixture_run_free(&r);

	/* The nearer file wins. */
	write_file(sub, ".preflight.yaml", "rules:\n  \"*\": off\n");
	arg_reset();
	arg("check");
	arg("../../c.yaml");
	arg("--fail-on");
	arg("warning");
	run_in(&r, sub);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, ": pass (0 errors"));
	fixture_run_free(&r);

	write_file(sub, ".preflight.yaml", "rules:\n  no.such_rule: off\n");
	arg_reset();
	arg("check");
	arg("../../c.yaml");
	run_in(&r, sub);
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "/a/b/.preflight.yaml:2:3: error: "
	    "policy: unknown rule no.such_rule"));
	assert_int_equal(r.out_len, 0);
	fixture_run_free(&r);
	rm_tree(dir);
}

static const char workflow_yaml[] =
    "name: ci\non:\n  push:\n    branches: [main]\njobs:\n  build:\n"
    "    runs-on: ubuntu-latest\n    steps:\n"
    "      - uses: actions/checkout@v4\n"
    "      - run: make test\n";
static const char compose_yaml[] =
    "services:\n  web:\n    image: nginx\n    ports: [\"80:80\"]\n"
    "volumes:\n  data: {}\n";
static const char k8s_yaml[] =
    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: axolotl\n"
    "data:\n  config.yaml: |\n    base_model: meta-llama/Llama-3.1-8B\n"
    "    datasets:\n      - path: a/b\n---\napiVersion: batch/v1\n"
    "kind: Job\nmetadata:\n  name: train\n";

/*
 * check DIR walks for Axolotl configs in name order, skipping hidden
 * directories and YAML without base_model or datasets at the top level
 * (a GitHub workflow, docker-compose, a Kubernetes manifest embedding a
 * config); skipped files are counted, not failed.
 */
static void
test_cli__directory_checks_only_axolotl_configs(void **state)
{
	char dir[PATH_MAX], sub[PATH_MAX + 8];
	struct run r;
	json_t *j;

	(void)state;
	tmp_dir(dir, sizeof(dir));
	write_file(dir, "b-config.yml", dup_yaml);
	write_file(dir, "workflow.yml", workflow_yaml);
	write_file(dir, "docker-compose.yaml", compose_yaml);
	write_file(dir, "k8s.yaml", k8s_yaml);
	write_file(dir, "notes.txt", dup_yaml);
	write_file(dir, "quoted.yaml", "\"datasets\" :\n  - path: x\n    type: "
	    "alpaca\n'base_model': HuggingFaceTB/SmolLM2-135M\n"
	    "learning_rate: 0.0002\n"
	    "micro_batch_size: 1\ngradient_accumulation_steps: 1\n");
	snprintf(sub, sizeof(sub), "%s/a", dir);
	assert_int_equal(mkdir(sub, 0700), 0);
	write_file(sub, "config.yaml", dup_yaml);
	snprintf(sub, sizeof(sub), "%s/.hidden", dir);
	assert_int_equal(mkdir(sub, 0700), 0);
	write_file(sub, "config.yaml", dup_yaml);
	arg_reset();
	arg("check");
	arg(".");
	arg("--format");
	arg("json");
	run_in(&r, dir);
	assert_int_equal(r.status, 0);
	j = json_loads(r.out, 0, NULL);
	assert_non_null(j);
	assert_int_equal(json_array_size(j), 3);
	assert_string_equal(json_string_value(json_object_get(
	    json_array_get(j, 0), "file")), "./a/config.yaml");
	assert_string_equal(json_string_value(json_object_get(
	    json_array_get(j, 1), "file")), "./b-config.yml");
	assert_string_equal(json_string_value(json_object_get(
	    json_array_get(j, 2), "file")), "./quoted.yaml");
	assert_non_null(strstr(r.err, "skipped 3 YAML files that are not "
	    "Axolotl configs"));
	json_decref(j);
	fixture_run_free(&r);

	/* A directory of nothing but other YAML: exit 0, an empty array. */
	snprintf(sub, sizeof(sub), "%s/other", dir);
	assert_int_equal(mkdir(sub, 0700), 0);
	write_file(sub, "workflow.yml", workflow_yaml);
	arg_reset();
	arg("check");
	arg(sub);
	arg("--format");
	arg("json");
	run_in(&r, dir);
	assert_int_equal(r.status, 0);
	assert_string_equal(r.out, "[\n]\n");
	fixture_run_free(&r);
	rm_tree(dir);
}

/*
 * --axolotl-only (the pre-commit hook) skips named files that are not
 * Axolotl configs: a GitHub workflow, docker-compose and a Kubernetes
 * manifest exit 0 with nothing on stdout; without it they are checked.
 */
static void
test_cli__axolotl_only_skips_other_yaml(void **state)
{
	char dir[PATH_MAX];
	struct run r;

	(void)state;
	tmp_dir(dir, sizeof(dir));
	write_file(dir, "ci.yml", workflow_yaml);
	write_file(dir, "docker-compose.yaml", compose_yaml);
	write_file(dir, "k8s.yaml", k8s_yaml);
	write_file(dir, "c.yaml", dup_yaml);
	arg_reset();
	arg("check");
	arg("--axolotl-only");
	arg("ci.yml");
	arg("docker-compose.yaml");
	arg("k8s.yaml");
	run_in(&r, dir);
	assert_int_equal(r.status, 0);
	assert_int_equal(r.out_len, 0);
	assert_non_null(strstr(r.err, "skipped 3 YAML files"));
	fixture_run_free(&r);

	arg_reset();
	arg("check");
	arg("--axolotl-only");
	arg("ci.yml");
	arg("c.yaml");
	arg("--fail-on");
	arg("warning");
	run_in(&r, dir);
	assert_int_equal(r.status, 1);
	assert_non_null(strstr(r.out, "c.yaml:4:1: warning"));
	assert_null(strstr(r.out, "ci.yml"));
	fixture_run_free(&r);

	/* Named without the flag, the workflow is checked (and fails). */
	arg_reset();
	arg("check");
	arg("k8s.yaml");
	run_in(&r, dir);
	assert_int_not_equal(r.status, 0);
	fixture_run_free(&r);
	rm_tree(dir);
}

/* `rules ID` / `explain ID`: description, why, fix, the example and
   what preflight says about it; a pattern lists; unknown ids exit 2. */
static void
test_cli__rules_id_explains_a_rule(void **state)
{
	struct run r;

	(void)state;
	arg_reset();
	arg("rules");
	arg("schema.duplicate_key");
	run(&r, NULL);
	assert_int_equal(r.status, 0);
	assert_true(strncmp(r.out, "schema.duplicate_key (warning)\n", 31) ==
	    0);
	assert_non_null(strstr(r.out, "\nWhy it matters:\n  "));
	assert_non_null(strstr(r.out, "\nFix:\n  remove one of the two"));
	assert_non_null(strstr(r.out, "    4 | sequence_len: 4096  # <- here"));
	assert_non_null(strstr(r.out, "  example.yaml:4:1: warning: key "
	    "'sequence_len' appears twice (first at line 2)\n"));
	assert_non_null(strstr(r.out, "/docs/rules.md#schemaduplicate_key"));
	fixture_run_free(&r);

	/* A rules.md rule: its phase and what Axolotl does; the example's
	   context comes from its header comments. */
	arg_reset();
	arg("explain");
	arg("parallel.nd_product_mismatch");
	run(&r, NULL);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "then the launch fails after the\n"
	    "  GPUs are allocated"));
	assert_non_null(strstr(r.out, "--gpus 8 --gpu h100-sxm says:\n"
	    "  example.yaml:9:1: error: "));
	fixture_run_free(&r);

	arg_reset();
	arg("rules");
	arg("memory.*");
	run(&r, NULL);
	assert_int_equal(r.status, 0);
	assert_true(strncmp(r.out, "memory.", 7) == 0);
	assert_null(strstr(r.out, "\nschema."));
	fixture_run_free(&r);

	arg_reset();
	arg("rules");
	arg("duplicate");
	run(&r, NULL);
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "no rule 'duplicate'; rules whose id "
	    "contains it:\nschema.duplicate_key"));
	fixture_run_free(&r);
}

/* Every rule has its why, and its fail fixture as the example. */
static void
test_cli__every_rule_has_why_and_example(void **state)
{
	const struct rule_def *all;
	size_t n, i;

	(void)state;
	all = rules_all(&n);
	for (i = 0; i < n; i++) {
		char why[1024], path[256];
		const struct ruledoc *d = ruledoc_find(all[i].id);
		struct stat st;

		ruledoc_why(why, sizeof(why), &all[i]);
		if (strlen(why) < 40)
			fail_msg("%s: why is '%s'", all[i].id, why);
		snprintf(path, sizeof(path),
		    "tests/fixtures/rules/%s.fail.yaml", all[i].id);
		if (stat(path, &st) == 0 && (d == NULL || d->example == NULL))
			fail_msg("%s: fixture not embedded", all[i].id);
	}
	/* rules.md's words reach the rules it covers. */
	for (i = 0; i < n; i++)
		if (strcmp(all[i].id, "schema.unknown_key_dropped") == 0) {
			char why[1024];

			ruledoc_why(why, sizeof(why), &all[i]);
			assert_non_null(strstr(why, "silently ignored"));
			assert_non_null(strstr(why, "extra-key policy"));
		}
}

/* Every subcommand's --help exits 0 on stdout; check's lists every flag
   with the context defaults. */
static void
test_cli__help_of_every_subcommand(void **state)
{
	static const char *const cmds[] = { "check", "serve", "rules",
	    "explain", "token", "migrate", "backup", "health", "version" };
	static const char *const flags[] = { "--gpus N", "--world-size",
	    "--nodes M", "--gpu ID", "--interconnect", "--torch X.Y",
	    "--gpu-memory-gib", "--host-memory-gib", "--dataset-tokens",
	    "--model-config", "--hf-cache", "--deepspeed-config", "--format",
	    "--min-severity", "--verbose", "--fail-on", "--ignore",
	    "--policy", "--no-policy", "--axolotl-only",
	    "GPUs in the run (default 1)", "(default h100-sxm)",
	    "(default 2.11)", ".preflight.yaml", "NO_COLOR" };
	struct run r;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		char want[64];

		arg_reset();
		arg(cmds[i]);
		arg("--help");
		run(&r, NULL);
		if (r.status != 0)
			fail_msg("%s --help: exit %d", cmds[i], r.status);
		snprintf(want, sizeof(want), "usage: preflight %s", cmds[i]);
		if (strstr(r.out, want) == NULL &&
		    strcmp(cmds[i], "explain") != 0)
			fail_msg("%s --help: %s", cmds[i], r.out);
		if (strcmp(cmds[i], "check") == 0) {
			size_t k;

			for (k = 0; k < sizeof(flags) / sizeof(flags[0]); k++)
				if (strstr(r.out, flags[k]) == NULL)
					fail_msg("check --help lacks '%s'",
					    flags[k]);
		}
		fixture_run_free(&r);
	}
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
	assert_non_null(strstr(r.out, " (git "));
	assert_null(strstr(r.out, "(git unknown"));
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
	{ "bad_min_severity", { "check", "-", "--min-severity", "notice" },
	  "--min-severity must be error, warning or info" },
	{ "fail_on_info", { "check", "-", "--fail-on", "info" },
	  "--fail-on must be error or warning" },
	{ "ignore_unknown_rule", { "check", "-", "--ignore", "no.such" },
	  "--ignore: unknown rule 'no.such'" },
	{ "ignore_prefix_matches_nothing", { "check", "-", "--ignore",
	  "nope.*" }, "no rule id starts with 'nope.*'" },
	{ "ignore_star_inside", { "check", "-", "--ignore", "a*b" },
	  "one '*', at its end" },
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
		cmocka_unit_test(
		    test_cli__text_shows_hints_memory_and_hides_info),
		cmocka_unit_test(
		    test_cli__golden_text_of_three_corpus_configs),
		cmocka_unit_test(test_cli__fail_on_warning),
		cmocka_unit_test(test_cli__ignore_exact_and_prefix),
		cmocka_unit_test(test_cli__policy_star_and_prefixes),
		cmocka_unit_test(test_cli__policy_file_is_found_in_parents),
		cmocka_unit_test(
		    test_cli__directory_checks_only_axolotl_configs),
		cmocka_unit_test(test_cli__axolotl_only_skips_other_yaml),
		cmocka_unit_test(test_cli__rules_id_explains_a_rule),
		cmocka_unit_test(test_cli__every_rule_has_why_and_example),
		cmocka_unit_test(test_cli__help_of_every_subcommand),
		cmocka_unit_test(test_cli__stdin_dash_reads_standard_input),
		cmocka_unit_test(test_cli__estimate_context_flags),
		cmocka_unit_test(test_cli__version_names_the_axolotl_commit),
		cmocka_unit_test(test_cli__exit_code_is_the_worst_of_all_files),
	};
	size_t nf = sizeof(fixed) / sizeof(fixed[0]);
	size_t nb = sizeof(bad_calls) / sizeof(bad_calls[0]);
	struct CMUnitTest t[48];
	char names[24][96];
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
