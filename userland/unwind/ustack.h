/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * ustack - walk a copy of a user stack (CPROF_REC_USTACK) with the unwind
 * tables userland compiled since the sample was taken: the module's own
 * step (kmod/unwind.c), over the copied bytes instead of the process's
 * memory.
 */
#ifndef CPROF_USTACK_H
#define CPROF_USTACK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cprof_format.h"

/* The code at an address, as the walk's caller knows it. */
struct ustack_code {
	uint64_t start, end;	/* the mapping: [start, end) */
	uint64_t pgoff;		/* file offset of start */
	/*
	 * Its file's table as the module takes it (cprof_format.h: header,
	 * rules, pc[], rule_of[]), len bytes; NULL: none, the frame-pointer
	 * chain is followed.  Must stay valid until ustack_walk() returns.
	 */
	const void *table;
	size_t len;
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

#endif /* CPROF_USTACK_H */
