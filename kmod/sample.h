/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CPROF_SAMPLE_H
#define CPROF_SAMPLE_H

#include <linux/cgroup.h>
#include <linux/types.h>

#include "cprof.h"

int cprof_sample_init(u32 ring_size, u64 rings_max);
void cprof_sample_exit(void);
int cprof_sample_start(const struct cprof_settings *set, u64 period_ns);
void cprof_sample_open(u64 from, u64 deadline_ns);
void cprof_sample_stop(void);
u64 cprof_cgroup_id(struct task_struct *tsk);

/*
 * As cprof_cgroup_id(), inside an RCU read side: rcu_read_lock(), or
 * interrupts disabled (task_css_set_check() takes either), as the ticks
 * and hooks are: a pair of calls less an event.
 */
static inline u64 __cprof_cgroup_id(struct task_struct *tsk)
{
#ifdef CONFIG_CGROUPS
	return cgroup_id(task_dfl_cgroup(tsk));
#else
	return 1;
#endif
}

void *cprof_sample_reserve(u32 size, u64 now, bool sample);
u16 cprof_sample_current(struct cprof_sample *smp,
			 const struct cprof_settings *set, u32 depth,
			 u32 accesses,
			 unsigned long skip, u64 now, bool *kick);
void cprof_sample_commit(u16 type, u16 flags, u32 size, u64 now, bool kick);
void cprof_sample_lose(u64 now, bool sample);
bool cprof_sample_skip(u64 now, bool sample);
bool cprof_sample_half_full(void);
void cprof_sample_release(void);
size_t cprof_sample_drain(int cpu, void *dst, size_t room, u64 *nr_samples);
bool cprof_sample_drained(void);
size_t cprof_sample_flush_lost(void *dst, size_t room, u64 *total);
u64 cprof_sample_stats(int cpu, struct cprof_cpu_stats *st);
u64 cprof_sample_ring_bytes(void);
u32 cprof_sample_ustack_max(const struct cprof_settings *set);

#endif /* CPROF_SAMPLE_H */
