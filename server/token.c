/*
 * server/token: manage API tokens.  A new token is printed once; only its
 * SHA-256 is stored, so a lost token is revoked and replaced, never shown
 * again.
 */
#include "token.h"

#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "server/auth.h"
#include "server/store_sqlite.h"

static void
usage(FILE *out)
{
	fprintf(out,
	    "usage: preflight token create --team NAME [--admin] --db FILE\n"
	    "       preflight token list --db FILE\n"
	    "       preflight token revoke ID --db FILE\n"
	    "  --team NAME   the team the token acts for (create; required)\n"
	    "  --admin       the token sees every team (default: its own "
	    "only)\n"
	    "  --db FILE     the database (default: PREFLIGHT_DB)\n"
	    "A new token is printed once; only its SHA-256 is stored.\n");
}

static int64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static bool
valid_team(const char *t)
{
	size_t n = strlen(t), i;

	if (n == 0 || n > 64)
		return false;
	for (i = 0; i < n; i++)
		if (!((t[i] >= 'a' && t[i] <= 'z') || (t[i] >= 'A' &&
		    t[i] <= 'Z') || (t[i] >= '0' && t[i] <= '9') ||
		    t[i] == '-' || t[i] == '_' || t[i] == '.'))
			return false;
	return true;
}

static void
print_token(void *arg, const struct store_token *t)
{
	time_t secs = (time_t)(t->created_at_ms / 1000);
	struct tm tm;
	char when[32];

	(void)arg;
	gmtime_r(&secs, &tm);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
	printf("%lld\t%s\t%s\t%s\t%s\n", t->id, t->team,
	    t->admin ? "admin" : "team", when,
	    t->revoked_at_ms != 0 ? "revoked" : "valid");
}

int
token_main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "team", required_argument, NULL, 't' },
		{ "admin", no_argument, NULL, 'a' },
		{ "db", required_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	const char *team = NULL, *db = getenv("PREFLIGHT_DB"), *verb;
	struct store_sqlite *s = NULL;
	struct err e = { 0 };
	bool admin = false;
	int c, code = 1;

	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		usage(stdout);
		return 0;
	}
	verb = argv[1];
	optind = 2;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 't':
			team = optarg;
			break;
		case 'a':
			admin = true;
			break;
		case 'd':
			db = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (db == NULL) {
		fprintf(stderr, "preflight token: --db FILE is required\n");
		return 2;
	}
	if (strcmp(verb, "create") == 0 && (team == NULL ||
	    !valid_team(team) || optind != argc)) {
		fprintf(stderr, "preflight token create: --team NAME is "
		    "required: 1-64 of [A-Za-z0-9._-]\n");
		return 2;
	}
	if (strcmp(verb, "revoke") == 0 && optind + 1 != argc) {
		fprintf(stderr, "preflight token revoke: give the token id\n");
		return 2;
	}
	if (strcmp(verb, "create") != 0 && strcmp(verb, "list") != 0 &&
	    strcmp(verb, "revoke") != 0) {
		usage(stderr);
		return 2;
	}
	if (store_sqlite_open(&s, db, false, &e) != 0) {
		fprintf(stderr, "preflight token: %s: %s\n", db, e.msg);
		return 1;
	}
	if (strcmp(verb, "create") == 0) {
		char tok[64], sha[65];
		long long id;

		if (auth_make_token(tok, sizeof(tok), sha) != 0 ||
		    store_sqlite_token_add(s, team, admin, sha, now_ms(), &id,
		    &e) != 0) {
			fprintf(stderr, "preflight token create: %s\n",
			    e.code != ERR_OK ? e.msg : "no randomness");
			goto out;
		}
		printf("%s\n", tok);
		fprintf(stderr, "token %lld for team %s%s: shown once, store "
		    "it now\n", id, team, admin ? " (admin)" : "");
	} else if (strcmp(verb, "list") == 0) {
		printf("id\tteam\trole\tcreated\tstate\n");
		if (store_sqlite_token_list(s, print_token, NULL, &e) != 0) {
			fprintf(stderr, "preflight token list: %s\n", e.msg);
			goto out;
		}
	} else {
		char *end;
		long long id;

		errno = 0;
		id = strtoll(argv[optind], &end, 10);
		if (errno != 0 || *end != '\0' || id < 1) {
			fprintf(stderr, "preflight token revoke: '%s' is not a "
			    "token id\n", argv[optind]);
			code = 2;
			goto out;
		}
		if (store_sqlite_token_revoke(s, id, now_ms(), &e) != 0) {
			fprintf(stderr, "preflight token revoke: %s\n", e.msg);
			goto out;
		}
		printf("revoked %lld\n", id);
	}
	code = 0;
out:
	store_sqlite_close(s);
	return code;
}
