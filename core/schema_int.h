/*
 * core/schema_int.h: what core/schema_facts.c builds once per process and
 * core/schema_check.c reads for every config (the key index, each key's
 * parsed type and bounds, the linked pydantic models, the removed and
 * renamed keys).  Internal to those two files.
 */
#ifndef CORE_SCHEMA_INT_H
#define CORE_SCHEMA_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "keys.h"
#include "rules.h"
#include "types.h"

/*
 * Removed and renamed keys (rules.md section 5.22).  `truthy`: the rule
 * needs a truthy value, else any value but null (Axolotl's validators test
 * `is not None`); `unless`: not when that key is set (the new spelling
 * wins).
 */
struct removed {
	const char *key;
	const char *rule;
	bool truthy;
	const char *unless;
	const char *msg;	/* the message, naming the key */
	const char *hint;
};

/*
 * What schema_check asks of every key: its row (by name, else by alias)
 * and its parsed type; and schema_suggest its length and letters.
 * keys_table never changes: built once per process (arena_once).
 */
struct key_slot {
	const char *name;	/* a key, an alias or a removed key; NULL:
				   empty */
	const struct key_def *k;	/* its row (NULL: removed only) */
	const struct removed *rm;	/* removed or renamed, or NULL */
	uint64_t hash;		/* of name: most probes compare only this */
	bool exact;		/* name is k's key, not its alias */
};

struct key_facts {
	struct key_slot *slots;		/* open addressing, mask + 1 */
	size_t mask;
	const struct ty **types;	/* [k - keys_table]; NULL: unparsed */
	const struct ty_bounds **bounds;	/* [k - keys_table]: Field()
						   constraints, or NULL */
	bool *nested_only;		/* [k - keys_table]: a plugin key its
					   plugin's model does not have at the
					   top level (so it is dropped) */
	size_t *lens;			/* [k - keys_table]: strlen(key) */
	uint64_t *letters;		/* [k - keys_table]: letters(key) */
	signed char *plain;		/* [k - keys_table]: plain_kind() */
	const struct key_def *bf16, *ep;	/* two rows with exceptions */
	const struct key_def *datasets, *fsdp_config;	/* checked their way */
	struct ty_model *models;	/* [schema_models]: linked fields */
	const struct ty_model *sft, *dpo, *kto, *synthetic;	/* the dataset
					   models validate_config() builds */
	const struct key_def **required;	/* keys without a default */
	size_t nrequired;
	const struct ty_model **pmodels;	/* [schema_plugins]: a plugin's
					   model when it has required fields */
	struct plugin_class {
		const char *module;	/* key_def.plugin */
		size_t len;
		const char *cls;	/* its plugin class's own name */
	} *pclass;			/* one per module, as keys_table has it */
	size_t npclass;
	/* The rows of the rules reported here (rules_find once). */
	const struct rule_def *r_bnb, *r_datasets, *r_required, *r_loadable,
	    *r_unknown, *r_type, *r_plugin_key;
};

/* The facts, built on first use (core_init() builds them at start); NULL
   when there was no memory for them. */
const struct key_facts *schema_facts(void);

/* The facts' slot for a key (name, alias or removed), or NULL. */
const struct key_slot *schema_slot(const struct key_facts *f,
    const char *key);

#endif /* CORE_SCHEMA_INT_H */
