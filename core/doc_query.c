/*
 * core/doc_query: reading a built document: key lookups through a
 * mapping's index (or a scan of a small one), truthiness as Python has
 * it, and the small text tests rules use.  No I/O, no allocation.
 */
#include "doc_int.h"

#include <ctype.h>
#include <strings.h>

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
	uint64_t hash = doc_siphash(map->slots + mask + 1, 16 + (uint64_t)DOC_STR,
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
