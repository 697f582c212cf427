// SPDX-License-Identifier: GPL-2.0
/*
 * heaper FEW_KB MANY_KB CHURN_KB [BLOCK]: allocates from known functions,
 * a round at each SIGUSR1, so that a test can start a heap profile first.
 * Prints "ready PID", then for each round: the blocks kept by the round
 * before freed, keep_few() and keep_many() keep FEW_KB and MANY_KB of
 * BLOCK-byte blocks (default 8192), keep_few's by realloc(NULL, BLOCK),
 * keep_many's by malloc and posix_memalign(16) in turn (glibc's realloc
 * and posix_memalign call its malloc), interleaved with churn(), which
 * allocates and frees CHURN_KB in all; then "done ROUND
 * few FEWBYTES many MANYBYTES churn CHURNBYTES": the truth, the live bytes
 * of each keeper and the bytes churn() allocated.  Then, at each SIGUSR2,
 * "speed NS": the nanoseconds one malloc and free of BLOCK bytes takes,
 * over a second of them.  Exits at SIGTERM.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common.h"

static void **kept;
static size_t nr_kept, cap_kept;
static size_t block = 8192;

static void keep(void *p)
{
	if (!p) {
		fprintf(stderr, "heaper: out of memory\n");
		exit(1);
	}
	memset(p, 1, block);
	if (nr_kept == cap_kept) {
		cap_kept = cap_kept ? 2 * cap_kept : 1024;
		kept = realloc(kept, cap_kept * sizeof(*kept));
		if (!kept)
			exit(1);
	}
	kept[nr_kept++] = p;
}

/* realloc(NULL, n): glibc's realloc jumps to malloc, counted once */
NOINLINE void keep_few(void)
{
	void *volatile none = NULL;	/* no folding into malloc() */

	keep(realloc(none, block));
}

/* malloc, and posix_memalign(16), which calls it, in turn */
NOINLINE void keep_many(void)
{
	static unsigned int n;
	void *p = NULL;

	if (n++ % 2)
		keep(malloc(block));
	else
		keep(posix_memalign(&p, 16, block) ? NULL : p);
}

/* allocates and frees: counted in alloc_space, never in inuse_space */
NOINLINE void churn(void)
{
	char *p = malloc(block);

	if (!p)
		exit(1);
	memset(p, 2, block);
	free(p);
}

/* ns one malloc and free pair takes, over a second of them */
static double speed(void)
{
	double t0 = now_sec(), t;
	long n = 0;

	do {
		churn();
		n++;
	} while ((t = now_sec()) - t0 < 1);
	return (t - t0) * 1e9 / n;
}

int main(int argc, char **argv)
{
	long few, many, churns, round = 0, f, m, c, i;
	sigset_t set;
	int sig;

	if (argc < 4 || (few = atol(argv[1])) < 0 ||
	    (many = atol(argv[2])) < 0 || (churns = atol(argv[3])) < 0) {
		fprintf(stderr, "usage: heaper FEW_KB MANY_KB CHURN_KB [BLOCK]\n");
		return 2;
	}
	if (argc > 4)
		block = strtoul(argv[4], NULL, 0);
	if (!block)
		return 2;
	few = few * 1024 / block;
	many = many * 1024 / block;
	churns = churns * 1024 / block;
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigaddset(&set, SIGUSR2);
	sigaddset(&set, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	while (!sigwait(&set, &sig) && sig != SIGTERM) {
		if (sig == SIGUSR2) {
			printf("speed %.0f\n", speed());
			fflush(stdout);
			continue;
		}
		for (i = 0; i < (long)nr_kept; i++)
			free(kept[i]);
		nr_kept = 0;
		/* interleaved: many, many, many, few, with churn between */
		for (f = m = c = i = 0; f < few || m < many || c < churns; i++) {
			if (m < many && (i % 4 != 3 || f >= few)) {
				keep_many();
				m++;
			} else if (f < few) {
				keep_few();
				f++;
			}
			while (c < churns && c * (few + many) <= i * churns) {
				churn();
				c++;
			}
			if (f >= few && m >= many)
				for (; c < churns; c++)
					churn();
		}
		printf("done %ld few %ld many %ld churn %ld\n", ++round,
		       f * (long)block, m * (long)block, c * (long)block);
		fflush(stdout);
	}
	return 0;
}
