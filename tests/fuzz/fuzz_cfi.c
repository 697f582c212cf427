// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * libFuzzer target: one input is one file given to cfi_compile() (cfi.c),
 * which compiles an ELF file's .eh_frame and .debug_frame through libelf
 * and libdw into the rows of an unwind table.  Such files are anyone's to
 * write: nothing may crash, leak, hang, blow up memory, or read or write
 * out of bounds (built with ASan and UBSan).  The input is written into a
 * memfd, which cfi_compile() maps like any file.
 *
 * The outcome is checked, and anything wrong aborts (a finding like a
 * crash), with a line "fuzz_cfi: ..." saying what:
 *  - a table: n >= 1 and at most CPROF_UTABLE_ROWS_MAX, pc strictly
 *    increasing, every row's cfa_base <= CPROF_CFA_MAX and fp_rule <=
 *    CPROF_FP_MAX, the last row CPROF_CFA_NONE (cprof_format.h);
 *  - a refusal: err is one non-empty line, no '\n' or '\r', NUL-terminated
 *    within errlen (err is a heap buffer of exactly errlen bytes, so ASan
 *    sees a write past it).
 * With CPROF_FUZZ_VERBOSE set, each input's table (cfi_table_print()) or
 * reason goes to stderr.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "unwind/cfi.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define ERRLEN	256

static int in_fd = -1;
static int verbose;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	in_fd = memfd_create("cfi", MFD_CLOEXEC);
	if (in_fd < 0)
		abort();
	verbose = getenv("CPROF_FUZZ_VERBOSE") != NULL;
	return 0;
}

static void __attribute__((noreturn, format(printf, 1, 2)))
bad(const char *fmt, ...)
{
	va_list ap;

	fputs("fuzz_cfi: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	abort();
}

static void check_table(const struct cfi_table *t)
{
	size_t i;

	if (t->n < 1 || t->n > CPROF_UTABLE_ROWS_MAX)
		bad("table accepted with %zu rows", t->n);
	if (!t->pc || !t->row)
		bad("table of %zu rows without its arrays", t->n);
	for (i = 0; i < t->n; i++) {
		if (i && t->pc[i] <= t->pc[i - 1])
			bad("row %zu: pc %#x not above row %zu's %#x", i,
			    (unsigned int)t->pc[i], i - 1,
			    (unsigned int)t->pc[i - 1]);
		if (t->row[i].cfa_base > CPROF_CFA_MAX)
			bad("row %zu: cfa_base %u", i,
			    (unsigned int)t->row[i].cfa_base);
		if (t->row[i].fp_rule > CPROF_FP_MAX)
			bad("row %zu: fp_rule %u", i,
			    (unsigned int)t->row[i].fp_rule);
	}
	if (t->row[t->n - 1].cfa_base != CPROF_CFA_NONE)
		bad("last row (%zu) has cfa_base %u, not CPROF_CFA_NONE",
		    t->n - 1, (unsigned int)t->row[t->n - 1].cfa_base);
}

static void check_reason(const char *err)
{
	size_t len = strnlen(err, ERRLEN);

	if (len == ERRLEN)
		bad("refused with a reason not NUL-terminated within %d bytes",
		    ERRLEN);
	if (!len)
		bad("refused with an empty reason");
	if (strpbrk(err, "\n\r"))
		bad("refused with a reason of more than one line: \"%s\"", err);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cfi_table t;
	char *err;
	int ret;

	if (ftruncate(in_fd, 0) || ftruncate(in_fd, (off_t)size) ||
	    pwrite(in_fd, data, size, 0) != (ssize_t)size)
		abort();
	err = malloc(ERRLEN);
	if (!err)
		abort();
	memset(err, 'x', ERRLEN);	/* a reason must be written, and ended */
	ret = cfi_compile(in_fd, &t, err, ERRLEN);
	if (ret == 0) {
		check_table(&t);
		if (verbose)
			cfi_table_print(stderr, &t);
	} else if (ret == -1) {
		check_reason(err);
		if (verbose)
			fprintf(stderr, "refused: %s\n", err);
	} else {
		bad("cfi_compile() returned %d", ret);
	}
	cfi_table_free(&t);
	free(err);
	return 0;
}
