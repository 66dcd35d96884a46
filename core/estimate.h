/*
 * core/estimate: per-GPU peak memory and throughput of a launch plan, from
 * the model's architecture facts (the catalog's, or a config.json's via
 * core/hfconfig; ../shared/reference/estimator.md sections 1-11).  The
 * suggestions that re-run it are core/suggest.  Pure arithmetic, no I/O.
 */
#ifndef CORE_ESTIMATE_H
#define CORE_ESTIMATE_H

#include <stdbool.h>

struct context;
struct doc;
struct model_def;
struct plan;

/* Terms of the per-GPU peak, GiB; they add up to per_gpu_peak_gib. */
struct mem_breakdown {
	double weights_gib;	/* resident (sharded) weights */
	double gradients_gib;
	double optimizer_gib;	/* states and fp32 master copies */
	double activations_gib;	/* saved activations at the peak */
	double logits_gib;	/* logits and cross-entropy buffers */
	double buffers_gib;	/* gathered units, buckets, dequant scratch */
	double runtime_gib;	/* CUDA context and allocator slack */
};

struct estimate {
	const struct model_def *model;	/* NULL: unknown model */
	const char *model_id;		/* as written in the config, or NULL */
	const char *source;		/* "catalog" | "model_config" |
					   "context" | "hf_cache" (a config.json
					   from --model-config, the request,
					   the hub cache) | "unknown" */
	long long params;		/* total parameters */
	long long trainable_params;
	bool known;			/* memory fields are valid */
	bool nominal;			/* shape guessed from the nominal
					   size: the catalog row is unverified */
	bool derived;			/* params counted from the row's
					   architecture: no verified total */
	double per_gpu_peak_gib;
	double capacity_gib;
	bool fits;
	struct mem_breakdown breakdown;
	double cpu_offload_gib;		/* host memory per GPU for offload */
	/* Throughput (sections 10-11); valid when known. */
	double tokens_per_second;	/* all GPUs together */
	double step_time_s;		/* one optimizer step */
	double compute_time_s;		/* of which compute */
	double comm_time_s;		/* collective traffic per step */
	double comm_gb;			/* bytes per GPU per step, GB */
	const char *bound;		/* "compute" | "communication" */
	double epoch_time_s;		/* with context dataset_tokens */
	double gpu_hours_per_epoch;
	const char *largest_term;	/* name of the largest breakdown term */
	double largest_gib;		/* and its size */
};

/* The catalog row for d's base_model (else base_model_config), or
   NULL. */
const struct model_def *estimate_model(const struct doc *d);

/* Fill e for d's plan p on ctx, with ctx->model when set.  Never fails: an unknown model leaves
   e->known false. */
void estimate_run(struct estimate *e, const struct doc *d,
    const struct plan *p, const struct context *ctx);

#endif /* CORE_ESTIMATE_H */
