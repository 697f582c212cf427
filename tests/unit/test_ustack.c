// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * test_ustack: a sample taken before its program's unwind table arrived is
 * completed from its stack copy (CPROF_REC_USTACK) once userland has the
 * table.
 *
 * - ustack_walk() over hand-made tables and copies: each rule the module
 *   follows, the frame-pointer chain where no table covers the code, a
 *   copy too short to finish, a register rule only in the interrupted
 *   frame.
 * - The whole path: this test's own stack is copied (as the module would
 *   copy it, from a frame of this binary, which is built without frame
 *   pointers), a loader compiles this process's files into a module file
 *   (a plain file here), and a stream of one sample whose module walk
 *   stopped after two frames plus that copy is read by ingest: the sample
 *   comes out with every frame up to main and the C library's start, as
 *   the frames' return addresses say; without a loader, or with a copy cut
 *   short, it comes out as it went in.
 */
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "ingest/ingest.h"
#include "streambuild.h"
#include "unwind/tableload.h"
#include "test.h"
#include "testutil.h"
#include "unwind/ustack.h"

static const volatile sig_atomic_t never;

static unsigned char tbuf[256];
static struct ustack_code test_code;

static bool code_at(void *arg, uint64_t ip, struct ustack_code *c)
{
	(void)arg;
	if (ip < test_code.start || ip >= test_code.end)
		return false;
	*c = test_code;
	return true;
}

/*
 * A table as the module takes it (header, rules, pc[], rule_of[]): rule
 * from file offset 0x100, NONE from 0x200; its file mapped at 0x400000.
 */
static void one_rule_py(struct cprof_urow rule, bool py)
{
	struct cprof_utable h = {
		.magic = CPROF_UTABLE_MAGIC, .size = sizeof(h),
		.nr_rows = 2, .nr_rules = 2,
		.flags = py ? CPROF_UTABLE_PY : 0,
	};
	struct cprof_upy upy = { .runtime = 0x1000, .version = 0x030b02f0 };
	struct cprof_urow rules[2] = { rule, { .cfa_base = CPROF_CFA_NONE } };
	uint32_t pc[2] = { 0x100, 0x200 };
	uint16_t rule_of[2] = { 0, 1 };
	size_t len = 0;

	memcpy(tbuf + len, &h, sizeof(h));
	len += sizeof(h);
	/* a CPython interpreter's layout, between the header and the rules */
	if (py) {
		memcpy(tbuf + len, &upy, sizeof(upy));
		len += sizeof(upy);
	}
	memcpy(tbuf + len, rules, sizeof(rules));
	len += sizeof(rules);
	memcpy(tbuf + len, pc, sizeof(pc));
	len += sizeof(pc);
	memcpy(tbuf + len, rule_of, sizeof(rule_of));
	len += sizeof(rule_of);
	ustack_table_free((struct ustack_table *)test_code.table);
	test_code = (struct ustack_code){
		.start = 0x400000, .end = 0x401000,
		.table = ustack_table_new(tbuf, len),
	};
}

static void one_rule(struct cprof_urow rule)
{
	one_rule_py(rule, false);
}

static struct cprof_ustack *copy_of(const uint64_t *words, size_t n,
				    uint64_t sp, uint64_t fp)
{
	struct cprof_ustack *u = calloc(1, sizeof(*u) + n * 8);

	u->size = n * 8;
	u->regs[6] = fp;
	u->regs[7] = sp;
	memcpy(u->data, words, n * 8);
	return u;
}

static void walker_rules(void)
{
	const uint64_t sp = 0x7ffd0000;
	uint64_t ips[16];
	struct cprof_ustack *u;
	enum ustack_end end;
	int n;

	/* CFA = sp + 8: a frameless leaf, its caller's return address 0 */
	one_rule((struct cprof_urow){ .cfa_base = CPROF_CFA_SP,
					  .cfa_off = 8 });
	u = copy_of((uint64_t[]){ 0x400150, 0 }, 2, sp, 0);
	end = ustack_walk(u, 0x400120, true, code_at, NULL, ips, 16, &n);
	test_condf(end == USTACK_COMPLETE && n == 2 && ips[0] == 0x400120 &&
		   ips[1] == 0x400150,
		   "sp + 8 twice: the leaf, its caller, then return address 0 ends it (%d frames)",
		   n);
	end = ustack_walk(u, 0x400120, true, code_at, NULL, ips, 1, &n);
	test_cond("stopped at max frames: the depth", end == USTACK_DEPTH &&
		  n == 1);
	/* a CPython interpreter's table: its layout skipped to the rules */
	one_rule_py((struct cprof_urow){ .cfa_base = CPROF_CFA_SP,
					 .cfa_off = 8 }, true);
	end = ustack_walk(u, 0x400120, true, code_at, NULL, ips, 16, &n);
	test_condf(end == USTACK_COMPLETE && n == 2 && ips[1] == 0x400150,
		   "a CPython interpreter's table (CPROF_UTABLE_PY): the same walk (%d frames)",
		   n);
	one_rule((struct cprof_urow){ .cfa_base = CPROF_CFA_SP,
				      .cfa_off = 8 });
	u->size = 8;
	end = ustack_walk(u, 0x400120, true, code_at, NULL, ips, 16, &n);
	test_cond("a copy too short for the second return address: short",
		  end == USTACK_SHORT && n == 2);
	free(u);

	/* outside the table's rows: the frame-pointer chain */
	u = copy_of((uint64_t[]){ 0, 0, sp + 32, 0x400380, 0, 0x400390 }, 6,
		    sp, sp + 16);
	end = ustack_walk(u, 0x400300, true, code_at, NULL, ips, 16, &n);
	test_condf(end == USTACK_COMPLETE && n == 3 && ips[1] == 0x400380 &&
		   ips[2] == 0x400390,
		   "no row: frame pointers, rbp's chain to its 0 (%d frames)",
		   n);
	free(u);

	/* CFA = *(sp + 8) + 16: a realigned frame's saved CFA */
	one_rule((struct cprof_urow){
		.cfa_base = CPROF_CFA_SP_DEREF,
		.cfa_off = CPROF_CFA_PAIR(8, 16) });
	u = copy_of((uint64_t[]){ 0, sp + 16, 0, 0x400110, 0 }, 5, sp, 0);
	end = ustack_walk(u, 0x400120, true, code_at, NULL, ips, 3, &n);
	test_condf(n >= 2 && ips[1] == 0x400110,
		   "*(sp + 8) + 16: the caller's return address at %#" PRIx64,
		   n >= 2 ? ips[1] : 0);
	free(u);

	/* CFA = r12 + 8: in the interrupted frame, with its registers only */
	one_rule((struct cprof_urow){
		.cfa_base = CPROF_CFA_REG, .cfa_off = CPROF_CFA_PAIR(8, 12) });
	u = copy_of((uint64_t[]){ 0, 0x400130, 0 }, 3, sp, 0);
	u->regs[12] = sp + 8;
	end = ustack_walk(u, 0x400120, true, code_at, NULL, ips, 16, &n);
	test_cond("r12 + 8 without the registers: frame pointers (rbp 0 ends it)",
		  end == USTACK_COMPLETE && n == 1);
	u->rec.flags = CPROF_USTACK_REGS;
	end = ustack_walk(u, 0x400120, true, code_at, NULL, ips, 16, &n);
	test_condf(n >= 2 && ips[1] == 0x400130,
		   "r12 + 8 with them: the caller at %#" PRIx64,
		   n >= 2 ? ips[1] : 0);
	free(u);

	/*
	 * A frame of 8 KiB and a bit, twice, over a copy with holes (pages
	 * not in memory at the tick, zeros in data[]): a hole the walk reads
	 * nothing from is passed; one holding a return address stops it.
	 */
	one_rule((struct cprof_urow){ .cfa_base = CPROF_CFA_SP,
				      .cfa_off = 0x2008 });
	{
		uint64_t *w = calloc(0x4010 / 8, 8);

		w[0x2000 / 8] = 0x400150;
		u = copy_of(w, 0x4010 / 8, sp, 0);
		free(w);
	}
	u->holes = 1u << 1;
	end = ustack_walk(u, 0x400120, true, code_at, NULL, ips, 16, &n);
	test_condf(end == USTACK_COMPLETE && n == 2 && ips[1] == 0x400150,
		   "a hole between sp and the return address: passed (%d frames)",
		   n);
	u->holes = 1u << 2;
	end = ustack_walk(u, 0x400120, true, code_at, NULL, ips, 16, &n);
	test_condf(end == USTACK_SHORT && n == 1,
		   "the return address in a hole: short (%d frames)", n);
	u->holes = 1u << 4;
	end = ustack_walk(u, 0x400120, true, code_at, NULL, ips, 16, &n);
	test_condf(end == USTACK_SHORT && n == 2,
		   "the second return address (data[0x4008], page 4) in a hole: short (%d frames)",
		   n);
	/* sp 8 bytes below a page's end: page 1 starts at data[8] */
	u->regs[7] = sp - 8;
	end = ustack_walk(u, 0x400120, true, code_at, NULL, ips, 16, &n);
	test_condf(end == USTACK_COMPLETE && n == 2,
		   "pages counted from sp's: data[0x4008] is in page 5 when sp is 8 bytes below a page's end, not in page 4's hole (%d frames)",
		   n);
	u->holes = 1u << 5 | 1u << 0;
	end = ustack_walk(u, 0x400120, true, code_at, NULL, ips, 16, &n);
	test_condf(end == USTACK_SHORT && n == 2,
		   "... and in page 5's (%d frames)", n);
	free(u);

	/* CFA below sp: a lie, stopped */
	one_rule((struct cprof_urow){ .cfa_base = CPROF_CFA_SP,
					  .cfa_off = -8 });
	u = copy_of((uint64_t[]){ 0x400150, 0 }, 2, sp, 0);
	end = ustack_walk(u, 0x400120, true, code_at, NULL, ips, 16, &n);
	test_cond("a CFA below the stack pointer: stopped",
		  end == USTACK_STOPPED && n == 1);
	free(u);
}

/* The whole path, from this process's own stack. */

#define COPY_MAX	16384

static struct {
	uint64_t ip[4];		/* return addresses: into c, b, a, main */
	uint64_t regs[16];	/* at the frame the copy starts from */
	uint8_t data[COPY_MAX] __attribute__((aligned(8)));
	size_t size;
} cap;

/* Where [stack] ends: the copy must not read past it. */
static uint64_t stack_end(void)
{
	FILE *f = fopen("/proc/self/maps", "re");
	unsigned long long lo, hi, end = 0;
	char line[512];

	while (f && fgets(line, sizeof(line), f))
		if (strstr(line, "[stack]") &&
		    sscanf(line, "%llx-%llx", &lo, &hi) == 2)
			end = hi;
	if (f)
		fclose(f);
	return end;
}

/* The stack's words, as the module reads them: not as ASan's objects. */
__attribute__((no_sanitize_address, noinline))
static void copy_stack(uint64_t *dst, const uint64_t *src, size_t words)
{
	const volatile uint64_t *s = src;
	size_t i;

	for (i = 0; i < words; i++)
		dst[i] = s[i];
}

/*
 * Copy the stack of c()'s caller b() as the module would, from b's stack
 * pointer at its call of c.  This function keeps a frame pointer, so its
 * return address, b's stack pointer and b's rbp are known exactly; b, a
 * and main keep none in the plain build (-O2 omits them), which only
 * their tables unwind.
 */
__attribute__((noinline, optimize("no-omit-frame-pointer")))
static void capture(void)
{
	uint64_t *fp = __builtin_frame_address(0);
	uint64_t sp = (uint64_t)(fp + 2), end = stack_end();

	cap.ip[0] = fp[1];
	cap.regs[6] = fp[0];		/* b's rbp, whatever b keeps there */
	cap.regs[7] = sp;
	cap.size = end > sp && end - sp < COPY_MAX ? end - sp : COPY_MAX;
	cap.size &= ~7ul;
	copy_stack((uint64_t *)cap.data, (const uint64_t *)sp, cap.size / 8);
}

static volatile int sink;

__attribute__((noinline)) static void b(void)
{
	capture();
	cap.ip[1] = (uint64_t)__builtin_return_address(0);
	sink++;
}

__attribute__((noinline)) static void a(void)
{
	b();
	cap.ip[2] = (uint64_t)__builtin_return_address(0);
	sink++;
}

/* This process's r-x file mappings, listed at time t. */
static void add_mmaps(struct sb *sb, uint64_t t)
{
	FILE *f = fopen("/proc/self/maps", "re");
	unsigned long long lo, hi, off, ino;
	unsigned int maj, mnr;
	char line[4352], perms[8], file[4096];

	while (f && fgets(line, sizeof(line), f)) {
		struct cprof_file_id id = { 0 };
		struct cprof_mmap *m;
		struct stat st;

		if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %4095s", &lo,
			   &hi, perms, &off, &maj, &mnr, &ino, file) != 8 ||
		    perms[2] != 'x' || file[0] != '/' || stat(file, &st))
			continue;
		id.dev = (uint32_t)st.st_dev;
		id.ino = st.st_ino;
		sb_mmap_id(sb, t, getpid(), lo, hi, file, &id);
		m = (struct cprof_mmap *)(sb->buf + sb->offs[sb->nr_recs - 1]);
		m->pgoff = off;
	}
	if (f)
		fclose(f);
}

/*
 * The stream: this process's r-x file mappings, the sample, its copy; with
 * late, the sample 3 s ago on the live clock and its process's mappings
 * after it, as a loaded machine lists them.
 */
static const char *write_stream_at(bool with_copy, size_t copy_size,
				   bool late)
{
	static int nr;
	struct cprof_header h = sb_default_header();
	static const char *const names[] = { "stream1", "stream2", "stream3",
					     "stream4" };
	const char *path = tmp_path(names[nr++ % 4]);
	uint64_t ips[2] = { 0x4000, cap.ip[0] };
	uint64_t t = h.start_time_ns + 1000;
	struct timespec ts;
	struct sb sb;

	h.depth = 127;
	if (late) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		t = (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec -
		    3000000000ull;
		h.start_time_ns = t - 1000;
	}
	sb_init(&sb);
	sb_header(&sb, &h);
	if (!late)
		add_mmaps(&sb, h.start_time_ns);
	/* one kernel frame, then the module's walk: c's ip, b's, stopped */
	sb_sample(&sb, t, getpid(), getpid(), 0, "self",
		  CPROF_SAMPLE_USER_FAULT |
		  (with_copy ? CPROF_SAMPLE_USTACK : 0), 0, NULL, 2, ips);
	if (with_copy)
		sb_ustack(&sb, t, getpid(), 0, 1, 0, cap.regs, cap.data,
			  copy_size);
	if (late)
		add_mmaps(&sb, t + 1000000);
	sb_end(&sb, 1000000000, CPROF_END_COMPLETE, 0);
	if (sb_write(&sb, path, sb.len))
		path = NULL;
	sb_free(&sb);
	return path;
}

static const char *write_stream(bool with_copy, size_t copy_size)
{
	return write_stream_at(with_copy, copy_size, false);
}

static struct ingest_copies copies;

/* The one sample's user frames after ingest; what the copy gave, in copies. */
static int ingest_one(const char *path, struct tableload *l, uint64_t *ips,
		      int max)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), n = -1, i;
	struct ingest *in = fd >= 0 ? ingest__open(fd, path, l, NULL) : NULL;
	struct prof_stack st;

	if (in && !ingest__run(in, NULL) &&
	    profile__nr_samples(ingest__profile(in)) == 1) {
		profile__stack(ingest__profile(in),
			       profile__sample(ingest__profile(in), 0)->stack,
			       &st);
		n = st.nr_user;
		for (i = 0; i < n && i < max; i++)
			ips[i] = st.ips[st.nr_kernel + i];
	}
	if (in)
		copies = *ingest__copies(in);
	ingest__close(in);
	if (fd >= 0)
		close(fd);
	return n;
}

static bool has(const uint64_t *ips, int n, uint64_t ip)
{
	while (n-- > 0)
		if (ips[n] == ip)
			return true;
	return false;
}

/* One line of the module's list, for the file at path. */
static void list_line(FILE *f, const char *path)
{
	struct stat st;

	if (stat(path, &st))
		return;
	fprintf(f, "%x:%x %llu %llu %lld 100 400\n", major(st.st_dev),
		minor(st.st_dev), (unsigned long long)st.st_ino,
		(unsigned long long)st.st_size,
		(long long)st.st_mtim.tv_sec * 1000000000ll +
		st.st_mtim.tv_nsec);
}

/*
 * The module's list, as if it held this binary's table already, and the
 * C library's (a walk meets one, then the other).
 */
static void held_before(const char *unwind)
{
	FILE *f = fopen(unwind, "we"), *maps = fopen("/proc/self/maps", "re");
	char line[4352], path[4096];

	if (!f || !maps) {
		test_cond("the module's list", false);
		if (f)
			fclose(f);
		if (maps)
			fclose(maps);
		return;
	}
	list_line(f, "/proc/self/exe");
	while (fgets(line, sizeof(line), maps))
		if (sscanf(line, "%*s %*s %*s %*s %*s %4095s", path) == 1 &&
		    strstr(path, "/libc.so")) {
			list_line(f, path);
			break;
		}
	fclose(maps);
	fclose(f);
}

static void whole_path(void)
{
	const char *dir = tmp_path("proc");
	char unwind[4096];
	uint64_t ips[CPROF_MAX_DEPTH];
	struct tableload *l;
	const char *s1, *s2, *s3;
	int n;

	a();
	cap.ip[3] = (uint64_t)__builtin_return_address(0);
	test_condf(cap.size > 256, "copied %zu bytes of this stack", cap.size);
	s1 = write_stream(true, cap.size);
	s2 = write_stream(true, 64);
	s3 = write_stream(false, 0);

	n = ingest_one(s1, NULL, ips, CPROF_MAX_DEPTH);
	test_condf(n == 2, "no loader: the sample as the module walked it (%d frames)",
		   n);

	mkdir(dir, 0700);
	snprintf(unwind, sizeof(unwind), "%s/unwind", dir);
	close(open(unwind, O_CREAT | O_WRONLY, 0600));
	l = tableload__start(dir);
	tableload__scan(l, getpid());
	tableload__wait(l, &never, -1);

	n = ingest_one(s1, l, ips, CPROF_MAX_DEPTH);
	test_condf(n >= 6 && ips[1] == cap.ip[0] && has(ips, n, cap.ip[1]) &&
		   has(ips, n, cap.ip[2]) && has(ips, n, cap.ip[3]) &&
		   copies.completed == 1,
		   "with the tables: b, a, main's callers from the copy (%d frames), counted",
		   n);
	n = ingest_one(s2, l, ips, CPROF_MAX_DEPTH);
	test_condf(n == 2 && copies.short_copy == 1 && !copies.completed,
		   "a copy cut short: the sample as the module walked it (%d frames), counted short (%llu %llu %llu)",
		   n, (unsigned long long)copies.short_copy,
		   (unsigned long long)copies.no_table,
		   (unsigned long long)copies.other);
	n = ingest_one(s3, l, ips, CPROF_MAX_DEPTH);
	test_condf(n == 2, "no copy: as it came (%d frames)", n);
	/*
	 * Due for its walk (2 s old, the loader idle) right after its copy
	 * is read, before any mapping record of its process: walked again
	 * as the records come, not added as the module walked it.
	 */
	n = ingest_one(write_stream_at(true, cap.size, true), l, ips,
		       CPROF_MAX_DEPTH);
	test_condf(n >= 6 && has(ips, n, cap.ip[3]) && copies.completed == 1,
		   "the process's mappings listed after its copy was due: walked with them (%d frames)",
		   n);
	tableload__stop(l, NULL);

	/*
	 * The module holds this binary's table from an earlier run: the
	 * loader skips the file, so the walk meets a table it does not have.
	 * It must not take the frame-pointer chain through it (which the
	 * ASan build's frame pointers would allow), but ask the loader for
	 * the table, once, and walk again with it.
	 */
	held_before(unwind);
	l = tableload__start(dir);
	tableload__scan(l, getpid());
	tableload__wait(l, &never, -1);
	n = ingest_one(s1, l, ips, CPROF_MAX_DEPTH);
	test_condf(n >= 6 && has(ips, n, cap.ip[3]) && copies.completed == 1 &&
		   !copies.no_table,
		   "a table the module had before: fetched for the walk, which completes (%d frames)",
		   n);
	tableload__stop(l, NULL);
}

int main(void)
{
	walker_rules();
	whole_path();
	return test_report();
}
