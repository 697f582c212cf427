/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * ustack - walk a copy of a user stack (CPROF_REC_USTACK) with the unwind
 * tables userland compiled since the sample was taken: the module's own
 * step (cprof/unwind_step.h, which kmod/unwind.c compiles too), over the
 * copied bytes instead of the process's memory.
 */
#ifndef CPROF_USTACK_H
#define CPROF_USTACK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cprof_format.h"
#include "cprof/unwind_step.h"

struct ustack_table;

/* The code at an address, as the walk's caller knows it. */
struct ustack_code {
	uint64_t start, end;	/* the mapping: [start, end) */
	uint64_t pgoff;		/* file offset of start */
	/*
	 * Its file's table, indexed (ustack_table_new()); NULL: none, the
	 * frame-pointer chain is followed.  Must stay valid until
	 * ustack_walk() returns.
	 */
	const struct ustack_table *table;
	/* no table here, but the module has one: the walk stops */
	bool elsewhere;
};

/*
 * What the walk asks: the code at ip (false: no mapping of a file holds
 * it, the frame-pointer chain is followed).
 */
typedef bool (*ustack_code_fn)(void *arg, uint64_t ip, struct ustack_code *c);

enum ustack_end {
	USTACK_COMPLETE,	/* the outermost frame was reached */
	USTACK_DEPTH,		/* max frames written */
	USTACK_STOPPED,		/* a bad frame */
	USTACK_SHORT,		/* a word past the copy's end was needed */
	USTACK_NO_TABLE,	/* a table the module has is not here */
};

/*
 * Walk the copy u from its frame, whose ip is ip (an instruction if
 * exact, else a return address).  ips gets that ip first, then each
 * caller's return address, at most max (>= 1).  *n gets how many.
 */
enum ustack_end ustack_walk(const struct cprof_ustack *u, uint64_t ip,
			    bool exact, ustack_code_fn code, void *arg,
			    uint64_t *ips, int max, int *n);

/*
 * One table (cprof_format.h's layout: header, rules, pc[], rule_of[], len
 * bytes) indexed as the module indexes one.  NULL if the module would not
 * take it, or for want of memory.  The table must outlive the index.
 */
struct ustack_table *ustack_table_new(const void *table, size_t len);
/* NULL-safe. */
void ustack_table_free(struct ustack_table *t);

/* The row for file offset off; false: none, or CPROF_CFA_NONE. */
bool ustack_table_row(const struct ustack_table *t, uint64_t off,
		      struct cprof_urow *row);

/*
 * The walk's steps over the copy u, one each: by t's row for file offset
 * off (the frame's ip if f is the interrupted frame, whose registers regs
 * are when all are known, else NULL; else ip - 1), CPROF_STEP_NONE if no
 * row; or by the frame-pointer chain.  f->base is the copy's stack
 * pointer.  *past_end: a CPROF_STEP_BAD needed a word past the copy's end.
 */
enum cprof_step ustack_table_step(const struct ustack_table *t, uint64_t off,
				  const struct cprof_ustack *u,
				  const __u64 *regs,
				  struct cprof_ustep_frame *f, bool *past_end);
enum cprof_step ustack_fp_step(const struct cprof_ustack *u,
			       struct cprof_ustep_frame *f, bool *past_end);

#endif /* CPROF_USTACK_H */
