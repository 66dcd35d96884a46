/*
 * server/cli_opts: the options of `preflight check` and the context flags
 * `preflight diagnose` shares with it (each decoded by core/context), the
 * organization's policy found or given, --model-config and --hf-cache.
 */
#include "cli.h"
#include "cli_int.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api/encode.h"
#include "core/arena.h"
#include "core/hfconfig.h"
#include "core/policy.h"
#include "core/report.h"
#include "server/file.h"
#include "server/hfcache.h"

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
void
cli_print_err(const char *path, const struct err *e)
{
	encode_text_safe(stderr, path);	/* a file name from a walk */
	if (e->loc.line > 0)
		fprintf(stderr, ":%u:%u", e->loc.line, e->loc.col);
	fputs(": error: ", stderr);
	encode_text_safe(stderr, e->msg);
	putc('\n', stderr);
}

/* Parse a policy file into o->policy_arena; prints the error itself. */
static int
load_policy(struct cli_opts *o, const char *path)
{
	struct err e = { 0 };
	struct policy *p;
	char *buf = NULL;
	size_t len;
	int rv = -1;

	if (file_read(&buf, &len, path, 1 << 20) != 0) {
		fprintf(stderr, "%s: error: cannot read: %s\n", path,
		    strerror(errno));
		goto out;
	}
	/* Into the arena that may hold --model-config's model too: a second
	   --policy adds to it, it does not free the first. */
	if (policy_parse(&p, buf, len, &o->policy_arena, &e) != 0) {
		cli_print_err(path, &e);
		goto out;
	}
	o->ctx.policy = p;
	rv = 0;
out:
	free(buf);
	return rv;
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
	cli_print_err(path, &e);
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

/* check's options: see cli_int.h. */
int
cli_check_options(struct cli_opts *op, int argc, char **argv)
{
	struct err e = { 0 };
	const char *env;
	int first;

	context_default(&op->ctx);
	limits_default(&op->lim);
	op->format = FORMAT_TEXT;
	op->min_severity = -1;
	env = getenv("NO_COLOR");
	op->colour = isatty(STDOUT_FILENO) && (env == NULL || *env == '\0');
	first = parse_options(argc, argv, op);
	if (first < 0)
		return first;
	if (first >= argc) {
		fprintf(stderr, "preflight: error: no config given (a path, a "
		    "directory, or - for stdin)\n");
		usage(stderr);
		return -1;
	}
	if (settle_policy(op) != 0)
		return -1;
	/* Bad context is bad input for every file: say it once. */
	if (context_resolve(&op->ctx, &e) != 0) {
		fprintf(stderr, "preflight: error: %s\n", e.msg);
		return -1;
	}
	/* Formats people read hide info; data formats keep everything. */
	if (op->min_severity < 0)
		op->min_severity = op->verbose || op->format == FORMAT_JSON ||
		    op->format == FORMAT_SARIF || op->format == FORMAT_GITLAB ?
		    SEV_INFO : SEV_WARNING;
	return first;
}
