/*
 * tests/bench/core_bench: the whole core check (document, config, plan,
 * rules) over every file given, PASSES times, next to libyaml alone
 * parsing the same bytes the same number of times, then the two report
 * encodings on top: text (what `preflight check` prints by default) and
 * JSON (the text the daemon stores and answers with).  Prints the times
 * and their ratios to libyaml (issue #3: within 4x; issue #6: target 2x),
 * and the split: parse (the document layer, libyaml included), plan,
 * estimate, and the rest (config model, rules, suggestions, report).
 * With --scale FILE: time per check of FILE grown to 10 .. 10,000 lines
 * (dataset entries appended), to show the growth is linear.
 * Usage: core_bench PASSES FILE... | core_bench --scale FILE
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <yaml.h>

#include "api/encode.h"
#include "core/arena.h"
#include "core/check.h"
#include "core/doc.h"
#include "core/estimate.h"
#include "core/plan.h"
#include "tests/fixture.h"

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Microseconds per check of text (len bytes), best of several rounds. */
static double
us_per_check(const char *text, size_t len, const struct context *ctx,
    const struct limits *lim)
{
	double best = 1e30, t0, t;
	int round, k, reps = len > 100000 ? 20 : 200;

	for (round = 0; round < 5; round++) {
		t0 = now();
		for (k = 0; k < reps; k++) {
			struct arena a;
			struct err e = { 0 };
			struct report *r;

			arena_init(&a, (size_t)64 << 20);
			if (check_run(&r, text, len, ctx, lim, &a, &e) != 0) {
				fprintf(stderr, "scale: %s\n", e.msg);
				exit(1);
			}
			arena_fini(&a);
		}
		t = (now() - t0) * 1e6 / reps;
		if (t < best)
			best = t;
	}
	return best;
}

static int
scale(const char *path)
{
	static const long sizes[] = { 10, 100, 1000, 10000 };
	struct context ctx;
	struct limits lim;
	size_t len, i, cap, n;
	char *base = fixture_read(path, &len), *text;
	long lines = 0;
	double us;

	if (base == NULL)
		return 1;
	context_default(&ctx);
	ctx.gpus = 8;
	limits_default(&lim);
	for (i = 0; i < len; i++)
		lines += base[i] == '\n';
	cap = len + 64 * 10000 + 64;
	text = malloc(cap);
	if (text == NULL)
		return 1;
	printf("%8s %10s %12s %12s\n", "lines", "bytes", "us/check",
	    "us/line");
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		long want = sizes[i], have;

		/* The first want lines of the file, or the file and extra
		   dataset entries (2 lines each) up to want. */
		n = 0;
		for (have = 0; n < len && have < want; n++)
			have += base[n] == '\n';
		memcpy(text, base, n);
		if (have < want && n == len)
			n += (size_t)snprintf(text + n, cap - n,
			    "\ndatasets:\n");
		for (have += 2; have < want; have += 2)
			n += (size_t)snprintf(text + n, cap - n,
			    "  - path: org/ds-%ld\n    type: alpaca\n", have);
		text[n] = '\0';
		us = us_per_check(text, n, &ctx, &lim);
		printf("%8ld %10zu %12.1f %12.3f\n", want, n, us,
		    us / (double)want);
	}
	(void)lines;
	free(text);
	free(base);
	return 0;
}

/* One pass's seconds per phase, each over every file. */
struct pass {
	double yaml, core, parse, plan, est, text, json;	/* plan: with
								   its parse */
};

static int
by_double(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;

	return a < b ? -1 : a > b;
}

/* libyaml's events for every file, nothing built: the floor. */
static void
yaml_only(char **bufs, const size_t *lens, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		yaml_parser_t y;
		yaml_event_t ev;
		int done = 0;

		yaml_parser_initialize(&y);
		yaml_parser_set_input_string(&y,
		    (const unsigned char *)bufs[i], lens[i]);
		while (!done && yaml_parser_parse(&y, &ev)) {
			done = ev.type == YAML_STREAM_END_EVENT;
			yaml_event_delete(&ev);
		}
		yaml_parser_delete(&y);
	}
}

static void
one_pass(struct pass *t, char **bufs, const size_t *lens, char **names,
    int n, const struct context *ctx, const struct limits *lim,
    struct arena *arenas, struct report **reps, FILE *null)
{
	struct context rc = *ctx;
	struct err e = { 0 };
	double t0;
	int i;

	context_resolve(&rc, &e);
	t0 = now();
	yaml_only(bufs, lens, n);
	t->yaml = now() - t0;
	/* The whole check, each request's memory freed before the next as
	   in the CLI and the daemon. */
	t0 = now();
	for (i = 0; i < n; i++) {
		struct arena a;
		struct report *r;

		arena_init(&a, (size_t)64 << 20);
		(void)check_run(&r, bufs[i], lens[i], ctx, lim, &a, &e);
		arena_fini(&a);
	}
	t->core = now() - t0;
	/* Again, untimed, keeping the reports for the encoders. */
	for (i = 0; i < n; i++) {
		arena_init(&arenas[i], (size_t)64 << 20);
		if (check_run(&reps[i], bufs[i], lens[i], ctx, lim,
		    &arenas[i], &e) != 0)
			reps[i] = NULL;
	}
	t0 = now();
	for (i = 0; i < n; i++)
		if (reps[i] != NULL) {
			struct estimate est;

			estimate_run(&est, reps[i]->doc, reps[i]->plan,
			    &reps[i]->ctx);
		}
	t->est = now() - t0;
	t0 = now();
	for (i = 0; i < n; i++)
		if (reps[i] != NULL)
			encode_report_text(null, reps[i], names[i], NULL);
	t->text = now() - t0;
	t0 = now();
	for (i = 0; i < n; i++)
		if (reps[i] != NULL)
			free(encode_report_json_text(reps[i], names[i], NULL));
	t->json = now() - t0;
	for (i = 0; i < n; i++)
		arena_fini(&arenas[i]);
	/* The split: the document alone, then the plan on top of it. */
	t0 = now();
	for (i = 0; i < n; i++) {
		struct arena a;
		struct doc *d;

		arena_init(&a, (size_t)64 << 20);
		(void)doc_parse(&d, bufs[i], lens[i], lim, &a, &e);
		arena_fini(&a);
	}
	t->parse = now() - t0;
	t0 = now();
	for (i = 0; i < n; i++) {
		struct arena a;
		struct doc *d;
		struct plan pl;

		arena_init(&a, (size_t)64 << 20);
		if (doc_parse(&d, bufs[i], lens[i], lim, &a, &e) == 0)
			(void)plan_build(&pl, d, &rc, &a, &e);
		arena_fini(&a);
	}
	t->plan = now() - t0;	/* document and plan */
}

/* The best pass of a phase, in microseconds per config. */
#define BEST(field) best_of(ts, passes, offsetof(struct pass, field), n)

static double
best_of(const struct pass *ts, long passes, size_t off, int n)
{
	double b = 1e30, v;
	long p;

	for (p = 0; p < passes; p++) {
		memcpy(&v, (const char *)&ts[p] + off, sizeof(v));
		if (v < b)
			b = v;
	}
	return b * 1e6 / n;
}

/* The median over passes of (phase a + phase b) / libyaml. */
static double
median_ratio(const struct pass *ts, long passes, size_t a, size_t b)
{
	double *r = calloc((size_t)passes, sizeof(*r)), va, vb = 0, m;
	long p;

	if (r == NULL)
		return 0;
	for (p = 0; p < passes; p++) {
		memcpy(&va, (const char *)&ts[p] + a, sizeof(va));
		if (b != a)
			memcpy(&vb, (const char *)&ts[p] + b, sizeof(vb));
		r[p] = (va + (b != a ? vb : 0)) / ts[p].yaml;
	}
	qsort(r, (size_t)passes, sizeof(*r), by_double);
	m = passes % 2 ? r[passes / 2] :
	    (r[passes / 2 - 1] + r[passes / 2]) / 2;
	free(r);
	return m;
}

int
main(int argc, char **argv)
{
	struct context ctx;
	struct limits lim;
	struct pass *ts;
	struct arena *arenas;
	struct report **reps;
	char **bufs;
	size_t *lens;
	long passes, p;
	double yaml, core, parse, plan, est;
	FILE *null = fopen("/dev/null", "w");
	int i, n;
	const size_t core_off = offsetof(struct pass, core);

	if (argc == 3 && strcmp(argv[1], "--scale") == 0)
		return scale(argv[2]);
	if (argc < 3 || null == NULL)
		return 2;
	passes = strtol(argv[1], NULL, 10);
	if (passes < 1)
		return 2;
	n = argc - 2;
	bufs = calloc((size_t)n, sizeof(*bufs));
	lens = calloc((size_t)n, sizeof(*lens));
	arenas = calloc((size_t)n, sizeof(*arenas));
	reps = calloc((size_t)n, sizeof(*reps));
	ts = calloc((size_t)passes, sizeof(*ts));
	if (bufs == NULL || lens == NULL || arenas == NULL || reps == NULL ||
	    ts == NULL)
		return 1;
	for (i = 0; i < n; i++)
		if ((bufs[i] = fixture_read(argv[i + 2], &lens[i])) == NULL)
			return 1;
	context_default(&ctx);
	ctx.gpus = 8;
	limits_default(&lim);
	for (p = 0; p < passes; p++)
		one_pass(&ts[p], bufs, lens, argv + 2, n, &ctx, &lim, arenas,
		    reps, null);
	yaml = BEST(yaml);
	core = BEST(core);
	parse = BEST(parse);
	plan = BEST(plan) - parse;
	est = BEST(est);
	printf("files %d x %ld passes (best pass per phase, us per config)\n",
	    n, passes);
	printf("libyaml alone        %8.1f\n", yaml);
	printf("preflight core       %8.1f\n", core);
	printf("  parse (document)   %8.1f\n", parse);
	printf("  plan               %8.1f\n", plan);
	printf("  estimate           %8.1f\n", est);
	printf("  config+rules+rest  %8.1f\n", core - parse - plan - est);
	printf("  + text report      %8.1f\n", BEST(text));
	printf("  + JSON report      %8.1f\n", BEST(json));
	printf("ratio core/libyaml         %5.2f  (best passes; median of "
	    "per-pass ratios %.2f)\n", core / yaml,
	    median_ratio(ts, passes, core_off, core_off));
	printf("ratio core+text/libyaml    %5.2f  (preflight check, default "
	    "output)\n", median_ratio(ts, passes, core_off,
	    offsetof(struct pass, text)));
	printf("ratio core+JSON/libyaml    %5.2f\n", median_ratio(ts, passes,
	    core_off, offsetof(struct pass, json)));
	fclose(null);
	for (i = 0; i < n; i++)
		free(bufs[i]);
	free(bufs);
	free(lens);
	free(arenas);
	free(reps);
	free(ts);
	return 0;
}
