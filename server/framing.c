/*
 * server/framing: request headers that must appear at most once (see
 * framing.h).
 */
#include "framing.h"

#include <stddef.h>
#include <strings.h>

static const char *const once[] = {
	MHD_HTTP_HEADER_CONTENT_LENGTH, MHD_HTTP_HEADER_TRANSFER_ENCODING,
	MHD_HTTP_HEADER_HOST, MHD_HTTP_HEADER_AUTHORIZATION
};

#define NONCE (sizeof(once) / sizeof(once[0]))

struct seen {
	unsigned count[NONCE];
	const char *dup;
};

static enum MHD_Result
count(void *cls, enum MHD_ValueKind kind, const char *key,
    const char *value)
{
	struct seen *s = cls;
	size_t i;

	(void)kind;
	(void)value;
	for (i = 0; i < NONCE; i++)
		if (strcasecmp(key, once[i]) == 0 && ++s->count[i] > 1) {
			s->dup = once[i];
			return MHD_NO;	/* enough: stop the walk */
		}
	return MHD_YES;
}

const char *
framing_duplicate(struct MHD_Connection *c)
{
	struct seen s = { { 0 }, NULL };

	MHD_get_connection_values(c, MHD_HEADER_KIND, count, &s);
	return s.dup;
}
