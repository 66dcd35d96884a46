/*
 * server/store_sqlite: checks and findings in one SQLite file.
 *
 * Contract: a put_check() that returns 0 has committed.  Every statement
 * binds its values; the list query is assembled only from the constant
 * fragments below (one prepared statement per filter combination, cached).
 * Write failures (disk full, I/O errors) are counted and reported as
 * ERR_STORE; reads go on working.
 */
#include "store_sqlite.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "core/arena.h"
#include "server/migrations.h"

#define LIST_VARIANTS 64	/* 2^6 optional filters */

struct store_sqlite {
	sqlite3 *db;
	pthread_mutex_t mu;	/* one user of db at a time */
	sqlite3_stmt *ins_check;
	sqlite3_stmt *ins_finding;
	sqlite3_stmt *get_check;
	sqlite3_stmt *get_idem;
	sqlite3_stmt *beat;
	sqlite3_stmt *list[LIST_VARIANTS];	/* lazily prepared */
	sqlite3_stmt *stats[2];	/* [0] all teams, [1] one team */
	long long write_errors;
	int version;
};

static int
db_fail(struct store_sqlite *s, struct err *e, const char *what)
{
	return err_set(e, ERR_STORE, NULL, "%s: %s", what,
	    sqlite3_errmsg(s->db));
}

static int
exec(struct store_sqlite *s, const char *sql, struct err *e)
{
	char *msg = NULL;
	int rc = sqlite3_exec(s->db, sql, NULL, NULL, &msg);

	if (rc != SQLITE_OK) {
		err_set(e, ERR_STORE, NULL, "%s", msg != NULL ? msg :
		    sqlite3_errstr(rc));
		sqlite3_free(msg);
		return ERR_STORE;
	}
	return 0;
}

static int
prepare(struct store_sqlite *s, sqlite3_stmt **st, const char *sql,
    struct err *e)
{
	if (sqlite3_prepare_v3(s->db, sql, -1, SQLITE_PREPARE_PERSISTENT, st,
	    NULL) != SQLITE_OK)
		return db_fail(s, e, "prepare");
	return 0;
}

static int
migrate(struct store_sqlite *s, struct err *e)
{
	sqlite3_stmt *st = NULL;
	int v, i, rv;

	if (sqlite3_prepare_v2(s->db, "PRAGMA user_version", -1, &st,
	    NULL) != SQLITE_OK || sqlite3_step(st) != SQLITE_ROW) {
		sqlite3_finalize(st);
		return db_fail(s, e, "read user_version");
	}
	v = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	if (v > migrations_count)
		return err_set(e, ERR_STORE, NULL,
		    "database schema version %d is newer than this preflight "
		    "(knows up to %d); upgrade preflight or use another "
		    "--db", v, migrations_count);
	for (i = v; i < migrations_count; i++) {
		char pragma[64];

		rv = exec(s, "BEGIN IMMEDIATE", e);
		if (rv != 0)
			return rv;
		rv = exec(s, migrations[i].sql, e);
		if (rv == 0) {
			snprintf(pragma, sizeof(pragma),
			    "PRAGMA user_version = %d", migrations[i].version);
			rv = exec(s, pragma, e);
		}
		if (rv == 0)
			rv = exec(s, "COMMIT", e);
		if (rv != 0) {
			sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
			return rv;
		}
	}
	s->version = migrations_count;
	return 0;
}

int
store_sqlite_open(struct store_sqlite **out, const char *path,
    bool full_sync, struct err *e)
{
	struct store_sqlite *s;
	int rv;

	*out = NULL;
	s = calloc(1, sizeof(*s));
	if (s == NULL)
		return err_set(e, ERR_NOMEM, NULL, "out of memory");
	pthread_mutex_init(&s->mu, NULL);
	if (sqlite3_open_v2(path, &s->db, SQLITE_OPEN_READWRITE |
	    SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK) {
		rv = err_set(e, ERR_STORE, NULL, "cannot open %s: %s", path,
		    s->db != NULL ? sqlite3_errmsg(s->db) : "out of memory");
		goto fail;
	}
	sqlite3_busy_timeout(s->db, 5000);
	sqlite3_extended_result_codes(s->db, 1);
	rv = exec(s, "PRAGMA foreign_keys = ON", e);
	if (rv == 0)
		rv = exec(s, "PRAGMA journal_mode = WAL", e);
	if (rv == 0)
		rv = exec(s, full_sync ? "PRAGMA synchronous = FULL" :
		    "PRAGMA synchronous = NORMAL", e);
	if (rv == 0)
		rv = migrate(s, e);
	if (rv == 0)
		rv = prepare(s, &s->ins_check,
		    "INSERT INTO checks (id, created_at, team, name, "
		    "config_sha256, verdict, errors, warnings, infos, context, "
		    "report, config, idem_key, body_sha256) VALUES "
		    "(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, "
		    "?14)", e);
	if (rv == 0)
		rv = prepare(s, &s->ins_finding,
		    "INSERT INTO findings (check_id, rule, severity, line, "
		    "team, verdict, created_at) VALUES (?1, ?2, ?3, ?4, ?5, "
		    "?6, ?7)", e);
	if (rv == 0)
		rv = prepare(s, &s->get_check,
		    "SELECT id, created_at, team, name, config_sha256, "
		    "verdict, errors, warnings, infos, context, report, config, "
		    "idem_key, body_sha256 FROM checks WHERE id = ?1 AND "
		    "(?2 IS NULL OR team = ?2)", e);
	if (rv == 0)
		rv = prepare(s, &s->get_idem,
		    "SELECT id, created_at, team, name, config_sha256, "
		    "verdict, errors, warnings, infos, context, report, config, "
		    "idem_key, body_sha256 FROM checks WHERE team = ?1 AND "
		    "idem_key = ?2", e);
	if (rv == 0)
		rv = prepare(s, &s->beat,
		    "UPDATE health SET beat = beat + 1 WHERE id = 1", e);
	if (rv != 0)
		goto fail;
	*out = s;
	return 0;
fail:
	store_sqlite_close(s);
	return rv;
}

void
store_sqlite_close(struct store_sqlite *s)
{
	int i;

	if (s == NULL)
		return;
	sqlite3_finalize(s->ins_check);
	sqlite3_finalize(s->ins_finding);
	sqlite3_finalize(s->get_check);
	sqlite3_finalize(s->get_idem);
	sqlite3_finalize(s->beat);
	for (i = 0; i < LIST_VARIANTS; i++)
		sqlite3_finalize(s->list[i]);
	sqlite3_finalize(s->stats[0]);
	sqlite3_finalize(s->stats[1]);
	/* sqlite3_close_v2 checkpoints WAL on the last connection. */
	sqlite3_close_v2(s->db);
	pthread_mutex_destroy(&s->mu);
	free(s);
}

int
store_sqlite_version(struct store_sqlite *s)
{
	return s->version;
}

/* Copy column i as a NUL-terminated arena string ("" for NULL). */
static const char *
col_text(sqlite3_stmt *st, int i, size_t *len, struct arena *a)
{
	const char *t = (const char *)sqlite3_column_text(st, i);
	size_t n = (size_t)sqlite3_column_bytes(st, i);

	if (len != NULL)
		*len = n;
	return arena_strndup(a, t != NULL ? t : "", t != NULL ? n : 0);
}

/* Fill c from a row of the 14 (or 11, without config) check columns. */
static int
read_row(struct store_check *c, sqlite3_stmt *st, bool full,
    struct arena *a, struct err *e)
{
	const char *id = (const char *)sqlite3_column_text(st, 0);

	memset(c, 0, sizeof(*c));
	snprintf(c->id, sizeof(c->id), "%s", id != NULL ? id : "");
	c->created_at_ms = sqlite3_column_int64(st, 1);
	c->team = col_text(st, 2, NULL, a);
	c->name = col_text(st, 3, NULL, a);
	c->config_sha256 = col_text(st, 4, NULL, a);
	c->verdict = col_text(st, 5, NULL, a);
	c->errors = (long)sqlite3_column_int64(st, 6);
	c->warnings = (long)sqlite3_column_int64(st, 7);
	c->infos = (long)sqlite3_column_int64(st, 8);
	c->context_json = col_text(st, 9, NULL, a);
	c->json = col_text(st, 10, NULL, a);
	if (full) {
		c->config = col_text(st, 11, &c->config_len, a);
		c->idem_key = sqlite3_column_type(st, 12) == SQLITE_NULL ?
		    NULL : col_text(st, 12, NULL, a);
		c->body_sha256 = col_text(st, 13, NULL, a);
		if (c->config == NULL || c->body_sha256 == NULL)
			return err_set(e, ERR_NOMEM, NULL, "out of memory");
	}
	if (c->team == NULL || c->name == NULL || c->config_sha256 == NULL ||
	    c->verdict == NULL || c->context_json == NULL || c->json == NULL)
		return err_set(e, ERR_NOMEM, NULL, "out of memory");
	return 0;
}

static int
put_check(void *self, const struct store_check *c, struct err *e)
{
	struct store_sqlite *s = self;
	sqlite3_stmt *st = s->ins_check, *f = s->ins_finding;
	size_t i;
	int rv = 0;

	pthread_mutex_lock(&s->mu);
	if (sqlite3_exec(s->db, "BEGIN IMMEDIATE", NULL, NULL, NULL) !=
	    SQLITE_OK) {
		rv = db_fail(s, e, "begin");
		goto out;
	}
	if (sqlite3_bind_text(st, 1, c->id, -1, SQLITE_STATIC) ||
	    sqlite3_bind_int64(st, 2, c->created_at_ms) ||
	    sqlite3_bind_text(st, 3, c->team, -1, SQLITE_STATIC) ||
	    sqlite3_bind_text(st, 4, c->name, -1, SQLITE_STATIC) ||
	    sqlite3_bind_text(st, 5, c->config_sha256, -1, SQLITE_STATIC) ||
	    sqlite3_bind_text(st, 6, c->verdict, -1, SQLITE_STATIC) ||
	    sqlite3_bind_int64(st, 7, c->errors) ||
	    sqlite3_bind_int64(st, 8, c->warnings) ||
	    sqlite3_bind_int64(st, 9, c->infos) ||
	    sqlite3_bind_text(st, 10, c->context_json, -1, SQLITE_STATIC) ||
	    sqlite3_bind_text(st, 11, c->json, -1, SQLITE_STATIC) ||
	    sqlite3_bind_blob64(st, 12, c->config, c->config_len,
	    SQLITE_STATIC) ||
	    (c->idem_key != NULL ? sqlite3_bind_text(st, 13, c->idem_key, -1,
	    SQLITE_STATIC) : sqlite3_bind_null(st, 13)) ||
	    sqlite3_bind_text(st, 14, c->body_sha256, -1, SQLITE_STATIC) ||
	    sqlite3_step(st) != SQLITE_DONE) {
		rv = db_fail(s, e, "insert check");
		goto rollback;
	}
	for (i = 0; i < c->nfindings; i++) {
		const struct store_finding *x = &c->findings[i];

		sqlite3_reset(f);
		if (sqlite3_bind_text(f, 1, c->id, -1, SQLITE_STATIC) ||
		    sqlite3_bind_text(f, 2, x->rule, -1, SQLITE_STATIC) ||
		    sqlite3_bind_text(f, 3, x->severity, -1, SQLITE_STATIC) ||
		    sqlite3_bind_int64(f, 4, x->line) ||
		    sqlite3_bind_text(f, 5, c->team, -1, SQLITE_STATIC) ||
		    sqlite3_bind_text(f, 6, c->verdict, -1, SQLITE_STATIC) ||
		    sqlite3_bind_int64(f, 7, c->created_at_ms) ||
		    sqlite3_step(f) != SQLITE_DONE) {
			rv = db_fail(s, e, "insert finding");
			goto rollback;
		}
	}
	if (sqlite3_exec(s->db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
		rv = db_fail(s, e, "commit");
		goto rollback;
	}
	goto out;
rollback:
	sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
out:
	if (rv != 0)
		s->write_errors++;
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	sqlite3_reset(f);
	sqlite3_clear_bindings(f);
	pthread_mutex_unlock(&s->mu);
	return rv;
}

static int
get_one(struct store_sqlite *s, sqlite3_stmt *st, struct store_check *out,
    struct arena *a, struct err *e)
{
	int rc = sqlite3_step(st), rv;

	if (rc == SQLITE_DONE)
		rv = err_set(e, ERR_NOTFOUND, NULL, "no such check");
	else if (rc != SQLITE_ROW)
		rv = db_fail(s, e, "select check");
	else
		rv = read_row(out, st, true, a, e);
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	return rv;
}

static int
get_check(void *self, struct store_check *out, const char *id,
    const char *team, struct arena *a, struct err *e)
{
	struct store_sqlite *s = self;
	sqlite3_stmt *st = s->get_check;
	int rv;

	pthread_mutex_lock(&s->mu);
	if (sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC) ||
	    (team != NULL ? sqlite3_bind_text(st, 2, team, -1, SQLITE_STATIC)
	    : sqlite3_bind_null(st, 2)))
		rv = db_fail(s, e, "bind");
	else
		rv = get_one(s, st, out, a, e);
	pthread_mutex_unlock(&s->mu);
	return rv;
}

static int
get_by_idem(void *self, struct store_check *out, const char *team,
    const char *key, struct arena *a, struct err *e)
{
	struct store_sqlite *s = self;
	sqlite3_stmt *st = s->get_idem;
	int rv;

	pthread_mutex_lock(&s->mu);
	if (sqlite3_bind_text(st, 1, team, -1, SQLITE_STATIC) ||
	    sqlite3_bind_text(st, 2, key, -1, SQLITE_STATIC))
		rv = db_fail(s, e, "bind");
	else
		rv = get_one(s, st, out, a, e);
	pthread_mutex_unlock(&s->mu);
	return rv;
}

/*
 * The list query for a set of filters.  Only these constant fragments are
 * ever joined; every value is bound.
 */
enum {
	F_TEAM = 1, F_NAME = 2, F_VERDICT = 4, F_RULE = 8, F_SINCE = 16,
	F_UNTIL = 32
};

static sqlite3_stmt *
list_stmt(struct store_sqlite *s, unsigned mask, struct err *e)
{
	char sql[1024];
	size_t n;

	if (s->list[mask] != NULL)
		return s->list[mask];
	n = (size_t)snprintf(sql, sizeof(sql),
	    "SELECT id, created_at, team, name, config_sha256, verdict, "
	    "errors, warnings, infos, context, report FROM checks "
	    "WHERE (?1 IS NULL OR id < ?1)");
	if (mask & F_TEAM)
		n += (size_t)snprintf(sql + n, sizeof(sql) - n,
		    " AND team = ?2");
	if (mask & F_NAME)
		n += (size_t)snprintf(sql + n, sizeof(sql) - n,
		    " AND name = ?3");
	if (mask & F_VERDICT)
		n += (size_t)snprintf(sql + n, sizeof(sql) - n,
		    " AND verdict = ?4");
	if (mask & F_RULE)
		n += (size_t)snprintf(sql + n, sizeof(sql) - n,
		    " AND id IN (SELECT check_id FROM findings WHERE "
		    "rule = ?5)");
	if (mask & F_SINCE)
		n += (size_t)snprintf(sql + n, sizeof(sql) - n,
		    " AND created_at >= ?6");
	if (mask & F_UNTIL)
		n += (size_t)snprintf(sql + n, sizeof(sql) - n,
		    " AND created_at < ?7");
	snprintf(sql + n, sizeof(sql) - n, " ORDER BY id DESC LIMIT ?8");
	if (prepare(s, &s->list[mask], sql, e) != 0)
		return NULL;
	return s->list[mask];
}

static int
bind_opt(sqlite3_stmt *st, int i, const char *v)
{
	return v != NULL ? sqlite3_bind_text(st, i, v, -1, SQLITE_STATIC) :
	    SQLITE_OK;
}

static int
list_checks(void *self, struct store_check **out, size_t *n,
    const struct store_query *q, struct arena *a, struct err *e)
{
	struct store_sqlite *s = self;
	unsigned mask = (q->team ? F_TEAM : 0) | (q->name ? F_NAME : 0) |
	    (q->verdict ? F_VERDICT : 0) | (q->rule ? F_RULE : 0) |
	    (q->since_ms ? F_SINCE : 0) | (q->until_ms ? F_UNTIL : 0);
	sqlite3_stmt *st;
	struct store_check *items;
	size_t k = 0;
	int rc, rv = 0;

	*out = NULL;
	*n = 0;
	items = ARENA_NEW(a, struct store_check, q->limit);
	if (items == NULL)
		return err_set(e, ERR_NOMEM, NULL, "out of memory");
	pthread_mutex_lock(&s->mu);
	st = list_stmt(s, mask, e);
	if (st == NULL) {
		rv = ERR_STORE;
		goto out;
	}
	if (bind_opt(st, 1, q->before_id) || bind_opt(st, 2, q->team) ||
	    bind_opt(st, 3, q->name) || bind_opt(st, 4, q->verdict) ||
	    bind_opt(st, 5, q->rule) ||
	    (q->since_ms && sqlite3_bind_int64(st, 6, q->since_ms)) ||
	    (q->until_ms && sqlite3_bind_int64(st, 7, q->until_ms)) ||
	    sqlite3_bind_int64(st, 8, q->limit)) {
		rv = db_fail(s, e, "bind");
		goto out;
	}
	while ((rc = sqlite3_step(st)) == SQLITE_ROW && k < q->limit) {
		rv = read_row(&items[k], st, false, a, e);
		if (rv != 0)
			goto out;
		k++;
	}
	if (rc != SQLITE_DONE && rc != SQLITE_ROW)
		rv = db_fail(s, e, "list checks");
out:
	if (st != NULL) {
		sqlite3_reset(st);
		sqlite3_clear_bindings(st);
	}
	pthread_mutex_unlock(&s->mu);
	if (rv == 0) {
		*out = items;
		*n = k;
	}
	return rv;
}

static int
rule_stats(void *self, struct store_rule_stat **out, size_t *n,
    const char *team, int64_t since_ms, struct arena *a, struct err *e)
{
	struct store_sqlite *s = self;
	int which = team != NULL ? 1 : 0;
	sqlite3_stmt *st;
	struct store_rule_stat *items = NULL;
	size_t k = 0, cap = 0;
	int rc, rv = 0;

	*out = NULL;
	*n = 0;
	pthread_mutex_lock(&s->mu);
	if (s->stats[which] == NULL && prepare(s, &s->stats[which], which ?
	    "SELECT rule, verdict, count(*), count(DISTINCT check_id) "
	    "FROM findings WHERE created_at >= ?1 AND team = ?2 "
	    "GROUP BY rule, verdict ORDER BY rule, verdict" :
	    "SELECT rule, verdict, count(*), count(DISTINCT check_id) "
	    "FROM findings WHERE created_at >= ?1 "
	    "GROUP BY rule, verdict ORDER BY rule, verdict", e) != 0) {
		pthread_mutex_unlock(&s->mu);
		return ERR_STORE;
	}
	st = s->stats[which];
	if (sqlite3_bind_int64(st, 1, since_ms) ||
	    (team != NULL && sqlite3_bind_text(st, 2, team, -1,
	    SQLITE_STATIC))) {
		rv = db_fail(s, e, "bind");
		goto out;
	}
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (k == cap) {
			struct store_rule_stat *grown;

			cap = cap == 0 ? 32 : cap * 2;
			grown = ARENA_NEW(a, struct store_rule_stat, cap);
			if (grown == NULL) {
				rv = err_set(e, ERR_NOMEM, NULL,
				    "out of memory");
				goto out;
			}
			if (k > 0)
				memcpy(grown, items, k * sizeof(*items));
			items = grown;
		}
		items[k].rule = col_text(st, 0, NULL, a);
		items[k].verdict = col_text(st, 1, NULL, a);
		items[k].count = (long)sqlite3_column_int64(st, 2);
		items[k].checks = (long)sqlite3_column_int64(st, 3);
		if (items[k].rule == NULL || items[k].verdict == NULL) {
			rv = err_set(e, ERR_NOMEM, NULL, "out of memory");
			goto out;
		}
		k++;
	}
	if (rc != SQLITE_DONE)
		rv = db_fail(s, e, "rule stats");
out:
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	pthread_mutex_unlock(&s->mu);
	if (rv == 0) {
		*out = items;
		*n = k;
	}
	return rv;
}

static int
ready(void *self, struct err *e)
{
	struct store_sqlite *s = self;
	int rv = 0;

	pthread_mutex_lock(&s->mu);
	if (s->version != migrations_count)
		rv = err_set(e, ERR_STORE, NULL, "schema version %d, want %d",
		    s->version, migrations_count);
	else if (sqlite3_step(s->beat) != SQLITE_DONE)
		rv = db_fail(s, e, "write probe");
	sqlite3_reset(s->beat);
	pthread_mutex_unlock(&s->mu);
	return rv;
}

static void
info(void *self, struct store_info *out)
{
	struct store_sqlite *s = self;
	sqlite3_stmt *st = NULL;
	long long pages = 0, size = 0;

	memset(out, 0, sizeof(*out));
	pthread_mutex_lock(&s->mu);
	if (sqlite3_prepare_v2(s->db, "SELECT page_count * page_size FROM "
	    "pragma_page_count(), pragma_page_size()", -1, &st, NULL) ==
	    SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
		size = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	(void)pages;
	out->db_bytes = size;
	out->write_errors = s->write_errors;
	out->schema_version = s->version;
	out->schema_latest = migrations_count;
	pthread_mutex_unlock(&s->mu);
}

int
store_sqlite_prune(struct store_sqlite *s, int64_t cutoff_ms, int batch,
    int *deleted, struct err *e)
{
	sqlite3_stmt *st = NULL;
	int rv = 0;

	*deleted = 0;
	pthread_mutex_lock(&s->mu);
	if (sqlite3_prepare_v2(s->db, "DELETE FROM checks WHERE rowid IN "
	    "(SELECT rowid FROM checks WHERE created_at < ?1 ORDER BY "
	    "created_at LIMIT ?2)", -1, &st, NULL) != SQLITE_OK ||
	    sqlite3_bind_int64(st, 1, cutoff_ms) ||
	    sqlite3_bind_int(st, 2, batch)) {
		rv = db_fail(s, e, "prepare prune");
		goto out;
	}
	/* Autocommit: one short transaction per batch. */
	if (sqlite3_step(st) != SQLITE_DONE) {
		rv = db_fail(s, e, "prune");
		s->write_errors++;
		goto out;
	}
	*deleted = sqlite3_changes(s->db);
out:
	sqlite3_finalize(st);
	pthread_mutex_unlock(&s->mu);
	return rv;
}

static const struct store_ops sqlite_ops = {
	.put_check = put_check,
	.get_check = get_check,
	.get_by_idem = get_by_idem,
	.list_checks = list_checks,
	.rule_stats = rule_stats,
	.ready = ready,
	.info = info,
};

struct store
store_sqlite_iface(struct store_sqlite *s)
{
	struct store st = { &sqlite_ops, s };

	return st;
}
