/*
 * server/backup: `preflight backup --db FILE --to FILE`, a copy of the
 * database taken with SQLite's online backup API while the daemon keeps
 * serving.
 *
 * The copy is one sqlite3_backup_step(-1): all pages inside one read
 * transaction, so it is the database as of one commit.  Under WAL a
 * reader does not block the writer, so the daemon keeps committing while
 * the copy runs (a stepwise copy would restart on every commit and might
 * never finish on a busy server).  A new --to file is written beside the
 * target and renamed into place only once it is complete and passes
 * PRAGMA quick_check; with --force an existing database is overwritten
 * through SQLite (its own journal keeps that atomic), which is also how
 * a backup is restored (with the daemon stopped).
 */
#include "backup.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sqlite3.h>

#define BUSY_MS 10000	/* wait for a writer's lock at most this long */

static void
usage(FILE *out)
{
	fprintf(out,
	    "usage: preflight backup --db FILE --to FILE [--force]\n"
	    "\n"
	    "Copy the database with SQLite's online backup API; safe while "
	    "preflight serve\n"
	    "is running on it (the copy is the database as of one commit).\n"
	    "  --db FILE    the database to copy (default: PREFLIGHT_DB)\n"
	    "  --to FILE    where the copy goes; must not exist unless "
	    "--force\n"
	    "  --force      overwrite an existing database at --to (restore:"
	    " stop the\n"
	    "               daemon, then preflight backup --db COPY --to "
	    "LIVE --force)\n"
	    "  -h, --help   this help\n");
}

/* Open path for the backup: no file is ever created by opening. */
static int
open_db(sqlite3 **db, const char *path, int flags)
{
	if (sqlite3_open_v2(path, db, flags, NULL) != SQLITE_OK) {
		fprintf(stderr, "preflight backup: error: %s: %s\n", path,
		    *db != NULL ? sqlite3_errmsg(*db) : "cannot open");
		return -1;
	}
	sqlite3_busy_timeout(*db, BUSY_MS);
	return 0;
}

/* PRAGMA quick_check says "ok", and the schema version into *version. */
static int
verify(sqlite3 *db, const char *path, int *version)
{
	sqlite3_stmt *st = NULL;
	int ok = 0;

	if (sqlite3_prepare_v2(db, "PRAGMA quick_check", -1, &st, NULL) ==
	    SQLITE_OK && sqlite3_step(st) == SQLITE_ROW &&
	    strcmp((const char *)sqlite3_column_text(st, 0), "ok") == 0)
		ok = 1;
	sqlite3_finalize(st);
	st = NULL;
	if (ok && sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &st,
	    NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
		*version = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	if (!ok)
		fprintf(stderr, "preflight backup: error: %s: the copy fails "
		    "PRAGMA quick_check\n", path);
	return ok ? 0 : -1;
}

/* Make the rename of a file in dir durable. */
static void
sync_dir(const char *file)
{
	char dir[4096];
	const char *slash = strrchr(file, '/');
	int fd;

	if (slash == NULL)
		snprintf(dir, sizeof(dir), ".");
	else if (slash == file)
		snprintf(dir, sizeof(dir), "/");
	else
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - file), file);
	fd = open(dir, O_RDONLY);
	if (fd >= 0) {
		(void)fsync(fd);
		close(fd);
	}
}

static int
copy(const char *from, const char *to, bool force)
{
	sqlite3 *src = NULL, *dst = NULL;
	sqlite3_backup *b;
	char tmp[4096];
	struct stat st;
	bool in_place = false;
	int rc, pages = 0, version = 0, code = 1;

	if (stat(from, &st) != 0) {
		fprintf(stderr, "preflight backup: error: %s: %s\n", from,
		    strerror(errno));
		return 1;
	}
	if (stat(to, &st) == 0) {
		if (!force) {
			fprintf(stderr, "preflight backup: error: %s exists "
			    "(--force overwrites it)\n", to);
			return 1;
		}
		in_place = true;
	}
	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.tmp-%ld", to,
	    (long)getpid()) >= sizeof(tmp)) {
		fprintf(stderr, "preflight backup: error: path too long\n");
		return 1;
	}
	if (open_db(&src, from, SQLITE_OPEN_READWRITE) != 0 ||
	    open_db(&dst, in_place ? to : tmp, SQLITE_OPEN_READWRITE |
	    (in_place ? 0 : SQLITE_OPEN_CREATE)) != 0)
		goto out;
	b = sqlite3_backup_init(dst, "main", src, "main");
	if (b == NULL) {
		fprintf(stderr, "preflight backup: error: %s\n",
		    sqlite3_errmsg(dst));
		goto out;
	}
	do {
		rc = sqlite3_backup_step(b, -1);
		if (rc == SQLITE_BUSY || rc == SQLITE_LOCKED)
			sqlite3_sleep(100);
	} while (rc == SQLITE_OK || rc == SQLITE_BUSY || rc == SQLITE_LOCKED);
	pages = sqlite3_backup_pagecount(b);
	sqlite3_backup_finish(b);
	if (rc != SQLITE_DONE) {
		fprintf(stderr, "preflight backup: error: %s\n",
		    sqlite3_errstr(rc));
		goto out;
	}
	if (verify(dst, in_place ? to : tmp, &version) != 0)
		goto out;
	if (sqlite3_close(dst) != SQLITE_OK) {
		fprintf(stderr, "preflight backup: error: cannot close %s\n",
		    tmp);
		dst = NULL;
		goto out;
	}
	dst = NULL;
	if (!in_place) {
		if (rename(tmp, to) != 0) {
			fprintf(stderr, "preflight backup: error: %s: %s\n",
			    to, strerror(errno));
			goto out;
		}
		sync_dir(to);
	}
	printf("backed up %s to %s: %d pages, schema version %d\n", from, to,
	    pages, version);
	code = 0;
out:
	sqlite3_close(dst);
	sqlite3_close(src);
	if (!in_place)
		(void)unlink(tmp);	/* gone already after the rename */
	return code;
}

int
backup_main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "db", required_argument, NULL, 'd' },
		{ "to", required_argument, NULL, 't' },
		{ "force", no_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	const char *db = getenv("PREFLIGHT_DB"), *to = NULL;
	bool force = false;
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 'd':
			db = optarg;
			break;
		case 't':
			to = optarg;
			break;
		case 'f':
			force = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc || db == NULL || db[0] == '\0' || to == NULL) {
		fprintf(stderr, "preflight backup: error: --db FILE and --to "
		    "FILE are required\n");
		usage(stderr);
		return 2;
	}
	if (strcmp(db, to) == 0) {
		fprintf(stderr, "preflight backup: error: --db and --to are "
		    "the same file\n");
		return 2;
	}
	return copy(db, to, force);
}
