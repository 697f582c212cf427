// SPDX-License-Identifier: GPL-2.0
/*
 * The scheduler's timeline (profile kind trace): what ran on each CPU, who
 * woke whom, and the stacks of each task leaving the CPU.  Probes
 * registered only while such a profile runs: on sched_switch (interrupts
 * disabled, the runqueue locked, current is the task leaving) every switch
 * is a CPROF_REC_SWITCH, then the leaving task's stacks a CPROF_REC_SAMPLE
 * of current; on sched_waking and sched_wakeup_new (a new task's) every
 * wake-up is a CPROF_REC_WAKE of current and the wakee.  Switches and wake-ups carry no
 * stack: the ring's room bounds them, each one that finds it full counted
 * lost (LOST's other).  The stacks are walked within ctl's budget of the
 * current window spent in the probes (hookcost.c), and only while the CPU's ring is
 * less than half full: decided before the switch is written, which says
 * so in its flags (no lost sample); one without room is a lost sample.
 * Nothing here sleeps, allocates or takes a lock.
 * docs/design.md, "The scheduler's timeline: kind trace".
 */
#include <linux/irqflags.h>
#include <linux/mutex.h>
#include <linux/percpu.h>
#include <linux/preempt.h>
#include <linux/sched.h>
#include <linux/smp.h>
#include <linux/string.h>
#include <linux/timekeeping.h>
#include <linux/tracepoint.h>
#include <trace/events/sched.h>

#include "hookcost.h"
#include "offcpu.h"
#include "sample.h"
#include "trace.h"
#include "unwind.h"

/*
 * A stack walked on every switch, the runqueue locked: shallower and with
 * fewer user reads than ctl's bounds allow a tick (on PREEMPT_RT, too,
 * the runqueue's lock is a raw spinlock).
 */
#define CPROF_TR_DEPTH_MAX	64
#define CPROF_TR_ACCESSES_MAX	256

/* One CPU's recording of the timeline; its own CPU only writes it. */
struct cprof_tr_cpu {
	struct cprof_hookcost cost;	/* the probes' against the budget */
	u64 switches;		/* stats: CPROF_REC_SWITCH written */
	u64 wakes;		/* stats: CPROF_REC_WAKE written */
	u64 stacks;		/* stats: stacks written */
	u64 skipped;		/* stats: stacks not walked, over budget */
	u64 nostack_ring;	/* stats: stacks not walked, ring half full */
};

static DEFINE_PER_CPU(struct cprof_tr_cpu, cprof_tr_cpus);
static const struct cprof_settings *cprof_tr_set __read_mostly;
static u32 cprof_tr_budget __read_mostly;	/* the profile's, % of a CPU */
/* sched_switch, sched_waking, sched_wakeup_new; never go away */
static struct tracepoint *cprof_tr_switch_tp __read_mostly;
static struct tracepoint *cprof_tr_wake_tp __read_mostly;
static struct tracepoint *cprof_tr_new_tp __read_mostly;
static bool cprof_tr_registered;	/* under cprof_tr_lock */
static DEFINE_MUTEX(cprof_tr_lock);

static bool cprof_tr_cpu_wanted(const struct cprof_settings *set)
{
	return set->all_cpus || cpumask_test_cpu(smp_processor_id(), set->cpus);
}

static void cprof_tr_comm(char *dst, struct task_struct *tsk)
{
	BUILD_BUG_ON(TASK_COMM_LEN < CPROF_COMM_LEN);
	memcpy(dst, tsk->comm, CPROF_COMM_LEN);
	dst[CPROF_COMM_LEN - 1] = '\0';
}

/* The stacks of @prev, current, leaving the CPU at @now. */
static void cprof_tr_stack(const struct cprof_settings *set,
			   struct cprof_tr_cpu *tc, u64 now)
{
	struct cprof_sample *smp;
	u32 depth = min3(set->depth, set->offcpu_depth,
			 (u32)CPROF_TR_DEPTH_MAX);
	u16 flags;
	bool kick;

	smp = cprof_sample_reserve(sizeof(*smp) + (2 * depth + 1) * sizeof(u64),
				   now, true);
	if (!smp)
		return;
	flags = cprof_sample_current(smp, set, depth,
				     min(set->accesses,
					 (u32)CPROF_TR_ACCESSES_MAX),
				     (unsigned long)cprof_tr_switch_tp->iterator,
				     now, &kick);
	cprof_sample_commit(CPROF_REC_SAMPLE, flags,
			    sizeof(*smp) + (smp->nr_kernel + smp->nr_user + 1) *
			    sizeof(u64), now, kick);
	WRITE_ONCE(tc->stacks, tc->stacks + 1);
}

/*
 * Are the stacks of @prev, current, leaving in @prev_state, the profile's?
 * In user mode, not without user registers (a kernel thread, a user worker,
 * a task past exit_mm() or in execve()): its sample would be empty.
 */
static bool cprof_tr_stack_wanted(const struct cprof_settings *set,
				  struct task_struct *prev,
				  unsigned int prev_state)
{
	return !is_idle_task(prev) && !(prev_state & TASK_DEAD) &&
	       (!set->pid || prev->tgid == set->pid) &&
	       (set->mode != CPROF_MODE_USER || cprof_saved_user_regs(prev));
}

/*
 * Whether the stacks wanted are walked: 0 if so, else why not, the
 * switch's CPROF_SWITCH_NOSTACK_* flag.  Decided before the switch is
 * written: the switches and wake-ups first, they keep the ring's other
 * half.
 */
static u16 cprof_tr_nostack(struct cprof_tr_cpu *tc, u64 now)
{
	if (cprof_hookcost_over(&tc->cost, now, cprof_tr_budget))
		return CPROF_SWITCH_NOSTACK_BUDGET;
	if (cprof_sample_half_full())
		return CPROF_SWITCH_NOSTACK_RING;
	return 0;
}

/*
 * The sched_switch probe: interrupts disabled, the runqueue locked,
 * current is @prev.
 */
static void cprof_tr_switch(void *data, bool preempt,
			    struct task_struct *prev,
			    struct task_struct *next, unsigned int prev_state)
{
	const struct cprof_settings *set = READ_ONCE(cprof_tr_set);
	struct cprof_tr_cpu *tc;
	struct cprof_switch *r;
	bool stack;
	u16 flags = 0;
	u64 now;

	if (!set || !cprof_tr_cpu_wanted(set))
		return;
	if (set->pid && prev->tgid != set->pid && next->tgid != set->pid)
		return;
	tc = this_cpu_ptr(&cprof_tr_cpus);
	now = ktime_get_ns();
	stack = cprof_tr_stack_wanted(set, prev, prev_state);
	if (stack)
		flags = cprof_tr_nostack(tc, now);
	r = cprof_sample_reserve(sizeof(*r), now, false);
	if (!r)
		goto out;
	r->time_ns = now;
	r->cpu = smp_processor_id();
	r->prev_pid = prev->tgid;
	r->prev_tid = prev->pid;
	r->next_pid = next->tgid;
	r->next_tid = next->pid;
	r->prev_state = cprof_off_state(preempt, prev, prev_state);
	r->reserved = 0;
	cprof_tr_comm(r->prev_comm, prev);
	cprof_tr_comm(r->next_comm, next);
	cprof_sample_commit(CPROF_REC_SWITCH, flags, sizeof(*r), now, false);
	WRITE_ONCE(tc->switches, tc->switches + 1);
	if (flags & CPROF_SWITCH_NOSTACK_BUDGET)
		WRITE_ONCE(tc->skipped, tc->skipped + 1);
	else if (flags & CPROF_SWITCH_NOSTACK_RING)
		WRITE_ONCE(tc->nostack_ring, tc->nostack_ring + 1);
	else if (stack)
		cprof_tr_stack(set, tc, now);
out:
	/* the whole probe's time, from its clock read on */
	cprof_hookcost_add(&tc->cost, ktime_get_ns() - now);
}

/*
 * A wake-up of @p by current (or the interrupt handler running on it),
 * @p's pi_lock held; @flags: the record's, besides CPROF_WAKE_IRQ.
 */
static void cprof_tr_wake(struct task_struct *p, u16 flags)
{
	const struct cprof_settings *set = READ_ONCE(cprof_tr_set);
	struct task_struct *waker = current;
	struct cprof_tr_cpu *tc;
	unsigned long irqflags;
	struct cprof_wake *r;
	u64 now;

	if (!set || p == waker)
		return;
	/* from an interrupt, current is only the task it interrupted */
	if (set->pid && p->tgid != set->pid &&
	    (!in_task() || waker->tgid != set->pid))
		return;
	local_irq_save(irqflags);
	/* the waker's CPU or the wakee's; this CPU's ring all the same */
	if (!cprof_tr_cpu_wanted(set) &&
	    !cpumask_test_cpu(task_cpu(p), set->cpus))
		goto out;
	tc = this_cpu_ptr(&cprof_tr_cpus);
	now = ktime_get_ns();
	r = cprof_sample_reserve(sizeof(*r), now, false);
	if (!r)
		goto cost;
	r->time_ns = now;
	r->cpu = smp_processor_id();
	r->target_cpu = task_cpu(p);
	r->waker_pid = waker->tgid;
	r->waker_tid = waker->pid;
	r->wakee_pid = p->tgid;
	r->wakee_tid = p->pid;
	cprof_tr_comm(r->waker_comm, waker);
	cprof_tr_comm(r->wakee_comm, p);
	if (!in_task())
		flags |= CPROF_WAKE_IRQ;
	cprof_sample_commit(CPROF_REC_WAKE, flags, sizeof(*r), now, false);
	WRITE_ONCE(tc->wakes, tc->wakes + 1);
cost:
	cprof_hookcost_add(&tc->cost, ktime_get_ns() - now);
out:
	local_irq_restore(irqflags);
}

/* The sched_waking probe: try_to_wake_up(), @p's pi_lock held. */
static void cprof_tr_waking(void *data, struct task_struct *p)
{
	cprof_tr_wake(p, 0);
}

/*
 * The sched_wakeup_new probe: wake_up_new_task(), a new task's first
 * wake-up (no sched_waking), @p's pi_lock and its runqueue's lock held,
 * interrupts disabled.
 */
static void cprof_tr_wakeup_new(void *data, struct task_struct *p)
{
	cprof_tr_wake(p, CPROF_WAKE_NEW);
}

static void cprof_tr_find(struct tracepoint *tp, void *priv)
{
	if (!strcmp(tp->name, "sched_switch"))
		cprof_tr_switch_tp = tp;
	else if (!strcmp(tp->name, "sched_waking"))
		cprof_tr_wake_tp = tp;
	else if (!strcmp(tp->name, "sched_wakeup_new"))
		cprof_tr_new_tp = tp;
}

/* The probes, in the order registered: the wake-ups' first. */
static void cprof_tr_unregister(int nr)
{
	if (nr > 2)
		WARN_ON_ONCE(tracepoint_probe_unregister(cprof_tr_switch_tp,
							 cprof_tr_switch,
							 NULL));
	if (nr > 1)
		WARN_ON_ONCE(tracepoint_probe_unregister(cprof_tr_new_tp,
							 cprof_tr_wakeup_new,
							 NULL));
	if (nr > 0)
		WARN_ON_ONCE(tracepoint_probe_unregister(cprof_tr_wake_tp,
							 cprof_tr_waking,
							 NULL));
	tracepoint_synchronize_unregister();
}

/**
 * cprof_trace_start() - record the switches and wake-ups of a profile of
 *	kind trace
 * @set: the profile's settings, read until cprof_trace_stop()
 *
 * Context: process, may sleep; the rings are set up, no hook runs.
 * Return: 0, -ENOENT if the kernel lacks any of the tracepoints, or
 * tracepoint_probe_register()'s error.
 */
int cprof_trace_start(const struct cprof_settings *set)
{
	int cpu, err;

	check_trace_callback_type_sched_switch(cprof_tr_switch);
	check_trace_callback_type_sched_waking(cprof_tr_waking);
	check_trace_callback_type_sched_wakeup_new(cprof_tr_wakeup_new);
	mutex_lock(&cprof_tr_lock);
	if (!cprof_tr_switch_tp || !cprof_tr_wake_tp || !cprof_tr_new_tp)
		for_each_kernel_tracepoint(cprof_tr_find, NULL);
	err = cprof_tr_switch_tp && cprof_tr_wake_tp && cprof_tr_new_tp ?
	      0 : -ENOENT;
	if (!err && WARN_ON_ONCE(cprof_tr_registered))
		err = -EBUSY;
	if (err)
		goto unlock;
	for_each_possible_cpu(cpu)
		cprof_hookcost_reset(&per_cpu_ptr(&cprof_tr_cpus, cpu)->cost);
	cprof_tr_budget = set->budget;
	WRITE_ONCE(cprof_tr_set, set);
	err = tracepoint_probe_register(cprof_tr_wake_tp, cprof_tr_waking,
					NULL);
	if (err)
		goto clear;
	err = tracepoint_probe_register(cprof_tr_new_tp, cprof_tr_wakeup_new,
					NULL);
	if (err) {
		cprof_tr_unregister(1);
		goto clear;
	}
	err = tracepoint_probe_register(cprof_tr_switch_tp, cprof_tr_switch,
					NULL);
	if (!err) {
		cprof_tr_registered = true;
		goto unlock;
	}
	cprof_tr_unregister(2);
clear:
	WRITE_ONCE(cprof_tr_set, NULL);
unlock:
	mutex_unlock(&cprof_tr_lock);
	return err;
}

/**
 * cprof_trace_stop() - no more switches and wake-ups recorded
 *
 * After this returns the probes are gone and none runs.  Idempotent.
 *
 * Context: process, may sleep: waits for running probes.
 */
void cprof_trace_stop(void)
{
	mutex_lock(&cprof_tr_lock);
	if (cprof_tr_registered) {
		cprof_tr_unregister(3);
		cprof_tr_registered = false;
		WRITE_ONCE(cprof_tr_set, NULL);
	}
	mutex_unlock(&cprof_tr_lock);
}

/**
 * cprof_trace_stats() - one CPU's timeline counters since load
 * @cpu: the CPU
 * @st: its trace_* fields are set
 *
 * Context: any; the counters may be a little stale.
 */
void cprof_trace_stats(int cpu, struct cprof_cpu_stats *st)
{
	const struct cprof_tr_cpu *tc = per_cpu_ptr(&cprof_tr_cpus, cpu);

	st->trace_switches = READ_ONCE(tc->switches);
	st->trace_wakes = READ_ONCE(tc->wakes);
	st->trace_stacks = READ_ONCE(tc->stacks);
	st->trace_skipped = READ_ONCE(tc->skipped);
	st->trace_nostack_ring = READ_ONCE(tc->nostack_ring);
	cprof_hookcost_stats(&tc->cost, &st->trace_ns_total,
			     &st->trace_ns_max);
}
