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

/* Failures are counted per client address and per what was presented
   (the first bytes of the token, "" for none, or the CI signature), so
   that clients sharing an address behind a proxy or NAT cannot lock each
   other out, and a valid token is never refused. */
#define FAIL_KEY 32
#define FAIL_ADDRESS_FACTOR 10	/* an address's budget over all values */

struct fail_slot {
	unsigned char key[FAIL_KEY];	/* address (16), what (16) */
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

/* Is peer an address of this machine's loopback (127/8, ::1, or
   ::ffff:127/104)? */
static bool
peer_is_loopback(const struct sockaddr *peer)
{
	static const unsigned char v6_loop[16] = { [15] = 1 };
	static const unsigned char v4_mapped[12] = { [10] = 0xff, [11] = 0xff };

	if (peer == NULL)
		return false;
	if (peer->sa_family == AF_INET) {
		const struct sockaddr_in *in = (const void *)peer;

		return (ntohl(in->sin_addr.s_addr) >> 24) == 127;
	}
	if (peer->sa_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const void *)peer;
		const unsigned char *b = in6->sin6_addr.s6_addr;

		return memcmp(b, v6_loop, 16) == 0 ||
		    (memcmp(b, v4_mapped, 12) == 0 && b[12] == 127);
	}
	return false;
}

static void
peer_key(unsigned char out[FAIL_KEY], const struct sockaddr *peer,
    const char *what)
{
	size_t n = what != NULL ? strlen(what) : 0;

	memset(out, 0, FAIL_KEY);
	memcpy(out + 16, what != NULL ? what : "", n < 16 ? n : 16);
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
slot_for(struct auth *a, const unsigned char key[FAIL_KEY])
{
	uint32_t h = 2166136261u;
	int i;

	for (i = 0; i < FAIL_KEY; i++)
		h = (h ^ key[i]) * 16777619u;
	return &a->slots[h % FAIL_SLOTS];
}

/* Is the key over its failure budget?  (Caller holds mu.) */
static bool
limited(struct auth *a, const unsigned char key[FAIL_KEY], time_t now)
{
	struct fail_slot *s = slot_for(a, key);

	if (memcmp(s->key, key, FAIL_KEY) != 0 ||
	    now - s->window_start >= (time_t)a->cfg.fail_window_s)
		return false;
	return s->count >= a->cfg.fail_limit;
}

static void
record_failure(struct auth *a, const unsigned char key[FAIL_KEY], time_t now)
{
	struct fail_slot *s = slot_for(a, key);

	if (memcmp(s->key, key, FAIL_KEY) != 0 ||
	    now - s->window_start >= (time_t)a->cfg.fail_window_s) {
		memcpy(s->key, key, FAIL_KEY);
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

/*
 * Count one failure for key (address and what was presented); whether it
 * was already over its budget.  Each address also has a budget over
 * everything it presents (FAIL_ADDRESS_FACTOR times larger), so guessing
 * with ever new tokens is limited too; valid tokens never get here.
 */
static bool
fail(struct auth *a, const unsigned char key[FAIL_KEY])
{
	unsigned char all[FAIL_KEY];
	time_t now = time(NULL);
	struct fail_slot *s;
	bool lim;

	memcpy(all, key, 16);
	memset(all + 16, 0, FAIL_KEY - 16);
	all[16] = '*';		/* no presented value starts with '*' */
	pthread_mutex_lock(&a->mu);
	s = slot_for(a, all);
	lim = limited(a, key, now) || (memcmp(s->key, all, FAIL_KEY) == 0 &&
	    now - s->window_start < (time_t)a->cfg.fail_window_s &&
	    s->count >= a->cfg.fail_limit * FAIL_ADDRESS_FACTOR);
	if (!lim) {
		record_failure(a, key, now);
		record_failure(a, all, now);
	}
	pthread_mutex_unlock(&a->mu);
	return lim;
}

/* What a presented token is counted under: its first 15 bytes. */
static void
token_tag(char out[16], const char *tok)
{
	snprintf(out, 16, "t:%.13s", tok != NULL ? tok : "");
}

enum auth_verdict
auth_request(struct auth *a, enum api_access access, const char *authz,
    const struct sockaddr *peer, bool forwarded, char team[65], bool *admin)
{
	unsigned char key[FAIL_KEY];
	struct store_token t;
	struct err e = { 0 };
	const char *tok;
	char sha[65], tag[16];

	snprintf(team, 65, "default");
	*admin = false;
	switch (access) {
	case ACCESS_OPEN:
		return AUTH_PASS;
	case ACCESS_CI:
		/* Signed with HMAC; the handler verifies the body.  A client
		   whose signatures keep failing is refused before its body
		   is read (auth_ci_failure counts them). */
		snprintf(team, 65, "%s", a->cfg.ci_team);
		peer_key(key, peer, "ci-signature");
		pthread_mutex_lock(&a->mu);
		if (limited(a, key, time(NULL))) {
			pthread_mutex_unlock(&a->mu);
			return AUTH_LIMIT;
		}
		pthread_mutex_unlock(&a->mu);
		return AUTH_PASS;
	case ACCESS_METRICS:
		/* Without a metrics token the counts (every team's verdicts
		   and rules together) are open with --auth none, and only to
		   this machine's loopback when teams have tokens -- not to
		   what a proxy on this machine relays from elsewhere. */
		if (a->cfg.metrics_token == NULL)
			return !a->cfg.tokens || (!forwarded &&
			    peer_is_loopback(peer)) ? AUTH_PASS : AUTH_DENY;
		tok = bearer(authz);
		if (tok != NULL && digest_equal(tok, a->cfg.metrics_token))
			return AUTH_PASS;
		token_tag(tag, tok);
		break;
	case ACCESS_TEAM:
	default:
		if (!a->cfg.tokens) {
			*admin = true;	/* one tenant: everything is visible */
			return AUTH_PASS;
		}
		tok = bearer(authz);
		if (tok != NULL && strlen(tok) < 256 &&
		    digest_sha256_hex(sha, tok, strlen(tok)) == 0 &&
		    store_sqlite_token_find(a->store, sha, &t, &e) == 0) {
			/* A valid token always passes, whatever others
			   sharing its address have tried. */
			snprintf(team, 65, "%s", t.team);
			*admin = t.admin;
			return AUTH_PASS;
		}
		if (e.code != ERR_OK && e.code != ERR_NOTFOUND)
			return AUTH_UNAVAILABLE;
		token_tag(tag, tok);
		break;
	}
	peer_key(key, peer, tag);
	return fail(a, key) ? AUTH_LIMIT : AUTH_DENY;
}

bool
auth_ci_failure(struct auth *a, const struct sockaddr *peer)
{
	unsigned char key[FAIL_KEY];

	peer_key(key, peer, "ci-signature");
	return fail(a, key);
}

int
auth_make_token(char *out, size_t cap, char sha[65])
{
	unsigned char r[32];
	size_t got = 0, k;

	if (cap < 48)
		return -1;
	while (got < 32) {
		ssize_t n = getrandom(r + got, 32 - got, 0);

		if (n < 0 && errno != EINTR)
			return -1;
		if (n > 0)
			got += (size_t)n;
	}
	memcpy(out, "pf_", 3);
	digest_base64url(out + 3, cap - 3, r, sizeof(r));
	k = strlen(out);
	return digest_sha256_hex(sha, out, k);
}
