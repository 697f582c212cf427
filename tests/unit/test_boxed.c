// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * test_boxed: work in a child process with limits (userland/lib/boxed.c): its
 * output comes back whole; a failure, a fault, memory past the limit, CPU
 * past the limit, an answer too large and a stop each end it with one
 * line and no output; the child holds none of the parent's descriptors.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/boxed.h"
#include "test.h"
#include "lib/util.h"

static const struct boxed_limits lim = {
	.mem_bytes = 64 << 20, .cpu_seconds = 1, .wall_seconds = 30,
	.out_max = 1 << 20,
};

static int say_hello(void *arg, FILE *out)
{
	(void)arg;
	return fputs("hello", out) < 0;
}

static int fail_now(void *arg, FILE *out)
{
	(void)arg;
	(void)out;
	return -1;
}

static int fault(void *arg, FILE *out)
{
	(void)out;
	raise(*(int *)arg);
	return 0;
}

/* 512 MiB, touched: past a 64 MiB limit malloc fails */
static int hog_memory(void *arg, FILE *out)
{
	size_t n = (size_t)512 << 20;
	char *p = malloc(n);

	(void)arg;
	(void)out;
	if (!p)
		return -1;
	memset(p, 1, n);
	free(p);
	return 0;
}

static int spin(void *arg, FILE *out)
{
	volatile unsigned long n = 0;

	(void)arg;
	(void)out;
	for (;;)
		n++;
	return 0;
}

static int too_much(void *arg, FILE *out)
{
	static char mb[1 << 20];
	int i;

	(void)arg;
	for (i = 0; i < 4; i++)
		if (fwrite(mb, 1, sizeof(mb), out) != sizeof(mb))
			return -1;
	return 0;
}

static int sleep_long(void *arg, FILE *out)
{
	(void)arg;
	(void)out;
	sleep(30);
	return 0;
}

/* Is the parent's fd closed in the child? */
static int fd_closed(void *arg, FILE *out)
{
	int fd = *(int *)arg;

	return fputs(fcntl(fd, F_GETFD) < 0 && errno == EBADF ? "closed" :
		     "open", out) < 0;
}

/* The caller's SIGINT handler: run in the child, it would end it. */
static void on_sigint(int sig)
{
	(void)sig;
	_exit(42);
}

static int get_sigint(void *arg, FILE *out)
{
	(void)arg;
	raise(SIGINT);
	return fputs("ok", out) < 0;
}

static volatile sig_atomic_t stop;

static void *stop_soon(void *arg)
{
	(void)arg;
	usleep(300 * 1000);
	stop = 1;
	return NULL;
}

static int run(int (*fn)(void *, FILE *), void *arg, char **buf, size_t *len,
	       char *msg, size_t size)
{
	return boxed__run(fn, arg, &lim, &stop, buf, len, msg, size);
}

int main(void)
{
	char *buf = NULL, msg[160] = "";
	size_t len = 0;
	int sig, p[2];
	pthread_t t;
	double t0;

	test_condf(run(say_hello, NULL, &buf, &len, msg, sizeof(msg)) == 0 &&
		   len == 5 && !memcmp(buf, "hello", 5),
		   "the child's output comes back whole (%zu bytes)", len);
	free(buf);

	test_condf(run(fail_now, NULL, &buf, &len, msg, sizeof(msg)) < 0 &&
		   !buf && !len && strstr(msg, "failed"),
		   "a failure: no output, one line (%s)", msg);

	sig = SIGSEGV;
	/* (under ASan its handler reports the fault and exits 1) */
	test_condf(run(fault, &sig, &buf, &len, msg, sizeof(msg)) < 0 &&
		   !buf && (strstr(msg, "egmentation") || strstr(msg, "failed")),
		   "a fault ends the child, not the caller (%s)", msg);

	test_condf(run(hog_memory, NULL, &buf, &len, msg, sizeof(msg)) < 0 &&
		   !buf, "512 MiB past a 64 MiB limit: refused (%s)", msg);

	t0 = monotonic_seconds();
	test_condf(run(spin, NULL, &buf, &len, msg, sizeof(msg)) < 0 &&
		   strstr(msg, "CPU") && monotonic_seconds() - t0 < 10,
		   "a child spinning past 1 s of CPU is ended (%s, %.1f s)",
		   msg, monotonic_seconds() - t0);

	test_condf(run(too_much, NULL, &buf, &len, msg, sizeof(msg)) < 0 &&
		   !buf && strstr(msg, "too large"),
		   "4 MiB written against a 1 MiB limit (%s)", msg);

	t0 = monotonic_seconds();
	pthread_create(&t, NULL, stop_soon, NULL);
	test_condf(run(sleep_long, NULL, &buf, &len, msg, sizeof(msg)) < 0 &&
		   !strcmp(msg, "stopped") && monotonic_seconds() - t0 < 5,
		   "stop set while it works: killed at once (%s, %.1f s)", msg,
		   monotonic_seconds() - t0);
	pthread_join(t, NULL);
	stop = 0;

	if (pipe(p)) {
		test_cond("pipe", 0);
		return test_report();
	}
	test_condf(run(fd_closed, &p[1], &buf, &len, msg, sizeof(msg)) == 0 &&
		   len == 6 && !memcmp(buf, "closed", 6),
		   "the parent's descriptors are closed in the child (%.*s)",
		   (int)len, buf ? buf : "");
	free(buf);

	/* a SIGINT in the child (Ctrl-C reaches the process group) */
	signal(SIGINT, on_sigint);
	test_condf(run(get_sigint, NULL, &buf, &len, msg, sizeof(msg)) == 0 &&
		   len == 2 && !memcmp(buf, "ok", 2),
		   "the caller's SIGINT handler does not run in the child (%s)",
		   buf ? "it finished" : msg);
	signal(SIGINT, SIG_DFL);
	free(buf);
	return test_report();
}
