// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The stream decoder on hand-built streams: a valid one, every truncation of
 * it, corrupt fields, unknown record types, short reads from a pipe.
 */
#include <stdbool.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <stdlib.h>
#include <termios.h>
#include <unistd.h>

#include "stream/stream.h"
#include "streambuild.h"
#include "test.h"

#define NAME	"in.bin"

struct result {
	int ret;		/* 0: decoded to the end, -1: rejected */
	unsigned int types[16];	/* records handed out, by type */
	bool misaligned;
	char msg[1024];		/* what went to stderr */
	struct cprof_end end;	/* the END handed out */
};

/* Decode as the module's own file (stream__from_module)? */
static bool from_module;

/* Decode everything readable from fd, capturing stderr. */
static void decode_fd(int fd, struct result *res)
{
	const struct cprof_rec *rec;
	struct stream *s;
	int save, errfd;
	ssize_t n;

	memset(res, 0, sizeof(*res));
	fflush(stderr);
	save = dup(STDERR_FILENO);
	errfd = memfd_create("stderr", 0);
	dup2(errfd, STDERR_FILENO);

	s = stream__new(fd, NAME);
	if (from_module)
		stream__from_module(s);
	if (!stream__read_header(s)) {
		res->ret = -1;
	} else {
		while ((res->ret = stream__next(s, &rec)) > 0) {
			if ((uintptr_t)rec % 8)
				res->misaligned = true;
			res->types[rec->type < 16 ? rec->type : 0]++;
			if (rec->type == CPROF_REC_END)
				memcpy(&res->end, rec, sizeof(res->end));
		}
	}
	stream__free(s);

	fflush(stderr);
	dup2(save, STDERR_FILENO);
	close(save);
	n = pread(errfd, res->msg, sizeof(res->msg) - 1, 0);
	res->msg[n > 0 ? n : 0] = '\0';
	close(errfd);
}

static void decode(const void *buf, size_t len, struct result *res)
{
	int fd = memfd_create("stream", 0);

	if (len && write(fd, buf, len) != (ssize_t)len)
		abort();
	lseek(fd, 0, SEEK_SET);
	decode_fd(fd, res);
	close(fd);
}

/* One line on stderr, naming the input and the byte offset. */
static bool one_line_at(const struct result *res, size_t at)
{
	char want[64];
	const char *nl = strchr(res->msg, '\n');

	snprintf(want, sizeof(want), "at byte %zu", at);
	return res->ret == -1 && nl && !nl[1] &&
	       strstr(res->msg, "cprof-dump: " NAME ": ") == res->msg &&
	       strstr(res->msg, want);
}

static void build_valid(struct sb *b)
{
	static const uint8_t bid[20] = { 0xde, 0xad, 0xbe, 0xef };
	uint64_t k[3] = { 0xffffffff81000100, 0xffffffff81000200,
			  0xffffffff81000300 };
	uint64_t u[2] = { 0x401000, 0x402000 };
	struct cprof_rec *r;

	sb_init(b);
	sb_header(b, NULL);
	sb_mmap(b, 1, 42, 0x400000, 0x500000, 0, "/usr/bin/x", bid, 20);
	sb_sample(b, 10, 42, 43, 1, "x", CPROF_SAMPLE_USER_MODE, 0, NULL, 2, u);
	sb_sample(b, 11, 42, 43, 2, "x", 0, 3, k, 2, u);
	sb_throttle(b, 12, 3, SB_PERIOD_NS * 2);
	/* a record type from the future: skipped */
	r = sb_rec(b, 99, 0, 24);
	memset(r + 1, 0xab, 16);
	sb_lost(b, 13, 0, 5, 1);
	sb_sample(b, 14, 0, 0, 3, "swapper/3", CPROF_SAMPLE_KTHREAD, 1, k, 0,
		  NULL);
	sb_end(b, 999000000, CPROF_END_COMPLETE, 5);
}

static void test_valid(void)
{
	struct result res;
	struct sb b;

	build_valid(&b);
	decode(b.buf, b.len, &res);
	test_cond("valid stream decodes to the end", res.ret == 0);
	test_cond("nothing printed for a valid stream", res.msg[0] == '\0');
	test_cond("3 samples", res.types[CPROF_REC_SAMPLE] == 3);
	test_cond("1 mmap, 1 lost, 1 throttle, 1 end",
		  res.types[CPROF_REC_MMAP] == 1 &&
		  res.types[CPROF_REC_LOST] == 1 &&
		  res.types[CPROF_REC_THROTTLE] == 1 &&
		  res.types[CPROF_REC_END] == 1);
	test_cond("unknown record type skipped", res.types[0] == 0);
	test_cond("records handed out 8-byte aligned", !res.misaligned);
	sb_free(&b);
}

/* Every prefix of a valid stream is rejected, at the right offset. */
static void test_truncations(void)
{
	size_t len, bad = 0, k = 0, first_bad = 0;
	struct result res;
	struct sb b;

	build_valid(&b);
	for (len = 0; len < b.len; len++) {
		size_t at;

		while (k + 1 < b.nr_recs && b.offs[k + 1] <= len)
			k++;
		if (len < b.offs[0])
			at = 0;			/* in the header */
		else if (len == b.offs[k])
			at = len;		/* clean cut: no END */
		else
			at = b.offs[k];		/* inside record k */
		decode(b.buf, len, &res);
		if (!one_line_at(&res, at)) {
			if (!bad++)
				first_bad = len;
		}
	}
	test_condf(bad == 0,
		   "all %zu truncation points rejected with one line at the right byte (%zu wrong, first at %zu)",
		   b.len, bad, first_bad);
	decode(b.buf, b.offs[2] + 20, &res);
	test_cond("truncated sample message",
		  strstr(res.msg, "truncated sample record at byte") &&
		  strstr(res.msg, "(need 88 bytes, have 20)"));
	decode(b.buf, b.offs[b.nr_recs - 1], &res);
	test_cond("missing END message", strstr(res.msg, "no END record"));
	decode(b.buf, 100, &res);
	test_cond("truncated header message",
		  strstr(res.msg, "truncated header at byte 0 (need 160 bytes, have 100)"));
	sb_free(&b);
}

typedef void (*corrupt_fn)(struct sb *b);

static struct cprof_header *hdr(struct sb *b)
{
	return (struct cprof_header *)b->buf;
}

static void *rec(struct sb *b, size_t i)
{
	return b->buf + b->offs[i];
}

static void c_magic(struct sb *b) { hdr(b)->magic[3] = 'X'; }
static void c_version(struct sb *b) { hdr(b)->version = CPROF_VERSION + 1; }
static void c_version0(struct sb *b) { hdr(b)->version = CPROF_VERSION_MIN - 1; }
static void c_hsize(struct sb *b) { hdr(b)->size = 164; }
static void c_ncpu(struct sb *b) { hdr(b)->nr_cpu_ids = 0; }
static void c_size0(struct sb *b) { ((struct cprof_rec *)rec(b, 1))->size = 0; }
static void c_size_odd(struct sb *b) { ((struct cprof_rec *)rec(b, 1))->size = 76; }
static void c_size_huge(struct sb *b) { ((struct cprof_rec *)rec(b, 1))->size = 0x7ffffff8; }
static void c_size_short(struct sb *b) { ((struct cprof_rec *)rec(b, 1))->size = 40; }
static void c_nr_user(struct sb *b) { ((struct cprof_sample *)rec(b, 2))->nr_user = 300; }
static void c_nr_kernel(struct sb *b) { ((struct cprof_sample *)rec(b, 2))->nr_kernel = 128; }
static void c_nr_mismatch(struct sb *b) { ((struct cprof_sample *)rec(b, 2))->nr_user = 1; }
static void c_cpu(struct sb *b) { ((struct cprof_sample *)rec(b, 2))->cpu = 4; }
static void c_lost_cpu(struct sb *b) { ((struct cprof_lost *)rec(b, 5))->cpu = 1000; }
static void c_throttle0(struct sb *b) { ((struct cprof_throttle *)rec(b, 3))->period_ns = 0; }
static void c_path(struct sb *b)
{
	struct cprof_mmap *m = rec(b, 0);

	memset(m->path, 'a', m->rec.size - sizeof(*m));
}
static void c_range(struct sb *b) { ((struct cprof_mmap *)rec(b, 0))->end = 0x400000; }
static void c_bid(struct sb *b) { ((struct cprof_mmap *)rec(b, 0))->build_id_size = 21; }
static void c_after_end(struct sb *b) { sb_grow(b, 8); }

static void test_corrupt(void)
{
	static const struct {
		const char *what;
		corrupt_fn fn;
		int rec;		/* offset: this record's, -1 a header field */
		size_t hdr_off;
		const char *says;
	} cases[] = {
		{ "bad magic", c_magic, -1, 0, "bad magic" },
		{ "newer version", c_version, -1, 8, "unsupported stream version 4 at byte 8 (this cprof-dump reads versions 1 to 3)" },
		{ "older version", c_version0, -1, 8, "unsupported stream version 0" },
		{ "header size not a multiple of 8", c_hsize, -1, 12, "bad header size 164" },
		{ "nr_cpu_ids 0", c_ncpu, -1, 16, "bad nr_cpu_ids 0" },
		{ "record size 0", c_size0, 1, 0, "bad size 0 in sample record" },
		{ "record size not a multiple of 8", c_size_odd, 1, 0, "bad size 76" },
		{ "huge record size", c_size_huge, 1, 0, "bad size 2147483640" },
		{ "record shorter than its type", c_size_short, 1, 0, "short sample record" },
		{ "nr_user too big", c_nr_user, 2, 0, "nr_user 300 exceeds 127" },
		{ "nr_kernel too big", c_nr_kernel, 2, 0, "nr_kernel 128 exceeds 127" },
		{ "frame counts against size", c_nr_mismatch, 2, 0, "does not match 3 kernel + 1 user frames" },
		{ "cpu out of range", c_cpu, 2, 0, "cpu 4 out of range" },
		{ "lost cpu out of range", c_lost_cpu, 5, 0, "lost record at byte" },
		{ "throttle period 0", c_throttle0, 3, 0, "period_ns 0" },
		{ "unterminated path", c_path, 0, 0, "path not NUL-terminated" },
		{ "empty mapping", c_range, 0, 0, "empty range" },
		{ "build id too long", c_bid, 0, 0, "build_id_size 21" },
		{ "data after END", c_after_end, 7, 48, "after the END record" },
	};
	struct result res;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct sb b;
		size_t at;

		build_valid(&b);
		cases[i].fn(&b);
		at = cases[i].rec < 0 ? cases[i].hdr_off :
		     b.offs[cases[i].rec] + cases[i].hdr_off;
		decode(b.buf, b.len, &res);
		test_condf(one_line_at(&res, at) && strstr(res.msg, cases[i].says),
			   "%s: rejected at byte %zu (%.*s)", cases[i].what, at,
			   (int)strcspn(res.msg, "\n"), res.msg);
		sb_free(&b);
	}
	decode("", 0, &res);
	test_cond("empty input rejected", one_line_at(&res, 0));
}

/* A pipe fed a few bytes at a time: reads come back short. */
/*
 * Samples with Python frames (version 3): one with a cgroup id, one
 * without, one with none of them (no thread state); record 3 is the one
 * damaged.
 */
static void build_py(struct sb *b, unsigned int version)
{
	struct cprof_header h = sb_default_header();
	const struct cprof_pyframe py[2] = {
		{ 0x7f0000001000, 12, 3 },
		{ 0x7f0000002000 | CPROF_PYFRAME_ENTRY, -1, 1 },
	};
	uint64_t u[2] = { 0x401000, 0x402000 };

	h.version = version;
	sb_init(b);
	sb_header(b, &h);
	sb_mmap(b, 1, 42, 0x400000, 0x500000, 0, "/usr/bin/python3", NULL, 0);
	sb_sample_py(b, 10, 42, 43, 1, "py", 0, 0, NULL, 2, u, 77, 0x400000,
		     CPROF_PY_COMPLETE, 2, py);
	sb_sample_py(b, 11, 42, 43, 1, "py", 0, 0, NULL, 2, u, 0, 0x400000,
		     CPROF_PY_NO_THREAD, 0, NULL);
	sb_sample_py(b, 12, 42, 44, 2, "py", 0, 0, NULL, 1, u, 0, 0x400000,
		     CPROF_PY_DEPTH, 1, py);
	sb_end(b, 999000000, CPROF_END_COMPLETE, 0);
}

static struct cprof_pytrail *py_of(struct sb *b, size_t i)
{
	return (struct cprof_pytrail *)stream__sample_pytrail(rec(b, i));
}

static void test_pytrail(void)
{
	static const struct {
		const char *what;
		const char *says;
	} cases[] = {
		{ "type", "trailer type 2 at byte" },
		{ "status", "Python trailer status 5 (at most 4)" },
		{ "frames past the depth", "Python trailer of 128 frames exceeds 127" },
		{ "frames against size", "does not match 0 kernel + 1 user frames and a Python trailer of 2 frames (104 bytes)" },
		{ "a trailer too short", "size 64 does not match 0 kernel + 1 user frames (56 bytes)" },
	};
	const struct cprof_pytrail *t;
	struct result res;
	struct sb b;
	size_t i;

	build_py(&b, CPROF_VERSION);
	decode(b.buf, b.len, &res);
	test_condf(res.ret == 0 && res.types[CPROF_REC_SAMPLE] == 3 && !res.msg[0],
		   "samples with Python trailers decode (with and without a cgroup, none of frames): %s",
		   res.msg);
	t = stream__sample_pytrail(rec(&b, 1));
	test_cond("the first one's trailer: 2 frames, after its cgroup id",
		  t && t->nr == 2 && t->text == 0x400000 &&
		  t->frame[1].code == (0x7f0000002000 | CPROF_PYFRAME_ENTRY) &&
		  t->frame[1].instr == -1 &&
		  ((const struct cprof_sample *)rec(&b, 1))->ips[2] == 77);
	t = stream__sample_pytrail(rec(&b, 2));
	test_cond("no thread state: a trailer of no frames",
		  t && !t->nr && t->status == CPROF_PY_NO_THREAD);
	test_cond("a record of another type has no trailer",
		  !stream__sample_pytrail(rec(&b, 0)));
	sb_free(&b);

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		build_py(&b, CPROF_VERSION);
		switch (i) {
		case 0:
			py_of(&b, 3)->type = 2;
			break;
		case 1:
			py_of(&b, 3)->status = 5;
			break;
		case 2:
			py_of(&b, 3)->nr = 128;
			break;
		case 3:
			py_of(&b, 3)->nr = 2;
			break;
		case 4:
			/* 8 bytes past the frames: no room for a trailer */
			((struct cprof_rec *)rec(&b, 3))->size = 64;
			memmove(rec(&b, 3) + 64, rec(&b, 4),
				b.len - b.offs[4]);
			b.len -= 32 - 8;
			break;
		}
		decode(b.buf, b.len, &res);
		test_condf(one_line_at(&res, b.offs[3]) && strstr(res.msg, cases[i].says),
			   "a bad Python trailer (%s): rejected at byte %zu (%.*s)",
			   cases[i].what, b.offs[3],
			   (int)strcspn(res.msg, "\n"), res.msg);
		sb_free(&b);
	}
	build_py(&b, 2);
	decode(b.buf, b.len, &res);
	test_condf(one_line_at(&res, b.offs[1]) &&
		   strstr(res.msg, "does not match 0 kernel + 2 user frames and a cgroup"),
		   "version 2: no trailer (%.*s)", (int)strcspn(res.msg, "\n"),
		   res.msg);
	sb_free(&b);
}

static void test_short_reads(void)
{
	struct result res;
	struct sb b;
	int fds[2];
	pid_t pid;
	size_t i;

	build_valid(&b);
	if (pipe(fds))
		abort();
	pid = fork();
	if (pid == 0) {
		close(fds[0]);
		for (i = 0; i < b.len; i += 7) {
			size_t n = b.len - i < 7 ? b.len - i : 7;

			if (write(fds[1], b.buf + i, n) != (ssize_t)n)
				_exit(1);
			if (i % 70 == 0)
				usleep(100);
		}
		_exit(0);
	}
	close(fds[1]);
	decode_fd(fds[0], &res);
	close(fds[0]);
	waitpid(pid, NULL, 0);
	test_cond("stream over a pipe in 7-byte writes decodes",
		  res.ret == 0 && res.types[CPROF_REC_SAMPLE] == 3 &&
		  res.types[CPROF_REC_END] == 1 && !res.misaligned);
	sb_free(&b);
}

/*
 * Decode len bytes of b read from a pty master whose slave is closed: the
 * bytes, then EIO, as a read of /proc/cprof/profile after procfs removed it.
 */
static void decode_eio(const struct sb *b, size_t len, struct result *res)
{
	struct termios t;
	int m, sl;

	m = posix_openpt(O_RDWR | O_NOCTTY);
	if (m < 0 || grantpt(m) || unlockpt(m))
		abort();
	sl = open(ptsname(m), O_RDWR | O_NOCTTY);
	if (sl < 0 || tcgetattr(sl, &t))
		abort();
	cfmakeraw(&t);
	if (tcsetattr(sl, TCSANOW, &t) ||
	    write(sl, b->buf, len) != (ssize_t)len)
		abort();
	close(sl);
	decode_fd(m, res);
	close(m);
}

/* The module unloaded mid-profile: what was read is kept, with one warning. */
static void test_module_gone(void)
{
	size_t last = 0, at_end, i;
	struct result res;
	uint64_t start;
	struct sb b;

	build_valid(&b);
	start = hdr(&b)->start_time_ns;
	at_end = b.offs[b.nr_recs - 1];
	for (i = 0; i < b.nr_recs; i++)
		if (((struct cprof_rec *)(b.buf + b.offs[i]))->type ==
		    CPROF_REC_SAMPLE && b.offs[i] < at_end)
			last = i;

	decode_eio(&b, at_end, &res);
	test_condf(res.ret == -1 && strstr(res.msg, "failed to read at byte") &&
		   strstr(res.msg, "Input/output error"),
		   "EIO from a file that is not the module's is an error: %s",
		   res.msg);

	from_module = true;
	decode_eio(&b, at_end, &res);
	test_condf(res.ret == 0 && res.types[CPROF_REC_SAMPLE] == 3 &&
		   res.types[CPROF_REC_END] == 1 &&
		   res.end.reason == CPROF_END_UNLOAD && res.end.samples == 3 &&
		   res.end.time_ns == (start > 14 ? start : 14) &&
		   res.end.duration_ns == res.end.time_ns - start,
		   "the module's file cut before END: 3 samples and an END of reason unload, at the last sample's time (ret %d, %u samples, reason %u, %llu counted, at %llu)",
		   res.ret, res.types[CPROF_REC_SAMPLE], res.end.reason,
		   (unsigned long long)res.end.samples,
		   (unsigned long long)res.end.time_ns);
	test_condf(strstr(res.msg, "module was unloaded at byte") &&
		   strstr(res.msg, "holds the 3 samples read") &&
		   !strchr(res.msg, '\n')[1],
		   "one warning says so: %s", res.msg);

	decode_eio(&b, b.offs[last] + 20, &res);
	test_condf(res.ret == 0 && res.types[CPROF_REC_SAMPLE] == 2 &&
		   res.end.samples == 2 &&
		   strstr(res.msg, "a record cut in two is left out"),
		   "cut inside a sample: the samples before it, said (ret %d, %u samples): %s",
		   res.ret, res.types[CPROF_REC_SAMPLE], res.msg);

	decode_eio(&b, 100, &res);
	test_condf(res.ret == -1 && !strchr(res.msg, '\n')[1] &&
		   strstr(res.msg, "at byte 100"),
		   "cut inside the header: still an error, one line: %s",
		   res.msg);

	decode_eio(&b, b.len, &res);
	test_cond("the module's whole stream: its own END, nothing said",
		  res.ret == 0 && res.end.reason == CPROF_END_COMPLETE &&
		  res.msg[0] == '\0');
	from_module = false;
	sb_free(&b);
}

/* Records larger than one read buffer's remainder, many of them. */
static void test_many_records(void)
{
	uint64_t ips[2 * CPROF_MAX_DEPTH];
	struct result res;
	struct sb b;
	int i;

	for (i = 0; i < 2 * CPROF_MAX_DEPTH; i++)
		ips[i] = 0x400000 + i;
	sb_init(&b);
	sb_header(&b, NULL);
	for (i = 0; i < 2000; i++) {
		sb_mmap(&b, i, i, 0x400000, 0x401000, 0, "/a/path/to/something",
			NULL, 0);
		sb_sample(&b, i, i, i, i % 4, "many", 0, CPROF_MAX_DEPTH, ips,
			  CPROF_MAX_DEPTH, ips + CPROF_MAX_DEPTH);
	}
	sb_end(&b, 1, 0, 0);
	decode(b.buf, b.len, &res);
	test_condf(res.ret == 0 && res.types[CPROF_REC_SAMPLE] == 2000 &&
		   res.types[CPROF_REC_MMAP] == 2000 && !res.misaligned,
		   "4000 records of full depth (%zu bytes) across buffer refills",
		   b.len);
	sb_free(&b);
}

/*
 * A stream of one flagged mmap record with room bytes after its fixed
 * part, the first letters of them 'a' and the rest 0, decoded.
 */
static void decode_flagged_mmap(size_t room, size_t letters,
				struct result *res)
{
	struct cprof_mmap *m;
	struct sb b;

	sb_init(&b);
	sb_header(&b, NULL);
	m = sb_rec(&b, CPROF_REC_MMAP, CPROF_MMAP_FILE_ID, sizeof(*m) + room);
	m->start = 0x1000;
	m->end = 0x2000;
	memset(m->path, 'a', letters);
	sb_end(&b, 1000000000, CPROF_END_COMPLETE, 0);
	decode(b.buf, b.len, res);
	sb_free(&b);
}

/*
 * A mapping record's file identity (CPROF_MMAP_FILE_ID): read back, and
 * refused where it leaves no room for the path or overlaps the path's NUL.
 */
static void test_file_id(void)
{
	struct cprof_file_id id = {
		.ino = 1234567, .btime_ns = 1700000000123456789LL,
		.start_ns = 42000000000ULL, .dev = 0x803, .fs_magic = 0xef53,
	}, got = { 0 };
	struct cprof_mmap *m;
	struct result res;
	struct sb b;

	sb_init(&b);
	sb_header(&b, NULL);
	sb_mmap_id(&b, 1, 42, 0x1000, 0x2000, "/lib/x.so", &id);
	m = rec(&b, 0);
	test_cond("a file identity is read back",
		  stream__mmap_file_id(m, &got) == 1 &&
		  !memcmp(&got, &id, sizeof(id)));
	m->rec.flags = 0;
	test_cond("... and only when flagged",
		  stream__mmap_file_id(m, &got) == 0);
	m->rec.flags = CPROF_MMAP_FILE_ID;
	sb_end(&b, 1000000000, CPROF_END_COMPLETE, 0);
	decode(b.buf, b.len, &res);
	test_condf(res.ret == 0 && res.types[CPROF_REC_MMAP] == 1,
		   "a stream with one is accepted (%s)", res.msg);
	sb_free(&b);

	/* no room for a path besides the identity */
	decode_flagged_mmap(sizeof(id), 0, &res);
	test_condf(one_line_at(&res, sizeof(struct cprof_header)) &&
		   strstr(res.msg, "no room for a path and a file id"),
		   "no room for a path besides the identity: refused (%s)",
		   res.msg);
	/* 8 bytes of path, its NUL 12 bytes into the identity */
	decode_flagged_mmap(8 + sizeof(id), 20, &res);
	test_condf(one_line_at(&res, sizeof(struct cprof_header)) &&
		   strstr(res.msg, "path not NUL-terminated"),
		   "a path whose NUL is inside the identity: refused (%s)",
		   res.msg);
}

/* An off-CPU stream: its header's kind, its two records, their checks. */
static void test_offcpu(void)
{
	static const struct {
		const char *what;
		int field;		/* 0: every, 1: state, 2: back, 3: kind */
		const char *says;
	} bad[] = {
		{ "every 0", 0, "every 0 (must be 1 or more)" },
		{ "state out of range", 1, "state 9 (at most 4)" },
		{ "back before it left", 2, "back at 5 before it left at 100" },
		{ "kind out of range", 3, "bad kind 8 at byte 160" },
	};
	struct cprof_header h = sb_default_header();
	uint64_t u[2] = { 0x401000, 0x402000 };
	struct cprof_offcpu *o;
	struct cprof_oncpu *r;
	struct result res;
	struct sb b;
	size_t i;

	for (i = 0; i <= sizeof(bad) / sizeof(bad[0]); i++) {
		h.kind = i < sizeof(bad) / sizeof(bad[0]) && bad[i].field == 3 ?
			 CPROF_KIND_MAX + 1 : CPROF_KIND_OFFCPU;
		sb_init(&b);
		sb_header(&b, &h);
		sb_offcpu(&b, 100, 42, 43, 1, "x", CPROF_OFF_SLEEPING, 2, 0,
			  NULL, 2, u);
		sb_oncpu(&b, 200, 100, 43, 0);
		sb_end(&b, 999000000, CPROF_END_COMPLETE, 0);
		o = (struct cprof_offcpu *)(b.buf + b.offs[0]);
		r = (struct cprof_oncpu *)(b.buf + b.offs[1]);
		if (i == sizeof(bad) / sizeof(bad[0])) {
			decode(b.buf, b.len, &res);
			test_cond("off-CPU stream decodes to the end",
				  res.ret == 0 && !res.msg[0] &&
				  res.types[CPROF_REC_OFFCPU] == 1 &&
				  res.types[CPROF_REC_ONCPU] == 1);
			sb_free(&b);
			break;
		}
		if (bad[i].field == 0)
			o->every = 0;
		else if (bad[i].field == 1)
			o->state = 9;
		else if (bad[i].field == 2)
			r->time_ns = 5;
		decode(b.buf, b.len, &res);
		test_condf(res.ret == -1 && strstr(res.msg, bad[i].says),
			   "%s: rejected (%.*s)", bad[i].what,
			   (int)strcspn(res.msg, "\n"), res.msg);
		sb_free(&b);
	}
}

/* A snapshot's threads: decoded, a state out of range refused. */
static void test_threads(void)
{
	struct cprof_header h = sb_default_header();
	uint64_t k[1] = { 0xffffffff81000000ull }, u[2] = { 0x401000, 0x402000 };
	struct cprof_thread *t;
	struct result res;
	struct sb b;
	int bad;

	for (bad = 0; bad < 2; bad++) {
		h.kind = CPROF_KIND_THREADS;
		sb_init(&b);
		sb_header(&b, &h);
		sb_thread(&b, 100, 42, 43, "x", CPROF_OFF_RUNNING, 0, 1, k, 2, u);
		sb_thread(&b, 101, 42, 44, "x", CPROF_OFF_SLEEPING, 5000, 1, k,
			  2, u);
		sb_end(&b, 999000, CPROF_END_COMPLETE, 0);
		t = (struct cprof_thread *)(b.buf + b.offs[1]);
		if (bad)
			t->state = CPROF_THREAD_STATE_MAX + 1;
		decode(b.buf, b.len, &res);
		if (bad)
			test_condf(res.ret == -1 && strstr(res.msg, "thread record at byte") &&
				   strstr(res.msg, "state 6 (at most 5)"),
				   "a thread's state out of range: rejected (%.*s)",
				   (int)strcspn(res.msg, "\n"), res.msg);
		else
			test_cond("a snapshot decodes to the end",
				  res.ret == 0 && !res.msg[0] &&
				  res.types[CPROF_REC_THREAD] == 2);
		sb_free(&b);
	}
}

int main(void)
{
	test_valid();
	test_offcpu();
	test_pytrail();
	test_threads();
	test_file_id();
	test_truncations();
	test_corrupt();
	test_short_reads();
	test_module_gone();
	test_many_records();
	return test_report();
}
