/*
 * server/cli: `preflight check FILE|DIR... [options]` and `preflight
 * version`.
 *
 * Reads each file (or stdin for "-"; a directory is walked for Axolotl
 * configs), runs the core check and writes the report in the chosen
 * format to stdout, one file at a time: a file's memory is freed before
 * the next is read, so thousands of files take no more memory than one.
 * An input that cannot be checked gets one `file:line:col: error:
 * message` line on stderr and makes the exit code 2.
 */
#include "cli.h"
#include "cli_int.h"

#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api/digest.h"
#include "api/encode.h"
#include "api/formats.h"
#include "api/jsonw.h"
#include "buildinfo.h"
#include "core/arena.h"
#include "core/check.h"
#include "core/hfconfig.h"
#include "core/policy.h"
#include "core/version.h"
#include "server/file.h"
#include "server/hfcache.h"

/* The state of one run over every argument. */
struct cli_run {
	const struct cli_opts *o;
	struct jsonw out;		/* document formats; flushed per file */
	struct formats_checkrun checkrun;
	char cwd[PATH_MAX];		/* %SRCROOT%; "" if unknown */
	bool first;			/* no report written yet */
	size_t checked, skipped;
	int worst;			/* exit code so far */
};

/*
 * Does the YAML text look like an Axolotl config: `base_model` or
 * `datasets` as a key at the top level of a block mapping (column 1,
 * quoted or not, then a colon)?  The pre-commit hook and directory walks
 * use this, so a GitHub workflow, a docker-compose file or a Kubernetes
 * manifest is skipped instead of failed.  A line scan, not a parse:
 * several documents, templates and broken YAML are classified too (an
 * Axolotl config that does not parse is still checked and reported).
 */
static bool
looks_axolotl(const char *buf, size_t len)
{
	static const char *const keys[] = { "base_model", "datasets" };
	const char *p = buf, *end = buf + len;
	size_t i;

	if (len >= 3 && memcmp(buf, "\xef\xbb\xbf", 3) == 0)
		p += 3;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *eol = nl != NULL ? nl : end;
		const char *k = p;
		char quote = 0;

		if (*k == '"' || *k == '\'')
			quote = *k++;
		for (i = 0; i < 2; i++) {
			size_t n = strlen(keys[i]);
			const char *c = k + n;

			if ((size_t)(eol - k) < n || memcmp(k, keys[i], n) != 0)
				continue;
			if (quote != 0) {
				if (c >= eol || *c != quote)
					continue;
				c++;
			}
			while (c < eol && (*c == ' ' || *c == '\t'))
				c++;
			if (c < eol && *c == ':' && (c + 1 == eol ||
			    c[1] == ' ' || c[1] == '\t' || c[1] == '\r'))
				return true;
		}
		p = eol + 1;
	}
	return false;
}

/* The file's path from the current directory (%SRCROOT%): "./" and the
   cwd prefix are dropped; anything else is kept as given. */
static const char *
root_path(const struct cli_run *run, const char *file)
{
	size_t n = strlen(run->cwd);

	if (n > 1 && strncmp(file, run->cwd, n) == 0 && file[n] == '/')
		file += n + 1;
	while (file[0] == '.' && file[1] == '/') {
		file += 2;
		while (*file == '/')
			file++;
	}
	return file;
}

/* Write and empty the document buffer. */
static int
flush_out(struct cli_run *run)
{
	if (run->out.oom) {
		fprintf(stderr, "preflight: error: out of memory\n");
		return -1;
	}
	if (run->out.len > 0 &&
	    fwrite(run->out.buf, 1, run->out.len, stdout) != run->out.len)
		return -1;
	run->out.len = 0;
	return 0;
}

/* The findings at or above min, in a copy of r from a (r itself when
   nothing is left out).  The counts stay: summaries count everything. */
static const struct report *
shown(const struct report *r, enum severity min, struct arena *a)
{
	struct report *v;
	size_t i, k = 0;

	for (i = 0; i < r->nfindings; i++)
		if (r->findings[i].severity < min)
			break;
	if (i == r->nfindings)
		return r;
	v = ARENA_NEW(a, struct report, 1);
	if (v == NULL)
		return r;
	*v = *r;
	v->findings = ARENA_NEW(a, struct finding, r->nfindings);
	if (v->findings == NULL)
		return r;
	for (i = 0; i < r->nfindings; i++)
		if (r->findings[i].severity >= min)
			v->findings[k++] = r->findings[i];
	v->nfindings = k;
	return v;
}

/* The report in the run's format. */
static int
emit(struct cli_run *run, const struct report *r, const char *path)
{
	const struct cli_opts *o = run->o;
	struct format_input in = { r, root_path(run, path) };
	struct text_opts to = { o->colour, TEXT_PLAIN, NULL };
	char *text;
	size_t len;

	switch (o->format) {
	case FORMAT_GITHUB:
		to.style = TEXT_GITHUB;
		to.path = in.file;
		encode_report_text(stdout, r, path, &to);
		return 0;
	case FORMAT_TEXT:
		encode_report_text(stdout, r, path, &to);
		return 0;
	case FORMAT_JSON:
		text = encode_report_json_text(r, path, &len);
		if (text == NULL) {
			run->out.oom = true;
			break;
		}
		if (!run->first)
			jw_lit(&run->out, ",\n");
		jw_indent(&run->out, text, len, 0);
		free(text);
		break;
	case FORMAT_SARIF:
		formats_sarif_add(&run->out, &in, &run->first);
		break;
	case FORMAT_GITLAB:
		formats_gitlab_add(&run->out, &in, &run->first);
		break;
	case FORMAT_JUNIT:
		formats_junit_add(&run->out, &in, o->fail_on_warning);
		break;
	case FORMAT_CHECKRUN:
		formats_checkrun_add(&run->checkrun, &in);
		break;
	}
	run->first = false;
	return flush_out(run);
}

/* One config: its exit code (0, 1 or 2) into run->worst. */
static void
check_file(struct cli_run *run, const char *path, bool detect)
{
	const struct cli_opts *o = run->o;
	struct arena a;
	struct err e = { 0 };
	struct report *r;
	char *buf;
	size_t len;
	int rv, code;

	if (file_read(&buf, &len, path, o->lim.max_bytes) != 0) {
		fprintf(stderr, "%s: error: cannot read: %s\n", path,
		    strerror(errno));
		if (o->format == FORMAT_JUNIT) {
			formats_junit_error(&run->out, path, "cannot read");
			(void)flush_out(run);
		}
		run->worst = 2;
		return;
	}
	if (detect && !looks_axolotl(buf, len)) {
		if (o->verbose)
			fprintf(stderr, "preflight: skipped %s: not an Axolotl "
			    "config (no base_model or datasets at the top "
			    "level)\n", path);
		run->skipped++;
		free(buf);
		return;
	}
	run->checked++;
	arena_init(&a, CLI_ARENA_CAP);
	rv = check_run(&r, buf, len, &o->ctx, &o->lim, &a, &e);
	if (rv == 0 && digest_sha256_hex(r->config_sha256, buf, len) != 0)
		rv = err_set(&e, ERR_INTERNAL, NULL, "cannot hash the config");
	if (rv != 0) {
		cli_print_err(path, &e);
		if (o->format == FORMAT_GITHUB)	/* an annotation too */
			encode_github_command(stdout, SEV_ERROR,
			    root_path(run, path), e.loc.line, e.loc.col,
			    "preflight", e.msg, NULL);
		if (o->format == FORMAT_JUNIT) {
			formats_junit_error(&run->out, path, e.msg);
			(void)flush_out(run);
		}
		code = 2;
	} else {
		code = r->verdict == VERDICT_FAIL || (o->fail_on_warning &&
		    r->verdict == VERDICT_WARN) ? 1 : 0;
		if (emit(run, shown(r, (enum severity)o->min_severity, &a),
		    path) != 0)
			code = 2;
	}
	if (code > run->worst)
		run->worst = code;
	arena_fini(&a);
	free(buf);
}

static int
cmp_names(const void *x, const void *y)
{
	return strcmp(*(char *const *)x, *(char *const *)y);
}

static bool
is_yaml_name(const char *name)
{
	size_t l = strlen(name);

	return (l > 5 && strcmp(name + l - 5, ".yaml") == 0) ||
	    (l > 4 && strcmp(name + l - 4, ".yml") == 0);
}

/*
 * Walk dir in name order: YAML files that look like Axolotl configs are
 * checked, hidden entries (.git) are skipped, symlinked directories are
 * not followed (no loops).
 */
static void
walk(struct cli_run *run, const char *dir, int depth)
{
	DIR *d;
	struct dirent *ent;
	char **names = NULL;
	size_t n = 0, cap = 0, i;

	d = opendir(dir);
	if (d == NULL) {
		fprintf(stderr, "%s: error: cannot read: %s\n", dir,
		    strerror(errno));
		run->worst = 2;
		return;
	}
	while ((ent = readdir(d)) != NULL) {
		char *copy;

		if (ent->d_name[0] == '.')
			continue;
		if (n == cap) {
			char **grown;

			cap = cap == 0 ? 64 : cap * 2;
			grown = realloc(names, cap * sizeof(*names));
			if (grown == NULL)
				break;
			names = grown;
		}
		copy = strdup(ent->d_name);
		if (copy == NULL)
			break;
		names[n++] = copy;
	}
	closedir(d);
	if (n > 0)
		qsort(names, n, sizeof(*names), cmp_names);
	for (i = 0; i < n; i++) {
		char path[PATH_MAX];
		struct stat st, lst;
		int k = snprintf(path, sizeof(path), "%s%s%s", dir,
		    dir[strlen(dir) - 1] == '/' ? "" : "/", names[i]);

		if (k < 0 || (size_t)k >= sizeof(path) ||
		    lstat(path, &lst) != 0 || stat(path, &st) != 0)
			continue;
		if (S_ISDIR(st.st_mode)) {
			if (!S_ISLNK(lst.st_mode) && depth < CLI_MAX_DEPTH)
				walk(run, path, depth + 1);
		} else if (S_ISREG(st.st_mode) && is_yaml_name(names[i])) {
			check_file(run, path, true);
		}
	}
	for (i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

/* The document's head and tail around the files. */
static void
document_begin(struct cli_run *run, bool many)
{
	const struct cli_opts *o = run->o;

	switch (o->format) {
	case FORMAT_JSON:
		if (many)
			jw_lit(&run->out, "[\n");
		break;
	case FORMAT_SARIF:
		formats_sarif_begin(&run->out, PREFLIGHT_VERSION,
		    run->cwd[0] != '\0' ? run->cwd : NULL);
		break;
	case FORMAT_GITLAB:
		formats_gitlab_begin(&run->out);
		break;
	case FORMAT_JUNIT:
		formats_junit_begin(&run->out);
		break;
	case FORMAT_CHECKRUN:
		formats_checkrun_init(&run->checkrun);
		break;
	case FORMAT_TEXT:
	case FORMAT_GITHUB:
		break;
	}
}

static void
document_end(struct cli_run *run, bool many)
{
	char *text;
	size_t len;

	switch (run->o->format) {
	case FORMAT_JSON:
		if (many)
			jw_lit(&run->out, run->first ? "]\n" : "\n]\n");
		else if (!run->first)
			jw_lit(&run->out, "\n");
		break;
	case FORMAT_SARIF:
		formats_sarif_end(&run->out);
		jw_lit(&run->out, "\n");
		break;
	case FORMAT_GITLAB:
		formats_gitlab_end(&run->out);
		jw_lit(&run->out, "\n");
		break;
	case FORMAT_JUNIT:
		formats_junit_end(&run->out);
		break;
	case FORMAT_CHECKRUN:
		text = formats_checkrun_end(&run->checkrun, &len);
		if (text == NULL) {
			run->out.oom = true;
			break;
		}
		jw_indent(&run->out, text, len, 0);
		jw_lit(&run->out, "\n");
		free(text);
		break;
	case FORMAT_TEXT:
	case FORMAT_GITHUB:
		break;
	}
}

static int
check_main(int argc, char **argv, struct cli_opts *op)
{
	struct cli_run run;
	struct stat st;
	bool many;
	int i, first;

	first = cli_check_options(op, argc, argv);
	if (first < 0)
		return first == -2 ? 0 : 2;
	memset(&run, 0, sizeof(run));
	run.o = op;
	run.first = true;
	jw_init(&run.out);
	if (getcwd(run.cwd, sizeof(run.cwd)) == NULL)
		run.cwd[0] = '\0';
	many = argc - first > 1;
	for (i = first; i < argc && !many; i++)
		if (strcmp(argv[i], "-") != 0 && stat(argv[i], &st) == 0 &&
		    S_ISDIR(st.st_mode))
			many = true;
	document_begin(&run, many);
	for (i = first; i < argc; i++) {
		if (strcmp(argv[i], "-") != 0 && stat(argv[i], &st) == 0 &&
		    S_ISDIR(st.st_mode))
			walk(&run, argv[i], 0);
		else
			check_file(&run, argv[i], op->axolotl_only);
	}
	document_end(&run, many);
	if (flush_out(&run) != 0 || fflush(stdout) != 0) {
		fprintf(stderr, "preflight: error: cannot write output: %s\n",
		    strerror(errno));
		run.worst = 2;
	}
	jw_fini(&run.out);
	if (run.skipped > 0)
		fprintf(stderr, "preflight: skipped %zu YAML file%s that %s "
		    "(no base_model or datasets at the top level)%s\n",
		    run.skipped, run.skipped == 1 ? "" : "s", run.skipped == 1 ?
		    "is not an Axolotl config" : "are not Axolotl configs",
		    op->verbose ? "" : "; --verbose lists them");
	return run.worst;
}

int
cli_check(int argc, char **argv)
{
	struct cli_opts o;
	int code;

	memset(&o, 0, sizeof(o));
	arena_init(&o.policy_arena, (size_t)16 << 20);
	code = check_main(argc, argv, &o);
	arena_fini(&o.policy_arena);
	free(o.ds_config);
	free(o.ignore);
	return code;
}

int
cli_version(int argc, char **argv)
{
	if (argc > 1 && (strcmp(argv[1], "--help") == 0 ||
	    strcmp(argv[1], "-h") == 0)) {
		printf("usage: preflight version\n\nPrints the version, the "
		    "git commit it was built from and the Axolotl commit\n"
		    "its rules follow.  No options.\n");
		return 0;
	}
	if (argc > 1) {
		fprintf(stderr, "usage: preflight version\n");
		return 2;
	}
	printf("preflight %s (git %s; rules follow axolotl %s)\n",
	    PREFLIGHT_VERSION, PREFLIGHT_GIT_COMMIT,
	    PREFLIGHT_AXOLOTL_COMMIT);
	return fflush(stdout) == 0 ? 0 : 2;
}
