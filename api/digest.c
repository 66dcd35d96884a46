/*
 * api/digest: hashing for report identity (config_sha256).
 */
#include "digest.h"

#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>

#include <string.h>

static void
to_hex(char out[65], const unsigned char d[32])
{
	static const char hex[] = "0123456789abcdef";
	size_t i;

	for (i = 0; i < 32; i++) {
		out[2 * i] = hex[d[i] >> 4];
		out[2 * i + 1] = hex[d[i] & 15];
	}
	out[64] = '\0';
}

int
digest_sha256_hex(char out[65], const void *buf, size_t len)
{
	unsigned char d[32];

	out[0] = '\0';
	if (gnutls_hash_fast(GNUTLS_DIG_SHA256, buf, len, d) != 0)
		return -1;
	to_hex(out, d);
	return 0;
}

int
digest_hmac_sha256_hex(char out[65], const char *key, const void *buf,
    size_t len)
{
	unsigned char d[32];

	out[0] = '\0';
	if (gnutls_hmac_fast(GNUTLS_MAC_SHA256, key, strlen(key), buf, len,
	    d) != 0)
		return -1;
	to_hex(out, d);
	return 0;
}

bool
digest_equal(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), i;
	unsigned char diff = la != lb;

	/* Walk all of a whatever the first mismatch: no early exit. */
	for (i = 0; i < la; i++)
		diff |= (unsigned char)(a[i] ^ (i < lb ? b[i] : 0));
	return diff == 0;
}
