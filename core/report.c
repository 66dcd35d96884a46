/*
 * core/report: collecting findings and deciding the verdict.  No I/O.
 */
#include "report.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"

int
report_add(struct report *r, struct arena *a, const char *rule,
    enum severity sev, const char *path, unsigned line, unsigned col,
    const char *hint, const char *fmt, ...)
{
	va_list ap;
	int rv;

	va_start(ap, fmt);
	rv = report_addv(r, a, rule, sev, path, line, col, hint, fmt, ap);
	va_end(ap);
	return rv;
}

int
report_addv(struct report *r, struct arena *a, const char *rule,
    enum severity sev, const char *path, unsigned line, unsigned col,
    const char *hint, const char *fmt, va_list ap)
{
	struct finding *f = ARENA_NEW(a, struct finding, 1);
	char small[512];
	int n;

	if (f == NULL)
		return ERR_NOMEM;
	n = vsnprintf(small, sizeof(small), fmt, ap);
	if (n < 0)
		return ERR_INTERNAL;
	f->rule = rule;
	f->severity = sev;
	f->message = arena_strndup(a, small, strlen(small));
	f->hint = hint == NULL ? NULL : arena_strndup(a, hint, strlen(hint));
	f->path = arena_strndup(a, path == NULL ? "" : path,
	    path == NULL ? 0 : strlen(path));
	if (f->message == NULL || (hint != NULL && f->hint == NULL) ||
	    f->path == NULL)
		return ERR_NOMEM;
	f->line = line;
	f->col = col;
	if (r->tail == NULL)
		r->head = f;
	else
		r->tail->next = f;
	r->tail = f;
	r->nfindings++;
	r->count[sev]++;
	return 0;
}

static int
finding_cmp(const void *x, const void *y)
{
	const struct finding *a = x, *b = y;
	int c;

	if (a->line != b->line)
		return a->line < b->line ? -1 : 1;
	c = strcmp(a->rule, b->rule);
	if (c != 0)
		return c;
	return a->col < b->col ? -1 : a->col > b->col;
}

/* Most severe first, then as reported: which findings a cap keeps. */
static int
keep_cmp(const void *x, const void *y)
{
	const struct finding *a = x, *b = y;

	if (a->severity != b->severity)
		return a->severity > b->severity ? -1 : 1;
	return finding_cmp(x, y);
}

/* A linked list into a sorted arena array; NULL only when out of memory
   with n > 0. */
static struct finding *
sorted_array(const struct finding *head, size_t n, struct arena *a)
{
	struct finding *arr = ARENA_NEW(a, struct finding, n);
	const struct finding *f;
	size_t i = 0;

	if (arr == NULL)
		return NULL;
	for (f = head; f != NULL && i < n; f = f->next)
		arr[i++] = *f;
	if (n > 1)
		qsort(arr, n, sizeof(*arr), finding_cmp);
	for (i = 0; i < n; i++)
		arr[i].next = NULL;
	return arr;
}

/*
 * Past REPORT_MAX_FINDINGS, keep the most severe (errors, then warnings,
 * then info; by line within each) and say how many were left out in one
 * report.truncated note, so a hostile config cannot make every stored
 * check, list page and diff grow without bound.  The counts and the
 * verdict stay those of everything found.
 */
static int
cap_findings(struct report *r, struct arena *a)
{
	size_t keep = REPORT_MAX_FINDINGS - 1, dropped, dropped_s = 0;
	size_t by[3] = { 0, 0, 0 }, i;
	struct finding *note;
	char msg[256];

	dropped = r->nfindings > REPORT_MAX_FINDINGS ? r->nfindings - keep : 0;
	if (r->nsuppressed > REPORT_MAX_FINDINGS) {
		dropped_s = r->nsuppressed - REPORT_MAX_FINDINGS;
		r->nsuppressed = REPORT_MAX_FINDINGS;
	}
	if (dropped == 0 && dropped_s == 0)
		return 0;
	if (dropped > 0) {
		qsort(r->findings, r->nfindings, sizeof(*r->findings),
		    keep_cmp);
		for (i = keep; i < r->nfindings; i++)
			by[r->findings[i].severity]++;
		r->nfindings = keep;
	}
	snprintf(msg, sizeof(msg), "this report keeps %d findings; %zu more "
	    "(%zu errors, %zu warnings, %zu info) and %zu suppressed ones are "
	    "not listed", REPORT_MAX_FINDINGS, dropped, by[SEV_ERROR],
	    by[SEV_WARNING], by[SEV_INFO], dropped_s);
	note = &r->findings[r->nfindings];
	if (dropped == 0) {
		/* Only suppressions were cut: one more slot is needed. */
		struct finding *grown = ARENA_NEW(a, struct finding,
		    r->nfindings + 1);

		if (grown == NULL)
			return ERR_NOMEM;
		memcpy(grown, r->findings, r->nfindings * sizeof(*grown));
		r->findings = grown;
		note = &r->findings[r->nfindings];
	}
	memset(note, 0, sizeof(*note));
	note->rule = "report.truncated";
	note->severity = SEV_INFO;
	note->message = arena_strndup(a, msg, strlen(msg));
	note->hint = "fix the findings listed, or check the config in parts; "
	    "the counts and the verdict cover every finding";
	note->path = "";
	note->line = 1;
	note->col = 1;
	if (note->message == NULL)
		return ERR_NOMEM;
	r->nfindings++;
	r->count[SEV_INFO]++;
	qsort(r->findings, r->nfindings, sizeof(*r->findings), finding_cmp);
	return 0;
}

int
report_finish(struct report *r, struct arena *a, struct err *e)
{
	r->findings = sorted_array(r->head, r->nfindings, a);
	if (r->nfindings > 0 && r->findings == NULL)
		return err_set(e, ERR_NOMEM, NULL,
		    "request memory budget spent while sorting findings");
	if (r->nsuppressed > 0) {
		r->suppressed = sorted_array(r->suppressed, r->nsuppressed, a);
		if (r->suppressed == NULL)
			return err_set(e, ERR_NOMEM, NULL,
			    "request memory budget spent");
	}
	if (cap_findings(r, a) != 0)
		return err_set(e, ERR_NOMEM, NULL,
		    "request memory budget spent while capping findings");
	if (r->count[SEV_ERROR] > 0)
		r->verdict = VERDICT_FAIL;
	else if (r->count[SEV_WARNING] > 0)
		r->verdict = VERDICT_WARN;
	else
		r->verdict = VERDICT_PASS;
	return 0;
}

const char *
severity_name(enum severity s)
{
	switch (s) {
	case SEV_INFO:
		return "info";
	case SEV_WARNING:
		return "warning";
	case SEV_ERROR:
		return "error";
	}
	return "?";
}

const char *
verdict_name(enum verdict v)
{
	switch (v) {
	case VERDICT_PASS:
		return "pass";
	case VERDICT_WARN:
		return "warn";
	case VERDICT_FAIL:
		return "fail";
	}
	return "?";
}
