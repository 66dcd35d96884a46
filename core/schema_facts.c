/*
 * core/schema_facts: what the schema check knows of Axolotl's keys, built
 * once per process from core/data (the key table, each key's annotation
 * parsed, the pydantic models linked, the removed and renamed keys), and
 * the nearest-key suggestion for a typo.  No I/O.
 */
#include "schema.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "arena.h"
#include "doc.h"
#include "schema_int.h"

#define SUGGEST_MAX_LEN 64
#define TOP_MODEL "axolotl.utils.schemas.config.AxolotlInputConfig"
#define DS_MODEL "axolotl.utils.schemas.datasets."

/*
 * Optimal string alignment distance, bounded by SUGGEST_MAX_LEN, computed
 * only in the band |i - j| <= limit + 1 (a cell outside it is more than
 * limit away); stops early (returning more than limit) once every cell of
 * a row is past it.
 */
static unsigned
distance(const char *a, const char *b, unsigned limit)
{
	unsigned d[SUGGEST_MAX_LEN + 1][SUGGEST_MAX_LEN + 1];
	size_t la = strlen(a), lb = strlen(b), i, j, lo, hi;
	size_t w = (size_t)limit + 1;
	unsigned big = limit + 2;

	if (la > SUGGEST_MAX_LEN || lb > SUGGEST_MAX_LEN)
		return 1000;
	if ((la > lb ? la - lb : lb - la) > limit)
		return big;	/* (la, lb) lies outside the band */
	for (j = 0; j <= lb; j++)
		d[0][j] = j <= w ? (unsigned)j : big;
	for (i = 1; i <= la; i++) {
		unsigned row_min = big;

		lo = i > w ? i - w : 1;
		hi = i + w < lb ? i + w : lb;
		/* The two cells just outside the band that the row reads. */
		d[i][lo - 1] = lo - 1 == 0 && i <= w ? (unsigned)i : big;
		if (hi > i - 1 + w)
			d[i - 1][hi] = big;
		for (j = lo; j <= hi; j++) {
			unsigned cost = a[i - 1] != b[j - 1];
			unsigned best = d[i - 1][j] + 1;

			if (d[i][j - 1] + 1 < best)
				best = d[i][j - 1] + 1;
			if (d[i - 1][j - 1] + cost < best)
				best = d[i - 1][j - 1] + cost;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] &&
			    a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < best)
				best = d[i - 2][j - 2] + 1;
			if (best > big)
				best = big;
			d[i][j] = best;
			if (best < row_min)
				row_min = best;
		}
		if (row_min > limit + 1)
			return limit + 2;
	}
	return d[la][lb] < big ? d[la][lb] : big;
}

/* The characters s uses, one bit each (bytes folded onto 64 bits). */
static uint64_t
letters(const char *s)
{
	uint64_t m = 0;

	for (; *s != '\0'; s++)
		m |= (uint64_t)1 << ((unsigned char)*s & 63);
	return m;
}

/* A floor under distance(): a character one string uses and the other
   never does costs an edit of its own, and a transposition adds none. */
static unsigned
letters_apart(uint64_t x, uint64_t y)
{
	unsigned only_x = (unsigned)__builtin_popcountll(x & ~y);
	unsigned only_y = (unsigned)__builtin_popcountll(y & ~x);

	return only_x > only_y ? only_x : only_y;
}

/* The kind a plain `T | None` annotation takes (pydantic accepts that
   kind or null as is), or -1 when the type needs the parser. */
static int
plain_kind(const char *type)
{
	static const struct {
		const char *type;
		enum doc_kind kind;
	} plain[] = {
		{ "bool | None", DOC_BOOL }, { "int | None", DOC_INT },
		{ "str | None", DOC_STR }, { "float | None", DOC_FLOAT },
	};
	size_t i;

	for (i = 0; i < sizeof(plain) / sizeof(plain[0]); i++)
		if (strcmp(type, plain[i].type) == 0)
			return (int)plain[i].kind;
	return -1;
}

static const struct removed removed[] = {
	{ "dataset_processes", "deprecated.dataset_processes", false, NULL,
	  "dataset_processes is deprecated; Axolotl copies it to dataset_num_proc (unless "
	  "that is set) and warns", "rename it to dataset_num_proc" },
	{ "dpo_beta", "deprecated.dpo_beta", false, NULL,
	  "dpo_beta is deprecated; Axolotl copies it to rl_beta",
	  "rename it to rl_beta" },
	{ "dpo_generate_during_eval", "deprecated.trl_options_removed", false,
	  NULL, "dpo_generate_during_eval was removed (TRL 0.29); Axolotl "
	  "refuses the config", "remove it" },
	{ "dpo_norm_loss", "deprecated.trl_options_removed", false, NULL,
	  "dpo_norm_loss was removed (TRL 0.29); Axolotl refuses the config",
	  "remove it" },
	{ "dpo_use_logits_to_keep", "deprecated.trl_options_removed", false,
	  NULL, "dpo_use_logits_to_keep was removed (TRL 0.29); Axolotl "
	  "refuses the config", "remove it" },
	{ "eval_max_new_tokens", "deprecated.eval_generation_options", false,
	  NULL, "eval_max_new_tokens is deprecated; generation_max_new_tokens "
	  "replaces it", "use generate_samples and generation_max_new_tokens" },
	{ "eval_table_size", "deprecated.eval_generation_options", false, NULL,
	  "eval_table_size is deprecated; generate_samples replaces the "
	  "prediction table", "use generate_samples and num_generation_samples" },
	{ "evaluation_strategy", "deprecated.evaluation_strategy", false,
	  "eval_strategy", "evaluation_strategy is deprecated; Axolotl copies it to "
	  "eval_strategy and warns", "rename it to eval_strategy" },
	{ "flash_attn_d512", "deprecated.flash_attn_d512_alias", true,
	  "large_head_attention", "flash_attn_d512 is an old alias; Axolotl treats it as "
	  "large_head_attention: auto", "set large_head_attention: auto" },
	{ "flash_attn_rms_norm", "attn.s2_removed", true, NULL,
	  "flash_attn_rms_norm was removed from Axolotl; it refuses the config",
	  "remove it" },
	{ "gc_steps", "deprecated.gc_steps", false, NULL,
	  "gc_steps is deprecated; Axolotl maps it to torch_empty_cache_steps and "
	  "gc_collect_steps (or ignores it when those are set)",
	  "set torch_empty_cache_steps and gc_collect_steps instead" },
	{ "gemma4_fp8_nonexpert", "deprecated.gemma4_nonexpert_flags", true,
	  NULL, "gemma4_fp8_nonexpert is deprecated", "set nonexpert_quantization: "
	  "fp8_blockwise" },
	{ "gemma4_nf4_nonexpert", "deprecated.gemma4_nonexpert_flags", true,
	  NULL, "gemma4_nf4_nonexpert is deprecated", "set nonexpert_quantization: nf4" },
	{ "max_packed_sequence_len", "packing.max_packed_sequence_len_removed",
	  true, NULL, "max_packed_sequence_len was removed from Axolotl; it refuses the config",
	  "set sample_packing: true and sequence_len to this value" },
	{ "rope_scaling", "deprecated.rope_scaling_toplevel", true, NULL,
	  "a top-level rope_scaling is refused by Axolotl; it belongs in the model "
	  "config overrides", "move it under model_config: (or "
	  "overrides_of_model_config:)" },
	{ "rpo_alpha", "deprecated.trl_options_removed", false, NULL,
	  "rpo_alpha was removed (TRL 0.29 needs several loss types, which "
	  "Axolotl does not pass yet); Axolotl refuses the config",
	  "remove it" },
	{ "s2_attention", "attn.s2_removed", true, NULL,
	  "s2_attention was removed from Axolotl; it refuses the config",
	  "remove it and pick a supported attention backend" },
	{ "unsloth_cross_entropy_loss", "deprecated.unsloth_flags_removed",
	  true, NULL, "unsloth_cross_entropy_loss was removed from Axolotl; it refuses the config",
	  "use cut_cross_entropy or the Liger plugin instead" },
	{ "unsloth_lora_mlp", "deprecated.unsloth_flags_removed", true, NULL,
	  "unsloth_lora_mlp was removed from Axolotl; it refuses the config",
	  "set lora_mlp_kernel: true" },
	{ "unsloth_lora_o", "deprecated.unsloth_flags_removed", true, NULL,
	  "unsloth_lora_o was removed from Axolotl; it refuses the config",
	  "set lora_o_kernel: true" },
	{ "unsloth_lora_qkv", "deprecated.unsloth_flags_removed", true, NULL,
	  "unsloth_lora_qkv was removed from Axolotl; it refuses the config",
	  "set lora_qkv_kernel: true" },
	{ "unsloth_rms_norm", "deprecated.unsloth_flags_removed", true, NULL,
	  "unsloth_rms_norm was removed from Axolotl; it refuses the config",
	  "remove it" },
	{ "unsloth_rope", "deprecated.unsloth_flags_removed", true, NULL,
	  "unsloth_rope was removed from Axolotl; it refuses the config",
	  "remove it" },
};

static const void *_Atomic key_facts_kept;

/* The slot for name: its own, or the empty one it would take. */
static struct key_slot *
slot_for(const struct key_facts *f, const char *name)
{
	uint64_t hash = doc_hash_bytes_rt(name, strlen(name), DOC_HASH_SEED);
	size_t h = (size_t)hash & f->mask;

	for (; f->slots[h].name != NULL; h = (h + 1) & f->mask)
		if (f->slots[h].hash == hash &&
		    strcmp(f->slots[h].name, name) == 0)
			break;
	f->slots[h].hash = hash;
	return &f->slots[h];
}

/* First come wins: names go in before aliases (a key's own name beats
   another key's alias). */
static void
slot_add(struct key_facts *f, const char *name, const struct key_def *k,
    bool exact)
{
	struct key_slot *s = slot_for(f, name);

	if (s->name != NULL)
		return;
	s->name = name;
	s->k = k;
	s->exact = exact;
}

/* The schema_models index of name[0..len), or -1. */
static long
model_index(const char *name, size_t len)
{
	size_t lo = 0, hi = schema_models_len;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strncmp(name, schema_models[mid].name, len);

		if (c == 0 && schema_models[mid].name[len] != '\0')
			c = -1;
		if (c == 0)
			return (long)mid;
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return -1;
}

/* ty_link()'s lookups over the facts being built. */
static const struct ty_model *
link_model(const char *name, size_t len, const void *arg)
{
	const struct key_facts *f = arg;
	long i = model_index(name, len);

	return i >= 0 ? &f->models[i] : NULL;
}

static const char *
link_enum(const char *name, size_t len, const void *arg)
{
	size_t i;

	(void)arg;
	for (i = 0; i < schema_enums_len; i++)
		if (strncmp(schema_enums[i].name, name, len) == 0 &&
		    schema_enums[i].name[len] == '\0')
			return schema_enums[i].values;
	return NULL;
}

/* The model a plugin module adds to the top level, or NULL. */
static const struct ty_model *
plugin_model(const struct key_facts *f, const char *module)
{
	size_t i;

	for (i = 0; i < schema_plugins_len; i++)
		if (strcmp(schema_plugins[i].module, module) == 0)
			return link_model(schema_plugins[i].model,
			    strlen(schema_plugins[i].model), f);
	return NULL;
}

/* The field of model m named key, or NULL. */
static const struct ty_field *
model_field(const struct ty_model *m, const char *key)
{
	size_t i;

	for (i = 0; m != NULL && i < m->nfields; i++)
		if (strcmp(m->fields[i].field, key) == 0)
			return &m->fields[i];
	return NULL;
}

/*
 * The models of core/data/axolotl-models.tsv with their fields parsed
 * and linked, into f->models; false without memory.  A field whose
 * annotation the parser does not know takes anything.
 */
static bool
models_build(struct key_facts *f, struct arena *a)
{
	size_t i, k = 0;

	f->models = ARENA_NEW(a, struct ty_model, schema_models_len + 1);
	if (f->models == NULL)
		return false;
	for (i = 0; i < schema_models_len; i++) {
		struct ty_model *m = &f->models[i];
		size_t first;

		m->name = schema_models[i].name;
		m->forbid = strcmp(schema_models[i].extra, "forbid") == 0;
		while (k < schema_fields_len &&
		    strcmp(schema_fields[k].model, m->name) < 0)
			k++;
		first = k;
		while (k < schema_fields_len &&
		    strcmp(schema_fields[k].model, m->name) == 0)
			k++;
		m->nfields = k - first;
		m->fields = ARENA_NEW(a, struct ty_field, m->nfields + 1);
		if (m->fields == NULL)
			return false;
		for (size_t j = 0; j < m->nfields; j++) {
			const struct schema_field *sf = &schema_fields[first + j];
			struct ty_field *tf = &m->fields[j];

			tf->field = sf->field;
			tf->names = sf->names;
			tf->required = sf->required;
			tf->type = ty_parse(sf->type, a);
			tf->bounds = ty_bounds_parse(sf->bounds, a);
		}
	}
	for (i = 0; i < schema_models_len; i++) {
		for (k = 0; k < f->models[i].nfields; k++)
			ty_link(f->models[i].fields[k].type, link_model,
			    link_enum, f);
		if (!ty_model_index(&f->models[i], a))
			return false;
	}
	return true;
}

/* arena_once()'s build for schema_facts(). */
static const void *
facts_build(struct arena *a, const void *arg)
{
	struct key_facts *f = ARENA_NEW(a, struct key_facts, 1);
	size_t cap, i;

	(void)arg;
	for (cap = 16; cap < 4 * keys_table_len + 64; cap *= 2)
		;
	if (f == NULL)
		return NULL;
	f->slots = ARENA_NEW(a, struct key_slot, cap);
	f->types = ARENA_NEW(a, const struct ty *, keys_table_len + 1);
	f->bounds = ARENA_NEW(a, const struct ty_bounds *, keys_table_len + 1);
	f->nested_only = ARENA_NEW(a, bool, keys_table_len + 1);
	f->lens = ARENA_NEW(a, size_t, keys_table_len + 1);
	f->letters = ARENA_NEW(a, uint64_t, keys_table_len + 1);
	f->plain = ARENA_NEW(a, signed char, keys_table_len + 1);
	if (f->slots == NULL || f->types == NULL || f->lens == NULL ||
	    f->letters == NULL || f->plain == NULL || f->bounds == NULL ||
	    f->nested_only == NULL || !models_build(f, a))
		return NULL;
	f->mask = cap - 1;
	for (i = 0; i < keys_table_len; i++)
		slot_add(f, keys_table[i].key, &keys_table[i], true);
	for (i = 0; i < keys_table_len; i++)
		if (keys_table[i].alias != NULL)
			slot_add(f, keys_table[i].alias, &keys_table[i], false);
	for (i = 0; i < sizeof(removed) / sizeof(removed[0]); i++) {
		struct key_slot *s = slot_for(f, removed[i].key);

		if (s->name == NULL)
			s->name = removed[i].key;
		if (s->rm == NULL)
			s->rm = &removed[i];
	}
	for (i = 0; i < keys_table_len; i++) {
		const struct key_def *k = &keys_table[i];
		const struct ty_model *owner = k->plugin != NULL ?
		    plugin_model(f, k->plugin) : link_model(TOP_MODEL,
		    strlen(TOP_MODEL), f);
		const struct ty_field *tf = model_field(owner, k->key);
		struct ty *t = ty_parse(k->type, a);

		ty_link(t, link_model, link_enum, f);
		f->types[i] = t;
		f->bounds[i] = tf != NULL ? tf->bounds : NULL;
		/* The reference table lists some plugins' nested settings
		   (hatchery:, mora:, diffusion:) as top-level keys. */
		f->nested_only[i] = k->plugin != NULL && owner != NULL &&
		    tf == NULL;
		f->lens[i] = strlen(keys_table[i].key);
		f->letters[i] = letters(keys_table[i].key);
		f->plain[i] = (signed char)plain_kind(keys_table[i].type);
	}
	f->required = ARENA_NEW(a, const struct key_def *, keys_table_len + 1);
	f->pmodels = ARENA_NEW(a, const struct ty_model *,
	    schema_plugins_len + 1);
	if (f->required == NULL || f->pmodels == NULL)
		return NULL;
	for (i = 0; i < keys_table_len; i++)
		if (keys_table[i].def != NULL &&
		    strcmp(keys_table[i].def, "(required)") == 0)
			f->required[f->nrequired++] = &keys_table[i];
	for (i = 0; i < schema_plugins_len; i++) {
		const struct ty_model *m = plugin_model(f,
		    schema_plugins[i].module);
		size_t k;

		for (k = 0; m != NULL && k < m->nfields; k++)
			if (m->fields[k].required)
				f->pmodels[i] = m;
	}
	f->r_bnb = rules_find("optim.fsdp2_bnb_8bit");
	f->r_datasets = rules_find("schema.datasets_required");
	f->r_required = rules_find("schema.required");
	f->r_loadable = rules_find("schema.plugin_not_loadable");
	f->r_unknown = rules_find("schema.unknown_key_dropped");
	f->r_type = rules_find("schema.type");
	f->r_plugin_key = rules_find("schema.plugin_key_without_plugin");
	if (f->r_bnb == NULL || f->r_datasets == NULL || f->r_required == NULL ||
	    f->r_loadable == NULL || f->r_unknown == NULL || f->r_type == NULL ||
	    f->r_plugin_key == NULL)
		return NULL;
	f->pclass = ARENA_NEW(a, struct plugin_class, keys_table_len + 1);
	if (f->pclass == NULL)
		return NULL;
	for (i = 0; i < keys_table_len; i++) {
		const struct key_def *kd = &keys_table[i];
		size_t k;

		if (kd->plugin == NULL || kd->plugin_class == NULL ||
		    strrchr(kd->plugin_class, '.') == NULL)
			continue;
		for (k = 0; k < f->npclass; k++)
			if (strcmp(f->pclass[k].module, kd->plugin) == 0)
				break;
		if (k < f->npclass)
			continue;	/* the first row of a module counts */
		f->pclass[f->npclass].module = kd->plugin;
		f->pclass[f->npclass].len = strlen(kd->plugin);
		f->pclass[f->npclass++].cls = strrchr(kd->plugin_class, '.') + 1;
	}
	f->datasets = keys_find("datasets");
	f->fsdp_config = keys_find("fsdp_config");
	f->bf16 = keys_find("bf16");
	f->ep = keys_find("expert_parallel_size");
	f->sft = link_model(DS_MODEL "SFTDataset", strlen(DS_MODEL
	    "SFTDataset"), f);
	f->dpo = link_model(DS_MODEL "DPODataset", strlen(DS_MODEL
	    "DPODataset"), f);
	f->kto = link_model(DS_MODEL "KTODataset", strlen(DS_MODEL
	    "KTODataset"), f);
	f->synthetic = link_model(DS_MODEL "SyntheticDataset", strlen(DS_MODEL
	    "SyntheticDataset"), f);
	return f;
}

const struct key_facts *
schema_facts(void)
{
	return arena_once(&key_facts_kept, (size_t)4 << 20, facts_build, NULL);
}

const char *
schema_suggest(const char *key)
{
	const struct key_facts *f = schema_facts();
	size_t i, len = strlen(key);
	unsigned best = 1000, limit;
	const char *hit = NULL;
	uint64_t mine = letters(key);

	if (f == NULL)
		return NULL;	/* no memory for the key facts: no hint */
	/* Short keys tolerate one edit, longer ones two, very long three. */
	limit = len < 6 ? 1 : len < 16 ? 2 : 3;
	for (i = 0; i < keys_table_len; i++) {
		const char *k = keys_table[i].key;
		size_t kl = f->lens[i];
		unsigned dd;

		/* A long key with a few letters added: sequence_length. */
		if (kl >= 8 && len > kl && len - kl <= 4 &&
		    strncmp(key, k, kl) == 0)
			dd = limit;
		else if ((kl > len ? kl - len : len - kl) > limit)
			continue;	/* the distance is at least that */
		else if (letters_apart(mine, f->letters[i]) > limit)
			continue;	/* so is it */
		else
			dd = distance(key, k, limit);

		if (dd < best) {
			best = dd;
			hit = keys_table[i].key;
		}
	}
	return best <= limit ? hit : NULL;
}

const struct key_slot *
schema_slot(const struct key_facts *f, const char *key)
{
	uint64_t hash = doc_hash_bytes_rt(key, strlen(key), DOC_HASH_SEED);
	size_t h;

	for (h = (size_t)hash & f->mask; f->slots[h].name != NULL;
	    h = (h + 1) & f->mask)
		if (f->slots[h].hash == hash &&
		    strcmp(f->slots[h].name, key) == 0)
			return &f->slots[h];
	return NULL;
}
