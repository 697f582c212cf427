// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * ustack - walk a copy of a user stack with the module's rules.  See
 * ustack.h.
 *
 * Each step is kmod/unwind.c's: the frame's row in its file's table (the
 * CFA from sp or rbp plus an offset, a word saved where the stack was
 * realigned, or in the interrupted frame another register), the return
 * address below the CFA, the caller's rbp maybe saved beside it; where no
 * table covers the code, the frame-pointer chain.  Every word is read from
 * the copy, never beyond it: a walk that needs a word the copy does not
 * hold stops there.  The caller's stack pointer must lie above the
 * frame's, so every walk ends.
 */
#include <string.h>

#include "unwind/ustack.h"

/* As the module: no user code below mmap_min_addr or above user space. */
#define USER_MIN	0x10000ull
#define USER_MAX	0x00007ffffffff000ull

/* DWARF's x86-64 register numbers used here. */
#define DWARF_RBP	6
#define DWARF_RSP	7

struct frame {
	uint64_t ip, sp, fp;
};

/* The word at addr, if the copy holds it. */
static bool read_word(const struct cprof_ustack *u, uint64_t addr,
		      uint64_t *val)
{
	uint64_t base = u->regs[DWARF_RSP];

	if (addr < base || addr - base > u->size ||
	    u->size - (addr - base) < sizeof(*val))
		return false;
	memcpy(val, u->data + (addr - base), sizeof(*val));
	return true;
}

/* The rule for file offset off, as cprof_utable_row() finds it. */
static bool table_row(const struct ustack_code *c, uint64_t off,
		      struct cprof_urow *row)
{
	const struct cprof_utable *h = c->table;
	const struct cprof_urow *rule;
	const uint32_t *pc;
	const uint16_t *rule_of;
	uint32_t lo, hi, mid;
	size_t py;

	if (!h || c->len < sizeof(*h) || h->size != sizeof(*h) ||
	    !h->nr_rows)
		return false;
	/* a CPython interpreter's layout comes before the rules */
	py = h->flags & CPROF_UTABLE_PY ? sizeof(struct cprof_upy) : 0;
	if (c->len != sizeof(*h) + py + (size_t)h->nr_rules * sizeof(*rule) +
		      (size_t)h->nr_rows * (sizeof(*pc) + sizeof(*rule_of)))
		return false;
	rule = (const void *)((const char *)(h + 1) + py);
	pc = (const void *)(rule + h->nr_rules);
	rule_of = (const void *)(pc + h->nr_rows);
	if (off < pc[0] || off > UINT32_MAX)
		return false;
	lo = 0;
	hi = h->nr_rows;
	while (hi - lo > 1) {
		mid = lo + (hi - lo) / 2;
		if (pc[mid] <= off)
			lo = mid;
		else
			hi = mid;
	}
	if (rule_of[lo] >= h->nr_rules)
		return false;
	*row = rule[rule_of[lo]];
	return row->cfa_base != CPROF_CFA_NONE;
}

enum step { STEP_OK, STEP_END, STEP_BAD, STEP_NONE, STEP_SHORT,
	     STEP_NO_TABLE };

/* A word the copy may not hold: past its end, or below its start. */
static enum step unread(const struct cprof_ustack *u, uint64_t addr)
{
	return addr >= u->regs[DWARF_RSP] ? STEP_SHORT : STEP_BAD;
}

/* One step by the table; regs: the interrupted frame's, or NULL. */
static enum step table_step(const struct cprof_ustack *u, struct frame *f,
			    bool exact, const __u64 *regs,
			    ustack_code_fn code, void *arg)
{
	uint64_t at = exact ? f->ip : f->ip - 1, cfa, addr, fp = f->fp;
	struct ustack_code c = { 0 };
	struct cprof_urow row;
	const struct cprof_utable *h;

	if (!code(arg, at, &c) || at < c.start || at >= c.end)
		return STEP_NONE;
	if (c.elsewhere)
		return STEP_NO_TABLE;
	if (!c.table)
		return STEP_NONE;
	h = c.table;
	if (!exact && c.len >= sizeof(*h) && h->flags & CPROF_UTABLE_FP)
		return STEP_NONE;
	if (!table_row(&c, at - c.start + c.pgoff, &row))
		return STEP_NONE;
	switch (row.cfa_base) {
	case CPROF_CFA_SP:
		cfa = f->sp + (int64_t)row.cfa_off;
		break;
	case CPROF_CFA_FP:
		cfa = f->fp + (int64_t)row.cfa_off;
		break;
	case CPROF_CFA_PLT:
		cfa = f->sp + 8 + ((f->ip & 15) >= 11 ? 8 : 0);
		break;
	case CPROF_CFA_SP_DEREF:
	case CPROF_CFA_FP_DEREF:
		addr = row.cfa_base == CPROF_CFA_SP_DEREF ? f->sp : f->fp;
		addr += CPROF_CFA_LO(row.cfa_off);
		if (!read_word(u, addr, &cfa))
			return unread(u, addr);
		cfa += CPROF_CFA_HI(row.cfa_off);
		break;
	case CPROF_CFA_REG:
		if (!regs || (unsigned int)CPROF_CFA_HI(row.cfa_off) >= 16)
			return STEP_NONE;
		cfa = regs[CPROF_CFA_HI(row.cfa_off)] +
		      CPROF_CFA_LO(row.cfa_off);
		break;
	case CPROF_CFA_END:
		return STEP_END;
	default:
		return STEP_NONE;
	}
	if (cfa <= f->sp || cfa - f->sp < sizeof(uint64_t))
		return STEP_BAD;
	if (row.fp_rule == CPROF_FP_AT &&
	    !read_word(u, cfa + row.fp_off, &fp))
		return unread(u, cfa + row.fp_off);
	if (row.fp_rule == CPROF_FP_AT_FP &&
	    !read_word(u, f->fp + row.fp_off, &fp))
		return unread(u, f->fp + row.fp_off);
	if (!read_word(u, cfa - sizeof(uint64_t), &f->ip))
		return unread(u, cfa - sizeof(uint64_t));
	f->sp = cfa;
	f->fp = fp;
	return STEP_OK;
}

static enum step fp_step(const struct cprof_ustack *u, struct frame *f)
{
	uint64_t next, ret;

	if (!f->fp)
		return STEP_END;
	if (f->fp < f->sp || f->fp & 7)
		return STEP_BAD;
	if (!read_word(u, f->fp, &next) || !read_word(u, f->fp + 8, &ret))
		return unread(u, f->fp);
	f->ip = ret;
	f->sp = f->fp + 16;
	f->fp = next;
	return STEP_OK;
}

enum ustack_end ustack_walk(const struct cprof_ustack *u, uint64_t ip,
			    bool exact, ustack_code_fn code, void *arg,
			    uint64_t *ips, int max, int *n)
{
	struct frame f = {
		.ip = ip, .sp = u->regs[DWARF_RSP], .fp = u->regs[DWARF_RBP],
	};
	const __u64 *regs = u->rec.flags & CPROF_USTACK_REGS ? u->regs :
								 NULL;
	enum step step;

	*n = 0;
	ips[(*n)++] = ip;
	for (;;) {
		step = table_step(u, &f, exact, regs, code, arg);
		if (step == STEP_NONE)
			step = fp_step(u, &f);
		exact = false;
		regs = NULL;
		if (step == STEP_END || (step == STEP_OK && !f.ip))
			return USTACK_COMPLETE;
		if (step == STEP_SHORT)
			return USTACK_SHORT;
		if (step == STEP_NO_TABLE)
			return USTACK_NO_TABLE;
		if (step == STEP_BAD || f.ip < USER_MIN || f.ip >= USER_MAX)
			return USTACK_STOPPED;
		if (*n == max)
			return USTACK_DEPTH;
		ips[(*n)++] = f.ip;
	}
}
