/*
 * tests/calibrate/calibrate: fit the estimator's judgement terms (struct
 * estimate_calib: the caching allocator's reserve, the CUDA context, the
 * range) on the measured runs of ../shared/reference/memory-measured.tsv
 * that name an Axolotl example config, and measure how well the estimate
 * generalizes with leave-one-model-family-out cross-validation.
 *
 * Each row is re-created as tests/calibrate/rows.tsv says (the example
 * config, any keys the row's variant adds, its GPUs) and checked with the
 * real pipeline (check_run).  The tensor terms are never fitted: only
 * the reserve per GiB of states, the reserve per GiB of transient memory
 * and the fixed context, by grid search under a pinball loss on
 * ln(measured / estimate) that weighs under-estimates (the direction that
 * lets a run through and then OOMs) PINBALL_TAU to 1 - PINBALL_TAU.
 *
 * What each row is compared with: a row measured as allocated memory
 * (torch.cuda.max_memory_allocated) with allocated_peak_gib; a row
 * measured as reserved memory, and a row whose kind is unknown (the
 * READMEs mostly quote what nvidia-smi or the reserved counter showed,
 * and the larger reading is the one an OOM gate must cover), with
 * per_gpu_peak_gib.  The table also gives the unknown rows compared with
 * the nearer of the two figures, to show how much that choice matters.
 * The hold-out (external.tsv) says in its reading column which counter a
 * published figure of unknown kind is, from its source; its table gives
 * those rows against that counter and against per_gpu_peak_gib.
 *
 * Usage: calibrate [-v | -b] [-d] [-f] [-t TAU] [SHARED_DIR]  (make
 * calibrate; -v lists every row, -b its breakdown too, -d the fitted parts
 * as TSV, -f each row's held-out residual and candidate features as TSV)
 */
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/arena.h"
#include "core/check.h"
#include "core/doc.h"
#include "core/estimate.h"
#include "core/models.h"
#include "core/plan.h"
#include "tests/fixture.h"

#define MAX_ROWS	256
#define MAX_FAMILIES	64
#define GIB		1073741824.0

enum kind { K_ALLOCATED, K_RESERVED, K_UNKNOWN };

/* Which rows a table line takes besides strategy, adapter and kind. */
enum sel {
	S_ANY,
	S_COUNTER,	/* read from PyTorch's reserved counter */
	S_DEVICE,	/* read from the device (nvidia-smi, W&B) */
	S_PACKED,	/* sample_packing fills sequence_len */
	S_PADDED,	/* not packed: the estimate pads the worst batch */
	S_UNFLAGGED	/* the source does not flag the figure itself */
};

struct row {
	char id[96];
	char family[32];
	char strategy[16];	/* single | ddp | zero | fsdp */
	char adapter[8];	/* full | lora | qlora */
	enum kind kind;
	double measured;	/* GiB */
	bool known;		/* the estimate has memory figures */
	/* The estimate's parts that the judgement terms act on, GiB. */
	double alloc, stat, trans, coll;
	double capacity;	/* GiB the device offers */
	bool multi;		/* more than one GPU: NCCL communicators */
	bool packed;		/* sample_packing */
	bool flagged;		/* the source itself flags the figure
				   (rows.tsv flag) */
	bool linear_experts;	/* measured on Transformers 4.x, whose MoE
				   experts were nn.Linear (rows.tsv stack) */
	bool counter;		/* the figure is PyTorch's reserved counter
				   (no CUDA context, no NCCL): a reserved
				   row, or an unknown one from a README that
				   quotes Axolotl's own log */
	bool read_as_allocated;	/* unknown kind, read from its source as
				   the allocated counter (external.tsv) */
	double heldout;		/* the cross-validated estimate */
	struct mem_breakdown b;	/* under the shipped terms (-b) */
	char feat[768];		/* -f: candidate features, TSV */
};

static struct row rows[MAX_ROWS];
static size_t nrows;

/* The quantile the loss aims the estimate at (-t overrides for study). */
static double PINBALL_TAU = 0.5;

/* per_gpu_peak_gib of row r under c (the estimator's section 7: the
   reserve bounded by the headroom). */
static double
predict_device(const struct row *r, const struct estimate_calib *c)
{
	double runtime = c->context_gib + (r->multi ? c->comm_gib : 0);
	double reserve = c->reserve_static * r->stat +
	    c->reserve_transient * r->trans + c->reserve_sharded * r->coll;
	double head = r->capacity - r->alloc - runtime;

	if (reserve > head)
		reserve = head > 0 ? head : 0;
	return r->alloc + reserve + runtime;
}

/* What torch.cuda.max_memory_reserved() would read for row r under c:
   the tensors and the allocator's reserve (bounded as on the device),
   without the CUDA context and NCCL, which live outside PyTorch's
   allocator. */
static double
predict_reserved(const struct row *r, const struct estimate_calib *c)
{
	return predict_device(r, c) - c->context_gib -
	    (r->multi ? c->comm_gib : 0);
}

/* The figure row r is compared with, under c. */
static double
predict(const struct row *r, const struct estimate_calib *c)
{
	if (r->kind == K_ALLOCATED || r->read_as_allocated)
		return r->alloc;
	return r->counter ? predict_reserved(r, c) : predict_device(r, c);
}

/* The pinball loss of ln(measured / estimate) over rows in set. */
static double
loss(const bool *in, const struct estimate_calib *c)
{
	double sum = 0;
	size_t i;

	for (i = 0; i < nrows; i++) {
		double u;

		if (!in[i] || !rows[i].known)
			continue;
		u = log(rows[i].measured / predict(&rows[i], c));
		sum += u > 0 ? PINBALL_TAU * u : (PINBALL_TAU - 1) * u;
	}
	return sum;
}

/* Grid search of the three fitted terms on the rows in set. */
static struct estimate_calib
fit(const bool *in)
{
	struct estimate_calib c = estimate_calib_default, best = c;
	double bl = INFINITY;
	int a, b, g, k;

	/* The grid stays inside what estimator.md section 7 gives for
	   each term, so a fold without some family cannot trade one term
	   for another outside it: the CUDA context and libraries 0.5-1.5
	   GiB, the caching allocator's reserve 5-30% of the tensors
	   (f_frag 1.05-1.30; up to 0.3 of the states, and of the
	   transient tensors, which churn more, up to 1.0).  A sharded
	   run's collective buffers are cached on their own streams: up to
	   twice their size. */
	for (a = 0; a <= 15; a++)
		for (b = 0; b <= 25; b++)
			for (g = 0; g <= 40; g++)
				for (k = 0; k <= 10; k++) {
					double l;

					c.reserve_static = a * 0.02;
					c.reserve_transient = b * 0.04;
					c.reserve_sharded = g * 0.05;
					c.context_gib = 0.5 + k * 0.1;
					l = loss(in, &c);
					if (l < bl - 1e-12) {
						bl = l;
						best = c;
					}
				}
	return best;
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* The q-quantile (linear interpolation) of v[0..n), sorted in place. */
static double
quantile(double *v, size_t n, double q)
{
	double pos;
	size_t lo;

	if (n == 0)
		return NAN;
	qsort(v, n, sizeof(*v), cmp_double);
	pos = q * (double)(n - 1);
	lo = (size_t)pos;
	if (lo + 1 >= n)
		return v[n - 1];
	return v[lo] + (pos - (double)lo) * (v[lo + 1] - v[lo]);
}

/* One line of the table: rows matching (strategy, adapter, kind); NULL
   matches any.  nearest: compare unknown rows with the nearer of the two
   figures (a sensitivity line, not the headline). */
static void
table_line(const struct row *set, size_t count, const char *label,
    const char *strategy, const char *adapter, int kind, bool nearest,
    enum sel sel)
{
	double err[MAX_ROWS];
	size_t i, n = 0, within = 0, under = 0;

	for (i = 0; i < count; i++) {
		const struct row *r = &set[i];
		double est = r->heldout;

		if (!r->known || (strategy != NULL &&
		    strcmp(r->strategy, strategy) != 0) || (adapter != NULL &&
		    strcmp(r->adapter, adapter) != 0) || (kind >= 0 &&
		    (int)r->kind != kind) ||
		    (sel == S_COUNTER && !r->counter) ||
		    (sel == S_DEVICE && (r->counter ||
		    r->kind == K_ALLOCATED)) ||
		    (sel == S_PACKED && !r->packed) ||
		    (sel == S_PADDED && r->packed) ||
		    (sel == S_UNFLAGGED && r->flagged))
			continue;
		if (nearest && r->kind == K_UNKNOWN) {
			/* The held-out reserve and context, rescaled. */
			double dev = est, alloc = r->alloc;

			est = fabs(alloc - r->measured) <
			    fabs(dev - r->measured) ? alloc : dev;
		}
		err[n] = (est - r->measured) / r->measured;
		if (fabs(err[n]) <= 0.25)
			within++;
		if (err[n] < -0.25)
			under++;
		err[n] = fabs(err[n]);
		n++;
	}
	if (n == 0) {
		printf("| %-38s |   0 |      - |      - |      - |\n", label);
		return;
	}
	printf("| %-38s | %3zu | %5.1f%% | %5.1f%% | %5.1f%% |\n", label, n,
	    100 * quantile(err, n, 0.5), 100.0 * (double)within / (double)n,
	    100.0 * (double)under / (double)n);
}

/* The breakdown of row r under the shipped terms (-b). */
static void
print_terms(const struct row *r)
{
	const struct mem_breakdown *b = &r->b;

	printf("|   | w %.1f g %.1f o %.1f act %.1f logits %.1f buf %.1f "
	    "reserve %.1f runtime %.1f |\n", b->weights_gib, b->gradients_gib,
	    b->optimizer_gib, b->activations_gib, b->logits_gib,
	    b->buffers_gib, b->reserve_gib, b->runtime_gib);
}

static const char *
kind_name(enum kind k)
{
	return k == K_ALLOCATED ? "allocated" : k == K_RESERVED ? "reserved" :
	    "unknown";
}

/* Unescape "\n" in place. */
static void
unescape(char *s)
{
	char *w = s;

	for (; *s != '\0'; s++) {
		if (s[0] == '\\' && s[1] == 'n') {
			*w++ = '\n';
			s++;
		} else
			*w++ = *s;
	}
	*w = '\0';
}

/* Column index of name in the header fields h[0..n), or -1. */
static int
column(char **h, size_t n, const char *name)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (strcmp(h[i], name) == 0)
			return (int)i;
	return -1;
}


/* A number's value, or dflt. */
static double
estimate_num_or(const struct doc_node *v, double dflt)
{
	if (v != NULL && v->kind == DOC_INT)
		return (double)v->i;
	if (v != NULL && v->kind == DOC_FLOAT)
		return v->f;
	return dflt;
}

/* -f: the header of the candidate features features() writes. */
static const char FEAT_HEADER[] =
    "w_sh\tg_sh\to_sh\tact_sh\tlogit_sh\tbuf_sh\tV\th\tL\tI\tE"
    "\tmoe\tparams_b\temb16_gib\tlogits32_gib\tmlp_tr_gib"
    "\tdequant_gib\tlinear_max_gib\tT\tmbs\tseq\tgc\tcce\tliger"
    "\topt8bit\tpaged\tadapter_fp32\tcapacity\talloc_cap\tstates_gib"
    "\ttrans_gib\tlora_r\tv5key\tq8\tmodel_type";

/*
 * -f: features a mechanism could make matter, for studying the
 * residuals outside this tool (estimator5's analysis, docs/estimator.md
 * section 7): the breakdown's shares of the tensors, the model's shape,
 * the largest single transient tensors, the switches.
 */
static void
features(struct row *r, const struct report *rep, const struct estimate *e)
{
	const struct mem_breakdown *b = &e->breakdown;
	const struct model_def *m = e->model;
	const struct doc_node *root = rep->doc->root;
	const struct plan *p = rep->plan;
	double a = e->allocated_peak_gib > 0 ? e->allocated_peak_gib : 1;
	double V = 0, h = 0, L = 0, I = 0, E = 0, Ie = 0, k = 1, N = 0;
	double T = e->activation_tokens, lin, rr;
	const char *opt = p->optimizer != NULL ? p->optimizer : "";
	const struct doc_node *ac = doc_map_value(root,
	    "peft_autocast_adapter_dtype");
	bool liger = doc_truthy(doc_map_value(root, "liger_rms_norm")) ||
	    doc_truthy(doc_map_value(root, "liger_glu_activation")) ||
	    doc_truthy(doc_map_value(root,
	    "liger_fused_linear_cross_entropy"));
	bool cce = doc_seq_has(doc_map_value(root, "plugins"),
	    "CutCrossEntropy") || doc_truthy(doc_map_value(root,
	    "cut_cross_entropy"));

	if (m != NULL) {
		V = (double)m->vocab_size;
		h = (double)m->hidden_size;
		L = (double)m->num_hidden_layers;
		I = (double)m->intermediate_size;
		E = (double)m->num_experts;
		Ie = (double)m->moe_intermediate_size;
		k = m->num_experts_per_tok > 0 ?
		    (double)m->num_experts_per_tok : 1;
		N = (double)m->total_params;
	}
	/* The largest linear a layer dequantizes (QLoRA: one Linear4bit's
	   bf16 weight at a time): the MLP's, or the attention's h x h. */
	lin = (E > 0 && Ie > 0 ? (I > Ie ? I : Ie) : I) * h;
	if (h * h > lin)
		lin = h * h;
	rr = estimate_num_or(doc_map_value(root, "lora_r"), 0);
	snprintf(r->feat, sizeof(r->feat),
	    "%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%.0f\t%.0f\t%.0f\t%.0f"
	    "\t%.0f\t%d\t%.2f\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%.0f\t%lld"
	    "\t%lld\t%d\t%d\t%d\t%d\t%d\t%d\t%.1f\t%.3f\t%.3f\t%.3f"
	    "\t%.0f\t%d\t%d\t%s",
	    b->weights_gib / a, b->gradients_gib / a, b->optimizer_gib / a,
	    b->activations_gib / a, b->logits_gib / a, b->buffers_gib / a,
	    V, h, L, I, E, E > 0, N / 1e9,
	    V * h * (m != NULL && m->tie_word_embeddings == 1 ? 1 : 2) * 2 /
	    GIB, T * V * 4 / GIB,
	    T * (E > 0 && Ie > 0 ? k * Ie : I) * 2 / GIB,
	    p->load_in_4bit || p->load_in_8bit ? lin * 2 / GIB : 0,
	    lin * 2 / GIB, T, p->micro_batch_size, p->sequence_len,
	    p->gradient_checkpointing, cce, liger,
	    strstr(opt, "8bit") != NULL, strstr(opt, "paged") != NULL,
	    p->adapter != NULL && !(ac != NULL && ac->kind == DOC_BOOL &&
	    !ac->b), e->capacity_gib, e->allocated_peak_gib / e->capacity_gib,
	    b->weights_gib + b->gradients_gib + b->optimizer_gib,
	    e->churn_gib, rr, doc_map_value(root, "quantize_moe_experts") !=
	    NULL || doc_map_value(root, "lora_target_parameters") != NULL,
	    p->load_in_8bit, m != NULL && m->model_type != NULL ? m->model_type : "-");
}

/* Run the real check on config text (+ extra) for row r. */
static int
load_row(struct row *r, const char *text, const char *extra, long gpus,
    const char *gpu)
{
	struct err e = { 0 };
	struct arena a;
	struct report *rep;
	struct estimate est, probe;
	struct estimate_calib c0 = { 0 }, shipped = estimate_calib_default;
	int rv = -1;

	c0.linear_experts = shipped.linear_experts = r->linear_experts;

	arena_init(&a, (size_t)64 << 20);
	if (fixture_check(&rep, text, strcmp(extra, "-") == 0 ? NULL : extra,
	    gpus, gpu, &a, &e) != 0) {
		fprintf(stderr, "calibrate: %s: %s\n", r->id, e.msg);
		goto out;
	}
	snprintf(r->strategy, sizeof(r->strategy), "%s",
	    strncmp(rep->plan->strategy, "fsdp", 4) == 0 ? "fsdp" :
	    strcmp(rep->plan->strategy, "deepspeed") == 0 ? "zero" :
	    rep->plan->strategy);
	snprintf(r->adapter, sizeof(r->adapter), "%s",
	    rep->plan->adapter == NULL ? "full" :
	    strcmp(rep->plan->adapter, "qlora") == 0 ||
	    rep->plan->load_in_4bit ? "qlora" : "lora");
	r->multi = rep->plan->world > 1;
	r->packed = rep->plan->sample_packing;
	/* The parts without any judgement term: the same run with every
	   fitted term zero. */
	estimate_run_calib(&est, rep->doc, rep->plan, &rep->ctx, &c0);
	r->known = est.known;
	r->capacity = est.capacity_gib;
	if (est.known) {
		const struct mem_breakdown *b = &est.breakdown;

		bool sharded = strcmp(r->strategy, "fsdp") == 0 ||
		    (strcmp(r->strategy, "zero") == 0 &&
		    rep->plan->zero_stage == 3);

		features(r, rep, &est);
		r->alloc = est.allocated_peak_gib;
		r->stat = b->weights_gib + b->gradients_gib + b->optimizer_gib;
		r->trans = est.churn_gib + (sharded ? 0 : b->buffers_gib);
		r->coll = sharded ? b->buffers_gib : 0;
		/* The closed form predict() uses must be what the
		   estimator computes: check it on the shipped terms. */
		estimate_run_calib(&probe, rep->doc, rep->plan, &rep->ctx,
		    &shipped);
		r->b = probe.breakdown;
		if (fabs(probe.per_gpu_peak_gib - predict_device(r,
		    &shipped)) > 1e-9) {
			fprintf(stderr, "calibrate: %s: the estimate is not "
			    "linear in the judgement terms\n", r->id);
			goto out;
		}
	}
	rv = 0;
out:
	arena_fini(&a);
	return rv;
}

/* The example config of a row, read from the corpus. */
static int
load_example(struct row *r, const char *shared, const char *ref,
    const char *extra, long gpus, const char *gpu)
{
	char path[1024], *text;
	size_t n;
	int rv;

	snprintf(path, sizeof(path), "%s/corpus/axolotl/%s", shared, ref);
	text = fixture_read(path, &n);
	if (text == NULL) {
		fprintf(stderr, "calibrate: %s: cannot read %s\n", r->id,
		    path);
		return -1;
	}
	(void)n;
	rv = load_row(r, text, extra, gpus, gpu);
	free(text);
	return rv;
}

/* The measured row id in the text after memory-measured.tsv's header:
   its figure and kind.  false when absent. */
static bool
find_measured(const char *body, const char *id, int c_id, int c_meas,
    int c_kind, int c_ref, double *measured, enum kind *kind, char *ref,
    size_t refcap)
{
	char *dup = strdup(body), *mc = dup, *mf[32] = { 0 };
	size_t mn;
	bool found = false;

	while (dup != NULL && (mn = fixture_tsv_next(&mc, mf, 32)) > 0)
		if (mn > (size_t)c_ref && strcmp(mf[c_id], id) == 0) {
			*measured = strtod(mf[c_meas], NULL);
			*kind = strcmp(mf[c_kind], "allocated") == 0 ?
			    K_ALLOCATED : strcmp(mf[c_kind], "reserved") == 0 ?
			    K_RESERVED : K_UNKNOWN;
			snprintf(ref, refcap, "%s", mf[c_ref]);
			ref[strcspn(ref, " ")] = '\0';
			found = true;
			break;
		}
	free(dup);
	return found;
}

int
main(int argc, char **argv)
{
	const char *shared = NULL;
	bool verbose = false, terms = false, dump = false, feats = false;
	bool in[MAX_ROWS] = { false }, all[MAX_ROWS] = { false };
	char *meas, *mine, *cur, *h[32];
	char families[MAX_FAMILIES][32];
	size_t nh, nf, i, j, nfam = 0, missing = 0;
	int c_id, c_meas, c_kind, c_ref;
	struct estimate_calib full;
	double ratio[MAX_ROWS];
	size_t nratio = 0;
	int k;

	for (k = 1; k < argc; k++) {
		if (strcmp(argv[k], "-v") == 0)
			verbose = true;
		else if (strcmp(argv[k], "-b") == 0)
			verbose = terms = true;
		else if (strcmp(argv[k], "-d") == 0)
			dump = true;
		else if (strcmp(argv[k], "-f") == 0)
			feats = true;
		else if (strcmp(argv[k], "-t") == 0 && k + 1 < argc)
			PINBALL_TAU = strtod(argv[++k], NULL);
		else
			shared = argv[k];
	}
	if (shared == NULL)
		shared = fixture_shared();
	{
		char path[1024];

		snprintf(path, sizeof(path),
		    "%s/reference/memory-measured.tsv", shared);
		meas = fixture_read(path, NULL);
		if (meas == NULL) {
			fprintf(stderr, "calibrate: cannot read %s\n", path);
			return 2;
		}
	}
	mine = fixture_read("tests/calibrate/rows.tsv", NULL);
	if (mine == NULL) {
		fprintf(stderr, "calibrate: cannot read "
		    "tests/calibrate/rows.tsv\n");
		return 2;
	}
	cur = meas;
	nh = fixture_tsv_next(&cur, h, 32);
	c_id = column(h, nh, "id");
	c_meas = column(h, nh, "measured_gib");
	c_kind = column(h, nh, "kind");
	c_ref = column(h, nh, "config_ref");
	if (c_id < 0 || c_meas < 0 || c_kind < 0 || c_ref < 0) {
		fprintf(stderr, "calibrate: memory-measured.tsv lacks a "
		    "column\n");
		return 2;
	}
	{
		char *rc = mine, *g[10];

		(void)fixture_tsv_next(&rc, g, 10);	/* header */
		while ((nf = fixture_tsv_next(&rc, g, 10)) >= 5) {
			struct row *r = &rows[nrows];
			char ref[512];

			if (nrows >= MAX_ROWS)
				break;
			memset(r, 0, sizeof(*r));
			snprintf(r->id, sizeof(r->id), "%s", g[0]);
			snprintf(r->family, sizeof(r->family), "%s", g[1]);
			if (!find_measured(cur, g[0], c_id, c_meas, c_kind, c_ref,
			    &r->measured, &r->kind, ref, sizeof(ref))) {
				fprintf(stderr, "calibrate: %s is not in "
				    "memory-measured.tsv\n", g[0]);
				return 2;
			}
			r->counter = r->kind == K_RESERVED ||
			    (r->kind == K_UNKNOWN && nf >= 7 &&
			    strcmp(g[6], "logged") == 0);
			r->linear_experts = nf >= 8 && strcmp(g[7], "v4") == 0;
			r->flagged = nf >= 9 && strcmp(g[8], "-") != 0;
			unescape(g[4]);
			if (load_example(r, shared, ref, g[4], strtol(g[2],
			    NULL, 10), g[3]) != 0)
				return 1;
			if (!r->known)
				missing++;
			for (j = 0; j < nfam; j++)
				if (strcmp(families[j], r->family) == 0)
					break;
			if (j == nfam && nfam < MAX_FAMILIES)
				snprintf(families[nfam++], 32, "%s",
				    r->family);
			nrows++;
		}
	}

	/* Leave one family out: fit on the others, estimate its rows. */
	for (j = 0; j < nfam; j++) {
		struct estimate_calib c;

		for (i = 0; i < nrows; i++)
			in[i] = strcmp(rows[i].family, families[j]) != 0;
		c = fit(in);
		for (i = 0; i < nrows; i++)
			if (!in[i] && rows[i].known)
				rows[i].heldout = predict(&rows[i], &c);
	}
	for (i = 0; i < nrows; i++)
		all[i] = true;
	full = fit(all);
	/* range_gib spreads per_gpu_peak_gib: a row read from PyTorch's
	   counter is put on the device's scale with the runtime the full
	   fit gives (the context and NCCL the counter leaves out). */
	for (i = 0; i < nrows; i++)
		if (rows[i].known && rows[i].kind != K_ALLOCATED) {
			double rt = rows[i].counter ? full.context_gib +
			    (rows[i].multi ? full.comm_gib : 0) : 0;

			ratio[nratio++] = (rows[i].measured + rt) /
			    (rows[i].heldout + rt);
		}

	/* -d: the parts the judgement terms act on, one row a line (for
	   studying the fit outside this tool). */
	for (i = 0; dump && i < nrows; i++)
		printf("D\t%s\t%s\t%s\t%s\t%s\t%d\t%d\t%.3f\t%.3f\t%.3f"
		    "\t%.3f\t%.3f\t%.3f\t%.3f\n", rows[i].id, rows[i].family,
		    rows[i].strategy, rows[i].adapter, kind_name(rows[i].kind),
		    rows[i].counter, rows[i].multi, rows[i].measured,
		    rows[i].alloc, rows[i].stat, rows[i].trans, rows[i].coll,
		    rows[i].capacity, rows[i].heldout);
	/* -f: each row's held-out residual and candidate features. */
	if (feats)
		printf("F\tid\tfamily\tstrategy\tadapter\treading\tflagged"
		    "\tpacked\tv4\tmeasured\talloc\theldout\tresid\t%s\n",
		    FEAT_HEADER);
	for (i = 0; feats && i < nrows; i++)
		if (rows[i].known)
			printf("F\t%s\t%s\t%s\t%s\t%s\t%d\t%d\t%d\t%.3f"
			    "\t%.3f\t%.3f\t%.4f\t%s\n", rows[i].id,
			    rows[i].family, rows[i].strategy, rows[i].adapter,
			    rows[i].kind == K_ALLOCATED ? "allocated" :
			    rows[i].counter ? "counter" : "device",
			    rows[i].flagged, rows[i].packed,
			    rows[i].linear_experts, rows[i].measured,
			    rows[i].alloc, rows[i].heldout,
			    log(rows[i].measured / rows[i].heldout),
			    rows[i].feat);
	printf("memory-measured.tsv: %zu rows with an example config, %zu "
	    "without an estimate, %zu model families\n\n", nrows, missing,
	    nfam);
	if (verbose) {
		printf("| row | family | strategy | adapter | kind | measured "
		    "| allocated | held-out estimate | error |\n| --- | --- | "
		    "--- | --- | --- | ---: | ---: | ---: | ---: |\n");
		for (i = 0; i < nrows; i++) {
			const struct row *r = &rows[i];

			if (!r->known) {
				printf("| %s | %s | %s | %s | %s | %.1f | - | "
				    "none | - |\n", r->id, r->family, r->strategy,
				    r->adapter, kind_name(r->kind),
				    r->measured);
				continue;
			}
			printf("| %s | %s | %s | %s | %s | %.1f | %.1f | %.1f "
			    "| %+.0f%% |\n", r->id, r->family, r->strategy,
			    r->adapter, kind_name(r->kind), r->measured,
			    r->alloc, r->heldout, 100 * (r->heldout - r->measured) /
			    r->measured);
			if (terms)
				print_terms(r);
		}
		printf("\n");
	}
	printf("Leave-one-model-family-out cross-validation (each family's "
	    "rows estimated with terms fitted on the other families):\n\n");
	printf("| rows                                   |   n | median "
	    "|ok<=25%%"
	    "| under>25%% |\n");
	printf("| -------------------------------------- | --: | -----: "
	    "| -----: "
	    "| -----: |\n");
	table_line(rows, nrows, "all", NULL, NULL, -1, false, S_ANY);
	table_line(rows, nrows, "single GPU", "single", NULL, -1, false, S_ANY);
	table_line(rows, nrows, "DDP", "ddp", NULL, -1, false, S_ANY);
	table_line(rows, nrows, "DeepSpeed ZeRO", "zero", NULL, -1, false,
	    S_ANY);
	table_line(rows, nrows, "FSDP", "fsdp", NULL, -1, false, S_ANY);
	table_line(rows, nrows, "full fine-tune", NULL, "full", -1, false,
	    S_ANY);
	table_line(rows, nrows, "LoRA (16-bit or 8-bit base)", NULL, "lora",
	    -1, false, S_ANY);
	table_line(rows, nrows, "QLoRA", NULL, "qlora", -1, false, S_ANY);
	table_line(rows, nrows, "measured as reserved", NULL, NULL,
	    K_RESERVED, false, S_ANY);
	table_line(rows, nrows, "measured as allocated", NULL, NULL,
	    K_ALLOCATED, false, S_ANY);
	table_line(rows, nrows, "kind unknown (vs the reading)", NULL, NULL,
	    K_UNKNOWN, false, S_ANY);
	table_line(rows, nrows, "kind unknown (vs the nearer figure)", NULL,
	    NULL, K_UNKNOWN, true, S_ANY);
	table_line(rows, nrows, "read from PyTorch's reserved counter", NULL,
	    NULL, -1, false, S_COUNTER);
	table_line(rows, nrows, "read from the device", NULL, NULL, -1,
	    false, S_DEVICE);
	table_line(rows, nrows, "packed (sample_packing)", NULL, NULL, -1,
	    false, S_PACKED);
	table_line(rows, nrows, "not packed (worst batch padded)", NULL,
	    NULL, -1, false, S_PADDED);
	table_line(rows, nrows, "all but the figures their source flags",
	    NULL, NULL, -1, false, S_UNFLAGGED);
	printf("\nmedian = median absolute error; ok<=25%% = share within 25%%"
	    "; under>25%% = share estimated more than 25%% below the "
	    "measurement\n\n");
	/* Published runs outside Axolotl's examples: estimated with the
	   terms fitted on every example row, never fitted on. */
	{
		char *ext = fixture_read("tests/calibrate/external.tsv", NULL);
		char *ec = ext, *g[8], ref[512];
		static struct row outside[MAX_ROWS];
		size_t no = 0;

		if (ext == NULL) {
			fprintf(stderr, "calibrate: cannot read "
			    "tests/calibrate/external.tsv\n");
			return 2;
		}
		(void)fixture_tsv_next(&ec, g, 8);	/* header */
		while ((nf = fixture_tsv_next(&ec, g, 8)) >= 4 &&
		    no < MAX_ROWS) {
			struct row *r = &outside[no];

			memset(r, 0, sizeof(*r));
			snprintf(r->id, sizeof(r->id), "%s", g[0]);
			if (!find_measured(cur, g[0], c_id, c_meas, c_kind,
			    c_ref, &r->measured, &r->kind, ref, sizeof(ref))) {
				fprintf(stderr, "calibrate: %s is not in "
				    "memory-measured.tsv\n", g[0]);
				return 2;
			}
			r->counter = r->kind == K_RESERVED;
			/* reading: the counter a figure of unknown kind is
			   taken to be, from its source (external.tsv's
			   header says why) */
			r->read_as_allocated = r->kind == K_UNKNOWN &&
			    nf >= 6 && strcmp(g[5], "allocated") == 0;
			unescape(g[3]);
			if (load_row(r, g[3], "-", strtol(g[1], NULL, 10),
			    g[2]) != 0)
				return 1;
			if (r->known)
				r->heldout = predict(r, &full);
			no++;
		}
		printf("Published runs outside Axolotl's examples "
		    "(tests/calibrate/external.tsv; not fitted on):\n\n");
		for (i = 0; verbose && i < no; i++) {
			printf("| %s | %s | %s | %s | %.1f | %.1f | %.1f "
			    "| %+.0f%% |\n", outside[i].id,
			    outside[i].strategy, outside[i].adapter,
			    kind_name(outside[i].kind),
			    outside[i].measured, outside[i].alloc,
			    outside[i].heldout, 100 *
			    (outside[i].heldout - outside[i].measured) /
			    outside[i].measured);
			if (terms)
				print_terms(&outside[i]);
		}
		printf("| rows                                   |   n "
		    "| median "
		    "|ok<=25%%| under>25%% |\n");
		printf("| -------------------------------------- | --: "
		    "| -----: "
		    "| -----: | -----: |\n");
		table_line(outside, no, "all", NULL, NULL, -1, false, S_ANY);
		table_line(outside, no, "measured as allocated", NULL, NULL,
		    K_ALLOCATED, false, S_ANY);
		table_line(outside, no, "measured as reserved", NULL, NULL,
		    K_RESERVED, false, S_ANY);
		table_line(outside, no, "kind unknown (read as allocated)",
		    NULL, NULL, K_UNKNOWN, false, S_ANY);
		/* The same rows against the gate's figure, to show what
		   the reading changes. */
		for (i = 0; i < no; i++)
			if (outside[i].read_as_allocated) {
				outside[i].read_as_allocated = false;
				if (outside[i].known)
					outside[i].heldout =
					    predict(&outside[i], &full);
			}
		table_line(outside, no, "kind unknown (vs per_gpu_peak_gib)",
		    NULL, NULL, K_UNKNOWN, false, S_ANY);
		printf("\n");
		free(ext);
	}
	printf("Fitted on all rows (pinball loss, tau %.2f):\n", PINBALL_TAU);
	printf("\t.reserve_static = %.2f,\n", full.reserve_static);
	printf("\t.reserve_transient = %.2f,\n", full.reserve_transient);
	printf("\t.reserve_sharded = %.2f,\n", full.reserve_sharded);
	printf("\t.context_gib = %.2f,\n", full.context_gib);
	printf("\t.comm_gib = %.2f,\t(not fitted)\n", full.comm_gib);
	printf("\t.range_low = %.2f,\t(10th percentile of measured / "
	    "held-out estimate)\n", quantile(ratio, nratio, 0.10));
	printf("\t.range_high = %.2f,\t(90th percentile)\n",
	    quantile(ratio, nratio, 0.90));
	if (fabs(full.reserve_static - estimate_calib_default.reserve_static) >
	    1e-9 || fabs(full.reserve_transient -
	    estimate_calib_default.reserve_transient) > 1e-9 ||
	    fabs(full.reserve_sharded -
	    estimate_calib_default.reserve_sharded) > 1e-9 ||
	    fabs(full.context_gib - estimate_calib_default.context_gib) >
	    1e-9 || fabs(quantile(ratio, nratio, 0.10) -
	    estimate_calib_default.range_low) > 0.005 ||
	    fabs(quantile(ratio, nratio, 0.90) -
	    estimate_calib_default.range_high) > 0.005)
		printf("NOTE: core/estimate.c's estimate_calib_default differs "
		    "from this fit; copy the values above into it\n");
	else
		printf("core/estimate.c's estimate_calib_default is this "
		    "fit\n");
	free(meas);
	free(mine);
	return 0;
}
