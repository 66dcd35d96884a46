/*
 * server/quota: per-team write quotas, so one team cannot fill the disk or
 * the writer queue for everyone.  Two budgets per team: checks per minute
 * (a token bucket refilled continuously, admitting bursts up to the
 * per-minute figure) and stored bytes per UTC day.  Thread-safe.
 */
#ifndef SERVER_QUOTA_H
#define SERVER_QUOTA_H

#include <stdbool.h>
#include <stddef.h>

struct quota;

struct quota_config {
	unsigned checks_per_minute;	/* 0: no limit */
	unsigned long long bytes_per_day;	/* 0: no limit */
};

/* A new quota keeper; NULL when out of memory. */
struct quota *quota_new(const struct quota_config *cfg);
void quota_free(struct quota *q);

/*
 * Admit one check for team (a POST that runs a check, stored or not):
 * 0, or the seconds to wait before the next one can be admitted (the
 * team is past a budget; nothing is taken).  With take false it only
 * looks: a CI delivery is charged once its signature holds (anyone can
 * send an unsigned one, and would spend the CI team's budget).
 */
int quota_admit(struct quota *q, const char *team, bool take);

/* Count bytes stored for team today (after the commit). */
void quota_charge(struct quota *q, const char *team, size_t bytes);

#endif /* SERVER_QUOTA_H */
