/*
 * core/arena: bump allocation from capped, malloc'd blocks.
 *
 *   blocks -> [hdr|objects.....][hdr|objects.........] (each block twice
 *             the size of the one before, up to what the cap allows)
 *
 * Limits: the sum of all blocks never exceeds cap.  No I/O.
 */
#include "arena.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ARENA_FIRST_BLOCK ((size_t)64 * 1024)

struct block {
	struct block *next;	/* older block */
	max_align_t pad[];	/* objects follow, maximally aligned */
};

void
arena_init(struct arena *a, size_t cap)
{
	memset(a, 0, sizeof(*a));
	a->cap = cap;
	a->next = ARENA_FIRST_BLOCK;
}

void
arena_fini(struct arena *a)
{
	struct block *b, *next;

	for (b = a->blocks; b != NULL; b = next) {
		next = b->next;
		free(b);
	}
	a->blocks = NULL;
	a->beg = a->end = NULL;
	a->used = 0;
	a->next = ARENA_FIRST_BLOCK;
}

size_t
arena_left(const struct arena *a)
{
	return a->cap > a->used ? a->cap - a->used : 0;
}

#ifdef ARENA_DEBUG
/* One malloc per object, so ASan sees every overrun. */
void *
arena_alloc_slow(struct arena *a, size_t size, size_t align, size_t n)
{
	struct block *b;
	size_t bytes;

	(void)align;
	if (size > 0 && n > (SIZE_MAX - sizeof(*b)) / size)
		return NULL;
	bytes = size * n + sizeof(*b);
	if (bytes > arena_left(a))
		return NULL;
	b = malloc(bytes);
	if (b == NULL)
		return NULL;
	b->next = a->blocks;
	a->blocks = b;
	a->used += bytes;
	return memset(b->pad, 0, size * n);
}
#else
/* Malloc a new block of at least need usable bytes within the budget. */
static int
arena_grow(struct arena *a, size_t need)
{
	size_t left = arena_left(a);
	size_t size;
	struct block *b;

	if (need > SIZE_MAX - sizeof(*b) - _Alignof(max_align_t))
		return -1;
	need += sizeof(*b) + _Alignof(max_align_t);
	size = a->next > need ? a->next : need;
	if (size > left)
		size = left;
	if (size < need)
		return -1;
	b = malloc(size);
	if (b == NULL)
		return -1;
	b->next = a->blocks;
	a->blocks = b;
	a->used += size;
	a->beg = (char *)b->pad;
	a->end = (char *)b + size;
	if (a->next < SIZE_MAX / 2)
		a->next *= 2;
	return 0;
}

void *
arena_alloc_slow(struct arena *a, size_t size, size_t align, size_t n)
{
	size_t left = (size_t)(a->end - a->beg);
	/* align is a power of two: a mask, not a division. */
	size_t pad = (size_t)(-(uintptr_t)a->beg & (align - 1));
	size_t bytes;
	char *p;

	/* Checked multiplication: a huge n cannot wrap around. */
	if (__builtin_mul_overflow(size, n, &bytes) ||
	    bytes > SIZE_MAX - align)
		return NULL;
	if (a->beg == NULL || pad > left || bytes > left - pad) {
		if (arena_grow(a, bytes + align) != 0)
			return NULL;
		pad = (size_t)(-(uintptr_t)a->beg & (align - 1));
	}
	p = a->beg + pad;
	a->beg = p + bytes;
	return memset(p, 0, bytes);
}
#endif

const void *
arena_once(const void *_Atomic *slot, size_t cap,
    const void *(*build)(struct arena *a, const void *arg), const void *arg)
{
	const void *have = atomic_load_explicit(slot, memory_order_acquire);
	const void *made;
	struct arena a, *keep;

	if (have != NULL)
		return have;
	arena_init(&a, cap);
	keep = ARENA_NEW(&a, struct arena, 1);
	made = keep != NULL ? build(&a, arg) : NULL;
	if (made == NULL) {
		arena_fini(&a);
		return NULL;
	}
	*keep = a;	/* the arena lives in its own memory from here on */
	if (!atomic_compare_exchange_strong_explicit(slot, &have, made,
	    memory_order_acq_rel, memory_order_acquire)) {
		a = *keep;
		arena_fini(&a);
		return have;	/* another caller's, equal to ours */
	}
	return made;
}

char *
arena_strndup(struct arena *a, const char *s, size_t len)
{
	char *p;

	if (len == SIZE_MAX)
		return NULL;
	p = arena_take(a, 1, 1, len + 1);	/* every byte written below */
	if (p == NULL)
		return NULL;
	if (len > 0)
		memcpy(p, s, len);
	p[len] = '\0';
	return p;
}

char *
arena_printf(struct arena *a, const char *fmt, ...)
{
	va_list ap;
	char small[256];
	char *p;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(small, sizeof(small), fmt, ap);
	va_end(ap);
	if (n < 0)
		return NULL;
	p = arena_alloc(a, 1, 1, (size_t)n + 1);
	if (p == NULL)
		return NULL;
	if ((size_t)n < sizeof(small)) {
		memcpy(p, small, (size_t)n + 1);
		return p;
	}
	va_start(ap, fmt);
	vsnprintf(p, (size_t)n + 1, fmt, ap);
	va_end(ap);
	return p;
}
