/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CPROF_ACCESS_H
#define CPROF_ACCESS_H

#include <linux/types.h>

int cprof_access_check(void);
bool cprof_access_kernel_addrs(void);

struct mm_struct;
struct task_struct;

int cprof_access_probe(struct task_struct *task, struct mm_struct *mm);

#endif /* CPROF_ACCESS_H */
