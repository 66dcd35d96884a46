/*
 * core/suppress: `# preflight: ignore[...]` markers.  Linear in the input.
 */
#include "suppress.h"

#include <string.h>

#include "arena.h"
#include "err.h"
#include "report.h"

#define MARKER "# preflight: ignore["

struct marker {
	unsigned line;		/* 1-based */
	unsigned col;
	bool alone;		/* the line holds only the comment */
	const char *ids;	/* "a.b,c.d" (arena) */
	const char *reason;	/* "" when none */
	bool used;
	struct marker *next;
};

/* Is id one of the comma-separated ids? */
static bool
has_id(const char *ids, const char *id)
{
	size_t n = strlen(id);
	const char *p = ids;

	while (*p != '\0') {
		const char *end = strchr(p, ',');
		size_t len = end != NULL ? (size_t)(end - p) : strlen(p);

		while (len > 0 && p[0] == ' ') {
			p++;
			len--;
		}
		while (len > 0 && p[len - 1] == ' ')
			len--;
		if (len == n && strncmp(p, id, n) == 0)
			return true;
		if (end == NULL)
			break;
		p = end + 1;
	}
	return false;
}

static int
scan(struct marker **out, const char *buf, size_t len, struct arena *a)
{
	struct marker *head = NULL, **tail = &head;
	const char *p = buf, *stop = buf + len, *ls = buf, *nl;
	size_t i, end;
	unsigned line = 1;

	/* From one '#' to the next (memchr, not a byte loop), counting the
	   lines passed; only the first marker of a line counts. */
	for (;;) {
		const char *m = memchr(p, '#', (size_t)(stop - p));
		const char *ids, *close, *r, *rend;
		struct marker *mk;
		size_t j;

		if (m == NULL)
			break;
		while ((nl = memchr(ls, '\n', (size_t)(m - ls))) != NULL) {
			line++;
			ls = nl + 1;
		}
		if ((size_t)(stop - m) < sizeof(MARKER) - 1 ||
		    memcmp(m, MARKER, sizeof(MARKER) - 1) != 0) {
			p = m + 1;
			continue;
		}
		nl = memchr(m, '\n', (size_t)(stop - m));
		i = (size_t)(ls - buf);
		end = nl != NULL ? (size_t)(nl - buf) : len;
		ids = m + sizeof(MARKER) - 1;
		close = memchr(ids, ']', (size_t)(buf + end - ids));
		if (close != NULL) {
			mk = ARENA_NEW(a, struct marker, 1);
			if (mk == NULL)
				return ERR_NOMEM;
			mk->line = line;
			mk->col = (unsigned)(m - (buf + i)) + 1;
			mk->alone = true;
			for (j = i; buf + j < m; j++)
				if (buf[j] != ' ' && buf[j] != '\t')
					mk->alone = false;
			mk->ids = arena_strndup(a, ids,
			    (size_t)(close - ids));
			r = close + 1;
			while (r < buf + end && (*r == ' ' ||
			    *r == '\t'))
				r++;
			/* The reason ends where another comment
			   starts (" #"), or at the end of the line. */
			for (rend = r; rend < buf + end; rend++)
				if (rend[0] == '#' && (rend == r ||
				    rend[-1] == ' '))
					break;
			while (rend > r && (rend[-1] == ' ' ||
			    rend[-1] == '\t' || rend[-1] == '\r'))
				rend--;
			mk->reason = arena_strndup(a, r,
			    (size_t)(rend - r));
			if (mk->ids == NULL || mk->reason == NULL)
				return ERR_NOMEM;
			*tail = mk;
			tail = &mk->next;
		}
		p = buf + end;
	}
	*out = head;
	return 0;
}

/* The error of reporting marker m. */
static int
marker_failed(struct err *e, int rv, const struct marker *m)
{
	struct err_loc loc = { .line = m->line, .col = m->col };

	return err_while(e, rv, &loc, "reporting the suppression marker at "
	    "line %u", m->line);
}

int
suppress_apply(struct report *r, const char *buf, size_t len, bool forbidden,
    struct arena *a, struct err *e)
{
	struct marker *marks, *m;
	struct finding *f, **link = &r->head;
	struct finding *sup_tail = NULL;
	int rv;

	rv = scan(&marks, buf, len, a);
	if (rv != 0)
		return err_while(e, rv, NULL, "reading suppression markers");
	if (marks == NULL)
		return 0;
	if (forbidden) {
		for (m = marks; m != NULL; m = m->next) {
			rv = report_add(r, a, "policy.inline_suppression",
			    SEV_ERROR, "", m->line, m->col, "remove the "
			    "marker; this policy does not allow them",
			    "inline suppressions are forbidden by the policy "
			    "(ignore[%.80s])", m->ids);
			if (rv != 0)
				return marker_failed(e, rv, m);
		}
		return 0;
	}
	r->tail = NULL;
	while ((f = *link) != NULL) {
		struct marker *hit = NULL;

		for (m = marks; m != NULL && hit == NULL; m = m->next)
			if ((m->line == f->line || (m->alone &&
			    m->line + 1 == f->line)) && has_id(m->ids, f->rule))
				hit = m;
		if (hit == NULL) {
			r->tail = f;
			link = &f->next;
			continue;
		}
		hit->used = true;
		*link = f->next;
		r->nfindings--;
		r->count[f->severity]--;
		f->reason = hit->reason;
		f->next = NULL;
		if (sup_tail == NULL)
			r->suppressed = f;
		else
			sup_tail->next = f;
		sup_tail = f;
		r->nsuppressed++;
	}
	for (m = marks; m != NULL; m = m->next)
		if (m->reason[0] == '\0') {
			rv = report_add(r, a, "suppress.no_reason",
			    SEV_WARNING, "", m->line, m->col, "say why after "
			    "the ]: # preflight: ignore[id] reason",
			    "a suppression without a reason (ignore[%.80s])",
			    m->ids);
			if (rv != 0)
				return marker_failed(e, rv, m);
		}
	return 0;
}
