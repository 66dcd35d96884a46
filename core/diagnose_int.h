/*
 * core/diagnose_int: declarations shared by the core/diagnose* files (not
 * for callers).
 */
#ifndef CORE_DIAGNOSE_INT_H
#define CORE_DIAGNOSE_INT_H

#include <stdbool.h>
#include <stddef.h>

#include "diagnose.h"

/* The training phases a CUDA OOM's traceback can show, in precedence
   order: a frame of an earlier phase wins over a later one. */
enum diag_phase {
	DIAG_PH_WEIGHTS = 0,
	DIAG_PH_OPTIMIZER,
	DIAG_PH_LOGITS,
	DIAG_PH_ACTIVATIONS,
	DIAG_PH_COUNT
};

#define DIAG_PHASE_PATTERNS 12	/* frame patterns per phase, at most */

/* A phase: its name and the frame text that shows it. */
struct diag_phase_def {
	const char *name;	/* "weights" */
	const char *frames[DIAG_PHASE_PATTERNS];	/* NULL-terminated */
};

/* The phases, indexed by enum diag_phase (core/diagnose_sig.c). */
extern const struct diag_phase_def diag_phases[DIAG_PH_COUNT];

/* Text on a line that shows the log is a Ray job's (DIAG_NEAR_RAY). */
extern const char *const diag_ray_markers[];

/* Text that makes a line read as an error line (quoted when nothing is
   known), NULL-terminated. */
extern const char *const diag_error_markers[];

/* A version line: what it names, the text before the version and the
   bytes that end it. */
struct diag_version_def {
	const char *name;	/* "nccl" */
	const char *phrase;	/* "NCCL version " */
	const char *stop;	/* " ,)" */
};

/* The version lines the report reads (diagnose_sig.c), NULL-terminated
   (name NULL). */
extern const struct diag_version_def diag_versions[];

/* The start of a Python traceback. */
extern const char diag_traceback_marker[];

/* A template placeholder every extractor may fill, for the table test:
   NULL-terminated. */
extern const char *const diag_var_names[];

/* ---- core/diagnose_text.c ---- */

struct arena;

/* s[0..len) made safe to quote: valid UTF-8, no control characters, no
   trailing blanks, cut to DIAG_QUOTE bytes; NULL when a is spent. */
const char *diag_quote(struct arena *a, const char *s, size_t len);

/* Read a CUDA OOM message's numbers in p[0..n) into o (fields o already
   has are kept: a message may go on over the next lines). */
void diag_parse_oom(struct diag_oom *o, const char *p, size_t n);

/* Fill o's derived numbers (other, needed) and drop what cannot be a
   measurement. */
void diag_oom_derive(struct diag_oom *o);

/* Does p[0..n) read as a Python exception line ("ValueError: ...")? */
bool diag_is_exception(const char *p, size_t n);

/* Read x's values out of the line p[0..n) into g; 0 or ERR_NOMEM. */
int diag_extract(struct diagnosis *g, enum diag_extract x, const char *p,
    size_t n, struct arena *a);

/* o's numbers as g's values ("12.34 GiB"); 0 or ERR_NOMEM. */
int diag_oom_vars(struct diagnosis *g, const struct diag_oom *o,
    struct arena *a);

/* The token after phrase in p[0..n) up to a byte of stop, into *v
   (arena); 0 (nothing found leaves *v NULL) or ERR_NOMEM. */
int diag_value_after(const char **v, const char *p, size_t n,
    const char *phrase, const char *stop, struct arena *a);

/* tpl with g's values filled in ([parts] with a missing value left out);
   NULL for a NULL tpl or when a is spent. */
char *diag_expand(const char *tpl, const struct diagnosis *g,
    struct arena *a);

#endif /* CORE_DIAGNOSE_INT_H */
