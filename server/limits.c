/*
 * server/limits: see limits.h.  The teams being served are few at any
 * moment (at most one per request in flight), so they are a list, an
 * entry freed when its last request leaves; parked requests are one
 * list in arrival order.
 */
#include "limits.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A team with requests being served. */
struct running {
	char team[65];
	unsigned n;		/* requests holding a place */
	unsigned long long unread;	/* bodies and unread answers */
	struct running *next;
};

/* A request waiting for a place of its team. */
struct parked {
	char team[65];
	struct MHD_Connection *c;
	bool *entered;
	struct parked *next;
};

struct gate {
	pthread_mutex_t mu;	/* everything below */
	unsigned at_once, park_max;
	unsigned long long unread_max;	/* per team; 4x: all teams */
	unsigned long long unread;	/* all teams */
	bool open;		/* stopping: no more parking */
	struct running *teams;
	struct parked *first, *last;
};

struct gate *
gate_new(unsigned at_once, unsigned park_max, size_t unread_max)
{
	struct gate *g = calloc(1, sizeof(*g));

	if (g == NULL)
		return NULL;
	g->at_once = at_once;
	g->park_max = park_max;
	g->unread_max = unread_max;
	pthread_mutex_init(&g->mu, NULL);
	return g;
}

void
gate_free(struct gate *g)
{
	struct running *t, *next;

	if (g == NULL)
		return;
	for (t = g->teams; t != NULL; t = next) {
		next = t->next;
		free(t);
	}
	pthread_mutex_destroy(&g->mu);
	free(g);
}

/* team's entry, or NULL (under mu). */
static struct running *
find(struct gate *g, const char *team)
{
	struct running *t;

	for (t = g->teams; t != NULL; t = t->next)
		if (strcmp(t->team, team) == 0)
			return t;
	return NULL;
}

/* team's entry, created; NULL when out of memory (under mu). */
static struct running *
get(struct gate *g, const char *team)
{
	struct running *t = find(g, team);

	if (t == NULL && (t = calloc(1, sizeof(*t))) != NULL) {
		snprintf(t->team, sizeof(t->team), "%s", team);
		t->next = g->teams;
		g->teams = t;
	}
	return t;
}

/* Free t once nothing of it is left (under mu). */
static void
forget(struct gate *g, struct running *t)
{
	struct running **tp;

	if (t == NULL || t->n > 0 || t->unread > 0)
		return;
	for (tp = &g->teams; *tp != t; tp = &(*tp)->next)
		;
	*tp = t->next;
	free(t);
}

/* Park c at the end of the list: false when out of memory or the team
   has park_max parked (under mu). */
static bool
park(struct gate *g, const char *team, struct MHD_Connection *c,
    bool *entered)
{
	struct parked *p;
	unsigned same = 0;

	for (p = g->first; p != NULL; p = p->next)
		same += strcmp(p->team, team) == 0;
	if (same >= g->park_max || (p = calloc(1, sizeof(*p))) == NULL)
		return false;
	snprintf(p->team, sizeof(p->team), "%s", team);
	p->c = c;
	p->entered = entered;
	if (g->last != NULL)
		g->last->next = p;
	else
		g->first = p;
	g->last = p;
	/* Under mu: gate_leave cannot resume c before it is suspended. */
	MHD_suspend_connection(c);
	return true;
}

enum gate_verdict
gate_enter(struct gate *g, const char *team, struct MHD_Connection *c,
    bool *entered)
{
	enum gate_verdict v = GATE_RUN;
	struct running *t;

	*entered = false;
	if (g == NULL)
		return GATE_RUN;
	pthread_mutex_lock(&g->mu);
	t = get(g, team);
	if (t == NULL || g->open)
		v = GATE_RUN;	/* served, not counted */
	else if (g->unread_max > 0 && t->unread >= g->unread_max)
		v = GATE_UNREAD;
	else if (g->unread_max > 0 && g->unread >= 4 * g->unread_max)
		v = GATE_UNREAD_ALL;
	else if (g->at_once == 0)
		v = GATE_RUN;
	else if (t->n < g->at_once) {
		t->n++;
		*entered = true;
	} else
		v = park(g, team, c, entered) ? GATE_PARKED : GATE_FULL;
	forget(g, t);
	pthread_mutex_unlock(&g->mu);
	return v;
}

void
gate_leave(struct gate *g, const char *team)
{
	struct parked *p, *prev = NULL;
	struct running *t;
	struct MHD_Connection *resume = NULL;

	if (g == NULL)
		return;
	pthread_mutex_lock(&g->mu);
	for (p = g->first; p != NULL; prev = p, p = p->next)
		if (strcmp(p->team, team) == 0)
			break;
	if (p != NULL) {
		/* The place passes on: the team's count stays. */
		if (prev != NULL)
			prev->next = p->next;
		else
			g->first = p->next;
		if (g->last == p)
			g->last = prev;
		*p->entered = true;
		resume = p->c;
		free(p);
	} else if ((t = find(g, team)) != NULL && t->n > 0) {
		t->n--;
		forget(g, t);
	}
	pthread_mutex_unlock(&g->mu);
	if (resume != NULL)
		MHD_resume_connection(resume);
}

bool
gate_hold(struct gate *g, const char *team, long long bytes, bool check)
{
	struct running *t;
	bool ok = true;

	if (g == NULL || team == NULL || g->unread_max == 0 || bytes == 0)
		return true;
	pthread_mutex_lock(&g->mu);
	t = get(g, team);
	if (t != NULL && bytes > 0 && check &&
	    t->unread + (unsigned long long)bytes > g->unread_max) {
		ok = false;
		forget(g, t);
	} else if (t != NULL && bytes > 0) {
		t->unread += (unsigned long long)bytes;
		g->unread += (unsigned long long)bytes;
	} else if (t != NULL) {
		/* Never below zero (an answer counted while t was lost to
		   a failed allocation). */
		unsigned long long b = (unsigned long long)-bytes;

		b = b < t->unread ? b : t->unread;
		t->unread -= b;
		g->unread -= b;
		forget(g, t);
	}
	pthread_mutex_unlock(&g->mu);
	return ok;
}

void
gate_open(struct gate *g)
{
	struct parked *p;

	if (g == NULL)
		return;
	pthread_mutex_lock(&g->mu);
	g->open = true;
	while ((p = g->first) != NULL) {
		g->first = p->next;
		pthread_mutex_unlock(&g->mu);
		MHD_resume_connection(p->c);	/* served uncounted */
		free(p);
		pthread_mutex_lock(&g->mu);
	}
	g->last = NULL;
	pthread_mutex_unlock(&g->mu);
}
