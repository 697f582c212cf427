/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CPROF_ULOOKUP_H
#define CPROF_ULOOKUP_H

#include <linux/types.h>

#include "cprof_format.h"
#include "utable.h"

struct cprof_mmstate;
struct cprof_urows;
struct task_struct;

/*
 * A mapping of a file, with the file's table if it has one: what a user
 * walk's table step needs to know about an address.  Valid as long as the
 * lookup that gave it (cprof_ulookup_start()).
 */
struct cprof_ufile {
	unsigned long start;		/* the mapping: [start, end) */
	unsigned long end;		/* 0: none */
	u64 pgoff;			/* the file offset of start */
	struct cprof_utable_view table;
	bool has_table;
	unsigned long touched;		/* jiffies: table last marked used */
};

/*
 * The lookups of one user walk: whose address space, its mappings and the
 * last two files found in them (a program's frames, the C library's start
 * code under them, the program's _start under that), and, on a CPU's own
 * copy, the rows found lately.  A CPU keeps its copy from one walk to the
 * next while the address space, its mappings and the tables stay the
 * same; a walk that cannot use it (one made in process context) has its
 * own, fresh.  Read only through the functions below.
 */
struct cprof_ulookup {
	const struct mm_struct *mm;	/* the key: never dereferenced */
	pid_t tgid;
	u64 exec_id;
	unsigned long maps_gen;		/* cprof_maps_gen() when filled */
	unsigned long utable_gen;	/* cprof_utable_gen() when filled */
	const struct cprof_mmstate *st;
	bool st_known;			/* st was looked up (NULL: none) */
	unsigned int cur;		/* file[cur]: the last one used */
	struct cprof_ufile file[2];
	struct cprof_urows *rows;	/* NULL: none kept (process context) */
};

struct cprof_ulookup *cprof_ulookup_start(struct task_struct *tsk,
					  struct cprof_ulookup *own);
const struct cprof_mmstate *cprof_ulookup_maps(struct cprof_ulookup *lk);
const struct cprof_ufile *cprof_ulookup_file(struct cprof_ulookup *lk,
					     unsigned long at);
bool cprof_ulookup_row(struct cprof_ulookup *lk, const struct cprof_ufile *u,
		       unsigned long at, struct cprof_urow *row);

#endif /* CPROF_ULOOKUP_H */
