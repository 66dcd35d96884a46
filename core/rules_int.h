/*
 * core/rules_int: what the rule topic files (core/rules/<topic>.c) see,
 * not for callers outside core.  A topic file owns its rule functions
 * (static) and its rows, `const struct rule_row rules_<topic>[]`;
 * core/rules.c merges every topic's rows into the catalog once per process
 * (RULES_TOPICS below lists them).  docs/rules-howto.md says how to add a
 * rule.  The context helpers (rule_report, cfg_*, the derived values
 * several topics read) are declared here and defined in
 * core/rules/context.c.
 */
#ifndef CORE_RULES_INT_H
#define CORE_RULES_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "doc.h"
#include "estimate.h"
#include "gpu.h"
#include "plan.h"
#include "report.h"
#include "rules.h"

/*
 * One row of a topic's table.  The catalog's struct rule_def adds the
 * docs anchor, computed from the id ("docs/rules.md#" + the id without
 * dots).
 */
struct rule_row {
	const char *id;		/* "<topic>.<name>", unique in the catalog */
	enum severity severity;	/* default severity */
	const char *title;	/* one line, plain words */
	const char *hint;	/* how to fix it */
	rule_fn *fn;		/* NULL: reported by core/doc, core/schema,
				   core/suppress, core/policy or
				   core/report */
};

/*
 * Every topic file, one X(name) each: core/rules/<name>.c defines
 * rules_<name>[] and rules_<name>_len.  A new topic adds one line here.
 */
#define RULES_TOPICS(X) \
	X(attn) X(batch) X(ce) X(chat) X(compile) X(cp) X(dataset) \
	X(deepspeed) X(deprecated) X(ep) X(eval) X(fsdp) X(gc) X(kernels) \
	X(lora) X(lora_kernels) X(memory) X(model) X(moe) X(optim) \
	X(packing) X(parallel) X(platform) X(plugin) X(policy) X(precision) \
	X(quant) X(ray) X(report) X(rl) X(save) X(schema) X(suppress) \
	X(train)

#define RULES_DECLARE_TOPIC(name) \
	extern const struct rule_row rules_##name[]; \
	extern const size_t rules_##name##_len;
RULES_TOPICS(RULES_DECLARE_TOPIC)
#undef RULES_DECLARE_TOPIC

struct rule_ctx {
	const struct doc_node *root;	/* the config mapping, renamed keys
					   mapped (deprecated_view) */
	const struct doc_node *raw;	/* the config mapping as written */
	const struct doc_node *parsed;	/* root with the numbers and booleans
					   written as strings parsed, empty
					   model mappings true (parsed_view),
					   for use_parsed() */
	const struct doc_node *plugins;	/* the plugins: value, or NULL (no
					   rename or parse touches it) */
	struct plugin_memo {		/* plugin_on()'s answers so far */
		const char *module[16];
		bool on[16];
		size_t n;
	} *memo;
	const struct context *ctx;	/* where it runs */
	const struct plan *plan;	/* Axolotl's derived plan */
	const struct rule_def *rule;	/* the row being run */
	struct report *r;
	struct arena *a;
};

/*
 * Report a finding of the running rule at a key (or, when p is NULL, at
 * the root mapping).  Id, severity and hint come from the row.
 */
int rule_report(struct rule_ctx *rc, const struct doc_pair *p,
    const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* rule_report() with another severity than the row's. */
int rule_report_sev(struct rule_ctx *rc, const struct doc_pair *p,
    enum severity sev, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/*
 * Lookups of top-level keys.  Inline, so that a literal key's length and
 * hash are constants (doc_map_get): rules make hundreds per check.
 */

/* The top-level pair for key, or NULL. */
static inline const struct doc_pair *
cfg_pair(const struct rule_ctx *rc, const char *key)
{
	return doc_map_get(rc->root, key);
}

/*
 * For a rule that models a validator running after pydantic parsed the
 * values (an after-validator) or a launch-time step (which reads the
 * validated config): from here on rc->root holds a number or boolean
 * written as a string ("2", "false") the way pydantic parsed it for the
 * field's type.  Other rules, like Axolotl's before-validators, see the
 * string.  rules_run() gives each rule the unparsed view again.
 */
static inline void
use_parsed(struct rule_ctx *rc)
{
	rc->root = rc->parsed;
}

/* The top-level pair for key as written (renamed keys not mapped): what
   Axolotl's validators that run before the mapping see. */
static inline const struct doc_pair *
raw_pair(const struct rule_ctx *rc, const char *key)
{
	return doc_map_get(rc->raw, key);
}

/* Python truthiness of a value; a missing key is false. */
static inline bool
cfg_on(const struct rule_ctx *rc, const char *key)
{
	const struct doc_pair *p = cfg_pair(rc, key);

	return p != NULL && doc_truthy(p->value);
}

/* A string value, or NULL when absent or not a string. */
static inline const char *
cfg_str(const struct rule_ctx *rc, const char *key)
{
	const struct doc_pair *p = cfg_pair(rc, key);

	return p != NULL && p->value->kind == DOC_STR ? p->value->text : NULL;
}

/* p's value as an integer (floats with no fraction too), else def. */
long long cfg_int_of(const struct doc_pair *p, long long def);

/* An integer value (floats with no fraction too), else def. */
static inline long long
cfg_int(const struct rule_ctx *rc, const char *key, long long def)
{
	return cfg_int_of(cfg_pair(rc, key), def);
}

/* The string value of key equals want. */
static inline bool
cfg_is(const struct rule_ctx *rc, const char *key, const char *want)
{
	const char *v = cfg_str(rc, key);

	return v != NULL && strcmp(v, want) == 0;
}

/* a x b, saturated at LLONG_MIN/LLONG_MAX: config numbers are arbitrary,
   and a product of them must not overflow. */
long long mul_sat(long long a, long long b);

/* Python's `v == 0` for a YAML value: 0, 0.0 or false. */
static inline bool
node_is_zero(const struct doc_node *v)
{
	return v != NULL && ((v->kind == DOC_INT && v->i == 0 && !v->big) ||
	    (v->kind == DOC_FLOAT && v->f == 0.0) ||
	    (v->kind == DOC_BOOL && !v->b));
}

/* Python's `v is True`. */
static inline bool
node_is_true(const struct doc_node *v)
{
	return v != NULL && v->kind == DOC_BOOL && v->b;
}

/* A string value equal to s (Python `v == "s"`). */
static inline bool
node_is(const struct doc_node *v, const char *s)
{
	return v != NULL && v->kind == DOC_STR && strcmp(v->text, s) == 0;
}

/* Python's a == b for two YAML scalars (numbers compare by value, a
   collection equals nothing here). */
bool node_eq(const struct doc_node *a, const struct doc_node *b);

/* A number (int, float or bool, as Python compares them) into *out. */
bool node_num(const struct doc_node *v, double *out);

/*
 * Python's str(v).lower() for a scalar, into buf (cap bytes, cut short
 * when longer); "" for a collection, whose str() no word equals.
 */
const char *node_lower(const struct doc_node *v, char *buf, size_t cap);

/* key is written as true / false (a bool, not a truthy value). */
static inline bool
cfg_true(const struct rule_ctx *rc, const char *key)
{
	const struct doc_pair *p = cfg_pair(rc, key);

	return p != NULL && p->value->kind == DOC_BOOL && p->value->b;
}

static inline bool
cfg_false(const struct rule_ctx *rc, const char *key)
{
	const struct doc_pair *p = cfg_pair(rc, key);

	return p != NULL && p->value->kind == DOC_BOOL && !p->value->b;
}

/* key is present and not null. */
static inline bool
cfg_set(const struct rule_ctx *rc, const char *key)
{
	const struct doc_pair *p = cfg_pair(rc, key);

	return p != NULL && p->value->kind != DOC_NULL;
}

/* inner of a mapping-valued key, or NULL; and its truthiness. */
static inline const struct doc_pair *
cfg_sub(const struct rule_ctx *rc, const char *key, const char *inner)
{
	const struct doc_pair *p = cfg_pair(rc, key);

	return p != NULL && p->value->kind == DOC_MAP ?
	    doc_map_get(p->value, inner) : NULL;
}

static inline bool
cfg_sub_on(const struct rule_ctx *rc, const char *key, const char *inner)
{
	const struct doc_pair *p = cfg_sub(rc, key, inner);

	return p != NULL && doc_truthy(p->value);
}

/* The pair of a, else of b, or NULL. */
static inline const struct doc_pair *
cfg_first(const struct rule_ctx *rc, const char *a, const char *b)
{
	const struct doc_pair *p = cfg_pair(rc, a);

	return p != NULL ? p : cfg_pair(rc, b);
}

/* A plugins entry contains needle. */
bool cfg_plugin(const struct rule_ctx *rc, const char *needle);

/*
 * A key of fsdp_config under either spelling ("offload_params" or
 * "fsdp_offload_params"), or NULL.
 */
const struct doc_pair *fsdp_pair(const struct rule_ctx *rc,
    const char *key);

/*
 * The value the top-level fsdp_version holds once Axolotl's
 * check_fsdp_version_in_fsdp_config has run: as written when truthy, else
 * fsdp_config's version (or fsdp_version), else 1 when fsdp_config is
 * set; NULL (or the falsy value written) without fsdp_config.  What the
 * validators after it read as data.get("fsdp_version").
 */
const struct doc_node *fsdp_version_node(const struct rule_ctx *rc);

/* That version as an int (pydantic's int of it, as after-validators see
   it): 1 or 2; 1 for the legacy fsdp list; 0 without FSDP. */
int fsdp_version(const struct rule_ctx *rc);

/* Python's str(v) == "2": an int 2 or the string "2" (not 2.0). */
bool node_str_is_2(const struct doc_node *v);

/*
 * The attention backend after rules.md 2.4's mapping: attn_implementation,
 * else the first truthy legacy flag mapped, else flash_attention_2 with
 * gemma4_hybrid_attn_impl (normalize_attn_implementation); NULL when none
 * is set.
 */
const char *attn_backend(const struct rule_ctx *rc);

/* be is a backend that packs without cross-attention (varlen). */
bool packing_backend(const char *be);

/*
 * *out gets the view of root the rules read: root itself, or a copy with
 * each deprecated key Axolotl renames before validating
 * (sequence_parallel_degree, evaluation_strategy, dataset_processes,
 * noisy_embedding_alpha, pretrain_multipack_buffer_size) under its new
 * name, at the old key's place.  0 or ERR_NOMEM (core/rules/deprecated.c).
 */
int deprecated_view(const struct doc_node **out, const struct doc_node *root,
    struct arena *a);

/*
 * Would Python's re.compile() accept s[0..n)?  When not, why[0..cap)
 * says why (core/rules/pyre.c).
 */
bool pyre_valid(const char *s, size_t n, char *why, size_t cap);

/*
 * *out gets root with each top-level string a bool, int or float field
 * parses to replaced by that value (where the field's type takes no
 * string), and an empty mapping for a model field (a model instance,
 * truthy to an after-validator) by true; root itself when there is none.
 * 0 or ERR_NOMEM (core/rules/context.c).
 */
int parsed_view(const struct doc_node **out, const struct doc_node *root,
    struct arena *a);

/*
 * Whether v is a string pydantic takes for a bool (true/false, yes/no,
 * on/off, t/f, y/n, 1/0, any case); *b (when not NULL) gets the value.
 */
bool py_bool_word(const struct doc_node *v, bool *b);

/* An FSDP version written as 1, 2, "1" or "2" into *out. */
bool node_version(const struct doc_node *v, long long *out);

/*
 * A plugin of Axolotl's integrations module (e.g. "liger") is listed
 * under plugins: ("axolotl.integrations.liger.LigerPlugin", or
 * "liger.LigerPlugin").  Its args model, and so its validators, exist
 * only then; without it its keys are dropped.
 */
bool plugin_on(const struct rule_ctx *rc, const char *module);

/* An ExpertParallelPlugin is listed under plugins:. */
bool ep_plugin(const struct rule_ctx *rc);

/* The expert-parallel size Axolotl uses: expert_parallel_size with its
   plugin listed, else 1 (the key is dropped without it). */
long long ep_size(const struct rule_ctx *rc);

/* FSDP is on: a truthy fsdp_config or legacy fsdp list. */
static inline bool
fsdp_on(const struct rule_ctx *rc)
{
	return cfg_on(rc, "fsdp_config") || cfg_on(rc, "fsdp");
}

/* The context-parallel size of the plan. */
static inline long long
cp_of(const struct rule_ctx *rc)
{
	return rc->plan->cp;
}

/* A size key as written (0 when absent or not an integer). */
static inline long long
explicit_size(const struct rule_ctx *rc, const char *key)
{
	return cfg_int(rc, key, 0);
}

/* The GPU of the context, or NULL when the catalog does not know it. */
static inline const struct gpu *
the_gpu(const struct rule_ctx *rc)
{
	return gpu_find(rc->ctx->gpu);
}

/*
 * The model the estimate found (core/check runs the estimate before the
 * rules: it has already looked base_model, then base_model_config, up),
 * or NULL.  Borrowed.
 */
static inline const struct model_def *
model_of(const struct rule_ctx *rc)
{
	return rc->r->estimate != NULL ? rc->r->estimate->model : NULL;
}


#endif /* CORE_RULES_INT_H */
