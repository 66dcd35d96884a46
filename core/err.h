/*
 * core/err: one error record passed down every fallible call.
 *
 * A function that can fail returns 0 or a negative enum err_code and puts
 * the details in the struct err passed as its last argument.  The first
 * error wins: later err_set() calls keep it, so the message a caller sees is
 * the one recorded where the problem was found.  Nothing here allocates.
 */
#ifndef CORE_ERR_H
#define CORE_ERR_H

enum err_code {
	ERR_OK = 0,
	ERR_NOMEM = -1,		/* request arena or malloc exhausted */
	ERR_PARSE = -2,		/* input is not well-formed YAML or JSON */
	ERR_SCHEMA = -3,	/* well-formed, but wrong shape or type */
	ERR_NOTFOUND = -4,	/* no such stored object */
	ERR_STORE = -5,		/* SQLite failed; msg holds its text */
	ERR_INTERNAL = -6,	/* a bug; an invariant did not hold */
	ERR_LIMIT = -7,		/* input exceeds a configured limit */
	ERR_BUSY = -8,		/* a time budget was spent; retry later */
	ERR_TAKEN = -9		/* a unique key is stored already (a
				   request that lost an Idempotency-Key
				   race): not a failure of the store */
};

struct err_loc {
	unsigned line;		/* 1-based; 0 when there is no location */
	unsigned col;		/* 1-based, in characters */
	char path[128];		/* "fsdp_config.offload_params"; "" at root */
};

struct err {
	enum err_code code;	/* ERR_OK until the first err_set() */
	char msg[256];		/* lowercase, one line, no trailing period */
	struct err_loc loc;	/* where; line 0 when unknown */
};

/*
 * Record the first error and return its code.  e and loc may be NULL.
 * A second call on an e that already holds an error changes nothing and
 * returns the new code, so callers can write `return err_set(...)`.
 */
int err_set(struct err *e, enum err_code code, const struct err_loc *loc,
    const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/*
 * err_set() for a failure a stage learns of from a callee that returns
 * only a code (report_add() and the rules it runs): "request memory budget
 * spent while <what>" for ERR_NOMEM, "<name> error while <what>" for any
 * other code, where <what> is fmt formatted ("checking key 'fsdp'",
 * "running rule fsdp.version_values").  Returns code; the first error
 * wins as with err_set().
 */
int err_while(struct err *e, int code, const struct err_loc *loc,
    const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* A short constant name for code ("parse", "limit", ...). */
const char *err_code_name(enum err_code code);

#endif /* CORE_ERR_H */
