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

/*
 * What pydantic checks after the type: Field(ge=..., le=...), the
 * MinLen/MaxLen of an Annotated list, a StringConstraints pattern of the
 * form '^literal'.  A null value passes (the constraint is on the inner
 * type of an Optional).
 */
struct ty_bounds {
	bool has_ge, has_gt, has_le, has_lt;
	double ge, gt, le, lt;		/* numbers */
	long min_len;			/* items or characters; -1: none */
	long max_len;			/* -1: none */
	const char *prefix;		/* a string starts with it, or NULL */
};

struct ty_model;

struct ty {
	enum ty_kind kind;
	struct ty **args;	/* element/key/value/alternative types */
	size_t nargs;
	struct doc_node **lit;	/* TY_LITERAL: the allowed values */
	size_t nlit;
	const char *name;	/* TY_MODEL, TY_ENUM: the class, as written
				   (dotted, or short for "<enum 'X'>") */
	const struct ty_model *model;	/* TY_MODEL once linked: its fields;
					   NULL: any mapping */
	const char *members;	/* TY_ENUM once linked: its values,
				   tab-separated; NULL: any string or int */
	struct ty_bounds *bounds;	/* NULL: none */
};

/* A field of a pydantic model. */
struct ty_field {
	const char *field;		/* its name */
	const char *names;		/* the names it takes, comma-separated
					   (validation aliases) */
	struct ty *type;		/* NULL: not parsed, anything goes */
	const struct ty_bounds *bounds;	/* Field() constraints, or NULL */
	bool required;			/* no default */
};

/* One name a field takes, for a model's index. */
struct ty_name {
	const char *s;
	size_t len;
	size_t field;			/* its index in fields */
};

/* A pydantic model: the mapping its fields take. */
struct ty_model {
	const char *name;		/* dotted class name */
	bool forbid;			/* extra="forbid": unknown keys fail */
	struct ty_field *fields;
	size_t nfields;
	struct ty_name *index;		/* every name of every field, sorted
					   (ty_model_index); NULL: none yet */
	size_t nindex;
	size_t *required;		/* the required fields' indexes */
	size_t nrequired;
};

/*
 * Parse an annotation into the arena.  NULL when the text is not an
 * annotation this parser knows (the caller then checks nothing) or the
 * arena is spent.
 */
struct ty *ty_parse(const char *text, struct arena *a);

/* Parse "ge=1;le=256;min_length=1" into the arena; NULL when text is
   empty or the arena is spent. */
struct ty_bounds *ty_bounds_parse(const char *text, struct arena *a);

/* The model or enum values for a class name as written (not
   NUL-terminated: name[0..len)), or NULL when unknown. */
typedef const struct ty_model *ty_model_fn(const char *name, size_t len,
    const void *arg);
typedef const char *ty_enum_fn(const char *name, size_t len,
    const void *arg);

/* Point every model and enum node of t at what model()/en() answer. */
void ty_link(struct ty *t, ty_model_fn *model, ty_enum_fn *en,
    const void *arg);

/*
 * Build m's index of field names (and its required fields), so a mapping
 * is checked by its own keys instead of by every field; false without
 * memory (the model then works without it).
 */
bool ty_model_index(struct ty_model *m, struct arena *a);

/* Does pydantic (lax mode) accept node for t? */
bool ty_accepts(const struct ty *t, const struct doc_node *node);

/* Does node satisfy the bounds (NULL bounds, a null node: yes)? */
bool ty_within(const struct ty_bounds *b, const struct doc_node *node);

/*
 * Why t rejects node, named after path ("trl", "datasets[0]"): the
 * innermost place pydantic would name, into out, and *at gets the node
 * there (a node under node).  false when t accepts node.
 */
bool ty_explain(char *out, size_t cap, const struct ty *t,
    const struct doc_node *node, const char *path,
    const struct doc_node **at);

/* Would Python's float() take s[0..len)?  (pydantic's str -> float.) */
bool ty_python_float(const char *s, size_t len);

/*
 * Is s[0..len) an int to pydantic's str -> int (whitespace around, an
 * optional sign, digits with single underscores between them, a fraction
 * of zeros)?  With out, its value too (false when it has more than 18
 * digits).
 */
bool ty_python_int(const char *s, size_t len, long long *out);

/* What the bounds ask, to follow "must": "be >= 0 and <= 1", "have at
   least 1 item", "start with 'x'"; "" for none. */
void ty_describe_bounds(char *out, size_t cap, const struct ty_bounds *b);

/* How a value looks in a message: "the string 'x'", "a list", "null". */
void ty_show(char *out, size_t cap, const struct doc_node *v);

/* "int or null", "one of 'auto', true, false or null": into out. */
void ty_describe(char *out, size_t cap, const struct ty *t);

#endif /* CORE_TYPES_H */
