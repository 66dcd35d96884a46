/*
 * core/check: the whole core pipeline for one config.
 *
 *   bytes -> core/doc -> (config, plan, rules, estimate: later issues)
 *         -> core/report
 *
 * The CLI, the server and the tests all call check_run(), so a verdict
 * never depends on how it was asked for.
 */
#ifndef CORE_CHECK_H
#define CORE_CHECK_H

#include <stddef.h>

#include "doc.h"
#include "report.h"

/*
 * Check buf[0..len) for ctx under lim.  On success *out is a finished
 * report allocated from a (config_sha256 still empty: the caller hashes).
 * Errors: those of context_resolve() (ERR_SCHEMA) and doc_parse()
 * (ERR_PARSE, ERR_LIMIT, ERR_NOMEM), with e->loc set when the input has a
 * position.  On failure *out is NULL.
 */
int check_run(struct report **out, const char *buf, size_t len,
    const struct context *ctx, const struct limits *lim, struct arena *a,
    struct err *e);

#endif /* CORE_CHECK_H */
