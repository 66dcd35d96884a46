/*
 * core/core: the core library as a whole.
 *
 * core_init builds, once per process, every table the core shares
 * read-only between requests (arena_once): the model index, the
 * DeepSpeed presets' documents, the constant suggestions, the failure-log
 * matcher, and the rule and key tables (reached through check_run, whose
 * modules build them on first use).  main() calls it for the daemon,
 * after limits_set_hash_key and before any request or thread; the tests
 * call it before their first test (tests/fixture.c).  Afterwards no
 * request builds a table, so none can be the one that finds no memory
 * for it.  Without it every table is still built on first use: the
 * one-shot commands (check, diagnose) do that, since building all of
 * them would cost more than the check itself.
 */
#ifndef CORE_CORE_H
#define CORE_CORE_H

struct err;

/* Build every per-process table; 0, or ERR_NOMEM / ERR_INTERNAL set in
   e.  Calling it again is cheap and changes nothing. */
int core_init(struct err *e);

#endif /* CORE_CORE_H */
