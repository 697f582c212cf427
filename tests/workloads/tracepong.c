// SPDX-License-Identifier: GPL-2.0
/*
 * tracepong [SECONDS [stop]]: two threads pass one byte back and forth
 * through two pipes for SECONDS (default 1), each in a function of its own
 * (ping_side, pong_side), and count what a timeline of them must show.
 * With "stop" it stops itself (SIGSTOP) first, its libraries mapped, until
 * a SIGCONT: time to start profiling its process.
 * Prints, once both are done:
 *   start_ns T                  when the first byte was sent (CLOCK_MONOTONIC)
 *   thread TID switches N before_ns A after_ns B
 *                               per thread: N, its context switches since
 *                               it was created (getrusage RUSAGE_THREAD,
 *                               voluntary and involuntary), read between
 *                               A and B, after its last round trip
 *   base TID switches N before_ns A after_ns B
 *                               the first thread's count the same way
 *                               before the second one is created (a
 *                               timeline of its process from then on)
 *   round_trips R
 * Every switch of a thread taking it off the CPU up to A is one of its N,
 * and none after B is.  Run it on one CPU (taskset -c 0) and the two
 * threads' runs alternate there.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common.h"

static int ping[2], pong[2];

struct side {
	long tid;
	long switches;
	long long before_ns, after_ns;
};

static struct side sides[2], base;

/* This thread's switches so far, read between two clock stamps. */
static void count_switches(struct side *s)
{
	struct rusage ru;

	s->tid = syscall(SYS_gettid);
	s->before_ns = now_ns();
	getrusage(RUSAGE_THREAD, &ru);
	s->after_ns = now_ns();
	s->switches = ru.ru_nvcsw + ru.ru_nivcsw;
}

static NOINLINE void *pong_side(void *arg)
{
	char c;

	(void)arg;
	while (read(ping[0], &c, 1) == 1)
		if (write(pong[1], &c, 1) != 1)
			break;
	count_switches(&sides[1]);
	return NULL;
}

static NOINLINE unsigned long ping_side(double secs, long long *start)
{
	unsigned long n = 0;
	double end;
	char c = 'x';

	*start = now_ns();
	end = now_sec() + secs;
	while (now_sec() < end) {
		if (write(ping[1], &c, 1) != 1 || read(pong[0], &c, 1) != 1) {
			perror("tracepong");
			exit(1);
		}
		n++;
	}
	count_switches(&sides[0]);
	return n;
}

int main(int argc, char **argv)
{
	double secs = parse_seconds(argc, argv, 1);
	unsigned long n;
	long long start;
	pthread_t t;
	int i;

	if (argc > 2 && strcmp(argv[2], "stop")) {
		fprintf(stderr, "tracepong: bad argument '%s' (stop)\n", argv[2]);
		return 2;
	}
	if (argc > 2)
		raise(SIGSTOP);
	count_switches(&base);
	if (pipe(ping) || pipe(pong) || pthread_create(&t, NULL, pong_side, NULL)) {
		perror("tracepong");
		return 1;
	}
	n = ping_side(secs, &start);
	/* pong_side's read ends: it counts, then returns */
	close(ping[1]);
	pthread_join(t, NULL);
	printf("start_ns %lld\n", start);
	for (i = 0; i < 2; i++)
		printf("thread %ld switches %ld before_ns %lld after_ns %lld\n",
		       sides[i].tid, sides[i].switches, sides[i].before_ns,
		       sides[i].after_ns);
	printf("base %ld switches %ld before_ns %lld after_ns %lld\n",
	       base.tid, base.switches, base.before_ns, base.after_ns);
	printf("round_trips %lu\n", n);
	return 0;
}
