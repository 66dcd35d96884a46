/*
 * server/deadline: a request must arrive whole within a deadline, not
 * only without a pause as long as the idle timeout.
 *
 * libmicrohttpd's connection timeout closes a connection that sends
 * nothing for that long; a client that sends one byte of its headers
 * (or body) every few seconds is never idle, so a few hundred of them,
 * each address under --max-connections-per-address, hold every slot of
 * --max-connections for as long as they like (slowloris).  Here each
 * connection's clock starts when it is accepted, again when a request
 * line arrives and again when the previous request completed; a request
 * not received in full (headers and body) within the deadline has its
 * socket shut down by a sweeper thread, and MHD closes it.  When the
 * server holds three quarters of its connection limit or more, the
 * deadline shrinks to DEADLINE_PRESSURE_S: a real client sends its
 * request in milliseconds.  Answers being computed or sent are not
 * timed here (the idle timeout still applies to them).
 *
 * The same record holds the request a connection has started: MHD calls
 * the URI logger (which allocates it) as soon as a request line is in,
 * but its completion callback only once the access handler has run, so
 * a request MHD refuses itself (a query string with more arguments than
 * its memory pool holds: 431) would leak it and count in flight forever.
 * The record drops it when the connection closes.
 */
#ifndef SERVER_DEADLINE_H
#define SERVER_DEADLINE_H

#include <microhttpd.h>

#define DEADLINE_PRESSURE_S 2	/* seconds, past 3/4 of the limit */

struct deadline;

/*
 * Connection records, and a sweeper for requests that take longer than
 * seconds to arrive (0: no deadline, no sweeper), with limit the server's
 * connection limit.  NULL when out of memory or the thread cannot start.
 */
struct deadline *deadline_new(unsigned seconds, unsigned limit);

/* Stop the sweeper and free; after MHD_stop_daemon().  NULL: no-op. */
void deadline_free(struct deadline *dl);

/* MHD_OPTION_NOTIFY_CONNECTION's callback; cls is the deadline. */
void deadline_notify(void *cls, struct MHD_Connection *c,
    void **socket_context, enum MHD_ConnectionNotificationCode code);

/* A request starts on c (its request line arrived, or the previous one
   completed): start its clock. */
void deadline_start(struct MHD_Connection *c);

/* c's request has arrived whole: stop its clock. */
void deadline_stop(struct MHD_Connection *c);

/* c has started request req: if c closes before deadline_done(),
   drop(req) frees it (in the thread that closes c). */
void deadline_hold(struct MHD_Connection *c, void *req,
    void (*drop)(void *req));

/* MHD completed c's request: it is no longer the record's to drop, and
   the next request's clock starts. */
void deadline_done(struct MHD_Connection *c);

#endif /* SERVER_DEADLINE_H */
