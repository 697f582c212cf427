// SPDX-License-Identifier: GPL-2.0
/*
 * The sampler: one pinned hard-IRQ hrtimer per selected online CPU, armed
 * only while a profile runs.  Each tick writes one CPROF_REC_SAMPLE into its
 * CPU's ring, straight from the unwinders, with no lock shared between CPUs,
 * no allocation and no sleeping.
 *
 * Self-throttle: each CPU keeps a moving average of its handler time.  When
 * that average would use more than the budget (ctl "budget", % of a CPU) at
 * the requested period, the CPU lengthens its own period and says so in the
 * stream (CPROF_REC_THROTTLE), so no frequency can lock a machine up and the
 * reader can weigh each sample by the period it stands for.
 */
#include <linux/cpu.h>
#include <linux/cpuhotplug.h>
#include <linux/math64.h>
#include <linux/percpu.h>
#include <linux/sched.h>
#include <linux/topology.h>
#include <linux/smp.h>
#include <linux/string.h>
#include <linux/timekeeping.h>
#include <asm/irq_regs.h>

#include "cprof.h"
#include "ctl.h"
#include "maps.h"
#include "sample.h"
#include "stream.h"
#include "unwind.h"

static DEFINE_PER_CPU(struct cprof_cpu, cprof_cpus);
static bool cprof_active;	/* ticks sample and re-arm */
static u64 cprof_base_period;	/* requested period of the running profile */
static u64 cprof_deadline;	/* ticks stop by themselves at this time */
static int cprof_hp_state = -1;

struct cprof_cpu *cprof_cpu(int cpu)
{
	return per_cpu_ptr(&cprof_cpus, cpu);
}

static void cprof_lose(struct cprof_cpu *pc, u64 now)
{
	if (!pc->lost_pending)
		pc->lost_since = now;
	pc->lost_pending++;
	pc->lost_profile++;
	pc->stats.lost++;
}

/* Fill @l with the losses of @pc not yet reported, which now are. */
void cprof_sample_put_lost(struct cprof_cpu *pc, int cpu, struct cprof_lost *l)
{
	memset(l, 0, sizeof(*l));
	l->rec.type = CPROF_REC_LOST;
	l->rec.size = sizeof(*l);
	l->time_ns = pc->lost_since;
	l->cpu = cpu;
	l->samples = pc->lost_pending;
	pc->lost_pending = 0;
}

/* Write the LOST and THROTTLE records this CPU owes; false if no room. */
static bool cprof_flush_owed(struct cprof_cpu *pc, int cpu, u64 now)
{
	if (pc->lost_pending) {
		struct cprof_lost *l = cprof_ring_reserve(&pc->ring, sizeof(*l));

		if (!l)
			return false;
		cprof_sample_put_lost(pc, cpu, l);
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

static void cprof_sample(struct cprof_cpu *pc, struct pt_regs *regs, u64 now)
{
	const struct cprof_settings *set = &cprof_set;
	struct task_struct *tsk = current;
	int cpu = smp_processor_id();
	struct pt_regs *uregs;
	struct cprof_sample *s;
	int nk = 0, nu = 0;
	u16 flags = 0;

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
	if (cprof_flush_owed(pc, cpu, now))
		s = cprof_ring_reserve(&pc->ring, sizeof(*s) +
				       2 * set->depth * sizeof(u64));
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
	if (uregs && set->mode != CPROF_MODE_KERNEL)
		nu = cprof_unwind_user(uregs, uregs != regs, s->ips + nk,
				       set->depth, &flags);

	s->time_ns = now;
	s->pid = tsk->tgid;
	s->tid = tsk->pid;
	s->cpu = cpu;
	s->nr_kernel = nk;
	s->nr_user = nu;
	memcpy(s->comm, tsk->comm, sizeof(s->comm));
	s->comm[sizeof(s->comm) - 1] = '\0';
	cprof_ring_commit(&pc->ring, CPROF_REC_SAMPLE, flags,
			  sizeof(*s) + (nk + nu) * sizeof(u64));

	pc->stats.samples++;
	if (flags & CPROF_SAMPLE_USER_FAULT)
		pc->stats.user_faults++;
	if (flags & CPROF_SAMPLE_USER_TRUNC)
		pc->stats.user_truncated++;
	if (flags & CPROF_SAMPLE_KERN_TRUNC)
		pc->stats.kernel_truncated++;
	/* The ring is ours until the next tick: s is still ours to read. */
	if ((nu && cprof_maps_note(s->ips + nk, nu)) ||
	    cprof_ring_half_full(&pc->ring))
		cprof_stream_kick();
}

/* Lengthen or restore this CPU's period to keep the handler in budget. */
static void cprof_account(struct cprof_cpu *pc, u64 dt)
{
	u64 want;

	pc->stats.handler_ns_total += dt;
	if (dt > pc->stats.handler_ns_max)
		pc->stats.handler_ns_max = dt;
	/*
	 * A handler cannot cost more than a period without the ticks falling
	 * behind, which a real overload does every tick: count one at most a
	 * period, so that a single stall (an NMI, a hypervisor preempting the
	 * vCPU) does not cut the rate by itself.
	 */
	dt = min(dt, pc->period_ns);
	pc->avg_ns = pc->avg_ns ? pc->avg_ns - (pc->avg_ns >> 3) + (dt >> 3)
				: dt;
	want = div_u64(pc->avg_ns * 100, cprof_set.budget);
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
	u64 now = ktime_get_ns(), end;

	if (!READ_ONCE(cprof_active) || now >= cprof_deadline)
		return HRTIMER_NORESTART;
	pc->stats.ticks++;
	cprof_sample(pc, get_irq_regs(), now);
	end = ktime_get_ns();
	cprof_account(pc, end - now);
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
	return cprof_set.all_cpus || cpumask_test_cpu(cpu, cprof_set.cpus);
}

static int cprof_cpu_online(unsigned int cpu)
{
	if (READ_ONCE(cprof_active) && cprof_cpu_selected(cpu))
		cprof_arm_local(NULL);
	return 0;
}

static int cprof_cpu_offline(unsigned int cpu)
{
	hrtimer_cancel(&cprof_cpu(cpu)->timer);
	return 0;
}

/*
 * Called with cprof_lock held, no profile running.  The ticks end by
 * themselves at @deadline_ns, even if the reader stops reading.
 */
void cprof_sample_start(u64 period_ns, u64 deadline_ns)
{
	int cpu;

	cprof_base_period = period_ns;
	cprof_deadline = deadline_ns;
	for_each_possible_cpu(cpu) {
		struct cprof_cpu *pc = cprof_cpu(cpu);

		cprof_ring_reset(&pc->ring);
		pc->period_ns = period_ns;
		pc->avg_ns = 0;
		pc->lost_pending = 0;
		pc->lost_profile = 0;
		pc->period_changed = false;
	}
	cpus_read_lock();
	WRITE_ONCE(cprof_active, true);
	for_each_online_cpu(cpu)
		if (cprof_cpu_selected(cpu))
			smp_call_function_single(cpu, cprof_arm_local, NULL, 1);
	cpus_read_unlock();
}

/* After this returns no tick runs and none will until the next start. */
void cprof_sample_stop(void)
{
	int cpu;

	cpus_read_lock();
	WRITE_ONCE(cprof_active, false);
	for_each_possible_cpu(cpu)
		hrtimer_cancel(&cprof_cpu(cpu)->timer);
	cpus_read_unlock();
}

int cprof_sample_init(u32 ring_size)
{
	int cpu, err;

	for_each_possible_cpu(cpu) {
		struct cprof_cpu *pc = cprof_cpu(cpu);

		hrtimer_init(&pc->timer, CLOCK_MONOTONIC,
			     HRTIMER_MODE_REL_PINNED_HARD);
		pc->timer.function = cprof_tick;
		err = cprof_ring_init(&pc->ring, ring_size, cpu_to_node(cpu));
		if (err)
			goto free_rings;
	}
	err = cpuhp_setup_state_nocalls(CPUHP_AP_ONLINE_DYN, "cprof:online",
					cprof_cpu_online, cprof_cpu_offline);
	if (err < 0)
		goto free_rings;
	cprof_hp_state = err;
	return 0;

free_rings:
	for_each_possible_cpu(cpu)
		cprof_ring_free(&cprof_cpu(cpu)->ring);
	return err;
}

void cprof_sample_exit(void)
{
	int cpu;

	cprof_sample_stop();
	cpuhp_remove_state_nocalls(cprof_hp_state);
	for_each_possible_cpu(cpu)
		cprof_ring_free(&cprof_cpu(cpu)->ring);
}
