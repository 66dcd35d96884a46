/*
 * core/doc_int: what the document's files share, not for callers.
 * doc.c builds the tree from libyaml's events; doc_map.c hashes keys and
 * lays out mappings (merge keys, duplicates, the index); doc_query.c
 * reads the tree (lookups, truthiness); doc_directives.c bounds the YAML
 * directives before libyaml parses them.
 */
#ifndef CORE_DOC_INT_H
#define CORE_DOC_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "doc.h"
#include "err.h"

struct arena;

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

/* Record an error at a document position (doc.c); the code. */
int doc_fail_at(struct builder *b, enum err_code code, struct doc_loc at,
    const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* ERR_NOMEM for the arena spent while building. */
int doc_nomem(struct builder *b);

/* The dotted path of the open collections down to depth d, then key. */
void doc_stack_path(char *out, size_t cap, const struct builder *b,
    unsigned d, const char *key);

/* SipHash-1-3 of tag and s[0..n) under key (doc_map.c): the keyed
   indexes and the anchor table. */
uint64_t doc_siphash(const uint64_t key[2], uint64_t tag, const char *s,
    size_t n);

/* 0 when buf[0..len) holds at most lim->max_directives %YAML and %TAG
   directives (or does not scan: the parse reports that), else ERR_LIMIT
   at the first one past it (doc_directives.c).  Linear. */
int doc_directives_check(const char *buf, size_t len,
    const struct limits *lim, struct err *e);

/* Close the mapping of frame f: merges, duplicates, its index
   (doc_map.c).  0, ERR_NOMEM, ERR_PARSE or ERR_LIMIT. */
int doc_finish_map(struct builder *b, struct frame *f);

/* Is n the plain, untagged scalar s? (<< and = are special that way.) */
static inline bool
doc_is_plain(const struct doc_node *n, const char *s)
{
	return n->plain && n->text != NULL && n->text[0] == s[0] &&
	    strcmp(n->text, s) == 0;
}

/*
 * A mapping's index slot: the pair's index + 1 in the low 32 bits (0:
 * empty), the high 32 bits of its key's hash above, so that a probe past
 * another key compares two numbers and follows no pointer.
 */
static inline uint64_t
slot_of(size_t i, uint64_t hash)
{
	return (uint64_t)(i + 1) | (hash & 0xffffffff00000000ULL);
}

static inline size_t
slot_pair(uint64_t slot)
{
	return (size_t)(slot & 0xffffffffu) - 1;
}

static inline uint64_t
slot_tag(uint64_t hash_or_slot)
{
	return hash_or_slot >> 32;
}

/* Probes past the first slot that an index of n keys may take before
   its keys are taken for crafted collisions: about 1.2 n by chance at a
   quarter full, so this is never reached by accident. */
#define INDEX_PROBES(n) (8 * (n) + 64)

#endif /* CORE_DOC_INT_H */
