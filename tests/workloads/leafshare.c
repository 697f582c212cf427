// SPDX-License-Identifier: GPL-2.0
/*
 * leafshare [SECONDS]: spin for SECONDS (default 5) in one small leaf shared
 * by three callers, in a known call graph:
 *
 *   main -> middle -> a -> spin   1 part of the work
 *                  -> b -> spin   2 parts
 *                  -> c -> spin   4 parts
 *
 * Built -O1 -g -fno-omit-frame-pointer (see the Makefile): a, b, c and middle
 * set up a frame (push %rbp), but GCC 12 gives the leaf spin() none, as it
 * needs no stack.  A frame-pointer unwind from a sample in spin() reads its
 * caller's frame as spin's and so loses a, b or c: every sample looks like
 * spin <- middle.  An unwinder that uses the DWARF CFI (.eh_frame) finds
 * spin <- a|b|c <- middle <- main, split 1:2:4.
 *
 * Prints how many rounds it did.
 */
#include "common.h"

#define UNIT 20000	/* iterations per spin() call: a few tens of microseconds */

static volatile unsigned long sink;

/* Registers only: no stack, hence no frame even with frame pointers on. */
NOINLINE unsigned long spin(unsigned long n)
{
	unsigned long x = n | 1;

	while (n--) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		__asm__ volatile("" : "+r"(x));
	}
	return x;
}

/* Each adds the result after the call: a call, not a tail jump. */
NOINLINE void a(void)
{
	sink += spin(UNIT);
}

NOINLINE void b(void)
{
	sink += spin(UNIT);
	sink += spin(UNIT);
}

NOINLINE void c(void)
{
	sink += spin(UNIT);
	sink += spin(UNIT);
	sink += spin(UNIT);
	sink += spin(UNIT);
}

NOINLINE unsigned long middle(double seconds)
{
	double end = now_sec() + seconds;
	unsigned long rounds = 0;

	do {
		a();
		b();
		c();
		rounds++;
	} while (now_sec() < end);
	return rounds;
}

int main(int argc, char **argv)
{
	double seconds = parse_seconds(argc, argv, 5);
	unsigned long rounds = middle(seconds);

	printf("leafshare: %lu rounds of a:b:c = 1:2:4 calls of spin\n", rounds);
	return 0;
}
