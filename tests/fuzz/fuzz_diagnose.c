/*
 * tests/fuzz/fuzz_diagnose: libFuzzer target for the failure-log parser
 * (issue #19): bytes -> core/diagnose (automaton, CUDA OOM numbers,
 * frames, extraction, templates) -> JSON and text.  The first byte picks
 * the limits (small ones reach the cuts) and, with its top bit, holds the
 * log against a config's estimate, so fuzzed OOM numbers reach the
 * calibrated suggestion search.  Any input must give a diagnosis, never a
 * crash, a leak or undefined behaviour.  `make fuzz` builds and runs it;
 * tests/test_diagnose.c runs it over the fixtures.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "api/diagnose.h"
#include "core/arena.h"
#include "core/diagnose.h"
#include "core/doc.h"
#include "core/report.h"
#include "tests/fuzz/fuzz.h"


int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char cfg[] = "base_model: meta-llama/Llama-3.1-8B\n"
	    "adapter: lora\nlora_r: 16\nlora_alpha: 32\n"
	    "lora_target_linear: true\nsequence_len: 8192\n"
	    "micro_batch_size: 4\ndatasets:\n  - path: tatsu-lab/alpaca\n"
	    "    type: alpaca\n";
	struct diag_limits dl;
	struct diag_report *d;
	struct context ctx;
	struct limits lim;
	struct err e = { 0 };
	struct arena a;
	unsigned pick = size > 0 ? data[0] : 0;
	FILE *sink;
	json_t *j;

	diag_limits_default(&dl);
	if ((pick & 1) != 0) {
		dl.max_line = 64 + (pick >> 1 & 7) * 100;
		dl.max_lines = 4 + (pick >> 4 & 7);
		dl.max_bytes = 256 + (size_t)(pick & 0x7E) * 64;
	}
	arena_init(&a, (size_t)64 << 20);
	if (diagnose_log(&d, (const char *)data + (size > 0),
	    size > 0 ? size - 1 : 0, &dl, &a, &e) == 0) {
		if ((pick & 0x80) != 0) {
			context_default(&ctx);
			ctx.gpu = "rtx4090";
			limits_default(&lim);
			diagnose_config(d, cfg, sizeof(cfg) - 1, &ctx, &lim, &a,
			    &e);
		}
		j = diagnose_encode_json(d, "fuzz.log");
		json_decref(j);
		sink = fopen("/dev/null", "w");
		if (sink != NULL) {
			diagnose_encode_text(sink, d, "fuzz.log", false);
			fclose(sink);
		}
	}
	arena_fini(&a);
	return 0;
}
