// SPDX-License-Identifier: GPL-2.0
/*
 * hostile KIND [SECONDS]: spin (in user mode and in getppid() system calls)
 * with a frame-pointer register that a profiler's user stack walk must not
 * trust.  KIND:
 *   loop       a frame whose saved frame pointer points to itself
 *   down       a chain that goes down the stack instead of up
 *   kernel     the frame pointer holds a kernel address
 *   misaligned the frame pointer is not 8-byte aligned
 *   unmapped   the frame pointer points to an unmapped page
 *   deep       a valid chain of 1000 frames (deeper than any depth limit)
 * The walk must end (truncated or faulted), never crash or hang the kernel,
 * and never read kernel memory.
 */
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common.h"

#define DEEP 1000

/* Spin with %rbp = fp for a while, half in user mode, half in syscalls. */
NOINLINE void spin_with_fp(unsigned long fp)
{
	unsigned long n = 200000;

	__asm__ volatile(
		"push %%rbp\n\t"
		"mov %[fp], %%rbp\n\t"
		"1:\n\t"
		"mov %[nr], %%eax\n\t"
		"syscall\n\t"
		"mov $50, %%edx\n\t"
		"2: dec %%edx\n\t"
		"jnz 2b\n\t"
		"dec %[n]\n\t"
		"jnz 1b\n\t"
		"pop %%rbp\n\t"
		: [n] "+r"(n)
		: [fp] "r"(fp), [nr] "i"(SYS_getppid)
		: "rax", "rcx", "rdx", "r11", "memory", "cc");
}

int main(int argc, char **argv)
{
	/* On main's stack: above the spinning frame, as real frames are. */
	unsigned long frames[2 * DEEP + 2] __attribute__((aligned(16)));
	double seconds = parse_seconds(argc - 1, argv + 1, 3);
	const char *kind = argc > 1 ? argv[1] : "";
	double end = now_sec() + seconds;
	unsigned long fp;
	void *page;
	int i;

	if (!strcmp(kind, "loop")) {
		frames[0] = (unsigned long)&frames[0];
		frames[1] = (unsigned long)main;
		fp = (unsigned long)&frames[0];
	} else if (!strcmp(kind, "down")) {
		frames[2 * 8] = (unsigned long)&frames[0];
		frames[2 * 8 + 1] = (unsigned long)main;
		frames[0] = (unsigned long)&frames[2 * 8];
		frames[1] = (unsigned long)main;
		fp = (unsigned long)&frames[2 * 8];
	} else if (!strcmp(kind, "kernel")) {
		fp = 0xffffffff81000000ul;
	} else if (!strcmp(kind, "misaligned")) {
		fp = (unsigned long)&frames[0] + 3;
	} else if (!strcmp(kind, "unmapped")) {
		page = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS,
			    -1, 0);
		if (page == MAP_FAILED) {
			perror("hostile: mmap");
			return 1;
		}
		fp = (unsigned long)page;
	} else if (!strcmp(kind, "deep")) {
		for (i = 0; i < DEEP; i++) {
			frames[2 * i] = i + 1 < DEEP ?
				(unsigned long)&frames[2 * (i + 1)] : 0;
			frames[2 * i + 1] = (unsigned long)spin_with_fp;
		}
		fp = (unsigned long)&frames[0];
	} else {
		fprintf(stderr, "usage: hostile loop|down|kernel|misaligned|unmapped|deep [SECONDS]\n");
		return 2;
	}
	while (now_sec() < end)
		spin_with_fp(fp);
	return 0;
}
