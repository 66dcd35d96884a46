/*
 * core/keys: lookups in the generated key table.  Pure.
 */
#include "keys.h"

#include <string.h>

const struct key_def *
keys_find(const char *key)
{
	size_t lo = 0, hi = keys_table_len;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(key, keys_table[mid].key);

		if (c == 0)
			return &keys_table[mid];
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return NULL;
}
