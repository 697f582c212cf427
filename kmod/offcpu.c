// SPDX-License-Identifier: GPL-2.0
/*
 * Off-CPU events (profile kinds offcpu and wall): where tasks leave the CPU
 * and for how long.  A probe on the scheduler's sched_switch tracepoint,
 * registered only while such a profile runs, runs with interrupts disabled
 * and the runqueue locked, in the context of the task leaving.  It writes
 * the leaving task's stacks as a CPROF_REC_OFFCPU and notes its tid and the
 * time in a slot of a small table; the arriving task, if a slot holds its
 * tid, gets a CPROF_REC_ONCPU and frees the slot.  Each CPU records one
 * switch in "every" (drawn at random, adapted to ctl's budget; each record
 * carries it as its weight), with shorter walks than a tick's.  Nothing
 * here sleeps, allocates or takes a lock: the records go into the CPU's
 * ring (cprof_sample_reserve()).  Why: docs/design.md, "Off the CPU".
 */
#include <linux/atomic.h>
#include <linux/bits.h>
#include <linux/hash.h>
#include <linux/kprobes.h>
#include <linux/mutex.h>
#include <linux/percpu.h>
#include <linux/random.h>
#include <linux/sched.h>
#include <linux/smp.h>
#include <linux/string.h>
#include <linux/timekeeping.h>
#include <linux/tracepoint.h>
#include <linux/vmalloc.h>
#include <trace/events/sched.h>

#include "maps.h"
#include "offcpu.h"
#include "sample.h"
#include "unwind.h"

#define CPROF_OFF_SLOTS_SHIFT	16
#define CPROF_OFF_SLOTS		BIT(CPROF_OFF_SLOTS_SHIFT)
#define CPROF_OFF_PROBES	16
#define CPROF_OFF_WINDOW_NS	(100 * NSEC_PER_MSEC)
#define CPROF_OFF_EVERY_MAX	BIT(16)

/* A task recorded leaving the CPU, until it comes back. */
struct cprof_off_slot {
	u32 tid;		/* 0: free */
	u32 reserved;
	u64 out_ns;		/* its CPROF_REC_OFFCPU's time */
};

/* One CPU's sampling of its switches; its own CPU only writes it. */
struct cprof_off_cpu {
	u64 window_start;
	u64 window_ns;		/* spent recording in this window */
	u32 every;		/* record one switch in every */
	u32 countdown;		/* switches to the next recorded one */
	u32 drawn_every;	/* the every countdown was drawn with */
	u32 rnd;		/* xorshift32 state, never 0 */
	u64 events;		/* stats: CPROF_REC_OFFCPU written */
	u64 full;		/* stats: no slot */
	u64 ns_total;		/* stats: time spent recording */
	u64 ns_max;		/* stats: the longest record */
	u64 accesses_max;	/* stats: the most user accesses of one */
	u64 budget_truncated;	/* stats: walks cut for want of accesses */
};

static DEFINE_PER_CPU(struct cprof_off_cpu, cprof_off_cpus);
/* CPROF_OFF_SLOTS, allocated at the first start, freed at unload */
static struct cprof_off_slot *cprof_off_slots __read_mostly;
/*
 * Slots taken by the tids of each hash: a task that comes back looks in
 * the table only if its hash has some, one page always at hand instead
 * of a cache line of the megabyte table at every switch.
 */
#define CPROF_OFF_HINTS_SHIFT	10
static atomic_t cprof_off_hints[BIT(CPROF_OFF_HINTS_SHIFT)];
static const struct cprof_settings *cprof_off_set __read_mostly;
static u32 cprof_off_budget __read_mostly;	/* the profile's, % of a CPU */
/* sched_switch; never goes away */
static struct tracepoint *cprof_off_tp __read_mostly;
static bool cprof_off_registered;	/* under cprof_off_lock */
static DEFINE_MUTEX(cprof_off_lock);

static u32 cprof_off_rand(struct cprof_off_cpu *oc)
{
	u32 x = oc->rnd;

	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	oc->rnd = x;
	return x;
}

/* Switches to the next recorded one: 1 ... 2 * every - 1, every on average. */
static void cprof_off_rearm(struct cprof_off_cpu *oc)
{
	oc->drawn_every = oc->every;
	oc->countdown = oc->every == 1 ? 1 :
			1 + cprof_off_rand(oc) % (2 * oc->every - 1);
}

/* Keep the time spent recording within budget: see the top of the file. */
static void cprof_off_account(struct cprof_off_cpu *oc, u64 now, u64 dt)
{
	u64 span = now - oc->window_start, allowed;

	oc->ns_total += dt;
	if (dt > oc->ns_max)
		oc->ns_max = dt;
	oc->window_ns += dt;
	if (span < CPROF_OFF_WINDOW_NS)
		return;
	/* a fifth of the budget of the time the window really took */
	allowed = div_u64(span, 100 * 5) * cprof_off_budget;
	if (oc->window_ns > allowed && oc->every < CPROF_OFF_EVERY_MAX)
		oc->every *= 2;
	else if (oc->window_ns < allowed / 4 && oc->every > 1)
		oc->every /= 2;
	oc->window_start = now;
	oc->window_ns = 0;
}

static atomic_t *cprof_off_hint(u32 tid)
{
	return &cprof_off_hints[hash_32(tid, CPROF_OFF_HINTS_SHIFT)];
}

static struct cprof_off_slot *cprof_off_slot(u32 tid, int i)
{
	return &cprof_off_slots[(hash_32(tid, CPROF_OFF_SLOTS_SHIFT) + i) &
				(CPROF_OFF_SLOTS - 1)];
}

/* A free slot for @tid, taken; NULL if none. */
static struct cprof_off_slot *cprof_off_claim(u32 tid)
{
	struct cprof_off_slot *slot;
	int i;

	for (i = 0; i < CPROF_OFF_PROBES; i++) {
		slot = cprof_off_slot(tid, i);
		if (!READ_ONCE(slot->tid) && !cmpxchg(&slot->tid, 0, tid)) {
			atomic_inc(cprof_off_hint(tid));
			return slot;
		}
	}
	return NULL;
}

static void cprof_off_free(struct cprof_off_slot *slot, u32 tid)
{
	atomic_dec(cprof_off_hint(tid));
	/* out_ns read before the slot can be taken again */
	smp_store_release(&slot->tid, 0);
}

/* A task arrives: if it was recorded leaving, the record of its return. */
static void cprof_off_in(struct task_struct *next)
{
	struct cprof_off_slot *slot;
	struct cprof_oncpu *r;
	u32 tid = next->pid;
	u64 out_ns, now;
	int i;

	if (!atomic_read(cprof_off_hint(tid)))
		return;
	for (i = 0; i < CPROF_OFF_PROBES; i++) {
		slot = cprof_off_slot(tid, i);
		if (READ_ONCE(slot->tid) == tid)
			break;
	}
	if (i == CPROF_OFF_PROBES)
		return;
	out_ns = READ_ONCE(slot->out_ns);
	cprof_off_free(slot, tid);
	now = ktime_get_ns();
	r = cprof_sample_reserve(sizeof(*r), now, false);
	if (!r)
		return;
	r->time_ns = now;
	r->out_ns = out_ns;
	r->tid = tid;
	r->cpu = smp_processor_id();
	cprof_sample_commit(CPROF_REC_ONCPU, 0, sizeof(*r), now, false);
}

/**
 * cprof_off_state() - why @prev leaves the CPU
 * @preempt: sched_switch's
 * @prev: the task leaving
 * @state: the state sched_switch passes
 *
 * A task whose sleep a pending signal called off is runnable again (its
 * state set back under the runqueue lock, which is held) though the
 * tracepoint passes the state it had; an idle kernel thread's wait
 * (TASK_IDLE) is no uninterruptible sleep.
 *
 * Context: a sched_switch probe, the runqueue locked.
 * Return: preempted, or the sleep @prev goes into.
 */
enum cprof_off_state cprof_off_state(bool preempt, struct task_struct *prev,
				     unsigned int state)
{
	if (preempt || READ_ONCE(prev->__state) == TASK_RUNNING)
		return CPROF_OFF_PREEMPTED;
	return cprof_offcpu_state(state);
}

/**
 * cprof_offcpu_state() - the wait a task's state describes
 * @state: the task's __state, or the state sched_switch passes
 *
 * Context: any.
 * Return: preempted for TASK_RUNNING (runnable, waiting for a CPU).
 */
enum cprof_off_state cprof_offcpu_state(unsigned int state)
{
	if (!state)
		return CPROF_OFF_PREEMPTED;
	if (state & (TASK_INTERRUPTIBLE | TASK_NOLOAD))
		return CPROF_OFF_SLEEPING;
	if (state & TASK_UNINTERRUPTIBLE)
		return CPROF_OFF_DISK;
	if (state & (__TASK_STOPPED | __TASK_TRACED))
		return CPROF_OFF_STOPPED;
	return CPROF_OFF_OTHER;
}

/*
 * Is the task leaving this CPU, current, one the profile takes?  In user
 * mode not one without user registers: its record would have no stack.
 */
static bool cprof_off_wanted(const struct cprof_settings *set,
			     struct task_struct *prev, unsigned int state)
{
	if (is_idle_task(prev) || state & TASK_DEAD)
		return false;
	if (set->pid && prev->tgid != set->pid)
		return false;
	if (!set->all_cpus && !cpumask_test_cpu(smp_processor_id(), set->cpus))
		return false;
	return set->mode != CPROF_MODE_USER || cprof_saved_user_regs(prev);
}

/*
 * The task leaving, current, recorded: its stacks and a slot.  @caller:
 * where the probe was called from, the kernel stack's start.
 */
static void cprof_off_out(const struct cprof_settings *set,
			  struct cprof_off_cpu *oc, u32 every, bool preempt,
			  struct task_struct *prev, unsigned int state,
			  const struct cprof_caller *caller)
{
	struct cprof_off_slot *slot;
	struct cprof_offcpu *o;
	struct pt_regs *uregs;
	struct cprof_uaccess acc;
	int nk = 0, nu = 0, mapped = 0;
	u32 depth = min(set->depth, set->offcpu_depth);
	u64 now = ktime_get_ns();
	u16 flags = 0;
	u32 size;
	bool kick;

	o = cprof_sample_reserve(sizeof(*o) + (2 * depth + 1) * sizeof(u64),
				 now, false);
	if (!o)
		return;
	/* no slot: the reservation is left for the next one to reuse */
	slot = cprof_off_claim(prev->pid);
	if (!slot) {
		oc->full++;
		cprof_sample_lose(now, false);
		return;
	}
	WRITE_ONCE(slot->out_ns, now);
	if (set->mode != CPROF_MODE_USER)
		nk = cprof_unwind_kernel_caller(caller, o->ips, depth, &flags,
						(unsigned long)cprof_off_tp->iterator);
	uregs = cprof_saved_user_regs(prev);
	if (!uregs && prev->flags & PF_KTHREAD)
		flags |= CPROF_SAMPLE_KTHREAD;
	cprof_uaccess_start(&acc, set->accesses);
	if (uregs && set->mode != CPROF_MODE_KERNEL) {
		struct cprof_uwalk_req req = {
			.tsk = prev,
			.uregs = uregs,
			.ips = o->ips + nk,
			.acc = &acc,
			.max = depth,
			.entry = true,
		};

		nu = cprof_unwind_user(&req);
		flags |= req.flags;
		mapped = req.mapped;
	}
	if (acc.spent)
		oc->budget_truncated++;
	if (acc.used > oc->accesses_max)
		oc->accesses_max = acc.used;
	o->time_ns = now;
	o->pid = prev->tgid;
	o->tid = prev->pid;
	o->cpu = smp_processor_id();
	o->nr_kernel = nk;
	o->nr_user = nu;
	memcpy(o->comm, prev->comm, sizeof(o->comm));
	o->comm[sizeof(o->comm) - 1] = '\0';
	o->every = every;
	o->state = cprof_off_state(preempt, prev, state);
	o->reserved = 0;
	o->ips[nk + nu] = __cprof_cgroup_id(prev);
	flags |= CPROF_SAMPLE_CGROUP;
	size = sizeof(*o) + (nk + nu + 1) * sizeof(u64);
	/* a mapping request, as a tick's: the reader lists the mappings */
	kick = mapped < nu && cprof_maps_note(o->ips + nk, nu, mapped, now);
	cprof_sample_commit(CPROF_REC_OFFCPU, flags, size, now, kick);
	oc->events++;
	cprof_off_account(oc, now, ktime_get_ns() - now);
}

/*
 * The sched_switch probe: interrupts disabled, current is @prev.  Neither
 * traced nor probed: the kernel stack starts from its return address
 * (cprof_caller_here()).  Its RCU read side, those disabled interrupts,
 * starts for it here, after rcu_note_context_switch() reported this CPU
 * quiescent: it uses nothing looked up before, and the lookups it keeps
 * for the next event are checked against their epochs again.
 */
static notrace void cprof_off_switch(void *data, bool preempt,
				     struct task_struct *prev,
				     struct task_struct *next,
				     unsigned int prev_state)
{
	const struct cprof_settings *set = READ_ONCE(cprof_off_set);
	struct cprof_off_cpu *oc = this_cpu_ptr(&cprof_off_cpus);
	struct cprof_caller caller;
	u32 every;

	if (!set)
		return;
	if (!is_idle_task(next))
		cprof_off_in(next);
	if (!cprof_off_wanted(set, prev, prev_state))
		return;
	if (oc->countdown > 1) {
		oc->countdown--;
		return;
	}
	every = oc->drawn_every;
	cprof_off_rearm(oc);
	cprof_caller_here(&caller);
	cprof_off_out(set, oc, every, preempt, prev, prev_state, &caller);
}

NOKPROBE_SYMBOL(cprof_off_switch);

static void cprof_off_find(struct tracepoint *tp, void *priv)
{
	if (!strcmp(tp->name, "sched_switch"))
		*(struct tracepoint **)priv = tp;
}

/**
 * cprof_offcpu_start() - record the switches of a profile of kind offcpu
 *	or wall
 * @set: the profile's settings, read until cprof_offcpu_stop()
 *
 * Context: process, may sleep; the rings are set up, no hook runs.
 * Return: 0, -ENOENT if the kernel has no sched_switch tracepoint, -ENOMEM,
 * or tracepoint_probe_register()'s error.
 */
int cprof_offcpu_start(const struct cprof_settings *set)
{
	int cpu, err, i;

	check_trace_callback_type_sched_switch(cprof_off_switch);
	mutex_lock(&cprof_off_lock);
	if (!cprof_off_tp)
		for_each_kernel_tracepoint(cprof_off_find, &cprof_off_tp);
	err = cprof_off_tp ? 0 : -ENOENT;
	if (!err && WARN_ON_ONCE(cprof_off_registered))
		err = -EBUSY;
	if (!err && !cprof_off_slots) {
		cprof_off_slots = vmalloc(CPROF_OFF_SLOTS *
					  sizeof(*cprof_off_slots));
		err = cprof_off_slots ? 0 : -ENOMEM;
	}
	if (err)
		goto unlock;
	memset(cprof_off_slots, 0, CPROF_OFF_SLOTS * sizeof(*cprof_off_slots));
	for (i = 0; i < ARRAY_SIZE(cprof_off_hints); i++)
		atomic_set(&cprof_off_hints[i], 0);
	for_each_possible_cpu(cpu) {
		struct cprof_off_cpu *oc = per_cpu_ptr(&cprof_off_cpus, cpu);

		oc->window_start = 0;
		oc->window_ns = 0;
		oc->every = 1;
		oc->drawn_every = 1;
		oc->countdown = 1;
		oc->rnd = get_random_u32() | 1;
	}
	cprof_off_budget = set->budget;
	WRITE_ONCE(cprof_off_set, set);
	err = tracepoint_probe_register(cprof_off_tp, cprof_off_switch, NULL);
	if (err)
		WRITE_ONCE(cprof_off_set, NULL);
	else
		cprof_off_registered = true;
unlock:
	mutex_unlock(&cprof_off_lock);
	return err;
}

/**
 * cprof_offcpu_stop() - no more switches recorded
 *
 * After this returns the probe is gone and none runs.  Idempotent.
 *
 * Context: process, may sleep: waits for running probes.
 */
void cprof_offcpu_stop(void)
{
	mutex_lock(&cprof_off_lock);
	if (cprof_off_registered) {
		WARN_ON_ONCE(tracepoint_probe_unregister(cprof_off_tp,
							 cprof_off_switch,
							 NULL));
		tracepoint_synchronize_unregister();
		cprof_off_registered = false;
		WRITE_ONCE(cprof_off_set, NULL);
	}
	mutex_unlock(&cprof_off_lock);
}

/**
 * cprof_offcpu_exit() - free what the first profile allocated
 *
 * Context: process; module unload, after cprof_offcpu_stop().
 */
void cprof_offcpu_exit(void)
{
	vfree(cprof_off_slots);
	cprof_off_slots = NULL;
}

/**
 * cprof_offcpu_stats() - one CPU's off-CPU counters since load
 * @cpu: the CPU
 * @st: its offcpu_* fields are set
 *
 * Context: any; the counters may be a little stale.
 */
void cprof_offcpu_stats(int cpu, struct cprof_cpu_stats *st)
{
	const struct cprof_off_cpu *oc = per_cpu_ptr(&cprof_off_cpus, cpu);

	st->offcpu_events = READ_ONCE(oc->events);
	st->offcpu_full = READ_ONCE(oc->full);
	st->offcpu_ns_total = READ_ONCE(oc->ns_total);
	st->offcpu_ns_max = READ_ONCE(oc->ns_max);
	st->offcpu_accesses_max = READ_ONCE(oc->accesses_max);
	st->offcpu_budget_truncated = READ_ONCE(oc->budget_truncated);
}
