// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * libFuzzer target: one input is one cprof stream, taken through everything
 * cprof-dump does with a stream short of reading binaries: the decoder
 * (stream.c), aggregation (profile.c), the model without symbolization
 * (resolve.c) and the pprof, folded and top writers.  Bad input must be
 * rejected with one line on stderr; nothing may crash, leak, or read or
 * write out of bounds (built with ASan and UBSan).  Paths in the input's
 * mapping records are never opened.  (tests/fuzz/run.sh runs it with
 * -close_fd_mask=2: those lines do not reach the terminal.)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "output.h"
#include "pprof.h"
#include "profile.h"
#include "resolve.h"
#include "stream.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static FILE *sink;
static int in_fd = -1;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	sink = fopen("/dev/null", "w");
	in_fd = memfd_create("stream", MFD_CLOEXEC);
	if (!sink || in_fd < 0)
		abort();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct resolve_opts opts = { .symbolize = false };
	const struct cprof_header *h;
	const struct cprof_rec *rec;
	struct resolved *r = NULL;
	struct profile *p = NULL;
	struct stream *s;
	int ret;

	if (ftruncate(in_fd, 0) || pwrite(in_fd, data, size, 0) != (ssize_t)size ||
	    lseek(in_fd, 0, SEEK_SET))
		abort();
	s = stream__new(in_fd, "fuzz");
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
	r = resolved__new(p, &opts);
	if (!r || pprof__write(r, sink, "sink") || output__folded(r, sink, "sink") ||
	    output__top(r, sink, "sink", 10))
		abort();
out:
	resolved__free(r);
	profile__free(p);
	stream__free(s);
	return 0;
}
