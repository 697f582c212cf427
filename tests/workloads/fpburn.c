// SPDX-License-Identifier: GPL-2.0
/*
 * fpburn [SECONDS] [THREADS]: burn THREADS CPUs (default 2) for SECONDS
 * (default 5) in cpuburn's call graph,
 *
 *   burner -> a -> b -> leaf1   1 part of the work
 *                     -> leaf2   2 parts
 *                     -> leaf3   4 parts
 *
 * on threads started by glibc's clone(), not pthread_create(): nothing but
 * this program's frame-pointer code is on their stacks.  Below burner()
 * is only the return into clone's thread start, which clears %rbp and
 * marks its own return address undefined in its call frame information:
 * a frame-pointer walk and a walk by unwind tables end there alike, with
 * the same frames.  A benchmark of the frame-pointer walk with and without
 * tables loaded (b_modules) compares the two on the same stacks; on
 * cpuburn the tables also walk libc's frames below main(), which the
 * frame-pointer walk cannot.
 *
 * The threads call nothing in libc (they share the main thread's TLS);
 * the main thread sleeps, then exits, which ends them.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "burn.h"

#define STACK_SIZE (256 * 1024)
#define THREADS_MAX 64

NOINLINE void b(void)
{
	leaf1();
	leaf2();
	leaf3();
	__asm__ volatile("" ::: "memory");
}

NOINLINE void a(void)
{
	b();
	__asm__ volatile("" ::: "memory");
}

NOINLINE int burner(void *arg)
{
	(void)arg;
	for (;;)
		a();
	return 0;
}

int main(int argc, char **argv)
{
	double secs = parse_seconds(argc, argv, 5);
	long threads = 2;
	char *end;
	int i;

	if (argc > 2) {
		threads = strtol(argv[2], &end, 10);
		if (*end || threads < 1 || threads > THREADS_MAX) {
			fprintf(stderr, "fpburn: bad thread count '%s' (1..%d)\n",
				argv[2], THREADS_MAX);
			return 2;
		}
	}
	for (i = 0; i < threads; i++) {
		char *stack = mmap(NULL, STACK_SIZE, PROT_READ | PROT_WRITE,
				   MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK,
				   -1, 0);

		if (stack == MAP_FAILED) {
			perror("fpburn: mmap");
			return 1;
		}
		if (clone(burner, stack + STACK_SIZE,
			  CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND |
			  CLONE_THREAD | CLONE_SYSVSEM, NULL) < 0) {
			perror("fpburn: clone");
			return 1;
		}
	}
	printf("fpburn: %ld threads\n", threads);
	fflush(stdout);
	usleep((useconds_t)(secs * 1e6));
	return 0;
}
