/*
 * core/rules: the catalog, merged once per process from the rows of every
 * topic file (core/rules/<topic>.c, listed in core/rules_int.h), sorted by
 * id, each row's docs anchor computed from its id.  A row with a function
 * is run by rules_run(); a row without one is reported by core/doc,
 * core/schema, core/suppress, core/policy or core/report, which see the
 * document as they build it.  Pure.
 */
#include "rules.h"

#include <stdlib.h>
#include <string.h>

#include "doc.h"
#include "arena.h"
#include "err.h"
#include "rules_int.h"

/*
 * rules.md entries preflight cannot decide from the YAML and the
 * --gpus/--gpu/--torch context: they depend on the launch host (installed
 * packages, files, NCCL topology, the command line) or on hardware outside
 * the GPU catalog.  Listed in docs/rules.md so nobody mistakes them for
 * checked ones; sorted by id.
 */
static const struct rule_unchecked unchecked[] = {
	{ "ce.cce_runtime_requirements", "needs the installed "
	  "cut_cross_entropy package (Axolotl's fork) and its model "
	  "registry" },
	{ "cp.ring_flash_attn_missing", "needs to know whether "
	  "ring_flash_attn is importable on the training hosts" },
	{ "deepspeed.config_path_missing", "needs the training host's file "
	  "system; the CLI reports a path it cannot read as "
	  "deepspeed.unreadable_config, the daemon never opens client "
	  "paths" },
	{ "ep.deep_ep_missing", "needs to know whether deep_ep is "
	  "importable on the training hosts" },
	{ "lora_kernels.unsupported_architecture", "needs Axolotl's "
	  "model-support registry, which the model catalog does not carry" },
	{ "parallel.tp_deepspeed_version", "needs the installed DeepSpeed "
	  "version (>= 0.16.4)" },
	{ "platform.accelerate_default_config_present", "needs the "
	  "training host's file system (~/.cache/huggingface/accelerate)" },
	{ "platform.nccl_p2p_autodisable", "needs the node's P2P/InfiniBand "
	  "topology" },
	{ "platform.nccl_timeout", "advisory about run length and storage "
	  "speed, which the config does not state" },
	{ "platform.npu_attention", "Ascend NPUs are not in the GPU "
	  "catalog" },
	{ "platform.npu_bit_optimizer", "Ascend NPUs are not in the GPU "
	  "catalog" },
	{ "platform.npu_quantization", "Ascend NPUs are not in the GPU "
	  "catalog" },
	{ "platform.npu_tf32", "Ascend NPUs are not in the GPU catalog" },
	{ "precision.mps_downgrade", "Apple MPS devices are not in the GPU "
	  "catalog" },
	{ "ray.yaml_only_flag_keeps_launcher", "depends on the launch "
	  "command line (--use-ray), which preflight does not see" },
	{ "schema.capabilities_pairing", "an internal API contract of "
	  "Axolotl's validator, not a property of a config" },
};

const struct rule_unchecked *
rules_unchecked(size_t *n)
{
	*n = sizeof(unchecked) / sizeof(unchecked[0]);
	return unchecked;
}

/*
 * The catalog and the rules that run, built once per process
 * (arena_once): every topic's rows, sorted by id, with their docs anchors;
 * and the rows with a function as a dense (function, row) list, so a check
 * walks 3 KB instead of every 48-byte row of the catalog.
 */
struct runnable {
	rule_fn *fn;
	const struct rule_def *rule;
};

struct catalog {
	struct rule_def *rows;		/* sorted by id */
	size_t n;
	struct runnable *run;		/* rows with a function, in id order */
	size_t nrun;
};

static const void *_Atomic catalog_kept;

static int
by_id(const void *a, const void *b)
{
	return strcmp(((const struct rule_def *)a)->id,
	    ((const struct rule_def *)b)->id);
}

/* "docs/rules.md#" and the id without its dots: the heading's anchor. */
static const char *
docs_anchor(const char *id, struct arena *a)
{
	static const char base[] = "docs/rules.md#";
	size_t len = strlen(id), k = sizeof(base) - 1, i;
	char *s = arena_take(a, 1, 1, sizeof(base) + len);

	if (s == NULL)
		return NULL;
	memcpy(s, base, k);
	for (i = 0; i < len; i++)
		if (id[i] != '.')
			s[k++] = id[i];
	s[k] = '\0';
	return s;
}

/* arena_once()'s build for catalog(). */
static const void *
catalog_build(struct arena *a, const void *arg)
{
	static const struct {
		const struct rule_row *rows;
		const size_t *n;
	} topics[] = {
#define RULES_TOPIC_ROW(name) { rules_##name, &rules_##name##_len },
		RULES_TOPICS(RULES_TOPIC_ROW)
#undef RULES_TOPIC_ROW
	};
	struct catalog *c = ARENA_NEW(a, struct catalog, 1);
	size_t t, i, total = 0;

	(void)arg;
	for (t = 0; t < sizeof(topics) / sizeof(topics[0]); t++)
		total += *topics[t].n;
	if (c == NULL || (c->rows = ARENA_NEW(a, struct rule_def, total)) ==
	    NULL || (c->run = ARENA_NEW(a, struct runnable, total)) == NULL)
		return NULL;
	for (t = 0; t < sizeof(topics) / sizeof(topics[0]); t++)
		for (i = 0; i < *topics[t].n; i++) {
			const struct rule_row *r = &topics[t].rows[i];
			struct rule_def *d = &c->rows[c->n++];

			d->id = r->id;
			d->severity = r->severity;
			d->title = r->title;
			d->hint = r->hint;
			d->fn = r->fn;
			d->docs = docs_anchor(r->id, a);
			if (d->docs == NULL)
				return NULL;
		}
	qsort(c->rows, c->n, sizeof(c->rows[0]), by_id);
	for (i = 0; i < c->n; i++)
		if (c->rows[i].fn != NULL) {
			c->run[c->nrun].fn = c->rows[i].fn;
			c->run[c->nrun++].rule = &c->rows[i];
		}
	return c;
}

static const struct catalog *
catalog(void)
{
	return arena_once(&catalog_kept, (size_t)1 << 20, catalog_build, NULL);
}

const struct rule_def *
rules_all(size_t *n)
{
	const struct catalog *c = catalog();

	*n = c != NULL ? c->n : 0;
	return c != NULL ? c->rows : NULL;
}

int
rules_run(struct report *r, const struct doc *d, const struct context *ctx,
    const struct plan *plan, struct arena *a, struct err *e)
{
	const struct catalog *c = catalog();
	const struct doc_node *renamed;
	struct rule_ctx rc;
	struct plugin_memo memo = { .n = 0 };
	size_t i;
	int rv;

	rc.raw = d->root;
	rc.memo = &memo;
	rc.plugins = doc_map_value(d->root, "plugins");
	rc.ctx = ctx;
	rc.plan = plan;
	rc.r = r;
	rc.a = a;
	if (c == NULL)	/* core_init() builds it at start */
		return err_while(e, ERR_NOMEM, NULL, "building the rule "
		    "catalog");
	rv = deprecated_view(&renamed, d->root, a);
	if (rv != 0)
		return err_while(e, rv, NULL, "mapping renamed keys");
	rv = parsed_view(&rc.parsed, renamed, a);
	if (rv != 0)
		return err_while(e, rv, NULL, "coercing values as pydantic "
		    "does");
	for (i = 0; i < c->nrun; i++) {
		rc.rule = c->run[i].rule;
		rc.root = renamed;
		rv = c->run[i].fn(&rc);
		if (rv != 0)
			return err_while(e, rv, NULL, "running rule %s",
			    rc.rule->id);
	}
	return 0;
}

const struct rule_def *
rules_find(const char *id)
{
	const struct catalog *c = catalog();
	size_t lo = 0, hi = c != NULL ? c->n : 0;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int cmp = strcmp(id, c->rows[mid].id);

		if (cmp == 0)
			return &c->rows[mid];
		if (cmp < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return NULL;
}
