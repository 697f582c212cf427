// SPDX-License-Identifier: GPL-2.0
/*
 * deepswitch [SECONDS [DEPTH]]: pingpong's two threads passing a byte
 * through two pipes for SECONDS (default 3), each blocking DEPTH (default
 * 200) frames of descend() deep, built without frame pointers: every
 * switch an off-CPU profile records walks a user stack deeper than its
 * depth limit through the unwind tables, the most a recorded switch can
 * cost.  Prints "round_trips N per_second R depth D" at the end.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "common.h"

static int ping[2], pong[2];
static double end;

/* One side's loop: write to @out, read @in back; 0 when the other side is gone. */
NOINLINE static unsigned long bounce(int in, int out, int first)
{
	unsigned long n = 0;
	char c = 'x';

	for (;;) {
		if (first && now_sec() >= end)
			break;
		if (first && write(out, &c, 1) != 1)
			break;
		if (read(in, &c, 1) != 1)
			break;
		if (!first && write(out, &c, 1) != 1)
			break;
		n++;
	}
	return n;
}

/* @depth frames, then the loop; the volatile keeps each a real frame. */
NOINLINE static unsigned long descend(int depth, int in, int out, int first)
{
	volatile int pad = depth;
	unsigned long n;

	if (depth <= 0)
		return bounce(in, out, first);
	n = descend(depth - 1, in, out, first);
	return n + (pad & 0);
}

static int depth = 200;

static void *echo(void *arg)
{
	(void)arg;
	descend(depth, ping[0], pong[1], 0);
	return NULL;
}

int main(int argc, char **argv)
{
	double secs = parse_seconds(argc, argv, 3), t0;
	unsigned long n;
	pthread_t t;

	if (argc > 2) {
		char *e;
		long v = strtol(argv[2], &e, 10);

		if (*e || e == argv[2] || v < 0 || v > 10000) {
			fprintf(stderr, "deepswitch: bad depth '%s' (0..10000)\n",
				argv[2]);
			return 2;
		}
		depth = v;
	}
	if (pipe(ping) || pipe(pong) || pthread_create(&t, NULL, echo, NULL)) {
		perror("deepswitch");
		return 1;
	}
	t0 = now_sec();
	end = t0 + secs;
	n = descend(depth, pong[0], ping[1], 1);
	close(ping[1]);
	pthread_join(t, NULL);
	printf("round_trips %lu per_second %.0f depth %d\n", n,
	       n / (now_sec() - t0), depth);
	return 0;
}
