/*
 * api/ruledoc: see ruledoc.h.  No I/O.
 */
#include "ruledoc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/rules.h"

static int
cmp_id(const void *key, const void *row)
{
	return strcmp(key, ((const struct ruledoc *)row)->id);
}

const struct ruledoc *
ruledoc_find(const char *id)
{
	return bsearch(id, ruledoc_table, ruledoc_table_len,
	    sizeof(ruledoc_table[0]), cmp_id);
}

/* What a phase of rules.md's severity vocabulary (section 0.1) costs. */
static const char *
phase_words(const char *phase)
{
	static const struct {
		const char *prefix;
		const char *words;
	} t[] = {
		{ "error@launch", "The config passes Axolotl's validation, "
		  "then the launch fails after the GPUs are allocated." },
		{ "error@save", "Training runs, then saving the model fails: "
		  "the most expensive way to fail." },
		{ "error", "Axolotl rejects the config while validating it: "
		  "nothing is launched." },
		{ "warning", "Axolotl logs a warning and carries on with the "
		  "config as written." },
		{ "auto-fix", "Axolotl changes the value on its own, so the "
		  "run is not what the config says." },
		{ "gap", "Axolotl does not check this: the setting is silently "
		  "ignored or misapplied, or the run fails later." },
		{ "advisory", "Only Axolotl's documentation says so; no code "
		  "checks it." },
		{ "inactive", "Axolotl has a check for this that never runs, "
		  "so nothing stops the config." },
	};
	size_t i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (strncmp(phase, t[i].prefix, strlen(t[i].prefix)) == 0)
			return t[i].words;
	return NULL;
}

/* A preflight-only rule: what its severity means for the run. */
static const char *
severity_words(enum severity s)
{
	switch (s) {
	case SEV_ERROR:
		return "preflight expects this run to fail (or to give no "
		    "usable result) as configured: fix it before the GPUs are "
		    "allocated.";
	case SEV_WARNING:
		return "The run starts, but wastes GPU time or does not do "
		    "what the config says.";
	case SEV_INFO:
		return "Nothing to fix: this is what Axolotl does on its own, "
		    "listed so the config says what will run.";
	}
	return "";
}

void
ruledoc_why(char *buf, size_t cap, const struct rule_def *r)
{
	const struct ruledoc *d = ruledoc_find(r->id);
	const char *phase = d != NULL && d->phase != NULL ?
	    phase_words(d->phase) : NULL;

	if (cap == 0)
		return;
	if (phase == NULL)
		phase = severity_words(r->severity);
	/* A few words ("rejects.") add nothing to the phase's sentence. */
	if (d != NULL && d->axolotl != NULL && strlen(d->axolotl) >= 40)
		snprintf(buf, cap, "%s In Axolotl: %s", phase, d->axolotl);
	else
		snprintf(buf, cap, "%s", phase);
}
