/*
 * api/replay: see replay.h.  Open addressing over REPLAY_SLOTS entries of
 * (SHA-256 prefix of the id, expiry).  A probe walks past live entries of
 * other ids; an expired entry is reused.  Ids come from signed requests
 * only, so filling the table takes the CI secret.
 */
#include "replay.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "api/digest.h"

struct slot {
	uint64_t h[2];		/* 128 bits of the id's SHA-256 */
	int64_t expires_ms;	/* 0: never used */
};

struct replay {
	pthread_mutex_t mu;
	struct slot s[REPLAY_SLOTS];
};

struct replay *
replay_new(void)
{
	struct replay *r = calloc(1, sizeof(*r));

	if (r == NULL)
		return NULL;
	pthread_mutex_init(&r->mu, NULL);
	return r;
}

void
replay_free(struct replay *r)
{
	if (r == NULL)
		return;
	pthread_mutex_destroy(&r->mu);
	free(r);
}

static uint64_t
hexword(const char *p)
{
	uint64_t v = 0;
	int i;

	for (i = 0; i < 16; i++) {
		char c = p[i];

		v = v << 4 | (uint64_t)(c >= 'a' ? c - 'a' + 10 : c - '0');
	}
	return v;
}

enum replay_result
replay_check(struct replay *r, const char *id, int64_t now_ms,
    int64_t expires_ms)
{
	char hex[65];
	uint64_t h[2];
	struct slot *free_slot = NULL;
	size_t i, k;
	enum replay_result rv = REPLAY_FULL;

	if (digest_sha256_hex(hex, id, strlen(id)) != 0)
		return REPLAY_FULL;
	h[0] = hexword(hex);
	h[1] = hexword(hex + 16);
	pthread_mutex_lock(&r->mu);
	for (k = 0; k < REPLAY_SLOTS; k++) {
		struct slot *s;

		i = (size_t)((h[0] + k) % REPLAY_SLOTS);
		s = &r->s[i];
		if (s->expires_ms == 0) {
			if (free_slot == NULL)
				free_slot = s;
			break;	/* never used: the id is not further on */
		}
		if (s->expires_ms <= now_ms) {
			if (free_slot == NULL)
				free_slot = s;
			continue;	/* expired: reusable, keep looking */
		}
		if (s->h[0] == h[0] && s->h[1] == h[1]) {
			rv = REPLAY_SEEN;
			free_slot = NULL;
			break;
		}
	}
	if (free_slot != NULL) {
		free_slot->h[0] = h[0];
		free_slot->h[1] = h[1];
		free_slot->expires_ms = expires_ms;
		rv = REPLAY_NEW;
	}
	pthread_mutex_unlock(&r->mu);
	return rv;
}
