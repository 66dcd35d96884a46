/*
 * api/digest: SHA-256 through GnuTLS (already libmicrohttpd's dependency),
 * so no hash is written by hand here.
 */
#ifndef API_DIGEST_H
#define API_DIGEST_H

#include <stddef.h>

#include <stdbool.h>

/* Lowercase hex SHA-256 of buf[0..len) into out.  Returns 0 or -1. */
int digest_sha256_hex(char out[65], const void *buf, size_t len);

/* Lowercase hex HMAC-SHA256 of buf with key into out.  0 or -1. */
int digest_hmac_sha256_hex(char out[65], const char *key, const void *buf,
    size_t len);

/*
 * Do the NUL-terminated a and b hold the same bytes?  The time taken
 * depends on the lengths only, never on where they first differ, so a
 * caller comparing a secret (a signature, a token) leaks nothing about it.
 */
bool digest_equal(const char *a, const char *b);

/*
 * Unpadded base64url (RFC 4648 section 5) of buf[0..len) into out, NUL
 * terminated: 4 characters per 3 bytes, 2 or 3 for the last 1 or 2.  Stops
 * at the last whole group that leaves room for the NUL in cap (cap >= 1).
 * The one encoder of list cursors and API tokens.
 */
void digest_base64url(char *out, size_t cap, const void *buf, size_t len);

/* s (unpadded base64url) decoded into out, NUL terminated; -1 when s
   holds another character or out (cap bytes) is too small. */
int digest_base64url_decode(char *out, size_t cap, const char *s);

#endif /* API_DIGEST_H */
