/*
 * server/serve: the daemon process.
 *
 * Acquire, then serve: parse flags (each also a PREFLIGHT_* variable),
 * refuse to start on any configuration error (all of them reported),
 * open and migrate the store, block signals, start libmicrohttpd, then
 * take signals with sigwait() in this thread.  SIGTERM/SIGINT: stop
 * accepting, let in-flight requests finish (up to 10 s), close the store,
 * exit 0.  SIGHUP: reopen the log file.
 */
#include "serve.h"

#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "api/api.h"
#include "core/arena.h"
#include "core/policy.h"
#include "server/auth.h"
#include "server/file.h"
#include "server/hfcache.h"
#include "server/http.h"
#include "server/log.h"
#include "server/metrics.h"
#include "server/quota.h"
#include "server/store_sqlite.h"

#define DRAIN_SECONDS 10

struct serve_opts {
	char host[64];
	unsigned port;
	const char *db;
	const char *auth;
	size_t max_body;
	size_t request_memory;
	size_t body_memory;	/* all connections' buffered bodies */
	long retain_days;
	bool full_sync;
	bool insecure_no_auth;
	const char *log_path;
	const char *cors[16];
	size_t ncors;
	const char *hosts[16];	/* --allowed-host: more Host names */
	size_t nhosts;
	unsigned conn_limit;
	unsigned per_address;	/* connections per client address */
	unsigned conn_timeout;
	unsigned threads;
	const char *metrics_token;
	const char *metrics_token_file;
	unsigned quota_cpm;	/* checks per minute per team; 0: none */
	unsigned query_ms;	/* a read's time budget */
	unsigned quick_check_s;	/* between background quick_checks */
	unsigned long long quota_bpd;	/* stored bytes per day per team */
	const char *ci_secret_file;
	const char *ci_team;
	const char *tls_cert;
	const char *tls_key;
	const char *policy_path;
	const char *hf_cache;	/* hub cache for models the catalog lacks */
	bool check_only;	/* -n: check the configuration and exit */
};

/* A loaded policy and the arena it lives in; old ones stay until exit,
   since a request may still be reading one. */
struct policy_gen {
	struct arena arena;
	const struct policy *policy;
	struct policy_gen *older;
};

struct env {
	struct store_sqlite *store;
	struct metrics *m;
	pthread_mutex_t policy_mu;
	struct policy_gen *policy;	/* newest first; NULL: none */
	const char *hf_cache;	/* --hf-cache DIR, or NULL */
};

/* api_ctx.model_lookup: config.json from --hf-cache. */
static const struct model_def *
cached_model(void *envp, const char *id, struct arena *a)
{
	const struct env *env = envp;

	return hfcache_lookup(env->hf_cache, id, a);
}

static const struct policy *
current_policy(void *envp)
{
	struct env *env = envp;
	const struct policy *p;

	pthread_mutex_lock(&env->policy_mu);
	p = env->policy != NULL ? env->policy->policy : NULL;
	pthread_mutex_unlock(&env->policy_mu);
	return p;
}

/* Load path as the new policy; on error keep the old one.  0 or -1. */
static int
load_policy(struct env *env, const char *path, char *why, size_t cap)
{
	struct policy_gen *g = calloc(1, sizeof(*g));
	struct err e = { 0 };
	struct policy *p;
	char *buf = NULL;
	size_t n = 0;

	if (g == NULL) {
		snprintf(why, cap, "out of memory");
		return -1;
	}
	if (file_read(&buf, &n, path, 1 << 20) != 0) {
		snprintf(why, cap, "cannot read %s: %s", path, strerror(errno));
		goto fail;
	}
	if (n > 1 << 20) {	/* was cut at 1 MiB without a word */
		snprintf(why, cap, "%s is larger than 1 MiB", path);
		goto fail;
	}
	arena_init(&g->arena, (size_t)16 << 20);
	if (policy_parse(&p, buf, n, &g->arena, &e) != 0) {
		snprintf(why, cap, "%s:%u:%u: %s", path, e.loc.line, e.loc.col,
		    e.msg);
		arena_fini(&g->arena);
		goto fail;
	}
	free(buf);
	g->policy = p;
	pthread_mutex_lock(&env->policy_mu);
	g->older = env->policy;
	env->policy = g;
	pthread_mutex_unlock(&env->policy_mu);
	return 0;
fail:
	free(buf);
	free(g);
	return -1;
}

static void
free_policies(struct env *env)
{
	struct policy_gen *g, *older;

	for (g = env->policy; g != NULL; g = older) {
		older = g->older;
		arena_fini(&g->arena);
		free(g);
	}
	env->policy = NULL;
}

static int64_t
now_ms(void *env)
{
	struct timespec ts;

	(void)env;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void
random_bytes(void *env, void *buf, size_t n)
{
	unsigned char *p = buf;

	(void)env;
	while (n > 0) {
		ssize_t got = getrandom(p, n, 0);

		if (got < 0) {
			if (errno == EINTR)
				continue;
			/* getrandom cannot fail on Linux >= 3.17; be loud. */
			log_msg("error", "getrandom failed: %s",
			    strerror(errno));
			abort();
		}
		p += got;
		n -= (size_t)got;
	}
}

static int
render_metrics(void *envp, char **out, size_t *len)
{
	struct env *env = envp;
	struct store store = store_sqlite_iface(env->store);
	struct store_info si;

	store.ops->info(store.self, &si);
	return metrics_render(env->m, &si, out, len);
}

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

static bool
is_loopback(const char *host)
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
"                              (default 256MiB), then 503\n"
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
"  --connection-timeout SEC    idle connection timeout (default 30)\n"
"  --threads N                 request threads (default 4)\n"
"  --metrics-token TOKEN       protect /metrics (default: open)\n"
"  --metrics-token-file FILE   the same, read from a file (not in ps)\n"
"  --quota-checks-per-minute N   checks a team may run a minute "
"(default 3000;\n"
"                              0: no limit), then 429\n"
"  --quota-bytes-per-day SIZE  bytes a team may store a UTC day "
"(default 4GiB;\n"
"                              0: no limit), then 429\n"
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
	OPT_QUOTA_BPD, OPT_QUERY_MS, OPT_QUICK_CHECK, OPT_BODY_MEM,
	OPT_ALLOWED_HOST
};

/* Apply one option; errors are counted and printed, not fatal here. */
static int
apply(struct serve_opts *o, int opt, const char *v, const char *src)
{
	long n;
	char *end;

	switch (opt) {
	case OPT_LISTEN:
		if (parse_listen(o, v) == 0)
			return 0;
		fprintf(stderr, "preflight serve: %s: '%s' is not ADDR:PORT "
		    "(e.g. 127.0.0.1:8080)\n", src, v);
		return -1;
	case OPT_DB:
		o->db = v;
		return 0;
	case OPT_AUTH:
		if (strcmp(v, "none") == 0) {
			o->auth = v;
			return 0;
		}
		if (strcmp(v, "token") == 0) {
			o->auth = v;
			return 0;
		}
		fprintf(stderr, "preflight serve: %s: must be none or token, "
		    "got '%s'\n", src, v);
		return -1;
	case OPT_MAX_BODY:
	case OPT_REQ_MEM:
	case OPT_BODY_MEM:
		if (parse_size(opt == OPT_MAX_BODY ? &o->max_body :
		    opt == OPT_REQ_MEM ? &o->request_memory : &o->body_memory,
		    v) == 0)
			return 0;
		fprintf(stderr, "preflight serve: %s: '%s' is not a size "
		    "(e.g. 1MiB, 512KiB, 65536)\n", src, v);
		return -1;
	case OPT_RETAIN:
		errno = 0;
		n = strtol(v, &end, 10);
		if (errno == 0 && end != v && *end == '\0' && n >= 0 &&
		    n <= 36500) {
			o->retain_days = n;
			return 0;
		}
		fprintf(stderr, "preflight serve: %s: must be a number of "
		    "days from 0 (keep all) to 36500, got '%s'\n", src, v);
		return -1;
	case OPT_DURABILITY:
		if (strcmp(v, "normal") == 0 || strcmp(v, "full") == 0) {
			o->full_sync = strcmp(v, "full") == 0;
			return 0;
		}
		fprintf(stderr, "preflight serve: %s: must be normal or full, "
		    "got '%s'\n", src, v);
		return -1;
	case OPT_CORS:
		if (o->ncors < sizeof(o->cors) / sizeof(o->cors[0]) &&
		    (strncmp(v, "http://", 7) == 0 ||
		    strncmp(v, "https://", 8) == 0)) {
			o->cors[o->ncors++] = v;
			return 0;
		}
		fprintf(stderr, "preflight serve: %s: '%s' is not an origin "
		    "like https://form.example.com (at most 16)\n", src, v);
		return -1;
	case OPT_ALLOWED_HOST:
		if (o->nhosts < sizeof(o->hosts) / sizeof(o->hosts[0]) &&
		    strlen(v) > 0 && strlen(v) < 256 &&
		    strcspn(v, " /\t") == strlen(v)) {
			o->hosts[o->nhosts++] = v;
			return 0;
		}
		fprintf(stderr, "preflight serve: %s: '%s' is not a host name "
		    "(at most 16)\n", src, v);
		return -1;
	case OPT_LOG:
		o->log_path = v;
		return 0;
	case OPT_MAXCONN:
	case OPT_TIMEOUT:
	case OPT_THREADS:
		errno = 0;
		n = strtol(v, &end, 10);
		if (errno == 0 && end != v && *end == '\0' && n >= 1 &&
		    n <= (opt == OPT_THREADS ? 64 : 100000)) {
			if (opt == OPT_MAXCONN)
				o->conn_limit = (unsigned)n;
			else if (opt == OPT_TIMEOUT)
				o->conn_timeout = (unsigned)n;
			else
				o->threads = (unsigned)n;
			return 0;
		}
		fprintf(stderr, "preflight serve: %s: must be from 1 to "
		    "%d, got '%s'\n", src, opt == OPT_THREADS ? 64 : 100000, v);
		return -1;
	case OPT_QUERY_MS:
		errno = 0;
		n = strtol(v, &end, 10);
		if (errno == 0 && end != v && *end == '\0' && n >= 10 &&
		    n <= 600000) {
			o->query_ms = (unsigned)n;
			return 0;
		}
		fprintf(stderr, "preflight serve: %s: must be from 10 to "
		    "600000 ms, got '%s'\n", src, v);
		return -1;
	case OPT_QUICK_CHECK:
		errno = 0;
		n = strtol(v, &end, 10);
		if (errno == 0 && end != v && *end == '\0' && n >= 0 &&
		    n <= 604800) {
			o->quick_check_s = (unsigned)n;
			return 0;
		}
		fprintf(stderr, "preflight serve: %s: must be from 0 (only at "
		    "start) to 604800 seconds, got '%s'\n", src, v);
		return -1;
	case OPT_PER_ADDRESS:
	case OPT_QUOTA_CPM:
		errno = 0;
		n = strtol(v, &end, 10);
		if (errno == 0 && end != v && *end == '\0' && n >= 0 &&
		    n <= 1000000) {
			if (opt == OPT_PER_ADDRESS)
				o->per_address = (unsigned)n;
			else
				o->quota_cpm = (unsigned)n;
			return 0;
		}
		fprintf(stderr, "preflight serve: %s: must be from 0 (no "
		    "limit) to 1000000, got '%s'\n", src, v);
		return -1;
	case OPT_QUOTA_BPD: {
		size_t sz;

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
	case OPT_METRICS_TOKEN_FILE:
		o->metrics_token_file = v;
		return 0;
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
	case OPT_CI_SECRET_FILE:
		o->ci_secret_file = v;
		return 0;
	case OPT_CI_TEAM:
		if (strlen(v) > 0 && strlen(v) <= 64) {
			o->ci_team = v;
			return 0;
		}
		fprintf(stderr, "preflight serve: %s: a team name is 1 to 64 "
		    "bytes\n", src);
		return -1;
	case OPT_TLS_CERT:
		o->tls_cert = v;
		return 0;
	case OPT_TLS_KEY:
		o->tls_key = v;
		return 0;
	case OPT_POLICY:
		o->policy_path = v;
		return 0;
	case OPT_HF_CACHE: {
		char why[512];

		if (hfcache_check_dir(v, why, sizeof(why)) == 0) {
			o->hf_cache = v;
			return 0;
		}
		fprintf(stderr, "preflight serve: %s: %s\n", src, why);
		return -1;
	}
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

static int
parse_opts(struct serve_opts *o, int argc, char **argv)
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
	if (strcmp(o->auth, "none") == 0 && !is_loopback(o->host) &&
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

/* mkdir -p the folder holding path (data/ for the default database). */
static void
make_parent(const char *path)
{
	char dir[1024];
	char *slash;
	size_t i;

	if (strcmp(path, ":memory:") == 0 || strlen(path) >= sizeof(dir))
		return;
	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (slash == NULL || slash == dir)
		return;
	*slash = '\0';
	for (i = 1; dir[i] != '\0'; i++)
		if (dir[i] == '/') {
			dir[i] = '\0';
			mkdir(dir, 0750);
			dir[i] = '/';
		}
	mkdir(dir, 0750);
}

/* ---- retention ------------------------------------------------------ */

struct pruner {
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool stop;
	struct store_sqlite *store;
	long days;
};

static void *
prune_loop(void *arg)
{
	struct pruner *p = arg;

	pthread_mutex_lock(&p->mu);
	while (!p->stop) {
		struct timespec until;
		int deleted = 0, total = 0;

		pthread_mutex_unlock(&p->mu);
		do {
			struct err e = { 0 };
			char before[27];

			api_id_floor(before, now_ms(NULL) -
			    (int64_t)p->days * 86400000);
			if (store_sqlite_prune(p->store, before, 500,
			    &deleted, &e) != 0) {
				log_msg("warn", "retention: %s", e.msg);
				break;
			}
			total += deleted;
			if (deleted > 0)
				usleep(20000);	/* let requests in */
		} while (deleted > 0 && !p->stop);
		if (total > 0)
			log_msg("info", "retention: deleted %d checks older "
			    "than %ld days", total, p->days);
		pthread_mutex_lock(&p->mu);
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_sec += 60;
		while (!p->stop && pthread_cond_timedwait(&p->cv, &p->mu,
		    &until) != ETIMEDOUT)
			;
	}
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

/* ---- main loop ------------------------------------------------------ */

int
serve_main(int argc, char **argv)
{
	struct serve_opts o;
	struct env env;
	struct api_ctx api;
	struct http_server *http = NULL;
	struct http_config hc;
	struct pruner pr;
	struct auth *auth = NULL;
	struct auth_config ac;
	char *ci_secret = NULL, *tls_cert = NULL, *tls_key = NULL;
	char *metrics_token = NULL;
	struct quota *quota = NULL;
	struct quota_config qc;
	bool pruning = false, api_ready = false;
	struct err e = { 0 };
	sigset_t set;
	int sig, code = 1;

	memset(&env, 0, sizeof(env));
	pthread_mutex_init(&env.policy_mu, NULL);
	if (parse_opts(&o, argc, argv) != 0)
		return 2;
	if (o.policy_path != NULL) {
		char why[512];

		if (load_policy(&env, o.policy_path, why, sizeof(why)) != 0) {
			fprintf(stderr, "preflight serve: policy: %s\n", why);
			return 2;
		}
	}
	if (o.ci_secret_file != NULL) {
		ci_secret = read_small(o.ci_secret_file, true, "CI secret");
		if (ci_secret == NULL)
			return 2;
	} else if (getenv("PREFLIGHT_CI_SECRET") != NULL &&
	    *getenv("PREFLIGHT_CI_SECRET") != '\0') {
		ci_secret = strdup(getenv("PREFLIGHT_CI_SECRET"));
	}
	if (ci_secret != NULL && strlen(ci_secret) < 16) {
		fprintf(stderr, "preflight serve: the CI secret needs at least "
		    "16 characters\n");
		free(ci_secret);
		return 2;
	}
	if (o.metrics_token_file != NULL) {
		metrics_token = read_small(o.metrics_token_file, true,
		    "metrics token");
		if (metrics_token == NULL || strlen(metrics_token) < 16) {
			if (metrics_token != NULL)
				fprintf(stderr, "preflight serve: the metrics "
				    "token in %s needs at least 16 "
				    "characters\n", o.metrics_token_file);
			free(metrics_token);
			free(ci_secret);
			return 2;
		}
		o.metrics_token = metrics_token;
	}
	if (o.tls_cert != NULL) {
		tls_cert = read_small(o.tls_cert, false, "TLS certificate");
		tls_key = read_small(o.tls_key, false, "TLS key");
		if (tls_cert == NULL || tls_key == NULL) {
			free(tls_cert);
			free(tls_key);
			free(ci_secret);
			free(metrics_token);
			return 2;
		}
	}
	if (log_open(o.log_path) != 0) {
		fprintf(stderr, "preflight serve: cannot open log %s: %s\n",
		    o.log_path, strerror(errno));
		return 2;
	}
	make_parent(o.db);
	if (store_sqlite_open(&env.store, o.db, o.full_sync, &e) != 0) {
		fprintf(stderr, "preflight serve: %s: %s\n", o.db, e.msg);
		goto out;
	}
	store_sqlite_query_budget(env.store, (int)o.query_ms);
	store_sqlite_health_interval(env.store, o.quick_check_s);
	if (o.check_only) {
		printf("configuration OK\n");
		code = 0;
		goto out;
	}
	memset(&ac, 0, sizeof(ac));
	ac.tokens = strcmp(o.auth, "token") == 0;
	ac.metrics_token = o.metrics_token;
	ac.ci_team = o.ci_team;
	ac.fail_limit = 20;
	ac.fail_window_s = 60;
	auth = auth_new(&ac, env.store);
	if (auth == NULL)
		goto out;
	env.m = metrics_new();
	if (env.m == NULL)
		goto out;
	qc.checks_per_minute = o.quota_cpm;
	qc.bytes_per_day = o.quota_bpd;
	quota = quota_new(&qc);
	if (quota == NULL)
		goto out;
	api_ctx_init(&api);
	api_ready = true;
	api.store = store_sqlite_iface(env.store);
	limits_default(&api.lim);
	api.lim.max_bytes = o.max_body;
	api.max_body = o.max_body;
	api.ci_secret = ci_secret;
	api.cors_origins = o.cors;
	api.ncors = o.ncors;
	api.env = &env;
	api.now_ms = now_ms;
	api.random = random_bytes;
	api.metrics = render_metrics;
	api.policy = current_policy;
	if (o.hf_cache != NULL) {
		env.hf_cache = o.hf_cache;
		api.model_lookup = cached_model;
	}

	/* Signals are taken by sigwait here; every thread inherits this. */
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);

	memset(&hc, 0, sizeof(hc));
	hc.host = o.host;
	hc.port = (uint16_t)o.port;
	hc.max_body = o.max_body;
	hc.request_memory = o.request_memory;
	hc.body_memory = o.body_memory;
	hc.conn_limit = o.conn_limit;
	hc.per_address = o.per_address;
	hc.loopback_only = strcmp(o.auth, "none") == 0 && is_loopback(o.host);
	hc.allowed_hosts = o.hosts;
	hc.nallowed_hosts = o.nhosts;
	hc.quota = quota;
	hc.conn_timeout = o.conn_timeout;
	hc.conn_memory = 64 * 1024;
	hc.threads = o.threads;
	hc.auth = auth;
	hc.tls_cert = tls_cert;
	hc.tls_key = tls_key;
	if (http_start(&http, &hc, &api, env.m, &e) != 0) {
		fprintf(stderr, "preflight serve: %s\n", e.msg);
		goto out;
	}
	if (o.retain_days > 0) {
		memset(&pr, 0, sizeof(pr));
		pthread_mutex_init(&pr.mu, NULL);
		pthread_cond_init(&pr.cv, NULL);
		pr.store = env.store;
		pr.days = o.retain_days;
		pruning = pthread_create(&pr.thread, NULL, prune_loop, &pr) ==
		    0;
	}
	log_json("info", json_pack("{s:s, s:s, s:i, s:s, s:s, s:s, s:I, s:s, "
	    "s:b, s:b}",
	    "msg", "listening", "host", o.host, "port", http_port(http),
	    "scheme", tls_cert != NULL ? "https" : "http",
	    "db", o.db, "durability", o.full_sync ? "full" : "normal",
	    "max_body", (json_int_t)o.max_body, "auth", o.auth,
	    "ci_webhook", ci_secret != NULL, "metrics_token",
	    o.metrics_token != NULL));
	for (;;) {
		if (sigwait(&set, &sig) != 0)
			continue;
		if (sig == SIGHUP) {
			char why[512];

			if (log_reopen() != 0)
				log_msg("error", "cannot reopen the log");
			if (o.policy_path != NULL && load_policy(&env,
			    o.policy_path, why, sizeof(why)) != 0)
				log_msg("error", "SIGHUP: policy not reloaded, "
				    "the old one stays: %s", why);
			else if (o.policy_path != NULL)
				log_msg("info", "SIGHUP: policy %s reloaded",
				    o.policy_path);
			log_msg("info", "SIGHUP: log reopened");
			continue;
		}
		break;
	}
	log_msg("info", "%s: draining", sig == SIGTERM ? "SIGTERM" : "SIGINT");
	http_quiesce(http);
	{
		struct timespec t0, t;

		clock_gettime(CLOCK_MONOTONIC, &t0);
		while (http_in_flight(http) > 0) {
			clock_gettime(CLOCK_MONOTONIC, &t);
			if (t.tv_sec - t0.tv_sec >= DRAIN_SECONDS) {
				log_msg("warn", "drain timeout: %u requests "
				    "cut off", http_in_flight(http));
				break;
			}
			usleep(10000);
		}
	}
	code = 0;
out:
	if (pruning) {
		pthread_mutex_lock(&pr.mu);
		pr.stop = true;
		pthread_cond_signal(&pr.cv);
		pthread_mutex_unlock(&pr.mu);
		pthread_join(pr.thread, NULL);
		pthread_cond_destroy(&pr.cv);
		pthread_mutex_destroy(&pr.mu);
	}
	http_stop(http);
	auth_free(auth);
	quota_free(quota);
	store_sqlite_close(env.store);
	metrics_free(env.m);
	free(ci_secret);
	free(metrics_token);
	free(tls_cert);
	free(tls_key);
	free_policies(&env);
	pthread_mutex_destroy(&env.policy_mu);
	if (api_ready)
		api_ctx_fini(&api);
	if (code == 0)
		log_msg("info", "stopped");
	log_close();
	return code;
}

int
migrate_main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "db", required_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	struct store_sqlite *s;
	struct err e = { 0 };
	const char *db = getenv("PREFLIGHT_DB");
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		if (c == 'h') {
			printf("usage: preflight migrate --db FILE\n\nApply "
			    "the pending migrations and print the schema "
			    "version.\n  --db FILE   the database (default: "
			    "PREFLIGHT_DB)\n  -h, --help  this help\n");
			return 0;
		}
		if (c != 'd') {
			fprintf(stderr, "usage: preflight migrate --db FILE\n");
			return 2;
		}
		db = optarg;
	}
	if (db == NULL || optind < argc) {
		fprintf(stderr, "usage: preflight migrate --db FILE\n");
		return 2;
	}
	make_parent(db);
	if (store_sqlite_open(&s, db, false, &e) != 0) {
		fprintf(stderr, "preflight migrate: %s: %s\n", db, e.msg);
		return 1;
	}
	printf("%s: schema version %d\n", db, store_sqlite_version(s));
	store_sqlite_close(s);
	return 0;
}
