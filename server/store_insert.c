/*
 * server/store_insert: one check into the open transaction of the writer
 * connection (server/store_writer.c calls it, writer thread only): its
 * row in checks, its findings column, and a check_rules entry per rule
 * that fired, with rule names turned into dense ids cached by name.
 */
#include "server/store_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/log.h"

/* ---- rule ids ---------------------------------------------------------- */

static uint64_t
name_hash(const char *s)
{
	uint64_t h = 14695981039346656037u;

	for (; *s != '\0'; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211u;
	return h;
}

void
store_rules_forget(struct writer *w)
{
	size_t i;

	for (i = 0; i < w->rcap; i++)
		free(w->rules[i].name);
	free(w->rules);
	w->rules = NULL;
	w->rcap = w->rn = 0;
}

/* The slot of name: its own, or the empty one it would take. */
static struct rule_slot *
rules_slot(struct writer *w, const char *name)
{
	size_t i = (size_t)name_hash(name) & (w->rcap - 1);

	while (w->rules[i].name != NULL && strcmp(w->rules[i].name,
	    name) != 0)
		i = (i + 1) & (w->rcap - 1);
	return &w->rules[i];
}

static int
rules_remember(struct writer *w, const char *name, long long id)
{
	struct rule_slot *sl;

	if (w->rn + 1 > w->rcap / 2) {
		struct rule_slot *old = w->rules;
		size_t n = w->rcap, i;

		w->rcap = n == 0 ? 256 : n * 2;
		w->rules = calloc(w->rcap, sizeof(*w->rules));
		if (w->rules == NULL) {
			w->rules = old;
			w->rcap = n;
			return -1;
		}
		for (i = 0; i < n; i++)
			if (old[i].name != NULL)
				*rules_slot(w, old[i].name) = old[i];
		free(old);
	}
	sl = rules_slot(w, name);
	sl->name = strdup(name);
	if (sl->name == NULL)
		return -1;
	sl->id = id;
	w->rn++;
	return 0;
}

/*
 * The id of rule name, adding a rules row when it is new (inside the
 * batch's transaction: a rollback forgets the cache, see run_batch).
 */
static int
rule_id(struct store_sqlite *s, long long *out, const char *name,
    struct err *e)
{
	struct writer *w = &s->w;
	int rc;

	if (w->rcap > 0) {
		struct rule_slot *sl = rules_slot(w, name);

		if (sl->name != NULL) {
			*out = sl->id;
			return 0;
		}
	}
	if (sqlite3_bind_text(w->rule_add, 1, name, -1, SQLITE_STATIC) ||
	    store_step(w->rule_add) != 0 ||
	    sqlite3_bind_text(w->rule_get, 1, name, -1, SQLITE_STATIC) ||
	    (rc = sqlite3_step(w->rule_get)) != SQLITE_ROW) {
		sqlite3_reset(w->rule_get);
		return store_db_fail(s, w->db, e, "rule id");
	}
	*out = sqlite3_column_int64(w->rule_get, 0);
	sqlite3_reset(w->rule_get);
	if (rules_remember(w, name, *out) != 0)
		return err_set(e, ERR_NOMEM, NULL, "out of memory");
	return 0;
}

/* ---- one check --------------------------------------------------------- */

static int
severity_code(const char *sev)
{
	if (strcmp(sev, "error") == 0)
		return 0;
	if (strcmp(sev, "warning") == 0)
		return 1;
	if (strcmp(sev, "info") == 0)
		return 2;
	return -1;
}

/*
 * A check the writer can insert: what the schema requires, checked
 * before the batch so that a malformed job fails alone without costing
 * the others a rollback.
 */
int
store_validate_check(const struct store_check *c, struct err *e)
{
	size_t i;

	if (store_id_seq(c->id) < 0)
		return err_set(e, ERR_INTERNAL, NULL, "check id '%.30s' is "
		    "not 26 Crockford characters", c->id);
	if (c->team == NULL || c->name == NULL || c->config_sha256 == NULL ||
	    c->verdict == NULL || c->context_json == NULL || c->json == NULL ||
	    c->body_sha256 == NULL || (c->config == NULL &&
	    c->config_len > 0) || (c->findings == NULL && c->nfindings > 0))
		return err_set(e, ERR_INTERNAL, NULL, "check %s lacks a "
		    "field the store requires", c->id);
	if (strcmp(c->verdict, "pass") != 0 && strcmp(c->verdict,
	    "warn") != 0 && strcmp(c->verdict, "fail") != 0)
		return err_set(e, ERR_INTERNAL, NULL, "check %s: verdict "
		    "'%.10s'", c->id, c->verdict);
	for (i = 0; i < c->nfindings; i++)
		if (c->findings[i].rule == NULL ||
		    c->findings[i].severity == NULL ||
		    severity_code(c->findings[i].severity) < 0)
			return err_set(e, ERR_INTERNAL, NULL, "check %s: "
			    "finding %zu has no rule or severity", c->id, i);
	return 0;
}

/* Append to the findings buffer; -1 when out of memory. */
static int
fbuf_put(struct writer *w, size_t *n, const char *text, size_t len)
{
	if (*n + len + 1 > w->fcap) {
		size_t cap = w->fcap == 0 ? 1024 : w->fcap;
		char *nb;

		while (*n + len + 1 > cap)
			cap *= 2;
		nb = realloc(w->fbuf, cap);
		if (nb == NULL)
			return -1;
		w->fbuf = nb;
		w->fcap = cap;
	}
	memcpy(w->fbuf + *n, text, len);
	*n += len;
	w->fbuf[*n] = '\0';
	return 0;
}

/* Write v in decimal at out (24 bytes are enough); its length. */
static size_t
put_uint(char *out, unsigned long long v)
{
	char tmp[24];
	size_t n = 0, i;

	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v > 0);
	for (i = 0; i < n; i++)
		out[i] = tmp[n - 1 - i];
	return n;
}

/* ",[rule,severity,line]" (no comma first) into item (40 bytes); its
   length.  Written by hand: snprintf was a tenth of the writer's
   instructions (callgrind). */
static size_t
finding_item(char *item, bool first, long long rule, int sev,
    unsigned line)
{
	size_t k = 0;

	if (!first)
		item[k++] = ',';
	item[k++] = '[';
	if (rule < 0) {
		item[k++] = '-';
		k += put_uint(item + k, 0ULL - (unsigned long long)rule);
	} else {
		k += put_uint(item + k, (unsigned long long)rule);
	}
	item[k++] = ',';
	item[k++] = (char)('0' + sev);
	item[k++] = ',';
	k += put_uint(item + k, line);
	item[k++] = ']';
	return k;
}

/* Whether an error or warning among the RULE_LOOKBACK findings before
   i has i's rule id (INSERT OR IGNORE catches the rest). */
#define RULE_LOOKBACK 16
static bool
rule_entered(const struct store_check *c, const long long *ids, size_t i)
{
	size_t j = i > RULE_LOOKBACK ? i - RULE_LOOKBACK : 0;

	for (; j < i; j++)
		if (ids[j] == ids[i] &&
		    severity_code(c->findings[j].severity) <= 1)
			return true;
	return false;
}

/*
 * Whether the insert of c just failed because its team already stored
 * its Idempotency-Key: a request that lost the race to a concurrent one
 * with the same key, answered with the winner's check (api/submit.c),
 * which is neither logged as a database error nor counted as one (any
 * client can cause it).  The only other unique keys of checks are the
 * id and seq, which an idempotent retry does not share.
 */
static bool
idem_taken(sqlite3 *db, const struct store_check *c)
{
	return c->idem_key != NULL &&
	    sqlite3_extended_errcode(db) == SQLITE_CONSTRAINT_UNIQUE &&
	    strstr(sqlite3_errmsg(db), "idem_key") != NULL;
}

/*
 * Insert c: its row, with the findings as [[rule, severity, line], ...]
 * (migrations/0006), then a check_rules entry per distinct error or
 * warning rule.  The key is store_id_seq(id); should another id already
 * hold that key (ids made elsewhere), SQLite picks the next free one.
 */
int
store_insert_check(struct store_sqlite *s, const struct store_check *c,
    struct err *e)
{
	struct writer *w = &s->w;
	sqlite3_stmt *st = w->ins_check, *r = w->ins_rule;
	long long *ids = NULL;
	size_t i, n = 0;
	char item[96];
	int rv = 0, rc, k;

	ids = malloc((c->nfindings + 1) * sizeof(*ids));
	if (ids == NULL)
		return err_set(e, ERR_NOMEM, NULL, "out of memory");
	if (fbuf_put(w, &n, "[", 1) != 0)
		goto nomem;
	for (i = 0; i < c->nfindings; i++) {
		const struct store_finding *x = &c->findings[i];

		rv = rule_id(s, &ids[i], x->rule, e);
		if (rv != 0)
			goto out;
		if (fbuf_put(w, &n, item, finding_item(item, i == 0, ids[i],
		    severity_code(x->severity), x->line)) != 0)
			goto nomem;
	}
	if (fbuf_put(w, &n, "]", 1) != 0)
		goto nomem;
	for (k = 0; k < 2; k++) {
		if ((k == 0 ? sqlite3_bind_int64(st, 1, store_id_seq(c->id)) :
		    sqlite3_bind_null(st, 1)) ||
		    sqlite3_bind_text(st, 2, c->id, -1, SQLITE_STATIC) ||
		    sqlite3_bind_text(st, 3, c->team, -1, SQLITE_STATIC) ||
		    sqlite3_bind_text(st, 4, c->name, -1, SQLITE_STATIC) ||
		    sqlite3_bind_int64(st, 5, c->created_at_ms) ||
		    sqlite3_bind_text(st, 6, c->verdict, -1, SQLITE_STATIC) ||
		    sqlite3_bind_int64(st, 7, c->errors) ||
		    sqlite3_bind_int64(st, 8, c->warnings) ||
		    sqlite3_bind_int64(st, 9, c->infos) ||
		    sqlite3_bind_text(st, 10, c->config_sha256, -1,
		    SQLITE_STATIC) ||
		    sqlite3_bind_text(st, 11, c->body_sha256, -1,
		    SQLITE_STATIC) ||
		    (c->idem_key != NULL ? sqlite3_bind_text(st, 12,
		    c->idem_key, -1, SQLITE_STATIC) :
		    sqlite3_bind_null(st, 12)) ||
		    sqlite3_bind_text(st, 13, w->fbuf, (int)n,
		    SQLITE_STATIC) ||
		    sqlite3_bind_text(st, 14, c->context_json, -1,
		    SQLITE_STATIC) ||
		    sqlite3_bind_text(st, 15, c->json, -1, SQLITE_STATIC) ||
		    sqlite3_bind_blob64(st, 16, c->config_len > 0 ? c->config :
		    "", c->config_len, SQLITE_STATIC)) {
			rv = store_db_fail(s, w->db, e, "bind check");
			goto out;
		}
		rc = sqlite3_step(st);
		sqlite3_reset(st);
		if (rc == SQLITE_DONE)
			break;
		if (k == 0 && sqlite3_extended_errcode(w->db) ==
		    SQLITE_CONSTRAINT_PRIMARYKEY) {
			log_msg("warn", "store: check %s: its key is taken "
			    "(an id not made by this server); stored under "
			    "the next free key", c->id);
			continue;
		}
		if (idem_taken(w->db, c)) {
			rv = err_set(e, ERR_TAKEN, NULL, "the Idempotency-Key "
			    "is stored already");
			goto out;
		}
		rv = store_db_fail(s, w->db, e, "insert check");
		goto out;
	}
	for (i = 0; i < c->nfindings; i++) {
		if (severity_code(c->findings[i].severity) > 1)
			continue;	/* info: not filtered by */
		if (rule_entered(c, ids, i))
			continue;	/* one entry per rule: a statement less */
		if (sqlite3_bind_text(r, 1, c->team, -1, SQLITE_STATIC) ||
		    sqlite3_bind_int64(r, 2, ids[i]) ||
		    sqlite3_bind_int64(r, 3,
		    sqlite3_last_insert_rowid(w->db)) ||
		    (rc = store_step(r)) != 0) {
			rv = store_db_fail(s, w->db, e, "insert rule entry");
			goto out;
		}
	}
	goto out;
nomem:
	rv = err_set(e, ERR_NOMEM, NULL, "out of memory");
out:
	sqlite3_clear_bindings(st);
	sqlite3_clear_bindings(r);
	free(ids);
	return rv;
}

