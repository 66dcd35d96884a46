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

static const char b64url[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

void
digest_base64url(char *out, size_t cap, const void *buf, size_t len)
{
	const unsigned char *b = buf;
	size_t i, k = 0;

	for (i = 0; i < len && k + 5 < cap; i += 3) {
		unsigned v = (unsigned)b[i] << 16;

		if (i + 1 < len)
			v |= (unsigned)b[i + 1] << 8;
		if (i + 2 < len)
			v |= b[i + 2];
		out[k++] = b64url[(v >> 18) & 63];
		out[k++] = b64url[(v >> 12) & 63];
		if (i + 1 < len)
			out[k++] = b64url[(v >> 6) & 63];
		if (i + 2 < len)
			out[k++] = b64url[v & 63];
	}
	out[k] = '\0';
}

int
digest_base64url_decode(char *out, size_t cap, const char *s)
{
	size_t n = strlen(s), i, k = 0;
	unsigned v = 0;
	int bits = 0;

	for (i = 0; i < n; i++) {
		const char *p = strchr(b64url, s[i]);

		if (p == NULL)
			return -1;
		v = (v << 6) | (unsigned)(p - b64url);
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			if (k + 1 >= cap)
				return -1;
			out[k++] = (char)((v >> bits) & 0xFF);
		}
	}
	if (cap == 0)
		return -1;
	out[k] = '\0';
	return 0;
}
