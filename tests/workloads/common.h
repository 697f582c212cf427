/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the sample workloads: argument parsing and a monotonic
 * clock.  Header-only so that each workload stays a single translation unit
 * plus this file.
 */
#ifndef WORKLOAD_COMMON_H
#define WORKLOAD_COMMON_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/*
 * noinline alone still lets GCC clone or fold a function (IPA); noipa keeps
 * each one a real frame under its own name, which is what a profile test
 * checks for.
 */
#define NOINLINE __attribute__((noinline, noipa))

static inline double now_sec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The same clock in nanoseconds: the cprof module's time stamps'. */
static inline long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* CPU time of the process, in seconds. */
static inline double cpu_sec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * Parse argv[1] as a duration in seconds (may be fractional), falling back to
 * @def when absent.  Exits with a message naming the bad value otherwise.
 */
static inline double parse_seconds(int argc, char **argv, double def)
{
	char *end;
	double v;

	if (argc < 2)
		return def;
	errno = 0;
	v = strtod(argv[1], &end);
	if (errno || end == argv[1] || *end || v < 0 || v > 86400) {
		fprintf(stderr, "%s: bad duration '%s' (seconds, 0..86400)\n",
			argv[0], argv[1]);
		exit(2);
	}
	return v;
}

#endif /* WORKLOAD_COMMON_H */
