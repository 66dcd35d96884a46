/*
 * core/suggest: see suggest.h.  The knobs are estimator.md's levers:
 * gradient checkpointing, a smaller micro batch with more accumulation
 * (same global batch), ZeRO-3 or FSDP2 full shard, CPU offload, activation
 * offloading, Cut Cross Entropy, LoRA/QLoRA, context parallelism for long
 * sequences; single changes, then pairs, then triples of them (below).
 */
#include "suggest.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "doc.h"
#include "err.h"
#include "estimate.h"
#include "plan.h"
#include "report.h"

struct knob {
	const char *yaml;	/* lines to append */
	const char *json;	/* the same as a JSON object's members */
	const char *why;
	const struct doc_node *root;	/* yaml parsed once (suggest_run) */
	const void *_Atomic *shared;	/* constant yaml: where the
						   process keeps its parse */
};

/* The constant knobs' documents, parsed once per process. */
enum { K_GC, K_ZERO3, K_FSDP2, K_OFFLOAD_ALL, K_ACT_OFFLOAD, K_LORA,
	K_QLORA, K_CP, K_CONSTANT };
static const void *_Atomic knob_docs[K_CONSTANT];

static const char cce[] =
    "axolotl.integrations.cut_cross_entropy.CutCrossEntropyPlugin";

/* Plugins list plus CCE, as YAML and JSON; NULL when a name would need
   quoting (then the knob is skipped). */
static bool
cce_knob(struct knob *k, const struct doc *d, struct arena *a)
{
	const struct doc_pair *p = doc_map_get(d->root, "plugins");
	char *yaml = arena_printf(a, "plugins:\n"), *json = arena_printf(a,
	    "\"plugins\":[");
	size_t i, n = 0;

	if (p != NULL && p->value->kind == DOC_SEQ)
		for (i = 0; i < p->value->n; i++) {
			const struct doc_node *v = p->value->items[i];
			const char *c;

			if (v->kind != DOC_STR)
				return false;
			if (strstr(v->text, "CutCrossEntropy") != NULL)
				return false;	/* already on */
			for (c = v->text; *c != '\0'; c++)
				if (!((*c >= 'a' && *c <= 'z') ||
				    (*c >= 'A' && *c <= 'Z') ||
				    (*c >= '0' && *c <= '9') || *c == '.' ||
				    *c == '_' || *c == '-'))
					return false;
			yaml = arena_printf(a, "%s  - %s\n", yaml, v->text);
			json = arena_printf(a, "%s%s\"%s\"", json,
			    n++ > 0 ? "," : "", v->text);
		}
	if (yaml == NULL || json == NULL)
		return false;
	k->yaml = arena_printf(a, "%s  - %s\n", yaml, cce);
	k->json = arena_printf(a, "%s%s\"%s\"]", json, n > 0 ? "," : "", cce);
	k->why = "Cut Cross Entropy never materialises the logits";
	k->shared = NULL;
	return k->yaml != NULL && k->json != NULL;
}

/* Whether key is set by one of the knobs idx[0..n). */
static bool
knobs_set(const struct knob *k, const size_t *idx, size_t n,
    const char *key)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (doc_map_get(k[idx[i]].root, key) != NULL)
			return true;
	return false;
}

/*
 * Estimate base with the keys of knobs idx[0..n) set: lay their parsed
 * pairs over base's root (replacing keys they set, which is what
 * appending them to the file would do; the knobs of one combination set
 * disjoint keys, see clash()).  False if there is no estimate.
 */
static bool
try_knobs(struct estimate *out, const struct doc *base,
    const struct knob *k, const size_t *idx, size_t n,
    const struct context *ctx)
{
	struct arena t;
	struct doc merged;
	struct doc_node *root;
	struct plan p;
	size_t i, j, m = 0, extra = 0;
	bool ok = false;

	for (i = 0; i < n; i++)
		extra += k[idx[i]].root->n;
	arena_init(&t, (size_t)4 << 20);
	root = ARENA_NEW(&t, struct doc_node, 1);
	if (root == NULL)
		goto out;
	*root = *base->root;
	root->pairs = ARENA_NEW(&t, struct doc_pair, base->root->n + extra);
	if (root->pairs == NULL)
		goto out;
	for (i = 0; i < base->root->n; i++) {
		const struct doc_node *key = base->root->pairs[i].key;

		if (key->kind == DOC_STR && knobs_set(k, idx, n, key->text))
			continue;
		root->pairs[m++] = base->root->pairs[i];
	}
	for (i = 0; i < n; i++)
		for (j = 0; j < k[idx[i]].root->n; j++)
			root->pairs[m++] = k[idx[i]].root->pairs[j];
	root->n = m;
	doc_map_index(root, &t);	/* base's index is not this one's */
	merged = *base;
	merged.root = root;
	if (plan_build(&p, &merged, ctx, &t) == 0) {
		estimate_run(out, &merged, &p, ctx);
		ok = out->known;
		out->model = NULL;	/* points into t */
		out->model_id = NULL;
		out->largest_term = NULL;
		out->bound = NULL;
	}
out:
	arena_fini(&t);
	return ok;
}

/* Do two knobs set the same top-level key (LoRA and QLoRA, ZeRO-3 and
   its offload preset)?  Then they are alternatives, not a pair. */
static const char *
next_line(const char *p)
{
	const char *nl = strchr(p, '\n');

	return nl != NULL ? nl + 1 : p + strlen(p);
}

static bool
clash(const char *ya, const char *yb)
{
	const char *p, *q;

	for (p = ya; *p != '\0'; p = next_line(p)) {
		size_t n = strcspn(p, ":\n");

		if (*p == ' ')
			continue;
		for (q = yb; *q != '\0'; q = next_line(q))
			if (*q != ' ' && strncmp(p, q, n) == 0 && q[n] == ':')
				return true;
	}
	return false;
}

/* Try knobs idx[0..n) together; keep the result when it fits. */
static int
try_combo(struct suggestion *found, size_t *nf, double *lowest,
    const struct knob *k, const size_t *idx, size_t n,
    const struct report *r, const struct estimate *e,
    const struct context *ctx, struct arena *a)
{
	const char *json = k[idx[0]].json;
	const char *why = k[idx[0]].why;
	struct estimate est;
	size_t i, j;

	if (*nf >= 48)
		return 0;
	for (i = 1; i < n; i++) {
		for (j = 0; j < i; j++)
			if (clash(k[idx[j]].yaml, k[idx[i]].yaml))
				return 0;
		json = arena_printf(a, "%s,%s", json, k[idx[i]].json);
		why = arena_printf(a, "%s; and %s", why, k[idx[i]].why);
		if (json == NULL || why == NULL)
			return ERR_NOMEM;
	}
	if (!try_knobs(&est, r->doc, k, idx, n, ctx))
		return 0;
	if (est.per_gpu_peak_gib < *lowest)
		*lowest = est.per_gpu_peak_gib;
	if (!est.fits || est.per_gpu_peak_gib >= e->per_gpu_peak_gib)
		return 0;
	if (e->fits && est.per_gpu_peak_gib >= 0.9 * est.capacity_gib)
		return 0;
	found[*nf].set_json = arena_printf(a, "{%s}", json);
	found[*nf].why = why;
	found[*nf].per_gpu_peak_gib = est.per_gpu_peak_gib;
	found[*nf].tokens_per_second = est.tokens_per_second;
	if (found[*nf].set_json == NULL)
		return ERR_NOMEM;
	(*nf)++;
	return 0;
}

static int
by_speed(const void *x, const void *y)
{
	const struct suggestion *a = x, *b = y;

	if (a->tokens_per_second != b->tokens_per_second)
		return a->tokens_per_second > b->tokens_per_second ? -1 : 1;
	return a->per_gpu_peak_gib < b->per_gpu_peak_gib ? -1 :
	    a->per_gpu_peak_gib > b->per_gpu_peak_gib;
}

int
suggest_run(struct report *r, const struct context *ctx,
    const struct limits *lim, struct arena *a)
{
	const struct estimate *e = r->estimate;
	const struct plan *p = r->plan;
	struct knob k[16];
	struct suggestion found[48], *out;
	size_t nk = 0, nf = 0, i, size, want;
	unsigned mask;
	double lowest = e != NULL ? e->per_gpu_peak_gib : 0;
	int rv;
	bool tight, ds = strcmp(p->strategy, "deepspeed") == 0;
	bool fsdp = strncmp(p->strategy, "fsdp", 4) == 0;
	bool gc = p->gradient_checkpointing;

	if (e == NULL || !e->known)
		return 0;
	tight = e->fits && e->per_gpu_peak_gib >= 0.9 * e->capacity_gib;
	if (e->fits && !tight)
		return 0;
	if (!gc)
		k[nk++] = (struct knob){ "gradient_checkpointing: true\n",
		    "\"gradient_checkpointing\":true",
		    "keep one layer's activations instead of all", NULL,
		    &knob_docs[K_GC] };
	if (p->micro_batch_size > 1) {
		long long m = p->micro_batch_size / 2;

		k[nk].yaml = arena_printf(a, "micro_batch_size: %lld\n"
		    "gradient_accumulation_steps: %lld\n", m,
		    p->gradient_accumulation_steps * p->micro_batch_size / m);
		k[nk].json = arena_printf(a, "\"micro_batch_size\":%lld,"
		    "\"gradient_accumulation_steps\":%lld", m,
		    p->gradient_accumulation_steps * p->micro_batch_size / m);
		k[nk].why = "half the micro batch, twice the accumulation: the "
		    "same global batch";
		k[nk].shared = NULL;
		if (k[nk].yaml != NULL && k[nk].json != NULL)
			nk++;
	}
	if (p->world > 1 && !fsdp && !(ds && p->zero_stage == 3))
		k[nk++] = (struct knob){ "deepspeed: deepspeed_configs/"
		    "zero3_bf16.json\n", "\"deepspeed\":\"deepspeed_configs/"
		    "zero3_bf16.json\"", "ZeRO-3 shards weights, gradients and "
		    "optimizer states over the GPUs", NULL,
		    &knob_docs[K_ZERO3] };
	if (p->world > 1 && !ds && !fsdp)
		k[nk++] = (struct knob){ "fsdp_version: 2\nfsdp_config:\n"
		    "  reshard_after_forward: true\n  state_dict_type: "
		    "FULL_STATE_DICT\n", "\"fsdp_version\":2,\"fsdp_config\":"
		    "{\"reshard_after_forward\":true,\"state_dict_type\":"
		    "\"FULL_STATE_DICT\"}", "FSDP2 full shard splits the model "
		    "states over the GPUs", NULL,
		    &knob_docs[K_FSDP2] };
	if (ds && !(p->ds_offload_optimizer && p->ds_offload_param))
		k[nk++] = (struct knob){ "deepspeed: deepspeed_configs/"
		    "zero3_bf16_cpuoffload_all.json\n", "\"deepspeed\":"
		    "\"deepspeed_configs/zero3_bf16_cpuoffload_all.json\"",
		    "ZeRO-3 with parameters and optimizer in host memory", NULL,
		    &knob_docs[K_OFFLOAD_ALL] };
	if (p->activation_offloading == NULL)
		k[nk++] = (struct knob){ "activation_offloading: true\n",
		    "\"activation_offloading\":true", "saved activations go "
		    "to host memory", NULL,
		    &knob_docs[K_ACT_OFFLOAD] };
	if (cce_knob(&k[nk], r->doc, a))
		nk++;
	if (p->adapter == NULL)
		k[nk++] = (struct knob){ "adapter: lora\nlora_r: 16\n"
		    "lora_alpha: 32\nlora_target_linear: true\n",
		    "\"adapter\":\"lora\",\"lora_r\":16,\"lora_alpha\":32,"
		    "\"lora_target_linear\":true", "train LoRA adapters on a "
		    "frozen 16-bit base", NULL,
		    &knob_docs[K_LORA] };
	if (p->adapter == NULL || strcmp(p->adapter, "qlora") != 0)
		k[nk++] = (struct knob){ "adapter: qlora\nload_in_4bit: true\n"
		    "load_in_8bit: false\nlora_r: 16\nlora_alpha: 32\n"
		    "lora_target_linear: true\n", "\"adapter\":\"qlora\","
		    "\"load_in_4bit\":true,\"load_in_8bit\":false,\"lora_r\":16,"
		    "\"lora_alpha\":32,\"lora_target_linear\":true",
		    "QLoRA keeps the frozen base in 4 bits", NULL,
		    &knob_docs[K_QLORA] };
	if (p->sequence_len >= 16384 && p->world >= 2 && p->cp <= 1 &&
	    p->world % 2 == 0)
		k[nk++] = (struct knob){ "context_parallel_size: 2\n"
		    "attn_implementation: flash_attention_2\n",
		    "\"context_parallel_size\":2,\"attn_implementation\":"
		    "\"flash_attention_2\"", "context parallelism splits each "
		    "sequence over two GPUs", NULL,
		    &knob_docs[K_CP] };

	/* Each knob's lines parsed once: a constant knob's once per process,
	   the others into the request's arena. */
	for (i = 0; i < nk; i++) {
		const struct doc *once = k[i].shared != NULL ?
		    doc_parse_shared(k[i].shared, k[i].yaml) : NULL;
		struct doc *kd;
		struct err ke = { 0 };

		if (once != NULL) {
			k[i].root = once->root;
			continue;
		}
		rv = doc_parse(&kd, k[i].yaml, strlen(k[i].yaml), lim, a, &ke);
		if (rv == ERR_NOMEM)
			return rv;
		if (rv != 0)
			return ERR_INTERNAL;	/* the knobs are ours */
		k[i].root = kd->root;
	}
	/* Singles; if none fits, pairs; if none fits, triples (each try is
	   a merge and a re-estimate, ~10 us).  A level is tried only while
	   the best so far is within reach: one more knob rarely takes off
	   more than half the peak. */
	for (size = 1; size <= 3 && nf == 0 && (size == 1 ||
	    lowest < 2 * e->capacity_gib); size++)
		for (mask = 1; mask < 1u << nk; mask++) {
			size_t idx[3], n = 0;

			for (i = 0; i < nk; i++)
				if ((mask & 1u << i) != 0) {
					if (n < 3)
						idx[n] = i;
					n++;
				}
			if (n != size)
				continue;
			rv = try_combo(found, &nf, &lowest, k, idx, n, r, e,
			    ctx, a);
			if (rv != 0)
				return rv;
		}
	qsort(found, nf, sizeof(found[0]), by_speed);
	want = e->fits ? 3 : SUGGEST_MAX;
	if (nf > want)
		nf = want;
	out = ARENA_NEW(a, struct suggestion, nf > 0 ? nf : 1);
	if (out == NULL)
		return ERR_NOMEM;
	memcpy(out, found, nf * sizeof(*out));
	r->suggestions = out;
	r->nsuggestions = nf;
	return 0;
}
