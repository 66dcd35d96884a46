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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>

#include "core/arena.h"
#include "server/log.h"
#include "server/migrations.h"
#include "server/store_diagnose.h"

#define ERROR_HOLD_MS 60000	/* a corruption or I/O error keeps /readyz
				   failing this long after it was seen */

int64_t
store_mono_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

void
store_thread_name(const char *name)
{
	prctl(PR_SET_NAME, name, 0, 0, 0);
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
		s->last_err_ms = store_mono_ms();
		pthread_mutex_unlock(&s->emu);
	}
	return err_set(e, ERR_STORE, NULL, "%s: %s", what,
	    sqlite3_errmsg(db));
}

int
store_exec(sqlite3 *db, const char *sql, struct err *e)
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
	rd->deadline_ms = store_mono_ms() + s->query_ms;
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
	code = s->last_err_ms > 0 && store_mono_ms() - s->last_err_ms <
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

int
store_call(struct store_sqlite *s, int (*fn)(sqlite3 *, void *, struct err *),
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
store_sqlite_write(struct store_sqlite *s,
    int (*fn)(sqlite3 *db, void *arg, struct err *e), void *arg,
    struct err *e)
{
	return store_call(s, fn, arg, e);
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
	.get_check = store_get_check,
	.get_by_idem = store_get_by_idem,
	.list_checks = store_list_checks,
	.rule_stats = store_rule_stats,
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
