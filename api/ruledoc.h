/*
 * api/ruledoc: what a rule's catalog row does not say: why it matters and
 * an example.  For `preflight rules ID` and SARIF's rule metadata.
 *
 * The table is generated at build time by api/embed_ruledoc.sh from
 * api/data/ruledoc.tsv (what ../shared/reference/rules.md says Axolotl
 * does for the rule, extracted by tests/gen/ruledoc.py) and from each
 * rule's tests/fixtures/rules/<id>.fail.yaml (the example).
 */
#ifndef API_RULEDOC_H
#define API_RULEDOC_H

#include <stddef.h>

struct rule_def;

struct ruledoc {
	const char *id;		/* rule id; the table is sorted by it */
	const char *phase;	/* rules.md's severity and phase
				   ("error (raw)", "error@launch", "gap ..."),
				   or NULL: a preflight-only rule */
	const char *axolotl;	/* what Axolotl does, one line, or NULL */
	const char *example;	/* a config that triggers the rule, with
				   `# expect: ID` on the lines it fires at and
				   `# gpus: N`-style context headers; or NULL */
};

extern const struct ruledoc ruledoc_table[];	/* build/gen/ruledoc.c */
extern const size_t ruledoc_table_len;

/* The row for id, or NULL.  Borrowed (static). */
const struct ruledoc *ruledoc_find(const char *id);

/*
 * Why rule r matters, in plain words, into buf (always NUL-terminated):
 * what its phase in Axolotl costs (rejected at validation, fails at
 * launch, fails at save, silently ignored, ...) and what Axolotl does,
 * from rules.md; for a rule rules.md does not list, what its severity
 * means for the run.
 */
void ruledoc_why(char *buf, size_t cap, const struct rule_def *r);

#endif /* API_RULEDOC_H */
