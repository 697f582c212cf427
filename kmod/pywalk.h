/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CPROF_PYWALK_H
#define CPROF_PYWALK_H

#include "cprof_format.h"
#include "unwind.h"

struct task_struct;

/* The Python frames of the interrupted thread: pywalk.c. */
int cprof_pywalk(struct task_struct *tsk, const struct cprof_pyhint *h,
		 struct cprof_pytrail *t, int max, struct cprof_uaccess *acc);

#endif /* CPROF_PYWALK_H */
