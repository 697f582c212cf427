// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * heapfind: glibc's allocator found in a running process, at the
 * addresses the process itself resolves; a process whose malloc is
 * another file's refused, naming it.
 */
#include <dlfcn.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "run/heapfind.h"
#include "test.h"
#include "testutil.h"

/*
 * A program with an allocator of its own, exported, that says it runs
 * (a byte on its standard output: its libraries are mapped) and waits.
 */
static const char own_alloc[] =
"#include <stddef.h>\n#include <string.h>\n#include <unistd.h>\n"
"static char pool[1 << 20]; static size_t used;\n"
"void *malloc(size_t n) { void *p = pool + used;\n"
"  used += (n + 15) & ~(size_t)15; return used <= sizeof(pool) ? p : NULL; }\n"
"void free(void *p) { (void)p; }\n"
"void *calloc(size_t a, size_t b) { void *p = malloc(a * b);\n"
"  if (p) memset(p, 0, a * b); return p; }\n"
"void *realloc(void *o, size_t n) { void *p = malloc(n);\n"
"  if (p && o) memcpy(p, o, n); return p; }\n"
"int main(void) { if (write(1, \"r\", 1) != 1) return 1;\n"
"  pause(); return 0; }\n";

/* The value of "heap_NAME=" in the settings, 0 if absent. */
static unsigned long long setting(const char *buf, const char *name)
{
	char key[64];
	const char *at;

	snprintf(key, sizeof(key), "heap_%s=", name);
	at = strstr(buf, key);
	return at ? strtoull(at + strlen(key), NULL, 0) : 0;
}

int main(void)
{
	char buf[512], msg[512], src[2048], bin[2048], cmd[8192];
	void *mine = dlsym(RTLD_DEFAULT, "malloc");
	Dl_info info;
	FILE *f;
	struct pollfd pfd;
	pid_t child;
	int ret, fds[2];
	char c;

	ret = heapfind__settings(0, 524288, buf, sizeof(buf), msg, sizeof(msg));
	test_condf(ret == -1 && strstr(msg, "give its pid"),
		   "no pid: refused (%s)", msg);

	/* this process: glibc's, or under ASan its runtime's allocator */
	ret = heapfind__settings(getpid(), 4096, buf, sizeof(buf), msg,
				 sizeof(msg));
	if (mine && dladdr(mine, &info) && info.dli_fname &&
	    strstr(info.dli_fname, "libc.so")) {
		test_condf(ret == 0 && strstr(buf, "heap_rate=4096\n") &&
			   setting(buf, "malloc") == (uintptr_t)mine &&
			   setting(buf, "free") ==
			   (uintptr_t)dlsym(RTLD_DEFAULT, "free") &&
			   setting(buf, "posix_memalign") ==
			   (uintptr_t)dlsym(RTLD_DEFAULT, "posix_memalign"),
			   "own pid: glibc's malloc at %p, as dlsym says:\n%s",
			   mine, ret ? msg : buf);
	} else {
		test_condf(ret == -1 && strstr(msg, "not glibc's"),
			   "own pid, malloc not glibc's (%s): refused (%s)",
			   mine && dladdr(mine, &info) ? info.dli_fname : "?",
			   msg);
	}

	/* a program with its own malloc: refused, the program named */
	snprintf(src, sizeof(src), "%s", tmp_path("ownalloc.c"));
	snprintf(bin, sizeof(bin), "%s", tmp_path("ownalloc"));
	f = fopen(src, "w");
	if (f) {
		fputs(own_alloc, f);
		fclose(f);
	}
	snprintf(cmd, sizeof(cmd), "${CC:-cc} -O1 -rdynamic -o '%s' '%s'",
		 bin, src);
	if (!f || system(cmd)) {
		test_cond("build a program with its own malloc", 0);
		return test_report();
	}
	if (pipe(fds))
		abort();
	child = fork();
	if (child == 0) {
		dup2(fds[1], 1);
		close(fds[0]);
		close(fds[1]);
		execl(bin, bin, (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	/*
	 * until its main runs, not when it is exec'd (/proc/PID/exe says so
	 * before the loader has mapped its libc)
	 */
	pfd = (struct pollfd){ .fd = fds[0], .events = POLLIN };
	test_condf(poll(&pfd, 1, 60000) == 1 && read(fds[0], &c, 1) == 1,
		   "the program with its own malloc runs");
	close(fds[0]);
	ret = heapfind__settings(child, 524288, buf, sizeof(buf), msg,
				 sizeof(msg));
	test_condf(ret == -1 && strstr(msg, "not glibc's") &&
		   strstr(msg, "ownalloc"),
		   "a program with its own malloc: refused, named (%s)", msg);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);

	ret = heapfind__settings(child, 524288, buf, sizeof(buf), msg,
				 sizeof(msg));
	test_condf(ret == -1 && strstr(msg, "cannot read"),
		   "a process gone: refused (%s)", msg);
	return test_report();
}
