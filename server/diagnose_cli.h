/*
 * server/diagnose_cli: `preflight diagnose` (issue #19).
 */
#ifndef SERVER_DIAGNOSE_CLI_H
#define SERVER_DIAGNOSE_CLI_H

/*
 * Run `preflight diagnose` with argv[0] == "diagnose".  Returns the exit
 * code: 0 a known signature was found, 1 none was, 2 unreadable or
 * invalid input.
 */
int diagnose_main(int argc, char **argv);

#endif /* SERVER_DIAGNOSE_CLI_H */
