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

/*
 * Terms of the per-GPU peak, GiB; they add up to per_gpu_peak_gib.  The
 * first six are tensors (their sum is allocated_peak_gib); reserve and
 * runtime are what the device holds beyond them.
 */
struct mem_breakdown {
	double weights_gib;	/* resident (sharded) weights */
	double gradients_gib;
	double optimizer_gib;	/* states and fp32 master copies */
	double activations_gib;	/* saved activations at the peak */
	double logits_gib;	/* logits and cross-entropy buffers */
	double buffers_gib;	/* gathered units, buckets, dequant scratch */
	double reserve_gib;	/* caching allocator: cached, fragmented */
	double runtime_gib;	/* CUDA context, libraries, NCCL buffers */
};

/*
 * The judgement terms of the estimate (estimator.md section 7), fitted on
 * measured runs by tests/calibrate (docs/estimator.md gives the fit and
 * its cross-validation).  estimate_calib_default is what the report uses.
 */
struct estimate_calib {
	double reserve_static;	/* allocator reserve per GiB of states */
	double reserve_transient;	/* per GiB of activations, logits,
					   buffers (freed and reallocated) */
	double reserve_sharded;	/* per GiB of an FSDP / ZeRO-3 run's
				   gathered units and collective buffers */
	double context_gib;	/* CUDA context, cuBLAS/cuDNN, kernels */
	double comm_gib;	/* NCCL communicators when world > 1 */
	double range_low;	/* measured / estimate, 10th percentile */
	double range_high;	/* measured / estimate, 90th percentile */
	/* Not a judgement term: the software stack a measured run used,
	   so that tests/calibrate compares a README with the run it
	   measured.  The report always assumes today's stack (false). */
	bool linear_experts;	/* Transformers 4.x: MoE experts as
				   nn.Linear modules, not fused 3-D
				   parameters */
};

extern const struct estimate_calib estimate_calib_default;

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
	double per_gpu_peak_gib;	/* what the device must hold */
	double allocated_peak_gib;	/* tensors alive at the peak */
	double range_gib[2];	/* calibration spread around the peak */
	double capacity_gib;
	bool fits;
	struct mem_breakdown breakdown;
	double cpu_offload_gib;		/* host memory per GPU for offload */
	double churn_gib;		/* activations and loss buffers over
					   the whole step, both phases: what
					   the transient reserve grows with */
	/* The assumptions the figures rest on (issue 15 item 5). */
	double activation_tokens;	/* tokens per micro batch sized for */
	bool padded;			/* no packing: the worst batch pads
					   to sequence_len */
	bool unverified_shape;		/* catalog facts unverified or the
					   count is derived */
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

/* The same with other judgement terms (tests/calibrate fits them). */
void estimate_run_calib(struct estimate *e, const struct doc *d,
    const struct plan *p, const struct context *ctx,
    const struct estimate_calib *c);

#endif /* CORE_ESTIMATE_H */
