/*
 * api/api: routing, query strings, problems, ids and time for the HTTP
 * API.  No sockets, no SQL: the store comes in through ctx.
 */
#include "api.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_int.h"
#include "api/replay.h"
#include "core/arena.h"

#define MAX_SEGMENTS 8

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

static int
hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/*
 * Percent-decode s[0..n) into the arena; plus_space for query strings.
 * NULL when malformed, when it decodes to a NUL or a control character,
 * or when the arena is spent.
 */
static char *
pct_decode(const char *s, size_t n, bool plus_space, struct arena *a)
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
			hi = hexval(s[i + 1]);
			lo = hexval(s[i + 2]);
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

static int
query_parse(struct query *q, const char *raw, struct arena *a,
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
			k = pct_decode(p, eq != NULL ? (size_t)(eq - p) : len,
			    true, a);
			v = eq != NULL ? pct_decode(eq + 1,
			    len - (size_t)(eq - p) - 1, true, a) :
			    pct_decode("", 0, true, a);
			if (k == NULL || v == NULL) {
				api_problem(resp, 400, "bad-query",
				    "Bad query string", NULL,
				    "malformed percent-encoding in the query "
				    "string");
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
 * 48 bits of milliseconds then 80 random bits, 26 base32 characters, so
 * ids sort by time; within one millisecond the random part counts up.
 */
void
api_ctx_init(struct api_ctx *ctx)
{
	memset(ctx, 0, sizeof(*ctx));
	pthread_mutex_init(&ctx->id_mu, NULL);
	ctx->replay = replay_new();	/* NULL: CI answers 503 */
}

void
api_ctx_fini(struct api_ctx *ctx)
{
	pthread_mutex_destroy(&ctx->id_mu);
	replay_free(ctx->replay);
	ctx->replay = NULL;
}

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

/* ---- probes --------------------------------------------------------- */

static void
h_healthz(struct api_ctx *ctx, const struct api_req *req,
    const struct query *q, const struct route_match *m,
    struct api_resp *resp)
{
	(void)ctx;
	(void)req;
	(void)q;
	(void)m;
	api_json(resp, 200, json_pack("{s:s}", "status", "ok"));
}

static void
h_readyz(struct api_ctx *ctx, const struct api_req *req,
    const struct query *q, const struct route_match *m,
    struct api_resp *resp)
{
	struct err e = { 0 };

	(void)req;
	(void)q;
	(void)m;
	if (ctx->store.ops->ready(ctx->store.self, &e) != 0) {
		api_problem(resp, 503, "not-ready", "Service Unavailable",
		    NULL, "the check store is not writable or not migrated");
		return;
	}
	api_json(resp, 200, json_pack("{s:s}", "status", "ready"));
}

static void
h_metrics(struct api_ctx *ctx, const struct api_req *req,
    const struct query *q, const struct route_match *m,
    struct api_resp *resp)
{
	char *text = NULL;
	size_t len = 0;

	(void)req;
	(void)q;
	(void)m;
	if (ctx->metrics == NULL || ctx->metrics(ctx->env, &text, &len) !=
	    0) {
		api_problem(resp, 500, "internal", "Internal Server Error",
		    NULL, "metrics are not available");
		return;
	}
	api_resp_fini(resp);
	resp->status = 200;
	resp->content_type = "text/plain; version=0.0.4; charset=utf-8";
	resp->body = text;
	resp->body_len = len;
}

/* ---- routing -------------------------------------------------------- */

struct route {
	const char *method;
	const char *pattern;	/* "/v1/checks/{id}" */
	enum api_access access;	/* who may call it */
	handler_fn *fn;
};

/* openapi.yaml operationIds in comments; test_openapi checks the set. */
static const struct route routes[] = {
	{ "GET", "/healthz", ACCESS_OPEN, h_healthz },	/* getHealth */
	{ "GET", "/readyz", ACCESS_OPEN, h_readyz },	/* getReady */
	{ "GET", "/metrics", ACCESS_METRICS, h_metrics },	/* getMetrics */
	{ "POST", "/v1/checks", ACCESS_TEAM, h_post_check },	/* createCheck */
	{ "GET", "/v1/checks", ACCESS_TEAM, h_list_checks },	/* listChecks */
	{ "GET", "/v1/checks/{id}", ACCESS_TEAM, h_get_check },	/* getCheck */
	{ "GET", "/v1/checks/{id}/diff", ACCESS_TEAM, h_diff },	/* diffChecks */
	{ "GET", "/v1/configs/{name}/checks", ACCESS_TEAM, h_history },
							/* getHistory */
	{ "GET", "/v1/stats/rules", ACCESS_TEAM, h_rule_stats },
							/* getRuleStats */
	{ "POST", "/v1/estimate", ACCESS_TEAM, h_estimate },	/* estimate */
	{ "POST", "/v1/ci/checks", ACCESS_CI, h_ci_check },	/* createCiCheck */
	{ "GET", "/v1/rules", ACCESS_TEAM, h_rules },	/* listRules */
	{ "GET", "/v1/rules/{id}", ACCESS_TEAM, h_rule },	/* getRule */
	{ "GET", "/v1/catalog/gpus", ACCESS_TEAM, h_gpus },	/* listGpus */
	{ "GET", "/v1/catalog/models", ACCESS_TEAM, h_models },
							/* listModels */
	{ "GET", "/v1/keys", ACCESS_TEAM, h_keys },	/* listKeys */
	{ "POST", "/v1/diagnose", ACCESS_TEAM, h_diagnose },	/* diagnose */
	{ "GET", "/v1/measurements", ACCESS_TEAM, h_measurements },
							/* listMeasurements */
	{ "GET", "/v1/checks/{id}/config", ACCESS_TEAM, h_get_config },
							/* getCheckConfig */
	/* The review pages (issue #18): static, no data, so open; the
	   script fetches /v1 with the user's token. */
	{ "GET", "/", ACCESS_OPEN, h_ui_page },		/* pageChecks */
	{ "GET", "/checks/{id}", ACCESS_OPEN, h_ui_page },	/* pageCheck */
	{ "GET", "/checks/{id}/diff/{other}", ACCESS_OPEN, h_ui_page },
							/* pageDiff */
	{ "GET", "/configs/{name}", ACCESS_OPEN, h_ui_page },	/* pageHistory */
	{ "GET", "/try", ACCESS_OPEN, h_ui_page },	/* pageTry */
	{ "GET", "/rules", ACCESS_OPEN, h_ui_page },	/* pageRules */
	{ "GET", "/rules/{id}", ACCESS_OPEN, h_ui_page },	/* pageRule */
	{ "GET", "/ui/{file}", ACCESS_OPEN, h_ui_asset },	/* uiAsset */
};

#define NROUTES (sizeof(routes) / sizeof(routes[0]))

const char *const *
api_routes(void)
{
	static const char *list[NROUTES + 1];
	static char buf[NROUTES][64];
	size_t i;

	for (i = 0; i < NROUTES; i++) {
		snprintf(buf[i], sizeof(buf[i]), "%s %s", routes[i].method,
		    routes[i].pattern);
		list[i] = buf[i];
	}
	list[NROUTES] = NULL;
	return list;
}

/* RFC 3986 unreserved characters: the only ones fixed segments use. */
static bool
is_unreserved(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_' ||
	    c == '~';
}

/* A raw segment, as written in the request target. */
struct rawseg {
	const char *p;
	size_t n;
};

/*
 * Split the raw path into segments without decoding them.  -1 when the
 * target is not in the one form we serve: not starting with '/', bytes
 * outside visible ASCII, a malformed or NUL/control percent-escape, an
 * escaped unreserved character (RFC 3986 6.2.2.2: "%76" is "v"), or a
 * dot segment, written or escaped.  *why says which.
 */
static int
split_raw(struct rawseg *seg, int *nseg, const char *path, const char **why)
{
	const char *p = path;
	int n = 0;

	if (p == NULL || *p != '/') {
		*why = "the request target must start with '/'";
		return -1;
	}
	while (*p == '/') {
		const char *start = ++p;
		size_t dots = 0, len, i;

		while (*p != '\0' && *p != '/')
			p++;
		len = (size_t)(p - start);
		for (i = 0; i < len; i++) {
			unsigned char c = (unsigned char)start[i];

			if (c <= 0x20 || c >= 0x7F) {
				*why = "the path holds a byte that must be "
				    "percent-encoded";
				return -1;
			}
			if (c == '%') {
				int hi, lo;
				unsigned char d;

				if (i + 2 >= len) {
					*why = "malformed percent-encoding in "
					    "the path";
					return -1;
				}
				hi = hexval(start[i + 1]);
				lo = hexval(start[i + 2]);
				if (hi < 0 || lo < 0) {
					*why = "malformed percent-encoding in "
					    "the path";
					return -1;
				}
				d = (unsigned char)(hi * 16 + lo);
				if (d < 0x20 || d == 0x7F) {
					*why = "the path encodes a NUL or "
					    "control character";
					return -1;
				}
				if (is_unreserved(d)) {
					*why = "the path percent-encodes a "
					    "character that needs no encoding";
					return -1;
				}
				i += 2;
				continue;
			}
			if (c == '.')
				dots++;
		}
		if (len > 0 && dots == len && len <= 2) {
			*why = "the path has a '.' or '..' segment";
			return -1;
		}
		if (len == 0 && *p == '\0' && n > 0) {
			*why = NULL;	/* trailing slash: no such resource */
			return -1;
		}
		if (n == MAX_SEGMENTS) {
			*why = NULL;	/* deeper than any route */
			return -1;
		}
		seg[n].p = start;
		seg[n++].n = len;
	}
	*nseg = n;
	return 0;
}

/* Does pattern match the raw segments?  Fixed parts compare byte for
   byte with what was written; {params} are kept raw in m. */
static bool
match(const char *pattern, const struct rawseg *seg, int nseg,
    struct rawseg raw[2], int *nraw)
{
	const char *p = pattern + 1;
	int i = 0;

	*nraw = 0;
	if (*p == '\0')	/* "/": the one empty segment */
		return nseg == 1 && seg[0].n == 0;
	while (*p != '\0') {
		const char *end = strchr(p, '/');
		size_t len = end != NULL ? (size_t)(end - p) : strlen(p);

		if (i >= nseg)
			return false;
		if (p[0] == '{') {
			if (seg[i].n == 0 || *nraw == 2)
				return false;
			raw[(*nraw)++] = seg[i];
		} else if (seg[i].n != len || memcmp(seg[i].p, p, len) != 0) {
			return false;
		}
		i++;
		p = end != NULL ? end + 1 : p + len;
	}
	return i == nseg;
}

int
api_route(struct api_route *out, const char *method, const char *path,
    struct arena *a)
{
	struct rawseg seg[MAX_SEGMENTS], raw[2];
	const char *why = NULL;
	bool head = strcmp(method, "HEAD") == 0;
	size_t i, used;
	int nseg = 0, nraw, k;

	memset(out, 0, sizeof(*out));
	out->pattern = "unmatched";
	out->access = ACCESS_OPEN;
	out->index = -1;
	if (split_raw(seg, &nseg, path, &why) != 0) {
		out->status = why != NULL ? 400 : 404;
		out->why = why;
		return out->status;
	}
	for (i = 0; i < NROUTES; i++) {
		if (!match(routes[i].pattern, seg, nseg, raw, &nraw))
			continue;
		if (strcmp(routes[i].method, method) == 0 ||
		    (head && strcmp(routes[i].method, "GET") == 0)) {
			out->index = (int)i;
			out->pattern = routes[i].pattern;
			out->access = routes[i].access;
			for (k = 0; k < nraw; k++) {
				/* Parameters are decoded once, here. */
				out->param[k] = pct_decode(raw[k].p, raw[k].n,
				    false, a);
				if (out->param[k] == NULL) {
					out->status = 413;
					out->why = NULL;
					return out->status;
				}
			}
			out->nparam = nraw;
			out->status = 0;
			return 0;
		}
		/* The path exists under another method: 405 (or OPTIONS),
		   and the route's own access rules still apply. */
		out->pattern = routes[i].pattern;
		out->access = routes[i].access;
		used = strlen(out->allow);
		snprintf(out->allow + used, sizeof(out->allow) - used,
		    "%s%s%s", used > 0 ? ", " : "", routes[i].method,
		    strcmp(routes[i].method, "GET") == 0 ? ", HEAD" : "");
	}
	out->status = out->allow[0] != '\0' ? 405 : 404;
	return out->status;
}

static bool
origin_allowed(const struct api_ctx *ctx, const char *origin)
{
	size_t i;

	for (i = 0; origin != NULL && i < ctx->ncors; i++)
		if (strcmp(ctx->cors_origins[i], origin) == 0)
			return true;
	return false;
}

void
api_cors(struct api_ctx *ctx, const struct api_req *req,
    struct api_resp *resp)
{
	if (ctx->ncors > 0 && req->origin != NULL &&
	    origin_allowed(ctx, req->origin)) {
		api_header(resp, "Access-Control-Allow-Origin", req->origin);
		api_header(resp, "Vary", "Origin");
		api_header(resp, "Access-Control-Expose-Headers",
		    "Location, X-Request-Id, Retry-After");
	}
}

void
api_route_problem(struct api_resp *resp, const struct api_route *rt)
{
	api_problem(resp, 400, "bad-request-target", "Bad Request", NULL,
	    "%s; send the path in its canonical form (e.g. /v1/checks)",
	    rt->why != NULL ? rt->why : "malformed request target");
}

void
api_dispatch(struct api_ctx *ctx, const struct api_route *rt,
    const struct api_req *req, struct api_resp *resp)
{
	struct route_match m;
	struct query q;
	const struct route *hit;
	const char *method = req->method;

	memset(resp, 0, sizeof(*resp));
	resp->route = rt->pattern;
	api_cors(ctx, req, resp);
	if (rt->status == 400) {
		api_route_problem(resp, rt);
		return;
	}
	if (rt->status == 413) {
		api_problem(resp, 413, "request-too-large",
		    "Request exceeds its memory budget", NULL,
		    "the request needs more memory than one request may use");
		return;
	}
	if (rt->status == 405) {
		char *a = arena_printf(req->arena, "%s, OPTIONS", rt->allow);

		if (strcmp(method, "OPTIONS") == 0) {
			/* CORS preflight for allowed origins only. */
			if (req->origin != NULL &&
			    !origin_allowed(ctx, req->origin)) {
				api_problem(resp, 403, "cors-forbidden",
				    "Forbidden", NULL,
				    "origin '%.100s' is not allowed",
				    req->origin);
				return;
			}
			resp->status = 204;
			api_header(resp, "Allow", a != NULL ? a : rt->allow);
			if (req->origin != NULL) {
				api_header(resp,
				    "Access-Control-Allow-Methods",
				    a != NULL ? a : rt->allow);
				api_header(resp,
				    "Access-Control-Allow-Headers",
				    "Authorization, Content-Type, "
				    "Idempotency-Key, X-Request-Id, "
				    "X-Preflight-Signature, "
				    "X-Preflight-Timestamp, "
				    "X-Preflight-Delivery");
				api_header(resp, "Access-Control-Max-Age",
				    "600");
			}
			return;
		}
		api_problem(resp, 405, "method-not-allowed",
		    "Method Not Allowed", NULL,
		    "%s is not allowed here; allowed: %s", method, rt->allow);
		api_header(resp, "Allow", a != NULL ? a : rt->allow);
		return;
	}
	if (rt->status != 0 || rt->index < 0 || (size_t)rt->index >= NROUTES) {
		api_problem(resp, 404, "not-found", "Not Found", NULL,
		    "no such resource");
		return;
	}
	hit = &routes[rt->index];
	m.param[0] = rt->param[0];
	m.param[1] = rt->param[1];
	m.nparam = rt->nparam;
	if (query_parse(&q, req->query != NULL ? req->query : "",
	    req->arena, resp) != 0)
		return;
	hit->fn(ctx, req, &q, &m, resp);
	if (resp->status == 0 && resp->pending == NULL)
		api_problem(resp, 500, "internal", "Internal Server Error",
		    NULL, "the handler gave no answer");
}

void
api_handle(struct api_ctx *ctx, const struct api_req *req,
    struct api_resp *resp)
{
	struct api_route rt;

	api_route(&rt, req->method, req->path, req->arena);
	api_dispatch(ctx, &rt, req, resp);
}
