/*
 * tests/bench/libyaml_baseline: the floor for preflight's core speed.
 * Parses each file given with libyaml's event API and nothing else,
 * PASSES times, and prints the seconds taken and the events seen.
 * Usage: libyaml_baseline PASSES FILE...
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <yaml.h>

static char *
slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long n;

	if (f == NULL || fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0) {
		if (f != NULL)
			fclose(f);
		return NULL;
	}
	rewind(f);
	buf = malloc((size_t)n + 1);
	if (buf != NULL && fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	*len = (size_t)n;
	return buf;
}

int
main(int argc, char **argv)
{
	struct timespec t0, t1;
	unsigned long long events = 0;
	char **bufs;
	size_t *lens;
	long passes, p;
	int i;

	if (argc < 3)
		return 2;
	passes = strtol(argv[1], NULL, 10);
	bufs = calloc((size_t)argc, sizeof(*bufs));
	lens = calloc((size_t)argc, sizeof(*lens));
	if (bufs == NULL || lens == NULL)
		return 1;
	for (i = 2; i < argc; i++)
		if ((bufs[i] = slurp(argv[i], &lens[i])) == NULL)
			return 1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (p = 0; p < passes; p++)
		for (i = 2; i < argc; i++) {
			yaml_parser_t y;
			yaml_event_t ev;
			int done = 0;

			yaml_parser_initialize(&y);
			yaml_parser_set_input_string(&y,
			    (const unsigned char *)bufs[i], lens[i]);
			while (!done && yaml_parser_parse(&y, &ev)) {
				done = ev.type == YAML_STREAM_END_EVENT;
				events++;
				yaml_event_delete(&ev);
			}
			yaml_parser_delete(&y);
		}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("%.6f %llu\n", (double)(t1.tv_sec - t0.tv_sec) +
	    (double)(t1.tv_nsec - t0.tv_nsec) / 1e9, events);
	for (i = 2; i < argc; i++)
		free(bufs[i]);
	free(bufs);
	free(lens);
	return 0;
}
