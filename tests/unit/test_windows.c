// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Continuous windows (windows.c): which window each sample goes to, the
 * files' names and bounds, late samples, --keep, and a reader that reads
 * on while a slow conversion writes a window.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "output/output.h"
#include "stream/stream.h"
#include "streambuild.h"
#include "test.h"
#include "serve/windows.h"
#include "windowsrun.h"

#define S	1000000000ull
#define T0	5000000000ull	/* the stream's start on the sample clock */

static char dir[] = "/tmp/test_windows.XXXXXX";

/* The path of window k's file in d: named by its start in UTC. */
static void window_path(char *buf, size_t size, const char *d, unsigned int k)
{
	time_t sec = 1700000000 + k;
	struct tm tm;
	char name[64];

	gmtime_r(&sec, &tm);
	strftime(name, sizeof(name), "cprof-%Y%m%dT%H%M%SZ.folded", &tm);
	snprintf(buf, size, "%s/%s", d, name);
}

/* The sum of the counts of a folded file, -1 if it cannot be read. */
static long folded_total(const char *path)
{
	FILE *f = fopen(path, "r");
	char line[4096];
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

static int run(const struct sb *b, const char *out, long keep)
{
	struct windows_opts wo = {
		.dir = out, .every = 1, .keep = keep,
		.out = { .format = FORMAT_FOLDED },
	};
	char path[4096];
	int fd, err;

	snprintf(path, sizeof(path), "%s/stream", dir);
	if (sb_write(b, path, b->len))
		return -1;
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	err = windows_run(fd, path, &wo);
	close(fd);
	return err;
}

static void test_windows(void)
{
	static const uint64_t at[] = {	/* seconds after the start, x 10 */
		1, 5, 12, 29, 30, 35,
		7,	/* late: window 0 is written by then */
	};
	static const long want[] = { 2, 1, 1, 2 };	/* the late one aside */
	struct cprof_header h = sb_default_header();
	uint64_t ip = 0x400100;
	char out[256], path[512];
	long n, late = 0;
	unsigned int i;
	struct sb b;

	h.start_time_ns = T0;
	h.duration_ns = 0;			/* open-ended */
	sb_init(&b);
	sb_header(&b, &h);
	sb_mmap(&b, T0, 42, 0x400000, 0x401000, 0, "/bin/app", NULL, 0);
	for (i = 0; i < sizeof(at) / sizeof(at[0]); i++)
		sb_sample(&b, T0 + at[i] * S / 10, 42, 42, 0, "app",
			  CPROF_SAMPLE_USER_MODE, 0, NULL, 1, &ip);
	sb_end(&b, 37 * S / 10, CPROF_END_STOP, 0);

	snprintf(out, sizeof(out), "%s/all", dir);
	mkdir(out, 0700);
	test_cond("a stream of 3.7 s in windows of 1 s", run(&b, out, 0) == 0);
	/*
	 * The late one is in the oldest window not yet handed to be written
	 * when it is read: which one depends on how soon the conversions
	 * end, the stream being read at once.
	 */
	for (i = 0; i < 4; i++) {
		window_path(path, sizeof(path), out, i);
		n = folded_total(path);
		test_condf(n == want[i] || (i && n == want[i] + 1),
			   "window %u holds its %ld samples%s (%ld)", i,
			   want[i], i ? ", perhaps the late one" : "", n);
		late += n - want[i];
	}
	test_condf(late == 1, "... and the late one is in one of them (%ld)",
		   late);
	window_path(path, sizeof(path), out, 4);
	test_cond("no window past the end", access(path, F_OK) != 0);

	snprintf(out, sizeof(out), "%s/keep", dir);
	mkdir(out, 0700);
	test_cond("--keep 2", run(&b, out, 2) == 0);
	for (i = 0; i < 4; i++) {
		window_path(path, sizeof(path), out, i);
		test_condf((access(path, F_OK) == 0) == (i >= 2),
			   "--keep 2: window %u %s", i,
			   i >= 2 ? "kept" : "removed");
	}
	sb_free(&b);
}

/* A stream with no END: an error, and no window file for it. */
static void test_truncated(void)
{
	struct cprof_header h = sb_default_header();
	uint64_t ip = 0x400100;
	char out[256], path[512];
	struct sb b;

	h.start_time_ns = T0;
	sb_init(&b);
	sb_header(&b, &h);
	sb_sample(&b, T0 + S / 2, 42, 42, 0, "app", CPROF_SAMPLE_USER_MODE, 0,
		  NULL, 1, &ip);
	snprintf(out, sizeof(out), "%s/trunc", dir);
	mkdir(out, 0700);
	test_cond("a stream without END fails", run(&b, out, 0) != 0);
	window_path(path, sizeof(path), out, 0);
	test_cond("... and writes no half window", access(path, F_OK) != 0);
	sb_free(&b);
}

/*
 * A full disk: a 2-page tmpfs holding two old window files.  The first
 * window cannot be written: it is lost and said so, the run goes on,
 * --keep 1 removes the old files, and the later windows are written.
 */
static void test_full_disk(void)
{
	struct cprof_header h = sb_default_header();
	uint64_t ip = 0x400100;
	char out[256], path[512], cmd[2048];
	unsigned int i;
	struct sb b;
	int err;

	snprintf(out, sizeof(out), "%s/full", dir);
	mkdir(out, 0700);
	snprintf(cmd, sizeof(cmd),
		 "mount -t tmpfs -o size=8k,nr_inodes=64 cprof-test %s && "
		 "head -c 4096 /dev/zero > %s/cprof-20000101T000000Z.folded && "
		 "head -c 4096 /dev/zero > %s/cprof-20000101T000001Z.folded && "
		 "! head -c 4096 /dev/zero > %s/filler 2>/dev/null; rm -f %s/filler",
		 out, out, out, out, out);
	if (system(cmd)) {
		test_cond("a full tmpfs (mount -t tmpfs, as root)", false);
		return;
	}
	h.start_time_ns = T0;
	h.duration_ns = 0;
	sb_init(&b);
	sb_header(&b, &h);
	sb_mmap(&b, T0, 42, 0x400000, 0x401000, 0, "/bin/app", NULL, 0);
	for (i = 0; i < 4; i++)
		sb_sample(&b, T0 + i * S + S / 2, 42, 42, 0, "app",
			  CPROF_SAMPLE_USER_MODE, 0, NULL, 1, &ip);
	sb_end(&b, 4 * S - 1, CPROF_END_STOP, 0);
	err = run(&b, out, 1);
	test_condf(err == 1, "windows lost to a full disk: the run ends, status 1 (%d)",
		   err);
	window_path(path, sizeof(path), out, 0);
	test_cond("... window 0 is lost", access(path, F_OK) != 0);
	window_path(path, sizeof(path), out, 3);
	test_condf(folded_total(path) == 1,
		   "... the last window is written, whole (%ld samples)",
		   folded_total(path));
	snprintf(path, sizeof(path), "%s/cprof-20000101T000000Z.folded", out);
	test_cond("... --keep 1 still removed the old files",
		  access(path, F_OK) != 0);
	snprintf(cmd, sizeof(cmd), "umount %s", out);
	if (system(cmd))
		printf("# failed to unmount %s\n", out);
	sb_free(&b);
}

/*
 * A live stream that goes quiet: one sample in window 0, then nothing for
 * 3.5 s.  Window 0 is written on time (its end plus WINDOWS_HOLD_NS, a
 * second, looked at once a second), before any other record arrives;
 * then END.
 */
static void test_quiet(void)
{
	struct cprof_header h = sb_default_header();
	uint64_t ip = 0x400100, start;
	struct windows_opts wo = {
		.every = 1, .out = { .format = FORMAT_FOLDED },
	};
	char out[256], path[512];
	struct timespec ts;
	struct sb head, tail;
	int fds[2], status = -1;
	size_t cut;
	pid_t pid;

	snprintf(out, sizeof(out), "%s/quiet", dir);
	mkdir(out, 0700);
	wo.dir = out;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	start = ts.tv_sec * S + ts.tv_nsec;
	h.start_time_ns = start;
	h.duration_ns = 0;
	sb_init(&head);
	sb_header(&head, &h);
	sb_mmap(&head, start, 42, 0x400000, 0x401000, 0, "/bin/app", NULL, 0);
	sb_sample(&head, start + S / 10, 42, 42, 0, "app",
		  CPROF_SAMPLE_USER_MODE, 0, NULL, 1, &ip);
	cut = head.len;
	sb_end(&head, 4 * S, CPROF_END_STOP, 0);
	tail = head;
	window_path(path, sizeof(path), out, 0);
	if (pipe(fds)) {
		test_cond("a pipe", false);
		sb_free(&head);
		return;
	}
	pid = fork();
	if (pid == 0) {
		/* the module: the header and a sample, a pause, END */
		int ok;

		close(fds[0]);
		if (write(fds[1], head.buf, cut) != (ssize_t)cut)
			_exit(2);
		usleep(3500 * 1000);
		ok = access(path, F_OK) == 0;
		if (write(fds[1], tail.buf + cut, tail.len - cut) !=
		    (ssize_t)(tail.len - cut))
			_exit(2);
		_exit(ok ? 0 : 1);
	}
	close(fds[1]);
	test_cond("a stream that goes quiet for 3.5 s",
		  windows_run(fds[0], "pipe", &wo) == 0);
	close(fds[0]);
	if (pid > 0)
		waitpid(pid, &status, 0);
	test_condf(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		   "... window 0 was written before the next record came (writer status %d)",
		   status);
	sb_free(&head);
}

#define SLOW_CPUS	2
#define SLOW_STEP_NS	(10 * S / 1000)	/* each CPU samples this often */
#define SLOW_RUN_NS	(35 * S / 10)
#define SLOW_WINDOWS	4
#define SLOW_BOUNCE	8192	/* the module's bounce buffer, scaled down */

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * S + ts.tv_nsec;
}

/* Append a sample of cpu at t to b (a bounce buffer). */
static void add_sample(struct sb *b, uint64_t t, unsigned int cpu)
{
	uint64_t ip = 0x400100;

	sb_sample(b, t, 42, 42, cpu, "app", CPROF_SAMPLE_USER_MODE, 0, NULL,
		  1, &ip);
}

/*
 * The module, as a reader sees it (kmod/stream.c), on fd (a pipe of one
 * page): SLOW_CPUS CPUs sample every SLOW_STEP_NS for SLOW_RUN_NS; each
 * sample waits in its CPU's ring until the bounce buffer is refilled,
 * once what it held was read: each ring drained in turn, whole if it
 * fits, the first one the next each time.  Into result: the longest a
 * sample waited in a ring (ms), then the samples of each window of a
 * second.  The exit status.
 */
static int slow_module(int fd, const struct cprof_header *h,
		       const char *result)
{
	static uint64_t ring[SLOW_CPUS][SLOW_RUN_NS / SLOW_STEP_NS + 1];
	size_t made[SLOW_CPUS] = { 0 }, sent[SLOW_CPUS] = { 0 }, pos = 0;
	uint64_t start = h->start_time_ns, waited = 0, t;
	long count[SLOW_WINDOWS] = { 0 };
	unsigned int first = 0, cpu, i, k;
	bool pending = true;
	struct sb bounce;
	ssize_t n;
	FILE *f;

	sb_init(&bounce);
	sb_header(&bounce, h);
	sb_mmap(&bounce, start, 42, 0x400000, 0x401000, 0, "/bin/app", NULL,
		0);
	fcntl(fd, F_SETFL, O_NONBLOCK);
	while ((t = now_ns()) < start + SLOW_RUN_NS || pending) {
		if (t < start + SLOW_RUN_NS) {
			for (cpu = 0; cpu < SLOW_CPUS; cpu++)
				ring[cpu][made[cpu]++] = t;
			count[(t - start) / S] += SLOW_CPUS;
		}
		if (pos == bounce.len) {
			sb_free(&bounce);
			sb_init(&bounce);
			pos = 0;
			first = (first + 1) % SLOW_CPUS;
			for (i = 0; i < SLOW_CPUS; i++) {
				cpu = (first + i) % SLOW_CPUS;
				for (; sent[cpu] < made[cpu] &&
				       bounce.len < SLOW_BOUNCE; sent[cpu]++) {
					add_sample(&bounce, ring[cpu][sent[cpu]],
						   cpu);
					if (t - ring[cpu][sent[cpu]] > waited)
						waited = t - ring[cpu][sent[cpu]];
				}
			}
		}
		n = write(fd, bounce.buf + pos, bounce.len - pos);
		if (n < 0 && errno != EAGAIN)
			return 2;
		pos += n > 0 ? n : 0;
		for (pending = pos < bounce.len, cpu = 0; cpu < SLOW_CPUS; cpu++)
			pending |= sent[cpu] < made[cpu];
		usleep(SLOW_STEP_NS / 1000);
	}
	fcntl(fd, F_SETFL, 0);
	sb_free(&bounce);
	sb_init(&bounce);
	sb_end(&bounce, SLOW_RUN_NS, CPROF_END_STOP, 0);
	if (write(fd, bounce.buf, bounce.len) != (ssize_t)bounce.len)
		return 2;
	sb_free(&bounce);
	f = fopen(result, "w");
	if (!f)
		return 2;
	fprintf(f, "%llu", (unsigned long long)(waited / 1000000));
	for (k = 0; k < SLOW_WINDOWS; k++)
		fprintf(f, " %ld", count[k]);
	return fclose(f) ? 2 : 0;
}

/*
 * Kernel symbols that take 2 s each time they are read: a FIFO whose
 * writer waits that long once a reader opened it (then a moment, for the
 * reader to close it before the next is waited for).  Runs until killed.
 */
static void slow_kallsyms(const char *fifo)
{
	static const char line[] = "ffffffff81000000 T _stext\n";

	for (;;) {
		int fd = open(fifo, O_WRONLY);

		if (fd < 0)
			_exit(1);
		usleep(2000 * 1000);
		if (write(fd, line, sizeof(line) - 1) < 0) {
			/* the reader went away: the next one */
		}
		close(fd);
		usleep(200 * 1000);
	}
}

/*
 * A conversion slower than the window (kernel symbols take 2 s to read,
 * windows are 1 s) while the module samples two CPUs at 100 Hz: the
 * reader reads on while windows are written (no sample waits long in the
 * module's rings, which would fill), and each sample is in the window of
 * its time however the rings deliver them.
 */
static void test_slow(void)
{
	struct windows_opts wo = {
		.every = 1, .out = { .format = FORMAT_FOLDED },
	};
	struct pipeline_opts po = { .jit = true, .symbolize = true };
	struct cprof_header h = sb_default_header();
	char out[256], path[512], fifo[512], result[512];
	long waited = -1, count[SLOW_WINDOWS] = { 0 };
	pid_t module, ksyms;
	int fds[2], status = -1, err;
	unsigned int k;
	FILE *f;

	snprintf(out, sizeof(out), "%s/slow", dir);
	snprintf(fifo, sizeof(fifo), "%s/kallsyms", dir);
	snprintf(result, sizeof(result), "%s/slow.module", dir);
	mkdir(out, 0700);
	wo.dir = out;
	po.kallsyms = fifo;
	if (mkfifo(fifo, 0600) || pipe(fds)) {
		test_cond("a FIFO and a pipe", false);
		return;
	}
	/* the module's side of the reader: a page, not the default 64 KiB */
	fcntl(fds[1], F_SETPIPE_SZ, 4096);
	ksyms = fork();
	if (ksyms == 0) {
		close(fds[0]);
		close(fds[1]);
		slow_kallsyms(fifo);
	}
	h.start_time_ns = now_ns();
	h.duration_ns = 0;
	module = fork();
	if (module == 0) {
		close(fds[0]);
		_exit(slow_module(fds[1], &h, result));
	}
	close(fds[1]);
	err = windows_run_with(fds[0], "pipe", &wo, &po);
	close(fds[0]);
	if (module > 0)
		waitpid(module, &status, 0);
	if (ksyms > 0) {
		kill(ksyms, SIGKILL);
		waitpid(ksyms, NULL, 0);
	}
	test_condf(err == 0, "3.5 s in windows of 1 s, each converted in 2 s (%d)",
		   err);
	f = fopen(result, "r");
	if (!WIFEXITED(status) || WEXITSTATUS(status) || !f ||
	    fscanf(f, "%ld %ld %ld %ld %ld", &waited, &count[0], &count[1],
		   &count[2], &count[3]) != 1 + SLOW_WINDOWS) {
		test_condf(false, "the module ran (status %d)", status);
		if (f)
			fclose(f);
		return;
	}
	fclose(f);
	test_condf(waited <= 1000,
		   "... the reader read on: no sample waited in the module's rings over 1 s (%ld ms)",
		   waited);
	for (k = 0; k < SLOW_WINDOWS; k++) {
		window_path(path, sizeof(path), out, k);
		test_condf(folded_total(path) == count[k],
			   "... window %u holds the %ld samples of its second (%ld)",
			   k, count[k], folded_total(path));
	}
}

int main(void)
{
	char cmd[4200];

	if (!mkdtemp(dir))
		test_skip("no temporary directory");
	test_windows();
	test_truncated();
	test_full_disk();
	test_quiet();
	test_slow();
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd))
		printf("# failed to remove %s\n", dir);
	return test_report();
}
