/*
 * core/estimate_unfrozen: the trainable parameters Axolotl's
 * unfrozen_parameters leaves in a full fine-tune (estimate_int.h).
 */
#include "estimate_int.h"

#include <stdio.h>
#include <string.h>

#include "doc.h"

/* ---- unfrozen_parameters (estimator.md 2.3) ---------------------------- */

/*
 * Axolotl's unfrozen_parameters are Python regexes over parameter names,
 * matched with re.match after every '.' not followed by '+' is made a
 * literal dot, an optional "[start:end]" range cut off (axolotl:
 * src/axolotl/utils/freeze.py, LayerNamePattern).  This is the subset
 * those patterns use: literals, \. \d \w \s and other escapes, [...]
 * classes (ranges, ^), the any character of ".+", the quantifiers * + ?
 * on one atom, ( | ) groups with an optional ?, ^ and $.  Matching is
 * backtracking with a step budget; a pattern outside the subset or over
 * the budget counts as matching everything (every parameter trainable:
 * the larger estimate).
 */
#define RE_MAX_LEN	256
#define RE_BUDGET	500000		/* steps for all of one config's
					   patterns and names */

struct re_cont {
	const char *re, *end;
	const struct re_cont *next;
};

struct re_state {
	long steps;
	bool bad;	/* outside the subset or over budget */
};

/* Length of the atom at re (< end), or 0 when malformed. */
static size_t
re_atom_len(const char *re, const char *end)
{
	const char *q;
	int depth;

	if (*re == '\\')
		return re + 1 < end ? 2 : 0;
	if (*re == '[') {
		for (q = re + 1; q < end && *q != ']'; q++)
			if (*q == '\\')
				q++;
		return q < end ? (size_t)(q - re + 1) : 0;
	}
	if (*re == '(') {
		for (q = re, depth = 0; q < end; q++) {
			if (*q == '\\') {
				q++;
				continue;
			}
			depth += *q == '(' ? 1 : *q == ')' ? -1 : 0;
			if (depth == 0)
				return (size_t)(q - re + 1);
		}
		return 0;
	}
	return 1;
}

static bool
re_class_escape(char e, char c)
{
	switch (e) {
	case 'd':
		return c >= '0' && c <= '9';
	case 'w':
		return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
		    (c >= 'A' && c <= 'Z') || c == '_';
	case 's':
		return c == ' ' || c == '\t' || c == '\n';
	default:
		return c == e;
	}
}

/* Does the one-character atom re[0..len) take c? */
static bool
re_atom_takes(const char *re, size_t len, char c)
{
	const char *q = re + 1, *end = re + len - 1;
	bool neg, hit = false;

	if (c == '\0')
		return false;
	if (*re == '.')
		return true;
	if (*re == '\\')
		return re_class_escape(re[1], c);
	if (*re != '[')
		return *re == c;
	neg = *q == '^';
	if (neg)
		q++;
	for (; q < end; q++) {
		if (*q == '\\' && q + 1 < end) {
			hit |= re_class_escape(q[1], c);
			q++;
		} else if (q + 2 < end && q[1] == '-') {
			hit |= c >= q[0] && c <= q[2];
			q += 2;
		} else
			hit |= *q == c;
	}
	return hit != neg;
}

static bool
re_match(struct re_state *st, const char *re, const char *end, const char *s,
    const struct re_cont *k)
{
	const char *next;
	size_t alen;
	char q;

	if (++st->steps > RE_BUDGET) {
		st->bad = true;
		return false;
	}
	if (re == end)
		return k == NULL ? true : re_match(st, k->re, k->end, s,
		    k->next);
	if (*re == '$' && re + 1 == end)
		return *s == '\0' && (k == NULL || re_match(st, k->re, k->end,
		    s, k->next));
	alen = re_atom_len(re, end);
	if (alen == 0 || *re == ')' || *re == '|' || *re == '*' ||
	    *re == '+' || *re == '?' || *re == '$' || *re == '^') {
		st->bad = true;
		return false;
	}
	next = re + alen;
	q = next < end && (*next == '*' || *next == '+' || *next == '?') ?
	    *next++ : 0;
	if (*re == '(') {
		const char *a = re + 1, *b, *close = re + alen - 1;
		struct re_cont c = { next, end, k };
		int depth = 0;

		if (q == '*' || q == '+') {
			st->bad = true;
			return false;
		}
		for (b = a; b <= close; b++) {
			if (b < close && *b == '\\') {
				b++;
				continue;
			}
			if (b < close && (*b == '(' || *b == ')')) {
				depth += *b == '(' ? 1 : -1;
				continue;
			}
			if (b == close || (*b == '|' && depth == 0)) {
				if (re_match(st, a, b, s, &c))
					return true;
				a = b + 1;
			}
		}
		return q == '?' && re_match(st, next, end, s, k);
	}
	if (q == 0)
		return re_atom_takes(re, alen, *s) &&
		    re_match(st, next, end, s + 1, k);
	if (q == '?')
		return (re_atom_takes(re, alen, *s) &&
		    re_match(st, next, end, s + 1, k)) ||
		    re_match(st, next, end, s, k);
	{
		size_t n = 0, i;

		while (re_atom_takes(re, alen, s[n]))
			n++;
		for (i = n + 1; i-- > (q == '+' ? 1u : 0u);)
			if (re_match(st, next, end, s + i, k))
				return true;
		return false;
	}
}

/*
 * One unfrozen_parameters pattern as Axolotl matches it, converted once
 * per count (not per parameter name): every '.' not followed by '+' a
 * literal dot, a trailing "[start:end]" range cut off (the parameter is
 * still trainable), a leading '^' dropped (re.match is anchored anyway).
 */
struct re_pat {
	char re[2 * RE_MAX_LEN + 2];
	const char *start, *end;
};

/* Convert pat into *out; -1 when it is longer than the subset takes. */
static int
re_pat_make(struct re_pat *out, const char *pat)
{
	size_t n = strlen(pat), i, w = 0;

	if (n > RE_MAX_LEN)
		return -1;
	if (n > 2 && pat[n - 1] == ']') {
		const char *lb = strrchr(pat, '[');

		if (lb != NULL && lb > pat && strspn(lb + 1, "0123456789:") ==
		    (size_t)(pat + n - 1 - (lb + 1)))
			n = (size_t)(lb - pat);
	}
	for (i = 0; i < n; i++) {
		if (pat[i] == '\\' && i + 1 < n) {
			out->re[w++] = pat[i++];
			out->re[w++] = pat[i];
		} else if (pat[i] == '.' && !(i + 1 < n && pat[i + 1] == '+')) {
			out->re[w++] = '\\';
			out->re[w++] = '.';
		} else
			out->re[w++] = pat[i];
	}
	out->re[w] = '\0';
	out->start = out->re[0] == '^' ? out->re + 1 : out->re;
	out->end = out->re + w;
	return 0;
}

/* Parameter names a decoder layer's attention and MLP carry in the
   checkpoint layouts Axolotl examples train (Llama-style, multimodal
   language_model, DBRX). */
static const char *const layer_prefixes[] = { "model.layers.",
	"model.language_model.layers.", "transformer.blocks.", NULL };

/* Whether any of the n patterns takes name: 1, 0, or -1 when a pattern
   is outside the matcher's subset (or st's budget is spent). */
static int
any_match(struct re_state *st, const struct re_pat *pats, size_t n,
    const char *name)
{
	size_t k;

	for (k = 0; k < n; k++) {
		bool hit = re_match(st, pats[k].start, pats[k].end, name, NULL);

		if (st->bad)
			return -1;
		if (hit)
			return 1;
	}
	return 0;
}

/*
 * How many parameters unfrozen_parameters leaves trainable (all of them
 * when the key is absent or a pattern is outside the matcher's subset):
 * each layer's attention and MLP tried under every known layer prefix,
 * the embedding and the head under theirs.
 */
double
estimate_unfrozen_count(const struct doc *d, const struct arch *x,
    double n_embed, double n_linear)
{
	static const char *const embeds[] = { "model.embed_tokens.weight",
	    "model.language_model.embed_tokens.weight",
	    "transformer.wte.weight", NULL };
	const struct doc_node *u = doc_map_value(d->root,
	    "unfrozen_parameters");
	double attn = x->h * x->a * x->d * 2 + 2 * x->h * x->akv * x->d;
	double layer = n_linear / x->L, share_a, total = 0, head;
	struct re_state st = { 0, false };
	struct re_pat pats[64];		/* u->n <= 64 */
	char name[160];
	size_t i;
	long li;
	int m;

	if (u == NULL || u->kind != DOC_SEQ || u->n == 0 || u->n > 64 ||
	    x->L > 512)
		return x->N;
	for (i = 0; i < u->n; i++)
		if (u->items[i]->kind != DOC_STR ||
		    re_pat_make(&pats[i], u->items[i]->text) != 0)
			return x->N;
	share_a = layer > 0 ? (attn < layer ? attn / layer : 1) : 0;
	for (li = 0; li < (long)x->L; li++) {
		int hit_a = 0, hit_m = 0;
		const char *const *pf;

		for (pf = layer_prefixes; *pf != NULL; pf++) {
			snprintf(name, sizeof(name),
			    "%s%ld.self_attn.q_proj.weight", *pf, li);
			if ((m = any_match(&st, pats, u->n, name)) < 0)
				return x->N;
			hit_a |= m;
			snprintf(name, sizeof(name),
			    "%s%ld.mlp.down_proj.weight", *pf, li);
			if ((m = any_match(&st, pats, u->n, name)) < 0)
				return x->N;
			hit_m |= m;
		}
		total += layer * ((hit_a ? share_a : 0) +
		    (hit_m ? 1 - share_a : 0));
	}
	head = x->tied ? 0 : n_embed / 2;
	for (i = 0; embeds[i] != NULL; i++) {
		if ((m = any_match(&st, pats, u->n, embeds[i])) < 0)
			return x->N;
		if (m) {
			total += n_embed - head;
			break;
		}
	}
	if (head > 0) {
		if ((m = any_match(&st, pats, u->n, "lm_head.weight")) < 0)
			return x->N;
		if (m)
			total += head;
	}
	return total;
}
