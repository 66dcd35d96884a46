/*
 * tests/fixture_api: see fixture_api.h.
 */
#include "fixture_api.h"

#include <string.h>

#include "core/doc.h"
#include "server/store_sqlite.h"

static int64_t
fake_now(void *env)
{
	struct fixture_fakes *f = env;

	return f->clock_ms++;
}

static void
fake_random(void *env, void *buf, size_t n)
{
	struct fixture_fakes *f = env;
	unsigned char *b = buf;
	size_t i;

	for (i = 0; i < n; i++) {
		f->seed = f->seed * 1103515245u + 12345u;
		b[i] = (unsigned char)(f->seed >> 16);
	}
}

void
fixture_api_ctx(struct api_ctx *ctx, struct store_sqlite *s,
    struct fixture_fakes *f, unsigned seed)
{
	api_ctx_init(ctx);
	ctx->store = store_sqlite_iface(s);
	limits_default(&ctx->lim);
	ctx->max_body = 1 << 20;
	f->clock_ms = 1764670000000;	/* 2025-12-02 */
	f->seed = seed;
	ctx->env = f;
	ctx->now_ms = fake_now;
	ctx->random = fake_random;
}

void
fixture_api_call(struct api_ctx *ctx, struct arena *a,
    struct api_resp *resp, const char *method, const char *path,
    const char *query, const char *ctype, const char *body, size_t len)
{
	struct api_req req;

	memset(&req, 0, sizeof(req));
	req.method = method;
	req.path = path;
	req.query = query;
	req.content_type = ctype;
	req.body = body;
	req.body_len = len;
	req.team = "default";
	req.arena = a;
	api_handle(ctx, &req, resp);
}
