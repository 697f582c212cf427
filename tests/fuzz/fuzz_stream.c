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

#include "pipeline.h"

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
	if (ftruncate(in_fd, 0) || pwrite(in_fd, data, size, 0) != (ssize_t)size ||
	    lseek(in_fd, 0, SEEK_SET))
		abort();
	pipeline_convert(in_fd, sink);
	return 0;
}
