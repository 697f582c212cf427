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

#include "ingest/ingest.h"
#include "output/output.h"
#include "output/pprof.h"
#include "symbolize/resolve.h"

/*
 * The stream at fd's current offset, outputs to @sink.  -1: rejected, after
 * one line on stderr; 0: converted.  Aborts on what must never happen: a
 * writer failing on an accepted stream.
 */
static inline int pipeline_convert(int fd, FILE *sink)
{
	struct resolve_opts o = { .symbolize = false };
	struct ingest *in = ingest__open(fd, "in", NULL, NULL);
	struct resolved *r = NULL;
	int ret = -1;

	if (!in || ingest__run(in, NULL))
		goto out;
	r = resolved__new(ingest__profile(in), &o);
	if (!r || pprof__write(r, sink, "sink") || output__folded(r, sink, "sink", false) ||
	    output__top(r, sink, "sink", 5, false) || output__text(r, sink, "sink"))
		abort();
	ret = 0;
out:
	resolved__free(r);
	ingest__close(in);
	return ret;
}

#endif /* CPROF_TEST_PIPELINE_H */
