/*
 * api/replay: the CI deliveries seen within the signature's time window,
 * so a captured signed request cannot be sent again.  Thread-safe; a
 * fixed table, so memory is bounded whatever the callers send.
 */
#ifndef API_REPLAY_H
#define API_REPLAY_H

#include <stdbool.h>
#include <stdint.h>

struct replay;

/* Deliveries remembered at most (older ones expire first). */
#define REPLAY_SLOTS 65536

/* A new, empty set; NULL when out of memory. */
struct replay *replay_new(void);
void replay_free(struct replay *r);

enum replay_result {
	REPLAY_NEW,		/* first sight: remembered until expires_ms */
	REPLAY_SEEN,		/* this delivery was accepted before */
	REPLAY_FULL		/* the table holds REPLAY_SLOTS live ids */
};

/*
 * Remember id (any bytes, hashed) until expires_ms unless it is already
 * remembered and not expired at now_ms.
 */
enum replay_result replay_check(struct replay *r, const char *id,
    int64_t now_ms, int64_t expires_ms);

#endif /* API_REPLAY_H */
