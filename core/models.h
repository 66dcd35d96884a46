/*
 * core/models: architecture facts per Hugging Face model id
 * (core/data/models.tsv), generated into build/gen/tables.c.  -1 marks a
 * fact the table does not have.  The estimator issue (#8) reads it.
 */
#ifndef CORE_MODELS_H
#define CORE_MODELS_H

#include <stddef.h>

struct err;

struct model_def {
	const char *hf_id;	/* "meta-llama/Llama-3.1-8B" */
	const char *model_type;	/* "llama" */
	long long hidden_size;
	long long num_hidden_layers;
	long long num_attention_heads;
	long long num_key_value_heads;
	long long head_dim;
	long long intermediate_size;
	long long vocab_size;
	long long max_position_embeddings;
	int tie_word_embeddings;	/* 1, 0, or -1 unknown */
	long long num_experts;
	long long num_experts_per_tok;
	long long moe_intermediate_size;
	long long shared_experts;
	long long first_k_dense;
	long long total_params;
	long long active_params;
	const char *verification;	/* "verified" | "partial" | "unverified" */
	const char *source;	/* where the facts come from */
};

extern const struct model_def models_table[];
extern const size_t models_table_len;

/* The row whose hf_id equals id ignoring case, or NULL.  Borrowed. */
const struct model_def *models_find(const char *id);

/* Build the per-process index models_find reads (core_init); 0 or
   ERR_NOMEM. */
int models_init(struct err *e);

#endif /* CORE_MODELS_H */
