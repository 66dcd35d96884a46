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
 * needs a truthy value, else any value; `unless`: not when that key is
 * set (the new spelling wins).
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
	size_t *lens;			/* [k - keys_table]: strlen(key) */
	uint64_t *letters;		/* [k - keys_table]: letters(key) */
	signed char *plain;		/* [k - keys_table]: plain_kind() */
	const struct key_def *bf16, *ep;	/* two rows with exceptions */
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
	f->lens = ARENA_NEW(a, size_t, keys_table_len + 1);
	f->letters = ARENA_NEW(a, uint64_t, keys_table_len + 1);
	f->plain = ARENA_NEW(a, signed char, keys_table_len + 1);
	if (f->slots == NULL || f->types == NULL || f->lens == NULL ||
	    f->letters == NULL || f->plain == NULL)
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
		f->types[i] = ty_parse(keys_table[i].type, a);
		f->lens[i] = strlen(keys_table[i].key);
		f->letters[i] = letters(keys_table[i].key);
		f->plain[i] = (signed char)plain_kind(keys_table[i].type);
	}
	f->bf16 = keys_find("bf16");
	f->ep = keys_find("expert_parallel_size");
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

	if (rm->truthy && !doc_truthy(p->value))
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
	const struct rule_def *rd = rules_find("optim.fsdp2_bnb_8bit");
	const struct doc_pair *opt = doc_map_get(root, "optimizer");
	const struct doc_pair *cfg = doc_map_get(root, "fsdp_config");
	const struct doc_pair *ver = doc_map_get(root, "fsdp_version");
	const struct doc_node *v = ver != NULL ? ver->value : NULL;

	if (opt == NULL || opt->value->kind != DOC_STR || cfg == NULL ||
	    !doc_truthy(cfg->value))
		return 0;
	if (strcmp(opt->value->text, "adamw_8bit") != 0 &&
	    strcmp(opt->value->text, "adamw_bnb_8bit") != 0)
		return 0;
	/* The version may also be written inside fsdp_config. */
	if ((v == NULL || v->kind == DOC_NULL) && cfg->value->kind == DOC_MAP) {
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
	const struct rule_def *rd = rules_find("schema.datasets_required");
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

/* Is the plugin that owns k listed under plugins:? */
static bool
plugin_listed(const struct doc_node *plugins, const struct key_def *k)
{
	char module[96];
	size_t i;

	if (plugins == NULL || plugins->kind != DOC_SEQ)
		return false;
	snprintf(module, sizeof(module), ".%s.", k->plugin);
	for (i = 0; i < plugins->n; i++) {
		const struct doc_node *p = plugins->items[i];

		if (p->kind != DOC_STR)
			continue;
		if ((k->plugin_class != NULL &&
		    strcmp(p->text, k->plugin_class) == 0) ||
		    strstr(p->text, module) != NULL)
			return true;
	}
	return false;
}


/* How a value looks in a message: its text, or its kind. */
static void
show(char *out, size_t cap, const struct doc_node *v)
{
	switch (v->kind) {
	case DOC_NULL:
		snprintf(out, cap, "null");
		return;
	case DOC_SEQ:
		snprintf(out, cap, "a list");
		return;
	case DOC_MAP:
		snprintf(out, cap, "a mapping");
		return;
	case DOC_STR:
		snprintf(out, cap, "the string '%.40s%s'", v->text,
		    v->len > 40 ? "..." : "");
		return;
	case DOC_TIMESTAMP:
		snprintf(out, cap, "the date %.40s", v->text);
		return;
	default:
		snprintf(out, cap, "%s %.40s", doc_kind_name(v->kind), v->text);
		return;
	}
}

static int
unknown_key(struct report *r, const struct doc_pair *p, struct arena *a)
{
	const struct rule_def *rd = rules_find("schema.unknown_key_dropped");
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

int
config_check(struct report *r, const struct doc *d, struct arena *a)
{
	const struct rule_def *plug =
	    rules_find("schema.plugin_key_without_plugin");
	const struct rule_def *type = rules_find("schema.type");
	const struct doc_pair *pl = doc_map_get(d->root, "plugins");
	const struct doc_node *plugins = pl != NULL ? pl->value : NULL;
	const struct key_facts *facts = key_facts();
	size_t i;
	int rv;

	if (facts == NULL || plug == NULL || type == NULL)
		return ERR_NOMEM;	/* the per-process key facts, catalog */
	for (i = 0; i < d->root->n; i++) {
		const struct doc_pair *p = &d->root->pairs[i];
		const struct key_def *k;
		const struct removed *rm;
		const struct key_slot *slot;
		const struct ty *t;
		char want[256], got[96], hint[200];
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
			/* EP above 1 is ep.requires_plugin's (an error). */
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
		/* A string bf16 is precision.bf16_full_rejected's. */
		if (k == facts->bf16 && p->value->kind == DOC_STR)
			continue;
		if (plainly_accepted(facts->plain[k - keys_table], p->value))
			continue;
		t = facts->types[k - keys_table];
		if (t == NULL || ty_accepts(t, p->value))
			continue;
		ty_describe(want, sizeof(want), t);
		show(got, sizeof(got), p->value);
		snprintf(hint, sizeof(hint), "set %s to %.150s", k->key, want);
		rv = report_add(r, a, type->id, type->severity, k->key,
		    p->value_loc.line, p->value_loc.col, hint,
		    "%s must be %s, got %s", k->key, want, got);
		if (rv != 0)
			return rv;
	}
	rv = fsdp2_bnb(r, d->root, a);
	return rv != 0 ? rv : datasets_required(r, d->root, a);
}
