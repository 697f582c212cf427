// SPDX-License-Identifier: GPL-2.0
/*
 * spawner FEW MANY [WARM_SECONDS]: creates threads from known functions,
 * a round at each SIGUSR1, so that a test can start a profile first.
 * Prints "ready PID", then for each round: one thread from spawn_warm()
 * (the profile's first sight of the process: its mappings are listed
 * then), a pause of WARM_SECONDS (default 1), FEW threads from spawn_few()
 * and MANY from spawn_many(), interleaved, each joined before the next,
 * and "done ROUND FEW MANY".  Exits at SIGTERM.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "common.h"

/* counted after each creation: no spawn_*() ends in a tail call */
static volatile unsigned long made;

static void *idle_thread(void *arg)
{
	return arg;
}

/* One thread, created and joined; exits on failure. */
static void make_one(void)
{
	pthread_t t;
	int err = pthread_create(&t, NULL, idle_thread, NULL);

	if (err) {
		fprintf(stderr, "spawner: pthread_create: %d\n", err);
		exit(1);
	}
	pthread_join(t, NULL);
}

NOINLINE void spawn_warm(void)
{
	make_one();
	made++;
}

NOINLINE void spawn_few(void)
{
	make_one();
	made++;
}

NOINLINE void spawn_many(void)
{
	make_one();
	made++;
}

int main(int argc, char **argv)
{
	long few, many, made_few, made_many, round = 0, i;
	char *warm_arg[] = { argv[0], argc > 3 ? argv[3] : NULL };
	double warm = parse_seconds(argc > 3 ? 2 : 1, warm_arg, 1);
	struct timespec ts;
	sigset_t set;
	int sig;

	if (argc < 3 || (few = atol(argv[1])) < 0 || (many = atol(argv[2])) < 0) {
		fprintf(stderr, "usage: spawner FEW MANY [WARM_SECONDS]\n");
		return 2;
	}
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigaddset(&set, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	while (!sigwait(&set, &sig) && sig == SIGUSR1) {
		spawn_warm();
		ts.tv_sec = (time_t)warm;
		ts.tv_nsec = (long)((warm - ts.tv_sec) * 1e9);
		nanosleep(&ts, NULL);
		made_few = made_many = 0;
		/* interleaved: many, many, many, few, ... */
		for (i = 0; made_few < few || made_many < many; i++) {
			if (made_many < many && (i % 4 != 3 || made_few >= few)) {
				spawn_many();
				made_many++;
			} else {
				spawn_few();
				made_few++;
			}
		}
		printf("done %ld %ld %ld\n", ++round, made_few, made_many);
		fflush(stdout);
	}
	return 0;
}
