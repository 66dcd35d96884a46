/*
 * server/hfcache: see hfcache.h.
 */
#include "hfcache.h"

#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/doc.h"
#include "core/hfconfig.h"
#include "server/file.h"

#define CONFIG_MAX_BYTES (1 << 20)

int
hfcache_check_dir(const char *dir, char *why, size_t cap)
{
	struct stat st;

	if (stat(dir, &st) != 0) {
		snprintf(why, cap, "%s: %s", dir, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode) || access(dir, R_OK | X_OK) != 0) {
		snprintf(why, cap, "%s: not a readable directory", dir);
		return -1;
	}
	return 0;
}

/* One path component of a hub id or revision: [A-Za-z0-9._-], 1 to 96
   bytes, not starting with a dot. */
static bool
plain_part(const char *s, size_t n)
{
	size_t i;

	if (n == 0 || n > 96 || s[0] == '.')
		return false;
	for (i = 0; i < n; i++) {
		char c = s[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9') || c == '.' || c == '_' ||
		    c == '-'))
			return false;
	}
	return true;
}

/* "models--ORG--NAME" for a plain id, else -1. */
static int
repo_dir(char *out, size_t cap, const char *id)
{
	const char *slash = strchr(id, '/');
	int n;

	if (slash == NULL) {
		if (!plain_part(id, strlen(id)))
			return -1;
		n = snprintf(out, cap, "models--%s", id);
	} else {
		if (!plain_part(id, (size_t)(slash - id)) ||
		    !plain_part(slash + 1, strlen(slash + 1)))
			return -1;
		n = snprintf(out, cap, "models--%.*s--%s", (int)(slash - id),
		    id, slash + 1);
	}
	return n > 0 && (size_t)n < cap ? 0 : -1;
}

/* A regular file of 1 to max bytes (never a FIFO or device, which
   could block a request), malloc'd and NUL-terminated; else NULL. */
static char *
slurp(const char *path, size_t max, size_t *len)
{
	struct stat st;
	char *buf;

	if (stat(path, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= 0 ||
	    (size_t)st.st_size > max || file_read(&buf, len, path, max) != 0)
		return NULL;
	if (*len == 0 || *len > max) {
		free(buf);
		return NULL;
	}
	return buf;
}

/* The snapshot revision: refs/main, else the only snapshot there is. */
static int
revision(char *out, size_t cap, const char base[3072])
{
	char path[4096];
	char *ref;
	size_t n = 0, found = 0;
	DIR *d;
	struct dirent *de;

	snprintf(path, sizeof(path), "%s/refs/main", base);
	ref = slurp(path, 256, &n);
	if (ref != NULL) {
		while (n > 0 && (ref[n - 1] == '\n' || ref[n - 1] == '\r' ||
		    ref[n - 1] == ' '))
			ref[--n] = '\0';
		if (plain_part(ref, n) && n < cap) {
			memcpy(out, ref, n + 1);
			free(ref);
			return 0;
		}
		free(ref);
		return -1;
	}
	snprintf(path, sizeof(path), "%s/snapshots", base);
	d = opendir(path);
	if (d == NULL)
		return -1;
	while ((de = readdir(d)) != NULL) {
		n = strlen(de->d_name);
		if (!plain_part(de->d_name, n) || n >= cap)
			continue;
		memcpy(out, de->d_name, n + 1);
		found++;
	}
	closedir(d);
	return found == 1 ? 0 : -1;
}

const struct model_def *
hfcache_lookup(const char *dir, const char *id, struct arena *a)
{
	char repo[256], base[3072], rev[128], path[4096];
	const struct model_def *m = NULL;
	struct limits lim;
	struct err e = { 0 };
	char *buf;
	size_t len;
	int n;

	if (dir == NULL || id == NULL || repo_dir(repo, sizeof(repo), id) != 0)
		return NULL;
	n = snprintf(base, sizeof(base), "%s/%s", dir, repo);
	if (n < 0 || (size_t)n >= sizeof(base) ||
	    revision(rev, sizeof(rev), base) != 0)
		return NULL;
	n = snprintf(path, sizeof(path), "%s/snapshots/%s/config.json", base,
	    rev);
	if (n < 0 || (size_t)n >= sizeof(path))
		return NULL;
	buf = slurp(path, CONFIG_MAX_BYTES, &len);
	if (buf == NULL)
		return NULL;
	limits_default(&lim);
	if (hfconfig_parse(&m, buf, len, id, "hf_cache", &lim, a, &e) != 0)
		m = NULL;
	free(buf);
	return m;
}
