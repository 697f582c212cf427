// SPDX-License-Identifier: GPL-2.0
/*
 * threads [SECONDS [CHURN_US]]: two threads, one pinned to CPU 0 and one to
 * CPU 1, each spinning for SECONDS (default 5).  Prints "cpu0 TID" and
 * "cpu1 TID" lines (flushed as soon as both threads run) so a test can
 * match the tid labels of a profile with the CPU each thread ran on.  Fails
 * if a CPU is missing.  With CHURN_US, the main thread meanwhile keeps
 * about 8 short threads, pinned to CPU 0, each sleeping CHURN_US and
 * exiting: threads that exit while a snapshot looks at them.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "common.h"

struct spinner {
	int cpu;
	double seconds;
	pid_t tid;
	pthread_t thread;
};

static volatile unsigned long sink;
static pthread_barrier_t started;

NOINLINE void spin_cpu0(double end)
{
	while (now_sec() < end)
		for (int i = 0; i < 100000; i++)
			sink += i;
}

NOINLINE void spin_cpu1(double end)
{
	while (now_sec() < end)
		for (int i = 0; i < 100000; i++)
			sink += i;
}

static void *spinner_main(void *arg)
{
	struct spinner *s = arg;
	cpu_set_t set;
	int err;

	CPU_ZERO(&set);
	CPU_SET(s->cpu, &set);
	err = pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	if (err) {
		fprintf(stderr, "threads: failed to pin to cpu%d: %s\n", s->cpu, strerror(err));
		exit(1);
	}
	s->tid = syscall(SYS_gettid);
	pthread_barrier_wait(&started);
	if (s->cpu == 0)
		spin_cpu0(now_sec() + s->seconds);
	else
		spin_cpu1(now_sec() + s->seconds);
	return NULL;
}

static void nap_us(long us)
{
	struct timespec ts = { us / 1000000, us % 1000000 * 1000 };

	nanosleep(&ts, NULL);
}

static void *churn_main(void *arg)
{
	nap_us((long)arg);
	return NULL;
}

/* Until @end: a new thread every CHURN_US / 8, each living CHURN_US. */
static void churn(double end, long us)
{
	pthread_attr_t attr;
	pthread_t t;
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(0, &set);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setaffinity_np(&attr, sizeof(set), &set);
	while (now_sec() < end) {
		if (!pthread_create(&t, &attr, churn_main, (void *)us))
			nap_us(us / 8 + 1);
		else
			nap_us(1000);
	}
}

int main(int argc, char **argv)
{
	struct spinner s[2] = { { .cpu = 0 }, { .cpu = 1 } };
	double seconds = parse_seconds(argc, argv, 5);
	int i, err;

	pthread_barrier_init(&started, NULL, 3);
	for (i = 0; i < 2; i++) {
		s[i].seconds = seconds;
		err = pthread_create(&s[i].thread, NULL, spinner_main, &s[i]);
		if (err) {
			fprintf(stderr, "threads: failed to create thread: %s\n", strerror(err));
			return 1;
		}
	}
	pthread_barrier_wait(&started);
	for (i = 0; i < 2; i++)
		printf("cpu%d %d\n", s[i].cpu, (int)s[i].tid);
	fflush(stdout);
	if (argc > 2)
		churn(now_sec() + seconds, atol(argv[2]) > 0 ? atol(argv[2]) : 1000);
	for (i = 0; i < 2; i++)
		pthread_join(s[i].thread, NULL);
	return 0;
}
