/*
 * server/main: the preflight process.  Dispatches subcommands; each one
 * lives in its own module.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "serve.h"
#include "token.h"
#include "core/version.h"

static void
usage(FILE *out)
{
	fprintf(out,
	    "usage: preflight check [FILE... | -] [options]   "
	    "(preflight check --help)\n"
	    "       preflight serve [options]   (preflight serve --help)\n"
	    "       preflight token create|list|revoke ... --db FILE\n"
	    "       preflight migrate --db FILE\n"
	    "       preflight version\n");
}

int
main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (strcmp(argv[1], "check") == 0)
		return cli_check(argc - 1, argv + 1);
	if (strcmp(argv[1], "serve") == 0)
		return serve_main(argc - 1, argv + 1);
	if (strcmp(argv[1], "token") == 0)
		return token_main(argc - 1, argv + 1);
	if (strcmp(argv[1], "migrate") == 0)
		return migrate_main(argc - 1, argv + 1);
	if (strcmp(argv[1], "version") == 0 ||
	    strcmp(argv[1], "--version") == 0) {
		printf("preflight %s (rules follow axolotl %s)\n",
		    PREFLIGHT_VERSION, PREFLIGHT_AXOLOTL_COMMIT);
		return 0;
	}
	if (strcmp(argv[1], "help") == 0 || strcmp(argv[1], "--help") == 0 ||
	    strcmp(argv[1], "-h") == 0) {
		usage(stdout);
		return 0;
	}
	fprintf(stderr, "preflight: error: unknown command '%s'\n", argv[1]);
	usage(stderr);
	return 2;
}
