// SPDX-License-Identifier: GPL-2.0
/*
 * The sampler: one pinned hard-IRQ hrtimer per selected online CPU, armed
 * only while a profile runs.  Each tick writes one CPROF_REC_SAMPLE into its
 * CPU's ring, straight from the unwinders, with no lock shared between CPUs,
 * no allocation and no sleeping.  The rings live only while a profile runs
 * (a CPU that comes online meanwhile gets its own), within a cap on their
 * total size.  Each CPU throttles itself to ctl's budget, lengthening its
 * period (CPROF_REC_THROTTLE), and each tick's user reads are bounded by
 * ctl's accesses (struct cprof_uaccess).  The scheduler's hooks (offcpu.c,
 * mutex.c, trace.c) and the task creation hook (newtask.c) write into the
 * same rings through cprof_sample_reserve(), cprof_sample_current() and
 * cprof_sample_commit(), on their own CPU with interrupts disabled: a ring
 * still has one producer at a time (those kinds have no ticks).  Why:
 * docs/design.md, "The tick", "Buffers and the stream", "Self-throttle",
 * "A hard bound per event".
 */
#include <linux/cpu.h>
#include <linux/cpuhotplug.h>
#include <linux/hrtimer.h>
#include <linux/log2.h>
#include <linux/math64.h>
#include <linux/percpu.h>
#include <linux/sched.h>
#include <linux/smp.h>
#include <linux/string.h>
#include <linux/timekeeping.h>
#include <linux/topology.h>
#include <asm/irq_regs.h>

#include "cprof.h"
#include "maps.h"
#include "pycode.h"
#include "pywalk.h"
#include "ring.h"
#include "sample.h"
#include "session.h"
#include "unwind.h"
#include "utable.h"

#define CPROF_RING_MIN		(64 * 1024)
/* A CPU wakes the reader at most this often (each kick is a self-IPI). */
#define CPROF_KICK_NS		(2 * NSEC_PER_MSEC)
#define CPROF_FLOOR_TICKS	64

struct cprof_cpu {
	struct hrtimer timer;
	struct cprof_ring ring;	/* no data outside a profile */
	struct cprof_cpu_stats stats;
	u64 period_ns;		/* effective period, >= the requested one */
	u64 avg_ns;		/* moving average of a tick's cost */
	u64 lost_pending;	/* samples lost, not yet reported */
	u64 lost_other_pending;	/* other records lost, not yet reported */
	u64 lost_since;		/* time of the first unreported loss */
	u64 lost_profile;	/* samples lost in this profile */
	u64 next_kick_ns;	/* no kick before this */
	u64 entry_floor;	/* least entry delay of the last window */
	u64 entry_min;		/* least entry delay in this window */
	u32 window_ticks;	/* ticks in this window */
	bool period_changed;	/* a THROTTLE record is owed */
	bool ready;		/* the ring is set up: the hook may write */
};

static DEFINE_PER_CPU(struct cprof_cpu, cprof_cpus);
static bool cprof_active;	/* ticks sample and re-arm */
static const struct cprof_settings *cprof_tick_set; /* the profile's */
static u64 cprof_base_period;	/* requested period of the running profile */
static u64 cprof_from = U64_MAX;	/* nothing is recorded before */
static u64 cprof_deadline;	/* ticks stop by themselves at this time */
static u32 cprof_ring_size;	/* buffer_kb, in bytes */
static u64 cprof_rings_max;	/* cap on all rings together, bytes */
static u32 cprof_profile_ring;	/* ring size in the running profile */
/* stack copy bytes in it: ctl's ustack, at most a quarter of a ring */
static u32 cprof_profile_ustack;
static u64 cprof_rings_bytes;	/* allocated now; under the hotplug lock */
static int cprof_hp_state = -1;

static struct cprof_cpu *cprof_cpu(int cpu)
{
	return per_cpu_ptr(&cprof_cpus, cpu);
}

static void cprof_lose(struct cprof_cpu *pc, u64 now)
{
	if (!pc->lost_pending && !pc->lost_other_pending)
		pc->lost_since = now;
	pc->lost_pending++;
	pc->lost_profile++;
	pc->stats.lost++;
}

static void cprof_lose_other(struct cprof_cpu *pc, u64 now)
{
	if (!pc->lost_pending && !pc->lost_other_pending)
		pc->lost_since = now;
	pc->lost_other_pending++;
}

/* Fill @l with the losses of @pc not yet reported, which now are. */
static void cprof_put_lost(struct cprof_cpu *pc, int cpu, struct cprof_lost *l)
{
	memset(l, 0, sizeof(*l));
	l->rec.type = CPROF_REC_LOST;
	l->rec.size = sizeof(*l);
	l->time_ns = pc->lost_since;
	l->cpu = cpu;
	l->samples = pc->lost_pending;
	l->other = pc->lost_other_pending;
	pc->lost_pending = 0;
	pc->lost_other_pending = 0;
}

/* Write the LOST and THROTTLE records this CPU owes; false if no room. */
static bool cprof_write_owed(struct cprof_cpu *pc, int cpu, u64 now)
{
	if (pc->lost_pending || pc->lost_other_pending) {
		struct cprof_lost *l = cprof_ring_reserve(&pc->ring, sizeof(*l));

		if (!l)
			return false;
		cprof_put_lost(pc, cpu, l);
		cprof_ring_commit(&pc->ring, CPROF_REC_LOST, 0, sizeof(*l));
	}
	if (pc->period_changed) {
		struct cprof_throttle *t;

		t = cprof_ring_reserve(&pc->ring, sizeof(*t));
		if (!t)
			return false;
		memset(t, 0, sizeof(*t));
		t->time_ns = now;
		t->cpu = cpu;
		t->period_ns = pc->period_ns;
		cprof_ring_commit(&pc->ring, CPROF_REC_THROTTLE, 0, sizeof(*t));
		pc->period_changed = false;
	}
	return true;
}

/* As cprof_write_owed(), inline for the most events, which owe none. */
static __always_inline bool cprof_flush_owed(struct cprof_cpu *pc, int cpu,
					     u64 now)
{
	if (likely(!pc->lost_pending && !pc->lost_other_pending &&
		   !pc->period_changed))
		return true;
	return cprof_write_owed(pc, cpu, now);
}

/**
 * cprof_cgroup_id() - the id of a task's cgroup v2
 * @tsk: the task, current
 *
 * As bpf_get_current_cgroup_id() gives it: 1, the root, without cgroups.
 * The css_set and the cgroup are freed only after an RCU grace period.
 *
 * Context: any (__cprof_cgroup_id() inside an RCU read side).
 * Return: the id.
 */
u64 cprof_cgroup_id(struct task_struct *tsk)
{
	u64 id;

	rcu_read_lock();
	id = __cprof_cgroup_id(tsk);
	rcu_read_unlock();
	return id;
}

/*
 * The copy of the user stack of sample @s (committed just before, still
 * ours to read until this reservation), which cprof_ring_fits_next() said
 * would fit.
 */
static void cprof_put_ustack(struct cprof_cpu *pc, const struct cprof_ucopy *c,
			     const struct cprof_sample *s, u32 size)
{
	struct cprof_ustack *u;
	u64 time_ns = s->time_ns;
	u32 tid = s->tid, cpu = s->cpu;
	u16 uflags;

	u = cprof_ring_reserve(&pc->ring, sizeof(*u) + size);
	if (WARN_ON_ONCE(!u))
		return;
	u->time_ns = time_ns;
	u->tid = tid;
	u->cpu = cpu;
	uflags = cprof_unwind_copy(c, u, size);
	cprof_ring_commit(&pc->ring, CPROF_REC_USTACK, uflags,
			  sizeof(*u) + CPROF_ALIGN(u->size));
	pc->stats.ustack_copies++;
	pc->stats.ustack_bytes += u->size;
}

/*
 * The thread's Python frames after a sample's frames, at @t, in @room
 * bytes (there is room for the depth if an interpreter's table was loaded
 * when the sample was reserved; one loaded since finds less, or none).
 * The bytes written.
 */
static u32 cprof_sample_python(struct cprof_cpu *pc, struct task_struct *tsk,
			       const struct cprof_pyhint *py,
			       struct cprof_pytrail *t, u32 room,
			       struct cprof_pyneed *need,
			       struct cprof_uaccess *acc)
{
	int max, n;

	if (room < sizeof(*t))
		return 0;
	max = min_t(u32, cprof_tick_set->depth,
		    (room - sizeof(*t)) / sizeof(t->frame[0]));
	n = cprof_pywalk(tsk, py, t, max, acc);
	pc->stats.python_walks++;
	pc->stats.python_frames += n;
	if (t->status != CPROF_PY_COMPLETE)
		pc->stats.python_incomplete++;
	cprof_pycode_pick(py, t, need);
	return struct_size(t, frame, n);
}

/*
 * The records naming the code objects of a sample's Python frames that
 * this CPU has not named in the stream yet, after the sample; a code whose
 * record finds no room (counted: python_codes_skipped), or too few of the
 * tick's accesses left (budget_skipped), is named by a later tick.
 */
static void cprof_put_pycodes(struct cprof_cpu *pc,
			      const struct cprof_pyneed *need, u64 now,
			      struct cprof_uaccess *acc)
{
	struct cprof_pycode *rec;
	u32 size;
	int i;

	for (i = 0; i < need->nr; i++) {
		/* the samples keep half the ring */
		if (cprof_ring_half_full(&pc->ring))
			break;
		if (!cprof_uaccess_take(acc, CPROF_PYCODE_ACCESSES)) {
			pc->stats.budget_skipped += need->nr - i;
			return;
		}
		rec = cprof_ring_reserve(&pc->ring, CPROF_PYCODE_RECORD_MAX);
		if (!rec)
			break;
		rec->time_ns = now;
		size = cprof_pycode_fill(need, i, rec);
		cprof_ring_commit(&pc->ring, CPROF_REC_PYCODE, 0, size);
		cprof_pycode_named(need, i);
		pc->stats.python_codes++;
	}
	pc->stats.python_codes_skipped += need->nr - i;
}

/*
 * @late: whole periods the tick came after it was due, CPROF_SAMPLE_LATE.
 * Inline in its one caller, cprof_tick(): a call less every tick.
 */
static __always_inline void cprof_sample(struct cprof_cpu *pc,
					 struct pt_regs *regs, u64 now,
					 u64 late)
{
	const struct cprof_settings *set = cprof_tick_set;
	struct task_struct *tsk = current;
	int cpu = smp_processor_id();
	/*
	 * Not zeroed whole (CONFIG_INIT_STACK_ALL_ZERO would, every tick):
	 * each is read only where the walks filled it, and its flag or count
	 * is set below.
	 */
	struct cprof_ucopy copy __uninitialized;
	struct cprof_pyhint py __uninitialized;
	struct cprof_pyneed need __uninitialized;
	struct cprof_uaccess acc;
	struct pt_regs *uregs;
	struct cprof_sample *s;
	u32 size, room;
	int nk = 0, nu = 0, mapped = 0;
	u16 flags = min_t(u64, late, CPROF_SAMPLE_LATE_MAX) <<
		    CPROF_SAMPLE_LATE_SHIFT;
	bool kick;

	copy.always = false;
	py.found = false;
	need.nr = 0;
	cprof_uaccess_start(&acc, set->accesses);
	if (!regs)
		return;
	if (is_idle_task(tsk)) {
		if (!set->idle)
			return;
		flags |= CPROF_SAMPLE_IDLE;
	}
	if (set->pid && tsk->tgid != set->pid)
		return;
	s = NULL;
	/* both stacks, the cgroup id; Python's frames if there may be some */
	room = sizeof(*s) + (2 * set->depth + 1) * sizeof(u64);
	if ((cprof_utable_hints() & CPROF_UHINT_PYTHON) &&
	    set->mode != CPROF_MODE_KERNEL &&
	    !(tsk->flags & PF_KTHREAD))
		room += sizeof(struct cprof_pytrail) +
			set->depth * sizeof(struct cprof_pyframe);
	if (cprof_flush_owed(pc, cpu, now))
		s = cprof_ring_reserve(&pc->ring, room);
	if (!s) {
		cprof_lose(pc, now);
		return;
	}
	if (user_mode(regs))
		flags |= CPROF_SAMPLE_USER_MODE;
	else if (set->mode != CPROF_MODE_USER)
		nk = cprof_unwind_kernel(regs, s->ips, set->depth, &flags);
	uregs = cprof_user_regs(tsk, regs);
	if (!uregs && tsk->flags & PF_KTHREAD)
		flags |= CPROF_SAMPLE_KTHREAD;
	if (uregs && set->mode != CPROF_MODE_KERNEL) {
		struct cprof_uwalk_req req = {
			.tsk = tsk,
			.uregs = uregs,
			.ips = s->ips + nk,
			.acc = &acc,
			.copy = cprof_profile_ustack ? &copy : NULL,
			.py = &py,
			.max = set->depth,
			.entry = uregs != regs,
		};

		nu = cprof_unwind_user(&req);
		flags |= req.flags;
		mapped = req.mapped;
	}

	s->time_ns = now;
	s->pid = tsk->tgid;
	s->tid = tsk->pid;
	s->cpu = cpu;
	s->nr_kernel = nk;
	s->nr_user = nu;
	memcpy(s->comm, tsk->comm, sizeof(s->comm));
	s->comm[sizeof(s->comm) - 1] = '\0';
	s->ips[nk + nu] = __cprof_cgroup_id(tsk);
	flags |= CPROF_SAMPLE_CGROUP;
	size = sizeof(*s) + (nk + nu + 1) * sizeof(u64);
	if (nu && py.found)
		size += cprof_sample_python(pc, tsk, &py, (void *)s + size,
					    room - size, &need, &acc);
	if (acc.spent)
		pc->stats.budget_truncated++;
	/*
	 * Flagged only if its copy will follow: the ring keeps half for
	 * samples, and the copy is whole or none.
	 */
	if (flags & CPROF_SAMPLE_USTACK &&
	    !cprof_ring_fits_next(&pc->ring, size,
				  sizeof(struct cprof_ustack) +
				  cprof_profile_ustack)) {
		flags &= ~CPROF_SAMPLE_USTACK;
		pc->stats.ustack_skipped++;
	} else if (flags & CPROF_SAMPLE_USTACK &&
		   !cprof_uaccess_take(&acc,
				       CPROF_UACCESS_COPY(cprof_profile_ustack))) {
		flags &= ~CPROF_SAMPLE_USTACK;
		pc->stats.budget_skipped++;
	}
	cprof_ring_commit(&pc->ring, CPROF_REC_SAMPLE, flags, size);

	pc->stats.samples++;
	if (flags & CPROF_SAMPLE_USER_FAULT)
		pc->stats.user_faults++;
	if (flags & CPROF_SAMPLE_USER_TRUNC)
		pc->stats.user_truncated++;
	if (flags & CPROF_SAMPLE_USER_TABLE)
		pc->stats.user_table++;
	if (flags & CPROF_SAMPLE_KERN_TRUNC)
		pc->stats.kernel_truncated++;
	/* The ring is ours until the next tick: s is still ours to read. */
	/*
	 * A mapping request wants the reader now (maps.c limits requests per
	 * address space); a filling ring can wait a little, and so can stack
	 * copies, which fill it fast (and are skipped once it is half full).
	 */
	kick = mapped < nu && cprof_maps_note(s->ips + nk, nu, mapped, now);
	if (!kick && (flags & CPROF_SAMPLE_USTACK ||
		      cprof_ring_half_full(&pc->ring)) &&
	    now >= pc->next_kick_ns)
		kick = true;
	if (kick) {
		pc->next_kick_ns = now + CPROF_KICK_NS;
		cprof_session_kick();
	}
	/* Last: its reservation ends s's being ours. */
	if (flags & CPROF_SAMPLE_USTACK)
		cprof_put_ustack(pc, &copy, s, cprof_profile_ustack);
	cprof_put_pycodes(pc, &need, now, &acc);
	if (acc.used > pc->stats.accesses_max)
		pc->stats.accesses_max = acc.used;
}

/*
 * Lengthen or restore this CPU's period to keep the ticks in budget.
 * @entry: from the timer's expiry to the handler; @dt: the handler.
 */
static void cprof_account(struct cprof_cpu *pc, u64 entry, u64 dt)
{
	u64 cost, want, unseen;

	if (entry < pc->entry_min)
		pc->entry_min = entry;
	if (++pc->window_ticks == CPROF_FLOOR_TICKS) {
		pc->entry_floor = pc->entry_min;
		pc->entry_min = U64_MAX;
		pc->window_ticks = 0;
	}
	unseen = 2 * pc->entry_floor;
	pc->stats.handler_ns_total += dt;
	pc->stats.overhead_ns_total += unseen;
	if (dt > pc->stats.handler_ns_max)
		pc->stats.handler_ns_max = dt;
	/*
	 * A tick cannot cost more than a period without the ticks falling
	 * behind, which a real overload does every tick: count one at most a
	 * period, so that a single stall (an NMI, a hypervisor preempting the
	 * vCPU) does not cut the rate by itself.  With the budget at most
	 * half a CPU the average can always pass it.
	 */
	cost = min(dt + unseen, pc->period_ns);
	pc->avg_ns = pc->avg_ns ? pc->avg_ns - (pc->avg_ns >> 3) + (cost >> 3)
				: cost;
	want = div_u64(pc->avg_ns * 100, cprof_tick_set->budget);
	if (want < cprof_base_period)
		want = cprof_base_period;
	if (want > pc->period_ns + (pc->period_ns >> 3)) {
		pc->period_ns = want;
		pc->period_changed = true;
		pc->stats.throttles++;
	} else if (pc->period_ns > cprof_base_period &&
		   want < pc->period_ns >> 1) {
		pc->period_ns = want;
		pc->period_changed = true;
	}
}

static enum hrtimer_restart cprof_tick(struct hrtimer *timer)
{
	struct cprof_cpu *pc = container_of(timer, struct cprof_cpu, timer);
	u64 now = ktime_get_ns(), expires, entry, end;

	if (!READ_ONCE(cprof_active))
		return HRTIMER_NORESTART;
	/*
	 * Armed, but the profile has not started (its hook is on its way):
	 * a look a millisecond at most, whatever the frequency and budget.
	 */
	if (now < smp_load_acquire(&cprof_from)) {
		hrtimer_forward(timer, ns_to_ktime(now),
				ns_to_ktime(max_t(u64, pc->period_ns,
						  NSEC_PER_MSEC)));
		return HRTIMER_RESTART;
	}
	if (now >= READ_ONCE(cprof_deadline))
		return HRTIMER_NORESTART;
	expires = ktime_to_ns(hrtimer_get_expires(timer));
	entry = now > expires ? now - expires : 0;
	pc->stats.ticks++;
	cprof_sample(pc, get_irq_regs(), now,
		     entry < pc->period_ns ? 0 : div64_u64(entry, pc->period_ns));
	end = ktime_get_ns();
	cprof_account(pc, entry, end - now);
	/* hrtimer_forward_now() would read the clock a third time */
	hrtimer_forward(timer, ns_to_ktime(end), ns_to_ktime(pc->period_ns));
	return HRTIMER_RESTART;
}

/* On the CPU itself: a pinned timer stays on the CPU that started it. */
static void cprof_arm_local(void *unused)
{
	struct cprof_cpu *pc = this_cpu_ptr(&cprof_cpus);

	hrtimer_start(&pc->timer, ns_to_ktime(pc->period_ns),
		      HRTIMER_MODE_REL_PINNED_HARD);
}

static bool cprof_cpu_selected(int cpu)
{
	return cprof_tick_set->all_cpus ||
	       cpumask_test_cpu(cpu, cprof_tick_set->cpus);
}

/*
 * Does @cpu get a ring: it is sampled, or, off the CPU, any task may come
 * back on it (its return is written where it comes back).
 */
static bool cprof_cpu_has_ring(int cpu)
{
	return cprof_tick_set->kind != CPROF_KIND_CPU ||
	       cprof_cpu_selected(cpu);
}

/*
 * Give @cpu a ring for the running profile if it has none (a CPU keeps its
 * ring, and what is in it, when it goes offline).  Sleeps; the hotplug lock
 * is held (read or write), which serializes cprof_rings_bytes.
 */
static int cprof_cpu_ring(int cpu)
{
	struct cprof_ring *r = &cprof_cpu(cpu)->ring;
	int err;

	if (r->data)
		return 0;
	if (cprof_rings_bytes + cprof_profile_ring > cprof_rings_max)
		return -ENOMEM;
	err = cprof_ring_init(r, cprof_profile_ring, cpu_to_node(cpu));
	if (err)
		return err;
	cprof_rings_bytes += cprof_profile_ring;
	/*
	 * The hook may run on @cpu meanwhile (a CPU coming online); pairs
	 * with smp_load_acquire() in cprof_sample_reserve().
	 */
	smp_store_release(&cprof_cpu(cpu)->ready, true);
	return 0;
}

static bool cprof_ticking(void)
{
	return cprof_tick_set->kind != CPROF_KIND_OFFCPU &&
	       cprof_tick_set->kind != CPROF_KIND_THREADCREATE &&
	       cprof_tick_set->kind != CPROF_KIND_MUTEX &&
	       cprof_tick_set->kind != CPROF_KIND_TRACE &&
	       cprof_tick_set->kind != CPROF_KIND_HEAP;
}

static int cprof_cpu_online(unsigned int cpu)
{
	/* A CPU without a ring (over the cap) is not sampled. */
	if (READ_ONCE(cprof_active) && cprof_cpu_has_ring(cpu) &&
	    !cprof_cpu_ring(cpu) && cprof_cpu_selected(cpu) &&
	    cprof_ticking())
		cprof_arm_local(NULL);
	return 0;
}

static int cprof_cpu_offline(unsigned int cpu)
{
	hrtimer_cancel(&cprof_cpu(cpu)->timer);
	return 0;
}

/* The hotplug lock is held. */
static void cprof_rings_free(void)
{
	int cpu;

	for_each_possible_cpu(cpu) {
		struct cprof_cpu *pc = cprof_cpu(cpu);

		WRITE_ONCE(pc->ready, false);
		if (pc->ring.data)
			cprof_ring_free(&pc->ring);
	}
	cprof_rings_bytes = 0;
}

/* Each ring's size when @n CPUs have one: buffer_kb, halved to fit the cap. */
static u32 cprof_ring_size_for(u32 n)
{
	u32 size = cprof_ring_size;

	while (size > CPROF_RING_MIN && (u64)n * size > cprof_rings_max)
		size >>= 1;
	return size;
}

/*
 * Bytes a stack copy for rings of @size: ustack=, at most a quarter of a
 * ring, so that a small one (buffer_kb=64, or many CPUs sharing
 * buffers_mb) still has room for a copy and its sample.
 */
static u32 cprof_ustack_cap(const struct cprof_settings *set, u32 size)
{
	return min_t(u32, set->ustack, size / 4);
}

/**
 * cprof_sample_ustack_max() - what a tick would copy of a stack now
 * @set: the settings
 *
 * For those who copy outside the ticks (a snapshot's interrupt), so that
 * no copy is larger than a tick's: as if every online CPU had a ring.
 *
 * Context: any.
 * Return: bytes.
 */
u32 cprof_sample_ustack_max(const struct cprof_settings *set)
{
	return cprof_ustack_cap(set, cprof_ring_size_for(num_online_cpus()));
}

/**
 * cprof_sample_start() - give the selected online CPUs a ring, arm their ticks
 * @set: the profile's settings, read by the ticks until cprof_sample_stop()
 * @period_ns: the requested period
 *
 * The ticks record nothing, and cprof_sample_reserve() gives nothing, until
 * cprof_sample_open().
 *
 * Context: process, no profile running.
 * Return: 0, or -ENOMEM when the rings do not fit (the cap, or memory).
 */
int cprof_sample_start(const struct cprof_settings *set, u64 period_ns)
{
	u32 n = 0, size;
	int cpu, err = 0;

	cprof_tick_set = set;
	cprof_base_period = period_ns;
	WRITE_ONCE(cprof_from, U64_MAX);
	WRITE_ONCE(cprof_deadline, CPROF_NO_DEADLINE);
	for_each_possible_cpu(cpu) {
		struct cprof_cpu *pc = cprof_cpu(cpu);

		pc->period_ns = period_ns;
		pc->avg_ns = 0;
		pc->lost_pending = 0;
		pc->lost_other_pending = 0;
		pc->lost_profile = 0;
		pc->next_kick_ns = 0;
		pc->entry_floor = 0;
		pc->entry_min = U64_MAX;
		pc->window_ticks = 0;
		pc->period_changed = false;
	}
	cpus_read_lock();
	for_each_online_cpu(cpu)
		n += cprof_cpu_has_ring(cpu);
	size = cprof_ring_size_for(n);
	cprof_profile_ring = size;
	cprof_profile_ustack = cprof_ustack_cap(set, size);
	for_each_online_cpu(cpu) {
		if (cprof_cpu_has_ring(cpu))
			err = err ?: cprof_cpu_ring(cpu);
	}
	if (err) {
		cprof_rings_free();
		cpus_read_unlock();
		return err;
	}
	WRITE_ONCE(cprof_active, true);
	for_each_online_cpu(cpu)
		if (cprof_cpu_selected(cpu) && cprof_ticking())
			smp_call_function_single(cpu, cprof_arm_local, NULL, 1);
	cpus_read_unlock();
	return 0;
}

/**
 * cprof_sample_open() - let the ticks and the hook record from a time on
 * @from: the profile's start; nothing earlier is recorded
 * @deadline_ns: the ticks end by themselves then, even if nobody reads;
 * CPROF_NO_DEADLINE (seconds=0): only cprof_sample_stop() ends them (stop=1,
 * the reader's close or death, rmmod)
 *
 * Context: after cprof_sample_start().
 */
void cprof_sample_open(u64 from, u64 deadline_ns)
{
	WRITE_ONCE(cprof_deadline, deadline_ns);
	/* Pairs with smp_load_acquire() in the tick and the reservation. */
	smp_store_release(&cprof_from, from);
}

/**
 * cprof_sample_stop() - stop the ticks; the hook's reservations fail
 *
 * After this returns no tick writes and none will until the next
 * cprof_sample_start() and cprof_sample_open(); cprof_sample_reserve()
 * gives nothing.  The rings
 * keep what is in them for the reader.  Idempotent, and harmless with no
 * profile running.
 *
 * Context: process, may sleep: takes the hotplug lock and waits for a
 * running tick.
 */
void cprof_sample_stop(void)
{
	int cpu;

	cpus_read_lock();
	WRITE_ONCE(cprof_active, false);
	for_each_possible_cpu(cpu)
		hrtimer_cancel(&cprof_cpu(cpu)->timer);
	cpus_read_unlock();
}

/* A record of a hook lost: a sample (@sample) or another record. */
static void cprof_lose_hook(struct cprof_cpu *pc, u64 now, bool sample)
{
	if (sample)
		cprof_lose(pc, now);
	else
		cprof_lose_other(pc, now);
}

/* Does a profile record at @now? */
static bool cprof_sample_running(u64 now)
{
	/* the start: pairs with cprof_sample_open()'s release */
	return READ_ONCE(cprof_active) && now >= smp_load_acquire(&cprof_from) &&
	       now < READ_ONCE(cprof_deadline);
}

/**
 * cprof_sample_reserve() - room in this CPU's ring for a record of a hook
 *	(the scheduler's, the task creation's)
 * @size: the record's largest size, a multiple of 8
 * @now: the time, kept with a loss
 * @sample: the record is a CPROF_REC_SAMPLE: a loss is a lost sample
 *
 * Context: a hook (offcpu.c, newtask.c, mutex.c, trace.c): interrupts
 * disabled, so this CPU's tick cannot run meanwhile.
 * Return: the record, to fill in and cprof_sample_commit() before anything
 * else reserves, or to drop (the next reservation takes its room); NULL when
 * no profile runs or @now is before its start (not a loss), or this CPU has
 * no ring in it or a full one (a loss, reported as a LOST record's samples
 * or other).
 */
void *cprof_sample_reserve(u32 size, u64 now, bool sample)
{
	struct cprof_cpu *pc = this_cpu_ptr(&cprof_cpus);
	void *rec = NULL;

	if (!cprof_sample_running(now))
		return NULL;
	/*
	 * No ring yet (a CPU coming online) or at all (over the cap): a
	 * loss all the same, reported at the end.  Pairs with
	 * smp_store_release() in cprof_cpu_ring().
	 */
	if (!smp_load_acquire(&pc->ready)) {
		cprof_lose_hook(pc, now, sample);
		return NULL;
	}
	if (cprof_flush_owed(pc, smp_processor_id(), now))
		rec = cprof_ring_reserve(&pc->ring, size);
	if (!rec)
		cprof_lose_hook(pc, now, sample);
	return rec;
}

/**
 * cprof_sample_lose() - count a record of a hook lost
 * @now: the time
 * @sample: it was a CPROF_REC_SAMPLE, as cprof_sample_reserve()'s
 *
 * For a record whose reservation succeeded, then was dropped.
 *
 * Context: as cprof_sample_reserve().
 */
void cprof_sample_lose(u64 now, bool sample)
{
	cprof_lose_hook(this_cpu_ptr(&cprof_cpus), now, sample);
}

/**
 * cprof_sample_skip() - count a record of a hook that its budget leaves out
 * @now: the time
 * @sample: it would be a CPROF_REC_SAMPLE, as cprof_sample_reserve()'s
 *
 * Counted as a failed cprof_sample_reserve() counts it, with nothing
 * written: the LOST record owed waits for the next reservation, so a storm
 * past the budget adds up in one record instead of filling the ring.
 *
 * Context: as cprof_sample_reserve().
 * Return: true if counted; false when no profile records at @now.
 */
bool cprof_sample_skip(u64 now, bool sample)
{
	if (!cprof_sample_running(now))
		return false;
	cprof_lose_hook(this_cpu_ptr(&cprof_cpus), now, sample);
	return true;
}

/**
 * cprof_sample_half_full() - is this CPU's ring half full or more?
 *
 * For a hook that writes small records and large ones: the large ones
 * can give way while the reader catches up.
 *
 * Context: as cprof_sample_reserve().
 * Return: true if so, or if this CPU has no ring.
 */
bool cprof_sample_half_full(void)
{
	struct cprof_cpu *pc = this_cpu_ptr(&cprof_cpus);

	/* pairs with smp_store_release() in cprof_cpu_ring() */
	return !smp_load_acquire(&pc->ready) || cprof_ring_half_full(&pc->ring);
}

/**
 * cprof_sample_current() - a hook's sample of current, its stacks taken
 * @smp: from cprof_sample_reserve(), with room for 2 * @depth + 1 entries
 * @set: the profile's settings
 * @depth: the most frames of each stack
 * @accesses: the most user accesses the walk makes (at most @set's)
 * @skip: the hook's tracepoint iterator: the kernel stack starts at its
 *	caller
 * @now: the event's time
 * @kick: set to whether the reader should list current's mappings now
 *
 * The kernel stack from @skip's caller, the user stack from the registers
 * saved at current's kernel entry (tables, frame pointers, at most
 * @accesses), then current's cgroup id; the header filled in.
 *
 * Context: as cprof_sample_reserve(), in a task (current's user stack).
 * Return: the sample's flags; its size is sizeof(*@smp) and
 * @smp->nr_kernel + @smp->nr_user + 1 entries.
 */
u16 cprof_sample_current(struct cprof_sample *smp,
			 const struct cprof_settings *set, u32 depth,
			 u32 accesses, unsigned long skip, u64 now, bool *kick)
{
	struct task_struct *tsk = current;
	struct cprof_uaccess acc;
	struct pt_regs *uregs;
	int nk = 0, nu = 0, mapped = 0;
	u16 flags = CPROF_SAMPLE_CGROUP;

	if (set->mode != CPROF_MODE_USER)
		nk = cprof_unwind_kernel_here(smp->ips, depth, &flags, skip);
	uregs = cprof_saved_user_regs(tsk);
	if (!uregs && tsk->flags & PF_KTHREAD)
		flags |= CPROF_SAMPLE_KTHREAD;
	cprof_uaccess_start(&acc, accesses);
	if (uregs && set->mode != CPROF_MODE_KERNEL) {
		struct cprof_uwalk_req req = {
			.tsk = tsk,
			.uregs = uregs,
			.ips = smp->ips + nk,
			.acc = &acc,
			.max = depth,
			.entry = true,
		};

		nu = cprof_unwind_user(&req);
		flags |= req.flags;
		mapped = req.mapped;
	}
	smp->time_ns = now;
	smp->pid = tsk->tgid;
	smp->tid = tsk->pid;
	smp->cpu = smp_processor_id();
	smp->nr_kernel = nk;
	smp->nr_user = nu;
	memcpy(smp->comm, tsk->comm, sizeof(smp->comm));
	smp->comm[sizeof(smp->comm) - 1] = '\0';
	smp->ips[nk + nu] = __cprof_cgroup_id(tsk);
	/* a mapping request, as a tick's: the reader lists the mappings */
	*kick = mapped < nu && cprof_maps_note(smp->ips + nk, nu, mapped, now);
	return flags;
}

/**
 * cprof_sample_commit() - commit the record cprof_sample_reserve() gave
 * @type: its type (CPROF_REC_OFFCPU, CPROF_REC_ONCPU, CPROF_REC_SAMPLE,
 *	CPROF_REC_SWITCH, CPROF_REC_WAKE)
 * @flags: its flags
 * @size: its size, a multiple of 8, at most the reserved one
 * @now: the time
 * @kick: wake the reader now (a mapping request)
 *
 * Context: as cprof_sample_reserve(), right after it.
 */
void cprof_sample_commit(u16 type, u16 flags, u32 size, u64 now, bool kick)
{
	struct cprof_cpu *pc = this_cpu_ptr(&cprof_cpus);

	cprof_ring_commit(&pc->ring, type, flags, size);
	if (!kick && (!cprof_ring_half_full(&pc->ring) ||
		      now < pc->next_kick_ns))
		return;
	pc->next_kick_ns = now + CPROF_KICK_NS;
	cprof_session_kick();
}

/**
 * cprof_sample_release() - free the rings
 *
 * Context: process, may sleep; after cprof_sample_stop(), once the reader
 * is done with the rings.
 */
void cprof_sample_release(void)
{
	cpus_read_lock();
	cprof_rings_free();
	cpus_read_unlock();
}

/**
 * cprof_sample_drain() - copy whole records of one CPU's ring
 * @cpu: the CPU
 * @dst: where to
 * @room: bytes available at @dst
 * @nr_samples: incremented by the sample records copied
 *
 * Context: the reader, during a profile.
 * Return: the bytes copied.
 */
size_t cprof_sample_drain(int cpu, void *dst, size_t room, u64 *nr_samples)
{
	struct cprof_ring *r = &cprof_cpu(cpu)->ring;

	return r->data ? cprof_ring_drain(r, dst, room, nr_samples) : 0;
}

/**
 * cprof_sample_drained() - are all rings empty?
 *
 * Context: the reader, after cprof_sample_stop().
 * Return: true when no ring holds a record.
 */
bool cprof_sample_drained(void)
{
	int cpu;

	for_each_possible_cpu(cpu) {
		struct cprof_ring *r = &cprof_cpu(cpu)->ring;

		if (r->data && !cprof_ring_empty(r))
			return false;
	}
	return true;
}

/**
 * cprof_sample_flush_lost() - report the losses no ring could hold
 * @dst: where to write CPROF_REC_LOST records
 * @room: bytes available at @dst
 * @total: set to the samples lost in this profile, all CPUs
 *
 * Context: the reader, after cprof_sample_stop().
 * Return: the bytes written (as many records as fit).
 */
size_t cprof_sample_flush_lost(void *dst, size_t room, u64 *total)
{
	size_t done = 0;
	int cpu;

	*total = 0;
	for_each_possible_cpu(cpu) {
		struct cprof_cpu *pc = cprof_cpu(cpu);

		*total += pc->lost_profile;
		if ((!pc->lost_pending && !pc->lost_other_pending) ||
		    room - done < sizeof(struct cprof_lost))
			continue;
		cprof_put_lost(pc, cpu, dst + done);
		done += sizeof(struct cprof_lost);
	}
	return done;
}

/**
 * cprof_sample_stats() - one CPU's counters since load, and its period now
 * @cpu: the CPU
 * @st: filled with the counters (each may be a little stale)
 *
 * Context: any.
 * Return: the CPU's current period, ns.
 */
u64 cprof_sample_stats(int cpu, struct cprof_cpu_stats *st)
{
	struct cprof_cpu *pc = cprof_cpu(cpu);

	*st = pc->stats;
	return READ_ONCE(pc->period_ns);
}

/**
 * cprof_sample_ring_bytes() - ring memory allocated now
 *
 * Context: any; read without the hotplug lock, so it may be stale.
 * Return: the bytes of all rings together.
 */
u64 cprof_sample_ring_bytes(void)
{
	return READ_ONCE(cprof_rings_bytes);
}

/**
 * cprof_sample_init() - prepare the timers and the hotplug callbacks
 * @ring_size: bytes per CPU ring, a power of two
 * @rings_max: cap on all rings together, bytes
 *
 * Context: process, module load, before any other cprof_sample_*().
 * Return: 0 or a negative errno.
 */
int cprof_sample_init(u32 ring_size, u64 rings_max)
{
	int cpu, err;

	if (!is_power_of_2(ring_size) || ring_size < CPROF_RING_MIN ||
	    rings_max < CPROF_RING_MIN)
		return -EINVAL;
	cprof_ring_size = ring_size;
	cprof_rings_max = rings_max;
	for_each_possible_cpu(cpu) {
		struct cprof_cpu *pc = cprof_cpu(cpu);

		hrtimer_init(&pc->timer, CLOCK_MONOTONIC,
			     HRTIMER_MODE_REL_PINNED_HARD);
		pc->timer.function = cprof_tick;
	}
	err = cpuhp_setup_state_nocalls(CPUHP_AP_ONLINE_DYN, "cprof:online",
					cprof_cpu_online, cprof_cpu_offline);
	if (err < 0)
		return err;
	cprof_hp_state = err;
	return 0;
}

/**
 * cprof_sample_exit() - undo cprof_sample_init(): stop the ticks, remove the
 *	hotplug callbacks, free the rings
 *
 * Context: process, may sleep; module unload (cprof_record_exit(), the
 * scheduler's hook gone), or a load failing after cprof_sample_init()
 * succeeded.  No reader is left.
 */
void cprof_sample_exit(void)
{
	cprof_sample_stop();
	cpuhp_remove_state_nocalls(cprof_hp_state);
	cprof_sample_release();
}
