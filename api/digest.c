/*
 * api/digest: hashing for report identity (config_sha256).
 */
#include "digest.h"

#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>

int
digest_sha256_hex(char out[65], const void *buf, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	unsigned char d[32];
	size_t i;

	out[0] = '\0';
	if (gnutls_hash_fast(GNUTLS_DIG_SHA256, buf, len, d) != 0)
		return -1;
	for (i = 0; i < sizeof(d); i++) {
		out[2 * i] = hex[d[i] >> 4];
		out[2 * i + 1] = hex[d[i] & 15];
	}
	out[64] = '\0';
	return 0;
}
