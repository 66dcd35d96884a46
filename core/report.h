/*
 * core/report: findings and the verdict.
 *
 * This is DESIGN.md's report: every reason for a verdict is a finding with
 * a rule id, findings are ordered by line then rule id, and the verdict is
 * fail when any finding is an error, warn when any is a warning, else pass.
 * Everything lives in the request arena.
 */
#ifndef CORE_REPORT_H
#define CORE_REPORT_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

#include "context.h"
#include "err.h"

struct arena;
struct doc;
struct estimate;
struct suggestion;
struct plan;

enum severity {
	SEV_INFO = 0,
	SEV_WARNING,
	SEV_ERROR
};

enum verdict {
	VERDICT_PASS = 0,
	VERDICT_WARN,
	VERDICT_FAIL
};

struct finding {
	const char *rule;	/* stable id, "schema.duplicate_key" */
	enum severity severity;
	const char *message;	/* plain words, names the values involved */
	const char *hint;	/* how to fix it, or NULL */
	const char *path;	/* dotted config path, "" for the root */
	unsigned line;		/* 1-based, of the key (or value) to change */
	unsigned col;		/* 1-based */
	struct finding *next;	/* report_add() order, until report_finish */
	const char *reason;	/* why it was suppressed, or NULL */
};

struct report {
	enum verdict verdict;	/* set by report_finish() */
	char config_sha256[65];	/* hex digest of the submitted bytes; core
				   cannot hash, so the caller fills it */
	struct context ctx;	/* resolved context */
	const struct doc *doc;	/* the parsed document; borrowed (arena) */
	const struct plan *plan;	/* what Axolotl would do (arena) */
	const struct estimate *estimate;	/* per-GPU memory (arena) */
	const struct suggestion *suggestions;	/* nsuggestions (arena) */
	size_t nsuggestions;
	struct finding *findings;	/* nfindings, sorted */
	size_t nfindings;
	struct finding *suppressed;	/* moved by inline comments, sorted;
					   message then reason in hint */
	size_t nsuppressed;
	size_t count[3];	/* findings per enum severity */
	struct finding *head;	/* unsorted, while collecting */
	struct finding *tail;
};

/*
 * Append a finding; strings are copied into a.  Returns 0 or ERR_NOMEM.
 * The message is printf-formatted.
 */
int report_add(struct report *r, struct arena *a, const char *rule,
    enum severity sev, const char *path, unsigned line, unsigned col,
    const char *hint, const char *fmt, ...)
    __attribute__((format(printf, 9, 10)));

/* report_add() with the message's arguments in ap. */
int report_addv(struct report *r, struct arena *a, const char *rule,
    enum severity sev, const char *path, unsigned line, unsigned col,
    const char *hint, const char *fmt, va_list ap)
    __attribute__((format(printf, 9, 0)));

/* Findings (and suppressed findings) a report keeps at most; past it
   the most severe are kept and one report.truncated note counts the
   rest (report_finish). */
#define REPORT_MAX_FINDINGS 1000

/* Sort the findings (line, then rule id), cap them at
   REPORT_MAX_FINDINGS, and set the verdict from every finding. */
int report_finish(struct report *r, struct arena *a, struct err *e);

const char *severity_name(enum severity s);	/* "info" ... */
const char *verdict_name(enum verdict v);	/* "pass" ... */

#endif /* CORE_REPORT_H */
