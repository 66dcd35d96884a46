/*
 * server/store_token: API tokens in the store (only their SHA-256 is
 * kept): add and revoke through the writer, list and find on a reader.
 */
#include "server/store_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/arena.h"
#include "server/log.h"

/* ---- tokens -------------------------------------------------------- */

struct token_args {
	const char *team;
	bool admin;
	const char *sha;
	int64_t now_ms;
	long long id;		/* add: out; revoke: in */
};

static int
token_add_fn(sqlite3 *db, void *arg, struct err *e)
{
	struct token_args *t = arg;
	sqlite3_stmt *st = NULL;
	int rv = 0;

	if (sqlite3_prepare_v2(db, "INSERT INTO tokens (team, admin, "
	    "token_sha256, created_at) VALUES (?1, ?2, ?3, ?4)", -1, &st,
	    NULL) != SQLITE_OK ||
	    sqlite3_bind_text(st, 1, t->team, -1, SQLITE_STATIC) ||
	    sqlite3_bind_int(st, 2, t->admin) ||
	    sqlite3_bind_text(st, 3, t->sha, -1, SQLITE_STATIC) ||
	    sqlite3_bind_int64(st, 4, t->now_ms) ||
	    sqlite3_step(st) != SQLITE_DONE)
		rv = store_db_fail(NULL, db, e, "add token");
	else
		t->id = sqlite3_last_insert_rowid(db);
	sqlite3_finalize(st);
	return rv;
}

static int
token_revoke_fn(sqlite3 *db, void *arg, struct err *e)
{
	struct token_args *t = arg;
	sqlite3_stmt *st = NULL;
	int rv = 0;

	if (sqlite3_prepare_v2(db, "UPDATE tokens SET revoked_at = ?1 WHERE "
	    "id = ?2 AND revoked_at IS NULL", -1, &st, NULL) != SQLITE_OK ||
	    sqlite3_bind_int64(st, 1, t->now_ms) ||
	    sqlite3_bind_int64(st, 2, t->id) ||
	    sqlite3_step(st) != SQLITE_DONE)
		rv = store_db_fail(NULL, db, e, "revoke token");
	else if (sqlite3_changes(db) == 0)
		rv = err_set(e, ERR_NOTFOUND, NULL,
		    "no valid token with id %lld", t->id);
	sqlite3_finalize(st);
	return rv;
}

int
store_sqlite_token_add(struct store_sqlite *s, const char *team, bool admin,
    const char *sha256_hex, int64_t now_ms, long long *id, struct err *e)
{
	struct token_args t = { team, admin, sha256_hex, now_ms, 0 };
	int rv = store_call(s, token_add_fn, &t, e);

	*id = t.id;
	return rv;
}

int
store_sqlite_token_revoke(struct store_sqlite *s, long long id,
    int64_t now_ms, struct err *e)
{
	struct token_args t = { NULL, false, NULL, now_ms, id };

	return store_call(s, token_revoke_fn, &t, e);
}

static void
read_token(struct store_token *t, sqlite3_stmt *st)
{
	const char *team = (const char *)sqlite3_column_text(st, 1);

	memset(t, 0, sizeof(*t));
	t->id = sqlite3_column_int64(st, 0);
	snprintf(t->team, sizeof(t->team), "%s", team != NULL ? team : "");
	t->admin = sqlite3_column_int(st, 2) != 0;
	t->created_at_ms = sqlite3_column_int64(st, 3);
	t->revoked_at_ms = sqlite3_column_int64(st, 4);
}

int
store_sqlite_token_list(struct store_sqlite *s,
    void (*fn)(void *arg, const struct store_token *t), void *arg,
    struct err *e)
{
	sqlite3_stmt *st = NULL;
	struct reader *rd;
	struct store_token t;
	int rc, rv = 0;

	rd = store_reader_get(s);
	rd->deadline_ms = 0;	/* an operator's listing: no budget */
	if (sqlite3_prepare_v2(rd->db, "SELECT id, team, admin, created_at, "
	    "coalesce(revoked_at, 0) FROM tokens ORDER BY id", -1, &st,
	    NULL) != SQLITE_OK) {
		rv = store_db_fail(s, rd->db, e, "list tokens");
		goto out;
	}
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		read_token(&t, st);
		fn(arg, &t);
	}
	if (rc != SQLITE_DONE)
		rv = store_db_fail(s, rd->db, e, "list tokens");
out:
	sqlite3_finalize(st);
	store_reader_put(s, rd);
	return rv;
}

int
store_sqlite_token_find(struct store_sqlite *s, const char *sha256_hex,
    struct store_token *out, struct err *e)
{
	sqlite3_stmt *st;
	struct reader *rd;
	int rc, rv;

	rd = store_reader_get(s);
	st = rd->find_token;
	if (sqlite3_bind_text(st, 1, sha256_hex, -1, SQLITE_STATIC)) {
		rv = store_db_fail(s, rd->db, e, "bind");
		goto out;
	}
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		read_token(out, st);
		rv = 0;
	} else if (rc == SQLITE_DONE) {
		rv = err_set(e, ERR_NOTFOUND, NULL, "no such token");
	} else {
		rv = store_db_fail(s, rd->db, e, "find token");
	}
out:
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	store_reader_put(s, rd);
	return rv;
}

