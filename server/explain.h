/*
 * server/explain: `preflight rules ID` and `preflight explain ID`.
 */
#ifndef SERVER_EXPLAIN_H
#define SERVER_EXPLAIN_H

/*
 * argv[0] is "rules" or "explain", argv[1] a rule id (explained in full)
 * or a pattern ending in '*' (the rules it matches, one line each).
 * Returns the exit code: 0, or 2 for an unknown id or a bad invocation
 * (an unknown id lists the ids that contain it on stderr).
 */
int explain_main(int argc, char **argv);

#endif /* SERVER_EXPLAIN_H */
