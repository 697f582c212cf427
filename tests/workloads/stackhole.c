// SPDX-License-Identifier: GPL-2.0
/*
 * stackhole [SECONDS]: spend SECONDS (default 3) in spin(), a frameless
 * leaf called from holed(), whose frame holds 24 KiB that it writes and
 * then gives back, three pages of it, with madvise(MADV_DONTNEED): from
 * there to holed()'s return address, its stack has a hole of pages not in
 * memory, as a function that has made room for arrays it has not written
 * yet has (bzip2's mainSort()).  Built without frame pointers: a sample
 * reaches main only through the unwind tables, or a copy of the stack
 * walked with them.  Prints how many rounds it spun.
 */
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common.h"

#define PAD_PAGES	6
#define HOLE_PAGES	3

NOINLINE static unsigned long spin(double seconds)
{
	double end = now_sec() + seconds;
	unsigned long n = 0;
	volatile unsigned long x = 0;

	do {
		for (int i = 0; i < 100000; i++)
			x += i;
		n++;
	} while (now_sec() < end);
	return n;
}

NOINLINE static unsigned long holed(double seconds)
{
	long page = sysconf(_SC_PAGESIZE);
	char pad[PAD_PAGES * 4096];
	uintptr_t hole;

	if (page != 4096) {
		fprintf(stderr, "stackhole: pages of %ld bytes, not 4096\n", page);
		exit(1);
	}
	memset(pad, 1, sizeof(pad));
	/* whole pages inside pad, one of pad's left below them */
	hole = ((uintptr_t)pad + page - 1) / page * page + page;
	if (madvise((void *)hole, HOLE_PAGES * page, MADV_DONTNEED)) {
		perror("stackhole: madvise");
		exit(1);
	}
	return spin(seconds) + pad[0];
}

int main(int argc, char **argv)
{
	printf("%lu\n", holed(parse_seconds(argc, argv, 3)));
	return 0;
}
