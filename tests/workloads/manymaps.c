// SPDX-License-Identifier: GPL-2.0
/*
 * manymaps N [SECONDS]: map this program's own code N times more (each a
 * separate executable mapping of the file), then spin for SECONDS (default
 * 3) in the copy of manymaps_spin() in the last mapping, called from
 * main().  A profile must still name manymaps_spin: the module lists tens
 * of thousands of mappings for one process.  Prints its pid and the spin
 * address.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common.h"

static volatile int stop;

/* Self-contained: it runs from a copy, where only relative jumps work. */
NOINLINE unsigned long manymaps_spin(volatile int *done)
{
	unsigned long n = 0;

	while (!*done)
		n++;
	return n;
}

static void on_alarm(int sig)
{
	(void)sig;
	stop = 1;
}

/* The executable mapping of this program holding @addr: start and offset. */
static int text_of(uintptr_t addr, uintptr_t *start, uintptr_t *end,
		   unsigned long *off)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512], perms[8];
	int found = 0;

	if (!f)
		return -1;
	while (!found && fgets(line, sizeof(line), f))
		found = sscanf(line, "%lx-%lx %7s %lx", start, end, perms, off) == 4 &&
			addr >= *start && addr < *end && perms[2] == 'x';
	fclose(f);
	return found ? 0 : -1;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? strtol(argv[1], NULL, 10) : 0;
	double seconds = argc > 2 ? strtod(argv[2], NULL) : 3;
	uintptr_t start, end, spin = (uintptr_t)manymaps_spin;
	unsigned long (*copy)(volatile int *) = manymaps_spin;
	unsigned long off;
	int fd;

	if (n < 1 || n > 60000 || seconds <= 0) {
		fprintf(stderr, "usage: manymaps N [SECONDS]\n");
		return 2;
	}
	fd = open("/proc/self/exe", O_RDONLY);
	if (fd < 0 || text_of(spin, &start, &end, &off)) {
		perror("manymaps: own text");
		return 1;
	}
	for (long i = 0; i < n; i++) {
		char *p = mmap(NULL, end - start, PROT_READ | PROT_EXEC,
			       MAP_PRIVATE, fd, off);

		if (p == MAP_FAILED) {
			perror("manymaps: mmap");
			return 1;
		}
		copy = (void *)(p + (spin - start));
	}
	printf("manymaps: pid %d, %ld mappings, spinning at %p\n", (int)getpid(),
	       n, (void *)copy);
	fflush(stdout);
	signal(SIGALRM, on_alarm);
	alarm((unsigned int)(seconds + 0.5));
	copy(&stop);
	return 0;
}
