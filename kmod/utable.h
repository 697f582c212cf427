/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CPROF_UTABLE_H
#define CPROF_UTABLE_H

#include <linux/atomic.h>
#include <linux/bits.h>
#include <linux/build_bug.h>
#include <linux/jiffies.h>
#include <linux/types.h>
#include <asm/barrier.h>

#include "cprof_format.h"
#include "cprof/unwind_step.h"

struct cprof_file_pos;
struct seq_file;

/* A page (of the index) lies within the offset bits a row keeps. */
static_assert(CPROF_UINDEX_PAGE_SHIFT <= CPROF_UINDEX_LO_BITS);

/*
 * A table as the tick's lookups see it: from cprof_utable_get(); its rows
 * are looked up by cprof_uindex_row().
 */
struct cprof_utable_view {
	struct cprof_uindex rows;
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
void cprof_utable_loader(bool open);
bool cprof_utable_compiling(void);
bool cprof_utable_get(const struct cprof_file_pos *pos,
		      struct cprof_utable_view *v);
void cprof_utable_set_limit(u32 mb);
void cprof_utable_usage(u64 *tables, u64 *bytes, u64 *evicted);
void cprof_utable_exit(void);

/* utable.c's, for the inlines below */
extern u64 cprof_utab_count;
extern u64 cprof_utab_python;
extern atomic_t cprof_utab_loaders;
extern unsigned long cprof_utab_epoch;

/**
 * cprof_utable_hints() - what a walk should be ready for
 *
 * One look for what every walk asks first, inline: is a table loaded
 * (CPROF_UHINT_ANY: else the walk skips the lookups), of a CPython
 * interpreter (CPROF_UHINT_PYTHON: a tick makes room for Python frames),
 * and has a loader /proc/cprof/unwind open for writing
 * (CPROF_UHINT_LOADER: stack copies can be walked, and a table may be on
 * its way).
 *
 * Context: any; hints, read without a lock.
 * Return: the CPROF_UHINT_* hints that hold.
 */
static inline unsigned int cprof_utable_hints(void)
{
	unsigned int hints = 0;

	if (READ_ONCE(cprof_utab_count))
		hints |= CPROF_UHINT_ANY;
	if (READ_ONCE(cprof_utab_python))
		hints |= CPROF_UHINT_PYTHON;
	if (atomic_read(&cprof_utab_loaders) > 0)
		hints |= CPROF_UHINT_LOADER;
	return hints;
}

/**
 * cprof_utable_epoch() - a count of the tables loaded, replaced and dropped
 *
 * What cprof_utable_get() finds stays the same while this does; a table
 * is counted out before it is passed to cprof_rcufree().  So a view kept
 * from an earlier RCU read side may be used in a later one that reads the
 * same count: the table is not freed before that one ends.  Inline: every
 * walk with tables reads it.
 *
 * Context: inside an RCU read side, before the lookups whose views are kept
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

#endif /* CPROF_UTABLE_H */
