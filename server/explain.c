/*
 * server/explain: `preflight rules ID` and `preflight explain ID`: one
 * rule in full (what it checks, why it matters, the fix, an example and
 * what preflight says about the example).  `preflight rules 'fsdp.*'`
 * lists the rules a pattern matches.
 */
#include "explain.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/ruledoc.h"
#include "core/arena.h"
#include "core/check.h"
#include "core/rules.h"
#include "core/version.h"

#define WRAP 76

/* text word-wrapped at WRAP columns, each line indented by two spaces. */
static void
wrapped(const char *text)
{
	const char *p = text;

	while (*p != '\0') {
		const char *end = p, *brk = NULL;

		while (*end != '\0' && end - p < WRAP - 2) {
			if (*end == ' ')
				brk = end;
			end++;
		}
		if (*end == '\0' || brk == NULL)
			brk = end;
		printf("  %.*s\n", (int)(brk - p), p);
		p = brk;
		while (*p == ' ')
			p++;
	}
}

/* The example's `# gpus: N`-style header comments into ctx (the same
   headers the rule fixtures use); returns a description. */
static void
example_context(struct context *ctx, const char *text, char *gpu,
    size_t cap)
{
	const char *p = text;

	context_default(ctx);
	while (strncmp(p, "# ", 2) == 0) {
		if (strncmp(p, "# gpus: ", 8) == 0)
			ctx->gpus = strtol(p + 8, NULL, 10);
		else if (strncmp(p, "# nodes: ", 9) == 0)
			ctx->nodes = strtol(p + 9, NULL, 10);
		else if (strncmp(p, "# host-memory-gib: ", 19) == 0)
			ctx->host_memory_gib = strtod(p + 19, NULL);
		else if (strncmp(p, "# gpu: ", 7) == 0) {
			size_t n = strcspn(p + 7, " \n");

			snprintf(gpu, cap, "%.*s", (int)n, p + 7);
			ctx->gpu = gpu;
		} else if (strncmp(p, "# torch: ", 9) == 0) {
			char v[16];

			snprintf(v, sizeof(v), "%.*s",
			    (int)strcspn(p + 9, " \n"), p + 9);
			if (context_parse_torch(&ctx->torch, v) != 0)
				ctx->torch = 0;
		}
		p = strchr(p, '\n');
		if (p == NULL)
			break;
		p++;
	}
}

/* The example, numbered, with `# expect: ID` shown as `# <- here`. */
static void
print_example(const char *text)
{
	const char *p = text;
	unsigned line = 1;

	while (*p != '\0') {
		const char *nl = strchr(p, '\n');
		size_t n = nl != NULL ? (size_t)(nl - p) : strlen(p);
		const char *mark = NULL;
		size_t i;

		for (i = 0; i + 9 <= n; i++)
			if (memcmp(p + i, "# expect:", 9) == 0) {
				mark = p + i;
				break;
			}
		if (mark != NULL)
			printf("  %3u | %.*s# <- here\n", line,
			    (int)(mark - p), p);
		else
			printf("  %3u | %.*s\n", line, (int)n, p);
		line++;
		if (nl == NULL)
			break;
		p = nl + 1;
	}
}

/* Check the example and print what preflight says about this rule. */
static void
run_example(const struct rule_def *rd, const char *text)
{
	struct context ctx;
	struct limits lim;
	struct arena a;
	struct err e = { 0 };
	struct report *r;
	char gpu[32];
	size_t i, n = 0;

	example_context(&ctx, text, gpu, sizeof(gpu));
	limits_default(&lim);
	arena_init(&a, (size_t)64 << 20);
	if (check_run(&r, text, strlen(text), &ctx, &lim, &a, &e) != 0) {
		printf("\n  (the example cannot be checked: %s)\n", e.msg);
		arena_fini(&a);
		return;
	}
	printf("\npreflight check example.yaml --gpus %ld --gpu %s says:\n",
	    r->ctx.gpus, r->ctx.gpu);
	for (i = 0; i < r->nfindings; i++) {
		const struct finding *f = &r->findings[i];

		if (strcmp(f->rule, rd->id) != 0)
			continue;
		printf("  example.yaml:%u:%u: %s: %s\n", f->line, f->col,
		    severity_name(f->severity), f->message);
		n++;
	}
	if (n == 0)
		printf("  (nothing on this context: the example needs the "
		    "context its header comments give)\n");
	arena_fini(&a);
}

static void
explain(const struct rule_def *rd)
{
	const struct ruledoc *d = ruledoc_find(rd->id);
	char why[1024];

	ruledoc_why(why, sizeof(why), rd);
	printf("%s (%s)\n  %s\n\nWhy it matters:\n", rd->id,
	    severity_name(rd->severity), rd->title);
	wrapped(why);
	printf("\nFix:\n");
	wrapped(rd->hint);
	if (d != NULL && d->example != NULL) {
		printf("\nExample (a config it fires on):\n");
		print_example(d->example);
		run_example(rd, d->example);
	} else {
		printf("\nExample: none (this rule has no example config)\n");
	}
	printf("\nDocs: %s/blob/main/%s\n", PREFLIGHT_REPO_URL, rd->docs);
}

static void
usage(FILE *out)
{
	fprintf(out, "usage: preflight rules [--format text|json|markdown]\n"
	    "       preflight rules ID | PATTERN   (also: preflight explain "
	    "ID)\n"
	    "\n"
	    "Without an argument: every rule, one line each (--format text, "
	    "the default;\n"
	    "json; markdown, as docs/rules.md).  With a rule id: what it "
	    "checks, why it\n"
	    "matters, the fix, an example and what preflight says about it.  "
	    "A pattern\n"
	    "ending in '*' ('fsdp.*') lists the rules it matches.\n");
}

int
explain_main(int argc, char **argv)
{
	const struct rule_def *all, *rd;
	size_t n, i, hits = 0;
	const char *id, *star;

	if (argc != 2 || strcmp(argv[1], "--help") == 0 ||
	    strcmp(argv[1], "-h") == 0) {
		usage(argc == 2 ? stdout : stderr);
		return argc == 2 ? 0 : 2;
	}
	id = argv[1];
	rd = rules_find(id);
	if (rd != NULL) {
		explain(rd);
		return fflush(stdout) == 0 ? 0 : 2;
	}
	all = rules_all(&n);
	star = strchr(id, '*');
	for (i = 0; i < n; i++) {
		bool hit = star != NULL && star[1] == '\0' ?
		    strncmp(all[i].id, id, (size_t)(star - id)) == 0 :
		    strstr(all[i].id, id) != NULL;

		if (!hit)
			continue;
		if (star == NULL && hits == 0)
			fprintf(stderr, "preflight: error: no rule '%s'; rules "
			    "whose id contains it:\n", id);
		fprintf(star != NULL ? stdout : stderr, "%-40s %-8s %s\n",
		    all[i].id, severity_name(all[i].severity), all[i].title);
		hits++;
	}
	if (star != NULL && hits > 0)
		return fflush(stdout) == 0 ? 0 : 2;
	if (hits == 0)
		fprintf(stderr, "preflight: error: no rule '%s' (preflight "
		    "rules lists them all)\n", id);
	return 2;
}
