/*
 * core/types: Axolotl's pydantic field annotations, as written in
 * core/data/axolotl-keys.tsv ("int | None", "Optional[Literal['a', 'b']]",
 * "Annotated[list[str], MinLen(min_length=1)] | None"), parsed into a small
 * type tree, and document values checked against it the way pydantic's
 * default (lax) mode does: the string "2e-5" is a float, 1 is a float,
 * "true" is a bool, 0.1 is not an int, a Literal matches exactly.
 */
#ifndef CORE_TYPES_H
#define CORE_TYPES_H

#include <stdbool.h>
#include <stddef.h>

struct arena;
struct doc_node;

enum ty_kind {
	TY_ANY = 0,		/* Any, or a class preflight cannot see */
	TY_NONE,
	TY_BOOL,
	TY_INT,
	TY_FLOAT,
	TY_STR,
	TY_LIST,		/* list[T] */
	TY_DICT,		/* dict[K, V] */
	TY_TUPLE,		/* tuple[A, B, ...] */
	TY_LITERAL,		/* Literal[v, ...]: values in lit */
	TY_MODEL,		/* a pydantic model: a mapping */
	TY_ENUM,		/* an enum class: a scalar */
	TY_UNION		/* any of args */
};

struct ty {
	enum ty_kind kind;
	struct ty **args;	/* element/key/value/alternative types */
	size_t nargs;
	struct doc_node **lit;	/* TY_LITERAL: the allowed values */
	size_t nlit;
};

/*
 * Parse an annotation into the arena.  NULL when the text is not an
 * annotation this parser knows (the caller then checks nothing) or the
 * arena is spent.
 */
struct ty *ty_parse(const char *text, struct arena *a);

/* Does pydantic (lax mode) accept node for t? */
bool ty_accepts(const struct ty *t, const struct doc_node *node);

/* "int or null", "one of 'auto', true, false or null": into out. */
void ty_describe(char *out, size_t cap, const struct ty *t);

#endif /* CORE_TYPES_H */
