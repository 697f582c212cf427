// SPDX-License-Identifier: GPL-2.0
/*
 * pingpong [SECONDS]: two threads pass one byte back and forth through two
 * pipes for SECONDS (default 3): every round trip is two context switches
 * on each side (a read that blocks, a write that wakes the other).  Prints
 * "round_trips N per_second R" at the end: the cost of a context switch
 * shows in R.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

#include "common.h"

static int ping[2], pong[2];

static void *echo(void *arg)
{
	char c;

	(void)arg;
	while (read(ping[0], &c, 1) == 1)
		if (write(pong[1], &c, 1) != 1)
			break;
	return NULL;
}

int main(int argc, char **argv)
{
	double secs = parse_seconds(argc, argv, 3), t0, end;
	unsigned long n = 0;
	pthread_t t;
	char c = 'x';

	if (pipe(ping) || pipe(pong) || pthread_create(&t, NULL, echo, NULL)) {
		perror("pingpong");
		return 1;
	}
	t0 = now_sec();
	end = t0 + secs;
	while (now_sec() < end) {
		if (write(ping[1], &c, 1) != 1 || read(pong[0], &c, 1) != 1) {
			perror("pingpong");
			return 1;
		}
		n++;
	}
	close(ping[1]);
	pthread_join(t, NULL);
	printf("round_trips %lu per_second %.0f\n", n, n / (now_sec() - t0));
	return 0;
}
