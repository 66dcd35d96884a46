/*
 * core/suggest: see suggest.h.  The knobs are estimator.md's levers:
 * gradient checkpointing, a smaller micro batch with more accumulation
 * (same global batch), ZeRO-3 or FSDP2 full shard, CPU offload, activation
 * offloading, Cut Cross Entropy, LoRA/QLoRA, context parallelism for long
 * sequences; single changes, then pairs, then triples of them (below).
 */
#include "suggest.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "doc.h"
#include "err.h"
#include "estimate.h"
#include "plan.h"
#include "report.h"

struct knob {
	const char *yaml;	/* lines to append: the one spelling of the
				   knob; its JSON is written from their parse
				   (members_json) */
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

/* The constant knobs' lines and reasons, by K_*. */
static const struct {
	const char *yaml;
	const char *why;
} const_knobs[K_CONSTANT] = {
	[K_GC] = { "gradient_checkpointing: true\n",
	    "keep one layer's activations instead of all" },
	[K_ZERO3] = { "deepspeed: deepspeed_configs/zero3_bf16.json\n",
	    "ZeRO-3 shards weights, gradients and optimizer states over the "
	    "GPUs" },
	[K_FSDP2] = { "fsdp_version: 2\nfsdp_config:\n"
	    "  reshard_after_forward: true\n"
	    "  state_dict_type: FULL_STATE_DICT\n",
	    "FSDP2 full shard splits the model states over the GPUs" },
	[K_OFFLOAD_ALL] = { "deepspeed: deepspeed_configs/"
	    "zero3_bf16_cpuoffload_all.json\n",
	    "ZeRO-3 with parameters and optimizer in host memory" },
	[K_ACT_OFFLOAD] = { "activation_offloading: true\n",
	    "saved activations go to host memory" },
	[K_LORA] = { "adapter: lora\nlora_r: 16\nlora_alpha: 32\n"
	    "lora_target_linear: true\n",
	    "train LoRA adapters on a frozen 16-bit base" },
	[K_QLORA] = { "adapter: qlora\nload_in_4bit: true\n"
	    "load_in_8bit: false\nlora_r: 16\nlora_alpha: 32\n"
	    "lora_target_linear: true\n",
	    "QLoRA keeps the frozen base in 4 bits" },
	[K_CP] = { "context_parallel_size: 2\n"
	    "attn_implementation: flash_attention_2\n",
	    "context parallelism splits each sequence over two GPUs" },
};

/* Constant knob i, its document parsed once per process. */
static struct knob
knob_const(size_t i)
{
	struct knob k = { const_knobs[i].yaml, NULL, const_knobs[i].why, NULL,
	    &knob_docs[i] };

	return k;
}

static const char cce[] =
    "axolotl.integrations.cut_cross_entropy.CutCrossEntropyPlugin";

/*
 * Text built in the arena, its buffer doubled as it grows: linear in the
 * final length (appending with arena_printf("%s...", text) copies the
 * whole text each time, quadratic in a long plugins list).  p is NULL
 * once the arena is spent.
 */
struct sbuf {
	char *p;
	size_t n, cap;
	struct arena *a;
};

static void
sb_add(struct sbuf *b, const char *s, size_t n)
{
	size_t cap;
	char *np;

	if (b->p == NULL)
		return;
	if (b->n + n + 1 > b->cap) {
		for (cap = b->cap * 2; cap < b->n + n + 1; cap *= 2)
			;
		np = arena_take(b->a, 1, 1, cap);
		if (np != NULL)
			memcpy(np, b->p, b->n + 1);
		b->p = np;
		b->cap = cap;
		if (np == NULL)
			return;
	}
	memcpy(b->p + b->n, s, n);
	b->n += n;
	b->p[b->n] = '\0';
}

static void
sb_str(struct sbuf *b, const char *s)
{
	sb_add(b, s, strlen(s));
}

static void
sb_init(struct sbuf *b, struct arena *a)
{
	b->a = a;
	b->n = 0;
	b->cap = 256;
	b->p = arena_take(a, 1, 1, b->cap);
	if (b->p != NULL)
		b->p[0] = '\0';
}

/* Plugins list plus CCE; false when a name would need quoting (then the
   knob is skipped) or CCE is on already. */
static bool
cce_knob(struct knob *k, const struct doc *d, struct arena *a)
{
	const struct doc_pair *p = doc_map_get(d->root, "plugins");
	struct sbuf b;
	size_t i;

	sb_init(&b, a);
	sb_str(&b, "plugins:\n");
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
			sb_str(&b, "  - ");
			sb_str(&b, v->text);
			sb_str(&b, "\n");
		}
	sb_str(&b, "  - ");
	sb_str(&b, cce);
	sb_str(&b, "\n");
	k->yaml = b.p;
	k->why = "Cut Cross Entropy never materialises the logits";
	k->shared = NULL;
	return k->yaml != NULL;
}

/*
 * A parsed knob as JSON text: the value v (a string, integer, bool,
 * null, list or mapping of them), appended to b.  Knob strings are plain
 * identifiers and paths (no quote, backslash or control character: see
 * cce_knob), written as is.
 */
static void
value_json(struct sbuf *b, const struct doc_node *v)
{
	char num[32];
	size_t i;

	switch (v->kind) {
	case DOC_STR:
		sb_str(b, "\"");
		sb_str(b, v->text);
		sb_str(b, "\"");
		return;
	case DOC_INT:
		snprintf(num, sizeof(num), "%lld", v->i);
		sb_str(b, num);
		return;
	case DOC_BOOL:
		sb_str(b, v->b ? "true" : "false");
		return;
	case DOC_SEQ:
		sb_str(b, "[");
		for (i = 0; b->p != NULL && i < v->n; i++) {
			if (i > 0)
				sb_str(b, ",");
			value_json(b, v->items[i]);
		}
		sb_str(b, "]");
		return;
	case DOC_MAP:
		sb_str(b, "{");
		for (i = 0; b->p != NULL && i < v->n; i++) {
			sb_str(b, i > 0 ? ",\"" : "\"");
			sb_str(b, v->pairs[i].key->text);
			sb_str(b, "\":");
			value_json(b, v->pairs[i].value);
		}
		sb_str(b, "}");
		return;
	case DOC_NULL:
	case DOC_FLOAT:
	case DOC_TIMESTAMP:
		break;
	}
	sb_str(b, "null");
}

/* The members of a knob's parsed mapping, "\"key\":value,...". */
static char *
members_json(const struct doc_node *root, struct arena *a)
{
	struct sbuf b;

	sb_init(&b, a);
	value_json(&b, root);
	if (b.p == NULL)
		return NULL;
	b.p[b.n - 1] = '\0';	/* "{...}" -> "..." */
	return b.p + 1;
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
	struct err pe = { 0 };
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
	if (plan_build(&p, &merged, ctx, &t, &pe) == 0) {
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
	/* A suggestion must fit with the allocator's whole reserve: a peak
	   at the capacity is one whose reserve the headroom had to clip
	   (core/estimate.c totals), which fits only by the allocator
	   freeing its cache and retrying. */
	if (!est.fits || est.per_gpu_peak_gib >= est.capacity_gib ||
	    est.per_gpu_peak_gib >= e->per_gpu_peak_gib)
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

/*
 * The knobs that could help this run (estimator.md's levers, each only
 * where it changes something), into k (16 at most); how many.  Only the
 * micro batch and CCE knobs depend on the config: the others are
 * constant, and their documents are parsed once per process.
 */
static size_t
knobs_for(struct knob *k, const struct report *r, struct arena *a)
{
	const struct plan *p = r->plan;
	bool ds = strcmp(p->strategy, "deepspeed") == 0;
	bool fsdp = strncmp(p->strategy, "fsdp", 4) == 0;
	size_t nk = 0;

	if (!p->gradient_checkpointing)
		k[nk++] = knob_const(K_GC);
	if (p->micro_batch_size > 1) {
		long long m = p->micro_batch_size / 2;

		k[nk].yaml = arena_printf(a, "micro_batch_size: %lld\n"
		    "gradient_accumulation_steps: %lld\n", m,
		    p->gradient_accumulation_steps * p->micro_batch_size / m);
		k[nk].why = "half the micro batch, twice the accumulation: the "
		    "same global batch";
		k[nk].shared = NULL;
		if (k[nk].yaml != NULL)
			nk++;
	}
	if (p->world > 1 && !fsdp && !(ds && p->zero_stage == 3))
		k[nk++] = knob_const(K_ZERO3);
	if (p->world > 1 && !ds && !fsdp)
		k[nk++] = knob_const(K_FSDP2);
	if (ds && !(p->ds_offload_optimizer && p->ds_offload_param))
		k[nk++] = knob_const(K_OFFLOAD_ALL);
	if (p->activation_offloading == NULL)
		k[nk++] = knob_const(K_ACT_OFFLOAD);
	if (cce_knob(&k[nk], r->doc, a))
		nk++;
	if (p->adapter == NULL)
		k[nk++] = knob_const(K_LORA);
	if (p->adapter == NULL || strcmp(p->adapter, "qlora") != 0)
		k[nk++] = knob_const(K_QLORA);
	if (p->sequence_len >= 16384 && p->world >= 2 && p->cp <= 1 &&
	    p->world % 2 == 0)
		k[nk++] = knob_const(K_CP);
	return nk;
}

/*
 * Each knob's lines parsed once (a constant knob's once per process, the
 * others into a) and written as JSON members.  0, ERR_NOMEM, or
 * ERR_INTERNAL when a knob of ours does not parse.
 */
static int
knobs_parse(struct knob *k, size_t nk, const struct limits *lim,
    struct arena *a, struct err *e)
{
	size_t i;

	for (i = 0; i < nk; i++) {
		const struct doc *once = k[i].shared != NULL ?
		    doc_parse_shared(k[i].shared, k[i].yaml) : NULL;
		struct doc *kd;
		struct err ke = { 0 };

		if (once != NULL) {
			k[i].root = once->root;
		} else if (doc_parse(&kd, k[i].yaml, strlen(k[i].yaml), lim, a,
		    &ke) == 0) {
			k[i].root = kd->root;
		} else if (ke.code == ERR_NOMEM) {
			return err_set(e, ERR_NOMEM, NULL, "request memory "
			    "budget spent while suggesting changes");
		} else {
			return err_set(e, ERR_INTERNAL, NULL, "suggestion "
			    "'%.60s' does not parse: %s", k[i].yaml, ke.msg);
		}
		k[i].json = members_json(k[i].root, a);
		if (k[i].json == NULL)
			return err_set(e, ERR_NOMEM, NULL, "request memory "
			    "budget spent while suggesting changes");
	}
	return 0;
}

int
suggest_run(struct report *r, const struct context *ctx,
    const struct limits *lim, struct arena *a, struct err *e)
{
	const struct estimate *est = r->estimate;
	struct knob k[16];
	struct suggestion found[48], *out;
	size_t nk, nf = 0, i, size, want;
	unsigned mask;
	bool big;
	double lowest = est != NULL ? est->per_gpu_peak_gib : 0;
	int rv;

	if (est == NULL || !est->known)
		return 0;
	if (est->fits && est->per_gpu_peak_gib < 0.9 * est->capacity_gib)
		return 0;	/* fits with room to spare */
	nk = knobs_for(k, r, a);
	rv = knobs_parse(k, nk, lim, a, e);
	if (rv != 0)
		return rv;
	/* Singles; if none fits, pairs; if none fits, triples (each try is
	   a merge and a re-estimate, ~10 us).  A level is tried only while
	   the best so far is within reach: one more knob rarely takes off
	   more than half the peak. */
	for (size = 1; size <= 3 && nf == 0 && (size == 1 ||
	    lowest < 2 * est->capacity_gib); size++)
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
			if (try_combo(found, &nf, &lowest, k, idx, n, r, est,
			    ctx, a) != 0)
				return err_set(e, ERR_NOMEM, NULL, "request "
				    "memory budget spent while suggesting "
				    "changes");
		}
	qsort(found, nf, sizeof(found[0]), by_speed);
	want = est->fits ? 3 : SUGGEST_MAX;
	for (i = 0, size = 0, big = false; i < nf && size < want; i++) {
		/* One set over SUGGEST_BIG_SET at most (see there). */
		if (strlen(found[i].set_json) > SUGGEST_BIG_SET) {
			if (big)
				continue;
			big = true;
		}
		found[size++] = found[i];
	}
	nf = size;
	out = ARENA_NEW(a, struct suggestion, nf > 0 ? nf : 1);
	if (out == NULL)
		return err_set(e, ERR_NOMEM, NULL, "request memory budget "
		    "spent while suggesting changes");
	memcpy(out, found, nf * sizeof(*out));
	r->suggestions = out;
	r->nsuggestions = nf;
	return 0;
}

int
suggest_init(struct err *e)
{
	size_t i;

	for (i = 0; i < K_CONSTANT; i++)
		if (doc_parse_shared(&knob_docs[i], const_knobs[i].yaml) ==
		    NULL)
			return err_set(e, ERR_NOMEM, NULL, "no memory for the "
			    "suggestion '%.40s'", const_knobs[i].yaml);
	return 0;
}
