/*
 * server/framing: request headers that must appear at most once, and the
 * Host names a daemon without authentication answers (see
 * framing.h).
 */
#include "framing.h"

#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#include <strings.h>

static const char *const once[] = {
	MHD_HTTP_HEADER_CONTENT_LENGTH, MHD_HTTP_HEADER_TRANSFER_ENCODING,
	MHD_HTTP_HEADER_HOST, MHD_HTTP_HEADER_AUTHORIZATION
};

/* The answer to each of once[] twice, in the same order. */
static const char *const twice[] = {
	"a request may carry one Content-Length header only",
	"a request may carry one Transfer-Encoding header only",
	"a request may carry one Host header only",
	"a request may carry one Authorization header only"
};

#define NONCE (sizeof(once) / sizeof(once[0]))

/* The characters of a header name (RFC 9110 tchar). */
#define TCHAR "!#$%&'*+-.^_`|~0123456789" \
	"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

static const char folded[] = "a header line may not continue on the next "
    "(obs-fold), and a header name holds only token characters";

struct seen {
	unsigned count[NONCE];
	const char *dup;	/* twice[] of the first repeated one, or
				   folded */
};

/*
 * libmicrohttpd 0.9.75 joins a folded line (one starting with a space or
 * a tab) to the previous header's NAME: "Transfer-Encoding:\r\n chunked"
 * arrives as a header "Transfer-Encodingchunked" with an empty value, and
 * "Content-Length: 5\r\n 0" as "Content-Length0: 5".  It then frames the
 * request with neither, while a proxy in front that unfolds (RFC 9112
 * allows replacing the fold with a space) or keeps the first line frames
 * it by them: the body becomes the next request (smuggling).  A name
 * outside tchar, or one of once[] with more after it, is such a join.
 */
static bool
joined(const char *key)
{
	size_t i, n;

	if (key[strspn(key, TCHAR)] != '\0')
		return true;
	for (i = 0; i < NONCE; i++) {
		n = strlen(once[i]);
		if (strncasecmp(key, once[i], n) == 0 && key[n] != '\0')
			return true;
	}
	return false;
}

static enum MHD_Result
count(void *cls, enum MHD_ValueKind kind, const char *key,
    const char *value)
{
	struct seen *s = cls;
	size_t i;

	(void)kind;
	(void)value;
	if (joined(key)) {
		s->dup = folded;
		return MHD_NO;
	}
	for (i = 0; i < NONCE; i++)
		if (strcasecmp(key, once[i]) == 0 && ++s->count[i] > 1) {
			s->dup = twice[i];
			return MHD_NO;	/* enough: stop the walk */
		}
	return MHD_YES;
}

bool
framing_method_ok(const char *method)
{
	size_t n = strlen(method);

	return n > 0 && n <= 64 && method[strspn(method, TCHAR)] == '\0';
}

int
framing_problem(struct MHD_Connection *c, const char *method,
    const char *version, const char **detail)
{
	struct seen s = { { 0 }, NULL };
	const char *te = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
	    MHD_HTTP_HEADER_TRANSFER_ENCODING);

	*detail = "the method must be a token (RFC 9110: letters, digits "
	    "and !#$%&'*+-.^_`|~)";
	if (!framing_method_ok(method))
		return 400;
	MHD_get_connection_values(c, MHD_HEADER_KIND, count, &s);
	*detail = s.dup;
	if (s.dup != NULL)
		return 400;
	*detail = "a request may not carry both Transfer-Encoding and "
	    "Content-Length";
	if (te != NULL && s.count[0] > 0)
		return 400;
	*detail = "only the chunked transfer coding is supported";
	if (te != NULL && strcasecmp(te, "chunked") != 0)
		return 501;
	*detail = "HTTP/1.1 requests must carry a Host header";
	if (s.count[2] == 0 && version != NULL &&
	    strcmp(version, MHD_HTTP_VERSION_1_1) == 0)
		return 400;
	*detail = NULL;
	return 0;
}

/* framing.h: 1-64 of [A-Za-z0-9._:-]. */
bool
framing_request_id_ok(const char *v)
{
	size_t n, i;

	if (v == NULL)
		return false;
	n = strlen(v);
	if (n == 0 || n > 64)
		return false;
	for (i = 0; i < n; i++) {
		char ch = v[i];

		if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
		    (ch >= '0' && ch <= '9') || ch == '-' || ch == '_' ||
		    ch == '.' || ch == ':'))
			return false;
	}
	return true;
}

/* framing.h: loopback or an --allowed-host name. */
bool
framing_loopback_host(const char *host, const char *const *allowed,
    size_t nallowed)
{
	char name[256];
	const char *end;
	size_t n, i;

	if (host[0] == '[') {
		end = strchr(host, ']');
		if (end == NULL)
			return false;
		n = (size_t)(end - host - 1);
		if (n >= sizeof(name))
			return false;
		memcpy(name, host + 1, n);
		name[n] = '\0';
		end++;
	} else {
		end = strchr(host, ':');
		n = end != NULL ? (size_t)(end - host) : strlen(host);
		if (n >= sizeof(name))
			return false;
		memcpy(name, host, n);
		name[n] = '\0';
		end = host + n;
	}
	if (*end != '\0' && (*end != ':' || strspn(end + 1, "0123456789") !=
	    strlen(end + 1) || end[1] == '\0'))
		return false;
	if (strcasecmp(name, "localhost") == 0 || strcmp(name, "::1") == 0)
		return true;
	for (i = 0; i < nallowed; i++)
		if (strcasecmp(name, allowed[i]) == 0)
			return true;
	return strncmp(name, "127.", 4) == 0 && strspn(name, "0123456789.") ==
	    strlen(name);
}

static ssize_t
no_body(void *cls, uint64_t pos, char *buf, size_t max)
{
	(void)cls;
	(void)pos;
	(void)buf;
	(void)max;
	return MHD_CONTENT_READER_END_OF_STREAM;
}

/* framing.h: HTTP/1.0 framing (no chunks) and closed after. */
struct MHD_Response *
framing_head_response(void)
{
	struct MHD_Response *r = MHD_create_response_from_callback(
	    MHD_SIZE_UNKNOWN, 4096, no_body, NULL, NULL);

	if (r != NULL)
		MHD_set_response_options(r, MHD_RF_HTTP_1_0_COMPATIBLE_STRICT,
		    MHD_RO_END);
	return r;
}

/* framing.h */
bool
framing_forwarded(struct MHD_Connection *c)
{
	static const char *const names[] = { "Forwarded", "X-Forwarded-For",
	    "X-Real-IP" };
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (MHD_lookup_connection_value(c, MHD_HEADER_KIND,
		    names[i]) != NULL)
			return true;
	return false;
}
