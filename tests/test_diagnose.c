/*
 * tests/test_diagnose: `preflight diagnose` (issue #19).
 *
 * Every fixture under tests/fixtures/diagnose/ is a log excerpt from a
 * public issue (its URL in the header) with the diagnosis a reader of
 * those lines would give first; each must get it first, and a log with no
 * known signature must get none, with its last error lines quoted.  Then
 * the CUDA OOM numbers against the messages' own text, the OOM path with a
 * config against the estimator, the table's shape, every signature's
 * trigger, the limits, hostile input, the allocation sweep, the CLI and
 * the generated docs.
 */
#include <dirent.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "core/arena.h"
#include "core/check.h"
#include "core/diagnose.h"
#include "core/diagnose_int.h"
#include "core/doc.h"
#include "core/estimate.h"
#include "core/keys.h"
#include "core/rules.h"
#include "core/suggest.h"
#include "api/api.h"
#include "server/store_sqlite.h"
#include "tests/fixture.h"
#include "tests/fuzz/fuzz.h"
#include "tests/fixture_api.h"

#define FIXDIR "tests/fixtures/diagnose"
#define ARENA_CAP ((size_t)64 << 20)

/* A fixture: its header fields and the log after the header. */
struct fixture {
	char name[320];
	char *text;		/* the whole file, malloc'd */
	const char *source;	/* "# source:" value, in text */
	const char *expect;	/* "# expect:" value: an id or "none" */
	const char *config;	/* "# config:" file name, or NULL */
	const char *context;	/* "# context:" "gpus=8 gpu=h100-sxm" */
	const char *dsconfig;	/* "# deepspeed-config:" file name */
	const char *last_error;	/* "# last-error:" text */
	const char *log;	/* after the header */
	size_t log_len;
};

/* Split the "# key: value" header off f->text (values NUL-terminated). */
static void
fixture_parse(struct fixture *f)
{
	static const char *const keys[] = { "source", "expect", "config",
	    "context", "deepspeed-config", "last-error", NULL };
	const char **slot[] = { &f->source, &f->expect, &f->config,
	    &f->context, &f->dsconfig, &f->last_error };
	char *p = f->text, *nl;
	size_t i, n;

	while (p[0] == '#' && p[1] == ' ') {
		for (i = 0; keys[i] != NULL; i++) {
			n = strlen(keys[i]);
			if (strncmp(p + 2, keys[i], n) == 0 && p[2 + n] == ':')
				break;
		}
		if (keys[i] == NULL)
			break;
		nl = strchr(p, '\n');
		assert_non_null(nl);
		*nl = '\0';
		*slot[i] = p + 2 + strlen(keys[i]) + 2;
		p = nl + 1;
	}
	f->log = p;
	f->log_len = strlen(p);
}

static int
by_name(const void *a, const void *b)
{
	return strcmp(((const struct fixture *)a)->name,
	    ((const struct fixture *)b)->name);
}

/* Every *.log fixture, sorted by name; *n gets the count. */
static struct fixture *
fixtures_load(size_t *n)
{
	struct fixture *all = NULL;
	struct dirent *de;
	DIR *d = opendir(FIXDIR);
	size_t k = 0, cap = 0;
	char path[512];

	assert_non_null(d);
	while ((de = readdir(d)) != NULL) {
		size_t len = strlen(de->d_name);

		if (len < 5 || strcmp(de->d_name + len - 4, ".log") != 0)
			continue;
		if (k == cap) {
			cap = cap == 0 ? 64 : cap * 2;
			all = realloc(all, cap * sizeof(*all));
			assert_non_null(all);
		}
		memset(&all[k], 0, sizeof(all[k]));
		snprintf(all[k].name, sizeof(all[k].name), "%s", de->d_name);
		snprintf(path, sizeof(path), FIXDIR "/%s", de->d_name);
		all[k].text = fixture_read(path, NULL);
		assert_non_null(all[k].text);
		fixture_parse(&all[k]);
		k++;
	}
	closedir(d);
	qsort(all, k, sizeof(*all), by_name);
	*n = k;
	return all;
}

static void
fixtures_free(struct fixture *all, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(all[i].text);
	free(all);
}

/* Line `line` (1-based) of text, copied into buf. */
static const char *
line_of(char *buf, size_t cap, const char *text, unsigned line)
{
	const char *p = text, *nl;
	unsigned k;
	size_t n;

	for (k = 1; k < line && p != NULL; k++) {
		nl = strchr(p, '\n');
		p = nl != NULL ? nl + 1 : NULL;
	}
	if (p == NULL)
		return NULL;
	nl = strchr(p, '\n');
	n = nl != NULL ? (size_t)(nl - p) : strlen(p);
	if (n >= cap)
		n = cap - 1;
	memcpy(buf, p, n);
	buf[n] = '\0';
	return buf;
}

/* Diagnose a C string with the default limits in a. */
static struct diag_report *
run(const char *log, size_t len, struct arena *a)
{
	struct diag_limits lim;
	struct diag_report *d;
	struct err e = { 0 };

	diag_limits_default(&lim);
	if (diagnose_log(&d, log, len, &lim, a, &e) != 0)
		fail_msg("diagnose_log: %s", e.msg);
	return d;
}

/* Is s valid UTF-8 without control characters? */
static bool
clean_utf8(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	while (*p != '\0') {
		size_t n = *p < 0x80 ? 1 : (*p & 0xE0) == 0xC0 ? 2 :
		    (*p & 0xF0) == 0xE0 ? 3 : (*p & 0xF8) == 0xF0 ? 4 : 0;
		size_t i;

		if (n == 0 || (n == 1 && (*p < 0x20 || *p == 0x7F)))
			return false;
		for (i = 1; i < n; i++)
			if ((p[i] & 0xC0) != 0x80)
				return false;
		p += n;
	}
	return true;
}

/* Is q the text of its line in log (tabs as spaces, "..." a cut)? */
static bool
quotes_line(const char *log, const struct diag_line *q)
{
	char raw[8192], want[DIAG_QUOTE + 1];
	size_t n = strlen(q->text), i;

	if (!clean_utf8(q->text) || line_of(raw, sizeof(raw), log,
	    q->line) == NULL)
		return false;
	for (i = 0; raw[i] != '\0'; i++)
		if (raw[i] == '\t')
			raw[i] = ' ';
	memcpy(want, q->text, n + 1);
	if (n >= 3 && strcmp(want + n - 3, "...") == 0)
		want[n - 3] = '\0';
	return strstr(raw, want) != NULL;
}

/* ---- the fixtures --------------------------------------------------- */

/* Each fixture gets its expected diagnosis first, resting on its lines. */
static void
test_diagnose__every_fixture_gets_its_diagnosis_first(void **state)
{
	static const char *const classes[] = { "oom", "host", "nccl", "env",
	    "config", "ray", "checkpoint", NULL };
	bool seen[8] = { false };
	size_t n, i, k, c, none = 0, failed = 0;
	struct fixture *all = fixtures_load(&n);

	(void)state;
	for (i = 0; i < n; i++) {
		struct fixture *f = &all[i];
		struct arena a;
		struct diag_report *d;

		if (f->source == NULL ||
		    strncmp(f->source, "https://", 8) != 0 ||
		    f->expect == NULL)
			fail_msg("%s: needs '# source: https://...' and "
			    "'# expect: id' lines", f->name);
		arena_init(&a, ARENA_CAP);
		d = run(f->log, f->log_len, &a);
		if (strcmp(f->expect, "none") == 0) {
			none++;
			if (d->n != 0 || d->nlast_errors == 0 ||
			    f->last_error == NULL || strcmp(d->last_errors[
			    d->nlast_errors - 1].text, f->last_error) != 0) {
				print_message("%s: want no signature and the "
				    "last error quoted, got %zu (%s)\n",
				    f->name, d->n, d->n > 0 ?
				    d->items[0].sig->id : "-");
				failed++;
			}
		} else if (d->n == 0 ||
		    strcmp(d->items[0].sig->id, f->expect) != 0) {
			print_message("%s: want %s first, got %s\n", f->name,
			    f->expect, d->n > 0 ? d->items[0].sig->id :
			    "no known signature");
			failed++;
		} else {
			const struct diag_sig *s = d->items[0].sig;

			for (c = 0; classes[c] != NULL; c++)
				if (strcmp(classes[c], s->klass) == 0 ||
				    (strcmp(classes[c], "config") == 0 &&
				    strcmp(s->klass, "config") == 0))
					seen[c] = true;
		}
		/* Evidence lines are the log's own lines, quoted. */
		for (k = 0; k < d->n; k++) {
			const struct diagnosis *g = &d->items[k];
			size_t j;

			assert_true(g->nlines > 0);
			for (j = 0; j < g->nlines; j++)
				assert_true(quotes_line(f->log,
				    &g->lines[j]));
		}
		arena_fini(&a);
	}
	print_message("%zu fixtures, %zu without a known signature\n", n,
	    none);
	fixtures_free(all, n);
	if (failed > 0)
		fail_msg("%zu fixtures got another diagnosis first", failed);
	assert_true(n >= 40);
	assert_true(none >= 1);
	for (c = 0; classes[c] != NULL; c++)
		if (!seen[c])
			fail_msg("no fixture of class %s", classes[c]);
}


/* ---- CUDA OOM numbers ----------------------------------------------- */

static const struct fixture *
fixture_named(const struct fixture *all, size_t n, const char *name)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (strcmp(all[i].name, name) == 0)
			return &all[i];
	fail_msg("no fixture %s", name);
	return NULL;
}

/* The numbers of each message, worked out by hand from its text. */
static void
test_diagnose__oom_numbers_are_the_messages(void **state)
{
	static const struct {
		const char *name;
		int gpu;
		double tried, capacity, free, allocated, reserved, in_use;
		double other, needed;	/* -1: not derivable */
	} want[] = {
		/* new format; 6.39 GiB reserved-unallocated */
		{ "oom-fragmentation-sd-scripts-2029.log", 0, 1.99, 23.56,
		  1.23, 14.73, 6.39, 22.27, 23.56 - 1.23 - 22.27,
		  22.27 + 1.99 },
		/* old format: reserved = 22.29 in total - 22.00 allocated */
		{ "oom-optimizer-colossalai-3509.log", 5, 3.12, 23.70,
		  292.56 / 1024, 22.00, 22.29 - 22.00, -1,
		  23.70 - 292.56 / 1024 - 22.29, 22.29 + 3.12 },
		/* torch 1.x: "cached" is reserved but unallocated */
		{ "oom-other-process-pytorch-29198.log", 0, 352.0 / 1024,
		  7.92, 156.0 / 1024, 1.67, 124.28 / 1024, -1,
		  7.92 - 156.0 / 1024 - 1.67 - 124.28 / 1024,
		  1.67 + 124.28 / 1024 + 352.0 / 1024 },
		/* one message over three lines */
		{ "oom-activations-automodel-3907.log", 0, 720.0 / 1024,
		  184.31, 443.94 / 1024, 171.63, 2.00, -1,
		  184.31 - 443.94 / 1024 - 173.63, 173.63 + 720.0 / 1024 },
		/* WSL's 17179869184.00 GiB in use is dropped */
		{ "oom-logits-liger-47.log", 0, 1.95, 8.00, 0.0, 13.67,
		  9.62 / 1024, -1, -1, 8.00 + 1.95 },
		{ "oom-optimizer-llamafactory-1221.log", 5, 3.14, 31.75, 1.95,
		  28.28, 0.0, -1, 31.75 - 1.95 - 28.28, 28.28 + 3.14 },
	};
	size_t n, i;
	struct fixture *all = fixtures_load(&n);

	(void)state;
	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		const struct fixture *f = fixture_named(all, n, want[i].name);
		const struct diag_oom *o;
		struct arena a;
		struct diag_report *d;

		arena_init(&a, ARENA_CAP);
		d = run(f->log, f->log_len, &a);
		o = &d->oom;
		print_message("%s\n", want[i].name);
		assert_int_not_equal(o->line, 0);
		assert_int_equal(o->gpu, want[i].gpu);
		assert_true(fabs(o->tried_gib - want[i].tried) < 1e-6);
		assert_true(fabs(o->capacity_gib - want[i].capacity) < 1e-6);
		assert_true(fabs(o->free_gib - want[i].free) < 1e-6);
		assert_true(fabs(o->allocated_gib - want[i].allocated) < 1e-6);
		assert_true(fabs(o->reserved_gib - want[i].reserved) < 1e-6);
		assert_int_equal((o->have & DIAG_OOM_IN_USE) != 0,
		    want[i].in_use >= 0);
		if (want[i].in_use >= 0)
			assert_true(fabs(o->in_use_gib - want[i].in_use) <
			    1e-6);
		assert_int_equal((o->have & DIAG_OOM_OTHER) != 0,
		    want[i].other >= 0);
		if (want[i].other >= 0)
			assert_true(fabs(o->other_gib - want[i].other) < 1e-6);
		assert_true(fabs(o->needed_gib - want[i].needed) < 1e-6);
		assert_int_equal((o->have & DIAG_OOM_NEEDED) != 0, 1);
		/* The cause names the numbers as the message gave them. */
		assert_non_null(strstr(d->items[0].cause, "GiB"));
		arena_fini(&a);
	}
	fixtures_free(all, n);
}

/* ---- the OOM path with a config ------------------------------------- */

/* ctx from a fixture's "gpus=8 gpu=v100-32gb" line. */
static void
context_from(struct context *ctx, const char *spec)
{
	const char *p = spec;
	static char gpu[64];

	context_default(ctx);
	while (p != NULL && *p != '\0') {
		if (strncmp(p, "gpus=", 5) == 0)
			ctx->gpus = strtol(p + 5, NULL, 10);
		else if (strncmp(p, "gpu=", 4) == 0) {
			size_t n = strcspn(p + 4, " ");

			assert_true(n < sizeof(gpu));
			memcpy(gpu, p + 4, n);
			gpu[n] = '\0';
			ctx->gpu = gpu;
		}
		p = strchr(p, ' ');
		if (p != NULL)
			p++;
	}
}

/*
 * cfg with the keys of set_json appended (a JSON value is a YAML flow
 * value, and PyYAML keeps the last of duplicate keys), checked on ctx:
 * the estimator's own word on the suggestion.
 */
static const struct estimate *
estimate_with(const char *cfg, const char *set_json,
    const struct context *ctx, struct arena *a)
{
	json_t *set = json_loads(set_json, 0, NULL), *v;
	const char *key;
	struct limits lim;
	struct err e = { 0 };
	struct report *r;
	size_t cap = strlen(cfg) + 4096, n;
	char *buf = malloc(cap), *t;

	assert_non_null(set);
	assert_non_null(buf);
	n = (size_t)snprintf(buf, cap, "%s\n", cfg);
	json_object_foreach(set, key, v) {
		t = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
		assert_non_null(t);
		n += (size_t)snprintf(buf + n, cap - n, "%s: %s\n", key, t);
		free(t);
	}
	assert_true(n < cap);
	json_decref(set);
	limits_default(&lim);
	if (check_run(&r, buf, n, ctx, &lim, a, &e) != 0)
		fail_msg("check with %s: %s", set_json, e.msg);
	free(buf);
	return r->estimate;
}

/*
 * LlamaFactory #1221: llama-7b, full fine-tune, ZeRO-2, 8 x V100 32GB,
 * OOM in Adam's step.  With the config: the log's capacity, the
 * optimizer term named, the estimate over the capacity (the run did fail),
 * and suggestions the estimator says fit, ZeRO-3 (the issue's own fix)
 * among them.
 */
static void
test_diagnose__oom_with_config_names_the_term_and_keys_that_fit(void **state)
{
	size_t n, i;
	struct fixture *all = fixtures_load(&n);
	const struct fixture *f = fixture_named(all, n,
	    "oom-optimizer-llamafactory-1221.log");
	struct context ctx, at;
	struct limits lim;
	struct diag_report *d;
	struct diag_memory *mem;
	struct err e = { 0 };
	struct arena a;
	char path[512], *cfg, *ds;
	size_t cfg_len, ds_len;
	bool zero3 = false;

	(void)state;
	assert_non_null(f->config);
	snprintf(path, sizeof(path), FIXDIR "/%s", f->config);
	cfg = fixture_read(path, &cfg_len);
	snprintf(path, sizeof(path), FIXDIR "/%s", f->dsconfig);
	ds = fixture_read(path, &ds_len);
	assert_non_null(cfg);
	assert_non_null(ds);
	context_from(&ctx, f->context);
	ctx.ds_config = ds;
	ctx.ds_config_len = ds_len;
	limits_default(&lim);
	arena_init(&a, ARENA_CAP);
	d = run(f->log, f->log_len, &a);
	assert_string_equal(d->items[0].sig->id, "oom.optimizer");
	if (diagnose_config(d, cfg, cfg_len, &ctx, &lim, &a, &e) != 0)
		fail_msg("diagnose_config: %s", e.msg);
	mem = d->mem;
	assert_non_null(mem);
	assert_non_null(mem->check);
	assert_true(mem->known);
	assert_true(fabs(mem->capacity_gib - 31.75) < 1e-9);
	assert_false(mem->fits);
	assert_true(mem->estimate_gib > 31.75);
	assert_string_equal(mem->term, "optimizer");
	assert_true(fabs(mem->term_gib -
	    mem->check->estimate->breakdown.optimizer_gib) < 1e-9);
	assert_true(mem->term_gib > 0);
	assert_true(mem->calibrated_capacity_gib == 0);
	assert_true(mem->nsuggestions > 0);
	at = ctx;
	at.gpu_memory_gib = 31.75;
	for (i = 0; i < mem->nsuggestions; i++) {
		const struct suggestion *s = &mem->suggestions[i];
		const struct estimate *est = estimate_with(cfg, s->set_json,
		    &at, &a);

		print_message("set %s: %.2f GiB\n", s->set_json,
		    s->per_gpu_peak_gib);
		assert_true(s->per_gpu_peak_gib < 31.75);
		assert_true(est->known && est->fits);
		assert_true(fabs(est->per_gpu_peak_gib - s->per_gpu_peak_gib) <
		    0.01);
		zero3 |= strstr(s->set_json, "zero3") != NULL;
		/* What keeps the full fine-tune comes before adapters. */
		if (i > 0 && strstr(mem->suggestions[i - 1].set_json,
		    "\"adapter\"") != NULL)
			assert_non_null(strstr(s->set_json, "\"adapter\""));
	}
	assert_true(zero3);
	assert_null(strstr(mem->suggestions[0].set_json, "\"adapter\""));
	arena_fini(&a);
	free(cfg);
	free(ds);
	fixtures_free(all, n);
}

/*
 * When the estimate fits but the run did not, the search runs at the
 * capacity scaled by estimate / measured, and what it keeps fits there.
 * The message is made up for the arithmetic; the config is Axolotl's
 * own example.
 */
static void
test_diagnose__oom_under_estimate_searches_a_calibrated_capacity(
    void **state)
{
	static const char log[] =
	    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate "
	    "7.83 GiB. GPU 0 has a total capacity of 79.15 GiB of which 3.12 "
	    "GiB is free. Including non-PyTorch memory, this process has "
	    "76.02 GiB memory in use. Of the allocated memory 70.10 GiB is "
	    "allocated by PyTorch, and 4.40 GiB is reserved by PyTorch but "
	    "unallocated.\n";
	struct context ctx, at;
	struct limits lim;
	struct diag_report *d;
	struct diag_memory *mem;
	struct err e = { 0 };
	struct arena a;
	char path[512];
	char *cfg;
	size_t len, i;
	double want;

	(void)state;
	snprintf(path, sizeof(path), "%s/corpus/axolotl/examples/llama-3/"
	    "instruct-lora-8b.yml", fixture_shared());
	cfg = fixture_read(path, &len);
	assert_non_null(cfg);
	context_default(&ctx);
	ctx.gpu = "a100-80gb";
	limits_default(&lim);
	arena_init(&a, ARENA_CAP);
	d = run(log, sizeof(log) - 1, &a);
	assert_string_equal(d->items[0].sig->id, "oom.cuda");
	if (diagnose_config(d, cfg, len, &ctx, &lim, &a, &e) != 0)
		fail_msg("diagnose_config: %s", e.msg);
	mem = d->mem;
	assert_true(mem->known && mem->fits);
	assert_true(fabs(d->oom.needed_gib - (76.02 + 7.83)) < 1e-9);
	want = 79.15 * mem->estimate_gib / (76.02 + 7.83);
	assert_true(fabs(mem->calibrated_capacity_gib - want) < 1e-9);
	/* No phase in the log: the estimate's largest term. */
	assert_non_null(mem->term);
	assert_non_null(strstr(mem->term_why, "largest term"));
	assert_true(mem->nsuggestions > 0);
	at = ctx;
	at.gpu_memory_gib = want;
	for (i = 0; i < mem->nsuggestions; i++) {
		const struct estimate *est = estimate_with(cfg,
		    mem->suggestions[i].set_json, &at, &a);

		assert_true(mem->suggestions[i].per_gpu_peak_gib < want);
		assert_true(est->fits);
	}
	arena_fini(&a);
	free(cfg);
}

/* A config with no OOM in the log: the check, no term, no search. */
static void
test_diagnose__config_without_an_oom_only_checks(void **state)
{
	static const char log[] = "[E ProcessGroupNCCL.cpp:737] [Rank 1] "
	    "Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1, "
	    "OpType=ALLREDUCE, Timeout(ms)=1800000) ran for 1802212 "
	    "milliseconds before timing out.\n";
	static const char cfg[] = "base_model: meta-llama/Llama-3.1-8B\n"
	    "datasets:\n  - path: tatsu-lab/alpaca\n    type: alpaca\n";
	struct context ctx;
	struct limits lim;
	struct diag_report *d;
	struct err e = { 0 };
	struct arena a;

	(void)state;
	context_default(&ctx);
	limits_default(&lim);
	arena_init(&a, ARENA_CAP);
	d = run(log, sizeof(log) - 1, &a);
	assert_string_equal(d->items[0].sig->id, "nccl.timeout");
	assert_string_equal(diagnosis_var(&d->items[0], "op"), "ALLREDUCE");
	assert_string_equal(diagnosis_var(&d->items[0], "timeout_ms"),
	    "1800000");
	assert_int_equal(diagnose_config(d, cfg, sizeof(cfg) - 1, &ctx, &lim,
	    &a, &e), 0);
	assert_non_null(d->mem->check);
	assert_null(d->mem->term);
	assert_true(d->mem->calibrated_capacity_gib == 0);
	/* A config that is not YAML is the check's error, with its place. */
	assert_int_equal(diagnose_config(d, "a: [1\n", 6, &ctx, &lim, &a, &e),
	    ERR_PARSE);
	assert_int_not_equal(e.loc.line, 0);
	arena_fini(&a);
}

/* ---- the table ------------------------------------------------------ */

/* Every {name} in tpl is a known value; brackets pair up, unnested. */
static void
template_ok(const char *id, const char *tpl)
{
	const char *p;
	bool in = false;
	size_t i;

	assert_non_null(tpl);
	for (p = tpl; *p != '\0'; p++) {
		if (*p == '[' || *p == ']') {
			if ((*p == '[') == in)
				fail_msg("%s: unbalanced [ ] in %s", id, tpl);
			in = *p == '[';
		} else if (*p == '{') {
			const char *close = strchr(p, '}');
			size_t n;

			assert_non_null(close);
			n = (size_t)(close - p - 1);
			for (i = 0; diag_var_names[i] != NULL; i++)
				if (strlen(diag_var_names[i]) == n &&
				    strncmp(diag_var_names[i], p + 1, n) == 0)
					break;
			if (diag_var_names[i] == NULL)
				fail_msg("%s: unknown value {%.*s}", id, (int)n,
				    p + 1);
			p = close;
		}
	}
	assert_false(in);
}

static void
test_diagnose__table_is_well_formed(void **state)
{
	static const char *const classes[] = { "oom", "host", "nccl", "env",
	    "config", "ray", "checkpoint", "cuda", NULL };
	size_t n, i, k;
	const struct diag_sig *sigs = diagnose_signatures(&n);
	struct limits lim;

	(void)state;
	limits_default(&lim);
	assert_true(n >= 30);
	for (i = 0; i < n; i++) {
		const struct diag_sig *s = &sigs[i];

		assert_non_null(strchr(s->id, '.'));
		assert_ptr_equal(diagnose_find(s->id), s);
		for (k = 0; k < i; k++)
			assert_string_not_equal(sigs[k].id, s->id);
		for (k = 0; classes[k] != NULL; k++)
			if (strcmp(classes[k], s->klass) == 0)
				break;
		assert_non_null(classes[k]);
		assert_true(strlen(s->title) > 0 && strlen(s->title) < 80);
		assert_non_null(s->any[0]);
		for (k = 0; k < DIAG_ANY && s->any[k] != NULL; k++)
			assert_true(strlen(s->any[k]) >= 4);
		template_ok(s->id, s->cause);
		template_ok(s->id, s->fix);
		if (s->env != NULL) {
			const char *p = s->env;

			/* VAR=value lines */
			while (*p != '\0') {
				size_t len = strcspn(p, "\n");

				assert_non_null(memchr(p, '=', len));
				p += len + (p[len] == '\n');
			}
		}
		if (s->yaml != NULL) {
			struct arena a;
			struct doc *d;
			struct err e = { 0 };

			/* A YAML mapping of Axolotl's own keys. */
			arena_init(&a, 1 << 20);
			if (doc_parse(&d, s->yaml, strlen(s->yaml), &lim, &a,
			    &e) != 0)
				fail_msg("%s: yaml: %s", s->id, e.msg);
			assert_true(d->root->n > 0);
			for (k = 0; k < d->root->n; k++)
				if (keys_find(d->root->pairs[k].key->text) ==
				    NULL)
					fail_msg("%s: %s is not an Axolotl key",
					    s->id, d->root->pairs[k].key->text);
			arena_fini(&a);
		}
		if (s->rules != NULL) {
			char buf[256], *tok, *save = NULL;

			snprintf(buf, sizeof(buf), "%s", s->rules);
			for (tok = strtok_r(buf, ",", &save); tok != NULL;
			    tok = strtok_r(NULL, ",", &save))
				if (rules_find(tok) == NULL)
					fail_msg("%s: no rule %s", s->id, tok);
		}
		/* The CUDA OOM rows are the oom class, and only they. */
		assert_int_equal(s->extract == DIAG_X_CUDA_OOM,
		    strcmp(s->klass, "oom") == 0);
		/* Conditions on an OOM's numbers belong to OOM rows. */
		if (s->when != DIAG_ALWAYS && s->when != DIAG_NEAR_RAY)
			assert_int_equal(s->extract, DIAG_X_CUDA_OOM);
	}
	/* The generic OOM row comes after every condition on OOMs. */
	assert_true(diagnose_find("oom.cuda") >
	    diagnose_find("oom.activations"));
	assert_null(diagnose_find("no.such"));
}

/* ---- every signature triggers, and only on its lines ---------------- */

/* The first diagnosis of one line (after `before`, if given). */
static const char *
first_of(const char *before, const char *line, struct arena *a)
{
	char buf[4096];
	struct diag_report *d;
	int n;

	n = snprintf(buf, sizeof(buf), "%s%s%s\n", before != NULL ? before :
	    "", before != NULL ? "\n" : "", line);
	assert_true(n > 0 && (size_t)n < sizeof(buf));
	d = run(buf, (size_t)n, a);
	return d->n > 0 ? d->items[0].sig->id : "none";
}

/* Does the log (one line) get diagnosis id at all? */
static bool
has_item(const char *line, const char *id, struct arena *a)
{
	struct diag_report *d = run(line, strlen(line), a);
	size_t i;

	for (i = 0; i < d->n; i++)
		if (strcmp(d->items[i].sig->id, id) == 0)
			return true;
	return false;
}

static void
test_diagnose__every_signature_triggers_on_its_own_text(void **state)
{
	static const char ray[] = "(RayTrainWorker pid=4101) ray::train()";
	size_t n, i, k;
	const struct diag_sig *sigs = diagnose_signatures(&n);
	struct arena a;
	char line[1024];

	(void)state;
	arena_init(&a, ARENA_CAP);
	for (i = 0; i < n; i++) {
		const struct diag_sig *s = &sigs[i];

		if (s->extract == DIAG_X_CUDA_OOM)
			continue;	/* below, by their numbers */
		for (k = 0; k < DIAG_ANY && s->any[k] != NULL; k++) {
			snprintf(line, sizeof(line), "x %s %s %s", s->any[k],
			    s->all[0] != NULL ? s->all[0] : "",
			    s->all[1] != NULL ? s->all[1] : "");
			if (strcmp(first_of(s->when == DIAG_NEAR_RAY ? ray :
			    NULL, line, &a), s->id) != 0)
				fail_msg("'%s' is not %s first (%s)", line,
				    s->id, first_of(NULL, line, &a));
			/* Without what it also needs, not it. */
			if (s->all[0] != NULL) {
				snprintf(line, sizeof(line), "x %s",
				    s->any[k]);
				assert_false(has_item(line, s->id, &a));
			}
			if (s->none[0] != NULL) {
				snprintf(line, sizeof(line), "x %s %s",
				    s->any[k], s->none[0]);
				assert_false(has_item(line, s->id, &a));
			}
			if (s->when == DIAG_NEAR_RAY) {
				snprintf(line, sizeof(line), "x %s", s->any[k]);
				assert_false(has_item(line, s->id, &a));
			}
		}
	}
	arena_fini(&a);
}

static void
test_diagnose__oom_rows_follow_numbers_and_frames(void **state)
{
	static const struct {
		const char *before;	/* a frame, or NULL */
		const char *message;
		const char *want;
	} cases[] = {
		{ NULL, "torch.OutOfMemoryError: CUDA out of memory. Tried to "
		  "allocate 1.00 GiB. GPU 0 has a total capacity of 24.00 GiB "
		  "of which 0.50 GiB is free. Including non-PyTorch memory, "
		  "this process has 10.00 GiB memory in use.",
		  "oom.other_process" },
		{ "    optimizer.step()", "torch.OutOfMemoryError: CUDA out "
		  "of memory. Tried to allocate 1.00 GiB. GPU 0 has a total "
		  "capacity of 24.00 GiB of which 0.50 GiB is free. Including "
		  "non-PyTorch memory, this process has 23.40 GiB memory in "
		  "use. Of the allocated memory 18.00 GiB is allocated by "
		  "PyTorch, and 5.00 GiB is reserved by PyTorch but "
		  "unallocated.", "oom.fragmentation" },
		{ "  File \"m.py\", line 9, in from_pretrained",
		  "RuntimeError: CUDA error: out of memory", "oom.weights" },
		{ "    optimizer.step()", "torch.OutOfMemoryError: CUDA out of "
		  "memory. Tried to allocate 1.00 GiB.", "oom.optimizer" },
		{ "    loss = F.cross_entropy(logits, labels)",
		  "torch.cuda.OutOfMemoryError: CUDA out of memory.",
		  "oom.logits" },
		{ "    loss.backward()", "torch.OutOfMemoryError: CUDA out of "
		  "memory.", "oom.activations" },
		/* 0.30 GiB reserved of 80: not fragmentation */
		{ NULL, "torch.OutOfMemoryError: CUDA out of memory. Tried to "
		  "allocate 0.20 GiB. GPU 0 has a total capacity of 80.00 GiB "
		  "of which 0.10 GiB is free. Of the allocated memory 79.00 "
		  "GiB is allocated by PyTorch, and 0.30 GiB is reserved by "
		  "PyTorch but unallocated.", "oom.cuda" },
		{ NULL, "NCCL WARN Cuda failure 'out of memory'", "oom.cuda" },
		{ NULL, "RuntimeError: cudaErrorMemoryAllocation", "oom.cuda" },
		{ NULL, "torch.OutOfMemoryError: boom", "oom.cuda" },
	};
	struct arena a;
	size_t i;

	(void)state;
	arena_init(&a, ARENA_CAP);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *got = first_of(cases[i].before, cases[i].message,
		    &a);

		if (strcmp(got, cases[i].want) != 0)
			fail_msg("case %zu: want %s, got %s", i, cases[i].want,
			    got);
	}
	/* A traceback that follows the message is the message's. */
	assert_string_equal(first_of("torch.OutOfMemoryError: CUDA out of "
	    "memory.\nwandb: Waiting for W&B process to finish\n"
	    "Traceback (most recent call last):\n  File \"t.py\", line 1, in "
	    "train", "    optimizer.step()", &a), "oom.optimizer");
	/* A closed traceback before it is another error's. */
	assert_string_equal(first_of("    optimizer.step()\nValueError: x\n"
	    "done", "torch.OutOfMemoryError: CUDA out of memory.", &a),
	    "oom.cuda");
	arena_fini(&a);
}

/* ---- no known signature --------------------------------------------- */

static void
test_diagnose__unknown_log_quotes_its_last_errors(void **state)
{
	static const char log[] =
	    "step 1 loss 2.3\n"
	    "ERROR: first\n"
	    "Traceback (most recent call last):\n"
	    "  File \"train.py\", line 3, in <module>\n"
	    "KeyError: 'labels'\n"
	    "warning: something\n"
	    "error: second\n"
	    "Exception in thread\n"
	    "FAILED step\n"
	    "RuntimeError: third\n"
	    "the end\n";
	static const char *const want[] = { "KeyError: 'labels'",
	    "error: second", "Exception in thread", "FAILED step",
	    "RuntimeError: third" };
	struct arena a;
	struct diag_report *d;
	size_t i;

	(void)state;
	arena_init(&a, ARENA_CAP);
	d = run(log, sizeof(log) - 1, &a);
	assert_int_equal(d->n, 0);
	assert_int_equal(d->nlast_errors, DIAG_LAST_ERRORS);
	for (i = 0; i < DIAG_LAST_ERRORS; i++)
		assert_string_equal(d->last_errors[i].text, want[i]);
	assert_int_equal(d->last_errors[0].line, 5);
	assert_int_equal(d->last_exception.line, 10);
	assert_string_equal(d->last_exception.text, "RuntimeError: third");
	/* Nothing that reads as an error: nothing quoted, nothing made up. */
	d = run("hello\nworld\n", 12, &a);
	assert_int_equal(d->n, 0);
	assert_int_equal(d->nlast_errors, 0);
	assert_int_equal(d->last_exception.line, 0);
	d = run("", 0, &a);
	assert_int_equal(d->n, 0);
	assert_int_equal(d->lines, 0);
	arena_fini(&a);
}

/* The version lines: the last line of each name, its value. */
static void
test_diagnose__version_lines_are_reported(void **state)
{
	static const char log[] =
	    "NCCL version 2.18.1+cuda12.1\n"
	    "| NVIDIA-SMI 535.104.05   Driver Version: 535.104.05   CUDA "
	    "Version: 12.2     |\n"
	    "Cuda compilation tools, release 12.1, V12.1.105\n"
	    "[INFO] DeepSpeed info: version=0.12.6, git-hash=unknown\n"
	    "torch==2.1.2\n"
	    "- PyTorch version (GPU?): 2.3.0+cu121 (True)\n"
	    "flash-attn==2.5.8\n"
	    "host:1:2 [0] NCCL INFO NCCL version 2.20.5\n";
	static const struct {
		const char *name, *value;
	} want[] = {
		{ "nccl", "2.20.5" }, { "cuda_driver", "12.2" },
		{ "nvidia_driver", "535.104.05" }, { "nvcc", "12.1" },
		{ "deepspeed", "0.12.6" }, { "torch", "2.3.0+cu121" },
		{ "flash_attn", "2.5.8" },
	};
	struct arena a;
	struct diag_report *d;
	size_t i, k;

	(void)state;
	arena_init(&a, ARENA_CAP);
	d = run(log, sizeof(log) - 1, &a);
	assert_int_equal(d->n, 0);	/* versions are not failures */
	assert_int_equal(d->nversions, sizeof(want) / sizeof(want[0]));
	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		for (k = 0; k < d->nversions; k++)
			if (strcmp(d->versions[k].name, want[i].name) == 0)
				break;
		assert_true(k < d->nversions);
		assert_string_equal(d->versions[k].value, want[i].value);
	}
	arena_fini(&a);
}

/* ---- limits and hostile input --------------------------------------- */

static void
test_diagnose__limits_cut_the_head_and_long_lines(void **state)
{
	struct diag_limits lim;
	struct diag_report *d;
	struct err e = { 0 };
	struct arena a;
	char *log;
	size_t i, n = 0, cap = 1 << 20;

	(void)state;
	log = malloc(cap);
	assert_non_null(log);
	/* line 1: a known signature the limits will cut off */
	n += (size_t)snprintf(log + n, cap - n, "NCCL WARN early\n");
	for (i = 2; i <= 1000; i++)
		n += (size_t)snprintf(log + n, cap - n, "line %zu\n", i);
	/* line 1001: a long line whose signature sits past max_line */
	memset(log + n, 'a', 5000);
	n += 5000;
	n += (size_t)snprintf(log + n, cap - n, " Duplicate GPU detected\n");
	n += (size_t)snprintf(log + n, cap - n,
	    "ImportError: x.so: undefined symbol: _Z1fv\n");
	arena_init(&a, ARENA_CAP);
	diag_limits_default(&lim);
	lim.max_lines = 100;
	lim.max_line = 4096;
	assert_int_equal(diagnose_log(&d, log, n, &lim, &a, &e), 0);
	assert_true(d->cut);
	assert_int_equal(d->lines, 1002);
	assert_int_equal(d->first_line, 903);
	assert_int_equal(d->long_lines, 1);
	assert_int_equal(d->n, 1);
	assert_string_equal(d->items[0].sig->id, "env.undefined_symbol");
	assert_int_equal(d->items[0].lines[0].line, 1002);
	assert_string_equal(diagnosis_var(&d->items[0], "symbol"), "_Z1fv");
	assert_string_equal(diagnosis_var(&d->items[0], "library"), "x.so");
	/* max_bytes: the last bytes only, from a line start */
	diag_limits_default(&lim);
	lim.max_bytes = 100;
	assert_int_equal(diagnose_log(&d, log, n, &lim, &a, &e), 0);
	assert_true(d->cut);
	assert_int_equal(d->first_line, 1002);
	assert_int_equal(d->n, 1);
	/* everything: the early line counts too */
	diag_limits_default(&lim);
	assert_int_equal(diagnose_log(&d, log, n, &lim, &a, &e), 0);
	assert_false(d->cut);
	assert_int_equal(d->n, 3);
	assert_string_equal(d->items[0].sig->id, "env.undefined_symbol");
	arena_fini(&a);
	free(log);
}

static void
test_diagnose__hostile_bytes_are_quoted_safely(void **state)
{
	static const char bad[] = "RuntimeError: \xff\xfe bad \xc0\xaf "
	    "overlong \xed\xa0\x80 surrogate \x01\x02 ctl\ttab \xe2\x82 cut "
	    "CUDA error: an illegal memory access was encountered\r\n"
	    "\0\0NCCL WARN with NUL\n";
	struct arena a;
	struct diag_report *d;
	char *big;
	size_t i, k, n = (size_t)1 << 22;

	(void)state;
	arena_init(&a, ARENA_CAP);
	d = run(bad, sizeof(bad) - 1, &a);
	assert_int_equal(d->n, 2);
	assert_string_equal(d->items[0].sig->id, "nccl.error");
	assert_string_equal(d->items[1].sig->id,
	    "cuda.illegal_memory_access");
	for (i = 0; i < d->n; i++)
		for (k = 0; k < d->items[i].nlines; k++)
			assert_true(clean_utf8(d->items[i].lines[k].text));
	assert_true(clean_utf8(d->last_exception.text));
	/* 4 MiB of one OOM-looking line, then 4 MiB of '\r': linear work,
	   a quote cut at DIAG_QUOTE. */
	big = malloc(n);
	assert_non_null(big);
	memcpy(big, "CUDA out of memory. Tried to allocate ", 38);
	memset(big + 38, '9', n / 2 - 38);
	memset(big + n / 2, '\r', n / 2);
	d = run(big, n, &a);
	assert_int_equal(d->n, 1);
	assert_true(strlen(d->items[0].lines[0].text) <= DIAG_QUOTE);
	assert_int_equal(d->oom.have & DIAG_OOM_TRIED, 0);	/* no unit */
	memset(big, 'T', n);
	d = run(big, n, &a);
	assert_int_equal(d->n, 0);
	free(big);
	arena_fini(&a);
}

/* Every budget, small to large, fails cleanly or succeeds. */
static void
test_diagnose__every_allocation_failure_is_clean(void **state)
{
	size_t n, cap, cfg_len, ds_len;
	struct fixture *all = fixtures_load(&n);
	const struct fixture *f = fixture_named(all, n,
	    "oom-optimizer-llamafactory-1221.log");
	struct diag_limits dl;
	struct context ctx;
	struct limits lim;
	char *cfg = fixture_read(FIXDIR "/oom-optimizer-llamafactory-1221.yaml",
	    &cfg_len);
	char *ds = fixture_read(FIXDIR "/oom-optimizer-llamafactory-1221.ds.json",
	    &ds_len);
	bool done = false;
	int rv;

	(void)state;
	assert_non_null(cfg);
	context_from(&ctx, f->context);
	ctx.ds_config = ds;
	ctx.ds_config_len = ds_len;
	limits_default(&lim);
	diag_limits_default(&dl);
	for (cap = 64; cap < ((size_t)32 << 20) && !done;
	    cap += cap / 8 + 1) {
		struct arena a;
		struct diag_report *d;
		struct err e = { 0 };

		arena_init(&a, cap);
		rv = diagnose_log(&d, f->log, f->log_len, &dl, &a, &e);
		if (rv == 0)
			rv = diagnose_config(d, cfg, cfg_len, &ctx, &lim, &a,
			    &e);
		arena_fini(&a);
		if (rv == 0)
			done = true;
		else
			assert_int_equal(rv, ERR_NOMEM);
	}
	assert_true(done);
	free(cfg);
	free(ds);
	fixtures_free(all, n);
}

/* The fuzz target over every fixture, with each kind of first byte
   (limits, the config path), and over its saved crashes. */
static void
test_diagnose__fuzz_target_runs_on_the_fixtures(void **state)
{
	static const unsigned char picks[] = { 0x00, 0x01, 0x7F, 0x80, 0x81,
	    0xFF };
	size_t n, i, k;
	struct fixture *all = fixtures_load(&n);
	struct dirent *de;
	DIR *d;

	(void)state;
	for (i = 0; i < n; i++) {
		size_t len = strlen(all[i].log);
		uint8_t *buf = malloc(len + 1);

		assert_non_null(buf);
		memcpy(buf + 1, all[i].log, len);
		for (k = 0; k < sizeof(picks); k++) {
			buf[0] = picks[k];
			assert_int_equal(LLVMFuzzerTestOneInput(buf, len + 1),
			    0);
		}
		free(buf);
	}
	assert_int_equal(LLVMFuzzerTestOneInput(NULL, 0), 0);
	fixtures_free(all, n);
	/* Every input `make fuzz` crashed on, kept as a regression. */
	d = opendir(FIXDIR "/fuzz");
	assert_non_null(d);
	for (k = 0; (de = readdir(d)) != NULL;) {
		char path[512];
		size_t len;
		char *buf;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), FIXDIR "/fuzz/%s", de->d_name);
		buf = fixture_read(path, &len);
		assert_non_null(buf);
		assert_int_equal(LLVMFuzzerTestOneInput((const uint8_t *)buf,
		    len), 0);
		free(buf);
		k++;
	}
	closedir(d);
	assert_true(k >= 1);
}

/* ---- HTTP ----------------------------------------------------------- */

struct http {
	struct store_sqlite *store;
	struct api_ctx ctx;
	struct fixture_fakes fakes;
	struct arena a;
};

/* One request as team (admin or not); the JSON body parsed, or NULL. */
static json_t *
http_call(struct http *h, int *status, const char *method, const char *path,
    const char *query, const char *ctype, const char *body,
    const char *team, bool admin)
{
	struct api_req req;
	struct api_resp resp;
	json_t *j;

	memset(&req, 0, sizeof(req));
	req.method = method;
	req.path = path;
	req.query = query != NULL ? query : "";
	req.content_type = ctype;
	req.body = body;
	req.body_len = body != NULL ? strlen(body) : 0;
	req.team = team;
	req.admin = admin;
	req.arena = &h->a;
	api_handle(&h->ctx, &req, &resp);
	*status = resp.status;
	j = resp.body != NULL ? json_loadb(resp.body, resp.body_len, 0, NULL) :
	    NULL;
	api_resp_fini(&resp);
	return j;
}

/* POST /v1/diagnose with body j (stolen) as team. */
static json_t *
post_diag(struct http *h, int *status, json_t *j, const char *team,
    bool admin)
{
	char *body = json_dumps(j, JSON_COMPACT);
	json_t *out;

	json_decref(j);
	assert_non_null(body);
	out = http_call(h, status, "POST", "/v1/diagnose", NULL,
	    "application/json", body, team, admin);
	free(body);
	return out;
}

static void
http_open(struct http *h)
{
	struct err e = { 0 };

	memset(h, 0, sizeof(*h));
	assert_int_equal(store_sqlite_open(&h->store, ":memory:", false, &e),
	    0);
	fixture_api_ctx(&h->ctx, h->store, &h->fakes, 7);
	arena_init(&h->a, ARENA_CAP);
}

static void
http_close(struct http *h)
{
	arena_fini(&h->a);
	api_ctx_fini(&h->ctx);
	store_sqlite_close(h->store);
}

static const char *
jstr(json_t *j, const char *key)
{
	return json_string_value(json_object_get(j, key));
}

/*
 * The log alone is diagnosed and not stored; with a config the config is
 * a stored check, the diagnosis is stored with it and its CUDA OOM is a
 * measurement; with check_id the team's check is used.  Another team
 * sees none of it, and another team's check_id is a 404.
 */
static void
test_diagnose__http_stores_with_the_check_per_team(void **state)
{
	struct http h;
	size_t n;
	struct fixture *all = fixtures_load(&n);
	const struct fixture *f = fixture_named(all, n, "oom-cuda-lte-3.log");
	char path[512], id[27], check[27], url[128];
	char *cfg;
	json_t *j, *items, *m;
	int status;

	(void)state;
	snprintf(path, sizeof(path), "%s/corpus/axolotl/examples/llama-3/"
	    "instruct-lora-8b.yml", fixture_shared());
	cfg = fixture_read(path, NULL);
	assert_non_null(cfg);
	http_open(&h);
	/* The log alone: diagnosed, nothing stored. */
	j = post_diag(&h, &status, json_pack("{s:s}", "log", f->log),
	    "default", false);
	assert_int_equal(status, 200);
	assert_true(json_is_true(json_object_get(j, "known")));
	assert_string_equal(jstr(json_array_get(json_object_get(j,
	    "diagnoses"), 0), "id"), "oom.cuda");
	assert_null(json_object_get(j, "id"));
	assert_true(json_is_null(json_object_get(j, "estimate")));
	json_decref(j);
	/* With a config: stored with a new check. */
	j = post_diag(&h, &status, json_pack("{s:s, s:s, s:{s:i, s:s}, s:s}",
	    "log", f->log, "config", cfg, "context", "gpus", 1, "gpu",
	    "a100-80gb", "name", "lora-8b.yml"), "default", false);
	assert_int_equal(status, 200);
	snprintf(id, sizeof(id), "%s", jstr(j, "id"));
	snprintf(check, sizeof(check), "%s", jstr(j, "check_id"));
	assert_int_equal(strlen(id), 26);
	assert_int_equal(strlen(check), 26);
	assert_string_equal(jstr(j, "team"), "default");
	assert_string_equal(jstr(j, "name"), "lora-8b.yml");
	m = json_object_get(j, "estimate");
	assert_true(json_is_true(json_object_get(m, "known")));
	assert_true(json_real_value(json_object_get(m, "capacity_gib")) ==
	    79.15);
	json_decref(j);
	/* The check is a stored check of the config's history. */
	snprintf(url, sizeof(url), "/v1/checks/%s", check);
	j = http_call(&h, &status, "GET", url, NULL, NULL, NULL, "default",
	    false);
	assert_int_equal(status, 200);
	assert_string_equal(jstr(j, "name"), "lora-8b.yml");
	json_decref(j);
	j = http_call(&h, &status, "GET", "/v1/configs/lora-8b.yml/checks",
	    NULL, NULL, NULL, "default", false);
	assert_int_equal(status, 200);
	items = json_object_get(j, "items");
	assert_int_equal(json_array_size(items), 1);
	/* ... and its history shows how the run failed. */
	m = json_array_get(json_object_get(json_array_get(items, 0),
	    "failures"), 0);
	assert_string_equal(jstr(m, "id"), id);
	assert_string_equal(jstr(m, "diagnosis"), "oom.cuda");
	assert_string_equal(jstr(m, "summary"), "failed: oom.cuda, needed at "
	    "least 80.21 GiB of 79.15 GiB on a100-80gb");
	json_decref(j);
	j = http_call(&h, &status, "GET", "/v1/configs/lora-8b.yml/checks",
	    NULL, NULL, NULL, "red", false);
	assert_int_equal(json_array_size(json_object_get(j, "items")), 0);
	json_decref(j);
	/* Its measurement. */
	j = http_call(&h, &status, "GET", "/v1/measurements", NULL, NULL,
	    NULL, "default", false);
	assert_int_equal(status, 200);
	items = json_object_get(j, "items");
	assert_int_equal(json_array_size(items), 1);
	m = json_array_get(items, 0);
	assert_string_equal(jstr(m, "id"), id);
	assert_string_equal(jstr(m, "check_id"), check);
	assert_string_equal(jstr(m, "gpu"), "a100-80gb");
	assert_string_equal(jstr(m, "diagnosis"), "oom.cuda");
	assert_true(json_real_value(json_object_get(m, "measured_peak_gib")) ==
	    80.21);
	assert_true(json_real_value(json_object_get(m, "capacity_gib")) ==
	    79.15);
	assert_non_null(strstr(jstr(m, "summary"), "needed at least 80.21 GiB "
	    "of 79.15 GiB on a100-80gb"));
	assert_int_equal(json_integer_value(json_object_get(json_array_get(
	    json_object_get(m, "lines"), 0), "line")), 1);
	json_decref(j);
	/* With check_id: the same check, its own context. */
	j = post_diag(&h, &status, json_pack("{s:s, s:s}", "log", f->log,
	    "check_id", check), "default", false);
	assert_int_equal(status, 200);
	assert_string_equal(jstr(j, "check_id"), check);
	assert_string_not_equal(jstr(j, "id"), id);
	assert_true(json_is_true(json_object_get(json_object_get(j,
	    "estimate"), "known")));
	json_decref(j);
	/* Another team: no measurements, and the check is a 404. */
	j = http_call(&h, &status, "GET", "/v1/measurements", NULL, NULL,
	    NULL, "red", false);
	assert_int_equal(status, 200);
	assert_int_equal(json_array_size(json_object_get(j, "items")), 0);
	json_decref(j);
	j = post_diag(&h, &status, json_pack("{s:s, s:s}", "log", f->log,
	    "check_id", check), "red", false);
	assert_int_equal(status, 404);
	json_decref(j);
	/* An admin sees every team's, and can filter. */
	j = http_call(&h, &status, "GET", "/v1/measurements", "team=default",
	    NULL, NULL, "ops", true);
	assert_int_equal(json_array_size(json_object_get(j, "items")), 2);
	json_decref(j);
	/* Pages: newest first, the cursor gives the next. */
	j = http_call(&h, &status, "GET", "/v1/measurements",
	    "limit=1&name=lora-8b.yml", NULL, NULL, "default", false);
	assert_int_equal(status, 200);
	assert_int_equal(json_array_size(json_object_get(j, "items")), 1);
	assert_string_not_equal(jstr(json_array_get(json_object_get(j,
	    "items"), 0), "id"), id);
	snprintf(url, sizeof(url), "limit=1&cursor=%s", jstr(j,
	    "next_cursor"));
	json_decref(j);
	j = http_call(&h, &status, "GET", "/v1/measurements", url, NULL, NULL,
	    "default", false);
	assert_string_equal(jstr(json_array_get(json_object_get(j, "items"),
	    0), "id"), id);
	assert_true(json_is_null(json_object_get(j, "next_cursor")));
	json_decref(j);
	http_close(&h);
	free(cfg);
	fixtures_free(all, n);
}

/* Bad requests get the problem that says what to change. */
static void
test_diagnose__http_bad_requests(void **state)
{
	static const struct {
		const char *ctype;
		const char *query;
		const char *body;
		int status;
		const char *detail;
	} cases[] = {
		{ "text/plain", NULL, "x", 415, "application/json" },
		{ "application/json", NULL, "{", 400, NULL },
		{ "application/json", NULL, "[1]", 400, "JSON object" },
		{ "application/json", NULL, "{}", 422, "log is required" },
		{ "application/json", NULL, "{\"log\": 1}", 422,
		  "log must be a string" },
		{ "application/json", NULL, "{\"log\": \"x\", \"k\": 1}", 422,
		  "unknown field 'k'" },
		{ "application/json", NULL, "{\"log\": \"x\", \"config\": \"a: "
		  "1\", \"check_id\": \"01KBFQ1X8G0000000000000000\"}", 422,
		  "not both" },
		{ "application/json", NULL, "{\"log\": \"x\", \"context\": "
		  "{\"gpus\": 8}}", 422, "send config too" },
		{ "application/json", NULL, "{\"log\": \"x\", \"context\": 3}",
		  422, "context must be an object" },
		{ "application/json", "dry_run=true", "{\"log\": \"x\"}", 400,
		  "unknown query parameter" },
		{ "application/json", NULL, "{\"log\": \"x\", \"check_id\": "
		  "\"nope\"}", 404, "no such check" },
		{ "application/json", NULL, "{\"log\": \"x\", \"check_id\": "
		  "\"01KBFQ1X8G0000000000000000\"}", 404, "no such check" },
		/* the config's own errors, from POST /v1/checks */
		{ "application/json", NULL, "{\"log\": \"x\", \"config\": "
		  "\"a: [1\"}", 400, NULL },
		{ "application/json", NULL, "{\"log\": \"x\", \"config\": "
		  "\"a: 1\", \"context\": {\"gpu\": \"nope\"}}", 422,
		  "unknown gpu" },
	};
	struct http h;
	json_t *j;
	size_t i;
	int status;

	(void)state;
	http_open(&h);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		j = http_call(&h, &status, "POST", "/v1/diagnose",
		    cases[i].query, cases[i].ctype, cases[i].body, "default",
		    false);
		if (status != cases[i].status)
			fail_msg("case %zu: status %d, want %d", i, status,
			    cases[i].status);
		if (cases[i].detail != NULL &&
		    strstr(jstr(j, "detail"), cases[i].detail) == NULL)
			fail_msg("case %zu: detail '%s'", i, jstr(j,
			    "detail"));
		json_decref(j);
	}
	j = http_call(&h, &status, "GET", "/v1/measurements", "limit=0", NULL,
	    NULL, "default", false);
	assert_int_equal(status, 400);
	json_decref(j);
	j = http_call(&h, &status, "GET", "/v1/measurements", "cursor=zz",
	    NULL, NULL, "default", false);
	assert_int_equal(status, 400);
	json_decref(j);
	j = http_call(&h, &status, "GET", "/v1/measurements", "gpu=x", NULL,
	    NULL, "default", false);
	assert_int_equal(status, 400);
	json_decref(j);
	j = http_call(&h, &status, "GET", "/v1/diagnose", NULL, NULL, NULL,
	    "default", false);
	assert_int_equal(status, 405);
	json_decref(j);
	http_close(&h);
}

/* ---- the CLI and the docs ------------------------------------------- */

static void
run_bin(struct run *r, const char *a1, const char *a2, const char *a3,
    const char *a4, const char *a5, const char *a6, const char *a7)
{
	char *argv[] = { (char *)(uintptr_t)fixture_bin(), (char *)(uintptr_t)"diagnose",
	    (char *)(uintptr_t)a1, (char *)(uintptr_t)a2,
	    (char *)(uintptr_t)a3, (char *)(uintptr_t)a4,
	    (char *)(uintptr_t)a5, (char *)(uintptr_t)a6,
	    (char *)(uintptr_t)a7, NULL };

	assert_int_equal(fixture_run(r, argv, NULL), 0);
}

/* docs/diagnose.md is what `preflight diagnose --signatures --format
   markdown` prints (make docs). */
static void
test_diagnose__docs_are_generated_from_the_table(void **state)
{
	struct run r;
	char *doc;
	size_t n, i;
	const struct diag_sig *s = diagnose_signatures(&n);

	(void)state;
	run_bin(&r, "--signatures", "--format", "markdown", NULL, NULL, NULL,
	    NULL);
	assert_int_equal(r.status, 0);
	doc = fixture_read("docs/diagnose.md", NULL);
	assert_non_null(doc);
	if (strcmp(doc, r.out) != 0)
		fail_msg("docs/diagnose.md is stale: run make docs");
	for (i = 0; i < n; i++)
		assert_non_null(strstr(doc, s[i].id));
	free(doc);
	fixture_run_free(&r);
	run_bin(&r, "--signatures", "--format", "json", NULL, NULL, NULL,
	    NULL);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "\"oom.activations\""));
	fixture_run_free(&r);
	run_bin(&r, "--signatures", "--format", "yaml", NULL, NULL, NULL,
	    NULL);
	assert_int_equal(r.status, 2);
	fixture_run_free(&r);
}

static void
test_diagnose__cli_text_json_and_exit_codes(void **state)
{
	struct run r;
	json_t *j, *v;

	(void)state;
	/* A known signature: exit 0; the log's own line numbers. */
	run_bin(&r, FIXDIR "/nccl-duplicate-gpu-megatron-661.log", NULL, NULL,
	    NULL, NULL, NULL, NULL);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, FIXDIR "/nccl-duplicate-gpu-megatron-"
	    "661.log:7: nccl.duplicate_gpu"));
	assert_non_null(strstr(r.out, "ranks 3 and 0 are both on CUDA device "
	    "f000"));
	fixture_run_free(&r);
	/* No known signature: exit 1, the last error quoted. */
	run_bin(&r, FIXDIR "/unknown-ms-swift-7156.log", "--format", "json",
	    NULL, NULL, NULL, NULL);
	assert_int_equal(r.status, 1);
	j = json_loads(r.out, 0, NULL);
	assert_non_null(j);
	assert_false(json_is_true(json_object_get(j, "known")));
	assert_int_equal(json_array_size(json_object_get(j, "diagnoses")), 0);
	v = json_object_get(j, "last_errors");
	assert_string_equal(json_string_value(json_object_get(json_array_get(
	    v, json_array_size(v) - 1), "text")),
	    "TypeError: argument of type 'NoneType' is not iterable");
	json_decref(j);
	fixture_run_free(&r);
	/* With the config: the estimate's answer. */
	run_bin(&r, FIXDIR "/oom-optimizer-llamafactory-1221.log", "--config",
	    FIXDIR "/oom-optimizer-llamafactory-1221.yaml", "--gpus=8",
	    "--gpu=v100-32gb", "--deepspeed-config="
	    FIXDIR "/oom-optimizer-llamafactory-1221.ds.json", "--format=json");
	assert_int_equal(r.status, 0);
	j = json_loads(r.out, 0, NULL);
	assert_non_null(j);
	assert_string_equal(json_string_value(json_object_get(json_object_get(
	    j, "estimate"), "term")), "optimizer");
	assert_non_null(strstr(json_string_value(json_object_get(
	    json_object_get(j, "estimate"), "answer")), "predicted peak"));
	assert_true(json_real_value(json_object_get(json_object_get(j, "oom"),
	    "measured_peak_gib")) == 31.42);
	json_decref(j);
	fixture_run_free(&r);
	/* Bad input: exit 2 with one line on stderr. */
	run_bin(&r, "/nonexistent.log", NULL, NULL, NULL, NULL, NULL, NULL);
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "/nonexistent.log: error: cannot read"));
	fixture_run_free(&r);
	run_bin(&r, FIXDIR "/oom-cuda-lte-3.log", "--config", "/nonexistent."
	    "yaml", NULL, NULL, NULL, NULL);
	assert_int_equal(r.status, 2);
	fixture_run_free(&r);
	run_bin(&r, FIXDIR "/oom-cuda-lte-3.log", "--gpus", "0", NULL, NULL,
	    NULL, NULL);
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "--gpus must be an integer"));
	fixture_run_free(&r);
	run_bin(&r, FIXDIR "/oom-cuda-lte-3.log", "--gpu", "nope", NULL, NULL,
	    NULL, NULL);
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "unknown gpu"));
	fixture_run_free(&r);
	run_bin(&r, FIXDIR "/oom-cuda-lte-3.log", FIXDIR "/oom-cuda-lte-3.log",
	    NULL, NULL, NULL, NULL, NULL);
	assert_int_equal(r.status, 2);
	fixture_run_free(&r);
	run_bin(&r, "--help", NULL, NULL, NULL, NULL, NULL, NULL);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "usage: preflight diagnose"));
	fixture_run_free(&r);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(
		    test_diagnose__every_fixture_gets_its_diagnosis_first),
		cmocka_unit_test(test_diagnose__oom_numbers_are_the_messages),
		cmocka_unit_test(
		    test_diagnose__oom_with_config_names_the_term_and_keys_that_fit),
		cmocka_unit_test(
		    test_diagnose__oom_under_estimate_searches_a_calibrated_capacity),
		cmocka_unit_test(test_diagnose__config_without_an_oom_only_checks),
		cmocka_unit_test(test_diagnose__table_is_well_formed),
		cmocka_unit_test(
		    test_diagnose__every_signature_triggers_on_its_own_text),
		cmocka_unit_test(
		    test_diagnose__oom_rows_follow_numbers_and_frames),
		cmocka_unit_test(
		    test_diagnose__unknown_log_quotes_its_last_errors),
		cmocka_unit_test(test_diagnose__version_lines_are_reported),
		cmocka_unit_test(
		    test_diagnose__limits_cut_the_head_and_long_lines),
		cmocka_unit_test(
		    test_diagnose__hostile_bytes_are_quoted_safely),
		cmocka_unit_test(test_diagnose__every_allocation_failure_is_clean),
		cmocka_unit_test(test_diagnose__fuzz_target_runs_on_the_fixtures),
		cmocka_unit_test(
		    test_diagnose__docs_are_generated_from_the_table),
		cmocka_unit_test(test_diagnose__cli_text_json_and_exit_codes),
		cmocka_unit_test(
		    test_diagnose__http_stores_with_the_check_per_team),
		cmocka_unit_test(test_diagnose__http_bad_requests),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
