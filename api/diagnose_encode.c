/*
 * api/diagnose_encode: a core diagnosis as JSON (openapi.yaml's Diagnosis),
 * text and YAML, and the signature table as Markdown and JSON (see
 * diagnose.h).  No I/O but the FILE the caller passes.
 */
#include "api/diagnose.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "api/jsonw.h"
#include "core/estimate.h"
#include "core/report.h"
#include "core/suggest.h"

/* ---- YAML for config keys ------------------------------------------- */

/* Can s be written as a plain YAML scalar that reads back as a string? */
static bool
plain_ok(const char *s)
{
	static const char *const special[] = { "true", "false", "yes", "no",
	    "on", "off", "null", "y", "n", NULL };
	const char *p;
	size_t i;

	if (!((s[0] >= 'a' && s[0] <= 'z') || (s[0] >= 'A' && s[0] <= 'Z') ||
	    s[0] == '_'))
		return false;
	for (p = s; *p != '\0'; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		    (*p >= '0' && *p <= '9') || strchr("_./-", *p) != NULL))
			return false;
	for (i = 0; special[i] != NULL; i++)
		if (strcasecmp(s, special[i]) == 0)
			return false;
	return true;
}

/* A scalar: plain when safe, else JSON (a valid YAML flow scalar). */
static void
yaml_scalar(struct jsonw *w, const json_t *v)
{
	char *t;

	if (json_is_string(v) && plain_ok(json_string_value(v))) {
		jw_lit(w, json_string_value(v));
		return;
	}
	t = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
	if (t == NULL) {
		w->oom = true;
		return;
	}
	jw_lit(w, t);
	free(t);
}

static void
yaml_object(struct jsonw *w, const json_t *obj, int indent)
{
	const char *key;
	json_t *v;
	size_t i;
	int k;

	json_object_foreach((json_t *)(uintptr_t)obj, key, v) {
		for (k = 0; k < indent; k++)
			jw_lit(w, " ");
		jw_lit(w, key);
		jw_lit(w, ":");
		if (json_is_object(v) && json_object_size(v) > 0) {
			jw_lit(w, "\n");
			yaml_object(w, v, indent + 2);
		} else if (json_is_array(v) && json_array_size(v) > 0) {
			json_t *item;

			jw_lit(w, "\n");
			json_array_foreach(v, i, item) {
				for (k = 0; k < indent + 2; k++)
					jw_lit(w, " ");
				jw_lit(w, "- ");
				yaml_scalar(w, item);
				jw_lit(w, "\n");
			}
		} else {
			jw_lit(w, " ");
			yaml_scalar(w, v);
			jw_lit(w, "\n");
		}
	}
}

char *
diagnose_encode_yaml(const json_t *set)
{
	struct jsonw w;

	if (!json_is_object(set))
		return NULL;
	jw_init(&w);
	yaml_object(&w, set, 0);
	return jw_take(&w, NULL);
}

/* ---- JSON ----------------------------------------------------------- */

/* A quoted line; NULL line 0 gives JSON null. */
json_t *
diagnose_encode_line(const struct diag_line *l)
{
	if (l->line == 0)
		return json_null();
	return json_pack("{s:I, s:s}", "line", (json_int_t)l->line, "text",
	    l->text);
}

/* "a\nb" -> ["a", "b"]; NULL -> []. */
static json_t *
lines_array(const char *text)
{
	json_t *arr = json_array();
	const char *p = text;

	while (arr != NULL && p != NULL && *p != '\0') {
		size_t n = strcspn(p, "\n");

		json_array_append_new(arr, json_stringn(p, n));
		p += n + (p[n] == '\n');
	}
	return arr;
}

/* "a,b" -> ["a", "b"]. */
static json_t *
rules_array(const char *rules)
{
	json_t *arr = json_array();
	const char *p = rules;

	while (arr != NULL && p != NULL && *p != '\0') {
		size_t n = strcspn(p, ",");

		json_array_append_new(arr, json_stringn(p, n));
		p += n + (p[n] == ',');
	}
	return arr;
}

json_t *
diagnose_encode_gib(double v)
{
	/* A log may claim any number: round only what a long long holds. */
	if (v > -1e12 && v < 1e12)
		v = (double)(long long)(v * 100 + (v < 0 ? -0.5 : 0.5)) / 100;
	return json_real(v);
}

/* A GiB number, or null when the message did not give it. */
static json_t *
gib(unsigned have, unsigned bit, double v)
{
	return (have & bit) != 0 ? diagnose_encode_gib(v) : json_null();
}

static json_t *
oom_json(const struct diag_oom *o)
{
	if (o->line == 0)
		return json_null();
	return json_pack("{s:I, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, "
	    "s:o}", "line", (json_int_t)o->line,
	    "gpu", o->gpu >= 0 ? json_integer(o->gpu) : json_null(),
	    "tried_gib", gib(o->have, DIAG_OOM_TRIED, o->tried_gib),
	    "capacity_gib", gib(o->have, DIAG_OOM_CAPACITY, o->capacity_gib),
	    "free_gib", gib(o->have, DIAG_OOM_FREE, o->free_gib),
	    "allocated_gib", gib(o->have, DIAG_OOM_ALLOCATED,
	    o->allocated_gib),
	    "reserved_unallocated_gib", gib(o->have, DIAG_OOM_RESERVED,
	    o->reserved_gib),
	    "in_use_gib", gib(o->have, DIAG_OOM_IN_USE, o->in_use_gib),
	    "other_processes_gib", gib(o->have, DIAG_OOM_OTHER, o->other_gib),
	    "measured_peak_gib", gib(o->have, DIAG_OOM_NEEDED, o->needed_gib),
	    "phase", o->phase != NULL ? json_string(o->phase) : json_null());
}

/* The suggestions as [{set, config, per_gpu_peak_gib, ...}]. */
static json_t *
suggestions_json(const struct diag_memory *m)
{
	json_t *arr = json_array();
	size_t i;

	for (i = 0; arr != NULL && i < m->nsuggestions; i++) {
		const struct suggestion *s = &m->suggestions[i];
		json_t *set = json_loads(s->set_json, 0, NULL);
		char *yaml = diagnose_encode_yaml(set);

		json_array_append_new(arr, json_pack("{s:o, s:s?, s:o, s:o, "
		    "s:s}", "set", set != NULL ? set : json_object(),
		    "config", yaml, "per_gpu_peak_gib",
		    diagnose_encode_gib(s->per_gpu_peak_gib), "tokens_per_second",
		    diagnose_encode_gib(s->tokens_per_second), "why", s->why));
		free(yaml);
	}
	return arr;
}

/* "set a: 1, b: x; predicted peak P GiB of C GiB", or NULL (malloc'd). */
static char *
answer(const struct diag_memory *m)
{
	const struct suggestion *s;
	json_t *set, *v;
	const char *key;
	struct jsonw w;
	bool first = true;
	char num[64];

	if (m->nsuggestions == 0)
		return NULL;
	s = &m->suggestions[0];
	set = json_loads(s->set_json, 0, NULL);
	if (set == NULL)
		return NULL;
	jw_init(&w);
	jw_lit(&w, "set ");
	json_object_foreach(set, key, v) {
		char *t = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);

		if (!first)
			jw_lit(&w, ", ");
		first = false;
		jw_lit(&w, key);
		jw_lit(&w, ": ");
		jw_lit(&w, t != NULL ? t : "?");
		free(t);
	}
	json_decref(set);
	snprintf(num, sizeof(num), "; predicted peak %.2f GiB of %.2f GiB",
	    s->per_gpu_peak_gib, m->calibrated_capacity_gib > 0 ?
	    m->calibrated_capacity_gib : m->capacity_gib);
	jw_lit(&w, num);
	if (m->calibrated_capacity_gib > 0)
		jw_lit(&w, " (the capacity scaled by how far the estimate "
		    "fell short of this run)");
	return jw_take(&w, NULL);
}

static json_t *
estimate_json(const struct diag_memory *m)
{
	const struct report *r = m->check;
	const struct mem_breakdown *b;
	json_t *j;
	char *ans;

	if (m == NULL)
		return json_null();
	if (!m->known)
		return json_pack("{s:b, s:s}", "known", 0, "verdict",
		    verdict_name(r->verdict));
	b = &r->estimate->breakdown;
	ans = answer(m);
	j = json_pack("{s:b, s:s, s:o, s:o, s:b, s:{s:o, s:o, s:o, s:o, s:o, "
	    "s:o, s:o}, s:s?, s:o, s:s?, s:o, s:o, s:s?}",
	    "known", 1, "verdict", verdict_name(r->verdict),
	    "capacity_gib", diagnose_encode_gib(m->capacity_gib),
	    "per_gpu_peak_gib", diagnose_encode_gib(m->estimate_gib), "fits", m->fits,
	    "breakdown_gib", "weights", diagnose_encode_gib(b->weights_gib),
	    "gradients", diagnose_encode_gib(b->gradients_gib),
	    "optimizer", diagnose_encode_gib(b->optimizer_gib),
	    "activations", diagnose_encode_gib(b->activations_gib),
	    "logits", diagnose_encode_gib(b->logits_gib), "buffers", diagnose_encode_gib(b->buffers_gib),
	    "runtime", diagnose_encode_gib(b->runtime_gib),
	    "term", m->term, "term_gib", m->term != NULL ?
	    diagnose_encode_gib(m->term_gib) : json_null(), "term_why", m->term_why,
	    "calibrated_capacity_gib", m->calibrated_capacity_gib > 0 ?
	    diagnose_encode_gib(m->calibrated_capacity_gib) : json_null(),
	    "suggestions", suggestions_json(m), "answer", ans);
	free(ans);
	return j;
}

/* One diagnosis; with the estimator's first suggestion as the top CUDA
   OOM's config change. */
static json_t *
item_json(const struct diagnosis *g, const struct diag_memory *m,
    bool top_oom)
{
	const struct diag_sig *s = g->sig;
	json_t *lines = json_array(), *values = json_object(), *fix, *j;
	size_t i;

	for (i = 0; lines != NULL && i < g->nlines; i++)
		json_array_append_new(lines, diagnose_encode_line(&g->lines[i]));
	for (i = 0; values != NULL && i < g->nvars; i++)
		json_object_set_new(values, g->vars[i].name,
		    json_string(g->vars[i].value));
	fix = json_pack("{s:s, s:s?, s:o, s:o}", "text", g->fix, "config",
	    s->yaml, "env", lines_array(s->env), "commands",
	    lines_array(s->cmd));
	if (fix != NULL && top_oom && m != NULL && m->nsuggestions > 0) {
		json_t *set = json_loads(m->suggestions[0].set_json, 0, NULL);
		char *yaml = diagnose_encode_yaml(set);

		if (yaml != NULL)
			json_object_set_new(fix, "config", json_string(yaml));
		json_object_set_new(fix, "predicted_peak_gib",
		    diagnose_encode_gib(m->suggestions[0].per_gpu_peak_gib));
		free(yaml);
		json_decref(set);
	}
	j = json_pack("{s:s, s:s, s:s, s:I, s:o, s:s, s:o, s:o, s:o}",
	    "id", s->id, "class", s->klass, "title", s->title,
	    "count", (json_int_t)g->count, "lines", lines, "cause", g->cause,
	    "fix", fix, "rules", rules_array(s->rules), "values", values);
	return j;
}

json_t *
diagnose_encode_json(const struct diag_report *d, const char *file)
{
	json_t *items = json_array(), *errors = json_array(), *j;
	json_t *versions = json_object();
	bool top_done = false;
	size_t i;

	for (i = 0; items != NULL && i < d->n; i++) {
		bool top = !top_done &&
		    d->items[i].sig->extract == DIAG_X_CUDA_OOM;

		top_done |= top;
		json_array_append_new(items, item_json(&d->items[i], d->mem,
		    top));
	}
	for (i = 0; errors != NULL && i < d->nlast_errors; i++)
		json_array_append_new(errors,
		    diagnose_encode_line(&d->last_errors[i]));
	for (i = 0; versions != NULL && i < d->nversions; i++)
		json_object_set_new(versions, d->versions[i].name,
		    json_string(d->versions[i].value));
	j = json_pack("{s:b, s:o, s:o, s:o, s:o, s:o, s:o, s:{s:I, s:I, s:I, "
	    "s:b, s:I}}", "known", d->n > 0, "diagnoses", items,
	    "versions", versions,
	    "oom", oom_json(&d->oom), "estimate", d->mem != NULL ?
	    estimate_json(d->mem) : json_null(),
	    "last_exception", diagnose_encode_line(&d->last_exception),
	    "last_errors", errors, "log", "bytes", (json_int_t)d->bytes,
	    "lines", (json_int_t)d->lines, "first_line",
	    (json_int_t)d->first_line, "cut", d->cut, "long_lines",
	    (json_int_t)d->long_lines);
	if (j != NULL && file != NULL)
		json_object_set_new(j, "file", json_string(file));
	return j;
}

/* ---- text ----------------------------------------------------------- */

/* Each line of text, indented, after a label. */
static void
text_block(FILE *out, const char *label, const char *text)
{
	const char *p = text;

	if (text == NULL || *text == '\0')
		return;
	fprintf(out, "  %s:\n", label);
	while (*p != '\0') {
		size_t n = strcspn(p, "\n");

		fprintf(out, "    %.*s\n", (int)n, p);
		p += n + (p[n] == '\n');
	}
}

void
diagnose_encode_text(FILE *out, const struct diag_report *d,
    const char *file, bool colour)
{
	const char *b = colour ? "\033[1m" : "", *o = colour ? "\033[0m" : "";
	const struct diag_memory *m = d->mem;
	bool top_done = false;
	char *ans;
	size_t i, k;

	if (d->n == 0) {
		fprintf(out, "%s%s: no known signature%s", b, file, o);
		if (d->nlast_errors == 0) {
			fprintf(out, "; no line reads as an error\n");
			return;
		}
		fprintf(out, "; the last error lines:\n");
		for (i = 0; i < d->nlast_errors; i++)
			fprintf(out, "  %u: %s\n", d->last_errors[i].line,
			    d->last_errors[i].text);
	}
	for (i = 0; i < d->n; i++) {
		const struct diagnosis *g = &d->items[i];

		fprintf(out, "%s%s:%u: %s: %s%s", b, file, g->lines[0].line,
		    g->sig->id, g->sig->title, o);
		if (g->count > 1)
			fprintf(out, " (%zu lines)", g->count);
		fputc('\n', out);
		for (k = 0; k < g->nlines; k++)
			fprintf(out, "  %u: %s\n", g->lines[k].line,
			    g->lines[k].text);
		fprintf(out, "  cause: %s\n  fix: %s\n", g->cause, g->fix);
		if (!top_done && g->sig->extract == DIAG_X_CUDA_OOM && m != NULL &&
		    m->nsuggestions > 0) {
			ans = answer(m);
			fprintf(out, "  with this config: %s\n", ans != NULL ?
			    ans : "see the estimate below");
			free(ans);
		} else {
			text_block(out, "set", g->sig->yaml);
		}
		top_done |= g->sig->extract == DIAG_X_CUDA_OOM;
		text_block(out, "env", g->sig->env);
		text_block(out, "run", g->sig->cmd);
		if (g->sig->rules != NULL)
			fprintf(out, "  rules: %s\n", g->sig->rules);
	}
	for (i = 0; i < d->nversions; i++)
		fprintf(out, "%s%s %s", i == 0 ? "versions: " : ", ",
		    d->versions[i].name, d->versions[i].value);
	if (d->nversions > 0)
		fputc('\n', out);
	if (m == NULL)
		return;
	if (!m->known) {
		fprintf(out, "%sestimate:%s the model is unknown to the "
		    "estimator (estimate.model_unknown)\n", b, o);
		return;
	}
	fprintf(out, "%sestimate:%s %.2f GiB per GPU of %.2f GiB (%s)\n", b, o,
	    m->estimate_gib, m->capacity_gib, m->fits ? "fits" :
	    "does not fit");
	if (m->term != NULL)
		fprintf(out, "  term: %s: %s\n", m->term, m->term_why);
	if (m->calibrated_capacity_gib > 0)
		fprintf(out, "  the run needed %.2f GiB: suggestions searched "
		    "at %.2f GiB\n", d->oom.needed_gib,
		    m->calibrated_capacity_gib);
	for (i = 0; i < m->nsuggestions; i++) {
		json_t *set = json_loads(m->suggestions[i].set_json, 0, NULL);
		char *yaml = diagnose_encode_yaml(set);

		fprintf(out, "  predicted peak %.2f GiB (%s):\n",
		    m->suggestions[i].per_gpu_peak_gib, m->suggestions[i].why);
		text_block(out, "set", yaml);
		free(yaml);
		json_decref(set);
	}
}

/* ---- the table ------------------------------------------------------ */

/* text with '|' escaped and newlines as <br> (a Markdown cell). */
static void
cell(FILE *out, const char *text)
{
	const char *p;

	for (p = text != NULL ? text : ""; *p != '\0'; p++) {
		if (*p == '|')
			fputs("\\|", out);
		else if (*p == '\n')
			fputs(p[1] != '\0' ? "<br>" : "", out);
		else
			fputc(*p, out);
	}
}

void
diagnose_encode_markdown(FILE *out)
{
	size_t n, i, k;
	const struct diag_sig *s = diagnose_signatures(&n);

	fprintf(out, "# Failure signatures\n\n"
	    "Generated by `make docs` from the signature table "
	    "(core/diagnose_sig.c); do not edit.\n\n"
	    "`preflight diagnose LOG [--config FILE]` and `POST /v1/diagnose` "
	    "read a failed run's log against this table. A line belongs to "
	    "the first row it matches, and diagnoses are listed in table "
	    "order, so a broken install or a refused config comes before "
	    "the CUDA OOM, and a CUDA OOM before the NCCL timeouts it sets "
	    "off on the other ranks. A row matches a line holding one of its "
	    "patterns (fixed strings, case-sensitive) and every \"also\" "
	    "string, and none of its \"not\" strings. The CUDA OOM rows are "
	    "picked by the message's numbers (memory held by another "
	    "process, reserved-but-unallocated memory at least the failed "
	    "allocation and 5%% of the GPU) and by the traceback around it "
	    "(loading, optimizer step, loss, forward/backward). With a "
	    "config, the OOM is held against the estimate at the capacity "
	    "the message reports, and the answer is the estimator's: the "
	    "keys to set and the predicted peak. A log that matches no row "
	    "gets \"no known signature\" with its last error lines quoted.\n\n"
	    "In the cause and fix, `{name}` is a value read from the log "
	    "(the allocator's numbers, a symbol, a module, shapes, ranks) and "
	    "a `[bracketed]` part appears only when the log gave its values. "
	    "Version lines (NCCL's banner, nvidia-smi, nvcc, DeepSpeed's info "
	    "line, pip freeze) are reported beside the diagnoses. "
	    "The rules are the preflight rules (docs/rules.md) that catch the "
	    "same failure before launch.\n\n"
	    "Limits (hostile input): the last 64 MiB and 2,000,000 lines are "
	    "read, lines are split at `\\r` and each piece is matched on its "
	    "first 16 KiB, with one Aho-Corasick automaton (no "
	    "backtracking).\n\n"
	    "| id | class | what | matches | cause | fix | rules |\n"
	    "| --- | --- | --- | --- | --- | --- | --- |\n");
	for (i = 0; i < n; i++) {
		fprintf(out, "| <a id=\"%s\"></a>`%s` | %s | ", s[i].id,
		    s[i].id, s[i].klass);
		cell(out, s[i].title);
		fputs(" | ", out);
		for (k = 0; k < DIAG_ANY && s[i].any[k] != NULL; k++) {
			fputs(k > 0 ? "<br>`" : "`", out);
			cell(out, s[i].any[k]);
			fputs("`", out);
		}
		for (k = 0; k < DIAG_ALSO && s[i].all[k] != NULL; k++) {
			fputs("<br>also `", out);
			cell(out, s[i].all[k]);
			fputs("`", out);
		}
		for (k = 0; k < DIAG_ALSO && s[i].none[k] != NULL; k++) {
			fputs("<br>not `", out);
			cell(out, s[i].none[k]);
			fputs("`", out);
		}
		if (s[i].when != DIAG_ALWAYS) {
			static const char *const when[] = { "", "memory held "
			    "by another process", "fragmented memory",
			    "frames of loading", "frames of the optimizer step",
			    "frames of the loss or LM head", "frames of "
			    "forward or backward", "a Ray job" };

			fprintf(out, "<br>when: %s", when[s[i].when]);
		}
		fputs(" | ", out);
		cell(out, s[i].cause);
		fputs(" | ", out);
		cell(out, s[i].fix);
		if (s[i].yaml != NULL) {
			fputs("<br>config: `", out);
			cell(out, s[i].yaml);
			fputs("`", out);
		}
		if (s[i].env != NULL) {
			fputs("<br>env: `", out);
			cell(out, s[i].env);
			fputs("`", out);
		}
		fputs(" | ", out);
		for (k = 0; s[i].rules != NULL && s[i].rules[k] != '\0'; k++)
			if (s[i].rules[k] == ',')
				fputs(", ", out);
			else
				fputc(s[i].rules[k], out);
		fputs(" |\n", out);
	}
}

json_t *
diagnose_encode_signatures(void)
{
	size_t n, i, k;
	const struct diag_sig *s = diagnose_signatures(&n);
	json_t *arr = json_array();

	for (i = 0; arr != NULL && i < n; i++) {
		json_t *any = json_array();

		for (k = 0; any != NULL && k < DIAG_ANY && s[i].any[k] != NULL;
		    k++)
			json_array_append_new(any, json_string(s[i].any[k]));
		json_array_append_new(arr, json_pack("{s:s, s:s, s:s, s:o, "
		    "s:s, s:s, s:s?, s:o, s:o, s:o}", "id", s[i].id, "class",
		    s[i].klass, "title", s[i].title, "patterns", any, "cause",
		    s[i].cause, "fix", s[i].fix, "config", s[i].yaml, "env",
		    lines_array(s[i].env), "commands", lines_array(s[i].cmd),
		    "rules", rules_array(s[i].rules)));
	}
	return arr;
}
