// SPDX-License-Identifier: GPL-2.0
/*
 * diowait DEVICE [SECONDS]: waits on a slow device, for SECONDS (default
 * 5): thread "dio" reads 4 KiB of DEVICE with O_DIRECT (no page cache:
 * every read goes to the device) once in dio_short(), three times in
 * dio_long(), in turn; on a device that takes the same time for every read
 * (dm-delay), its time off the CPU splits about 1:3 between them.  Prints
 * "dio TID" once it runs.  With DIOWAIT_LOG set, appends to that file after
 * each pair "T0 T1 T2 SHORT LONG": when dio_short began, when it returned
 * and dio_long did (CLOCK_MONOTONIC, ns: the module's clock), and the
 * microseconds spent off the CPU in each (clock time less the thread's CPU
 * time), as the thread measured them: the device's delay is not exactly
 * the same for every read under a loaded emulator.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "common.h"

static int fd;
static void *buf;

static void dio_read(void)
{
	if (pread(fd, buf, 4096, 0) != 4096) {
		perror("diowait: pread");
		exit(1);
	}
}

NOINLINE void dio_short(void)
{
	dio_read();
}

NOINLINE void dio_long(void)
{
	dio_read();
	dio_read();
	dio_read();
}

/* Clock time less this thread's CPU time: a wait adds only time off the CPU. */
static double off_sec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return now_sec() - (ts.tv_sec + ts.tv_nsec / 1e9);
}

int main(int argc, char **argv)
{
	const char *log = getenv("DIOWAIT_LOG");
	double end, t0, t1, t2;
	long long m0, m1, m2;
	int logfd = -1;

	if (argc < 2) {
		fprintf(stderr, "usage: diowait DEVICE [SECONDS]\n");
		return 2;
	}
	end = now_sec() + parse_seconds(argc - 1, argv + 1, 5);
	fd = open(argv[1], O_RDONLY | O_DIRECT | O_CLOEXEC);
	if (fd < 0 || posix_memalign(&buf, 4096, 4096)) {
		fprintf(stderr, "diowait: %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	if (log) {
		logfd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC,
			     0644);
		if (logfd < 0)
			perror("diowait: DIOWAIT_LOG");
	}
	prctl(PR_SET_NAME, "dio");
	printf("dio %ld\n", (long)syscall(SYS_gettid));
	fflush(stdout);
	while (now_sec() < end) {
		m0 = now_ns();
		t0 = off_sec();
		dio_short();
		t1 = off_sec();
		m1 = now_ns();
		dio_long();
		t2 = off_sec();
		m2 = now_ns();
		if (logfd >= 0)
			dprintf(logfd, "%lld %lld %lld %.0f %.0f\n", m0, m1, m2,
				(t1 - t0) * 1e6, (t2 - t1) * 1e6);
	}
	return 0;
}
