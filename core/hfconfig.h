/*
 * core/hfconfig: a Hugging Face config.json -> the architecture facts the
 * estimator reads (struct model_def), for a model the embedded catalog
 * does not have.  The parameter counts are estimator.md section 1's
 * formulas.  Pure: the caller reads the file (--model-config, the
 * daemon's --hf-cache) or sends it in the request (context.model).
 */
#ifndef CORE_HFCONFIG_H
#define CORE_HFCONFIG_H

#include <stdbool.h>
#include <stddef.h>

#include "err.h"

struct arena;
struct limits;
struct model_def;

/*
 * Parse the config.json text buf[0..len) into *out, allocated from a.  id
 * names the model in the report (the base_model, or the file; copied);
 * source is the report's estimate.model.source ("model_config",
 * "context", "hf_cache"; borrowed, must outlive a).  The result's
 * verification is "config", which is how the estimate tells it from a
 * catalog row.  Errors, with e->loc at the value:
 *   ERR_PARSE   not JSON (or YAML) text whose root is an object
 *   ERR_SCHEMA  a required field (hidden_size, num_hidden_layers,
 *               num_attention_heads, vocab_size) is missing or not a
 *               positive integer in range, or the architecture is a
 *               hybrid (Mamba / linear-attention) the formulas do not
 *               cover
 *   ERR_LIMIT   the text exceeds lim
 *   ERR_NOMEM   the arena budget is spent
 */
int hfconfig_parse(const struct model_def **out, const char *buf,
    size_t len, const char *id, const char *source,
    const struct limits *lim, struct arena *a, struct err *e);

/*
 * The same counts from facts already in a model_def (a catalog row whose
 * architecture columns are known but whose total is not): false when a
 * required fact is missing or the model_type is a hybrid.  No MLA or
 * interleaving details: the row does not carry them.
 */
bool hfconfig_count(const struct model_def *m, long long *total,
    long long *active);

#endif /* CORE_HFCONFIG_H */
