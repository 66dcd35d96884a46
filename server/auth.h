/*
 * server/auth: who is calling.  Bearer tokens (stored hashed, per team),
 * an optional metrics token, and a per-address limit on failed attempts.
 */
#ifndef SERVER_AUTH_H
#define SERVER_AUTH_H

#include <stdbool.h>
#include <sys/socket.h>

#include "api/api.h"

struct store_sqlite;
struct auth;

struct auth_config {
	bool tokens;		/* --auth token */
	const char *metrics_token;	/* protects /metrics, or NULL */
	const char *ci_team;	/* team of /v1/ci/ requests (HMAC) */
	unsigned fail_limit;	/* failed attempts per address and presented
				   token prefix (or CI signature) ... */
	unsigned fail_window_s;	/* ... per this many seconds, then 429 */
};

enum auth_verdict {
	AUTH_PASS,		/* go on as team (admin or not) */
	AUTH_DENY,		/* 401 */
	AUTH_LIMIT,		/* 429: too many failures from this address
				   with this token prefix */
	AUTH_UNAVAILABLE	/* 503: the token store cannot be read */
};

/* New authenticator; store is borrowed.  NULL when out of memory. */
struct auth *auth_new(const struct auth_config *cfg,
    struct store_sqlite *store);
void auth_free(struct auth *a);

/*
 * Decide for one request on a route with the given access (api_route()
 * matched it).  authz is the Authorization header or NULL; peer the
 * client address (may be NULL); forwarded whether the request names a
 * client beyond its peer (Forwarded, X-Forwarded-For, X-Real-IP: a proxy
 * on this machine relays it, so a loopback peer says nothing of who sent
 * it).  On AUTH_PASS, team (65 bytes) and *admin say who it is.  A valid
 * token always passes; failures are counted per (address, first bytes of
 * the presented token).
 */
enum auth_verdict auth_request(struct auth *a, enum api_access access,
    const char *authz, const struct sockaddr *peer, bool forwarded,
    char team[65], bool *admin);

/* Count a refused CI signature from peer; true when that address is now
   over its budget (its next CI calls get 429 before the body is read). */
bool auth_ci_failure(struct auth *a, const struct sockaddr *peer);

/*
 * A new token: "pf_" and 43 URL-safe characters from 32 random bytes,
 * into out (>= 48 bytes); its SHA-256 hex into sha (65).  0 or -1.
 */
int auth_make_token(char *out, size_t cap, char sha[65]);

#endif /* SERVER_AUTH_H */
