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

int
main(int argc, char **argv)
{
	struct context ctx;
	struct limits lim;
	char **bufs;
	size_t *lens;
	long passes, p;
	double t0, t_yaml, t_core, t_json = 0, t_text = 0, t_est = 0;
	double t_parse, t_plan;
	FILE *null = fopen("/dev/null", "w");
	int i, n;

	if (argc == 3 && strcmp(argv[1], "--scale") == 0)
		return scale(argv[2]);
	if (argc < 3 || null == NULL)
		return 2;
	passes = strtol(argv[1], NULL, 10);
	n = argc - 2;
	bufs = calloc((size_t)n, sizeof(*bufs));
	lens = calloc((size_t)n, sizeof(*lens));
	if (bufs == NULL || lens == NULL)
		return 1;
	for (i = 0; i < n; i++)
		if ((bufs[i] = fixture_read(argv[i + 2], &lens[i])) == NULL)
			return 1;
	context_default(&ctx);
	ctx.gpus = 8;
	limits_default(&lim);
	t0 = now();
	for (p = 0; p < passes; p++)
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
	t_yaml = now() - t0;
	t0 = now();
	for (p = 0; p < passes; p++)
		for (i = 0; i < n; i++) {
			struct arena a;
			struct err e = { 0 };
			struct report *r;
			double tj;

			arena_init(&a, (size_t)64 << 20);
			if (check_run(&r, bufs[i], lens[i], &ctx, &lim, &a,
			    &e) == 0) {
				struct estimate est;

				/* The estimate alone, again on the same plan
				   (issue #8: under 20 us per config). */
				tj = now();
				estimate_run(&est, r->doc, r->plan, &r->ctx);
				t_est += now() - tj;
				tj = now();
				encode_report_text(null, r, argv[i + 2], false);
				t_text += now() - tj;
				tj = now();
				free(encode_report_json_text(r, argv[i + 2],
				    NULL));
				t_json += now() - tj;
			}
			arena_fini(&a);
		}
	t_core = now() - t0 - t_text - t_json - t_est;
	/* The split: the document alone, then the plan on top of it. */
	{
		struct context rc = ctx;
		struct err e = { 0 };

		context_resolve(&rc, &e);
		t0 = now();
		for (p = 0; p < passes; p++)
			for (i = 0; i < n; i++) {
				struct arena a;
				struct doc *d;

				arena_init(&a, (size_t)64 << 20);
				(void)doc_parse(&d, bufs[i], lens[i], &lim, &a,
				    &e);
				arena_fini(&a);
			}
		t_parse = now() - t0;
		t0 = now();
		for (p = 0; p < passes; p++)
			for (i = 0; i < n; i++) {
				struct arena a;
				struct doc *d;
				struct plan pl;

				arena_init(&a, (size_t)64 << 20);
				if (doc_parse(&d, bufs[i], lens[i], &lim, &a,
				    &e) == 0)
					(void)plan_build(&pl, d, &rc, &a);
				arena_fini(&a);
			}
		t_plan = now() - t0 - t_parse;
	}
	printf("files %d x %ld passes\n", n, passes);
	printf("libyaml alone      %8.1f ms  %7.1f us/config\n", t_yaml * 1e3,
	    t_yaml * 1e6 / (double)(n * passes));
	printf("preflight core     %8.1f ms  %7.1f us/config\n",
	    t_core * 1e3, t_core * 1e6 / (double)(n * passes));
	printf("  parse (document) %8.1f ms  %7.1f us/config\n",
	    t_parse * 1e3, t_parse * 1e6 / (double)(n * passes));
	printf("  plan             %8.1f ms  %7.1f us/config\n",
	    t_plan * 1e3, t_plan * 1e6 / (double)(n * passes));
	printf("  estimate         %8.1f ms  %7.1f us/config\n",
	    t_est * 1e3, t_est * 1e6 / (double)(n * passes));
	printf("  config+rules+rest%8.1f ms  %7.1f us/config\n",
	    (t_core - t_parse - t_plan - t_est) * 1e3,
	    (t_core - t_parse - t_plan - t_est) * 1e6 /
	    (double)(n * passes));
	printf("  + text report    %8.1f ms  %7.1f us/config\n",
	    t_text * 1e3, t_text * 1e6 / (double)(n * passes));
	printf("  + JSON report    %8.1f ms  %7.1f us/config\n",
	    t_json * 1e3, t_json * 1e6 / (double)(n * passes));
	printf("ratio core/libyaml        %5.2f\n", t_core / t_yaml);
	printf("ratio core+text/libyaml   %5.2f   (preflight check, default "
	    "output)\n", (t_core + t_text) / t_yaml);
	printf("ratio core+JSON/libyaml   %5.2f\n", (t_core + t_json) / t_yaml);
	fclose(null);
	for (i = 0; i < n; i++)
		free(bufs[i]);
	free(bufs);
	free(lens);
	return 0;
}
