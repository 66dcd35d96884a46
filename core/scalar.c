/*
 * core/scalar: PyYAML's YAML 1.1 implicit resolvers and constructors.
 *
 * The regular expressions below are PyYAML's (yaml/resolver.py), matched
 * by hand so the core needs no regex engine; each matcher quotes its
 * pattern.  PyYAML tries the resolvers registered for the first character
 * in the order bool, float, int, merge, null, timestamp, value; the
 * patterns are disjoint, so the order only documents intent.
 * Limits: linear in the scalar length, no allocation beyond one scratch
 * copy per number.  No I/O.
 */
#include "scalar.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "err.h"

/* The constructors' third answer, besides 0 and -1 (not valid). */
#define OUT_OF_MEMORY 1

struct cur {
	const char *p;		/* next character */
	const char *end;	/* one past the last */
};

static bool
at(const struct cur *c, char ch)
{
	return c->p < c->end && *c->p == ch;
}

static bool
eat(struct cur *c, char ch)
{
	if (!at(c, ch))
		return false;
	c->p++;
	return true;
}

/* Character classes for the resolvers' patterns: one table lookup per
   character instead of a walk along a set's letters. */
enum {
	C_DIGIT = 1 << 0,	/* 0-9 */
	C_DIGIT_ = 1 << 1,	/* 0-9 _ */
	C_SIGN = 1 << 2,	/* - + */
	C_EXP = 1 << 3,		/* e E */
	C_T = 1 << 4,		/* T t */
	C_WS = 1 << 5,		/* space tab */
	C_NZ = 1 << 6,		/* 1-9 */
	C_BIN = 1 << 7,		/* 0 1 _ */
	C_OCT = 1 << 8,		/* 0-7 _ */
	C_HEX = 1 << 9		/* 0-9 a-f A-F _ */
};

#define DIG_ (C_DIGIT | C_DIGIT_ | C_HEX)
static const unsigned short char_class[256] = {
	['0'] = DIG_ | C_BIN | C_OCT, ['1'] = DIG_ | C_NZ | C_BIN | C_OCT,
	['2'] = DIG_ | C_NZ | C_OCT, ['3'] = DIG_ | C_NZ | C_OCT,
	['4'] = DIG_ | C_NZ | C_OCT, ['5'] = DIG_ | C_NZ | C_OCT,
	['6'] = DIG_ | C_NZ | C_OCT, ['7'] = DIG_ | C_NZ | C_OCT,
	['8'] = DIG_ | C_NZ, ['9'] = DIG_ | C_NZ,
	['_'] = C_DIGIT_ | C_BIN | C_OCT | C_HEX,
	['-'] = C_SIGN, ['+'] = C_SIGN,
	['e'] = C_EXP | C_HEX, ['E'] = C_EXP | C_HEX,
	['a'] = C_HEX, ['b'] = C_HEX, ['c'] = C_HEX, ['d'] = C_HEX,
	['f'] = C_HEX, ['A'] = C_HEX, ['B'] = C_HEX, ['C'] = C_HEX,
	['D'] = C_HEX, ['F'] = C_HEX,
	['T'] = C_T, ['t'] = C_T, [' '] = C_WS, ['\t'] = C_WS,
};
#undef DIG_

static bool
eat_in(struct cur *c, unsigned cls)
{
	if (c->p >= c->end || (char_class[(unsigned char)*c->p] & cls) == 0)
		return false;
	c->p++;
	return true;
}

/* Zero or more characters of class cls. */
static void
eat_all(struct cur *c, unsigned cls)
{
	while (eat_in(c, cls))
		;
}

static bool
done(const struct cur *c)
{
	return c->p == c->end;
}


/* yes|Yes|YES|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|
   Off|OFF: one of six words, all lower, capitalized or all upper. */
static bool
is_bool(const char *s, size_t len)
{
	static const char *const words[6] = { "no", "on", "yes", "off",
	    "true", "false" };
	char low[5];
	size_t i, upper = 0;

	if (len < 2 || len > 5)
		return false;
	for (i = 0; i < len; i++) {
		char ch = s[i];

		if (ch >= 'A' && ch <= 'Z') {
			upper |= (size_t)1 << i;
			ch = (char)(ch - 'A' + 'a');
		}
		low[i] = ch;
	}
	/* Case: none, the first only, or all. */
	if (upper != 0 && upper != 1 && upper != ((size_t)1 << len) - 1)
		return false;
	switch (len) {
	case 2:
		return memcmp(low, words[0], 2) == 0 ||
		    memcmp(low, words[1], 2) == 0;
	case 3:
		return memcmp(low, words[2], 3) == 0 ||
		    memcmp(low, words[3], 3) == 0;
	case 4:
		return memcmp(low, words[4], 4) == 0;
	default:
		return memcmp(low, words[5], 5) == 0;
	}
}

/* (?:[eE][-+][0-9]+)? */
static void
opt_exponent(struct cur *c)
{
	struct cur save = *c;

	if (eat_in(c, C_EXP) && eat_in(c, C_SIGN) && eat_in(c, C_DIGIT)) {
		eat_all(c, C_DIGIT);
		return;
	}
	*c = save;
}

/* (?::[0-5]?[0-9])+ */
static bool
sexagesimal_tail(struct cur *c)
{
	int groups = 0;

	for (;;) {
		struct cur save = *c;

		if (!eat(c, ':'))
			break;
		/* [0-5]?[0-9]: try two digits first, then one. */
		if (c->p + 1 < c->end && c->p[0] >= '0' && c->p[0] <= '5' &&
		    c->p[1] >= '0' && c->p[1] <= '9')
			c->p += 2;
		else if (!eat_in(c, C_DIGIT)) {
			*c = save;
			break;
		}
		groups++;
	}
	return groups > 0;
}

/*
 *   [-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?
 *  |\.[0-9][0-9_]*(?:[eE][-+][0-9]+)?
 *  |[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*
 *  |[-+]?\.(?:inf|Inf|INF)
 *  |\.(?:nan|NaN|NAN)
 */
static bool
is_float(const char *s, size_t len)
{
	struct cur c0 = { s, s + len }, c;
	const char *rest;
	size_t n;

	/* Alternative 2 and 5: no sign. */
	c = c0;
	if (eat(&c, '.')) {
		if (eat_in(&c, C_DIGIT)) {
			eat_all(&c, C_DIGIT_);
			opt_exponent(&c);
			if (done(&c))
				return true;
		}
		n = (size_t)(c0.end - c0.p);
		if (n == 4 && (memcmp(s, ".nan", 4) == 0 ||
		    memcmp(s, ".NaN", 4) == 0 || memcmp(s, ".NAN", 4) == 0))
			return true;
	}
	c = c0;
	eat_in(&c, C_SIGN);
	rest = c.p;
	n = (size_t)(c.end - rest);
	/* Alternative 4. */
	if (n == 4 && (memcmp(rest, ".inf", 4) == 0 ||
	    memcmp(rest, ".Inf", 4) == 0 || memcmp(rest, ".INF", 4) == 0))
		return true;
	if (!eat_in(&c, C_DIGIT))
		return false;
	eat_all(&c, C_DIGIT_);
	/* Alternative 3 (base 60) or 1. */
	(void)sexagesimal_tail(&c);
	if (!eat(&c, '.'))
		return false;
	eat_all(&c, C_DIGIT_);
	if (done(&c))
		return true;
	/* Only alternative 1 allows an exponent, and only without ':'. */
	if (memchr(rest, ':', (size_t)(c.p - rest)) != NULL)
		return false;
	opt_exponent(&c);
	return done(&c);
}

/*
 *   [-+]?0b[0-1_]+
 *  |[-+]?0[0-7_]+
 *  |[-+]?(?:0|[1-9][0-9_]*)
 *  |[-+]?0x[0-9a-fA-F_]+
 *  |[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+
 */
static bool
is_int(const char *s, size_t len)
{
	struct cur c = { s, s + len };

	eat_in(&c, C_SIGN);
	if (eat(&c, '0')) {
		if (done(&c))
			return true;
		if (eat(&c, 'b')) {
			if (!eat_in(&c, C_BIN))
				return false;
			eat_all(&c, C_BIN);
			return done(&c);
		}
		if (eat(&c, 'x')) {
			if (!eat_in(&c, C_HEX))
				return false;
			eat_all(&c, C_HEX);
			return done(&c);
		}
		if (!eat_in(&c, C_OCT))
			return false;
		eat_all(&c, C_OCT);
		return done(&c);
	}
	if (!eat_in(&c, C_NZ))
		return false;
	eat_all(&c, C_DIGIT_);
	if (done(&c))
		return true;
	return sexagesimal_tail(&c) && done(&c);
}

static bool
is_null(const char *s, size_t len)
{
	return len == 0 || (len == 1 && s[0] == '~') ||
	    (len == 4 && (memcmp(s, "null", 4) == 0 ||
	    memcmp(s, "Null", 4) == 0 || memcmp(s, "NULL", 4) == 0));
}

/* n digits exactly (min == max) or min..max digits. */
static bool
digits(struct cur *c, int min, int max)
{
	int k;

	for (k = 0; k < max && c->p < c->end && *c->p >= '0' &&
	    *c->p <= '9'; k++)
		c->p++;
	return k >= min;
}

/*
 *   [0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]
 *  |[0-9][0-9][0-9][0-9]-[0-9][0-9]?-[0-9][0-9]?
 *   (?:[Tt]|[ \t]+)[0-9][0-9]?:[0-9][0-9]:[0-9][0-9](?:\.[0-9]*)?
 *   (?:[ \t]*(?:Z|[-+][0-9][0-9]?(?::[0-9][0-9])?))?
 */
static bool
is_timestamp(const char *s, size_t len)
{
	struct cur c = { s, s + len }, save;

	if (len == 10) {
		c.end = s + 10;
		if (digits(&c, 4, 4) && eat(&c, '-') && digits(&c, 2, 2) &&
		    eat(&c, '-') && digits(&c, 2, 2) && done(&c))
			return true;
		c.p = s;
	}
	if (!(digits(&c, 4, 4) && eat(&c, '-') && digits(&c, 1, 2) &&
	    eat(&c, '-') && digits(&c, 1, 2)))
		return false;
	if (!eat_in(&c, C_T)) {
		if (!eat_in(&c, C_WS))
			return false;
		eat_all(&c, C_WS);
	}
	if (!(digits(&c, 1, 2) && eat(&c, ':') && digits(&c, 2, 2) &&
	    eat(&c, ':') && digits(&c, 2, 2)))
		return false;
	if (eat(&c, '.'))
		eat_all(&c, C_DIGIT);
	if (done(&c))
		return true;
	eat_all(&c, C_WS);
	if (eat(&c, 'Z'))
		return done(&c);
	if (!eat_in(&c, C_SIGN) || !digits(&c, 1, 2))
		return false;
	save = c;
	if (!(eat(&c, ':') && digits(&c, 2, 2)))
		c = save;
	return done(&c);
}

/* The first characters PyYAML registers a resolver for (a table: this
   runs for every key and value). */
static const bool first_char[256] = {
	['y'] = true, ['Y'] = true, ['n'] = true, ['N'] = true,
	['t'] = true, ['T'] = true, ['f'] = true, ['F'] = true,
	['o'] = true, ['O'] = true, ['-'] = true, ['+'] = true,
	['0'] = true, ['1'] = true, ['2'] = true, ['3'] = true,
	['4'] = true, ['5'] = true, ['6'] = true, ['7'] = true,
	['8'] = true, ['9'] = true, ['.'] = true, ['<'] = true,
	['~'] = true, ['='] = true,
};

enum scalar_type
scalar_resolve(const char *s, size_t len)
{
	if (len == 0)
		return SCALAR_NULL;
	/*
	 * PyYAML only tries the resolvers registered for the first
	 * character; most config values (names, paths) match none.
	 */
	if (!first_char[(unsigned char)s[0]])
		return SCALAR_STR;
	if (is_bool(s, len))
		return SCALAR_BOOL;
	if (is_float(s, len))
		return SCALAR_FLOAT;
	if (is_int(s, len))
		return SCALAR_INT;
	if (len == 2 && s[0] == '<' && s[1] == '<')
		return SCALAR_MERGE;
	if (is_null(s, len))
		return SCALAR_NULL;
	if (is_timestamp(s, len))
		return SCALAR_TIMESTAMP;
	if (len == 1 && s[0] == '=')
		return SCALAR_VALUE;
	return SCALAR_STR;
}

/*
 * s without '_', lowercased when lower; NULL when the arena is spent.
 * PyYAML's constructors start with value.replace('_', '').
 */
static char *
munge(const char *s, size_t len, bool lower, size_t *n_out,
    struct arena *a)
{
	char *buf = arena_alloc(a, 1, 1, len + 1);
	size_t i, n = 0;

	if (buf == NULL)
		return NULL;
	for (i = 0; i < len; i++) {
		char ch = s[i];

		if (ch == '_')
			continue;
		if (lower && ch >= 'A' && ch <= 'Z')
			ch = (char)(ch - 'A' + 'a');
		buf[n++] = ch;
	}
	buf[n] = '\0';
	*n_out = n;
	return buf;
}

/* digits of p[0..n) in base, saturating; -1 if a digit is invalid. */
static int
parse_base(unsigned long long *out, bool *big, const char *p, size_t n,
    unsigned base)
{
	unsigned long long v = 0;
	size_t i;

	if (n == 0)
		return -1;
	for (i = 0; i < n; i++) {
		unsigned d;
		char ch = p[i];

		if (ch >= '0' && ch <= '9')
			d = (unsigned)(ch - '0');
		else if (ch >= 'a' && ch <= 'f')
			d = (unsigned)(ch - 'a' + 10);
		else if (ch >= 'A' && ch <= 'F')
			d = (unsigned)(ch - 'A' + 10);
		else
			return -1;
		if (d >= base)
			return -1;
		if (v > (ULLONG_MAX - d) / base) {
			*big = true;
			v = ULLONG_MAX;
		} else if (!*big) {
			v = v * base + d;
		}
	}
	*out = v;
	return 0;
}

/* PyYAML construct_yaml_int. */
static int
construct_int(struct scalar *out, const char *s, size_t len,
    struct arena *a)
{
	unsigned long long v = 0;
	bool neg = false, big = false;
	size_t n;
	char *p = munge(s, len, false, &n, a);
	int rv;

	if (p == NULL)
		return OUT_OF_MEMORY;
	if (n == 0)
		return -1;
	if (p[0] == '-')
		neg = true;
	if (p[0] == '-' || p[0] == '+') {
		p++;
		n--;
	}
	if (n == 1 && p[0] == '0')
		rv = 0;
	else if (n >= 2 && p[0] == '0' && p[1] == 'b')
		rv = parse_base(&v, &big, p + 2, n - 2, 2);
	else if (n >= 2 && p[0] == '0' && p[1] == 'x')
		rv = parse_base(&v, &big, p + 2, n - 2, 16);
	else if (n >= 1 && p[0] == '0')
		rv = parse_base(&v, &big, p, n, 8);
	else if (memchr(p, ':', n) != NULL) {
		/* Base 60: 1:30 is 90. */
		size_t i = 0;

		rv = 0;
		while (rv == 0 && i <= n) {
			size_t j = i;
			unsigned long long part = 0;

			while (j < n && p[j] != ':')
				j++;
			rv = parse_base(&part, &big, p + i, j - i, 10);
			if (rv == 0 && !big) {
				if (v > (ULLONG_MAX - part) / 60)
					big = true;
				else
					v = v * 60 + part;
			}
			i = j + 1;
		}
	} else
		rv = parse_base(&v, &big, p, n, 10);
	if (rv != 0)
		return -1;
	out->type = SCALAR_INT;
	if (!neg && v > (unsigned long long)LLONG_MAX)
		big = true;
	if (neg && v > (unsigned long long)LLONG_MAX + 1)
		big = true;
	out->big = big;
	if (big)
		out->i = neg ? LLONG_MIN : LLONG_MAX;
	else if (neg)
		out->i = v == (unsigned long long)LLONG_MAX + 1 ? LLONG_MIN :
		    -(long long)v;
	else
		out->i = (long long)v;
	return 0;
}

/*
 * Python's float(): an optional sign, digits with at most one dot and an
 * optional exponent, or inf/infinity/nan.  Stricter than strtod, which
 * also takes hex floats.
 */
static int
python_float(double *out, const char *p, size_t n)
{
	struct cur c = { p, p + n };
	bool any = false;
	char *end;

	if (n == 0)
		return -1;
	eat_in(&c, C_SIGN);
	if ((size_t)(c.end - c.p) == 3 && (memcmp(c.p, "inf", 3) == 0 ||
	    memcmp(c.p, "nan", 3) == 0))
		goto convert;
	if ((size_t)(c.end - c.p) == 8 && memcmp(c.p, "infinity", 8) == 0)
		goto convert;
	while (eat_in(&c, C_DIGIT))
		any = true;
	if (eat(&c, '.'))
		while (eat_in(&c, C_DIGIT))
			any = true;
	if (!any)
		return -1;
	if (eat_in(&c, C_EXP)) {
		eat_in(&c, C_SIGN);
		if (!eat_in(&c, C_DIGIT))
			return -1;
		eat_all(&c, C_DIGIT);
	}
	if (!done(&c))
		return -1;
convert:
	errno = 0;
	*out = strtod(p, &end);
	/* Overflow gives +-inf as in Python's float('1e999'). */
	return end == p + n ? 0 : -1;
}

/* PyYAML construct_yaml_float. */
static int
construct_float(struct scalar *out, const char *s, size_t len,
    struct arena *a)
{
	double sign = 1.0, v = 0.0;
	size_t n;
	char *p = munge(s, len, true, &n, a);

	if (p == NULL)
		return OUT_OF_MEMORY;
	if (n == 0)
		return -1;
	if (p[0] == '-')
		sign = -1.0;
	if (p[0] == '-' || p[0] == '+') {
		p++;
		n--;
	}
	if (n == 4 && memcmp(p, ".inf", 4) == 0)
		v = sign * INFINITY;
	else if (n == 4 && memcmp(p, ".nan", 4) == 0)
		v = NAN;
	else if (memchr(p, ':', n) != NULL) {
		double base = 1.0, part;
		size_t j = n, i;

		/* Parts from the right: 1:30.5 is 30.5 + 1 * 60. */
		for (;;) {
			i = j;
			while (i > 0 && p[i - 1] != ':')
				i--;
			if (python_float(&part, p + i, j - i) != 0)
				return -1;
			v += part * base;
			base *= 60.0;
			if (i == 0)
				break;
			j = i - 1;
		}
		v *= sign;
	} else {
		if (python_float(&v, p, n) != 0)
			return -1;
		v *= sign;
	}
	out->type = SCALAR_FLOAT;
	out->f = v;
	return 0;
}

int
scalar_construct(struct scalar *out, enum scalar_type t, const char *s,
    size_t len, struct arena *a)
{
	static const char *const yes[] = { "yes", "true", "on" };
	static const char *const no[] = { "no", "false", "off" };
	char low[8];
	size_t i;
	int rv = -1;

	memset(out, 0, sizeof(*out));
	out->type = t;
	switch (t) {
	case SCALAR_STR:
	case SCALAR_NULL:
	case SCALAR_TIMESTAMP:
	case SCALAR_MERGE:
	case SCALAR_VALUE:
		return 0;
	case SCALAR_BOOL:
		/* bool_values[value.lower()] */
		if (len >= sizeof(low))
			return ERR_PARSE;
		for (i = 0; i < len; i++)
			low[i] = (char)(s[i] >= 'A' && s[i] <= 'Z' ?
			    s[i] - 'A' + 'a' : s[i]);
		low[len] = '\0';
		for (i = 0; i < 3; i++) {
			if (strcmp(low, yes[i]) == 0) {
				out->b = true;
				return 0;
			}
			if (strcmp(low, no[i]) == 0) {
				out->b = false;
				return 0;
			}
		}
		return ERR_PARSE;
	case SCALAR_INT:
		rv = construct_int(out, s, len, a);
		break;
	case SCALAR_FLOAT:
		rv = construct_float(out, s, len, a);
		break;
	}
	return rv == 0 ? 0 : rv == OUT_OF_MEMORY ? ERR_NOMEM : ERR_PARSE;
}

const char *
scalar_type_name(enum scalar_type t)
{
	switch (t) {
	case SCALAR_STR:
		return "str";
	case SCALAR_NULL:
		return "null";
	case SCALAR_BOOL:
		return "bool";
	case SCALAR_INT:
		return "int";
	case SCALAR_FLOAT:
		return "float";
	case SCALAR_TIMESTAMP:
		return "timestamp";
	case SCALAR_MERGE:
		return "merge";
	case SCALAR_VALUE:
		return "value";
	}
	return "?";
}
