/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * What cprof-dump does with a stream, short of reading binaries: decode,
 * aggregate, build the model without symbolizing, write pprof, folded and
 * top.  For the tests that feed it damaged input: tests/unit/test_fuzz.c
 * and the libFuzzer target tests/fuzz/fuzz_stream.c.
 */
#ifndef CPROF_TEST_PIPELINE_H
#define CPROF_TEST_PIPELINE_H

#include <stdio.h>
#include <stdlib.h>

#include "output.h"
#include "pprof.h"
#include "profile.h"
#include "resolve.h"
#include "stream.h"

/*
 * The stream at fd's current offset, outputs to @sink.  -1: rejected, after
 * one line on stderr; 0: converted.  Aborts on what must never happen: out
 * of memory on small input, or a writer failing on an accepted stream.
 */
static inline int pipeline_convert(int fd, FILE *sink)
{
	struct resolve_opts o = { .symbolize = false };
	const struct cprof_header *h;
	const struct cprof_rec *rec;
	struct resolved *r = NULL;
	struct profile *p = NULL;
	struct stream *s = stream__new(fd, "in");
	int ret = -1;

	if (!s)
		abort();
	h = stream__read_header(s);
	if (!h)
		goto out;
	p = profile__new(h);
	if (!p)
		abort();
	while ((ret = stream__next(s, &rec)) > 0)
		if (profile__add(p, rec))
			abort();
	if (ret < 0)
		goto out;
	r = resolved__new(p, &o);
	if (!r || pprof__write(r, sink, "sink") || output__folded(r, sink, "sink", false) ||
	    output__top(r, sink, "sink", 5, false) || output__text(r, sink, "sink"))
		abort();
	ret = 0;
out:
	resolved__free(r);
	profile__free(p);
	stream__free(s);
	return ret;
}

#endif /* CPROF_TEST_PIPELINE_H */
