/*
 * server/token: `preflight token create|list|revoke`.
 */
#ifndef SERVER_TOKEN_H
#define SERVER_TOKEN_H

/* argv[0] == "token".  Returns the exit code. */
int token_main(int argc, char **argv);

#endif /* SERVER_TOKEN_H */
