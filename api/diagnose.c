/*
 * api/diagnose: see diagnose.h.  POST /v1/diagnose runs core/diagnose on
 * the log; with a config it stores the config as a check exactly as POST
 * /v1/checks does (the request goes through h_post_check, so decoding,
 * policy, team and storage are that handler's), holds the log's CUDA OOM
 * against the estimate and stores the diagnosis with that check; with a
 * check_id it uses the team's stored check (another team's is a 404).
 */
#include "api/diagnose.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "api/api_int.h"
#include "api/encode.h"
#include "api/jsonw.h"
#include "core/arena.h"
#include "core/estimate.h"
#include "core/report.h"
#include "core/suggest.h"

#define LIST_DEFAULT 50
#define LIST_MAX 200

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
static json_t *
line_json(const struct diag_line *l)
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

/* A GiB number, or null when the message did not give it. */
static json_t *
gib(unsigned have, unsigned bit, double v)
{
	return (have & bit) != 0 ? json_real((double)(long long)(v * 100 +
	    0.5) / 100) : json_null();
}

static json_t *
num2(double v)
{
	return json_real((double)(long long)(v * 100 + (v < 0 ? -0.5 : 0.5)) /
	    100);
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
		    num2(s->per_gpu_peak_gib), "tokens_per_second",
		    num2(s->tokens_per_second), "why", s->why));
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
	    "capacity_gib", num2(m->capacity_gib),
	    "per_gpu_peak_gib", num2(m->estimate_gib), "fits", m->fits,
	    "breakdown_gib", "weights", num2(b->weights_gib),
	    "gradients", num2(b->gradients_gib),
	    "optimizer", num2(b->optimizer_gib),
	    "activations", num2(b->activations_gib),
	    "logits", num2(b->logits_gib), "buffers", num2(b->buffers_gib),
	    "runtime", num2(b->runtime_gib),
	    "term", m->term, "term_gib", m->term != NULL ?
	    num2(m->term_gib) : json_null(), "term_why", m->term_why,
	    "calibrated_capacity_gib", m->calibrated_capacity_gib > 0 ?
	    num2(m->calibrated_capacity_gib) : json_null(),
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
		json_array_append_new(lines, line_json(&g->lines[i]));
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
		    num2(m->suggestions[0].per_gpu_peak_gib));
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
		json_array_append_new(errors, line_json(&d->last_errors[i]));
	j = json_pack("{s:b, s:o, s:o, s:o, s:o, s:o, s:{s:I, s:I, s:I, "
	    "s:b, s:I}}", "known", d->n > 0, "diagnoses", items,
	    "oom", oom_json(&d->oom), "estimate", d->mem != NULL ?
	    estimate_json(d->mem) : json_null(),
	    "last_exception", line_json(&d->last_exception),
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

/* ---- HTTP ----------------------------------------------------------- */

static void
bad(struct api_resp *resp, const char *msg)
{
	api_problem(resp, 422, "invalid-field", "Unprocessable request", NULL,
	    "%s", msg);
}

/*
 * Run h_post_check on {config, context, name} (dry: not stored) in req's
 * arena: its report (with the resolved context) into *r, the stored id
 * into id.  On failure resp holds its problem and -1 is returned.
 */
static int
check_via_checks(const struct report **r, char id[27], struct api_ctx *ctx,
    const struct api_req *req, json_t *body, bool dry,
    struct api_resp *resp)
{
	struct api_req sub = *req;
	struct api_resp sr;
	struct query q = { .n = 0 };
	struct route_match m = { .nparam = 0 };
	json_t *stored;
	char *text = json_dumps(body, JSON_COMPACT);

	if (text == NULL) {
		api_problem(resp, 500, "internal", "Internal Server Error",
		    NULL, "out of memory");
		return -1;
	}
	sub.method = "POST";
	sub.path = "/v1/checks";
	sub.query = dry ? "dry_run=true" : "";
	sub.content_type = "application/json";
	sub.idem_key = NULL;
	sub.body = text;
	sub.body_len = strlen(text);
	if (dry) {
		q.key[0] = "dry_run";
		q.value[0] = "true";
		q.n = 1;
	}
	memset(&sr, 0, sizeof(sr));
	h_post_check(ctx, &sub, &q, &m, &sr);
	free(text);
	if (sr.status != 200 && sr.status != 201) {
		api_resp_fini(resp);
		*resp = sr;	/* its problem is ours: the config is */
		return -1;
	}
	*r = sr.report;
	id[0] = '\0';
	stored = dry ? NULL : json_loadb(sr.body, sr.body_len, 0, NULL);
	if (stored != NULL)
		snprintf(id, 27, "%s", json_string_value(json_object_get(stored,
		    "id")) != NULL ? json_string_value(json_object_get(stored,
		    "id")) : "");
	json_decref(stored);
	api_resp_fini(&sr);
	if (*r == NULL || (!dry && id[0] == '\0')) {
		api_problem(resp, 500, "internal", "Internal Server Error",
		    NULL, "the check could not be stored");
		return -1;
	}
	return 0;
}

/* The decoded request. */
struct drequest {
	json_t *json;		/* the body; owned */
	const char *log;	/* borrowed from json */
	size_t log_len;
	json_t *config;		/* string, or NULL */
	const char *check_id;
	json_t *context;	/* object, or NULL */
	json_t *name;		/* string, or NULL */
};

static int
decode(struct drequest *d, const struct api_req *req, struct api_resp *resp)
{
	char mt[64];
	json_error_t jerr;
	const char *key, *ct = req->content_type;
	json_t *v;
	size_t i = 0;

	memset(d, 0, sizeof(*d));
	while (ct != NULL && *ct == ' ')
		ct++;
	for (; ct != NULL && ct[i] != '\0' && ct[i] != ';' && ct[i] != ' ' &&
	    i + 1 < sizeof(mt); i++)
		mt[i] = (char)(ct[i] >= 'A' && ct[i] <= 'Z' ? ct[i] + 32 :
		    ct[i]);
	mt[i] = '\0';
	if (strcmp(mt, "application/json") != 0) {
		api_problem(resp, 415, "unsupported-media-type",
		    "Unsupported Media Type", NULL, "send Content-Type: "
		    "application/json: {\"log\": ..., \"config\" or "
		    "\"check_id\", \"context\", \"name\"}");
		return -1;
	}
	d->json = json_loadb(req->body != NULL ? req->body : "",
	    req->body_len, JSON_REJECT_DUPLICATES, &jerr);
	if (d->json == NULL || !json_is_object(d->json)) {
		struct err_loc loc = { 0 };

		loc.line = jerr.line > 0 ? (unsigned)jerr.line : 1;
		loc.col = jerr.column > 0 ? (unsigned)jerr.column : 1;
		api_problem(resp, 400, "invalid-json", "Invalid JSON",
		    d->json == NULL ? &loc : NULL, "%s", d->json == NULL ?
		    jerr.text : "the body must be a JSON object");
		return -1;
	}
	json_object_foreach(d->json, key, v) {
		if (strcmp(key, "log") == 0 && json_is_string(v)) {
			d->log = json_string_value(v);
			d->log_len = json_string_length(v);
		} else if (strcmp(key, "config") == 0 && json_is_string(v)) {
			d->config = v;
		} else if (strcmp(key, "check_id") == 0 && json_is_string(v)) {
			d->check_id = json_string_value(v);
		} else if (strcmp(key, "context") == 0 && json_is_object(v)) {
			d->context = v;
		} else if (strcmp(key, "name") == 0 && json_is_string(v)) {
			d->name = v;
		} else if (strcmp(key, "log") == 0 ||
		    strcmp(key, "config") == 0 ||
		    strcmp(key, "check_id") == 0 || strcmp(key, "name") == 0) {
			api_problem(resp, 422, "invalid-field",
			    "Unprocessable request", NULL, "%s must be a "
			    "string", key);
			return -1;
		} else if (strcmp(key, "context") == 0) {
			bad(resp, "context must be an object");
			return -1;
		} else {
			api_problem(resp, 422, "invalid-field",
			    "Unprocessable request", NULL, "unknown field "
			    "'%.64s'; known: log, config, check_id, context, "
			    "name", key);
			return -1;
		}
	}
	if (d->log == NULL) {
		bad(resp, "log is required: the failed run's output, as text");
		return -1;
	}
	if (d->config != NULL && d->check_id != NULL) {
		bad(resp, "give config or check_id, not both");
		return -1;
	}
	if (d->config == NULL && (d->context != NULL || d->name != NULL)) {
		bad(resp, d->check_id != NULL ? "a stored check brings its own "
		    "context and name" : "context and name describe a config: "
		    "send config too");
		return -1;
	}
	return 0;
}

/* The body for a check of the stored check c (its config and context). */
static json_t *
stored_body(const struct store_check *c)
{
	json_t *ctxj = json_loads(c->context_json, 0, NULL);

	if (ctxj == NULL)
		return NULL;
	json_object_del(ctxj, "gpus_per_node");	/* derived */
	return json_pack("{s:s%, s:o}", "config", c->config, c->config_len,
	    "context", ctxj);
}

/* The diagnosis row for check check_id of team and store it. */
static int
store_diagnosis(struct api_ctx *ctx, const struct api_req *req,
    const struct diag_report *d, const struct report *r, json_t *out,
    const char *team, const char *check_id, const char *name,
    const char *sha, struct api_resp *resp)
{
	struct store_diagnosis row;
	struct err e = { 0 };
	char created[40], *json = NULL, *lines = NULL, *ctxj = NULL;
	json_t *lj = json_array();
	size_t i;
	int rv = -1;

	memset(&row, 0, sizeof(row));
	row.created_at_ms = ctx->now_ms(ctx->env);
	api_new_id(row.id, ctx, row.created_at_ms);
	api_format_time(created, sizeof(created), row.created_at_ms);
	json_object_set_new(out, "id", json_string(row.id));
	json_object_set_new(out, "created_at", json_string(created));
	json_object_set_new(out, "team", json_string(team));
	json_object_set_new(out, "check_id", json_string(check_id));
	json_object_set_new(out, "name", json_string(name));
	row.team = team;
	row.check_id = check_id;
	row.name = name;
	row.config_sha256 = sha;
	row.gpu = r->ctx.gpu;
	row.first = d->n > 0 ? d->items[0].sig->id : NULL;
	if ((d->oom.have & (DIAG_OOM_NEEDED | DIAG_OOM_CAPACITY)) ==
	    (DIAG_OOM_NEEDED | DIAG_OOM_CAPACITY)) {
		row.measured = true;
		row.measured_peak_gib = d->oom.needed_gib;
		row.capacity_gib = d->oom.capacity_gib;
	}
	for (i = 0; lj != NULL && i < d->n; i++)
		if (d->items[i].sig->extract == DIAG_X_CUDA_OOM) {
			size_t k;

			for (k = 0; k < d->items[i].nlines; k++)
				json_array_append_new(lj,
				    line_json(&d->items[i].lines[k]));
			break;
		}
	lines = lj != NULL ? json_dumps(lj, JSON_COMPACT) : NULL;
	json = json_dumps(out, JSON_COMPACT);
	ctxj = encode_context_json_text(&r->ctx);
	row.lines_json = lines;
	row.json = json;
	row.context_json = ctxj;
	if (lines == NULL || json == NULL || ctxj == NULL) {
		api_problem(resp, 500, "internal", "Internal Server Error",
		    NULL, "out of memory");
		goto out;
	}
	if (ctx->store.ops->put_diagnosis(ctx->store.self, &row, &e) != 0) {
		api_problem_err(resp, &e);
		goto out;
	}
	rv = 0;
out:
	(void)req;
	json_decref(lj);
	free(lines);
	free(json);
	free(ctxj);
	return rv;
}

/* diagnose: POST /v1/diagnose */
void
h_diagnose(struct api_ctx *ctx, const struct api_req *req,
    const struct query *q, const struct route_match *m,
    struct api_resp *resp)
{
	static const char *const none[] = { NULL };
	struct drequest dr;
	struct diag_limits dl;
	struct diag_report *d;
	struct store_check c;
	const struct report *r = NULL;
	struct err e = { 0 };
	char id[27], sha[65] = "";
	const char *team = req->team, *name = "";
	json_t *body = NULL, *out = NULL;
	char *text;

	(void)m;
	memset(&dr, 0, sizeof(dr));
	if (query_only(q, none, resp) != 0 || decode(&dr, req, resp) != 0)
		goto done;
	diag_limits_default(&dl);
	if (diagnose_log(&d, dr.log, dr.log_len, &dl, req->arena, &e) != 0) {
		api_problem_err(resp, &e);
		goto done;
	}
	if (dr.check_id != NULL) {
		if (!api_is_id(dr.check_id) ||
		    ctx->store.ops->get_check(ctx->store.self, &c,
		    dr.check_id, req->admin ? NULL : req->team, req->arena,
		    &e) != 0) {
			if (e.code == ERR_OK || e.code == ERR_NOTFOUND)
				api_problem(resp, 404, "not-found",
				    "Not Found", NULL, "no such check");
			else
				api_problem_err(resp, &e);
			goto done;
		}
		body = stored_body(&c);
		if (body == NULL || check_via_checks(&r, id, ctx, req, body,
		    true, resp) != 0)
			goto done;
		snprintf(id, sizeof(id), "%s", c.id);
		snprintf(sha, sizeof(sha), "%s", c.config_sha256);
		team = c.team;
		name = c.name;
		if (diagnose_config(d, c.config, c.config_len, &r->ctx,
		    &ctx->lim, req->arena, &e) != 0) {
			api_problem_err(resp, &e);
			goto done;
		}
	} else if (dr.config != NULL) {
		body = json_pack("{s:O, s:O?, s:O?}", "config", dr.config,
		    "context", dr.context, "name", dr.name);
		if (body == NULL || check_via_checks(&r, id, ctx, req, body,
		    false, resp) != 0)
			goto done;
		snprintf(sha, sizeof(sha), "%s", r->config_sha256);
		name = dr.name != NULL ? json_string_value(dr.name) : "";
		if (diagnose_config(d, json_string_value(dr.config),
		    json_string_length(dr.config), &r->ctx, &ctx->lim,
		    req->arena, &e) != 0) {
			api_problem_err(resp, &e);
			goto done;
		}
	}
	out = diagnose_encode_json(d, NULL);
	if (out == NULL) {
		api_problem(resp, 500, "internal", "Internal Server Error",
		    NULL, "out of memory");
		goto done;
	}
	if (r != NULL && store_diagnosis(ctx, req, d, r, out, team, id, name,
	    sha, resp) != 0)
		goto done;
	text = json_dumps(out, JSON_COMPACT | JSON_REAL_PRECISION(10));
	if (text == NULL)
		api_problem(resp, 500, "internal", "Internal Server Error",
		    NULL, "out of memory");
	else
		api_json_text(resp, 200, text, strlen(text));
done:
	json_decref(out);
	json_decref(body);
	json_decref(dr.json);
}

/* "failed: oom.activations, needed at least 71.30 GiB of 79.19 GiB on
   h100-sxm" (just the id without a measurement) into out. */
static void
summary_of(char *out, size_t cap, const struct store_diagnosis *s)
{
	if (s->measured)
		snprintf(out, cap, "failed: %s, needed at least %.2f GiB of "
		    "%.2f GiB on %s", s->first != NULL ? s->first :
		    "no known signature", s->measured_peak_gib,
		    s->capacity_gib, s->gpu);
	else
		snprintf(out, cap, "failed: %s on %s", s->first != NULL ?
		    s->first : "no known signature", s->gpu);
}

void
diagnose_history(struct api_ctx *ctx, const struct api_req *req,
    const char *team, const char *name, json_t *items)
{
	struct store_mquery sq;
	struct store_diagnosis *rows;
	struct err e = { 0 };
	size_t n = 0, i, k;
	json_t *item;
	char summary[256];

	memset(&sq, 0, sizeof(sq));
	sq.team = team;
	sq.name = name;
	sq.limit = LIST_MAX * 4;
	sq.all = true;
	if (ctx->store.ops->list_measurements(ctx->store.self, &rows, &n, &sq,
	    req->arena, &e) != 0)
		n = 0;
	json_array_foreach(items, i, item) {
		json_t *f = json_array();
		const char *id = json_string_value(json_object_get(item,
		    "id"));

		for (k = 0; f != NULL && id != NULL && k < n; k++) {
			if (strcmp(rows[k].check_id, id) != 0)
				continue;
			summary_of(summary, sizeof(summary), &rows[k]);
			json_array_append_new(f, json_pack("{s:s, s:s?, s:o, "
			    "s:s}", "id", rows[k].id, "diagnosis",
			    rows[k].first, "measured_peak_gib",
			    rows[k].measured ? num2(rows[k].measured_peak_gib) :
			    json_null(), "summary", summary));
		}
		json_object_set_new(item, "failures", f);
	}
}

/* A measurement as listMeasurements serves it. */
static json_t *
measurement_json(const struct store_diagnosis *s)
{
	char created[40], summary[256];
	json_t *ctxj = json_loads(s->context_json, 0, NULL);
	json_t *lines = json_loads(s->lines_json, 0, NULL);

	api_format_time(created, sizeof(created), s->created_at_ms);
	summary_of(summary, sizeof(summary), s);
	return json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:o, s:s?, "
	    "s:o, s:o, s:s, s:o}", "id", s->id, "created_at", created,
	    "team", s->team, "check_id", s->check_id, "name", s->name,
	    "config_sha256", s->config_sha256, "gpu", s->gpu,
	    "context", ctxj != NULL ? ctxj : json_object(),
	    "diagnosis", s->first,
	    "measured_peak_gib", num2(s->measured_peak_gib),
	    "capacity_gib", num2(s->capacity_gib), "summary", summary,
	    "lines", lines != NULL ? lines : json_array());
}

/* listMeasurements: GET /v1/measurements */
void
h_measurements(struct api_ctx *ctx, const struct api_req *req,
    const struct query *q, const struct route_match *m,
    struct api_resp *resp)
{
	static const char *const allowed[] = { "name", "config_sha256",
	    "limit", "cursor", "team", NULL };
	struct store_mquery sq;
	struct store_diagnosis *items;
	struct err e = { 0 };
	const char *v;
	long n = LIST_DEFAULT;
	size_t got, i, page;
	json_t *arr, *out;
	char *text;

	(void)m;
	if (query_only(q, allowed, resp) != 0)
		return;
	memset(&sq, 0, sizeof(sq));
	sq.team = req->admin ? query_get(q, "team") : req->team;
	sq.name = query_get(q, "name");
	sq.config_sha256 = query_get(q, "config_sha256");
	if ((v = query_get(q, "limit")) != NULL &&
	    api_parse_long(&n, v, 1, LIST_MAX) != 0) {
		api_problem(resp, 400, "bad-query", "Bad query string", NULL,
		    "limit must be an integer from 1 to %d", LIST_MAX);
		return;
	}
	if ((v = query_get(q, "cursor")) != NULL) {
		if (!api_is_id(v)) {
			api_problem(resp, 400, "bad-query", "Bad query string",
			    NULL, "cursor is not one this server issued");
			return;
		}
		sq.before_id = v;
	}
	sq.limit = (unsigned)n + 1;	/* one more: is there a next page? */
	if (ctx->store.ops->list_measurements(ctx->store.self, &items, &got,
	    &sq, req->arena, &e) != 0) {
		api_problem_err(resp, &e);
		return;
	}
	page = got < sq.limit ? got : sq.limit - 1;
	arr = json_array();
	for (i = 0; arr != NULL && i < page; i++)
		json_array_append_new(arr, measurement_json(&items[i]));
	out = json_pack("{s:o, s:o}", "items", arr, "next_cursor",
	    got > page && page > 0 ? json_string(items[page - 1].id) :
	    json_null());
	text = out != NULL ? json_dumps(out, JSON_COMPACT |
	    JSON_REAL_PRECISION(10)) : NULL;
	json_decref(out);
	if (text == NULL)
		api_problem(resp, 500, "internal", "Internal Server Error",
		    NULL, "out of memory");
	else
		api_json_text(resp, 200, text, strlen(text));
}
