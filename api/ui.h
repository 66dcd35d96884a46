/*
 * api/ui: the review pages (issue #18).  The HTML, CSS and JavaScript
 * under ui/ are compiled into the binary by api/embed_ui.sh
 * (build/gen/ui_assets.c); the handlers here serve them.  They hold no
 * data: the pages fetch the JSON API with the user's token, so every page
 * and asset route is ACCESS_OPEN.
 *
 * Every answer carries a strict Content-Security-Policy (scripts, styles
 * and connections to this origin only, no inline script or style, no
 * framing), Cache-Control: no-cache and a strong ETag of the bytes; an
 * If-None-Match that matches is a 304 without a body.
 */
#ifndef API_UI_H
#define API_UI_H

#include <stdbool.h>
#include <stddef.h>

/* One embedded file of ui/. */
struct ui_asset {
	const char *name;	/* file name under ui/, "app.js" */
	const char *type;	/* its Content-Type */
	const unsigned char *data;	/* the bytes (static) */
	size_t len;		/* bytes in data */
	const char *etag;	/* strong ETag, quoted: "\"1f2e...\"" */
};

extern const struct ui_asset ui_assets[];	/* build/gen/ui_assets.c */
extern const size_t ui_assets_count;

/* The Content-Security-Policy of every page and asset. */
#define UI_CSP "default-src 'self'; script-src 'self'; style-src 'self'; " \
	"img-src 'self'; connect-src 'self'; font-src 'self'; " \
	"object-src 'none'; base-uri 'none'; form-action 'self'; " \
	"frame-ancestors 'none'"

/* The asset called name, or NULL.  Borrowed (static). */
const struct ui_asset *ui_asset_find(const char *name);

/*
 * Does an If-None-Match header value (NULL: absent) match etag?  RFC 9110
 * section 13.1.2: "*" or any listed tag, compared weakly (a W/ prefix is
 * ignored).
 */
bool ui_etag_matches(const char *if_none_match, const char *etag);

#endif /* API_UI_H */
