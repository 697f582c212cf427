// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * test_ustep: cprof-dump walks a stack copy with the module's own step, so
 * a copy and a tick agree on a stack.  The step (cprof/unwind_step.h) is
 * linked twice: as cprof-dump builds it (ustack.c) and as the module does
 * (ustep_kmod.c: the kernel's word type, reader and registers).  Both
 * replay the same rows and must give the same row, end and caller's ip,
 * sp and rbp, on at least 100 000 row evaluations:
 * - the tables cfi.c compiles from the C library and python3.11, at each
 *   row's first and last byte, from synthetic stacks (words into the
 *   stack, at code, anywhere; copies short, whole, or longer than the
 *   span rules may read), with the interrupted frame's registers or not,
 *   and by the frame-pointer chain;
 * - a table of every rule the format has, with any offsets;
 * - fuzz_ustack's seeds (tests/fuzz/corpus/ustack), around each row.
 */
#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test.h"
#include "unwind/cfi.h"
#include "unwind/ustack.h"
#include "ustep_kmod.h"

/* Where a replayed table's file is mapped, offset 0. */
#define TEXT	0x7f1200000000ull
/* A synthetic stack's copy. */
#define STACK	0x7ffc00100000ull
#define STACK_BYTES	4096
/* A copy beyond the 16 MiB rules may read, its top STACK_TOP bytes set. */
#define STACK_BIG	((16u << 20) + (64u << 10))
#define STACK_TOP	(128u << 10)

static uint64_t compared, differed, refused, ends[4];
static unsigned int shown;	/* differences printed, 5 at most */

/* The C library's 48-bit generator, seeded: the same stacks each run. */
static unsigned short seed[3] = { 0x3e7, 0x5eed, 0x44 };

static uint64_t rnd(void)
{
	uint64_t hi = (uint32_t)jrand48(seed);

	return hi << 32 | (uint32_t)jrand48(seed);
}

/*
 * An address in a copy of size bytes at base, or just past it: in its
 * first STACK_BYTES, or its top STACK_TOP (a copy longer than the span).
 */
static uint64_t in_stack(uint64_t base, uint32_t size)
{
	if (size > STACK_BYTES && rnd() % 2)
		return base + size - STACK_TOP + rnd() % (STACK_TOP + 64);
	return base + rnd() % ((size < STACK_BYTES ? size : STACK_BYTES) + 64);
}

/* A word a stack might hold: into the stack, at code, small, anything. */
static uint64_t any_word(uint64_t base, uint32_t size, uint64_t text_len)
{
	switch (rnd() % 8) {
	case 0: case 1: case 2:
		return in_stack(base, size) & ~7ull;
	case 3:
		return in_stack(base, size);
	case 4: case 5:
		return TEXT + rnd() % (text_len ? text_len : 1);
	case 6:
		return rnd() % 4096;
	default:
		return rnd();
	}
}

static struct cprof_ustack *new_stack(uint32_t size)
{
	struct cprof_ustack *u = calloc(1, sizeof(*u) + size);

	if (!u)
		abort();
	u->rec.type = CPROF_REC_USTACK;
	u->size = size;
	u->regs[7] = STACK;
	return u;
}

/* Words at [from, to) of u's copy. */
static void fill(struct cprof_ustack *u, uint32_t from, uint32_t to,
		 uint64_t text_len)
{
	uint64_t w;

	for (; from + 8 <= to; from += 8) {
		w = any_word(STACK, u->size, text_len);
		memcpy(u->data + from, &w, 8);
	}
}

/*
 * New words, and a new length: a whole copy, one cut short, or one longer
 * than the span a rule may read (its words at both ends, zeros between).
 */
static void fill_stack(struct cprof_ustack *u, uint64_t text_len)
{
	static const uint32_t sizes[] = {
		STACK_BYTES, STACK_BYTES, STACK_BYTES, STACK_BYTES, 512, 64,
		STACK_BIG, STACK_BIG,
	};

	u->size = sizes[rnd() % 8];
	fill(u, 0, u->size < STACK_BYTES ? u->size : STACK_BYTES, text_len);
	if (u->size == STACK_BIG)
		fill(u, STACK_BIG - STACK_TOP, STACK_BIG, text_len);
}

/* A frame over u: sp in the stack, rbp a chain's or anything. */
static struct kstep_frame any_frame(const struct cprof_ustack *u,
				    uint64_t ip)
{
	struct kstep_frame f = { .ip = ip, .base = u->regs[7] };

	f.sp = in_stack(f.base, u->size / 2 > 64 ? u->size - 64 : u->size / 2);
	if (rnd() % 8)
		f.sp &= ~7ull;
	switch (rnd() % 8) {
	case 0: case 1:
		f.fp = 0;
		break;
	case 2: case 3: case 4:
		f.fp = f.sp + 8 * (rnd() % 64);
		break;
	case 5:
		f.fp = f.sp - 8 * (rnd() % 8);
		break;
	default:
		f.fp = any_word(f.base, u->size, 1 << 20);
	}
	return f;
}

static void show(const char *what, uint64_t off, const struct kstep_frame *in,
		 int su, const struct cprof_ustep_frame *fu, int sk,
		 const struct kstep_frame *fk)
{
	if (++shown > 5)
		return;
	printf("  %s at %#" PRIx64 " from ip %#llx sp %#llx fp %#llx: userland %d ip %#" PRIx64 " sp %#" PRIx64 " fp %#" PRIx64 ", kmod %d ip %#llx sp %#llx fp %#llx\n",
	       what, off, in->ip, in->sp, in->fp, su, fu->ip, fu->sp, fu->fp,
	       sk, fk->ip, fk->sp, fk->fp);
}

static bool same(int su, const struct cprof_ustep_frame *fu, int sk,
		 const struct kstep_frame *fk)
{
	return su == sk && fu->ip == fk->ip && fu->sp == fk->sp &&
	       fu->fp == fk->fp;
}

/*
 * One row evaluation in both builds: the row for off, then the step by
 * it from f (the interrupted frame's, with regs, or a caller's), then the
 * frame-pointer step from f.
 */
static void replay(const struct ustack_table *ut, const struct kstep_table *kt,
		   uint64_t off, const struct cprof_ustack *u,
		   const __u64 *regs, const struct kstep_frame *f)
{
	struct cprof_urow ru = { 0 }, rk = { 0 };
	struct cprof_ustep_frame fu = {
		.ip = f->ip, .sp = f->sp, .fp = f->fp, .base = f->base,
	};
	struct kstep_frame fk = *f;
	bool hu, hk, past_end, differ;
	int su, sk;

	compared++;
	hu = ustack_table_row(ut, off, &ru);
	hk = kstep_table_row(kt, off, &rk);
	if (hu != hk || (hu && memcmp(&ru, &rk, sizeof(ru)))) {
		differed++;
		if (++shown <= 5)
			printf("  row at %#" PRIx64 ": userland %d (%u %d), kmod %d (%u %d)\n",
			       off, hu, ru.cfa_base, ru.cfa_off, hk,
			       rk.cfa_base, rk.cfa_off);
		return;
	}
	su = ustack_table_step(ut, off, u, regs, &fu, &past_end);
	sk = kstep_table_step(kt, off, u, regs, &fk);
	differ = !same(su, &fu, sk, &fk);
	if (differ)
		show("table step", off, f, su, &fu, sk, &fk);
	if (su >= 0 && su < 4)
		ends[su]++;
	fu = (struct cprof_ustep_frame){
		.ip = f->ip, .sp = f->sp, .fp = f->fp, .base = f->base,
	};
	fk = *f;
	su = ustack_fp_step(u, &fu, &past_end);
	sk = kstep_fp_step(u, &fk);
	if (!same(su, &fu, sk, &fk)) {
		differ = true;
		show("frame-pointer step", off, f, su, &fu, sk, &fk);
	}
	differed += differ;
}

/* The index of table in both builds; false if cprof-dump refuses it. */
static bool both(const void *table, size_t len, struct ustack_table **ut,
		 struct kstep_table **kt)
{
	*ut = ustack_table_new(table, len);
	*kt = *ut ? kstep_table_new(table, len) : NULL;
	if (*ut && *kt)
		return true;
	ustack_table_free(*ut);
	refused++;
	return false;
}

/*
 * The table as the module takes it (cprof_format.h): each distinct rule
 * once, then pc[] and rule_of[].
 */
static void *encode(const struct cfi_table *t, size_t *len)
{
	struct cprof_urow *rule = calloc(t->n, sizeof(*rule));
	uint16_t *rule_of = calloc(t->n, sizeof(*rule_of));
	struct cprof_utable h = {
		.magic = CPROF_UTABLE_MAGIC, .size = sizeof(h),
		.nr_rows = t->n, .flags = t->frame_pointers ? CPROF_UTABLE_FP : 0,
	};
	size_t i, r;
	char *buf = NULL, *at;

	if (!rule || !rule_of)
		goto out;
	for (i = 0; i < t->n; i++) {
		for (r = 0; r < h.nr_rules; r++)
			if (!memcmp(&rule[r], &t->row[i], sizeof(*rule)))
				break;
		if (r == h.nr_rules) {
			if (r == CPROF_UTABLE_RULES_MAX)
				goto out;
			rule[h.nr_rules++] = t->row[i];
		}
		rule_of[i] = r;
	}
	*len = sizeof(h) + h.nr_rules * sizeof(*rule) +
	       t->n * (sizeof(*t->pc) + sizeof(*rule_of));
	buf = at = malloc(*len);
	if (!buf)
		goto out;
	memcpy(at, &h, sizeof(h));
	at += sizeof(h);
	memcpy(at, rule, h.nr_rules * sizeof(*rule));
	at += h.nr_rules * sizeof(*rule);
	memcpy(at, t->pc, t->n * sizeof(*t->pc));
	at += t->n * sizeof(*t->pc);
	memcpy(at, rule_of, t->n * sizeof(*rule_of));
out:
	free(rule);
	free(rule_of);
	return buf;
}

/* A file's table compiled by cfi.c, replayed at each row's ends. */
static void replay_file(const char *path)
{
	struct cfi_table t = { 0 };
	struct ustack_table *ut;
	struct kstep_table *kt;
	struct cprof_ustack *u = new_stack(STACK_BIG);
	struct kstep_frame f;
	uint64_t before = compared, off, text_len;
	__u64 regs[16];
	char err[256];
	size_t len = 0, i, k;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	void *table;

	if (fd < 0 || cfi_compile(fd, &t, err, sizeof(err))) {
		test_condf(false, "%s: compiled (%s)", path,
			   fd < 0 ? "cannot open" : err);
		goto out;
	}
	table = encode(&t, &len);
	if (!table || !both(table, len, &ut, &kt)) {
		test_condf(false, "%s: its table indexed", path);
		free(table);
		goto out;
	}
	text_len = t.pc[t.n - 1];
	for (i = 0; i + 1 < t.n; i++) {
		if (!(i % 64))
			fill_stack(u, text_len);
		for (k = 0; k < 2; k++) {
			off = k ? t.pc[i + 1] - 1 : t.pc[i];
			/* the interrupted frame, its registers known */
			f = any_frame(u, TEXT + off);
			for (size_t r = 0; r < 16; r++)
				regs[r] = any_word(STACK, u->size, text_len);
			regs[6] = f.fp;
			regs[7] = f.sp;
			replay(ut, kt, off, u, regs, &f);
			/* a caller's frame: its return address less one */
			f = any_frame(u, TEXT + off + 1);
			replay(ut, kt, off, u, NULL, &f);
		}
	}
	printf("  %s: %zu rows, %" PRIu64 " evaluations\n", path, t.n,
	       compared - before);
	ustack_table_free(ut);
	kstep_table_free(kt);
	free(table);
out:
	if (fd >= 0)
		close(fd);
	cfi_table_free(&t);
	free(u);
}

/*
 * Every rule the format has, with any offsets (negative, a pair's halves
 * of either sign, registers past r15), a row each, replayed as a file's.
 */
static void replay_rules(void)
{
	enum { ROWS = 8192 };
	struct {
		struct cprof_utable h;
		struct cprof_urow rule[ROWS];
		uint32_t pc[ROWS];
		uint16_t rule_of[ROWS];
	} *t = calloc(1, sizeof(*t));
	struct cprof_ustack *u = new_stack(STACK_BIG);
	struct ustack_table *ut;
	struct kstep_table *kt;
	struct kstep_frame f;
	uint64_t before = compared, lo, hi;
	__u64 regs[16];
	size_t i, r;

	t->h = (struct cprof_utable){
		.magic = CPROF_UTABLE_MAGIC, .size = sizeof(t->h),
		.nr_rows = ROWS, .nr_rules = ROWS,
	};
	for (i = 0; i < ROWS; i++) {
		t->pc[i] = 16 * i;
		t->rule_of[i] = i;
		t->rule[i].cfa_base = rnd() % (CPROF_CFA_MAX + 1);
		t->rule[i].fp_rule = rnd() % (CPROF_FP_MAX + 1);
		t->rule[i].fp_off = rnd() % 2 ? -8 * (int)(rnd() % 8) :
					       (int16_t)rnd();
		lo = rnd();
		hi = rnd();
		switch (rnd() % 4) {
		case 0:
			t->rule[i].cfa_off = 8 * (lo % 64);
			break;
		case 1:
			t->rule[i].cfa_off = CPROF_CFA_PAIR(-8 * (int)(lo % 8),
							    hi % 20);
			break;
		case 2:
			t->rule[i].cfa_off = CPROF_CFA_PAIR(8 * (lo % 8),
							    -(int)(hi % 64));
			break;
		default:
			t->rule[i].cfa_off = (int32_t)lo;
		}
	}
	t->rule[ROWS - 1] = (struct cprof_urow){ .cfa_base = CPROF_CFA_NONE };
	if (!both(t, sizeof(*t), &ut, &kt)) {
		test_cond("a table of every rule indexed", false);
		goto out;
	}
	for (i = 0; i < ROWS; i++) {
		if (!(i % 64))
			fill_stack(u, 16 * ROWS);
		f = any_frame(u, TEXT + 16 * i + rnd() % 16);
		for (r = 0; r < 16; r++)
			regs[r] = any_word(STACK, u->size, 16 * ROWS);
		regs[6] = f.fp;
		regs[7] = f.sp;
		replay(ut, kt, f.ip - TEXT, u, regs, &f);
		f.ip++;
		replay(ut, kt, f.ip - 1 - TEXT, u, NULL, &f);
	}
	printf("  every rule, any offsets: %d rows, %" PRIu64 " evaluations\n",
	       ROWS, compared - before);
	ustack_table_free(ut);
	kstep_table_free(kt);
out:
	free(u);
	free(t);
}

/*
 * A fuzz_ustack seed (its input layout: a 4-byte table length L, L bytes
 * of table, struct cprof_ustack from frame on, the copy's bytes): each row
 * replayed at its first byte, the byte before and its last byte, from the
 * seed's own frame and from others over its copy.
 */
static void replay_seed(const char *path)
{
	const size_t fixed = sizeof(struct cprof_ustack) -
			     offsetof(struct cprof_ustack, frame);
	struct ustack_table *ut;
	struct kstep_table *kt;
	struct cprof_ustack *u;
	const struct cprof_utable *h;
	struct kstep_frame f;
	const uint32_t *pc;
	unsigned char buf[65536];
	uint64_t offs[3];
	uint32_t len, i;
	size_t size, copy, k;
	void *table;
	FILE *in = fopen(path, "rbe");

	if (!in)
		return;
	size = fread(buf, 1, sizeof(buf), in);
	fclose(in);
	memcpy(&len, buf, 4);
	if (size < 4 || len > size - 4 || size - 4 - len < fixed ||
	    len < sizeof(*h))
		return;
	table = malloc(len);
	memcpy(table, buf + 4, len);
	copy = size - 4 - len - fixed;
	u = new_stack(copy);
	memcpy(&u->frame, buf + 4 + len, fixed + copy);
	u->size = copy;
	u->rec.flags = buf[4] & CPROF_USTACK_REGS;
	if (!both(table, len, &ut, &kt))
		goto out;
	h = table;
	pc = (const void *)((const char *)(h + 1) +
			    (h->flags & CPROF_UTABLE_PY ?
			     sizeof(struct cprof_upy) : 0) +
			    h->nr_rules * sizeof(struct cprof_urow));
	for (i = 0; i < h->nr_rows; i++) {
		offs[0] = pc[i];
		offs[1] = pc[i] - 1;
		offs[2] = i + 1 < h->nr_rows ? pc[i + 1] - 1 : pc[i] + 1;
		for (k = 0; k < 3; k++) {
			f = (struct kstep_frame){
				.ip = TEXT + offs[k], .sp = u->regs[7],
				.fp = u->regs[6], .base = u->regs[7],
			};
			replay(ut, kt, offs[k], u,
			       u->rec.flags & CPROF_USTACK_REGS ? u->regs : NULL,
			       &f);
			f.ip++;
			replay(ut, kt, offs[k], u, NULL, &f);
			f = any_frame(u, TEXT + offs[k]);
			replay(ut, kt, offs[k], u, u->regs, &f);
		}
	}
	ustack_table_free(ut);
	kstep_table_free(kt);
out:
	free(u);
	free(table);
}

static void replay_seeds(const char *dir)
{
	uint64_t before = compared;
	char path[4096];
	struct dirent *e;
	DIR *d = opendir(dir);
	int n = 0;

	if (!d) {
		test_condf(false, "%s: the fuzz seeds", dir);
		return;
	}
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		replay_seed(path);
		n++;
	}
	closedir(d);
	printf("  %s: %d seeds, %" PRIu64 " evaluations\n", dir, n,
	       compared - before);
	test_condf(n > 0, "%s: %d seeds replayed", dir, n);
}

/* The C library this test runs on, from its mappings; NULL: none found. */
static const char *libc_path(void)
{
	static char path[4096];
	FILE *maps = fopen("/proc/self/maps", "re");
	char line[4352];
	bool found = false;

	while (maps && !found && fgets(line, sizeof(line), maps))
		found = sscanf(line, "%*s %*s %*s %*s %*s %4095s", path) == 1 &&
			strstr(path, "/libc.so");
	if (maps)
		fclose(maps);
	return found ? path : NULL;
}

int main(void)
{
	const char *python = access("/usr/bin/python3.11", R_OK) ?
			     "/usr/bin/python3" : "/usr/bin/python3.11";
	const char *libc = libc_path();
	struct cfi_table t = { 0 };
	char err[256];
	int fd = libc ? open(libc, O_RDONLY | O_CLOEXEC) : -1;

	/* cfi.c compiles x86-64's call frame information only */
	if (fd < 0 || cfi_compile(fd, &t, err, sizeof(err)))
		test_skip("no x86-64 C library to compile a table from");
	close(fd);
	cfi_table_free(&t);
	replay_file(libc);
	if (!access(python, R_OK))
		replay_file(python);
	else
		printf("  no python3 here: its table not replayed\n");
	replay_rules();
	replay_seeds("tests/fuzz/corpus/ustack");
	printf("ustep: %" PRIu64 " row evaluations compared, %" PRIu64 " differed (table steps: %" PRIu64 " ok, %" PRIu64 " end, %" PRIu64 " bad, %" PRIu64 " none; %" PRIu64 " seed tables refused)\n",
	       compared, differed, ends[CPROF_STEP_OK], ends[CPROF_STEP_END],
	       ends[CPROF_STEP_BAD], ends[CPROF_STEP_NONE], refused);
	test_condf(compared >= 100000,
		   "the module's and cprof-dump's builds of the step replayed %" PRIu64 " row evaluations",
		   compared);
	test_condf(!differed, "both builds agree on every row evaluation (%" PRIu64 " differ)",
		   differed);
	test_condf(ends[CPROF_STEP_OK] * 10 >= compared &&
		   ends[CPROF_STEP_BAD] && ends[CPROF_STEP_NONE],
		   "the replay steps to callers (%" PRIu64 "), meets bad frames and rows without a rule",
		   ends[CPROF_STEP_OK]);
	return test_report();
}
