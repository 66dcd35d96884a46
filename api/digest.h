/*
 * api/digest: SHA-256 through GnuTLS (already libmicrohttpd's dependency),
 * so no hash is written by hand here.
 */
#ifndef API_DIGEST_H
#define API_DIGEST_H

#include <stddef.h>

/* Lowercase hex SHA-256 of buf[0..len) into out.  Returns 0 or -1. */
int digest_sha256_hex(char out[65], const void *buf, size_t len);

#endif /* API_DIGEST_H */
