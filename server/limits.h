/*
 * server/limits: how many requests of one team are served at once.
 *
 * Four request threads serve every team.  Without a limit per team, one
 * token's flood of its most expensive checks (~150 ms each for a 1 MB
 * config), from as many addresses as it likes, keeps every thread busy,
 * and another team's request waits behind the flood on its connection's
 * thread (4.2 s measured).  Here a team has at most `at_once` requests
 * being served (from the body's arrival to the answer being queued); the
 * next ones are parked: their connections are suspended, holding no
 * thread, and resumed in arrival order as the team's own requests finish.
 * A team with `park_max` parked already is refused (429).
 *
 * Memory is held for a team by the request bodies it is sending and by
 * its answers until its clients have read them: a client that asks and
 * never reads pins one answer per connection (2 MB for a check with
 * 1,000 long findings; 600 such connections grew the daemon 560 MiB), and
 * slow uploads of one team filled the bodies' budget every team shares.
 * A team holding `unread_max` bytes has its next body refused (503 from
 * http.c) and its next requests too (429), and every team's requests are
 * refused (503) while all teams hold four times that, until clients read
 * or send.  Thread-safe.
 */
#ifndef SERVER_LIMITS_H
#define SERVER_LIMITS_H

#include <stdbool.h>
#include <stddef.h>

#include <microhttpd.h>

struct gate;

enum gate_verdict {
	GATE_RUN,		/* serve it now */
	GATE_PARKED,		/* suspended; served when resumed */
	GATE_FULL,		/* the team has park_max parked: 429 */
	GATE_UNREAD,		/* the team holds unread_max bytes: 429 */
	GATE_UNREAD_ALL		/* all teams hold 4 x unread_max: 503 */
};

/* A gate; at_once 0: no limit on places; unread_max 0: none on unread
   answers.  NULL when out of memory. */
struct gate *gate_new(unsigned at_once, unsigned park_max,
    size_t unread_max);

/* Free g (no request may be parked: gate_open first). */
void gate_free(struct gate *g);

/*
 * A request of team on connection c wants serving.  GATE_RUN with
 * *entered true (it holds one of the team's places: gate_leave once it
 * is answered or dropped) or false (not counted: no limit, out of
 * memory, or the gate is open); GATE_PARKED: c is suspended, and when
 * it is resumed *entered is already true; GATE_FULL: nothing taken.
 * entered must live until then (the request's own flag).
 */
enum gate_verdict gate_enter(struct gate *g, const char *team,
    struct MHD_Connection *c, bool *entered);

/* A request of team that entered is done: its place passes to the first
   parked request of team (resumed), or back to the team. */
void gate_leave(struct gate *g, const char *team);

/*
 * Hold bytes more for team (a body growing, an answer queued), or give
 * back -bytes (freed, read, dropped).  With check, bytes > 0 are refused
 * (false, nothing held) when the team would hold more than unread_max.
 * team NULL: nobody's (true, nothing counted).
 */
bool gate_hold(struct gate *g, const char *team, long long bytes,
    bool check);

/* Stopping: resume every parked request (served past the limit), and
   park none from now on. */
void gate_open(struct gate *g);

#endif /* SERVER_LIMITS_H */
