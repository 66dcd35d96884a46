/*
 * core/estimate_speed: compute and communication time per optimizer step
 * and the tokens per second they allow (sections 10 and 11 of
 * ../shared/reference/estimator.md).  No I/O.
 */
#include "estimate.h"
#include "estimate_int.h"

#include <string.h>

#include "doc.h"
#include "gpu.h"
#include "plan.h"
#include "report.h"

/*
 * Collective bandwidth per GPU, GB/s each way, for the run's interconnect
 * (estimator.md 11, practical column): the GPU's own fabric on one node,
 * InfiniBand NDR or 100 GbE across nodes.
 */
static double
link_gbps(const struct context *ctx, const struct gpu *g, bool across)
{
	const char *ic = ctx->interconnect != NULL ? ctx->interconnect :
	    g->link;

	if (strcmp(ic, "infiniband") == 0)
		return across ? 45 : g->link_gbps;
	if (strcmp(ic, "ethernet") == 0)
		return across || strcmp(g->link, "ethernet") == 0 ? 10 :
		    g->link_gbps;
	if (strcmp(ic, "pcie") == 0 && strcmp(g->link, "pcie") != 0)
		return 22;
	return g->link_gbps;
}

/*
 * Sections 10 and 11: FLOPs per token over peak x MFU for compute, ring
 * collective bytes over link bandwidth for communication, per optimizer
 * step.  MFU is judgement within estimator.md's planning ranges: full
 * fine-tune 40% with packing and 30% without, LoRA 35%, QLoRA 25%, MoE
 * 20% (QLoRA on MoE 7%, below).  Communication overlaps compute, so the
 * step takes the larger.
 */
void
estimate_throughput(struct estimate *e, const struct doc *d, const struct plan *p,
    const struct context *ctx, const struct gpu *g, const struct arch *x,
    bool lora, bool qlora, double n_lora, double n_linear, double n_embed,
    bool fsdp, bool ds, bool ddp)
{
	double na = x->Na, f, mfu, T, ga, world, dp, n, S, bytes = 0, bw;
	double tp = (double)(p->tp > 1 ? p->tp : 1);
	double cp = (double)(p->cp > 1 ? p->cp : 1);
	double hq = x->a * x->d, s = (double)p->sequence_len;
	bool gc = p->gradient_checkpointing;
	bool across;

	if (g->tflops16 <= 0)
		return;
	/* FLOPs per trained token (section 10). */
	if (lora)
		f = 4 * na + 6 * n_lora + (gc ? 2 * na : 0);
	else
		f = 6 * na + (gc ? 2 * na : 0);
	f += 6 * x->L * s * hq * (gc ? 4.0 / 3 : 1);
	if (qlora)
		f *= 1.2;	/* dequantisation, 10-30% */
	/* QLoRA on a MoE: 7%, calibrated on Axolotl's published Llama-4
	   Scout QLoRA figure, 519 tokens/s on one H100 (axolotl:
	   examples/llama-4/README.md:23, cited in estimator.md 10). */
	mfu = x->E > 0 ? (qlora ? 0.07 : 0.20) : qlora ? 0.25 : lora ? 0.35 :
	    p->sample_packing ? 0.40 : 0.30;
	world = (double)(p->world > 0 ? p->world : 1);
	ga = (double)(p->gradient_accumulation_steps > 0 ?
	    p->gradient_accumulation_steps : 1);
	dp = world / (tp * cp);
	if (dp < 1)
		dp = 1;
	T = (double)p->micro_batch_size * s;
	e->compute_time_s = ga * T * f / (tp * cp * g->tflops16 * 1e12 * mfu);

	/* Bytes per GPU per optimizer step (section 11; its QLoRA-under-
	   FSDP row writes NF4_BYTES rounded to 0.516, kept as written: the
	   speed figures were checked with it). */
	n = fsdp ? (double)(p->dp_shard > 1 ? p->dp_shard : 1) * cp :
	    ds ? world / tp : dp;
	S = lora ? (qlora && fsdp ? 0.516 * n_linear + 2 * n_embed :
	    4 * n_lora) : 2 * x->N;
	if (n > 1) {
		double r = (n - 1) / n;

		if (ds && p->zero_stage == 3)
			bytes = ga * 3 * r * S;
		else if (ds && p->zero_stage == 2)
			bytes = ga * r * S + r * S;
		else if (ds || ddp)
			bytes = 2 * r * S;
		else if (fsdp) {
			const struct doc_node *raf = estimate_fsdp_value(d,
			    "reshard_after_forward");

			bytes = ga * (raf != NULL && raf->kind == DOC_BOOL &&
			    !raf->b ? 2 : 3) * r * S;
		}
	}
	if (tp > 1)
		bytes += ga * x->L * 4 * 2 * (tp - 1) / tp * 2 * T * x->h;
	if (cp > 1)
		bytes += ga * x->L * 3 * (cp - 1) * 2 * (T / cp) *
		    (x->akv * x->d) * 2;
	across = ctx->nodes > 1 && (n > (double)ctx->gpus_per_node ||
	    tp > (double)ctx->gpus_per_node);
	bw = link_gbps(ctx, g, across);
	e->comm_gb = bytes / 1e9;
	e->comm_time_s = bw > 0 ? bytes / (bw * 1e9) : 0;
	e->step_time_s = e->compute_time_s > e->comm_time_s ?
	    e->compute_time_s : e->comm_time_s;
	e->bound = e->comm_time_s > e->compute_time_s ? "communication" :
	    "compute";
	e->tokens_per_second = e->step_time_s > 0 ? ga * T * dp /
	    e->step_time_s : 0;
	if (ctx->dataset_tokens > 0 && e->tokens_per_second > 0) {
		e->epoch_time_s = (double)ctx->dataset_tokens /
		    e->tokens_per_second;
		e->gpu_hours_per_epoch = e->epoch_time_s * world / 3600;
	}
}

