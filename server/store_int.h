/*
 * server/store_int: what the SQLite store's files share, not for other
 * callers.  store_sqlite.c has the helpers, the reader pool, readiness
 * and the store_ops table; store_open.c opens, migrates and closes;
 * store_read.c reads; store_token.c keeps API tokens; store_writer.c owns
 * the writer thread (group commits of queued checks, one wake per job)
 * and the checkpointer; store_vfs.c counts what SQLite writes and syncs;
 * store_diagnose.c stores diagnoses.
 */
#ifndef SERVER_STORE_INT_H
#define SERVER_STORE_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sqlite3.h>

#include "server/store_sqlite.h"

#define LIST_VARIANTS 64	/* 2^6 optional filters of list_checks */
#define READERS 4		/* read connections (WAL: concurrent readers) */
#define STORE_PAGE_SIZE "1024"	/* bytes per page of a new database */

/* A whole checks row, in the order store_read.c's read_row() expects. */
#define CHECK_COLUMNS "id, created_at, team, name, config_sha256, " \
	"verdict, errors, warnings, infos, context, report, config, " \
	"idem_key, body_sha256"

/* The first 11 of them, of the table aliased c: a list row. */
#define LIST_COLUMNS "c.id, c.created_at, c.team, c.name, " \
	"c.config_sha256, c.verdict, c.errors, c.warnings, c.infos, " \
	"c.context, c.report"

/* A read connection and its statements; one request at a time holds it
   (reader_get / reader_put). */
struct reader {
	sqlite3 *db;
	int64_t deadline_ms;	/* monotonic; the progress handler stops a
				   statement past it; 0: none */
	sqlite3_stmt *get_check;
	sqlite3_stmt *get_idem;
	sqlite3_stmt *find_token;
	sqlite3_stmt *list[LIST_VARIANTS];	/* lazily prepared */
	sqlite3_stmt *rule_list[LIST_VARIANTS];	/* rule filter, lazily */
	sqlite3_stmt *teams;	/* next team of check_rules after ?1 */
	sqlite3_stmt *by_seq;	/* one list row by seq */
	sqlite3_stmt *stats[2];	/* [0] all teams, [1] one team */
	sqlite3_stmt *rule_names;	/* every (id, name) of rules */
};

/* A rule name's id, cached by the writer (open addressing, by name). */
struct rule_slot {
	char *name;		/* malloc'd; NULL: empty slot */
	long long id;		/* rules.id */
};

/* The writer connection and its state (writer thread only). */
struct writer {
	sqlite3 *db;
	sqlite3_stmt *ins_check;
	sqlite3_stmt *ins_rule;		/* a check_rules entry */
	sqlite3_stmt *rule_get;		/* rules.id of a name */
	sqlite3_stmt *rule_add;		/* a new rules row */
	sqlite3_stmt *beat;
	sqlite3_stmt *prune;
	sqlite3_stmt *begin;	/* BEGIN IMMEDIATE */
	sqlite3_stmt *commit;
	sqlite3_stmt *rollback;
	struct rule_slot *rules;	/* rcap slots, rn used */
	size_t rcap;
	size_t rn;
	char *fbuf;		/* the findings column being built */
	size_t fcap;
	int wal_frames;		/* WAL size after the last commit */
	int ckpt_mark;		/* wal_frames when the checkpointer was
				   last woken for growth */
};

enum job_kind {
	JOB_PROBE,		/* prove the database is writable */
	JOB_PRUNE,		/* delete a batch of old checks */
	JOB_CALL		/* run fn on the writer connection */
};

/* A write other than a check, waiting on its caller's stack. */
struct job {
	enum job_kind kind;
	const char *before_id;	/* JOB_PRUNE */
	int batch;		/* JOB_PRUNE */
	int deleted;		/* JOB_PRUNE result */
	int (*fn)(sqlite3 *db, void *arg, struct err *e);	/* JOB_CALL */
	void *arg;		/* JOB_CALL */
	int rv;			/* result: 0 or enum err_code */
	struct err *e;		/* the caller's */
	bool done;		/* under qmu */
	pthread_cond_t cv;	/* signalled once, when done */
	struct job *next;
};

struct store_sqlite {
	struct writer w;	/* writer thread only, once started */
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
	char *path;		/* the database file (health thread) */
	unsigned health_s;	/* seconds between quick_checks; 0: none */

	pthread_mutex_t qmu;	/* the queues and the fields below */
	pthread_cond_t qcv;	/* work for the writer */
	struct store_write *whead;	/* checks to commit, in order */
	struct store_write *wtail;
	struct job *jhead;	/* other writes, in order */
	struct job *jtail;
	bool idle;		/* the writer sleeps on qcv: the next
				   write or job signals it (and clears
				   this, so only one does) */
	bool stop;
	long long write_errors;	/* failed writes since start */
	pthread_t writer_thread;
	bool writer_started;

	pthread_mutex_t cmu;	/* the checkpointer's fields */
	pthread_cond_t ccv;	/* work for the checkpointer */
	bool ckpt_due;		/* the WAL grew by CKPT_STEP frames */
	bool ckpt_cap;		/* ... and is past CKPT_CAP: copy it down
				   to a small rest, then set restart_ready */
	atomic_bool restart_ready;	/* the writer may restart the WAL */
	bool ckpt_stop;
	sqlite3 *ckpt_db;	/* the checkpointer's connection */
	pthread_t ckpt_thread;
	bool ckpt_started;

	atomic_llong committed;	/* checks committed */
	atomic_llong commits;	/* transactions that committed checks */
	atomic_llong checkpoints;	/* checkpoint passes that copied */
	atomic_llong restarts;	/* WAL restarts past the cap (writer) */
	int version;		/* schema version applied */
	int page_size;		/* bytes per page of this database */
};

/* ---- store_sqlite.c ---------------------------------------------------- */

/* Log a failure of db (code and SQLite's message, never the data), keep
   a serious one for readiness; ERR_BUSY for the read budget's interrupt,
   else ERR_STORE.  s may be NULL. */
int store_db_fail(struct store_sqlite *s, sqlite3 *db, struct err *e,
    const char *what);

/* CLOCK_MONOTONIC in milliseconds. */
int64_t store_mono_ms(void);

/* Name the calling thread (15 characters at most), for top and perf:
   pf-writer, pf-ckpt, pf-health. */
void store_thread_name(const char *name);

/* sqlite3_exec of sql (no rows); 0 or ERR_STORE with SQLite's message. */
int store_exec(sqlite3 *db, const char *sql, struct err *e);

/* Run fn on the writer connection (a JOB_CALL) and wait; its result. */
int store_call(struct store_sqlite *s,
    int (*fn)(sqlite3 *db, void *arg, struct err *e), void *arg,
    struct err *e);

/* Prepare sql on db, persistent; 0 or ERR_STORE. */
int store_prepare(sqlite3 *db, sqlite3_stmt **st, const char *sql,
    struct err *e);

/* A free read connection with its budget started, waiting while all are
   held; give it back with store_reader_put. */
struct reader *store_reader_get(struct store_sqlite *s);
void store_reader_put(struct store_sqlite *s, struct reader *rd);

/*
 * The integer key of id: its millisecond (the first 10 characters) times
 * 2^15 plus its last 15 bits (the last 3 characters), or -1 when id is
 * not 26 Crockford characters.  api_new_id() counts ids of one
 * millisecond up in those 15 bits without carrying (and moves on to the
 * next millisecond when they are full), so for its ids the key sorts as
 * the id does.
 */
int64_t store_id_seq(const char *id);

/* ---- store_read.c ------------------------------------------------------ */

/* store_ops.get_check, get_by_idem, list_checks and rule_stats (see
   api/store.h). */
int store_get_check(void *self, struct store_check *out, const char *id,
    const char *team, struct arena *a, struct err *e);
int store_get_by_idem(void *self, struct store_check *out,
    const char *team, const char *key, struct arena *a, struct err *e);
int store_list_checks(void *self, struct store_check **out, size_t *n,
    const struct store_query *q, struct arena *a, struct err *e);
int store_rule_stats(void *self, struct store_rule_stat **out, size_t *n,
    const char *team, const char *since_id, struct arena *a,
    struct err *e);

/* ---- store_insert.c (writer thread only) ------------------------------- */

/* 0 when c can be stored (ids, verdict, severities); else ERR_SCHEMA. */
int store_validate_check(const struct store_check *c, struct err *e);

/* Insert c (validated) in the writer's open transaction: its checks row
   and its check_rules entries.  0, or ERR_STORE / ERR_NOMEM. */
int store_insert_check(struct store_sqlite *s, const struct store_check *c,
    struct err *e);

/* Empty the writer's cache of rule ids (after a rollback, at close). */
void store_rules_forget(struct writer *w);

/* ---- store_writer.c ---------------------------------------------------- */

/* Step a prepared statement that returns no rows and reset it; 0 or the
   SQLite code. */
int store_step(sqlite3_stmt *st);

/* Prepare the writer's statements on s->w.db (migrated). */
int store_writer_prepare(struct store_sqlite *s, struct err *e);

/* Start the writer (and, on a file, the checkpointer); 0 or ERR_STORE. */
int store_writer_start(struct store_sqlite *s, struct err *e);

/* Stop them: the writer commits what is queued first.  Then finalize
   the writer's statements and free its caches. */
void store_writer_stop(struct store_sqlite *s);

/* Queue j and wait until the writer ran it; j->rv. */
int store_job_run(struct store_sqlite *s, struct job *j);

/* store_ops.put_check and put_check_async. */
int store_put_check(void *self, const struct store_check *c,
    struct err *e);
int store_put_check_async(void *self, struct store_write *w);

/* ---- store_vfs.c ------------------------------------------------------- */

/* The name of a VFS that forwards to the default VFS of the moment it
   was first asked for, counting syncs and bytes written; NULL if it
   could not be registered (then use the default). */
const char *store_vfs_name(void);

/* Syncs and bytes written through that VFS since start, process-wide. */
void store_vfs_counts(long long *syncs, long long *bytes);

#endif /* SERVER_STORE_INT_H */
