/*
 * api/catalog: the read-only tables: rules, GPUs, models, Axolotl keys
 * (openapi.yaml: listRules, getRule, listGpus, listModels, listKeys).
 */
#include "api/api_int.h"

#include <stdlib.h>
#include <string.h>

#include "api/encode.h"
#include "core/gpu.h"
#include "core/keys.h"
#include "core/models.h"
#include "core/rules.h"

static const char *const no_params[] = { NULL };

/* listRules: GET /v1/rules */
void
h_rules(struct api_ctx *ctx, const struct api_req *req,
    const struct query *q, const struct route_match *m,
    struct api_resp *resp)
{
	const struct rule_def *all;
	json_t *items;
	size_t n, i;

	(void)ctx;
	(void)req;
	(void)m;
	if (query_only(q, no_params, resp) != 0)
		return;
	all = rules_all(&n);
	items = json_array();
	for (i = 0; i < n; i++)
		json_array_append_new(items, encode_rule_json(&all[i]));
	api_json(resp, 200, json_pack("{s:o}", "items", items));
}

/* getRule: GET /v1/rules/{id} */
void
h_rule(struct api_ctx *ctx, const struct api_req *req,
    const struct query *q, const struct route_match *m,
    struct api_resp *resp)
{
	const struct rule_def *r;

	(void)ctx;
	(void)req;
	if (query_only(q, no_params, resp) != 0)
		return;
	r = rules_find(m->param[0]);
	if (r == NULL) {
		api_problem(resp, 404, "not-found", "Not Found", NULL,
		    "no rule '%.100s'", m->param[0]);
		return;
	}
	api_json(resp, 200, encode_rule_json(r));
}

/* listGpus: GET /v1/catalog/gpus */
void
h_gpus(struct api_ctx *ctx, const struct api_req *req,
    const struct query *q, const struct route_match *m,
    struct api_resp *resp)
{
	const struct gpu *all;
	json_t *items;
	size_t n, i;

	(void)ctx;
	(void)req;
	(void)m;
	if (query_only(q, no_params, resp) != 0)
		return;
	all = gpu_all(&n);
	items = json_array();
	for (i = 0; i < n; i++) {
		const struct gpu *g = &all[i];

		json_array_append_new(items, json_pack(
		    "{s:s, s:o, s:s, s:s, s:f, s:o, s:b, s:b, s:s}",
		    "id", g->id, "alias", g->alias != NULL ?
		    json_string(g->alias) : json_null(), "name", g->name,
		    "vendor", g->vendor, "memory_gib", g->memory_gib,
		    "compute_capability", g->cc > 0 ? json_sprintf("%u.%u",
		    g->cc / 10, g->cc % 10) : json_null(), "bf16", g->bf16,
		    "fp8", g->fp8, "link", g->link));
	}
	api_json(resp, 200, json_pack("{s:o}", "items", items));
}

static json_t *
fact(long long v)
{
	return v >= 0 ? json_integer(v) : json_null();
}

/* listModels: GET /v1/catalog/models */
void
h_models(struct api_ctx *ctx, const struct api_req *req,
    const struct query *q, const struct route_match *m,
    struct api_resp *resp)
{
	json_t *items;
	size_t i;

	(void)ctx;
	(void)req;
	(void)m;
	if (query_only(q, no_params, resp) != 0)
		return;
	items = json_array();
	for (i = 0; i < models_table_len; i++) {
		const struct model_def *d = &models_table[i];

		json_array_append_new(items, json_pack(
		    "{s:s, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, "
		    "s:o, s:s?, s:s?}",
		    "id", d->hf_id,
		    "model_type", d->model_type != NULL ?
		    json_string(d->model_type) : json_null(),
		    "hidden_size", fact(d->hidden_size),
		    "num_hidden_layers", fact(d->num_hidden_layers),
		    "num_attention_heads", fact(d->num_attention_heads),
		    "num_key_value_heads", fact(d->num_key_value_heads),
		    "intermediate_size", fact(d->intermediate_size),
		    "vocab_size", fact(d->vocab_size),
		    "num_experts", fact(d->num_experts),
		    "total_params", fact(d->total_params),
		    "active_params", fact(d->active_params),
		    "max_position_embeddings",
		    fact(d->max_position_embeddings),
		    "verification", d->verification,
		    "source", d->source));
	}
	api_json(resp, 200, json_pack("{s:o}", "items", items));
}

/*
 * The values a Literal[...] in a Python annotation allows, as JSON
 * (strings, numbers, true/false/null), or NULL when there is no Literal.
 */
static json_t *
literal_values(const char *type)
{
	const char *p = strstr(type, "Literal[");
	json_t *out;

	if (p == NULL)
		return NULL;
	out = json_array();
	for (p += 8; p != NULL && *p != '\0' && *p != ']';) {
		while (*p == ' ' || *p == ',')
			p++;
		if (*p == '\'' || *p == '"') {
			char quote = *p++;
			const char *end = strchr(p, quote);

			if (end == NULL)
				break;
			json_array_append_new(out,
			    json_stringn(p, (size_t)(end - p)));
			p = end + 1;
		} else {
			const char *end = p;

			while (*end != '\0' && *end != ',' && *end != ']')
				end++;
			if (end - p == 4 && memcmp(p, "True", 4) == 0)
				json_array_append_new(out, json_true());
			else if (end - p == 5 && memcmp(p, "False", 5) == 0)
				json_array_append_new(out, json_false());
			else if (end - p == 4 && memcmp(p, "None", 4) == 0)
				json_array_append_new(out, json_null());
			else if (end > p)
				json_array_append_new(out, json_integer(
				    strtoll(p, NULL, 10)));
			p = end;
		}
	}
	/* A bool or None beside the Literal is allowed too. */
	if (strstr(type, "bool") != NULL) {
		json_array_append_new(out, json_true());
		json_array_append_new(out, json_false());
	}
	if (strstr(type, "None") != NULL && strstr(type, "None]") == NULL)
		json_array_append_new(out, json_null());
	return out;
}

/* listKeys: GET /v1/keys */
void
h_keys(struct api_ctx *ctx, const struct api_req *req,
    const struct query *q, const struct route_match *m,
    struct api_resp *resp)
{
	json_t *items;
	size_t i;

	(void)ctx;
	(void)req;
	(void)m;
	if (query_only(q, no_params, resp) != 0)
		return;
	items = json_array();
	for (i = 0; i < keys_table_len; i++) {
		const struct key_def *k = &keys_table[i];
		/* No default in the table: a default_factory; say null. */
		json_t *def = k->def != NULL ? json_loads(k->def,
		    JSON_DECODE_ANY, NULL) : json_null();
		json_t *allowed = literal_values(k->type);

		json_array_append_new(items, json_pack(
		    "{s:s, s:s, s:o, s:o, s:o, s:o, s:o}",
		    "key", k->key, "type", k->type,
		    "default", def != NULL ? def : json_string(k->def != NULL ?
		    k->def : ""),
		    "allowed", allowed != NULL ? allowed : json_null(),
		    "alias", k->alias != NULL ? json_string(k->alias) :
		    json_null(),
		    "plugin", k->plugin != NULL ? json_string(k->plugin) :
		    json_null(),
		    "plugin_class", k->plugin_class != NULL ?
		    json_string(k->plugin_class) : json_null()));
	}
	api_json(resp, 200, json_pack("{s:o}", "items", items));
}
