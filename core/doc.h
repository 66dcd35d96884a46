/*
 * core/doc: YAML bytes -> a document tree with source locations.
 *
 * The tree is what PyYAML's yaml.safe_load would build, because that is how
 * Axolotl reads a config: YAML 1.1 scalar typing (core/scalar.h), anchors
 * and aliases resolved to the anchored node, merge keys flattened, and the
 * last of duplicate keys kept.  Unlike PyYAML, every node and every mapping
 * entry keeps the 1-based line and column it was written at, duplicate keys
 * are reported, and hostile input (depth, size, alias bombs, encodings) is
 * refused promptly with ERR_LIMIT or ERR_PARSE and a location.
 *
 * All memory comes from the caller's arena; nothing here calls free on
 * document data.  Only this module sees libyaml.
 */
#ifndef CORE_DOC_H
#define CORE_DOC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "err.h"

struct arena;

/* Limits on one document; see limits_default(). */
struct limits {
	size_t max_bytes;	/* input size in bytes */
	unsigned max_depth;	/* collections nested inside each other */
	size_t max_nodes;	/* nodes, counting every alias expansion */
	size_t max_scalar;	/* bytes in one scalar */
	size_t max_key;		/* bytes in one mapping key */
	size_t max_map_keys;	/* keys in one mapping, merges included */
	size_t max_directives;	/* %YAML and %TAG directives in the text */
	uint64_t hash_key[2];	/* secret key of the keyed index hash (a
				   per-process random value from the
				   caller; core draws no randomness) */
};

/* The CLI defaults: 8 MiB, depth 64, 100,000 nodes, 1 MiB, 1 KiB,
   10,000 keys per mapping, 64 directives; hash_key the process's (see
   below). */
void limits_default(struct limits *l);

/*
 * The process's secret index key, copied into every limits_default():
 * main sets it once from the OS's random source before any thread
 * starts (core draws no randomness itself).  Zero until set.
 */
void limits_set_hash_key(const uint64_t key[2]);

enum doc_kind {
	DOC_NULL = 0,
	DOC_BOOL,
	DOC_INT,
	DOC_FLOAT,
	DOC_STR,
	DOC_TIMESTAMP,		/* PyYAML makes a date; text holds it */
	DOC_SEQ,
	DOC_MAP
};

struct doc_loc {
	unsigned line;		/* 1-based */
	unsigned col;		/* 1-based, in characters */
};

struct doc_pair;

struct doc_node {
	enum doc_kind kind;	/* what PyYAML would construct */
	bool plain;		/* scalar written plain (not quoted/block) */
	bool b;			/* DOC_BOOL */
	bool big;		/* DOC_INT does not fit in 64 bits */
	bool building;		/* still being parsed (recursive alias) */
	struct doc_loc loc;	/* where the node starts (the anchor's
				   position for a node reached by alias) */
	const char *text;	/* scalars: the text as written after YAML
				   unescaping, NUL-terminated; else NULL */
	size_t len;		/* bytes in text (text may hold NULs) */
	long long i;		/* DOC_INT; saturated when big */
	double f;		/* DOC_FLOAT */
	size_t n;		/* DOC_SEQ items or DOC_MAP pairs */
	struct doc_node **items;	/* DOC_SEQ: n items */
	struct doc_pair *pairs;		/* DOC_MAP: n pairs, dict order */
	const uint64_t *slots;	/* DOC_MAP: open-addressing index of pairs
				   by key (doc.c's slot_of: index + 1 and
				   a hash tag; 0 empty), slot_mask + 1
				   entries; NULL: lookups scan */
	size_t slot_mask;	/* with DOC_SLOTS_KEYED set: the index is
				   hashed with the keyed hash, whose key
				   follows the slots (see doc.c) */
	size_t weight;		/* nodes below and including this one,
				   counting alias expansions */
};	/* flags first: 96 bytes, no padding holes */

struct doc_pair {
	struct doc_node *key;	/* a scalar */
	struct doc_node *value;
	struct doc_loc key_loc;	/* where this key was written */
	struct doc_loc value_loc;	/* where this value (or its alias)
					   was written */
	bool merged;		/* came in through a << merge key */
};

/* A key written twice in one mapping (PyYAML keeps the last). */
struct doc_dup {
	const char *key;	/* the key's text */
	const char *path;	/* dotted path of the key, e.g. "fsdp_config.x" */
	struct doc_loc loc;	/* the second (kept) occurrence */
	unsigned first_line;	/* the first occurrence */
	struct doc_dup *next;	/* next in document order */
};

struct doc {
	struct doc_node *root;	/* always a DOC_MAP */
	struct doc_dup *dups;	/* duplicate keys, document order */
	size_t nodes;		/* nodes counted against max_nodes */
};

/*
 * Parse buf[0..len) into *out.  Everything is allocated from a, and lives
 * as long as a.  Errors (with e->loc set to the 1-based position):
 *   ERR_LIMIT   a limit in lim was exceeded (the message names it)
 *   ERR_PARSE   not YAML, not UTF-8, NUL byte, control character, no or
 *               several documents, root not a mapping, unknown or
 *               recursive alias, unsupported tag, invalid tagged value
 *   ERR_NOMEM   the arena budget is spent
 * On failure *out is NULL.
 */
int doc_parse(struct doc **out, const char *buf, size_t len,
    const struct limits *lim, struct arena *a, struct err *e);

/*
 * The document of a constant text (an embedded DeepSpeed preset, a
 * suggestion's lines), parsed on first use under limits_default() and
 * then shared, read-only, by every check in the process; *slot keeps it
 * (start it NULL).  Safe from any thread: first uses that race both
 * parse, one result is kept and the other freed.  NULL when text does not
 * parse or memory is short; the caller then parses its own copy.
 */
const struct doc *doc_parse_shared(const void *_Atomic *slot,
    const char *text);

/* Python's truth value of v, which is what `if cfg.key:` in Axolotl
   sees; NULL (a missing key) is false. */
bool doc_truthy(const struct doc_node *v);

/* Whether text (NULL: no) contains needle, ignoring ASCII case. */
bool doc_text_has_ci(const char *text, const char *needle);

/* Whether seq is a list with a string item containing needle. */
bool doc_seq_has(const struct doc_node *seq, const char *needle);

/*
 * The hash of the mapping indexes: eight bytes a step, then the tail
 * (overlapping loads, no copy loop), mixed so the low bits (what a table
 * masks) depend on every byte.  Inline, so that a literal key's hash is
 * computed by the compiler (see doc_map_get).
 */
#define DOC_HASH_SEED 0xcbf29ce484222325ULL

static inline uint64_t
doc_hash_bytes(const char *s, size_t n, uint64_t h)
{
	uint64_t w = 0;
	uint32_t lo, hi;

	h ^= (uint64_t)n;
#pragma GCC unroll 8
	for (; n >= 8; s += 8, n -= 8) {
		memcpy(&w, s, 8);
		h = (h ^ w) * 0x9e3779b97f4a7c15ULL;
		h ^= h >> 29;
	}
	if (n >= 4) {
		memcpy(&lo, s, 4);
		memcpy(&hi, s + n - 4, 4);
		w = (uint64_t)lo | (uint64_t)hi << 32;
	} else if (n > 0) {
		w = (uint64_t)(unsigned char)s[0] |
		    (uint64_t)(unsigned char)s[n / 2] << 8 |
		    (uint64_t)(unsigned char)s[n - 1] << 16;
	} else {
		w = 0;
	}
	h = (h ^ w) * 0x9e3779b97f4a7c15ULL;
	return h ^ (h >> 32);
}

/*
 * Set in slot_mask when a mapping's index uses the keyed hash: a mapping
 * whose keys collided under doc_hash_bytes far past chance (keys crafted
 * against this public function) is indexed again with SipHash under the
 * caller's secret limits.hash_key, so no input makes indexing or lookup
 * quadratic, while ordinary configs keep hashes folded at compile time.
 */
#define DOC_SLOTS_KEYED ((size_t)1 << (sizeof(size_t) * 8 - 1))

/* The same, out of line (for keys that are not literals). */
uint64_t doc_hash_bytes_rt(const char *s, size_t n, uint64_t h);

/* The pair whose string key is key[0..n) (hash: doc_hash_bytes(key, n,
   DOC_HASH_SEED ^ DOC_STR)) in map, or NULL.  Borrowed.  Through the
   map's index when it has one, else a scan. */
const struct doc_pair *doc_map_find(const struct doc_node *map,
    const char *key, size_t n, uint64_t hash);

/* The pair whose key is the string key in map, or NULL.  Borrowed.  A
   literal key's length and hash fold to constants here. */
static inline const struct doc_pair *
doc_map_get(const struct doc_node *map, const char *key)
{
	size_t n = strlen(key);
	uint64_t seed = DOC_HASH_SEED ^ (uint64_t)DOC_STR;

	return doc_map_find(map, key, n, __builtin_constant_p(n) && n <= 64 ?
	    doc_hash_bytes(key, n, seed) : doc_hash_bytes_rt(key, n, seed));
}

/* The value of key in map (NULL when absent or map is not a mapping). */
static inline const struct doc_node *
doc_map_value(const struct doc_node *map, const char *key)
{
	const struct doc_pair *p = doc_map_get(map, key);

	return p != NULL ? p->value : NULL;
}

/* Give m (a mapping whose pairs were laid out by hand, e.g. a merge of
   two) an index, the first of equal keys winning as in a scan.  Without
   memory for it m keeps scanning; lookups answer the same either way. */
void doc_map_index(struct doc_node *m, struct arena *a);

/* "null", "bool", "int", "float", "str", "timestamp", "list", "dict". */
const char *doc_kind_name(enum doc_kind k);

#endif /* CORE_DOC_H */
