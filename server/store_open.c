/*
 * server/store_open: opening the SQLite store (the writer, read and
 * checkpoint connections, WAL, the counting VFS), applying the
 * migrations in order, the health thread's quick_check, and closing.
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

#define QUERY_MS_DEFAULT 2000	/* a read's time budget, then ERR_BUSY */
#define HEALTH_SECONDS 300	/* between background quick_checks */

/* ---- opening and migrating ------------------------------------------ */

/* Stops a read past its connection's deadline (SQLITE_INTERRUPT). */
static int
over_budget(void *arg)
{
	const struct reader *rd = arg;

	return rd->deadline_ms > 0 && store_mono_ms() > rd->deadline_ms;
}

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
		rv = store_exec(db, "PRAGMA foreign_keys = OFF", e);
	for (i = v; i < migrations_count && rv == 0; i++) {
		char pragma[64];

		rv = store_exec(db, "BEGIN IMMEDIATE", e);
		if (rv != 0)
			break;
		rv = store_exec(db, migrations[i].sql, e);
		if (rv == 0)
			rv = fk_intact(db, e);
		if (rv == 0) {
			snprintf(pragma, sizeof(pragma),
			    "PRAGMA user_version = %d", migrations[i].version);
			rv = store_exec(db, pragma, e);
		}
		if (rv == 0)
			rv = store_exec(db, "COMMIT", e);
		if (rv != 0)
			sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
		else
			log_msg("info", "store: applied migration %s",
			    migrations[i].name);
	}
	if (store_exec(db, "PRAGMA foreign_keys = ON", rv == 0 ? e : NULL) != 0 &&
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
			rv = store_exec(rd->db, "PRAGMA journal_mode = WAL", e);
		if (rv == 0)
			rv = store_exec(rd->db, "PRAGMA query_only = 1", e);
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

	store_thread_name("pf-health");
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
		    store_exec(db, "PRAGMA query_only = 1", &e) != 0 ||
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
		rv = store_exec(s->w.db, "PRAGMA page_size = " STORE_PAGE_SIZE, e);
	if (rv == 0)
		rv = store_exec(s->w.db, "PRAGMA foreign_keys = ON", e);
	if (rv == 0 && !s->shared)
		rv = store_exec(s->w.db, "PRAGMA journal_mode = WAL", e);
	if (rv == 0)
		rv = store_exec(s->w.db, full_sync ? "PRAGMA synchronous = FULL" :
		    "PRAGMA synchronous = NORMAL", e);
	/* The checkpointer thread checkpoints; the writer never does. */
	if (rv == 0 && !s->shared)
		rv = store_exec(s->w.db, "PRAGMA wal_autocheckpoint = 0", e);
	/* The WAL file is reused up to the size at which the writer restarts
	   it (CKPT_CAP), not truncated and grown again. */
	if (rv == 0 && !s->shared)
		rv = store_exec(s->w.db, "PRAGMA journal_size_limit = 268435456", e);
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
			rv = store_exec(s->ckpt_db, "PRAGMA journal_mode = WAL", e);
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

