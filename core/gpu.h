/*
 * core/gpu: the embedded GPU catalog (facts from shared/reference/gpus.tsv).
 *
 * Looked up by id or alias; the estimator issue (#8) adds the throughput
 * and bandwidth columns.  Pure data, no I/O.
 */
#ifndef CORE_GPU_H
#define CORE_GPU_H

#include <stdbool.h>
#include <stddef.h>

struct gpu {
	const char *id;		/* "h100-sxm": what --gpu takes */
	const char *alias;	/* another accepted id, or NULL */
	const char *name;	/* "H100 SXM5 80GB" */
	const char *vendor;	/* "nvidia", "amd", "intel" */
	double memory_gib;	/* nominal memory, GiB */
	unsigned cc;		/* CUDA compute capability x10 (90 for
				   sm_90); 0 when not an NVIDIA GPU */
	bool bf16;		/* native bf16 */
	bool fp8;		/* native fp8 tensor cores */
	const char *link;	/* intra-node default: "nvlink" | "pcie" */
	double tflops16;	/* dense bf16 TFLOP/s (fp16 without bf16),
				   gpus.tsv */
	double link_gbps;	/* practical intra-node collective bandwidth
				   per GPU, GB/s each way (estimator.md 11;
				   judgement within its ranges) */
};

/* The GPU with this id or alias (case-insensitive), or NULL. Borrowed. */
const struct gpu *gpu_find(const char *id);

/* The catalog, in a stable order; *n gets its length.  Borrowed. */
const struct gpu *gpu_all(size_t *n);

#endif /* CORE_GPU_H */
