/*
 * server/quota: see quota.h.  Teams are few (one per token, plus the CI
 * team and "default"); they live in an open-addressing table keyed by
 * name.  Past QUOTA_TEAMS distinct names the rest share one entry, which
 * is stricter, never looser.
 */
#include "quota.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define QUOTA_TEAMS 4096

struct team_quota {
	char team[65];		/* "" while unused */
	double tokens;		/* checks that may start now */
	double refilled_at;	/* monotonic seconds of the last refill */
	long day;		/* UTC day of bytes */
	unsigned long long bytes;	/* stored on that day */
};

struct quota {
	struct quota_config cfg;
	pthread_mutex_t mu;
	struct team_quota t[QUOTA_TEAMS];
};

struct quota *
quota_new(const struct quota_config *cfg)
{
	struct quota *q = calloc(1, sizeof(*q));

	if (q == NULL)
		return NULL;
	q->cfg = *cfg;
	pthread_mutex_init(&q->mu, NULL);
	return q;
}

void
quota_free(struct quota *q)
{
	if (q == NULL)
		return;
	pthread_mutex_destroy(&q->mu);
	free(q);
}

static double
mono(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* The entry of team, created full (caller holds mu). */
static struct team_quota *
entry(struct quota *q, const char *team)
{
	uint32_t h = 2166136261u;
	const char *p;
	size_t i, k;

	for (p = team; *p != '\0'; p++)
		h = (h ^ (unsigned char)*p) * 16777619u;
	for (k = 0; k < QUOTA_TEAMS; k++) {
		struct team_quota *t;

		i = (h + k) % QUOTA_TEAMS;
		t = &q->t[i];
		if (t->team[0] == '\0') {
			snprintf(t->team, sizeof(t->team), "%s", team);
			t->tokens = q->cfg.checks_per_minute;
			t->refilled_at = mono();
			return t;
		}
		if (strncmp(t->team, team, sizeof(t->team) - 1) == 0)
			return t;
	}
	return &q->t[h % QUOTA_TEAMS];	/* full: share */
}

int
quota_admit(struct quota *q, const char *team, bool take)
{
	struct team_quota *t;
	time_t now = time(NULL);
	long day = (long)(now / 86400);
	double rate, wait;
	int retry = 0;

	if (q == NULL || (q->cfg.checks_per_minute == 0 &&
	    q->cfg.bytes_per_day == 0))
		return 0;
	pthread_mutex_lock(&q->mu);
	t = entry(q, team);
	if (q->cfg.bytes_per_day > 0) {
		if (t->day != day) {
			t->day = day;
			t->bytes = 0;
		}
		if (t->bytes >= q->cfg.bytes_per_day)
			retry = (int)(86400 - now % 86400);
	}
	if (retry == 0 && q->cfg.checks_per_minute > 0) {
		double m = mono();

		rate = q->cfg.checks_per_minute / 60.0;
		t->tokens += (m - t->refilled_at) * rate;
		if (t->tokens > q->cfg.checks_per_minute)
			t->tokens = q->cfg.checks_per_minute;
		t->refilled_at = m;
		if (t->tokens >= 1.0) {
			t->tokens -= take ? 1.0 : 0.0;
		} else {
			wait = (1.0 - t->tokens) / rate;
			retry = (int)wait + 1;
		}
	}
	pthread_mutex_unlock(&q->mu);
	return retry;
}

void
quota_charge(struct quota *q, const char *team, size_t bytes)
{
	struct team_quota *t;
	long day = (long)(time(NULL) / 86400);

	if (q == NULL || q->cfg.bytes_per_day == 0)
		return;
	pthread_mutex_lock(&q->mu);
	t = entry(q, team);
	if (t->day != day) {
		t->day = day;
		t->bytes = 0;
	}
	t->bytes += bytes;
	pthread_mutex_unlock(&q->mu);
}
