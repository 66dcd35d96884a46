/*
 * api/encode: report encoders.  JSON is written straight into one buffer
 * (api/jsonw): a jansson tree per report cost more than the check itself.
 */
#include "encode.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/doc.h"
#include "core/estimate.h"
#include "core/models.h"
#include "core/plan.h"
#include "core/rules.h"
#include "core/suggest.h"

static void
num_member(struct jsonw *w, const char *key, double v, bool first)
{
	if (!first)
		jw_lit(w, ",");
	jw_key(w, key);
	jw_num2(w, v);
}

static void
context_json(struct jsonw *w, const struct context *c)
{
	jw_lit(w, "{\"gpus\":");
	jw_int(w, c->gpus);
	jw_lit(w, ",\"nodes\":");
	jw_int(w, c->nodes);
	jw_lit(w, ",\"gpus_per_node\":");
	jw_int(w, c->gpus_per_node);
	jw_lit(w, ",\"gpu\":");
	jw_str(w, c->gpu);
	jw_lit(w, ",\"interconnect\":");
	jw_str(w, c->interconnect);
	if (c->gpu_memory_gib > 0)
		num_member(w, "gpu_memory_gib", c->gpu_memory_gib, false);
	if (c->host_memory_gib > 0)
		num_member(w, "host_memory_gib", c->host_memory_gib, false);
	if (c->dataset_tokens > 0) {
		jw_lit(w, ",\"dataset_tokens\":");
		jw_int(w, c->dataset_tokens);
	}
	if (c->torch > 0) {
		char v[16];

		if (c->torch % 10 != 0)
			snprintf(v, sizeof(v), "%d.%d.%d", c->torch / 1000,
			    c->torch % 1000 / 10, c->torch % 10);
		else
			snprintf(v, sizeof(v), "%d.%d", c->torch / 1000,
			    c->torch % 1000 / 10);
		jw_lit(w, ",\"torch\":");
		jw_str(w, v);
	}
	jw_lit(w, "}");
}

static void
finding_json(struct jsonw *w, const struct finding *f, bool reason)
{
	jw_lit(w, "{\"rule\":");
	jw_str(w, f->rule);
	jw_lit(w, ",\"severity\":");
	jw_str(w, severity_name(f->severity));
	jw_lit(w, ",\"message\":");
	jw_str(w, f->message);
	jw_lit(w, ",\"hint\":");
	jw_str(w, f->hint);
	jw_lit(w, ",\"path\":");
	jw_str(w, f->path);
	jw_lit(w, ",\"line\":");
	jw_int(w, f->line);
	jw_lit(w, ",\"column\":");
	jw_int(w, f->col);
	if (reason) {
		jw_lit(w, ",\"reason\":");
		jw_str(w, f->reason != NULL ? f->reason : "");
	}
	jw_lit(w, "}");
}

static void
int_member(struct jsonw *w, const char *key, long long v)
{
	jw_lit(w, ",");
	jw_key(w, key);
	jw_int(w, v);
}

static void
plan_json(struct jsonw *w, const struct plan *p)
{
	static const char *const ds[] = { NULL, "preset", "inline",
	    "unreadable" };

	if (p == NULL) {
		jw_lit(w, "null");
		return;
	}
	jw_lit(w, "{\"strategy\":");
	jw_str(w, p->strategy);
	jw_lit(w, ",\"zero_stage\":");
	if (p->zero_stage > 0)
		jw_int(w, p->zero_stage);
	else
		jw_lit(w, "null");
	jw_lit(w, ",\"mesh\":{\"dp_replicate\":");
	jw_int(w, p->dp_replicate);
	int_member(w, "dp_shard", p->dp_shard);
	int_member(w, "tp", p->tp);
	int_member(w, "cp", p->cp);
	int_member(w, "ep", p->ep);
	jw_lit(w, "},\"precision\":");
	jw_str(w, p->precision);
	jw_lit(w, ",\"attention\":");
	jw_str(w, p->attention);
	jw_lit(w, ",\"adapter\":");
	jw_str(w, p->adapter);
	int_member(w, "micro_batch_size", p->micro_batch_size);
	int_member(w, "gradient_accumulation_steps",
	    p->gradient_accumulation_steps);
	int_member(w, "global_batch_size", p->global_batch_size);
	int_member(w, "sequence_len", p->sequence_len);
	int_member(w, "tokens_per_step", p->tokens_per_step);
	int_member(w, "world_size", p->world);
	jw_lit(w, ",\"gradient_checkpointing\":");
	jw_bool(w, p->gradient_checkpointing);
	jw_lit(w, ",\"sample_packing\":");
	jw_bool(w, p->sample_packing);
	jw_lit(w, ",\"optimizer\":");
	jw_str(w, p->optimizer);
	jw_lit(w, ",\"deepspeed\":");
	if (p->ds == DS_NONE)
		jw_lit(w, "null");
	else {
		jw_lit(w, "{\"source\":");
		jw_str(w, ds[p->ds]);
		jw_lit(w, ",\"name\":");
		jw_str(w, p->ds_name);
		jw_lit(w, "}");
	}
	jw_lit(w, "}");
}

/* DESIGN.md "estimate"; memory fields are null for an unknown model. */
static void
estimate_json(struct jsonw *w, const struct estimate *e)
{
	const struct mem_breakdown *b = &e->breakdown;

	jw_lit(w, "{\"model\":{\"id\":");
	/* The catalog's spelling of a catalog model; else as written. */
	jw_str(w, e->model != NULL && (e->model_id == NULL ||
	    strcmp(e->source, "catalog") == 0) ? e->model->hf_id :
	    e->model_id);
	jw_lit(w, ",\"params\":");
	if (e->params > 0)
		jw_int(w, e->params);
	else
		jw_lit(w, "null");
	jw_lit(w, ",\"source\":");
	jw_str(w, e->source != NULL ? e->source : "unknown");
	if (e->trainable_params > 0)
		int_member(w, "trainable_params", e->trainable_params);
	jw_lit(w, "},\"memory\":");
	if (!e->known) {
		jw_lit(w, "{\"per_gpu_peak_gib\":null,"
		    "\"allocated_peak_gib\":null,\"range_gib\":null,"
		    "\"capacity_gib\":");
		if (e->capacity_gib > 0)
			jw_num2(w, e->capacity_gib);
		else
			jw_lit(w, "null");
		jw_lit(w, ",\"fits\":null,\"breakdown_gib\":null,"
		    "\"cpu_offload_gib\":null}");
	} else {
		jw_lit(w, "{");
		num_member(w, "per_gpu_peak_gib", e->per_gpu_peak_gib, true);
		num_member(w, "allocated_peak_gib", e->allocated_peak_gib,
		    false);
		jw_lit(w, ",\"range_gib\":[");
		jw_num2(w, e->range_gib[0]);
		jw_lit(w, ",");
		jw_num2(w, e->range_gib[1]);
		jw_lit(w, "]");
		num_member(w, "capacity_gib", e->capacity_gib, false);
		jw_lit(w, ",\"fits\":");
		jw_bool(w, e->fits);
		jw_lit(w, ",\"breakdown_gib\":{");
		num_member(w, "weights", b->weights_gib, true);
		num_member(w, "gradients", b->gradients_gib, false);
		num_member(w, "optimizer", b->optimizer_gib, false);
		num_member(w, "activations", b->activations_gib, false);
		num_member(w, "logits", b->logits_gib, false);
		num_member(w, "buffers", b->buffers_gib, false);
		num_member(w, "reserve", b->reserve_gib, false);
		num_member(w, "runtime", b->runtime_gib, false);
		jw_lit(w, "}");
		num_member(w, "cpu_offload_gib", e->cpu_offload_gib, false);
		/* What the figures assume (estimator.md 5, 7). */
		jw_lit(w, ",\"assumptions\":{");
		jw_lit(w, "\"activation_tokens\":");
		jw_int(w, (long long)e->activation_tokens);
		jw_lit(w, ",\"tokens_basis\":");
		jw_str(w, e->padded ? "padded_to_sequence_len" :
		    "packed_to_sequence_len");
		jw_lit(w, ",\"allocator\":\"expandable_segments:False\","
		    "\"shape_verified\":");
		jw_bool(w, !e->unverified_shape);
		jw_lit(w, "}");
		jw_lit(w, "}");
	}
	if (!e->known || e->bound == NULL)
		jw_lit(w, ",\"throughput\":{\"tokens_per_second\":null,"
		    "\"step_time_s\":null,\"comm_time_s\":null,"
		    "\"bound\":null}}");
	else {
		jw_lit(w, ",\"throughput\":{");
		num_member(w, "tokens_per_second", e->tokens_per_second,
		    true);
		num_member(w, "step_time_s", e->step_time_s, false);
		num_member(w, "compute_time_s", e->compute_time_s, false);
		num_member(w, "comm_time_s", e->comm_time_s, false);
		num_member(w, "comm_gb_per_gpu", e->comm_gb, false);
		if (e->epoch_time_s > 0) {
			num_member(w, "epoch_time_s", e->epoch_time_s, false);
			num_member(w, "gpu_hours_per_epoch",
			    e->gpu_hours_per_epoch, false);
		}
		jw_lit(w, ",\"bound\":");
		jw_str(w, e->bound);
		jw_lit(w, "}}");
	}
}

void
encode_report_members(struct jsonw *w, const struct report *r,
    const char *file)
{
	size_t i;

	jw_lit(w, "{\"verdict\":");
	jw_str(w, verdict_name(r->verdict));
	jw_lit(w, ",\"config_sha256\":");
	jw_str(w, r->config_sha256);
	jw_lit(w, ",\"context\":");
	context_json(w, &r->ctx);
	jw_lit(w, ",\"plan\":");
	plan_json(w, r->plan);
	jw_lit(w, ",\"findings\":[");
	for (i = 0; i < r->nfindings; i++) {
		if (i > 0)
			jw_lit(w, ",");
		finding_json(w, &r->findings[i], false);
	}
	jw_lit(w, "],\"estimate\":");
	if (r->estimate != NULL)
		estimate_json(w, r->estimate);
	else
		jw_lit(w, "null");
	jw_lit(w, ",\"suggestions\":[");
	for (i = 0; i < r->nsuggestions; i++) {
		const struct suggestion *sg = &r->suggestions[i];

		jw_lit(w, i > 0 ? ",{\"set\":" : "{\"set\":");
		jw_lit(w, sg->set_json);
		num_member(w, "per_gpu_peak_gib", sg->per_gpu_peak_gib,
		    false);
		num_member(w, "tokens_per_second", sg->tokens_per_second,
		    false);
		jw_lit(w, ",\"why\":");
		jw_str(w, sg->why);
		jw_lit(w, "}");
	}
	jw_lit(w, "],\"suppressed\":[");
	for (i = 0; i < r->nsuppressed; i++) {
		if (i > 0)
			jw_lit(w, ",");
		finding_json(w, &r->suppressed[i], true);
	}
	jw_lit(w, "]");
	if (file != NULL) {
		jw_lit(w, ",\"file\":");
		jw_str(w, file);
	}
}

char *
encode_report_json_text(const struct report *r, const char *file,
    size_t *len)
{
	struct jsonw w;

	jw_init(&w);
	encode_report_members(&w, r, file);
	jw_lit(&w, "}");
	return jw_take(&w, len);
}

char *
encode_context_json_text(const struct context *c)
{
	struct jsonw w;

	jw_init(&w);
	context_json(&w, c);
	return jw_take(&w, NULL);
}

json_t *
encode_report_json(const struct report *r, const char *file)
{
	size_t len;
	char *text = encode_report_json_text(r, file, &len);
	json_t *j;

	if (text == NULL)
		return NULL;
	j = json_loadb(text, len, 0, NULL);
	free(text);
	return j;
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

/* "~48.6k", "~907", "~1.2M": a rate as people read it. */
static void
rate_text(char *out, size_t cap, double v)
{
	if (v >= 999500.0)
		snprintf(out, cap, "~%.1fM", v / 1e6);
	else if (v >= 999.5)
		snprintf(out, cap, "~%.1fk", v / 1e3);
	else
		snprintf(out, cap, "~%.0f", v);
}

/* The length of the control character p starts (C0, DEL, a C1 in UTF-8,
   U+2028/9), 0 for any other. */
static size_t
control_len(const unsigned char *p)
{
	if (*p < 0x20 || *p == 0x7f)
		return 1;
	if (*p == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f)
		return 2;
	if (*p == 0xe2 && p[1] == 0x80 && (p[2] == 0xa8 || p[2] == 0xa9))
		return 3;
	return 0;
}

/* The control character at p (control_len n) as the text report writes
   it: \n, \r, \t, \x1b, \u0085 (NEL, CSI), \u2028. */
static void
put_control(FILE *out, const unsigned char *p, size_t n)
{
	if (*p == '\n')
		fputs("\\n", out);
	else if (*p == '\r')
		fputs("\\r", out);
	else if (*p == '\t')
		fputs("\\t", out);
	else if (n == 1)
		fprintf(out, "\\x%02x", *p);
	else if (n == 2)
		fprintf(out, "\\u%04x", p[1]);
	else
		fprintf(out, "\\u%04x", p[2] == 0xa8 ? 0x2028 : 0x2029);
}

/* GitHub workflow-command escaping: data (the message) escapes % CR LF;
   a property value also , and :.  The runner prints the rest as it is,
   so the other control characters (ESC, BEL, C1, U+2028/9: a key from
   a pull request's config, a file name) are written as the text report
   writes them (put_control), never raw into the CI log. */
static void
gh_escape(FILE *out, const char *s, bool property)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n;

	for (; *p != '\0'; p++) {
		if (*p == '%')
			fputs("%25", out);
		else if (*p == '\r')
			fputs("%0D", out);
		else if (*p == '\n')
			fputs("%0A", out);
		else if (property && *p == ':')
			fputs("%3A", out);
		else if (property && *p == ',')
			fputs("%2C", out);
		else if ((n = control_len(p)) > 0) {
			put_control(out, p, n);
			p += n - 1;
		} else
			putc(*p, out);
	}
}

void
encode_github_command(FILE *out, enum severity sev, const char *path,
    unsigned line, unsigned col, const char *title, const char *message,
    const char *hint)
{
	static const char *const cmd[] = { "notice", "warning", "error" };

	fprintf(out, "::%s file=", cmd[sev]);
	gh_escape(out, path, true);
	fprintf(out, ",line=%u,col=%u,title=", line > 0 ? line : 1,
	    col > 0 ? col : 1);
	gh_escape(out, title, true);
	fputs("::", out);
	gh_escape(out, message, false);
	if (hint != NULL && hint[0] != '\0') {
		fputs("%0Afix: ", out);
		gh_escape(out, hint, false);
	}
	putc('\n', out);
}

/* The terms of the peak, largest first, as "weights 15.1, ...". */
static void
terms_text(FILE *out, const struct mem_breakdown *b)
{
	struct {
		const char *name;
		double gib;
	} t[] = {
		{ "weights", b->weights_gib },
		{ "gradients", b->gradients_gib },
		{ "optimizer", b->optimizer_gib },
		{ "activations", b->activations_gib },
		{ "logits", b->logits_gib },
		{ "buffers", b->buffers_gib },
		{ "reserve", b->reserve_gib },
		{ "runtime", b->runtime_gib },
	};
	size_t n = sizeof(t) / sizeof(t[0]), i, j, shown = 0;

	/* Insertion sort, stable: equal terms keep the breakdown's order. */
	for (i = 1; i < n; i++)
		for (j = i; j > 0 && t[j].gib > t[j - 1].gib; j--) {
			const char *nm = t[j].name;
			double g = t[j].gib;

			t[j] = t[j - 1];
			t[j - 1].name = nm;
			t[j - 1].gib = g;
		}
	for (i = 0; i < n; i++) {
		if (t[i].gib < 0.05)
			continue;
		fprintf(out, "%s%s %.1f", shown > 0 ? ", " : " (", t[i].name,
		    t[i].gib);
		shown++;
	}
	if (shown > 0)
		putc(')', out);
}

void
encode_text_safe(FILE *out, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n;

	for (; *p != '\0'; p++) {
		if ((n = control_len(p)) > 0) {
			put_control(out, p, n);
			p += n - 1;
		} else
			putc(*p, out);
	}
}

/* "file:" (bold), the start of the report's other lines. */
static void
lead(FILE *out, const char *file, const char *bold, const char *reset)
{
	fputs(bold, out);
	encode_text_safe(out, file);
	fprintf(out, ":%s", reset);
}

/*
 * The memory line: `memory: 46.2 of 79.6 GiB per GPU (weights 15.1, ...),
 * ~48.6k tokens/s`.  The peak is what decides fits; the calibration range
 * around it and the tensors' own peak follow "per GPU".
 */
static void
memory_text(FILE *out, const struct estimate *e, const char *file,
    const char *bold, const char *reset)
{
	char rate[32];

	lead(out, file, bold, reset);
	fputs(" memory: ", out);
	if (!e->known) {
		fputs("not estimated: ", out);
		encode_text_safe(out, e->model_id != NULL ? e->model_id :
		    "the model");
		fputs(" is not in the model catalog (give its config.json "
		    "with --model-config)\n", out);
		return;
	}
	fprintf(out, "%.1f of %.1f GiB per GPU", e->per_gpu_peak_gib,
	    e->capacity_gib);
	terms_text(out, &e->breakdown);
	if (e->range_gib[1] > 0)
		fprintf(out, ", range %.1f-%.1f, %.1f allocated by tensors",
		    e->range_gib[0], e->range_gib[1], e->allocated_peak_gib);
	if (e->bound != NULL && e->tokens_per_second > 0) {
		rate_text(rate, sizeof(rate), e->tokens_per_second);
		fprintf(out, ", %s tokens/s", rate);
	}
	if (!e->fits)
		fputs(", does not fit", out);
	putc('\n', out);
}

/* A JSON value as YAML flow text: strings bare, objects {k: v}. */
static void
yaml_value(FILE *out, const json_t *v)
{
	const char *k;
	json_t *x;
	size_t i;

	switch (json_typeof(v)) {
	case JSON_STRING:
		fputs(json_string_value(v), out);
		break;
	case JSON_INTEGER:
		fprintf(out, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
		break;
	case JSON_REAL:
		fprintf(out, "%g", json_real_value(v));
		break;
	case JSON_TRUE:
		fputs("true", out);
		break;
	case JSON_FALSE:
		fputs("false", out);
		break;
	case JSON_NULL:
		fputs("null", out);
		break;
	case JSON_OBJECT:
		i = 0;
		putc('{', out);
		json_object_foreach((json_t *)(uintptr_t)v, k, x) {
			fprintf(out, "%s%s: ", i++ > 0 ? ", " : "", k);
			yaml_value(out, x);
		}
		putc('}', out);
		break;
	case JSON_ARRAY:
		putc('[', out);
		for (i = 0; i < json_array_size(v); i++) {
			if (i > 0)
				fputs(", ", out);
			yaml_value(out, json_array_get(v, i));
		}
		putc(']', out);
		break;
	}
}

/* `to fit: set adapter: qlora, ... -> 21.5 GiB per GPU, ~604 tokens/s
   (why)`, one line per suggestion. */
static void
suggestions_text(FILE *out, const struct report *r, const char *file,
    const char *bold, const char *reset)
{
	size_t i;

	for (i = 0; i < r->nsuggestions; i++) {
		const struct suggestion *sg = &r->suggestions[i];
		json_t *set = json_loads(sg->set_json, JSON_PRESERVE_ORDER,
		    NULL);
		const char *k;
		json_t *v;
		size_t n = 0;
		char rate[32];

		lead(out, file, bold, reset);
		fprintf(out, " %s: set ", r->estimate != NULL && r->estimate->fits ? "more headroom" :
		    "to fit");
		if (set != NULL && json_is_object(set))
			json_object_foreach(set, k, v) {
				fprintf(out, "%s%s: ", n++ > 0 ? ", " : "", k);
				yaml_value(out, v);
			}
		else
			fputs(sg->set_json, out);
		json_decref(set);
		rate_text(rate, sizeof(rate), sg->tokens_per_second);
		fprintf(out, " -> %.1f GiB per GPU, %s tokens/s (%s)\n",
		    sg->per_gpu_peak_gib, rate, sg->why);
	}
}

void
encode_report_text(FILE *out, const struct report *r, const char *file,
    const struct text_opts *opts)
{
	static const struct text_opts plain = { false, TEXT_PLAIN, NULL };
	const struct text_opts *o = opts != NULL ? opts : &plain;
	const char *bold = o->colour ? "\033[1m" : "";
	const char *dim = o->colour ? "\033[2m" : "";
	const char *reset = o->colour ? "\033[0m" : "";
	size_t total, hidden, i;

	for (i = 0; i < r->nfindings; i++) {
		const struct finding *f = &r->findings[i];

		if (o->style == TEXT_GITHUB) {
			encode_github_command(out, f->severity, o->path !=
			    NULL ? o->path : file, f->line, f->col, f->rule,
			    f->message, f->hint);
			continue;
		}
		fputs(bold, out);
		encode_text_safe(out, file);
		fprintf(out, ":%u:%u:%s %s%s:%s ", f->line, f->col, reset,
		    o->colour ? sev_colour(f->severity) : "",
		    severity_name(f->severity), reset);
		encode_text_safe(out, f->message);
		fprintf(out, " [%s]\n", f->rule);
		if (f->hint != NULL && f->hint[0] != '\0') {
			fprintf(out, "    %sfix:%s ", dim, reset);
			encode_text_safe(out, f->hint);
			putc('\n', out);
		}
	}
	if (r->estimate != NULL)
		memory_text(out, r->estimate, file, bold, reset);
	suggestions_text(out, r, file, bold, reset);
	total = r->count[SEV_ERROR] + r->count[SEV_WARNING] +
	    r->count[SEV_INFO];
	hidden = total > r->nfindings ? total - r->nfindings : 0;
	lead(out, file, bold, reset);
	fprintf(out, " %s (%zu error%s, %zu warning%s, %zu info",
	    verdict_name(r->verdict),
	    r->count[SEV_ERROR], r->count[SEV_ERROR] == 1 ? "" : "s",
	    r->count[SEV_WARNING], r->count[SEV_WARNING] == 1 ? "" : "s",
	    r->count[SEV_INFO]);
	if (hidden > 0)
		fprintf(out, "; %zu not shown, --verbose shows them", hidden);
	fprintf(out, ") on %ld x %s\n", r->ctx.gpus, r->ctx.gpu);
}

json_t *
encode_rule_json(const struct rule_def *r)
{
	return json_pack("{s:s, s:s, s:s, s:s, s:s}", "id", r->id,
	    "severity", severity_name(r->severity), "title", r->title,
	    "hint", r->hint, "docs", r->docs);
}
