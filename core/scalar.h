/*
 * core/scalar: YAML 1.1 scalar typing, exactly as PyYAML's safe_load does it.
 *
 * Axolotl reads configs with yaml.safe_load, so `yes` is a boolean, `017`
 * is 15, `2e-5` is a string (a YAML 1.1 float needs a dot) and
 * `2001-12-14` is a date.  scalar_resolve() reproduces PyYAML's implicit
 * resolvers for plain scalars; scalar_construct() its constructors.
 */
#ifndef CORE_SCALAR_H
#define CORE_SCALAR_H

#include <stdbool.h>
#include <stddef.h>

struct arena;

enum scalar_type {
	SCALAR_STR = 0,		/* tag:yaml.org,2002:str */
	SCALAR_NULL,		/* ~, null, Null, NULL, empty */
	SCALAR_BOOL,		/* yes/no/on/off/true/false, 3 spellings */
	SCALAR_INT,		/* decimal, 0b, 0x, 0-octal, base 60, _ */
	SCALAR_FLOAT,		/* needs a dot, or .inf/.nan */
	SCALAR_TIMESTAMP,	/* 2001-12-14, 2001-12-14t21:59:43.10-05:00 */
	SCALAR_MERGE,		/* << (only meaningful as a mapping key) */
	SCALAR_VALUE		/* = (PyYAML has no constructor for it) */
};

struct scalar {
	enum scalar_type type;	/* what the scalar resolved to */
	bool b;			/* SCALAR_BOOL */
	long long i;		/* SCALAR_INT; saturated when big */
	bool big;		/* SCALAR_INT outside 64 bits */
	double f;		/* SCALAR_FLOAT */
};

/* The type PyYAML gives the plain scalar s[0..len). Never fails. */
enum scalar_type scalar_resolve(const char *s, size_t len);

/*
 * Fill out with the value of s[0..len) read as type t, the way PyYAML's
 * SafeConstructor does (also for an explicit tag such as !!int on a
 * quoted scalar).  Returns 0, ERR_PARSE when s is not a valid t (`!!int
 * abc`, `!!bool maybe`), or ERR_NOMEM when a (scratch space for underscore
 * removal) is exhausted.
 */
int scalar_construct(struct scalar *out, enum scalar_type t, const char *s,
    size_t len, struct arena *a);

/* "str", "null", "bool", "int", "float", "timestamp", "merge", "value". */
const char *scalar_type_name(enum scalar_type t);

#endif /* CORE_SCALAR_H */
