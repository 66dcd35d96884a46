/*
 * core/err: first-error-wins error records.  No allocation, no I/O.
 */
#include "err.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int
err_set(struct err *e, enum err_code code, const struct err_loc *loc,
    const char *fmt, ...)
{
	va_list ap;
	size_t n;

	if (e == NULL || e->code != ERR_OK)
		return code;
	e->code = code;
	va_start(ap, fmt);
	vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
	va_end(ap);
	/* One line, always: a message quoting input must not break it. */
	for (n = 0; e->msg[n] != '\0'; n++)
		if (e->msg[n] == '\n' || e->msg[n] == '\r')
			e->msg[n] = ' ';
	if (loc != NULL)
		e->loc = *loc;
	else
		memset(&e->loc, 0, sizeof(e->loc));
	return code;
}

int
err_while(struct err *e, int code, const struct err_loc *loc,
    const char *fmt, ...)
{
	char what[192];
	va_list ap;

	if (e == NULL || e->code != ERR_OK)
		return code;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	if (code == ERR_NOMEM)
		return err_set(e, code, loc, "request memory budget spent "
		    "while %s", what);
	return err_set(e, code, loc, "%s error while %s",
	    err_code_name((enum err_code)code), what);
}

const char *
err_code_name(enum err_code code)
{
	switch (code) {
	case ERR_OK:
		return "ok";
	case ERR_NOMEM:
		return "nomem";
	case ERR_PARSE:
		return "parse";
	case ERR_SCHEMA:
		return "schema";
	case ERR_NOTFOUND:
		return "notfound";
	case ERR_STORE:
		return "store";
	case ERR_INTERNAL:
		return "internal";
	case ERR_LIMIT:
		return "limit";
	case ERR_BUSY:
		return "busy";
	case ERR_TAKEN:
		return "taken";
	}
	return "unknown";
}
