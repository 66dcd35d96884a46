/*
 * core/hfconfig: config.json -> struct model_def (see hfconfig.h).
 *
 * JSON is read with the YAML document layer: a JSON text is a YAML flow
 * document, so the same limits and line/column marks apply.  Parameter
 * counts follow ../shared/reference/estimator.md section 1 term by term;
 * tests/test_hfconfig.c checks them against the catalog's totals.
 */
#include "hfconfig.h"
#include "hfconfig_int.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "arena.h"
#include "doc.h"
#include "models.h"

/* Upper bounds far above any released model; they keep the arithmetic
   below 2^53 and refuse nonsense early. */
#define MAX_WIDTH	(1LL << 20)	/* hidden, intermediate sizes */
#define MAX_COUNT	(1LL << 16)	/* layers, heads, experts */
#define MAX_VOCAB	(1LL << 24)

/* The first of names present in map, or NULL. */
static const struct doc_pair *
first(const struct doc_node *map, const char *const *names)
{
	const struct doc_pair *p;

	for (; *names != NULL; names++)
		if ((p = doc_map_get(map, *names)) != NULL &&
		    p->value->kind != DOC_NULL)
			return p;
	return NULL;
}

void
hf_loc_of(struct err_loc *l, const struct doc_pair *p, const char *key)
{
	memset(l, 0, sizeof(*l));
	if (p != NULL) {
		l->line = p->value_loc.line;
		l->col = p->value_loc.col;
	}
	snprintf(l->path, sizeof(l->path), "%s", key);
}

/*
 * The integer under the first of names: *out = -1 when absent and not
 * required; ERR_SCHEMA when present but not an integer in [lo, hi].
 */
static int
get_int(long long *out, const struct fields *f, const char *const *names,
    bool required, long long lo, long long hi, struct err *e)
{
	const struct doc_pair *p = first(f->map, names);
	const struct doc_node *v;
	struct err_loc l;

	*out = -1;
	if (p == NULL) {
		if (!required)
			return 0;
		hf_loc_of(&l, NULL, names[0]);
		l.line = f->map->loc.line;
		l.col = f->map->loc.col;
		return err_set(e, ERR_SCHEMA, &l, "config.json has no %s; "
		    "expected the model's %s as an integer", names[0],
		    names[0]);
	}
	v = p->value;
	if (v->kind == DOC_INT && !v->big && v->i >= lo && v->i <= hi) {
		*out = v->i;
		return 0;
	}
	hf_loc_of(&l, p, p->key->text);
	return err_set(e, ERR_SCHEMA, &l, "config.json %s must be an integer "
	    "from %lld to %lld, got %.40s", p->key->text, lo, hi,
	    v->text != NULL ? v->text : doc_kind_name(v->kind));
}

bool
hf_type_is(const struct fields *f, const char *const *types)
{
	for (; *types != NULL; types++)
		if (strcmp(f->type, *types) == 0)
			return true;
	return false;
}

static bool
flag(const struct fields *f, const char *key)
{
	const struct doc_node *v = doc_map_value(f->map, key);

	return v != NULL && v->kind == DOC_BOOL && v->b;
}

/* MLPs without a gate (up, activation, down, with biases). */
static const char *const plain_mlp_types[] = {
	"gpt2", "gpt_neox", "gptj", "falcon", "phi", "phi-msft", "starcoder2",
	"gpt_bigcode", "opt", "bloom", "mpt", NULL
};

/* LayerNorm with a bias: twice RMSNorm's parameters. */
static const char *const layernorm_types[] = {
	"gpt2", "gpt_neox", "gptj", "falcon", "phi", "phi-msft", "starcoder2",
	"gpt_bigcode", "opt", "bloom", "stablelm", "olmo", "cohere", NULL
};

/* The q/k/v projections carry biases without saying so. */
static const char *const qkv_bias_types[] = {
	"qwen2", "qwen2_vl", "qwen2_5_vl", "qwen2_moe", "qwen", NULL
};

/* Tied embeddings unless config.json says otherwise (their config
   classes default tie_word_embeddings to True). */
static const char *const tied_default_types[] = {
	"gemma", "gemma2", "gemma3", "gemma3_text", "gpt2", "gpt_bigcode",
	"opt", "bloom", "phi", "phi-msft", "lfm2", "lfm2_moe", NULL
};

/* Pick the mapping that describes the language model: the root, or the
   text_config (llm_config, language_config) of a multimodal config. */
static void
text_model(struct fields *f, const struct doc_node *root)
{
	static const char *const subs[] = { "text_config", "llm_config",
	    "language_config", NULL };
	static const char *const hidden[] = { "hidden_size", "n_embd",
	    "d_model", NULL };
	const struct doc_node *t = doc_map_value(root, "model_type");
	const struct doc_node *s;
	size_t i;

	f->map = root;
	f->type = t != NULL && t->kind == DOC_STR ? t->text : "";
	if (first(root, hidden) != NULL)
		return;
	for (i = 0; subs[i] != NULL; i++) {
		s = doc_map_value(root, subs[i]);
		if (s != NULL && s->kind == DOC_MAP) {
			f->map = s;
			t = doc_map_value(s, "model_type");
			if (t != NULL && t->kind == DOC_STR)
				f->type = t->text;
			return;
		}
	}
}

/* A number under the first of names (integer or float), or dflt. */
double
hf_fnum(const struct doc_node *map, const char *const *names, double dflt)
{
	const struct doc_pair *p = map != NULL && map->kind == DOC_MAP ?
	    first(map, names) : NULL;

	if (p == NULL)
		return dflt;
	if (p->value->kind == DOC_INT && !p->value->big && p->value->i >= 0 &&
	    p->value->i <= (1LL << 40))
		return (double)p->value->i;
	if (p->value->kind == DOC_FLOAT && p->value->f >= 0 &&
	    p->value->f <= 1e12)
		return p->value->f;
	return dflt;
}

bool
hf_bool_or(const struct doc_node *map, const char *key, bool dflt)
{
	const struct doc_node *v = doc_map_value(map, key);

	return v != NULL && v->kind == DOC_BOOL ? v->b : dflt;
}


struct shape {
	long long h, L, a, akv, d, I, V, pos, E, k, Ie, nshared, sei,
	    kdense, qlora, kvlora, dnope, drope, dv, step, Imlp;
	int tied;
};

static int
read_shape(struct shape *s, const struct fields *f, struct err *e)
{
	static const char *const n_h[] = { "hidden_size", "n_embd",
	    "d_model", NULL };
	static const char *const n_L[] = { "num_hidden_layers", "n_layer",
	    "num_layers", "n_layers", NULL };
	static const char *const n_a[] = { "num_attention_heads", "n_head",
	    "num_heads", "n_heads", NULL };
	static const char *const n_akv[] = { "num_key_value_heads",
	    "num_kv_heads", "n_kv_heads", "multi_query_group_num", NULL };
	static const char *const n_d[] = { "head_dim", NULL };
	static const char *const n_I[] = { "intermediate_size", "n_inner",
	    "ffn_hidden_size", NULL };
	static const char *const n_V[] = { "vocab_size", "padded_vocab_size",
	    NULL };
	static const char *const n_pos[] = { "max_position_embeddings",
	    "n_positions", "max_seq_len", "seq_length", NULL };
	static const char *const n_E[] = { "num_local_experts",
	    "num_experts", "n_routed_experts", "moe_num_experts", NULL };
	static const char *const n_k[] = { "num_experts_per_tok",
	    "num_experts_per_token", "moe_topk", "num_selected_experts",
	    "top_k_experts", NULL };
	static const char *const n_Ie[] = { "moe_intermediate_size",
	    "expert_intermediate_size", NULL };
	static const char *const n_ns[] = { "n_shared_experts",
	    "num_shared_experts", NULL };
	static const char *const n_sei[] = {
	    "shared_expert_intermediate_size", "shared_intermediate_size",
	    NULL };
	static const char *const n_kd[] = { "first_k_dense_replace",
	    "num_dense_layers", NULL };
	static const char *const n_ql[] = { "q_lora_rank", NULL };
	static const char *const n_kvl[] = { "kv_lora_rank", NULL };
	static const char *const n_dn[] = { "qk_nope_head_dim", NULL };
	static const char *const n_dr[] = { "qk_rope_head_dim", NULL };
	static const char *const n_dv[] = { "v_head_dim", NULL };
	static const char *const n_step[] = { "interleave_moe_layer_step",
	    NULL };
	static const char *const n_Imlp[] = { "intermediate_size_mlp", NULL };
	const struct doc_node *tw;
	int rv = 0;

	memset(s, 0, sizeof(*s));
	rv = rv ? rv : get_int(&s->h, f, n_h, true, 1, MAX_WIDTH, e);
	rv = rv ? rv : get_int(&s->L, f, n_L, true, 1, MAX_COUNT, e);
	rv = rv ? rv : get_int(&s->a, f, n_a, true, 1, MAX_COUNT, e);
	rv = rv ? rv : get_int(&s->akv, f, n_akv, false, 1, MAX_COUNT, e);
	rv = rv ? rv : get_int(&s->d, f, n_d, false, 1, MAX_WIDTH, e);
	rv = rv ? rv : get_int(&s->I, f, n_I, false, 1, MAX_WIDTH, e);
	rv = rv ? rv : get_int(&s->V, f, n_V, true, 1, MAX_VOCAB, e);
	rv = rv ? rv : get_int(&s->pos, f, n_pos, false, 1, 1LL << 40, e);
	rv = rv ? rv : get_int(&s->E, f, n_E, false, 1, MAX_COUNT, e);
	rv = rv ? rv : get_int(&s->k, f, n_k, false, 1, MAX_COUNT, e);
	rv = rv ? rv : get_int(&s->Ie, f, n_Ie, false, 1, MAX_WIDTH, e);
	rv = rv ? rv : get_int(&s->nshared, f, n_ns, false, 0, MAX_COUNT, e);
	rv = rv ? rv : get_int(&s->sei, f, n_sei, false, 0, MAX_WIDTH, e);
	rv = rv ? rv : get_int(&s->kdense, f, n_kd, false, 0, MAX_COUNT, e);
	rv = rv ? rv : get_int(&s->qlora, f, n_ql, false, 1, MAX_WIDTH, e);
	rv = rv ? rv : get_int(&s->kvlora, f, n_kvl, false, 1, MAX_WIDTH, e);
	rv = rv ? rv : get_int(&s->dnope, f, n_dn, false, 0, MAX_WIDTH, e);
	rv = rv ? rv : get_int(&s->drope, f, n_dr, false, 0, MAX_WIDTH, e);
	rv = rv ? rv : get_int(&s->dv, f, n_dv, false, 1, MAX_WIDTH, e);
	rv = rv ? rv : get_int(&s->step, f, n_step, false, 1, MAX_COUNT, e);
	rv = rv ? rv : get_int(&s->Imlp, f, n_Imlp, false, 1, MAX_WIDTH, e);
	if (rv != 0)
		return rv;
	if (s->akv < 0)
		s->akv = doc_truthy(doc_map_value(f->map, "multi_query")) ? 1 :
		    s->a;
	if (s->d < 0)
		s->d = s->h / s->a;
	if (s->I < 0)
		s->I = 4 * s->h;
	else if (strcmp(f->type, "qwen") == 0)
		s->I /= 2;	/* Qwen (v1) counts both halves of w1/w2 */
	if (s->E < 0)
		s->E = 0;
	if (s->k < 0 || s->E == 0)
		s->k = s->E > 0 ? 2 : 0;
	if (s->k > s->E)
		s->k = s->E;
	if (s->Ie < 0)
		s->Ie = s->I;	/* Mixtral: intermediate_size per expert */
	if (s->kdense < 0 || s->E == 0)
		s->kdense = 0;
	if (s->kdense > s->L)
		s->kdense = s->L;
	tw = doc_map_value(f->map, "tie_word_embeddings");
	if (tw == NULL)
		tw = doc_map_value(f->map, "tie_embeddings");
	if (tw == NULL)
		tw = doc_map_value(f->map, "tie_embedding");	/* LFM2 */
	s->tied = tw != NULL && tw->kind == DOC_BOOL ? tw->b :
	    hf_type_is(f, tied_default_types);
	return 0;
}

/*
 * Gemma 4 beyond the dense formula (config.json fields of the Gemma 4
 * text config): per-layer input embeddings (vocab_size_per_layer_input x
 * layers x hidden_size_per_layer_input, their projection from h and the
 * per-layer gate, projection and norm), full-attention layers with
 * global_head_dim (and num_global_key_value_heads), the MLP twice as wide
 * in the num_kv_shared_layers last layers (use_double_wide_mlp), and with
 * enable_moe_block a dense MLP beside the experts in every layer.
 */
static double
gemma4_extra(const struct fields *f, const struct shape *s, double *mixers,
    double attn, double dense_mlp, double *n_dense, double n_moe)
{
	static const char *const n_hpl[] = { "hidden_size_per_layer_input",
	    NULL };
	static const char *const n_vpl[] = { "vocab_size_per_layer_input",
	    NULL };
	static const char *const n_gd[] = { "global_head_dim", NULL };
	static const char *const n_gkv[] = { "num_global_key_value_heads",
	    NULL };
	static const char *const n_ks[] = { "num_kv_shared_layers", NULL };
	const struct doc_node *lt = doc_map_value(f->map, "layer_types");
	double h = (double)s->h, L = (double)s->L, a = (double)s->a;
	double hpl = hf_fnum(f->map, n_hpl, 0), gd = hf_fnum(f->map, n_gd, 0);
	double gkv = hf_fnum(f->map, n_gkv, (double)s->akv), nfull = 0, x = 0;
	size_t i;

	if (hpl > 0)
		x += hf_fnum(f->map, n_vpl, (double)s->V) * L * hpl + h * L * hpl +
		    hpl + L * (2 * h * hpl + h);
	for (i = 0; lt != NULL && lt->kind == DOC_SEQ && i < lt->n; i++)
		nfull += lt->items[i]->kind == DOC_STR &&
		    strcmp(lt->items[i]->text, "full_attention") == 0;
	if (gd > 0 && nfull > 0)
		*mixers += nfull * (h * a * gd + 2 * h * gkv * gd + a * gd * h +
		    2 * gd - attn);
	if (hf_bool_or(f->map, "use_double_wide_mlp", false))
		x += hf_fnum(f->map, n_ks, 0) * dense_mlp;
	if (hf_bool_or(f->map, "enable_moe_block", false) && n_moe > 0)
		*n_dense = L;
	return x;
}

/*
 * Section 1: total and active parameters, in doubles: exact for every
 * real model (totals far below 2^53); absurd shapes round, never
 * overflow, and hfconfig_parse refuses totals of 10^15 and more.
 */
static void
count(const struct shape *s, const struct fields *f,
    const struct layers *ly, double *total, double *active)
{
	double h = (double)s->h, hq = (double)(s->a * s->d);
	double hkv = (double)(s->akv * s->d), a = (double)s->a;
	double attn, dense_mlp, moe_all, moe_act, shared = 0, router, norms;
	double n_moe, n_dense, ln = hf_type_is(f, layernorm_types) ? 2 : 1;
	bool gpt_oss = strcmp(f->type, "gpt_oss") == 0;
	bool llama4 = strncmp(f->type, "llama4", 6) == 0;
	const struct doc_node *tm = doc_map_value(f->map, "topk_method");
	bool noaux = tm != NULL && tm->kind == DOC_STR &&
	    strcmp(tm->text, "noaux_tc") == 0;
	static const char *const qk_norm_d[] = { "qwen3", "qwen3_moe",
	    "gemma3", "gemma3_text", NULL };
	static const char *const qk_norm_h[] = { "olmo2", "olmo3", NULL };
	static const char *const norm4[] = { "gemma2", "gemma3",
	    "gemma3_text", "gemma4", "gemma4_text", NULL };
	static const char *const gated_q[] = { "qwen3_next", "qwen3_5",
	    "qwen3_5_text", "qwen3_5_moe", "qwen3_5_moe_text", NULL };
	bool gemma4 = strncmp(f->type, "gemma4", 6) == 0;
	double mixers, extra = 0;

	if (s->kvlora > 0) {	/* DeepSeek MLA */
		double dn = (double)s->dnope, dr = (double)s->drope;
		double dv = (double)(s->dv > 0 ? s->dv : s->d);
		double kvl = (double)s->kvlora, ql = (double)s->qlora;

		attn = (s->qlora > 0 ? h * ql + ql + ql * a * (dn + dr) :
		    h * a * (dn + dr)) + h * (kvl + dr) + kvl +
		    kvl * a * (dn + dv) + a * dv * h;
	} else {
		attn = h * hq + 2 * h * hkv + hq * h;
		if (hf_type_is(f, qkv_bias_types) || flag(f, "attention_bias"))
			attn += hq + 2 * hkv;
		if (gpt_oss)
			attn += hq + 2 * hkv + h + a;	/* biases, sinks */
		if (hf_type_is(f, qk_norm_d) || gemma4 || hf_type_is(f, gated_q))
			attn += 2 * (double)s->d;
		else if (hf_type_is(f, qk_norm_h))
			attn += hq + hkv;
		/* Qwen3-Next / Qwen3.5 attention gates its output: q_proj
		   is twice as wide. */
		if (hf_type_is(f, gated_q))
			attn += h * hq;
	}
	if (hf_type_is(f, plain_mlp_types))
		dense_mlp = 2 * h * (double)s->I + (double)s->I + h;
	else
		dense_mlp = 3 * h * (double)s->I;
	norms = (hf_type_is(f, norm4) ? 4 : 2) * h * ln;

	n_moe = 0;
	if (s->E > 0) {
		double per = gpt_oss ? 3 * h * (double)s->Ie +
		    3 * (double)s->Ie + h : 3 * h * (double)s->Ie;

		n_moe = (double)(s->L - s->kdense);
		if (s->step > 1)
			n_moe = (double)(s->L / s->step);
		/* gpt-oss's router has a bias; DeepSeek-V3's noaux_tc
		   routing keeps e_score_correction_bias, E per layer. */
		router = h * (double)s->E + (gpt_oss || noaux ?
		    (double)s->E : 0);
		if (s->nshared > 0)
			shared = (double)s->nshared * 3 * h * (double)s->Ie;
		else if (s->sei > 0)
			shared = 3 * h * (double)s->sei + h;
		else if (llama4)
			shared = 3 * h * (double)s->Ie;
		moe_all = (double)s->E * per + router + shared;
		moe_act = (double)s->k * per + router + shared;
	} else {
		moe_all = moe_act = 0;
	}
	n_dense = (double)s->L - n_moe;
	if (s->Imlp > 0 && s->E > 0)	/* Llama 4's dense layers */
		dense_mlp = 3 * h * (double)s->Imlp;
	/* Hybrids: the other mixer in its layers, their own MLP widths
	   and expert placement. */
	mixers = (double)s->L * attn;
	if (ly != NULL && ly->mix != MIX_NONE) {
		mixers = ly->n_attn * attn + ly->n_other * ly->other;
		if (ly->I > 0)
			dense_mlp = 3 * h * ly->I;
		if (ly->n_moe >= 0) {
			n_moe = s->E > 0 ? ly->n_moe : 0;
			n_dense = ly->n_dense >= 0 ? ly->n_dense :
			    (double)s->L - n_moe;
		}
	}
	if (gemma4 && f->map != NULL)
		extra = gemma4_extra(f, s, &mixers, attn, dense_mlp, &n_dense,
		    n_moe);
	*total = mixers + (double)s->L * norms + n_dense * dense_mlp +
	    n_moe * moe_all + extra + (double)s->V * h * (s->tied ? 1 : 2) +
	    h * ln;
	*active = *total - n_moe * (moe_all - moe_act);
}

int
hfconfig_parse(const struct model_def **out, const char *buf, size_t len,
    const char *id, const char *source, const struct limits *lim,
    struct arena *a, struct err *e)
{
	struct doc *d;
	struct fields f;
	struct shape s;
	struct layers ly;
	struct model_def *m;
	double total, active;
	struct err_loc l;
	int rv;

	*out = NULL;
	rv = doc_parse(&d, buf, len, lim, a, e);
	if (rv != 0)
		return rv;
	text_model(&f, d->root);
	rv = read_shape(&s, &f, e);
	if (rv == 0)
		rv = hf_read_layers(&ly, &f, (double)s.L, (double)s.h, e);
	if (rv != 0)
		return rv;
	count(&s, &f, &ly, &total, &active);
	if (!(total > 0 && total < 1e15)) {
		memset(&l, 0, sizeof(l));
		l.line = f.map->loc.line;
		l.col = f.map->loc.col;
		return err_set(e, ERR_SCHEMA, &l, "config.json describes a "
		    "model of %.3g parameters; expected fewer than 10^15",
		    total);
	}
	m = ARENA_NEW(a, struct model_def, 1);
	if (m == NULL)
		return err_set(e, ERR_NOMEM, NULL, "request memory budget "
		    "spent");
	m->hf_id = arena_strndup(a, id, strlen(id));
	m->model_type = arena_strndup(a, f.type, strlen(f.type));
	if (m->hf_id == NULL || m->model_type == NULL)
		return err_set(e, ERR_NOMEM, NULL, "request memory budget "
		    "spent");
	m->hidden_size = s.h;
	m->num_hidden_layers = s.L;
	m->num_attention_heads = s.a;
	m->num_key_value_heads = s.akv;
	m->head_dim = s.kvlora > 0 ? s.dnope + s.drope : s.d;
	m->intermediate_size = s.I;
	m->vocab_size = s.V;
	m->max_position_embeddings = s.pos;
	m->tie_word_embeddings = s.tied;
	m->num_experts = s.E > 0 ? s.E : -1;
	m->num_experts_per_tok = s.E > 0 ? s.k : -1;
	m->moe_intermediate_size = s.E > 0 ? s.Ie : -1;
	m->shared_experts = s.nshared > 0 ? s.nshared : -1;
	m->first_k_dense = s.E > 0 ? s.kdense : -1;
	m->total_params = (long long)(total + 0.5);
	m->active_params = (long long)(active + 0.5);
	m->verification = "config";
	m->source = source;
	*out = m;
	return 0;
}

bool
hfconfig_count(const struct model_def *m, long long *total, long long *active)
{
	struct fields f;
	struct shape s;
	double t, act;

	if (m == NULL || m->hidden_size <= 0 || m->num_hidden_layers <= 0 ||
	    m->num_attention_heads <= 0 || m->vocab_size <= 0 ||
	    m->hidden_size > MAX_WIDTH || m->num_hidden_layers > MAX_COUNT ||
	    m->num_attention_heads > MAX_COUNT || m->vocab_size > MAX_VOCAB)
		return false;
	f.map = NULL;
	f.type = m->model_type != NULL ? m->model_type : "";
	if (strchr(f.type, '/') != NULL)	/* "llama4/llama4_text" */
		f.type = strrchr(f.type, '/') + 1;
	if (hf_mixer_of(f.type) != MIX_NONE || hf_refused(&f) ||
	    strncmp(f.type, "gemma4", 6) == 0)
		return false;
	memset(&s, 0, sizeof(s));
	s.h = m->hidden_size;
	s.L = m->num_hidden_layers;
	s.a = m->num_attention_heads;
	s.akv = m->num_key_value_heads > 0 &&
	    m->num_key_value_heads <= MAX_COUNT ? m->num_key_value_heads : s.a;
	s.d = m->head_dim > 0 && m->head_dim <= MAX_WIDTH ? m->head_dim :
	    s.h / s.a;
	s.I = m->intermediate_size > 0 && m->intermediate_size <= MAX_WIDTH ?
	    m->intermediate_size : 4 * s.h;
	s.V = m->vocab_size;
	if (m->num_experts > 0 && m->num_experts <= MAX_COUNT) {
		s.E = m->num_experts;
		s.k = m->num_experts_per_tok > 0 &&
		    m->num_experts_per_tok <= s.E ? m->num_experts_per_tok : 2;
		s.Ie = m->moe_intermediate_size > 0 &&
		    m->moe_intermediate_size <= MAX_WIDTH ?
		    m->moe_intermediate_size : s.I;
		s.nshared = m->shared_experts > 0 &&
		    m->shared_experts <= MAX_COUNT ? m->shared_experts : 0;
		s.kdense = m->first_k_dense > 0 && m->first_k_dense <= s.L ?
		    m->first_k_dense : 0;
	}
	s.tied = m->tie_word_embeddings == 1;
	count(&s, &f, NULL, &t, &act);
	if (!(t > 0 && t < 1e15))
		return false;
	*total = (long long)(t + 0.5);
	*active = (long long)(act + 0.5);
	return true;
}
