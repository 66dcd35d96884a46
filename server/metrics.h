/*
 * server/metrics: request and check counters, rendered in Prometheus text
 * format for GET /metrics.  Thread-safe.
 */
#ifndef SERVER_METRICS_H
#define SERVER_METRICS_H

#include <stddef.h>

#include "api/store.h"

struct metrics;
struct report;

/* New metrics; free with metrics_free().  NULL when out of memory. */
struct metrics *metrics_new(void);
void metrics_free(struct metrics *m);

/* One finished request: route pattern, method, status, seconds taken. */
void metrics_request(struct metrics *m, const char *route,
    const char *method, int status, double seconds);

/* One check run (stored or not): verdict and findings per rule. */
void metrics_check(struct metrics *m, const struct report *r);

/* The text exposition into a malloc'd *out.  0, or -1 out of memory. */
int metrics_render(struct metrics *m, const struct store_info *si,
    char **out, size_t *len);

#endif /* SERVER_METRICS_H */
