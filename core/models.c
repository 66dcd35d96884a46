/*
 * core/models: lookups in the generated model table.  Pure.
 */
#include "models.h"

#include <ctype.h>
#include <strings.h>

const struct model_def *
models_find(const char *id)
{
	size_t i;

	for (i = 0; id != NULL && i < models_table_len; i++)
		if (tolower((unsigned char)models_table[i].hf_id[0]) ==
		    tolower((unsigned char)id[0]) &&
		    strcasecmp(models_table[i].hf_id, id) == 0)
			return &models_table[i];
	return NULL;
}
