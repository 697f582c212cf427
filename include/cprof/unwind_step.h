/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * One step of a user stack walk, shared by the module (kmod/unwind.c, over
 * live user memory) and cprof-dump (userland/unwind/ustack.c, over a stack
 * copy): the row of an unwind table for a file offset, the CFA its rule
 * gives, where the return address and the caller's rbp are; where no row
 * covers the code, the frame-pointer step.
 *
 * The row search and the index it searches need nothing of the includer.
 * The step reads words through the includer's reader: it defines
 * CPROF_USTEP_READER, struct cprof_ustep_env and, as inline functions,
 *   bool cprof_ustep_read(env, addr, *val)       one word
 *   bool cprof_ustep_read2(env, a, *va, b, *vb)  two words, both or neither
 *   bool cprof_ustep_reg(env, reg, *val)         DWARF register reg (0-15)
 *                                                of the interrupted frame
 * before it includes this header, so each side's walk calls no pointer.
 */
#ifndef CPROF_UNWIND_STEP_H
#define CPROF_UNWIND_STEP_H

#ifdef __KERNEL__
#include <linux/types.h>
typedef unsigned long cprof_uword;
#else
#include <stdbool.h>
#include <stdint.h>
typedef uint64_t cprof_uword;
#endif

#include "cprof_format.h"

/*
 * A table indexed for lookups (the module builds it as a table is
 * written, cprof-dump for the tables a walk meets): page[p] is the last
 * row at or below file offset p << CPROF_UINDEX_PAGE_SHIFT, so a lookup
 * searches one page's rows; each row keeps its offset's low
 * CPROF_UINDEX_LO_BITS bits and its rule's index in rule[].
 */
#define CPROF_UINDEX_PAGE_SHIFT	12
#define CPROF_UINDEX_LO_BITS	16

struct cprof_uent {
	__u16 pc_lo;		/* the offset's low 16 bits */
	__u16 rule;		/* in rule[] */
};

struct cprof_uindex {
	const struct cprof_uent *ent;
	const __u32 *page;
	const struct cprof_urow *rule;
	__u32 nr;		/* rows */
	__u32 npages;
	__u32 first;		/* the first row's offset */
};

/* The pages of an index whose last row is at offset @last. */
static inline __u32 cprof_uindex_pages(__u32 last)
{
	return (__u32)((__u64)last >> CPROF_UINDEX_PAGE_SHIFT) + 1;
}

/*
 * Row @i of an index of @npages pages being built: at offset @pc (above
 * row @i - 1's), rule @rule.  *@p is the first page not yet filled;
 * once the last row is in, the pages left get it.
 */
static inline void cprof_uindex_put(struct cprof_uent *ent, __u32 *page,
				    __u32 npages, __u32 *p, __u32 i, __u32 pc,
				    __u16 rule)
{
	ent[i].pc_lo = pc & ((1u << CPROF_UINDEX_LO_BITS) - 1);
	ent[i].rule = rule;
	/* the pages that start below pc: row i - 1 is their last */
	while (*p < npages && (__u64)*p << CPROF_UINDEX_PAGE_SHIFT < pc)
		page[(*p)++] = i ? i - 1 : 0;
}

static inline void cprof_uindex_end(__u32 *page, __u32 npages, __u32 *p,
				    __u32 nr)
{
	while (*p < npages)
		page[(*p)++] = nr - 1;
}

/*
 * The index of @nr rows (@nr > 0) whose offsets @pc (increasing) and
 * indexes in @rule @rule_of are in memory, as a table has them, into @ent
 * (@nr of them) and @page (cprof_uindex_pages(@pc[@nr - 1]) of them).
 */
static inline void cprof_uindex_fill(struct cprof_uindex *ix,
				     struct cprof_uent *ent, __u32 *page,
				     const struct cprof_urow *rule,
				     const __u32 *pc, const __u16 *rule_of,
				     __u32 nr)
{
	__u32 i, p = 0;

	ix->npages = cprof_uindex_pages(pc[nr - 1]);
	for (i = 0; i < nr; i++)
		cprof_uindex_put(ent, page, ix->npages, &p, i, pc[i],
				 rule_of[i]);
	cprof_uindex_end(page, ix->npages, &p, nr);
	ix->ent = ent;
	ix->page = page;
	ix->rule = rule;
	ix->nr = nr;
	ix->first = pc[0];
}

/*
 * The row for file offset @off into @row.
 * Return: false when no row covers @off with a rule (CPROF_CFA_NONE).
 */
static inline bool cprof_uindex_row(const struct cprof_uindex *ix, __u64 off,
				    struct cprof_urow *row)
{
	__u64 p = off >> CPROF_UINDEX_PAGE_SHIFT, at, seg;
	__u32 lo, hi, mid;

	/* before the first row, or past the last one (NONE) */
	if (p >= ix->npages || off < ix->first)
		return false;
	/*
	 * The last row with pc <= off is in [page[p], page[p + 1]]; those
	 * after page[p] lie in (p's start, p + 1's start]: in p's 64 KiB,
	 * but for one at the start of the next 64 KiB.
	 */
	lo = ix->page[p];
	hi = p + 1 < ix->npages ? ix->page[p + 1] + 1 : ix->nr;
	seg = off & ~(((__u64)1 << CPROF_UINDEX_LO_BITS) - 1);
	while (hi - lo > 1) {
		mid = lo + (hi - lo) / 2;
		at = seg | ix->ent[mid].pc_lo;
		if (at <= p << CPROF_UINDEX_PAGE_SHIFT)
			at += (__u64)1 << CPROF_UINDEX_LO_BITS;
		if (at <= off)
			lo = mid;
		else
			hi = mid;
	}
	*row = ix->rule[ix->ent[lo].rule];
	return row->cfa_base != CPROF_CFA_NONE;
}

/*
 * A rule reads words within this much above the interrupted stack
 * pointer only (and its red zone, x86-64's 128 bytes below it): a lying
 * table reads the stack, not any memory.
 */
#define CPROF_USTACK_SPAN	((cprof_uword)16 << 20)
#define CPROF_USTACK_REDZONE	((cprof_uword)128)

enum cprof_step {
	CPROF_STEP_OK,		/* the frame is its caller's now */
	CPROF_STEP_END,		/* the outermost frame: a complete stack */
	CPROF_STEP_BAD,		/* a bad frame, or a word not read: stop */
	CPROF_STEP_NONE,	/* no rule: try frame pointers */
};

/* Where a walk is. */
struct cprof_ustep_frame {
	cprof_uword ip;		/* an instruction, or a return address */
	cprof_uword sp;
	cprof_uword fp;		/* rbp */
	cprof_uword base;	/* the interrupted stack pointer */
};

#endif /* CPROF_UNWIND_STEP_H */

/* The step: once, for an includer that defined its reader (above). */
#if defined(CPROF_USTEP_READER) && !defined(CPROF_UNWIND_STEP_READER_H)
#define CPROF_UNWIND_STEP_READER_H

/* A word a rule says is on the stack, within the span. */
static inline bool cprof_ustep_stack(struct cprof_ustep_env *env,
				     const struct cprof_ustep_frame *f,
				     cprof_uword addr, cprof_uword *val)
{
	if (addr + CPROF_USTACK_REDZONE - f->base >
	    CPROF_USTACK_SPAN + CPROF_USTACK_REDZONE - sizeof(cprof_uword))
		return false;
	return cprof_ustep_read(env, addr, val);
}

/*
 * One step by @row, the table's row for @f->ip in the interrupted frame,
 * else for @f->ip - 1 (a return address: its call is just before it, and
 * may be a function's last instruction).  Register rules hold in the
 * interrupted frame only: cprof_ustep_reg() says which registers @env has.
 */
static inline enum cprof_step cprof_ustep_row(const struct cprof_urow *row,
					      struct cprof_ustep_frame *f,
					      struct cprof_ustep_env *env)
{
	cprof_uword addr, cfa, fp = f->fp;

	switch (row->cfa_base) {
	case CPROF_CFA_SP:
		cfa = f->sp + row->cfa_off;
		break;
	case CPROF_CFA_FP:
		cfa = f->fp + row->cfa_off;
		break;
	case CPROF_CFA_PLT:
		/* ld's PLT entries: 16 bytes, the push after the 11th. */
		cfa = f->sp + 8 + ((f->ip & 15) >= 11 ? 8 : 0);
		break;
	case CPROF_CFA_SP_DEREF:
	case CPROF_CFA_FP_DEREF:
		/* The stack was realigned; the CFA was saved in the frame. */
		addr = row->cfa_base == CPROF_CFA_SP_DEREF ? f->sp : f->fp;
		if (!cprof_ustep_stack(env, f, addr + CPROF_CFA_LO(row->cfa_off),
				       &cfa))
			return CPROF_STEP_BAD;
		cfa += CPROF_CFA_HI(row->cfa_off);
		break;
	case CPROF_CFA_REG:
		if ((unsigned int)CPROF_CFA_HI(row->cfa_off) >= 16 ||
		    !cprof_ustep_reg(env, CPROF_CFA_HI(row->cfa_off), &cfa))
			return CPROF_STEP_NONE;
		cfa += CPROF_CFA_LO(row->cfa_off);
		break;
	case CPROF_CFA_END:
		return CPROF_STEP_END;
	default:
		/*
		 * A rule the table could not express (a CFA expression of
		 * another shape, a signal frame): the frame-pointer chain
		 * may still hold.
		 */
		return CPROF_STEP_NONE;
	}
	/* The return address is above the frame's stack pointer. */
	if (cfa <= f->sp || cfa - f->sp < sizeof(cprof_uword) ||
	    cfa - f->base > CPROF_USTACK_SPAN)
		return CPROF_STEP_BAD;
	if (row->fp_rule == CPROF_FP_AT) {
		/* The caller's rbp saved beside the return address. */
		if (!cprof_ustep_read2(env, cfa + row->fp_off, &fp,
				       cfa - sizeof(cprof_uword), &f->ip))
			return CPROF_STEP_BAD;
	} else {
		if (row->fp_rule == CPROF_FP_AT_FP &&
		    !cprof_ustep_stack(env, f, f->fp + row->fp_off, &fp))
			return CPROF_STEP_BAD;
		if (!cprof_ustep_read(env, cfa - sizeof(cprof_uword), &f->ip))
			return CPROF_STEP_BAD;
	}
	f->sp = cfa;
	f->fp = fp;
	return CPROF_STEP_OK;
}

/* One step by the frame-pointer chain: the record at rbp. */
static inline enum cprof_step cprof_ustep_fp(struct cprof_ustep_frame *f,
					     struct cprof_ustep_env *env)
{
	cprof_uword next, ret;

	if (!f->fp)
		return CPROF_STEP_END;
	if (f->fp < f->sp || f->fp & (sizeof(cprof_uword) - 1) ||
	    !cprof_ustep_read2(env, f->fp, &next,
			       f->fp + sizeof(cprof_uword), &ret))
		return CPROF_STEP_BAD;
	f->ip = ret;
	f->sp = f->fp + 2 * sizeof(cprof_uword);
	f->fp = next;
	return CPROF_STEP_OK;
}

#endif /* CPROF_USTEP_READER */
