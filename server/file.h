/*
 * server/file: reading a whole file for the CLI and the daemon (configs,
 * policies, DeepSpeed and model configs, secrets, certificates, the
 * Hugging Face cache).  The one place server/ reads files from disk.
 */
#ifndef SERVER_FILE_H
#define SERVER_FILE_H

#include <stddef.h>

/*
 * Read all of path ("-": stdin) into a malloc'd buffer, NUL-terminated
 * after *len bytes (the text may hold NULs).  Reads at most max + 1 bytes,
 * so a caller sees that the input is too large (*len > max) without it
 * all being buffered.  0, or -1 with errno set.
 */
int file_read(char **out, size_t *len, const char *path, size_t max);

#endif /* SERVER_FILE_H */
