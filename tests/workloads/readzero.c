// SPDX-License-Identifier: GPL-2.0
/*
 * readzero [SECONDS]: read() /dev/zero in a loop for SECONDS (default 5), so
 * that most samples are in the kernel (read_zero, copy-to-user) under a
 * user stack main -> read_loop -> read.  Prints the bytes read.
 */
#include <fcntl.h>
#include <unistd.h>

#include "common.h"

static char buf[64 * 1024];

NOINLINE unsigned long long read_loop(int fd, double seconds)
{
	double end = now_sec() + seconds;
	unsigned long long total = 0;
	unsigned int i = 0;

	do {
		ssize_t n = read(fd, buf, sizeof(buf));

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
