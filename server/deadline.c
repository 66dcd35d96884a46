/*
 * server/deadline: a deadline for a request to arrive whole (see
 * deadline.h).
 */
#include "deadline.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <time.h>

#define SWEEP_MS 250		/* how often the sweeper looks */

/* One connection MHD holds. */
struct conn {
	struct deadline *dl;
	int fd;
	int64_t since_ms;	/* when its clock started */
	bool timed;		/* a request is arriving */
	bool cut;		/* shut down already */
	void *held;		/* a request MHD has not completed, or NULL */
	void (*drop)(void *req);
	struct conn *prev, *next;
};

struct deadline {
	pthread_mutex_t mu;	/* the list and every conn's fields */
	pthread_cond_t cv;	/* stop */
	struct conn *head;
	unsigned n;		/* connections in the list */
	unsigned limit;		/* the server's connection limit */
	int64_t ms;		/* the deadline */
	bool stop;
	pthread_t thread;
};

static int64_t
now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/*
 * Is another, newer connection on the same descriptor in the list?  Then
 * MHD closed c's socket and the number was reused before c's CLOSED
 * notification: c's fd is not c's any more.
 */
static bool
fd_reused(const struct conn *c)
{
	const struct conn *o;

	for (o = c->dl->head; o != NULL; o = o->next)
		if (o != c && o->fd == c->fd && o->since_ms >= c->since_ms)
			return true;
	return false;
}

/* Shut down every request that took too long to arrive (under mu). */
static void
sweep(struct deadline *dl)
{
	int64_t now = now_ms(), ms = dl->ms;
	struct conn *c;

	if ((uint64_t)dl->n * 4 >= (uint64_t)dl->limit * 3 &&
	    ms > DEADLINE_PRESSURE_S * 1000)
		ms = DEADLINE_PRESSURE_S * 1000;
	for (c = dl->head; c != NULL; c = c->next) {
		if (!c->timed || c->cut || now - c->since_ms <= ms)
			continue;
		if (fd_reused(c))
			continue;
		/* MHD sees end of stream and closes the connection. */
		shutdown(c->fd, SHUT_RDWR);
		c->cut = true;
	}
}

static void *
sweeper(void *arg)
{
	struct deadline *dl = arg;
	struct timespec t;

	pthread_mutex_lock(&dl->mu);
	while (!dl->stop) {
		clock_gettime(CLOCK_REALTIME, &t);
		t.tv_nsec += SWEEP_MS * 1000000L;
		if (t.tv_nsec >= 1000000000L) {
			t.tv_sec++;
			t.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&dl->cv, &dl->mu, &t);
		if (!dl->stop)
			sweep(dl);
	}
	pthread_mutex_unlock(&dl->mu);
	return NULL;
}

struct deadline *
deadline_new(unsigned seconds, unsigned limit)
{
	struct deadline *dl;

	dl = calloc(1, sizeof(*dl));
	if (dl == NULL)
		return NULL;
	dl->ms = (int64_t)seconds * 1000;
	dl->limit = limit;
	pthread_mutex_init(&dl->mu, NULL);
	pthread_cond_init(&dl->cv, NULL);
	if (seconds > 0 &&
	    pthread_create(&dl->thread, NULL, sweeper, dl) != 0) {
		pthread_cond_destroy(&dl->cv);
		pthread_mutex_destroy(&dl->mu);
		free(dl);
		return NULL;
	}
	return dl;
}

void
deadline_free(struct deadline *dl)
{
	struct conn *c, *next;

	if (dl == NULL)
		return;
	pthread_mutex_lock(&dl->mu);
	dl->stop = true;
	pthread_cond_signal(&dl->cv);
	pthread_mutex_unlock(&dl->mu);
	if (dl->ms > 0)
		pthread_join(dl->thread, NULL);
	for (c = dl->head; c != NULL; c = next) {
		next = c->next;
		free(c);
	}
	pthread_cond_destroy(&dl->cv);
	pthread_mutex_destroy(&dl->mu);
	free(dl);
}

void
deadline_notify(void *cls, struct MHD_Connection *mc, void **socket_context,
    enum MHD_ConnectionNotificationCode code)
{
	struct deadline *dl = cls;
	struct conn *c;
	const union MHD_ConnectionInfo *ci;

	if (dl == NULL)
		return;
	if (code == MHD_CONNECTION_NOTIFY_STARTED) {
		ci = MHD_get_connection_info(mc,
		    MHD_CONNECTION_INFO_CONNECTION_FD);
		c = ci != NULL ? calloc(1, sizeof(*c)) : NULL;
		*socket_context = c;
		if (c == NULL)
			return;	/* not timed; the idle timeout still is */
		c->dl = dl;
		c->fd = ci->connect_fd;
		c->since_ms = now_ms();
		c->timed = true;
		pthread_mutex_lock(&dl->mu);
		c->next = dl->head;
		if (dl->head != NULL)
			dl->head->prev = c;
		dl->head = c;
		dl->n++;
		pthread_mutex_unlock(&dl->mu);
		return;
	}
	c = *socket_context;
	*socket_context = NULL;
	if (c == NULL)
		return;
	if (c->held != NULL)
		c->drop(c->held);	/* refused by MHD, never completed */
	pthread_mutex_lock(&dl->mu);
	if (c->prev != NULL)
		c->prev->next = c->next;
	else
		dl->head = c->next;
	if (c->next != NULL)
		c->next->prev = c->prev;
	dl->n--;
	pthread_mutex_unlock(&dl->mu);
	free(c);
}

/* c's record, or NULL when it is not timed. */
static struct conn *
conn_of(struct MHD_Connection *mc)
{
	const union MHD_ConnectionInfo *ci = MHD_get_connection_info(mc,
	    MHD_CONNECTION_INFO_SOCKET_CONTEXT);

	return ci != NULL ? ci->socket_context : NULL;
}

void
deadline_start(struct MHD_Connection *mc)
{
	struct conn *c = conn_of(mc);

	if (c == NULL)
		return;
	pthread_mutex_lock(&c->dl->mu);
	c->since_ms = now_ms();
	c->timed = true;
	pthread_mutex_unlock(&c->dl->mu);
}

void
deadline_stop(struct MHD_Connection *mc)
{
	struct conn *c = conn_of(mc);

	if (c == NULL)
		return;
	pthread_mutex_lock(&c->dl->mu);
	c->timed = false;
	pthread_mutex_unlock(&c->dl->mu);
}

void
deadline_hold(struct MHD_Connection *mc, void *req, void (*drop)(void *req))
{
	struct conn *c = conn_of(mc);

	if (c == NULL)
		return;
	if (c->held != NULL)
		c->drop(c->held);	/* a refused request, then another */
	c->held = req;
	c->drop = drop;
}

void
deadline_done(struct MHD_Connection *mc)
{
	struct conn *c = conn_of(mc);

	if (c == NULL)
		return;
	c->held = NULL;
	deadline_start(mc);
}
