// SPDX-License-Identifier: GPL-2.0
/*
 * spin ROUNDS [READ_KB]: a fixed amount of CPU work for the benchmarks
 * (tests/vm/tests/b_*.sh): unlike tests/workloads/cpuburn, which runs for
 * a time, spin does ROUNDS rounds of
 *
 *   main -> a -> b -> leaf1 (1 unit) -> leaf2 (2 units) -> leaf3 (4 units)
 *                  -> rd: read() READ_KB KiB of /dev/zero (default 0: none)
 *
 * so the time it takes measures what a profiler running beside it costs.
 * Frame pointers (-fno-omit-frame-pointer) make the user stacks walkable by
 * both profilers; READ_KB adds kernel-mode samples under a user stack.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "../workloads/burn.h"

static char buf[64 * 1024];
static int zero_fd = -1;
static size_t read_bytes;

NOINLINE void rd(void)
{
	size_t left = read_bytes;

	while (left) {
		size_t n = left < sizeof(buf) ? left : sizeof(buf);
		ssize_t r = read(zero_fd, buf, n);

		if (r <= 0) {
			perror("spin: read /dev/zero");
			exit(1);
		}
		left -= r;
	}
}

NOINLINE void b(void)
{
	leaf1();
	leaf2();
	leaf3();
	if (read_bytes)
		rd();
	__asm__ volatile("" ::: "memory");
}

NOINLINE void a(unsigned long rounds)
{
	while (rounds--)
		b();
}

int main(int argc, char **argv)
{
	unsigned long rounds;

	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: spin ROUNDS [READ_KB]\n");
		return 2;
	}
	rounds = strtoul(argv[1], NULL, 10);
	if (argc == 3)
		read_bytes = strtoul(argv[2], NULL, 10) * 1024;
	if (read_bytes) {
		zero_fd = open("/dev/zero", O_RDONLY);
		if (zero_fd < 0) {
			perror("spin: open /dev/zero");
			return 1;
		}
	}
	a(rounds);
	printf("spin: %lu rounds\n", rounds);
	return 0;
}
