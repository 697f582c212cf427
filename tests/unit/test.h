/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * test.h - a tiny harness for cprof's host unit tests (in the spirit of sds's
 * test_cond).
 *
 * How to use it:
 *
 *	#include "test.h"
 *
 *	int main(void)
 *	{
 *		struct ksyms *ks = ksyms__load("fixture", NULL);
 *
 *		test_cond("load a fixture", ks != NULL);
 *		test_condf(ks && ksyms__addr_of(ks, "schedule") == 0x1000,
 *			   "schedule at %#x", 0x1000);
 *		ksyms__free(ks);
 *		return test_report();
 *	}
 *
 * - test_cond(name, expr) counts one check: prints "ok   name" when expr is
 *   true, "FAIL name (file:line)" when false.  It never aborts, so every later
 *   check still runs; guard pointers yourself (ks && ...).
 * - test_condf(expr, fmt, ...) is the same with a printf-style name.
 * - test_skip(why) ends a test that cannot run here (a missing tool): prints
 *   "SKIP why" and exits 77.  The runner reports it as skipped, not passed.
 * - test_report() prints "<prog>: N passed, N failed" and returns the exit
 *   status for main(): 0 if nothing failed, 1 otherwise.
 *
 * Each tests/unit/test_*.c is one binary; `make -C userland test` links it
 * with every userland object except the one with main(), runs it in a plain
 * and in an ASan+UBSan build, and adds up the counts.  A binary that crashes
 * or exits non-zero without a report counts as one failure.  Tests run with
 * the repository root as working directory and TEST_TMPDIR set to a fresh
 * directory removed afterwards; build fixtures there (e.g. with $CC).
 */
#ifndef CPROF_TEST_H
#define CPROF_TEST_H

#include <stdio.h>
#include <stdlib.h>

static int test_passed, test_failed;

#define test_cond(name, expr) do {					\
	if (expr) {							\
		test_passed++;						\
		printf("ok   %s\n", (name));				\
	} else {							\
		test_failed++;						\
		printf("FAIL %s (%s:%d)\n", (name), __FILE__, __LINE__);\
	}								\
	fflush(stdout);							\
} while (0)

#define test_condf(expr, ...) do {					\
	if (expr) {							\
		test_passed++;						\
		printf("ok   ");					\
		printf(__VA_ARGS__);					\
		printf("\n");						\
	} else {							\
		test_failed++;						\
		printf("FAIL ");					\
		printf(__VA_ARGS__);					\
		printf(" (%s:%d)\n", __FILE__, __LINE__);		\
	}								\
	fflush(stdout);							\
} while (0)

#define TEST_SKIP_EXIT	77

#define test_skip(why) do {						\
	printf("SKIP %s\n", (why));					\
	fflush(stdout);							\
	exit(TEST_SKIP_EXIT);						\
} while (0)

extern const char *__progname;

static inline int test_report(void)
{
	printf("%s: %d passed, %d failed\n", __progname, test_passed,
	       test_failed);
	fflush(stdout);
	return test_failed ? 1 : 0;
}

#endif /* CPROF_TEST_H */
