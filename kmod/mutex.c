// SPDX-License-Identifier: GPL-2.0
/*
 * Futex waits ended (profile kind mutex): who held the lock others waited
 * for, as Go's mutex profile charges a wait to the unlocker.  Two probes,
 * registered only while such a profile runs: on sched_switch, a thread
 * going to sleep in a futex system call gets its tid, its voluntary switch
 * count and the time noted in a slot of a table (no stack); on
 * sched_waking, in the waker's context (try_to_wake_up(), the wakee's
 * pi_lock held, interrupts disabled), a noted wakee's slot is freed and,
 * if the waker is a thread in a futex system call of its own, the wake-up
 * is a CPROF_REC_SAMPLE of the waker with the wakee and its wait after
 * the frames (struct cprof_waketrail).  No wake is sampled away: one not
 * recorded (no slot for its sleep, the ring full, the CPU past ctl's
 * budget) is a lost sample.  Nothing here sleeps, allocates or takes a
 * lock.  docs/design.md, "Lock contention: kind mutex".
 */
#include <linux/atomic.h>
#include <linux/bits.h>
#include <linux/compat.h>
#include <linux/hash.h>
#include <linux/irqflags.h>
#include <linux/mutex.h>
#include <linux/percpu.h>
#include <linux/sched.h>
#include <linux/sched/task_stack.h>
#include <linux/smp.h>
#include <linux/string.h>
#include <linux/timekeeping.h>
#include <linux/tracepoint.h>
#include <linux/vmalloc.h>
#include <asm/syscall.h>
#include <trace/events/sched.h>

#include "hookcost.h"
#include "mutex.h"
#include "sample.h"

#define CPROF_MX_SLOTS_SHIFT	16
#define CPROF_MX_SLOTS		BIT(CPROF_MX_SLOTS_SHIFT)
#define CPROF_MX_PROBES		16
#define CPROF_MX_HINTS_SHIFT	10

/* A thread asleep in a futex system call, until it is woken. */
struct cprof_mx_slot {
	u32 tid;		/* 0: free */
	u32 nvcsw;		/* its voluntary switches, this one counted */
	u64 start_ns;		/* when it left the CPU */
};

/* One CPU's recording of wake-ups; its own CPU only writes it. */
struct cprof_mx_cpu {
	struct cprof_hookcost cost;	/* against the budget; stats */
	u64 events;		/* stats: samples written */
	u64 noted;		/* stats: futex sleeps noted */
	u64 full;		/* stats: sleeps without a slot */
	u64 skipped;		/* stats: wake-ups over budget */
};

static DEFINE_PER_CPU(struct cprof_mx_cpu, cprof_mx_cpus);
/* CPROF_MX_SLOTS, allocated at the first start, freed at unload */
static struct cprof_mx_slot *cprof_mx_slots __read_mostly;
/* slots taken by the tids of each hash: a wake-up looks only if some */
static atomic_t cprof_mx_hints[BIT(CPROF_MX_HINTS_SHIFT)];
static const struct cprof_settings *cprof_mx_set __read_mostly;
static u32 cprof_mx_budget __read_mostly;	/* the profile's, % of a CPU */
/* sched_switch and sched_waking; never go away */
static struct tracepoint *cprof_mx_switch_tp __read_mostly;
static struct tracepoint *cprof_mx_wake_tp __read_mostly;
static bool cprof_mx_registered;	/* under cprof_mx_lock */
static DEFINE_MUTEX(cprof_mx_lock);

static atomic_t *cprof_mx_hint(u32 tid)
{
	return &cprof_mx_hints[hash_32(tid, CPROF_MX_HINTS_SHIFT)];
}

static struct cprof_mx_slot *cprof_mx_slot(u32 tid, int i)
{
	return &cprof_mx_slots[(hash_32(tid, CPROF_MX_SLOTS_SHIFT) + i) &
			       (CPROF_MX_SLOTS - 1)];
}

/* Is current, a user thread, in a 64-bit futex system call? */
static bool cprof_mx_in_futex(void)
{
	long nr;

	if (current->flags & (PF_KTHREAD | PF_USER_WORKER) ||
	    in_compat_syscall())
		return false;
	nr = syscall_get_nr(current, task_pt_regs(current));
	return nr == __NR_futex || nr == __NR_futex_waitv ||
	       (nr >= CPROF_NR_FUTEX2_FIRST && nr <= CPROF_NR_FUTEX2_LAST &&
		CPROF_NR_FUTEX2_FIRST >= 0);
}

/*
 * Note that @prev (current) sleeps from @now: its slot (one left by a
 * sleep whose wake-up was not seen is reused) or a free one.  False if
 * none is free.
 */
static bool cprof_mx_note(struct task_struct *prev, u64 now)
{
	struct cprof_mx_slot *slot = NULL, *s;
	u32 tid = prev->pid;
	int i;

	if (atomic_read(cprof_mx_hint(tid))) {
		for (i = 0; i < CPROF_MX_PROBES && !slot; i++) {
			s = cprof_mx_slot(tid, i);
			if (READ_ONCE(s->tid) == tid)
				slot = s;
		}
	}
	for (i = 0; i < CPROF_MX_PROBES && !slot; i++) {
		s = cprof_mx_slot(tid, i);
		if (!READ_ONCE(s->tid) && !cmpxchg(&s->tid, 0, tid)) {
			atomic_inc(cprof_mx_hint(tid));
			slot = s;
		}
	}
	if (!slot)
		return false;
	WRITE_ONCE(slot->start_ns, now);
	/* the time before the count that validates it */
	smp_store_release(&slot->nvcsw, (u32)prev->nvcsw);
	return true;
}

/*
 * @next, switched in, still has a note: its wake-up fired before the note
 * was written (try_to_wake_up() does not wait for the sleeper's switch
 * to end before sched_waking), so it was not recorded.  Free the note,
 * which would pass for a later sleep's (the voluntary switch count moves
 * only at the next one), and count the wake-up lost.  No other CPU
 * touches a running task's note: it is not asleep, so not woken.
 */
static void cprof_mx_drop_stale(struct task_struct *next)
{
	struct cprof_mx_slot *s;
	u32 tid = next->pid;
	int i;

	for (i = 0; i < CPROF_MX_PROBES; i++) {
		s = cprof_mx_slot(tid, i);
		if (READ_ONCE(s->tid) != tid)
			continue;
		atomic_dec(cprof_mx_hint(tid));
		/* the slot free once the hint no longer counts it */
		smp_store_release(&s->tid, 0);
		cprof_sample_skip(ktime_get_ns(), true);
	}
}

/*
 * The sched_switch probe: interrupts disabled, the runqueue locked,
 * current is @prev.  A sleep the waker already called off (the state set
 * back to running) is no wait.
 */
static void cprof_mx_switch(void *data, bool preempt,
			    struct task_struct *prev,
			    struct task_struct *next, unsigned int prev_state)
{
	const struct cprof_settings *set = READ_ONCE(cprof_mx_set);
	struct cprof_mx_cpu *mc;
	u64 now;

	if (!set)
		return;
	if (!is_idle_task(next) && atomic_read(cprof_mx_hint(next->pid)))
		cprof_mx_drop_stale(next);
	if (preempt || !(prev_state & TASK_INTERRUPTIBLE) ||
	    !(READ_ONCE(prev->__state) & TASK_INTERRUPTIBLE))
		return;
	if (set->pid && prev->tgid != set->pid)
		return;
	if (!cprof_mx_in_futex())
		return;
	mc = this_cpu_ptr(&cprof_mx_cpus);
	now = ktime_get_ns();
	if (cprof_mx_note(prev, now)) {
		mc->noted++;
		return;
	}
	/* its wake-up, if it comes in the profile, cannot be recorded */
	mc->full++;
	cprof_sample_skip(now, true);
}

/*
 * @p's note of its current sleep (the voluntary switch count unchanged
 * since), freed: true and the sleep's start in *start if there is one.
 * A stale note of @p is left to @p (cprof_mx_drop_stale(), or its next
 * sleep reuses it): @p may be writing it now, on its way to sleep.
 */
static bool cprof_mx_take(struct task_struct *p, u64 *start)
{
	struct cprof_mx_slot *s;
	u32 tid = p->pid;
	int i;

	for (i = 0; i < CPROF_MX_PROBES; i++) {
		s = cprof_mx_slot(tid, i);
		if (READ_ONCE(s->tid) != tid)
			continue;
		/* pairs with cprof_mx_note()'s release: start_ns after it */
		if (smp_load_acquire(&s->nvcsw) != (u32)READ_ONCE(p->nvcsw))
			continue;
		*start = READ_ONCE(s->start_ns);
		atomic_dec(cprof_mx_hint(tid));
		/* start_ns read before the slot can be taken again */
		smp_store_release(&s->tid, 0);
		return true;
	}
	return false;
}

/* The waker, current, recorded with @p's wait since @start. */
static void cprof_mx_record(const struct cprof_settings *set,
			    struct cprof_mx_cpu *mc, struct task_struct *p,
			    u64 start)
{
	struct cprof_waketrail *wt;
	struct cprof_sample *smp;
	u32 depth = min(set->depth, set->offcpu_depth);
	u64 now = ktime_get_ns();
	u32 nr;
	u16 flags;
	bool kick;

	if (cprof_hookcost_over(&mc->cost, now, cprof_mx_budget)) {
		if (cprof_sample_skip(now, true))
			mc->skipped++;
		return;
	}
	smp = cprof_sample_reserve(sizeof(*smp) + (2 * depth + 1) * sizeof(u64) +
				   sizeof(*wt), now, true);
	if (!smp)
		return;
	flags = cprof_sample_current(smp, set, depth, set->accesses,
				     (unsigned long)cprof_mx_wake_tp->iterator,
				     now, &kick);
	nr = smp->nr_kernel + smp->nr_user + 1;
	wt = (struct cprof_waketrail *)&smp->ips[nr];
	memset(wt, 0, sizeof(*wt));
	wt->type = CPROF_TRAIL_WAKE;
	wt->pid = p->tgid;
	wt->tid = p->pid;
	wt->delay_ns = now > start ? now - start : 0;
	memcpy(wt->comm, p->comm, sizeof(wt->comm));
	wt->comm[sizeof(wt->comm) - 1] = '\0';
	cprof_sample_commit(CPROF_REC_SAMPLE, flags,
			    sizeof(*smp) + nr * sizeof(u64) + sizeof(*wt), now,
			    kick);
	mc->events++;
	cprof_hookcost_add(&mc->cost, ktime_get_ns() - now);
}

/*
 * The sched_waking probe: current wakes @p, @p's pi_lock held (interrupts
 * disabled), except when @p is current (nothing to do: it never slept).
 * A wake-up from an interrupt (a timeout), a signal, a thread's exit is
 * not an unlock: the note goes, nothing is recorded.
 */
static void cprof_mx_waking(void *data, struct task_struct *p)
{
	const struct cprof_settings *set = READ_ONCE(cprof_mx_set);
	unsigned long irqflags;
	u64 start;

	if (!set || p == current || !atomic_read(cprof_mx_hint(p->pid)))
		return;
	local_irq_save(irqflags);
	if (cprof_mx_take(p, &start) && in_task() &&
	    !(current->flags & PF_EXITING) && cprof_mx_in_futex() &&
	    (!set->pid || current->tgid == set->pid) &&
	    (set->all_cpus || cpumask_test_cpu(smp_processor_id(), set->cpus)))
		cprof_mx_record(set, this_cpu_ptr(&cprof_mx_cpus), p, start);
	local_irq_restore(irqflags);
}

static void cprof_mx_find(struct tracepoint *tp, void *priv)
{
	if (!strcmp(tp->name, "sched_switch"))
		cprof_mx_switch_tp = tp;
	else if (!strcmp(tp->name, "sched_waking"))
		cprof_mx_wake_tp = tp;
}

/**
 * cprof_mutex_start() - record the futex wake-ups of a profile of kind
 *	mutex
 * @set: the profile's settings, read until cprof_mutex_stop()
 *
 * The wake-up's probe goes first, so that no sleep is noted whose wake-up
 * it would miss.
 *
 * Context: process, may sleep; the rings are set up, no hook runs.
 * Return: 0, -ENOENT if the kernel lacks either tracepoint, -ENOMEM, or
 * tracepoint_probe_register()'s error.
 */
int cprof_mutex_start(const struct cprof_settings *set)
{
	int cpu, err, i;

	check_trace_callback_type_sched_switch(cprof_mx_switch);
	check_trace_callback_type_sched_waking(cprof_mx_waking);
	mutex_lock(&cprof_mx_lock);
	if (!cprof_mx_switch_tp || !cprof_mx_wake_tp)
		for_each_kernel_tracepoint(cprof_mx_find, NULL);
	err = cprof_mx_switch_tp && cprof_mx_wake_tp ? 0 : -ENOENT;
	if (!err && WARN_ON_ONCE(cprof_mx_registered))
		err = -EBUSY;
	if (!err && !cprof_mx_slots) {
		cprof_mx_slots = vmalloc(CPROF_MX_SLOTS *
					 sizeof(*cprof_mx_slots));
		err = cprof_mx_slots ? 0 : -ENOMEM;
	}
	if (err)
		goto unlock;
	memset(cprof_mx_slots, 0, CPROF_MX_SLOTS * sizeof(*cprof_mx_slots));
	for (i = 0; i < ARRAY_SIZE(cprof_mx_hints); i++)
		atomic_set(&cprof_mx_hints[i], 0);
	for_each_possible_cpu(cpu)
		cprof_hookcost_reset(&per_cpu_ptr(&cprof_mx_cpus, cpu)->cost);
	cprof_mx_budget = set->budget;
	WRITE_ONCE(cprof_mx_set, set);
	err = tracepoint_probe_register(cprof_mx_wake_tp, cprof_mx_waking,
					NULL);
	if (err)
		goto clear;
	err = tracepoint_probe_register(cprof_mx_switch_tp, cprof_mx_switch,
					NULL);
	if (!err) {
		cprof_mx_registered = true;
		goto unlock;
	}
	WARN_ON_ONCE(tracepoint_probe_unregister(cprof_mx_wake_tp,
						 cprof_mx_waking, NULL));
	tracepoint_synchronize_unregister();
clear:
	WRITE_ONCE(cprof_mx_set, NULL);
unlock:
	mutex_unlock(&cprof_mx_lock);
	return err;
}

/**
 * cprof_mutex_stop() - no more wake-ups recorded
 *
 * After this returns the probes are gone and none runs.  Idempotent.
 *
 * Context: process, may sleep: waits for running probes.
 */
void cprof_mutex_stop(void)
{
	mutex_lock(&cprof_mx_lock);
	if (cprof_mx_registered) {
		WARN_ON_ONCE(tracepoint_probe_unregister(cprof_mx_switch_tp,
							 cprof_mx_switch,
							 NULL));
		WARN_ON_ONCE(tracepoint_probe_unregister(cprof_mx_wake_tp,
							 cprof_mx_waking,
							 NULL));
		tracepoint_synchronize_unregister();
		cprof_mx_registered = false;
		WRITE_ONCE(cprof_mx_set, NULL);
	}
	mutex_unlock(&cprof_mx_lock);
}

/**
 * cprof_mutex_exit() - free what the first profile allocated
 *
 * Context: process; module unload, after cprof_mutex_stop().
 */
void cprof_mutex_exit(void)
{
	vfree(cprof_mx_slots);
	cprof_mx_slots = NULL;
}

/**
 * cprof_mutex_stats() - one CPU's futex wake-up counters since load
 * @cpu: the CPU
 * @st: its mutex_* fields are set
 *
 * Context: any; the counters may be a little stale.
 */
void cprof_mutex_stats(int cpu, struct cprof_cpu_stats *st)
{
	const struct cprof_mx_cpu *mc = per_cpu_ptr(&cprof_mx_cpus, cpu);

	st->mutex_events = READ_ONCE(mc->events);
	st->mutex_noted = READ_ONCE(mc->noted);
	st->mutex_full = READ_ONCE(mc->full);
	st->mutex_skipped = READ_ONCE(mc->skipped);
	cprof_hookcost_stats(&mc->cost, &st->mutex_ns_total,
			     &st->mutex_ns_max);
}
