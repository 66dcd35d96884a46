/*
 * server/health: `preflight health`, the daemon probing itself.
 */
#ifndef SERVER_HEALTH_H
#define SERVER_HEALTH_H

/*
 * argv[0] is "health".  GETs --url (default: /healthz on 127.0.0.1 at
 * PREFLIGHT_LISTEN's port, else 8080).  Returns the exit code: 0 for a
 * 2xx answer, 1 for any other answer or none in --timeout seconds, 2 a
 * bad invocation.
 */
int health_main(int argc, char **argv);

#endif /* SERVER_HEALTH_H */
