/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CPROF_OFFCPU_H
#define CPROF_OFFCPU_H

#include <linux/sched.h>
#include <linux/types.h>

#include "cprof.h"

int cprof_offcpu_start(const struct cprof_settings *set);
void cprof_offcpu_stop(void);
void cprof_offcpu_exit(void);
void cprof_offcpu_stats(int cpu, struct cprof_cpu_stats *st);
enum cprof_off_state cprof_offcpu_state(unsigned int state);
enum cprof_off_state cprof_off_state(bool preempt, struct task_struct *prev,
				     unsigned int state);

#endif /* CPROF_OFFCPU_H */
