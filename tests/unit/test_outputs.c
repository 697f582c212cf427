// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Outputs in a directory a user can write (atomicfile.c, windows.c): an
 * unprivileged user (uid/gid 65534, a forked child) races root's writes
 * with a FIFO at the name, a symlink to a device (a pty whose other end
 * the test reads), a name flipped between a FIFO and a symlink to a
 * root-only file, and FIFOs or directories at all of --every's
 * predictable names (and files that --keep would count).  Each -o race
 * runs 500 attempts in a sticky directory (written) and in a non-sticky
 * one (refused), --every's 500 windows (64 under ASan): no root file
 * changes, the user reads no byte, every output said written is root's,
 * 0600 and whole, no window is lost.
 * The -o attempts call atomicfile__open(), what cprof-dump -o runs;
 * cprof-dump itself is run for its messages and for /dev/fd/N.  An
 * output is written while getrandom() is interrupted (as in the first
 * seconds after boot, the entropy pool not ready, under --every's timer).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lib/atomicfile.h"
#include "output/output.h"
#include "streambuild.h"
#include "test.h"
#include "testutil.h"
#include "serve/windows.h"
#include "windowsrun.h"

#define ATTEMPTS	500
#define NOBODY		65534
#define S		1000000000ull
#define T0		5000000000ull
#define READERS_MAX	4000
/*
 * Each window is written out by a child process (answer.h): a fork of an
 * ASan build costs tens of ms, so it races fewer windows there.
 */
#ifdef __SANITIZE_ADDRESS__
#define WINDOWS		64
#else
#define WINDOWS		ATTEMPTS
#endif

enum plant { PLANT_FIFO, PLANT_DEVICE, PLANT_FLIP };

static const char *const plant_name[] = { "a FIFO", "a symlink to a device",
					  "a FIFO/symlink flip" };
static char sticky_dir[2048], open_dir[2048], secret_dir[2048], secret[2100];
static char secret_was[64];
static char body[8192];

struct attacker {
	pid_t pid;
	int stop_w;	/* closed: stop */
	int report_r;	/* bytes read, then plants (two longs) */
};

static void drop_to_nobody(void)
{
	struct rlimit rl = { READERS_MAX + 64, READERS_MAX + 64 };

	setrlimit(RLIMIT_NOFILE, &rl);
	if (setgroups(0, NULL) || setgid(NOBODY) || setuid(NOBODY) ||
	    !getuid() || !geteuid())
		_exit(3);
}

/* The FIFOs the user opened to read: what root writes into one, it reads. */
struct readers {
	int fd[READERS_MAX];
	int n;
	long bytes;
};

static void readers_add(struct readers *r, int fd)
{
	if (fd >= 0 && r->n < READERS_MAX)
		r->fd[r->n++] = fd;
	else if (fd >= 0)
		close(fd);
}

/*
 * Read what is there; all: and close them.  A FIFO stays open until the
 * end: root may have looked it up by name before it went, and its open
 * would wait for a reader for ever.
 */
static void readers_drain(struct readers *r, bool all)
{
	char buf[4096];
	ssize_t n;
	int i;

	for (i = 0; i < r->n; i++) {
		while ((n = read(r->fd[i], buf, sizeof(buf))) > 0)
			r->bytes += n;
		if (all)
			close(r->fd[i]);
	}
	if (all)
		r->n = 0;
}

/* A FIFO at path with a reader open on it (root's open then succeeds). */
static void fifo_with_reader(struct readers *r, const char *path)
{
	unlink(path);
	if (!mkfifo(path, 0666))
		readers_add(r, open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC));
}

static bool stop_asked(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, 0) > 0;
}

static void report(int fd, long bytes, long plants)
{
	long v[2] = { bytes, plants };

	if (write(fd, v, sizeof(v)) != sizeof(v))
		_exit(4);
}

/* The user's side of an -o race on name in dir, until asked to stop. */
static void attack_name(enum plant how, const char *dir, const char *dev,
			int stop_r, int report_w)
{
	char name[4096], aside[4096], link[4096];
	struct readers *r = calloc(1, sizeof(*r));
	long plants = 0;
	struct stat st;
	int i;

	if (!r)
		_exit(5);
	snprintf(name, sizeof(name), "%s/out", dir);
	snprintf(aside, sizeof(aside), "%s/aside", dir);
	snprintf(link, sizeof(link), "%s/link", dir);
	while (!stop_asked(stop_r)) {
		readers_drain(r, false);
		if (lstat(name, &st)) {
			/* root took the last one away: put another there */
			if (how == PLANT_DEVICE) {
				unlink(aside);
				if (symlink(dev, aside))
					continue;
			} else {
				fifo_with_reader(r, aside);
			}
			if (how == PLANT_FLIP) {
				unlink(link);
				if (symlink(secret, link))
					continue;
			}
			plants += !rename(aside, name);
			continue;
		}
		/* one then the other at the name, atomically, fast */
		for (i = 0; how == PLANT_FLIP && i < 256; i++)
			if (renameat2(AT_FDCWD, name, AT_FDCWD, link,
				      RENAME_EXCHANGE))
				break;
	}
	readers_drain(r, true);
	report(report_w, r->bytes, plants);
	_exit(0);
}

/*
 * The user's side of --every: at names[0..n), FIFOs, every fourth a
 * directory (with a file in every eighth), then wait.
 */
static void attack_windows(char (*names)[4096], int n, int stop_r,
			   int report_w)
{
	struct readers *r = calloc(1, sizeof(*r));
	struct pollfd p = { .fd = stop_r, .events = POLLIN };
	int i;

	if (!r)
		_exit(5);
	for (i = 0; i < n; i++) {
		char inside[4200];

		if (i % 4 != 3) {
			fifo_with_reader(r, names[i]);
			continue;
		}
		snprintf(inside, sizeof(inside), "%s/x", names[i]);
		if (mkdir(names[i], 0777) ||
		    (i % 8 == 7 && mknod(inside, S_IFREG | 0644, 0)))
			_exit(6);
	}
	report(report_w, 0, r->n);	/* ready */
	while (poll(&p, 1, 100) == 0)
		readers_drain(r, false);
	readers_drain(r, true);
	report(report_w, r->bytes, n);
	_exit(0);
}

static int start_attacker(struct attacker *a, enum plant how, const char *dir,
			  const char *dev, char (*names)[4096], int n)
{
	int stop[2], rep[2];

	if (pipe(stop) || pipe(rep))
		return -1;
	a->pid = fork();
	if (a->pid == 0) {
		close(stop[1]);
		close(rep[0]);
		drop_to_nobody();
		if (names)
			attack_windows(names, n, stop[0], rep[1]);
		attack_name(how, dir, dev, stop[0], rep[1]);
	}
	close(stop[0]);
	close(rep[1]);
	a->stop_w = stop[1];
	a->report_r = rep[0];
	return a->pid > 0 ? 0 : -1;
}

/* Stop it; bytes it read (-1: it failed) and what it planted. */
static long stop_attacker(struct attacker *a, long *plants)
{
	long v[2] = { -1, 0 };
	int st;

	close(a->stop_w);
	if (read(a->report_r, v, sizeof(v)) != sizeof(v))
		v[0] = -1;
	close(a->report_r);
	waitpid(a->pid, &st, 0);
	if (!WIFEXITED(st) || WEXITSTATUS(st))
		v[0] = -1;
	*plants = v[1];
	return v[0];
}

/* The lines of a file, -1 if unreadable. */
static int lines_of(const char *path)
{
	char *text = slurp(path, NULL);
	int n = text ? nr_lines(text) : -1;

	free(text);
	return n;
}

/*
 * path opened to read if it is a regular file of root's, 0600; else NULL.
 * Checked on the open file: the user may swap a FIFO in meanwhile.
 */
static FILE *open_roots(const char *path)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	struct stat st;
	FILE *f;

	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_uid != 0 ||
	    (st.st_mode & 07777) != 0600 || !(f = fdopen(fd, "r"))) {
		close(fd);
		return NULL;
	}
	return f;
}

/* Is path a regular file of root's, 0600, holding want (len bytes)? */
static bool roots_whole(const char *path, const char *want, size_t len)
{
	FILE *f = open_roots(path);
	char *got = malloc(len + 1);
	bool ok = f && got && fread(got, 1, len + 1, f) == len &&
		  !memcmp(got, want, len);

	if (f)
		fclose(f);
	free(got);
	return ok;
}

static int write_secret(void)
{
	int fd = open(secret, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW |
		      O_CLOEXEC, 0600);
	bool ok = fd >= 0 && write(fd, secret_was, strlen(secret_was)) ==
			     (ssize_t)strlen(secret_was);

	if (fd >= 0)
		close(fd);
	return ok && !chmod(secret, 0600) ? 0 : -1;
}

static bool secret_intact(void)
{
	struct stat st;
	char *now = slurp(secret, NULL);
	bool ok = now && !strcmp(now, secret_was) && !lstat(secret, &st) &&
		  (st.st_mode & 07777) == 0600;

	free(now);
	return ok;
}

/* stderr to path (the refusals of 500 attempts); the old one back: -1. */
static int stderr_swap(const char *path, int old)
{
	int fd;

	fflush(stderr);
	if (old >= 0) {
		dup2(old, STDERR_FILENO);
		close(old);
		return -1;
	}
	old = dup(STDERR_FILENO);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd >= 0) {
		dup2(fd, STDERR_FILENO);
		close(fd);
	}
	return old;
}

/*
 * windows__run() over the stream in TMP/name, its messages in TMP/errname:
 * its status, or -1 if the stream cannot be opened.
 */
static int run_windows(const char *name, const char *errname,
		       const struct windows_opts *wo)
{
	int fd = open(tmp_path(name), O_RDONLY | O_CLOEXEC);
	int saved, err;

	if (fd < 0)
		return -1;
	saved = stderr_swap(tmp_path(errname), -1);
	err = windows_run(fd, name, wo);
	stderr_swap(NULL, saved);
	close(fd);
	return err;
}

/* A pty whose slave is the "device": what root writes to it shows here. */
static int open_pty(char *slave, size_t size)
{
	int fd = posix_openpt(O_RDWR | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);

	if (fd < 0 || grantpt(fd) || unlockpt(fd) ||
	    ptsname_r(fd, slave, size)) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

static long pty_bytes(int fd)
{
	char buf[4096];
	long total = 0;
	ssize_t n;

	while ((n = read(fd, buf, sizeof(buf))) > 0)
		total += n;
	return total;
}

/* Busy for us microseconds: each attempt meets the flips at another time. */
static void spin_us(long us)
{
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do
		clock_gettime(CLOCK_MONOTONIC, &t);
	while ((t.tv_sec - t0.tv_sec) * 1000000 +
	       (t.tv_nsec - t0.tv_nsec) / 1000 < us);
}

/*
 * ATTEMPTS writes of -o DIR/out while the user plants what `how` says
 * there; each one written is checked, then removed (the user plants anew).
 */
static void race_output(enum plant how, const char *dir, bool sticky)
{
	char name[4096], slave[256] = "", what[256];
	long bytes, plants, dev_bytes = 0;
	int written = 0, refused = 0, bad = 0, changed = 0, i, w, pty = -1;
	int saved;
	struct attacker a;

	snprintf(name, sizeof(name), "%s/out", dir);
	if (how == PLANT_DEVICE && (pty = open_pty(slave, sizeof(slave))) < 0) {
		test_cond("a pty for the device race (posix_openpt)", false);
		return;
	}
	snprintf(what, sizeof(what), "%s dir, %s at -o's name",
		 sticky ? "sticky" : "non-sticky", plant_name[how]);
	if (start_attacker(&a, how, dir, slave, NULL, 0)) {
		test_cond("fork the user", false);
		return;
	}
	/* the race is on from the first attempt */
	while (access(name, F_OK) && errno == ENOENT)
		usleep(1000);
	saved = stderr_swap(tmp_path("race-err.txt"), -1);
	for (i = 0; i < ATTEMPTS; i++) {
		struct atomicfile *o;

		if (!secret_intact()) {
			changed++;
			write_secret();
		}
		/* whatever is there goes: the user plants anew, and root
		 * goes on once it did (or 10 ms later) */
		unlink(name);
		for (w = 0; w < 200 && access(name, F_OK); w++)
			usleep(50);
		spin_us(rand() % 50);
		o = atomicfile__open(name);
		if (!o) {
			refused++;
			continue;
		}
		if (fwrite(body, 1, sizeof(body), atomicfile__stream(o)) !=
		    sizeof(body)) {
			atomicfile__abort(o);
			bad++;
			continue;
		}
		if (atomicfile__commit(o)) {
			refused++;
			continue;
		}
		written++;
		if (!roots_whole(name, body, sizeof(body)))
			bad++;
		if (pty >= 0)
			dev_bytes += pty_bytes(pty);
	}
	stderr_swap(NULL, saved);
	bytes = stop_attacker(&a, &plants);
	if (!secret_intact()) {
		changed++;
		write_secret();
	}
	if (pty >= 0) {
		dev_bytes += pty_bytes(pty);
		close(pty);
	}
	unlink(name);
	printf("# %s: %d written, %d refused, %ld planted by the user\n", what,
	       written, refused, plants);
	test_condf(plants > 0, "%s: the user planted (%ld times)", what, plants);
	test_condf(bytes == 0, "%s: the user read no byte of a profile (%ld)",
		   what, bytes);
	test_condf(bad == 0 && written + refused == ATTEMPTS,
		   "%s: every output written is root's, 0600, whole (%d of %d not)",
		   what, bad, written);
	if (how == PLANT_DEVICE)
		test_condf(dev_bytes == 0,
			   "%s: nothing written to the device (%ld bytes)",
			   what, dev_bytes);
	test_condf(changed == 0, "%s: root's 0600 file unchanged (changed %d times)",
		   what, changed);
	/* a symlink at the name is replaced, never followed */
	if (sticky && how == PLANT_DEVICE)
		test_condf(written == ATTEMPTS, "%s: every output written (%d)",
			   what, written);
	if (!sticky)
		test_condf(written == 0 && lines_of(tmp_path("race-err.txt")) == ATTEMPTS,
			   "%s: every attempt refused, one line each (%d written)",
			   what, written);
}

/* Window k's file in dir: named by its start in UTC. */
static void window_path(char *buf, size_t size, const char *dir, int k)
{
	time_t sec = 1700000000 + k;
	char name[64];
	struct tm tm;

	gmtime_r(&sec, &tm);
	strftime(name, sizeof(name), "cprof-%Y%m%dT%H%M%SZ.folded", &tm);
	snprintf(buf, size, "%s/%s", dir, name);
}

/* The sum of a folded file's counts; -1 if not a regular file of root's. */
static long folded_total(const char *path)
{
	char line[4096];
	FILE *f = open_roots(path);
	long total = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		char *sp = strrchr(line, ' ');

		total += sp ? atol(sp + 1) : 0;
	}
	fclose(f);
	return total;
}

/*
 * --every into the sticky directory, WINDOWS windows of 1 s, a FIFO with
 * a reader or a directory at each window's name before the run.
 */
static void race_windows(void)
{
	static char names[WINDOWS][4096];
	struct cprof_header h = sb_default_header();
	struct windows_opts wo = {
		.dir = sticky_dir, .every = 1,
		.out = { .format = FORMAT_FOLDED },
	};
	long bytes, ready, plants;
	int i, lost = 0, err;
	uint64_t ip = 0x400100;
	struct attacker a;
	struct sb b;

	h.start_time_ns = T0;
	h.duration_ns = 0;
	sb_init(&b);
	sb_header(&b, &h);
	sb_mmap(&b, T0, 42, 0x400000, 0x401000, 0, "/bin/app", NULL, 0);
	for (i = 0; i < WINDOWS; i++) {
		sb_sample(&b, T0 + i * S + S / 2, 42, 42, 0, "app",
			  CPROF_SAMPLE_USER_MODE, 0, NULL, 1, &ip);
		window_path(names[i], sizeof(names[i]), sticky_dir, i);
	}
	sb_end(&b, WINDOWS * S, CPROF_END_STOP, 0);
	sb_write(&b, tmp_path("windows.bin"), b.len);
	sb_free(&b);

	if (start_attacker(&a, PLANT_FIFO, NULL, NULL, names, WINDOWS) ||
	    read(a.report_r, (long[2]){ 0 }, 2 * sizeof(long)) !=
	    2 * sizeof(long)) {
		test_cond("the user plants FIFOs at the window names", false);
		return;
	}
	err = run_windows("windows.bin", "windows-err.txt", &wo);
	bytes = stop_attacker(&a, &plants);
	ready = plants;
	for (i = 0; i < WINDOWS; i++) {
		lost += folded_total(names[i]) != 1;
		unlink(names[i]);
	}
	test_condf(ready == WINDOWS,
		   "--every: the user put a FIFO or a directory at each of %d window names (%ld)",
		   WINDOWS, ready);
	test_condf(err == 0, "--every: the run ends well (%d)", err);
	test_condf(lost == 0,
		   "--every: every window is root's 0600 file with its sample (%d lost)",
		   lost);
	test_condf(bytes == 0, "--every: the user read no byte of a window (%ld)",
		   bytes);
}

/* A file of the user's at path; 0 ok. */
static int write_as_nobody(const char *path, const char *text)
{
	pid_t pid = fork();
	int st, fd;

	if (pid == 0) {
		drop_to_nobody();
		fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0644);
		_exit(fd < 0 || write(fd, text, strlen(text)) < 0);
	}
	return pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) &&
	       !WEXITSTATUS(st) ? 0 : -1;
}

/*
 * --every --keep 2 into the sticky directory, where the user put files
 * under the names of windows yet to come (the year 2099): they are not
 * root's windows, so they neither count nor go, and root's newest two
 * windows stay.
 */
static void test_keep(void)
{
	struct cprof_header h = sb_default_header();
	struct windows_opts wo = {
		.dir = sticky_dir, .every = 1, .keep = 2,
		.out = { .format = FORMAT_FOLDED },
	};
	char path[4096];
	int i, err, kept = 0;
	uint64_t ip = 0x400100;
	struct sb b;

	h.start_time_ns = T0;
	h.duration_ns = 0;
	sb_init(&b);
	sb_header(&b, &h);
	sb_mmap(&b, T0, 42, 0x400000, 0x401000, 0, "/bin/app", NULL, 0);
	for (i = 0; i < 4; i++)
		sb_sample(&b, T0 + i * S + S / 2, 42, 42, 0, "app",
			  CPROF_SAMPLE_USER_MODE, 0, NULL, 1, &ip);
	sb_end(&b, 4 * S, CPROF_END_STOP, 0);
	sb_write(&b, tmp_path("keep.bin"), b.len);
	sb_free(&b);
	for (i = 1; i <= 3; i++) {
		snprintf(path, sizeof(path), "%s/cprof-20990101T00000%dZ.folded",
			 sticky_dir, i);
		if (write_as_nobody(path, "x 1\n")) {
			test_cond("fixture: the user's files", false);
			return;
		}
	}
	err = run_windows("keep.bin", "keep-err.txt", &wo);
	for (i = 0; i < 4; i++) {
		window_path(path, sizeof(path), sticky_dir, i);
		kept += folded_total(path) == 1;
		test_condf((folded_total(path) == 1) == (i >= 2),
			   "--keep 2 beside the user's files: window %d %s", i,
			   i >= 2 ? "kept" : "removed");
		unlink(path);
	}
	for (i = 1; i <= 3; i++) {
		snprintf(path, sizeof(path), "%s/cprof-20990101T00000%dZ.folded",
			 sticky_dir, i);
		kept += !access(path, F_OK);
		unlink(path);
	}
	test_condf(err == 0 && kept == 5,
		   "... the user's 3 files neither counted nor removed (%d of 5 files there)",
		   kept);
}

static void build_stream(const char *path)
{
	uint64_t u[2] = { 0x401000, 0x402000 };
	struct sb b;
	int i;

	sb_init(&b);
	sb_header(&b, NULL);
	sb_mmap(&b, 1, 42, 0x400000, 0x500000, 0, "/nonexistent/x", NULL, 0);
	for (i = 0; i < 10; i++)
		sb_sample(&b, 10 + i, 42, 42, i % 4, "x", CPROF_SAMPLE_USER_MODE,
			  0, NULL, 2, u);
	sb_end(&b, 1000000000, CPROF_END_COMPLETE, 0);
	sb_write(&b, path, b.len);
	sb_free(&b);
}

static bool err_has(const char *needle)
{
	char *err = slurp(tmp_path("err.txt"), NULL);
	bool ok = err && nr_lines(err) == 1 && strstr(err, needle);

	if (!ok)
		printf("# stderr: %s", err ? err : "(none)\n");
	free(err);
	return ok;
}

/* cprof-dump itself: its messages, and the outputs that stay. */
static void test_cprof_dump(void)
{
	const char *d = cprof_dump(), *in = tmp_path("in.bin");
	char fifo[4096], out[4096];
	long bytes, plants;
	struct attacker a;
	struct stat st;

	build_stream(in);
	snprintf(out, sizeof(out), "%s/cli.folded", open_dir);
	test_cond("-o in a directory others may write, not sticky: refused, one line",
		  run("%s -i '%s' -f folded --no-symbolize -o '%s'", d, in,
		      out) == 1 &&
		  err_has("is a directory others may write (it must be a directory only this user may write, or a sticky one)") &&
		  access(out, F_OK));
	test_cond("--every into one: refused before the profile starts",
		  run("%s --every 5 -o '%s' --proc-dir /nonexistent", d,
		      open_dir) == 1 &&
		  err_has("is a directory others may write"));

	/* the user's FIFO at -o's name in a sticky directory */
	if (start_attacker(&a, PLANT_FIFO, sticky_dir, NULL, NULL, 0)) {
		test_cond("fork the user", false);
		return;
	}
	snprintf(fifo, sizeof(fifo), "%s/out", sticky_dir);
	while (access(fifo, F_OK))
		usleep(1000);
	test_cond("-o a user's FIFO in a sticky directory: refused, one line",
		  run("timeout 20 %s -i '%s' -f folded --no-symbolize -o '%s'",
		      d, in, fifo) == 1 &&
		  err_has("a FIFO or device in a directory others may write is not written to"));
	bytes = stop_attacker(&a, &plants);
	test_condf(bytes == 0, "... the user read nothing (%ld bytes)", bytes);
	unlink(fifo);

	test_cond("-o /dev/fd/3 (a descriptor the caller opened): written there",
		  run("%s -i '%s' -f folded --no-symbolize -o /dev/fd/3 3>'%s'",
		      d, in, tmp_path("fd3.folded")) == 0 &&
		  lines_of(tmp_path("fd3.folded")) == 1);
	test_cond("-o /dev/fd/3 not open: refused",
		  run("%s -i '%s' -f folded --no-symbolize -o /dev/fd/3 3>&-",
		      d, in) == 1 && err_has("failed to open /dev/fd/3"));
	test_cond("-o /dev/stdout into a pipe",
		  run("%s -i '%s' --no-symbolize -o /dev/stdout | gzip -t", d,
		      in) == 0);
	/* root's own symlink: followed, its target checked the same way */
	snprintf(out, sizeof(out), "%s/latest.folded", secret_dir);
	snprintf(fifo, sizeof(fifo), "%s/target.folded", secret_dir);
	test_cond("-o root's symlink in root's directory: its target written",
		  !symlink("target.folded", out) &&
		  run("%s -i '%s' -f folded --no-symbolize -o '%s'", d, in,
		      out) == 0 &&
		  lines_of(fifo) == 1 && !lstat(out, &st) &&
		  S_ISLNK(st.st_mode));
	unlink(out);
	unlink(fifo);
	/*
	 * root's symlink on the way, to a directory of root's inside the
	 * user's (who could swap it for a symlink to /etc): refused
	 */
	snprintf(out, sizeof(out), "%s/via", secret_dir);
	snprintf(fifo, sizeof(fifo), "%s/users", sticky_dir);
	test_cond("-o through root's symlink into the user's directory: refused, one line",
		  !mkdir(fifo, 0755) && !chown(fifo, NOBODY, NOBODY) &&
		  !symlink(fifo, out) && run("mkdir '%s/sub'", fifo) == 0 &&
		  run("%s -i '%s' -f folded --no-symbolize -o '%s/sub/x'", d,
		      in, out) == 1 &&
		  err_has("/users is a directory others may write"));
	unlink(out);
	run("rm -rf '%s'", fifo);
	/* as /dev/stdin is */
	snprintf(out, sizeof(out), "%s/stdin", secret_dir);
	test_cond("-o a symlink to /proc/self/fd/0, read-only: refused, the link kept",
		  !symlink("/proc/self/fd/0", out) &&
		  run("%s -i '%s' -f folded --no-symbolize -o '%s' < /dev/null",
		      d, in, out) == 1 &&
		  err_has("failed to open /proc/self/fd/0: the descriptor is not open for writing") &&
		  !lstat(out, &st) && S_ISLNK(st.st_mode));
	unlink(out);
	test_cond("-o /dev/null: written in place (root's directory)",
		  run("%s -i '%s' --no-symbolize -o /dev/null", d, in) == 0 &&
		  run("test -c /dev/null") == 0);
}

static int mkdir_mode(const char *path, mode_t mode)
{
	return (mkdir(path, mode) && errno != EEXIST) || chmod(path, mode);
}

/*
 * getrandom() for the whole binary: interrupted (EINTR) the next
 * interrupts calls, as it is when a signal comes while it waits for the
 * entropy pool after boot; then the kernel's.
 */
static int interrupts;
static int getrandom_calls;

ssize_t getrandom(void *buf, size_t n, unsigned int flags)
{
	getrandom_calls++;
	if (interrupts > 0) {
		interrupts--;
		errno = EINTR;
		return -1;
	}
	return syscall(SYS_getrandom, buf, n, flags);
}

static void test_interrupted(const char *dir)
{
	char path[2200];
	struct atomicfile *o;
	struct stat st;

	snprintf(path, sizeof(path), "%s/interrupted.pb.gz", dir);
	interrupts = 3;
	getrandom_calls = 0;
	o = atomicfile__open(path);
	if (o) {
		fwrite(body, 1, sizeof(body), atomicfile__stream(o));
		if (atomicfile__commit(o))
			o = NULL;
	}
	test_condf(o && !stat(path, &st) && st.st_size == sizeof(body) &&
		   getrandom_calls >= 4,
		   "getrandom() interrupted 3 times: the output written all the same (%d calls)",
		   getrandom_calls);
	interrupts = 0;
}

int main(void)
{
	static char base[] = "/dev/shm/test_outputs.XXXXXX";
	const char *tmp = base;
	size_t i;
	int ret;

	if (geteuid() != 0)
		test_skip("needs root: the races are root's writes against an unprivileged user");
	/* tmpfs: 2000 files written out with fsync() in a few seconds */
	if (!mkdtemp(base))
		tmp = getenv("TEST_TMPDIR") ? getenv("TEST_TMPDIR") : "/tmp";
	signal(SIGPIPE, SIG_IGN);
	/* the old code blocked on a FIFO nobody read: a hang is a failure */
	alarm(120);
	for (i = 0; i < sizeof(body); i++)
		body[i] = "0123456789abcdef\n"[i % 17];
	snprintf(sticky_dir, sizeof(sticky_dir), "%s/sticky", tmp);
	snprintf(open_dir, sizeof(open_dir), "%s/open", tmp);
	snprintf(secret_dir, sizeof(secret_dir), "%s/root", tmp);
	snprintf(secret, sizeof(secret), "%s/key", secret_dir);
	snprintf(secret_was, sizeof(secret_was), "root's secret\n");
	/* the user reaches the two shared directories only */
	if (chmod(tmp, 0711) || mkdir_mode(sticky_dir, 01777) ||
	    mkdir_mode(open_dir, 0777) ||
	    mkdir_mode(secret_dir, 0700) ||
	    write_secret()) {
		test_cond("fixture: the shared directories", false);
		return test_report();
	}
	race_output(PLANT_FIFO, sticky_dir, true);
	race_output(PLANT_FIFO, open_dir, false);
	race_output(PLANT_DEVICE, sticky_dir, true);
	race_output(PLANT_DEVICE, open_dir, false);
	race_output(PLANT_FLIP, sticky_dir, true);
	race_output(PLANT_FLIP, open_dir, false);
	race_windows();
	test_interrupted(secret_dir);
	test_keep();
	test_cprof_dump();
	ret = test_report();
	if (tmp == base)
		run("rm -rf '%s'", base);
	return ret;
}
