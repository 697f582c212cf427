// SPDX-License-Identifier: GPL-2.0
/*
 * diowait DEVICE [SECONDS]: waits on a slow device, for SECONDS (default
 * 5): thread "dio" reads 4 KiB of DEVICE with O_DIRECT (no page cache:
 * every read goes to the device) once in dio_short(), three times in
 * dio_long(), in turn; on a device that takes the same time for every read
 * (dm-delay), its time off the CPU splits 1:3 between them.  Prints
 * "dio TID" once it runs.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
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

int main(int argc, char **argv)
{
	double end;

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
	prctl(PR_SET_NAME, "dio");
	printf("dio %ld\n", (long)syscall(SYS_gettid));
	fflush(stdout);
	while (now_sec() < end) {
		dio_short();
		dio_long();
	}
	return 0;
}
