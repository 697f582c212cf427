// SPDX-License-Identifier: GPL-2.0
/*
 * readzero [SECONDS]: read() /dev/zero in a loop for SECONDS (default 5), so
 * that most samples are in the kernel (read_zero, copy-to-user) under a
 * user stack main -> read_loop -> read.  Prints the bytes read.
 *
 * Each read() asks for a different length (4 to 64 KiB) at a different
 * offset: a loop of identical reads runs with a period so regular under
 * emulation that a profiler's fixed-period timer can lock onto it and see
 * one phase of it only (which of read_zero and the clearing routine it
 * calls gets the samples then swings by tens of points from run to run).
 */
#include <fcntl.h>
#include <unistd.h>

#include "common.h"

static char buf[68 * 1024];

NOINLINE unsigned long long read_loop(int fd, double seconds)
{
	double end = now_sec() + seconds;
	unsigned long long total = 0;
	unsigned int i = 0, x = 2463534242u;

	do {
		size_t len, off;
		ssize_t n;

		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		len = 4096 + x % (60 * 1024);
		off = (x >> 16) % 4096;
		n = read(fd, buf + off, len);

		if (n < 0) {
			perror("readzero: read /dev/zero");
			exit(1);
		}
		total += n;
	} while ((++i % 16) || now_sec() < end);
	return total;
}

int main(int argc, char **argv)
{
	double seconds = parse_seconds(argc, argv, 5);
	unsigned long long total;
	int fd;

	fd = open("/dev/zero", O_RDONLY);
	if (fd < 0) {
		perror("readzero: open /dev/zero");
		return 1;
	}
	total = read_loop(fd, seconds);
	close(fd);
	printf("readzero: %llu bytes\n", total);
	return 0;
}
