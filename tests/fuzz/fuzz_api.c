/*
 * tests/fuzz/fuzz_api: libFuzzer targets for the HTTP layer's parsers,
 * driven through api_handle() on an in-memory store that holds a few
 * checks (so reads, lists, diffs and cursors do real work).
 *
 * Built twice by `make fuzz`:
 *   FUZZ_MODE_JSON   the input is a JSON request body, sent as
 *                    application/json to POST /v1/checks?dry_run=true,
 *                    POST /v1/estimate, (stored) POST /v1/checks or POST
 *                    /v1/diagnose, picked by the first byte: the JSON
 *                    request decoders (context, labels, name, config,
 *                    context.model; log, check_id).
 *   FUZZ_MODE_ROUTE  the input is "METHOD path?query" up to the first
 *                    newline, the rest a YAML body: the router, percent
 *                    decoding and every query-string parser (filters,
 *                    cursors, dates, limits, context values).
 * Any input must give a response with a valid status, never a crash, a
 * leak or undefined behaviour.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "api/api.h"
#include "core/arena.h"
#include "server/store_sqlite.h"
#include "tests/fixture_api.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

static struct store_sqlite *store;
static struct api_ctx ctx;
static struct fixture_fakes fakes;
static size_t stored;

static void
call(const char *method, const char *path, const char *query,
    const char *ctype, const char *body, size_t len)
{
	struct api_resp resp;
	struct arena a;

	arena_init(&a, (size_t)64 << 20);
	fixture_api_call(&ctx, &a, &resp, method, path, query, ctype, body,
	    len);
	if (resp.status < 200 || resp.status > 599)
		abort();
	api_resp_fini(&resp);
	arena_fini(&a);
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	static const char cfg[] = "base_model: meta-llama/Llama-3.1-8B\n"
	    "datasets:\n  - path: x\n    type: alpaca\nsequence_len: 2048\n"
	    "sequence_len: 4096\nmicro_batch_size: 1\n"
	    "gradient_accumulation_steps: 1\n";
	struct err e = { 0 };
	int i;

	(void)argc;
	(void)argv;
	if (store_sqlite_open(&store, ":memory:", false, &e) != 0)
		abort();
	fixture_api_ctx(&ctx, store, &fakes, 1);
	for (i = 0; i < 4; i++)
		call("POST", "/v1/checks", i % 2 ? "name=a.yaml" : "name=b.yaml",
		    "application/yaml", cfg, sizeof(cfg) - 1);
	return 0;
}

#ifdef FUZZ_MODE_JSON
int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned pick = size > 0 ? data[0] : 0;
	const char *body = (const char *)data + (size > 0);
	size_t len = size > 0 ? size - 1 : 0;

	if ((pick & 3) == 0)
		call("POST", "/v1/estimate", "", "application/json", body, len);
	else if ((pick & 3) == 1 && stored < 2000) {
		/* Stored, so the write path sees hostile names and labels;
		   bounded so the in-memory store stays small. */
		stored++;
		call("POST", "/v1/checks", "", "application/json", body, len);
	} else if ((pick & 3) == 3 && stored < 2000) {
		/* The diagnose request decoder (#19); with a config it stores
		   a check and a diagnosis. */
		stored++;
		call("POST", "/v1/diagnose", "", "application/json", body, len);
	} else
		call("POST", "/v1/checks", "dry_run=true",
		    "application/json; charset=utf-8", body, len);
	return 0;
}
#endif

#ifdef FUZZ_MODE_ROUTE
int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const methods[] = { "GET", "POST", "HEAD",
	    "DELETE", "OPTIONS", "PUT" };
	const char *nl = memchr(data, '\n', size);
	size_t line = nl != NULL ? (size_t)(nl - (const char *)data) : size;
	char *head = malloc(line + 1);
	char *path, *query, *sp;
	const char *method = "GET";
	size_t i;

	if (head == NULL)
		return 0;
	memcpy(head, data, line);
	head[line] = '\0';
	if (strlen(head) != line) {	/* a NUL: the server never passes one */
		free(head);
		return 0;
	}
	path = head;
	sp = strchr(head, ' ');
	if (sp != NULL) {
		*sp = '\0';
		for (i = 0; i < sizeof(methods) / sizeof(methods[0]); i++)
			if (strcmp(head, methods[i]) == 0)
				method = methods[i];
		path = sp + 1;
	}
	query = strchr(path, '?');
	if (query != NULL)
		*query++ = '\0';
	else
		query = path + strlen(path);
	if (strcmp(method, "POST") == 0 && stored >= 2000 &&
	    strstr(query, "dry_run=true") == NULL) {
		free(head);
		return 0;
	}
	if (strcmp(method, "POST") == 0)
		stored++;
	call(method, path, query, "application/yaml",
	    nl != NULL ? nl + 1 : "", nl != NULL ? size - line - 1 : 0);
	free(head);
	return 0;
}
#endif
