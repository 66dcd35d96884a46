/*
 * server/cli: `preflight check FILE... [options]`.
 *
 * Reads each file (or stdin for "-"), runs the core check, prints text or
 * JSON on stdout.  An input that cannot be checked gets one
 * `file:line:col: error: message` line on stderr and makes the exit code 2.
 */
#include "cli.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "api/digest.h"
#include "api/encode.h"
#include "api/formats.h"
#include "core/arena.h"
#include "core/check.h"
#include "core/hfconfig.h"
#include "core/policy.h"
#include "core/version.h"
#include "server/file.h"
#include "server/hfcache.h"

/* Budget for one config's arena: ample for max_bytes of input. */
#define CLI_ARENA_CAP ((size_t)256 << 20)

enum cli_format {
	FORMAT_TEXT,
	FORMAT_JSON,
	FORMAT_SARIF,		/* one document for all files, at the end */
	FORMAT_GITHUB,
	FORMAT_GITLAB
};

/* A checked file kept until the end (document formats). */
struct kept {
	struct arena arena;
	const struct report *report;
	const char *file;
};

struct cli_opts {
	struct context ctx;
	struct arena policy_arena;	/* holds ctx.policy and ctx.model */
	char *ds_config;		/* --deepspeed-config file, malloc'd */
	struct limits lim;
	const char *hf_cache;		/* --hf-cache DIR, or NULL */
	enum cli_format format;
	bool colour;
};

static void
usage(FILE *out)
{
	fprintf(out,
	    "usage: preflight check [FILE... | -] [--gpus N] [--nodes M] "
	    "[--gpu ID]\n"
	    "                       [--interconnect nvlink|pcie|infiniband|"
	    "ethernet]\n"
	    "                       [--format text|json|sarif|github|gitlab]"
	    "\n"
	    "                       [--torch X.Y] [--policy FILE] "
	    "[--deepspeed-config FILE]\n"
	    "                       [--model-config FILE] "
	    "(a Hugging Face config.json) [--hf-cache DIR]\n"
	    "                       [--gpu-memory-gib X] [--host-memory-gib X] "
	    "[--dataset-tokens N]\n");
}

/* A GiB flag (core/report's range); prints the error itself. */
static int
parse_gib(double *out, const char *flag, const char *s)
{
	if (context_parse_gib(out, s) == 0)
		return 0;
	fprintf(stderr, "preflight: error: %s must be a number of GiB from "
	    "0.1 to 1048576, got '%s'\n", flag, s);
	return -1;
}

static int
parse_long(long *out, const char *flag, const char *s)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0' || v < 1 ||
	    v > 1000000) {
		fprintf(stderr, "preflight: error: %s must be an integer from "
		    "1 to 1000000, got '%s'\n", flag, s);
		return -1;
	}
	*out = v;
	return 0;
}

/* --policy FILE: parse once; the policy lives in o->policy_arena. */
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
	arena_fini(&o->policy_arena);
	arena_init(&o->policy_arena, (size_t)16 << 20);
	if (policy_parse(&p, buf, len, &o->policy_arena, &e) != 0) {
		if (e.loc.line > 0)
			fprintf(stderr, "%s:%u:%u: error: %s\n", path,
			    e.loc.line, e.loc.col, e.msg);
		else
			fprintf(stderr, "%s: error: %s\n", path, e.msg);
		free(buf);
		return -1;
	}
	free(buf);
	o->ctx.policy = p;
	return 0;
}

/*
 * One config: 0, 1 or 2 as the exit code would be for it alone.  With
 * keep, a checked report is moved into *keep (arena and all) for a
 * document printed at the end.
 */
static int
check_one(const char *path, const struct cli_opts *o, bool *first,
    struct kept *keep)
{
	struct arena a;
	struct err e = { 0 };
	struct report *r;
	char *buf;
	size_t len;
	int rv, code;

	if (file_read(&buf, &len, path, o->lim.max_bytes) != 0) {
		fprintf(stderr, "%s: error: cannot read: %s\n", path,
		    strerror(errno));
		return 2;
	}
	arena_init(&a, CLI_ARENA_CAP);
	rv = check_run(&r, buf, len, &o->ctx, &o->lim, &a, &e);
	if (rv == 0 && digest_sha256_hex(r->config_sha256, buf, len) != 0)
		rv = err_set(&e, ERR_INTERNAL, NULL, "cannot hash the config");
	if (rv != 0) {
		if (e.loc.line > 0)
			fprintf(stderr, "%s:%u:%u: error: %s\n", path,
			    e.loc.line, e.loc.col, e.msg);
		else
			fprintf(stderr, "%s: error: %s\n", path, e.msg);
		code = 2;
		goto out;
	}
	code = r->verdict == VERDICT_FAIL ? 1 : 0;
	if (keep != NULL) {
		keep->arena = a;
		keep->report = r;
		keep->file = path;
		free(buf);
		return code;
	}
	if (o->format == FORMAT_TEXT) {
		encode_report_text(stdout, r, path, o->colour);
	} else {
		json_t *j = encode_report_json(r, path);

		if (j == NULL) {
			fprintf(stderr, "%s: error: out of memory\n", path);
			code = 2;
			goto out;
		}
		if (!*first)
			fputs(",\n", stdout);
		json_dumpf(j, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
		json_decref(j);
		*first = false;
	}
out:
	arena_fini(&a);
	free(buf);
	return code;
}

/* SARIF, GitHub or GitLab: check everything, then print one document. */
static int
print_document(const struct cli_opts *o, char **files, int nfiles)
{
	struct kept *kept = calloc((size_t)nfiles, sizeof(*kept));
	struct format_input *in = calloc((size_t)nfiles, sizeof(*in));
	bool first = true;
	int i, worst = 0;
	size_t n = 0;
	json_t *doc = NULL;

	if (kept == NULL || in == NULL) {
		fprintf(stderr, "preflight: error: out of memory\n");
		worst = 2;
		goto out;
	}
	for (i = 0; i < nfiles; i++) {
		int code = check_one(files[i], o, &first, &kept[n]);

		if (kept[n].report != NULL) {
			in[n].report = kept[n].report;
			in[n].file = kept[n].file;
			n++;
		}
		if (code > worst)
			worst = code;
	}
	if (o->format == FORMAT_SARIF)
		doc = formats_sarif(in, n, PREFLIGHT_VERSION);
	else if (o->format == FORMAT_GITHUB)
		doc = formats_github(in, n);
	else
		doc = formats_gitlab(in, n);
	if (doc == NULL) {
		fprintf(stderr, "preflight: error: out of memory\n");
		worst = 2;
		goto out;
	}
	json_dumpf(doc, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	fputs("\n", stdout);
	json_decref(doc);
	if (fflush(stdout) != 0)
		worst = 2;
out:
	for (i = 0; kept != NULL && i < nfiles; i++)
		arena_fini(&kept[i].arena);
	free(kept);
	free(in);
	return worst;
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
	if (e.loc.line > 0)
		fprintf(stderr, "%s:%u:%u: error: %s\n", path, e.loc.line,
		    e.loc.col, e.msg);
	else
		fprintf(stderr, "%s: error: %s\n", path, e.msg);
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
		return parse_long(&op->ctx.gpus, "--gpus", arg);
	case 'n':
		return parse_long(&op->ctx.nodes, "--nodes", arg);
	case 'M':
		return parse_gib(&op->ctx.gpu_memory_gib, "--gpu-memory-gib",
		    arg);
	case 'H':
		return parse_gib(&op->ctx.host_memory_gib, "--host-memory-gib",
		    arg);
	case 'T':
		if (context_parse_tokens(&op->ctx.dataset_tokens, arg) != 0) {
			fprintf(stderr, "preflight: error: --dataset-tokens "
			    "must be a positive integer, got '%s'\n", arg);
			return -1;
		}
		return 0;
	case 'G':
		op->ctx.gpu = arg;
		return 0;
	case 'i':
		op->ctx.interconnect = arg;
		return 0;
	case 't':
		if (context_parse_torch(&op->ctx.torch, arg) != 0) {
			fprintf(stderr, "preflight: error: --torch must be a "
			    "version like 2.11, got '%s'\n", arg);
			return -1;
		}
		return 0;
	case 'p':
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

static int
check_main(int argc, char **argv, struct cli_opts *op)
{
	struct option longopts[24];
	struct err e = { 0 };
	bool first = true, many;
	int c, i, worst = 0, n = 0;
	const char *env;

	while (cli_context_options[n].name != NULL)
		longopts[n] = cli_context_options[n], n++;
	longopts[n++] = (struct option){ "format", required_argument, NULL,
	    'f' };
	longopts[n++] = (struct option){ "help", no_argument, NULL, 'h' };
	longopts[n] = (struct option){ NULL, 0, NULL, 0 };
	context_default(&op->ctx);
	limits_default(&op->lim);
	op->format = FORMAT_TEXT;
	env = getenv("NO_COLOR");
	op->colour = isatty(STDOUT_FILENO) && (env == NULL || *env == '\0');
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 'f':
			if (strcmp(optarg, "text") == 0) {
				op->format = FORMAT_TEXT;
			} else if (strcmp(optarg, "json") == 0) {
				op->format = FORMAT_JSON;
			} else if (strcmp(optarg, "sarif") == 0) {
				op->format = FORMAT_SARIF;
			} else if (strcmp(optarg, "github") == 0) {
				op->format = FORMAT_GITHUB;
			} else if (strcmp(optarg, "gitlab") == 0) {
				op->format = FORMAT_GITLAB;
			} else {
				fprintf(stderr, "preflight: error: --format "
				    "must be text, json, sarif, github or "
				    "gitlab, got '%s'\n", optarg);
				return 2;
			}
			break;
		case 'h':
			usage(stdout);
			return 0;
		case '?':
			usage(stderr);
			return 2;
		default:
			if (cli_context_opt(op, c, optarg) != 0)
				return 2;
			break;
		}
	}
	if (optind >= argc) {
		fprintf(stderr, "preflight: error: no config given (a path, "
		    "or - for stdin)\n");
		usage(stderr);
		return 2;
	}
	/* Bad context is bad input for every file: say it once. */
	if (context_resolve(&op->ctx, &e) != 0) {
		fprintf(stderr, "preflight: error: %s\n", e.msg);
		return 2;
	}
	many = argc - optind > 1;
	if (op->format >= FORMAT_SARIF)
		return print_document(op, argv + optind, argc - optind);
	if (op->format == FORMAT_JSON && many)
		fputs("[\n", stdout);
	for (i = optind; i < argc; i++) {
		int code = check_one(argv[i], op, &first, NULL);

		if (code > worst)
			worst = code;
	}
	if (op->format == FORMAT_JSON) {
		if (many)
			fputs("\n]", stdout);
		if (!first || many)
			fputs("\n", stdout);
	}
	if (fflush(stdout) != 0) {
		fprintf(stderr, "preflight: error: cannot write output: %s\n",
		    strerror(errno));
		return 2;
	}
	return worst;
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
	return code;
}
