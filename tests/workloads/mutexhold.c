// SPDX-License-Identifier: GPL-2.0
/*
 * mutexhold WAITERS SECONDS: one pthread mutex, contended.  Prints "ready
 * PID"; at each SIGUSR1 runs a round of SECONDS: a holder thread takes
 * the mutex in hold_few() for 4 ms and in hold_many() for 12 ms in turn,
 * unlocking it there, with a 3 ms pause after each, while WAITERS threads
 * lock and unlock it every 0.5 ms; then prints "done ROUND FEW_NS MANY_NS",
 * the time the mutex was held in each function as the holder measured it
 * (from the lock taken to the unlock).  Nothing else in the round waits
 * on a futex.  The holder names itself after the function it holds the
 * mutex in, so that a tool that knows the waker's name and kernel stack
 * only (BCC's wakeuptime) can tell the two apart.  Exits at SIGTERM.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "common.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_int running;		/* a round is on */
static atomic_int rounds;		/* SIGUSR1s seen */
static atomic_int quit;
static long long held_few, held_many;	/* the holder's only */

static void pause_ns(long ns)
{
	struct timespec ts = { 0, ns };

	nanosleep(&ts, NULL);
}

/* The mutex held for @ns, unlocked here: its time held added to *held. */
static void hold(long ns, long long *held)
{
	long long t0;

	pthread_mutex_lock(&lock);
	t0 = now_ns();
	pause_ns(ns);
	*held += now_ns() - t0;
	pthread_mutex_unlock(&lock);
}

static NOINLINE void hold_few(void)
{
	hold(4000000, &held_few);
	__asm__ volatile("" ::: "memory");	/* no tail call */
}

static NOINLINE void hold_many(void)
{
	hold(12000000, &held_many);
	__asm__ volatile("" ::: "memory");
}

static void *holder(void *arg)
{
	while (!atomic_load(&quit)) {
		if (!atomic_load(&running)) {
			pause_ns(1000000);
			continue;
		}
		prctl(PR_SET_NAME, "hold_few");
		hold_few();
		pause_ns(3000000);
		prctl(PR_SET_NAME, "hold_many");
		hold_many();
		pause_ns(3000000);
	}
	return arg;
}

static NOINLINE void *waiter(void *arg)
{
	while (!atomic_load(&quit)) {
		if (!atomic_load(&running)) {
			pause_ns(1000000);
			continue;
		}
		pthread_mutex_lock(&lock);
		pthread_mutex_unlock(&lock);
		pause_ns(500000);
	}
	return arg;
}

static void on_usr1(int sig)
{
	(void)sig;
	atomic_fetch_add(&rounds, 1);
}

static void on_term(int sig)
{
	(void)sig;
	atomic_store(&quit, 1);
}

int main(int argc, char **argv)
{
	int waiters = argc > 1 ? atoi(argv[1]) : 4, done = 0, i;
	double seconds = argc > 2 ? atof(argv[2]) : 3;
	pthread_t t;

	if (waiters < 1 || waiters > 64 || seconds <= 0) {
		fprintf(stderr, "usage: mutexhold WAITERS SECONDS\n");
		return 2;
	}
	signal(SIGUSR1, on_usr1);
	signal(SIGTERM, on_term);
	for (i = 0; i <= waiters; i++)
		if (pthread_create(&t, NULL, i ? waiter : holder, NULL)) {
			fprintf(stderr, "mutexhold: pthread_create failed\n");
			return 1;
		}
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	while (!atomic_load(&quit)) {
		if (atomic_load(&rounds) == done) {
			pause_ns(10000000);
			continue;
		}
		done++;
		pthread_mutex_lock(&lock);
		held_few = 0;
		held_many = 0;
		pthread_mutex_unlock(&lock);
		atomic_store(&running, 1);
		pause_ns((long)(seconds * 1e9) % 1000000000);
		sleep((unsigned int)seconds);
		atomic_store(&running, 0);
		/* the holder's last hold ends before the counts are read */
		pause_ns(50000000);
		pthread_mutex_lock(&lock);
		printf("done %d %lld %lld\n", done, held_few, held_many);
		pthread_mutex_unlock(&lock);
		fflush(stdout);
	}
	return 0;
}
