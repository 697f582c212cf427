// SPDX-License-Identifier: GPL-2.0
/*
 * qsortsplit [SECONDS]: sort arrays with libc's qsort for SECONDS (default 5)
 * in a known call graph, built like a Debian package (-O2 -g, no frame
 * pointers: see the Makefile), so that a profile can check user-stack
 * unwinding through code and a libc that keep no frame pointers:
 *
 *   main -> sort_one   -> qsort -> ... -> cmp_int   1 part of the work
 *        -> sort_three -> qsort -> ... -> cmp_int   3 parts
 *
 * sort_one and sort_three do the same thing (refill the array from the same
 * pseudo-random sequence, sort it, check it); main calls sort_one once and
 * sort_three three times per round, so the split is 1:3 by construction and
 * the calls interleave every few milliseconds.  glibc's qsort sorts arrays of
 * 1024 bytes or more with a merge sort in a malloc()ed buffer, recursing
 * about log2(N) levels (msort_with_tmp) above cmp_int.
 *
 * Prints the rounds done and the time measured around each caller.
 */
#include <stdint.h>

#include "common.h"

#define N 16384		/* ints per sort: about 1 ms natively */

static int buf[N];
static volatile unsigned long sink;

NOINLINE int cmp_int(const void *pa, const void *pb)
{
	int a = *(const int *)pa, b = *(const int *)pb;

	return (a > b) - (a < b);
}

/* The same N values every time, so that every sort does the same work. */
static inline void fill(int *v)
{
	uint32_t x = 2463534242u;

	for (int i = 0; i < N; i++) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		v[i] = (int)(x >> 1);
	}
}

static inline void check(const int *v)
{
	if (v[0] > v[N / 2] || v[N / 2] > v[N - 1]) {
		fprintf(stderr, "qsortsplit: qsort left the array unsorted\n");
		exit(1);
	}
}

/*
 * Identical bodies.  The check after qsort() keeps the call a call (not a
 * jump), so the caller stays on the stack while qsort runs.
 */
NOINLINE void sort_one(void)
{
	fill(buf);
	qsort(buf, N, sizeof(buf[0]), cmp_int);
	check(buf);
	sink += buf[N / 2];
}

NOINLINE void sort_three(void)
{
	fill(buf);
	qsort(buf, N, sizeof(buf[0]), cmp_int);
	check(buf);
	sink += buf[N / 2];
}

int main(int argc, char **argv)
{
	double seconds = parse_seconds(argc, argv, 5);
	double t0, t1, t2, end, one = 0, three = 0;
	unsigned long rounds = 0;

	t2 = now_sec();
	end = t2 + seconds;
	do {
		t0 = t2;
		sort_one();
		t1 = now_sec();
		sort_three();
		sort_three();
		sort_three();
		t2 = now_sec();
		one += t1 - t0;
		three += t2 - t1;
		rounds++;
	} while (t2 < end);

	printf("qsortsplit: %lu rounds of sort_one:sort_three = 1:3, "
	       "measured %.3f s:%.3f s (%.1f%% in sort_one), %.2f ms per qsort\n",
	       rounds, one, three, 100 * one / (one + three),
	       1000 * (one + three) / (4 * rounds));
	return 0;
}
