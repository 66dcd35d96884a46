/*
 * api/formats: SARIF, GitHub check-run output, GitLab Code Quality and
 * JUnit XML, written straight into a struct jsonw buffer (see formats.h).
 * Only the digest helper and jansson (for the API's json_t values); no
 * I/O.
 */
#include "api/formats.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/digest.h"
#include "api/ruledoc.h"
#include "core/estimate.h"
#include "core/rules.h"
#include "core/suggest.h"
#include "core/version.h"

/* The strings of parts (n of them; NULL counts as "") joined, as one
   JSON string. */
static void
str_join(struct jsonw *w, const char *const *parts, size_t n)
{
	struct jsonw t;
	size_t i;
	char *s;

	jw_init(&t);
	for (i = 0; i < n; i++)
		jw_lit(&t, parts[i] != NULL ? parts[i] : "");
	s = jw_take(&t, NULL);
	if (s == NULL)
		w->oom = true;
	jw_str(w, s != NULL ? s : "");
	free(s);
}

static unsigned
one_based(unsigned v)
{
	return v > 0 ? v : 1;
}

static const char *
sarif_level(enum severity s)
{
	return s == SEV_ERROR ? "error" : s == SEV_WARNING ? "warning" :
	    "note";
}

/* The rule's index in the catalog, or -1 (a finding from elsewhere). */
static long
rule_index(const char *id)
{
	const struct rule_def *all, *r = rules_find(id);
	size_t n;

	if (r == NULL)
		return -1;
	all = rules_all(&n);
	return (long)(r - all);
}

/*
 * A path as a URI reference: unreserved characters and '/' stay, every
 * other byte is percent-encoded (so a ':' in a first segment cannot pass
 * for a scheme, and spaces and UTF-8 survive).
 */
static void
uri_path(struct jsonw *w, const char *s)
{
	static const char hex[] = "0123456789ABCDEF";
	const unsigned char *p = (const unsigned char *)s;

	for (; *p != '\0'; p++) {
		if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		    (*p >= '0' && *p <= '9') || *p == '-' || *p == '.' ||
		    *p == '_' || *p == '~' || *p == '/') {
			jw_raw(w, (const char *)p, 1);
		} else {
			char e[3] = { '%', hex[*p >> 4], hex[*p & 15] };

			jw_raw(w, e, 3);
		}
	}
}

/* helpUri: docs/rules.md's anchor for the rule on the repository. */
static void
help_uri(struct jsonw *w, const struct rule_def *r)
{
	jw_lit(w, "\"" PREFLIGHT_REPO_URL "/blob/main/");
	jw_lit(w, r->docs);	/* "docs/rules.md#anchor": URI-safe */
	jw_lit(w, "\"");
}

static void
sarif_rule(struct jsonw *w, const struct rule_def *r)
{
	char why[1024];
	const char *dot = strchr(r->id, '.');

	ruledoc_why(why, sizeof(why), r);
	jw_lit(w, "{\"id\":");
	jw_str(w, r->id);
	jw_lit(w, ",\"name\":");
	jw_str(w, r->id);
	jw_lit(w, ",\"shortDescription\":{\"text\":");
	jw_str(w, r->title);
	jw_lit(w, "},\"fullDescription\":{\"text\":");
	jw_str(w, why);
	jw_lit(w, "},\"helpUri\":");
	help_uri(w, r);
	jw_lit(w, ",\"help\":{\"text\":");
	{
		const char *parts[] = { "Fix: ", r->hint };

		str_join(w, parts, 2);
	}
	jw_lit(w, "},\"defaultConfiguration\":{\"level\":\"");
	jw_lit(w, sarif_level(r->severity));
	jw_lit(w, "\"},\"properties\":{\"tags\":[\"axolotl\"");
	if (dot != NULL) {
		char cat[64];

		snprintf(cat, sizeof(cat), "%.*s", (int)(dot - r->id), r->id);
		jw_lit(w, ",");
		jw_str(w, cat);
	}
	jw_lit(w, "]}}");
}

void
formats_sarif_begin(struct jsonw *w, const char *version,
    const char *srcroot)
{
	const struct rule_def *all;
	size_t n, i;

	jw_lit(w, "{\"$schema\":\"https://json.schemastore.org/"
	    "sarif-2.1.0.json\",\"version\":\"2.1.0\",\"runs\":[{\"tool\":"
	    "{\"driver\":{\"name\":\"preflight\",\"version\":");
	jw_str(w, version);
	jw_lit(w, ",\"informationUri\":\"" PREFLIGHT_REPO_URL "\","
	    "\"rules\":[");
	all = rules_all(&n);
	for (i = 0; i < n; i++) {
		if (i > 0)
			jw_lit(w, ",");
		sarif_rule(w, &all[i]);
	}
	jw_lit(w, "]}}");
	if (srcroot != NULL && srcroot[0] == '/') {
		jw_lit(w, ",\"originalUriBaseIds\":{\"%SRCROOT%\":{\"uri\":"
		    "\"file://");
		uri_path(w, srcroot);
		if (srcroot[strlen(srcroot) - 1] != '/')
			jw_lit(w, "/");
		jw_lit(w, "\"}}");
	}
	jw_lit(w, ",\"results\":[");
}

/* A fingerprint that survives edits elsewhere in the file: file, rule,
   key path, message and the count of identical findings before it. */
static void
fingerprint(char out[65], const struct format_input *in, size_t i)
{
	const struct report *r = in->report;
	const struct finding *f = &r->findings[i];
	char key[1024];
	unsigned seq = 0;
	size_t j;

	for (j = 0; j < i; j++)
		if (strcmp(r->findings[j].rule, f->rule) == 0 &&
		    strcmp(r->findings[j].path, f->path) == 0 &&
		    strcmp(r->findings[j].message, f->message) == 0)
			seq++;
	snprintf(key, sizeof(key), "%s\n%s\n%s\n%s\n%u", in->file,
	    f->rule, f->path, f->message, seq);
	if (digest_sha256_hex(out, key, strlen(key)) != 0)
		out[0] = '\0';
}

void
formats_sarif_add(struct jsonw *w, const struct format_input *in,
    bool *first)
{
	const struct report *r = in->report;
	const char *path = in->file;
	size_t i;

	for (i = 0; i < r->nfindings; i++) {
		const struct finding *f = &r->findings[i];
		long idx = rule_index(f->rule);
		char fp[65];
		char line[64];

		jw_lit(w, *first ? "{\"ruleId\":" : ",{\"ruleId\":");
		*first = false;
		jw_str(w, f->rule);
		if (idx >= 0) {
			jw_lit(w, ",\"ruleIndex\":");
			jw_int(w, idx);
		}
		jw_lit(w, ",\"level\":\"");
		jw_lit(w, sarif_level(f->severity));
		jw_lit(w, "\",\"message\":{\"text\":");
		if (f->hint != NULL && f->hint[0] != '\0') {
			const char *parts[] = { f->message, " (fix: ",
			    f->hint, ")" };

			str_join(w, parts, 4);
		} else {
			jw_str(w, f->message);
		}
		jw_lit(w, "},\"locations\":[{\"physicalLocation\":"
		    "{\"artifactLocation\":{\"uri\":\"");
		if (path[0] == '/') {
			jw_lit(w, "file://");
			uri_path(w, path);
			jw_lit(w, "\"}");
		} else {
			uri_path(w, path);
			jw_lit(w, "\",\"uriBaseId\":\"%SRCROOT%\"}");
		}
		snprintf(line, sizeof(line), "%u,\"startColumn\":%u",
		    one_based(f->line), one_based(f->col));
		jw_lit(w, ",\"region\":{\"startLine\":");
		jw_lit(w, line);
		jw_lit(w, "}}}]");
		fingerprint(fp, in, i);
		if (fp[0] != '\0') {
			jw_lit(w, ",\"partialFingerprints\":"
			    "{\"preflightFinding/v1\":\"");
			jw_lit(w, fp);
			jw_lit(w, "\"}");
		}
		jw_lit(w, "}");
	}
}

void
formats_sarif_end(struct jsonw *w)
{
	jw_lit(w, "]}]}");
}

static const char *
gitlab_severity(enum severity s)
{
	return s == SEV_ERROR ? "critical" : s == SEV_WARNING ? "minor" :
	    "info";
}

void
formats_gitlab_begin(struct jsonw *w)
{
	jw_lit(w, "[");
}

void
formats_gitlab_add(struct jsonw *w, const struct format_input *in,
    bool *first)
{
	const struct report *r = in->report;
	size_t i;

	for (i = 0; i < r->nfindings; i++) {
		const struct finding *f = &r->findings[i];
		char fp[65];

		fingerprint(fp, in, i);
		jw_lit(w, *first ? "{\"description\":" : ",{\"description\":");
		*first = false;
		jw_str(w, f->message);
		jw_lit(w, ",\"check_name\":");
		jw_str(w, f->rule);
		jw_lit(w, ",\"fingerprint\":");
		jw_str(w, fp);
		jw_lit(w, ",\"severity\":\"");
		jw_lit(w, gitlab_severity(f->severity));
		jw_lit(w, "\",\"location\":{\"path\":");
		jw_str(w, in->file);
		jw_lit(w, ",\"lines\":{\"begin\":");
		jw_int(w, one_based(f->line));
		jw_lit(w, "}}}");
	}
}

void
formats_gitlab_end(struct jsonw *w)
{
	jw_lit(w, "]");
}

void
formats_junit_begin(struct jsonw *w)
{
	jw_lit(w, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
	    "<testsuites name=\"preflight\">\n");
}

static void
xml_attr(struct jsonw *w, const char *name, const char *value)
{
	jw_lit(w, " ");
	jw_lit(w, name);
	jw_lit(w, "=\"");
	jw_xml(w, value);
	jw_lit(w, "\"");
}

static void
xml_uint_attr(struct jsonw *w, const char *name, size_t v)
{
	char b[32];

	snprintf(b, sizeof(b), "%zu", v);
	xml_attr(w, name, b);
}

/* The memory estimate in a line, for the JUnit and check-run writers. */
static void
memory_words(char *out, size_t cap, const struct estimate *e)
{
	if (e == NULL || !e->known)
		snprintf(out, cap, "memory not estimated (model not in the "
		    "catalog)");
	else
		snprintf(out, cap, "memory %.1f of %.1f GiB per GPU (%s), "
		    "%.0f tokens/s", e->per_gpu_peak_gib, e->capacity_gib,
		    e->fits ? "fits" : "does not fit", e->tokens_per_second);
}

void
formats_junit_add(struct jsonw *w, const struct format_input *in,
    bool fail_warnings)
{
	const struct report *r = in->report;
	const char *path = in->file;
	size_t i, failures = 0;
	char mem[160];

	for (i = 0; i < r->nfindings; i++)
		if (r->findings[i].severity == SEV_ERROR ||
		    (fail_warnings && r->findings[i].severity == SEV_WARNING))
			failures++;
	jw_lit(w, "  <testsuite");
	xml_attr(w, "name", path);
	xml_uint_attr(w, "tests", r->nfindings > 0 ? r->nfindings : 1);
	xml_uint_attr(w, "failures", failures);
	jw_lit(w, " errors=\"0\" skipped=\"0\">\n");
	for (i = 0; i < r->nfindings; i++) {
		const struct finding *f = &r->findings[i];
		bool fails = f->severity == SEV_ERROR ||
		    (fail_warnings && f->severity == SEV_WARNING);
		char name[256], line[32];

		snprintf(name, sizeof(name), "%s at line %u", f->rule,
		    one_based(f->line));
		snprintf(line, sizeof(line), "%u", one_based(f->line));
		jw_lit(w, "    <testcase");
		xml_attr(w, "classname", path);
		xml_attr(w, "name", name);
		xml_attr(w, "file", path);
		xml_attr(w, "line", line);
		jw_lit(w, ">\n      <");
		jw_lit(w, fails ? "failure" : "system-out");
		if (fails) {
			xml_attr(w, "type", f->rule);
			xml_attr(w, "message", f->message);
		}
		jw_lit(w, ">");
		jw_xml(w, path);
		jw_lit(w, ":");
		jw_lit(w, line);
		jw_lit(w, ": ");
		jw_lit(w, severity_name(f->severity));
		jw_lit(w, ": ");
		jw_xml(w, f->message);
		if (f->hint != NULL && f->hint[0] != '\0') {
			jw_lit(w, "&#10;fix: ");
			jw_xml(w, f->hint);
		}
		jw_lit(w, fails ? "</failure>\n" : "</system-out>\n");
		jw_lit(w, "    </testcase>\n");
	}
	if (r->nfindings == 0) {
		jw_lit(w, "    <testcase");
		xml_attr(w, "classname", path);
		jw_lit(w, " name=\"preflight check\"/>\n");
	}
	memory_words(mem, sizeof(mem), r->estimate);
	jw_lit(w, "    <system-out>");
	jw_lit(w, verdict_name(r->verdict));
	jw_lit(w, "; ");
	jw_xml(w, mem);
	jw_lit(w, "</system-out>\n  </testsuite>\n");
}

void
formats_junit_error(struct jsonw *w, const char *file, const char *message)
{
	jw_lit(w, "  <testsuite");
	xml_attr(w, "name", file);
	jw_lit(w, " tests=\"1\" failures=\"0\" errors=\"1\" skipped=\"0\">\n"
	    "    <testcase");
	xml_attr(w, "classname", file);
	jw_lit(w, " name=\"preflight check\">\n      <error");
	xml_attr(w, "message", message);
	jw_lit(w, ">");
	jw_xml(w, message);
	jw_lit(w, "</error>\n    </testcase>\n  </testsuite>\n");
}

void
formats_junit_end(struct jsonw *w)
{
	jw_lit(w, "</testsuites>\n");
}

static const char *
github_level(enum severity s)
{
	return s == SEV_ERROR ? "failure" : s == SEV_WARNING ? "warning" :
	    "notice";
}

void
formats_checkrun_init(struct formats_checkrun *c)
{
	memset(c, 0, sizeof(*c));
	jw_init(&c->summary);
}

/* One summary line: verdict, memory, and the first suggestion. */
static void
summary_line(struct jsonw *w, const struct format_input *in)
{
	const struct report *r = in->report;
	char line[512], mem[160];

	memory_words(mem, sizeof(mem), r->estimate);
	snprintf(line, sizeof(line), "- `%s`: **%s** on %ld x %s; %s",
	    in->file, verdict_name(r->verdict), r->ctx.gpus, r->ctx.gpu,
	    mem);
	jw_lit(w, line);
	if (r->nsuggestions > 0) {
		snprintf(line, sizeof(line), "; with `%s`: %.1f GiB per GPU",
		    r->suggestions[0].set_json,
		    r->suggestions[0].per_gpu_peak_gib);
		jw_lit(w, line);
	}
	jw_lit(w, "\n");
}

void
formats_checkrun_add(struct formats_checkrun *c,
    const struct format_input *in)
{
	const struct report *r = in->report;
	size_t i;

	c->files++;
	for (i = 0; i < 3; i++)
		c->count[i] += r->count[i];
	if (c->files <= FORMATS_SUMMARY_MAX_FILES)
		summary_line(&c->summary, in);
	for (i = 0; i < r->nfindings; i++) {
		const struct finding *f = &r->findings[i];
		struct jsonw w;
		size_t k = c->nann[f->severity];

		if (k == FORMATS_GITHUB_MAX_ANNOTATIONS)
			continue;
		jw_init(&w);
		jw_lit(&w, "{\"path\":");
		jw_str(&w, in->file);
		jw_lit(&w, ",\"start_line\":");
		jw_int(&w, one_based(f->line));
		jw_lit(&w, ",\"end_line\":");
		jw_int(&w, one_based(f->line));
		jw_lit(&w, ",\"annotation_level\":\"");
		jw_lit(&w, github_level(f->severity));
		jw_lit(&w, "\",\"title\":");
		jw_str(&w, f->rule);
		jw_lit(&w, ",\"message\":");
		jw_str(&w, f->message);
		jw_lit(&w, ",\"raw_details\":");
		jw_str(&w, f->hint != NULL ? f->hint : "");
		jw_lit(&w, "}");
		c->ann[f->severity][k] = jw_take(&w, NULL);
		if (c->ann[f->severity][k] == NULL)
			c->oom = true;
		else
			c->nann[f->severity]++;
	}
}

char *
formats_checkrun_end(struct formats_checkrun *c, size_t *len)
{
	struct jsonw w, s, a;
	size_t errors = c->count[SEV_ERROR], warnings = c->count[SEV_WARNING];
	size_t total = c->count[0] + c->count[1] + c->count[2];
	size_t shown = 0, k;
	const char *verdict = errors > 0 ? "fail" : warnings > 0 ? "warn" :
	    "pass";
	char line[256];
	char *text, *out;
	int sev;

	jw_init(&w);
	jw_init(&s);
	jw_init(&a);
	snprintf(line, sizeof(line), "preflight: %s (%zu error%s, %zu "
	    "warning%s, %zu info)", verdict, errors, errors == 1 ? "" : "s",
	    warnings, warnings == 1 ? "" : "s", c->count[SEV_INFO]);
	jw_lit(&w, "{\"title\":");
	jw_str(&w, line);
	snprintf(line, sizeof(line), "%zu config%s checked: **%s**.\n\n",
	    c->files, c->files == 1 ? "" : "s", verdict);
	jw_lit(&s, line);
	text = jw_take(&c->summary, &k);
	if (text != NULL)
		jw_raw(&s, text, k);
	free(text);
	if (c->files > FORMATS_SUMMARY_MAX_FILES) {
		snprintf(line, sizeof(line), "- and %zu more configs\n",
		    c->files - FORMATS_SUMMARY_MAX_FILES);
		jw_lit(&s, line);
	}
	jw_lit(&a, "[");
	/* Errors first, then warnings, then info: the annotation budget
	   must not go to notes while an error is left out. */
	for (sev = SEV_ERROR; sev >= SEV_INFO; sev--)
		for (k = 0; k < c->nann[sev]; k++) {
			if (shown < FORMATS_GITHUB_MAX_ANNOTATIONS) {
				jw_lit(&a, shown > 0 ? "," : "");
				jw_lit(&a, c->ann[sev][k]);
				shown++;
			}
			free(c->ann[sev][k]);
		}
	jw_lit(&a, "]");
	if (total > shown) {
		snprintf(line, sizeof(line), "\n%zu more finding%s not shown "
		    "as annotations (GitHub takes %d per request).\n",
		    total - shown, total - shown == 1 ? "" : "s",
		    FORMATS_GITHUB_MAX_ANNOTATIONS);
		jw_lit(&s, line);
	}
	text = jw_take(&s, NULL);
	jw_lit(&w, ",\"summary\":");
	jw_str(&w, text != NULL ? text : "");
	if (text == NULL || c->oom)
		w.oom = true;
	free(text);
	text = jw_take(&a, &k);
	if (text == NULL)
		w.oom = true;
	jw_lit(&w, ",\"annotations\":");
	jw_lit(&w, text != NULL ? text : "[]");
	free(text);
	jw_lit(&w, "}");
	out = jw_take(&w, len);
	formats_checkrun_init(c);
	return out;
}

/* Compact JSON text (malloc'd, or NULL) as a new jansson value. */
static json_t *
as_json(char *text, size_t len)
{
	json_t *j;

	if (text == NULL)
		return NULL;
	j = json_loadb(text, len, 0, NULL);
	free(text);
	return j;
}

json_t *
formats_sarif(const struct format_input *in, size_t n, const char *version)
{
	struct jsonw w;
	bool first = true;
	size_t i, len;
	char *text;

	jw_init(&w);
	formats_sarif_begin(&w, version, NULL);
	for (i = 0; i < n; i++)
		formats_sarif_add(&w, &in[i], &first);
	formats_sarif_end(&w);
	text = jw_take(&w, &len);
	return as_json(text, len);
}

json_t *
formats_github(const struct format_input *in, size_t n)
{
	struct formats_checkrun c;
	size_t i, len;
	char *text;

	formats_checkrun_init(&c);
	for (i = 0; i < n; i++)
		formats_checkrun_add(&c, &in[i]);
	text = formats_checkrun_end(&c, &len);
	return as_json(text, len);
}

json_t *
formats_gitlab(const struct format_input *in, size_t n)
{
	struct jsonw w;
	bool first = true;
	size_t i, len;
	char *text;

	jw_init(&w);
	formats_gitlab_begin(&w);
	for (i = 0; i < n; i++)
		formats_gitlab_add(&w, &in[i], &first);
	formats_gitlab_end(&w);
	text = jw_take(&w, &len);
	return as_json(text, len);
}
