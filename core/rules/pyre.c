/*
 * core/rules/pyre: does Python's re.compile() accept a pattern?  The
 * syntax checks of CPython 3.11's sre_parse, without building anything:
 * escapes, character classes and their ranges, groups and extensions
 * ((?:, (?P<name>, (?P=name), (?#, lookarounds, (?(id), (?>, inline
 * flags), repeats ({m,n}, lazy and possessive) and group references.  Not
 * checked: look-behind width, \N{...} character names.  Used by
 * lora.target_modules_regex (AxolotlInputConfig's
 * check_lora_target_modules_regex compiles each entry).  Pure.
 */
#include "core/rules_int.h"

#include <stdio.h>

#define PYRE_MAX_DEPTH 100
#define PYRE_MAX_NAMES 64
#define PYRE_MAX_GROUPS 256
#define PYRE_MAXREPEAT 4294967295ULL

struct pyre {
	const char *s;		/* the pattern */
	size_t n;		/* its length */
	size_t i;		/* next byte */
	unsigned groups;	/* capturing groups opened so far */
	unsigned char open[PYRE_MAX_GROUPS];	/* 1 while group k is open */
	struct {
		size_t at, len;	/* a group name, in s */
		unsigned group;
	} names[PYRE_MAX_NAMES];
	unsigned nnames;
	unsigned long maxref;	/* highest group a (?(n) refers to */
	int depth;
	bool items;		/* anything at the top level yet */
	char *why;
	size_t cap;
	bool bad;
};

/* Item kinds, for what may be repeated. */
enum { IT_NONE, IT_AT, IT_ITEM, IT_REPEAT };

static bool
fail(struct pyre *p, const char *what)
{
	if (!p->bad)
		snprintf(p->why, p->cap, "%s at position %zu", what, p->i);
	p->bad = true;
	return false;
}

static bool
more(const struct pyre *p)
{
	return p->i < p->n;
}

static char
peek(const struct pyre *p)
{
	return p->i < p->n ? p->s[p->i] : '\0';
}

static bool
is_hex(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') ||
	    (c >= 'A' && c <= 'F');
}

static bool
is_alpha(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static bool
is_oct(char c)
{
	return c >= '0' && c <= '7';
}

/* One UTF-8 character at p->i as a code point (bad bytes as themselves). */
static unsigned long
next_char(struct pyre *p)
{
	unsigned char c = (unsigned char)p->s[p->i++];
	unsigned long cp;
	int extra, k;

	if (c < 0x80)
		return c;
	extra = c >= 0xf0 ? 3 : c >= 0xe0 ? 2 : c >= 0xc0 ? 1 : 0;
	cp = c & (0x3fu >> extra);
	for (k = 0; k < extra && p->i < p->n &&
	    ((unsigned char)p->s[p->i] & 0xc0) == 0x80; k++)
		cp = cp << 6 | ((unsigned char)p->s[p->i++] & 0x3f);
	return cp;
}

/* Exactly `count` hex digits; their value into *cp. */
static bool
hex_digits(struct pyre *p, int count, unsigned long *cp)
{
	int k;

	*cp = 0;
	for (k = 0; k < count; k++) {
		char c = peek(p);

		if (!is_hex(c))
			return fail(p, "incomplete escape");
		*cp = *cp * 16 + (unsigned long)(c <= '9' ? c - '0' :
		    (c | 0x20) - 'a' + 10);
		p->i++;
	}
	return true;
}

/* \x, \u, \U, \N and octal escapes shared by both contexts; *cp gets the
   character.  p->i is past the letter. */
static bool
code_escape(struct pyre *p, char c, unsigned long *cp)
{
	switch (c) {
	case 'x':
		return hex_digits(p, 2, cp);
	case 'u':
		return hex_digits(p, 4, cp);
	case 'U':
		if (!hex_digits(p, 8, cp))
			return false;
		if (*cp > 0x10ffff)
			return fail(p, "bad escape \\U");
		return true;
	case 'N':
		if (peek(p) != '{')
			return fail(p, "missing {");
		while (more(p) && peek(p) != '}')
			p->i++;
		if (!more(p))
			return fail(p, "missing }, unterminated name");
		p->i++;
		*cp = 0xfffd;
		return true;
	default:
		return fail(p, "bad escape");
	}
}

/*
 * An escape inside [...]; *cp gets the character, *cat is set for \d \D
 * \s \S \w \W.  p->i is at the backslash.
 */
static bool
class_escape(struct pyre *p, unsigned long *cp, bool *cat)
{
	char c;
	int k;

	*cat = false;
	p->i++;
	if (!more(p))
		return fail(p, "bad escape (end of pattern)");
	c = p->s[p->i];
	if (strchr("dDsSwW", c) != NULL) {
		p->i++;
		*cat = true;
		return true;
	}
	if (c == 'x' || c == 'u' || c == 'U' || c == 'N') {
		p->i++;
		return code_escape(p, c, cp);
	}
	if (is_oct(c)) {
		*cp = 0;
		for (k = 0; k < 3 && is_oct(peek(p)); k++)
			*cp = *cp * 8 + (unsigned long)(p->s[p->i++] - '0');
		if (*cp > 0377)
			return fail(p, "octal escape value outside of range "
			    "0-0o377");
		return true;
	}
	if (c == '8' || c == '9')
		return fail(p, "bad escape");
	if (is_alpha(c) && strchr("abfnrtv", c) == NULL)
		return fail(p, "bad escape");
	p->i++;
	switch (c) {
	case 'a': *cp = 7; break;
	case 'b': *cp = 8; break;
	case 'f': *cp = 12; break;
	case 'n': *cp = 10; break;
	case 'r': *cp = 13; break;
	case 't': *cp = 9; break;
	case 'v': *cp = 11; break;
	default:
		p->i--;
		*cp = next_char(p);
	}
	return true;
}

/* A character class; p->i is past the '['. */
static bool
char_class(struct pyre *p)
{
	bool first = true;

	if (peek(p) == '^')
		p->i++;
	for (;;) {
		unsigned long lo, hi;
		bool lo_cat = false, hi_cat = false;

		if (!more(p))
			return fail(p, "unterminated character set");
		if (peek(p) == ']' && !first) {
			p->i++;
			return true;
		}
		first = false;
		if (peek(p) == '\\') {
			if (!class_escape(p, &lo, &lo_cat))
				return false;
		} else {
			lo = next_char(p);
		}
		if (peek(p) != '-' || p->i + 1 >= p->n ||
		    p->s[p->i + 1] == ']')
			continue;
		p->i++;		/* the '-' of a range */
		if (peek(p) == '\\') {
			if (!class_escape(p, &hi, &hi_cat))
				return false;
		} else {
			hi = next_char(p);
		}
		if (lo_cat || hi_cat || hi < lo)
			return fail(p, "bad character range");
	}
}

/* An escape outside a class; *kind gets IT_AT for \A \b \B \Z. */
static bool
escape(struct pyre *p, int *kind)
{
	unsigned long cp;
	char c;

	*kind = IT_ITEM;
	p->i++;
	if (!more(p))
		return fail(p, "bad escape (end of pattern)");
	c = p->s[p->i];
	if (strchr("AbBZ", c) != NULL) {
		p->i++;
		*kind = IT_AT;
		return true;
	}
	if (strchr("dDsSwWafnrtv", c) != NULL) {
		p->i++;
		return true;
	}
	if (c == 'x' || c == 'u' || c == 'U' || c == 'N') {
		p->i++;
		return code_escape(p, c, &cp);
	}
	if (c == '0') {
		int k;

		p->i++;
		for (k = 0; k < 2 && is_oct(peek(p)); k++)
			p->i++;
		return true;
	}
	if (c >= '1' && c <= '9') {
		size_t start = p->i;
		unsigned long g = (unsigned long)(c - '0');

		p->i++;
		if (peek(p) >= '0' && peek(p) <= '9') {
			char d = p->s[p->i++];

			if (is_oct(c) && is_oct(d) && is_oct(peek(p))) {
				cp = (unsigned long)((c - '0') * 64 +
				    (d - '0') * 8 + (p->s[p->i++] - '0'));
				if (cp > 0377)
					return fail(p, "octal escape value "
					    "outside of range 0-0o377");
				return true;
			}
			g = g * 10 + (unsigned long)(d - '0');
		}
		if (g <= p->groups) {
			if (g < PYRE_MAX_GROUPS && p->open[g]) {
				p->i = start;
				return fail(p, "cannot refer to an open group");
			}
			return true;
		}
		p->i = start;
		return fail(p, "invalid group reference");
	}
	if (is_alpha(c))
		return fail(p, "bad escape");
	(void)next_char(p);
	return true;
}

/* A group name up to the terminator `end`; *at and *len get it. */
static bool
group_name(struct pyre *p, char end, size_t *at, size_t *len)
{
	size_t k;

	*at = p->i;
	while (more(p) && peek(p) != end)
		p->i++;
	if (!more(p))
		return fail(p, end == '>' ? "missing >, unterminated name" :
		    "missing ), unterminated name");
	*len = p->i - *at;
	if (*len == 0)
		return fail(p, "missing group name");
	for (k = 0; k < *len; k++) {
		unsigned char c = (unsigned char)p->s[*at + k];

		/* Non-ASCII letters are identifiers too; accept them. */
		if (!(c >= 0x80 || is_alpha((char)c) || c == '_' ||
		    (k > 0 && c >= '0' && c <= '9')))
			return fail(p, "bad character in group name");
	}
	p->i++;
	return true;
}

static int
find_name(const struct pyre *p, size_t at, size_t len)
{
	unsigned k;

	for (k = 0; k < p->nnames; k++)
		if (p->names[k].len == len &&
		    memcmp(p->s + p->names[k].at, p->s + at, len) == 0)
			return (int)k;
	return -1;
}

static bool alternation(struct pyre *p, bool nested);

/* The top-level branches of the group body at p->i (a scan; the body is
   checked by alternation()). */
static size_t
branches(const struct pyre *p)
{
	size_t i, n = 1;
	int depth = 0;

	for (i = p->i; i < p->n; i++) {
		char d = p->s[i];

		if (d == '\\') {
			i++;
		} else if (d == '[') {
			for (i++; i < p->n && p->s[i] != ']'; i++)
				if (p->s[i] == '\\')
					i++;
		} else if (d == '(') {
			depth++;
		} else if (d == ')') {
			if (depth-- == 0)
				break;
		} else if (d == '|' && depth == 0) {
			n++;
		}
	}
	return n;
}

/* A capturing group's body; p->i is past its opening. */
static bool
capture(struct pyre *p)
{
	unsigned g = ++p->groups;
	bool ok;

	if (g < PYRE_MAX_GROUPS)
		p->open[g] = 1;
	ok = alternation(p, true);
	if (g < PYRE_MAX_GROUPS)
		p->open[g] = 0;
	return ok;
}

/* Inline flags after "(?": global "(?i)" or scoped "(?i-s:...)". */
static bool
flags(struct pyre *p, int *kind)
{
	bool on = true, any = false;

	for (;;) {
		char c = peek(p);

		if (c != '\0' && strchr("aiLmsux", c) != NULL) {
			if (c == 'L')
				return fail(p, "bad inline flag: cannot use "
				    "'L' flag with a str pattern");
			if (!on && strchr("imsx", c) == NULL)
				return fail(p, "bad inline flag: cannot turn "
				    "off flags 'a', 'u' and 'L'");
			any = true;
			p->i++;
			continue;
		}
		if (c == '-' && on) {
			on = false;
			any = false;
			p->i++;
			continue;
		}
		if (c == ')' && on) {
			p->i++;
			if (p->depth > 1 || p->items)
				return fail(p, "global flags not at the start "
				    "of the expression");
			*kind = IT_NONE;
			return true;
		}
		if (c == ':') {
			if (!on && !any)
				return fail(p, "missing flag");
			p->i++;
			*kind = IT_ITEM;
			return alternation(p, true);
		}
		if (c == '\0')
			return fail(p, "missing -, : or )");
		return fail(p, "unknown flag");
	}
}

/* "(?..." extensions; p->i is past the '?'. */
static bool
extension(struct pyre *p, int *kind)
{
	size_t at, len;
	char c = peek(p);

	*kind = IT_ITEM;
	if (c == '\0')
		return fail(p, "unexpected end of pattern");
	if (c == ':' || c == '>' || c == '=' || c == '!') {
		p->i++;
		return alternation(p, true);
	}
	if (c == '<') {
		p->i++;
		if (peek(p) == '=' || peek(p) == '!') {
			p->i++;
			return alternation(p, true);
		}
		return fail(p, "unknown extension ?<");
	}
	if (c == '#') {
		while (more(p) && peek(p) != ')')
			p->i++;
		if (!more(p))
			return fail(p, "missing ), unterminated comment");
		p->i++;
		*kind = IT_NONE;
		return true;
	}
	if (c == 'P') {
		p->i++;
		if (peek(p) == '<') {
			p->i++;
			if (!group_name(p, '>', &at, &len))
				return false;
			if (find_name(p, at, len) >= 0)
				return fail(p, "redefinition of group name");
			if (p->nnames < PYRE_MAX_NAMES) {
				p->names[p->nnames].at = at;
				p->names[p->nnames].len = len;
				p->names[p->nnames++].group = p->groups + 1;
			}
			return capture(p);
		}
		if (peek(p) == '=') {
			int k;

			p->i++;
			if (!group_name(p, ')', &at, &len))
				return false;
			k = find_name(p, at, len);
			if (k < 0)
				return fail(p, "unknown group name");
			if (p->names[k].group < PYRE_MAX_GROUPS &&
			    p->open[p->names[k].group])
				return fail(p, "cannot refer to an open group");
			return true;
		}
		return fail(p, "unknown extension ?P");
	}
	if (c == '(') {
		/* (?(id/name)yes|no): an existing name, or a group number
		   above 0 (checked against the groups at the end). */
		size_t k;
		bool digits = true;

		p->i++;
		at = p->i;
		while (more(p) && peek(p) != ')')
			p->i++;
		if (!more(p))
			return fail(p, "missing ), unterminated name");
		len = p->i - at;
		for (k = 0; k < len; k++)
			if (!(p->s[at + k] >= '0' && p->s[at + k] <= '9'))
				digits = false;
		if (len == 0)
			return fail(p, "missing group name");
		if (digits) {
			unsigned long g = 0;

			for (k = 0; k < len && g < PYRE_MAXREPEAT; k++)
				g = g * 10 + (unsigned long)(p->s[at + k] - '0');
			if (g == 0)
				return fail(p, "bad group number");
			if (g > p->maxref)
				p->maxref = g;
		} else {
			p->i = at;
			if (!group_name(p, ')', &at, &len))
				return false;
			p->i--;
			if (find_name(p, at, len) < 0)
				return fail(p, "unknown group name");
		}
		p->i++;
		if (branches(p) > 2)
			return fail(p, "conditional backref with more than two "
			    "branches");
		return alternation(p, true);
	}
	if (c != '\0' && (strchr("aiLmsux", c) != NULL || c == '-'))
		return flags(p, kind);
	return fail(p, "unknown extension");
}

/*
 * A repeat after an item of `last` kind; p->i is at '*', '+', '?' or a
 * '{' that starts {m}, {m,}, {,n} or {m,n}.
 */
static bool
repeat(struct pyre *p, int *last)
{
	if (*last == IT_NONE || *last == IT_AT)
		return fail(p, "nothing to repeat");
	if (*last == IT_REPEAT)
		return fail(p, "multiple repeat");
	if (peek(p) == '{') {
		unsigned long long lo = 0, hi = 0;
		bool has_lo = false, has_hi = false, comma = false;

		p->i++;
		while (peek(p) >= '0' && peek(p) <= '9') {
			if (lo < PYRE_MAXREPEAT)
				lo = lo * 10 + (unsigned long long)(p->s[p->i] -
				    '0');
			has_lo = true;
			p->i++;
		}
		if (peek(p) == ',') {
			comma = true;
			p->i++;
			while (peek(p) >= '0' && peek(p) <= '9') {
				if (hi < PYRE_MAXREPEAT)
					hi = hi * 10 + (unsigned long long)
					    (p->s[p->i] - '0');
				has_hi = true;
				p->i++;
			}
		}
		p->i++;		/* the '}', checked by the caller */
		if ((has_lo && lo >= PYRE_MAXREPEAT) ||
		    (has_hi && hi >= PYRE_MAXREPEAT))
			return fail(p, "the repetition number is too large");
		if (has_lo && has_hi && hi < lo)
			return fail(p, "min repeat greater than max repeat");
		(void)comma;
	} else {
		p->i++;
	}
	if (peek(p) == '?' || peek(p) == '+')
		p->i++;		/* lazy, possessive */
	*last = IT_REPEAT;
	return true;
}

/* Does a '{' at p->i start a repeat ({m}, {m,}, {,n}, {m,n})? */
static bool
is_brace_repeat(const struct pyre *p)
{
	size_t i = p->i + 1;
	bool digits = false;

	while (i < p->n && p->s[i] >= '0' && p->s[i] <= '9') {
		i++;
		digits = true;
	}
	if (i < p->n && p->s[i] == ',') {
		i++;
		while (i < p->n && p->s[i] >= '0' && p->s[i] <= '9') {
			i++;
			digits = true;
		}
	}
	return digits && i < p->n && p->s[i] == '}';
}

/* Branches up to ')' (nested) or the end of the pattern. */
static bool
alternation(struct pyre *p, bool nested)
{
	int last = IT_NONE;

	if (++p->depth > PYRE_MAX_DEPTH)
		return fail(p, "too deeply nested");
	while (more(p)) {
		char c = peek(p);
		int kind;

		switch (c) {
		case '|':
			p->i++;
			last = IT_NONE;
			if (p->depth == 1)
				p->items = true;
			continue;
		case ')':
			if (!nested)
				return fail(p, "unbalanced parenthesis");
			p->i++;
			p->depth--;
			return true;
		case '*':
		case '+':
		case '?':
			if (!repeat(p, &last))
				return false;
			continue;
		case '{':
			if (is_brace_repeat(p)) {
				if (!repeat(p, &last))
					return false;
				continue;
			}
			p->i++;
			last = IT_ITEM;
			break;
		case '^':
		case '$':
			p->i++;
			last = IT_AT;
			break;
		case '[':
			p->i++;
			if (!char_class(p))
				return false;
			last = IT_ITEM;
			break;
		case '\\':
			if (!escape(p, &kind))
				return false;
			last = kind;
			break;
		case '(':
			p->i++;
			if (peek(p) == '?') {
				p->i++;
				if (!extension(p, &kind))
					return false;
				if (kind == IT_NONE)
					continue;	/* comment, flags */
				last = kind;
			} else {
				if (!capture(p))
					return false;
				last = IT_ITEM;
			}
			break;
		default:
			(void)next_char(p);
			last = IT_ITEM;
		}
		if (p->depth == 1)
			p->items = true;
	}
	if (nested)
		return fail(p, "missing ), unterminated subpattern");
	p->depth--;
	return true;
}

bool
pyre_valid(const char *s, size_t n, char *why, size_t cap)
{
	struct pyre p;

	memset(&p, 0, sizeof(p));
	p.s = s;
	p.n = n;
	p.why = why;
	p.cap = cap;
	if (cap > 0)
		why[0] = '\0';
	if (!alternation(&p, false) || p.bad)
		return false;
	if (p.maxref > p.groups) {
		snprintf(why, cap, "invalid group reference %lu", p.maxref);
		return false;
	}
	return true;
}
