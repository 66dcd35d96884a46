/*
 * core/config: top-level keys against Axolotl's schema.  No I/O.
 *
 * Axolotl's config model has pydantic's default extra="ignore": a key it
 * does not know is dropped without a word, so a typo silently turns a
 * feature off.  Plugin keys exist only when their plugin is listed.  A
 * value of the wrong type is a validation error before anything runs.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "arena.h"
#include "doc.h"
#include "keys.h"
#include "report.h"
#include "rules.h"
#include "types.h"

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

/* Whether v is accepted by a plain type of kind (plain_kind()). */
static bool
plainly_accepted(int kind, const struct doc_node *v)
{
	return kind >= 0 && (v->kind == DOC_NULL ||
	    ((int)v->kind == kind && !v->big));
}

/*
 * Removed and renamed keys (rules.md section 5.22).  `truthy`: the rule
 * needs a truthy value, else any value but null (Axolotl's validators test
 * `is not None`); `unless`: not when that key is set (the new spelling
 * wins).
 */
static const struct removed {
	const char *key;
	const char *rule;
	bool truthy;
	const char *unless;
	const char *msg;	/* the message, naming the key */
	const char *hint;
} removed[] = {
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

/*
 * What config_check asks of every key: its row (by name, else by alias)
 * and its parsed type; and config_suggest its length and letters.
 * keys_table never changes: built once per process (arena_once).
 */
struct key_slot {
	const char *name;	/* a key, an alias or a removed key; NULL:
				   empty */
	const struct key_def *k;	/* its row (NULL: removed only) */
	const struct removed *rm;	/* removed or renamed, or NULL */
	uint64_t hash;		/* of name: most probes compare only this */
	bool exact;		/* name is k's key, not its alias */
};

struct key_facts {
	struct key_slot *slots;		/* open addressing, mask + 1 */
	size_t mask;
	const struct ty **types;	/* [k - keys_table]; NULL: unparsed */
	const struct ty_bounds **bounds;	/* [k - keys_table]: Field()
						   constraints, or NULL */
	bool *nested_only;		/* [k - keys_table]: a plugin key its
					   plugin's model does not have at the
					   top level (so it is dropped) */
	size_t *lens;			/* [k - keys_table]: strlen(key) */
	uint64_t *letters;		/* [k - keys_table]: letters(key) */
	signed char *plain;		/* [k - keys_table]: plain_kind() */
	const struct key_def *bf16, *ep;	/* two rows with exceptions */
	const struct key_def *datasets, *fsdp_config;	/* checked their way */
	struct ty_model *models;	/* [schema_models]: linked fields */
	const struct ty_model *sft, *dpo, *kto, *synthetic;	/* the dataset
					   models validate_config() builds */
	const struct key_def **required;	/* keys without a default */
	size_t nrequired;
	const struct ty_model **pmodels;	/* [schema_plugins]: a plugin's
					   model when it has required fields */
	struct plugin_class {
		const char *module;	/* key_def.plugin */
		size_t len;
		const char *cls;	/* its plugin class's own name */
	} *pclass;			/* one per module, as keys_table has it */
	size_t npclass;
	/* The rows of the rules reported here (rules_find once). */
	const struct rule_def *r_bnb, *r_datasets, *r_required, *r_loadable,
	    *r_unknown, *r_type, *r_plugin_key;
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

/* arena_once()'s build for key_facts(). */
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

static const struct key_facts *
key_facts(void)
{
	return arena_once(&key_facts_kept, (size_t)4 << 20, facts_build, NULL);
}

const char *
config_suggest(const char *key)
{
	const struct key_facts *f = key_facts();
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

/* Report a removed or renamed key; 0 when its rule does not apply. */
static int
removed_key(struct report *r, const struct doc_node *root,
    const struct doc_pair *p, const struct removed *rm, struct arena *a)
{
	const struct rule_def *rd = rules_find(rm->rule);
	const struct doc_pair *u;

	if (rm->truthy ? !doc_truthy(p->value) : p->value->kind == DOC_NULL)
		return 0;
	if (rm->unless != NULL) {
		u = doc_map_get(root, rm->unless);
		if (u != NULL && u->value->kind != DOC_NULL)
			return 0;
	}
	return report_add(r, a, rd->id, rd->severity, rm->key,
	    p->key_loc.line, p->key_loc.col, rm->hint, "%s", rm->msg);
}

/* optim.fsdp2_bnb_8bit: bitsandbytes 8-bit AdamW under FSDP2. */
static int
fsdp2_bnb(struct report *r, const struct doc_node *root, struct arena *a)
{
	const struct rule_def *rd = key_facts()->r_bnb;
	const struct doc_pair *opt = doc_map_get(root, "optimizer");
	const struct doc_pair *cfg = doc_map_get(root, "fsdp_config");
	const struct doc_pair *ver = doc_map_get(root, "fsdp_version");
	const struct doc_node *v = ver != NULL ? ver->value : NULL;

	/* An after-validator: fsdp_config is an FSDPConfig, truthy even
	   when written empty. */
	if (opt == NULL || opt->value->kind != DOC_STR || cfg == NULL ||
	    cfg->value->kind == DOC_NULL)
		return 0;
	if (strcmp(opt->value->text, "adamw_8bit") != 0 &&
	    strcmp(opt->value->text, "adamw_bnb_8bit") != 0)
		return 0;
	/* The version may also be written inside fsdp_config. */
	if ((v == NULL || !doc_truthy(v)) && cfg->value->kind == DOC_MAP) {
		const struct doc_pair *nv = doc_map_get(cfg->value,
		    "fsdp_version");

		if (nv == NULL)
			nv = doc_map_get(cfg->value, "version");
		v = nv != NULL ? nv->value : NULL;
	}
	if (v == NULL || !((v->kind == DOC_INT && v->i == 2) ||
	    (v->kind == DOC_STR && strcmp(v->text, "2") == 0) ||
	    (v->kind == DOC_FLOAT && v->f == 2.0)))
		return 0;
	return report_add(r, a, rd->id, rd->severity, "optimizer",
	    opt->value_loc.line, opt->value_loc.col, rd->hint,
	    "optimizer %s (bitsandbytes) is refused under FSDP2 "
	    "(fsdp_version: 2)", opt->value->text);
}

/*
 * schema.datasets_required: Axolotl's model validator refuses a config
 * with neither datasets nor pretraining_dataset (both falsy).
 */
static int
datasets_required(struct report *r, const struct doc_node *root,
    struct arena *a)
{
	const struct rule_def *rd = key_facts()->r_datasets;
	const struct doc_pair *ds = doc_map_get(root, "datasets");
	const struct doc_pair *pt = doc_map_get(root, "pretraining_dataset");

	if ((ds != NULL && doc_truthy(ds->value)) ||
	    (pt != NULL && doc_truthy(pt->value)))
		return 0;
	if (ds != NULL)
		return report_add(r, a, rd->id, rd->severity, "datasets",
		    ds->value_loc.line, ds->value_loc.col, rd->hint,
		    "datasets is empty and there is no pretraining_dataset; "
		    "Axolotl refuses the config");
	return report_add(r, a, rd->id, rd->severity, "", root->loc.line,
	    root->loc.col, rd->hint, "neither datasets nor "
	    "pretraining_dataset is set; Axolotl refuses the config");
}

/* Is the plugin that owns k listed under plugins:? */
static bool
plugin_listed(const struct doc_node *plugins, const struct key_def *k)
{
	size_t i, n;

	if (plugins == NULL || plugins->kind != DOC_SEQ)
		return false;
	n = strlen(k->plugin);
	for (i = 0; i < plugins->n; i++) {
		const struct doc_node *p = plugins->items[i];
		const char *at;

		if (p->kind != DOC_STR)
			continue;
		if (k->plugin_class != NULL &&
		    strcmp(p->text, k->plugin_class) == 0)
			return true;
		/* ".<module>." anywhere, or "<module>." first: load_plugin
		   retries "<module>.Class" under axolotl.integrations. */
		for (at = p->text; (at = strstr(at, k->plugin)) != NULL;
		    at++)
			if ((at == p->text || at[-1] == '.') && at[n] == '.')
				return true;
	}
	return false;
}


/*
 * schema.required: a field without a default (base_model, learning_rate)
 * that the config does not write; pydantic answers "Field required".
 * Under its alias too, when it has one.
 */
static int
required_keys(struct report *r, const struct key_facts *facts,
    const struct doc_node *root, const struct doc_node *plugins,
    struct arena *a)
{
	const struct rule_def *rd = key_facts()->r_required;
	size_t i, k;
	int rv;

	/* A listed plugin's model may have required fields of its own. */
	for (i = 0; plugins != NULL && i < schema_plugins_len; i++) {
		const struct ty_model *m = facts->pmodels[i];
		struct key_def probe = { .plugin = schema_plugins[i].module };

		if (m == NULL || !plugin_listed(plugins, &probe))
			continue;
		for (k = 0; k < m->nfields; k++) {
			if (!m->fields[k].required ||
			    doc_map_get(root, m->fields[k].field) != NULL)
				continue;
			rv = report_add(r, a, rd->id, rd->severity, "",
			    root->loc.line, root->loc.col, rd->hint, "%s is "
			    "required with the %s plugin and not set; Axolotl "
			    "refuses the config", m->fields[k].field,
			    schema_plugins[i].module);
			if (rv != 0)
				return rv;
		}
	}

	for (i = 0; i < facts->nrequired; i++) {
		const struct key_def *kd = facts->required[i];

		if (doc_map_get(root, kd->key) != NULL || (kd->alias != NULL &&
		    doc_map_get(root, kd->alias) != NULL))
			continue;
		rv = report_add(r, a, rd->id, rd->severity, "", root->loc.line,
		    root->loc.col, rd->hint, "%s is required and not set; "
		    "Axolotl refuses the config", kd->key);
		if (rv != 0)
			return rv;
	}
	return 0;
}

/*
 * schema.plugin_not_loadable: Axolotl's load_plugin splits an entry at its
 * last '.' into module and class and getattr()s the class; it swallows
 * only an ImportError.  So an entry without a '.', the bare
 * axolotl.integrations package, or a known integration module with
 * another name than its plugin class fail the config (an unknown module
 * is skipped with a logged error, and is not reported here).
 */
static int
check_plugins(struct report *r, const struct doc_node *plugins,
    struct arena *a)
{
	const struct key_facts *facts = key_facts();
	const struct rule_def *rd = facts->r_loadable;
	const char *mods[64];
	size_t mlens[64], nmods = 0;
	size_t i, k;
	int rv;

	if (plugins == NULL || plugins->kind != DOC_SEQ)
		return 0;
	for (i = 0; i < plugins->n; i++) {
		const struct doc_node *v = plugins->items[i];
		const char *dot, *mod, *want = NULL;
		size_t mlen;
		bool again = false;

		if (v->kind != DOC_STR)
			continue;	/* schema.type's */
		dot = strrchr(v->text, '.');
		if (dot != NULL && (size_t)(dot - v->text) ==
		    strlen("axolotl.integrations") &&
		    strncmp(v->text, "axolotl.integrations", 20) == 0)
			dot = NULL;
		if (dot == NULL) {
			rv = report_add(r, a, rd->id, rd->severity, "plugins",
			    v->loc.line, v->loc.col, rd->hint, "plugin "
			    "'%.80s' is not module.Class; Axolotl's plugin "
			    "loader fails on it", v->text);
			if (rv != 0)
				return rv;
			continue;
		}
		mod = v->text;
		mlen = (size_t)(dot - v->text);
		if (mlen > 21 && strncmp(mod, "axolotl.integrations.", 21) == 0) {
			mod += 21;
			mlen -= 21;
		}
		for (k = 0; k < facts->npclass && want == NULL; k++)
			if (facts->pclass[k].len == mlen &&
			    strncmp(facts->pclass[k].module, mod, mlen) == 0)
				want = facts->pclass[k].cls;
		if (want == NULL)
			continue;	/* not an integration preflight knows */
		if (strcmp(dot + 1, want) != 0) {
			rv = report_add(r, a, rd->id, rd->severity, "plugins",
			    v->loc.line, v->loc.col, rd->hint, "plugin "
			    "'%.80s': the %.*s integration's plugin class is %s; "
			    "Axolotl's plugin loader fails on another name",
			    v->text, (int)mlen, mod, want);
			if (rv != 0)
				return rv;
			continue;
		}
		/* The same integration under two spellings: two plugins whose
		   args models become duplicate base classes. */
		for (k = 0; k < nmods; k++)
			if (mlens[k] == mlen && strncmp(mods[k], mod, mlen) == 0)
				again = true;
		for (k = 0; again && k < i; k++)
			if (plugins->items[k]->kind == DOC_STR &&
			    strcmp(plugins->items[k]->text, v->text) == 0)
				again = false;	/* the same string: one plugin */
		if (again) {
			rv = report_add(r, a, rd->id, rd->severity, "plugins",
			    v->loc.line, v->loc.col, rd->hint, "plugin "
			    "'%.80s' is the %.*s integration listed a second "
			    "time under another name; Axolotl fails merging its "
			    "settings twice", v->text, (int)mlen, mod);
			if (rv != 0)
				return rv;
		} else if (nmods < 64) {
			mods[nmods] = mod;
			mlens[nmods++] = mlen;
		}
	}
	return 0;
}

/* The facts' slot for a key (name, alias or removed), or NULL. */
static const struct key_slot *
facts_slot(const struct key_facts *f, const char *key)
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


static int
unknown_key(struct report *r, const struct doc_pair *p, struct arena *a)
{
	const struct rule_def *rd = key_facts()->r_unknown;
	const char *key = p->key->text;
	const char *near = config_suggest(key);
	char hint[160];

	if (near != NULL)
		snprintf(hint, sizeof(hint), "rename it to %s", near);
	else
		snprintf(hint, sizeof(hint), "%s", rd->hint);
	if (near != NULL)
		return report_add(r, a, rd->id, rd->severity, key,
		    p->key_loc.line, p->key_loc.col, hint,
		    "unknown key '%.100s' (did you mean '%s'?) - Axolotl "
		    "ignores it", key, near);
	return report_add(r, a, rd->id, rd->severity, key, p->key_loc.line,
	    p->key_loc.col, hint, "unknown key '%.100s' - Axolotl ignores it",
	    key);
}

/* schema.type at the node pydantic names (msg), or the key's value. */
static int
type_error(struct report *r, const struct doc_pair *p,
    const struct doc_node *at, const char *key, const char *want,
    const char *msg, struct arena *a)
{
	const struct rule_def *rd = key_facts()->r_type;
	char hint[200];
	unsigned line = at == p->value ? p->value_loc.line : at->loc.line;
	unsigned col = at == p->value ? p->value_loc.col : at->loc.col;

	if (want != NULL)
		snprintf(hint, sizeof(hint), "set %s to %.150s", key, want);
	else
		snprintf(hint, sizeof(hint), "%s", rd->hint);
	return report_add(r, a, rd->id, rd->severity, key, line, col, hint,
	    "%s", msg);
}

/*
 * fsdp_config as FSDPConfig sees it.  Before it, Axolotl's
 * check_fsdp_version_in_fsdp_config settles fsdp_config.fsdp_version:
 * without a truthy top-level fsdp_version, a truthy nested "version" is
 * popped and replaces it; with one, a falsy or missing nested fsdp_version
 * becomes the top-level value (checked at the top level, so left out
 * here); with neither it becomes 1.  The "version" alias is then never
 * read.  check_fsdp_config_kwargs_prefix drops the deprecated fsdp_
 * prefix of the other keys, a later key winning.  Returns m itself when
 * nothing changes; NULL without memory.
 */
static const struct doc_node *
fsdp_as_validated(const struct doc_node *m, const struct doc_node *root,
    struct arena *a)
{
	const struct doc_node *top = doc_map_value(root, "fsdp_version");
	const struct doc_node *ver = doc_map_value(m, "version");
	const struct doc_node *nested = doc_map_value(m, "fsdp_version");
	bool top_on = top != NULL && doc_truthy(top);
	bool ver_on = !top_on && ver != NULL && doc_truthy(ver);
	/* Is the nested fsdp_version the written one FSDPConfig reads? */
	bool keep = !ver_on && nested != NULL && doc_truthy(nested);
	struct doc_node *v;
	struct doc_pair *pairs;
	size_t i, n = 0, k;
	bool any = (nested != NULL && !keep) || ver != NULL;

	if (m->n == 0)
		return m;	/* falsy: the validator leaves it alone */
	for (i = 0; i < m->n && !any; i++)
		if (m->pairs[i].key->kind == DOC_STR &&
		    strncmp(m->pairs[i].key->text, "fsdp_", 5) == 0 &&
		    strcmp(m->pairs[i].key->text, "fsdp_version") != 0)
			any = true;
	if (!any)
		return m;
	v = ARENA_NEW(a, struct doc_node, 1);
	pairs = ARENA_NEW(a, struct doc_pair, m->n);
	if (v == NULL || pairs == NULL)
		return NULL;
	*v = *m;
	for (i = 0; i < m->n; i++) {
		struct doc_pair pr = m->pairs[i];
		const char *t = pr.key->text;
		const char *name = NULL;

		if (pr.key->kind == DOC_STR && strcmp(t, "fsdp_version") == 0) {
			if (!keep)
				continue;	/* replaced */
		} else if (pr.key->kind == DOC_STR && strcmp(t, "version") == 0) {
			if (!ver_on || pr.value != ver)
				continue;	/* never read */
			name = "fsdp_version";
		} else if (pr.key->kind == DOC_STR &&
		    strncmp(t, "fsdp_", 5) == 0) {
			/* key.replace("fsdp_", ""): every occurrence. */
			char *out = ARENA_NEW(a, char, pr.key->len + 1), *o = out;
			const char *q = t;

			if (out == NULL)
				return NULL;
			while (*q != '\0')
				if (strncmp(q, "fsdp_", 5) == 0)
					q += 5;
				else
					*o++ = *q++;
			*o = '\0';
			name = out;
		}
		if (name != NULL) {
			struct doc_node *key = ARENA_NEW(a, struct doc_node, 1);

			if (key == NULL)
				return NULL;
			*key = *pr.key;
			key->text = name;
			key->len = strlen(name);
			pr.key = key;
		}
		for (k = 0; k < n; k++)
			if (pairs[k].key->kind == DOC_STR &&
			    pr.key->kind == DOC_STR &&
			    strcmp(pairs[k].key->text, pr.key->text) == 0)
				break;
		pairs[k] = pr;
		if (k == n)
			n++;
	}
	v->pairs = pairs;
	v->n = n;
	doc_map_index(v, a);
	return v;
}

/* A top-level value against its key's type and Field() constraints. */
static int
check_value(struct report *r, const struct key_facts *facts,
    const struct doc_node *root, const struct key_def *k,
    const struct doc_pair *p, struct arena *a)
{
	const struct ty *t = facts->types[k - keys_table];
	const struct ty_bounds *b = facts->bounds[k - keys_table];
	const struct doc_node *at, *v = p->value;
	char want[256], got[96], msg[400], bw[96];

	if (v->kind == DOC_MAP && k == facts->fsdp_config) {
		v = fsdp_as_validated(v, root, a);
		if (v == NULL)
			return ERR_NOMEM;
	}
	if (!plainly_accepted(facts->plain[k - keys_table], v) &&
	    t != NULL && !ty_accepts(t, v)) {
		ty_explain(msg, sizeof(msg), t, v, k->key, &at);
		if (at == v)
			at = p->value;
		ty_describe(want, sizeof(want), t);
		return type_error(r, p, at, k->key, at == p->value ? want :
		    NULL, msg, a);
	}
	if (ty_within(b, p->value))
		return 0;
	ty_describe_bounds(bw, sizeof(bw), b);
	ty_show(got, sizeof(got), p->value);
	snprintf(msg, sizeof(msg), "%s must %s, got %s", k->key, bw, got);
	return type_error(r, p, p->value, k->key, NULL, msg, a);
}

/*
 * datasets: validate_config() builds each entry into the model its trainer
 * reads (DPODataset for rl dpo/ipo/simpo, KTODataset for kto,
 * SyntheticDataset for type _synthetic, else SFTDataset) before the schema
 * sees the list, so an entry is checked against that one model.
 */
static int
check_datasets(struct report *r, const struct key_facts *facts,
    const struct doc_node *root, const struct doc_pair *p, struct arena *a)
{
	const struct doc_node *rl = doc_map_value(root, "rl");
	const struct ty_model *m;
	struct ty t;
	const struct doc_node *at;
	char msg[400], path[32];
	size_t i;

	if (p->value->n == 0)
		return type_error(r, p, p->value, "datasets", NULL, "datasets "
		    "must have at least 1 item, got an empty list", a);
	for (i = 0; i < p->value->n; i++) {
		const struct doc_node *e = p->value->items[i];
		const struct doc_node *ty = doc_map_value(e, "type");

		if (rl != NULL && rl->kind == DOC_STR &&
		    (strcmp(rl->text, "dpo") == 0 || strcmp(rl->text, "ipo") == 0 ||
		    strcmp(rl->text, "simpo") == 0))
			m = facts->dpo;
		else if (rl != NULL && rl->kind == DOC_STR &&
		    strcmp(rl->text, "kto") == 0)
			m = facts->kto;
		else if (ty != NULL && ty->kind == DOC_STR &&
		    strcmp(ty->text, "_synthetic") == 0)
			m = facts->synthetic;
		else
			m = facts->sft;
		if (m == NULL)
			continue;
		memset(&t, 0, sizeof(t));
		t.kind = TY_MODEL;
		t.name = m->name;
		t.model = m;
		if (ty_accepts(&t, e))
			continue;
		snprintf(path, sizeof(path), "datasets[%zu]", i);
		if (!ty_explain(msg, sizeof(msg), &t, e, path, &at))
			continue;
		return type_error(r, p, at, "datasets", NULL, msg, a);
	}
	return 0;
}

int
config_check(struct report *r, const struct doc *d, struct arena *a)
{
	const struct doc_pair *pl = doc_map_get(d->root, "plugins");
	const struct doc_node *plugins = pl != NULL ? pl->value : NULL;
	const struct key_facts *facts = key_facts();
	const struct rule_def *plug;
	size_t i;
	int rv;

	if (facts == NULL)
		return ERR_NOMEM;	/* the per-process key facts, catalog */
	plug = facts->r_plugin_key;
	for (i = 0; i < d->root->n; i++) {
		const struct doc_pair *p = &d->root->pairs[i];
		const struct key_def *k;
		const struct removed *rm;
		const struct key_slot *slot;
		char hint[200];
		bool exact;

		if (p->key->kind != DOC_STR) {
			rv = report_add(r, a, "schema.unknown_key_dropped",
			    SEV_WARNING, "", p->key_loc.line, p->key_loc.col,
			    "quote the key", "key %.40s is read as a %s, not a "
			    "string - Axolotl ignores it", p->key->text,
			    doc_kind_name(p->key->kind));
			if (rv != 0)
				return rv;
			continue;
		}
		slot = facts_slot(facts, p->key->text);
		rm = slot != NULL ? slot->rm : NULL;
		exact = slot != NULL && slot->exact;
		k = slot != NULL ? slot->k : NULL;
		if (rm != NULL) {
			rv = removed_key(r, d->root, p, rm, a);
			if (rv != 0)
				return rv;
			if (!exact)
				continue;	/* known to us, not to the schema */
		}
		if (k == NULL) {
			rv = unknown_key(r, p, a);
			if (rv != 0)
				return rv;
			continue;
		}
		if (k->plugin != NULL && !plugin_listed(plugins, k)) {
			/* EP above 1 is ep.requires_plugin's warning. */
			if (k == facts->ep && p->value->kind == DOC_INT &&
			    p->value->i > 1)
				continue;
			snprintf(hint, sizeof(hint), "add %s to plugins:",
			    k->plugin_class != NULL ? k->plugin_class :
			    k->plugin);
			rv = report_add(r, a, plug->id,
			    plug->severity, k->key, p->key_loc.line,
			    p->key_loc.col, hint, "'%s' belongs to the %s plugin, "
			    "which is not listed in plugins - Axolotl ignores "
			    "it", k->key, k->plugin);
			if (rv != 0)
				return rv;
			continue;
		}
		if (facts->nested_only[k - keys_table]) {
			rv = report_add(r, a, "schema.unknown_key_dropped",
			    SEV_WARNING, k->key, p->key_loc.line,
			    p->key_loc.col, "move it into the plugin's section",
			    "'%s' is not a top-level setting of the %s plugin "
			    "(it belongs in its section) - Axolotl ignores it",
			    k->key, k->plugin);
			if (rv != 0)
				return rv;
			continue;
		}
		/* A string bf16 is precision.bf16_full_rejected's. */
		if (k == facts->bf16 && p->value->kind == DOC_STR)
			continue;
		rv = k == facts->datasets && p->value->kind == DOC_SEQ ?
		    check_datasets(r, facts, d->root, p, a) :
		    check_value(r, facts, d->root, k, p, a);
		if (rv != 0)
			return rv;
	}
	rv = fsdp2_bnb(r, d->root, a);
	if (rv == 0)
		rv = datasets_required(r, d->root, a);
	if (rv == 0)
		rv = check_plugins(r, plugins, a);
	return rv != 0 ? rv : required_keys(r, facts, d->root, plugins, a);
}
