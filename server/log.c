/*
 * server/log: JSON lines.  All logging of the process goes through here.
 */
#include "log.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static FILE *out;		/* NULL: stderr */
static char path_copy[1024];	/* "" when logging to stderr */

/* Open path for appending and make it the log; -1 if it cannot. */
static int
swap_to(const char *path)
{
	FILE *f = fopen(path, "a");

	if (f == NULL)
		return -1;
	pthread_mutex_lock(&mu);
	if (out != NULL)
		fclose(out);
	out = f;
	pthread_mutex_unlock(&mu);
	return 0;
}

int
log_open(const char *path)
{
	if (path == NULL) {
		path_copy[0] = '\0';
		return 0;
	}
	if (strlen(path) >= sizeof(path_copy) || swap_to(path) != 0)
		return -1;
	snprintf(path_copy, sizeof(path_copy), "%s", path);
	return 0;
}

int
log_reopen(void)
{
	return path_copy[0] == '\0' ? 0 : swap_to(path_copy);
}

void
log_close(void)
{
	pthread_mutex_lock(&mu);
	if (out != NULL)
		fclose(out);
	out = NULL;
	pthread_mutex_unlock(&mu);
}

void
log_json(const char *level, json_t *j)
{
	struct timespec ts;
	struct tm tm;
	char stamp[96];
	char *text;

	if (j == NULL)
		return;
	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	snprintf(stamp, sizeof(stamp), "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ",
	    tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
	    tm.tm_min, tm.tm_sec, ts.tv_nsec / 1000000);
	json_object_set_new(j, "ts", json_string(stamp));
	json_object_set_new(j, "level", json_string(level));
	text = json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(j);
	if (text == NULL)
		return;
	pthread_mutex_lock(&mu);
	fprintf(out != NULL ? out : stderr, "%s\n", text);
	fflush(out != NULL ? out : stderr);
	pthread_mutex_unlock(&mu);
	free(text);
}

void
log_msg(const char *level, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	log_json(level, json_pack("{s:s}", "msg", msg));
}
