/*
 * core/doc_map: a mapping as PyYAML's constructor makes it (a Python
 * dict): keys hashed and compared as Python does (1 == 1.0 == True),
 * merge keys flattened in flatten_mapping's order, duplicates kept at the
 * first position with the last value and noted, and an open-addressing
 * index that falls back to a SipHash key when keys were crafted to
 * collide.  No I/O, all memory from the builder's arena.
 */
#include "doc_int.h"

#include "arena.h"

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
uint64_t
doc_siphash(const uint64_t key[2], uint64_t tag, const char *s, size_t n)
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
	return doc_siphash(key, tag, w, 8);
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
		return doc_siphash(key, 1, "", 0);
	case DOC_BOOL:
		return sip_u64(key, 3, k->b ? 1 : 0);
	case DOC_INT:
		if (k->big)
			return doc_siphash(key, 2, k->text, k->len);
		return sip_u64(key, 3, (uint64_t)k->i);
	case DOC_FLOAT:
		f = k->f;
		if (f == f && f >= -9.2e18 && f <= 9.2e18 &&
		    (double)(long long)f == f)
			return sip_u64(key, 3, (uint64_t)(long long)f);
		return doc_siphash(key, 4, (const char *)&f, sizeof(f));
	default:
		return doc_siphash(key, 16 + (uint64_t)k->kind, k->text, k->len);
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
			return doc_nomem(b);
		(*srcs)[0] = v;
		*nsrcs = 1;
		return 0;
	}
	if (v->kind != DOC_SEQ)
		return doc_fail_at(b, ERR_PARSE, at,
		    "a merge key '<<' needs a mapping or a list of mappings, "
		    "got a %s", doc_kind_name(v->kind));
	*srcs = ARENA_NEW(b->a, const struct doc_node *, v->n);
	if (v->n > 0 && *srcs == NULL)
		return doc_nomem(b);
	/* Later mappings in the list lose to earlier ones: reverse. */
	for (i = 0; i < v->n; i++) {
		const struct doc_node *m = v->items[v->n - 1 - i];

		if (m->kind != DOC_MAP)
			return doc_fail_at(b, ERR_PARSE, at,
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
		return doc_nomem(b);
	doc_stack_path(path, sizeof(path), b, b->depth, kept->key->text);
	d->key = kept->key->text;
	d->path = arena_strndup(b->a, path, strlen(path));
	if (d->path == NULL)
		return doc_nomem(b);
	d->loc = kept->key_loc;
	d->first_line = first;
	if (b->dup_tail == NULL)
		b->doc->dups = d;
	else
		b->dup_tail->next = d;
	b->dup_tail = d;
	return 0;
}

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
int
doc_finish_map(struct builder *b, struct frame *f)
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
		return doc_nomem(b);
	for (i = 0, k = f->head; i < npairs; i++, k = k->next->next) {
		raw[i].key = k->node;
		raw[i].key_loc = k->loc;
		raw[i].value = k->next->node;
		raw[i].value_loc = k->next->loc;
	}
	/* Count what the merges bring in; the node budget bounds it. */
	for (i = 0; i < npairs; i++) {
		const struct doc_node *v = raw[i].value;

		if (!doc_is_plain(raw[i].key, "<<")) {
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
		return doc_nomem(b);
	for (i = 0; i < npairs; i++) {
		const struct doc_node **srcs = NULL;
		size_t nsrcs = 0, s;

		if (!doc_is_plain(raw[i].key, "<<"))
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
		if (!doc_is_plain(raw[i].key, "<<"))
			all[out++] = raw[i];
dedup:
	if (out > b->lim->max_map_keys)
		return doc_fail_at(b, ERR_LIMIT, m->loc, "mapping has %zu keys with "
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
		return doc_nomem(b);
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

