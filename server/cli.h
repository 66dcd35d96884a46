/*
 * server/cli: `preflight check`, the offline check mode, and `preflight
 * version`.
 */
#ifndef SERVER_CLI_H
#define SERVER_CLI_H

/*
 * Run `preflight check` with argv[0] == "check".  Returns the exit code:
 * 0 pass or warn, 1 fail, 2 unreadable or invalid input (the worst over
 * all files).
 */
int cli_check(int argc, char **argv);

/* `preflight version`: the version, the git commit of the build and the
   Axolotl commit the rules follow.  0, or 2 on a bad invocation. */
int cli_version(int argc, char **argv);

#endif /* SERVER_CLI_H */
