/*
 * tests/fuzz/fuzz_doc: libFuzzer target for the YAML document layer alone
 * (core/doc: libyaml events -> tree with marks, PyYAML scalar typing,
 * anchors, aliases, merge keys, duplicate keys, every limit), under the
 * CLI limits and under tight ones so the limit paths run too.  Any input
 * must give a tree or a clean error with a location, never a crash, a
 * leak or undefined behaviour.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "core/arena.h"
#include "core/doc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct limits lim;
	struct err e = { 0 };
	struct arena a;
	struct doc *d;
	unsigned pick = size > 0 ? data[0] : 0;

	limits_default(&lim);
	if (pick & 1) {		/* tight limits: depth, nodes, scalars */
		lim.max_depth = 1 + (pick >> 1 & 7);
		lim.max_nodes = 16u << (pick >> 4 & 7);
		lim.max_scalar = 64;
		lim.max_key = 16;
	}
	arena_init(&a, (size_t)64 << 20);
	if (doc_parse(&d, (const char *)data + (size > 0),
	    size > 0 ? size - 1 : 0, &lim, &a, &e) == 0) {
		if (d->root == NULL || d->root->kind != DOC_MAP)
			abort();
	} else if (e.code == ERR_OK) {
		abort();	/* a failure must say why */
	}
	arena_fini(&a);
	return 0;
}
