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

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include "core/arena.h"
#include "server/log.h"
#include "server/migrations.h"
#include "server/store_diagnose.h"

#define LIST_VARIANTS 64	/* 2^6 optional filters */
#define BATCH_MAX 128		/* writes committed together, at most */
#define CHECKPOINT_FRAMES 1000	/* WAL frames that wake the checkpointer */
#define WAL_RESET_FRAMES 8000	/* WAL frames (~32 MiB) that make the writer
				   finish a checkpoint itself, so the WAL
				   starts over instead of growing forever */

#define READERS 4		/* read connections (WAL: concurrent readers) */
#define QUERY_MS_DEFAULT 2000	/* a read's time budget, then ERR_BUSY */
#define HEALTH_SECONDS 300	/* between background quick_checks */
#define ERROR_HOLD_MS 60000	/* a corruption or I/O error keeps /readyz
				   failing this long after it was seen */

/* A read connection and its statements; one request at a time holds it
   (reader_get / reader_put). */
struct reader {
	sqlite3 *db;
	int64_t deadline_ms;	/* monotonic; the progress handler stops a
				   statement past it */
	sqlite3_stmt *get_check;
	sqlite3_stmt *get_idem;
	sqlite3_stmt *list[LIST_VARIANTS];	/* lazily prepared */
	sqlite3_stmt *stats[2];	/* [0] all teams, [1] one team */
	sqlite3_stmt *find_token;
};

/* Statements of the writer connection (writer thread only). */
struct writer {
	sqlite3 *db;
	sqlite3_stmt *ins_check;
	sqlite3_stmt *ins_finding;
	sqlite3_stmt *beat;
	sqlite3_stmt *prune;
	sqlite3_stmt *begin;	/* BEGIN IMMEDIATE */
	sqlite3_stmt *commit;
	sqlite3_stmt *rollback;
	sqlite3_stmt *savepoint;	/* SAVEPOINT one */
	sqlite3_stmt *release;		/* RELEASE one */
	sqlite3_stmt *undo;		/* ROLLBACK TO one */
};

/* A whole checks row, in the order the row readers expect it. */
#define CHECK_COLUMNS "id, created_at, team, name, config_sha256, " \
	"verdict, errors, warnings, infos, context, report, config, " \
	"idem_key, body_sha256"

/* The first 11 of them, of the table aliased c: a list row. */
#define LIST_COLUMNS "c.id, c.created_at, c.team, c.name, " \
	"c.config_sha256, c.verdict, c.errors, c.warnings, c.infos, " \
	"c.context, c.report"

/* Step a prepared statement that returns no rows; 0 or ERR_STORE. */
static int
run(sqlite3_stmt *st)
{
	int rc = sqlite3_step(st);

	sqlite3_reset(st);
	return rc == SQLITE_DONE ? 0 : ERR_STORE;
}

enum job_kind {
	JOB_PUT,		/* insert a check and its findings */
	JOB_PROBE,		/* prove the database is writable */
	JOB_PRUNE,		/* delete a batch of old checks */
	JOB_CALL		/* run fn on the writer connection */
};

/* A write waiting for the writer thread; lives on the caller's stack. */
struct job {
	enum job_kind kind;
	const struct store_check *c;	/* JOB_PUT */
	const char *before_id;	/* JOB_PRUNE */
	int batch;		/* JOB_PRUNE */
	int deleted;		/* JOB_PRUNE result */
	int (*fn)(sqlite3 *db, void *arg, struct err *e);	/* JOB_CALL */
	void *arg;		/* JOB_CALL */
	int rv;			/* result: 0 or enum err_code */
	struct err *e;		/* the caller's */
	bool done;
	struct job *next;
};

/*
 * Group commit: callers (HTTP threads) queue jobs and sleep; the writer
 * thread commits everything queued in one transaction, each check inside
 * its own savepoint so one failure does not sink the others, then wakes
 * the callers.  Nobody is told "committed" before COMMIT returned.  A
 * second thread checkpoints the WAL on its own connection, so no request
 * waits for the checkpoint's fsync.
 */
struct store_sqlite {
	struct writer w;
	struct reader r[READERS];
	int nreaders;		/* 1 when shared */
	bool rbusy[READERS];	/* held by a request (under rmu) */
	pthread_cond_t rcv;	/* a reader was put back */
	bool shared;		/* ":memory:": r[0].db is w.db, and the
				   writer holds r[0] while it writes */
	pthread_mutex_t rmu;	/* the reader pool */
	int query_ms;		/* a read's budget */
	pthread_mutex_t emu;	/* the health fields below */
	int last_err;		/* SQLite code of the last serious error */
	int64_t last_err_ms;	/* monotonic ms of it; 0: none */
	bool quick_bad;		/* the last quick_check found a problem */
	pthread_t health_thread;
	bool health_started;
	pthread_cond_t hcv;	/* wakes the health thread to stop */
	pthread_mutex_t qmu;	/* the queue and the fields below */
	pthread_cond_t qcv;	/* work for the writer */
	pthread_cond_t dcv;	/* jobs done */
	pthread_cond_t ccv;	/* work for the checkpointer */
	struct job *head;
	struct job *tail;
	bool stop;
	bool checkpoint_due;
	int wal_frames;		/* WAL size after the last commit (writer) */
	pthread_t writer_thread;
	pthread_t ckpt_thread;
	bool writer_started;
	bool ckpt_started;
	sqlite3 *ckpt_db;	/* the checkpointer's connection */
	char *path;		/* the database file (health thread) */
	unsigned health_s;	/* seconds between quick_checks; 0: none */
	long long write_errors;
	int version;
};

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

/* Record a failure of db: logged (code and SQLite's message, never the
   data), kept for readiness when serious.  The budget's interrupt is
   ERR_BUSY, everything else ERR_STORE. */
static int
db_fail(struct store_sqlite *s, sqlite3 *db, struct err *e,
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

static int
prepare(sqlite3 *db, sqlite3_stmt **st, const char *sql, struct err *e)
{
	if (sqlite3_prepare_v3(db, sql, -1, SQLITE_PREPARE_PERSISTENT, st,
	    NULL) != SQLITE_OK)
		return db_fail(NULL, db, e, "prepare");
	return 0;
}

/* ---- the reader pool ----------------------------------------------- */

/* Stops a read past its connection's deadline (SQLITE_INTERRUPT). */
static int
over_budget(void *arg)
{
	const struct reader *rd = arg;

	return rd->deadline_ms > 0 && mono_ms() > rd->deadline_ms;
}

/* A free read connection, its budget started; waits while all are in
   use (each read is bounded by the budget, so the wait is too). */
static struct reader *
reader_get(struct store_sqlite *s)
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

static void
reader_put(struct store_sqlite *s, struct reader *rd)
{
	rd->deadline_ms = 0;
	pthread_mutex_lock(&s->rmu);
	s->rbusy[rd - s->r] = false;
	pthread_cond_signal(&s->rcv);
	pthread_mutex_unlock(&s->rmu);
}

static int
migrate(struct store_sqlite *s, struct err *e)
{
	sqlite3 *db = s->w.db;
	sqlite3_stmt *st = NULL;
	int v, i, rv;

	if (sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &st, NULL) !=
	    SQLITE_OK || sqlite3_step(st) != SQLITE_ROW) {
		sqlite3_finalize(st);
		return db_fail(s, db, e, "read user_version");
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

		rv = exec(db, "BEGIN IMMEDIATE", e);
		if (rv != 0)
			return rv;
		rv = exec(db, migrations[i].sql, e);
		if (rv == 0) {
			snprintf(pragma, sizeof(pragma),
			    "PRAGMA user_version = %d", migrations[i].version);
			rv = exec(db, pragma, e);
		}
		if (rv == 0)
			rv = exec(db, "COMMIT", e);
		if (rv != 0) {
			sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
			return rv;
		}
	}
	s->version = migrations_count;
	return 0;
}

static int
open_conn(sqlite3 **db, const char *path, struct err *e)
{
	if (sqlite3_open_v2(path, db, SQLITE_OPEN_READWRITE |
	    SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK)
		return err_set(e, ERR_STORE, NULL, "cannot open %s: %s", path,
		    *db != NULL ? sqlite3_errmsg(*db) : "out of memory");
	sqlite3_busy_timeout(*db, 5000);
	sqlite3_extended_result_codes(*db, 1);
	return 0;
}

/* Wakes the checkpointer when the WAL has grown (writer thread). */
static int
wal_hook(void *arg, sqlite3 *db, const char *name, int frames)
{
	struct store_sqlite *s = arg;

	(void)db;
	(void)name;
	s->wal_frames = frames;	/* the writer thread is the only caller */
	if (frames >= CHECKPOINT_FRAMES) {
		pthread_mutex_lock(&s->qmu);
		s->checkpoint_due = true;
		pthread_cond_signal(&s->ccv);
		pthread_mutex_unlock(&s->qmu);
	}
	return SQLITE_OK;
}

static void *
checkpoint_loop(void *arg)
{
	struct store_sqlite *s = arg;

	pthread_mutex_lock(&s->qmu);
	for (;;) {
		while (!s->checkpoint_due && !s->stop)
			pthread_cond_wait(&s->ccv, &s->qmu);
		if (s->stop)
			break;
		s->checkpoint_due = false;
		pthread_mutex_unlock(&s->qmu);
		/* PASSIVE: never blocks writers or readers. */
		sqlite3_wal_checkpoint_v2(s->ckpt_db, NULL,
		    SQLITE_CHECKPOINT_PASSIVE, NULL, NULL);
		pthread_mutex_lock(&s->qmu);
	}
	pthread_mutex_unlock(&s->qmu);
	return NULL;
}

static int
put_one(struct store_sqlite *s, const struct store_check *c, struct err *e)
{
	sqlite3_stmt *st = s->w.ins_check, *f = s->w.ins_finding;
	size_t i;
	int rv = 0;

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
		rv = db_fail(s, s->w.db, e, "insert check");
		goto out;
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
		    sqlite3_step(f) != SQLITE_DONE) {
			rv = db_fail(s, s->w.db, e, "insert finding");
			goto out;
		}
	}
out:
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	sqlite3_reset(f);
	sqlite3_clear_bindings(f);
	return rv;
}

/* Run one batch of jobs on the writer connection. */
static void
run_batch(struct store_sqlite *s, struct job *list)
{
	sqlite3 *db = s->w.db;
	struct job *j;
	struct err e = { 0 };
	bool any_put = false;

	for (j = list; j != NULL; j = j->next) {
		if (j->kind == JOB_PROBE) {
			j->rv = sqlite3_step(s->w.beat) == SQLITE_DONE ? 0 :
			    db_fail(s, db, j->e, "write probe");
			sqlite3_reset(s->w.beat);
		} else if (j->kind == JOB_CALL) {
			j->rv = j->fn(db, j->arg, j->e);
		} else if (j->kind == JOB_PRUNE) {
			if (sqlite3_bind_text(s->w.prune, 1, j->before_id, -1,
			    SQLITE_STATIC) ||
			    sqlite3_bind_int(s->w.prune, 2, j->batch) ||
			    sqlite3_step(s->w.prune) != SQLITE_DONE)
				j->rv = db_fail(s, db, j->e, "prune");
			else
				j->deleted = sqlite3_changes(db);
			sqlite3_reset(s->w.prune);
		} else {
			any_put = true;
		}
	}
	if (!any_put)
		return;
	if (run(s->w.begin) != 0) {
		db_fail(s, db, &e, "begin");
		for (j = list; j != NULL; j = j->next)
			if (j->kind == JOB_PUT)
				j->rv = err_set(j->e, ERR_STORE, NULL, "%s",
				    e.msg);
		return;
	}
	for (j = list; j != NULL; j = j->next) {
		if (j->kind != JOB_PUT)
			continue;
		if (run(s->w.savepoint) != 0) {
			j->rv = db_fail(s, db, j->e, "savepoint");
			continue;
		}
		j->rv = put_one(s, j->c, j->e);
		if (j->rv != 0)
			run(s->w.undo);
		run(s->w.release);
	}
	if (run(s->w.commit) != 0) {
		db_fail(s, db, &e, "commit");
		run(s->w.rollback);
		for (j = list; j != NULL; j = j->next)
			if (j->kind == JOB_PUT && j->rv == 0)
				j->rv = err_set(j->e, ERR_STORE, NULL, "%s",
				    e.msg);
	}
}

/*
 * Under steady load the background checkpointer never catches the last
 * frames, and SQLite only starts the WAL over once a checkpoint is
 * complete.  So past WAL_RESET_FRAMES the writer (the only one adding
 * frames) completes one itself; the next commit then rewinds the WAL and
 * journal_size_limit truncates it.  Most frames are already copied by the
 * checkpointer, so this is short.
 */
static void
bound_wal(struct store_sqlite *s)
{
	if (s->shared || s->wal_frames < WAL_RESET_FRAMES)
		return;
	sqlite3_wal_checkpoint_v2(s->w.db, NULL, SQLITE_CHECKPOINT_PASSIVE,
	    NULL, NULL);
	s->wal_frames = 0;
}

static void *
writer_loop(void *arg)
{
	struct store_sqlite *s = arg;

	pthread_mutex_lock(&s->qmu);
	for (;;) {
		struct job *list, *j, *rest = NULL;
		struct reader *rd = NULL;
		int n = 0;

		while (s->head == NULL && !s->stop)
			pthread_cond_wait(&s->qcv, &s->qmu);
		if (s->head == NULL)
			break;	/* stopping, and nothing left to write */
		list = s->head;
		for (j = list; j->next != NULL && ++n < BATCH_MAX; j = j->next)
			;
		rest = j->next;
		j->next = NULL;
		s->head = rest;
		if (rest == NULL)
			s->tail = NULL;
		pthread_mutex_unlock(&s->qmu);
		if (s->shared)
			rd = reader_get(s);	/* one connection for both */
		run_batch(s, list);
		if (s->shared)
			reader_put(s, rd);
		pthread_mutex_lock(&s->qmu);
		/* Callers first: wake them before any checkpoint work. */
		for (j = list; j != NULL; j = j->next) {
			if (j->rv != 0)
				s->write_errors++;
			j->done = true;
		}
		pthread_cond_broadcast(&s->dcv);
		pthread_mutex_unlock(&s->qmu);
		bound_wal(s);
		pthread_mutex_lock(&s->qmu);
	}
	pthread_mutex_unlock(&s->qmu);
	return NULL;
}

/* Queue j for the writer and wait until it has run. */
static int
submit(struct store_sqlite *s, struct job *j)
{
	pthread_mutex_lock(&s->qmu);
	if (s->stop) {
		pthread_mutex_unlock(&s->qmu);
		return err_set(j->e, ERR_STORE, NULL, "store is closing");
	}
	j->next = NULL;
	if (s->tail == NULL)
		s->head = j;
	else
		s->tail->next = j;
	s->tail = j;
	pthread_cond_signal(&s->qcv);
	while (!j->done)
		pthread_cond_wait(&s->dcv, &s->qmu);
	pthread_mutex_unlock(&s->qmu);
	return j->rv;
}

/* The read connection's statements (its list and stats ones are
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
		rv = prepare(rd->db, &rd->get_check, "SELECT " CHECK_COLUMNS
		    " FROM checks WHERE id = ?1 AND (?2 IS NULL OR team = ?2)",
		    e);
	if (rv == 0)
		rv = prepare(rd->db, &rd->find_token,
		    "SELECT id, team, admin, created_at, 0 FROM tokens WHERE "
		    "token_sha256 = ?1 AND revoked_at IS NULL", e);
	if (rv == 0)
		rv = prepare(rd->db, &rd->get_idem, "SELECT "
		    CHECK_COLUMNS " FROM checks WHERE team = ?1 AND "
		    "idem_key = ?2", e);
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
	for (i = 0; i < LIST_VARIANTS; i++)
		sqlite3_finalize(rd->list[i]);
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
	pthread_cond_init(&s->qcv, NULL);
	pthread_cond_init(&s->dcv, NULL);
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
	if (rv == 0)
		rv = exec(s->w.db, "PRAGMA foreign_keys = ON", e);
	if (rv == 0 && !s->shared)
		rv = exec(s->w.db, "PRAGMA journal_mode = WAL", e);
	if (rv == 0)
		rv = exec(s->w.db, full_sync ? "PRAGMA synchronous = FULL" :
		    "PRAGMA synchronous = NORMAL", e);
	if (rv == 0 && !s->shared)
		rv = exec(s->w.db, "PRAGMA wal_autocheckpoint = 0", e);
	if (rv == 0 && !s->shared)
		rv = exec(s->w.db, "PRAGMA journal_size_limit = 67108864", e);
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
		rv = prepare(s->w.db, &s->w.ins_check,
		    "INSERT INTO checks (id, created_at, team, name, "
		    "config_sha256, verdict, errors, warnings, infos, context, "
		    "report, config, idem_key, body_sha256) VALUES "
		    "(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, "
		    "?14)", e);
	if (rv == 0)
		rv = prepare(s->w.db, &s->w.ins_finding,
		    "INSERT INTO findings (check_id, rule, severity, line, "
		    "team, verdict) VALUES (?1, ?2, ?3, ?4, ?5, ?6)", e);
	if (rv == 0)
		rv = prepare(s->w.db, &s->w.beat,
		    "UPDATE health SET beat = beat + 1 WHERE id = 1", e);
	if (rv == 0)
		rv = prepare(s->w.db, &s->w.prune,
		    "DELETE FROM checks WHERE rowid IN (SELECT rowid FROM "
		    "checks WHERE id < ?1 ORDER BY id LIMIT ?2)", e);
	if (rv == 0)
		rv = prepare(s->w.db, &s->w.begin, "BEGIN IMMEDIATE", e);
	if (rv == 0)
		rv = prepare(s->w.db, &s->w.commit, "COMMIT", e);
	if (rv == 0)
		rv = prepare(s->w.db, &s->w.rollback, "ROLLBACK", e);
	if (rv == 0)
		rv = prepare(s->w.db, &s->w.savepoint, "SAVEPOINT one", e);
	if (rv == 0)
		rv = prepare(s->w.db, &s->w.release, "RELEASE one", e);
	if (rv == 0)
		rv = prepare(s->w.db, &s->w.undo, "ROLLBACK TO one", e);
	if (rv != 0)
		goto fail;
	if (!s->shared) {
		rv = open_conn(&s->ckpt_db, path, e);
		if (rv == 0)
			rv = exec(s->ckpt_db, "PRAGMA journal_mode = WAL", e);
		if (rv != 0)
			goto fail;
		sqlite3_wal_hook(s->w.db, wal_hook, s);
	}
	for (i = 0; i < s->nreaders && rv == 0; i++)
		rv = reader_open(s, &s->r[i], path, e);
	if (rv != 0)
		goto fail;
	if (pthread_create(&s->writer_thread, NULL, writer_loop, s) != 0) {
		rv = err_set(e, ERR_STORE, NULL, "cannot start the writer");
		goto fail;
	}
	s->writer_started = true;
	if (!s->shared) {
		if (pthread_create(&s->ckpt_thread, NULL, checkpoint_loop,
		    s) != 0) {
			rv = err_set(e, ERR_STORE, NULL,
			    "cannot start the checkpointer");
			goto fail;
		}
		s->ckpt_started = true;
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
	pthread_mutex_lock(&s->qmu);
	s->stop = true;
	pthread_cond_broadcast(&s->qcv);
	pthread_cond_broadcast(&s->ccv);
	pthread_cond_broadcast(&s->hcv);
	pthread_mutex_unlock(&s->qmu);
	/* The writer finishes what is queued before it exits. */
	if (s->writer_started)
		pthread_join(s->writer_thread, NULL);
	if (s->ckpt_started)
		pthread_join(s->ckpt_thread, NULL);
	if (s->health_started)
		pthread_join(s->health_thread, NULL);
	for (i = 0; i < READERS; i++)
		reader_close(s, &s->r[i]);
	sqlite3_finalize(s->w.ins_check);
	sqlite3_finalize(s->w.ins_finding);
	sqlite3_finalize(s->w.beat);
	sqlite3_finalize(s->w.prune);
	sqlite3_finalize(s->w.begin);
	sqlite3_finalize(s->w.commit);
	sqlite3_finalize(s->w.rollback);
	sqlite3_finalize(s->w.savepoint);
	sqlite3_finalize(s->w.release);
	sqlite3_finalize(s->w.undo);
	sqlite3_close_v2(s->ckpt_db);
	/* The last connection to close checkpoints the WAL away. */
	sqlite3_close_v2(s->w.db);
	pthread_cond_destroy(&s->qcv);
	pthread_cond_destroy(&s->dcv);
	pthread_cond_destroy(&s->ccv);
	pthread_cond_destroy(&s->rcv);
	pthread_cond_destroy(&s->hcv);
	pthread_mutex_destroy(&s->qmu);
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
	struct job j;

	memset(&j, 0, sizeof(j));
	j.kind = JOB_PUT;
	j.c = c;
	j.e = e;
	return submit(self, &j);
}

static int
get_one(struct store_sqlite *s, struct reader *rd, sqlite3_stmt *st,
    struct store_check *out, struct arena *a, struct err *e)
{
	int rc = sqlite3_step(st), rv;

	if (rc == SQLITE_DONE)
		rv = err_set(e, ERR_NOTFOUND, NULL, "no such check");
	else if (rc != SQLITE_ROW)
		rv = db_fail(s, rd->db, e, "select check");
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
	struct reader *rd = reader_get(s);
	sqlite3_stmt *st = rd->get_check;
	int rv;

	if (sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC) ||
	    (team != NULL ? sqlite3_bind_text(st, 2, team, -1, SQLITE_STATIC)
	    : sqlite3_bind_null(st, 2)))
		rv = db_fail(s, rd->db, e, "bind");
	else
		rv = get_one(s, rd, st, out, a, e);
	reader_put(s, rd);
	return rv;
}

static int
get_by_idem(void *self, struct store_check *out, const char *team,
    const char *key, struct arena *a, struct err *e)
{
	struct store_sqlite *s = self;
	struct reader *rd = reader_get(s);
	sqlite3_stmt *st = rd->get_idem;
	int rv;

	if (sqlite3_bind_text(st, 1, team, -1, SQLITE_STATIC) ||
	    sqlite3_bind_text(st, 2, key, -1, SQLITE_STATIC))
		rv = db_fail(s, rd->db, e, "bind");
	else
		rv = get_one(s, rd, st, out, a, e);
	reader_put(s, rd);
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
list_stmt(struct reader *rd, unsigned mask, struct err *e)
{
	char sql[1024];
	size_t n;

	if (rd->list[mask] != NULL)
		return rd->list[mask];
	/*
	 * Plain comparisons only (the cursor is bound to "~", above every
	 * id, when absent), so each filter is a range on an index and a
	 * page costs O(log n + limit).  With a rule, the walk is driven by
	 * findings_rule_check (migration 0003) from the cursor down, one
	 * row per check; the other filters apply to the joined check.
	 */
	n = (size_t)snprintf(sql, sizeof(sql), "SELECT %s FROM %s", LIST_COLUMNS,
	    (mask & F_RULE) ? "findings f CROSS JOIN checks c ON c.id = "
	    "f.check_id WHERE f.rule = ?5 AND f.severity <> 'info' AND "
	    "f.check_id < ?1" : "checks c WHERE c.id < ?1");
	if (mask & F_TEAM)
		n += (size_t)snprintf(sql + n, sizeof(sql) - n,
		    " AND c.team = ?2");
	if (mask & F_NAME)
		n += (size_t)snprintf(sql + n, sizeof(sql) - n,
		    " AND c.name = ?3");
	if (mask & F_VERDICT)
		n += (size_t)snprintf(sql + n, sizeof(sql) - n,
		    " AND c.verdict = ?4");
	if (mask & F_SINCE)
		n += (size_t)snprintf(sql + n, sizeof(sql) - n,
		    " AND c.id >= ?6");
	if (mask & F_UNTIL)
		n += (size_t)snprintf(sql + n, sizeof(sql) - n,
		    " AND c.id < ?7");
	snprintf(sql + n, sizeof(sql) - n, (mask & F_RULE) ?
	    " GROUP BY f.check_id ORDER BY f.check_id DESC LIMIT ?8" :
	    " ORDER BY c.id DESC LIMIT ?8");
	if (prepare(rd->db, &rd->list[mask], sql, e) != 0)
		return NULL;
	return rd->list[mask];
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
	    (q->since_id ? F_SINCE : 0) | (q->until_id ? F_UNTIL : 0);
	sqlite3_stmt *st;
	struct reader *rd;
	struct store_check *items;
	size_t k = 0, bytes = 0;
	int rc, rv = 0;

	*out = NULL;
	*n = 0;
	items = ARENA_NEW(a, struct store_check, q->limit);
	if (items == NULL)
		return err_set(e, ERR_NOMEM, NULL, "out of memory");
	rd = reader_get(s);
	st = list_stmt(rd, mask, e);
	if (st == NULL) {
		rv = ERR_STORE;
		goto out;
	}
	if (sqlite3_bind_text(st, 1, q->before_id != NULL ? q->before_id :
	    "~", -1, SQLITE_STATIC) || bind_opt(st, 2, q->team) ||
	    bind_opt(st, 3, q->name) || bind_opt(st, 4, q->verdict) ||
	    bind_opt(st, 5, q->rule) ||
	    bind_opt(st, 6, q->since_id) || bind_opt(st, 7, q->until_id) ||
	    sqlite3_bind_int64(st, 8, q->limit)) {
		rv = db_fail(s, rd->db, e, "bind");
		goto out;
	}
	while ((rc = sqlite3_step(st)) == SQLITE_ROW && k < q->limit) {
		rv = read_row(&items[k], st, false, a, e);
		if (rv != 0)
			goto out;
		bytes += strlen(items[k].json);
		k++;
		if (q->max_bytes > 0 && bytes > q->max_bytes && k >= 2)
			break;	/* a page's worth, and proof of more */
	}
	if (rc != SQLITE_DONE && rc != SQLITE_ROW)
		rv = db_fail(s, rd->db, e, "list checks");
out:
	if (st != NULL) {
		sqlite3_reset(st);
		sqlite3_clear_bindings(st);
	}
	reader_put(s, rd);
	if (rv == 0) {
		*out = items;
		*n = k;
	}
	return rv;
}

static int
rule_stats(void *self, struct store_rule_stat **out, size_t *n,
    const char *team, const char *since_id, struct arena *a, struct err *e)
{
	struct store_sqlite *s = self;
	int which = team != NULL ? 1 : 0;
	struct reader *rd;
	sqlite3_stmt *st;
	struct store_rule_stat *items = NULL;
	size_t k = 0, cap = 0;
	int rc, rv = 0;

	*out = NULL;
	*n = 0;
	rd = reader_get(s);
	/* With a team, findings_team_check (migration 0004) walks only
	   that team's rows from since_id on. */
	if (rd->stats[which] == NULL && prepare(rd->db, &rd->stats[which],
	    which ?
	    "SELECT rule, verdict, count(*), count(DISTINCT check_id) "
	    "FROM findings WHERE team = ?2 AND check_id >= ?1 "
	    "GROUP BY rule, verdict ORDER BY rule, verdict" :
	    "SELECT rule, verdict, count(*), count(DISTINCT check_id) "
	    "FROM findings WHERE check_id >= ?1 "
	    "GROUP BY rule, verdict ORDER BY rule, verdict", e) != 0) {
		reader_put(s, rd);
		return ERR_STORE;
	}
	st = rd->stats[which];
	if (sqlite3_bind_text(st, 1, since_id != NULL ? since_id : "", -1,
	    SQLITE_STATIC) ||
	    (team != NULL && sqlite3_bind_text(st, 2, team, -1,
	    SQLITE_STATIC))) {
		rv = db_fail(s, rd->db, e, "bind");
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
		rv = db_fail(s, rd->db, e, "rule stats");
out:
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	reader_put(s, rd);
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
	if (submit(s, &j) != 0)
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
	long long pages = 0, size = 0;

	memset(out, 0, sizeof(*out));
	rd = reader_get(s);
	if (sqlite3_prepare_v2(rd->db, "SELECT page_count * page_size FROM "
	    "pragma_page_count(), pragma_page_size()", -1, &st, NULL) ==
	    SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
		size = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	(void)pages;
	out->db_bytes = size;
	out->schema_version = s->version;
	out->schema_latest = migrations_count;
	reader_put(s, rd);
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
	rv = submit(s, &j);
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
		rv = db_fail(NULL, db, e, "add token");
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
		rv = db_fail(NULL, db, e, "revoke token");
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
	return submit(s, &j);
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

	rd = reader_get(s);
	rd->deadline_ms = 0;	/* an operator's listing: no budget */
	if (sqlite3_prepare_v2(rd->db, "SELECT id, team, admin, created_at, "
	    "coalesce(revoked_at, 0) FROM tokens ORDER BY id", -1, &st,
	    NULL) != SQLITE_OK) {
		rv = db_fail(s, rd->db, e, "list tokens");
		goto out;
	}
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		read_token(&t, st);
		fn(arg, &t);
	}
	if (rc != SQLITE_DONE)
		rv = db_fail(s, rd->db, e, "list tokens");
out:
	sqlite3_finalize(st);
	reader_put(s, rd);
	return rv;
}

int
store_sqlite_token_find(struct store_sqlite *s, const char *sha256_hex,
    struct store_token *out, struct err *e)
{
	sqlite3_stmt *st;
	struct reader *rd;
	int rc, rv;

	rd = reader_get(s);
	st = rd->find_token;
	if (sqlite3_bind_text(st, 1, sha256_hex, -1, SQLITE_STATIC)) {
		rv = db_fail(s, rd->db, e, "bind");
		goto out;
	}
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		read_token(out, st);
		rv = 0;
	} else if (rc == SQLITE_DONE) {
		rv = err_set(e, ERR_NOTFOUND, NULL, "no such token");
	} else {
		rv = db_fail(s, rd->db, e, "find token");
	}
out:
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	reader_put(s, rd);
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
	struct reader *rd = reader_get(s);
	int rv;

	rv = fn(rd->db, arg, e);
	reader_put(s, rd);
	return rv;
}

static const struct store_ops sqlite_ops = {
	.put_check = put_check,
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
