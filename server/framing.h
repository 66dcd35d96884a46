/*
 * server/framing: request headers that must appear at most once.
 *
 * libmicrohttpd keeps every header line and answers a lookup with the
 * first; a proxy in front may use the last.  Two Content-Length or
 * Transfer-Encoding lines let the two disagree on where a request ends
 * (request smuggling: the next client's request, with its token, read as
 * the body of an attacker's check); two Host lines on which name was
 * asked for; two Authorization lines on who is asking.  RFC 9112 sections
 * 3.2 and 6.3 make the first three an error; the fourth is one too here.
 */
#ifndef SERVER_FRAMING_H
#define SERVER_FRAMING_H

#include <microhttpd.h>

/* The name of the first of those headers c carries more than once, or
   NULL. */
const char *framing_duplicate(struct MHD_Connection *c);

#endif /* SERVER_FRAMING_H */
