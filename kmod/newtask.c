// SPDX-License-Identifier: GPL-2.0
/*
 * Task creations (profile kind threadcreate): a probe on the task_newtask
 * tracepoint, registered only while such a profile runs, sees every task
 * copy_process() makes, in the creating thread's context (current),
 * preemption disabled by the tracepoint, no lock held.  Each creation the
 * profile's filters take is a CPROF_REC_SAMPLE of current: its kernel
 * stack from copy_process() out and its user stack from its system call,
 * walked as a tick walks them, interrupts disabled so that the CPU's ring
 * keeps one producer.  None is sampled away: one not recorded (the ring
 * full, or the CPU past ctl's budget of the current window spent
 * recording: hookcost.c) is counted lost, as a lost sample.  docs/design.md,
 * "Tasks created".
 */
#include <linux/irqflags.h>
#include <linux/mutex.h>
#include <linux/percpu.h>
#include <linux/sched.h>
#include <linux/smp.h>
#include <linux/string.h>
#include <linux/timekeeping.h>
#include <linux/tracepoint.h>
#include <trace/events/task.h>

#include "hookcost.h"
#include "newtask.h"
#include "sample.h"

/* One CPU's recording of creations; its own CPU only writes it. */
struct cprof_nt_cpu {
	struct cprof_hookcost cost;	/* against the budget; stats */
	u64 events;		/* stats: samples written */
	u64 skipped;		/* stats: over budget */
};

static DEFINE_PER_CPU(struct cprof_nt_cpu, cprof_nt_cpus);
static const struct cprof_settings *cprof_nt_set __read_mostly;
static u32 cprof_nt_budget __read_mostly;	/* the profile's, % of a CPU */
/* task_newtask; never goes away */
static struct tracepoint *cprof_nt_tp __read_mostly;
static bool cprof_nt_registered;	/* under cprof_nt_lock */
static DEFINE_MUTEX(cprof_nt_lock);

/* Is the creating task one the profile takes? */
static bool cprof_nt_wanted(const struct cprof_settings *set,
			    struct task_struct *tsk)
{
	if (set->pid && tsk->tgid != set->pid)
		return false;
	if (!set->all_cpus && !cpumask_test_cpu(smp_processor_id(), set->cpus))
		return false;
	return set->mode != CPROF_MODE_USER || !(tsk->flags & PF_KTHREAD);
}

/* The creating task, current, recorded: interrupts disabled. */
static void cprof_nt_record(const struct cprof_settings *set,
			    struct cprof_nt_cpu *nc)
{
	struct cprof_sample *smp;
	u32 depth = set->depth;
	u64 now = ktime_get_ns();
	u16 flags;
	bool kick;

	/* past the budget: counted, nothing written (no LOST per creation) */
	if (cprof_hookcost_over(&nc->cost, now, cprof_nt_budget)) {
		if (cprof_sample_skip(now, true))
			nc->skipped++;
		return;
	}
	smp = cprof_sample_reserve(sizeof(*smp) + (2 * depth + 1) * sizeof(u64),
				   now, true);
	if (!smp)
		return;
	flags = cprof_sample_current(smp, set, depth, set->accesses,
				     (unsigned long)cprof_nt_tp->iterator, now,
				     &kick);
	cprof_sample_commit(CPROF_REC_SAMPLE, flags,
			    sizeof(*smp) + (smp->nr_kernel + smp->nr_user + 1) *
			    sizeof(u64), now, kick);
	nc->events++;
	cprof_hookcost_add(&nc->cost, ktime_get_ns() - now);
}

/* The task_newtask probe: current creates @task; preemption disabled. */
static void cprof_nt_probe(void *data, struct task_struct *task,
			   unsigned long clone_flags)
{
	const struct cprof_settings *set = READ_ONCE(cprof_nt_set);
	unsigned long irqflags;

	if (!set || !cprof_nt_wanted(set, current))
		return;
	local_irq_save(irqflags);
	cprof_nt_record(set, this_cpu_ptr(&cprof_nt_cpus));
	local_irq_restore(irqflags);
}

static void cprof_nt_find(struct tracepoint *tp, void *priv)
{
	if (!strcmp(tp->name, "task_newtask"))
		*(struct tracepoint **)priv = tp;
}

/**
 * cprof_newtask_start() - record the task creations of a profile of kind
 *	threadcreate
 * @set: the profile's settings, read until cprof_newtask_stop()
 *
 * Context: process, may sleep; the rings are set up, no hook runs.
 * Return: 0, -ENOENT if the kernel has no task_newtask tracepoint, or
 * tracepoint_probe_register()'s error.
 */
int cprof_newtask_start(const struct cprof_settings *set)
{
	int cpu, err;

	check_trace_callback_type_task_newtask(cprof_nt_probe);
	mutex_lock(&cprof_nt_lock);
	if (!cprof_nt_tp)
		for_each_kernel_tracepoint(cprof_nt_find, &cprof_nt_tp);
	err = cprof_nt_tp ? 0 : -ENOENT;
	if (!err && WARN_ON_ONCE(cprof_nt_registered))
		err = -EBUSY;
	if (err)
		goto unlock;
	for_each_possible_cpu(cpu)
		cprof_hookcost_reset(&per_cpu_ptr(&cprof_nt_cpus, cpu)->cost);
	cprof_nt_budget = set->budget;
	WRITE_ONCE(cprof_nt_set, set);
	err = tracepoint_probe_register(cprof_nt_tp, cprof_nt_probe, NULL);
	if (err)
		WRITE_ONCE(cprof_nt_set, NULL);
	else
		cprof_nt_registered = true;
unlock:
	mutex_unlock(&cprof_nt_lock);
	return err;
}

/**
 * cprof_newtask_stop() - no more creations recorded
 *
 * After this returns the probe is gone and none runs.  Idempotent.
 *
 * Context: process, may sleep: waits for running probes.
 */
void cprof_newtask_stop(void)
{
	mutex_lock(&cprof_nt_lock);
	if (cprof_nt_registered) {
		WARN_ON_ONCE(tracepoint_probe_unregister(cprof_nt_tp,
							 cprof_nt_probe,
							 NULL));
		tracepoint_synchronize_unregister();
		cprof_nt_registered = false;
		WRITE_ONCE(cprof_nt_set, NULL);
	}
	mutex_unlock(&cprof_nt_lock);
}

/**
 * cprof_newtask_stats() - one CPU's task creation counters since load
 * @cpu: the CPU
 * @st: its threadcreate_* fields are set
 *
 * Context: any; the counters may be a little stale.
 */
void cprof_newtask_stats(int cpu, struct cprof_cpu_stats *st)
{
	const struct cprof_nt_cpu *nc = per_cpu_ptr(&cprof_nt_cpus, cpu);

	st->threadcreate_events = READ_ONCE(nc->events);
	st->threadcreate_skipped = READ_ONCE(nc->skipped);
	cprof_hookcost_stats(&nc->cost, &st->threadcreate_ns_total,
			     &st->threadcreate_ns_max);
}
