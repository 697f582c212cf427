// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * test_ingestmem - cprof-dump -i's memory follows the profile, not the
 * stream: a stream written through a pipe as it is made (never a file),
 * its peak RSS taken from wait4().
 *
 * - Hundreds of MB of distinct mapping records no sample uses (a process
 *   mapping and unmapping code in a loop): the RSS stays under a bound
 *   that keeping them all exceeds, one warning counts those dropped, and
 *   the samples' frames are still named by the mappings they are in (the
 *   program listed first, a library mapped after the loop).
 * - Hundreds of MB of samples of four stacks: the RSS stays under the
 *   same bound, every sample counted.
 * - Hundreds of MB of an off-CPU profile's leavings that never come back
 *   (a made stream's): the RSS stays under the same bound, one warning
 *   counts those not kept, and a wait that did end is counted.
 * 200 MB each; CPROF_INGESTMEM_MB=1024 for a gigabyte by hand.
 */
#include <sys/resource.h>
#include <sys/wait.h>

#include "streambuild.h"
#include "test.h"
#include "testutil.h"

/* The child's peak RSS must stay under this (KiB). */
#ifdef __SANITIZE_ADDRESS__
#define RSS_MAX_KB	(320u << 10)
#else
#define RSS_MAX_KB	(160u << 10)
#endif
/* MB of each stream; CPROF_INGESTMEM_MB=N makes them N MB (by hand: 1024) */
#define STREAM_MB	stream_mb()
#define PID		4242u
#define APP		0x400000ull
#define LATE		0x7f0000000000ull
#define NR_SAMPLES	1000u

static unsigned int stream_mb(void)
{
	const char *v = getenv("CPROF_INGESTMEM_MB");
	long mb = v ? strtol(v, NULL, 10) : 0;

	return mb > 0 && mb <= 65536 ? (unsigned int)mb : 200u;
}

static void send(int fd, struct sb *b)
{
	size_t off = 0;
	ssize_t n;

	while (off < b->len) {
		n = write(fd, b->buf + off, b->len - off);
		if (n <= 0)
			_exit(1);
		off += n;
	}
	b->len = 0;
	b->nr_recs = 0;
}

/* A sample of PID, its one user frame at ip. */
static void sample_at(struct sb *b, uint64_t time_ns, uint64_t ip)
{
	sb_sample(b, time_ns, PID, PID, 0, "churn", CPROF_SAMPLE_USER_MODE,
		  0, NULL, 1, &ip);
}

/*
 * The program's mapping, STREAM_MB of one-page mappings of a library
 * (each at its own address, none sampled) with the program's samples
 * among them, a late library and samples in it, END.
 */
/* The mapping records of the loop (one is 96 bytes), a sample every so many. */
#define NR_CHURN	((uint64_t)STREAM_MB * 1000000 / 96)
#define CHURN_EVERY	(NR_CHURN / NR_SAMPLES)
#define NR_AMONG	((NR_CHURN - 1) / CHURN_EVERY + 1)

static uint64_t write_churn(int fd)
{
	uint64_t i, t = 1;
	struct sb b;

	sb_init(&b);
	sb_header(&b, NULL);
	sb_mmap(&b, t++, PID, APP, APP + 0x10000, 0, "/opt/fake/app", NULL, 0);
	for (i = 0; i < NR_CHURN; i++) {
		sb_mmap(&b, t++, PID, 0x10000000ull + (i << 12),
			0x10000000ull + (i << 12) + 0x1000, 0,
			"/opt/fake/libchurn.so", NULL, 0);
		if (i % CHURN_EVERY == 0)
			sample_at(&b, t++, APP + 0x1234);
		if (b.len > (1u << 20))
			send(fd, &b);
	}
	sb_mmap(&b, t++, PID, LATE, LATE + 0x1000, 0, "/opt/fake/late.so",
		NULL, 0);
	for (i = 0; i < NR_SAMPLES; i++)
		sample_at(&b, t++, LATE + 0x10);
	sb_end(&b, t, CPROF_END_COMPLETE, 0);
	send(fd, &b);
	sb_free(&b);
	return 0;
}

/* STREAM_MB of samples of four stacks of 32 frames: how many. */
static uint64_t nr_busy(void)
{
	return (uint64_t)STREAM_MB * 1000000 /
	       (sizeof(struct cprof_sample) + 32 * sizeof(uint64_t));
}

static uint64_t write_samples(int fd)
{
	uint64_t ips[32], i, n = nr_busy();
	struct sb b;
	int k;

	sb_init(&b);
	sb_header(&b, NULL);
	sb_mmap(&b, 0, PID, APP, APP + 0x10000, 0, "/opt/fake/app", NULL, 0);
	for (i = 0; i < n; i++) {
		for (k = 0; k < 32; k++)
			ips[k] = APP + 0x100 * k + (i % 4);
		sb_sample(&b, 1 + i, PID, PID, i % 4, "busy",
			  CPROF_SAMPLE_USER_MODE, 0, NULL, 32, ips);
		if (b.len > (1u << 20))
			send(fd, &b);
	}
	sb_end(&b, n + 1, CPROF_END_COMPLETE, 0);
	send(fd, &b);
	sb_free(&b);
	return n;
}

/* STREAM_MB of leavings of distinct tasks with 8 user frames: how many. */
static uint64_t nr_waits(void)
{
	return (uint64_t)STREAM_MB * 1000000 /
	       (sizeof(struct cprof_offcpu) + 8 * sizeof(uint64_t));
}

/*
 * An off-CPU profile: one wait that ends (1000 us in "sleeper"), then
 * STREAM_MB of leavings of other tasks whose return never comes, END.
 */
static uint64_t write_waits(int fd)
{
	struct cprof_header h = sb_default_header();
	uint64_t ips[8], i, n = nr_waits(), t = 1000;
	struct sb b;
	int k;

	h.kind = CPROF_KIND_OFFCPU;
	sb_init(&b);
	sb_header(&b, &h);
	sb_mmap(&b, 0, PID, APP, APP + 0x10000, 0, "/opt/fake/app", NULL, 0);
	ips[0] = APP + 0x40;
	sb_offcpu(&b, t, PID, PID, 0, "sleeper", CPROF_OFF_SLEEPING, 1, 0,
		  NULL, 1, ips);
	sb_oncpu(&b, t + 1000000, t, PID, 1);
	for (i = 0; i < n; i++) {
		for (k = 0; k < 8; k++)
			ips[k] = APP + 0x100 * k;
		sb_offcpu(&b, t + 2000000 + i, PID, (uint32_t)(1000 + i), 0,
			  "gone", CPROF_OFF_SLEEPING, 1, 0, NULL, 8, ips);
		if (b.len > (1u << 20))
			send(fd, &b);
	}
	sb_end(&b, t + 2000000 + n, CPROF_END_COMPLETE, 0);
	send(fd, &b);
	sb_free(&b);
	return n;
}

/*
 * cprof-dump -i - -f folded --no-symbolize, fed by write(fd) in a child
 * of its own; its exit status, its peak RSS in *kb.
 */
static int dump_piped(uint64_t (*gen_fn)(int fd), long *kb)
{
	char asan[512];
	struct rusage ru;
	int fds[2], st = -1;
	pid_t gen, dump;
	const char *opts = getenv("ASAN_OPTIONS");

	if (pipe(fds))
		abort();
	gen = fork();
	if (gen == 0) {
		close(fds[0]);
		gen_fn(fds[1]);
		_exit(0);
	}
	dump = fork();
	if (dump == 0) {
		dup2(fds[0], STDIN_FILENO);
		close(fds[0]);
		close(fds[1]);
		if (!freopen(tmp_path("out.txt"), "w", stdout) ||
		    !freopen(tmp_path("err.txt"), "w", stderr))
			_exit(126);
		/* ASan's quarantine of freed blocks is not the program's */
		snprintf(asan, sizeof(asan), "%s%squarantine_size_mb=16",
			 opts ? opts : "", opts ? ":" : "");
		setenv("ASAN_OPTIONS", asan, 1);
		execl(cprof_dump(), cprof_dump(), "-i", "-", "-f", "folded",
		      "--no-symbolize", (char *)NULL);
		_exit(127);
	}
	close(fds[0]);
	close(fds[1]);
	memset(&ru, 0, sizeof(ru));
	if (dump < 0 || wait4(dump, &st, 0, &ru) != dump)
		st = -1;
	waitpid(gen, NULL, 0);
	*kb = ru.ru_maxrss;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* The count of the folded line that is exactly stack, 0 if none. */
static unsigned long long folded_count(const char *out, const char *stack)
{
	const char *p = out;
	size_t n = strlen(stack);

	while ((p = strstr(p, stack))) {
		if ((p == out || p[-1] == '\n') && p[n] == ' ')
			return strtoull(p + n + 1, NULL, 10);
		p += n;
	}
	return 0;
}

/* How many times needle is in s. */
static int count_of(const char *s, const char *needle)
{
	int n = 0;

	while (s && (s = strstr(s, needle))) {
		n++;
		s++;
	}
	return n;
}

static void test_unused_mappings(void)
{
	unsigned long long dropped = 0, among = NR_AMONG;
	char *out, *err, *w;
	long kb;
	int rc;

	rc = dump_piped(write_churn, &kb);
	out = slurp(tmp_path("out.txt"), NULL);
	err = slurp(tmp_path("err.txt"), NULL);
	test_condf(rc == 0, "%u MB of unused mapping records through a pipe: exit 0 (%d: %.*s)",
		   STREAM_MB, rc, err ? (int)strcspn(err, "\n") : 0,
		   err ? err : "");
	test_condf(kb > 0 && kb <= RSS_MAX_KB,
		   "... peak RSS %ld KiB <= %u KiB", kb, RSS_MAX_KB);
	w = err ? strstr(err, "stdin: dropped ") : NULL;
	if (w)
		dropped = strtoull(w + strlen("stdin: dropped "), NULL, 10);
	test_condf(w && dropped > 1000000 &&
		   strstr(w, "mapping records no sample had used") &&
		   count_of(err, "dropped") == 1,
		   "... one warning counts the %llu records dropped", dropped);
	test_condf(out && folded_count(out, "churn;app+0x1234") == among,
		   "... the %llu samples among them: in the program listed first",
		   among);
	test_condf(out && folded_count(out, "churn;late.so+0x10") ==
			  NR_SAMPLES,
		   "... the samples after them: in the library mapped last");
	free(out);
	free(err);
}

static void test_many_samples(void)
{
	unsigned long long total = 0;
	char *out, *line;
	long kb;
	int rc;

	rc = dump_piped(write_samples, &kb);
	out = slurp(tmp_path("out.txt"), NULL);
	for (line = out; line && *line; line = strchr(line, '\n') + 1) {
		char *sp = strchr(line, ' ');

		if (!sp || !strchr(line, '\n'))
			break;
		total += strtoull(sp + 1, NULL, 10);
	}
	test_condf(rc == 0 && kb > 0 && kb <= RSS_MAX_KB,
		   "%u MB of samples of four stacks: exit 0, peak RSS %ld KiB <= %u KiB",
		   STREAM_MB, kb, RSS_MAX_KB);
	test_condf(total == nr_busy(), "... every sample counted (%llu of %llu)",
		   total, (unsigned long long)nr_busy());
	free(out);
}

static void test_unmatched_waits(void)
{
	unsigned long long dropped = 0;
	char *out, *err, *w;
	long kb;
	int rc;

	rc = dump_piped(write_waits, &kb);
	out = slurp(tmp_path("out.txt"), NULL);
	err = slurp(tmp_path("err.txt"), NULL);
	test_condf(rc == 0 && kb > 0 && kb <= RSS_MAX_KB,
		   "%u MB of leavings that never come back: exit 0, peak RSS %ld KiB <= %u KiB (%d: %.*s)",
		   STREAM_MB, kb, RSS_MAX_KB, rc,
		   err ? (int)strcspn(err, "\n") : 0, err ? err : "");
	w = err ? strstr(err, "stdin: ") : NULL;
	while (w && !strstr(w, "not kept for their other half"))
		w = strstr(w + 1, "stdin: ");
	if (w)
		dropped = strtoull(w + strlen("stdin: "), NULL, 10);
	test_condf(w && dropped > 100000 &&
		   count_of(err, "not kept for their other half") == 1,
		   "... one warning counts the %llu not kept", dropped);
	test_condf(out && folded_count(out, "sleeper;app+0x3f") == 1000,
		   "... the wait that ended: 1000 us in sleeper;app+0x3f (its return address less one) (%llu)",
		   out ? folded_count(out, "sleeper;app+0x3f") : 0);
	free(out);
	free(err);
}

int main(void)
{
	test_unused_mappings();
	test_many_samples();
	test_unmatched_waits();
	return test_report();
}
