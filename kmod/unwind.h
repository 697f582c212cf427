/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CPROF_UNWIND_H
#define CPROF_UNWIND_H

#include <linux/types.h>

struct pt_regs;
struct task_struct;

/* Stack walks from the tick: unwind.c. */
int cprof_unwind_kernel(struct pt_regs *regs, u64 *ips, int max, u16 *flags);
int cprof_unwind_user(struct pt_regs *uregs, bool entry, u64 *ips, int max,
		      u16 *flags);
struct pt_regs *cprof_user_regs(struct task_struct *tsk, struct pt_regs *regs);

#endif /* CPROF_UNWIND_H */
