// SPDX-License-Identifier: GPL-2.0
/*
 * offwait [SECONDS]: known waits off the CPU, for SECONDS (default 5):
 *   - thread "sleeper": nap_short() sleeps 10 ms, nap_long() 30 ms, in
 *     turn: its time off the CPU splits 1:3 between them, but for each
 *     nap's overrun (more on a loaded machine, where it weighs more on the
 *     short nap); with OFFWAIT_NAPS=FILE it appends, after each pair,
 *     "T0 T1 T2 SHORT LONG": when nap_short began, when it returned and
 *     nap_long did (CLOCK_MONOTONIC, ns: the module's clock), and the
 *     microseconds each of the two kept it off the CPU (clock time less
 *     its CPU time: a host that stops the guest's CPU while the sleeper
 *     runs adds to both), so a test can compare a profile with the naps
 *     that lie in its window (FILE best on a fast file system: a write
 *     that blocks delays the next pair);
 *   - thread "reader": read_pipe() blocks reading a pipe that the main
 *     thread writes a byte to every 20 ms;
 *   - threads "locker" (two): each takes one mutex in wait_lock() (a futex
 *     wait while the other holds it), sleeps 5 ms holding it in
 *     hold_lock() and lets it go;
 *   - thread "worker": compute() runs 10 ms (of the clock: preempted
 *     time included), nap_work() sleeps 30 ms, in turn: its wall-clock
 *     time splits 1:3 between them, but for the overruns of each (a
 *     compute() preempted past its 10 ms, a late wakeup); with
 *     OFFWAIT_WORK=FILE it appends after each turn "T0 T1 T2": when
 *     compute() began, when it returned and nap_work() did (CLOCK_MONOTONIC,
 *     ns).
 * Every thread sets its name (comm) as above and prints "NAME TID" once it
 * runs, so a test can tell the threads apart.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "common.h"

static double end;
static int fds[2];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static void named(const char *name)
{
	prctl(PR_SET_NAME, name);
	printf("%s %ld\n", name, (long)syscall(SYS_gettid));
	fflush(stdout);
}

static void nap(long ms)
{
	struct timespec ts = { ms / 1000, ms % 1000 * 1000000 };

	while (nanosleep(&ts, &ts))
		;
}

NOINLINE void nap_short(void)
{
	nap(10);
}

NOINLINE void nap_long(void)
{
	nap(30);
}

/* Clock time less this thread's CPU time: a wait adds only time off the CPU. */
static double off_sec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return now_sec() - (ts.tv_sec + ts.tv_nsec / 1e9);
}

static void *sleeper(void *arg)
{
	const char *log = getenv("OFFWAIT_NAPS");
	double t0, t1, t2;
	long long m0, m1, m2;
	int fd = -1;

	(void)arg;
	if (log) {
		fd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
		if (fd < 0)
			perror("offwait: OFFWAIT_NAPS");
	}
	named("sleeper");
	while (now_sec() < end) {
		m0 = now_ns();
		t0 = off_sec();
		nap_short();
		t1 = off_sec();
		m1 = now_ns();
		nap_long();
		t2 = off_sec();
		m2 = now_ns();
		if (fd >= 0)
			dprintf(fd, "%lld %lld %lld %.0f %.0f\n", m0, m1, m2,
				(t1 - t0) * 1e6, (t2 - t1) * 1e6);
	}
	return NULL;
}

NOINLINE int read_pipe(void)
{
	char c;

	return read(fds[0], &c, 1) == 1;
}

static void *reader(void *arg)
{
	(void)arg;
	named("reader");
	while (read_pipe())
		;
	return NULL;
}

NOINLINE void wait_lock(void)
{
	pthread_mutex_lock(&lock);
	/* a call, not a jump: wait_lock keeps its frame */
	__asm__ volatile("" ::: "memory");
}

NOINLINE void hold_lock(void)
{
	nap(5);
	pthread_mutex_unlock(&lock);
}

static volatile unsigned long sink;

NOINLINE void compute(void)
{
	double stop = now_sec() + 0.010;

	while (now_sec() < stop)
		for (int i = 0; i < 1000; i++)
			sink += i;
}

NOINLINE void nap_work(void)
{
	nap(30);
}

static void *worker(void *arg)
{
	const char *log = getenv("OFFWAIT_WORK");
	long long t0, t1;
	int fd = -1;

	(void)arg;
	if (log) {
		fd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
		if (fd < 0)
			perror("offwait: OFFWAIT_WORK");
	}
	named("worker");
	while (now_sec() < end) {
		t0 = now_ns();
		compute();
		t1 = now_ns();
		nap_work();
		if (fd >= 0)
			dprintf(fd, "%lld %lld %lld\n", t0, t1, now_ns());
	}
	return NULL;
}

static void *locker(void *arg)
{
	(void)arg;
	named("locker");
	while (now_sec() < end) {
		wait_lock();
		hold_lock();
		/* let the other one have it: no spinning retake */
		sched_yield();
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t[5];
	int i;

	end = now_sec() + parse_seconds(argc, argv, 5);
	if (pipe(fds)) {
		perror("offwait: pipe");
		return 1;
	}
	if (pthread_create(&t[0], NULL, sleeper, NULL) ||
	    pthread_create(&t[1], NULL, reader, NULL) ||
	    pthread_create(&t[2], NULL, locker, NULL) ||
	    pthread_create(&t[3], NULL, locker, NULL) ||
	    pthread_create(&t[4], NULL, worker, NULL)) {
		fprintf(stderr, "offwait: cannot start its threads\n");
		return 1;
	}
	while (now_sec() < end) {
		nap(20);
		if (write(fds[1], "x", 1) != 1) {
			perror("offwait: write");
			return 1;
		}
	}
	close(fds[1]);
	for (i = 0; i < 5; i++)
		pthread_join(t[i], NULL);
	return 0;
}
