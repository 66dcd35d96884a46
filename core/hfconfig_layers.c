/*
 * core/hfconfig_layers: the layers of a hybrid architecture (attention
 * beside Mamba, Gated DeltaNet, KDA or short convolutions): which layers
 * are which, and the other mixer's parameters, from config.json (see
 * hfconfig.c).  No I/O.
 */
#include "hfconfig.h"
#include "hfconfig_int.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "doc.h"

/* Architectures whose layers the counts below do not cover: recurrent
   or state-space models without attention, shared-block hybrids, and
   Gemma 3n's AltUp/LAuReL blocks. */
static const char *const refused_types[] = {
	"gemma3n", "gemma3n_text", "mamba", "rwkv", "rwkv5", "rwkv6",
	"recurrent_gemma", "zamba", "zamba2", "minimax", "minimax_m1",
	"plamo2", "falcon_mamba", "xlstm", NULL
};

static const struct {
	const char *type;
	enum mixer mix;
} hybrid_types[] = {
	{ "jamba", MIX_MAMBA1 },
	{ "falcon_h1", MIX_MAMBA2 }, { "nemotron_h", MIX_MAMBA2 },
	{ "granitemoehybrid", MIX_MAMBA2 }, { "bamba", MIX_MAMBA2 },
	{ "qwen3_next", MIX_GDN }, { "qwen3_5", MIX_GDN },
	{ "qwen3_5_text", MIX_GDN }, { "qwen3_5_moe", MIX_GDN },
	{ "qwen3_5_moe_text", MIX_GDN },
	{ "kimi_linear", MIX_KDA },
	{ "lfm2", MIX_CONV }, { "lfm2_moe", MIX_CONV }, { "lfm2_vl", MIX_CONV },
};


bool
hf_refused(const struct fields *f)
{
	return hf_type_is(f, refused_types);
}

enum mixer
hf_mixer_of(const char *type)
{
	size_t i;

	for (i = 0; i < sizeof(hybrid_types) / sizeof(hybrid_types[0]); i++)
		if (strcmp(type, hybrid_types[i].type) == 0)
			return hybrid_types[i].mix;
	return MIX_NONE;
}

static int
layer_error(struct err *e, const struct doc_pair *p, const char *key,
    const char *what)
{
	struct err_loc l;

	hf_loc_of(&l, p, key);
	return err_set(e, ERR_SCHEMA, &l, "%s", what);
}

/*
 * The other mixer's parameters, from its config.json fields (their
 * defaults are the Transformers config classes' own):
 *   Mamba (Jamba)   in_proj h x 2di, conv di x d_conv (+ bias), x_proj
 *                   di x (dt_rank + 2 d_state), dt_proj dt_rank x di + di,
 *                   A_log di x d_state, D di, out_proj di x h, and Jamba's
 *                   dt/B/C norms
 *   Mamba-2         in_proj h x (2di + 2 groups d_state + heads), conv
 *                   (di + 2 groups d_state) x (d_conv + 1), dt_bias, A_log,
 *                   D per head, gated norm di, out_proj di x h
 *   Gated DeltaNet  in_proj_qkvz h x (2 nk dk + 2 nv dv), in_proj_ba
 *                   h x 2nv, conv (2 nk dk + nv dv) x kernel, dt_bias and
 *                   A_log per value head, norm dv, out_proj nv dv x h
 *   KDA (Kimi)      q, k, v h x nh hd each, their short convs, the
 *                   low-rank f and g gates (h x hd, hd x nh hd), b_proj
 *                   h x nh, A_log, dt_bias, o_norm, o_proj nh hd x h
 *   short conv      in_proj h x 3h, depthwise conv h x L_cache (+ bias),
 *   (LFM2)          out_proj h x h
 */
static double
mixer_params(enum mixer mix, const struct doc_node *map, double h)
{
	static const char *const n_exp[] = { "mamba_expand", "expand", NULL };
	static const char *const n_ds[] = { "mamba_d_state", "ssm_state_size",
	    "state_size", NULL };
	static const char *const n_dc[] = { "mamba_d_conv", "conv_kernel",
	    "d_conv", NULL };
	static const char *const n_ng[] = { "mamba_n_groups", "n_groups",
	    NULL };
	static const char *const n_nh[] = { "mamba_n_heads",
	    "mamba_num_heads", NULL };
	static const char *const n_hd[] = { "mamba_d_head", "mamba_head_dim",
	    NULL };
	static const char *const n_di[] = { "mamba_d_ssm", NULL };
	static const char *const n_dtr[] = { "mamba_dt_rank", NULL };
	static const char *const n_nk[] = { "linear_num_key_heads", NULL };
	static const char *const n_nv[] = { "linear_num_value_heads", NULL };
	static const char *const n_dk[] = { "linear_key_head_dim", NULL };
	static const char *const n_dv[] = { "linear_value_head_dim", NULL };
	static const char *const n_kc[] = { "linear_conv_kernel_dim",
	    "short_conv_kernel_size", NULL };
	static const char *const n_lc[] = { "conv_L_cache", "conv_l_cache",
	    NULL };
	static const char *const n_kh[] = { "num_heads", NULL };
	static const char *const n_khd[] = { "head_dim", NULL };
	bool cbias = hf_bool_or(map, "mamba_conv_bias", hf_bool_or(map,
	    "use_conv_bias", true));
	bool pbias = hf_bool_or(map, "mamba_proj_bias", hf_bool_or(map, "use_bias",
	    false));
	double di, ds, dc, p;

	switch (mix) {
	case MIX_MAMBA1: {
		double dtr = hf_fnum(map, n_dtr, 0);

		di = hf_fnum(map, n_exp, 2) * h;
		ds = hf_fnum(map, n_ds, 16);
		dc = hf_fnum(map, n_dc, 4);
		if (dtr <= 0)
			dtr = ceil(h / 16);	/* "auto" */
		p = h * 2 * di + di * dc + di * (dtr + 2 * ds) + dtr * di +
		    di + di * ds + di + di * h + dtr + 2 * ds;
		if (cbias)
			p += di;
		if (pbias)
			p += 2 * di + h;
		return p;
	}
	case MIX_MAMBA2: {
		double ng = hf_fnum(map, n_ng, 1), nh = hf_fnum(map, n_nh, 0);
		double hd = hf_fnum(map, n_hd, 64), conv;

		ds = hf_fnum(map, n_ds, 128);
		dc = hf_fnum(map, n_dc, 4);
		di = hf_fnum(map, n_di, 0);
		if (di <= 0)
			di = nh > 0 ? nh * hd : hf_fnum(map, n_exp, 2) * h;
		if (nh <= 0)
			nh = di / hd;
		conv = di + 2 * ng * ds;
		p = h * (2 * di + 2 * ng * ds + nh) + conv * dc + 3 * nh +
		    di + di * h;
		if (cbias)
			p += conv;
		if (pbias)
			p += 2 * di + 2 * ng * ds + nh + h;
		return p;
	}
	case MIX_GDN: {
		double nk = hf_fnum(map, n_nk, 16), nv = hf_fnum(map, n_nv, 32);
		double dk = hf_fnum(map, n_dk, 128), dv = hf_fnum(map, n_dv, 128);
		double kc = hf_fnum(map, n_kc, 4);

		return h * (2 * nk * dk + 2 * nv * dv) + h * 2 * nv +
		    (2 * nk * dk + nv * dv) * kc + 2 * nv + dv + nv * dv * h;
	}
	case MIX_KDA: {
		const struct doc_node *lc = doc_map_value(map,
		    "linear_attn_config");
		double nh = hf_fnum(lc, n_kh, 32), hd = hf_fnum(lc, n_khd, 128);
		double kc = hf_fnum(lc, n_kc, 4), d = nh * hd;

		return 3 * h * d + 3 * d * kc + 2 * (h * hd + hd * d) +
		    h * nh + nh + d + hd + d * h;
	}
	case MIX_CONV:
		return h * 3 * h + h * hf_fnum(map, n_lc, 3) +
		    (hf_bool_or(map, "conv_bias", false) ? h : 0) + h * h;
	case MIX_NONE:
		break;
	}
	return 0;
}

/* How many entries of the integer list under key (1-based or 0-based,
   any order), or -1 when absent. */
static double
list_len(const struct doc_node *map, const char *key)
{
	const struct doc_node *v = doc_map_value(map, key);

	return v != NULL && v->kind == DOC_SEQ ? (double)v->n : -1;
}

/* layer_types lists each layer's mixer: attention or another. */
static int
from_layer_types(struct layers *ly, const struct fields *f,
    const struct doc_pair *lt, double L, struct err *e)
{
	double n = 0, other = 0;
	size_t i;

	for (i = 0; i < lt->value->n; i++) {
		const struct doc_node *t = lt->value->items[i];

		if (t->kind != DOC_STR)
			continue;
		n++;
		if (strstr(t->text, "attention") != NULL &&
		    strstr(t->text, "linear") == NULL)
			continue;
		if (ly->mix == MIX_NONE) {
			struct err_loc l;

			hf_loc_of(&l, lt, "layer_types");
			l.line = t->loc.line;
			l.col = t->loc.col;
			return err_set(e, ERR_SCHEMA, &l, "layer_types "
			    "lists '%.40s' layers, a mixer model_type "
			    "'%.60s' is not known to use", t->text,
			    f->type);
		}
		other++;
	}
	if (n > 0) {
		ly->n_other = other * L / n;
		ly->n_attn = L - ly->n_other;
	}
	return 0;
}

/*
 * Which layers are which: layer_types when config.json lists them; else
 * Nemotron-H's hybrid_override_pattern (M Mamba-2, * attention, - MLP,
 * E experts, one block per layer), Jamba's attn_layer_period/offset and
 * expert_layer_period/offset, Qwen3-Next's full_attention_interval,
 * LFM2's full_attn_idxs, Kimi's linear_attn_config.full_attn_layers,
 * Bamba's attn_layer_indices; Falcon-H1 runs attention and Mamba-2 side
 * by side in every layer.
 */
int
hf_read_layers(struct layers *ly, const struct fields *f, double L, double h,
    struct err *e)
{
	static const char *const n_ap[] = { "attn_layer_period", NULL };
	static const char *const n_ao[] = { "attn_layer_offset", NULL };
	static const char *const n_ep[] = { "expert_layer_period", NULL };
	static const char *const n_eo[] = { "expert_layer_offset", NULL };
	static const char *const n_fi[] = { "full_attention_interval", NULL };
	const struct doc_pair *lt = doc_map_get(f->map, "layer_types");
	const struct doc_node *pat = doc_map_value(f->map,
	    "hybrid_override_pattern");

	memset(ly, 0, sizeof(*ly));
	ly->n_moe = ly->n_dense = ly->I = -1;
	ly->n_attn = L;
	if (hf_refused(f))
		return layer_error(e, doc_map_get(f->map, "model_type"),
		    "model_type", "model_type mixes attention with recurrent "
		    "or state-space blocks the parameter count does not "
		    "cover");
	ly->mix = hf_mixer_of(f->type);
	if (lt != NULL && lt->value->kind == DOC_SEQ) {
		int rv = from_layer_types(ly, f, lt, L, e);

		if (rv != 0)
			return rv;
	} else if (ly->mix == MIX_NONE) {
		return 0;
	} else if (pat != NULL && pat->kind == DOC_STR) {
		double m = 0, a = 0, mlp = 0, moe = 0, n = 0;
		const char *c;

		for (c = pat->text; *c != '\0'; c++, n++) {
			m += *c == 'M';
			a += *c == '*';
			mlp += *c == '-';
			moe += *c == 'E';
		}
		if (n != L)
			return layer_error(e, doc_map_get(f->map,
			    "hybrid_override_pattern"),
			    "hybrid_override_pattern", "hybrid_override_pattern "
			    "must have one letter per layer");
		ly->n_other = m;
		ly->n_attn = a;
		ly->n_dense = mlp;
		ly->n_moe = moe;
	} else if (doc_map_get(f->map, "attn_layer_period") != NULL ||
	    strcmp(f->type, "jamba") == 0) {
		double ap = hf_fnum(f->map, n_ap, 8), ao = hf_fnum(f->map, n_ao, 4);
		double ep = hf_fnum(f->map, n_ep, 2), eo = hf_fnum(f->map, n_eo, 1);
		double k, a = 0, moe = 0;

		for (k = 0; k < L; k++) {
			a += ap >= 1 && fmod(k, ap) == ao;
			moe += ep >= 1 && fmod(k, ep) == eo;
		}
		ly->n_attn = a;
		ly->n_other = L - a;
		ly->n_moe = moe;
		ly->n_dense = L - moe;
	} else if (ly->mix == MIX_GDN) {
		double k = hf_fnum(f->map, n_fi, 4);

		ly->n_attn = k >= 1 ? floor(L / k) : 0;
		ly->n_other = L - ly->n_attn;
	} else if (list_len(f->map, "full_attn_idxs") >= 0) {
		ly->n_attn = list_len(f->map, "full_attn_idxs");
		ly->n_other = L - ly->n_attn;
	} else if (list_len(doc_map_value(f->map, "linear_attn_config"),
	    "full_attn_layers") >= 0) {
		ly->n_attn = list_len(doc_map_value(f->map,
		    "linear_attn_config"), "full_attn_layers");
		ly->n_other = L - ly->n_attn;
	} else if (list_len(f->map, "attn_layer_indices") >= 0) {
		ly->n_attn = list_len(f->map, "attn_layer_indices");
		ly->n_other = L - ly->n_attn;
	} else if (strcmp(f->type, "falcon_h1") == 0) {
		ly->n_attn = L;		/* and Mamba-2 beside it */
		ly->n_other = L;
	} else
		return layer_error(e, doc_map_get(f->map, "model_type"),
		    "model_type", "config.json does not say which of this "
		    "hybrid's layers are attention (layer_types)");
	if (ly->n_attn < 0 || ly->n_attn > L)
		return layer_error(e, lt, "layer_types", "more attention "
		    "layers than layers");
	ly->other = ly->mix != MIX_NONE ? mixer_params(ly->mix, f->map, h) : 0;
	/* LFM2 sizes its MLP as 2/3 of block_ff_dim, rounded up to
	   block_multiple_of, when block_auto_adjust_ff_dim (the default). */
	if (ly->mix == MIX_CONV && doc_map_get(f->map, "block_ff_dim") != NULL &&
	    hf_bool_or(f->map, "block_auto_adjust_ff_dim", true)) {
		static const char *const n_ff[] = { "block_ff_dim", NULL };
		static const char *const n_mul[] = {
		    "block_ffn_dim_multiplier", NULL };
		static const char *const n_mo[] = { "block_multiple_of", NULL };
		double ff = ceil(2 * hf_fnum(f->map, n_ff, 0) / 3 *
		    hf_fnum(f->map, n_mul, 1)), mo = hf_fnum(f->map, n_mo, 256);

		ly->I = mo >= 1 ? ceil(ff / mo) * mo : ff;
	}
	return 0;
}

