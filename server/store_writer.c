/*
 * server/store_writer: the one writer of the SQLite store, and its
 * checkpointer (issue #16).
 *
 * Request threads never wait for a commit: put_check_async queues a
 * struct store_write and returns; the writer thread takes everything
 * queued (up to BATCH_MAX checks), validates it, inserts it in one
 * transaction without savepoints, and after COMMIT returned calls each
 * job's done() once (the HTTP layer resumes exactly that connection).
 * It commits what is queued at once: checks queued while it commits
 * share the next commit, and nothing waits for a check still being
 * computed.  (Until issue #16's third pass it held a commit back up to
 * 500 us for checks announced as on their way: at 4 connections that
 * committed the four requests together while the other core idled, and
 * cost the writer a second sleep and wake-up per commit.)
 * If a statement fails, the transaction is rolled back and the batch run
 * again without the failing check, which is answered alone with its own
 * error: one bad check never sinks the others.  A COMMIT that fails
 * fails the whole batch: nothing in it was committed.
 *
 * The checkpointer copies the WAL into the database on its own
 * connection, PASSIVE (never blocking the writer or readers), when the
 * WAL grew by CKPT_STEP bytes since it was last woken or every
 * CKPT_SECONDS; so a page that many commits touch is copied once per
 * pass, not once per commit (issue #16: waking it per commit once the WAL
 * was large copied the same pages over and over, with two syncs each).
 * The WAL only starts over after a complete checkpoint, which a pause in
 * the load allows but steady load never does.  So past CKPT_CAP bytes the
 * checkpointer runs passes until one copies less than CKPT_REST, and then
 * the writer, between two batches, runs a RESTART checkpoint: it copies
 * only that rest (holding the write lock itself, so nothing sleeps in a
 * busy handler) and waits at most CKPT_WAIT_MS for readers.  That is the
 * one time the writer waits -- for two syncs, tens of milliseconds on a
 * busy disk -- once per CKPT_CAP bytes of WAL under sustained load.
 */
#include "server/store_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "server/log.h"

#define BATCH_MAX 256		/* checks committed together, at most */
#define CKPT_STEP (16 << 20)	/* bytes of WAL growth between passes */
#define CKPT_SECONDS 2		/* a pass at least this often, if due */
#define CKPT_CAP (256 << 20)	/* bytes of WAL that restart it (the
				   journal_size_limit of store_sqlite.c) */
#define CKPT_REST (256 << 10)	/* bytes a pass may leave the restart */
#define CKPT_PASSES 8		/* passes to get there, at most */
#define CKPT_WAIT_MS 2		/* how long a restart waits for readers */

/* Step a prepared statement that returns no rows; 0 or the SQLite code. */
int
store_step(sqlite3_stmt *st)
{
	int rc = sqlite3_step(st);

	sqlite3_reset(st);
	return rc == SQLITE_DONE ? 0 : rc;
}

/* ---- batches ----------------------------------------------------------- */

static void
fail_all(struct store_write *list, const struct err *why)
{
	struct store_write *w;

	for (w = list; w != NULL; w = w->next) {
		w->rv = why->code != ERR_OK ? why->code : ERR_STORE;
		w->e = *why;
	}
}

/* Roll back whatever is open and forget rule ids it may have added. */
static void
undo(struct store_sqlite *s)
{
	if (!sqlite3_get_autocommit(s->w.db))
		store_step(s->w.rollback);
	store_rules_forget(&s->w);
}

/*
 * Insert list in one transaction.  0 when committed (every rv 0); a
 * statement that fails rolls back and *bad gets its check (its rv and e
 * set), to be run again without it; ERR_STORE when BEGIN or COMMIT
 * failed (every rv set).
 */
static int
try_batch(struct store_sqlite *s, struct store_write *list,
    struct store_write **bad)
{
	struct store_write *w;
	struct err e = { 0 };
	int rc;

	*bad = NULL;
	if ((rc = store_step(s->w.begin)) != 0) {
		store_db_fail(s, s->w.db, &e, "begin");
		undo(s);
		fail_all(list, &e);
		return ERR_STORE;
	}
	for (w = list; w != NULL; w = w->next) {
		memset(&w->e, 0, sizeof(w->e));
		w->rv = store_insert_check(s, w->c, &w->e);
		if (w->rv != 0) {
			undo(s);
			*bad = w;
			return w->rv;
		}
	}
	if ((rc = store_step(s->w.commit)) != 0) {
		store_db_fail(s, s->w.db, &e, "commit");
		undo(s);
		fail_all(list, &e);
		return ERR_STORE;
	}
	return 0;
}

/* Unlink w from *list. */
static void
unlink_write(struct store_write **list, struct store_write *w)
{
	while (*list != w)
		list = &(*list)->next;
	*list = w->next;
	w->next = NULL;
}

/*
 * Commit list (its checks valid): all together; when a check's statement
 * fails, the transaction is rolled back and run again without it, and it
 * is answered alone with its own error (a neighbour's failure is never
 * anyone else's).  Every rv is set on return.
 */
static void
run_batch(struct store_sqlite *s, struct store_write *list)
{
	struct store_write *rest = list, *bad, *w;

	while (rest != NULL) {
		if (try_batch(s, rest, &bad) == 0) {
			atomic_fetch_add(&s->commits, 1);
			for (w = rest; w != NULL; w = w->next)
				atomic_fetch_add(&s->committed, 1);
			return;
		}
		if (bad == NULL)
			return;		/* BEGIN or COMMIT: all failed */
		unlink_write(&rest, bad);
	}
}

static void
run_job(struct store_sqlite *s, struct job *j)
{
	sqlite3 *db = s->w.db;

	switch (j->kind) {
	case JOB_PROBE:
		j->rv = store_step(s->w.beat) == 0 ? 0 :
		    store_db_fail(s, db, j->e, "write probe");
		break;
	case JOB_CALL:
		j->rv = j->fn(db, j->arg, j->e);
		break;
	case JOB_PRUNE:
		if (sqlite3_bind_text(s->w.prune, 1, j->before_id, -1,
		    SQLITE_STATIC) ||
		    sqlite3_bind_int(s->w.prune, 2, j->batch) ||
		    store_step(s->w.prune) != 0)
			j->rv = store_db_fail(s, db, j->e, "prune");
		else
			j->deleted = sqlite3_changes(db);
		sqlite3_clear_bindings(s->w.prune);
		break;
	}
	if (j->rv != 0 && !sqlite3_get_autocommit(db))
		store_step(s->w.rollback);	/* a call that left one open */
}

/*
 * After a commit (writer thread): wake the checkpointer when the WAL grew
 * by CKPT_STEP frames since it was last woken, asking it to prepare a
 * restart past CKPT_CAP; restart once it is ready (see the top).
 */
static void
maybe_checkpoint(struct store_sqlite *s)
{
	struct writer *w = &s->w;
	int rc;

	if (s->shared)
		return;
	if (atomic_exchange(&s->restart_ready, false)) {
		sqlite3_busy_timeout(w->db, CKPT_WAIT_MS);
		rc = sqlite3_wal_checkpoint_v2(w->db, NULL,
		    SQLITE_CHECKPOINT_RESTART, NULL, NULL);
		sqlite3_busy_timeout(w->db, 5000);
		if (rc == SQLITE_OK)
			atomic_fetch_add(&s->restarts, 1);
		else if ((rc & 0xff) != SQLITE_BUSY)
			log_msg("warn", "store: restarting the WAL past %d "
			    "MiB failed (sqlite code %d)", CKPT_CAP >> 20, rc);
		return;
	}
	if (w->wal_frames < w->ckpt_mark)
		w->ckpt_mark = 0;	/* the WAL started over */
	if (w->wal_frames - w->ckpt_mark < CKPT_STEP / s->page_size)
		return;
	w->ckpt_mark = w->wal_frames;
	pthread_mutex_lock(&s->cmu);
	s->ckpt_due = true;
	s->ckpt_cap = s->ckpt_cap || w->wal_frames >= CKPT_CAP / s->page_size;
	pthread_cond_signal(&s->ccv);
	pthread_mutex_unlock(&s->cmu);
}

/* The writer's wal hook: the WAL's size in frames after each commit. */
static int
wal_hook(void *arg, sqlite3 *db, const char *name, int frames)
{
	struct store_sqlite *s = arg;

	(void)db;
	(void)name;
	s->w.wal_frames = frames;
	return SQLITE_OK;
}

/*
 * Whether a request thread that just queued work (qmu held) should wake
 * the writer: only when it sleeps, and only once (the flag is cleared
 * here).  The caller signals qcv after unlocking qmu, so the writer does
 * not wake into a held lock.
 */
static bool
writer_wake_due(struct store_sqlite *s)
{
	if (s->idle) {
		s->idle = false;
		return true;
	}
	return false;
}

static void *
writer_loop(void *arg)
{
	struct store_sqlite *s = arg;
	struct store_write *all[BATCH_MAX];

	store_thread_name("pf-writer");
	pthread_mutex_lock(&s->qmu);
	for (;;) {
		struct store_write *ok = NULL, **otail = &ok, *w;
		struct job *jobs, *j, *jn;
		struct reader *rd = NULL;
		size_t n = 0, i;

		while (s->whead == NULL && s->jhead == NULL && !s->stop) {
			s->idle = true;
			pthread_cond_wait(&s->qcv, &s->qmu);
		}
		s->idle = false;
		if (s->whead == NULL && s->jhead == NULL)
			break;	/* stopping, and nothing left to write */
		jobs = s->jhead;
		s->jhead = s->jtail = NULL;
		while (s->whead != NULL && n < BATCH_MAX) {
			all[n++] = s->whead;
			s->whead = s->whead->next;
		}
		if (s->whead == NULL)
			s->wtail = NULL;
		pthread_mutex_unlock(&s->qmu);

		if (s->shared)
			rd = store_reader_get(s);	/* one connection */
		for (j = jobs; j != NULL; j = j->next)
			run_job(s, j);
		/* Validated first: a malformed check fails alone. */
		for (i = 0; i < n; i++) {
			w = all[i];
			memset(&w->e, 0, sizeof(w->e));
			w->rv = store_validate_check(w->c, &w->e);
			if (w->rv == 0) {
				*otail = w;
				otail = &w->next;
			}
		}
		*otail = NULL;
		run_batch(s, ok);
		if (s->shared)
			store_reader_put(s, rd);

		/* One wake per job, after COMMIT returned. */
		pthread_mutex_lock(&s->qmu);
		for (j = jobs; j != NULL; j = jn) {
			jn = j->next;	/* j goes once its caller wakes */
			if (j->rv != 0)
				s->write_errors++;
			j->done = true;
			pthread_cond_signal(&j->cv);
		}
		for (i = 0; i < n; i++)
			if (all[i]->rv != 0 && all[i]->rv != ERR_TAKEN)
				s->write_errors++;
		pthread_mutex_unlock(&s->qmu);
		for (i = 0; i < n; i++)
			all[i]->done(all[i]);	/* may free it */
		maybe_checkpoint(s);
		pthread_mutex_lock(&s->qmu);
	}
	pthread_mutex_unlock(&s->qmu);
	return NULL;
}

/* ---- the checkpointer -------------------------------------------------- */

/* One PASSIVE pass: how many frames it copied (0 on failure). */
static int
passive_pass(struct store_sqlite *s, int *last_log, int *last_done)
{
	int log = 0, done = 0, copied;

	if (sqlite3_wal_checkpoint_v2(s->ckpt_db, NULL,
	    SQLITE_CHECKPOINT_PASSIVE, &log, &done) != SQLITE_OK)
		return 0;
	/* done counts from the WAL's start, which may be new. */
	copied = log < *last_log || done < *last_done ? done :
	    done - *last_done;
	*last_log = log;
	*last_done = done;
	if (copied > 0)
		atomic_fetch_add(&s->checkpoints, 1);
	return copied;
}

static void *
checkpoint_loop(void *arg)
{
	struct store_sqlite *s = arg;
	int last_log = 0, last_done = 0;

	store_thread_name("pf-ckpt");
	pthread_mutex_lock(&s->cmu);
	while (!s->ckpt_stop) {
		struct timespec until;
		bool cap;
		int i, copied;

		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_sec += CKPT_SECONDS;
		while (!s->ckpt_due && !s->ckpt_stop)
			if (pthread_cond_timedwait(&s->ccv, &s->cmu,
			    &until) == ETIMEDOUT)
				break;
		if (s->ckpt_stop)
			break;
		cap = s->ckpt_cap;
		s->ckpt_due = s->ckpt_cap = false;
		pthread_mutex_unlock(&s->cmu);
		/* PASSIVE: never blocks the writer or a reader. */
		copied = passive_pass(s, &last_log, &last_done);
		for (i = 1; cap && copied >= CKPT_REST / s->page_size &&
		    i < CKPT_PASSES; i++)
			copied = passive_pass(s, &last_log, &last_done);
		if (cap)
			atomic_store(&s->restart_ready, true);
		pthread_mutex_lock(&s->cmu);
	}
	pthread_mutex_unlock(&s->cmu);
	return NULL;
}

/* ---- queueing ---------------------------------------------------------- */

int
store_put_check_async(void *self, struct store_write *w)
{
	struct store_sqlite *s = self;
	bool wake;

	pthread_mutex_lock(&s->qmu);
	if (s->stop) {
		pthread_mutex_unlock(&s->qmu);
		return err_set(&w->e, ERR_STORE, NULL, "store is closing");
	}
	w->next = NULL;
	if (s->wtail == NULL)
		s->whead = w;
	else
		s->wtail->next = w;
	s->wtail = w;
	wake = writer_wake_due(s);
	pthread_mutex_unlock(&s->qmu);
	if (wake)
		pthread_cond_signal(&s->qcv);
	return 0;
}

/* put_check: the queued write, waited for on its own condition. */
struct waiter {
	struct store_write w;
	struct store_sqlite *s;
	pthread_cond_t cv;
	bool done;
};

static void
waiter_done(struct store_write *w)
{
	struct waiter *x = w->arg;

	pthread_mutex_lock(&x->s->qmu);
	x->done = true;
	pthread_cond_signal(&x->cv);
	pthread_mutex_unlock(&x->s->qmu);
}

int
store_put_check(void *self, const struct store_check *c, struct err *e)
{
	struct waiter x;
	int rv;

	memset(&x, 0, sizeof(x));
	x.s = self;
	x.w.c = c;
	x.w.done = waiter_done;
	x.w.arg = &x;
	pthread_cond_init(&x.cv, NULL);
	rv = store_put_check_async(self, &x.w);
	if (rv == 0) {
		pthread_mutex_lock(&x.s->qmu);
		while (!x.done)
			pthread_cond_wait(&x.cv, &x.s->qmu);
		pthread_mutex_unlock(&x.s->qmu);
		rv = x.w.rv;
	}
	if (rv != 0)
		err_set(e, x.w.e.code != ERR_OK ? x.w.e.code : rv, NULL, "%s",
		    x.w.e.msg);
	pthread_cond_destroy(&x.cv);
	return rv;
}

int
store_job_run(struct store_sqlite *s, struct job *j)
{
	int rv;

	pthread_cond_init(&j->cv, NULL);
	pthread_mutex_lock(&s->qmu);
	if (s->stop) {
		pthread_mutex_unlock(&s->qmu);
		pthread_cond_destroy(&j->cv);
		return err_set(j->e, ERR_STORE, NULL, "store is closing");
	}
	j->next = NULL;
	if (s->jtail == NULL)
		s->jhead = j;
	else
		s->jtail->next = j;
	s->jtail = j;
	s->idle = false;
	pthread_cond_signal(&s->qcv);
	while (!j->done)
		pthread_cond_wait(&j->cv, &s->qmu);
	rv = j->rv;
	pthread_mutex_unlock(&s->qmu);
	pthread_cond_destroy(&j->cv);
	return rv;
}

/* ---- life cycle -------------------------------------------------------- */

int
store_writer_prepare(struct store_sqlite *s, struct err *e)
{
	struct writer *w = &s->w;
	int rv = 0;

	if (rv == 0)
		rv = store_prepare(w->db, &w->ins_check,
		    "INSERT INTO checks (seq, id, team, name, created_at, "
		    "verdict, errors, warnings, infos, config_sha256, "
		    "body_sha256, idem_key, findings, context, report, config) "
		    "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, "
		    "?12, ?13, ?14, ?15, ?16)", e);
	if (rv == 0)
		rv = store_prepare(w->db, &w->ins_rule, "INSERT OR IGNORE "
		    "INTO check_rules (team, rule, seq) VALUES (?1, ?2, ?3)",
		    e);
	if (rv == 0)
		rv = store_prepare(w->db, &w->rule_get,
		    "SELECT id FROM rules WHERE name = ?1", e);
	if (rv == 0)
		rv = store_prepare(w->db, &w->rule_add,
		    "INSERT OR IGNORE INTO rules (name) VALUES (?1)", e);
	if (rv == 0)
		rv = store_prepare(w->db, &w->beat,
		    "UPDATE health SET beat = beat + 1 WHERE id = 1", e);
	/* The trigger of migration 0006 takes the rule entries and the
	   foreign key the diagnoses, in the same statement. */
	if (rv == 0)
		rv = store_prepare(w->db, &w->prune,
		    "DELETE FROM checks WHERE seq IN (SELECT seq FROM checks "
		    "WHERE id < ?1 ORDER BY id LIMIT ?2)", e);
	if (rv == 0)
		rv = store_prepare(w->db, &w->begin, "BEGIN IMMEDIATE", e);
	if (rv == 0)
		rv = store_prepare(w->db, &w->commit, "COMMIT", e);
	if (rv == 0)
		rv = store_prepare(w->db, &w->rollback, "ROLLBACK", e);
	return rv;
}

int
store_writer_start(struct store_sqlite *s, struct err *e)
{
	if (!s->shared)
		sqlite3_wal_hook(s->w.db, wal_hook, s);
	if (pthread_create(&s->writer_thread, NULL, writer_loop, s) != 0)
		return err_set(e, ERR_STORE, NULL, "cannot start the writer");
	s->writer_started = true;
	if (s->shared)
		return 0;
	if (pthread_create(&s->ckpt_thread, NULL, checkpoint_loop, s) != 0)
		return err_set(e, ERR_STORE, NULL,
		    "cannot start the checkpointer");
	s->ckpt_started = true;
	return 0;
}

void
store_writer_stop(struct store_sqlite *s)
{
	struct writer *w = &s->w;

	pthread_mutex_lock(&s->qmu);
	s->stop = true;
	pthread_cond_broadcast(&s->qcv);
	pthread_mutex_unlock(&s->qmu);
	/* The writer commits what is queued before it exits. */
	if (s->writer_started)
		pthread_join(s->writer_thread, NULL);
	s->writer_started = false;
	pthread_mutex_lock(&s->cmu);
	s->ckpt_stop = true;
	pthread_cond_broadcast(&s->ccv);
	pthread_mutex_unlock(&s->cmu);
	if (s->ckpt_started)
		pthread_join(s->ckpt_thread, NULL);
	s->ckpt_started = false;
	sqlite3_finalize(w->ins_check);
	sqlite3_finalize(w->ins_rule);
	sqlite3_finalize(w->rule_get);
	sqlite3_finalize(w->rule_add);
	sqlite3_finalize(w->beat);
	sqlite3_finalize(w->prune);
	sqlite3_finalize(w->begin);
	sqlite3_finalize(w->commit);
	sqlite3_finalize(w->rollback);
	w->ins_check = w->ins_rule = w->rule_get = w->rule_add = NULL;
	w->beat = w->prune = w->begin = w->commit = w->rollback = NULL;
	store_rules_forget(w);
	free(w->fbuf);
	w->fbuf = NULL;
	w->fcap = 0;
}
