/*
 * server/cli: `preflight check FILE|DIR... [options]` and `preflight
 * version`.
 *
 * Reads each file (or stdin for "-"; a directory is walked for Axolotl
 * configs), runs the core check and writes the report in the chosen
 * format to stdout, one file at a time: a file's memory is freed before
 * the next is read, so thousands of files take no more memory than one.
 * An input that cannot be checked gets one `file:line:col: error:
 * message` line on stderr and makes the exit code 2.
 */
#include "cli.h"

#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api/digest.h"
#include "api/encode.h"
#include "api/formats.h"
#include "api/jsonw.h"
#include "buildinfo.h"
#include "core/arena.h"
#include "core/check.h"
#include "core/hfconfig.h"
#include "core/policy.h"
#include "core/version.h"
#include "server/file.h"
#include "server/hfcache.h"

/* Budget for one config's arena: ample for max_bytes of input. */
#define CLI_ARENA_CAP ((size_t)256 << 20)
/* Directories deeper than this under a DIR argument are not walked. */
#define CLI_MAX_DEPTH 32
#define POLICY_FILE ".preflight.yaml"

enum cli_format {
	FORMAT_TEXT,
	FORMAT_JSON,
	FORMAT_SARIF,
	FORMAT_GITHUB,		/* workflow commands */
	FORMAT_CHECKRUN,	/* GitHub check-run output JSON */
	FORMAT_GITLAB,
	FORMAT_JUNIT
};

static const char *const format_names[] = {
	"text", "json", "sarif", "github", "github-checkrun", "gitlab", "junit"
};

struct cli_opts {
	struct context ctx;
	struct arena policy_arena;	/* holds ctx.policy and ctx.model */
	char *ds_config;		/* --deepspeed-config file, malloc'd */
	struct limits lim;
	const char *hf_cache;		/* --hf-cache DIR, or NULL */
	enum cli_format format;
	bool colour;
	int min_severity;		/* enum severity; -1: the format's */
	bool fail_on_warning;		/* --fail-on warning */
	bool axolotl_only;		/* skip YAML that is not a config */
	bool verbose;
	bool policy_given;		/* --policy or --no-policy */
	const char **ignore;		/* --ignore patterns (argv) */
	size_t nignore;
};

/* The state of one run over every argument. */
struct cli_run {
	const struct cli_opts *o;
	struct jsonw out;		/* document formats; flushed per file */
	struct formats_checkrun checkrun;
	char cwd[PATH_MAX];		/* %SRCROOT%; "" if unknown */
	bool first;			/* no report written yet */
	size_t checked, skipped;
	int worst;			/* exit code so far */
};

static void
usage(FILE *out)
{
	fprintf(out,
"usage: preflight check [FILE | DIR | -]... [options]\n"
"\n"
"Check Axolotl configs before launching them.  A DIR is walked for YAML\n"
"files that look like Axolotl configs (base_model or datasets at the top\n"
"level); other YAML is skipped and counted, not failed.  - reads stdin.\n"
"Exit 0 pass or warn, 1 fail (or warn with --fail-on warning), 2 input\n"
"that cannot be checked.\n"
"\n"
"Where the run goes (the context):\n"
"  --gpus N, --world-size N   GPUs in the run (default 1)\n"
"  --nodes M                  nodes they are spread over (default 1)\n"
"  --gpu ID                   GPU model from the catalog (default h100-sxm)\n"
"  --interconnect LINK        nvlink|pcie|infiniband|ethernet (default: the\n"
"                             GPU's link on one node, infiniband across "
"nodes)\n"
"  --torch X.Y                torch version Axolotl runs on (default 2.11)\n"
"  --gpu-memory-gib X         GPU memory instead of the catalog's "
"(default: catalog)\n"
"  --host-memory-gib X        host RAM per node for offload (default: "
"unknown)\n"
"  --dataset-tokens N         tokens per epoch, for epoch time (default: "
"unknown)\n"
"  --model-config FILE        the model's Hugging Face config.json when the\n"
"                             catalog lacks it (default: none)\n"
"  --hf-cache DIR             read config.json from a Hugging Face hub cache\n"
"                             (default: none)\n"
"  --deepspeed-config FILE    the DeepSpeed JSON the config names (default:\n"
"                             the preset of that name)\n"
"\n"
"What is reported:\n"
"  --format F                 text|json|sarif|github|github-checkrun|gitlab|"
"junit\n"
"                             (default text; github writes workflow "
"commands)\n"
"  --min-severity S           error|warning|info: findings shown (default\n"
"                             warning for text, github, github-checkrun "
"and\n"
"                             junit; info for json, sarif and gitlab); "
"the\n"
"                             summary counts every finding\n"
"  -v, --verbose              show info findings and skipped files\n"
"                             (same as --min-severity info)\n"
"  --fail-on S                error|warning: what makes exit 1 (default "
"error)\n"
"  --ignore RULE              drop a rule's findings; RULE is an id or a\n"
"                             prefix pattern like 'fsdp.*' (repeatable)\n"
"  --policy FILE              the organization's policy (default: "
POLICY_FILE "\n"
"                             in the current directory or the nearest "
"parent)\n"
"  --no-policy                do not look for " POLICY_FILE "\n"
"  --axolotl-only             skip named files that are not Axolotl "
"configs,\n"
"                             as for a DIR (the pre-commit hook uses it)\n"
"  -h, --help                 this help\n"
"\n"
"Colour: on when stdout is a terminal and NO_COLOR is unset.\n");
}

/* A context flag's value through core/context's decoder (its ranges and
   words); prints the error itself. */
static int
context_flag(struct context *c, const char *field, const char *flag,
    const char *arg)
{
	struct err e = { 0 };

	if (context_set(c, context_field_find(field), arg, flag, &e) == 0)
		return 0;
	fprintf(stderr, "preflight: error: %s, got '%s'\n", e.msg, arg);
	return -1;
}

/* "error" / "warning" (/ "info" when info_ok) -> enum severity, or -1. */
static int
parse_severity(const char *s, bool info_ok)
{
	if (strcmp(s, "error") == 0)
		return SEV_ERROR;
	if (strcmp(s, "warning") == 0)
		return SEV_WARNING;
	if (info_ok && strcmp(s, "info") == 0)
		return SEV_INFO;
	return -1;
}

/* A file's error on stderr, compiler-style. */
static void
print_err(const char *path, const struct err *e)
{
	if (e->loc.line > 0)
		fprintf(stderr, "%s:%u:%u: error: %s\n", path, e->loc.line,
		    e->loc.col, e->msg);
	else
		fprintf(stderr, "%s: error: %s\n", path, e->msg);
}

/* Parse a policy file into o->policy_arena; prints the error itself. */
static int
load_policy(struct cli_opts *o, const char *path)
{
	struct err e = { 0 };
	struct policy *p;
	char *buf;
	size_t len;

	if (file_read(&buf, &len, path, 1 << 20) != 0) {
		fprintf(stderr, "%s: error: cannot read: %s\n", path,
		    strerror(errno));
		return -1;
	}
	/* Into the arena that may hold --model-config's model too: a second
	   --policy adds to it, it does not free the first. */
	if (policy_parse(&p, buf, len, &o->policy_arena, &e) != 0) {
		print_err(path, &e);
		free(buf);
		return -1;
	}
	free(buf);
	o->ctx.policy = p;
	return 0;
}

/*
 * Without --policy: .preflight.yaml in the current directory, else in the
 * nearest parent that has one.  0 when none was found or it loaded.
 */
static int
discover_policy(struct cli_opts *o)
{
	char dir[PATH_MAX], path[PATH_MAX + sizeof(POLICY_FILE) + 1];
	char *slash;

	if (getcwd(dir, sizeof(dir)) == NULL)
		return 0;
	for (;;) {
		snprintf(path, sizeof(path), "%s/%s",
		    strcmp(dir, "/") == 0 ? "" : dir, POLICY_FILE);
		if (access(path, F_OK) == 0) {
			if (o->verbose)
				fprintf(stderr, "preflight: policy from %s\n",
				    path);
			return load_policy(o, path);
		}
		slash = strrchr(dir, '/');
		if (slash == NULL || strcmp(dir, "/") == 0)
			return 0;
		if (slash == dir)
			slash[1] = '\0';
		else
			*slash = '\0';
	}
}

/*
 * Does the YAML text look like an Axolotl config: `base_model` or
 * `datasets` as a key at the top level of a block mapping (column 1,
 * quoted or not, then a colon)?  The pre-commit hook and directory walks
 * use this, so a GitHub workflow, a docker-compose file or a Kubernetes
 * manifest is skipped instead of failed.  A line scan, not a parse:
 * several documents, templates and broken YAML are classified too (an
 * Axolotl config that does not parse is still checked and reported).
 */
static bool
looks_axolotl(const char *buf, size_t len)
{
	static const char *const keys[] = { "base_model", "datasets" };
	const char *p = buf, *end = buf + len;
	size_t i;

	if (len >= 3 && memcmp(buf, "\xef\xbb\xbf", 3) == 0)
		p += 3;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *eol = nl != NULL ? nl : end;
		const char *k = p;
		char quote = 0;

		if (*k == '"' || *k == '\'')
			quote = *k++;
		for (i = 0; i < 2; i++) {
			size_t n = strlen(keys[i]);
			const char *c = k + n;

			if ((size_t)(eol - k) < n || memcmp(k, keys[i], n) != 0)
				continue;
			if (quote != 0) {
				if (c >= eol || *c != quote)
					continue;
				c++;
			}
			while (c < eol && (*c == ' ' || *c == '\t'))
				c++;
			if (c < eol && *c == ':' && (c + 1 == eol ||
			    c[1] == ' ' || c[1] == '\t' || c[1] == '\r'))
				return true;
		}
		p = eol + 1;
	}
	return false;
}

/* The file's path from the current directory (%SRCROOT%): "./" and the
   cwd prefix are dropped; anything else is kept as given. */
static const char *
root_path(const struct cli_run *run, const char *file)
{
	size_t n = strlen(run->cwd);

	if (n > 1 && strncmp(file, run->cwd, n) == 0 && file[n] == '/')
		file += n + 1;
	while (file[0] == '.' && file[1] == '/') {
		file += 2;
		while (*file == '/')
			file++;
	}
	return file;
}

/* Write and empty the document buffer. */
static int
flush_out(struct cli_run *run)
{
	if (run->out.oom) {
		fprintf(stderr, "preflight: error: out of memory\n");
		return -1;
	}
	if (run->out.len > 0 &&
	    fwrite(run->out.buf, 1, run->out.len, stdout) != run->out.len)
		return -1;
	run->out.len = 0;
	return 0;
}

/* The findings at or above min, in a copy of r from a (r itself when
   nothing is left out).  The counts stay: summaries count everything. */
static const struct report *
shown(const struct report *r, enum severity min, struct arena *a)
{
	struct report *v;
	size_t i, k = 0;

	for (i = 0; i < r->nfindings; i++)
		if (r->findings[i].severity < min)
			break;
	if (i == r->nfindings)
		return r;
	v = ARENA_NEW(a, struct report, 1);
	if (v == NULL)
		return r;
	*v = *r;
	v->findings = ARENA_NEW(a, struct finding, r->nfindings);
	if (v->findings == NULL)
		return r;
	for (i = 0; i < r->nfindings; i++)
		if (r->findings[i].severity >= min)
			v->findings[k++] = r->findings[i];
	v->nfindings = k;
	return v;
}

/* The report in the run's format. */
static int
emit(struct cli_run *run, const struct report *r, const char *path)
{
	const struct cli_opts *o = run->o;
	struct format_input in = { r, root_path(run, path) };
	struct text_opts to = { o->colour, TEXT_PLAIN, NULL };
	char *text;
	size_t len;

	switch (o->format) {
	case FORMAT_GITHUB:
		to.style = TEXT_GITHUB;
		to.path = in.file;
		encode_report_text(stdout, r, path, &to);
		return 0;
	case FORMAT_TEXT:
		encode_report_text(stdout, r, path, &to);
		return 0;
	case FORMAT_JSON:
		text = encode_report_json_text(r, path, &len);
		if (text == NULL) {
			run->out.oom = true;
			break;
		}
		if (!run->first)
			jw_lit(&run->out, ",\n");
		jw_indent(&run->out, text, len, 0);
		free(text);
		break;
	case FORMAT_SARIF:
		formats_sarif_add(&run->out, &in, &run->first);
		break;
	case FORMAT_GITLAB:
		formats_gitlab_add(&run->out, &in, &run->first);
		break;
	case FORMAT_JUNIT:
		formats_junit_add(&run->out, &in, o->fail_on_warning);
		break;
	case FORMAT_CHECKRUN:
		formats_checkrun_add(&run->checkrun, &in);
		break;
	}
	run->first = false;
	return flush_out(run);
}

/* One config: its exit code (0, 1 or 2) into run->worst. */
static void
check_file(struct cli_run *run, const char *path, bool detect)
{
	const struct cli_opts *o = run->o;
	struct arena a;
	struct err e = { 0 };
	struct report *r;
	char *buf;
	size_t len;
	int rv, code;

	if (file_read(&buf, &len, path, o->lim.max_bytes) != 0) {
		fprintf(stderr, "%s: error: cannot read: %s\n", path,
		    strerror(errno));
		if (o->format == FORMAT_JUNIT) {
			formats_junit_error(&run->out, path, "cannot read");
			(void)flush_out(run);
		}
		run->worst = 2;
		return;
	}
	if (detect && !looks_axolotl(buf, len)) {
		if (o->verbose)
			fprintf(stderr, "preflight: skipped %s: not an Axolotl "
			    "config (no base_model or datasets at the top "
			    "level)\n", path);
		run->skipped++;
		free(buf);
		return;
	}
	run->checked++;
	arena_init(&a, CLI_ARENA_CAP);
	rv = check_run(&r, buf, len, &o->ctx, &o->lim, &a, &e);
	if (rv == 0 && digest_sha256_hex(r->config_sha256, buf, len) != 0)
		rv = err_set(&e, ERR_INTERNAL, NULL, "cannot hash the config");
	if (rv != 0) {
		print_err(path, &e);
		if (o->format == FORMAT_GITHUB)	/* an annotation too */
			encode_github_command(stdout, SEV_ERROR,
			    root_path(run, path), e.loc.line, e.loc.col,
			    "preflight", e.msg, NULL);
		if (o->format == FORMAT_JUNIT) {
			formats_junit_error(&run->out, path, e.msg);
			(void)flush_out(run);
		}
		code = 2;
	} else {
		code = r->verdict == VERDICT_FAIL || (o->fail_on_warning &&
		    r->verdict == VERDICT_WARN) ? 1 : 0;
		if (emit(run, shown(r, (enum severity)o->min_severity, &a),
		    path) != 0)
			code = 2;
	}
	if (code > run->worst)
		run->worst = code;
	arena_fini(&a);
	free(buf);
}

static int
cmp_names(const void *x, const void *y)
{
	return strcmp(*(char *const *)x, *(char *const *)y);
}

static bool
is_yaml_name(const char *name)
{
	size_t l = strlen(name);

	return (l > 5 && strcmp(name + l - 5, ".yaml") == 0) ||
	    (l > 4 && strcmp(name + l - 4, ".yml") == 0);
}

/*
 * Walk dir in name order: YAML files that look like Axolotl configs are
 * checked, hidden entries (.git) are skipped, symlinked directories are
 * not followed (no loops).
 */
static void
walk(struct cli_run *run, const char *dir, int depth)
{
	DIR *d;
	struct dirent *ent;
	char **names = NULL;
	size_t n = 0, cap = 0, i;

	d = opendir(dir);
	if (d == NULL) {
		fprintf(stderr, "%s: error: cannot read: %s\n", dir,
		    strerror(errno));
		run->worst = 2;
		return;
	}
	while ((ent = readdir(d)) != NULL) {
		char *copy;

		if (ent->d_name[0] == '.')
			continue;
		if (n == cap) {
			char **grown;

			cap = cap == 0 ? 64 : cap * 2;
			grown = realloc(names, cap * sizeof(*names));
			if (grown == NULL)
				break;
			names = grown;
		}
		copy = strdup(ent->d_name);
		if (copy == NULL)
			break;
		names[n++] = copy;
	}
	closedir(d);
	if (n > 0)
		qsort(names, n, sizeof(*names), cmp_names);
	for (i = 0; i < n; i++) {
		char path[PATH_MAX];
		struct stat st, lst;
		int k = snprintf(path, sizeof(path), "%s%s%s", dir,
		    dir[strlen(dir) - 1] == '/' ? "" : "/", names[i]);

		if (k < 0 || (size_t)k >= sizeof(path) ||
		    lstat(path, &lst) != 0 || stat(path, &st) != 0)
			continue;
		if (S_ISDIR(st.st_mode)) {
			if (!S_ISLNK(lst.st_mode) && depth < CLI_MAX_DEPTH)
				walk(run, path, depth + 1);
		} else if (S_ISREG(st.st_mode) && is_yaml_name(names[i])) {
			check_file(run, path, true);
		}
	}
	for (i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

/* context.model_lookup: config.json from --hf-cache. */
static const struct model_def *
cached_model(void *arg, const char *id, struct arena *a)
{
	const struct cli_opts *op = arg;

	return hfcache_lookup(op->hf_cache, id, a);
}

/* --model-config: the model's architecture instead of the catalog's.
   Prints the error itself. */
static int
load_model_config(struct cli_opts *op, const char *path)
{
	struct err e = { 0 };
	char *buf = NULL;
	size_t len;
	int rv;

	if (file_read(&buf, &len, path, 1 << 20) != 0 || len > (1 << 20)) {
		fprintf(stderr, "preflight: error: --model-config %s: cannot "
		    "read it (or over 1 MiB)\n", path);
		free(buf);
		return -1;
	}
	rv = hfconfig_parse(&op->ctx.model, buf, len, path, "model_config",
	    &op->lim, &op->policy_arena, &e);
	free(buf);
	if (rv == 0)
		return 0;
	print_err(path, &e);
	return -1;
}

/* check's context flags; shared with `preflight diagnose`. */
const struct option cli_context_options[] = {
	{ "gpus", required_argument, NULL, 'g' },
	{ "world-size", required_argument, NULL, 'g' },
	{ "nodes", required_argument, NULL, 'n' },
	{ "gpu", required_argument, NULL, 'G' },
	{ "interconnect", required_argument, NULL, 'i' },
	{ "torch", required_argument, NULL, 't' },
	{ "policy", required_argument, NULL, 'p' },
	{ "deepspeed-config", required_argument, NULL, 'd' },
	{ "model-config", required_argument, NULL, 'm' },
	{ "hf-cache", required_argument, NULL, 'c' },
	{ "gpu-memory-gib", required_argument, NULL, 'M' },
	{ "host-memory-gib", required_argument, NULL, 'H' },
	{ "dataset-tokens", required_argument, NULL, 'T' },
	{ NULL, 0, NULL, 0 }
};

int
cli_context_opt(struct cli_opts *op, int c, const char *arg)
{
	switch (c) {
	case 'g':
		return context_flag(&op->ctx, "gpus", "--gpus", arg);
	case 'n':
		return context_flag(&op->ctx, "nodes", "--nodes", arg);
	case 'M':
		return context_flag(&op->ctx, "gpu_memory_gib",
		    "--gpu-memory-gib", arg);
	case 'H':
		return context_flag(&op->ctx, "host_memory_gib",
		    "--host-memory-gib", arg);
	case 'T':
		return context_flag(&op->ctx, "dataset_tokens",
		    "--dataset-tokens", arg);
	case 'G':
		return context_flag(&op->ctx, "gpu", "--gpu", arg);
	case 'i':
		return context_flag(&op->ctx, "interconnect", "--interconnect",
		    arg);
	case 't':
		return context_flag(&op->ctx, "torch", "--torch", arg);
	case 'p':
		op->policy_given = true;
		return load_policy(op, arg);
	case 'd': {
		size_t len;

		free(op->ds_config);
		if (file_read(&op->ds_config, &len, arg, 1 << 20) != 0 ||
		    len > (1 << 20)) {
			fprintf(stderr, "preflight: error: --deepspeed-config "
			    "%s: cannot read it (or over 1 MiB)\n", arg);
			return -1;
		}
		op->ctx.ds_config = op->ds_config;
		op->ctx.ds_config_len = len;
		return 0;
	}
	case 'm':
		return load_model_config(op, arg);
	case 'c': {
		char why[512];

		if (hfcache_check_dir(arg, why, sizeof(why)) != 0) {
			fprintf(stderr, "preflight: error: --hf-cache %s\n",
			    why);
			return -1;
		}
		op->hf_cache = arg;
		op->ctx.model_lookup = cached_model;
		op->ctx.model_lookup_arg = op;
		return 0;
	}
	}
	return -1;	/* NOTREACHED: not a context flag */
}

/* The policy (given, found, or none) plus the --ignore patterns. */
static int
settle_policy(struct cli_opts *op)
{
	struct err e = { 0 };
	struct policy *p;
	size_t i;

	if (!op->policy_given && discover_policy(op) != 0)
		return -1;
	if (op->nignore == 0)
		return 0;
	p = ARENA_NEW(&op->policy_arena, struct policy, 1);
	if (p == NULL) {
		fprintf(stderr, "preflight: error: out of memory\n");
		return -1;
	}
	if (op->ctx.policy != NULL)
		*p = *op->ctx.policy;
	for (i = 0; i < op->nignore; i++)
		if (policy_add_ignore(p, op->ignore[i], &op->policy_arena,
		    &e) != 0) {
			fprintf(stderr, "preflight: error: --ignore: %s (see "
			    "preflight rules)\n", e.msg);
			return -1;
		}
	op->ctx.policy = p;
	return 0;
}

static int
set_format(struct cli_opts *op, const char *s)
{
	size_t i;

	for (i = 0; i < sizeof(format_names) / sizeof(format_names[0]); i++)
		if (strcmp(s, format_names[i]) == 0) {
			op->format = (enum cli_format)i;
			return 0;
		}
	fprintf(stderr, "preflight: error: --format must be text, json, "
	    "sarif, github, github-checkrun, gitlab or junit, got '%s'\n", s);
	return -1;
}

/* Options into op; the index of the first operand, or -1 (exit 2) or
   -2 (--help: exit 0). */
static int
parse_options(int argc, char **argv, struct cli_opts *op)
{
	static const struct option own[] = {
		{ "format", required_argument, NULL, 'f' },
		{ "no-policy", no_argument, NULL, 'P' },
		{ "min-severity", required_argument, NULL, 's' },
		{ "fail-on", required_argument, NULL, 'F' },
		{ "ignore", required_argument, NULL, 'I' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "axolotl-only", no_argument, NULL, 'A' },
		{ "help", no_argument, NULL, 'h' },
	};
	struct option longopts[32];
	size_t n = 0, i;
	int c;

	/* The context flags are cli_context_options (diagnose takes them
	   too), then check's own. */
	while (cli_context_options[n].name != NULL)
		longopts[n] = cli_context_options[n], n++;
	for (i = 0; i < sizeof(own) / sizeof(own[0]); i++)
		longopts[n++] = own[i];
	longopts[n] = (struct option){ NULL, 0, NULL, 0 };
	optind = 1;
	while ((c = getopt_long(argc, argv, "hv", longopts, NULL)) != -1) {
		switch (c) {
		case 'f':
			if (set_format(op, optarg) != 0)
				return -1;
			break;
		case 's':
			op->min_severity = parse_severity(optarg, true);
			if (op->min_severity < 0) {
				fprintf(stderr, "preflight: error: "
				    "--min-severity must be error, warning or "
				    "info, got '%s'\n", optarg);
				return -1;
			}
			break;
		case 'F':
			c = parse_severity(optarg, false);
			if (c < 0) {
				fprintf(stderr, "preflight: error: --fail-on "
				    "must be error or warning, got '%s'\n",
				    optarg);
				return -1;
			}
			op->fail_on_warning = c == SEV_WARNING;
			break;
		case 'I': {
			const char **grown = realloc(op->ignore,
			    (op->nignore + 1) * sizeof(*grown));

			if (grown == NULL)
				return -1;
			op->ignore = grown;
			op->ignore[op->nignore++] = optarg;
			break;
		}
		case 'v':
			op->verbose = true;
			break;
		case 'A':
			op->axolotl_only = true;
			break;
		case 'P':
			op->policy_given = true;
			op->ctx.policy = NULL;
			break;
		case 'h':
			usage(stdout);
			return -2;
		case '?':
			usage(stderr);
			return -1;
		default:
			if (cli_context_opt(op, c, optarg) != 0)
				return -1;
			break;
		}
	}
	return optind;
}

/* The document's head and tail around the files. */
static void
document_begin(struct cli_run *run, bool many)
{
	const struct cli_opts *o = run->o;

	switch (o->format) {
	case FORMAT_JSON:
		if (many)
			jw_lit(&run->out, "[\n");
		break;
	case FORMAT_SARIF:
		formats_sarif_begin(&run->out, PREFLIGHT_VERSION,
		    run->cwd[0] != '\0' ? run->cwd : NULL);
		break;
	case FORMAT_GITLAB:
		formats_gitlab_begin(&run->out);
		break;
	case FORMAT_JUNIT:
		formats_junit_begin(&run->out);
		break;
	case FORMAT_CHECKRUN:
		formats_checkrun_init(&run->checkrun);
		break;
	case FORMAT_TEXT:
	case FORMAT_GITHUB:
		break;
	}
}

static void
document_end(struct cli_run *run, bool many)
{
	char *text;
	size_t len;

	switch (run->o->format) {
	case FORMAT_JSON:
		if (many)
			jw_lit(&run->out, run->first ? "]\n" : "\n]\n");
		else if (!run->first)
			jw_lit(&run->out, "\n");
		break;
	case FORMAT_SARIF:
		formats_sarif_end(&run->out);
		jw_lit(&run->out, "\n");
		break;
	case FORMAT_GITLAB:
		formats_gitlab_end(&run->out);
		jw_lit(&run->out, "\n");
		break;
	case FORMAT_JUNIT:
		formats_junit_end(&run->out);
		break;
	case FORMAT_CHECKRUN:
		text = formats_checkrun_end(&run->checkrun, &len);
		if (text == NULL) {
			run->out.oom = true;
			break;
		}
		jw_indent(&run->out, text, len, 0);
		jw_lit(&run->out, "\n");
		free(text);
		break;
	case FORMAT_TEXT:
	case FORMAT_GITHUB:
		break;
	}
}

static int
check_main(int argc, char **argv, struct cli_opts *op)
{
	struct cli_run run;
	struct err e = { 0 };
	struct stat st;
	bool many;
	const char *env;
	int i, first;

	context_default(&op->ctx);
	limits_default(&op->lim);
	op->format = FORMAT_TEXT;
	op->min_severity = -1;
	env = getenv("NO_COLOR");
	op->colour = isatty(STDOUT_FILENO) && (env == NULL || *env == '\0');
	first = parse_options(argc, argv, op);
	if (first < 0)
		return first == -2 ? 0 : 2;
	if (first >= argc) {
		fprintf(stderr, "preflight: error: no config given (a path, a "
		    "directory, or - for stdin)\n");
		usage(stderr);
		return 2;
	}
	if (settle_policy(op) != 0)
		return 2;
	/* Bad context is bad input for every file: say it once. */
	if (context_resolve(&op->ctx, &e) != 0) {
		fprintf(stderr, "preflight: error: %s\n", e.msg);
		return 2;
	}
	/* Formats people read hide info; data formats keep everything. */
	if (op->min_severity < 0)
		op->min_severity = op->verbose || op->format == FORMAT_JSON ||
		    op->format == FORMAT_SARIF || op->format == FORMAT_GITLAB ?
		    SEV_INFO : SEV_WARNING;
	memset(&run, 0, sizeof(run));
	run.o = op;
	run.first = true;
	jw_init(&run.out);
	if (getcwd(run.cwd, sizeof(run.cwd)) == NULL)
		run.cwd[0] = '\0';
	many = argc - first > 1;
	for (i = first; i < argc && !many; i++)
		if (strcmp(argv[i], "-") != 0 && stat(argv[i], &st) == 0 &&
		    S_ISDIR(st.st_mode))
			many = true;
	document_begin(&run, many);
	for (i = first; i < argc; i++) {
		if (strcmp(argv[i], "-") != 0 && stat(argv[i], &st) == 0 &&
		    S_ISDIR(st.st_mode))
			walk(&run, argv[i], 0);
		else
			check_file(&run, argv[i], op->axolotl_only);
	}
	document_end(&run, many);
	if (flush_out(&run) != 0 || fflush(stdout) != 0) {
		fprintf(stderr, "preflight: error: cannot write output: %s\n",
		    strerror(errno));
		run.worst = 2;
	}
	jw_fini(&run.out);
	if (run.skipped > 0)
		fprintf(stderr, "preflight: skipped %zu YAML file%s that %s "
		    "(no base_model or datasets at the top level)%s\n",
		    run.skipped, run.skipped == 1 ? "" : "s", run.skipped == 1 ?
		    "is not an Axolotl config" : "are not Axolotl configs",
		    op->verbose ? "" : "; --verbose lists them");
	return run.worst;
}

struct cli_opts *
cli_opts_new(void)
{
	struct cli_opts *o = calloc(1, sizeof(*o));

	if (o == NULL)
		return NULL;
	arena_init(&o->policy_arena, (size_t)16 << 20);
	context_default(&o->ctx);
	limits_default(&o->lim);
	return o;
}

void
cli_opts_free(struct cli_opts *o)
{
	if (o == NULL)
		return;
	arena_fini(&o->policy_arena);
	free(o->ds_config);
	free(o);
}

const struct context *
cli_context(struct cli_opts *o, const struct limits **lim)
{
	struct err e = { 0 };

	if (context_resolve(&o->ctx, &e) != 0) {
		fprintf(stderr, "preflight: error: %s\n", e.msg);
		return NULL;
	}
	*lim = &o->lim;
	return &o->ctx;
}

int
cli_check(int argc, char **argv)
{
	struct cli_opts o;
	int code;

	memset(&o, 0, sizeof(o));
	arena_init(&o.policy_arena, (size_t)16 << 20);
	code = check_main(argc, argv, &o);
	arena_fini(&o.policy_arena);
	free(o.ds_config);
	free(o.ignore);
	return code;
}

int
cli_version(int argc, char **argv)
{
	if (argc > 1 && (strcmp(argv[1], "--help") == 0 ||
	    strcmp(argv[1], "-h") == 0)) {
		printf("usage: preflight version\n\nPrints the version, the "
		    "git commit it was built from and the Axolotl commit\n"
		    "its rules follow.  No options.\n");
		return 0;
	}
	if (argc > 1) {
		fprintf(stderr, "usage: preflight version\n");
		return 2;
	}
	printf("preflight %s (git %s; rules follow axolotl %s)\n",
	    PREFLIGHT_VERSION, PREFLIGHT_GIT_COMMIT,
	    PREFLIGHT_AXOLOTL_COMMIT);
	return fflush(stdout) == 0 ? 0 : 2;
}
