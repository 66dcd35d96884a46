/*
 * server/store_sqlite: the SQLite implementation of api/store.h.
 *
 * WAL mode, a busy timeout, prepared statements only.  One writer
 * connection owned by a writer thread that group-commits what request
 * threads queue without waiting for it (server/store_writer.c); a pool of
 * read connections (WAL lets them read at once),
 * each read under a time budget; a checkpointer and a health thread
 * (PRAGMA quick_check) with their own connections.  The file is created
 * mode 0600; a database that fails quick_check is refused at open.  Every
 * storage error is logged (code and message, never the data), and a
 * serious one (corruption, I/O, full disk) fails readiness for a minute.
 * Migrations
 * (migrations/NNNN_*.sql, embedded) are applied in order at open, each in
 * its own transaction, and recorded in PRAGMA user_version.
 */
#ifndef SERVER_STORE_SQLITE_H
#define SERVER_STORE_SQLITE_H

#include <stdbool.h>
#include <stdint.h>

#include "api/store.h"

struct store_sqlite;

/*
 * Open (creating) the database at path (":memory:" works) and migrate it.
 * full_sync selects synchronous=FULL instead of NORMAL.  migrate false
 * refuses a database that is behind instead of migrating it.  A database
 * newer than this binary is refused with ERR_STORE.  *out is new: free it
 * with store_sqlite_close().
 */
int store_sqlite_open(struct store_sqlite **out, const char *path,
    bool full_sync, struct err *e);

/* Close the connection; NULL is a no-op. */
void store_sqlite_close(struct store_sqlite *s);

/* The generic interface for api/.  Borrowed: valid while s is open. */
struct store store_sqlite_iface(struct store_sqlite *s);

/*
 * Delete up to batch checks with ids below before_id (created before the
 * time api_id_floor() encoded) and everything that refers to them (their
 * rule entries, by trigger; their diagnoses, by foreign key) in one
 * statement.  *deleted gets the count.
 */
int store_sqlite_prune(struct store_sqlite *s, const char *before_id,
    int batch, int *deleted, struct err *e);

/* A stored API token (never the token itself). */
struct store_token {
	long long id;
	char team[65];
	bool admin;
	int64_t created_at_ms;
	int64_t revoked_at_ms;	/* 0 while valid */
};

/* Store a token's SHA-256 (hex) for team; *id gets its id. */
int store_sqlite_token_add(struct store_sqlite *s, const char *team,
    bool admin, const char *sha256_hex, int64_t now_ms, long long *id,
    struct err *e);

/* Revoke token id; ERR_NOTFOUND if there is no such valid token. */
int store_sqlite_token_revoke(struct store_sqlite *s, long long id,
    int64_t now_ms, struct err *e);

/* Call fn for every token, oldest first. */
int store_sqlite_token_list(struct store_sqlite *s,
    void (*fn)(void *arg, const struct store_token *t), void *arg,
    struct err *e);

/*
 * The valid token with this SHA-256 (hex): 0 and *out filled, or
 * ERR_NOTFOUND.  The lookup is by hash, so no secret is compared.
 */
int store_sqlite_token_find(struct store_sqlite *s, const char *sha256_hex,
    struct store_token *out, struct err *e);

/* The time budget of one read, in ms (default 2000): past it the read
   stops with ERR_BUSY, so one team's large query cannot hold a read
   connection for long.  Call before serving. */
void store_sqlite_query_budget(struct store_sqlite *s, int ms);

/* Seconds between background PRAGMA quick_checks (default 300; 0: only
   the one at open). */
void store_sqlite_health_interval(struct store_sqlite *s, unsigned seconds);

/*
 * For the store's other files (server/store_diagnose.c): run fn on the
 * writer connection, queued with the other writes (autocommit: one
 * statement is one transaction), or on the reader connection under its
 * lock.  fn's return value is returned.
 */
struct sqlite3;
int store_sqlite_write(struct store_sqlite *s,
    int (*fn)(struct sqlite3 *db, void *arg, struct err *e), void *arg,
    struct err *e);
int store_sqlite_read(struct store_sqlite *s,
    int (*fn)(struct sqlite3 *db, void *arg, struct err *e), void *arg,
    struct err *e);

/*
 * For tests: the EXPLAIN QUERY PLAN of every query the store runs (each
 * filter combination of the lists and the rule filter, statistics,
 * lookups, the pruning delete, the diagnoses list): fn(arg, sql, plan)
 * once each, plan being the plan's lines joined by "; ".  0 or
 * ERR_STORE.
 */
int store_sqlite_plans(struct store_sqlite *s,
    void (*fn)(void *arg, const char *sql, const char *plan), void *arg,
    struct err *e);

/* Schema version now applied. */
int store_sqlite_version(struct store_sqlite *s);

#endif /* SERVER_STORE_SQLITE_H */
