/*
 * core/suppress: `# preflight: ignore[...]` markers.  Linear in the input
 * (each finding looks its marker up by line).
 */
#include "suppress.h"

#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "err.h"
#include "report.h"

#define MARKER "# preflight: ignore["

/*
 * A reason is cut to this many bytes (at a character boundary, "..."
 * added): every finding the marker suppresses carries it, so one long
 * reason on a line of 1,000 findings made a 110 KB config a 100 MB
 * report (and a 100 MB stored check).
 */
#define REASON_MAX 240

struct marker {
	unsigned line;		/* 1-based */
	unsigned col;
	bool alone;		/* the line holds only the comment */
	const char *ids;	/* "a.b,c.d" (arena) */
	struct idref *idv;	/* its ids, sorted (split_ids) */
	size_t nid;
	const char *reason;	/* "" when none */
	bool used;
	struct marker *next;
};

/* One id of a marker, in the marker's text. */
struct idref {
	const char *p;
	size_t n;
};

static int
idref_cmp(const void *x, const void *y)
{
	const struct idref *u = x, *v = y;
	int c = memcmp(u->p, v->p, u->n < v->n ? u->n : v->n);

	if (c != 0)
		return c;
	return (u->n > v->n) - (u->n < v->n);
}

/* A marker's reason, n bytes at r, cut to REASON_MAX (see there). */
static const char *
reason_dup(const char *r, size_t n, struct arena *a)
{
	char *out;

	if (n <= REASON_MAX)
		return arena_strndup(a, r, n);
	n = REASON_MAX;
	while (n > 0 && ((unsigned char)r[n] & 0xC0) == 0x80)
		n--;	/* not inside a UTF-8 sequence */
	out = arena_take(a, 1, 1, n + 4);
	if (out == NULL)
		return NULL;
	memcpy(out, r, n);
	memcpy(out + n, "...", 4);
	return out;
}

/*
 * Split m->ids at commas (each trimmed of spaces, empty ones dropped) into
 * m->idv, sorted, so that has_id() is a binary search: a marker may list
 * thousands of ids and a line hold thousands of findings.
 */
static int
split_ids(struct marker *m, struct arena *a)
{
	const char *p = m->ids, *end;
	size_t n = 1, len;

	for (end = p; *end != '\0'; end++)
		n += *end == ',';
	m->idv = ARENA_NEW(a, struct idref, n);
	if (m->idv == NULL)
		return ERR_NOMEM;
	m->nid = 0;
	for (;;) {
		end = strchr(p, ',');
		len = end != NULL ? (size_t)(end - p) : strlen(p);
		while (len > 0 && p[0] == ' ') {
			p++;
			len--;
		}
		while (len > 0 && p[len - 1] == ' ')
			len--;
		if (len > 0) {
			m->idv[m->nid].p = p;
			m->idv[m->nid++].n = len;
		}
		if (end == NULL)
			break;
		p = end + 1;
	}
	qsort(m->idv, m->nid, sizeof(*m->idv), idref_cmp);
	return 0;
}

/* Is id one of m's ids? */
static bool
has_id(const struct marker *m, const char *id)
{
	struct idref key = { id, strlen(id) };

	return key.n > 0 && bsearch(&key, m->idv, m->nid, sizeof(*m->idv),
	    idref_cmp) != NULL;
}

static int
scan(struct marker **out, const char *buf, size_t len, struct arena *a)
{
	struct marker *head = NULL, **tail = &head;
	const char *p = buf, *stop = buf + len, *ls = buf, *seen = buf, *nl;
	size_t i, end;
	unsigned line = 1;

	/* From one '#' to the next (memchr, not a byte loop), counting the
	   lines passed; only the first marker of a line counts.  seen: the
	   newlines before it are counted (from the line's start at every
	   '#', a 1 MB line of them cost 4 s). */
	for (;;) {
		const char *m = memchr(p, '#', (size_t)(stop - p));
		const char *ids, *close, *r, *rend;
		struct marker *mk;
		size_t j;

		if (m == NULL)
			break;
		while ((nl = memchr(seen, '\n', (size_t)(m - seen))) != NULL) {
			line++;
			ls = nl + 1;
			seen = ls;
		}
		seen = m;
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
			mk->reason = reason_dup(r, (size_t)(rend - r), a);
			if (mk->ids == NULL || mk->reason == NULL ||
			    split_ids(mk, a) != 0)
				return ERR_NOMEM;
			*tail = mk;
			tail = &mk->next;
		}
		p = buf + end;
	}
	*out = head;
	return 0;
}

/* The index of the first of m[0..n) (ascending lines) at line or after. */
static size_t
first_at(struct marker *const *m, size_t n, unsigned line)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (m[mid]->line < line)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
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
	struct marker *marks, *m, **byline;
	struct finding *f, **link = &r->head;
	size_t nm;
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
	/* The markers by line (scan() found them in line order, one per
	   line at most): each finding looks at the two lines that can
	   hold its marker, not at every marker (findings x markers was
	   0.4 s for 10,000 of one and 25,000 of the other). */
	for (nm = 0, m = marks; m != NULL; m = m->next)
		nm++;
	byline = ARENA_NEW(a, struct marker *, nm);
	if (byline == NULL)
		return err_set(e, ERR_NOMEM, NULL, "request memory budget "
		    "spent while reading suppression markers");
	for (nm = 0, m = marks; m != NULL; m = m->next)
		byline[nm++] = m;
	r->tail = NULL;
	while ((f = *link) != NULL) {
		struct marker *hit = NULL;
		size_t k = first_at(byline, nm, f->line > 1 ? f->line - 1 : 1);

		for (; k < nm && byline[k]->line <= f->line && hit == NULL;
		    k++) {
			m = byline[k];
			if ((m->line == f->line || (m->alone &&
			    m->line + 1 == f->line)) && has_id(m, f->rule))
				hit = m;
		}
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
