/*
 * tests/test_store: the SQLite store: migrations (from zero, from every
 * version, and rows written under version 5 kept), refusal of a newer
 * schema, query plans (no route scans checks or findings: issue #16),
 * queued writes (one wake per job, a failing check fails alone, answers
 * only after COMMIT), batches larger than the VFS's write run and the
 * page cache surviving a kill, reads, rule statistics, the rule filter's
 * pages, retention taking everything that refers to a check.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>
#include <sqlite3.h>

#include "api/api.h"
#include "api/api_int.h"
#include "core/arena.h"
#include "server/migrations.h"
#include "server/store_int.h"
#include "server/store_sqlite.h"
#include "tests/fixture_api.h"

static void
tmp_db(char *out, size_t cap)
{
	snprintf(out, cap, "/tmp/preflight-store-%d-XXXXXX", (int)getpid());
	close(mkstemp(out));
	unlink(out);
}

static void
rm_db(const char *path)
{
	char p[512];

	unlink(path);
	snprintf(p, sizeof(p), "%s-wal", path);
	unlink(p);
	snprintf(p, sizeof(p), "%s-shm", path);
	unlink(p);
}

static int
user_version(const char *path)
{
	sqlite3 *db;
	sqlite3_stmt *st;
	int v = -1;

	if (sqlite3_open(path, &db) != SQLITE_OK)
		return -1;
	if (sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &st, NULL) ==
	    SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	sqlite3_close(db);
	return v;
}

static void
test_store__migrates_from_zero(void **state)
{
	struct store_sqlite *s;
	struct err e = { 0 };
	char path[256];

	(void)state;
	tmp_db(path, sizeof(path));
	assert_int_equal(store_sqlite_open(&s, path, false, &e), 0);
	assert_int_equal(store_sqlite_version(s), migrations_count);
	store_sqlite_close(s);
	assert_int_equal(user_version(path), migrations_count);
	/* Opening again applies nothing and keeps the data. */
	assert_int_equal(store_sqlite_open(&s, path, true, &e), 0);
	store_sqlite_close(s);
	rm_db(path);
}

static void
test_store__migrations_are_numbered_without_gaps(void **state)
{
	int i;

	(void)state;
	assert_true(migrations_count >= 1);
	for (i = 0; i < migrations_count; i++) {
		char want[16];

		assert_int_equal(migrations[i].version, i + 1);
		snprintf(want, sizeof(want), "%04d_", i + 1);
		assert_true(strncmp(migrations[i].name, want, 5) == 0);
	}
}

static void
test_store__refuses_a_newer_database(void **state)
{
	struct store_sqlite *s;
	struct err e = { 0 };
	char path[256], sql[64];
	sqlite3 *db;

	(void)state;
	tmp_db(path, sizeof(path));
	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	snprintf(sql, sizeof(sql), "PRAGMA user_version = %d",
	    migrations_count + 1);
	assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
	assert_int_equal(store_sqlite_open(&s, path, false, &e), ERR_STORE);
	assert_null(s);
	assert_non_null(strstr(e.msg, "newer than this preflight"));
	rm_db(path);
}

static void
put(struct store_sqlite *s, const char *id, int64_t ms, const char *team,
    const char *rule)
{
	struct store st = store_sqlite_iface(s);
	struct store_finding f = { rule, "warning", 3 };
	struct store_check c;
	struct err e = { 0 };

	memset(&c, 0, sizeof(c));
	snprintf(c.id, sizeof(c.id), "%s", id);
	c.created_at_ms = ms;
	c.team = team;
	c.name = "cfg";
	c.config_sha256 = "00";
	c.verdict = rule != NULL ? "warn" : "pass";
	c.context_json = "{}";
	c.json = "{}";
	c.config = "a: 1\n";
	c.config_len = 5;
	c.body_sha256 = "00";
	c.findings = &f;
	c.nfindings = rule != NULL ? 1 : 0;
	assert_int_equal(st.ops->put_check(st.self, &c, &e), 0);
}

static void
test_store__write_read_prune(void **state)
{
	struct store_sqlite *s;
	struct store st;
	struct store_query q;
	struct store_check *items, one;
	struct store_rule_stat *stats;
	struct arena a;
	struct err e = { 0 };
	char path[256];
	size_t n;
	int deleted;

	(void)state;
	tmp_db(path, sizeof(path));
	assert_int_equal(store_sqlite_open(&s, path, false, &e), 0);
	st = store_sqlite_iface(s);
	put(s, "01000000000000000000000001", 1000, "a", "r.one");
	put(s, "01000000000000000000000002", 2000, "a", NULL);
	put(s, "01000000000000000000000003", 3000, "b", "r.one");
	arena_init(&a, 1 << 20);
	memset(&q, 0, sizeof(q));
	q.limit = 10;
	assert_int_equal(st.ops->list_checks(st.self, &items, &n, &q, &a, &e),
	    0);
	assert_int_equal(n, 3);
	assert_string_equal(items[0].id, "01000000000000000000000003");
	q.team = "a";
	assert_int_equal(st.ops->list_checks(st.self, &items, &n, &q, &a, &e),
	    0);
	assert_int_equal(n, 2);
	assert_int_equal(st.ops->get_check(st.self, &one,
	    "01000000000000000000000003", "a", &a, &e), ERR_NOTFOUND);
	assert_int_equal(st.ops->rule_stats(st.self, &stats, &n, NULL, NULL,
	    &a, &e), 0);
	assert_int_equal(n, 1);
	assert_int_equal(stats[0].count, 2);
	assert_int_equal(st.ops->ready(st.self, &e), 0);
	/* Retention: checks below the third id go, with their findings. */
	assert_int_equal(store_sqlite_prune(s, "01000000000000000000000003", 1,
	    &deleted, &e), 0);
	assert_int_equal(deleted, 1);
	assert_int_equal(store_sqlite_prune(s, "01000000000000000000000003",
	    100, &deleted, &e), 0);
	assert_int_equal(deleted, 1);
	assert_int_equal(store_sqlite_prune(s, "01000000000000000000000003",
	    100, &deleted, &e), 0);
	assert_int_equal(deleted, 0);
	assert_int_equal(st.ops->rule_stats(st.self, &stats, &n, NULL, NULL,
	    &a, &e), 0);
	assert_int_equal(stats[0].count, 1);
	arena_fini(&a);
	store_sqlite_close(s);
	rm_db(path);
}

static void
test_store__duplicate_id_fails_alone(void **state)
{
	struct store_sqlite *s;
	struct store st;
	struct store_check c;
	struct err e = { 0 };

	(void)state;
	assert_int_equal(store_sqlite_open(&s, ":memory:", false, &e), 0);
	st = store_sqlite_iface(s);
	put(s, "01000000000000000000000001", 1000, "a", NULL);
	memset(&c, 0, sizeof(c));
	snprintf(c.id, sizeof(c.id), "01000000000000000000000001");
	c.team = c.name = c.config_sha256 = c.context_json = c.json = "x";
	c.verdict = "pass";
	c.config = "";
	c.body_sha256 = "x";
	assert_int_equal(st.ops->put_check(st.self, &c, &e), ERR_STORE);
	/* The store goes on working. */
	put(s, "01000000000000000000000002", 2000, "a", NULL);
	store_sqlite_close(s);
}


/* ---- helpers ---------------------------------------------------------- */

/* One value of a query on the file at path (its first column, as text
   into out); the row count is returned. */
static int
sql_text(const char *path, const char *sql, char *out, size_t cap)
{
	sqlite3 *db;
	sqlite3_stmt *st;
	int n = 0;

	if (out != NULL)
		out[0] = '\0';
	assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY,
	    NULL), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL),
	    SQLITE_OK);
	while (sqlite3_step(st) == SQLITE_ROW) {
		if (n == 0 && out != NULL && sqlite3_column_text(st, 0))
			snprintf(out, cap, "%s",
			    (const char *)sqlite3_column_text(st, 0));
		n++;
	}
	sqlite3_finalize(st);
	sqlite3_close(db);
	return n;
}

static long
sql_long(const char *path, const char *sql)
{
	char v[64];

	sql_text(path, sql, v, sizeof(v));
	return strtol(v, NULL, 10);
}

/* A check c with findings f (nf of them); strings static. */
static void
check_init(struct store_check *c, const char *id, const char *team,
    const char *verdict, const struct store_finding *f, size_t nf)
{
	memset(c, 0, sizeof(*c));
	snprintf(c->id, sizeof(c->id), "%s", id);
	c->created_at_ms = 1000;
	c->team = team;
	c->name = "cfg";
	c->config_sha256 = "00";
	c->verdict = verdict;
	c->context_json = "{}";
	c->json = "{\"x\":1}";
	c->config = "a: 1\n";
	c->config_len = 5;
	c->body_sha256 = "00";
	c->findings = f;
	c->nfindings = nf;
}

/* Hold the writer inside a call until released, so the writes queued
   meanwhile are committed together. */
struct gate {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool inside;
	bool open;
	struct store_sqlite *s;
	pthread_t thread;
};

static int
gate_fn(sqlite3 *db, void *arg, struct err *e)
{
	struct gate *g = arg;

	(void)db;
	(void)e;
	pthread_mutex_lock(&g->mu);
	g->inside = true;
	pthread_cond_broadcast(&g->cv);
	while (!g->open)
		pthread_cond_wait(&g->cv, &g->mu);
	pthread_mutex_unlock(&g->mu);
	return 0;
}

static void *
gate_thread(void *arg)
{
	struct gate *g = arg;
	struct err e = { 0 };

	store_sqlite_write(g->s, gate_fn, g, &e);
	return NULL;
}

static void
gate_close(struct gate *g, struct store_sqlite *s)
{
	memset(g, 0, sizeof(*g));
	pthread_mutex_init(&g->mu, NULL);
	pthread_cond_init(&g->cv, NULL);
	g->s = s;
	assert_int_equal(pthread_create(&g->thread, NULL, gate_thread, g), 0);
	pthread_mutex_lock(&g->mu);
	while (!g->inside)
		pthread_cond_wait(&g->cv, &g->mu);
	pthread_mutex_unlock(&g->mu);
}

static void
gate_open(struct gate *g)
{
	pthread_mutex_lock(&g->mu);
	g->open = true;
	pthread_cond_broadcast(&g->cv);
	pthread_mutex_unlock(&g->mu);
	pthread_join(g->thread, NULL);
	pthread_cond_destroy(&g->cv);
	pthread_mutex_destroy(&g->mu);
}

/* A queued write that counts its wakes. */
struct counted {
	struct store_write w;
	struct store_check c;
	atomic_int wakes;
	atomic_int *all;
};

static void
counted_done(struct store_write *w)
{
	struct counted *x = w->arg;

	atomic_fetch_add(&x->wakes, 1);
	atomic_fetch_add(x->all, 1);
}

static void
wait_all(atomic_int *all, int n)
{
	int i;

	for (i = 0; i < 10000 && atomic_load(all) < n; i++)
		usleep(1000);
	assert_int_equal(atomic_load(all), n);
}

/* ---- ids as keys ------------------------------------------------------ */

/* api_new_id's ids, in one millisecond and across them, give keys that
   sort as the ids do; past 2^14 ids in a millisecond the id moves on. */
static void
test_store__ids_keep_their_order_as_keys(void **state)
{
	struct fixture_fakes f;
	struct api_ctx ctx;
	char prev[27] = "", id[27];
	int64_t prev_seq = -1, seq, ms = 1764670000000;
	int i;

	(void)state;
	fixture_api_ctx(&ctx, NULL, &f, 11);
	for (i = 0; i < 40000; i++) {
		api_new_id(id, &ctx, i < 30000 ? ms : ms + (i - 29999) / 7);
		seq = store_id_seq(id);
		assert_true(strcmp(id, prev) > 0);
		assert_true(seq > prev_seq);
		snprintf(prev, sizeof(prev), "%s", id);
		prev_seq = seq;
	}
	/* 30000 ids of one millisecond took more than one. */
	assert_true(seq >> 15 > ms + 1);
	assert_int_equal(store_id_seq(""), -1);
	assert_int_equal(store_id_seq("01M8Y6JF3WCRX8N66G6WX3NSB"), -1);
	assert_int_equal(store_id_seq("01M8Y6JF3WCRX8N66G6WX3NSBU"), -1);
	assert_int_equal(store_id_seq("81M8Y6JF3WCRX8N66G6WX3NSB7"), -1);
	assert_int_equal(store_id_seq("0000000001000000000000001Z"),
	    (int64_t)1 << 15 | 0x3F);	/* ms 1; "01Z" = 63 */
	api_ctx_fini(&ctx);
}

/* ---- query plans ------------------------------------------------------ */

struct plans {
	int n;
	int bad;
	bool stats_team_index;
	bool rule_key;
	bool history_index;
};

static void
plan_seen(void *arg, const char *sql, const char *plan)
{
	static const char *const tables[] = { "checks", "c", "check_rules",
	    "r", "diagnoses", "tokens" };
	struct plans *p = arg;
	size_t i;

	p->n++;
	for (i = 0; i < sizeof(tables) / sizeof(tables[0]); i++) {
		char scan[32];
		const char *at;

		snprintf(scan, sizeof(scan), "SCAN %s", tables[i]);
		for (at = strstr(plan, scan); at != NULL;
		    at = strstr(at + 1, scan)) {
			char next = at[strlen(scan)];

			if (next == '\0' || next == ' ' || next == ';') {
				print_message("full scan: %s\n  plan: %s\n",
				    sql, plan);
				p->bad++;
			}
		}
	}
	if (strstr(sql, "SELECT verdict, findings FROM checks WHERE team") &&
	    strstr(plan, "checks_team_id") != NULL)
		p->stats_team_index = true;
	if (strstr(sql, "FROM check_rules r") != NULL &&
	    strstr(plan, "SEARCH r USING PRIMARY KEY (team=? AND rule=? AND "
	    "seq<?)") != NULL)
		p->rule_key = true;
	if (strstr(sql, "c.team = ?2 AND c.name = ?3") != NULL &&
	    strstr(plan, "checks_team_name_id") != NULL)
		p->history_index = true;
}

/* Every query of every route walks an index range: no full scan of
   checks, check_rules or diagnoses, for any filter combination. */
static void
test_store__query_plans_never_scan(void **state)
{
	struct store_sqlite *s;
	struct err e = { 0 };
	struct plans p = { 0 };
	char path[256];

	(void)state;
	tmp_db(path, sizeof(path));
	assert_int_equal(store_sqlite_open(&s, path, false, &e), 0);
	put(s, "01000000000000000000000001", 1000, "a", "r.one");
	put(s, "01000000000000000000000002", 2000, "b", "r.two");
	assert_int_equal(store_sqlite_plans(s, plan_seen, &p, &e), 0);
	/* 32 list and 32 rule-filter variants, 2 stats, 7 more. */
	assert_int_equal(p.n, 64 + 9);
	assert_int_equal(p.bad, 0);
	assert_true(p.stats_team_index);
	assert_true(p.rule_key);
	assert_true(p.history_index);
	store_sqlite_close(s);
	rm_db(path);
}

/* ---- queued writes ---------------------------------------------------- */

/* Writes queued while the writer is busy share one commit; each job
   wakes exactly once, after COMMIT returned. */
static void
test_store__queued_writes_share_a_commit(void **state)
{
	static struct counted w[20];
	struct store_sqlite *s;
	struct store st;
	struct store_info before, after;
	struct gate g;
	struct err e = { 0 };
	atomic_int all = 0;
	char path[256];
	int i;

	(void)state;
	tmp_db(path, sizeof(path));
	assert_int_equal(store_sqlite_open(&s, path, false, &e), 0);
	st = store_sqlite_iface(s);
	st.ops->info(st.self, &before);
	gate_close(&g, s);
	for (i = 0; i < 20; i++) {
		char id[64];

		snprintf(id, sizeof(id), "010000000000000000000000%02d", i);
		memset(&w[i], 0, sizeof(w[i]));
		check_init(&w[i].c, id, "a", "pass", NULL, 0);
		w[i].w.c = &w[i].c;
		w[i].w.done = counted_done;
		w[i].w.arg = &w[i];
		w[i].all = &all;
		assert_int_equal(st.ops->put_check_async(st.self, &w[i].w), 0);
	}
	/* Nothing is acknowledged before the commit. */
	usleep(20000);
	assert_int_equal(atomic_load(&all), 0);
	assert_int_equal(sql_long(path, "SELECT count(*) FROM checks"), 0);
	gate_open(&g);
	wait_all(&all, 20);
	st.ops->info(st.self, &after);
	for (i = 0; i < 20; i++) {
		assert_int_equal(atomic_load(&w[i].wakes), 1);
		assert_int_equal(w[i].w.rv, 0);
	}
	assert_int_equal(after.committed - before.committed, 20);
	assert_int_equal(after.commits - before.commits, 1);
	assert_int_equal(sql_long(path, "SELECT count(*) FROM checks"), 20);
	store_sqlite_close(s);
	rm_db(path);
}

/* In one batch: a duplicate id, a second use of an Idempotency-Key and a
   malformed check each fail alone; the others commit together. */
static void
test_store__a_failing_check_fails_alone(void **state)
{
	static struct counted w[5];
	static const char *const ids[5] = { "01000000000000000000000011",
	    "01000000000000000000000001", "01000000000000000000000012",
	    "01000000000000000000000013", "01000000000000000000000014" };
	struct store_sqlite *s;
	struct store st;
	struct store_info before, after;
	struct store_check got;
	struct gate g;
	struct arena a;
	struct err e = { 0 };
	atomic_int all = 0;
	char path[256];
	int i;

	(void)state;
	tmp_db(path, sizeof(path));
	assert_int_equal(store_sqlite_open(&s, path, false, &e), 0);
	st = store_sqlite_iface(s);
	put(s, "01000000000000000000000001", 1000, "a", NULL);
	st.ops->info(st.self, &before);
	gate_close(&g, s);
	for (i = 0; i < 5; i++) {
		memset(&w[i], 0, sizeof(w[i]));
		check_init(&w[i].c, ids[i], "a", "pass", NULL, 0);
		w[i].w.c = &w[i].c;
		w[i].w.done = counted_done;
		w[i].w.arg = &w[i];
		w[i].all = &all;
	}
	w[0].c.idem_key = "key-1";
	w[3].c.idem_key = "key-1";	/* the first one wins */
	w[4].c.verdict = "maybe";	/* refused before the batch */
	for (i = 0; i < 5; i++)
		assert_int_equal(st.ops->put_check_async(st.self, &w[i].w), 0);
	gate_open(&g);
	wait_all(&all, 5);
	st.ops->info(st.self, &after);
	for (i = 0; i < 5; i++)
		assert_int_equal(atomic_load(&w[i].wakes), 1);
	assert_int_equal(w[0].w.rv, 0);
	assert_int_equal(w[1].w.rv, ERR_STORE);	/* duplicate id */
	assert_non_null(strstr(w[1].w.e.msg, "UNIQUE"));
	assert_int_equal(w[2].w.rv, 0);
	assert_int_equal(w[3].w.rv, ERR_TAKEN);	/* key taken: a lost race */
	assert_int_equal(w[4].w.rv, ERR_INTERNAL);
	/* The lost race is not a failure of the store (red team 3). */
	assert_int_equal(after.write_errors - before.write_errors, 2);
	assert_int_equal(after.committed - before.committed, 2);
	assert_int_equal(after.commits - before.commits, 1);
	arena_init(&a, 1 << 20);
	assert_int_equal(st.ops->get_by_idem(st.self, &got, "a", "key-1", &a,
	    &e), 0);
	assert_string_equal(got.id, ids[0]);
	arena_fini(&a);
	assert_int_equal(sql_long(path, "SELECT count(*) FROM checks"), 3);
	store_sqlite_close(s);
	rm_db(path);
}

/* ---- fewer, larger writes (server/store_vfs.c) ------------------------ */

#define BIG_N 64		/* checks in the batch: 3 MiB */
#define BIG_CONFIG (48 << 10)	/* bytes of each one's config */

/* Check i's config: BIG_CONFIG bytes no other check has. */
static void
big_config(char *out, int i)
{
	uint32_t x = 2166136261u ^ (uint32_t)i;
	size_t k;

	for (k = 0; k < BIG_CONFIG; k++) {
		x = x * 1664525u + 1013904223u;
		out[k] = (char)('a' + (x >> 24) % 26);
	}
}

/*
 * The child: BIG_N checks of BIG_CONFIG bytes in one batch -- several
 * times the VFS's run and more than SQLite's page cache, so frames spill
 * before the commit -- with a duplicate id last, so that batch is rolled
 * back after the spill and run again without it; every check is read
 * back whole through a read connection; then the process ends as a
 * SIGKILL would end it (no close, the WAL left as it is).  Exit 0 when
 * everything was as expected.
 */
static void
big_batch_child(const char *path, bool close_it)
{
	static struct counted w[BIG_N + 1];
	static char cfg[BIG_N][BIG_CONFIG];
	struct store_sqlite *s;
	struct store st;
	struct gate g;
	struct arena a;
	struct err e = { 0 };
	atomic_int all = 0;
	int i;

	if (store_sqlite_open(&s, path, false, &e) != 0)
		_exit(10);
	st = store_sqlite_iface(s);
	put(s, "01000000000000000000000001", 1000, "a", NULL);
	gate_close(&g, s);
	for (i = 0; i <= BIG_N; i++) {
		char id[64];

		snprintf(id, sizeof(id), "0100000000000000000000%04d",
		    i < BIG_N ? i + 100 : 1);	/* the last: a duplicate */
		memset(&w[i], 0, sizeof(w[i]));
		check_init(&w[i].c, id, "a", "pass", NULL, 0);
		if (i < BIG_N) {
			big_config(cfg[i], i);
			w[i].c.config = cfg[i];
			w[i].c.config_len = BIG_CONFIG;
		}
		w[i].w.c = &w[i].c;
		w[i].w.done = counted_done;
		w[i].w.arg = &w[i];
		w[i].all = &all;
		if (st.ops->put_check_async(st.self, &w[i].w) != 0)
			_exit(11);
	}
	gate_open(&g);
	for (i = 0; i < 20000 && atomic_load(&all) < BIG_N + 1; i++)
		usleep(1000);
	if (atomic_load(&all) != BIG_N + 1 || w[BIG_N].w.rv != ERR_STORE)
		_exit(12);
	arena_init(&a, 8 << 20);
	for (i = 0; i < BIG_N; i++) {
		struct store_check got;

		if (w[i].w.rv != 0 || st.ops->get_check(st.self, &got,
		    w[i].c.id, NULL, &a, &e) != 0 ||
		    got.config_len != BIG_CONFIG ||
		    memcmp(got.config, cfg[i], BIG_CONFIG) != 0)
			_exit(13);
	}
	if (close_it)
		store_sqlite_close(s);	/* checkpoints the WAL away */
	_exit(0);
}

/* Every check of big_batch_child is whole in the file at path (read by
   SQLite's own VFS), and the file passes integrity_check. */
static void
big_batch_verify(const char *path)
{
	static char want[BIG_CONFIG];
	char ok[16];
	sqlite3 *db;
	sqlite3_stmt *st;
	int n = 0;

	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(db, "SELECT id, config FROM "
	    "checks WHERE length(config) > 100 ORDER BY id", -1, &st, NULL),
	    SQLITE_OK);
	while (sqlite3_step(st) == SQLITE_ROW) {
		char id[64];

		snprintf(id, sizeof(id), "0100000000000000000000%04d",
		    n + 100);
		assert_string_equal((const char *)sqlite3_column_text(st, 0),
		    id);
		big_config(want, n);
		assert_int_equal(sqlite3_column_bytes(st, 1), BIG_CONFIG);
		assert_memory_equal(sqlite3_column_blob(st, 1), want,
		    BIG_CONFIG);
		n++;
	}
	sqlite3_finalize(st);
	sqlite3_close(db);
	assert_int_equal(n, BIG_N);
	assert_int_equal(sql_long(path, "SELECT count(*) FROM checks"),
	    BIG_N + 1);
	assert_int_equal(sql_text(path, "PRAGMA integrity_check", ok,
	    sizeof(ok)), 1);
	assert_string_equal(ok, "ok");
}

/* Run big_batch_child in a process of its own; its exit status. */
static int
big_batch_run(const char *path, bool close_it)
{
	pid_t pid = fork();
	int status = -1;

	assert_true(pid >= 0);
	if (pid == 0)
		big_batch_child(path, close_it);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	return WEXITSTATUS(status);
}

/* What the child committed is in the files, WAL frames and checksums
   included: with the shared-memory index deleted, SQLite rebuilds it
   from the WAL alone (what it does after a crash) and finds every
   check whole. */
static void
test_store__big_batches_survive_a_kill(void **state)
{
	char path[256], shm[300];

	(void)state;
	tmp_db(path, sizeof(path));
	assert_int_equal(big_batch_run(path, false), 0);
	snprintf(shm, sizeof(shm), "%s-shm", path);
	unlink(shm);
	big_batch_verify(path);
	rm_db(path);
}

/* Closed, the store checkpoints the WAL into the database and deletes
   it: the checkpoint's WAL reads go through the read-ahead of
   server/store_vfs.c, its writes through the write runs, and every check
   is whole in the database file alone. */
static void
test_store__big_batches_checkpoint_whole(void **state)
{
	char path[256], wal[300];

	(void)state;
	tmp_db(path, sizeof(path));
	assert_int_equal(big_batch_run(path, true), 0);
	snprintf(wal, sizeof(wal), "%s-wal", path);
	assert_int_equal(access(wal, F_OK), -1);	/* copied, deleted */
	big_batch_verify(path);
	rm_db(path);
}

/* ---- the API on queued writes ----------------------------------------- */

struct waker {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int wakes;
};

static void
waker_wake(void *arg)
{
	struct waker *k = arg;

	pthread_mutex_lock(&k->mu);
	k->wakes++;
	pthread_cond_broadcast(&k->cv);
	pthread_mutex_unlock(&k->mu);
}

static const char cfg_yaml[] = "base_model: meta-llama/Llama-3.1-8B\n"
    "sequence_len: 2048\nsequence_len: 4096\nmicro_batch_size: 1\n";

/* POST /v1/checks with a wake: the handler leaves the answer pending, the
   store wakes once after the commit, api_finish answers 201 with what GET
   then reads; two requests racing for one Idempotency-Key in the same
   batch get the same check (201 and 200). */
static void
test_store__api_answers_after_the_commit(void **state)
{
	struct store_sqlite *s;
	struct api_ctx ctx;
	struct fixture_fakes f;
	struct waker k = { PTHREAD_MUTEX_INITIALIZER,
	    PTHREAD_COND_INITIALIZER, 0 };
	struct api_req req[3];
	struct api_resp resp[3], got;
	struct arena a[3], ga;
	struct gate g;
	struct err e = { 0 };
	char path[256], loc[64];
	int i;

	(void)state;
	tmp_db(path, sizeof(path));
	assert_int_equal(store_sqlite_open(&s, path, false, &e), 0);
	fixture_api_ctx(&ctx, s, &f, 5);
	gate_close(&g, s);
	for (i = 0; i < 3; i++) {
		arena_init(&a[i], 8 << 20);
		memset(&req[i], 0, sizeof(req[i]));
		req[i].method = "POST";
		req[i].path = "/v1/checks";
		req[i].query = "name=q.yaml";
		req[i].content_type = "application/yaml";
		req[i].body = cfg_yaml;
		req[i].body_len = sizeof(cfg_yaml) - 1;
		req[i].team = "default";
		req[i].arena = &a[i];
		req[i].idem_key = i > 0 ? "same-key" : NULL;
		req[i].wake = waker_wake;
		req[i].wake_arg = &k;
		api_handle(&ctx, &req[i], &resp[i]);
		assert_int_equal(resp[i].status, 0);
		assert_non_null(resp[i].pending);
	}
	usleep(20000);
	assert_int_equal(k.wakes, 0);	/* not before the commit */
	gate_open(&g);
	pthread_mutex_lock(&k.mu);
	while (k.wakes < 3)
		pthread_cond_wait(&k.cv, &k.mu);
	pthread_mutex_unlock(&k.mu);
	for (i = 0; i < 3; i++) {
		api_finish(&ctx, &req[i], &resp[i]);
		assert_null(resp[i].pending);
	}
	assert_int_equal(resp[0].status, 201);
	assert_int_equal(resp[1].status, 201);
	assert_int_equal(resp[2].status, 200);	/* the winner's check */
	assert_int_equal(resp[1].body_len, resp[2].body_len);
	assert_memory_equal(resp[1].body, resp[2].body, resp[1].body_len);
	assert_true(resp[0].stored_bytes > sizeof(cfg_yaml));
	snprintf(loc, sizeof(loc), "%s", resp[0].headers[0].value);
	for (i = 0; i < resp[0].nheaders; i++)
		if (strcmp(resp[0].headers[i].name, "Location") == 0)
			snprintf(loc, sizeof(loc), "%s",
			    resp[0].headers[i].value);
	arena_init(&ga, 8 << 20);
	fixture_api_call(&ctx, &ga, &got, "GET", loc, "", NULL, NULL, 0);
	assert_int_equal(got.status, 200);
	assert_int_equal(got.body_len, resp[0].body_len);
	assert_memory_equal(got.body, resp[0].body, got.body_len);
	api_resp_fini(&got);
	arena_fini(&ga);
	for (i = 0; i < 3; i++) {
		api_resp_fini(&resp[i]);
		arena_fini(&a[i]);
	}
	api_ctx_fini(&ctx);
	store_sqlite_close(s);
	rm_db(path);
}

/* ---- statistics, the rule filter, retention --------------------------- */

static void
put_findings(struct store_sqlite *s, const char *id, const char *team,
    const char *verdict, const struct store_finding *f, size_t nf)
{
	struct store st = store_sqlite_iface(s);
	struct store_check c;
	struct err e = { 0 };

	check_init(&c, id, team, verdict, f, nf);
	assert_int_equal(st.ops->put_check(st.self, &c, &e), 0);
}

static const struct store_rule_stat *
stat_of(const struct store_rule_stat *rows, size_t n, const char *rule,
    const char *verdict)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (strcmp(rows[i].rule, rule) == 0 &&
		    strcmp(rows[i].verdict, verdict) == 0)
			return &rows[i];
	return NULL;
}

/* Findings and distinct checks per rule and verdict, info notes
   included, per team and since an id; rows sorted by rule, verdict. */
static void
test_store__stats_count_findings_and_checks(void **state)
{
	static const struct store_finding f1[] = { { "r.a", "warning", 3 },
	    { "r.a", "warning", 9 }, { "r.b", "info", 1 } };
	static const struct store_finding f2[] = { { "r.a", "error", 2 },
	    { "r.c", "error", 4 } };
	static const struct store_finding f3[] = { { "r.b", "info", 1 } };
	struct store_sqlite *s;
	struct store st;
	struct store_rule_stat *rows;
	const struct store_rule_stat *x;
	struct arena a;
	struct err e = { 0 };
	size_t n, i;

	(void)state;
	assert_int_equal(store_sqlite_open(&s, ":memory:", false, &e), 0);
	st = store_sqlite_iface(s);
	put_findings(s, "01000000000000000000000001", "a", "warn", f1, 3);
	put_findings(s, "01000000000000000000000002", "a", "fail", f2, 2);
	put_findings(s, "01000000000000000000000003", "b", "pass", f3, 1);
	arena_init(&a, 1 << 20);
	assert_int_equal(st.ops->rule_stats(st.self, &rows, &n, NULL, NULL,
	    &a, &e), 0);
	assert_int_equal(n, 5);
	for (i = 1; i < n; i++)
		assert_true(strcmp(rows[i - 1].rule, rows[i].rule) < 0 ||
		    (strcmp(rows[i - 1].rule, rows[i].rule) == 0 &&
		    strcmp(rows[i - 1].verdict, rows[i].verdict) < 0));
	x = stat_of(rows, n, "r.a", "warn");
	assert_non_null(x);
	assert_int_equal(x->count, 2);
	assert_int_equal(x->checks, 1);
	x = stat_of(rows, n, "r.a", "fail");
	assert_true(x != NULL && x->count == 1 && x->checks == 1);
	x = stat_of(rows, n, "r.b", "pass");
	assert_true(x != NULL && x->count == 1 && x->checks == 1);
	assert_int_equal(st.ops->rule_stats(st.self, &rows, &n, "a", NULL,
	    &a, &e), 0);
	assert_int_equal(n, 4);
	assert_null(stat_of(rows, n, "r.b", "pass"));
	assert_int_equal(st.ops->rule_stats(st.self, &rows, &n, NULL,
	    "01000000000000000000000002", &a, &e), 0);
	assert_int_equal(n, 3);
	assert_null(stat_of(rows, n, "r.a", "warn"));
	arena_fini(&a);
	store_sqlite_close(s);
}

/* The ids of a rule-filtered list, page by page, into out (newest
   first); the number of pages. */
static int
rule_pages(struct store *st, const char *team, const char *since,
    const char *until, char out[][27], size_t *n)
{
	struct store_query q;
	struct store_check *items;
	struct arena a;
	struct err e = { 0 };
	char cursor[27] = "";
	size_t got, i;
	int pages = 0;

	*n = 0;
	arena_init(&a, 1 << 20);
	for (;;) {
		memset(&q, 0, sizeof(q));
		q.team = team;
		q.rule = "r.x";
		q.since_id = since;
		q.until_id = until;
		q.before_id = cursor[0] != '\0' ? cursor : NULL;
		q.limit = 3;
		assert_int_equal(st->ops->list_checks(st->self, &items, &got,
		    &q, &a, &e), 0);
		if (got == 0)
			break;
		pages++;
		for (i = 0; i < got; i++)
			snprintf(out[(*n)++], 27, "%s", items[i].id);
		snprintf(cursor, sizeof(cursor), "%s", items[got - 1].id);
	}
	arena_fini(&a);
	return pages;
}

/* The rule filter (error and warning findings only) pages exactly, for
   one team and across teams, within since and until. */
static void
test_store__rule_filter_pages_exactly(void **state)
{
	static const struct store_finding warn = { "r.x", "warning", 1 };
	static const struct store_finding info = { "r.x", "info", 1 };
	struct store_sqlite *s;
	struct store st;
	struct err e = { 0 };
	char ids[40][64], got[40][27];
	size_t n, i, k;

	(void)state;
	assert_int_equal(store_sqlite_open(&s, ":memory:", false, &e), 0);
	st = store_sqlite_iface(s);
	for (i = 0; i < 40; i++) {
		snprintf(ids[i], sizeof(ids[i]), "010000000000000000000000%02zu",
		    i);
		put_findings(s, ids[i], i % 2 ? "b" : "a", "warn",
		    i % 3 == 0 ? &warn : &info, 1);
	}
	/* Team a: ids 0, 6, 12, ... 36; newest first. */
	rule_pages(&st, "a", NULL, NULL, got, &n);
	for (i = 39, k = 0; i < 40; i--)
		if (i % 3 == 0 && i % 2 == 0)
			assert_string_equal(got[k++], ids[i]);
	assert_int_equal(n, k);
	/* Every team: ids 0, 3, 6, ... 39, merged by key. */
	assert_int_equal(rule_pages(&st, NULL, NULL, NULL, got, &n), 5);
	for (i = 39, k = 0; i < 40; i--)
		if (i % 3 == 0)
			assert_string_equal(got[k++], ids[i]);
	assert_int_equal(n, k);
	/* since 9 (inclusive) until 30 (exclusive): 27 .. 9. */
	rule_pages(&st, NULL, ids[9], ids[30], got, &n);
	assert_int_equal(n, 7);
	assert_string_equal(got[0], ids[27]);
	assert_string_equal(got[6], ids[9]);
	store_sqlite_close(s);
}

static int
put_diag(sqlite3 *db, void *arg, struct err *e)
{
	(void)e;
	return sqlite3_exec(db, arg, NULL, NULL, NULL) == SQLITE_OK ? 0 :
	    ERR_STORE;
}

/* Pruning a check takes its rule entries and its diagnoses in the same
   statement; the others stay; the file stays consistent. */
static void
test_store__retention_takes_what_refers_to_a_check(void **state)
{
	static const struct store_finding f[] = { { "r.a", "error", 1 },
	    { "r.b", "warning", 2 }, { "r.c", "info", 3 } };
	struct store_sqlite *s;
	struct err e = { 0 };
	char path[256], v[64];
	int deleted;

	(void)state;
	tmp_db(path, sizeof(path));
	assert_int_equal(store_sqlite_open(&s, path, false, &e), 0);
	put_findings(s, "01000000000000000000000001", "a", "fail", f, 3);
	put_findings(s, "01000000000000000000000002", "a", "fail", f, 3);
	assert_int_equal(store_sqlite_write(s, put_diag, (void *)(uintptr_t)
	    "INSERT INTO diagnoses (id, created_at, team, check_id, gpu, "
	    "config_sha256, context, lines, report) VALUES "
	    "('02000000000000000000000001', 1, 'a', "
	    "'01000000000000000000000001', 'h100', '00', '{}', '[]', '{}'), "
	    "('02000000000000000000000002', 1, 'a', "
	    "'01000000000000000000000002', 'h100', '00', '{}', '[]', '{}')",
	    &e), 0);
	/* Two error/warning rules each: info is not indexed. */
	assert_int_equal(sql_long(path, "SELECT count(*) FROM check_rules"), 4);
	assert_int_equal(store_sqlite_prune(s, "01000000000000000000000002",
	    100, &deleted, &e), 0);
	assert_int_equal(deleted, 1);
	assert_int_equal(sql_long(path, "SELECT count(*) FROM check_rules"), 2);
	assert_int_equal(sql_long(path, "SELECT count(*) FROM check_rules "
	    "WHERE seq = (SELECT seq FROM checks WHERE id = "
	    "'01000000000000000000000002')"), 2);
	sql_text(path, "SELECT group_concat(check_id) FROM diagnoses", v,
	    sizeof(v));
	assert_string_equal(v, "01000000000000000000000002");
	assert_int_equal(sql_text(path, "PRAGMA foreign_key_check", NULL, 0),
	    0);
	sql_text(path, "PRAGMA integrity_check", v, sizeof(v));
	assert_string_equal(v, "ok");
	store_sqlite_close(s);
	rm_db(path);
}

/* ---- migrations from each version -------------------------------------- */

/* A file at schema version v (migrations 1..v applied by hand). */
static void
make_version(const char *path, int v)
{
	sqlite3 *db;
	char sql[64];
	int i;

	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	for (i = 0; i < v; i++)
		assert_int_equal(sqlite3_exec(db, migrations[i].sql, NULL,
		    NULL, NULL), SQLITE_OK);
	snprintf(sql, sizeof(sql), "PRAGMA user_version = %d", v);
	assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
}

/* Every intermediate version migrates to the latest. */
static void
test_store__migrates_from_every_version(void **state)
{
	struct store_sqlite *s;
	struct err e = { 0 };
	char path[256];
	int v;

	(void)state;
	for (v = 1; v < migrations_count; v++) {
		tmp_db(path, sizeof(path));
		make_version(path, v);
		assert_int_equal(store_sqlite_open(&s, path, false, &e), 0);
		assert_int_equal(store_sqlite_version(s), migrations_count);
		store_sqlite_close(s);
		assert_int_equal(user_version(path), migrations_count);
		rm_db(path);
	}
}

/* Rows written under version 5 (checks, findings, a diagnosis) come out
   of version 6 as they went in: every column, the findings compacted,
   warnings and errors in check_rules, the diagnosis still attached. */
static void
test_store__version_5_rows_are_kept(void **state)
{
	struct store_sqlite *s;
	struct store st;
	struct store_check c;
	struct store_rule_stat *rows;
	struct arena a;
	struct err e = { 0 };
	char path[256], v[256];
	sqlite3 *db;
	size_t n;

	(void)state;
	tmp_db(path, sizeof(path));
	make_version(path, 5);
	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db,
	    "INSERT INTO checks (id, created_at, team, name, config_sha256, "
	    "verdict, errors, warnings, infos, context, report, config, "
	    "idem_key, body_sha256) VALUES "
	    "('01000000000000000000000002', 2, 'red', 'n2', 'c2', 'warn', 0, "
	    "1, 1, '{\"gpus\":2}', '{\"report\":2}', X'610A', 'k', 'b2'), "
	    "('01000000000000000000000001', 1, 'blue', 'n1', 'c1', 'pass', 0, "
	    "0, 1, '{}', '{\"report\":1}', X'00FF', NULL, 'b1');"
	    "INSERT INTO findings VALUES ('01000000000000000000000002', "
	    "'r.w', 'warning', 7, 'red', 'warn'), "
	    "('01000000000000000000000002', 'r.i', 'info', 1, 'red', 'warn'), "
	    "('01000000000000000000000001', 'r.i', 'info', 1, 'blue', 'pass');"
	    "INSERT INTO diagnoses (id, created_at, team, check_id, gpu, "
	    "config_sha256, context, lines, report) VALUES "
	    "('02000000000000000000000001', 3, 'red', "
	    "'01000000000000000000000002', 'h100', 'c2', '{}', '[]', '{}');",
	    NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
	assert_int_equal(store_sqlite_open(&s, path, false, &e), 0);
	st = store_sqlite_iface(s);
	arena_init(&a, 1 << 20);
	assert_int_equal(st.ops->get_check(st.self, &c,
	    "01000000000000000000000002", "red", &a, &e), 0);
	assert_string_equal(c.name, "n2");
	assert_string_equal(c.json, "{\"report\":2}");
	assert_string_equal(c.context_json, "{\"gpus\":2}");
	assert_string_equal(c.idem_key, "k");
	assert_string_equal(c.body_sha256, "b2");
	assert_int_equal(c.config_len, 2);
	assert_memory_equal(c.config, "a\n", 2);
	assert_int_equal(c.created_at_ms, 2);
	assert_int_equal(c.warnings, 1);
	assert_int_equal(st.ops->get_check(st.self, &c,
	    "01000000000000000000000001", NULL, &a, &e), 0);
	assert_int_equal(c.config_len, 2);
	assert_memory_equal(c.config, "\0\xff", 2);
	assert_int_equal(st.ops->rule_stats(st.self, &rows, &n, NULL, NULL,
	    &a, &e), 0);
	assert_int_equal(n, 3);	/* r.i pass, r.i warn, r.w warn */
	assert_string_equal(rows[2].rule, "r.w");
	arena_fini(&a);
	store_sqlite_close(s);
	/* Keys sort as ids; only the warning is in check_rules. */
	sql_text(path, "SELECT group_concat(id) FROM (SELECT id FROM checks "
	    "ORDER BY seq)", v, sizeof(v));
	assert_string_equal(v, "01000000000000000000000001,"
	    "01000000000000000000000002");
	sql_text(path, "SELECT group_concat(r.name) FROM check_rules x JOIN "
	    "rules r ON r.id = x.rule", v, sizeof(v));
	assert_string_equal(v, "r.w");
	sql_text(path, "SELECT findings FROM checks WHERE id = "
	    "'01000000000000000000000002'", v, sizeof(v));
	assert_non_null(strstr(v, ",1,7]"));	/* warning, line 7 */
	sql_text(path, "SELECT check_id FROM diagnoses", v, sizeof(v));
	assert_string_equal(v, "01000000000000000000000002");
	assert_int_equal(sql_text(path, "SELECT name FROM sqlite_master WHERE "
	    "name = 'findings'", NULL, 0), 0);
	assert_int_equal(sql_text(path, "PRAGMA foreign_key_check", NULL, 0),
	    0);
	rm_db(path);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_store__migrates_from_zero),
		cmocka_unit_test(
		    test_store__migrations_are_numbered_without_gaps),
		cmocka_unit_test(test_store__refuses_a_newer_database),
		cmocka_unit_test(test_store__write_read_prune),
		cmocka_unit_test(test_store__duplicate_id_fails_alone),
		cmocka_unit_test(test_store__ids_keep_their_order_as_keys),
		cmocka_unit_test(test_store__query_plans_never_scan),
		cmocka_unit_test(test_store__queued_writes_share_a_commit),
		cmocka_unit_test(test_store__a_failing_check_fails_alone),
		cmocka_unit_test(test_store__big_batches_survive_a_kill),
		cmocka_unit_test(test_store__big_batches_checkpoint_whole),
		cmocka_unit_test(test_store__api_answers_after_the_commit),
		cmocka_unit_test(test_store__stats_count_findings_and_checks),
		cmocka_unit_test(test_store__rule_filter_pages_exactly),
		cmocka_unit_test(
		    test_store__retention_takes_what_refers_to_a_check),
		cmocka_unit_test(test_store__migrates_from_every_version),
		cmocka_unit_test(test_store__version_5_rows_are_kept),
	};

	return cmocka_run_group_tests_name("store", tests, NULL, NULL);
}
