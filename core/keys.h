/*
 * core/keys: every top-level key Axolotl's schema accepts
 * (core/data/axolotl-keys.tsv and axolotl-plugin-keys.tsv), generated
 * into build/gen/tables.c.  Sorted by key.
 */
#ifndef CORE_KEYS_H
#define CORE_KEYS_H

#include <stddef.h>

struct key_def {
	const char *key;	/* "sequence_len" */
	const char *type;	/* Python annotation as written */
	const char *def;	/* default as JSON text ("null", "false") */
	const char *alias;	/* accepted alias, or NULL */
	const char *plugin;	/* plugin module for plugin-only keys */
	const char *plugin_class;	/* value to list under plugins: */
};

extern const struct key_def keys_table[];
extern const size_t keys_table_len;

/* The row for key (exact), or NULL.  Borrowed. */
const struct key_def *keys_find(const char *key);

#endif /* CORE_KEYS_H */
