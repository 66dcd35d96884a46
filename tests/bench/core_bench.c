/*
 * tests/bench/core_bench: the whole core check (document, config, plan,
 * rules) over every file given, PASSES times, next to libyaml alone
 * parsing the same bytes the same number of times, then the two report
 * encodings on top: text (what `preflight check` prints by default) and
 * JSON (the text the daemon stores and answers with).  Prints the times and their ratios to libyaml (issue #3: within
 * 4x; issue #6: target 2x).
 * Usage: core_bench PASSES FILE...
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <yaml.h>

#include "api/encode.h"
#include "core/arena.h"
#include "core/check.h"
#include "core/estimate.h"
#include "tests/fixture.h"

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
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
	FILE *null = fopen("/dev/null", "w");
	int i, n;

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
	printf("files %d x %ld passes\n", n, passes);
	printf("libyaml alone      %8.1f ms  %7.1f us/config\n", t_yaml * 1e3,
	    t_yaml * 1e6 / (double)(n * passes));
	printf("preflight core     %8.1f ms  %7.1f us/config\n",
	    t_core * 1e3, t_core * 1e6 / (double)(n * passes));
	printf("  of which estimate%8.1f ms  %7.1f us/config\n",
	    t_est * 1e3, t_est * 1e6 / (double)(n * passes));
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
