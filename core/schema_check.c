/*
 * core/schema_check: a config's keys and values against Axolotl's schema
 * (the facts of core/schema_facts.c).  No I/O.
 *
 * Axolotl's config model has pydantic's default extra="ignore": a key it
 * does not know is dropped without a word, so a typo silently turns a
 * feature off.  Plugin keys exist only when their plugin is listed.  A
 * value of the wrong type is a validation error before anything runs.
 */
#include "schema.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "doc.h"
#include "err.h"
#include "keys.h"
#include "plan.h"
#include "report.h"
#include "rules.h"
#include "schema_int.h"
#include "types.h"

/* Whether v is accepted by a plain type of kind (plain_kind()). */
static bool
plainly_accepted(int kind, const struct doc_node *v)
{
	return kind >= 0 && (v->kind == DOC_NULL ||
	    ((int)v->kind == kind && !v->big));
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
	const struct rule_def *rd = schema_facts()->r_bnb;
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
	const struct rule_def *rd = schema_facts()->r_datasets;
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
	const struct rule_def *rd = schema_facts()->r_required;
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
	const struct key_facts *facts = schema_facts();
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


static int
unknown_key(struct report *r, const struct doc_pair *p, struct arena *a)
{
	const struct rule_def *rd = schema_facts()->r_unknown;
	const char *key = p->key->text;
	const char *near = schema_suggest(key);
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
	const struct rule_def *rd = schema_facts()->r_type;
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

/* A string key and where it stood, for dedup_later_wins. */
struct keypos {
	const char *key;
	size_t at;
};

static int
by_key_then_pos(const void *x, const void *y)
{
	const struct keypos *p = x, *q = y;
	int c = strcmp(p->key, q->key);

	if (c != 0)
		return c;
	return (p->at > q->at) - (p->at < q->at);
}

/*
 * Keep one pair per string key of pairs[0..n), in place: at the first
 * key's position, the last pair (a dict built in order).  Sorted, so
 * O(n log n) whatever the keys (comparing each with every key kept
 * before it was quadratic: 10,000 keys, 0.2 s).  The new count, or
 * (size_t)-1 without memory.
 */
static size_t
dedup_later_wins(struct doc_pair *pairs, size_t n, struct arena *a)
{
	struct keypos *ord = ARENA_NEW(a, struct keypos, n > 0 ? n : 1);
	size_t *take = ARENA_NEW(a, size_t, n > 0 ? n : 1);
	struct doc_pair *kept = ARENA_NEW(a, struct doc_pair, n > 0 ? n : 1);
	size_t i, j, g, ns = 0, out = 0;

	if (ord == NULL || take == NULL || kept == NULL)
		return (size_t)-1;
	for (i = 0; i < n; i++) {
		take[i] = i;	/* itself, unless a later equal key */
		if (pairs[i].key->kind == DOC_STR) {
			ord[ns].key = pairs[i].key->text;
			ord[ns++].at = i;
		}
	}
	qsort(ord, ns, sizeof(*ord), by_key_then_pos);
	for (g = 0; g < ns; g = j) {
		for (j = g + 1; j < ns && strcmp(ord[j].key, ord[g].key) == 0;
		    j++)
			take[ord[j].at] = n;	/* dropped */
		take[ord[g].at] = ord[j - 1].at;
	}
	for (i = 0; i < n; i++)
		if (take[i] != n)
			kept[out++] = pairs[take[i]];
	memcpy(pairs, kept, out * sizeof(*pairs));
	return out;
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
	size_t i, n = 0;
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
		pairs[n++] = pr;
	}
	n = dedup_later_wins(pairs, n, a);
	if (n == (size_t)-1)
		return NULL;
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

/*
 * Whether key's value never reaches pydantic's type check: the legacy
 * attention flags (AxolotlInputConfig.normalize_attn_implementation maps
 * a truthy one to attn_implementation and pops them all),
 * axolotl_config_path (load_cfg sets it to the config file's path) and
 * dataset_processes beside a dataset_num_proc (default_dataset_num_proc
 * deletes it; alone, it is copied there and checked as the same int).
 */
static bool
replaced_before_validation(const struct doc_node *root, const char *key)
{
	const struct doc_node *np;
	size_t i;

	if (strcmp(key, "axolotl_config_path") == 0)
		return true;
	if (strcmp(key, "dataset_processes") == 0) {
		np = doc_map_value(root, "dataset_num_proc");
		return np != NULL && np->kind != DOC_NULL;
	}
	for (i = 0; i < plan_legacy_attn_len; i++)
		if (strcmp(key, plan_legacy_attn[i].flag) == 0)
			return true;
	return false;
}

/* One top-level pair's findings; 0 or ERR_NOMEM. */
static int
check_key(struct report *r, const struct key_facts *facts,
    const struct doc *d, const struct doc_node *plugins,
    const struct doc_pair *p, struct arena *a)
{
	const struct rule_def *plug = facts->r_plugin_key;
	const struct key_def *k;
	const struct removed *rm;
	const struct key_slot *slot;
	char hint[200];
	bool exact;
	int rv;

	if (p->key->kind != DOC_STR)
		return report_add(r, a, "schema.unknown_key_dropped",
		    SEV_WARNING, "", p->key_loc.line, p->key_loc.col,
		    "quote the key", "key %.40s is read as a %s, not a "
		    "string - Axolotl ignores it", p->key->text,
		    doc_kind_name(p->key->kind));
	slot = schema_slot(facts, p->key->text);
	rm = slot != NULL ? slot->rm : NULL;
	exact = slot != NULL && slot->exact;
	k = slot != NULL ? slot->k : NULL;
	if (rm != NULL) {
		rv = removed_key(r, d->root, p, rm, a);
		if (rv != 0 || !exact)
			return rv;	/* !exact: known to us, not the schema */
	}
	if (k == NULL)
		return unknown_key(r, p, a);
	if (k->plugin != NULL && !plugin_listed(plugins, k)) {
		/* EP above 1 is ep.requires_plugin's warning. */
		if (k == facts->ep && p->value->kind == DOC_INT &&
		    p->value->i > 1)
			return 0;
		snprintf(hint, sizeof(hint), "add %s to plugins:",
		    k->plugin_class != NULL ? k->plugin_class : k->plugin);
		return report_add(r, a, plug->id, plug->severity, k->key,
		    p->key_loc.line, p->key_loc.col, hint, "'%s' belongs to "
		    "the %s plugin, which is not listed in plugins - Axolotl "
		    "ignores it", k->key, k->plugin);
	}
	if (facts->nested_only[k - keys_table])
		return report_add(r, a, "schema.unknown_key_dropped",
		    SEV_WARNING, k->key, p->key_loc.line, p->key_loc.col,
		    "move it into the plugin's section", "'%s' is not a "
		    "top-level setting of the %s plugin (it belongs in its "
		    "section) - Axolotl ignores it", k->key, k->plugin);
	/* A string bf16 is precision.bf16_full_rejected's. */
	if (k == facts->bf16 && p->value->kind == DOC_STR)
		return 0;
	if (replaced_before_validation(d->root, k->key))
		return 0;
	return k == facts->datasets && p->value->kind == DOC_SEQ ?
	    check_datasets(r, facts, d->root, p, a) :
	    check_value(r, facts, d->root, k, p, a);
}

int
schema_check(struct report *r, const struct doc *d, struct arena *a,
    struct err *e)
{
	const struct doc_pair *pl = doc_map_get(d->root, "plugins");
	const struct doc_node *plugins = pl != NULL ? pl->value : NULL;
	const struct key_facts *facts = schema_facts();
	size_t i;
	int rv;

	if (facts == NULL)	/* core_init() builds them at start */
		return err_while(e, ERR_NOMEM, NULL, "building the key "
		    "facts");
	for (i = 0; i < d->root->n; i++) {
		const struct doc_pair *p = &d->root->pairs[i];

		rv = check_key(r, facts, d, plugins, p, a);
		if (rv != 0) {
			struct err_loc loc = { .line = p->key_loc.line,
			    .col = p->key_loc.col };

			snprintf(loc.path, sizeof(loc.path), "%s",
			    p->key->text);
			return err_while(e, rv, &loc, "checking key '%.60s'",
			    p->key->text);
		}
	}
	rv = fsdp2_bnb(r, d->root, a);
	if (rv != 0)
		return err_while(e, rv, NULL, "checking bnb 8-bit "
		    "optimizers under FSDP2");
	rv = datasets_required(r, d->root, a);
	if (rv != 0)
		return err_while(e, rv, NULL, "checking datasets");
	rv = check_plugins(r, plugins, a);
	if (rv != 0)
		return err_while(e, rv, NULL, "checking plugins");
	rv = required_keys(r, facts, d->root, plugins, a);
	if (rv != 0)
		return err_while(e, rv, NULL, "checking required keys");
	return 0;
}
