// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * libFuzzer target: one input is one cprof stream, taken through everything
 * cprof-dump does with a stream short of reading binaries: the decoder
 * (stream.c), aggregation (profile.c), the model without symbolization
 * (resolve.c) and the pprof, folded and top writers.  Nothing may crash,
 * leak, or read or write out of bounds (built with ASan and UBSan).  Paths
 * in the input's mapping records are never opened.
 *
 * What the pipeline writes to stderr is caught per input and checked: a
 * rejected stream gives exactly one line, "cprof-dump: in: ... at byte N",
 * an accepted one none; anything else aborts (a finding like a crash).
 * libFuzzer and the sanitizers keep the real stderr.  With CPROF_FUZZ_VERBOSE
 * set, the pipeline's lines go straight to stderr instead, unchecked (to
 * see them even when an input crashes).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "pipeline.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define REJECT_PREFIX	"cprof-dump: in: "

static FILE *sink;
static FILE *real_stderr;
static int in_fd = -1;
static int verbose;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	sink = fopen("/dev/null", "w");
	in_fd = memfd_create("stream", MFD_CLOEXEC);
	if (!sink || in_fd < 0)
		abort();
	real_stderr = stderr;
	verbose = getenv("CPROF_FUZZ_VERBOSE") != NULL;
	return 0;
}

/* The messages of one input are what its outcome says they must be. */
static int messages_ok(int ret, const char *msg, size_t len)
{
	if (ret == 0)
		return len == 0;
	return len > strlen(REJECT_PREFIX) &&
	       !strncmp(msg, REJECT_PREFIX, strlen(REJECT_PREFIX)) &&
	       memchr(msg, '\n', len) == msg + len - 1 &&
	       strlen(msg) == len && strstr(msg, " at byte ");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *msg = NULL;
	size_t len = 0;
	FILE *errs;
	int ret;

	if (ftruncate(in_fd, 0) || pwrite(in_fd, data, size, 0) != (ssize_t)size ||
	    lseek(in_fd, 0, SEEK_SET))
		abort();
	if (verbose) {
		pipeline_convert(in_fd, sink);
		return 0;
	}
	/* userland writes its messages through the stderr variable */
	errs = open_memstream(&msg, &len);
	if (!errs)
		abort();
	stderr = errs;
	ret = pipeline_convert(in_fd, sink);
	stderr = real_stderr;
	fclose(errs);
	if (!messages_ok(ret, msg, len)) {
		fprintf(stderr, "fuzz_stream: input %s with %zu bytes on stderr, not %s:\n%.*s\n",
			ret ? "rejected" : "converted", len,
			ret ? "one line \"" REJECT_PREFIX "... at byte N\"" : "none",
			(int)len, msg);
		abort();
	}
	free(msg);
	return 0;
}
