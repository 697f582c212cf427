// SPDX-License-Identifier: GPL-2.0
/*
 * parked N [NAP]: threads that wait where a thread snapshot should find them,
 * until killed (the main thread, "parkmain", in pause()):
 *   - N threads "parked" (64 KiB stacks), each in park_sleep() -> nap(),
 *     sleeping in nanosleep() NAP seconds at a time (default 1: N wake-ups
 *     a second, which for 10000 threads under emulation keep a CPU busy);
 *   - thread "piper", blocked in read_pipe() reading a pipe nobody writes;
 *   - thread "spinner", computing in spin() (on a CPU, or waiting for one);
 *   - a child process "stopped" that stopped itself (SIGSTOP);
 *   - a child process "traced", stopped in a ptrace stop under this one.
 * Built without frame pointers (as Debian's packages): its stacks need the
 * unwind tables.  Prints "ready PID" once every thread runs, then
 * "stopped PID" and "traced PID" for the children.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common.h"

static atomic_int running;
static long nap_s = 1;
static int fds[2];
static volatile unsigned long sink;

NOINLINE void nap(void)
{
	struct timespec ts = { nap_s, 0 };

	nanosleep(&ts, NULL);
}

NOINLINE void park_sleep(void)
{
	for (;;)
		nap();
}

NOINLINE void read_pipe(void)
{
	char c;

	for (;;)
		if (read(fds[0], &c, 1) <= 0)
			pause();
}

NOINLINE void spin(void)
{
	unsigned long i;

	for (;;)
		for (i = 0; i < 1000000; i++)
			sink += i;
}

static void *parked(void *arg)
{
	(void)arg;
	prctl(PR_SET_NAME, "parked");
	atomic_fetch_add(&running, 1);
	park_sleep();
	return NULL;
}

static void *piper(void *arg)
{
	(void)arg;
	prctl(PR_SET_NAME, "piper");
	atomic_fetch_add(&running, 1);
	read_pipe();
	return NULL;
}

static void *spinner(void *arg)
{
	(void)arg;
	prctl(PR_SET_NAME, "spinner");
	atomic_fetch_add(&running, 1);
	spin();
	return NULL;
}

static void start(void *(*fn)(void *), pthread_attr_t *attr)
{
	pthread_t t;
	int err = pthread_create(&t, attr, fn, NULL);

	if (err) {
		fprintf(stderr, "parked: pthread_create: %s\n", strerror(err));
		exit(1);
	}
}

/* A child stopped by a signal, or traced and stopped under this process. */
static pid_t child(const char *name, bool traced)
{
	pid_t pid = fork();

	if (pid < 0) {
		perror("parked: fork");
		exit(1);
	}
	if (!pid) {
		prctl(PR_SET_NAME, name);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (traced && ptrace(PTRACE_TRACEME, 0, NULL, NULL))
			_exit(1);
		raise(SIGSTOP);
		for (;;)
			pause();
	}
	/* a traced child's stop is reported to, and kept by, its tracer */
	if (traced)
		waitpid(pid, NULL, WUNTRACED);
	return pid;
}

int main(int argc, char **argv)
{
	pthread_attr_t attr;
	long i, n = argc > 1 ? strtol(argv[1], NULL, 10) : 100;
	pid_t stopped, traced;

	if (argc > 2)
		nap_s = strtol(argv[2], NULL, 10);
	if (n < 0 || n > 100000 || nap_s < 1 || nap_s > 86400 || pipe(fds)) {
		fprintf(stderr, "usage: parked N [NAP] (0..100000 threads, 1..86400 s a nap)\n");
		return 2;
	}
	prctl(PR_SET_NAME, "parkmain");
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 64 * 1024);
	for (i = 0; i < n; i++)
		start(parked, &attr);
	start(piper, &attr);
	start(spinner, &attr);
	while (atomic_load(&running) < n + 2)
		usleep(1000);
	stopped = child("stopped", false);
	traced = child("traced", true);
	printf("ready %d\nstopped %d\ntraced %d\n", (int)getpid(), (int)stopped,
	       (int)traced);
	fflush(stdout);
	for (;;)
		pause();
}
