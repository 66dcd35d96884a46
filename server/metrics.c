/*
 * server/metrics: Prometheus counters and one latency histogram.
 * Label values come from fixed sets (route patterns, a method list, status
 * codes, rule ids), so cardinality stays bounded whatever clients send.
 */
#include "metrics.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/report.h"
#include "core/rules.h"

#define MAX_SERIES 512
#define NBUCKETS 12

static const double buckets[NBUCKETS] = {
	0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1,
	2.5
};

struct series {
	const char *route;	/* static: a route pattern or "unmatched" */
	const char *method;	/* static */
	int status;
	unsigned long long count;
};

struct hist {
	const char *route;
	unsigned long long b[NBUCKETS];	/* cumulative at render */
	unsigned long long count;
	double sum;
};

struct rule_count {
	const char *rule;	/* static, from the rule table or findings */
	unsigned long long n;
};

struct metrics {
	pthread_mutex_t mu;
	struct series req[MAX_SERIES];
	size_t nreq;
	struct hist hist[64];
	size_t nhist;
	unsigned long long verdicts[3];
	struct rule_count rules[MAX_SERIES];
	size_t nrules;
};

struct metrics *
metrics_new(void)
{
	struct metrics *m = calloc(1, sizeof(*m));

	if (m != NULL)
		pthread_mutex_init(&m->mu, NULL);
	return m;
}

void
metrics_free(struct metrics *m)
{
	if (m == NULL)
		return;
	pthread_mutex_destroy(&m->mu);
	free(m);
}

static const char *
method_label(const char *method)
{
	static const char *const known[] = { "GET", "HEAD", "POST", "PUT",
	    "DELETE", "PATCH", "OPTIONS" };
	size_t i;

	for (i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		if (strcmp(method, known[i]) == 0)
			return known[i];
	return "OTHER";
}

void
metrics_request(struct metrics *m, const char *route, const char *method,
    int status, double seconds)
{
	const char *ml = method_label(method);
	size_t i, k;

	pthread_mutex_lock(&m->mu);
	for (i = 0; i < m->nreq; i++)
		if (m->req[i].status == status && m->req[i].method == ml &&
		    strcmp(m->req[i].route, route) == 0)
			break;
	if (i == m->nreq && m->nreq < MAX_SERIES) {
		m->req[i].route = route;
		m->req[i].method = ml;
		m->req[i].status = status;
		m->nreq++;
	}
	if (i < m->nreq)
		m->req[i].count++;
	for (i = 0; i < m->nhist; i++)
		if (strcmp(m->hist[i].route, route) == 0)
			break;
	if (i == m->nhist && m->nhist < sizeof(m->hist) / sizeof(m->hist[0]))
		m->hist[m->nhist++].route = route;
	if (i < m->nhist) {
		for (k = 0; k < NBUCKETS; k++)
			if (seconds <= buckets[k]) {
				m->hist[i].b[k]++;
				break;
			}
		m->hist[i].count++;
		m->hist[i].sum += seconds;
	}
	pthread_mutex_unlock(&m->mu);
}

void
metrics_check(struct metrics *m, const struct report *r)
{
	size_t i, k;

	pthread_mutex_lock(&m->mu);
	m->verdicts[r->verdict]++;
	for (i = 0; i < r->nfindings; i++) {
		/* Rule ids are static strings from the rule table. */
		const struct rule_def *d = rules_find(r->findings[i].rule);
		const char *id = d != NULL ? d->id : "unknown";

		for (k = 0; k < m->nrules; k++)
			if (strcmp(m->rules[k].rule, id) == 0)
				break;
		if (k == m->nrules && m->nrules < MAX_SERIES)
			m->rules[m->nrules++].rule = id;
		if (k < m->nrules)
			m->rules[k].n++;
	}
	pthread_mutex_unlock(&m->mu);
}

struct out {
	char *p;
	size_t n;
	size_t cap;
	int failed;
};

static void out_printf(struct out *o, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void
out_printf(struct out *o, const char *fmt, ...)
{
	va_list ap;
	int w;

	for (;;) {
		if (o->failed)
			return;
		va_start(ap, fmt);
		w = vsnprintf(o->p + o->n, o->cap - o->n, fmt, ap);
		va_end(ap);
		if (w < 0) {
			o->failed = 1;
			return;
		}
		if ((size_t)w < o->cap - o->n) {
			o->n += (size_t)w;
			return;
		}
		{
			size_t cap = o->cap * 2 + (size_t)w;
			char *np = realloc(o->p, cap);

			if (np == NULL) {
				o->failed = 1;
				return;
			}
			o->p = np;
			o->cap = cap;
		}
	}
}

int
metrics_render(struct metrics *m, const struct store_info *si, char **out,
    size_t *len)
{
	struct out o = { NULL, 0, 4096, 0 };
	size_t i, k;

	o.p = malloc(o.cap);
	if (o.p == NULL)
		return -1;
	pthread_mutex_lock(&m->mu);
	out_printf(&o, "# HELP http_requests_total HTTP requests served.\n"
	    "# TYPE http_requests_total counter\n");
	for (i = 0; i < m->nreq; i++)
		out_printf(&o, "http_requests_total{route=\"%s\",method=\"%s\","
		    "status=\"%d\"} %llu\n", m->req[i].route,
		    m->req[i].method, m->req[i].status, m->req[i].count);
	out_printf(&o, "# HELP http_request_duration_seconds Time from "
	    "request line to response.\n"
	    "# TYPE http_request_duration_seconds histogram\n");
	for (i = 0; i < m->nhist; i++) {
		unsigned long long cum = 0;

		for (k = 0; k < NBUCKETS; k++) {
			cum += m->hist[i].b[k];
			out_printf(&o, "http_request_duration_seconds_bucket{"
			    "route=\"%s\",le=\"%g\"} %llu\n",
			    m->hist[i].route, buckets[k], cum);
		}
		out_printf(&o, "http_request_duration_seconds_bucket{route="
		    "\"%s\",le=\"+Inf\"} %llu\n", m->hist[i].route,
		    m->hist[i].count);
		out_printf(&o, "http_request_duration_seconds_sum{route="
		    "\"%s\"} %.6f\n", m->hist[i].route, m->hist[i].sum);
		out_printf(&o, "http_request_duration_seconds_count{route="
		    "\"%s\"} %llu\n", m->hist[i].route, m->hist[i].count);
	}
	out_printf(&o, "# HELP preflight_checks_total Checks run, by "
	    "verdict.\n# TYPE preflight_checks_total counter\n");
	for (i = 0; i < 3; i++)
		out_printf(&o, "preflight_checks_total{verdict=\"%s\"} %llu\n",
		    verdict_name((enum verdict)i), m->verdicts[i]);
	out_printf(&o, "# HELP preflight_findings_total Findings reported, "
	    "by rule.\n# TYPE preflight_findings_total counter\n");
	for (i = 0; i < m->nrules; i++)
		out_printf(&o, "preflight_findings_total{rule=\"%s\"} %llu\n",
		    m->rules[i].rule, m->rules[i].n);
	pthread_mutex_unlock(&m->mu);
	out_printf(&o, "# HELP preflight_db_errors_total Failed database "
	    "writes.\n# TYPE preflight_db_errors_total counter\n"
	    "preflight_db_errors_total %lld\n", si->write_errors);
	out_printf(&o, "# HELP preflight_db_size_bytes Database size.\n"
	    "# TYPE preflight_db_size_bytes gauge\n"
	    "preflight_db_size_bytes %lld\n", si->db_bytes);
	out_printf(&o, "# HELP preflight_db_schema_version Applied "
	    "migrations.\n# TYPE preflight_db_schema_version gauge\n"
	    "preflight_db_schema_version %d\n", si->schema_version);
	/* What a stored check costs the disk (issue #16). */
	out_printf(&o, "# HELP preflight_db_checks_committed_total Checks "
	    "committed.\n# TYPE preflight_db_checks_committed_total counter\n"
	    "preflight_db_checks_committed_total %lld\n", si->committed);
	out_printf(&o, "# HELP preflight_db_commits_total Transactions that "
	    "committed checks.\n# TYPE preflight_db_commits_total counter\n"
	    "preflight_db_commits_total %lld\n", si->commits);
	out_printf(&o, "# HELP preflight_db_syncs_total fsyncs of the "
	    "database and its WAL.\n# TYPE preflight_db_syncs_total counter\n"
	    "preflight_db_syncs_total %lld\n", si->syncs);
	out_printf(&o, "# HELP preflight_db_written_bytes_total Bytes "
	    "written to the database and its WAL.\n"
	    "# TYPE preflight_db_written_bytes_total counter\n"
	    "preflight_db_written_bytes_total %lld\n", si->bytes_written);
	out_printf(&o, "# HELP preflight_db_checkpoints_total WAL checkpoint "
	    "passes that copied pages.\n"
	    "# TYPE preflight_db_checkpoints_total counter\n"
	    "preflight_db_checkpoints_total %lld\n", si->checkpoints);
	if (o.failed) {
		free(o.p);
		return -1;
	}
	*out = o.p;
	*len = o.n;
	return 0;
}
