/*
 * server/store_sqlite: checks, rules and diagnoses in one SQLite file
 * (migrations/0006_lean_checks.sql has the schema and why).
 *
 * Contract: a put_check() that returns 0 has committed, and a
 * put_check_async() job hears "committed" only after COMMIT returned
 * (server/store_writer.c).  Every statement binds its values; the list
 * queries are assembled only from the constant fragments below (one
 * prepared statement per filter combination, cached per connection).
 * Write failures (disk full, I/O errors) are counted and reported as
 * ERR_STORE; reads go on working.
 */
#include "server/store_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/arena.h"
#include "server/log.h"
#include "server/migrations.h"
#include "server/store_diagnose.h"

#define QUERY_MS_DEFAULT 2000	/* a read's time budget, then ERR_BUSY */
#define HEALTH_SECONDS 300	/* between background quick_checks */
#define ERROR_HOLD_MS 60000	/* a corruption or I/O error keeps /readyz
				   failing this long after it was seen */
#define RULES_MAX 100000	/* rule ids the stats count; rules.id is
				   dense, so this is far beyond any table */

/* A whole checks row, in the order read_row() expects it. */
#define CHECK_COLUMNS "id, created_at, team, name, config_sha256, " \
	"verdict, errors, warnings, infos, context, report, config, " \
	"idem_key, body_sha256"

/* The first 11 of them, of the table aliased c: a list row. */
#define LIST_COLUMNS "c.id, c.created_at, c.team, c.name, " \
	"c.config_sha256, c.verdict, c.errors, c.warnings, c.infos, " \
	"c.context, c.report"

/* The key at or after an id (a cursor, since, until): every check with
   a smaller key has a smaller id (store_id_seq); none: above all. */
#define KEY_AT(p) "coalesce((SELECT seq FROM checks WHERE id >= " p \
	" ORDER BY id LIMIT 1), 9223372036854775807)"

static int64_t
mono_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* Errors that mean the file or the disk is in trouble (not a busy
   moment): readiness fails for a while after one. */
static bool
serious(int code)
{
	switch (code & 0xff) {
	case SQLITE_CORRUPT:
	case SQLITE_NOTADB:
	case SQLITE_IOERR:
	case SQLITE_FULL:
	case SQLITE_CANTOPEN:
	case SQLITE_READONLY:
		return true;
	}
	return false;
}

int
store_db_fail(struct store_sqlite *s, sqlite3 *db, struct err *e,
    const char *what)
{
	int code = sqlite3_extended_errcode(db);

	if ((code & 0xff) == SQLITE_INTERRUPT) {
		log_msg("warn", "store: %s: stopped after the %d ms query "
		    "budget", what, s != NULL ? s->query_ms : 0);
		return err_set(e, ERR_BUSY, NULL, "%s: query budget spent",
		    what);
	}
	log_msg("error", "store: %s: %s (sqlite code %d)", what,
	    sqlite3_errmsg(db), code);
	if (s != NULL && serious(code)) {
		pthread_mutex_lock(&s->emu);
		s->last_err = code;
		s->last_err_ms = mono_ms();
		pthread_mutex_unlock(&s->emu);
	}
	return err_set(e, ERR_STORE, NULL, "%s: %s", what,
	    sqlite3_errmsg(db));
}

static int
exec(sqlite3 *db, const char *sql, struct err *e)
{
	char *msg = NULL;
	int rc = sqlite3_exec(db, sql, NULL, NULL, &msg);

	if (rc != SQLITE_OK) {
		err_set(e, ERR_STORE, NULL, "%s", msg != NULL ? msg :
		    sqlite3_errstr(rc));
		sqlite3_free(msg);
		return ERR_STORE;
	}
	return 0;
}

int
store_prepare(sqlite3 *db, sqlite3_stmt **st, const char *sql,
    struct err *e)
{
	if (sqlite3_prepare_v3(db, sql, -1, SQLITE_PREPARE_PERSISTENT, st,
	    NULL) != SQLITE_OK)
		return store_db_fail(NULL, db, e, "prepare");
	return 0;
}

/* The value of a Crockford base32 character, or -1. */
static int
b32(char ch)
{
	static const char alphabet[] = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
	const char *p;

	if (ch == '\0')
		return -1;
	p = strchr(alphabet, ch);
	return p != NULL ? (int)(p - alphabet) : -1;
}

int64_t
store_id_seq(const char *id)
{
	uint64_t ms = 0, low = 0;
	int i, v;

	if (id == NULL || strlen(id) != 26 || id[0] > '7')
		return -1;
	for (i = 0; i < 26; i++) {
		v = b32(id[i]);
		if (v < 0)
			return -1;
		if (i < 10)	/* 2 zero bits, then 48 of the time */
			ms = ms << 5 | (unsigned)v;
		else if (i >= 23)
			low = low << 5 | (unsigned)v;	/* the last 15 */
	}
	return (int64_t)(ms << 15 | low);
}

/* ---- the reader pool ----------------------------------------------- */

/* Stops a read past its connection's deadline (SQLITE_INTERRUPT). */
static int
over_budget(void *arg)
{
	const struct reader *rd = arg;

	return rd->deadline_ms > 0 && mono_ms() > rd->deadline_ms;
}

struct reader *
store_reader_get(struct store_sqlite *s)
{
	struct reader *rd = NULL;
	int i;

	pthread_mutex_lock(&s->rmu);
	for (;;) {
		for (i = 0; i < s->nreaders; i++)
			if (!s->rbusy[i]) {
				s->rbusy[i] = true;
				rd = &s->r[i];
				break;
			}
		if (rd != NULL)
			break;
		pthread_cond_wait(&s->rcv, &s->rmu);
	}
	pthread_mutex_unlock(&s->rmu);
	rd->deadline_ms = mono_ms() + s->query_ms;
	return rd;
}

void
store_reader_put(struct store_sqlite *s, struct reader *rd)
{
	rd->deadline_ms = 0;
	pthread_mutex_lock(&s->rmu);
	s->rbusy[rd - s->r] = false;
	pthread_cond_signal(&s->rcv);
	pthread_mutex_unlock(&s->rmu);
}

/* ---- opening and migrating ------------------------------------------ */

/* foreign_key_check finds nothing: a migration broke no reference. */
static int
fk_intact(sqlite3 *db, struct err *e)
{
	sqlite3_stmt *st = NULL;
	int rc;

	if (sqlite3_prepare_v2(db, "PRAGMA foreign_key_check", -1, &st,
	    NULL) != SQLITE_OK)
		return store_db_fail(NULL, db, e, "foreign_key_check");
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	if (rc == SQLITE_ROW)
		return err_set(e, ERR_STORE, NULL, "a migration left rows "
		    "that refer to missing rows (PRAGMA foreign_key_check)");
	return rc == SQLITE_DONE ? 0 : store_db_fail(NULL, db, e,
	    "foreign_key_check");
}

/*
 * Apply the pending migrations, each in its own transaction, with
 * foreign keys off (so rebuilding a referenced table does not cascade;
 * the pragma is a no-op inside a transaction) and checked before each
 * commit.
 */
static int
migrate(struct store_sqlite *s, struct err *e)
{
	sqlite3 *db = s->w.db;
	sqlite3_stmt *st = NULL;
	int v, i, rv = 0;

	if (sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &st, NULL) !=
	    SQLITE_OK || sqlite3_step(st) != SQLITE_ROW) {
		sqlite3_finalize(st);
		return store_db_fail(s, db, e, "read user_version");
	}
	v = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	if (v > migrations_count)
		return err_set(e, ERR_STORE, NULL,
		    "database schema version %d is newer than this preflight "
		    "(knows up to %d); upgrade preflight or use another "
		    "--db", v, migrations_count);
	if (v < migrations_count)
		rv = exec(db, "PRAGMA foreign_keys = OFF", e);
	for (i = v; i < migrations_count && rv == 0; i++) {
		char pragma[64];

		rv = exec(db, "BEGIN IMMEDIATE", e);
		if (rv != 0)
			break;
		rv = exec(db, migrations[i].sql, e);
		if (rv == 0)
			rv = fk_intact(db, e);
		if (rv == 0) {
			snprintf(pragma, sizeof(pragma),
			    "PRAGMA user_version = %d", migrations[i].version);
			rv = exec(db, pragma, e);
		}
		if (rv == 0)
			rv = exec(db, "COMMIT", e);
		if (rv != 0)
			sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
		else
			log_msg("info", "store: applied migration %s",
			    migrations[i].name);
	}
	if (exec(db, "PRAGMA foreign_keys = ON", rv == 0 ? e : NULL) != 0 &&
	    rv == 0)
		rv = ERR_STORE;
	if (rv == 0)
		s->version = migrations_count;
	return rv;
}

/* The database's page size in bytes. */
static int
page_size(sqlite3 *db, int *out, struct err *e)
{
	sqlite3_stmt *st = NULL;
	int rv = 0;

	if (sqlite3_prepare_v2(db, "PRAGMA page_size", -1, &st, NULL) !=
	    SQLITE_OK || sqlite3_step(st) != SQLITE_ROW)
		rv = store_db_fail(NULL, db, e, "page_size");
	else
		*out = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	if (rv == 0 && *out < 512)
		*out = 4096;
	return rv;
}

static int
open_conn(sqlite3 **db, const char *path, struct err *e)
{
	/* Through the counting VFS, so /metrics has syncs and bytes. */
	if (sqlite3_open_v2(path, db, SQLITE_OPEN_READWRITE |
	    SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, store_vfs_name()) !=
	    SQLITE_OK)
		return err_set(e, ERR_STORE, NULL, "cannot open %s: %s", path,
		    *db != NULL ? sqlite3_errmsg(*db) : "out of memory");
	sqlite3_busy_timeout(*db, 5000);
	sqlite3_extended_result_codes(*db, 1);
	return 0;
}

/* The read connection's statements (the list, rule and stats ones are
   prepared on first use). */
static int
reader_open(struct store_sqlite *s, struct reader *rd, const char *path,
    struct err *e)
{
	int rv = 0;

	if (s->shared) {
		rd->db = s->w.db;
	} else {
		rv = open_conn(&rd->db, path, e);
		/* A connection sees WAL mode once it has read the file. */
		if (rv == 0)
			rv = exec(rd->db, "PRAGMA journal_mode = WAL", e);
		if (rv == 0)
			rv = exec(rd->db, "PRAGMA query_only = 1", e);
	}
	if (rv == 0)
		rv = store_prepare(rd->db, &rd->get_check, "SELECT "
		    CHECK_COLUMNS " FROM checks WHERE id = ?1 AND "
		    "(?2 IS NULL OR team = ?2)", e);
	if (rv == 0)
		rv = store_prepare(rd->db, &rd->find_token,
		    "SELECT id, team, admin, created_at, 0 FROM tokens WHERE "
		    "token_sha256 = ?1 AND revoked_at IS NULL", e);
	if (rv == 0)
		rv = store_prepare(rd->db, &rd->get_idem, "SELECT "
		    CHECK_COLUMNS " FROM checks WHERE team = ?1 AND "
		    "idem_key = ?2", e);
	if (rv == 0)
		rv = store_prepare(rd->db, &rd->by_seq, "SELECT " LIST_COLUMNS
		    " FROM checks c WHERE c.seq = ?1", e);
	/* The next team after ?1 (an integer sorts below every text), one
	   index seek each: the teams of check_rules without a scan. */
	if (rv == 0)
		rv = store_prepare(rd->db, &rd->teams, "SELECT team FROM "
		    "check_rules WHERE team > ?1 ORDER BY team LIMIT 1", e);
	if (rv == 0)
		rv = store_prepare(rd->db, &rd->rule_names,
		    "SELECT id, name FROM rules", e);
	if (rv == 0)
		sqlite3_progress_handler(rd->db, 1000, over_budget, rd);
	return rv;
}

static void
reader_close(struct store_sqlite *s, struct reader *rd)
{
	int i;

	sqlite3_finalize(rd->get_check);
	sqlite3_finalize(rd->get_idem);
	sqlite3_finalize(rd->find_token);
	sqlite3_finalize(rd->by_seq);
	sqlite3_finalize(rd->teams);
	sqlite3_finalize(rd->rule_names);
	for (i = 0; i < LIST_VARIANTS; i++) {
		sqlite3_finalize(rd->list[i]);
		sqlite3_finalize(rd->rule_list[i]);
	}
	sqlite3_finalize(rd->stats[0]);
	sqlite3_finalize(rd->stats[1]);
	if (rd->db != NULL && !s->shared)
		sqlite3_close_v2(rd->db);
	memset(rd, 0, sizeof(*rd));
}

/*
 * PRAGMA quick_check on db: 0 when it says "ok", else ERR_STORE with the
 * first problem it names.
 */
static int
quick_check(sqlite3 *db, struct err *e)
{
	sqlite3_stmt *st = NULL;
	int rc, rv = 0;

	if (sqlite3_prepare_v2(db, "PRAGMA quick_check", -1, &st, NULL) !=
	    SQLITE_OK)
		return err_set(e, ERR_STORE, NULL, "quick_check: %s",
		    sqlite3_errmsg(db));
	rc = sqlite3_step(st);
	if (rc != SQLITE_ROW)
		rv = err_set(e, ERR_STORE, NULL, "quick_check: %s",
		    sqlite3_errmsg(db));
	else if (strcmp((const char *)sqlite3_column_text(st, 0), "ok") != 0)
		rv = err_set(e, ERR_STORE, NULL, "quick_check: %.200s",
		    (const char *)sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	return rv;
}

/* Every health_s seconds, PRAGMA quick_check on a fresh connection (no
   page it cached last time hides a corrupt page now); a failure keeps
   /readyz failing until a later check passes. */
static void *
health_loop(void *arg)
{
	struct store_sqlite *s = arg;

	pthread_mutex_lock(&s->qmu);
	while (!s->stop) {
		struct timespec until;
		struct err e = { 0 };
		sqlite3 *db = NULL;
		bool bad;

		unsigned every = s->health_s;
		int w = 0;

		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_sec += every > 0 ? every : 86400;
		while (!s->stop && s->health_s == every && w != ETIMEDOUT)
			w = pthread_cond_timedwait(&s->hcv, &s->qmu, &until);
		if (s->stop)
			break;
		if (s->health_s != every || every == 0)
			continue;	/* a new interval: wait that long */
		pthread_mutex_unlock(&s->qmu);
		bad = open_conn(&db, s->path, &e) != 0 ||
		    exec(db, "PRAGMA query_only = 1", &e) != 0 ||
		    quick_check(db, &e) != 0;
		sqlite3_close_v2(db);
		if (bad)
			log_msg("error", "store: %s; /readyz fails until a "
			    "check passes: restore the database from a backup",
			    e.msg);
		pthread_mutex_lock(&s->emu);
		s->quick_bad = bad;
		pthread_mutex_unlock(&s->emu);
		pthread_mutex_lock(&s->qmu);
	}
	pthread_mutex_unlock(&s->qmu);
	return NULL;
}


int
store_sqlite_open(struct store_sqlite **out, const char *path,
    bool full_sync, struct err *e)
{
	struct store_sqlite *s;
	int rv, i, fd;

	*out = NULL;
	s = calloc(1, sizeof(*s));
	if (s == NULL)
		return err_set(e, ERR_NOMEM, NULL, "out of memory");
	pthread_mutex_init(&s->rmu, NULL);
	pthread_mutex_init(&s->emu, NULL);
	pthread_mutex_init(&s->qmu, NULL);
	pthread_mutex_init(&s->cmu, NULL);
	pthread_cond_init(&s->qcv, NULL);
	pthread_cond_init(&s->ccv, NULL);
	pthread_cond_init(&s->rcv, NULL);
	pthread_cond_init(&s->hcv, NULL);
	s->query_ms = QUERY_MS_DEFAULT;
	s->health_s = HEALTH_SECONDS;
	s->path = strdup(path);
	if (s->path == NULL) {
		free(s);
		return err_set(e, ERR_NOMEM, NULL, "out of memory");
	}
	s->shared = strcmp(path, ":memory:") == 0;
	s->nreaders = s->shared ? 1 : READERS;
	if (!s->shared) {
		/* Created 0600 here, so SQLite makes the WAL and shm files
		   with the same mode: checks are the teams' data. */
		fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
		if (fd < 0) {
			rv = err_set(e, ERR_STORE, NULL, "cannot open %s: %s",
			    path, strerror(errno));
			goto fail;
		}
		close(fd);
	}
	rv = open_conn(&s->w.db, path, e);
	/* A new file gets 1 KiB pages: a commit rewrites about ten index
	   pages whatever it holds, and smaller pages write fewer bytes for
	   that (issue #16).  An existing file keeps its pages (WAL mode
	   cannot change them). */
	if (rv == 0)
		rv = exec(s->w.db, "PRAGMA page_size = " STORE_PAGE_SIZE, e);
	if (rv == 0)
		rv = exec(s->w.db, "PRAGMA foreign_keys = ON", e);
	if (rv == 0 && !s->shared)
		rv = exec(s->w.db, "PRAGMA journal_mode = WAL", e);
	if (rv == 0)
		rv = exec(s->w.db, full_sync ? "PRAGMA synchronous = FULL" :
		    "PRAGMA synchronous = NORMAL", e);
	/* The checkpointer thread checkpoints; the writer never does. */
	if (rv == 0 && !s->shared)
		rv = exec(s->w.db, "PRAGMA wal_autocheckpoint = 0", e);
	/* The WAL file is reused up to the size at which the writer restarts
	   it (CKPT_CAP), not truncated and grown again. */
	if (rv == 0 && !s->shared)
		rv = exec(s->w.db, "PRAGMA journal_size_limit = 268435456", e);
	if (rv == 0) {
		struct err qe = { 0 };

		if (quick_check(s->w.db, &qe) != 0)
			rv = err_set(e, ERR_STORE, NULL, "the database fails "
			    "PRAGMA quick_check; restore it from a backup "
			    "(docs/reliability.md) or move it aside, then start "
			    "again (%.120s)", qe.msg);
	}
	if (rv == 0)
		rv = migrate(s, e);
	if (rv == 0)
		rv = page_size(s->w.db, &s->page_size, e);
	if (rv == 0)
		rv = store_writer_prepare(s, e);
	if (rv != 0)
		goto fail;
	if (!s->shared) {
		rv = open_conn(&s->ckpt_db, path, e);
		if (rv == 0)
			rv = exec(s->ckpt_db, "PRAGMA journal_mode = WAL", e);
		if (rv != 0)
			goto fail;
	}
	for (i = 0; i < s->nreaders && rv == 0; i++)
		rv = reader_open(s, &s->r[i], path, e);
	if (rv == 0)
		rv = store_writer_start(s, e);
	if (rv != 0)
		goto fail;
	if (!s->shared) {
		if (pthread_create(&s->health_thread, NULL, health_loop,
		    s) != 0) {
			rv = err_set(e, ERR_STORE, NULL,
			    "cannot start the health check");
			goto fail;
		}
		s->health_started = true;
	}
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
	store_writer_stop(s);
	pthread_mutex_lock(&s->qmu);
	pthread_cond_broadcast(&s->hcv);
	pthread_mutex_unlock(&s->qmu);
	if (s->health_started)
		pthread_join(s->health_thread, NULL);
	for (i = 0; i < READERS; i++)
		reader_close(s, &s->r[i]);
	sqlite3_close_v2(s->ckpt_db);
	/* The last connection to close checkpoints the WAL away. */
	sqlite3_close_v2(s->w.db);
	pthread_cond_destroy(&s->qcv);
	pthread_cond_destroy(&s->ccv);
	pthread_cond_destroy(&s->rcv);
	pthread_cond_destroy(&s->hcv);
	pthread_mutex_destroy(&s->qmu);
	pthread_mutex_destroy(&s->cmu);
	pthread_mutex_destroy(&s->rmu);
	pthread_mutex_destroy(&s->emu);
	free(s->path);
	free(s);
}

void
store_sqlite_query_budget(struct store_sqlite *s, int ms)
{
	s->query_ms = ms;
}

void
store_sqlite_health_interval(struct store_sqlite *s, unsigned seconds)
{
	pthread_mutex_lock(&s->qmu);
	s->health_s = seconds;
	pthread_cond_broadcast(&s->hcv);	/* start the new wait now */
	pthread_mutex_unlock(&s->qmu);
}

int
store_sqlite_version(struct store_sqlite *s)
{
	return s->version;
}

/* ---- reads ----------------------------------------------------------- */

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
get_one(struct store_sqlite *s, struct reader *rd, sqlite3_stmt *st,
    struct store_check *out, struct arena *a, struct err *e)
{
	int rc = sqlite3_step(st), rv;

	if (rc == SQLITE_DONE)
		rv = err_set(e, ERR_NOTFOUND, NULL, "no such check");
	else if (rc != SQLITE_ROW)
		rv = store_db_fail(s, rd->db, e, "select check");
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
	struct reader *rd = store_reader_get(s);
	sqlite3_stmt *st = rd->get_check;
	int rv;

	if (sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC) ||
	    (team != NULL ? sqlite3_bind_text(st, 2, team, -1, SQLITE_STATIC)
	    : sqlite3_bind_null(st, 2)))
		rv = store_db_fail(s, rd->db, e, "bind");
	else
		rv = get_one(s, rd, st, out, a, e);
	store_reader_put(s, rd);
	return rv;
}

static int
get_by_idem(void *self, struct store_check *out, const char *team,
    const char *key, struct arena *a, struct err *e)
{
	struct store_sqlite *s = self;
	struct reader *rd = store_reader_get(s);
	sqlite3_stmt *st = rd->get_idem;
	int rv;

	if (sqlite3_bind_text(st, 1, team, -1, SQLITE_STATIC) ||
	    sqlite3_bind_text(st, 2, key, -1, SQLITE_STATIC))
		rv = store_db_fail(s, rd->db, e, "bind");
	else
		rv = get_one(s, rd, st, out, a, e);
	store_reader_put(s, rd);
	return rv;
}

/*
 * The list queries for a set of filters.  Only these constant fragments
 * are ever joined; every value is bound: ?1 cursor ("~", above every id,
 * when absent), ?2 team, ?3 name, ?4 verdict, ?5 rule, ?6 since, ?7
 * until, ?8 limit.
 */
enum {
	F_TEAM = 1, F_NAME = 2, F_VERDICT = 4, F_RULE = 8, F_SINCE = 16,
	F_UNTIL = 32
};

static size_t
add_filters(char *sql, size_t cap, size_t n, unsigned mask)
{
	if (mask & F_NAME)
		n += (size_t)snprintf(sql + n, cap - n, " AND c.name = ?3");
	if (mask & F_VERDICT)
		n += (size_t)snprintf(sql + n, cap - n, " AND c.verdict = ?4");
	return n;
}

/*
 * Without a rule: plain comparisons on id, so each filter is a range of
 * an index (checks_team_id, checks_team_name_id, or the id's own) and a
 * page costs O(log n + limit).
 */
static sqlite3_stmt *
list_stmt(struct reader *rd, unsigned mask, struct err *e)
{
	char sql[1024];
	size_t n;

	if (rd->list[mask] != NULL)
		return rd->list[mask];
	n = (size_t)snprintf(sql, sizeof(sql), "SELECT %s FROM checks c "
	    "WHERE c.id < ?1", LIST_COLUMNS);
	if (mask & F_TEAM)
		n += (size_t)snprintf(sql + n, sizeof(sql) - n,
		    " AND c.team = ?2");
	n = add_filters(sql, sizeof(sql), n, mask);
	if (mask & F_SINCE)
		n += (size_t)snprintf(sql + n, sizeof(sql) - n,
		    " AND c.id >= ?6");
	if (mask & F_UNTIL)
		n += (size_t)snprintf(sql + n, sizeof(sql) - n,
		    " AND c.id < ?7");
	snprintf(sql + n, sizeof(sql) - n, " ORDER BY c.id DESC LIMIT ?8");
	if (store_prepare(rd->db, &rd->list[mask], sql, e) != 0)
		return NULL;
	return rd->list[mask];
}

/*
 * With a rule: the walk is check_rules' key (team, rule, seq) from the
 * cursor's key down, one entry per check; cursor, since and until become
 * keys through the id index (KEY_AT), exact because keys sort as ids.
 * mask has F_TEAM: the rows of one team.  Without F_TEAM: the same walk
 * for the team bound to ?2, keys only (rule_merge merges the teams).
 */
static sqlite3_stmt *
rule_stmt(struct reader *rd, unsigned mask, struct err *e)
{
	char sql[1400];
	size_t n;

	if (rd->rule_list[mask] != NULL)
		return rd->rule_list[mask];
	n = (size_t)snprintf(sql, sizeof(sql), "SELECT %s FROM check_rules "
	    "r CROSS JOIN checks c ON c.seq = r.seq WHERE r.team = ?2 AND "
	    "r.rule = (SELECT id FROM rules WHERE name = ?5) AND r.seq < "
	    KEY_AT("?1"), (mask & F_TEAM) ? LIST_COLUMNS : "r.seq");
	n = add_filters(sql, sizeof(sql), n, mask);
	if (mask & F_SINCE)
		n += (size_t)snprintf(sql + n, sizeof(sql) - n,
		    " AND r.seq >= " KEY_AT("?6"));
	if (mask & F_UNTIL)
		n += (size_t)snprintf(sql + n, sizeof(sql) - n,
		    " AND r.seq < " KEY_AT("?7"));
	snprintf(sql + n, sizeof(sql) - n, " ORDER BY r.seq DESC LIMIT ?8");
	if (store_prepare(rd->db, &rd->rule_list[mask], sql, e) != 0)
		return NULL;
	return rd->rule_list[mask];
}

static int
bind_opt(sqlite3_stmt *st, int i, const char *v)
{
	return v != NULL ? sqlite3_bind_text(st, i, v, -1, SQLITE_STATIC) :
	    SQLITE_OK;
}

static int
bind_query(sqlite3_stmt *st, const struct store_query *q, const char *team)
{
	return sqlite3_bind_text(st, 1, q->before_id != NULL ? q->before_id :
	    "~", -1, SQLITE_STATIC) || bind_opt(st, 2, team) ||
	    bind_opt(st, 3, q->name) || bind_opt(st, 4, q->verdict) ||
	    bind_opt(st, 5, q->rule) || bind_opt(st, 6, q->since_id) ||
	    bind_opt(st, 7, q->until_id) ||
	    sqlite3_bind_int64(st, 8, q->limit);
}

/* Step st for list rows into items[*k...], up to q->limit and the byte
   cap. */
static int
read_rows(struct store_sqlite *s, struct reader *rd, sqlite3_stmt *st,
    struct store_check *items, size_t *k, size_t *bytes,
    const struct store_query *q, struct arena *a, struct err *e)
{
	int rc = SQLITE_DONE, rv;

	while (*k < q->limit && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		rv = read_row(&items[*k], st, false, a, e);
		if (rv != 0)
			return rv;
		*bytes += strlen(items[*k].json);
		(*k)++;
		if (q->max_bytes > 0 && *bytes > q->max_bytes && *k >= 2)
			return 0;	/* a page's worth, and proof of more */
	}
	if (*k < q->limit && rc != SQLITE_DONE)
		return store_db_fail(s, rd->db, e, "list checks");
	return 0;
}

static int
cmp_key_desc(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? 1 : x > y ? -1 : 0;
}

/*
 * A rule filter across every team (an admin without ?team=): the first
 * q->limit keys of each team (teams found by seeks, not a scan), the
 * largest q->limit of them all, then those rows by key.  O(teams x
 * limit) index steps, whatever the table's size.
 */
static int
rule_merge(struct store_sqlite *s, struct reader *rd, unsigned mask,
    struct store_check *items, size_t *k, const struct store_query *q,
    struct arena *a, struct err *e)
{
	sqlite3_stmt *st = rule_stmt(rd, mask & ~(unsigned)F_TEAM, e);
	sqlite3_stmt *tm = rd->teams;
	int64_t *keys = NULL;
	size_t nk = 0, cap = 0, i, bytes = 0;
	const char *team;
	int rc, rv = 0;

	if (st == NULL)
		return ERR_STORE;
	sqlite3_bind_int(tm, 1, 0);	/* below every team */
	while ((rc = sqlite3_step(tm)) == SQLITE_ROW) {
		team = col_text(tm, 0, NULL, a);
		sqlite3_reset(tm);
		if (team == NULL) {
			rv = err_set(e, ERR_NOMEM, NULL, "out of memory");
			goto out;
		}
		if (bind_query(st, q, team)) {
			rv = store_db_fail(s, rd->db, e, "bind");
			goto out;
		}
		while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
			if (nk == cap) {
				int64_t *grown;

				cap = cap == 0 ? 2 * (size_t)q->limit : 2 * cap;
				grown = ARENA_NEW(a, int64_t, cap);
				if (grown == NULL) {
					rv = err_set(e, ERR_NOMEM, NULL,
					    "out of memory");
					goto out;
				}
				if (nk > 0)
					memcpy(grown, keys, nk * sizeof(*keys));
				keys = grown;
			}
			keys[nk++] = sqlite3_column_int64(st, 0);
		}
		sqlite3_reset(st);
		if (rc != SQLITE_DONE) {
			rv = store_db_fail(s, rd->db, e, "list checks");
			goto out;
		}
		if (sqlite3_bind_text(tm, 1, team, -1, SQLITE_STATIC)) {
			rv = store_db_fail(s, rd->db, e, "bind");
			goto out;
		}
	}
	if (rc != SQLITE_DONE) {
		rv = store_db_fail(s, rd->db, e, "list teams");
		goto out;
	}
	if (nk > 1)
		qsort(keys, nk, sizeof(*keys), cmp_key_desc);
	for (i = 0; i < nk && *k < q->limit && rv == 0; i++) {
		if (sqlite3_bind_int64(rd->by_seq, 1, keys[i])) {
			rv = store_db_fail(s, rd->db, e, "bind");
			break;
		}
		rv = read_rows(s, rd, rd->by_seq, items, k, &bytes, q, a, e);
		sqlite3_reset(rd->by_seq);
		if (q->max_bytes > 0 && bytes > q->max_bytes && *k >= 2)
			break;
	}
out:
	sqlite3_reset(tm);
	sqlite3_clear_bindings(tm);
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	return rv;
}

static int
list_checks(void *self, struct store_check **out, size_t *n,
    const struct store_query *q, struct arena *a, struct err *e)
{
	struct store_sqlite *s = self;
	unsigned mask = (q->team ? F_TEAM : 0) | (q->name ? F_NAME : 0) |
	    (q->verdict ? F_VERDICT : 0) | (q->rule ? F_RULE : 0) |
	    (q->since_id ? F_SINCE : 0) | (q->until_id ? F_UNTIL : 0);
	sqlite3_stmt *st = NULL;
	struct reader *rd;
	struct store_check *items;
	size_t k = 0, bytes = 0;
	int rv = 0;

	*out = NULL;
	*n = 0;
	items = ARENA_NEW(a, struct store_check, q->limit);
	if (items == NULL)
		return err_set(e, ERR_NOMEM, NULL, "out of memory");
	rd = store_reader_get(s);
	if ((mask & F_RULE) && !(mask & F_TEAM)) {
		rv = rule_merge(s, rd, mask, items, &k, q, a, e);
		goto out;
	}
	st = (mask & F_RULE) ? rule_stmt(rd, mask, e) : list_stmt(rd, mask, e);
	if (st == NULL) {
		rv = ERR_STORE;
		goto out;
	}
	if (bind_query(st, q, q->team)) {
		rv = store_db_fail(s, rd->db, e, "bind");
		goto out;
	}
	rv = read_rows(s, rd, st, items, &k, &bytes, q, a, e);
out:
	if (st != NULL) {
		sqlite3_reset(st);
		sqlite3_clear_bindings(st);
	}
	store_reader_put(s, rd);
	if (rv == 0) {
		*out = items;
		*n = k;
	}
	return rv;
}

/* ---- rule statistics ------------------------------------------------- */

#define STATS_TEAM_SQL "SELECT verdict, findings FROM checks WHERE " \
	"team = ?2 AND id >= ?1"
#define STATS_ALL_SQL "SELECT verdict, findings FROM checks WHERE id >= ?1"

/* Findings of one rule in checks of one verdict. */
struct tally {
	long count;		/* findings */
	long checks;		/* distinct checks */
	long last;		/* the last check counted (1-based), for
				   checks */
};

static const char *const verdicts[3] = { "fail", "pass", "warn" };

static int
verdict_index(const char *v)
{
	int i;

	for (i = 0; i < 3; i++)
		if (v != NULL && strcmp(v, verdicts[i]) == 0)
			return i;
	return -1;
}

/*
 * Count the findings column of one check ("[[rule, severity, line],
 * ...]", migrations/0006) into t: every inner array starts with its rule
 * id, the only '[' followed by a digit.
 */
static void
tally_findings(struct tally *t, size_t nrules, const char *f, int v,
    long check)
{
	const char *p = f;

	while (p != NULL && (p = strchr(p, '[')) != NULL) {
		size_t id = 0;
		struct tally *x;

		p++;
		if (*p < '0' || *p > '9')
			continue;
		while (*p >= '0' && *p <= '9' && id < RULES_MAX)
			id = id * 10 + (size_t)(*p++ - '0');
		if (id >= nrules)
			continue;	/* not in rules: cannot be named */
		x = &t[id * 3 + (size_t)v];
		x->count++;
		if (x->last != check) {
			x->last = check;
			x->checks++;
		}
	}
}

struct named {
	const char *rule;
	int v;
	const struct tally *t;
};

static int
cmp_named(const void *a, const void *b)
{
	const struct named *x = a, *y = b;
	int c = strcmp(x->rule, y->rule);

	return c != 0 ? c : x->v - y->v;
}

/*
 * Rule statistics walk the checks of the team (checks_team_id) or of
 * everyone (the id index) from since_id on, reading each row's verdict
 * and findings column (its first page) and counting in C; rule names
 * come from the rules table of the same read transaction.
 */
static int
rule_stats(void *self, struct store_rule_stat **out, size_t *n,
    const char *team, const char *since_id, struct arena *a, struct err *e)
{
	struct store_sqlite *s = self;
	int which = team != NULL ? 1 : 0;
	struct reader *rd;
	sqlite3_stmt *st, *rn;
	struct store_rule_stat *items = NULL;
	struct named *order = NULL;
	struct tally *t = NULL;
	const char **names = NULL;
	size_t nrules = 0, k = 0, i;
	long check = 0;
	int rc, rv = 0, v;

	*out = NULL;
	*n = 0;
	rd = store_reader_get(s);
	if (rd->stats[which] == NULL && store_prepare(rd->db,
	    &rd->stats[which], which ? STATS_TEAM_SQL : STATS_ALL_SQL,
	    e) != 0) {
		store_reader_put(s, rd);
		return ERR_STORE;
	}
	st = rd->stats[which];
	rn = rd->rule_names;
	/* One read transaction, so the names cover every id counted. */
	if (exec(rd->db, "BEGIN", e) != 0) {
		store_reader_put(s, rd);
		return store_db_fail(s, rd->db, e, "begin");
	}
	while ((rc = sqlite3_step(rn)) == SQLITE_ROW) {
		long long id = sqlite3_column_int64(rn, 0);

		if (id >= 0 && id < RULES_MAX && (size_t)id >= nrules)
			nrules = (size_t)id + 1;
	}
	sqlite3_reset(rn);
	if (rc != SQLITE_DONE) {
		rv = store_db_fail(s, rd->db, e, "rule names");
		goto out;
	}
	names = ARENA_NEW(a, const char *, nrules + 1);
	t = ARENA_NEW(a, struct tally, 3 * (nrules + 1));
	if (names == NULL || t == NULL) {
		rv = err_set(e, ERR_NOMEM, NULL, "out of memory");
		goto out;
	}
	while ((rc = sqlite3_step(rn)) == SQLITE_ROW) {
		long long id = sqlite3_column_int64(rn, 0);

		if (id >= 0 && (size_t)id < nrules) {
			names[id] = col_text(rn, 1, NULL, a);
			if (names[id] == NULL) {
				rv = err_set(e, ERR_NOMEM, NULL,
				    "out of memory");
				goto out;
			}
		}
	}
	sqlite3_reset(rn);
	if (sqlite3_bind_text(st, 1, since_id != NULL ? since_id : "", -1,
	    SQLITE_STATIC) ||
	    (team != NULL && sqlite3_bind_text(st, 2, team, -1,
	    SQLITE_STATIC))) {
		rv = store_db_fail(s, rd->db, e, "bind");
		goto out;
	}
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		v = verdict_index((const char *)sqlite3_column_text(st, 0));
		if (v >= 0)
			tally_findings(t, nrules, (const char *)
			    sqlite3_column_text(st, 1), v, ++check);
	}
	if (rc != SQLITE_DONE) {
		rv = store_db_fail(s, rd->db, e, "rule stats");
		goto out;
	}
	order = ARENA_NEW(a, struct named, 3 * nrules + 1);
	if (order == NULL) {
		rv = err_set(e, ERR_NOMEM, NULL, "out of memory");
		goto out;
	}
	for (i = 0; i < 3 * nrules; i++)
		if (t[i].count > 0 && names[i / 3] != NULL) {
			order[k].rule = names[i / 3];
			order[k].v = (int)(i % 3);
			order[k].t = &t[i];
			k++;
		}
	qsort(order, k, sizeof(*order), cmp_named);
	items = ARENA_NEW(a, struct store_rule_stat, k + 1);
	if (items == NULL) {
		rv = err_set(e, ERR_NOMEM, NULL, "out of memory");
		goto out;
	}
	for (i = 0; i < k; i++) {
		items[i].rule = order[i].rule;
		items[i].verdict = verdicts[order[i].v];
		items[i].count = order[i].t->count;
		items[i].checks = order[i].t->checks;
	}
out:
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	sqlite3_reset(rn);
	sqlite3_exec(rd->db, "COMMIT", NULL, NULL, NULL);
	store_reader_put(s, rd);
	if (rv == 0) {
		*out = items;
		*n = k;
	}
	return rv;
}

/* ---- health, size ---------------------------------------------------- */

static int
ready(void *self, struct err *e)
{
	struct store_sqlite *s = self;
	struct job j;
	bool bad;
	int code;

	if (s->version != migrations_count)
		return err_set(e, ERR_STORE, NULL, "schema version %d, want %d",
		    s->version, migrations_count);
	pthread_mutex_lock(&s->emu);
	bad = s->quick_bad;
	code = s->last_err_ms > 0 && mono_ms() - s->last_err_ms <
	    ERROR_HOLD_MS ? s->last_err : 0;
	pthread_mutex_unlock(&s->emu);
	if (bad)
		return err_set(e, ERR_STORE, NULL, "the last PRAGMA "
		    "quick_check failed");
	/* Corruption stays a reason for a while, whatever a probe of the
	   health row says; a full disk or an I/O error lasts until a write
	   succeeds again. */
	if ((code & 0xff) == SQLITE_CORRUPT || (code & 0xff) == SQLITE_NOTADB)
		return err_set(e, ERR_STORE, NULL, "the database reported "
		    "corruption (sqlite code %d) in the last minute", code);
	memset(&j, 0, sizeof(j));
	j.kind = JOB_PROBE;
	j.e = e;
	if (store_job_run(s, &j) != 0)
		return j.rv;
	pthread_mutex_lock(&s->emu);
	if ((s->last_err & 0xff) != SQLITE_CORRUPT &&
	    (s->last_err & 0xff) != SQLITE_NOTADB)
		s->last_err_ms = 0;
	pthread_mutex_unlock(&s->emu);
	return 0;
}

static void
info(void *self, struct store_info *out)
{
	struct store_sqlite *s = self;
	struct reader *rd;
	sqlite3_stmt *st = NULL;

	memset(out, 0, sizeof(*out));
	rd = store_reader_get(s);
	if (sqlite3_prepare_v2(rd->db, "SELECT page_count * page_size FROM "
	    "pragma_page_count(), pragma_page_size()", -1, &st, NULL) ==
	    SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
		out->db_bytes = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	store_reader_put(s, rd);
	out->schema_version = s->version;
	out->schema_latest = migrations_count;
	out->committed = atomic_load(&s->committed);
	out->commits = atomic_load(&s->commits);
	out->checkpoints = atomic_load(&s->checkpoints);
	store_vfs_counts(&out->syncs, &out->bytes_written);
	pthread_mutex_lock(&s->qmu);
	out->write_errors = s->write_errors;
	pthread_mutex_unlock(&s->qmu);
}

int
store_sqlite_prune(struct store_sqlite *s, const char *before_id, int batch,
    int *deleted, struct err *e)
{
	struct job j;
	int rv;

	memset(&j, 0, sizeof(j));
	j.kind = JOB_PRUNE;
	j.before_id = before_id;
	j.batch = batch;
	j.e = e;
	rv = store_job_run(s, &j);
	*deleted = j.deleted;
	return rv;
}

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

static int
call(struct store_sqlite *s, int (*fn)(sqlite3 *, void *, struct err *),
    void *arg, struct err *e)
{
	struct job j;

	memset(&j, 0, sizeof(j));
	j.kind = JOB_CALL;
	j.fn = fn;
	j.arg = arg;
	j.e = e;
	return store_job_run(s, &j);
}

int
store_sqlite_token_add(struct store_sqlite *s, const char *team, bool admin,
    const char *sha256_hex, int64_t now_ms, long long *id, struct err *e)
{
	struct token_args t = { team, admin, sha256_hex, now_ms, 0 };
	int rv = call(s, token_add_fn, &t, e);

	*id = t.id;
	return rv;
}

int
store_sqlite_token_revoke(struct store_sqlite *s, long long id,
    int64_t now_ms, struct err *e)
{
	struct token_args t = { NULL, false, NULL, now_ms, id };

	return call(s, token_revoke_fn, &t, e);
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

/* EXPLAIN QUERY PLAN of st's SQL on db, into fn. */
static int
explain(sqlite3 *db, sqlite3_stmt *st,
    void (*fn)(void *arg, const char *sql, const char *plan), void *arg,
    struct err *e)
{
	const char *sql = sqlite3_sql(st);
	char *q = sqlite3_mprintf("EXPLAIN QUERY PLAN %s", sql);
	char *plan = sqlite3_mprintf("");
	sqlite3_stmt *x = NULL;
	int rc, rv = 0;

	if (q == NULL || plan == NULL) {
		rv = err_set(e, ERR_NOMEM, NULL, "out of memory");
		goto out;
	}
	if (sqlite3_prepare_v2(db, q, -1, &x, NULL) != SQLITE_OK) {
		rv = store_db_fail(NULL, db, e, "explain");
		goto out;
	}
	while ((rc = sqlite3_step(x)) == SQLITE_ROW) {
		char *more = sqlite3_mprintf("%s%s%s", plan, *plan != '\0' ?
		    "; " : "", (const char *)sqlite3_column_text(x, 3));

		sqlite3_free(plan);
		plan = more;
		if (plan == NULL) {
			rv = err_set(e, ERR_NOMEM, NULL, "out of memory");
			goto out;
		}
	}
	if (rc != SQLITE_DONE)
		rv = store_db_fail(NULL, db, e, "explain");
	else
		fn(arg, sql, plan);
out:
	sqlite3_finalize(x);
	sqlite3_free(q);
	sqlite3_free(plan);
	return rv;
}

int
store_sqlite_plans(struct store_sqlite *s,
    void (*fn)(void *arg, const char *sql, const char *plan), void *arg,
    struct err *e)
{
	struct reader *rd = store_reader_get(s);
	sqlite3_stmt *d = NULL;
	unsigned mask;
	int rv = 0, i;

	rd->deadline_ms = 0;
	for (mask = 0; mask < LIST_VARIANTS && rv == 0; mask++) {
		/* list_checks takes the rule_list one when F_RULE is set. */
		sqlite3_stmt *st = (mask & F_RULE) ? rule_stmt(rd, mask, e) :
		    list_stmt(rd, mask, e);

		rv = st != NULL ? explain(rd->db, st, fn, arg, e) : ERR_STORE;
	}
	for (i = 0; i < 2 && rv == 0; i++)
		if (rd->stats[i] == NULL)
			rv = store_prepare(rd->db, &rd->stats[i], i ?
			    STATS_TEAM_SQL : STATS_ALL_SQL, e);
	if (rv == 0)
		rv = sqlite3_prepare_v2(rd->db, store_diagnose_list_sql, -1,
		    &d, NULL) == SQLITE_OK ? 0 : store_db_fail(NULL, rd->db, e,
		    "prepare");
	{
		sqlite3_stmt *const all[] = { rd->stats[0], rd->stats[1],
		    rd->get_check, rd->get_idem, rd->by_seq, rd->teams,
		    rd->find_token, s->w.prune, d };

		for (i = 0; i < (int)(sizeof(all) / sizeof(all[0])) &&
		    rv == 0; i++)
			rv = explain(rd->db, all[i], fn, arg, e);
	}
	sqlite3_finalize(d);
	store_reader_put(s, rd);
	return rv;
}

int
store_sqlite_write(struct store_sqlite *s,
    int (*fn)(sqlite3 *db, void *arg, struct err *e), void *arg,
    struct err *e)
{
	return call(s, fn, arg, e);
}

int
store_sqlite_read(struct store_sqlite *s,
    int (*fn)(sqlite3 *db, void *arg, struct err *e), void *arg,
    struct err *e)
{
	struct reader *rd = store_reader_get(s);
	int rv;

	rv = fn(rd->db, arg, e);
	store_reader_put(s, rd);
	return rv;
}

static const struct store_ops sqlite_ops = {
	.put_check = store_put_check,
	.put_check_async = store_put_check_async,
	.expect = store_expect,
	.get_check = get_check,
	.get_by_idem = get_by_idem,
	.list_checks = list_checks,
	.rule_stats = rule_stats,
	.put_diagnosis = store_diagnose_put,
	.list_measurements = store_diagnose_measurements,
	.ready = ready,
	.info = info,
};

struct store
store_sqlite_iface(struct store_sqlite *s)
{
	struct store st = { &sqlite_ops, s };

	return st;
}
