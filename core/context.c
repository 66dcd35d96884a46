/*
 * core/context: the launch context, its one decoder and its defaults.
 * No I/O.
 */
#include "context.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu.h"

const struct context_field context_fields[] = {
	{ "gpus", "gpus", CONTEXT_COUNT },
	{ "world_size", "gpus", CONTEXT_COUNT },
	{ "nodes", "nodes", CONTEXT_COUNT },
	{ "gpu", "gpu", CONTEXT_TEXT },
	{ "interconnect", "interconnect", CONTEXT_TEXT },
	{ "torch", "torch", CONTEXT_TORCH },
	{ "gpu_memory_gib", "gpu_memory_gib", CONTEXT_GIB },
	{ "host_memory_gib", "host_memory_gib", CONTEXT_GIB },
	{ "dataset_tokens", "dataset_tokens", CONTEXT_TOKENS },
	{ NULL, NULL, CONTEXT_TEXT }
};

const struct context_field *
context_field_find(const char *name)
{
	const struct context_field *f;

	for (f = context_fields; f->name != NULL; f++)
		if (strcmp(f->name, name) == 0)
			return f;
	return NULL;
}

/* What a value of kind k must be, after "<subject> must be ". */
static const char *
kind_wants(enum context_kind k)
{
	switch (k) {
	case CONTEXT_COUNT:
		return "an integer from 1 to 1000000";
	case CONTEXT_GIB:
		return "a number of GiB from 0.1 to 1048576";
	case CONTEXT_TOKENS:
		return "a positive integer";
	case CONTEXT_TORCH:
		return "a version like 2.11";
	case CONTEXT_TEXT:
		break;
	}
	return "a string";
}

static int
bad_value(const struct context_field *f, const char *subject,
    struct err *e)
{
	return err_set(e, ERR_SCHEMA, NULL, "%s must be %s", subject,
	    kind_wants(f->kind));
}

int
context_set_long(struct context *c, const struct context_field *f,
    long long v, const char *subject, struct err *e)
{
	switch (f->kind) {
	case CONTEXT_COUNT:
		if (v < 1 || v > CONTEXT_COUNT_MAX)
			return bad_value(f, subject, e);
		if (strcmp(f->canon, "nodes") == 0)
			c->nodes = (long)v;
		else
			c->gpus = (long)v;
		return 0;
	case CONTEXT_TOKENS:
		if (v < 1)
			return bad_value(f, subject, e);
		c->dataset_tokens = v;
		return 0;
	case CONTEXT_GIB:
		return context_set_double(c, f, (double)v, subject, e);
	case CONTEXT_TORCH:
	case CONTEXT_TEXT:
		break;
	}
	return bad_value(f, subject, e);
}

int
context_set_double(struct context *c, const struct context_field *f,
    double v, const char *subject, struct err *e)
{
	if (f->kind != CONTEXT_GIB || !context_gib_valid(v))
		return bad_value(f, subject, e);
	if (strcmp(f->canon, "gpu_memory_gib") == 0)
		c->gpu_memory_gib = v;
	else
		c->host_memory_gib = v;
	return 0;
}

int
context_set(struct context *c, const struct context_field *f,
    const char *text, const char *subject, struct err *e)
{
	char *end;

	errno = 0;
	switch (f->kind) {
	case CONTEXT_COUNT:
	case CONTEXT_TOKENS: {
		long long v = strtoll(text, &end, 10);

		if (errno != 0 || end == text || *end != '\0')
			return bad_value(f, subject, e);
		return context_set_long(c, f, v, subject, e);
	}
	case CONTEXT_GIB: {
		double v = strtod(text, &end);

		if (errno != 0 || end == text || *end != '\0')
			return bad_value(f, subject, e);
		return context_set_double(c, f, v, subject, e);
	}
	case CONTEXT_TORCH:
		if (context_parse_torch(&c->torch, text) != 0)
			return bad_value(f, subject, e);
		return 0;
	case CONTEXT_TEXT:
		break;
	}
	if (strcmp(f->canon, "gpu") == 0)
		c->gpu = text;
	else
		c->interconnect = text;
	return 0;
}

void
context_default(struct context *c)
{
	memset(c, 0, sizeof(*c));
	c->gpus = 1;
	c->nodes = 1;
	c->gpu = "h100-sxm";
}

bool
context_gib_valid(double v)
{
	return v >= 0.1 && v <= 1048576;
}

int
context_parse_torch(int *out, const char *s)
{
	long v[3] = { 0, 0, 0 };
	int k = 0;

	while (k < 3) {
		long n = 0;
		int digits = 0;

		while (*s >= '0' && *s <= '9' && digits < 4) {
			n = n * 10 + (*s++ - '0');
			digits++;
		}
		if (digits == 0)
			return ERR_SCHEMA;
		v[k++] = n;
		if (*s != '.')
			break;
		s++;
	}
	if (*s != '\0' || k < 2 || v[0] > 9 || v[1] > 99 || v[2] > 9)
		return ERR_SCHEMA;
	*out = (int)(v[0] * 1000 + v[1] * 10 + v[2]);
	return 0;
}

int
context_resolve(struct context *c, struct err *e)
{
	static const char *const links[] = {
		"nvlink", "pcie", "infiniband", "ethernet"
	};
	const struct gpu *g;
	size_t i, n;
	char ids[200];
	size_t k = 0;

	if (c->gpus < 1)
		return err_set(e, ERR_SCHEMA, NULL,
		    "gpus must be >= 1, got %ld", c->gpus);
	if (c->nodes < 1)
		return err_set(e, ERR_SCHEMA, NULL,
		    "nodes must be >= 1, got %ld", c->nodes);
	if (c->gpus % c->nodes != 0)
		return err_set(e, ERR_SCHEMA, NULL,
		    "gpus (%ld) must be a multiple of nodes (%ld)", c->gpus,
		    c->nodes);
	if (c->gpu == NULL)
		c->gpu = "h100-sxm";
	g = gpu_find(c->gpu);
	if (g == NULL) {
		const struct gpu *all = gpu_all(&n);

		ids[0] = '\0';
		for (i = 0; i < n && k + 1 < sizeof(ids); i++) {
			int w = snprintf(ids + k, sizeof(ids) - k, "%s%s",
			    i > 0 ? " " : "", all[i].id);

			if (w < 0)
				break;
			k += (size_t)w;
		}
		return err_set(e, ERR_SCHEMA, NULL,
		    "unknown gpu '%.40s'; known ids: %s", c->gpu, ids);
	}
	c->gpu = g->id;
	c->gpus_per_node = c->gpus / c->nodes;
	if (c->torch == 0)
		c->torch = 2110;
	if (c->interconnect == NULL) {
		c->interconnect = c->nodes > 1 ? "infiniband" : g->link;
		return 0;
	}
	for (i = 0; i < sizeof(links) / sizeof(links[0]); i++)
		if (strcmp(c->interconnect, links[i]) == 0) {
			c->interconnect = links[i];
			return 0;
		}
	return err_set(e, ERR_SCHEMA, NULL,
	    "interconnect must be nvlink, pcie, infiniband or ethernet, "
	    "got '%.40s'", c->interconnect);
}
