/*
 * core/suppress: inline suppressions.  A finding moves to the report's
 * `suppressed` list when its line ends with, or the comment-only line
 * above it holds,
 *
 *     # preflight: ignore[rule.id] why this is fine here
 *
 * (several ids comma-separated).  libyaml drops comments, so the raw
 * lines are scanned.  A marker without a reason is itself a warning
 * (suppress.no_reason); under a policy that forbids them, markers are
 * ignored and each is an error (policy.inline_suppression).  No I/O.
 */
#ifndef CORE_SUPPRESS_H
#define CORE_SUPPRESS_H

#include <stdbool.h>
#include <stddef.h>

struct arena;
struct report;

struct err;

/*
 * Apply the markers in buf[0..len) to r's collected findings (before
 * report_finish).  0, or ERR_NOMEM (the request arena is spent) with e
 * set at the marker's line.
 */
int suppress_apply(struct report *r, const char *buf, size_t len,
    bool forbidden, struct arena *a, struct err *e);

#endif /* CORE_SUPPRESS_H */
