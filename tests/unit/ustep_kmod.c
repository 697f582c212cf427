// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * ustep_kmod - include/cprof/unwind_step.h compiled as the module compiles
 * it, into test_ustep beside cprof-dump's build of it (ustack.c): built
 * with -D__KERNEL__ (the kernel's half of the header's types: the word an
 * unsigned long) and kmod/unwind.c's reader restated over a test's memory:
 * each word read where access_ok() would let it be (below TASK_SIZE_MAX),
 * a pair of words in one window (both or neither), the interrupted
 * frame's registers if known.  The only user memory is the stack copy's
 * bytes, as cprof-dump's reader sees them.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "cprof/unwind_step.h"
#include "ustep_kmod.h"

#ifndef __KERNEL__
#error "ustep_kmod.c is built as the module builds: -D__KERNEL__"
#endif

#define TASK_SIZE_MAX	((1UL << 47) - 4096)

struct cprof_ustep_env {
	const struct cprof_ustack *u;	/* the user memory */
	const __u64 *regs;		/* DWARF's 16; NULL: none */
};

static bool access_ok(unsigned long addr, unsigned long size)
{
	return size <= TASK_SIZE_MAX && addr <= TASK_SIZE_MAX - size;
}

/* A load from user memory: false where it would fault. */
static bool get_user(const struct cprof_ustack *u, unsigned long addr,
		     unsigned long *val)
{
	unsigned long start = u->regs[7];

	if (addr < start || addr - start > u->size ||
	    u->size - (addr - start) < sizeof(*val))
		return false;
	memcpy(val, u->data + (addr - start), sizeof(*val));
	return true;
}

#define CPROF_USTEP_READER

static inline bool cprof_ustep_read(struct cprof_ustep_env *env,
				    unsigned long addr, unsigned long *val)
{
	return access_ok(addr, sizeof(*val)) && get_user(env->u, addr, val);
}

static inline bool cprof_ustep_read2(struct cprof_ustep_env *env,
				     unsigned long a, unsigned long *va,
				     unsigned long b, unsigned long *vb)
{
	unsigned long lo = a < b ? a : b, hi = a < b ? b : a;

	if (hi - lo > ~0UL - sizeof(long) ||
	    !access_ok(lo, hi - lo + sizeof(long)))
		return false;
	return get_user(env->u, a, va) && get_user(env->u, b, vb);
}

static inline bool cprof_ustep_reg(struct cprof_ustep_env *env, int reg,
				   unsigned long *val)
{
	if (!env->regs || (unsigned int)reg >= 16)
		return false;
	*val = env->regs[reg];
	return true;
}

#include "cprof/unwind_step.h"

/* The index, its rows and pages in the one block after it. */
struct kstep_table {
	struct cprof_uindex ix;
	struct cprof_uent ent[];
};

void kstep_table_free(struct kstep_table *t)
{
	free(t);
}

/*
 * Indexed by the header's calls as kmod/utable.c indexes a table it took
 * (row by row: cprof_uindex_put(), then cprof_uindex_end()).
 */
struct kstep_table *kstep_table_new(const void *table, size_t len)
{
	const struct cprof_utable *h = table;
	const struct cprof_urow *rule;
	const __u16 *rule_of;
	const __u32 *pc;
	struct kstep_table *t;
	__u32 i, p = 0, npages, *page;

	if (len < sizeof(*h) || !h->nr_rows)
		return NULL;
	rule = (const void *)((const char *)(h + 1) +
			      (h->flags & CPROF_UTABLE_PY ?
			       sizeof(struct cprof_upy) : 0));
	pc = (const void *)(rule + h->nr_rules);
	rule_of = (const void *)(pc + h->nr_rows);
	npages = cprof_uindex_pages(pc[h->nr_rows - 1]);
	t = malloc(sizeof(*t) + h->nr_rows * sizeof(t->ent[0]) +
		   npages * sizeof(*page));
	if (!t)
		return NULL;
	page = (__u32 *)(t->ent + h->nr_rows);
	for (i = 0; i < h->nr_rows; i++)
		cprof_uindex_put(t->ent, page, npages, &p, i, pc[i],
				 rule_of[i]);
	cprof_uindex_end(page, npages, &p, h->nr_rows);
	t->ix = (struct cprof_uindex){
		.ent = t->ent, .page = page, .rule = rule, .nr = h->nr_rows,
		.npages = npages, .first = pc[0],
	};
	return t;
}

bool kstep_table_row(const struct kstep_table *t, __u64 off,
		     struct cprof_urow *row)
{
	return cprof_uindex_row(&t->ix, off, row);
}

static void frame_in(struct cprof_ustep_frame *f, const struct kstep_frame *k)
{
	f->ip = k->ip;
	f->sp = k->sp;
	f->fp = k->fp;
	f->base = k->base;
}

static void frame_out(struct kstep_frame *k, const struct cprof_ustep_frame *f)
{
	k->ip = f->ip;
	k->sp = f->sp;
	k->fp = f->fp;
	k->base = f->base;
}

int kstep_table_step(const struct kstep_table *t, __u64 off,
		     const struct cprof_ustack *u, const __u64 *regs,
		     struct kstep_frame *k)
{
	struct cprof_ustep_env env = { .u = u };
	struct cprof_ustep_frame f;
	struct cprof_urow row;
	enum cprof_step step = CPROF_STEP_NONE;

	env.regs = regs;
	frame_in(&f, k);
	if (cprof_uindex_row(&t->ix, off, &row))
		step = cprof_ustep_row(&row, &f, &env);
	frame_out(k, &f);
	return step;
}

int kstep_fp_step(const struct cprof_ustack *u, struct kstep_frame *k)
{
	struct cprof_ustep_env env = { .u = u };
	struct cprof_ustep_frame f;
	enum cprof_step step;

	frame_in(&f, k);
	step = cprof_ustep_fp(&f, &env);
	frame_out(k, &f);
	return step;
}
