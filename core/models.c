/*
 * core/models: lookups in the generated model table.  Pure.
 */
#include "models.h"

#include <ctype.h>
#include <stdint.h>
#include <strings.h>

#include "arena.h"
#include "err.h"

/*
 * The table's ids by hash of their lowercase bytes, built once per process
 * (arena_once): a lookup reads one slot instead of the first bytes of
 * every row.
 */
struct model_slot {
	uint64_t hash;
	const struct model_def *m;	/* NULL: empty */
};

struct model_index {
	struct model_slot *slots;
	size_t mask;
};

static const void *_Atomic model_index_kept;

/* FNV-1a of id lowercased (any length; once per lookup). */
static uint64_t
lower_hash(const char *id)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (; *id != '\0'; id++) {
		h ^= (unsigned char)tolower((unsigned char)*id);
		h *= 0x100000001b3ULL;
	}
	return h;
}

/* arena_once()'s build for model_index(). */
static const void *
index_build(struct arena *a, const void *arg)
{
	struct model_index *x = ARENA_NEW(a, struct model_index, 1);
	size_t cap, i, h;
	uint64_t hash;

	(void)arg;
	for (cap = 16; cap < 2 * models_table_len; cap *= 2)
		;
	if (x == NULL || (x->slots = ARENA_NEW(a, struct model_slot,
	    cap)) == NULL)
		return NULL;
	x->mask = cap - 1;
	for (i = 0; i < models_table_len; i++) {
		hash = lower_hash(models_table[i].hf_id);
		/* The first of equal ids wins, as in a scan. */
		for (h = (size_t)hash & x->mask; x->slots[h].m != NULL &&
		    strcasecmp(x->slots[h].m->hf_id, models_table[i].hf_id) != 0;
		    h = (h + 1) & x->mask)
			;
		if (x->slots[h].m == NULL) {
			x->slots[h].hash = hash;
			x->slots[h].m = &models_table[i];
		}
	}
	return x;
}

static const struct model_index *
model_index(void)
{
	return arena_once(&model_index_kept, (size_t)1 << 20, index_build,
	    NULL);
}

const struct model_def *
models_find(const char *id)
{
	const struct model_index *x;
	uint64_t hash;
	size_t i, h;

	if (id == NULL)
		return NULL;
	x = model_index();
	if (x != NULL) {
		hash = lower_hash(id);
		for (h = (size_t)hash & x->mask; x->slots[h].m != NULL;
		    h = (h + 1) & x->mask)
			if (x->slots[h].hash == hash &&
			    strcasecmp(x->slots[h].m->hf_id, id) == 0)
				return x->slots[h].m;
		return NULL;
	}
	for (i = 0; i < models_table_len; i++)
		if (strcasecmp(models_table[i].hf_id, id) == 0)
			return &models_table[i];
	return NULL;
}

int
models_init(struct err *e)
{
	if (model_index() == NULL)
		return err_set(e, ERR_NOMEM, NULL, "no memory for the model "
		    "index");
	return 0;
}
