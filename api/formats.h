/*
 * api/formats: reports in the formats CI systems read.
 *
 *   SARIF 2.1.0            GitHub code scanning, most SAST dashboards
 *   GitHub check-run       the `output` object of a check run
 *   GitLab Code Quality    the codequality report artifact
 *   JUnit XML              CI systems that show test reports
 *
 * (GitHub workflow commands are text: api/encode's TEXT_GITHUB.)
 *
 * Each document covers several (report, file) pairs, so a CI job checking
 * every config of a repository gets one document.  The streamed writers
 * (begin, one add per file, end) append to a struct jsonw buffer the
 * caller empties as it goes, so memory stays flat however many files
 * there are; the json_t functions are the same writers for the API.
 */
#ifndef API_FORMATS_H
#define API_FORMATS_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "api/jsonw.h"
#include "core/report.h"

#define FORMATS_GITHUB_MAX_ANNOTATIONS 50	/* GitHub's limit per call */
#define FORMATS_SUMMARY_MAX_FILES 200	/* check-run summary lines */

struct format_input {
	const struct report *report;	/* borrowed */
	const char *file;		/* the file's path from the source root
					   (SARIF's %SRCROOT%, annotations);
					   absolute: outside it */
};

/*
 * SARIF 2.1.0: one run, the whole rule catalog as the driver's rules
 * (shortDescription, fullDescription, helpUri, help,
 * defaultConfiguration), one result per finding with a relative
 * artifactLocation.uri and uriBaseId %SRCROOT%.  srcroot, when not NULL,
 * is the absolute directory %SRCROOT% stands for (originalUriBaseIds).
 */
void formats_sarif_begin(struct jsonw *w, const char *version,
    const char *srcroot);
void formats_sarif_add(struct jsonw *w, const struct format_input *in,
    bool *first);
void formats_sarif_end(struct jsonw *w);

/* GitLab Code Quality: an array of issues with stable fingerprints. */
void formats_gitlab_begin(struct jsonw *w);
void formats_gitlab_add(struct jsonw *w, const struct format_input *in,
    bool *first);
void formats_gitlab_end(struct jsonw *w);

/*
 * JUnit XML: a testsuite per file, a testcase per finding (an error is a
 * <failure>, and a warning too when fail_warnings), or one passing
 * testcase for a file without findings; formats_junit_error adds a file
 * that could not be checked as an <error>.
 */
void formats_junit_begin(struct jsonw *w);
void formats_junit_add(struct jsonw *w, const struct format_input *in,
    bool fail_warnings);
void formats_junit_error(struct jsonw *w, const char *file,
    const char *message);
void formats_junit_end(struct jsonw *w);

/* A check-run output accumulated file by file: title, a summary with
   each file's verdict and memory estimate, and the first 50 annotations
   by severity (errors first). */
struct formats_checkrun {
	size_t files;
	size_t count[3];		/* findings per enum severity */
	/* The first annotations of each severity, JSON objects, malloc'd
	   (formats_checkrun_end frees them). */
	char *ann[3][FORMATS_GITHUB_MAX_ANNOTATIONS];
	size_t nann[3];
	struct jsonw summary;		/* markdown lines */
	bool oom;			/* an annotation was lost */
};

void formats_checkrun_init(struct formats_checkrun *c);
void formats_checkrun_add(struct formats_checkrun *c,
    const struct format_input *in);
/* The output object as compact JSON text, malloc'd (caller frees), or
   NULL when out of memory; c is emptied either way. */
char *formats_checkrun_end(struct formats_checkrun *c, size_t *len);

/* The same documents as jansson values for the API.  New references, or
   NULL when out of memory. */
json_t *formats_sarif(const struct format_input *in, size_t n,
    const char *version);
json_t *formats_github(const struct format_input *in, size_t n);
json_t *formats_gitlab(const struct format_input *in, size_t n);

#endif /* API_FORMATS_H */
