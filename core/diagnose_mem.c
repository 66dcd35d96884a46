/*
 * core/diagnose_mem: a CUDA OOM held against the config's estimate
 * (issue #19).  The config goes through the same pipeline as any check
 * (core/check), with the capacity the log reports, so the estimate, the
 * term it names and the suggestion search are the estimator's own; this
 * file only picks the numbers apart.  No I/O.
 */
#include "diagnose.h"

#include <string.h>

#include "arena.h"
#include "check.h"
#include "estimate.h"
#include "report.h"
#include "suggest.h"

/* A term of the breakdown by name (NULL: not a breakdown term). */
static const double *
term_of(const struct mem_breakdown *b, const char *name)
{
	static const char *const names[] = { "weights", "gradients",
	    "optimizer", "activations", "logits", "buffers" };
	const double *v[] = { &b->weights_gib, &b->gradients_gib,
	    &b->optimizer_gib, &b->activations_gib, &b->logits_gib,
	    &b->buffers_gib };
	size_t i;

	for (i = 0; name != NULL && i < 6; i++)
		if (strcmp(names[i], name) == 0)
			return v[i];
	return NULL;
}

/* The largest of the terms a config change can shrink. */
static const char *
largest_term(const struct mem_breakdown *b, double *gib)
{
	static const char *const names[] = { "weights", "gradients",
	    "optimizer", "activations", "logits", "buffers" };
	const char *best = NULL;
	size_t i;

	*gib = -1;
	for (i = 0; i < 6; i++) {
		const double *v = term_of(b, names[i]);

		if (*v > *gib) {
			*gib = *v;
			best = names[i];
		}
	}
	return best;
}

/* The top CUDA OOM diagnosis's row id, or NULL. */
static const char *
top_oom(const struct diag_report *d)
{
	size_t i;

	for (i = 0; i < d->n; i++)
		if (d->items[i].sig->extract == DIAG_X_CUDA_OOM)
			return d->items[i].sig->id;
	return NULL;
}

/* Name the most likely term: the log's evidence first, then the
   estimate's largest term. */
static int
name_term(struct diag_memory *mem, const struct diag_report *d,
    const struct estimate *est, struct arena *a)
{
	const struct diag_oom *o = &d->oom;
	const char *id = top_oom(d);
	const double *v;

	if (id != NULL && strcmp(id, "oom.other_process") == 0) {
		mem->term = "other_process";
		mem->term_why = arena_printf(a, "%.2f GiB of the GPU is held "
		    "outside this process", o->other_gib);
	} else if (id != NULL && strcmp(id, "oom.fragmentation") == 0) {
		mem->term = "fragmentation";
		mem->term_why = arena_printf(a, "%.2f GiB was reserved by "
		    "PyTorch but unallocated when %.2f GiB could not be "
		    "allocated", o->reserved_gib, o->tried_gib);
	} else if (o->phase != NULL) {
		mem->term = o->phase;
		v = term_of(&est->breakdown, o->phase);
		mem->term_gib = v != NULL ? *v : 0;
		mem->term_why = arena_printf(a, "the traceback shows the %s "
		    "(line %u); the estimate puts that term at %.2f GiB of "
		    "%.2f GiB", o->phase, o->phase_line, mem->term_gib,
		    est->per_gpu_peak_gib);
	} else {
		mem->term = largest_term(&est->breakdown, &mem->term_gib);
		mem->term_why = arena_printf(a, "the log does not show the "
		    "phase; %s is the largest term of the estimate (%.2f GiB of "
		    "%.2f GiB)", mem->term, mem->term_gib,
		    est->per_gpu_peak_gib);
	}
	return mem->term_why != NULL ? 0 : ERR_NOMEM;
}

/*
 * The suggestions that keep what is trained first (an adapter where there
 * was none is another experiment, not a fix), each group in the
 * estimator's order; NULL when a is spent.
 */
static const struct suggestion *
same_training_first(const struct suggestion *s, size_t n, struct arena *a)
{
	struct suggestion *out = ARENA_NEW(a, struct suggestion, n > 0 ? n : 1);
	size_t i, k = 0, pass;

	if (out == NULL)
		return NULL;
	for (pass = 0; pass < 2; pass++)
		for (i = 0; i < n; i++)
			if ((strstr(s[i].set_json, "\"adapter\"") == NULL) ==
			    (pass == 0))
				out[k++] = s[i];
	return out;
}

int
diagnose_config(struct diag_report *d, const char *cfg, size_t len,
    const struct context *ctx, const struct limits *lim, struct arena *a,
    struct err *e)
{
	const struct diag_oom *o = &d->oom;
	const struct estimate *est;
	struct diag_memory *mem;
	struct report *r, *cal;
	struct context c = *ctx;
	double scaled;
	int rv;

	mem = ARENA_NEW(a, struct diag_memory, 1);
	if (mem == NULL)
		return err_set(e, ERR_NOMEM, NULL,
		    "request memory budget spent");
	if ((o->have & DIAG_OOM_CAPACITY) != 0 &&
	    context_gib_valid(o->capacity_gib))
		c.gpu_memory_gib = o->capacity_gib;
	rv = check_run(&r, cfg, len, &c, lim, a, e);
	if (rv != 0)
		return rv;
	mem->check = r;
	est = r->estimate;
	d->mem = mem;
	if (est == NULL || !est->known)
		return 0;
	mem->known = true;
	mem->capacity_gib = est->capacity_gib;
	mem->estimate_gib = est->per_gpu_peak_gib;
	mem->fits = est->fits;
	mem->suggestions = same_training_first(r->suggestions,
	    r->nsuggestions, a);
	mem->nsuggestions = r->nsuggestions;
	if (mem->suggestions == NULL)
		return err_set(e, ERR_NOMEM, NULL,
		    "request memory budget spent");
	if (o->line == 0)
		return 0;
	if (name_term(mem, d, est, a) != 0)
		return err_set(e, ERR_NOMEM, NULL,
		    "request memory budget spent");
	/*
	 * The estimate fits, the run did not: the estimator under-counts
	 * this run by measured / estimated.  Search at the capacity scaled
	 * by that much, so what it says fits has the same margin in the
	 * real run.
	 */
	if (!est->fits || (o->have & DIAG_OOM_NEEDED) == 0 ||
	    o->needed_gib <= est->per_gpu_peak_gib)
		return 0;
	scaled = est->capacity_gib * est->per_gpu_peak_gib / o->needed_gib;
	if (!context_gib_valid(scaled))
		return 0;
	c.gpu_memory_gib = scaled;
	rv = check_run(&cal, cfg, len, &c, lim, a, e);
	if (rv != 0)
		return rv;
	mem->calibrated_capacity_gib = scaled;
	mem->suggestions = same_training_first(cal->suggestions,
	    cal->nsuggestions, a);
	mem->nsuggestions = cal->nsuggestions;
	if (mem->suggestions == NULL)
		return err_set(e, ERR_NOMEM, NULL,
		    "request memory budget spent");
	return 0;
}
