/*
 * tests/fixture_api: the API without sockets, as test_api, test_faults
 * and the API fuzz target drive it: a context on a store with the test
 * defaults and a fake, deterministic clock and random source.
 */
#ifndef TESTS_FIXTURE_API_H
#define TESTS_FIXTURE_API_H

#include <stddef.h>
#include <stdint.h>

#include "api/api.h"

struct arena;
struct store_sqlite;

/* The fake clock (Unix ms, one step per call) and random source (an LCG
   from seed); ctx.env points at it. */
struct fixture_fakes {
	int64_t clock_ms;
	unsigned seed;
};

/* api_ctx_init() ctx on store s: CLI document limits, 1 MiB bodies, the
   clock at 2025-12-02 and randomness from seed, both kept in f. */
void fixture_api_ctx(struct api_ctx *ctx, struct store_sqlite *s,
    struct fixture_fakes *f, unsigned seed);

/* api_handle() one request of team "default" in arena a; resp is the
   caller's to api_resp_fini(). */
void fixture_api_call(struct api_ctx *ctx, struct arena *a,
    struct api_resp *resp, const char *method, const char *path,
    const char *query, const char *ctype, const char *body, size_t len);

#endif /* TESTS_FIXTURE_API_H */
