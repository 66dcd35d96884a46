/*
 * core/arena: the one allocator for request data.
 *
 * An arena hands out zeroed memory from blocks it mallocs on demand and
 * frees everything at once in arena_fini().  Its cap is the request's memory
 * budget: once the blocks would exceed it, arena_alloc() returns NULL and
 * the caller reports ERR_NOMEM.  Nothing allocated from an arena is ever
 * freed on its own.
 *
 * Built with -DARENA_DEBUG every allocation gets its own malloc (still
 * counted against the cap), so AddressSanitizer sees an overrun into the
 * next object, which a plain arena hides.  `make test` builds that way.
 */
#ifndef CORE_ARENA_H
#define CORE_ARENA_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct arena {
	char *beg;		/* next free byte in the current block */
	char *end;		/* one past the current block's last byte */
	void *blocks;		/* singly linked list of malloc'd blocks */
	size_t cap;		/* budget in bytes for all blocks together */
	size_t used;		/* bytes malloc'd so far, headers included */
	size_t next;		/* size of the next block to malloc */
};

/* Start an arena with a budget of cap bytes.  Allocates nothing yet. */
void arena_init(struct arena *a, size_t cap);

/* Free every block.  The arena may be arena_init()ed again after. */
void arena_fini(struct arena *a);

/* arena_alloc() when the current block cannot serve (and every call
   under ARENA_DEBUG). */
void *arena_alloc_slow(struct arena *a, size_t size, size_t align,
    size_t n);

#ifdef ARENA_DEBUG
#define ARENA_BUMP 0	/* every object its own malloc */
#else
#define ARENA_BUMP 1
#endif

/* arena_alloc() without the zeroing, for memory the caller writes in
   full before reading (the slow path zeroes anyway). */
static inline void *
arena_take(struct arena *a, size_t size, size_t align, size_t n)
{
	size_t bytes, pad, left;
	char *p;

	if (ARENA_BUMP && a->beg != NULL &&
	    !__builtin_mul_overflow(size, n, &bytes)) {
		left = (size_t)(a->end - a->beg);
		pad = (size_t)(-(uintptr_t)a->beg & (align - 1));
		if (pad <= left && bytes <= left - pad) {
			p = a->beg + pad;
			a->beg = p + bytes;
			return p;
		}
	}
	return arena_alloc_slow(a, size, align, n);
}

/*
 * n zeroed objects of size bytes aligned to align (a power of two), or
 * NULL when the budget is spent or size * n would overflow.  Inline: the
 * common case is a bump in the current block, and a constant size makes
 * the zeroing a few stores instead of a memset call.
 */
static inline void *
arena_alloc(struct arena *a, size_t size, size_t align, size_t n)
{
	size_t bytes;
	void *p;

	if (__builtin_mul_overflow(size, n, &bytes))
		return NULL;
	p = arena_take(a, size, align, n);
	return p != NULL ? memset(p, 0, bytes) : NULL;
}

/*
 * An object built once per process in an arena of its own and then shared,
 * read-only, by every caller: the first call runs build(a, arg) in a fresh
 * arena of budget cap and keeps its result in *slot (start it NULL); later
 * calls return it.  Safe from any thread: racing first calls each build,
 * one result is kept (a C11 compare-and-swap) and the others are freed.
 * NULL when build returns NULL or memory is short; nothing is kept then.
 */
const void *arena_once(const void *_Atomic *slot, size_t cap,
    const void *(*build)(struct arena *a, const void *arg), const void *arg);

/* A NUL-terminated copy of s[0..len) (s may hold NULs), or NULL. */
char *arena_strndup(struct arena *a, const char *s, size_t len);

/* printf into the arena; NULL when the budget is spent. */
char *arena_printf(struct arena *a, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Bytes of the budget not yet malloc'd. */
size_t arena_left(const struct arena *a);

#define ARENA_NEW(a, type, n) \
	((type *)arena_alloc((a), sizeof(type), _Alignof(type), (n)))

#endif /* CORE_ARENA_H */
