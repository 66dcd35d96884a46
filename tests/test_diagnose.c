/*
 * tests/test_diagnose: `preflight diagnose` (issue #19).
 *
 * Every fixture under tests/fixtures/diagnose/ is a log excerpt from a
 * public issue (its URL in the header) with the diagnosis a reader of
 * those lines would give first; each must get it first, and a log with no
 * known signature must get none, with its last error lines quoted.  Then
 * the CUDA OOM numbers against the messages' own text, the OOM path with a
 * config against the estimator, the table's shape, every signature's
 * trigger, the limits, hostile input, the allocation sweep, the CLI and
 * the generated docs.
 */
#include <dirent.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "core/arena.h"
#include "core/check.h"
#include "core/diagnose.h"
#include "core/diagnose_int.h"
#include "core/estimate.h"
#include "core/rules.h"
#include "core/suggest.h"
#include "tests/fixture.h"

#define FIXDIR "tests/fixtures/diagnose"
#define ARENA_CAP ((size_t)64 << 20)

/* A fixture: its header fields and the log after the header. */
struct fixture {
	char name[320];
	char *text;		/* the whole file, malloc'd */
	const char *source;	/* "# source:" value, in text */
	const char *expect;	/* "# expect:" value: an id or "none" */
	const char *config;	/* "# config:" file name, or NULL */
	const char *context;	/* "# context:" "gpus=8 gpu=h100-sxm" */
	const char *dsconfig;	/* "# deepspeed-config:" file name */
	const char *last_error;	/* "# last-error:" text */
	const char *log;	/* after the header */
	size_t log_len;
};

/* Split the "# key: value" header off f->text (values NUL-terminated). */
static void
fixture_parse(struct fixture *f)
{
	static const char *const keys[] = { "source", "expect", "config",
	    "context", "deepspeed-config", "last-error", NULL };
	const char **slot[] = { &f->source, &f->expect, &f->config,
	    &f->context, &f->dsconfig, &f->last_error };
	char *p = f->text, *nl;
	size_t i, n;

	while (p[0] == '#' && p[1] == ' ') {
		for (i = 0; keys[i] != NULL; i++) {
			n = strlen(keys[i]);
			if (strncmp(p + 2, keys[i], n) == 0 && p[2 + n] == ':')
				break;
		}
		if (keys[i] == NULL)
			break;
		nl = strchr(p, '\n');
		assert_non_null(nl);
		*nl = '\0';
		*slot[i] = p + 2 + strlen(keys[i]) + 2;
		p = nl + 1;
	}
	f->log = p;
	f->log_len = strlen(p);
}

static int
by_name(const void *a, const void *b)
{
	return strcmp(((const struct fixture *)a)->name,
	    ((const struct fixture *)b)->name);
}

/* Every *.log fixture, sorted by name; *n gets the count. */
static struct fixture *
fixtures_load(size_t *n)
{
	struct fixture *all = NULL;
	struct dirent *de;
	DIR *d = opendir(FIXDIR);
	size_t k = 0, cap = 0;
	char path[512];

	assert_non_null(d);
	while ((de = readdir(d)) != NULL) {
		size_t len = strlen(de->d_name);

		if (len < 5 || strcmp(de->d_name + len - 4, ".log") != 0)
			continue;
		if (k == cap) {
			cap = cap == 0 ? 64 : cap * 2;
			all = realloc(all, cap * sizeof(*all));
			assert_non_null(all);
		}
		memset(&all[k], 0, sizeof(all[k]));
		snprintf(all[k].name, sizeof(all[k].name), "%s", de->d_name);
		snprintf(path, sizeof(path), FIXDIR "/%s", de->d_name);
		all[k].text = fixture_read(path, NULL);
		assert_non_null(all[k].text);
		fixture_parse(&all[k]);
		k++;
	}
	closedir(d);
	qsort(all, k, sizeof(*all), by_name);
	*n = k;
	return all;
}

static void
fixtures_free(struct fixture *all, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(all[i].text);
	free(all);
}

/* Line `line` (1-based) of text, copied into buf. */
static const char *
line_of(char *buf, size_t cap, const char *text, unsigned line)
{
	const char *p = text, *nl;
	unsigned k;
	size_t n;

	for (k = 1; k < line && p != NULL; k++) {
		nl = strchr(p, '\n');
		p = nl != NULL ? nl + 1 : NULL;
	}
	if (p == NULL)
		return NULL;
	nl = strchr(p, '\n');
	n = nl != NULL ? (size_t)(nl - p) : strlen(p);
	if (n >= cap)
		n = cap - 1;
	memcpy(buf, p, n);
	buf[n] = '\0';
	return buf;
}

/* Diagnose a C string with the default limits in a. */
static struct diag_report *
run(const char *log, size_t len, struct arena *a)
{
	struct diag_limits lim;
	struct diag_report *d;
	struct err e = { 0 };

	diag_limits_default(&lim);
	if (diagnose_log(&d, log, len, &lim, a, &e) != 0)
		fail_msg("diagnose_log: %s", e.msg);
	return d;
}

/* Is s valid UTF-8 without control characters? */
static bool
clean_utf8(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	while (*p != '\0') {
		size_t n = *p < 0x80 ? 1 : (*p & 0xE0) == 0xC0 ? 2 :
		    (*p & 0xF0) == 0xE0 ? 3 : (*p & 0xF8) == 0xF0 ? 4 : 0;
		size_t i;

		if (n == 0 || (n == 1 && (*p < 0x20 || *p == 0x7F)))
			return false;
		for (i = 1; i < n; i++)
			if ((p[i] & 0xC0) != 0x80)
				return false;
		p += n;
	}
	return true;
}

/* Is q the text of its line in log (tabs as spaces, "..." a cut)? */
static bool
quotes_line(const char *log, const struct diag_line *q)
{
	char raw[8192], want[DIAG_QUOTE + 1];
	size_t n = strlen(q->text), i;

	if (!clean_utf8(q->text) || line_of(raw, sizeof(raw), log,
	    q->line) == NULL)
		return false;
	for (i = 0; raw[i] != '\0'; i++)
		if (raw[i] == '\t')
			raw[i] = ' ';
	memcpy(want, q->text, n + 1);
	if (n >= 3 && strcmp(want + n - 3, "...") == 0)
		want[n - 3] = '\0';
	return strstr(raw, want) != NULL;
}

/* ---- the fixtures --------------------------------------------------- */

/* Each fixture gets its expected diagnosis first, resting on its lines. */
static void
test_diagnose__every_fixture_gets_its_diagnosis_first(void **state)
{
	static const char *const classes[] = { "oom", "host", "nccl", "env",
	    "config", "ray", "checkpoint", NULL };
	bool seen[8] = { false };
	size_t n, i, k, c, none = 0, failed = 0;
	struct fixture *all = fixtures_load(&n);

	(void)state;
	for (i = 0; i < n; i++) {
		struct fixture *f = &all[i];
		struct arena a;
		struct diag_report *d;

		if (f->source == NULL ||
		    strncmp(f->source, "https://", 8) != 0 ||
		    f->expect == NULL)
			fail_msg("%s: needs '# source: https://...' and "
			    "'# expect: id' lines", f->name);
		arena_init(&a, ARENA_CAP);
		d = run(f->log, f->log_len, &a);
		if (strcmp(f->expect, "none") == 0) {
			none++;
			if (d->n != 0 || d->nlast_errors == 0 ||
			    f->last_error == NULL || strcmp(d->last_errors[
			    d->nlast_errors - 1].text, f->last_error) != 0) {
				print_message("%s: want no signature and the "
				    "last error quoted, got %zu (%s)\n",
				    f->name, d->n, d->n > 0 ?
				    d->items[0].sig->id : "-");
				failed++;
			}
		} else if (d->n == 0 ||
		    strcmp(d->items[0].sig->id, f->expect) != 0) {
			print_message("%s: want %s first, got %s\n", f->name,
			    f->expect, d->n > 0 ? d->items[0].sig->id :
			    "no known signature");
			failed++;
		} else {
			const struct diag_sig *s = d->items[0].sig;

			for (c = 0; classes[c] != NULL; c++)
				if (strcmp(classes[c], s->klass) == 0 ||
				    (strcmp(classes[c], "config") == 0 &&
				    strcmp(s->klass, "config") == 0))
					seen[c] = true;
		}
		/* Evidence lines are the log's own lines, quoted. */
		for (k = 0; k < d->n; k++) {
			const struct diagnosis *g = &d->items[k];
			size_t j;

			assert_true(g->nlines > 0);
			for (j = 0; j < g->nlines; j++)
				assert_true(quotes_line(f->log,
				    &g->lines[j]));
		}
		arena_fini(&a);
	}
	print_message("%zu fixtures, %zu without a known signature\n", n,
	    none);
	fixtures_free(all, n);
	if (failed > 0)
		fail_msg("%zu fixtures got another diagnosis first", failed);
	assert_true(n >= 40);
	assert_true(none >= 1);
	for (c = 0; classes[c] != NULL; c++)
		if (!seen[c])
			fail_msg("no fixture of class %s", classes[c]);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(
		    test_diagnose__every_fixture_gets_its_diagnosis_first),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
