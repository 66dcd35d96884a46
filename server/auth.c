/*
 * server/auth: bearer tokens and brute-force limits.
 *
 * A presented token is hashed (SHA-256, GnuTLS) and looked up by its hash,
 * so no stored secret is ever compared byte by byte; the metrics token,
 * which is compared directly, goes through digest_equal(), whose running
 * time does not depend on where the first difference is.
 */
#include "auth.h"

#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <time.h>

#include "api/digest.h"
#include "server/store_sqlite.h"

#define FAIL_SLOTS 4096

struct fail_slot {
	unsigned char addr[16];	/* IPv4 mapped into 16 bytes */
	time_t window_start;
	unsigned count;
};

struct auth {
	struct auth_config cfg;
	struct store_sqlite *store;
	pthread_mutex_t mu;
	struct fail_slot slots[FAIL_SLOTS];
};

struct auth *
auth_new(const struct auth_config *cfg, struct store_sqlite *store)
{
	struct auth *a = calloc(1, sizeof(*a));

	if (a == NULL)
		return NULL;
	a->cfg = *cfg;
	a->store = store;
	pthread_mutex_init(&a->mu, NULL);
	return a;
}

void
auth_free(struct auth *a)
{
	if (a == NULL)
		return;
	pthread_mutex_destroy(&a->mu);
	free(a);
}

static void
peer_key(unsigned char out[16], const struct sockaddr *peer)
{
	memset(out, 0, 16);
	if (peer == NULL)
		return;
	if (peer->sa_family == AF_INET) {
		const struct sockaddr_in *in = (const void *)peer;

		out[10] = out[11] = 0xff;
		memcpy(out + 12, &in->sin_addr, 4);
	} else if (peer->sa_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const void *)peer;

		memcpy(out, &in6->sin6_addr, 16);
	}
}

static struct fail_slot *
slot_for(struct auth *a, const unsigned char key[16])
{
	uint32_t h = 2166136261u;
	int i;

	for (i = 0; i < 16; i++)
		h = (h ^ key[i]) * 16777619u;
	return &a->slots[h % FAIL_SLOTS];
}

/* Is the address over its failure budget?  (Caller holds mu.) */
static bool
limited(struct auth *a, const unsigned char key[16], time_t now)
{
	struct fail_slot *s = slot_for(a, key);

	if (memcmp(s->addr, key, 16) != 0 ||
	    now - s->window_start >= (time_t)a->cfg.fail_window_s)
		return false;
	return s->count >= a->cfg.fail_limit;
}

static void
record_failure(struct auth *a, const unsigned char key[16], time_t now)
{
	struct fail_slot *s = slot_for(a, key);

	if (memcmp(s->addr, key, 16) != 0 ||
	    now - s->window_start >= (time_t)a->cfg.fail_window_s) {
		memcpy(s->addr, key, 16);
		s->window_start = now;
		s->count = 0;
	}
	s->count++;
}

static const char *
bearer(const char *authz)
{
	if (authz == NULL || strncasecmp(authz, "Bearer ", 7) != 0)
		return NULL;
	authz += 7;
	while (*authz == ' ')
		authz++;
	return *authz != '\0' ? authz : NULL;
}

enum auth_verdict
auth_request(struct auth *a, const char *method, const char *path,
    const char *authz, const struct sockaddr *peer, char team[65],
    bool *admin)
{
	unsigned char key[16];
	struct store_token t;
	struct err e = { 0 };
	const char *tok;
	char sha[65];
	time_t now = time(NULL);
	bool ok = false, lim;

	snprintf(team, 65, "default");
	*admin = false;
	if (strcmp(path, "/metrics") == 0) {
		if (a->cfg.metrics_token == NULL)
			return AUTH_PASS;
		tok = bearer(authz);
		ok = tok != NULL && digest_equal(tok, a->cfg.metrics_token);
		goto decide;
	}
	/* Probes, CORS preflights and non-API paths (404s) are open. */
	if (strncmp(path, "/v1/", 4) != 0 || strcmp(method, "OPTIONS") == 0)
		return AUTH_PASS;
	if (strncmp(path, "/v1/ci/", 7) == 0) {
		/* Signed with HMAC; the handler verifies the body. */
		snprintf(team, 65, "%s", a->cfg.ci_team);
		return AUTH_PASS;
	}
	if (!a->cfg.tokens) {
		*admin = true;	/* one tenant: everything is visible */
		return AUTH_PASS;
	}
	tok = bearer(authz);
	if (tok != NULL && strlen(tok) < 256 &&
	    digest_sha256_hex(sha, tok, strlen(tok)) == 0 &&
	    store_sqlite_token_find(a->store, sha, &t, &e) == 0) {
		snprintf(team, 65, "%s", t.team);
		*admin = t.admin;
		ok = true;
	}
decide:
	peer_key(key, peer);
	pthread_mutex_lock(&a->mu);
	lim = limited(a, key, now);
	if (!ok && !lim)
		record_failure(a, key, now);
	pthread_mutex_unlock(&a->mu);
	if (lim)
		return AUTH_LIMIT;
	return ok ? AUTH_PASS : AUTH_DENY;
}

int
auth_make_token(char *out, size_t cap, char sha[65])
{
	static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmn"
	    "opqrstuvwxyz0123456789-_";
	unsigned char r[33];
	size_t got = 0, i, k = 3;

	if (cap < 48)
		return -1;
	r[32] = 0;
	while (got < 32) {
		ssize_t n = getrandom(r + got, 32 - got, 0);

		if (n < 0 && errno != EINTR)
			return -1;
		if (n > 0)
			got += (size_t)n;
	}
	memcpy(out, "pf_", 3);
	for (i = 0; i < 32; i += 3) {
		unsigned v = (unsigned)r[i] << 16 | (unsigned)r[i + 1] << 8 |
		    (i + 2 < 32 ? r[i + 2] : 0);

		out[k++] = b64[v >> 18 & 63];
		out[k++] = b64[v >> 12 & 63];
		out[k++] = b64[v >> 6 & 63];
		if (i + 2 < 32)
			out[k++] = b64[v & 63];
	}
	out[k] = '\0';
	return digest_sha256_hex(sha, out, k);
}
