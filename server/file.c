/*
 * server/file: see file.h.
 */
#include "file.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int
file_read(char **out, size_t *len, const char *path, size_t max)
{
	FILE *f;
	char *buf = NULL;
	size_t n = 0, cap = 0;
	int saved;

	*out = NULL;
	f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
	if (f == NULL)
		return -1;
	for (;;) {
		size_t got;

		if (n == cap) {
			size_t ncap = cap == 0 ? 65536 : cap * 2;
			char *nb;

			if (ncap > max + 1)
				ncap = max + 1;
			if (ncap <= n)
				break;
			nb = realloc(buf, ncap + 1);	/* + the NUL */
			if (nb == NULL) {
				errno = ENOMEM;
				goto fail;
			}
			buf = nb;
			cap = ncap;
		}
		got = fread(buf + n, 1, cap - n, f);
		n += got;
		if (got == 0) {
			if (ferror(f))
				goto fail;
			break;
		}
	}
	if (f != stdin)
		fclose(f);
	*out = buf == NULL ? malloc(1) : buf;
	if (*out == NULL)
		return -1;
	(*out)[n] = '\0';
	*len = n;
	return 0;
fail:
	saved = errno;
	if (f != stdin)
		fclose(f);
	free(buf);
	errno = saved;
	return -1;
}
