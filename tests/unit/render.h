/*
 * render.h — for the tests of lib/report's renderers: a JSON document (as
 * the database or stats_status() would give it) through one renderer, the
 * text it appends returned (the caller frees it). A document that does not
 * parse is the test's own fault: it exits 2.
 */
#ifndef CRONQ_RENDER_H
#define CRONQ_RENDER_H

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>

#include "util/buf.h"

typedef void (*render_fn) (buf *out, const json_t *doc, void *arg);

static inline char *
render_with(const char *json, render_fn fn, void *arg)
{
	json_error_t jerr;
	json_t *doc = json_loads(json, 0, &jerr);
	buf out = BUF_INIT;

	if (doc == NULL) {
		printf("bad test document: %s\n", jerr.text);
		exit(2);
	}
	fn(&out, doc, arg);
	json_decref(doc);
	return buf_steal(&out);
}

/* The same for a renderer that takes no argument. */
typedef void (*render_doc_fn) (buf *out, const json_t *doc);

static inline void
render_call(buf *out, const json_t *doc, void *fn)
{
	(*(render_doc_fn *) fn)(out, doc);
}

static inline char *
render_doc(const char *json, render_doc_fn fn)
{
	return render_with(json, render_call, &fn);
}

#endif
