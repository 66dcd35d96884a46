/*
 * api/encode: report encoders.  Builds jansson trees with the stealing
 * setters, so one json_decref() frees everything.
 */
#include "encode.h"

#include <stdio.h>
#include <string.h>

#include "core/doc.h"
#include "core/plan.h"

static json_t *
str_or_null(const char *s)
{
	return s == NULL ? json_null() : json_string(s);
}

static json_t *
encode_context(const struct context *c)
{
	json_t *j = json_pack("{s:I, s:I, s:I, s:s, s:s}",
	    "gpus", (json_int_t)c->gpus,
	    "nodes", (json_int_t)c->nodes,
	    "gpus_per_node", (json_int_t)c->gpus_per_node,
	    "gpu", c->gpu,
	    "interconnect", c->interconnect);

	if (j != NULL && c->torch > 0) {
		char v[16];

		if (c->torch % 10 != 0)
			snprintf(v, sizeof(v), "%d.%d.%d", c->torch / 1000,
			    c->torch % 1000 / 10, c->torch % 10);
		else
			snprintf(v, sizeof(v), "%d.%d", c->torch / 1000,
			    c->torch % 1000 / 10);
		json_object_set_new(j, "torch", json_string(v));
	}
	return j;
}

static json_t *
encode_finding(const struct finding *f)
{
	return json_pack("{s:s, s:s, s:s, s:o, s:s, s:I, s:I}",
	    "rule", f->rule,
	    "severity", severity_name(f->severity),
	    "message", f->message,
	    "hint", str_or_null(f->hint),
	    "path", f->path,
	    "line", (json_int_t)f->line,
	    "column", (json_int_t)f->col);
}

static json_t *
nullable_str(const char *s)
{
	return s != NULL ? json_string(s) : json_null();
}

static json_t *
encode_plan(const struct plan *p)
{
	static const char *const ds[] = { NULL, "preset", "inline",
	    "unreadable" };
	json_t *j;

	if (p == NULL)
		return json_null();
	j = json_pack("{s:s, s:o, s:{s:I, s:I, s:I, s:I, s:I}, s:s, s:s, "
	    "s:o, s:I, s:I, s:I, s:I, s:I}",
	    "strategy", p->strategy,
	    "zero_stage", p->zero_stage > 0 ? json_integer(p->zero_stage) :
	    json_null(),
	    "mesh", "dp_replicate", (json_int_t)p->dp_replicate,
	    "dp_shard", (json_int_t)p->dp_shard, "tp", (json_int_t)p->tp,
	    "cp", (json_int_t)p->cp, "ep", (json_int_t)p->ep,
	    "precision", p->precision, "attention", p->attention,
	    "adapter", nullable_str(p->adapter),
	    "micro_batch_size", (json_int_t)p->micro_batch_size,
	    "gradient_accumulation_steps",
	    (json_int_t)p->gradient_accumulation_steps,
	    "global_batch_size", (json_int_t)p->global_batch_size,
	    "sequence_len", (json_int_t)p->sequence_len,
	    "tokens_per_step", (json_int_t)p->tokens_per_step);
	if (j == NULL)
		return json_null();
	json_object_set_new(j, "world_size", json_integer(p->world));
	json_object_set_new(j, "gradient_checkpointing",
	    json_boolean(p->gradient_checkpointing));
	json_object_set_new(j, "sample_packing",
	    json_boolean(p->sample_packing));
	json_object_set_new(j, "optimizer", json_string(p->optimizer));
	json_object_set_new(j, "deepspeed", p->ds == DS_NONE ? json_null() :
	    json_pack("{s:s, s:o}", "source", ds[p->ds], "name",
	    nullable_str(p->ds_name)));
	return j;
}

json_t *
encode_report_json(const struct report *r, const char *file)
{
	json_t *root, *findings, *sup;
	size_t i;

	findings = json_array();
	if (findings == NULL)
		return NULL;
	for (i = 0; i < r->nfindings; i++)
		if (json_array_append_new(findings,
		    encode_finding(&r->findings[i])) != 0) {
			json_decref(findings);
			return NULL;
		}
	sup = json_array();
	for (i = 0; sup != NULL && i < r->nsuppressed; i++) {
		json_t *f = encode_finding(&r->suppressed[i]);

		json_object_set_new(f, "reason", json_string(
		    r->suppressed[i].reason != NULL ?
		    r->suppressed[i].reason : ""));
		json_array_append_new(sup, f);
	}
	root = json_pack("{s:s, s:s, s:o, s:o, s:o, s:n, s:[], s:o}",
	    "verdict", verdict_name(r->verdict),
	    "config_sha256", r->config_sha256,
	    "context", encode_context(&r->ctx),
	    "plan", encode_plan(r->plan),
	    "findings", findings,
	    "estimate",
	    "suggestions",
	    "suppressed", sup);
	if (root == NULL)
		return NULL;
	if (file != NULL && json_object_set_new(root, "file",
	    json_string(file)) != 0) {
		json_decref(root);
		return NULL;
	}
	return root;
}

static const char *
sev_colour(enum severity s)
{
	switch (s) {
	case SEV_ERROR:
		return "\033[1;31m";
	case SEV_WARNING:
		return "\033[1;33m";
	case SEV_INFO:
		return "\033[1;36m";
	}
	return "";
}

void
encode_report_text(FILE *out, const struct report *r, const char *file,
    bool colour)
{
	const char *bold = colour ? "\033[1m" : "";
	const char *reset = colour ? "\033[0m" : "";
	size_t i;

	for (i = 0; i < r->nfindings; i++) {
		const struct finding *f = &r->findings[i];

		fprintf(out, "%s%s:%u:%u:%s %s%s:%s %s [%s]\n", bold, file,
		    f->line, f->col, reset,
		    colour ? sev_colour(f->severity) : "",
		    severity_name(f->severity), reset, f->message, f->rule);
	}
	fprintf(out, "%s%s:%s %s (%zu error%s, %zu warning%s, %zu info) "
	    "on %ld x %s\n", bold, file, reset, verdict_name(r->verdict),
	    r->count[SEV_ERROR], r->count[SEV_ERROR] == 1 ? "" : "s",
	    r->count[SEV_WARNING], r->count[SEV_WARNING] == 1 ? "" : "s",
	    r->count[SEV_INFO], r->ctx.gpus, r->ctx.gpu);
}
