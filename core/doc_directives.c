/*
 * core/doc_directives: the limit on YAML directives (%YAML, %TAG), checked
 * before libyaml parses a document.
 *
 * libyaml's parser compares each %TAG directive with every one before it
 * in the same document (yaml_parser_append_tag_directive), so n
 * directives cost n^2 / 2 string comparisons: 78,000 of them (1 MiB)
 * held a request thread for seconds in a release build and 27 s under
 * ASan, inside one yaml_parser_parse() call no event of ours can
 * interrupt.  Its scanner is linear, so the directives are counted with
 * it instead, and only when the text could hold more than the limit: a
 * directive starts at a line's first column with '%', and a config with
 * few such lines needs no scan at all.
 */
#include "doc_int.h"

#include <stdbool.h>
#include <stddef.h>
#include <yaml.h>

/* Lines that start with '%' (bytes after a line break or a BOM, counted
   generously: the last byte of NEL, LS, PS and the BOM too), stopping
   once past max. */
static size_t
percent_lines(const char *buf, size_t len, size_t max)
{
	size_t i, n = 0;
	unsigned char prev;

	for (i = 0; i < len && n <= max; i++) {
		if (buf[i] != '%')
			continue;
		prev = i > 0 ? (unsigned char)buf[i - 1] : '\n';
		if (prev == '\n' || prev == '\r' || prev == 0x85 ||
		    prev == 0xA8 || prev == 0xA9 || prev == 0xBF)
			n++;
	}
	return n;
}

int
doc_directives_check(const char *buf, size_t len, const struct limits *lim,
    struct err *e)
{
	yaml_parser_t p;
	yaml_token_t t;
	struct err_loc l;
	size_t n = 0;
	bool done = false;
	int rv = 0;

	if (percent_lines(buf, len, lim->max_directives) <=
	    lim->max_directives)
		return 0;
	if (!yaml_parser_initialize(&p))
		return err_set(e, ERR_NOMEM, NULL, "cannot initialize parser");
	yaml_parser_set_input_string(&p, (const unsigned char *)buf, len);
	yaml_parser_set_encoding(&p, YAML_UTF8_ENCODING);
	/* A scan error is left to the parse, which reports it in full. */
	while (!done && rv == 0 && yaml_parser_scan(&p, &t)) {
		done = t.type == YAML_STREAM_END_TOKEN;
		if ((t.type == YAML_TAG_DIRECTIVE_TOKEN ||
		    t.type == YAML_VERSION_DIRECTIVE_TOKEN) &&
		    ++n > lim->max_directives) {
			memset(&l, 0, sizeof(l));
			l.line = t.start_mark.line >= UINT32_MAX ? UINT32_MAX :
			    (unsigned)t.start_mark.line + 1;
			l.col = 1;
			rv = err_set(e, ERR_LIMIT, &l, "more than %zu YAML "
			    "directives (limit max_directives); a config "
			    "needs none", lim->max_directives);
		}
		yaml_token_delete(&t);
	}
	yaml_parser_delete(&p);
	return rv;
}
