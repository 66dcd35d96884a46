/*
 * core/doc: libyaml events -> document tree, the way PyYAML composes and
 * constructs it (yaml/composer.py, yaml/constructor.py SafeConstructor).
 *
 * One pass over libyaml's event stream with an explicit stack, so depth
 * costs no C recursion.  Limits are checked as events arrive: a 100,000-deep
 * flow sequence stops at the first level past max_depth, and an alias bomb
 * stops when the nodes its aliases stand for pass max_nodes (each node
 * knows its weight, so counting an alias is O(1)).  Anchors and keys go
 * through hash tables, so nothing is quadratic.
 * Limits: no I/O, all memory from the caller's arena.
 */
#include "doc.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <yaml.h>

#include "arena.h"
#include "scalar.h"

#define TAG_PREFIX "tag:yaml.org,2002:"

/* The process's index key, set once by main before any thread starts
   (limits_set_hash_key); limits_default() hands it to every parse. */
static uint64_t process_key[2];

void
limits_default(struct limits *l)
{
	l->max_bytes = (size_t)8 << 20;
	l->max_depth = 64;
	l->max_nodes = 100000;
	l->max_scalar = (size_t)1 << 20;
	l->max_key = 1024;
	l->max_map_keys = 10000;
	l->hash_key[0] = process_key[0];
	l->hash_key[1] = process_key[1];
}

void
limits_set_hash_key(const uint64_t key[2])
{
	process_key[0] = key[0];
	process_key[1] = key[1];
}

/* One child of a collection being built. */
struct link {
	struct doc_node *node;	/* the child (shared when an alias) */
	struct doc_loc loc;	/* where it was written */
	struct link *next;
};

/* A collection whose end event has not arrived yet. */
struct frame {
	struct doc_node *node;	/* the collection */
	struct link *head;	/* children in order; maps: key, value, ... */
	struct link *tail;
	size_t n;		/* children so far */
	size_t weight;		/* sum of the children's weights */
};

struct anchor {
	const char *name;	/* NULL: empty slot */
	struct doc_node *node;
	struct doc_loc loc;	/* where it was defined */
};

struct builder {
	const struct limits *lim;
	struct arena *a;
	struct err *e;
	const char *buf;	/* the input, for error positions */
	size_t len;
	struct frame *stack;	/* lim->max_depth + 1 frames */
	unsigned depth;		/* open collections */
	struct anchor *anchors;	/* open addressing, power-of-two size */
	size_t anchor_cap;
	size_t anchor_n;
	struct doc *doc;
	struct doc_dup *dup_tail;
	int ndocs;		/* DOCUMENT-START events seen */
};

static struct err_loc
mkloc(struct doc_loc l)
{
	struct err_loc e;

	memset(&e, 0, sizeof(e));
	e.line = l.line;
	e.col = l.col;
	return e;
}

static struct doc_loc
mark_loc(yaml_mark_t m)
{
	struct doc_loc l;

	/* libyaml counts from 0; we report from 1. */
	l.line = m.line >= UINT32_MAX ? UINT32_MAX : (unsigned)m.line + 1;
	l.col = m.column >= UINT32_MAX ? UINT32_MAX : (unsigned)m.column + 1;
	return l;
}

/* Record an error at a document position; builds the loc only now. */
static int fail_at(struct builder *b, enum err_code code, struct doc_loc at,
    const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static int
fail_at(struct builder *b, enum err_code code, struct doc_loc at,
    const char *fmt, ...)
{
	struct err_loc l = mkloc(at);
	char msg[sizeof(b->e->msg)];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return err_set(b->e, code, &l, "%s", msg);
}

static int
nomem(struct builder *b)
{
	return err_set(b->e, ERR_NOMEM, NULL,
	    "request memory budget spent while building the document");
}

/* doc.h's hash, out of line: anchors, keys built at parse time, and
   lookups whose key is not a literal. */
uint64_t
doc_hash_bytes_rt(const char *s, size_t n, uint64_t h)
{
	return doc_hash_bytes(s, n, h);
}

static uint64_t
hash_bytes(const char *s, size_t n, uint64_t h)
{
	return doc_hash_bytes_rt(s, n, h);
}

static uint64_t
hash_u64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	return x;
}

/* ---- SipHash-1-3 (Aumasson and Bernstein), for keyed indexes ------ */

static uint64_t
rotl(uint64_t x, int b)
{
	return (x << b) | (x >> (64 - b));
}

static void
sipround(uint64_t v[4])
{
	v[0] += v[1];
	v[1] = rotl(v[1], 13);
	v[1] ^= v[0];
	v[0] = rotl(v[0], 32);
	v[2] += v[3];
	v[3] = rotl(v[3], 16);
	v[3] ^= v[2];
	v[0] += v[3];
	v[3] = rotl(v[3], 21);
	v[3] ^= v[0];
	v[2] += v[1];
	v[1] = rotl(v[1], 17);
	v[1] ^= v[2];
	v[2] = rotl(v[2], 32);
}

static void
sip_block(uint64_t v[4], uint64_t m)
{
	v[3] ^= m;
	sipround(v);
	v[0] ^= m;
}

/* SipHash-1-3 of the word tag, then s[0..n), under key. */
static uint64_t
siphash(const uint64_t key[2], uint64_t tag, const char *s, size_t n)
{
	uint64_t v[4], m, b = (uint64_t)(n + 8) << 56;
	size_t i;

	v[0] = key[0] ^ 0x736f6d6570736575ULL;
	v[1] = key[1] ^ 0x646f72616e646f6dULL;
	v[2] = key[0] ^ 0x6c7967656e657261ULL;
	v[3] = key[1] ^ 0x7465646279746573ULL;
	sip_block(v, tag);
	for (; n >= 8; s += 8, n -= 8) {
		memcpy(&m, s, 8);
		sip_block(v, m);
	}
	for (i = 0; i < n; i++)
		b |= (uint64_t)(unsigned char)s[i] << (8 * i);
	sip_block(v, b);
	v[2] ^= 0xff;
	sipround(v);
	sipround(v);
	sipround(v);
	return v[0] ^ v[1] ^ v[2] ^ v[3];
}

static uint64_t
sip_u64(const uint64_t key[2], uint64_t tag, uint64_t x)
{
	char w[8];

	memcpy(w, &x, 8);
	return siphash(key, tag, w, 8);
}

/*
 * Input checks libyaml would make with an offset but no line: UTF-8
 * validity, NUL bytes and the characters YAML forbids.  Positions count
 * characters the way libyaml's marks do (a BOM is skipped, \r\n, NEL, LS
 * and PS end a line).
 */
static int
check_encoding(const char *buf, size_t len, struct err *e)
{
	const unsigned char *s = (const unsigned char *)buf;
	struct doc_loc at = { 1, 1 };
	size_t i = 0;

	if (len >= 3 && s[0] == 0xEF && s[1] == 0xBB && s[2] == 0xBF)
		i = 3;
	while (i < len) {
		unsigned c = s[i];
		uint32_t cp;
		size_t w, k;
		struct err_loc l;
		uint64_t x;

		/* Fastest path: eight printable ASCII bytes (none below 0x20,
		   none above 0x7E: exact word-at-a-time tests). */
		if (len - i >= 8) {
			memcpy(&x, s + i, 8);
			if (((x - 0x2020202020202020ULL) & ~x &
			    0x8080808080808080ULL) == 0 &&
			    (((x + 0x0101010101010101ULL) | x) &
			    0x8080808080808080ULL) == 0) {
				at.col += 8;
				i += 8;
				continue;
			}
		}
		/* Fast path: printable ASCII and line feeds. */
		if (c >= 0x20 && c < 0x7F) {
			at.col++;
			i++;
			continue;
		}
		if (c == '\n') {
			at.line++;
			at.col = 1;
			i++;
			continue;
		}
		l = mkloc(at);
		if (c == 0)
			return err_set(e, ERR_PARSE, &l,
			    "NUL byte at byte offset %zu; a config is text", i);
		if (c < 0x80) {
			cp = c;
			w = 1;
		} else if (c >= 0xC2 && c <= 0xDF) {
			cp = c & 0x1F;
			w = 2;
		} else if (c >= 0xE0 && c <= 0xEF) {
			cp = c & 0x0F;
			w = 3;
		} else if (c >= 0xF0 && c <= 0xF4) {
			cp = c & 0x07;
			w = 4;
		} else
			goto bad;
		if (w > len - i)
			goto bad;
		for (k = 1; k < w; k++) {
			if ((s[i + k] & 0xC0) != 0x80)
				goto bad;
			cp = (cp << 6) | (s[i + k] & 0x3F);
		}
		/* Overlong forms, surrogates, past U+10FFFF. */
		if ((w == 3 && cp < 0x800) || (w == 4 && cp < 0x10000) ||
		    (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF)
			goto bad;
		if (!(cp == 0x09 || cp == 0x0A || cp == 0x0D ||
		    (cp >= 0x20 && cp <= 0x7E) || cp == 0x85 ||
		    (cp >= 0xA0 && cp <= 0xD7FF) ||
		    (cp >= 0xE000 && cp <= 0xFFFD) || cp >= 0x10000))
			return err_set(e, ERR_PARSE, &l,
			    "control character U+%04X at byte offset %zu is "
			    "not allowed in YAML", (unsigned)cp, i);
		if (cp == '\n' || cp == 0x85 || cp == 0x2028 ||
		    cp == 0x2029 || (cp == '\r' &&
		    (i + 1 >= len || s[i + 1] != '\n'))) {
			at.line++;
			at.col = 1;
		} else if (cp != '\r') {
			at.col++;
		}
		i += w;
		continue;
bad:
		return err_set(e, ERR_PARSE, &l,
		    "invalid UTF-8 at byte offset %zu (byte 0x%02x); "
		    "configs must be UTF-8", i, c);
	}
	return 0;
}

/* Byte offset of 1-based (line, col), or len when past the end. */
static size_t
offset_at(const char *buf, size_t len, struct doc_loc l)
{
	unsigned line = 1, col = 1;
	size_t i = 0;

	while (i < len && (line < l.line || (line == l.line && col < l.col))) {
		unsigned char c = (unsigned char)buf[i];

		if (c == '\n') {
			line++;
			col = 1;
			i++;
			continue;
		}
		/* Step over one UTF-8 sequence: one character. */
		i++;
		while (i < len && ((unsigned char)buf[i] & 0xC0) == 0x80)
			i++;
		col++;
	}
	return i;
}

static int
yaml_failed(struct builder *b, const yaml_parser_t *p)
{
	struct doc_loc at;
	const char *problem = p->problem != NULL ? p->problem : "invalid YAML";
	size_t off;

	if (p->error == YAML_MEMORY_ERROR)
		return err_set(b->e, ERR_NOMEM, NULL,
		    "out of memory while parsing YAML");
	if (p->error == YAML_READER_ERROR) {
		/* encoding_first() replaces these with check_encoding()'s
		   message; keep a position anyway. */
		at.line = 1;
		at.col = 1;
		return fail_at(b, ERR_PARSE, at, "%s at byte offset %zu",
		    problem, p->problem_offset);
	}
	at = mark_loc(p->problem_mark);
	off = offset_at(b->buf, b->len, at);
	if (off < b->len && b->buf[off] == '\t')
		return fail_at(b, ERR_PARSE, at,
		    "tab character used for indentation; YAML allows only "
		    "spaces");
	if (p->context != NULL)
		return fail_at(b, ERR_PARSE, at, "%s: %s", p->context,
		    problem);
	return fail_at(b, ERR_PARSE, at, "%s", problem);
}

/*
 * Dotted path of the entry being built at stack depth d, e.g.
 * "datasets[0].path".  For messages only; truncates quietly.
 */
static void
stack_path(char *out, size_t cap, const struct builder *b, unsigned d,
    const char *last)
{
	size_t n = 0;
	unsigned i;

	out[0] = '\0';
	for (i = 0; i < d && n < cap; i++) {
		const struct frame *f = &b->stack[i];
		int w;

		if (f->node->kind == DOC_SEQ) {
			w = snprintf(out + n, cap - n, "[%zu]", f->n);
		} else if (f->tail != NULL && f->n % 2 == 1 &&
		    f->tail->node->text != NULL) {
			w = snprintf(out + n, cap - n, "%s%s",
			    n > 0 ? "." : "", f->tail->node->text);
		} else {
			w = 0;
		}
		if (w < 0)
			return;
		n += (size_t)w;
	}
	if (last != NULL && n < cap)
		snprintf(out + n, cap - n, "%s%s", n > 0 ? "." : "", last);
}

static int
count_nodes(struct builder *b, size_t weight, struct doc_loc at)
{

	if (weight > b->lim->max_nodes ||
	    b->doc->nodes > b->lim->max_nodes - weight) {
		return fail_at(b, ERR_LIMIT, at,
		    "document has more than %zu nodes counting alias "
		    "expansions (limit max_nodes)", b->lim->max_nodes);
	}
	b->doc->nodes += weight;
	return 0;
}

static int
anchor_grow(struct builder *b)
{
	size_t cap = b->anchor_cap == 0 ? 16 : b->anchor_cap * 2;
	struct anchor *t = ARENA_NEW(b->a, struct anchor, cap);
	size_t i;

	if (t == NULL)
		return nomem(b);
	for (i = 0; i < b->anchor_cap; i++) {
		const struct anchor *o = &b->anchors[i];
		size_t j;

		if (o->name == NULL)
			continue;
		j = (size_t)siphash(b->lim->hash_key, 32, o->name,
		    strlen(o->name)) & (cap - 1);
		while (t[j].name != NULL)
			j = (j + 1) & (cap - 1);
		t[j] = *o;
	}
	b->anchors = t;
	b->anchor_cap = cap;
	return 0;
}

/* The slot for name: its entry, or the empty slot where it would go. */
static struct anchor *
anchor_slot(struct builder *b, const char *name)
{
	size_t j = (size_t)siphash(b->lim->hash_key, 32, name,
	    strlen(name)) & (b->anchor_cap - 1);

	while (b->anchors[j].name != NULL &&
	    strcmp(b->anchors[j].name, name) != 0)
		j = (j + 1) & (b->anchor_cap - 1);
	return &b->anchors[j];
}

static int
anchor_define(struct builder *b, const yaml_char_t *name,
    struct doc_node *node, struct doc_loc at)
{
	struct anchor *s;
	int rv;

	if (name == NULL)
		return 0;
	if (b->anchor_n * 2 >= b->anchor_cap) {
		rv = anchor_grow(b);
		if (rv != 0)
			return rv;
	}
	s = anchor_slot(b, (const char *)name);
	if (s->name != NULL) {
		/* PyYAML's composer refuses a second anchor of one name. */
		return fail_at(b, ERR_PARSE, at,
		    "duplicate anchor '&%s' (first at line %u)", s->name,
		    s->loc.line);
	}
	s->name = arena_strndup(b->a, (const char *)name,
	    strlen((const char *)name));
	if (s->name == NULL)
		return nomem(b);
	s->node = node;
	s->loc = at;
	b->anchor_n++;
	return 0;
}

/* Is n the plain, untagged scalar s? (<< and = are special that way.) */
static bool
is_plain(const struct doc_node *n, const char *s)
{
	return n->plain && n->text != NULL && n->text[0] == s[0] &&
	    strcmp(n->text, s) == 0;
}

/* Append child (written at `at`) to the open collection on top. */
static int
add_child(struct builder *b, struct doc_node *child, struct doc_loc at)
{
	struct frame *f;
	struct link *k;
	bool is_key;

	if (b->depth == 0) {
		if (child->kind == DOC_MAP) {
			b->doc->root = child;
			return 0;
		}
		if (child->kind == DOC_NULL)
			return fail_at(b, ERR_PARSE, at,
			    "empty document: a config is a mapping of keys");
		return fail_at(b, ERR_PARSE, at,
		    "the document root must be a mapping of config keys, "
		    "got a %s%s", doc_kind_name(child->kind),
		    child->len > 1024 ? " (a key longer than 1024 "
		    "characters cannot be a YAML implicit key)" : "");
	}
	f = &b->stack[b->depth - 1];
	is_key = f->node->kind == DOC_MAP && f->n % 2 == 0;
	if (is_key) {
		if (child->kind == DOC_SEQ || child->kind == DOC_MAP)
			return fail_at(b, ERR_PARSE, at,
			    "a mapping key must be a scalar, got a %s",
			    doc_kind_name(child->kind));
		if (child->len > b->lim->max_key)
			return fail_at(b, ERR_LIMIT, at,
			    "mapping key of %zu bytes exceeds %zu (limit "
			    "max_key)", child->len, b->lim->max_key);
		if (f->n / 2 >= b->lim->max_map_keys)
			return fail_at(b, ERR_LIMIT, at,
			    "mapping has more than %zu keys (limit "
			    "max_map_keys); a config has about a hundred",
			    b->lim->max_map_keys);
	} else if (is_plain(child, "<<") || is_plain(child, "=")) {
		/* PyYAML: "could not determine a constructor". */
		return fail_at(b, ERR_PARSE, at,
		    "plain '%s' is only valid as a mapping key; quote it "
		    "to mean the string", child->text);
	}
	k = ARENA_NEW(b->a, struct link, 1);
	if (k == NULL)
		return nomem(b);
	k->node = child;
	k->loc = at;
	if (f->tail == NULL)
		f->head = k;
	else
		f->tail->next = k;
	f->tail = k;
	f->n++;
	f->weight = f->weight > SIZE_MAX - child->weight ? SIZE_MAX :
	    f->weight + child->weight;
	return 0;
}

static bool
is_number(enum doc_kind k)
{
	return k == DOC_BOOL || k == DOC_INT || k == DOC_FLOAT;
}

/* Python's hash(): 1 == 1.0 == True share one. */
static uint64_t
key_hash(const struct doc_node *k)
{
	double f;

	switch (k->kind) {
	case DOC_NULL:
		return 0x9e3779b97f4a7c15ULL;
	case DOC_BOOL:
		return hash_u64(k->b ? 1 : 0);
	case DOC_INT:
		if (k->big)
			return hash_bytes(k->text, k->len, 7);
		return hash_u64((uint64_t)k->i);
	case DOC_FLOAT:
		f = k->f;
		if (f == f && f >= -9.2e18 && f <= 9.2e18 &&
		    (double)(long long)f == f)
			return hash_u64((uint64_t)(long long)f);
		return hash_bytes((const char *)&f, sizeof(f), 11);
	default:
		return hash_bytes(k->text, k->len, DOC_HASH_SEED ^
		    (uint64_t)k->kind);
	}
}

/* key_hash's keyed twin: equal keys (1 == 1.0 == True) hash alike. */
static uint64_t
key_hash_keyed(const struct doc_node *k, const uint64_t key[2])
{
	double f;

	switch (k->kind) {
	case DOC_NULL:
		return siphash(key, 1, "", 0);
	case DOC_BOOL:
		return sip_u64(key, 3, k->b ? 1 : 0);
	case DOC_INT:
		if (k->big)
			return siphash(key, 2, k->text, k->len);
		return sip_u64(key, 3, (uint64_t)k->i);
	case DOC_FLOAT:
		f = k->f;
		if (f == f && f >= -9.2e18 && f <= 9.2e18 &&
		    (double)(long long)f == f)
			return sip_u64(key, 3, (uint64_t)(long long)f);
		return siphash(key, 4, (const char *)&f, sizeof(f));
	default:
		return siphash(key, 16 + (uint64_t)k->kind, k->text, k->len);
	}
}


static double
num_value(const struct doc_node *k)
{
	if (k->kind == DOC_BOOL)
		return k->b ? 1.0 : 0.0;
	if (k->kind == DOC_INT)
		return (double)k->i;
	return k->f;
}

/* Python's ==, for the scalar kinds a key can have. */
static bool
key_eq(const struct doc_node *x, const struct doc_node *y)
{
	if (is_number(x->kind) && is_number(y->kind)) {
		if (x->kind != DOC_FLOAT && y->kind != DOC_FLOAT) {
			if (x->big || y->big)
				return x->big && y->big && x->len == y->len &&
				    memcmp(x->text, y->text, x->len) == 0;
			return (x->kind == DOC_BOOL ? (long long)x->b : x->i)
			    == (y->kind == DOC_BOOL ? (long long)y->b : y->i);
		}
		return num_value(x) == num_value(y);
	}
	if (x->kind != y->kind)
		return false;
	if (x->kind == DOC_NULL)
		return true;
	return x->len == y->len && memcmp(x->text, y->text, x->len) == 0;
}

/* The value of a << key: its pairs, in PyYAML's flatten_mapping order. */
static int
merge_sources(struct builder *b, const struct doc_node *v,
    struct doc_loc at, const struct doc_node ***srcs, size_t *nsrcs)
{
	size_t i;

	if (v->kind == DOC_MAP) {
		*srcs = ARENA_NEW(b->a, const struct doc_node *, 1);
		if (*srcs == NULL)
			return nomem(b);
		(*srcs)[0] = v;
		*nsrcs = 1;
		return 0;
	}
	if (v->kind != DOC_SEQ)
		return fail_at(b, ERR_PARSE, at,
		    "a merge key '<<' needs a mapping or a list of mappings, "
		    "got a %s", doc_kind_name(v->kind));
	*srcs = ARENA_NEW(b->a, const struct doc_node *, v->n);
	if (v->n > 0 && *srcs == NULL)
		return nomem(b);
	/* Later mappings in the list lose to earlier ones: reverse. */
	for (i = 0; i < v->n; i++) {
		const struct doc_node *m = v->items[v->n - 1 - i];

		if (m->kind != DOC_MAP)
			return fail_at(b, ERR_PARSE, at,
			    "a merge key '<<' list may hold only mappings, "
			    "item %zu is a %s", v->n - 1 - i,
			    doc_kind_name(m->kind));
		(*srcs)[i] = m;
	}
	*nsrcs = v->n;
	return 0;
}

static int
note_dup(struct builder *b, const struct doc_pair *kept, unsigned first)
{
	struct doc_dup *d = ARENA_NEW(b->a, struct doc_dup, 1);
	char path[256];

	if (d == NULL)
		return nomem(b);
	stack_path(path, sizeof(path), b, b->depth, kept->key->text);
	d->key = kept->key->text;
	d->path = arena_strndup(b->a, path, strlen(path));
	if (d->path == NULL)
		return nomem(b);
	d->loc = kept->key_loc;
	d->first_line = first;
	if (b->dup_tail == NULL)
		b->doc->dups = d;
	else
		b->dup_tail->next = d;
	b->dup_tail = d;
	return 0;
}

/*
 * A mapping's index slot: the pair's index + 1 in the low 32 bits (0:
 * empty), the high 32 bits of its key's hash above, so that a probe past
 * another key compares two numbers and follows no pointer.
 */
static uint64_t
slot_of(size_t i, uint64_t hash)
{
	return (uint64_t)(i + 1) | (hash & 0xffffffff00000000ULL);
}

static size_t
slot_pair(uint64_t slot)
{
	return (size_t)(slot & 0xffffffffu) - 1;
}

static uint64_t
slot_tag(uint64_t hash_or_slot)
{
	return hash_or_slot >> 32;
}

/* Probes past the first slot that an index of n keys may take before
   its keys are taken for crafted collisions: about 1.2 n by chance at a
   quarter full, so this is never reached by accident. */
#define INDEX_PROBES(n) (8 * (n) + 64)
#define INDEX_REKEY 1	/* dedup_pairs: over INDEX_PROBES, unkeyed */

/*
 * Lay all[0..out) into m->pairs through slots (cap entries, zeroed),
 * each key kept at its first position with its last value, noting
 * duplicates.  keyed: hash with the secret key.  INDEX_REKEY when an
 * unkeyed pass probes past INDEX_PROBES(out); 0 or ERR_NOMEM otherwise.
 */
static int
dedup_pairs(struct builder *b, struct doc_node *m,
    const struct doc_pair *all, size_t out, uint64_t *slots, size_t cap,
    bool keyed)
{
	size_t i, probes = 0;
	int rv;

	m->n = 0;
	for (i = 0; i < out; i++) {
		uint64_t kh = keyed ? key_hash_keyed(all[i].key,
		    b->lim->hash_key) : key_hash(all[i].key);
		size_t h = (size_t)kh & (cap - 1);
		struct doc_pair *hit = NULL;

		while (slots[h] != 0) {
			struct doc_pair *p = &m->pairs[slot_pair(slots[h])];

			if (slot_tag(slots[h]) == slot_tag(kh) &&
			    key_eq(p->key, all[i].key)) {
				hit = p;
				break;
			}
			h = (h + 1) & (cap - 1);
			if (!keyed && ++probes > INDEX_PROBES(out))
				return INDEX_REKEY;
		}
		if (hit == NULL) {
			m->pairs[m->n] = all[i];
			slots[h] = slot_of(m->n++, kh);
			continue;
		}
		if (!hit->merged && !all[i].merged) {
			unsigned first = hit->key_loc.line;

			*hit = all[i];
			rv = note_dup(b, hit, first);
			if (rv != 0)
				return rv;
		} else {
			*hit = all[i];
		}
	}
	return 0;
}

/*
 * Close a mapping: merged pairs first, then the explicit ones, each key
 * kept at its first position with its last value (a Python dict).
 */
static int
finish_map(struct builder *b, struct frame *f)
{
	struct doc_node *m = f->node;
	size_t npairs = f->n / 2, total = 0, out = 0, merges = 0, cap, i, j;
	struct doc_pair *raw, *all;
	struct doc_dup *saved;
	uint64_t *slots;
	const struct link *k;
	bool keyed = false;
	int rv;

	raw = ARENA_NEW(b->a, struct doc_pair, npairs);
	if (npairs > 0 && raw == NULL)
		return nomem(b);
	for (i = 0, k = f->head; i < npairs; i++, k = k->next->next) {
		raw[i].key = k->node;
		raw[i].key_loc = k->loc;
		raw[i].value = k->next->node;
		raw[i].value_loc = k->next->loc;
	}
	/* Count what the merges bring in; the node budget bounds it. */
	for (i = 0; i < npairs; i++) {
		const struct doc_node *v = raw[i].value;

		if (!is_plain(raw[i].key, "<<")) {
			total++;
			continue;
		}
		merges++;
		if (v->kind == DOC_MAP)
			total += v->n;
		else if (v->kind == DOC_SEQ)
			for (j = 0; j < v->n; j++)
				total += v->items[j]->n;
	}
	if (merges == 0) {
		all = raw;	/* the common case: nothing to lay out */
		out = npairs;
		goto dedup;
	}
	all = ARENA_NEW(b->a, struct doc_pair, total);
	if (total > 0 && all == NULL)
		return nomem(b);
	for (i = 0; i < npairs; i++) {
		const struct doc_node **srcs = NULL;
		size_t nsrcs = 0, s;

		if (!is_plain(raw[i].key, "<<"))
			continue;
		rv = merge_sources(b, raw[i].value, raw[i].value_loc, &srcs,
		    &nsrcs);
		if (rv != 0)
			return rv;
		for (s = 0; s < nsrcs; s++)
			for (j = 0; j < srcs[s]->n; j++) {
				all[out] = srcs[s]->pairs[j];
				all[out++].merged = true;
			}
	}
	for (i = 0; i < npairs; i++)
		if (!is_plain(raw[i].key, "<<"))
			all[out++] = raw[i];
dedup:
	if (out > b->lim->max_map_keys)
		return fail_at(b, ERR_LIMIT, m->loc, "mapping has %zu keys with "
		    "its merges, more than %zu (limit max_map_keys)", out,
		    b->lim->max_map_keys);
	/* Dedup through an open-addressing table of indexes into m->pairs,
	   at most a quarter full: a lookup of a key the map lacks mostly
	   meets an empty slot first (a predictable branch).  Two more words
	   hold the hash key when the index is keyed. */
	for (cap = 8; cap < out * 4; cap *= 2)
		;
	slots = ARENA_NEW(b->a, uint64_t, cap + 2);
	m->pairs = ARENA_NEW(b->a, struct doc_pair, out);
	if (slots == NULL || (out > 0 && m->pairs == NULL))
		return nomem(b);
	saved = b->dup_tail;
	rv = dedup_pairs(b, m, all, out, slots, cap, false);
	if (rv == INDEX_REKEY) {
		/* Collisions far past chance: keys crafted against the
		   public hash.  Forget this pass (and its duplicate notes)
		   and index again under the secret key. */
		memset(slots, 0, cap * sizeof(*slots));
		if (saved == NULL)
			b->doc->dups = NULL;
		else
			saved->next = NULL;
		b->dup_tail = saved;
		rv = dedup_pairs(b, m, all, out, slots, cap, true);
		slots[cap] = b->lim->hash_key[0];
		slots[cap + 1] = b->lim->hash_key[1];
		keyed = true;
	}
	if (rv != 0)
		return rv;
	m->slots = slots;	/* doc_map_get's index from now on */
	m->slot_mask = (cap - 1) | (keyed ? DOC_SLOTS_KEYED : 0);
	return 0;
}

static int
finish_seq(struct builder *b, struct frame *f)
{
	struct doc_node *s = f->node;
	const struct link *k;
	size_t i;

	s->items = ARENA_NEW(b->a, struct doc_node *, f->n);
	if (f->n > 0 && s->items == NULL)
		return nomem(b);
	for (i = 0, k = f->head; k != NULL; k = k->next)
		s->items[i++] = k->node;
	s->n = f->n;
	return 0;
}

static int
check_collection_tag(struct builder *b, const yaml_char_t *tag,
    const char *want, struct doc_loc at)
{

	if (tag == NULL || strcmp((const char *)tag, "!") == 0 ||
	    strcmp((const char *)tag, want) == 0)
		return 0;
	return fail_at(b, ERR_PARSE, at, "unsupported tag '%s'",
	    (const char *)tag);
}

static int
open_collection(struct builder *b, const yaml_event_t *ev)
{
	bool map = ev->type == YAML_MAPPING_START_EVENT;
	struct doc_loc at = mark_loc(ev->start_mark);
	const yaml_char_t *tag = map ? ev->data.mapping_start.tag :
	    ev->data.sequence_start.tag;
	const yaml_char_t *anchor = map ? ev->data.mapping_start.anchor :
	    ev->data.sequence_start.anchor;
	struct doc_node *n;
	struct frame *f;
	int rv;

	if (b->depth >= b->lim->max_depth) {
		return fail_at(b, ERR_LIMIT, at,
		    "nesting deeper than %u levels (limit max_depth)",
		    b->lim->max_depth);
	}
	rv = check_collection_tag(b, tag, map ? TAG_PREFIX "map" :
	    TAG_PREFIX "seq", at);
	if (rv != 0)
		return rv;
	rv = count_nodes(b, 1, at);
	if (rv != 0)
		return rv;
	n = ARENA_NEW(b->a, struct doc_node, 1);
	if (n == NULL)
		return nomem(b);
	n->kind = map ? DOC_MAP : DOC_SEQ;
	n->loc = at;
	n->building = true;
	rv = anchor_define(b, anchor, n, at);
	if (rv != 0)
		return rv;
	f = &b->stack[b->depth++];
	memset(f, 0, sizeof(*f));
	f->node = n;
	return 0;
}

static int
close_collection(struct builder *b)
{
	struct frame *f = &b->stack[b->depth - 1];
	struct doc_node *n = f->node;
	int rv;

	rv = n->kind == DOC_MAP ? finish_map(b, f) : finish_seq(b, f);
	if (rv != 0)
		return rv;
	n->weight = f->weight >= SIZE_MAX ? SIZE_MAX : f->weight + 1;
	n->building = false;
	b->depth--;
	return add_child(b, n, n->loc);
}

/* Type a scalar event the way PyYAML's resolver and constructor do. */
static int
scalar_node(struct doc_node **out, struct builder *b, const yaml_event_t *ev)
{
	const char *tag = (const char *)ev->data.scalar.tag;
	const char *v = (const char *)ev->data.scalar.value;
	size_t len = ev->data.scalar.length;
	struct doc_loc at = mark_loc(ev->start_mark);
	enum scalar_type t;
	struct scalar sc;
	struct doc_node *n;
	int rv;

	*out = NULL;
	if (len > b->lim->max_scalar)
		return fail_at(b, ERR_LIMIT, at,
		    "scalar of %zu bytes exceeds %zu (limit max_scalar)", len,
		    b->lim->max_scalar);
	/* PyYAML resolves a '!' (non-specific) tag like a plain scalar. */
	if ((tag == NULL && ev->data.scalar.plain_implicit) ||
	    (tag != NULL && strcmp(tag, "!") == 0))
		t = scalar_resolve(v, len);
	else if (tag == NULL || strcmp(tag, TAG_PREFIX "str") == 0)
		t = SCALAR_STR;
	else if (strcmp(tag, TAG_PREFIX "null") == 0)
		t = SCALAR_NULL;
	else if (strcmp(tag, TAG_PREFIX "bool") == 0)
		t = SCALAR_BOOL;
	else if (strcmp(tag, TAG_PREFIX "int") == 0)
		t = SCALAR_INT;
	else if (strcmp(tag, TAG_PREFIX "float") == 0)
		t = SCALAR_FLOAT;
	else if (strcmp(tag, TAG_PREFIX "timestamp") == 0 &&
	    scalar_resolve(v, len) == SCALAR_TIMESTAMP)
		t = SCALAR_TIMESTAMP;
	else
		return fail_at(b, ERR_PARSE, at,
		    "unsupported tag '%s' (preflight reads what "
		    "yaml.safe_load reads: !!str, !!int, !!float, !!bool, "
		    "!!null, !!map, !!seq)", tag);
	rv = scalar_construct(&sc, t, v, len, b->a);
	if (rv == ERR_NOMEM)
		return nomem(b);
	if (rv != 0)
		return fail_at(b, ERR_PARSE, at,
		    "'%.40s' is not a valid !!%s value", v,
		    scalar_type_name(t));
	n = ARENA_NEW(b->a, struct doc_node, 1);
	if (n == NULL)
		return nomem(b);
	n->text = arena_strndup(b->a, v, len);
	if (n->text == NULL)
		return nomem(b);
	n->len = len;
	n->loc = at;
	n->weight = 1;
	n->plain = tag == NULL && ev->data.scalar.plain_implicit;
	switch (sc.type) {
	case SCALAR_NULL:
		n->kind = DOC_NULL;
		break;
	case SCALAR_BOOL:
		n->kind = DOC_BOOL;
		n->b = sc.b;
		break;
	case SCALAR_INT:
		n->kind = DOC_INT;
		n->i = sc.i;
		n->big = sc.big;
		break;
	case SCALAR_FLOAT:
		n->kind = DOC_FLOAT;
		n->f = sc.f;
		break;
	case SCALAR_TIMESTAMP:
		n->kind = DOC_TIMESTAMP;
		break;
	case SCALAR_STR:
	case SCALAR_MERGE:
	case SCALAR_VALUE:
		/* << and = stay plain strings; add_child() polices them. */
		n->kind = DOC_STR;
		break;
	}
	*out = n;
	return 0;
}

static int
on_event(struct builder *b, const yaml_event_t *ev)
{
	struct doc_loc at = mark_loc(ev->start_mark);
	struct doc_node *n;
	struct anchor *s;
	int rv;

	switch (ev->type) {
	case YAML_DOCUMENT_START_EVENT:
		if (b->ndocs++ > 0)
			return fail_at(b, ERR_PARSE, at,
			    "more than one YAML document; a config is one "
			    "document");
		return 0;
	case YAML_ALIAS_EVENT:
		s = b->anchor_cap == 0 ? NULL : anchor_slot(b,
		    (const char *)ev->data.alias.anchor);
		if (s == NULL || s->name == NULL)
			return fail_at(b, ERR_PARSE, at,
			    "unknown alias '*%s'",
			    (const char *)ev->data.alias.anchor);
		if (s->node->building)
			return fail_at(b, ERR_PARSE, at,
			    "recursive alias '*%s' refers to a node that "
			    "contains it (line %u)", s->name, s->loc.line);
		rv = count_nodes(b, s->node->weight, at);
		if (rv != 0)
			return rv;
		return add_child(b, s->node, at);
	case YAML_SCALAR_EVENT:
		rv = count_nodes(b, 1, at);
		if (rv != 0)
			return rv;
		rv = scalar_node(&n, b, ev);
		if (rv != 0)
			return rv;
		rv = anchor_define(b, ev->data.scalar.anchor, n, at);
		if (rv != 0)
			return rv;
		return add_child(b, n, at);
	case YAML_SEQUENCE_START_EVENT:
	case YAML_MAPPING_START_EVENT:
		return open_collection(b, ev);
	case YAML_SEQUENCE_END_EVENT:
	case YAML_MAPPING_END_EVENT:
		return close_collection(b);
	case YAML_NO_EVENT:
	case YAML_STREAM_START_EVENT:
	case YAML_STREAM_END_EVENT:
	case YAML_DOCUMENT_END_EVENT:
		return 0;
	}
	return 0;
}

/*
 * An encoding fault anywhere in the input is the error to report, as if
 * the input were checked before parsing.  It is not: libyaml validates
 * what it reads (the same rules), so a parse that reaches the end of the
 * stream has read valid text, and only a failure, which may come before
 * libyaml read everything, needs the whole input checked.  Returns rv, or
 * the encoding error (then in e).
 */
static int
encoding_first(const char *buf, size_t len, struct err *e, int rv)
{
	struct err enc = { 0 };
	int erv = check_encoding(buf, len, &enc);

	if (erv == 0)
		return rv;
	if (e != NULL)
		*e = enc;
	return erv;
}

int
doc_parse(struct doc **out, const char *buf, size_t len,
    const struct limits *lim, struct arena *a, struct err *e)
{
	yaml_parser_t parser;
	yaml_event_t ev;
	struct builder b;
	struct err_loc l;
	bool done = false;
	int rv;

	*out = NULL;
	memset(&b, 0, sizeof(b));
	if (len > lim->max_bytes) {
		/* Point at the first byte past the limit. */
		struct doc_loc at = { 1, 1 };
		size_t i;

		for (i = 0; i < lim->max_bytes; i++) {
			if (buf[i] == '\n') {
				at.line++;
				at.col = 1;
			} else if (((unsigned char)buf[i] & 0xC0) != 0x80) {
				at.col++;
			}
		}
		l = mkloc(at);
		return err_set(e, ERR_LIMIT, &l,
		    "config is larger than %zu bytes (limit max_bytes)",
		    lim->max_bytes);
	}
	b.lim = lim;
	b.a = a;
	b.e = e;
	b.buf = buf;
	b.len = len;
	b.doc = ARENA_NEW(a, struct doc, 1);
	/* Frames are cleared as they are pushed (open_collection). */
	b.stack = arena_take(a, sizeof(struct frame), _Alignof(struct frame),
	    (size_t)lim->max_depth + 1);
	if (b.doc == NULL || b.stack == NULL)
		return encoding_first(buf, len, e, err_set(e, ERR_NOMEM, NULL,
		    "request memory budget spent before parsing"));
	if (!yaml_parser_initialize(&parser))
		return encoding_first(buf, len, e, err_set(e, ERR_NOMEM, NULL,
		    "cannot initialize parser"));
	yaml_parser_set_input_string(&parser, (const unsigned char *)buf, len);
	yaml_parser_set_encoding(&parser, YAML_UTF8_ENCODING);
	rv = 0;
	while (!done && rv == 0) {
		if (!yaml_parser_parse(&parser, &ev)) {
			rv = yaml_failed(&b, &parser);
			break;
		}
		done = ev.type == YAML_STREAM_END_EVENT;
		rv = on_event(&b, &ev);
		yaml_event_delete(&ev);
	}
	yaml_parser_delete(&parser);
	if (rv != 0) {
		/* Name where in the tree it went wrong, for the caller. */
		if (e != NULL && e->loc.line > 0 && e->loc.path[0] == '\0')
			stack_path(e->loc.path, sizeof(e->loc.path), &b,
			    b.depth, NULL);
		return encoding_first(buf, len, e, rv);
	}
	/* Parsed to the end of the stream: libyaml has read, and so
	   validated, every byte (the same checks as check_encoding()). */
	if (b.doc->root == NULL) {
		l.line = 1;
		l.col = 1;
		l.path[0] = '\0';
		return err_set(e, ERR_PARSE, &l,
		    "empty document: a config is a mapping of keys");
	}
	*out = b.doc;
	return 0;
}

/* arena_once()'s build for doc_parse_shared(): text parsed into a. */
static const void *
parse_kept(struct arena *a, const void *text)
{
	struct limits lim;
	struct err e = { 0 };
	struct doc *d;

	limits_default(&lim);
	return doc_parse(&d, text, strlen(text), &lim, a, &e) == 0 ? d : NULL;
}

const struct doc *
doc_parse_shared(const void *_Atomic *slot, const char *text)
{
	return arena_once(slot, (size_t)16 << 20, parse_kept, text);
}

/* A string key with these bytes?  Out of line: the probe loop below then
   needs no saved registers on the way to a miss. */
static __attribute__((noinline)) bool
key_is(const struct doc_node *k, const char *key, size_t n)
{
	return k->kind == DOC_STR && k->len == n && memcmp(k->text, key, n) == 0;
}

static __attribute__((noinline)) const struct doc_pair *
map_scan(const struct doc_node *map, const char *key, size_t n)
{
	size_t i;

	for (i = 0; i < map->n; i++)
		if (key_is(map->pairs[i].key, key, n))
			return &map->pairs[i];
	return NULL;
}

/* The first slot from h on whose tag is hash's, or SIZE_MAX at an empty
   one: numbers only, no call. */
static inline size_t
probe(const uint64_t *slots, size_t mask, uint64_t hash, size_t h)
{
	uint64_t slot;

	for (; (slot = slots[h]) != 0; h = (h + 1) & mask)
		if (slot_tag(slot) == slot_tag(hash))
			return h;
	return SIZE_MAX;
}

/* A tag matched at h: compare keys, probing on past the rare false
   match. */
static __attribute__((noinline)) const struct doc_pair *
find_from(const struct doc_node *map, size_t mask, const char *key,
    size_t n, uint64_t hash, size_t h)
{
	for (; h != SIZE_MAX; h = probe(map->slots, mask, hash,
	    (h + 1) & mask)) {
		const struct doc_pair *p = &map->pairs[slot_pair(
		    map->slots[h])];

		if (key_is(p->key, key, n))
			return p;
	}
	return NULL;
}

/* A lookup in a keyed index: the key's hash under the index's key. */
static __attribute__((noinline)) const struct doc_pair *
find_keyed(const struct doc_node *map, const char *key, size_t n)
{
	size_t mask = map->slot_mask & ~DOC_SLOTS_KEYED, h;
	uint64_t hash = siphash(map->slots + mask + 1, 16 + (uint64_t)DOC_STR,
	    key, n);

	h = probe(map->slots, mask, hash, (size_t)hash & mask);
	if (h == SIZE_MAX)
		return NULL;
	return find_from(map, mask, key, n, hash, h);
}

const struct doc_pair *
doc_map_find(const struct doc_node *map, const char *key, size_t n,
    uint64_t hash)
{
	size_t h;

	if (map == NULL || map->kind != DOC_MAP)
		return NULL;
	if (map->slots == NULL)
		return map_scan(map, key, n);
	if (map->slot_mask & DOC_SLOTS_KEYED)
		return find_keyed(map, key, n);
	/* Most lookups are of keys a config does not set: they end here. */
	h = probe(map->slots, map->slot_mask, hash,
	    (size_t)hash & map->slot_mask);
	if (h == SIZE_MAX)
		return NULL;
	return find_from(map, map->slot_mask, key, n, hash, h);
}

void
doc_map_index(struct doc_node *m, struct arena *a)
{
	size_t cap, i, h, probes = 0;
	uint64_t *slots, kh;

	m->slots = NULL;
	m->slot_mask = 0;
	if (m->kind != DOC_MAP)
		return;
	for (cap = 8; cap < m->n * 4; cap *= 2)
		;
	slots = ARENA_NEW(a, uint64_t, cap);
	if (slots == NULL)
		return;
	for (i = 0; i < m->n; i++) {
		kh = key_hash(m->pairs[i].key);
		h = (size_t)kh & (cap - 1);
		while (slots[h] != 0 && !(slot_tag(slots[h]) == slot_tag(kh) &&
		    key_eq(m->pairs[slot_pair(slots[h])].key,
		    m->pairs[i].key))) {
			h = (h + 1) & (cap - 1);
			/* Crafted collisions: no key here, so scan (the
			   mapping holds at most max_map_keys keys). */
			if (++probes > INDEX_PROBES(m->n))
				return;
		}
		if (slots[h] == 0)
			slots[h] = slot_of(i, kh);
	}
	m->slots = slots;
	m->slot_mask = cap - 1;
}

bool
doc_truthy(const struct doc_node *v)
{
	if (v == NULL)
		return false;
	switch (v->kind) {
	case DOC_NULL:
		return false;
	case DOC_BOOL:
		return v->b;
	case DOC_INT:
		return v->i != 0 || v->big;
	case DOC_FLOAT:
		return v->f != 0.0;
	case DOC_STR:
		return v->len > 0;
	case DOC_SEQ:
	case DOC_MAP:
		return v->n > 0;
	case DOC_TIMESTAMP:
		return true;
	}
	return true;
}

bool
doc_text_has_ci(const char *text, const char *needle)
{
	size_t n = strlen(needle);
	unsigned char lo, up;

	if (n == 0)
		return text != NULL;
	lo = (unsigned char)tolower((unsigned char)needle[0]);
	up = (unsigned char)toupper((unsigned char)needle[0]);
	/* The whole compare only where the first character matches. */
	for (; text != NULL && *text != '\0'; text++)
		if (((unsigned char)*text == lo || (unsigned char)*text == up)
		    && strncasecmp(text, needle, n) == 0)
			return true;
	return false;
}

bool
doc_seq_has(const struct doc_node *seq, const char *needle)
{
	size_t i;

	for (i = 0; seq != NULL && seq->kind == DOC_SEQ && i < seq->n; i++)
		if (seq->items[i]->kind == DOC_STR &&
		    strstr(seq->items[i]->text, needle) != NULL)
			return true;
	return false;
}

const char *
doc_kind_name(enum doc_kind k)
{
	switch (k) {
	case DOC_NULL:
		return "null";
	case DOC_BOOL:
		return "bool";
	case DOC_INT:
		return "int";
	case DOC_FLOAT:
		return "float";
	case DOC_STR:
		return "str";
	case DOC_TIMESTAMP:
		return "timestamp";
	case DOC_SEQ:
		return "list";
	case DOC_MAP:
		return "dict";
	}
	return "?";
}
