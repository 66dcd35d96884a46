/*
 * api/parse: what a request's text carries: decimal integers, percent-
 * encoded query strings, RFC 3339 times, and the time-ordered ids of
 * stored checks.  No sockets, no SQL.
 */
#include "api.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_int.h"
#include "core/arena.h"

/* ---- parsing helpers ------------------------------------------------ */

int
api_parse_long(long *out, const char *s, long min, long max)
{
	long v = 0;
	const char *p = s;

	if (s == NULL || *s == '\0' || strlen(s) > 12)
		return -1;
	for (; *p != '\0'; p++) {
		if (*p < '0' || *p > '9')
			return -1;
		v = v * 10 + (*p - '0');
	}
	if (v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

int
api_hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

bool
api_is_utf8(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	while (*p != '\0') {
		unsigned c = *p, cp, need, i;

		if (c < 0x80) {
			p++;
			continue;
		}
		if (c >= 0xC2 && c <= 0xDF) {
			need = 1;
			cp = c & 0x1F;
		} else if (c >= 0xE0 && c <= 0xEF) {
			need = 2;
			cp = c & 0x0F;
		} else if (c >= 0xF0 && c <= 0xF4) {
			need = 3;
			cp = c & 0x07;
		} else {
			return false;	/* continuation, C0/C1 lead, F5+ */
		}
		for (i = 1; i <= need; i++) {
			if ((p[i] & 0xC0) != 0x80)
				return false;	/* cut short (NUL included) */
			cp = cp << 6 | (p[i] & 0x3Fu);
		}
		if ((need == 2 && cp < 0x800) || (need == 3 && cp < 0x10000) ||
		    cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
			return false;	/* overlong, too large, surrogate */
		p += need + 1;
	}
	return true;
}

/*
 * Percent-decode s[0..n) into the arena; plus_space for query strings.
 * NULL when malformed, when it decodes to a NUL or a control character,
 * or when the arena is spent.
 */
char *
api_pct_decode(const char *s, size_t n, bool plus_space, struct arena *a)
{
	char *out = arena_alloc(a, 1, 1, n + 1);
	size_t i, k = 0;

	if (out == NULL)
		return NULL;
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '%') {
			int hi, lo;

			if (i + 2 >= n)
				return NULL;
			hi = api_hexval(s[i + 1]);
			lo = api_hexval(s[i + 2]);
			if (hi < 0 || lo < 0)
				return NULL;
			c = (unsigned char)(hi * 16 + lo);
			i += 2;
		} else if (c == '+' && plus_space) {
			c = ' ';
		}
		if (c < 0x20 || c == 0x7F)
			return NULL;
		out[k++] = (char)c;
	}
	out[k] = '\0';
	return out;
}

int
api_query_parse(struct query *q, const char *raw, struct arena *a,
    struct api_resp *resp)
{
	const char *p = raw;
	int i;

	q->n = 0;
	while (p != NULL && *p != '\0') {
		const char *amp = strchr(p, '&');
		size_t len = amp != NULL ? (size_t)(amp - p) : strlen(p);
		const char *eq = memchr(p, '=', len);
		char *k, *v;

		if (len > 0) {
			if (q->n == QUERY_MAX) {
				api_problem(resp, 400, "bad-query",
				    "Bad query string", NULL,
				    "more than %d query parameters",
				    QUERY_MAX);
				return -1;
			}
			k = api_pct_decode(p, eq != NULL ? (size_t)(eq - p) : len,
			    true, a);
			v = eq != NULL ? api_pct_decode(eq + 1,
			    len - (size_t)(eq - p) - 1, true, a) :
			    api_pct_decode("", 0, true, a);
			if (k == NULL || v == NULL) {
				api_problem(resp, 400, "bad-query",
				    "Bad query string", NULL,
				    "malformed percent-encoding in the query "
				    "string");
				return -1;
			}
			if (!api_is_utf8(k) || !api_is_utf8(v)) {
				api_problem(resp, 400, "bad-query",
				    "Bad query string", NULL,
				    "the query string decodes to bytes that "
				    "are not UTF-8");
				return -1;
			}
			for (i = 0; i < q->n; i++)
				if (strcmp(q->key[i], k) == 0) {
					api_problem(resp, 400, "bad-query",
					    "Bad query string", NULL,
					    "query parameter '%.64s' is "
					    "repeated", k);
					return -1;
				}
			q->key[q->n] = k;
			q->value[q->n++] = v;
		}
		p = amp != NULL ? amp + 1 : NULL;
	}
	return 0;
}

const char *
query_get(const struct query *q, const char *key)
{
	int i;

	for (i = 0; i < q->n; i++)
		if (strcmp(q->key[i], key) == 0)
			return q->value[i];
	return NULL;
}

int
query_only(const struct query *q, const char *const *allowed,
    struct api_resp *resp)
{
	int i;
	size_t j;

	for (i = 0; i < q->n; i++) {
		for (j = 0; allowed[j] != NULL; j++)
			if (strcmp(q->key[i], allowed[j]) == 0)
				break;
		if (allowed[j] == NULL) {
			api_problem(resp, 400, "bad-query", "Bad query string",
			    NULL, "unknown query parameter '%.64s'",
			    q->key[i]);
			return -1;
		}
	}
	return 0;
}

/* ---- time and ids --------------------------------------------------- */

/* Days since 1970-01-01 of a civil date (Howard Hinnant's algorithm). */
static int64_t
days_from_civil(int64_t y, int m, int d)
{
	int64_t era, yoe, doy, doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = y - era * 400;
	doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

static void
civil_from_days(int64_t z, int *y, int *m, int *d)
{
	int64_t era, doe, yoe, doy, mp;

	z += 719468;
	era = (z >= 0 ? z : z - 146096) / 146097;
	doe = z - era * 146097;
	yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	mp = (5 * doy + 2) / 153;
	*d = (int)(doy - (153 * mp + 2) / 5 + 1);
	*m = (int)(mp < 10 ? mp + 3 : mp - 9);
	*y = (int)(yoe + era * 400 + (*m <= 2));
}

static int
digits_at(const char *s, int n)
{
	int v = 0, i;

	for (i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	return v;
}

int
api_parse_time(int64_t *out, const char *s)
{
	int y, mo, d, h = 0, mi = 0, sec = 0, ms = 0, off = 0;
	size_t n = strlen(s);
	const char *p;

	if (n < 10 || s[4] != '-' || s[7] != '-')
		return -1;
	y = digits_at(s, 4);
	mo = digits_at(s + 5, 2);
	d = digits_at(s + 8, 2);
	if (y < 1970 || mo < 1 || mo > 12 || d < 1 || d > 31)
		return -1;
	p = s + 10;
	if (*p != '\0') {
		if ((*p != 'T' && *p != 't' && *p != ' ') || strlen(p) < 9 ||
		    p[3] != ':' || p[6] != ':')
			return -1;
		h = digits_at(p + 1, 2);
		mi = digits_at(p + 4, 2);
		sec = digits_at(p + 7, 2);
		if (h < 0 || h > 23 || mi < 0 || mi > 59 || sec < 0 ||
		    sec > 60)
			return -1;
		p += 9;
		if (*p == '.') {
			int k = 0;

			for (p++; *p >= '0' && *p <= '9'; p++, k++)
				if (k < 3)
					ms = ms * 10 + (*p - '0');
			if (k == 0)
				return -1;
			for (; k < 3; k++)
				ms *= 10;
		}
		if (*p == 'Z' || *p == 'z') {
			p++;
		} else if ((*p == '+' || *p == '-') && strlen(p) == 6 &&
		    p[3] == ':') {
			int oh = digits_at(p + 1, 2), om = digits_at(p + 4, 2);

			if (oh < 0 || oh > 23 || om < 0 || om > 59)
				return -1;
			off = (oh * 60 + om) * (*p == '-' ? -1 : 1);
			p += 6;
		} else {
			return -1;
		}
		if (*p != '\0')
			return -1;
	}
	*out = ((days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 +
	    sec) - (int64_t)off * 60) * 1000 + ms;
	return 0;
}

void
api_format_time(char *out, size_t cap, int64_t ms)
{
	int64_t secs = ms / 1000, days = secs / 86400, rem = secs % 86400;
	int y, m, d;

	civil_from_days(days, &y, &m, &d);
	snprintf(out, cap, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", y, m, d,
	    (int)(rem / 3600), (int)(rem % 3600 / 60), (int)(rem % 60),
	    (int)(ms % 1000));
}

static const char crockford[] = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";

/*
 * Ids: 48 bits of milliseconds then 80 random bits, 26 base32 characters,
 * so ids sort by time; within one millisecond the random part counts up.
 */

/* 16 bytes (48-bit ms, 80 bits) -> 26 Crockford base32 characters. */
static void
encode_id(char out[27], const unsigned char b[16])
{
	int i, bit;

	/* 130 bits of output over 128 of input: two leading zero bits. */
	for (i = 0; i < 26; i++) {
		int v = 0, k;

		for (k = 0; k < 5; k++) {
			bit = i * 5 + k - 2;
			v <<= 1;
			if (bit >= 0)
				v |= (b[bit / 8] >> (7 - bit % 8)) & 1;
		}
		out[i] = crockford[v];
	}
	out[26] = '\0';
}

void
api_id_floor(char out[27], int64_t ms)
{
	unsigned char b[16] = { 0 };
	int i;

	if (ms < 0)
		ms = 0;
	for (i = 0; i < 6; i++)
		b[i] = (unsigned char)((uint64_t)ms >> (40 - 8 * i));
	encode_id(out, b);
}

void
api_new_id(char out[27], struct api_ctx *ctx, int64_t ms)
{
	unsigned char b[16];
	int i;

	pthread_mutex_lock(&ctx->id_mu);
	/*
	 * Within a millisecond the last 15 bits count up and never carry
	 * into the bits above; when they are full the id moves on to the
	 * next millisecond.  So (ms << 15 | last 15 bits) sorts like the
	 * ids, and the SQLite store keys its rows by it (issue #16).
	 */
	if (ms <= ctx->last_ms && ((ctx->last_rand[8] & 0x7F) != 0x7F ||
	    ctx->last_rand[9] != 0xFF)) {
		ms = ctx->last_ms;
		if (++ctx->last_rand[9] == 0)
			ctx->last_rand[8]++;
	} else {
		if (ms <= ctx->last_ms)
			ms = ctx->last_ms + 1;
		ctx->last_ms = ms;
		ctx->random(ctx->env, ctx->last_rand,
		    sizeof(ctx->last_rand));
		ctx->last_rand[8] &= 0xBF;	/* 2^14 ids of room */
	}
	for (i = 0; i < 6; i++)
		b[i] = (unsigned char)((uint64_t)ms >> (40 - 8 * i));
	memcpy(b + 6, ctx->last_rand, 10);
	pthread_mutex_unlock(&ctx->id_mu);
	encode_id(out, b);
}

bool
api_is_id(const char *s)
{
	size_t i;

	if (s == NULL || strlen(s) != 26 || s[0] > '7')
		return false;
	for (i = 0; i < 26; i++)
		if (strchr(crockford, s[i]) == NULL || s[i] == '\0')
			return false;
	return true;
}

