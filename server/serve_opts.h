/*
 * server/serve_opts: the options of `preflight serve`, from its flags and
 * PREFLIGHT_* variables (flags win), and the files they name (the CI
 * secret, the metrics token, the TLS pair).  Used by server/serve.c only.
 */
#ifndef SERVER_SERVE_OPTS_H
#define SERVER_SERVE_OPTS_H

#include <stdbool.h>
#include <stddef.h>

/* Every option; strings are borrowed from argv or the environment. */
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
	unsigned quota_at_once;	/* requests per team at once; 0: none */
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

/*
 * Fill o with the defaults, then PREFLIGHT_* variables, then argv's flags
 * (argv[0] is "serve").  Every error is printed (with the usage once);
 * 0, or -1 when any option was wrong.  --help prints the usage and exits.
 */
int serve_opts_parse(struct serve_opts *o, int argc, char **argv);

/* Is host a loopback address (127.0.0.0/8, ::1)? */
bool serve_is_loopback(const char *host);

/* The contents of the files the options name; each malloc'd or NULL. */
struct serve_files {
	char *ci_secret;	/* --ci-secret-file or PREFLIGHT_CI_SECRET */
	char *metrics_token;	/* --metrics-token-file */
	char *tls_cert;		/* PEM */
	char *tls_key;		/* PEM */
};

/*
 * Read them into f (zeroed first) and point o->metrics_token at the
 * file's token.  Prints what is wrong (unreadable, empty, over 64 KiB, a
 * secret or token under 16 characters); 0 or -1.  Free f with
 * serve_files_free either way.
 */
int serve_files_read(struct serve_files *f, struct serve_opts *o);
void serve_files_free(struct serve_files *f);

#endif /* SERVER_SERVE_OPTS_H */
