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

#endif /* API_DIGEST_H */
