/*
 * api/problem: responses and RFC 9457 problems, with the one table from
 * error code to HTTP status (c-style.md section 4).  No sockets, no SQL.
 */
#include "api.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_int.h"
#include "api/jsonw.h"
#include "core/arena.h"

/* ---- responses ------------------------------------------------------ */

void
api_resp_fini(struct api_resp *resp)
{
	free(resp->body);
	resp->body = NULL;
	resp->body_len = 0;
}

void
api_header(struct api_resp *resp, const char *name, const char *value)
{
	if (resp->nheaders < API_MAX_HEADERS) {
		resp->headers[resp->nheaders].name = name;
		resp->headers[resp->nheaders++].value = value;
	}
}

void
api_json_text(struct api_resp *resp, int status, char *body, size_t len)
{
	api_resp_fini(resp);
	resp->status = status;
	resp->content_type = "application/json";
	resp->body = body;
	resp->body_len = len;
}

void
api_json(struct api_resp *resp, int status, json_t *j)
{
	char *text = j != NULL ? json_dumps(j, JSON_COMPACT |
	    JSON_REAL_PRECISION(15)) : NULL;	/* jw_num2's numbers */

	json_decref(j);
	if (text == NULL) {
		api_problem(resp, 500, "internal", "Internal Server Error",
		    NULL, "the response could not be built");
		return;
	}
	api_json_text(resp, status, text, strlen(text));
}

/*
 * s made valid UTF-8 in place, each byte of a bad sequence a '?'.  A
 * detail may quote request bytes that are not UTF-8 (a Content-Type),
 * and vsnprintf cuts a long one wherever its buffer ends, inside a
 * character too; jansson refuses such text, and the 4xx became a 500
 * "out of memory".
 */
static void
utf8_repair(char *s)
{
	unsigned char *p = (unsigned char *)s;
	size_t left = strlen(s), n;

	while (left > 0) {
		n = jw_utf8_len(p, left);
		if (n == 0) {
			*p = '?';
			n = 1;
		}
		p += n;
		left -= n;
	}
}

void
api_problem(struct api_resp *resp, int status, const char *slug,
    const char *title, const struct err_loc *loc, const char *fmt, ...)
{
	char detail[512], type[96];
	va_list ap;
	json_t *j;
	char *text;

	va_start(ap, fmt);
	vsnprintf(detail, sizeof(detail), fmt, ap);
	va_end(ap);
	utf8_repair(detail);
	snprintf(type, sizeof(type), "urn:preflight:problem:%s", slug);
	j = json_pack("{s:s, s:s, s:i, s:s}", "type", type, "title", title,
	    "status", status, "detail", detail);
	if (j != NULL && loc != NULL && loc->line > 0) {
		json_object_set_new(j, "line", json_integer(loc->line));
		json_object_set_new(j, "column", json_integer(loc->col));
		json_object_set_new(j, "path", json_string(loc->path));
	}
	text = j != NULL ? json_dumps(j, JSON_COMPACT) : NULL;
	json_decref(j);
	api_resp_fini(resp);
	resp->status = status;
	resp->content_type = "application/problem+json";
	if (text == NULL) {
		/* Last resort: a constant body, still a problem document. */
		static const char fallback[] = "{\"type\":\"urn:preflight:"
		    "problem:internal\",\"title\":\"Internal Server Error\","
		    "\"status\":500,\"detail\":\"out of memory\"}";

		resp->status = 500;
		resp->body = malloc(sizeof(fallback));
		if (resp->body != NULL) {
			memcpy(resp->body, fallback, sizeof(fallback));
			resp->body_len = sizeof(fallback) - 1;
		}
		return;
	}
	resp->body = text;
	resp->body_len = strlen(text);
}

void
api_too_large(struct api_resp *resp, size_t max_body)
{
	api_problem(resp, 413, "body-too-large", "Content Too Large", NULL,
	    "the request body is larger than %zu bytes", max_body);
}

void
api_unavailable(struct api_resp *resp, const char *detail, int retry_s)
{
	static const char *const secs[] = { "0", "1", "2", "3", "4", "5",
	    "6", "7", "8", "9", "10" };

	api_problem(resp, 503, "unavailable", "Service Unavailable", NULL,
	    "%s", detail);
	api_header(resp, "Retry-After",
	    secs[retry_s < 1 ? 1 : retry_s > 10 ? 10 : retry_s]);
}

void
api_problem_host(struct api_resp *resp)
{
	api_problem(resp, 403, "wrong-host", "Forbidden", NULL,
	    "this server answers only to localhost, 127.0.0.1 or [::1] while "
	    "it runs without authentication (--auth none)");
}

void
api_framing_problem(struct api_resp *resp, int status, const char *detail)
{
	if (status == 501)
		api_problem(resp, 501, "not-implemented", "Not Implemented",
		    NULL, "%s", detail);
	else
		api_problem(resp, 400, "bad-framing", "Bad Request", NULL,
		    "%s", detail);
}

void
api_quota_problem(struct api_resp *resp, int retry_s, struct arena *a)
{
	const char *v = arena_printf(a, "%d", retry_s);

	api_problem(resp, 429, "quota-exceeded", "Too Many Requests", NULL,
	    "this team is past its write quota (checks per minute or stored "
	    "bytes per day); retry in %d s", retry_s);
	api_header(resp, "Retry-After", v != NULL ? v : "60");
}

void
api_busy_problem(struct api_resp *resp, enum api_busy why)
{
	if (why == API_BUSY_UNREAD_ALL) {
		api_unavailable(resp, "the server holds as many unread "
		    "answers as it may (--body-memory); retry shortly", 2);
		return;
	}
	if (why == API_BUSY_UNREAD)
		api_problem(resp, 429, "too-many-unread", "Too Many Requests",
		    NULL, "this team holds a quarter of --body-memory in "
		    "bodies being sent and answers not yet read; retry once "
		    "its clients have read them");
	else
		api_problem(resp, 429, "too-many-at-once",
		    "Too Many Requests", NULL, "this team has as many "
		    "requests waiting as it may have (64, each served when "
		    "one of its --quota-at-once is done); retry in 1 s");
	api_header(resp, "Retry-After", "1");
}

void
api_auth_problem(struct api_resp *resp, int status)
{
	if (status == 429) {
		api_problem(resp, 429, "too-many-failures",
		    "Too Many Requests", NULL, "too many failed "
		    "authentication attempts from this address with this "
		    "token; wait a minute");
		api_header(resp, "Retry-After", "60");
		return;
	}
	api_problem(resp, 401, "unauthorized", "Unauthorized", NULL,
	    "send Authorization: Bearer <token> (preflight token create)");
	api_header(resp, "WWW-Authenticate", "Bearer realm=\"preflight\"");
}

/* One table from error code to HTTP status (c-style.md section 4). */
void
api_problem_err(struct api_resp *resp, const struct err *e)
{
	const struct err_loc *loc = e->loc.line > 0 ? &e->loc : NULL;

	switch (e->code) {
	case ERR_PARSE:
		api_problem(resp, 400, "invalid-config", "Invalid config",
		    loc, "%s", e->msg);
		return;
	case ERR_SCHEMA:
		api_problem(resp, 422, "invalid-context",
		    "Unprocessable request", loc, "%s", e->msg);
		return;
	case ERR_LIMIT:
		api_problem(resp, 413, "config-too-large",
		    "Config exceeds a limit", loc, "%s", e->msg);
		return;
	case ERR_NOMEM:
		api_problem(resp, 413, "request-too-large",
		    "Request exceeds its memory budget", NULL,
		    "the request needs more memory than one request may use");
		return;
	case ERR_NOTFOUND:
		api_problem(resp, 404, "not-found", "Not Found", NULL,
		    "%s", e->msg);
		return;
	case ERR_STORE:
	case ERR_TAKEN:		/* answered with the winner before this */
		/* The message may name files or SQL: never show it. */
		api_problem(resp, 503, "store-unavailable",
		    "Service Unavailable", NULL,
		    "the check store cannot be used right now; retry later");
		api_header(resp, "Retry-After", "5");
		return;
	case ERR_BUSY:
		api_problem(resp, 503, "busy", "Service Unavailable", NULL,
		    "the query took longer than its time budget; narrow it "
		    "(since, team, limit) or retry later");
		api_header(resp, "Retry-After", "5");
		return;
	case ERR_OK:
	case ERR_INTERNAL:
		break;
	}
	api_problem(resp, 500, "internal", "Internal Server Error", NULL,
	    "an internal error occurred");
}

