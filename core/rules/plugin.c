/*
 * core/rules/plugin: what Axolotl's smaller plugins check (SwanLab,
 * Spectrum, NeMo Gym, diffusion).  A plugin's keys and validators exist
 * only with the plugin listed, so every rule here needs it.  Pure: a rule
 * reads the config through its struct rule_ctx and reports
 * (docs/rules-howto.md).
 */
#include <stdlib.h>

#include "core/rules_int.h"
#include "core/types.h"

/* v as a pydantic float field reads it: a number, or a string Python's
   float() takes ('1e-3'), into *out. */
static bool
float_of(const struct doc_node *v, double *out)
{
	char *end;
	double f;

	if (node_num(v, out))
		return true;
	if (v == NULL || v->kind != DOC_STR ||
	    !ty_python_float(v->text, v->len))
		return false;
	f = strtod(v->text, &end);
	if (end == v->text || *end != '\0')
		return false;
	*out = f;
	return true;
}

/* plugin.diffusion_mask_ratios: DiffusionConfig._validate_mask_ratios
   (defaults 0.1 and 0.9), on the values pydantic parsed. */
static int
check_plugin_diffusion(struct rule_ctx *rc)
{
	const struct doc_pair *d = cfg_pair(rc, "diffusion");
	double lo = 0.1, hi = 0.9;

	if (!plugin_on(rc, "diffusion") || d == NULL ||
	    d->value->kind != DOC_MAP)
		return 0;
	if (doc_map_get(d->value, "min_mask_ratio") != NULL &&
	    !float_of(doc_map_value(d->value, "min_mask_ratio"), &lo))
		return 0;	/* a type error, schema.type's */
	if (doc_map_get(d->value, "max_mask_ratio") != NULL &&
	    !float_of(doc_map_value(d->value, "max_mask_ratio"), &hi))
		return 0;
	if (lo <= hi)
		return 0;
	return rule_report(rc, d, "diffusion.min_mask_ratio (%g) is above "
	    "max_mask_ratio (%g)", lo, hi);
}

/* plugin.nemo_gym_config: NemoGymArgs.check_nemo_gym_config. */
static int
check_plugin_nemo_gym(struct rule_ctx *rc)
{
	const struct doc_pair *as = cfg_pair(rc, "nemo_gym_auto_start");

	if (!plugin_on(rc, "nemo_gym") || !cfg_on(rc, "nemo_gym_enabled"))
		return 0;
	if (!cfg_on(rc, "nemo_gym_config_paths") &&
	    (as == NULL || doc_truthy(as->value)))
		return rule_report(rc, cfg_pair(rc, "nemo_gym_enabled"),
		    "nemo_gym_enabled needs nemo_gym_config_paths (or "
		    "nemo_gym_auto_start: false)");
	if (!cfg_on(rc, "nemo_gym_datasets"))
		return rule_report(rc, cfg_pair(rc, "nemo_gym_enabled"),
		    "nemo_gym_enabled needs nemo_gym_datasets");
	return 0;
}

/* plugin.spectrum_fsdp_orig_params: SpectrumArgs.
   check_fsdp_use_orig_params, on fsdp_config as written. */
static int
check_plugin_spectrum(struct rule_ctx *rc)
{
	const struct doc_pair *fc = cfg_pair(rc, "fsdp_config");

	if (!plugin_on(rc, "spectrum") || !cfg_plugin(rc, "SpectrumPlugin") ||
	    !cfg_on(rc, "fsdp") || fc == NULL || !doc_truthy(fc->value))
		return 0;
	if (fc->value->kind == DOC_MAP &&
	    doc_truthy(doc_map_value(fc->value, "use_orig_params")))
		return 0;
	return rule_report(rc, fc, "FSDP with the Spectrum plugin needs "
	    "fsdp_config.use_orig_params: true");
}

/* plugin.swanlab_mode: SwanLabConfig's field validator (and the plugin's
   register()). */
static int
check_plugin_swanlab_mode(struct rule_ctx *rc)
{
	const struct doc_pair *m = cfg_pair(rc, "swanlab_mode");

	if (!plugin_on(rc, "swanlab") || m == NULL ||
	    m->value->kind != DOC_STR || node_is(m->value, "cloud") ||
	    node_is(m->value, "local") || node_is(m->value, "offline") ||
	    node_is(m->value, "disabled"))
		return 0;
	return rule_report(rc, m, "swanlab_mode must be cloud, local, offline "
	    "or disabled, got '%.40s'", m->value->text);
}

/* plugin.swanlab_project_required: use_swanlab defaults to true with the
   plugin; then a project name is required (SwanLabConfig validators and
   the plugin's register()). */
static int
check_plugin_swanlab_project(struct rule_ctx *rc)
{
	const struct doc_pair *u = cfg_pair(rc, "use_swanlab");
	const struct doc_pair *p = cfg_pair(rc, "swanlab_project");

	if (!plugin_on(rc, "swanlab"))
		return 0;
	if (p != NULL && p->value->kind == DOC_STR) {
		const char *t = p->value->text;

		while (*t == ' ' || *t == '\t' || *t == '\n' || *t == '\r')
			t++;
		if (*t == '\0')
			return rule_report(rc, p, "swanlab_project is empty");
	}
	if ((u != NULL && !doc_truthy(u->value)) ||
	    (p != NULL && doc_truthy(p->value)))
		return 0;
	return rule_report(rc, u != NULL ? u : cfg_pair(rc, "plugins"),
	    "SwanLab is on (use_swanlab defaults to true with its plugin) but "
	    "swanlab_project is not set");
}

const struct rule_row rules_plugin[] = {
	{ "plugin.diffusion_mask_ratios", SEV_ERROR,
	  "diffusion min_mask_ratio above max_mask_ratio",
	  "make min_mask_ratio <= max_mask_ratio",
	  check_plugin_diffusion },
	{ "plugin.nemo_gym_config", SEV_ERROR,
	  "NeMo Gym enabled without its resource configs or datasets",
	  "set nemo_gym_config_paths and nemo_gym_datasets",
	  check_plugin_nemo_gym },
	{ "plugin.spectrum_fsdp_orig_params", SEV_ERROR,
	  "Spectrum with FSDP and use_orig_params off",
	  "set fsdp_config.use_orig_params: true",
	  check_plugin_spectrum },
	{ "plugin.swanlab_mode", SEV_ERROR,
	  "a swanlab_mode SwanLab does not know",
	  "use cloud, local, offline or disabled",
	  check_plugin_swanlab_mode },
	{ "plugin.swanlab_project_required", SEV_ERROR,
	  "SwanLab on without a project",
	  "set swanlab_project, or use_swanlab: false",
	  check_plugin_swanlab_project },
};
const size_t rules_plugin_len =
    sizeof(rules_plugin) / sizeof(rules_plugin[0]);
