/*
 * server/http: libmicrohttpd glue.  Moves requests into api_handle() and
 * responses back out, enforces the body limit, adds X-Request-Id, logs one
 * JSON line per request and counts metrics.  A pool of epoll threads
 * runs the handlers; the store serializes what must be serialized.
 */
#ifndef SERVER_HTTP_H
#define SERVER_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "api/api.h"
#include "core/err.h"

struct auth;
struct metrics;
struct quota;
struct http_server;

/*
 * GnuTLS priorities of --tls-cert: TLS 1.2 and 1.3 only, forward-secret
 * key exchange only (no static RSA), AEAD ciphers only (no CBC).
 */
#define HTTP_TLS_PRIORITIES "SECURE128:-VERS-ALL:+VERS-TLS1.3:" \
	"+VERS-TLS1.2:-CIPHER-ALL:+AES-256-GCM:+AES-128-GCM:" \
	"+CHACHA20-POLY1305:-MAC-ALL:+AEAD:-KX-ALL:+ECDHE-ECDSA:" \
	"+ECDHE-RSA:%SERVER_PRECEDENCE"

struct http_config {
	const char *host;	/* numeric IPv4 or IPv6 address */
	uint16_t port;		/* 0: any free port (see http_port) */
	size_t max_body;	/* request body bytes; more -> 413 */
	size_t request_memory;	/* arena budget per request */
	size_t body_memory;	/* request bodies buffered over every
				   connection at once; past it 503; 0: none */
	unsigned conn_limit;	/* simultaneous connections */
	unsigned conn_timeout;	/* seconds of inactivity before close */
	size_t conn_memory;	/* MHD's per-connection buffer */
	unsigned threads;	/* request threads (libmicrohttpd pool) */
	unsigned per_address;	/* connections per client address; 0: no
				   limit */
	unsigned at_once;	/* requests of one team served at once, the
				   rest parked (server/limits.h); 0: none */
	size_t team_memory;	/* bodies and unread answers one team may
				   hold (server/limits.h); 0: none */
	bool loopback_only;	/* --auth none on loopback: refuse a Host
				   that is not a loopback name (DNS
				   rebinding) ... */
	const char *const *allowed_hosts;	/* ... or one of these */
	size_t nallowed_hosts;
	struct auth *auth;	/* who is calling; borrowed */
	struct quota *quota;	/* per-team write quotas, or NULL; borrowed */
	const char *tls_cert;	/* PEM text, or NULL for plain HTTP */
	const char *tls_key;	/* PEM text */
};

/*
 * Start serving.  api and m are borrowed and must outlive the server.
 * Errors: ERR_INTERNAL with the reason (address in use, bad address).
 */
/* Requests of one team parked at most; past them, 429. */
#define HTTP_PARK_MAX 64

int http_start(struct http_server **out, const struct http_config *cfg,
    struct api_ctx *api, struct metrics *m, struct err *e);

/* The port actually bound. */
uint16_t http_port(const struct http_server *s);

/* Stop accepting new connections; in-flight requests go on. */
void http_quiesce(struct http_server *s);

/* Requests started and not yet completed. */
unsigned http_in_flight(struct http_server *s);

/* Stop and free; NULL is a no-op. */
void http_stop(struct http_server *s);

#endif /* SERVER_HTTP_H */
