/*
 * server/serve_opts: see serve_opts.h.  Each option is applied by one
 * function whatever its source (a flag or PREFLIGHT_<FLAG>), so both give
 * the same errors; all of them are reported before serve refuses to start.
 */
#include "server/serve_opts.h"

#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/file.h"
#include "server/hfcache.h"

/* "1MiB", "512KiB", "65536": bytes; -1 if malformed or out of range. */
static int
parse_size(size_t *out, const char *s)
{
	char *end;
	unsigned long long v;
	unsigned long long mul = 1;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno != 0 || end == s)
		return -1;
	if (strcmp(end, "") == 0 || strcmp(end, "B") == 0)
		mul = 1;
	else if (strcmp(end, "KiB") == 0 || strcmp(end, "K") == 0)
		mul = 1024;
	else if (strcmp(end, "MiB") == 0 || strcmp(end, "M") == 0)
		mul = 1024 * 1024;
	else if (strcmp(end, "GiB") == 0 || strcmp(end, "G") == 0)
		mul = 1024ULL * 1024 * 1024;
	else
		return -1;
	if (v == 0 || v > (64ULL << 30) / mul)
		return -1;
	*out = (size_t)(v * mul);
	return 0;
}

/* "127.0.0.1:8080", "[::1]:8080", ":8080" -> host and port. */
static int
parse_listen(struct serve_opts *o, const char *s)
{
	const char *colon;
	char *end;
	unsigned long port;
	size_t hl;

	if (s[0] == '[') {
		const char *rb = strchr(s, ']');

		if (rb == NULL || rb[1] != ':')
			return -1;
		hl = (size_t)(rb - s - 1);
		if (hl == 0 || hl >= sizeof(o->host))
			return -1;
		memcpy(o->host, s + 1, hl);
		o->host[hl] = '\0';
		colon = rb + 1;
	} else {
		colon = strrchr(s, ':');
		if (colon == NULL)
			return -1;
		hl = (size_t)(colon - s);
		if (hl >= sizeof(o->host))
			return -1;
		memcpy(o->host, s, hl);
		o->host[hl] = '\0';
		if (hl == 0)
			snprintf(o->host, sizeof(o->host), "127.0.0.1");
	}
	errno = 0;
	port = strtoul(colon + 1, &end, 10);
	if (errno != 0 || end == colon + 1 || *end != '\0' || port > 65535)
		return -1;
	o->port = (unsigned)port;
	return 0;
}

bool
serve_is_loopback(const char *host)
{
	struct in_addr a4;
	struct in6_addr a6;

	if (inet_pton(AF_INET, host, &a4) == 1)
		return (ntohl(a4.s_addr) >> 24) == 127;
	if (inet_pton(AF_INET6, host, &a6) == 1)
		return IN6_IS_ADDR_LOOPBACK(&a6);
	return false;
}

static void
serve_usage(FILE *out)
{
	fprintf(out,
"usage: preflight serve [-n] [options]\n"
"\n"
"The HTTP API (openapi.yaml) with every check stored in one SQLite file.\n"
"  -n                          check the options and the database, then "
"exit\n"
"  --listen ADDR:PORT          where to listen (default 127.0.0.1:8080)\n"
"  --db FILE                   the database (default data/preflight.db)\n"
"  --auth none|token           bearer tokens on /v1 (default none; "
"required\n"
"                              off loopback unless --insecure-no-auth)\n"
"  --insecure-no-auth          allow --auth none on a non-loopback "
"address\n"
"  --max-body SIZE             largest request body (default 1MiB)\n"
"  --request-memory SIZE       memory budget per request (default "
"64MiB)\n"
"  --body-memory SIZE          request bodies buffered over all "
"connections\n"
"                              (default 256MiB), then 503; a team's\n"
"                              bodies and unread answers: a quarter\n"
"  --retain-days N             delete checks older than N days (default 0:"
" keep)\n"
"  --durability normal|full    fsync every commit with full (default "
"normal)\n"
"  --cors-origin ORIGIN        allow a browser origin (repeatable; default"
" none)\n"
"  --allowed-host NAME         with --auth none on loopback, a Host name "
"besides\n"
"                              localhost and 127.0.0.1 to answer (a proxy's;"
"\n"
"                              repeatable)\n"
"  --log FILE                  JSON log lines (default stderr; reopened "
"on SIGHUP)\n"
"  --max-connections N         open connections (default 1000)\n"
"  --max-connections-per-address N   open connections per client address\n"
"                              (default 64; 0: no limit, e.g. behind a "
"proxy)\n"
"  --connection-timeout SEC    idle connection timeout, and the most a\n"
"                              request may take to arrive (default 30)\n"
"  --threads N                 request threads (default 4)\n"
"  --metrics-token TOKEN       protect /metrics (default: open with --auth\n"
"                              none, loopback clients only with tokens)\n"
"  --metrics-token-file FILE   the same, read from a file (not in ps)\n"
"  --quota-checks-per-minute N   checks a team may run a minute "
"(default 3000;\n"
"                              0: no limit), then 429\n"
"  --quota-bytes-per-day SIZE  bytes a team may store a UTC day "
"(default 4GiB;\n"
"                              0: no limit), then 429\n"
"  --quota-at-once N           requests of one team served at once "
"(default 2;\n"
"                              0: no limit; --auth token only); the rest\n"
"                              wait their turn (64 at most, then 429)\n"
"  --query-budget-ms MS        time one read may take (default 2000), "
"then 503\n"
"  --quick-check-interval SEC  PRAGMA quick_check in the background "
"(default 300;\n"
"                              0: only at start)\n"
"  --ci-secret-file FILE       HMAC secret of POST /v1/ci/checks "
"(default:\n"
"                              PREFLIGHT_CI_SECRET; none: the route is "
"off)\n"
"  --ci-team TEAM              team CI checks are stored for (default "
"ci)\n"
"  --tls-cert FILE --tls-key FILE   serve HTTPS (PEM; default: plain "
"HTTP)\n"
"  --policy FILE               the organization's policy, reloaded on "
"SIGHUP\n"
"                              (default: none)\n"
"  --hf-cache DIR              Hugging Face hub cache for config.json of "
"models\n"
"                              the catalog lacks (default: none)\n"
"  -h, --help                  this help\n"
"Each flag can also be set as PREFLIGHT_<FLAG> (PREFLIGHT_LISTEN, "
"PREFLIGHT_DB,\n"
"...; PREFLIGHT_CORS_ORIGIN takes a comma-separated list); flags win.\n");
}

enum {
	OPT_LISTEN = 1000, OPT_DB, OPT_AUTH, OPT_MAX_BODY, OPT_REQ_MEM,
	OPT_RETAIN, OPT_DURABILITY, OPT_CORS, OPT_LOG, OPT_MAXCONN,
	OPT_TIMEOUT, OPT_INSECURE, OPT_POLICY, OPT_THREADS, OPT_METRICS_TOKEN,
	OPT_CI_SECRET_FILE, OPT_CI_TEAM, OPT_TLS_CERT, OPT_TLS_KEY,
	OPT_HF_CACHE, OPT_PER_ADDRESS, OPT_METRICS_TOKEN_FILE, OPT_QUOTA_CPM,
	OPT_QUOTA_BPD, OPT_QUOTA_AT_ONCE, OPT_QUERY_MS, OPT_QUICK_CHECK,
	OPT_BODY_MEM, OPT_ALLOWED_HOST
};

/* The options that take a whole number in a range, and what the error
   says it must be. */
static const struct num_opt {
	int opt;
	long min, max;
	size_t off;		/* of the field in struct serve_opts */
	bool is_long;		/* long retain_days; else unsigned */
	const char *want;	/* after "must be " */
} num_opts[] = {
	{ OPT_RETAIN, 0, 36500, offsetof(struct serve_opts, retain_days),
	  true, "a number of days from 0 (keep all) to 36500" },
	{ OPT_MAXCONN, 1, 100000, offsetof(struct serve_opts, conn_limit),
	  false, "from 1 to 100000" },
	{ OPT_TIMEOUT, 1, 100000, offsetof(struct serve_opts, conn_timeout),
	  false, "from 1 to 100000" },
	{ OPT_THREADS, 1, 64, offsetof(struct serve_opts, threads), false,
	  "from 1 to 64" },
	{ OPT_QUERY_MS, 10, 600000, offsetof(struct serve_opts, query_ms),
	  false, "from 10 to 600000 ms" },
	{ OPT_QUICK_CHECK, 0, 604800,
	  offsetof(struct serve_opts, quick_check_s), false,
	  "from 0 (only at start) to 604800 seconds" },
	{ OPT_PER_ADDRESS, 0, 1000000,
	  offsetof(struct serve_opts, per_address), false,
	  "from 0 (no limit) to 1000000" },
	{ OPT_QUOTA_CPM, 0, 1000000, offsetof(struct serve_opts, quota_cpm),
	  false, "from 0 (no limit) to 1000000" },
	{ OPT_QUOTA_AT_ONCE, 0, 100000,
	  offsetof(struct serve_opts, quota_at_once), false,
	  "from 0 (no limit) to 100000" },
};

/* The options that keep their text as given (a path, a name). */
static const struct text_opt {
	int opt;
	size_t off;		/* of the const char * in struct serve_opts */
} text_opts[] = {
	{ OPT_DB, offsetof(struct serve_opts, db) },
	{ OPT_LOG, offsetof(struct serve_opts, log_path) },
	{ OPT_METRICS_TOKEN_FILE,
	  offsetof(struct serve_opts, metrics_token_file) },
	{ OPT_CI_SECRET_FILE, offsetof(struct serve_opts, ci_secret_file) },
	{ OPT_TLS_CERT, offsetof(struct serve_opts, tls_cert) },
	{ OPT_TLS_KEY, offsetof(struct serve_opts, tls_key) },
	{ OPT_POLICY, offsetof(struct serve_opts, policy_path) },
};

/* A whole-number option of num_opts; 1 when opt is not one. */
static int
apply_number(struct serve_opts *o, int opt, const char *v, const char *src)
{
	const struct num_opt *no = NULL;
	char *end, *field = (char *)o;
	size_t i;
	long n;

	for (i = 0; i < sizeof(num_opts) / sizeof(num_opts[0]); i++)
		if (num_opts[i].opt == opt)
			no = &num_opts[i];
	if (no == NULL)
		return 1;
	errno = 0;
	n = strtol(v, &end, 10);
	if (errno != 0 || end == v || *end != '\0' || n < no->min ||
	    n > no->max) {
		fprintf(stderr, "preflight serve: %s: must be %s, got '%s'\n",
		    src, no->want, v);
		return -1;
	}
	if (no->is_long)
		*(long *)(void *)(field + no->off) = n;
	else
		*(unsigned *)(void *)(field + no->off) = (unsigned)n;
	return 0;
}

/* A text option of text_opts; 1 when opt is not one. */
static int
apply_text(struct serve_opts *o, int opt, const char *v)
{
	char *field = (char *)o;
	size_t i;

	for (i = 0; i < sizeof(text_opts) / sizeof(text_opts[0]); i++)
		if (text_opts[i].opt == opt) {
			*(const char **)(void *)(field + text_opts[i].off) = v;
			return 0;
		}
	return 1;
}

/* A size option (--max-body, --request-memory, --body-memory,
   --quota-bytes-per-day). */
static int
apply_size(struct serve_opts *o, int opt, const char *v, const char *src)
{
	size_t sz;

	if (opt == OPT_QUOTA_BPD) {
		if (strcmp(v, "0") == 0) {
			o->quota_bpd = 0;
			return 0;
		}
		if (parse_size(&sz, v) == 0) {
			o->quota_bpd = sz;
			return 0;
		}
		fprintf(stderr, "preflight serve: %s: '%s' is not a size "
		    "(e.g. 1GiB, 512MiB; 0 for no limit)\n", src, v);
		return -1;
	}
	if (parse_size(opt == OPT_MAX_BODY ? &o->max_body :
	    opt == OPT_REQ_MEM ? &o->request_memory : &o->body_memory,
	    v) == 0)
		return 0;
	fprintf(stderr, "preflight serve: %s: '%s' is not a size "
	    "(e.g. 1MiB, 512KiB, 65536)\n", src, v);
	return -1;
}

/* A repeatable option: --cors-origin or --allowed-host. */
static int
apply_list(struct serve_opts *o, int opt, const char *v, const char *src)
{
	if (opt == OPT_CORS) {
		if (o->ncors < sizeof(o->cors) / sizeof(o->cors[0]) &&
		    (strncmp(v, "http://", 7) == 0 ||
		    strncmp(v, "https://", 8) == 0)) {
			o->cors[o->ncors++] = v;
			return 0;
		}
		fprintf(stderr, "preflight serve: %s: '%s' is not an origin "
		    "like https://form.example.com (at most 16)\n", src, v);
		return -1;
	}
	if (o->nhosts < sizeof(o->hosts) / sizeof(o->hosts[0]) &&
	    strlen(v) > 0 && strlen(v) < 256 &&
	    strcspn(v, " /\t") == strlen(v)) {
		o->hosts[o->nhosts++] = v;
		return 0;
	}
	fprintf(stderr, "preflight serve: %s: '%s' is not a host name "
	    "(at most 16)\n", src, v);
	return -1;
}

/* Apply one option; errors are counted and printed, not fatal here. */
static int
apply(struct serve_opts *o, int opt, const char *v, const char *src)
{
	char why[512];
	int rv;

	if ((rv = apply_number(o, opt, v, src)) != 1 ||
	    (rv = apply_text(o, opt, v)) != 1)
		return rv;
	switch (opt) {
	case OPT_LISTEN:
		if (parse_listen(o, v) == 0)
			return 0;
		fprintf(stderr, "preflight serve: %s: '%s' is not ADDR:PORT "
		    "(e.g. 127.0.0.1:8080)\n", src, v);
		return -1;
	case OPT_AUTH:
		if (strcmp(v, "none") == 0 || strcmp(v, "token") == 0) {
			o->auth = v;
			return 0;
		}
		fprintf(stderr, "preflight serve: %s: must be none or token, "
		    "got '%s'\n", src, v);
		return -1;
	case OPT_MAX_BODY:
	case OPT_REQ_MEM:
	case OPT_BODY_MEM:
	case OPT_QUOTA_BPD:
		return apply_size(o, opt, v, src);
	case OPT_DURABILITY:
		if (strcmp(v, "normal") == 0 || strcmp(v, "full") == 0) {
			o->full_sync = strcmp(v, "full") == 0;
			return 0;
		}
		fprintf(stderr, "preflight serve: %s: must be normal or full, "
		    "got '%s'\n", src, v);
		return -1;
	case OPT_CORS:
	case OPT_ALLOWED_HOST:
		return apply_list(o, opt, v, src);
	case OPT_INSECURE:
		o->insecure_no_auth = true;
		return 0;
	case OPT_METRICS_TOKEN:
		if (strlen(v) >= 16) {
			o->metrics_token = v;
			return 0;
		}
		/* Never echo it (src may be the value itself): it may be the
		   real token, mistyped. */
		fprintf(stderr, "preflight serve: %s: a metrics token needs at "
		    "least 16 characters\n", strncmp(src, "PREFLIGHT_", 10) ==
		    0 ? src : "--metrics-token");
		return -1;
	case OPT_CI_TEAM:
		if (strlen(v) > 0 && strlen(v) <= 64) {
			o->ci_team = v;
			return 0;
		}
		fprintf(stderr, "preflight serve: %s: a team name is 1 to 64 "
		    "bytes\n", src);
		return -1;
	case OPT_HF_CACHE:
		if (hfcache_check_dir(v, why, sizeof(why)) == 0) {
			o->hf_cache = v;
			return 0;
		}
		fprintf(stderr, "preflight serve: %s: %s\n", src, why);
		return -1;
	}
	return -1;
}

static const struct option serve_longopts[] = {
	{ "listen", required_argument, NULL, OPT_LISTEN },
	{ "db", required_argument, NULL, OPT_DB },
	{ "auth", required_argument, NULL, OPT_AUTH },
	{ "max-body", required_argument, NULL, OPT_MAX_BODY },
	{ "request-memory", required_argument, NULL, OPT_REQ_MEM },
	{ "body-memory", required_argument, NULL, OPT_BODY_MEM },
	{ "retain-days", required_argument, NULL, OPT_RETAIN },
	{ "durability", required_argument, NULL, OPT_DURABILITY },
	{ "cors-origin", required_argument, NULL, OPT_CORS },
	{ "allowed-host", required_argument, NULL, OPT_ALLOWED_HOST },
	{ "log", required_argument, NULL, OPT_LOG },
	{ "max-connections", required_argument, NULL, OPT_MAXCONN },
	{ "connection-timeout", required_argument, NULL, OPT_TIMEOUT },
	{ "insecure-no-auth", no_argument, NULL, OPT_INSECURE },
	{ "policy", required_argument, NULL, OPT_POLICY },
	{ "hf-cache", required_argument, NULL, OPT_HF_CACHE },
	{ "threads", required_argument, NULL, OPT_THREADS },
	{ "metrics-token", required_argument, NULL, OPT_METRICS_TOKEN },
	{ "metrics-token-file", required_argument, NULL,
	    OPT_METRICS_TOKEN_FILE },
	{ "max-connections-per-address", required_argument, NULL,
	    OPT_PER_ADDRESS },
	{ "quota-checks-per-minute", required_argument, NULL, OPT_QUOTA_CPM },
	{ "quota-bytes-per-day", required_argument, NULL, OPT_QUOTA_BPD },
	{ "quota-at-once", required_argument, NULL, OPT_QUOTA_AT_ONCE },
	{ "query-budget-ms", required_argument, NULL, OPT_QUERY_MS },
	{ "quick-check-interval", required_argument, NULL, OPT_QUICK_CHECK },
	{ "ci-secret-file", required_argument, NULL, OPT_CI_SECRET_FILE },
	{ "ci-team", required_argument, NULL, OPT_CI_TEAM },
	{ "tls-cert", required_argument, NULL, OPT_TLS_CERT },
	{ "tls-key", required_argument, NULL, OPT_TLS_KEY },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 }
};

/* PREFLIGHT_<FLAG> for every flag; flags given on the command line win. */
static int
apply_env(struct serve_opts *o)
{
	const struct option *lo;
	int bad = 0;

	for (lo = serve_longopts; lo->name != NULL; lo++) {
		char var[64];
		const char *v;
		size_t i;

		if (lo->val == 'h')
			continue;
		snprintf(var, sizeof(var), "PREFLIGHT_%s", lo->name);
		for (i = 10; var[i] != '\0'; i++)
			var[i] = var[i] == '-' ? '_' : (char)(var[i] >= 'a' &&
			    var[i] <= 'z' ? var[i] - 32 : var[i]);
		v = getenv(var);
		if (v == NULL || *v == '\0')
			continue;
		if (lo->val == OPT_CORS || lo->val == OPT_ALLOWED_HOST) {
			/* A comma-separated list. */
			char *copy = strdup(v), *save = NULL, *tok;

			if (copy == NULL)
				return -1;
			for (tok = strtok_r(copy, ",", &save); tok != NULL;
			    tok = strtok_r(NULL, ",", &save))
				bad |= apply(o, lo->val, strdup(tok), var);
			free(copy);
			continue;
		}
		if (lo->has_arg == no_argument) {
			if (strcmp(v, "1") == 0 || strcmp(v, "true") == 0)
				bad |= apply(o, lo->val, v, var);
			continue;
		}
		bad |= apply(o, lo->val, v, var);
	}
	return bad;
}

int
serve_opts_parse(struct serve_opts *o, int argc, char **argv)
{
	int c, bad;

	memset(o, 0, sizeof(*o));
	snprintf(o->host, sizeof(o->host), "127.0.0.1");
	o->port = 8080;
	o->db = "data/preflight.db";
	o->auth = "none";
	o->max_body = 1 << 20;
	o->request_memory = (size_t)64 << 20;
	o->body_memory = (size_t)256 << 20;
	o->conn_limit = 1000;
	o->per_address = 64;
	o->quota_cpm = 3000;
	o->quota_at_once = 2;
	o->quota_bpd = (unsigned long long)4 << 30;
	o->query_ms = 2000;
	o->quick_check_s = 300;
	o->conn_timeout = 30;
	o->threads = 4;
	o->ci_team = "ci";
	bad = apply_env(o);
	optind = 1;
	while ((c = getopt_long(argc, argv, "nh", serve_longopts, NULL)) !=
	    -1) {
		if (c == 'h') {
			serve_usage(stdout);
			exit(0);
		}
		if (c == 'n') {
			o->check_only = true;
			continue;
		}
		if (c == '?') {
			bad = -1;
			continue;
		}
		bad |= apply(o, c, optarg, argv[optind - 1]);
	}
	if (optind < argc) {
		fprintf(stderr, "preflight serve: unexpected argument '%s'\n",
		    argv[optind]);
		bad = -1;
	}
	if (strcmp(o->auth, "none") == 0 && !serve_is_loopback(o->host) &&
	    !o->insecure_no_auth) {
		fprintf(stderr, "preflight serve: refusing to serve without "
		    "authentication on %s, which is not a loopback address; "
		    "listen on 127.0.0.1, or pass --insecure-no-auth\n",
		    o->host);
		bad = -1;
	}
	if (o->metrics_token != NULL && o->metrics_token_file != NULL) {
		fprintf(stderr, "preflight serve: give --metrics-token or "
		    "--metrics-token-file, not both\n");
		bad = -1;
	}
	if ((o->tls_cert == NULL) != (o->tls_key == NULL)) {
		fprintf(stderr, "preflight serve: --tls-cert and --tls-key go "
		    "together\n");
		bad = -1;
	}
	if (bad != 0)
		serve_usage(stderr);
	return bad;
}

/*
 * The whole of a small file (a secret, a PEM) into a malloc'd string,
 * trailing newlines kept unless strip.  NULL and a message on error.
 */
static char *
read_small(const char *path, bool strip, const char *what)
{
	char *buf;
	size_t n;

	if (file_read(&buf, &n, path, 65535) != 0) {
		fprintf(stderr, "preflight serve: cannot read %s %s: %s\n",
		    what, path, strerror(errno));
		return NULL;
	}
	if (n == 0 || n > 65535) {
		fprintf(stderr, "preflight serve: %s %s is empty or larger "
		    "than 64 KiB\n", what, path);
		free(buf);
		return NULL;
	}
	while (strip && n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r'))
		buf[--n] = '\0';
	return buf;
}

int
serve_files_read(struct serve_files *f, struct serve_opts *o)
{
	const char *env = getenv("PREFLIGHT_CI_SECRET");

	memset(f, 0, sizeof(*f));
	if (o->ci_secret_file != NULL) {
		f->ci_secret = read_small(o->ci_secret_file, true,
		    "CI secret");
		if (f->ci_secret == NULL)
			return -1;
	} else if (env != NULL && *env != '\0') {
		f->ci_secret = strdup(env);
	}
	if (f->ci_secret != NULL && strlen(f->ci_secret) < 16) {
		fprintf(stderr, "preflight serve: the CI secret needs at least "
		    "16 characters\n");
		return -1;
	}
	if (o->metrics_token_file != NULL) {
		f->metrics_token = read_small(o->metrics_token_file, true,
		    "metrics token");
		if (f->metrics_token == NULL)
			return -1;
		if (strlen(f->metrics_token) < 16) {
			fprintf(stderr, "preflight serve: the metrics token in "
			    "%s needs at least 16 characters\n",
			    o->metrics_token_file);
			return -1;
		}
		o->metrics_token = f->metrics_token;
	}
	if (o->tls_cert != NULL) {
		f->tls_cert = read_small(o->tls_cert, false,
		    "TLS certificate");
		f->tls_key = read_small(o->tls_key, false, "TLS key");
		if (f->tls_cert == NULL || f->tls_key == NULL)
			return -1;
	}
	return 0;
}

void
serve_files_free(struct serve_files *f)
{
	free(f->ci_secret);
	free(f->metrics_token);
	free(f->tls_cert);
	free(f->tls_key);
	memset(f, 0, sizeof(*f));
}
