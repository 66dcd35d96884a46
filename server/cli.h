/*
 * server/cli: `preflight check`, the offline check mode, and `preflight
 * version`.
 */
#ifndef SERVER_CLI_H
#define SERVER_CLI_H

#include <getopt.h>

struct cli_opts;
struct context;
struct limits;

/*
 * Run `preflight check` with argv[0] == "check".  Returns the exit code:
 * 0 pass or warn, 1 fail, 2 unreadable or invalid input (the worst over
 * all files).
 */
int cli_check(int argc, char **argv);

/* `preflight version`: the version, the git commit of the build and the
   Axolotl commit the rules follow.  0, or 2 on a bad invocation. */
int cli_version(int argc, char **argv);

/*
 * check's context flags (--gpus ... --dataset-tokens, --policy,
 * --deepspeed-config, --model-config, --hf-cache) as getopt_long entries,
 * ending in an all-zero one, for other subcommands (`preflight diagnose`)
 * to take the same flags with the same parser.
 */
extern const struct option cli_context_options[];

/* A context-flag state with the defaults; free it with cli_opts_free().
   New; NULL when out of memory. */
struct cli_opts *cli_opts_new(void);

/* Free o; NULL is a no-op. */
void cli_opts_free(struct cli_opts *o);

/* Apply the context flag whose getopt val is c, with arg, to o: 0, or -1
   after printing the error (the exit code is then 2). */
int cli_context_opt(struct cli_opts *o, int c, const char *arg);

/* o's context, resolved, and its document limits; borrowed from o.  NULL
   after printing the error (exit code 2). */
const struct context *cli_context(struct cli_opts *o,
    const struct limits **lim);

#endif /* SERVER_CLI_H */
