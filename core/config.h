/*
 * core/config: the config as Axolotl's schema reads it (issue #3, first
 * layer).  Today: every top-level key is checked against the key table
 * (core/keys.h): unknown keys (with the nearest known one), plugin keys
 * without their plugin, and values pydantic would reject.
 */
#ifndef CORE_CONFIG_H
#define CORE_CONFIG_H

struct arena;
struct doc;
struct report;

/*
 * Add the schema findings of d to r: schema.unknown_key_dropped,
 * schema.plugin_key_without_plugin, schema.type, the removed and renamed
 * keys of rules.md section 5.22, optim.fsdp2_bnb_8bit.  Returns 0 or
 * ERR_NOMEM.
 */
int config_check(struct report *r, const struct doc *d, struct arena *a);

/*
 * The known key nearest to key by edit distance (transpositions count
 * once), or NULL when none is close enough to be a likely typo (or the
 * per-process key table could not get memory).
 * Borrowed.
 */
const char *config_suggest(const char *key);

#endif /* CORE_CONFIG_H */
