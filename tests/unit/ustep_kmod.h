/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * ustep_kmod - the unwind step (include/cprof/unwind_step.h) as the module
 * builds it, for test_ustep to compare with cprof-dump's (ustack.h): the
 * same calls, over a stack copy's bytes as the only user memory.
 */
#ifndef CPROF_USTEP_KMOD_H
#define CPROF_USTEP_KMOD_H

#include <stdbool.h>
#include <stddef.h>

#include "cprof_format.h"

struct kstep_frame {
	__u64 ip, sp, fp, base;
};

struct kstep_table;

/* The index of a table ustack_table_new() took; NULL: no memory. */
struct kstep_table *kstep_table_new(const void *table, size_t len);
void kstep_table_free(struct kstep_table *t);
bool kstep_table_row(const struct kstep_table *t, __u64 off,
		     struct cprof_urow *row);
/* enum cprof_step; regs: 16 DWARF registers, or NULL. */
int kstep_table_step(const struct kstep_table *t, __u64 off,
		     const struct cprof_ustack *u, const __u64 *regs,
		     struct kstep_frame *f);
int kstep_fp_step(const struct cprof_ustack *u, struct kstep_frame *f);

#endif /* CPROF_USTEP_KMOD_H */
