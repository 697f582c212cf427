/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CPROF_UTABLE_H
#define CPROF_UTABLE_H

#include <linux/bits.h>
#include <linux/build_bug.h>
#include <linux/jiffies.h>
#include <linux/types.h>
#include <asm/barrier.h>

#include "cprof_format.h"

struct cprof_file_pos;
struct seq_file;

#define CPROF_UTAB_PAGE_SHIFT	12	/* the page index's granule */

/* The offset bits a row keeps; a page (of the index) lies within them. */
#define CPROF_UTAB_LO_BITS	16
static_assert(CPROF_UTAB_PAGE_SHIFT <= CPROF_UTAB_LO_BITS);

/* One row of a table: where it starts, its rule. */
struct cprof_uent {
	u16 pc_lo;		/* the offset's low 16 bits */
	u16 rule;		/* in the table's rule[] */
};

/* A table as the tick's lookups see it: from cprof_utable_get(). */
struct cprof_utable_view {
	const struct cprof_uent *ent;
	const u32 *page;
	const struct cprof_urow *rule;
	u32 nr;
	u32 npages;
	u32 first;		/* the first row's offset */
	bool frame_pointers;	/* CPROF_UTABLE_FP */
	const struct cprof_upy *py;	/* CPROF_UTABLE_PY's, else NULL */
	unsigned long *used;	/* the eviction's clock */
};

ssize_t cprof_utable_write(const char __user *buf, size_t count);
void cprof_utable_show(struct seq_file *m);

/* cprof_utable_hints() */
#define CPROF_UHINT_ANY		BIT(0)	/* a table is loaded */
#define CPROF_UHINT_PYTHON	BIT(1)	/* a CPython interpreter's is */
#define CPROF_UHINT_LOADER	BIT(2)	/* a loader has unwind open */
unsigned int cprof_utable_hints(void);
void cprof_utable_loader(bool open);
bool cprof_utable_compiling(void);
bool cprof_utable_get(const struct cprof_file_pos *pos,
		      struct cprof_utable_view *v);
void cprof_utable_set_limit(u32 mb);
void cprof_utable_usage(u64 *tables, u64 *bytes, u64 *evicted);
void cprof_utable_exit(void);

extern unsigned long cprof_utab_epoch;	/* utable.c's, for the inline below */

/**
 * cprof_utable_epoch() - a count of the tables loaded, replaced and dropped
 *
 * What cprof_utable_get() finds stays the same while this does; a table
 * is counted out before it is passed to kvfree_rcu().  So a view kept
 * from an earlier RCU read side may be used in a later one that reads the
 * same count: the table is not freed before that one ends.  Inline: every
 * walk with tables reads it.
 *
 * Context: inside rcu_read_lock(), before the lookups whose views are kept
 * by it.
 * Return: the count.
 */
static inline unsigned long cprof_utable_epoch(void)
{
	/* before the lookups it vouches for */
	return smp_load_acquire(&cprof_utab_epoch);
}

/**
 * cprof_utable_touch() - a walk uses the table: not the least recently used
 * @v: from cprof_utable_get(), in this RCU read side or one kept as
 *	cprof_utable_epoch() says
 *
 * A store a jiffy at most, not one a frame.
 */
static inline void cprof_utable_touch(const struct cprof_utable_view *v)
{
	unsigned long now = jiffies;

	if (READ_ONCE(*v->used) != now)
		WRITE_ONCE(*v->used, now);
}

/**
 * cprof_utable_row() - the row for offset @off of a table's file
 * @v: from cprof_utable_get()
 * @off: a byte offset in the file
 * @row: filled in when found
 *
 * Inline: the tick looks up a row for each frame it steps by a table.
 *
 * Context: where @v holds (cprof_utable_get()).
 * Return: false when no row covers @off with a rule (CPROF_CFA_NONE).
 */
static inline bool cprof_utable_row(const struct cprof_utable_view *v, u64 off,
				    struct cprof_urow *row)
{
	u64 p = off >> CPROF_UTAB_PAGE_SHIFT, at, seg;
	u32 lo, hi, mid;

	/* before the first row, or past the last one (NONE) */
	if (p >= v->npages || off < v->first)
		return false;
	/*
	 * The last row with pc <= off is in [page[p], page[p + 1]]; those
	 * after page[p] lie in (p's start, p + 1's start]: in p's 64 KiB,
	 * but for one at the start of the next 64 KiB.
	 */
	lo = v->page[p];
	hi = p + 1 < v->npages ? v->page[p + 1] + 1 : v->nr;
	seg = off & ~(u64)(BIT(CPROF_UTAB_LO_BITS) - 1);
	while (hi - lo > 1) {
		mid = lo + (hi - lo) / 2;
		at = seg | v->ent[mid].pc_lo;
		if (at <= p << CPROF_UTAB_PAGE_SHIFT)
			at += BIT(CPROF_UTAB_LO_BITS);
		if (at <= off)
			lo = mid;
		else
			hi = mid;
	}
	*row = v->rule[v->ent[lo].rule];
	return row->cfa_base != CPROF_CFA_NONE;
}

#endif /* CPROF_UTABLE_H */
