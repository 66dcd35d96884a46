/*
 * api/ui: serving the review pages and their assets (issue #18).  The
 * files are static bytes compiled in (api/embed_ui.sh); nothing here reads
 * the store or the request body.  Every page route answers with the same
 * HTML shell, whose script reads location.pathname and draws the page from
 * the JSON API.
 */
#include "api/ui.h"

#include <string.h>
#include <stdlib.h>

#include "api/api_int.h"

const struct ui_asset *
ui_asset_find(const char *name)
{
	size_t i;

	for (i = 0; name != NULL && i < ui_assets_count; i++)
		if (strcmp(ui_assets[i].name, name) == 0)
			return &ui_assets[i];
	return NULL;
}

bool
ui_etag_matches(const char *inm, const char *etag)
{
	size_t n = strlen(etag);
	const char *p = inm;

	if (p == NULL)
		return false;
	while (*p != '\0') {
		const char *end;

		while (*p == ' ' || *p == '\t' || *p == ',')
			p++;
		if (*p == '\0')
			break;
		if (*p == '*')
			return true;
		if (p[0] == 'W' && p[1] == '/')
			p += 2;
		end = p;
		if (*end == '"') {
			end = strchr(end + 1, '"');
			if (end == NULL)
				return false;	/* malformed: no match */
			end++;
		} else {
			while (*end != '\0' && *end != ',')
				end++;
		}
		if ((size_t)(end - p) == n && memcmp(p, etag, n) == 0)
			return true;
		p = end;
		while (*p != '\0' && *p != ',')
			p++;
	}
	return false;
}

/* Answer with asset a: 304 when the client holds it, else its bytes. */
static void
serve_asset(const struct ui_asset *a, const struct api_req *req,
    struct api_resp *resp)
{
	api_resp_fini(resp);
	resp->cache_control = "no-cache";
	api_header(resp, "ETag", a->etag);
	api_header(resp, "Content-Security-Policy", UI_CSP);
	api_header(resp, "Referrer-Policy", "no-referrer");
	if (ui_etag_matches(req->if_none_match, a->etag)) {
		resp->status = 304;
		resp->content_type = NULL;
		return;
	}
	resp->status = 200;
	resp->content_type = a->type;
	if (req->head || a->len == 0)
		return;	/* HEAD: the headers only */
	resp->body = malloc(a->len);
	if (resp->body == NULL) {
		api_problem(resp, 500, "internal", "Internal Server Error",
		    NULL, "out of memory");
		return;
	}
	memcpy(resp->body, a->data, a->len);
	resp->body_len = a->len;
}

/* The pages (/, /checks/{id}, /configs/{name}, /try, /rules, ...): the
   HTML shell. */
void
h_ui_page(struct api_ctx *ctx, const struct api_req *req,
    const struct query *q, const struct route_match *m,
    struct api_resp *resp)
{
	const struct ui_asset *a = ui_asset_find("index.html");

	(void)ctx;
	(void)q;	/* filters and cursors are the script's to read */
	(void)m;
	if (a == NULL) {
		api_problem(resp, 500, "internal", "Internal Server Error",
		    NULL, "the pages were not built into this binary");
		return;
	}
	serve_asset(a, req, resp);
}

/* GET /ui/{file}: a script, style sheet or icon of the pages. */
void
h_ui_asset(struct api_ctx *ctx, const struct api_req *req,
    const struct query *q, const struct route_match *m,
    struct api_resp *resp)
{
	const struct ui_asset *a = ui_asset_find(m->param[0]);

	(void)ctx;
	(void)q;
	if (a == NULL) {
		api_problem(resp, 404, "not-found", "Not Found", NULL,
		    "no such file");
		return;
	}
	serve_asset(a, req, resp);
}
