/*
 * server/store_diagnose: see store_diagnose.h.  Every value is bound; the
 * list query is one statement whose optional filters are `?N IS NULL OR`
 * terms, so there is nothing to assemble.  Writes go through the store's
 * writer (store_sqlite_write), reads through its reader.
 */
#include "store_diagnose.h"

#include <stdio.h>
#include <string.h>

#include <sqlite3.h>

#include "core/arena.h"
#include "server/store_sqlite.h"

static int
fail(sqlite3 *db, struct err *e, const char *what)
{
	return err_set(e, ERR_STORE, NULL, "%s: %s", what,
	    sqlite3_errmsg(db));
}

static int
bind_text(sqlite3_stmt *st, int i, const char *v)
{
	return v != NULL ? sqlite3_bind_text(st, i, v, -1, SQLITE_STATIC) :
	    sqlite3_bind_null(st, i);
}

static int
put_fn(sqlite3 *db, void *arg, struct err *e)
{
	const struct store_diagnosis *d = arg;
	sqlite3_stmt *st = NULL;
	int rv = 0;

	if (sqlite3_prepare_v2(db, "INSERT INTO diagnoses (id, created_at, "
	    "team, check_id, name, config_sha256, gpu, context, first, "
	    "measured_peak_gib, capacity_gib, lines, report) VALUES (?1, ?2, "
	    "?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)", -1, &st,
	    NULL) != SQLITE_OK ||
	    sqlite3_bind_text(st, 1, d->id, -1, SQLITE_STATIC) ||
	    sqlite3_bind_int64(st, 2, d->created_at_ms) ||
	    bind_text(st, 3, d->team) || bind_text(st, 4, d->check_id) ||
	    bind_text(st, 5, d->name) || bind_text(st, 6, d->config_sha256) ||
	    bind_text(st, 7, d->gpu) || bind_text(st, 8, d->context_json) ||
	    bind_text(st, 9, d->first) ||
	    (d->measured ? sqlite3_bind_double(st, 10, d->measured_peak_gib) :
	    sqlite3_bind_null(st, 10)) ||
	    (d->measured ? sqlite3_bind_double(st, 11, d->capacity_gib) :
	    sqlite3_bind_null(st, 11)) ||
	    bind_text(st, 12, d->lines_json) || bind_text(st, 13, d->json) ||
	    sqlite3_step(st) != SQLITE_DONE)
		rv = fail(db, e, "insert diagnosis");
	sqlite3_finalize(st);
	return rv;
}

int
store_diagnose_put(void *self, const struct store_diagnosis *d,
    struct err *e)
{
	return store_sqlite_write(self, put_fn, (void *)(uintptr_t)d, e);
}

const char store_diagnose_list_sql[] =
    "SELECT id, created_at, team, check_id, "
    "name, config_sha256, gpu, context, first, measured_peak_gib, "
    "capacity_gib, lines, report FROM diagnoses WHERE "
    "(?6 OR measured_peak_gib IS NOT NULL) AND id < ?1 AND "
    "(?2 IS NULL OR team = ?2) AND (?3 IS NULL OR name = ?3) AND "
    "(?4 IS NULL OR config_sha256 = ?4) ORDER BY id DESC LIMIT ?5";

struct list_args {
	const struct store_mquery *q;
	struct store_diagnosis *items;
	size_t n;
	struct arena *a;
};

static const char *
col(sqlite3_stmt *st, int i, struct arena *a)
{
	const char *t = (const char *)sqlite3_column_text(st, i);

	if (t == NULL)
		return NULL;
	return arena_strndup(a, t, (size_t)sqlite3_column_bytes(st, i));
}

static int
read_row(struct store_diagnosis *d, sqlite3_stmt *st, struct arena *a,
    struct err *e)
{
	const char *id = (const char *)sqlite3_column_text(st, 0);

	memset(d, 0, sizeof(*d));
	snprintf(d->id, sizeof(d->id), "%s", id != NULL ? id : "");
	d->created_at_ms = sqlite3_column_int64(st, 1);
	d->team = col(st, 2, a);
	d->check_id = col(st, 3, a);
	d->name = col(st, 4, a);
	d->config_sha256 = col(st, 5, a);
	d->gpu = col(st, 6, a);
	d->context_json = col(st, 7, a);
	d->first = col(st, 8, a);
	d->measured = sqlite3_column_type(st, 9) != SQLITE_NULL;
	d->measured_peak_gib = sqlite3_column_double(st, 9);
	d->capacity_gib = sqlite3_column_double(st, 10);
	d->lines_json = col(st, 11, a);
	d->json = col(st, 12, a);
	if (d->team == NULL || d->check_id == NULL || d->name == NULL ||
	    d->config_sha256 == NULL || d->gpu == NULL ||
	    d->context_json == NULL || d->lines_json == NULL ||
	    d->json == NULL)
		return err_set(e, ERR_NOMEM, NULL, "out of memory");
	return 0;
}

static int
list_fn(sqlite3 *db, void *arg, struct err *e)
{
	struct list_args *l = arg;
	const struct store_mquery *q = l->q;
	sqlite3_stmt *st = NULL;
	int rc = SQLITE_DONE, rv = 0;

	/* The cursor is bound to "~", above every id, when absent. */
	if (sqlite3_prepare_v2(db, store_diagnose_list_sql, -1, &st, NULL) !=
	    SQLITE_OK ||
	    sqlite3_bind_text(st, 1, q->before_id != NULL ? q->before_id :
	    "~", -1, SQLITE_STATIC) || bind_text(st, 2, q->team) ||
	    bind_text(st, 3, q->name) || bind_text(st, 4, q->config_sha256) ||
	    sqlite3_bind_int64(st, 5, q->limit) ||
	    sqlite3_bind_int(st, 6, q->all)) {
		rv = fail(db, e, "list measurements");
		goto out;
	}
	while (l->n < q->limit && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		rv = read_row(&l->items[l->n], st, l->a, e);
		if (rv != 0)
			goto out;
		l->n++;
	}
	if (l->n < q->limit && rc != SQLITE_DONE)
		rv = fail(db, e, "list measurements");
out:
	sqlite3_finalize(st);
	return rv;
}

int
store_diagnose_measurements(void *self, struct store_diagnosis **out,
    size_t *n, const struct store_mquery *q, struct arena *a,
    struct err *e)
{
	struct list_args l = { q, NULL, 0, a };
	int rv;

	*out = NULL;
	*n = 0;
	l.items = ARENA_NEW(a, struct store_diagnosis, q->limit);
	if (l.items == NULL)
		return err_set(e, ERR_NOMEM, NULL, "out of memory");
	rv = store_sqlite_read(self, list_fn, &l, e);
	if (rv == 0) {
		*out = l.items;
		*n = l.n;
	}
	return rv;
}
