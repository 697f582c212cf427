// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * test_debuginfod: names from a real debuginfod server (Debian's debuginfod
 * package, on loopback).  A stripped binary without a .gnu_debuglink
 * whose debug file only the server has: without DEBUGINFOD_URLS its static
 * function has no name; with it, the symbolizer names it with its file
 * and line, and the debug file lands in the cache.
 */
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "symbolize/debugfetch.h"
#include "symbolize/elfsyms.h"
#include "lib/mapfile.h"
#include "test.h"
#include "testutil.h"
#include "lib/util.h"

static const char fixture[] =
	"#include <stdio.h>\n"
	"\n"
	"volatile int sink;\n"
	"\n"
	"static __attribute__((noinline)) int served_only(int x)\n"
	"{\n"
	"	sink = x;\n"
	"	return x * 3;\n"
	"}\n"
	"\n"
	"static unsigned long file_offset(void *p)\n"
	"{\n"
	"	unsigned long a = (unsigned long)p, lo, hi, pgoff;\n"
	"	char line[512];\n"
	"	FILE *f = fopen(\"/proc/self/maps\", \"r\");\n"
	"\n"
	"	while (f && fgets(line, sizeof(line), f))\n"
	"		if (sscanf(line, \"%lx-%lx %*s %lx\", &lo, &hi, &pgoff) == 3 &&\n"
	"		    a >= lo && a < hi)\n"
	"			return a - lo + pgoff;\n"
	"	return 0;\n"
	"}\n"
	"\n"
	"int main(void)\n"
	"{\n"
	"	printf(\"%lx\\n\", file_offset((void *)served_only) + 4);\n"
	"	return served_only(2) != 6;\n"
	"}\n";

static int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int sh(const char *fmt, ...)
{
	char cmd[8192];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	return system(cmd) == 0 ? 0 : -1;
}

/* A loopback port nobody listens on now. */
static int free_port(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM, 0), port = -1;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd >= 0 && !bind(fd, (struct sockaddr *)&a, sizeof(a)) &&
	    !getsockname(fd, (struct sockaddr *)&a, &len))
		port = ntohs(a.sin_port);
	if (fd >= 0)
		close(fd);
	return port;
}

/* The first frame of offset in path, as a fresh symbolizer names it. */
static int name_of(const char *path, unsigned long off, char *fn, size_t n,
		   int *line)
{
	struct syms_cache *c = syms_cache__new();
	struct sym_frame fr[4];
	struct binary *b;
	int nr = 0;

	*fn = '\0';
	*line = 0;
	b = c ? syms_cache__get(c, MAPFILE_PATH(path), NULL, 0) : NULL;
	if (b)
		nr = binary__resolve(b, off, fr, 4);
	if (nr > 0) {
		snprintf(fn, n, "%s", fr[0].function);
		*line = fr[0].line;
	}
	syms_cache__free(c);
	return nr;
}

int main(void)
{
	const char *cc = getenv("CC") && *getenv("CC") ? getenv("CC") : "cc";
	char urls[64], fn[128], *text;
	unsigned long off = 0;
	int port, line, i, ready = 0, st;
	pid_t server;
	FILE *f;

	if (sh("command -v debuginfod >/dev/null && command -v debuginfod-find >/dev/null"))
		test_skip("no debuginfod here (apt-get install debuginfod)");
	f = fopen(tmp_path("fixture.c"), "w");
	if (!f || fputs(fixture, f) < 0 || fclose(f))
		return test_report();
	if (sh("cd %s && mkdir -p served && %s -g -O1 -o prog fixture.c",
	       getenv("TEST_TMPDIR"), cc))
		test_skip("no C compiler here");
	if (sh("cd %s && ./prog >off.txt && objcopy --only-keep-debug prog served/prog.debug && strip --strip-all prog",
	       getenv("TEST_TMPDIR")))
		return test_report();
	text = slurp(tmp_path("off.txt"), NULL);
	if (text)
		off = strtoul(text, NULL, 16);
	free(text);

	setenv("DEBUGINFOD_CACHE_PATH", tmp_path("cache"), 1);
	unsetenv("DEBUGINFOD_URLS");
	name_of(tmp_path("prog"), off, fn, sizeof(fn), &line);
	test_condf(strcmp(fn, "served_only") != 0,
		   "stripped, no server: the static function is not named (%s)",
		   *fn ? fn : "no name");

	port = free_port();
	server = fork();
	if (server == 0) {
		char p[16], db[4200];

		int log = open(tmp_path("debuginfod.log"),
			       O_WRONLY | O_CREAT | O_TRUNC, 0600);

		if (log >= 0)
			dup2(log, STDERR_FILENO);
		snprintf(p, sizeof(p), "%d", port);
		snprintf(db, sizeof(db), "%s", tmp_path("db.sqlite"));
		execlp("debuginfod", "debuginfod", "-p", p, "-d", db, "-F",
		       tmp_path("served"), (char *)NULL);
		_exit(127);
	}
	snprintf(urls, sizeof(urls), "http://127.0.0.1:%d", port);
	/* until the server has scanned the file: a fresh cache each time */
	for (i = 0; i < 120 && server > 0 && !ready; i++) {
		ready = !sh("cd %s && DEBUGINFOD_URLS=%s DEBUGINFOD_CACHE_PATH=poll%d debuginfod-find debuginfo prog >/dev/null 2>&1 || { sleep 0.5; false; }",
			    getenv("TEST_TMPDIR"), urls, i);
	}
	test_condf(ready, "a debuginfod on port %d serves the debug file", port);

	setenv("DEBUGINFOD_URLS", urls, 1);
	debugfetch_set_budget(30);
	name_of(tmp_path("prog"), off, fn, sizeof(fn), &line);
	test_condf(!strcmp(fn, "served_only") && line > 0,
		   "with DEBUGINFOD_URLS: named from the server's file (%s, line %d)",
		   *fn ? fn : "no name", line);
	test_cond("... which is in the cache now",
		  !sh("ls %s/*/debuginfo >/dev/null", tmp_path("cache")));

	if (server > 0) {
		kill(server, SIGTERM);
		waitpid(server, &st, 0);
	}
	return test_report();
}
