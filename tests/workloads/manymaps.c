// SPDX-License-Identifier: GPL-2.0
/*
 * manymaps N [SECONDS [CHILD_MS [CHILDREN]]]: map this program's own code N times more
 * (each a separate executable mapping of the file), then spin for SECONDS
 * (default 3) in the copy of manymaps_spin() in the last mapping, called
 * from main().  A profile must still name manymaps_spin: the module lists
 * tens of thousands of mappings for one process.  Prints its pid and the
 * spin address.
 *
 * With CHILD_MS, for SECONDS or until CHILDREN (if given) are done: fork a
 * child (which inherits the N mappings), which spins CHILD_MS ms in a copy
 * of manymaps_spin() in a fresh anonymous executable page and exits; then
 * the next.  Each child is an address
 * space of N + a few executable mappings, sampled and gone.  Prints each
 * child's pid and page, then how many there were.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <sys/wait.h>
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

/* A child: spin @ms in a copy of manymaps_spin() in a new page, exit. */
static void child(long ms)
{
	struct itimerval t = { .it_value = { ms / 1000, ms % 1000 * 1000 } };
	unsigned long (*copy)(volatile int *);
	char *page;

	page = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (page == MAP_FAILED) {
		perror("manymaps: child page");
		_exit(1);
	}
	/* the function is a short loop: a page holds it */
	memcpy(page, (void *)(uintptr_t)manymaps_spin, 256);
	copy = (void *)page;
	printf("child %d at %p\n", (int)getpid(), (void *)page);
	fflush(stdout);
	signal(SIGALRM, on_alarm);
	setitimer(ITIMER_REAL, &t, NULL);
	copy(&stop);
	_exit(0);
}

/* Children one after the other for @seconds, @most (0: any); how many. */
static long children(double seconds, long ms, long most)
{
	double end = now_sec() + seconds;
	long n = 0;
	int status;
	pid_t pid;

	while (now_sec() < end && (!most || n < most)) {
		fflush(stdout);
		pid = fork();
		if (pid < 0) {
			perror("manymaps: fork");
			return -1;
		}
		if (!pid)
			child(ms);
		if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
		    WEXITSTATUS(status))
			return -1;
		n++;
	}
	return n;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? strtol(argv[1], NULL, 10) : 0;
	double seconds = argc > 2 ? strtod(argv[2], NULL) : 3;
	long ms = argc > 3 ? strtol(argv[3], NULL, 10) : 0;
	long most = argc > 4 ? strtol(argv[4], NULL, 10) : 0;
	uintptr_t start, end, spin = (uintptr_t)manymaps_spin;
	unsigned long (*copy)(volatile int *) = manymaps_spin;
	unsigned long off;
	int fd;

	if (n < 1 || n > 65000 || seconds <= 0 || ms < 0 || ms > 10000 ||
	    most < 0) {
		fprintf(stderr, "usage: manymaps N [SECONDS [CHILD_MS [CHILDREN]]]\n");
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
	if (ms) {
		printf("manymaps: pid %d, %ld mappings, children of %ld ms\n",
		       (int)getpid(), n, ms);
		n = children(seconds, ms, most);
		printf("manymaps: %ld children\n", n);
		return n < 0;
	}
	printf("manymaps: pid %d, %ld mappings, spinning at %p\n", (int)getpid(),
	       n, (void *)copy);
	fflush(stdout);
	signal(SIGALRM, on_alarm);
	alarm((unsigned int)(seconds + 0.5));
	copy(&stop);
	return 0;
}
