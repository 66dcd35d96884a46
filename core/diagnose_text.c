/*
 * core/diagnose_text: reading values out of a log line, quoting lines
 * back safely, and expanding the signature templates.  Every function
 * here looks at one line (bounded by the caller's max_line) with fixed
 * strings, so the work is linear in the line.  No I/O.
 */
#include "diagnose_int.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "arena.h"

#define VALUE_MAX 160		/* bytes of one extracted value */
#define NEEDLE_MAX 64		/* bytes of a phrase searched for */
#define PARSE_MAX 4096		/* bytes of a line searched for numbers */

static bool
is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static bool
is_alpha(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/*
 * The first occurrence of the NUL-terminated s in p[0..n), or NULL.
 * Knuth-Morris-Pratt, so a hostile line costs n + |s| steps whatever it
 * holds (a naive search is n x |s| on "aaaa...").
 */
static const char *
find(const char *p, size_t n, const char *s)
{
	size_t fail[NEEDLE_MAX], m = strlen(s), i, k = 0;

	if (m == 0 || m > NEEDLE_MAX)
		return NULL;
	fail[0] = 0;
	for (i = 1; i < m; i++) {
		while (k > 0 && s[i] != s[k])
			k = fail[k - 1];
		if (s[i] == s[k])
			k++;
		fail[i] = k;
	}
	for (i = 0, k = 0; i < n; i++) {
		while (k > 0 && p[i] != s[k])
			k = fail[k - 1];
		if (p[i] == s[k] && ++k == m)
			return p + i + 1 - m;
	}
	return NULL;
}

/* Just past the first s in p[0..n), or NULL. */
static const char *
after(const char *p, size_t n, const char *s)
{
	const char *q = find(p, n, s);

	return q != NULL ? q + strlen(s) : NULL;
}

/* ---- quoting -------------------------------------------------------- */

/* Length of the valid UTF-8 sequence at p (< end), or 0. */
static size_t
utf8_len(const unsigned char *p, const unsigned char *end)
{
	uint32_t c;
	size_t n, i;

	if (p[0] < 0x80)
		return 1;
	if (p[0] >= 0xC2 && p[0] <= 0xDF)
		n = 2, c = p[0] & 0x1F;
	else if (p[0] >= 0xE0 && p[0] <= 0xEF)
		n = 3, c = p[0] & 0x0F;
	else if (p[0] >= 0xF0 && p[0] <= 0xF4)
		n = 4, c = p[0] & 0x07;
	else
		return 0;
	if ((size_t)(end - p) < n)
		return 0;
	for (i = 1; i < n; i++) {
		if ((p[i] & 0xC0) != 0x80)
			return 0;
		c = c << 6 | (p[i] & 0x3F);
	}
	if ((n == 3 && (c < 0x800 || (c >= 0xD800 && c <= 0xDFFF))) ||
	    (n == 4 && (c < 0x10000 || c > 0x10FFFF)))
		return 0;	/* overlong, surrogate, out of range */
	return n;
}

const char *
diag_quote(struct arena *a, const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s, *end = p + len;
	char *out = arena_alloc(a, 1, 1, DIAG_QUOTE + 1);
	size_t k = 0, n;

	if (out == NULL)
		return NULL;
	while (end > p && (end[-1] == '\r' || end[-1] == ' ' ||
	    end[-1] == '\t'))
		end--;
	while (p < end) {
		n = utf8_len(p, end);
		if (k + (n > 0 ? n : 1) > DIAG_QUOTE - 3) {
			memcpy(out + k, "...", 3);
			k += 3;
			break;
		}
		if (n == 0 || (n == 1 && (*p < 0x20 || *p == 0x7F))) {
			out[k++] = *p == '\t' || *p == '\r' ? ' ' : '?';
			p++;
			continue;
		}
		memcpy(out + k, p, n);
		k += n;
		p += n;
	}
	out[k] = '\0';
	return out;
}

/* ---- CUDA OOM numbers ----------------------------------------------- */

/*
 * A size at p ("12.34 GiB", "0 bytes", "3.44 MiB") in GiB into *gib;
 * the bytes read, or 0 when p holds no number with a unit.
 */
static size_t
parse_size(double *gib, const char *p, const char *end)
{
	static const struct {
		const char *unit;
		double gib;
	} units[] = {
		{ "bytes", 1.0 / 1073741824.0 }, { "KiB", 1.0 / 1048576.0 },
		{ "MiB", 1.0 / 1024.0 }, { "GiB", 1.0 }, { "TiB", 1024.0 },
		{ "KB", 1e3 / 1073741824.0 }, { "MB", 1e6 / 1073741824.0 },
		{ "GB", 1e9 / 1073741824.0 }, { "B", 1.0 / 1073741824.0 },
	};
	const char *q = p;
	double v = 0, f = 0.1;
	size_t i, nd = 0;

	while (q < end && is_digit(*q)) {
		if (nd++ < 18)
			v = v * 10 + (*q - '0');
		q++;
	}
	if (nd == 0 || nd > 18)
		return 0;
	if (q < end && *q == '.')
		for (q++; q < end && is_digit(*q); q++, f /= 10)
			v += (*q - '0') * f;
	while (q < end && *q == ' ')
		q++;
	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		size_t n = strlen(units[i].unit);

		if ((size_t)(end - q) >= n && memcmp(q, units[i].unit, n) == 0 &&
		    (q + n == end || !is_alpha(q[n]))) {
			*gib = v * units[i].gib;
			return (size_t)(q + n - p);
		}
	}
	return 0;
}

/* The size just before the phrase at at (line starts at p), or -1. */
static int
size_before(double *gib, const char *p, const char *at)
{
	const char *q = at;

	while (q > p && q[-1] == ' ')
		q--;
	while (q > p && is_alpha(q[-1]))
		q--;
	while (q > p && q[-1] == ' ')
		q--;
	while (q > p && (is_digit(q[-1]) || q[-1] == '.'))
		q--;
	return parse_size(gib, q, at) > 0 ? 0 : -1;
}

/* Set field f of o from the size after (or before) phrase, unless set. */
static void
oom_field(struct diag_oom *o, unsigned bit, double *f, const char *p,
    size_t n, const char *phrase, bool before)
{
	const char *q;

	if ((o->have & bit) != 0)
		return;
	if (before) {
		q = find(p, n, phrase);
		if (q != NULL && size_before(f, p, q) == 0)
			o->have |= bit;
		return;
	}
	q = after(p, n, phrase);
	if (q != NULL && parse_size(f, q, p + n) > 0)
		o->have |= bit;
}

void
diag_parse_oom(struct diag_oom *o, const char *p, size_t n)
{
	const char *q;
	double total;

	if (n > PARSE_MAX)
		n = PARSE_MAX;	/* the message is well under 1 KiB */
	oom_field(o, DIAG_OOM_TRIED, &o->tried_gib, p, n,
	    "Tried to allocate ", false);
	oom_field(o, DIAG_OOM_CAPACITY, &o->capacity_gib, p, n,
	    "total capacity of ", false);
	oom_field(o, DIAG_OOM_CAPACITY, &o->capacity_gib, p, n,
	    "total capacty of ", false);	/* torch 2.1's spelling */
	oom_field(o, DIAG_OOM_CAPACITY, &o->capacity_gib, p, n,
	    " total capacity", true);
	oom_field(o, DIAG_OOM_FREE, &o->free_gib, p, n, "of which ", false);
	oom_field(o, DIAG_OOM_FREE, &o->free_gib, p, n, " free;", true);
	oom_field(o, DIAG_OOM_FREE, &o->free_gib, p, n, " free)", true);
	oom_field(o, DIAG_OOM_ALLOCATED, &o->allocated_gib, p, n,
	    "Of the allocated memory ", false);
	oom_field(o, DIAG_OOM_ALLOCATED, &o->allocated_gib, p, n,
	    " already allocated", true);
	oom_field(o, DIAG_OOM_RESERVED, &o->reserved_gib, p, n,
	    " is reserved by PyTorch but unallocated", true);
	oom_field(o, DIAG_OOM_RESERVED, &o->reserved_gib, p, n, " cached)",
	    true);		/* torch 1.x: cached but free */
	oom_field(o, DIAG_OOM_IN_USE, &o->in_use_gib, p, n,
	    "this process has ", false);
	if ((o->have & (DIAG_OOM_RESERVED | DIAG_OOM_ALLOCATED)) ==
	    DIAG_OOM_ALLOCATED) {
		q = find(p, n, " reserved in total by PyTorch");
		if (q != NULL && size_before(&total, p, q) == 0 &&
		    total >= o->allocated_gib) {
			o->reserved_gib = total - o->allocated_gib;
			o->have |= DIAG_OOM_RESERVED;
		}
	}
	if (o->gpu < 0) {
		q = after(p, n, "GPU ");
		if (q != NULL && q < p + n && is_digit(*q)) {
			int g = 0, k = 0;

			while (q < p + n && is_digit(*q) && k++ < 5)
				g = g * 10 + (*q++ - '0');
			o->gpu = g;
		}
	}
}

void
diag_oom_derive(struct diag_oom *o)
{
	double process = -1;

	o->have &= ~(unsigned)(DIAG_OOM_OTHER | DIAG_OOM_NEEDED);
	/* Some drivers (WSL) report 2^34 GiB or 0 bytes in use: a process
	   holds at least what PyTorch allocated, at most the device. */
	if ((o->have & (DIAG_OOM_IN_USE | DIAG_OOM_CAPACITY)) ==
	    (DIAG_OOM_IN_USE | DIAG_OOM_CAPACITY) &&
	    o->in_use_gib > o->capacity_gib * 1.02)
		o->have &= ~(unsigned)DIAG_OOM_IN_USE;
	if ((o->have & (DIAG_OOM_IN_USE | DIAG_OOM_ALLOCATED)) ==
	    (DIAG_OOM_IN_USE | DIAG_OOM_ALLOCATED) &&
	    o->in_use_gib < o->allocated_gib)
		o->have &= ~(unsigned)DIAG_OOM_IN_USE;
	if ((o->have & DIAG_OOM_IN_USE) != 0)
		process = o->in_use_gib;
	else if ((o->have & (DIAG_OOM_ALLOCATED | DIAG_OOM_RESERVED)) ==
	    (DIAG_OOM_ALLOCATED | DIAG_OOM_RESERVED))
		process = o->allocated_gib + o->reserved_gib;
	if (process >= 0 && (o->have & DIAG_OOM_CAPACITY) != 0 &&
	    process > o->capacity_gib * 1.02)
		process = -1;
	if (process >= 0 && (o->have & (DIAG_OOM_CAPACITY | DIAG_OOM_FREE)) ==
	    (DIAG_OOM_CAPACITY | DIAG_OOM_FREE) &&
	    o->capacity_gib - o->free_gib - process >= 0) {
		o->other_gib = o->capacity_gib - o->free_gib - process;
		o->have |= DIAG_OOM_OTHER;
	}
	if (process < 0 && (o->have & (DIAG_OOM_CAPACITY | DIAG_OOM_FREE)) ==
	    (DIAG_OOM_CAPACITY | DIAG_OOM_FREE))
		process = o->capacity_gib - o->free_gib;
	if (process >= 0 && (o->have & DIAG_OOM_TRIED) != 0) {
		o->needed_gib = process + o->tried_gib;
		o->have |= DIAG_OOM_NEEDED;
	}
}

/* ---- exception lines ------------------------------------------------ */

bool
diag_is_exception(const char *p, size_t n)
{
	static const char *const ends[] = { "Error", "Exception",
	    "Interrupt", NULL };
	const char *q = p, *end = p + n, *id;
	size_t i, len;

	if (q < end && *q == '[') {
		const char *c = memchr(q, ']', (size_t)(end - q) < 40 ?
		    (size_t)(end - q) : 40);

		if (c == NULL || c + 1 >= end || c[1] != ':')
			return false;
		for (q = c + 2; q < end && *q == ' '; q++)
			;
	}
	id = q;
	while (q < end && (is_alpha(*q) || is_digit(*q) || *q == '_' ||
	    *q == '.') && q - id < 120)
		q++;
	len = (size_t)(q - id);
	if (q < end && *q != ':')
		return false;
	for (i = 0; ends[i] != NULL; i++) {
		size_t k = strlen(ends[i]);

		if (len >= k && memcmp(q - k, ends[i], k) == 0)
			return true;
	}
	return false;
}

/* ---- values for the templates --------------------------------------- */

/* Add name = p[0..n) (trimmed, quoted safe) to g; 0 or ERR_NOMEM. */
static int
add_var(struct diagnosis *g, const char *name, const char *p, size_t n,
    struct arena *a)
{
	const char *v;

	while (n > 0 && (p[n - 1] == ' ' || p[n - 1] == '.' ||
	    p[n - 1] == ',' || p[n - 1] == ':'))
		n--;
	if (n == 0 || g->nvars == DIAG_VARS)
		return 0;
	v = diag_quote(a, p, n < VALUE_MAX ? n : VALUE_MAX);
	if (v == NULL)
		return ERR_NOMEM;
	g->vars[g->nvars].name = name;
	g->vars[g->nvars++].value = v;
	return 0;
}

/* The token at p up to the first byte of stop (or the end). */
static size_t
token(const char *p, const char *end, const char *stop)
{
	const char *q = p;

	while (q < end && strchr(stop, *q) == NULL && q - p < VALUE_MAX)
		q++;
	return (size_t)(q - p);
}

int
diag_value_after(const char **v, const char *p, size_t n,
    const char *phrase, const char *stop, struct arena *a)
{
	const char *q = after(p, n, phrase);
	size_t k;

	*v = NULL;
	if (q == NULL)
		return 0;
	k = token(q, p + n, stop);
	while (k > 0 && (q[k - 1] == '.' || q[k - 1] == ',' ||
	    q[k - 1] == ':'))
		k--;
	if (k == 0)
		return 0;
	*v = diag_quote(a, q, k);
	return *v != NULL ? 0 : ERR_NOMEM;
}

/* Add name = the token after phrase, if the line has it. */
static int
var_after(struct diagnosis *g, const char *name, const char *p, size_t n,
    const char *phrase, const char *stop, struct arena *a)
{
	const char *q = after(p, n, phrase);

	if (q == NULL)
		return 0;
	return add_var(g, name, q, token(q, p + n, stop), a);
}

static int
extract_symbol(struct diagnosis *g, const char *p, size_t n,
    struct arena *a)
{
	const char *s = find(p, n, "undefined symbol"), *lib;
	int rv;

	if (s == NULL)
		return 0;
	rv = var_after(g, "symbol", p, n, "undefined symbol: ", " '\",",
	    a);
	/* The library is the path just before ": undefined symbol". */
	while (s > p && (s[-1] == ' ' || s[-1] == ':'))
		s--;
	for (lib = s; lib > p && lib[-1] != ' ' && lib[-1] != '\t'; lib--)
		;
	if (rv == 0 && find(lib, (size_t)(s - lib), ".so") != NULL) {
		const char *base = lib, *q;

		for (q = lib; q < s; q++)
			if (*q == '/')
				base = q + 1;
		rv = add_var(g, "library", base, (size_t)(s - base), a);
	}
	return rv;
}

static int
extract_driver(struct diagnosis *g, const char *p, size_t n,
    struct arena *a)
{
	const char *q = after(p, n, "found version ");
	char cuda[32];
	long v = 0;
	size_t k = 0;

	if (q == NULL)
		return 0;
	while (q + k < p + n && is_digit(q[k]) && k < 7)
		v = v * 10 + (q[k++] - '0');
	if (k == 0)
		return 0;
	snprintf(cuda, sizeof(cuda), "%ld.%ld", v / 1000, v % 1000 / 10);
	if (add_var(g, "found", q, k, a) != 0)
		return ERR_NOMEM;
	return add_var(g, "driver_cuda", cuda, strlen(cuda), a);
}

/* The values read after a phrase, per extractor: up to a stop byte. */
static const struct {
	enum diag_extract x;
	const char *name;
	const char *phrase;
	const char *stop;
} picks[] = {
	{ DIAG_X_MODULE, "module", "No module named '", "'" },
	{ DIAG_X_CUDA_VERSIONS, "installed", "Installed CUDA version ", " " },
	{ DIAG_X_CUDA_VERSIONS, "installed", "detected CUDA version (", ")" },
	{ DIAG_X_CUDA_VERSIONS, "torch_cuda", "torch was compiled with ",
	  " ," },
	{ DIAG_X_SHAPES, "param", "size mismatch for ", ":" },
	{ DIAG_X_SHAPES, "ckpt_shape", "copying a param with shape ", " " },
	{ DIAG_X_SHAPES, "model_shape", "the shape in current model is ",
	  " " },
	{ DIAG_X_NCCL_WORK, "op", "OpType=", ",)" },
	{ DIAG_X_NCCL_WORK, "timeout_ms", "Timeout(ms)=", ",)" },
	{ DIAG_X_NCCL_WORK, "ran_ms", "ran for ", " " },
	{ DIAG_X_RANKS, "rank_a", "Duplicate GPU detected : rank ", " " },
	{ DIAG_X_RANKS, "rank_b", " and rank ", " " },
	{ DIAG_X_RANKS, "device", "both on CUDA device ", " " },
	{ DIAG_X_DTYPES, "dtype_a", "got torch.", " " },
	{ DIAG_X_DTYPES, "dtype_b", " and torch.", " " },
	{ DIAG_X_LOCAL_RANK, "local_rank", "local_rank: ", " " },
};

int
diag_extract(struct diagnosis *g, enum diag_extract x, const char *p,
    size_t n, struct arena *a)
{
	size_t i;
	int rv = 0;

	if (x == DIAG_X_SYMBOL)
		return extract_symbol(g, p, n, a);
	if (x == DIAG_X_DRIVER)
		return extract_driver(g, p, n, a);
	for (i = 0; rv == 0 && i < sizeof(picks) / sizeof(picks[0]); i++)
		if (picks[i].x == x &&
		    diagnosis_var(g, picks[i].name) == NULL)
			rv = var_after(g, picks[i].name, p, n, picks[i].phrase,
			    picks[i].stop, a);
	return rv;
}

/* Add name = v GiB ("12.34 GiB") when o has bit. */
static int
var_gib(struct diagnosis *g, const char *name, const struct diag_oom *o,
    unsigned bit, double v, struct arena *a)
{
	char buf[32];

	if ((o->have & bit) == 0)
		return 0;
	snprintf(buf, sizeof(buf), "%.2f GiB", v);
	return add_var(g, name, buf, strlen(buf), a);
}

int
diag_oom_vars(struct diagnosis *g, const struct diag_oom *o,
    struct arena *a)
{
	char buf[16];
	int rv;

	rv = var_gib(g, "tried", o, DIAG_OOM_TRIED, o->tried_gib, a);
	if (rv == 0)
		rv = var_gib(g, "capacity", o, DIAG_OOM_CAPACITY,
		    o->capacity_gib, a);
	if (rv == 0)
		rv = var_gib(g, "free", o, DIAG_OOM_FREE, o->free_gib, a);
	if (rv == 0)
		rv = var_gib(g, "allocated", o, DIAG_OOM_ALLOCATED,
		    o->allocated_gib, a);
	if (rv == 0)
		rv = var_gib(g, "reserved", o, DIAG_OOM_RESERVED,
		    o->reserved_gib, a);
	if (rv == 0)
		rv = var_gib(g, "in_use", o, DIAG_OOM_IN_USE, o->in_use_gib,
		    a);
	if (rv == 0)
		rv = var_gib(g, "other", o, DIAG_OOM_OTHER, o->other_gib, a);
	if (rv == 0)
		rv = var_gib(g, "needed", o, DIAG_OOM_NEEDED, o->needed_gib,
		    a);
	if (rv == 0 && o->gpu >= 0) {
		snprintf(buf, sizeof(buf), "%d", o->gpu);
		rv = add_var(g, "gpu", buf, strlen(buf), a);
	}
	return rv;
}

const char *
diagnosis_var(const struct diagnosis *g, const char *name)
{
	size_t i;

	for (i = 0; i < g->nvars; i++)
		if (strcmp(g->vars[i].name, name) == 0)
			return g->vars[i].value;
	return NULL;
}

/* ---- templates ------------------------------------------------------ */

/* The value of the {name} at p (p just past '{'), or NULL. */
static const char *
placeholder(const struct diagnosis *g, const char *p, size_t *len)
{
	const char *rb = strchr(p, '}');
	char name[32];
	size_t n;

	if (rb == NULL)
		return NULL;
	n = (size_t)(rb - p);
	*len = n + 2;
	if (n == 0 || n >= sizeof(name))
		return NULL;
	memcpy(name, p, n);
	name[n] = '\0';
	return diagnosis_var(g, name);
}

/* Are all placeholders in [p, end) known? */
static bool
segment_complete(const struct diagnosis *g, const char *p, const char *end)
{
	size_t len;

	for (; p < end; p++)
		if (*p == '{') {
			if (placeholder(g, p + 1, &len) == NULL)
				return false;
			p += len - 1;
		}
	return true;
}

/* Emit [p, end) with placeholders filled into out (NULL: only count). */
static size_t
emit(char *out, const struct diagnosis *g, const char *p, const char *end)
{
	size_t k = 0, len, vl;
	const char *v;

	while (p < end) {
		if (*p == '{') {
			v = placeholder(g, p + 1, &len);
			if (v == NULL)
				v = "(not in the log)";
			vl = strlen(v);
			if (out != NULL)
				memcpy(out + k, v, vl);
			k += vl;
			p += len;
			continue;
		}
		if (out != NULL)
			out[k] = *p;
		k++;
		p++;
	}
	return k;
}

/* One pass over tpl: the expanded length, written to out unless NULL. */
static size_t
expand_into(char *out, const char *tpl, const struct diagnosis *g)
{
	const char *p = tpl, *lb, *rb;
	size_t k = 0;

	while (*p != '\0') {
		lb = strchr(p, '[');
		if (lb == NULL) {
			k += emit(out != NULL ? out + k : NULL, g, p,
			    p + strlen(p));
			break;
		}
		rb = strchr(lb, ']');
		if (rb == NULL)
			rb = lb + strlen(lb);
		k += emit(out != NULL ? out + k : NULL, g, p, lb);
		if (segment_complete(g, lb + 1, rb))
			k += emit(out != NULL ? out + k : NULL, g, lb + 1,
			    rb);
		p = *rb == ']' ? rb + 1 : rb;
	}
	return k;
}

char *
diag_expand(const char *tpl, const struct diagnosis *g, struct arena *a)
{
	size_t n;
	char *out;

	if (tpl == NULL)
		return NULL;
	n = expand_into(NULL, tpl, g);
	out = arena_alloc(a, 1, 1, n + 1);
	if (out == NULL)
		return NULL;
	expand_into(out, tpl, g);
	out[n] = '\0';
	return out;
}
