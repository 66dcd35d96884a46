/*
 * server/cli_int: what server/cli.c (running the checks, writing the
 * reports) and server/cli_opts.c (reading the options) share.
 */
#ifndef SERVER_CLI_INT_H
#define SERVER_CLI_INT_H

#include <stdbool.h>
#include <stddef.h>

#include "core/arena.h"
#include "core/context.h"
#include "core/doc.h"
#include "core/err.h"

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

/* A file's error on stderr, compiler-style: "path:line:col: error: msg". */
void cli_print_err(const char *path, const struct err *e);

/*
 * check's options (argv[0] is "check") into op (zeroed, its policy arena
 * initialized): defaults, flags, policy, the resolved context, the
 * severity shown.  The index of the first operand, or -1 (the error is
 * printed: exit 2) or -2 (--help was printed: exit 0).
 */
int cli_check_options(struct cli_opts *op, int argc, char **argv);

#endif /* SERVER_CLI_INT_H */
