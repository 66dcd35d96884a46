/*
 * tests/fixture: helpers shared by the test programs: reading files,
 * running the built binary as a user would, temporary files.
 */
#ifndef TESTS_FIXTURE_H
#define TESTS_FIXTURE_H

#include <stddef.h>

/* The whole file, NUL-terminated, malloc'd (free it); NULL on error. */
char *fixture_read(const char *path, size_t *len);

/* Write len bytes to a new temporary file; its path into out (>= 64). */
int fixture_write_tmp(char *out, size_t cap, const void *buf, size_t len);

/* The shared/ folder (SHARED_DIR from the environment or the build). */
const char *fixture_shared(void);

/* The .yaml and .yml files under dir and its subdirectories (hidden
   entries skipped); 0 when dir cannot be read. */
size_t fixture_count_configs(const char *dir);

/* The preflight binary under test (PREFLIGHT_BIN or BUILD_DIR). */
const char *fixture_bin(void);

struct run {
	int status;		/* exit code, or 128 + signal */
	char *out;		/* stdout, malloc'd, NUL-terminated */
	size_t out_len;
	char *err;		/* stderr, malloc'd, NUL-terminated */
	size_t err_len;
	double seconds;		/* wall time of the run */
};

/*
 * Run argv (argv[0] is a path) with stdin from stdin_path (NULL: empty),
 * collecting stdout and stderr.  Returns 0, or -1 if it could not start.
 */
int fixture_run(struct run *r, char *const argv[], const char *stdin_path);

void fixture_run_free(struct run *r);

/*
 * The next data line of a TSV text read in place: *cursor advances past
 * it, '#' comments and empty lines are skipped, and its first n
 * tab-separated fields go to f, NUL-terminated in the text (the last
 * keeps any further tabs).  Returns how many fields the line has (up to
 * n), or 0 at the end.
 */
size_t fixture_tsv_next(char **cursor, char **f, size_t n);

struct arena;
struct err;
struct report;

/*
 * Check text, a newline and extra (NULL: nothing) on gpus x gpu with the
 * rest of the context at its defaults, as a user who appends keys to a
 * config would (the last of duplicate keys wins).  check_run()'s result;
 * the report and the text live in a.
 */
int fixture_check(struct report **out, const char *text, const char *extra,
    long gpus, const char *gpu, struct arena *a, struct err *e);

#endif /* TESTS_FIXTURE_H */
