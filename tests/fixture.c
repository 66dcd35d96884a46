/*
 * tests/fixture: test helpers (files, processes).
 */
#include "fixture.h"

#include "core/arena.h"
#include "core/check.h"
#include "core/core.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

/* Every test binary builds the core's per-process tables before its
   first test, as main() does before its first check (core/core.h). */
__attribute__((constructor)) static void
fixture_core_init(void)
{
	struct err e = { 0 };

	if (core_init(&e) != 0) {
		fprintf(stderr, "core_init: %s\n", e.msg);
		exit(1);
	}
}

char *
fixture_read(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t n = 0, cap = 0, got;

	if (f == NULL)
		return NULL;
	for (;;) {
		if (n + 1 >= cap) {
			char *nb;

			cap = cap == 0 ? 4096 : cap * 2;
			nb = realloc(buf, cap);
			if (nb == NULL) {
				free(buf);
				fclose(f);
				return NULL;
			}
			buf = nb;
		}
		got = fread(buf + n, 1, cap - n - 1, f);
		if (got == 0)
			break;
		n += got;
	}
	fclose(f);
	buf[n] = '\0';
	if (len != NULL)
		*len = n;
	return buf;
}

int
fixture_write_tmp(char *out, size_t cap, const void *buf, size_t len)
{
	const char *dir = getenv("TMPDIR");
	int fd;
	ssize_t w;
	size_t done = 0;

	snprintf(out, cap, "%s/preflight-test-XXXXXX.yaml",
	    dir != NULL ? dir : "/tmp");
	fd = mkstemps(out, 5);
	if (fd < 0)
		return -1;
	while (done < len) {
		w = write(fd, (const char *)buf + done, len - done);
		if (w <= 0) {
			close(fd);
			return -1;
		}
		done += (size_t)w;
	}
	return close(fd);
}

const char *
fixture_shared(void)
{
	const char *s = getenv("SHARED_DIR");

	return s != NULL ? s : SHARED_DIR;
}

const char *
fixture_bin(void)
{
	const char *s = getenv("PREFLIGHT_BIN");

	return s != NULL ? s : BUILD_DIR "/preflight";
}

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static char *
slurp_fd(int fd, size_t *len)
{
	char *buf;
	struct stat st;
	ssize_t got;
	size_t n = 0;

	if (fstat(fd, &st) != 0)
		return NULL;
	buf = malloc((size_t)st.st_size + 1);
	if (buf == NULL)
		return NULL;
	lseek(fd, 0, SEEK_SET);
	while (n < (size_t)st.st_size) {
		got = read(fd, buf + n, (size_t)st.st_size - n);
		if (got <= 0)
			break;
		n += (size_t)got;
	}
	buf[n] = '\0';
	*len = n;
	return buf;
}

int
fixture_run(struct run *r, char *const argv[], const char *stdin_path)
{
	char outp[] = "/tmp/preflight-out-XXXXXX";
	char errp[] = "/tmp/preflight-err-XXXXXX";
	posix_spawn_file_actions_t fa;
	int ofd, efd, st;
	pid_t pid;
	double t0;

	memset(r, 0, sizeof(*r));
	ofd = mkstemp(outp);
	efd = mkstemp(errp);
	if (ofd < 0 || efd < 0)
		return -1;
	unlink(outp);
	unlink(errp);
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0,
	    stdin_path != NULL ? stdin_path : "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, ofd, 1);
	posix_spawn_file_actions_adddup2(&fa, efd, 2);
	t0 = now();
	if (posix_spawn(&pid, argv[0], &fa, NULL, argv, environ) != 0) {
		posix_spawn_file_actions_destroy(&fa);
		close(ofd);
		close(efd);
		return -1;
	}
	posix_spawn_file_actions_destroy(&fa);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	r->seconds = now() - t0;
	r->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	r->out = slurp_fd(ofd, &r->out_len);
	r->err = slurp_fd(efd, &r->err_len);
	close(ofd);
	close(efd);
	return r->out != NULL && r->err != NULL ? 0 : -1;
}

void
fixture_run_free(struct run *r)
{
	free(r->out);
	free(r->err);
	r->out = r->err = NULL;
}

size_t
fixture_tsv_next(char **cursor, char **f, size_t n)
{
	while (*cursor != NULL && **cursor != '\0') {
		char *line = *cursor, *nl = strchr(line, '\n'), *t;
		size_t k = 1;

		if (nl != NULL)
			*nl = '\0';
		*cursor = nl != NULL ? nl + 1 : NULL;
		if (line[0] == '#' || line[0] == '\0')
			continue;
		f[0] = line;
		while (k < n && (t = strchr(f[k - 1], '\t')) != NULL) {
			*t = '\0';
			f[k++] = t + 1;
		}
		return k;
	}
	return 0;
}

int
fixture_check(struct report **out, const char *text, const char *extra,
    long gpus, const char *gpu, struct arena *a, struct err *e)
{
	struct context ctx;
	struct limits lim;
	size_t n = strlen(text), m = extra != NULL ? strlen(extra) : 0;
	char *buf = ARENA_NEW(a, char, n + m + 2);

	if (buf == NULL)
		return -1;
	memcpy(buf, text, n);
	buf[n] = '\n';
	memcpy(buf + n + 1, extra != NULL ? extra : "", m);
	buf[n + 1 + m] = '\0';
	context_default(&ctx);
	ctx.gpus = gpus;
	ctx.gpu = gpu;
	limits_default(&lim);
	return check_run(out, buf, n + 1 + m, &ctx, &lim, a, e);
}

size_t
fixture_count_configs(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *ent;
	size_t n = 0;

	if (d == NULL)
		return 0;
	while ((ent = readdir(d)) != NULL) {
		char sub[1024];
		size_t l = strlen(ent->d_name);

		if (ent->d_name[0] == '.')
			continue;
		snprintf(sub, sizeof(sub), "%s/%s", dir, ent->d_name);
		if ((l > 5 && strcmp(ent->d_name + l - 5, ".yaml") == 0) ||
		    (l > 4 && strcmp(ent->d_name + l - 4, ".yml") == 0))
			n++;
		else if (ent->d_type == DT_DIR)
			n += fixture_count_configs(sub);
	}
	closedir(d);
	return n;
}
