/*
 * server/store_read: the store's reads on the pooled read connections:
 * one check, a check by Idempotency-Key, lists (one prepared statement
 * per filter combination, assembled from constant fragments), rule
 * statistics, and EXPLAIN QUERY PLAN of every read for the tests.
 */
#include "server/store_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/arena.h"
#include "server/log.h"
#include "server/store_diagnose.h"

#define RULES_MAX 100000	/* rule ids the stats count; rules.id is
				   dense, so this is far beyond any table */

/* The key at or after an id (a cursor, since, until): every check with
   a smaller key has a smaller id (store_id_seq); none: above all. */
#define KEY_AT(p) "coalesce((SELECT seq FROM checks WHERE id >= " p \
	" ORDER BY id LIMIT 1), 9223372036854775807)"

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

int
store_get_check(void *self, struct store_check *out, const char *id,
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

int
store_get_by_idem(void *self, struct store_check *out, const char *team,
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

int
store_list_checks(void *self, struct store_check **out, size_t *n,
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
int
store_rule_stats(void *self, struct store_rule_stat **out, size_t *n,
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
	if (store_exec(rd->db, "BEGIN", e) != 0) {
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

