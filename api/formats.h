/*
 * api/formats: reports in the formats CI systems read.
 *
 *   SARIF 2.1.0            GitHub code scanning, most SAST dashboards
 *   GitHub check-run       the `output` object of a check run
 *   GitLab Code Quality    the codequality report artifact
 *
 * Each takes several (report, file) pairs, so a CI job checking every
 * config of a repository gets one document.
 */
#ifndef API_FORMATS_H
#define API_FORMATS_H

#include <stddef.h>

#include <jansson.h>

#include "core/report.h"

#define FORMATS_GITHUB_MAX_ANNOTATIONS 50	/* GitHub's limit per call */

struct format_input {
	const struct report *report;	/* borrowed */
	const char *file;		/* path shown to the user */
};

/* SARIF 2.1.0 log: one run, one result per finding.  New reference. */
json_t *formats_sarif(const struct format_input *in, size_t n,
    const char *version);

/* GitHub check-run output: title, summary, <= 50 annotations.  New. */
json_t *formats_github(const struct format_input *in, size_t n);

/* GitLab Code Quality report: an array of issues.  New reference. */
json_t *formats_gitlab(const struct format_input *in, size_t n);

#endif /* API_FORMATS_H */
