/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * testutil.h - helpers shared by cprof-dump's tests: temp paths, running
 * cprof-dump, reading a gzipped pprof file back with zlib + protobuf-c, the
 * identity the module records of a file and of a process.
 */
#ifndef CPROF_TESTUTIL_H
#define CPROF_TESTUTIL_H

#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <zlib.h>

#include "cprof_format.h"
#include "profile.pb-c.h"

/*
 * TEST_TMPDIR/name.  The string stays valid for the whole test: each
 * distinct name gets its own static buffer (at most 64 names).
 */
static inline const char *tmp_path(const char *name)
{
	static char names[64][64], paths[64][4096];
	const char *dir = getenv("TEST_TMPDIR");
	int i;

	for (i = 0; i < 64 && names[i][0]; i++)
		if (!strcmp(names[i], name))
			return paths[i];
	if (i == 64 || strlen(name) >= sizeof(names[0]))
		abort();
	snprintf(names[i], sizeof(names[0]), "%s", name);
	snprintf(paths[i], sizeof(paths[0]), "%s/%s", dir ? dir : "/tmp", name);
	return paths[i];
}

/* Read a whole file (malloc'd, NUL-terminated); NULL if unreadable. */
static inline char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	size_t n = 0, cap = 0;

	if (!f)
		return NULL;
	for (;;) {
		if (n + 4096 + 1 > cap) {
			cap = cap ? cap * 2 : 8192;
			buf = realloc(buf, cap);
			if (!buf)
				abort();
		}
		size_t r = fread(buf + n, 1, 4096, f);

		n += r;
		if (r < 4096)
			break;
	}
	fclose(f);
	buf[n] = '\0';
	if (len)
		*len = n;
	return buf;
}

/*
 * Run a shell command line (printf-style), stdout to TEST_TMPDIR/out.txt and
 * stderr to TEST_TMPDIR/err.txt; returns the exit status, -1 if it did not
 * exit normally.
 */
/* The pid of a child that exited and was reaped: a process that is gone. */
static inline pid_t gone_pid(void)
{
	pid_t pid = fork();

	if (pid == 0)
		_exit(0);
	if (pid > 0)
		waitpid(pid, NULL, 0);
	return pid;
}

/*
 * Start argv[0] (a path, or a name on PATH) with argv and wait until it
 * prints a line "ready" on its stdout (up to 60 s): for a child that must
 * have mapped its libraries before the test looks at it, however loaded
 * the machine is.  Its pid, or -1 if it exited or never said so (then
 * killed and reaped).
 */
static inline pid_t spawn_ready(char *const argv[])
{
	char buf[64];
	size_t have = 0;
	int fds[2], waited = 0;
	ssize_t n;
	pid_t pid;

	if (pipe(fds))
		return -1;
	pid = fork();
	if (pid == 0) {
		dup2(fds[1], STDOUT_FILENO);
		close(fds[0]);
		close(fds[1]);
		execvp(argv[0], argv);
		_exit(127);
	}
	close(fds[1]);
	fcntl(fds[0], F_SETFL, O_NONBLOCK);
	while (pid > 0 && waited < 60000) {
		n = read(fds[0], buf + have, sizeof(buf) - 1 - have);
		if (n > 0) {
			have += n;
			buf[have] = '\0';
			if (!strncmp(buf, "ready\n", 6)) {
				close(fds[0]);
				return pid;
			}
			if (have == sizeof(buf) - 1)
				break;
			continue;
		}
		if (n == 0)
			break;
		usleep(10000);
		waited += 10;
	}
	close(fds[0]);
	if (pid > 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
	return -1;
}

static inline int run(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static inline int run(const char *fmt, ...)
{
	char cmd[8192], full[8400];
	va_list ap;
	int st;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	snprintf(full, sizeof(full), "(%s) >'%s' 2>'%s'", cmd,
		 tmp_path("out.txt"), tmp_path("err.txt"));
	st = system(full);
	if (st == -1 || !WIFEXITED(st))
		return -1;
	return WEXITSTATUS(st);
}

static inline const char *cprof_dump(void)
{
	const char *p = getenv("CPROF_DUMP");

	return p ? p : "userland/cprof-dump";
}

/* The identity the module would record for fd's file. */
static inline struct cprof_file_id file_id(int fd)
{
	struct cprof_file_id id = { 0 };
	struct statx sx;

	if (statx(fd, "", AT_EMPTY_PATH, STATX_BASIC_STATS | STATX_BTIME, &sx))
		return id;
	id.dev = (uint32_t)makedev(sx.stx_dev_major, sx.stx_dev_minor);
	id.ino = sx.stx_ino;
	if (sx.stx_mask & STATX_BTIME)
		id.btime_ns = (int64_t)sx.stx_btime.tv_sec * 1000000000 +
			      sx.stx_btime.tv_nsec;
	return id;
}

static inline struct cprof_file_id path_id(const char *path)
{
	struct cprof_file_id id = { 0 };
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd >= 0) {
		id = file_id(fd);
		close(fd);
	}
	return id;
}

/* When process pid started, as the module records it (boot time, ns). */
static inline uint64_t start_ns(pid_t pid)
{
	char path[40], *buf, *p;
	unsigned long long ticks = 0;
	int i;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	buf = slurp(path, NULL);
	p = buf ? strrchr(buf, ')') : NULL;
	for (i = 2; p && i < 22; i++)
		p = strchr(p + 1, ' ');
	if (p)
		ticks = strtoull(p + 1, NULL, 10);
	free(buf);
	return ticks * (1000000000ULL / (uint64_t)sysconf(_SC_CLK_TCK));
}

/* Count the lines of s. */
/* Send stderr to a new file at path; *saved keeps the old one. */
static inline int stderr_to(const char *path, int *saved)
{
	int fd;

	fflush(stderr);
	*saved = dup(2);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (*saved < 0 || fd < 0 || dup2(fd, 2) < 0) {
		perror("capture stderr");
		exit(1);
	}
	return fd;
}

/* Put stderr back, and what went to fd into buf (NUL-terminated). */
static inline void stderr_back(int fd, int saved, char *buf, size_t len)
{
	ssize_t n;

	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	n = pread(fd, buf, len - 1, 0);
	buf[n > 0 ? n : 0] = '\0';
	close(fd);
}

static inline int nr_lines(const char *s)
{
	int n = 0;

	for (; s && *s; s++)
		n += *s == '\n';
	return n;
}

/* Gunzip and unpack a pprof file; NULL if it is not one. */
static inline Perftools__Profiles__Profile *pprof_read(const char *path)
{
	Perftools__Profiles__Profile *p = NULL;
	unsigned char *out = NULL;
	size_t cap = 1 << 16, len = 0, in_len;
	char *in = slurp(path, &in_len);
	z_stream zs = { 0 };
	int ret;

	if (!in || inflateInit2(&zs, 15 + 32) != Z_OK)
		goto out;
	zs.next_in = (Bytef *)in;
	zs.avail_in = in_len;
	do {
		if (!out || len == cap) {
			cap *= 2;
			out = realloc(out, cap);
			if (!out)
				abort();
		}
		zs.next_out = out + len;
		zs.avail_out = cap - len;
		ret = inflate(&zs, Z_NO_FLUSH);
		len = cap - zs.avail_out;
	} while (ret == Z_OK);
	inflateEnd(&zs);
	if (ret == Z_STREAM_END)
		p = perftools__profiles__profile__unpack(NULL, len, out);
out:
	free(in);
	free(out);
	return p;
}

static inline const char *pb_str(const Perftools__Profiles__Profile *p,
				 int64_t i)
{
	return i >= 0 && (size_t)i < p->n_string_table ? p->string_table[i]
						       : "<bad string index>";
}

static inline const Perftools__Profiles__Location *
pb_loc(const Perftools__Profiles__Profile *p, uint64_t id)
{
	size_t i;

	for (i = 0; i < p->n_location; i++)
		if (p->location[i]->id == id)
			return p->location[i];
	return NULL;
}

static inline const Perftools__Profiles__Function *
pb_func(const Perftools__Profiles__Profile *p, uint64_t id)
{
	size_t i;

	for (i = 0; i < p->n_function; i++)
		if (p->function[i]->id == id)
			return p->function[i];
	return NULL;
}

static inline const Perftools__Profiles__Mapping *
pb_map(const Perftools__Profiles__Profile *p, uint64_t id)
{
	size_t i;

	for (i = 0; i < p->n_mapping; i++)
		if (p->mapping[i]->id == id)
			return p->mapping[i];
	return NULL;
}

/* Numeric label key of sample s, or def if absent. */
static inline int64_t pb_num_label(const Perftools__Profiles__Profile *p,
				   const Perftools__Profiles__Sample *s,
				   const char *key, int64_t def)
{
	size_t i;

	for (i = 0; i < s->n_label; i++)
		if (!strcmp(pb_str(p, s->label[i]->key), key))
			return s->label[i]->num;
	return def;
}

static inline const char *pb_str_label(const Perftools__Profiles__Profile *p,
				       const Perftools__Profiles__Sample *s,
				       const char *key)
{
	size_t i;

	for (i = 0; i < s->n_label; i++)
		if (!strcmp(pb_str(p, s->label[i]->key), key))
			return pb_str(p, s->label[i]->str);
	return NULL;
}

/* Name of line j of location id, NULL if none. */
static inline const char *pb_loc_func(const Perftools__Profiles__Profile *p,
				      uint64_t id, size_t j)
{
	const Perftools__Profiles__Location *l = pb_loc(p, id);
	const Perftools__Profiles__Function *f;

	if (!l || j >= l->n_line)
		return NULL;
	f = pb_func(p, l->line[j]->function_id);
	return f ? pb_str(p, f->name) : NULL;
}

#endif /* CPROF_TESTUTIL_H */
