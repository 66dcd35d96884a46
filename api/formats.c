/*
 * api/formats: SARIF, GitHub check-run output, GitLab Code Quality.
 * Only jansson and the digest helper; no I/O.
 */
#include "api/formats.h"

#include <stdio.h>
#include <string.h>

#include "api/digest.h"
#include "core/rules.h"

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

json_t *
formats_sarif(const struct format_input *in, size_t n, const char *version)
{
	const struct rule_def *all;
	json_t *rules, *results, *log;
	size_t nrules, i, k;

	rules = json_array();
	all = rules_all(&nrules);
	for (i = 0; i < nrules; i++)
		json_array_append_new(rules, json_pack(
		    "{s:s, s:s, s:{s:s}, s:{s:s}, s:{s:s}, s:{s:[s]}}",
		    "id", all[i].id, "name", all[i].id,
		    "shortDescription", "text", all[i].title,
		    "help", "text", all[i].hint,
		    "defaultConfiguration", "level",
		    sarif_level(all[i].severity),
		    "properties", "tags", "axolotl"));
	results = json_array();
	for (k = 0; k < n; k++) {
		const struct report *r = in[k].report;

		for (i = 0; i < r->nfindings; i++) {
			const struct finding *f = &r->findings[i];
			long idx = rule_index(f->rule);
			json_t *res = json_pack(
			    "{s:s, s:s, s:{s:s}, s:[{s:{s:{s:s}, "
			    "s:{s:i, s:i}}}]}",
			    "ruleId", f->rule, "level",
			    sarif_level(f->severity), "message", "text",
			    f->message, "locations", "physicalLocation",
			    "artifactLocation", "uri", in[k].file,
			    "region", "startLine", f->line > 0 ? f->line : 1,
			    "startColumn", f->col > 0 ? f->col : 1);

			if (res != NULL && idx >= 0)
				json_object_set_new(res, "ruleIndex",
				    json_integer(idx));
			json_array_append_new(results, res);
		}
	}
	log = json_pack("{s:s, s:s, s:[{s:{s:{s:s, s:s, s:o}}, s:o}]}",
	    "$schema", "https://json.schemastore.org/sarif-2.1.0.json",
	    "version", "2.1.0", "runs", "tool", "driver", "name", "preflight",
	    "version", version, "rules", rules, "results", results);
	return log;
}

static const char *
github_level(enum severity s)
{
	return s == SEV_ERROR ? "failure" : s == SEV_WARNING ? "warning" :
	    "notice";
}

static json_t *
github_annotation(const char *file, const struct finding *f)
{
	return json_pack("{s:s, s:i, s:i, s:s, s:s, s:s, s:s}", "path", file,
	    "start_line", f->line > 0 ? f->line : 1,
	    "end_line", f->line > 0 ? f->line : 1,
	    "annotation_level", github_level(f->severity),
	    "title", f->rule, "message", f->message,
	    "raw_details", f->hint != NULL ? f->hint : "");
}

json_t *
formats_github(const struct format_input *in, size_t n)
{
	size_t errors = 0, warnings = 0, infos = 0, total = 0, shown = 0;
	size_t i, k;
	char title[160], summary[2048];
	size_t len = 0;
	json_t *ann = json_array();
	const char *verdict = "pass";
	int sev;

	for (k = 0; k < n; k++) {
		const struct report *r = in[k].report;

		errors += r->count[SEV_ERROR];
		warnings += r->count[SEV_WARNING];
		infos += r->count[SEV_INFO];
		total += r->nfindings;
	}
	/* Errors first, then warnings, then info: the annotation budget
	   must not go to notes while an error is left out. */
	for (sev = SEV_ERROR; sev >= SEV_INFO; sev--) {
		for (k = 0; k < n; k++) {
			const struct report *r = in[k].report;

			for (i = 0; i < r->nfindings; i++) {
				const struct finding *f = &r->findings[i];

				if ((int)f->severity != sev ||
				    shown == FORMATS_GITHUB_MAX_ANNOTATIONS)
					continue;
				json_array_append_new(ann, github_annotation(
				    in[k].file, f));
				shown++;
			}
		}
	}
	if (errors > 0)
		verdict = "fail";
	else if (warnings > 0)
		verdict = "warn";
	snprintf(title, sizeof(title), "preflight: %s (%zu error%s, %zu "
	    "warning%s, %zu info)", verdict, errors, errors == 1 ? "" : "s",
	    warnings, warnings == 1 ? "" : "s", infos);
	len += (size_t)snprintf(summary + len, sizeof(summary) - len,
	    "%zu config%s checked: **%s**.\n\n", n, n == 1 ? "" : "s",
	    verdict);
	for (k = 0; k < n && len < sizeof(summary); k++) {
		const struct report *r = in[k].report;

		/* The estimator (#8) fills the memory estimate. */
		len += (size_t)snprintf(summary + len, sizeof(summary) - len,
		    "- `%s`: %s on %ld x %s; memory estimate: %s\n",
		    in[k].file, verdict_name(r->verdict), r->ctx.gpus,
		    r->ctx.gpu, "not available");
	}
	if (total > shown && len < sizeof(summary))
		snprintf(summary + len, sizeof(summary) - len,
		    "\n%zu more finding%s not shown as annotations (GitHub "
		    "takes %d per request).\n", total - shown,
		    total - shown == 1 ? "" : "s",
		    FORMATS_GITHUB_MAX_ANNOTATIONS);
	return json_pack("{s:s, s:s, s:o}", "title", title, "summary",
	    summary, "annotations", ann);
}

static const char *
gitlab_severity(enum severity s)
{
	return s == SEV_ERROR ? "critical" : s == SEV_WARNING ? "minor" :
	    "info";
}

json_t *
formats_gitlab(const struct format_input *in, size_t n)
{
	json_t *out = json_array();
	size_t i, k, j;

	for (k = 0; k < n; k++) {
		const struct report *r = in[k].report;

		for (i = 0; i < r->nfindings; i++) {
			const struct finding *f = &r->findings[i];
			char key[1024], fp[65];
			unsigned seq = 0;

			/*
			 * Stable across runs (no line numbers, which move with
			 * edits) and distinct between findings: file, rule,
			 * key path, message, and the count of identical ones
			 * before it.
			 */
			for (j = 0; j < i; j++)
				if (strcmp(r->findings[j].rule, f->rule) == 0 &&
				    strcmp(r->findings[j].path, f->path) == 0 &&
				    strcmp(r->findings[j].message,
				    f->message) == 0)
					seq++;
			snprintf(key, sizeof(key), "%s\n%s\n%s\n%s\n%u",
			    in[k].file, f->rule, f->path, f->message, seq);
			digest_sha256_hex(fp, key, strlen(key));
			json_array_append_new(out, json_pack(
			    "{s:s, s:s, s:s, s:s, s:{s:s, s:{s:i}}}",
			    "description", f->message, "check_name", f->rule,
			    "fingerprint", fp, "severity",
			    gitlab_severity(f->severity), "location", "path",
			    in[k].file, "lines", "begin",
			    f->line > 0 ? f->line : 1));
		}
	}
	return out;
}
