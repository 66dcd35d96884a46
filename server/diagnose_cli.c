/*
 * server/diagnose_cli: `preflight diagnose LOG [--config FILE] [context
 * flags] [--format text|json]` (issue #19), and `preflight diagnose
 * --signatures` (the table; `make docs` writes docs/diagnose.md from it).
 *
 * Reads the log (or stdin for "-"), runs core/diagnose, and with a config
 * holds the log's CUDA OOM against the estimate.  The context flags are
 * check's, parsed by server/cli.c.  Exit 0 when a known signature was
 * found, 1 when none was, 2 for input that cannot be read or checked.
 */
#include "diagnose_cli.h"

#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "api/diagnose.h"
#include "core/arena.h"
#include "core/diagnose.h"
#include "core/report.h"
#include "server/cli.h"
#include "server/file.h"

#define LOG_MAX ((size_t)256 << 20)	/* bytes of a log read */
#define CONFIG_MAX ((size_t)8 << 20)
#define ARENA_CAP ((size_t)256 << 20)

static void
usage(FILE *out)
{
	fprintf(out,
	    "usage: preflight diagnose LOG | - [--config FILE] "
	    "[--format text|json]\n"
	    "                          [--gpus N] [--nodes M] [--gpu ID] "
	    "[--interconnect LINK]\n"
	    "                          [--torch X.Y] [--policy FILE] "
	    "[--deepspeed-config FILE]\n"
	    "                          [--model-config FILE] "
	    "[--hf-cache DIR]\n"
	    "                          [--gpu-memory-gib X] "
	    "[--host-memory-gib X] [--dataset-tokens N]\n"
	    "       preflight diagnose --signatures "
	    "[--format text|json|markdown]\n");
}

/* `--signatures`: the table. */
static int
signatures(const char *format)
{
	size_t n, i;
	const struct diag_sig *s = diagnose_signatures(&n);

	if (strcmp(format, "markdown") == 0) {
		diagnose_encode_markdown(stdout);
	} else if (strcmp(format, "json") == 0) {
		json_t *j = diagnose_encode_signatures();

		if (j == NULL)
			return 2;
		json_dumpf(j, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
		putchar('\n');
		json_decref(j);
	} else {
		for (i = 0; i < n; i++)
			printf("%-28s %-10s %s\n", s[i].id, s[i].klass,
			    s[i].title);
	}
	return fflush(stdout) == 0 ? 0 : 2;
}

/* Diagnose log (with cfg when not NULL) and print it; the exit code. */
static int
run(const char *log_path, const char *cfg_path, const char *format,
    struct cli_opts *o)
{
	const struct context *ctx = NULL;
	const struct limits *lim = NULL;
	struct diag_limits dl;
	struct diag_report *d;
	struct err e = { 0 };
	struct arena a;
	char *log = NULL, *cfg = NULL;
	size_t len, cfg_len;
	const char *env = getenv("NO_COLOR");
	int code = 2;

	arena_init(&a, ARENA_CAP);
	ctx = cli_context(o, &lim);
	if (ctx == NULL)
		goto out;
	if (cfg_path != NULL) {
		if (file_read(&cfg, &cfg_len, cfg_path, CONFIG_MAX) != 0 ||
		    cfg_len > CONFIG_MAX) {
			fprintf(stderr, "%s: error: cannot read: %s\n",
			    cfg_path, cfg_len > CONFIG_MAX ? "over 8 MiB" :
			    strerror(errno));
			goto out;
		}
	}
	if (file_read(&log, &len, log_path, LOG_MAX) != 0 || len > LOG_MAX) {
		fprintf(stderr, "%s: error: cannot read: %s\n", log_path,
		    log != NULL && len > LOG_MAX ? "over 256 MiB (pass its "
		    "tail: the end of a log is what tells)" : strerror(errno));
		goto out;
	}
	diag_limits_default(&dl);
	if (diagnose_log(&d, log, len, &dl, &a, &e) != 0) {
		fprintf(stderr, "%s: error: %s\n", log_path, e.msg);
		goto out;
	}
	if (cfg != NULL && diagnose_config(d, cfg, cfg_len, ctx, lim, &a,
	    &e) != 0) {
		if (e.loc.line > 0)
			fprintf(stderr, "%s:%u:%u: error: %s\n", cfg_path,
			    e.loc.line, e.loc.col, e.msg);
		else
			fprintf(stderr, "%s: error: %s\n", cfg_path, e.msg);
		goto out;
	}
	if (strcmp(format, "json") == 0) {
		json_t *j = diagnose_encode_json(d, log_path);

		if (j == NULL) {
			fprintf(stderr, "preflight: error: out of memory\n");
			goto out;
		}
		json_dumpf(j, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER |
		    JSON_REAL_PRECISION(10));
		putchar('\n');
		json_decref(j);
	} else {
		diagnose_encode_text(stdout, d, log_path,
		    isatty(STDOUT_FILENO) && (env == NULL || *env == '\0'));
	}
	if (fflush(stdout) != 0) {
		fprintf(stderr, "preflight: error: cannot write output: %s\n",
		    strerror(errno));
		goto out;
	}
	code = d->n > 0 ? 0 : 1;
out:
	arena_fini(&a);
	free(log);
	free(cfg);
	return code;
}

int
diagnose_main(int argc, char **argv)
{
	struct option longopts[24];
	struct cli_opts *o = cli_opts_new();
	const char *cfg = NULL, *format = NULL;
	bool sigs = false;
	int c, n = 0, code = 2;

	if (o == NULL) {
		fprintf(stderr, "preflight: error: out of memory\n");
		return 2;
	}
	while (cli_context_options[n].name != NULL)
		longopts[n] = cli_context_options[n], n++;
	longopts[n++] = (struct option){ "config", required_argument, NULL,
	    'C' };
	longopts[n++] = (struct option){ "format", required_argument, NULL,
	    'f' };
	longopts[n++] = (struct option){ "signatures", no_argument, NULL,
	    'S' };
	longopts[n++] = (struct option){ "help", no_argument, NULL, 'h' };
	longopts[n] = (struct option){ NULL, 0, NULL, 0 };
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 'C':
			cfg = optarg;
			break;
		case 'f':
			format = optarg;
			break;
		case 'S':
			sigs = true;
			break;
		case 'h':
			usage(stdout);
			code = 0;
			goto out;
		case '?':
			usage(stderr);
			goto out;
		default:
			if (cli_context_opt(o, c, optarg) != 0)
				goto out;
			break;
		}
	}
	if (sigs) {
		if (format != NULL && strcmp(format, "text") != 0 &&
		    strcmp(format, "json") != 0 &&
		    strcmp(format, "markdown") != 0) {
			fprintf(stderr, "preflight: error: --format must be "
			    "text, json or markdown, got '%s'\n", format);
			goto out;
		}
		code = signatures(format != NULL ? format : "text");
		goto out;
	}
	if (format != NULL && strcmp(format, "text") != 0 &&
	    strcmp(format, "json") != 0) {
		fprintf(stderr, "preflight: error: --format must be text or "
		    "json, got '%s'\n", format);
		goto out;
	}
	if (optind != argc - 1) {
		fprintf(stderr, "preflight: error: give one log (a path, or - "
		    "for stdin)\n");
		usage(stderr);
		goto out;
	}
	code = run(argv[optind], cfg, format != NULL ? format : "text", o);
out:
	cli_opts_free(o);
	return code;
}
