/*
 * core/schema: a config's keys and values as Axolotl's schema reads them.
 * Axolotl's config model has pydantic's default extra="ignore": a key it
 * does not know is dropped without a word, so a typo silently turns a
 * feature off.  Plugin keys exist only when their plugin is listed.  A
 * value of the wrong type is a validation error before anything runs.
 * (The typed view the rules read is core/rules/context.c's parsed view.)
 */
#ifndef CORE_SCHEMA_H
#define CORE_SCHEMA_H

struct arena;
struct doc;
struct err;
struct report;

/*
 * Add the schema findings of d to r: schema.unknown_key_dropped,
 * schema.plugin_key_without_plugin, schema.type, the removed and renamed
 * keys of rules.md section 5.22, optim.fsdp2_bnb_8bit, the datasets and
 * plugin checks.  Returns 0, or ERR_NOMEM (the request arena is spent)
 * with e set to the key being checked.
 */
int schema_check(struct report *r, const struct doc *d, struct arena *a,
    struct err *e);

/*
 * The known key nearest to key by edit distance (transpositions count
 * once), or NULL when none is close enough to be a likely typo (or the
 * per-process key table could not get memory).
 * Borrowed.
 */
const char *schema_suggest(const char *key);

#endif /* CORE_SCHEMA_H */
