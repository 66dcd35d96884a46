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
 * The other framing rules of RFC 9112 the daemon enforces live here too,
 * and the refusal of folded header lines (obs-fold), which libmicrohttpd
 * joins to the header's name (see framing.c).
 */
#ifndef SERVER_FRAMING_H
#define SERVER_FRAMING_H

#include <stdbool.h>
#include <stddef.h>

#include <microhttpd.h>

/*
 * What is wrong with c's framing, 0 when nothing: 400 for a method that
 * is not a token (framing_method_ok), for one of those headers twice, for
 * both Transfer-Encoding and Content-Length, or for an HTTP/1.1 request
 * (version) without Host; 501 for a transfer coding other than chunked.
 * *detail says which (static text).
 */
int framing_problem(struct MHD_Connection *c, const char *method,
    const char *version, const char **detail);

/*
 * Is method a token (RFC 9110: 1-64 tchar)?  libmicrohttpd passes any
 * bytes up to the space: one that is not UTF-8 made the 405 answer (which
 * names the method) and the access-log line unbuildable, so the request
 * was a 500 and left no log line.  The log writes "-" for the others.
 */
bool framing_method_ok(const char *method);

/*
 * Is host (a Host header: name or address, then an optional :port) this
 * machine's loopback, or one of the nallowed names in allowed
 * (--allowed-host)?  With --auth none a browser on this machine could
 * otherwise be pointed at the daemon through a name an attacker controls
 * (DNS rebinding) and read every check as the same origin.
 */
bool framing_loopback_host(const char *host, const char *const *allowed,
    size_t nallowed);

/*
 * Does c name a client beyond the peer that sent it (Forwarded,
 * X-Forwarded-For, X-Real-IP)?  Then a proxy relays it, and a proxy on
 * this machine makes every client's peer loopback: what is open to
 * loopback clients only (/metrics without a metrics token under --auth
 * token) is not open to it.
 */
bool framing_forwarded(struct MHD_Connection *c);

/*
 * A HEAD answer: GET's status and headers, no body, no length, and the
 * connection closed after it.  Without a length libmicrohttpd 0.9.75
 * frames an HTTP/1.1 answer chunked and sends the last chunk ("0\r\n\r\n")
 * even for HEAD, which a client or a proxy pooling connections reads as
 * the start of the next answer on the connection.  NULL when out of
 * memory.
 */
struct MHD_Response *framing_head_response(void);

/* Whether a caller's X-Request-Id (or NULL) may be echoed: 1-64
   letters, digits and . _ : - (nothing a log or a header could split). */
bool framing_request_id_ok(const char *v);

#endif /* SERVER_FRAMING_H */
