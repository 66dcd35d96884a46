/*
 * server/log: one JSON object per line, on stderr or a file.  SIGHUP
 * reopens the file (log rotation).  Thread-safe.
 */
#ifndef SERVER_LOG_H
#define SERVER_LOG_H

#include <jansson.h>

/* Log to path (append), or stderr when path is NULL.  0 or -1. */
int log_open(const char *path);

/* Reopen the file given to log_open (no-op for stderr).  0 or -1. */
int log_reopen(void);

void log_close(void);

/* Write j as one line, adding "ts" and "level"; steals j. */
void log_json(const char *level, json_t *j);

/* A message line: {"level": level, "msg": ...}. */
void log_msg(const char *level, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif /* SERVER_LOG_H */
