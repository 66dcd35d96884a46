/*
 * tests/test_store: the SQLite store: migrations, refusal of a newer
 * schema, group-committed writes, reads, retention.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "api/api.h"
#include "core/arena.h"
#include "server/migrations.h"
#include "server/store_sqlite.h"

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
	};

	return cmocka_run_group_tests_name("store", tests, NULL, NULL);
}
