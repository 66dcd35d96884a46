/*
 * server/serve: the daemon process (its options: server/serve_opts.c).
 *
 * Acquire, then serve: parse flags (each also a PREFLIGHT_* variable),
 * refuse to start on any configuration error (all of them reported),
 * open and migrate the store, block signals, start libmicrohttpd, then
 * take signals with sigwait() in this thread.  SIGTERM/SIGINT: stop
 * accepting, let in-flight requests finish (up to 10 s), close the store,
 * exit 0.  SIGHUP: reopen the log file.
 */
#include "serve.h"

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
#include "server/serve_opts.h"
#include "server/store_sqlite.h"

#define DRAIN_SECONDS 10

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
	bool running;		/* the thread was started */
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

static void
pruner_start(struct pruner *p, struct store_sqlite *store, long days)
{
	memset(p, 0, sizeof(*p));
	if (days <= 0)
		return;
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->cv, NULL);
	p->store = store;
	p->days = days;
	p->running = pthread_create(&p->thread, NULL, prune_loop, p) == 0;
	if (!p->running) {
		pthread_cond_destroy(&p->cv);
		pthread_mutex_destroy(&p->mu);
	}
}

static void
pruner_stop(struct pruner *p)
{
	if (!p->running)
		return;
	pthread_mutex_lock(&p->mu);
	p->stop = true;
	pthread_cond_signal(&p->cv);
	pthread_mutex_unlock(&p->mu);
	pthread_join(p->thread, NULL);
	pthread_cond_destroy(&p->cv);
	pthread_mutex_destroy(&p->mu);
	p->running = false;
}

/* ---- main loop ------------------------------------------------------ */

/* The API's context: the store, the hooks into this process, limits. */
static void
api_setup(struct api_ctx *api, struct env *env, const struct serve_opts *o,
    const char *ci_secret)
{
	api_ctx_init(api);
	api->store = store_sqlite_iface(env->store);
	limits_default(&api->lim);
	api->lim.max_bytes = o->max_body;
	api->max_body = o->max_body;
	api->ci_secret = ci_secret;
	api->cors_origins = o->cors;
	api->ncors = o->ncors;
	api->env = env;
	api->now_ms = now_ms;
	api->random = random_bytes;
	api->metrics = render_metrics;
	api->policy = current_policy;
	if (o->hf_cache != NULL) {
		env->hf_cache = o->hf_cache;
		api->model_lookup = cached_model;
	}
}

/* libmicrohttpd's side of the options. */
static void
http_setup(struct http_config *hc, const struct serve_opts *o,
    struct quota *quota, struct auth *auth, const struct serve_files *f)
{
	memset(hc, 0, sizeof(*hc));
	hc->host = o->host;
	hc->port = (uint16_t)o->port;
	hc->max_body = o->max_body;
	hc->request_memory = o->request_memory;
	hc->body_memory = o->body_memory;
	hc->conn_limit = o->conn_limit;
	hc->per_address = o->per_address;
	hc->loopback_only = strcmp(o->auth, "none") == 0 &&
	    serve_is_loopback(o->host);
	hc->allowed_hosts = o->hosts;
	hc->nallowed_hosts = o->nhosts;
	hc->quota = quota;
	hc->at_once = strcmp(o->auth, "token") == 0 ? o->quota_at_once : 0;
	/* A quarter, never less than one whole body; one tenant (no
	   tokens): all of it. */
	hc->team_memory = o->body_memory /
	    (strcmp(o->auth, "token") == 0 ? 4 : 1);
	if (hc->team_memory > 0 && hc->team_memory < o->max_body)
		hc->team_memory = o->max_body;
	hc->conn_timeout = o->conn_timeout;
	hc->conn_memory = 64 * 1024;
	hc->threads = o->threads;
	hc->auth = auth;
	hc->tls_cert = f->tls_cert;
	hc->tls_key = f->tls_key;
}

/* Take signals until SIGTERM or SIGINT (returned); SIGHUP reopens the
   log and reloads the policy. */
static int
wait_for_stop(const sigset_t *set, struct env *env,
    const struct serve_opts *o)
{
	char why[512];
	int sig;

	for (;;) {
		if (sigwait(set, &sig) != 0)
			continue;
		if (sig != SIGHUP)
			return sig;
		if (log_reopen() != 0)
			log_msg("error", "cannot reopen the log");
		if (o->policy_path != NULL && load_policy(env,
		    o->policy_path, why, sizeof(why)) != 0)
			log_msg("error", "SIGHUP: policy not reloaded, "
			    "the old one stays: %s", why);
		else if (o->policy_path != NULL)
			log_msg("info", "SIGHUP: policy %s reloaded",
			    o->policy_path);
		log_msg("info", "SIGHUP: log reopened");
	}
}

/* Stop accepting and let in-flight requests finish, DRAIN_SECONDS at
   most. */
static void
drain(struct http_server *http)
{
	struct timespec t0, t;

	http_quiesce(http);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (http_in_flight(http) > 0) {
		clock_gettime(CLOCK_MONOTONIC, &t);
		if (t.tv_sec - t0.tv_sec >= DRAIN_SECONDS) {
			log_msg("warn", "drain timeout: %u requests cut off",
			    http_in_flight(http));
			break;
		}
		usleep(10000);
	}
}

int
serve_main(int argc, char **argv)
{
	struct serve_opts o;
	struct serve_files f = { 0 };
	struct env env;
	struct api_ctx api;
	struct http_server *http = NULL;
	struct http_config hc;
	struct pruner pr = { 0 };
	struct auth *auth = NULL;
	struct auth_config ac;
	struct quota *quota = NULL;
	struct quota_config qc;
	bool api_ready = false;
	struct err e = { 0 };
	char why[512];
	sigset_t set;
	int sig, code = 2;

	memset(&env, 0, sizeof(env));
	pthread_mutex_init(&env.policy_mu, NULL);
	if (serve_opts_parse(&o, argc, argv) != 0)
		goto out;
	if (o.policy_path != NULL && load_policy(&env, o.policy_path, why,
	    sizeof(why)) != 0) {
		fprintf(stderr, "preflight serve: policy: %s\n", why);
		goto out;
	}
	if (serve_files_read(&f, &o) != 0)
		goto out;
	if (log_open(o.log_path) != 0) {
		fprintf(stderr, "preflight serve: cannot open log %s: %s\n",
		    o.log_path, strerror(errno));
		goto out;
	}
	code = 1;
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
	qc.checks_per_minute = o.quota_cpm;
	qc.bytes_per_day = o.quota_bpd;
	auth = auth_new(&ac, env.store);
	env.m = metrics_new();
	quota = quota_new(&qc);
	if (auth == NULL || env.m == NULL || quota == NULL)
		goto out;
	api_setup(&api, &env, &o, f.ci_secret);
	api_ready = true;

	/* Signals are taken by sigwait here; every thread inherits this. */
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);

	http_setup(&hc, &o, quota, auth, &f);
	if (http_start(&http, &hc, &api, env.m, &e) != 0) {
		fprintf(stderr, "preflight serve: %s\n", e.msg);
		goto out;
	}
	pruner_start(&pr, env.store, o.retain_days);
	log_json("info", json_pack("{s:s, s:s, s:i, s:s, s:s, s:s, s:I, s:s, "
	    "s:b, s:b}",
	    "msg", "listening", "host", o.host, "port", http_port(http),
	    "scheme", f.tls_cert != NULL ? "https" : "http",
	    "db", o.db, "durability", o.full_sync ? "full" : "normal",
	    "max_body", (json_int_t)o.max_body, "auth", o.auth,
	    "ci_webhook", f.ci_secret != NULL, "metrics_token",
	    o.metrics_token != NULL));
	sig = wait_for_stop(&set, &env, &o);
	log_msg("info", "%s: draining", sig == SIGTERM ? "SIGTERM" : "SIGINT");
	drain(http);
	code = 0;
out:
	pruner_stop(&pr);
	http_stop(http);
	auth_free(auth);
	quota_free(quota);
	store_sqlite_close(env.store);
	metrics_free(env.m);
	serve_files_free(&f);
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
