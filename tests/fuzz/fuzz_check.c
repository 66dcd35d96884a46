/*
 * tests/fuzz/fuzz_check: libFuzzer target for the whole check: bytes ->
 * document -> config -> plan -> rules -> estimate -> suggestions -> JSON.
 * Any input must give a report or a clean error, never a crash, a leak or
 * undefined behaviour.  The first byte picks the GPU count and GPU so the
 * context-dependent rules run too.  `make fuzz` builds and runs it.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "api/encode.h"
#include "core/arena.h"
#include "core/check.h"
#include "tests/fuzz/fuzz.h"


int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const gpus[] = { "h100-sxm", "rtx4090", "t4",
	    "mi300x" };
	struct context ctx;
	struct limits lim;
	struct err e = { 0 };
	struct arena a;
	struct report *r;
	unsigned pick = size > 0 ? data[0] : 0;

	context_default(&ctx);
	ctx.gpus = 1L << (pick & 7);
	ctx.gpu = gpus[(pick >> 3) & 3];
	ctx.nodes = (pick & 0x20) != 0 && ctx.gpus >= 2 ? 2 : 1;
	limits_default(&lim);
	arena_init(&a, (size_t)64 << 20);
	if (check_run(&r, (const char *)data + (size > 0),
	    size > 0 ? size - 1 : 0, &ctx, &lim, &a, &e) == 0)
		free(encode_report_json_text(r, "fuzz.yaml", NULL));
	arena_fini(&a);
	return 0;
}
