// SPDX-License-Identifier: GPL-2.0
/*
 * holdread FILE HOLD ACK: read FILE to its end in 1 MiB reads, the bytes
 * dropped, but read nothing while a file HOLD exists: it is looked for
 * after each read (so that a held /proc/cprof/profile reader has just
 * drained the module's rings) and then ACK is created, to say the reads
 * have stopped.  Prints the bytes read at the end.
 */
#include <fcntl.h>
#include <unistd.h>

#include "common.h"

static char buf[1 << 20];

int main(int argc, char **argv)
{
	unsigned long long total = 0;
	ssize_t n;
	int fd;

	if (argc != 4) {
		fprintf(stderr, "usage: holdread FILE HOLD ACK\n");
		return 2;
	}
	fd = open(argv[1], O_RDONLY);
	if (fd < 0) {
		perror(argv[1]);
		return 1;
	}
	for (;;) {
		if (!access(argv[2], F_OK)) {
			int ack = open(argv[3], O_WRONLY | O_CREAT, 0644);

			if (ack < 0) {
				perror(argv[3]);
				return 1;
			}
			close(ack);
			while (!access(argv[2], F_OK))
				usleep(5000);
		}
		n = read(fd, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			perror(argv[1]);
			return 1;
		}
		if (!n)
			break;
		total += n;
	}
	printf("%llu\n", total);
	return 0;
}
