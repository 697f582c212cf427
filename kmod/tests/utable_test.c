// SPDX-License-Identifier: GPL-2.0
/*
 * Unwind tables (utable.c, built here as it is in cprof.ko): a table
 * written as userland writes it to /proc/cprof/unwind, from user memory
 * mapped in the loading process, is installed and answers lookups by
 * offset; each malformed one (truncated, rows out of order or
 * overlapping, an unknown rule, a bad CPython layout...) is refused with
 * its errno and the table installed before answers as it did; a table
 * that does not fit evicts the least recently used, and unwind_bytes
 * counts it until it is freed.
 */
#include "../rcufree.c"
#include "../utable.c"

#include <linux/mman.h>
#include <linux/sizes.h>

#include "ktap.h"

#define UT_ROWS		8
#define UT_RULES	4
#define UT_DEV		0x801
#define UT_INO		1000
#define UT_MAP		SZ_1M	/* the user memory tables are written from */

/* A table as userland lays it out, before it is packed. */
struct ut_table {
	struct cprof_utable hdr;
	struct cprof_upy py;
	struct cprof_urow rule[UT_RULES];
	u32 pc[UT_ROWS];
	u16 rule_of[UT_ROWS];
};

static char __user *ut_user;
static char ut_packed[sizeof(struct ut_table)];
static struct ut_table ut_t, ut_base_t;

/*
 * The base table: SP+8 from 0x1000, an rbp frame from 0x1010, none from
 * 0x1100, SP+8 again from 0x1200, rbp frames from 0x10010 (past the first
 * 64 KiB), none from 0x20000 on.
 */
static void ut_base(struct ut_table *t)
{
	static const u32 pc[] = { 0x1000, 0x1010, 0x1100, 0x1200, 0x10010,
				  0x20000 };
	static const u16 rule_of[] = { 1, 2, 0, 1, 2, 0 };
	int i;

	memset(t, 0, sizeof(*t));
	t->hdr.magic = CPROF_UTABLE_MAGIC;
	t->hdr.size = sizeof(t->hdr);
	t->hdr.dev = UT_DEV;
	t->hdr.ino = UT_INO;
	t->hdr.file_size = 0x30000;
	t->hdr.mtime_ns = 12345;
	t->hdr.nr_rules = 3;
	t->hdr.nr_rows = ARRAY_SIZE(pc);
	t->rule[0].cfa_base = CPROF_CFA_NONE;
	t->rule[1].cfa_base = CPROF_CFA_SP;
	t->rule[1].cfa_off = 8;
	t->rule[2].cfa_base = CPROF_CFA_FP;
	t->rule[2].cfa_off = 16;
	t->rule[2].fp_rule = CPROF_FP_AT;
	t->rule[2].fp_off = -16;
	for (i = 0; i < ARRAY_SIZE(pc); i++) {
		t->pc[i] = pc[i];
		t->rule_of[i] = rule_of[i];
	}
}

/* A CPython 3.12 layout with every field the walk follows. */
static void ut_python(struct ut_table *t)
{
	struct cprof_upy *py = &t->py;

	ut_base(t);
	t->hdr.flags |= CPROF_UTABLE_PY;
	memset(py, 0xff, sizeof(*py));
	py->runtime = 0x1000;
	py->code_type = 0x2000;
	py->version = 0x030c0000;
	py->interp_head = 8;
	py->interp_next = 16;
	py->threads_head = 24;
	py->ts_next = 32;
	py->ts_native_tid = 40;
	py->ts_cframe = 48;
	py->cframe_current = 56;
	py->fr_code = 64;
	py->fr_previous = 72;
	py->fr_instr = 80;
	py->fr_owner = 88;
	py->code_firstlineno = 96;
	py->code_adaptive = 104;
	py->reserved = 0;
}

/* @t packed as userland writes it, into user memory: its size. */
static size_t ut_pack(const struct ut_table *t)
{
	u32 rules = min_t(u32, t->hdr.nr_rules, UT_RULES);
	u32 rows = min_t(u32, t->hdr.nr_rows, UT_ROWS);
	char *p = ut_packed;

	memcpy(p, &t->hdr, sizeof(t->hdr));
	p += sizeof(t->hdr);
	if (t->hdr.flags & CPROF_UTABLE_PY) {
		memcpy(p, &t->py, sizeof(t->py));
		p += sizeof(t->py);
	}
	memcpy(p, t->rule, rules * sizeof(t->rule[0]));
	p += rules * sizeof(t->rule[0]);
	memcpy(p, t->pc, rows * sizeof(t->pc[0]));
	p += rows * sizeof(t->pc[0]);
	memcpy(p, t->rule_of, rows * sizeof(t->rule_of[0]));
	p += rows * sizeof(t->rule_of[0]);
	if (copy_to_user(ut_user, ut_packed, p - ut_packed))
		return 0;
	return p - ut_packed;
}

/* Write @t, its size changed by @delta bytes: what the write returns. */
static ssize_t ut_write(const struct ut_table *t, ssize_t delta)
{
	size_t n = ut_pack(t);

	return n ? cprof_utable_write(ut_user, n + delta) : -EFAULT;
}

/*
 * The rule the table of (@dev, @ino) gives offset @off: its cfa_base, or
 * -1 when no row covers it, -2 when there is no table.
 */
static int ut_rule_at(u32 dev, u64 ino, u64 off)
{
	struct cprof_file_pos pos = { .dev = dev, .ino = ino,
				      .size = 0x30000, .mtime_ns = 12345 };
	struct cprof_utable_view v;
	struct cprof_urow row;
	int ret = -2;

	rcu_read_lock();
	if (cprof_utable_get(&pos, &v))
		ret = cprof_uindex_row(&v.rows, off, &row) ? row.cfa_base : -1;
	rcu_read_unlock();
	return ret;
}

/* The base table's answers, as ut_rule_at() gives them. */
static const struct {
	u64 off;
	int rule;
} ut_lookups[] = {
	{ 0, -1 }, { 0xfff, -1 }, { 0x1000, CPROF_CFA_SP },
	{ 0x100f, CPROF_CFA_SP }, { 0x1010, CPROF_CFA_FP },
	{ 0x10ff, CPROF_CFA_FP }, { 0x1100, -1 }, { 0x11ff, -1 },
	{ 0x1200, CPROF_CFA_SP }, { 0xffff, CPROF_CFA_SP },
	{ 0x10000, CPROF_CFA_SP }, { 0x1000f, CPROF_CFA_SP },
	{ 0x10010, CPROF_CFA_FP }, { 0x1ffff, CPROF_CFA_FP },
	{ 0x20000, -1 }, { 0x20fff, -1 }, { 0x21000, -1 },
};

/* Does the base table answer every lookup as it should? */
static bool ut_base_answers(struct ktap *k)
{
	int i, got;

	for (i = 0; i < ARRAY_SIZE(ut_lookups); i++) {
		got = ut_rule_at(UT_DEV, UT_INO, ut_lookups[i].off);
		if (!ktap_check(k, got == ut_lookups[i].rule,
				"offset %#llx: rule %d, want %d",
				ut_lookups[i].off, got, ut_lookups[i].rule))
			return false;
	}
	return true;
}

/*
 * @t written with @delta: @want, and nothing changed.  The base table is
 * written first: a case that fails changes no later one's start.
 */
static void ut_refused(struct ktap *k, const struct ut_table *t,
		       ssize_t delta, int want, const char *name)
{
	u64 tables, bytes, evicted, tables2, bytes2, evicted2;
	ssize_t ret;

	ut_base(&ut_base_t);
	ut_write(&ut_base_t, 0);
	/* the table it replaced is counted until it is freed: not meanwhile */
	cprof_rcufree_wait();
	cprof_utable_usage(&tables, &bytes, &evicted);
	ret = ut_write(t, delta);
	cprof_utable_usage(&tables2, &bytes2, &evicted2);
	ktap_check(k, ret == want, "returned %zd, want %d", ret, want);
	ktap_check(k, tables == tables2 && bytes == bytes2 &&
		   evicted == evicted2, "the tables changed: %llu (%llu bytes)",
		   tables2, bytes2);
	ut_base_answers(k);
	ktap_end(k, "%s is %s", name, want == -EINVAL ? "-EINVAL" :
		  want == -ENOSPC ? "-ENOSPC" : want == -ENOENT ? "-ENOENT" :
		  "-EFAULT");
}

static void ut_good_cases(struct ktap *k)
{
	u64 tables, bytes, evicted;
	ssize_t ret, n;

	ut_base(&ut_t);
	n = ut_pack(&ut_t);
	ret = ut_write(&ut_t, 0);
	cprof_utable_usage(&tables, &bytes, &evicted);
	ktap_check(k, ret == n, "returned %zd, want %zd", ret, n);
	ktap_check(k, tables == 1 && bytes > 0, "%llu tables", tables);
	ktap_check(k, cprof_utable_hints() == CPROF_UHINT_ANY, "hints %#x",
		   cprof_utable_hints());
	ut_base_answers(k);
	ktap_end(k, "a table is installed and gives each offset its row");

	ut_t.hdr.mtime_ns++;
	ret = ut_write(&ut_t, 0);
	ktap_check(k, ret > 0, "returned %zd", ret);
	ktap_check(k, ut_rule_at(UT_DEV, UT_INO, 0x1000) == -2,
		   "a table of another mtime answered for the file");
	ktap_end(k, "a table of the file at another mtime replaces it");

	ut_base(&ut_t);
	ret = ut_write(&ut_t, 0);
	cprof_utable_usage(&tables, &bytes, &evicted);
	ktap_check(k, ret > 0 && tables == 1, "returned %zd, %llu tables",
		   ret, tables);
	ut_base_answers(k);
	ktap_end(k, "a table replaces the file's table");

	ut_python(&ut_t);
	ut_t.hdr.ino = UT_INO + 1;
	ret = ut_write(&ut_t, 0);
	ktap_check(k, ret > 0, "returned %zd", ret);
	ktap_check(k, cprof_utable_hints() & CPROF_UHINT_PYTHON,
		   "no CPython interpreter in the hints");
	ut_t.hdr.nr_rows = 0;
	ut_t.hdr.nr_rules = 0;
	ut_t.hdr.flags = 0;
	ret = ut_write(&ut_t, 0);
	ktap_check(k, ret == sizeof(ut_t.hdr), "removing it returned %zd",
		   ret);
	ktap_check(k, !(cprof_utable_hints() & CPROF_UHINT_PYTHON),
		   "a CPython interpreter left in the hints");
	ktap_check(k, ut_rule_at(UT_DEV, UT_INO + 1, 0x1000) == -2,
		   "the removed table answered");
	ut_base_answers(k);
	ktap_end(k, "a CPython interpreter's table, installed and removed");

	memset(&ut_t, 0, sizeof(ut_t));
	ut_t.hdr.magic = CPROF_UTABLE_MAGIC;
	ut_t.hdr.size = sizeof(ut_t.hdr);
	ut_t.hdr.flags = CPROF_UTABLE_BUSY;
	ret = ut_write(&ut_t, 0);
	ktap_check(k, ret == sizeof(ut_t.hdr) && cprof_utable_compiling(),
		   "BUSY returned %zd", ret);
	ut_t.hdr.flags = CPROF_UTABLE_IDLE;
	ret = ut_write(&ut_t, 0);
	ktap_check(k, ret == sizeof(ut_t.hdr) && !cprof_utable_compiling(),
		   "IDLE returned %zd", ret);
	ktap_end(k, "BUSY and IDLE say whether userland compiles tables");
}

static void ut_bad_cases(struct ktap *k)
{
	struct ut_table *t = &ut_t;

	ut_base(t);
	ut_refused(k, t, (ssize_t)sizeof(t->hdr) - 1 - (ssize_t)ut_pack(t),
		   -EINVAL, "less than a header");
	ut_refused(k, t, -2, -EINVAL, "a table cut short");
	ut_refused(k, t, 8, -EINVAL, "a table with bytes after it");
	t->hdr.magic++;
	ut_refused(k, t, 0, -EINVAL, "another magic");
	ut_base(t);
	t->hdr.size += 8;
	ut_refused(k, t, 0, -EINVAL, "another header size");
	ut_base(t);
	t->hdr.flags = BIT(1);
	ut_refused(k, t, 0, -EINVAL, "an unknown flag");
	ut_base(t);
	t->hdr.nr_rules = 0;
	ut_refused(k, t, 0, -EINVAL, "rows without rules");
	ut_base(t);
	t->hdr.nr_rows = 0;
	ut_refused(k, t, 0, -EINVAL, "rules without rows");
	ut_base(t);
	t->pc[2] = t->pc[1];
	ut_refused(k, t, 0, -EINVAL, "two rows at one offset");
	ut_base(t);
	t->pc[3] = t->pc[1] - 1;
	ut_refused(k, t, 0, -EINVAL, "a row before the one above it");
	ut_base(t);
	t->rule_of[1] = 3;
	ut_refused(k, t, 0, -EINVAL, "a row of a rule not listed");
	ut_base(t);
	t->rule[1].cfa_base = CPROF_CFA_MAX + 1;
	ut_refused(k, t, 0, -EINVAL, "an unknown CFA rule");
	ut_base(t);
	t->rule[2].fp_rule = CPROF_FP_MAX + 1;
	ut_refused(k, t, 0, -EINVAL, "an unknown rbp rule");
	ut_base(t);
	t->rule_of[5] = 1;
	ut_refused(k, t, 0, -EINVAL, "a last row with a rule");

	ut_python(t);
	t->py.version = 0x030a0000;
	ut_refused(k, t, 0, -EINVAL, "CPython 3.10");
	ut_python(t);
	t->py.version = 0x030e0000;
	ut_refused(k, t, 0, -EINVAL, "CPython 3.14");
	ut_python(t);
	t->py.reserved = 1;
	ut_refused(k, t, 0, -EINVAL, "a CPython layout's reserved field");
	ut_python(t);
	t->py.fr_owner = CPROF_UPY_NONE;
	ut_refused(k, t, 0, -EINVAL, "CPython 3.12 with no frame owner");
	ut_python(t);
	t->py.ts_cframe = CPROF_UPY_NONE;
	ut_refused(k, t, 0, -EINVAL, "a CPython thread with no frame");
	ut_python(t);
	t->py.interp_gil = 8;
	ut_refused(k, t, 0, -EINVAL, "a CPython GIL with no holder");
	ut_python(t);
	t->hdr.nr_rows = 0;
	t->hdr.nr_rules = 0;
	ut_refused(k, t, 0, -EINVAL, "removing with a CPython layout");

	memset(t, 0, sizeof(*t));
	t->hdr.magic = CPROF_UTABLE_MAGIC;
	t->hdr.size = sizeof(t->hdr);
	t->hdr.flags = CPROF_UTABLE_BUSY | CPROF_UTABLE_IDLE;
	ut_refused(k, t, 0, -EINVAL, "BUSY and IDLE at once");
	t->hdr.flags = CPROF_UTABLE_BUSY | CPROF_UTABLE_FP;
	ut_refused(k, t, 0, -EINVAL, "BUSY with a table's flag");
	ut_base(t);
	t->hdr.flags = CPROF_UTABLE_BUSY;
	ut_refused(k, t, 0, -EINVAL, "BUSY with rows");

	ut_base(t);
	t->hdr.ino = UT_INO + 2;
	t->hdr.nr_rows = 0;
	t->hdr.nr_rules = 0;
	ut_refused(k, t, 0, -ENOENT, "removing a table not loaded");

	ut_base(t);
	t->hdr.ino = UT_INO + 3;
	cprof_utable_set_limit(0);
	ut_refused(k, t, 0, -ENOSPC, "a table larger than unwind_mb");
	cprof_utable_set_limit(CPROF_UNWIND_MB_DEFAULT);
}

/* nr_rules past CPROF_UTABLE_RULES_MAX, its bytes all there. */
static void ut_many_rules(struct ktap *k)
{
	u32 nr = CPROF_UTABLE_RULES_MAX + 1;
	size_t n = sizeof(struct cprof_utable) + nr * sizeof(struct cprof_urow) +
		   sizeof(u32) + sizeof(u16);
	u64 tables, tables2, b, e;
	ssize_t ret;

	/* rules all NONE (zeroes), one row at offset 0 of rule 0 */
	ut_base(&ut_t);
	ut_t.hdr.ino = UT_INO + 4;
	ut_t.hdr.nr_rules = nr;
	ut_t.hdr.nr_rows = 1;
	cprof_utable_usage(&tables, &b, &e);
	ret = -EFAULT;
	if (!clear_user(ut_user, n) &&
	    !copy_to_user(ut_user, &ut_t.hdr, sizeof(ut_t.hdr)))
		ret = cprof_utable_write(ut_user, n);
	cprof_utable_usage(&tables2, &b, &e);
	ktap_check(k, ret == -EINVAL, "returned %zd", ret);
	ktap_check(k, tables == tables2, "the tables changed");
	ktap_end(k, "%u rules is -EINVAL", nr);
}

/*
 * A header at the end of a page, the page after it not mapped (unmapped
 * here: another mapping may lie right above a new one).
 */
static void ut_unmapped(struct ktap *k)
{
	unsigned long addr = vm_mmap(NULL, 0, 2 * PAGE_SIZE,
				     PROT_READ | PROT_WRITE,
				     MAP_ANONYMOUS | MAP_PRIVATE, 0);
	char __user *u = (char __user *)addr + PAGE_SIZE - sizeof(ut_t.hdr);
	size_t n;
	ssize_t ret = -ENOMEM;

	ut_base(&ut_t);
	ut_t.hdr.ino = UT_INO + 5;
	n = ut_pack(&ut_t);
	if (!IS_ERR_VALUE(addr) && !vm_munmap(addr + PAGE_SIZE, PAGE_SIZE) &&
	    n && !copy_to_user(u, &ut_t.hdr, sizeof(ut_t.hdr)))
		ret = cprof_utable_write(u, n);
	if (!IS_ERR_VALUE(addr))
		vm_munmap(addr, PAGE_SIZE);
	ktap_check(k, ret == -EFAULT, "returned %zd", ret);
	ut_base_answers(k);
	ktap_end(k, "rows past the end of user memory are -EFAULT");
}

/*
 * Two tables of 600 KiB under unwind_mb=1 (the page index makes them
 * large): the second evicts the first, the least recently used.
 */
static void ut_evict(struct ktap *k)
{
	u64 tables, bytes, evicted, evicted0;
	ssize_t ret1, ret2;

	/* the base table goes: the two are the only ones */
	ut_base(&ut_t);
	ut_t.hdr.nr_rows = 0;
	ut_t.hdr.nr_rules = 0;
	ut_write(&ut_t, 0);
	cprof_utable_usage(&tables, &bytes, &evicted0);
	ktap_check(k, !tables, "%llu tables left", tables);
	cprof_utable_set_limit(1);
	ut_base(&ut_t);
	ut_t.hdr.ino = UT_INO + 6;
	ut_t.hdr.nr_rows = 2;
	ut_t.pc[0] = 0;
	ut_t.pc[1] = 600 << 20;
	ut_t.rule_of[0] = 1;
	ut_t.rule_of[1] = 0;
	ret1 = ut_write(&ut_t, 0);
	ut_t.hdr.ino = UT_INO + 7;
	ret2 = ut_write(&ut_t, 0);
	cprof_utable_usage(&tables, &bytes, &evicted);
	ktap_check(k, ret1 > 0 && ret2 > 0, "returned %zd and %zd", ret1, ret2);
	ktap_check(k, tables == 1 && evicted == evicted0 + 1,
		   "%llu tables, %llu evicted", tables, evicted - evicted0);
	ktap_check(k, bytes <= SZ_1M, "%llu bytes for 1 MiB", bytes);
	ktap_check(k, ut_rule_at(UT_DEV, UT_INO + 6, 0x1000) == -2 &&
		   ut_rule_at(UT_DEV, UT_INO + 7, 0x1000) == CPROF_CFA_SP,
		   "the first table is there, or the second is not");
	ktap_end(k, "a table that does not fit evicts the least recently used");
	/* its file's new table: the two do not fit together */
	ut_t.rule_of[0] = 2;
	ret1 = ut_write(&ut_t, 0);
	cprof_utable_usage(&tables, &bytes, &evicted);
	ktap_check(k, ret1 > 0, "returned %zd", ret1);
	ktap_check(k, tables == 1 && bytes <= SZ_1M,
		   "%llu tables, %llu bytes (those not yet freed too) for 1 MiB",
		   tables, bytes);
	ktap_check(k, ut_rule_at(UT_DEV, UT_INO + 7, 0x1000) == CPROF_CFA_FP,
		   "the new table does not answer");
	ktap_end(k, "a table replaced under a full unwind_mb is freed before the write returns");
	cprof_utable_set_limit(CPROF_UNWIND_MB_DEFAULT);
}

static bool ut_run(struct ktap *k)
{
	unsigned long addr;

	addr = vm_mmap(NULL, 0, UT_MAP, PROT_READ | PROT_WRITE,
		       MAP_ANONYMOUS | MAP_PRIVATE, 0);
	if (IS_ERR_VALUE(addr))
		return false;
	ut_user = (char __user *)addr;
	cprof_utable_set_limit(CPROF_UNWIND_MB_DEFAULT);
	ut_good_cases(k);
	ut_bad_cases(k);
	ut_many_rules(k);
	ut_unmapped(k);
	ut_evict(k);
	cprof_utable_exit();
	vm_munmap(addr, UT_MAP);
	return true;
}

const struct ktap_suite ktap_utable_suite = { "cprof_utable", ut_run };
