/*
 * server/serve: `preflight serve` (the daemon) and `preflight migrate`.
 */
#ifndef SERVER_SERVE_H
#define SERVER_SERVE_H

/* Run the daemon until SIGTERM/SIGINT; argv[0] == "serve".  Exit code. */
int serve_main(int argc, char **argv);

/* Apply pending migrations to --db FILE; argv[0] == "migrate". */
int migrate_main(int argc, char **argv);

#endif /* SERVER_SERVE_H */
