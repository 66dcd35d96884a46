/*
 * core/estimate: see estimate.h.  Section numbers refer to
 * ../shared/reference/estimator.md, where each formula's source is given.
 */
#include "estimate.h"
#include "estimate_int.h"
#include "hfconfig.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "doc.h"
#include "gpu.h"
#include "models.h"
#include "plan.h"
#include "report.h"

/* ---- the estimate ---------------------------------------------------- */


/*
 * A catalog row with only a nominal size (verification "unverified"):
 * guess a Llama-like dense shape with that many parameters.  Judgement,
 * not a published fact: head size 128, h = 128 L (Llama-2/3 and Qwen
 * widths sit near it), SwiGLU I = 8h/3, N ~ 12 L h^2, and a 128k vocabulary
 * (the common size of recent models).  The finding says so.
 */
static bool
arch_nominal(struct arch *x, const struct model_def *m)
{
	double h;

	if (m == NULL || m->total_params <= 0)
		return false;
	x->N = x->Na = (double)m->total_params;
	h = cbrt(x->N * 128 / 12);
	h = h < 512 ? 512 : (double)(long long)(h / 128 + 0.5) * 128;
	x->h = h;
	x->L = (double)(long long)(h / 128 + 0.5);
	x->a = x->akv = h / 128;
	x->d = 128;
	x->I = 8 * h / 3;
	/* Embeddings stay under a third of a small model's parameters. */
	x->V = 128256;
	if (2 * x->V * h > x->N / 3)
		x->V = x->N / 3 / (2 * h);
	x->E = x->k = x->kdense = x->ns = 0;
	x->Ie = x->I;
	x->tied = false;
	return true;
}

/*
 * The architecture of catalog row (or config.json) m.  A row with its
 * architecture but no verified total (a "special" architecture in
 * models.tsv) gets estimator.md section 1's count, and *derived says so.
 */
static bool
arch_of(struct arch *x, const struct model_def *m, bool *derived)
{
	long long total = m != NULL ? m->total_params : 0;
	long long active = m != NULL ? m->active_params : 0;

	*derived = false;
	if (m == NULL || m->hidden_size <= 0 || m->num_hidden_layers <= 0 ||
	    m->num_attention_heads <= 0 || m->vocab_size <= 0)
		return false;
	if (total <= 0) {
		if (!hfconfig_count(m, &total, &active))
			return false;
		*derived = true;
	}
	x->h = (double)m->hidden_size;
	x->L = (double)m->num_hidden_layers;
	x->a = (double)m->num_attention_heads;
	x->akv = m->num_key_value_heads > 0 ?
	    (double)m->num_key_value_heads : x->a;
	x->d = m->head_dim > 0 ? (double)m->head_dim : x->h / x->a;
	x->I = m->intermediate_size > 0 ? (double)m->intermediate_size :
	    4 * x->h;
	x->V = (double)m->vocab_size;
	x->E = m->num_experts > 0 ? (double)m->num_experts : 0;
	x->k = m->num_experts_per_tok > 0 ? (double)m->num_experts_per_tok :
	    0;
	x->Ie = m->moe_intermediate_size > 0 ?
	    (double)m->moe_intermediate_size : x->I;
	x->ns = x->E > 0 && m->shared_experts > 0 &&
	    m->shared_experts < 64 ? (double)m->shared_experts : 0;
	x->kdense = x->E > 0 && m->first_k_dense > 0 &&
	    m->first_k_dense < m->num_hidden_layers ?
	    (double)m->first_k_dense : 0;
	x->N = (double)total;
	x->Na = active > 0 ? (double)active : x->N;
	x->tied = m->tie_word_embeddings == 1;
	return true;
}

static const char *
largest(const struct mem_breakdown *b, double *gib)
{
	static const char *const names[] = { "weights", "gradients",
	    "optimizer", "activations", "logits", "buffers", "runtime" };
	double v[7];
	size_t i, best = 0;

	v[0] = b->weights_gib;
	v[1] = b->gradients_gib;
	v[2] = b->optimizer_gib;
	v[3] = b->activations_gib;
	v[4] = b->logits_gib;
	v[5] = b->buffers_gib;
	v[6] = b->runtime_gib;
	for (i = 1; i < 7; i++)
		if (v[i] > v[best])
			best = i;
	*gib = v[best];
	return names[best];
}

const struct model_def *
estimate_model(const struct doc *d)
{
	const struct doc_node *bm = doc_map_value(d->root, "base_model");
	const struct doc_node *bc = doc_map_value(d->root,
	    "base_model_config");
	const struct model_def *m = NULL;

	if (bm != NULL && bm->kind == DOC_STR)
		m = models_find(bm->text);
	if (m == NULL && bc != NULL && bc->kind == DOC_STR)
		m = models_find(bc->text);
	return m;
}

/* ---- the memory terms (docs/estimator.md gives each one's source) ---- */

/*
 * The judgement terms, fitted by `make calibrate` (tests/calibrate) on
 * ../shared/reference/memory-measured.tsv with leave-one-model-family-out
 * cross-validation; docs/estimator.md has the table.  Everything else in
 * this file is a count of tensors.
 */
const struct estimate_calib estimate_calib_default = {
	/* 8% of the states: they are allocated once, in large blocks. */
	.reserve_static = 0.08,
	/* 32% of what is freed and reallocated each step, both phases
	   (activations and the loss's buffers, DDP and dequantization
	   buffers). */
	.reserve_transient = 0.32,
	/* 120% of a sharded run's gathered units and collective buffers:
	   blocks cached on the collectives' streams. */
	.reserve_sharded = 1.20,
	/* CUDA context, cuBLAS/cuDNN workspaces, kernels (estimator.md 7
	   gives 0.5-1.5 GiB; Axolotl's own log reads 0.55 GB "misc" before
	   anything is allocated).  Only the device readings (the
	   2023-2024 READMEs) see it, and their fit takes the top of the
	   range: docs/estimator.md section 5 says why. */
	.context_gib = 1.50,
	/* NCCL communicators and their channel buffers on more than one
	   GPU: judgement, not fitted (too few multi-GPU rows to fit it
	   apart from the sharded reserve; Axolotl's 8-GPU log reads
	   1.05-1.16 GB "misc", context included). */
	.comm_gib = 0.50,
	/* measured / estimate over the cross-validated rows: 10th and 90th
	   percentiles. */
	.range_low = 0.82,
	.range_high = 1.31,
};

/* Whether model_type t starts with one of the prefixes in list. */
static bool
type_in(const char *t, const char *const *list)
{
	size_t i;

	for (i = 0; t != NULL && list[i] != NULL; i++)
		if (strncmp(t, list[i], strlen(list[i])) == 0)
			return true;
	return false;
}

/*
 * Section 5, counted from what autograd keeps (docs/estimator.md
 * "Activations"): bytes one decoder layer saves per token, before tensor
 * parallelism.  Transformers' RMSNorm upcasts its input to fp32 and the
 * pow and the multiply keep that copy (4h), the next matmul keeps the
 * 16-bit output (2h), and a trainable norm weight keeps the normalized
 * value too (2h, full fine-tune).  Liger's RMSNorm, and torch.compile's
 * fused kernels, keep the 16-bit input and the output only (4h).  The
 * attention keeps the rotated q, k, v and its output (flash attention:
 * no score matrix); SDPA's output is made contiguous for o_proj, one more
 * copy.  Families with q/k norms (Qwen3, Gemma 3/4, OLMo 2/3, ...) norm
 * q and k the same way.  A SwiGLU MLP keeps the gate and up outputs, the
 * SiLU output and the product (8I); Liger's fused SwiGLU and compile's
 * keep gate, up and the product (6I).  Gemma 2/3/4 norm before and after
 * each block: four norms.
 */
static double
layer_bytes(const struct run *r, bool fused)
{
	static const char *const sandwich[] = { "gemma2", "gemma3", "gemma4",
	    NULL };
	static const char *const qknorm[] = { "qwen3", "gemma3", "gemma4",
	    "olmo2", "olmo3", "hunyuan", "apertus", "lfm2", "afmoe", NULL };
	const struct doc *d = r->d;
	const struct arch *x = &r->x;
	const char *t = r->model_type;
	double hq = x->a * x->d, hkv = x->akv * x->d, norms, per_norm, b;
	bool fnorm = fused || doc_truthy(doc_map_value(d->root,
	    "liger_rms_norm"));
	bool fglu = fused || doc_truthy(doc_map_value(d->root,
	    "liger_glu_activation"));
	double mlp = fglu ? 6 : 8;

	norms = type_in(t, sandwich) ? 4 : 2;
	per_norm = fnorm ? 4 : 6 + (r->lora ? 0 : 2);
	b = norms * per_norm * x->h;
	if (type_in(t, qknorm))
		b += (fnorm ? 2 : 4 + (r->lora ? 0 : 2)) * (hq + hkv);
	b += 2 * hq + 4 * hkv + 2 * hq;
	if (strcmp(r->p->attention, "sdpa") == 0)
		b += 2 * hq;
	if (x->E > 0) {
		double k = x->k > 0 ? x->k : 1;

		/* Routed token slots: the permuted copy and each expert's
		   MLP; the router's fp32 logits. */
		b += k * mlp * x->Ie + x->E * 4 + k * x->h * 2;
	} else
		b += mlp * x->I;
	return b;
}

/* Section 5: saved activations at the peak, per micro batch of T; *tail
   is what is left at the end of the backward pass (the first layer's,
   recomputed under checkpointing, and its gradients), *rec the layer
   recomputed under checkpointing (0 without). */
static double
activations(struct terms *t, const struct run *r, double T, double *tail,
    double *rec)
{
	const struct doc *d = r->d;
	const struct plan *p = r->p;
	const struct arch *x = &r->x;
	const struct doc_node *gc = doc_map_value(d->root,
	    "gradient_checkpointing");
	double hq = x->a * x->d, Tl = T / r->cp, a_layer, act;
	bool compiled = doc_truthy(doc_map_value(d->root, "torch_compile"));

	a_layer = Tl * layer_bytes(r, compiled) / r->tp;
	if (strcmp(p->attention, "eager") == 0)
		a_layer += 6 * x->a / r->tp * (double)p->sequence_len *
		    (double)p->sequence_len * (double)p->micro_batch_size /
		    r->cp;
	/* LoRA dropout keeps a dropped-out copy of each adapted input and
	   its mask (5.2), in every stored layer and in the recomputed
	   one. */
	if (r->lora && estimate_num(doc_map_value(d->root, "lora_dropout"), 0) > 0)
		a_layer += Tl * 3 * (3 * x->h + hq + 2 * x->h + x->I);
	*tail = a_layer * 1.5;
	*rec = 0;
	if (p->gradient_checkpointing || (r->fsdp && doc_truthy(estimate_fsdp_value(d,
	    "activation_checkpointing")))) {
		double ckpt = x->L * 2 * Tl * x->h;

		if ((gc != NULL && gc->kind == DOC_STR &&
		    strncmp(gc->text, "offload", 7) == 0) ||
		    (p->activation_offloading != NULL &&
		    strcmp(p->activation_offloading, "false") != 0)) {
			t->cpu += ckpt;
			ckpt = 4 * Tl * x->h;
		}
		*rec = a_layer * 1.5;
		act = ckpt + *rec;
	} else if (p->activation_offloading != NULL &&
	    strcmp(p->activation_offloading, "false") != 0) {
		t->cpu += x->L * a_layer;
		act = 2 * a_layer;
	} else
		act = x->L * a_layer + 2 * Tl * x->h;
	return act;
}

/* Section 6: logits and loss. */
static double
loss_bytes(const struct run *r, double T)
{
	const struct doc *d = r->d;
	const struct arch *x = &r->x;
	const struct doc_node *plugins = doc_map_value(d->root, "plugins");
	double Tl = T / r->cp;
	bool prm = plan_py_on(d->root, "process_reward_model");

	/* A reward model's head is a classifier: T x num_labels logits
	   (num_labels 1, or 2 for a process reward model), no T x V. */
	if (prm || plan_py_on(d->root, "reward_model"))
		return 10 * Tl * estimate_num(doc_map_value(d->root,
		    "num_labels"), prm ? 2 : 1);
	/* Each loss patch is its plugin's, and applies when its flag is
	   on as pydantic reads it (cut_cross_entropy defaults to true with
	   its plugin; null is off). */
	if (doc_seq_has(plugins, "CutCrossEntropy") && (doc_map_get(d->root,
	    "cut_cross_entropy") == NULL || plan_py_on(d->root,
	    "cut_cross_entropy")))
		return Tl * x->h * 2;
	if (doc_seq_has(plugins, "LigerPlugin") && plan_py_on(d->root,
	    "liger_fused_linear_cross_entropy")) {
		double chunks = x->V / x->h;

		return Tl / (chunks < 1 ? 1 : chunks) * x->V * 8;
	}
	/* Chunked cross-entropy keeps the 16-bit logits and upcasts one
	   chunk at a time (section 6: torchtune's CEWithChunkedOutputLoss,
	   Axolotl's chunked_cross_entropy, 8 chunks by default). */
	if (plan_py_on(d->root, "chunked_cross_entropy"))
		return 3 * Tl * x->V / r->tp;
	return 10 * Tl * x->V / r->tp;
}

void
estimate_run(struct estimate *e, const struct doc *d, const struct plan *p,
    const struct context *ctx)
{
	estimate_run_calib(e, d, p, ctx, &estimate_calib_default);
}

/*
 * The model and its shape (catalog row, config.json, or a nominal guess),
 * the capacity of the GPU; false when there is nothing to estimate (no
 * GPU in the catalog, no model).
 */
static bool
estimate_shape(struct estimate *e, struct arch *x, const struct doc *d,
    const struct context *ctx, const struct gpu *g)
{
	const struct doc_node *bm = doc_map_value(d->root, "base_model");

	e->model_id = bm != NULL && bm->kind == DOC_STR ? bm->text : NULL;
	e->model = ctx->model != NULL ? ctx->model : estimate_model(d);
	e->source = e->model == NULL ? "unknown" : e->model->verification !=
	    NULL && strcmp(e->model->verification, "config") == 0 ?
	    e->model->source : "catalog";
	if (e->model != NULL)
		e->params = e->model->total_params;
	/* Usable memory: the nominal size less ~0.5% the driver keeps
	   (an 80 GB H100 reports 79.6 GiB, DESIGN.md's example). */
	e->capacity_gib = ctx->gpu_memory_gib > 0 ? ctx->gpu_memory_gib :
	    g != NULL ? g->memory_gib * 0.995 : 0;
	if (g == NULL)
		return false;
	if (!arch_of(x, e->model, &e->derived)) {
		if (!arch_nominal(x, e->model))
			return false;
		e->nominal = true;
	}
	e->known = true;
	e->params = (long long)x->N;
	e->unverified_shape = e->nominal || e->derived ||
	    (e->model->verification != NULL &&
	    (strncmp(e->model->verification, "partial", 7) == 0 ||
	    strncmp(e->model->verification, "unverified", 10) == 0));
	return true;
}

/*
 * Section 5: T tokens per micro batch, sequence_len x micro_batch_size:
 * packing fills it, and without packing the longest batch is padded to it
 * (the worst case a gate needs).  Section 6: preference pairs concatenate
 * chosen and rejected; DPO-style methods add a frozen reference model
 * (to t->weights) unless an adapter lets the base serve as one.
 */
static double
tokens(struct terms *t, const struct run *r)
{
	const struct plan *p = r->p;
	const struct doc_node *rl = doc_map_value(r->d->root, "rl");
	double T = (double)p->micro_batch_size * (double)p->sequence_len;
	bool ref = false;

	if (rl != NULL && rl->kind == DOC_STR) {
		ref = strcmp(rl->text, "dpo") == 0 ||
		    strcmp(rl->text, "ipo") == 0 ||
		    strcmp(rl->text, "kto") == 0;
		if (ref || strcmp(rl->text, "orpo") == 0 ||
		    strcmp(rl->text, "simpo") == 0)
			T *= 2;
	}
	if (ref && !r->lora)
		t->weights += r->x.N * r->wbytes / (r->fsdp || (r->ds &&
		    p->zero_stage == 3) ? r->G : 1) / r->tp;
	return T;
}

/*
 * Sections 5 and 6 at the peak of the step: the activations and the
 * loss's buffers for T tokens, and which of them (and of a full
 * fine-tune's gradients) coexist.  Returns the churn: what is freed and
 * reallocated every step, both phases, for section 7's reserve.
 */
static double
peak_phase(struct terms *t, const struct run *r, double T)
{
	const struct plan *p = r->p;
	double tail = 0, rec = 0, churn;

	t->act = activations(t, r, T, &tail, &rec);
	t->logits = loss_bytes(r, T);
	churn = t->act + t->logits;
	/* Under checkpointing the loss's buffers are freed (its backward
	   runs first, then the head's) before the first layer is
	   recomputed: the two never coexist, and the breakdown shows the
	   larger, at the peak. */
	if (rec > 0) {
		if (t->logits >= rec)
			t->act -= rec;
		else
			t->logits = 0;
	}
	/* The gradients of a full fine-tune are set to None at every
	   optimizer step (optimizer.zero_grad(set_to_none=True), PyTorch's
	   default since 2.0, and the HF Trainer's model.zero_grad()), and
	   backward frees each layer's activations as it writes its
	   gradients.  With one micro batch per step they never coexist in
	   full: the peak is the larger of the end of the forward pass (the
	   activations and the loss, the head's gradient the first written)
	   and the end of the backward pass (every gradient, the first
	   layer's activations).  With accumulation the gradients of the
	   previous micro batches stay through the next forward.  DeepSpeed
	   keeps its gradient partitions allocated: not there. */
	if (!r->lora && !r->ds && p->gradient_accumulation_steps <= 1 &&
	    t->grads > 0) {
		double hg = r->n_train > 0 ? t->grads * (r->x.V * r->x.h) /
		    r->n_train : 0;
		double fwd = t->act + t->logits + (hg < t->grads ? hg :
		    t->grads);
		double bwd = t->grads + tail;

		if (bwd >= fwd) {
			t->act = tail;
			t->logits = 0;
		} else
			t->grads = hg < t->grads ? hg : t->grads;
	}
	return churn;
}

/*
 * Section 7: the caching allocator's reserve grows with what is freed
 * and reallocated every step (activations, logits, gathered units) far
 * more than with states allocated once, and most with a sharded run's
 * gathered units: the allocator caches blocks per stream, and FSDP and
 * ZeRO-3 gather and reduce on their own streams, so those blocks are not
 * reused by the compute stream's tensors (PyTorch "CUDA semantics":
 * memory management is per stream; FSDP's limit_all_gathers exists to
 * bound it).  The CUDA context and libraries, and NCCL's communicators on
 * more than one GPU, sit outside PyTorch's accounting.  The reserve grows
 * with the transient tensors of both phases of the step: the blocks the
 * loss frees stay cached when the recomputed layers or the gradients ask
 * for other sizes.  Fills the breakdown, the peak, the range and the fit.
 */
static void
totals(struct estimate *e, const struct terms *t, const struct run *r,
    const struct estimate_calib *c, double churn)
{
	struct mem_breakdown *b = &e->breakdown;
	/* Gathered units and reduce-scatter buffers of a sharded run live
	   on the collectives' own CUDA stream. */
	bool sharded = r->fsdp || (r->ds && r->p->zero_stage == 3);
	double stat = t->weights + t->grads + t->optim;
	double trans = churn + (sharded ? 0 : t->buffers);
	double gib, reserve, head;

	e->churn_gib = churn / GIB;
	b->weights_gib = t->weights / GIB;
	b->gradients_gib = t->grads / GIB;
	b->optimizer_gib = t->optim / GIB;
	b->activations_gib = t->act / GIB;
	b->logits_gib = t->logits / GIB;
	b->buffers_gib = t->buffers / GIB;
	reserve = (c->reserve_static * stat + c->reserve_transient * trans +
	    (sharded ? c->reserve_sharded * t->buffers : 0)) / GIB;
	b->runtime_gib = c->context_gib + (r->p->world > 1 ? c->comm_gib : 0);
	gib = b->weights_gib + b->gradients_gib + b->optimizer_gib +
	    b->activations_gib + b->logits_gib + b->buffers_gib;
	/* The allocator caches only what the device has: when a cudaMalloc
	   fails it frees its unused cached blocks and retries (PyTorch
	   "CUDA semantics", memory management), so the reserve a device
	   shows is bounded by the headroom.  The same run reads 16.2 GB on
	   a 24 GB RTX 4090 and 30.3 GB on a 48 GB RTX A6000 in torchtune's
	   table (memory-measured.tsv).  What does not fit in the headroom
	   is the risk of a fragmentation OOM: range_gib's high end keeps
	   it, and memory.low_headroom reports it. */
	head = e->capacity_gib - gib - b->runtime_gib;
	b->reserve_gib = reserve < head ? reserve : head > 0 ? head : 0;
	e->allocated_peak_gib = gib;
	e->per_gpu_peak_gib = gib + b->reserve_gib + b->runtime_gib;
	e->range_gib[0] = e->per_gpu_peak_gib * c->range_low;
	e->range_gib[1] = (gib + reserve + b->runtime_gib) * c->range_high;
	e->cpu_offload_gib = t->cpu / GIB;
	e->fits = e->per_gpu_peak_gib <= e->capacity_gib;
	e->largest_term = largest(b, &e->largest_gib);
}

/*
 * The driver: the model's shape, then each term of the breakdown in its
 * section's function (states: weights, gradients, optimizer and buffers,
 * sections 2-4; activations and logits at the peak, 5-6; the reserve and
 * the runtime, 7), the speed (10-11), and the totals.
 */
void
estimate_run_calib(struct estimate *e, const struct doc *d,
    const struct plan *p, const struct context *ctx,
    const struct estimate_calib *c)
{
	const struct gpu *g = gpu_find(ctx->gpu);
	struct terms t;
	struct run r;
	double T, churn;

	memset(e, 0, sizeof(*e));
	memset(&t, 0, sizeof(t));
	memset(&r, 0, sizeof(r));
	if (!estimate_shape(e, &r.x, d, ctx, g))
		return;
	r.linear_experts = c->linear_experts;
	estimate_run_init(&r, d, p, e->model);
	e->trainable_params = (r.lora ? r.n_lora + r.n_mts : r.n_train) <
	    9e18 ? (long long)(r.lora ? r.n_lora + r.n_mts : r.n_train) : 0;
	estimate_states(&t, &r);
	T = tokens(&t, &r);
	e->activation_tokens = T;
	e->padded = !p->sample_packing;
	churn = peak_phase(&t, &r, T);
	estimate_throughput(e, d, p, ctx, g, &r.x, r.lora, r.qlora, r.n_lora,
	    r.n_linear, r.n_embed, r.fsdp, r.ds, r.ddp);
	totals(e, &t, &r, c, churn);
}
