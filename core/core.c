/*
 * core/core: see core.h.  No I/O.
 */
#include "core.h"

#include <string.h>

#include "arena.h"
#include "check.h"
#include "diagnose.h"
#include "err.h"
#include "models.h"
#include "plan.h"
#include "report.h"
#include "suggest.h"

int
core_init(struct err *e)
{
	/* A config that reaches schema_check and rules_run: their tables
	   (core/schema_facts.c, core/rules.c) are built by their first run. */
	static const char warm[] = "base_model: HuggingFaceTB/SmolLM2-135M\n"
	    "datasets:\n  - path: a/b\n    type: alpaca\n";
	struct context ctx;
	struct limits lim;
	struct report *r;
	struct arena a;
	int rv;

	rv = models_init(e);
	if (rv == 0)
		rv = plan_init(e);
	if (rv == 0)
		rv = suggest_init(e);
	if (rv == 0)
		rv = diagnose_init(e);
	if (rv != 0)
		return rv;
	context_default(&ctx);
	limits_default(&lim);
	arena_init(&a, (size_t)16 << 20);
	rv = check_run(&r, warm, strlen(warm), &ctx, &lim, &a, e);
	arena_fini(&a);
	return rv;
}
