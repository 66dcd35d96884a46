/*
 * core/suggest: when a run does not fit (or fits with under 10% free),
 * try single and paired knob changes on the config and keep the ones the
 * estimator says fit, fastest first (issue #8).  Each change is applied
 * as if its YAML lines were appended to the config (the keys it sets
 * replace the config's, as the last of duplicate keys does in PyYAML),
 * then re-planned and re-estimated.
 */
#ifndef CORE_SUGGEST_H
#define CORE_SUGGEST_H

#include <stddef.h>

struct arena;
struct context;
struct err;
struct limits;
struct report;

#define SUGGEST_MAX 5

/* Cut Cross Entropy's set repeats the config's whole plugins list: of
   the suggestions kept, at most one has a set longer than this (five
   copies made an 889 KB config a 5 MB report). */
#define SUGGEST_BIG_SET 4096

struct suggestion {
	const char *set_json;	/* the keys to set, a JSON object */
	const char *why;	/* plain words */
	double per_gpu_peak_gib;
	double tokens_per_second;
};

/*
 * Fill r's suggestions (r's document, plan and estimate are read).  Only
 * runs when the estimate is known and tight.  0, ERR_NOMEM, or
 * ERR_INTERNAL (a knob of ours that does not parse), set in e.
 */
int suggest_run(struct report *r, const struct context *ctx,
    const struct limits *lim, struct arena *a, struct err *e);

/* Parse the constant suggestions once per process (core_init); 0 or
   ERR_NOMEM. */
int suggest_init(struct err *e);

#endif /* CORE_SUGGEST_H */
