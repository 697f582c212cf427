// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * boxed - work in a child process with limits.  See boxed.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/boxed.h"
#include "lib/util.h"

const struct boxed_limits boxed_symbolize = {
	.mem_bytes = 2048ULL << 20,
	.cpu_seconds = 120,
	.wall_seconds = 300,
	.out_max = (size_t)512 << 20,
};

/* The address space this process maps now (VmSize), in bytes. */
static uint64_t vm_size(void)
{
	unsigned long long pages = 0;
	FILE *f = fopen("/proc/self/statm", "re");

	if (f) {
		if (fscanf(f, "%llu", &pages) != 1)
			pages = 0;
		fclose(f);
	}
	return pages * (uint64_t)sysconf(_SC_PAGESIZE);
}

/* Close the descriptors from lo to hi (inclusive), but keep. */
static void close_from(int lo, int hi, int keep)
{
	int fd;

	if (keep >= lo && keep <= hi) {
		close_from(lo, keep - 1, -1);
		close_from(keep + 1, hi, -1);
		return;
	}
	if (lo > hi)
		return;
	if (close_range(lo, hi, 0))
		for (fd = lo; fd <= hi && fd < 4096; fd++)
			close(fd);
}

/*
 * In the child, signals first (they are all blocked until then): the
 * caller's handlers are not for this process (cli.c's would write
 * "stop=1" to a descriptor that is the pipe here), and a child outliving
 * its parent, dumping core (root's memory: keys, tokens) or spared by the
 * OOM killer is not wanted.
 */
static void child_signals(pid_t parent, const sigset_t *mask)
{
	static const int ignored[] = {
		SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGALRM, SIGUSR1, SIGUSR2,
	};
	struct rlimit core = { 0, 0 };
	size_t i;
	int fd;

	for (i = 0; i < sizeof(ignored) / sizeof(ignored[0]); i++)
		signal(ignored[i], SIG_IGN);
	signal(SIGPIPE, SIG_DFL);
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) || getppid() != parent)
		_exit(1);
	prctl(PR_SET_DUMPABLE, 0);
	setrlimit(RLIMIT_CORE, &core);
	fd = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);
	if (fd >= 0) {
		if (write(fd, "1000", 4) != 4) {
			/* best effort: the limits hold all the same */
		}
		close(fd);
	}
	pthread_sigmask(SIG_SETMASK, mask, NULL);
}

/*
 * In the child: the pipe as fd 3, *keep_fd above it, limits (0: none),
 * fn, out.
 */
static void child(int wfd, int *keep_fd, uint64_t as_bytes,
		  unsigned int cpu, int (*fn)(void *arg, FILE *out), void *arg)
{
	struct rlimit as = { .rlim_cur = as_bytes, .rlim_max = as_bytes };
	struct rlimit cpul = { .rlim_cur = cpu, .rlim_max = cpu + 1 };
	int keep = -1;
	FILE *out;

	/* the kept file out of the pipe's way: 3 is the pipe's */
	if (keep_fd) {
		keep = *keep_fd;
		if (keep <= 3 && (keep = fcntl(keep, F_DUPFD, 4)) < 0)
			_exit(1);
		*keep_fd = keep;
	}
	if (wfd != 3 && dup2(wfd, 3) != 3)
		_exit(1);
	/* no client's connection, no listening socket held open here */
	close_from(4, INT32_MAX, keep);
	if ((as_bytes && setrlimit(RLIMIT_AS, &as)) ||
	    (cpu && setrlimit(RLIMIT_CPU, &cpul)))
		_exit(1);
	out = fdopen(3, "w");
	if (!out)
		_exit(1);
	if (fn(arg, out)) {
		fclose(out);
		_exit(1);
	}
	/* _exit: no atexit handlers of the parent's run here */
	_exit(fclose(out) ? 1 : 0);
}

/*
 * Fork the child that runs fn writing to wfd: its pid, or -1 with why in
 * msg.
 */
static pid_t spawn(int wfd, int *keep_fd, const struct boxed_limits *lim,
		   int (*fn)(void *arg, FILE *out), void *arg, char *msg,
		   size_t size)
{
	uint64_t as_bytes = lim->mem_bytes ? vm_size() + lim->mem_bytes : 0;
	pid_t pid, self = getpid();
	sigset_t all, mask;

	/* no handler of ours may run in the child before it resets them */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &mask);
	pid = fork();
	if (pid == 0) {
		child_signals(self, &mask);
		child(wfd, keep_fd, as_bytes, lim->cpu_seconds, fn, arg);
	}
	pthread_sigmask(SIG_SETMASK, &mask, NULL);
	if (pid < 0)
		snprintf(msg, size, "no child process: %s", strerror(errno));
	return pid;
}

/* Why a child died of sig (strsignal() is not thread-safe). */
static const char *signal_why(int sig)
{
	switch (sig) {
	case SIGXCPU:
		return "it used all its CPU time";
	case SIGKILL:
		return "it was killed (its CPU time, or out of memory)";
	case SIGSEGV:
		return "it crashed (Segmentation fault)";
	case SIGBUS:
		return "it crashed (Bus error)";
	case SIGABRT:
		return "it aborted";
	default:
		return "it died of a signal";
	}
}

/* Wait for pid's end: waitpid()'s return, its status in *status. */
static pid_t reap(pid_t pid, int *status)
{
	pid_t ret;

	while ((ret = waitpid(pid, status, 0)) < 0 && errno == EINTR)
		;
	return ret;
}

/*
 * Why the child failed, waitpid() having returned ret and status; NULL if
 * it did not.
 */
static const char *ended_why(pid_t ret, int status)
{
	if (ret < 0)
		return "its exit status was lost";
	if (WIFSIGNALED(status))
		return signal_why(WTERMSIG(status));
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		return "it failed (see the line before), or ran out of memory";
	return NULL;
}

/* Append what fd has now to *buf.  1 at end of file, 0 more to come, -1. */
static int take(int fd, char **buf, size_t *len, size_t *cap, size_t max)
{
	char chunk[65536];
	ssize_t n = read(fd, chunk, sizeof(chunk));

	if (n == 0)
		return 1;
	if (n < 0)
		return errno == EINTR || errno == EAGAIN ? 0 : -1;
	if (*len + n > max)
		return -1;
	if (grow_array(buf, cap, *len + n, 1))
		return -1;
	memcpy(*buf + *len, chunk, n);
	*len += n;
	return 0;
}

int boxed__run(int (*fn)(void *arg, FILE *out), void *arg,
	       const struct boxed_limits *lim,
	       const volatile sig_atomic_t *stop, char **buf, size_t *len,
	       char *msg, size_t size)
{
	return boxed__run_fd(fn, arg, NULL, lim, stop, buf, len, msg, size);
}

int boxed__run_fd(int (*fn)(void *arg, FILE *out), void *arg, int *keep_fd,
		  const struct boxed_limits *lim,
		  const volatile sig_atomic_t *stop, char **buf, size_t *len,
		  char *msg, size_t size)
{
	double until = monotonic_seconds() + lim->wall_seconds;
	size_t cap = 0;
	int pfd[2], status = 0, ret = 0;
	const char *why = NULL;
	pid_t pid;

	*buf = NULL;
	*len = 0;
	if (pipe2(pfd, O_CLOEXEC)) {
		snprintf(msg, size, "no pipe: %s", strerror(errno));
		return -1;
	}
	pid = spawn(pfd[1], keep_fd, lim, fn, arg, msg, size);
	if (pid < 0) {
		close(pfd[0]);
		close(pfd[1]);
		return -1;
	}
	close(pfd[1]);
	while (!ret) {
		struct pollfd p = { .fd = pfd[0], .events = POLLIN };

		if (stop && *stop) {
			why = "stopped";
			break;
		}
		if (monotonic_seconds() > until) {
			why = "it ran out of time";
			break;
		}
		if (poll(&p, 1, 100) > 0) {
			ret = take(pfd[0], buf, len, &cap, lim->out_max);
			if (ret < 0)
				why = "its answer was too large";
		}
	}
	close(pfd[0]);
	if (why)
		kill(pid, SIGKILL);
	ret = reap(pid, &status);
	if (!why)
		why = ended_why(ret, status);
	if (why) {
		snprintf(msg, size, "%s", why);
		free(*buf);
		*buf = NULL;
		*len = 0;
		return -1;
	}
	/* nothing written is an empty answer, not none */
	if (!*buf && !(*buf = calloc(1, 1))) {
		snprintf(msg, size, "out of memory");
		return -1;
	}
	return 0;
}

int boxed__start(struct boxed_child *c, int (*fn)(void *arg, FILE *out),
		 void *arg, int out_fd, const struct boxed_limits *lim,
		 char *msg, size_t size)
{
	c->until = monotonic_seconds() + lim->wall_seconds;
	c->pid = spawn(out_fd, NULL, lim, fn, arg, msg, size);
	return c->pid < 0 ? -1 : 0;
}

int boxed__wait(struct boxed_child *c, bool block, char *msg, size_t size)
{
	const char *why = NULL;
	int status = 0;
	pid_t ret;

	for (;;) {
		ret = waitpid(c->pid, &status, WNOHANG);
		if (ret < 0 && errno == EINTR)
			continue;
		if (ret)
			break;
		if (monotonic_seconds() > c->until) {
			why = "it ran out of time";
			kill(c->pid, SIGKILL);
			reap(c->pid, &status);
			break;
		}
		if (!block)
			return 1;
		/* a child's end wakes no one here: look again soon */
		usleep(10000);
	}
	c->pid = -1;
	if (!why)
		why = ended_why(ret, status);
	if (why) {
		snprintf(msg, size, "%s", why);
		return -1;
	}
	return 0;
}

void boxed__stop(struct boxed_child *c)
{
	int status;

	if (c->pid <= 0)
		return;
	kill(c->pid, SIGKILL);
	reap(c->pid, &status);
	c->pid = -1;
}
