/*
 * core/doc: libyaml events -> document tree, the way PyYAML composes and
 * constructs it (yaml/composer.py, yaml/constructor.py SafeConstructor).
 *
 * One pass over libyaml's event stream with an explicit stack, so depth
 * costs no C recursion.  Limits are checked as events arrive: a 100,000-deep
 * flow sequence stops at the first level past max_depth, and an alias bomb
 * stops when the nodes its aliases stand for pass max_nodes (each node
 * knows its weight, so counting an alias is O(1)).  Anchors and keys go
 * through hash tables, so nothing is quadratic.  This file is the
 * builder; doc_map.c lays out mappings, doc_query.c reads the tree and
 * doc_directives.c bounds the directives before libyaml reads them.
 * Limits: no I/O, all memory from the caller's arena.
 */
#include "doc.h"
#include "doc_int.h"

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
	l->max_directives = 64;
	l->hash_key[0] = process_key[0];
	l->hash_key[1] = process_key[1];
}

void
limits_set_hash_key(const uint64_t key[2])
{
	process_key[0] = key[0];
	process_key[1] = key[1];
}

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

int
doc_fail_at(struct builder *b, enum err_code code, struct doc_loc at,
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

int
doc_nomem(struct builder *b)
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
		return doc_fail_at(b, ERR_PARSE, at, "%s at byte offset %zu",
		    problem, p->problem_offset);
	}
	at = mark_loc(p->problem_mark);
	off = offset_at(b->buf, b->len, at);
	if (off < b->len && b->buf[off] == '\t')
		return doc_fail_at(b, ERR_PARSE, at,
		    "tab character used for indentation; YAML allows only "
		    "spaces");
	if (p->context != NULL)
		return doc_fail_at(b, ERR_PARSE, at, "%s: %s", p->context,
		    problem);
	return doc_fail_at(b, ERR_PARSE, at, "%s", problem);
}

/*
 * Dotted path of the entry being built at stack depth d, e.g.
 * "datasets[0].path".  For messages only; truncates quietly.
 */
void
doc_stack_path(char *out, size_t cap, const struct builder *b, unsigned d,
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
		return doc_fail_at(b, ERR_LIMIT, at,
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
		return doc_nomem(b);
	for (i = 0; i < b->anchor_cap; i++) {
		const struct anchor *o = &b->anchors[i];
		size_t j;

		if (o->name == NULL)
			continue;
		j = (size_t)doc_siphash(b->lim->hash_key, 32, o->name,
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
	size_t j = (size_t)doc_siphash(b->lim->hash_key, 32, name,
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
		return doc_fail_at(b, ERR_PARSE, at,
		    "duplicate anchor '&%s' (first at line %u)", s->name,
		    s->loc.line);
	}
	s->name = arena_strndup(b->a, (const char *)name,
	    strlen((const char *)name));
	if (s->name == NULL)
		return doc_nomem(b);
	s->node = node;
	s->loc = at;
	b->anchor_n++;
	return 0;
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
			return doc_fail_at(b, ERR_PARSE, at,
			    "empty document: a config is a mapping of keys");
		return doc_fail_at(b, ERR_PARSE, at,
		    "the document root must be a mapping of config keys, "
		    "got a %s%s", doc_kind_name(child->kind),
		    child->len > 1024 ? " (a key longer than 1024 "
		    "characters cannot be a YAML implicit key)" : "");
	}
	f = &b->stack[b->depth - 1];
	is_key = f->node->kind == DOC_MAP && f->n % 2 == 0;
	if (is_key) {
		if (child->kind == DOC_SEQ || child->kind == DOC_MAP)
			return doc_fail_at(b, ERR_PARSE, at,
			    "a mapping key must be a scalar, got a %s",
			    doc_kind_name(child->kind));
		if (child->len > b->lim->max_key)
			return doc_fail_at(b, ERR_LIMIT, at,
			    "mapping key of %zu bytes exceeds %zu (limit "
			    "max_key)", child->len, b->lim->max_key);
		if (f->n / 2 >= b->lim->max_map_keys)
			return doc_fail_at(b, ERR_LIMIT, at,
			    "mapping has more than %zu keys (limit "
			    "max_map_keys); a config has about a hundred",
			    b->lim->max_map_keys);
	} else if (doc_is_plain(child, "<<") || doc_is_plain(child, "=")) {
		/* PyYAML: "could not determine a constructor". */
		return doc_fail_at(b, ERR_PARSE, at,
		    "plain '%s' is only valid as a mapping key; quote it "
		    "to mean the string", child->text);
	}
	k = ARENA_NEW(b->a, struct link, 1);
	if (k == NULL)
		return doc_nomem(b);
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



static int
finish_seq(struct builder *b, struct frame *f)
{
	struct doc_node *s = f->node;
	const struct link *k;
	size_t i;

	s->items = ARENA_NEW(b->a, struct doc_node *, f->n);
	if (f->n > 0 && s->items == NULL)
		return doc_nomem(b);
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
	return doc_fail_at(b, ERR_PARSE, at, "unsupported tag '%s'",
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
		return doc_fail_at(b, ERR_LIMIT, at,
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
		return doc_nomem(b);
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

	rv = n->kind == DOC_MAP ? doc_finish_map(b, f) : finish_seq(b, f);
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
		return doc_fail_at(b, ERR_LIMIT, at,
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
		return doc_fail_at(b, ERR_PARSE, at,
		    "unsupported tag '%s' (preflight reads what "
		    "yaml.safe_load reads: !!str, !!int, !!float, !!bool, "
		    "!!null, !!map, !!seq)", tag);
	rv = scalar_construct(&sc, t, v, len, b->a);
	if (rv == ERR_NOMEM)
		return doc_nomem(b);
	if (rv != 0)
		return doc_fail_at(b, ERR_PARSE, at,
		    "'%.40s' is not a valid !!%s value", v,
		    scalar_type_name(t));
	n = ARENA_NEW(b->a, struct doc_node, 1);
	if (n == NULL)
		return doc_nomem(b);
	n->text = arena_strndup(b->a, v, len);
	if (n->text == NULL)
		return doc_nomem(b);
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
			return doc_fail_at(b, ERR_PARSE, at,
			    "more than one YAML document; a config is one "
			    "document");
		return 0;
	case YAML_ALIAS_EVENT:
		s = b->anchor_cap == 0 ? NULL : anchor_slot(b,
		    (const char *)ev->data.alias.anchor);
		if (s == NULL || s->name == NULL)
			return doc_fail_at(b, ERR_PARSE, at,
			    "unknown alias '*%s'",
			    (const char *)ev->data.alias.anchor);
		if (s->node->building)
			return doc_fail_at(b, ERR_PARSE, at,
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
	/* A UTF-8 BOM starts the stream, not its first line: PyYAML skips
	   it, libyaml (told the encoding) would read it as a character. */
	if (len >= 3 && memcmp(buf, "\xEF\xBB\xBF", 3) == 0) {
		buf += 3;
		len -= 3;
	}
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
	rv = doc_directives_check(buf, len, lim, e);
	if (rv != 0)
		return encoding_first(buf, len, e, rv);
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
			doc_stack_path(e->loc.path, sizeof(e->loc.path), &b,
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

