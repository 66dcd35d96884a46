/*
 * core/diagnose: the log scanner (see diagnose.h).
 *
 * Every fixed string of the signature table (and the traceback frames,
 * Ray markers and error markers) goes into one Aho-Corasick automaton,
 * built once per process.  The log is cut into lines, and lines at '\r'
 * into segments (a progress bar redraws itself with '\r'); each segment's
 * head (max_line bytes) runs through the automaton once, which gives the
 * set of patterns on it.  A segment then belongs to the first row of the
 * table it matches.  CUDA OOM messages are held back until the end: which
 * row they belong to depends on their numbers and on the traceback around
 * them, which may come after the message.
 *
 *   bytes ──► segments ──► Aho-Corasick ──► pattern set ──► first row
 *                                                 └──► CUDA OOM events
 *                                                        (numbers, frames)
 *
 * No I/O; the work is linear in the bytes examined.
 */
#include "diagnose.h"

#include <stdint.h>
#include <string.h>

#include "arena.h"
#include "diagnose_int.h"

#define PAT_MAX 256		/* patterns the automaton holds */
#define PAT_WORDS (PAT_MAX / 64)
#define SIG_MAX 64		/* rows the table may have */
#define STATE_MAX 65535		/* automaton states (uint16_t) */
#define OOM_EVENTS 64		/* CUDA OOM messages kept; later ones are
				   counted into the last */
#define TB_REACH 400		/* lines a traceback may span */
#define FRAME_WINDOW 40		/* lines searched for frames before an OOM
				   outside a traceback */
#define LOOKAHEAD 10		/* lines after an OOM its traceback may
				   start within */
#define CONT_LINES 3		/* lines an OOM message may go on over */
#define RAY_REACH 200		/* lines a Ray marker covers */
#define MATCHER_CAP ((size_t)8 << 20)
#define VERSION_DEFS 32		/* version lines the table may have */

struct pset {
	uint64_t w[PAT_WORDS];
};

/* A row's patterns as ids (-1: none). */
struct rowpat {
	struct pset any;
	int all[DIAG_ALSO];
	int none[DIAG_ALSO];
	bool oom;		/* a CUDA OOM row: decided at the end */
};

/* The automaton and the table's patterns as sets; built once. */
struct matcher {
	unsigned char cls[256];	/* byte -> class; 0: in no pattern */
	size_t nclass;
	size_t nstates;
	uint16_t *go;		/* nstates x nclass transitions */
	struct pset *out;	/* patterns ending at each state */
	unsigned char *has_out;	/* out[s] is not empty */
	size_t npat;
	const char *pat[PAT_MAX];
	size_t nsig;
	struct rowpat row[SIG_MAX];
	struct pset phase[DIAG_PH_COUNT];
	struct pset ray;
	struct pset err;
	struct pset oom;	/* any pattern of a CUDA OOM row */
	int tb;			/* the traceback marker */
	size_t nver;
	int ver[VERSION_DEFS];	/* diag_versions[i]'s phrase */
	struct pset vers;	/* all of them */
};

static const void *_Atomic matcher_slot;

static void
pset_add(struct pset *s, int id)
{
	s->w[id / 64] |= (uint64_t)1 << (id % 64);
}

static bool
pset_has(const struct pset *s, int id)
{
	return id >= 0 && (s->w[id / 64] >> (id % 64) & 1) != 0;
}

static bool
pset_meets(const struct pset *a, const struct pset *b)
{
	size_t i;

	for (i = 0; i < PAT_WORDS; i++)
		if ((a->w[i] & b->w[i]) != 0)
			return true;
	return false;
}

/* ---- building the automaton ----------------------------------------- */

/* The id of s, added when new; -1 when the matcher is full. */
static int
intern(struct matcher *m, const char *s)
{
	size_t i;

	for (i = 0; i < m->npat; i++)
		if (strcmp(m->pat[i], s) == 0)
			return (int)i;
	if (m->npat == PAT_MAX || s[0] == '\0')
		return -1;
	m->pat[m->npat] = s;
	return (int)m->npat++;
}

/* Intern a NULL-terminated list into set; false when full. */
static bool
intern_set(struct matcher *m, struct pset *set, const char *const *list,
    size_t max)
{
	size_t i;
	int id;

	for (i = 0; i < max && list[i] != NULL; i++) {
		id = intern(m, list[i]);
		if (id < 0)
			return false;
		pset_add(set, id);
	}
	return true;
}

static bool
collect(struct matcher *m)
{
	const struct diag_sig *sigs = diagnose_signatures(&m->nsig);
	size_t i, k;

	if (m->nsig > SIG_MAX)
		return false;
	for (i = 0; i < m->nsig; i++) {
		struct rowpat *r = &m->row[i];

		if (!intern_set(m, &r->any, sigs[i].any, DIAG_ANY))
			return false;
		r->oom = sigs[i].extract == DIAG_X_CUDA_OOM;
		if (r->oom)
			intern_set(m, &m->oom, sigs[i].any, DIAG_ANY);
		for (k = 0; k < DIAG_ALSO; k++) {
			r->all[k] = sigs[i].all[k] != NULL ?
			    intern(m, sigs[i].all[k]) : -1;
			r->none[k] = sigs[i].none[k] != NULL ?
			    intern(m, sigs[i].none[k]) : -1;
			if ((sigs[i].all[k] != NULL && r->all[k] < 0) ||
			    (sigs[i].none[k] != NULL && r->none[k] < 0))
				return false;
		}
	}
	for (i = 0; i < DIAG_PH_COUNT; i++)
		if (!intern_set(m, &m->phase[i], diag_phases[i].frames,
		    DIAG_PHASE_PATTERNS))
			return false;
	for (i = 0; diag_versions[i].name != NULL; i++) {
		if (i == VERSION_DEFS)
			return false;
		m->ver[i] = intern(m, diag_versions[i].phrase);
		if (m->ver[i] < 0)
			return false;
		pset_add(&m->vers, m->ver[i]);
	}
	m->nver = i;
	m->tb = intern(m, diag_traceback_marker);
	return m->tb >= 0 &&
	    intern_set(m, &m->ray, diag_ray_markers, SIZE_MAX) &&
	    intern_set(m, &m->err, diag_error_markers, SIZE_MAX);
}

/* Build the trie, then the failure links and full transitions (BFS). */
static const void *
matcher_build(struct arena *a, const void *arg)
{
	struct matcher *m = ARENA_NEW(a, struct matcher, 1);
	size_t i, j, c, total = 1, head = 0, tail = 0;
	uint16_t *fail, *queue;

	(void)arg;
	if (m == NULL || !collect(m))
		return NULL;
	for (i = 0; i < m->npat; i++) {
		total += strlen(m->pat[i]);
		for (j = 0; m->pat[i][j] != '\0'; j++)
			m->cls[(unsigned char)m->pat[i][j]] = 1;
	}
	if (total > STATE_MAX)
		return NULL;
	m->nclass = 1;
	for (c = 0; c < 256; c++)
		m->cls[c] = m->cls[c] != 0 ? (unsigned char)m->nclass++ : 0;
	m->go = ARENA_NEW(a, uint16_t, total * m->nclass);
	m->out = ARENA_NEW(a, struct pset, total);
	m->has_out = ARENA_NEW(a, unsigned char, total);
	fail = ARENA_NEW(a, uint16_t, total);
	queue = ARENA_NEW(a, uint16_t, total);
	if (m->go == NULL || m->out == NULL || m->has_out == NULL ||
	    fail == NULL || queue == NULL)
		return NULL;
	m->nstates = 1;
	for (i = 0; i < m->npat; i++) {
		size_t s = 0;

		for (j = 0; m->pat[i][j] != '\0'; j++) {
			uint16_t *t = &m->go[s * m->nclass +
			    m->cls[(unsigned char)m->pat[i][j]]];

			if (*t == 0)
				*t = (uint16_t)m->nstates++;
			s = *t;
		}
		pset_add(&m->out[s], (int)i);
		m->has_out[s] = 1;
	}
	/* Children of the root fail to the root; a missing edge of the
	   root stays 0 (to the root). */
	for (c = 0; c < m->nclass; c++)
		if (m->go[c] != 0)
			queue[tail++] = m->go[c];
	while (head < tail) {
		size_t s = queue[head++], f = fail[s];

		for (c = 0; c < m->nclass; c++) {
			uint16_t *t = &m->go[s * m->nclass + c];

			if (*t == 0) {
				*t = m->go[f * m->nclass + c];
				continue;
			}
			fail[*t] = m->go[f * m->nclass + c];
			for (j = 0; j < PAT_WORDS; j++)
				m->out[*t].w[j] |= m->out[fail[*t]].w[j];
			m->has_out[*t] |= m->has_out[fail[*t]];
			queue[tail++] = *t;
		}
	}
	return m;
}

/* The pattern set of p[0..n) into set (or'ed in). */
static void
scan_bytes(const struct matcher *m, const unsigned char *p, size_t n,
    struct pset *set)
{
	const uint16_t *go = m->go;
	size_t i, s = 0, nc = m->nclass;

	for (i = 0; i < n; i++) {
		s = go[s * nc + m->cls[p[i]]];
		if (m->has_out[s]) {
			size_t k;

			for (k = 0; k < PAT_WORDS; k++)
				set->w[k] |= m->out[s].w[k];
		}
	}
}

/* ---- scanning ------------------------------------------------------- */

/* A segment of the log, by position. */
struct ref {
	unsigned line;
	size_t off;
	size_t len;
};

/* What one row collected. */
struct hit {
	size_t count;
	struct ref first[DIAG_LINES - 1];
	size_t nfirst;
	struct ref last;	/* line 0: none past the first */
	int event;		/* CUDA OOM rows: its first event, or -1 */
};

/* A CUDA OOM message and the frames around it. */
struct oom_ev {
	struct diag_oom o;
	struct ref ref;
	unsigned phases;	/* frames before it: 1 << enum diag_phase */
	unsigned phases_after;	/* frames in a traceback right after */
	unsigned phase_line;
	unsigned tb_after;	/* that traceback's first line, 0: none */
	unsigned until;		/* the last line it still looks at */
	size_t count;		/* messages it stands for */
};

struct scan {
	const struct matcher *m;
	const char *log;
	const struct diag_sig *sigs;
	struct hit *hits;	/* one per row */
	struct oom_ev *ev;	/* OOM_EVENTS */
	size_t nev;
	unsigned phase_seen[DIAG_PH_COUNT];	/* last line of each phase */
	unsigned tb_start;	/* the last traceback's first line */
	bool tb_open;		/* and no exception line closed it yet */
	unsigned ray_line;	/* the last Ray marker, 0: none */
	unsigned cont_until;	/* the last OOM message goes on until */
	struct ref errs[DIAG_LAST_ERRORS];	/* a ring, next at nerr % N */
	size_t nerr;
	struct ref last_exc;
	struct ref ver[VERSION_DEFS];	/* the last line of each version */
};

static void
hit_add(struct hit *h, struct ref r)
{
	h->count++;
	if (h->nfirst < DIAG_LINES - 1)
		h->first[h->nfirst++] = r;
	else
		h->last = r;
}

/* The first non-OOM row the segment's set matches, or -1. */
static int
first_row(const struct scan *st, const struct pset *set, unsigned line)
{
	const struct matcher *m = st->m;
	size_t i, k;

	for (i = 0; i < m->nsig; i++) {
		const struct rowpat *r = &m->row[i];
		bool ok = !r->oom && pset_meets(set, &r->any);

		for (k = 0; ok && k < DIAG_ALSO; k++)
			ok = (r->all[k] < 0 || pset_has(set, r->all[k])) &&
			    !pset_has(set, r->none[k]);
		if (ok && st->sigs[i].when == DIAG_NEAR_RAY)
			ok = st->ray_line > 0 && line - st->ray_line <=
			    RAY_REACH;
		else if (ok && st->sigs[i].when != DIAG_ALWAYS)
			ok = false;
		if (ok)
			return (int)i;
	}
	return -1;
}

/* A CUDA OOM message at r: its numbers and the frames before it. */
static void
oom_event(struct scan *st, struct ref r)
{
	struct oom_ev *e;
	size_t count = 1;
	unsigned lo, ph;

	if (st->nev > 0 && st->ev[st->nev - 1].until >= r.line)
		st->ev[st->nev - 1].until = r.line - 1;
	if (st->nev == OOM_EVENTS)
		count += st->ev[--st->nev].count;
	e = &st->ev[st->nev++];
	memset(e, 0, sizeof(*e));
	e->o.gpu = -1;
	e->o.line = r.line;
	e->ref = r;
	e->count = count;
	diag_parse_oom(&e->o, st->log + r.off, r.len);
	st->cont_until = r.line + CONT_LINES;
	/* The frames of an open traceback, else the lines just before
	   (back to the last exception: those frames were another's). */
	if (st->tb_open && r.line - st->tb_start <= TB_REACH)
		lo = st->tb_start;
	else
		lo = r.line > FRAME_WINDOW ? r.line - FRAME_WINDOW : 1;
	if (!st->tb_open && st->last_exc.line >= lo)
		lo = st->last_exc.line + 1;
	for (ph = 0; ph < DIAG_PH_COUNT; ph++)
		if (st->phase_seen[ph] != 0 && st->phase_seen[ph] >= lo) {
			e->phases |= 1u << ph;
			if (e->phase_line == 0)
				e->phase_line = st->phase_seen[ph];
		}
	e->until = e->phases == 0 ? r.line + LOOKAHEAD : 0;
}

/* A traceback starts at line: the last OOM without frames may own it. */
static void
oom_traceback(struct scan *st, unsigned line)
{
	struct oom_ev *e = st->nev > 0 ? &st->ev[st->nev - 1] : NULL;

	if (e != NULL && e->tb_after == 0 && line <= e->until &&
	    line > e->ref.line) {
		e->tb_after = line;
		e->until = line + TB_REACH;
	}
}

/* A frame of phase ph at line: the last OOM's traceback, if it is one. */
static void
oom_frame(struct scan *st, unsigned line, unsigned ph)
{
	struct oom_ev *e = st->nev > 0 ? &st->ev[st->nev - 1] : NULL;

	if (e != NULL && e->tb_after != 0 && line > e->tb_after &&
	    line <= e->until) {
		e->phases_after |= 1u << ph;
		if (e->phase_line == 0)
			e->phase_line = line;
	}
}

static void
segment(struct scan *st, const struct pset *set, struct ref r)
{
	const struct matcher *m = st->m;
	const char *p = st->log + r.off;
	unsigned ph;
	bool exc;
	int row;

	if (pset_has(set, m->tb)) {
		st->tb_start = r.line;
		st->tb_open = true;
		oom_traceback(st, r.line);
	}
	for (ph = 0; ph < DIAG_PH_COUNT; ph++)
		if (pset_meets(set, &m->phase[ph])) {
			st->phase_seen[ph] = r.line;
			oom_frame(st, r.line, ph);
		}
	if (pset_meets(set, &m->ray))
		st->ray_line = r.line;
	if (pset_meets(set, &m->vers))
		for (ph = 0; ph < m->nver; ph++)
			if (pset_has(set, m->ver[ph]))
				st->ver[ph] = r;
	if (pset_meets(set, &m->oom)) {
		oom_event(st, r);
	} else {
		if (st->nev > 0 && r.line <= st->cont_until)
			diag_parse_oom(&st->ev[st->nev - 1].o, p, r.len);
		row = first_row(st, set, r.line);
		if (row >= 0)
			hit_add(&st->hits[row], r);
	}
	exc = diag_is_exception(p, r.len);
	if (exc || pset_meets(set, &m->err))
		st->errs[st->nerr++ % DIAG_LAST_ERRORS] = r;
	if (exc) {
		st->last_exc = r;
		st->tb_open = false;
	}
}

/* ---- the report ----------------------------------------------------- */

/* Does the CUDA OOM row sig take event e? */
static bool
oom_takes(const struct diag_sig *sig, const struct oom_ev *e)
{
	const struct diag_oom *o = &e->o;
	double floor;

	switch (sig->when) {
	case DIAG_ALWAYS:
		return true;
	case DIAG_OTHER_PROCESS:
		return (o->have & (DIAG_OOM_OTHER | DIAG_OOM_CAPACITY)) ==
		    (DIAG_OOM_OTHER | DIAG_OOM_CAPACITY) &&
		    o->other_gib >= 2.0 &&
		    o->other_gib >= 0.25 * o->capacity_gib;
	case DIAG_FRAGMENTED:
		floor = (o->have & DIAG_OOM_CAPACITY) != 0 ?
		    0.05 * o->capacity_gib : 1.0;
		return (o->have & DIAG_OOM_RESERVED) != 0 &&
		    o->reserved_gib >= 0.25 && o->reserved_gib >= floor &&
		    ((o->have & DIAG_OOM_TRIED) == 0 ||
		    o->reserved_gib >= o->tried_gib);
	case DIAG_PHASE_WEIGHTS:
	case DIAG_PHASE_OPTIMIZER:
	case DIAG_PHASE_LOGITS:
	case DIAG_PHASE_ACTIVATIONS:
		return o->phase != NULL && strcmp(o->phase,
		    diag_phases[sig->when - DIAG_PHASE_WEIGHTS].name) == 0;
	case DIAG_NEAR_RAY:
		break;
	}
	return false;
}

/* Settle each OOM event's numbers and phase and give it to its row. */
static void
assign_events(struct scan *st)
{
	size_t i, k;

	for (i = 0; i < st->nev; i++) {
		struct oom_ev *e = &st->ev[i];
		unsigned mask = e->phases != 0 ? e->phases : e->phases_after;
		unsigned ph;

		diag_oom_derive(&e->o);
		for (ph = 0; ph < DIAG_PH_COUNT; ph++)
			if ((mask & 1u << ph) != 0) {
				e->o.phase = diag_phases[ph].name;
				e->o.phase_line = e->phase_line;
				break;
			}
		for (k = 0; k < st->m->nsig; k++) {
			if (!st->m->row[k].oom || !oom_takes(&st->sigs[k], e))
				continue;
			if (st->hits[k].event < 0)
				st->hits[k].event = (int)i;
			hit_add(&st->hits[k], e->ref);
			st->hits[k].count += e->count - 1;
			break;
		}
	}
}

static int
quote_ref(struct diag_line *out, const struct scan *st, struct ref r,
    struct arena *a)
{
	out->line = r.line;
	out->text = diag_quote(a, st->log + r.off, r.len);
	return out->text != NULL ? 0 : ERR_NOMEM;
}

static int
build_item(struct diagnosis *g, const struct scan *st, size_t row,
    struct arena *a)
{
	const struct hit *h = &st->hits[row];
	const struct diag_sig *sig = &st->sigs[row];
	size_t i;
	int rv = 0;

	g->sig = sig;
	g->count = h->count;
	for (i = 0; rv == 0 && i < h->nfirst; i++)
		rv = quote_ref(&g->lines[g->nlines++], st, h->first[i], a);
	if (rv == 0 && h->last.line != 0)
		rv = quote_ref(&g->lines[g->nlines++], st, h->last, a);
	if (rv == 0 && h->event >= 0)
		rv = diag_oom_vars(g, &st->ev[h->event].o, a);
	else if (rv == 0)
		rv = diag_extract(g, sig->extract, st->log + h->first[0].off,
		    h->first[0].len, a);
	if (rv != 0)
		return rv;
	g->cause = diag_expand(sig->cause, g, a);
	g->fix = diag_expand(sig->fix, g, a);
	return g->cause != NULL && g->fix != NULL ? 0 : ERR_NOMEM;
}

/* The last line of each version name, its value read out; 0 or
   ERR_NOMEM. */
static int
versions(struct diag_report *d, const struct scan *st, struct arena *a)
{
	size_t i, j, n = st->m->nver;
	const char *v;
	int rv;

	for (i = 0; i < n; i++) {
		const struct ref *r = &st->ver[i];

		if (r->line == 0)
			continue;
		/* Only the latest line of this name (the first def on a
		   tie). */
		for (j = 0; j < n; j++)
			if (j != i && strcmp(diag_versions[j].name,
			    diag_versions[i].name) == 0 &&
			    (st->ver[j].line > r->line ||
			    (st->ver[j].line == r->line && j < i)))
				break;
		if (j < n)
			continue;
		rv = diag_value_after(&v, st->log + r->off, r->len,
		    diag_versions[i].phrase, diag_versions[i].stop, a);
		if (rv != 0)
			return rv;
		if (v == NULL || d->nversions == DIAG_VERSIONS)
			continue;
		d->versions[d->nversions].name = diag_versions[i].name;
		d->versions[d->nversions++].value = v;
	}
	return 0;
}

static int
finish(struct diag_report *d, struct scan *st, struct arena *a)
{
	size_t i, n = 0, k;
	int rv;

	assign_events(st);
	if (versions(d, st, a) != 0)
		return ERR_NOMEM;
	for (i = 0; i < st->m->nsig; i++)
		n += st->hits[i].count > 0;
	d->items = ARENA_NEW(a, struct diagnosis, n > 0 ? n : 1);
	if (d->items == NULL)
		return ERR_NOMEM;
	for (i = 0; i < st->m->nsig; i++) {
		if (st->hits[i].count == 0)
			continue;
		rv = build_item(&d->items[d->n++], st, i, a);
		if (rv != 0)
			return rv;
		if (d->oom.line == 0 && st->hits[i].event >= 0)
			d->oom = st->ev[st->hits[i].event].o;
	}
	if (st->last_exc.line != 0 &&
	    quote_ref(&d->last_exception, st, st->last_exc, a) != 0)
		return ERR_NOMEM;
	k = st->nerr > DIAG_LAST_ERRORS ? st->nerr - DIAG_LAST_ERRORS : 0;
	for (; k < st->nerr; k++)
		if (quote_ref(&d->last_errors[d->nlast_errors++], st,
		    st->errs[k % DIAG_LAST_ERRORS], a) != 0)
			return ERR_NOMEM;
	return 0;
}

void
diag_limits_default(struct diag_limits *l)
{
	l->max_bytes = (size_t)64 << 20;
	l->max_lines = 2000000;
	l->max_line = (size_t)16 << 10;
}

/* Newlines in p[0..n). */
static size_t
count_lines(const char *p, size_t n)
{
	const char *end = p + n, *q;
	size_t k = 0;

	while (p < end && (q = memchr(p, '\n', (size_t)(end - p))) != NULL) {
		k++;
		p = q + 1;
	}
	return k;
}

/* Where examining starts: the last max_bytes, then the last max_lines
   lines; d gets the counts. */
static size_t
window(struct diag_report *d, const char *log, size_t len,
    const struct diag_limits *lim)
{
	size_t start = 0, nl, total, skip;
	const char *q;

	d->bytes = len;
	nl = count_lines(log, len);
	d->lines = (unsigned)(nl + (len > 0 && log[len - 1] != '\n'));
	if (len > lim->max_bytes) {
		start = len - lim->max_bytes;
		if (log[start - 1] != '\n') {
			q = memchr(log + start, '\n', len - start);
			start = q != NULL ? (size_t)(q - log) + 1 : start;
		}
	}
	total = d->lines - count_lines(log, start);
	if (total > lim->max_lines)
		for (skip = total - lim->max_lines; skip > 0; skip--) {
			q = memchr(log + start, '\n', len - start);
			start = q != NULL ? (size_t)(q - log) + 1 : len;
		}
	d->first_line = (unsigned)(count_lines(log, start) + 1);
	d->cut = start > 0;
	return start;
}

int
diagnose_log(struct diag_report **out, const char *log, size_t len,
    const struct diag_limits *lim, struct arena *a, struct err *e)
{
	struct diag_report *d;
	struct scan st;
	const char *p, *end, *nl, *seg, *cr, *le;
	unsigned line;
	size_t i, nsig;
	int rv;

	*out = NULL;
	memset(&st, 0, sizeof(st));
	st.m = arena_once(&matcher_slot, MATCHER_CAP, matcher_build, NULL);
	if (st.m == NULL)
		return err_set(e, ERR_INTERNAL, NULL, "the signature table "
		    "does not fit the matcher, or memory is short");
	st.log = log;
	st.sigs = diagnose_signatures(&nsig);
	d = ARENA_NEW(a, struct diag_report, 1);
	st.hits = ARENA_NEW(a, struct hit, nsig);
	st.ev = ARENA_NEW(a, struct oom_ev, OOM_EVENTS);
	if (d == NULL || st.hits == NULL || st.ev == NULL)
		return err_set(e, ERR_NOMEM, NULL,
		    "request memory budget spent");
	for (i = 0; i < nsig; i++)
		st.hits[i].event = -1;
	d->oom.gpu = -1;
	p = log + window(d, log, len, lim);
	end = log + len;
	for (line = d->first_line; p < end; line++) {
		nl = memchr(p, '\n', (size_t)(end - p));
		le = nl != NULL ? nl : end;
		for (seg = p;; seg = cr + 1) {
			struct pset set;
			struct ref r;

			cr = memchr(seg, '\r', (size_t)(le - seg));
			if (cr == NULL)
				cr = le;
			r.line = line;
			r.off = (size_t)(seg - log);
			r.len = (size_t)(cr - seg);
			if (r.len > lim->max_line) {
				r.len = lim->max_line;
				d->long_lines++;
			}
			if (r.len > 0) {
				memset(&set, 0, sizeof(set));
				scan_bytes(st.m, (const unsigned char *)seg,
				    r.len, &set);
				segment(&st, &set, r);
			}
			if (cr == le)
				break;
		}
		if (nl == NULL)
			break;
		p = nl + 1;
	}
	rv = finish(d, &st, a);
	if (rv != 0)
		return err_set(e, rv, NULL, "request memory budget spent");
	*out = d;
	return 0;
}

int
diagnose_init(struct err *e)
{
	if (arena_once(&matcher_slot, MATCHER_CAP, matcher_build, NULL) ==
	    NULL)
		return err_set(e, ERR_INTERNAL, NULL, "the signature table "
		    "does not fit the matcher, or memory is short");
	return 0;
}
