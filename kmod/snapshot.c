// SPDX-License-Identifier: GPL-2.0
/*
 * Thread snapshots (profile kind threads): one pass over the threads of
 * the machine (or of ctl's pid=), in the order of their tids, each written
 * as a CPROF_REC_THREAD with its state, how long it has been off the CPU
 * and both its stacks, walked as a tick would walk them.
 *
 * The pass runs in batches that fill the reader's buffer, each in a worker
 * that takes the walked process's address space (kthread_use_mm()); the
 * reader can stop it between batches (a fatal signal, stop=1, rmmod).  A
 * thread off the CPU is walked from where it switched out (cprof_snap_off()),
 * one on a CPU by an interrupt there (cprof_snap_running()).  Nothing here
 * waits for a thread or takes a lock it may hold.  Why each step is made
 * so: docs/design.md, "A snapshot of every thread".
 */
#include <linux/atomic.h>
#include <linux/cpu.h>
#include <linux/kthread.h>
#include <linux/mm.h>
#include <linux/pid.h>
#include <linux/pid_namespace.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/sched/clock.h>
#include <linux/sched/isolation.h>
#include <linux/sched/mm.h>
#include <linux/sched/task.h>
#include <linux/sched/task_stack.h>
#include <linux/slab.h>
#include <linux/smp.h>
#include <linux/string.h>
#include <linux/timekeeping.h>
#include <linux/workqueue.h>

#include "maps.h"
#include "offcpu.h"
#include "sample.h"
#include "snapshot.h"
#include "unwind.h"

#define CPROF_SNAP_TRIES	3

/* Since load: register copies dropped, threads left uninterrupted. */
static atomic64_t cprof_snap_regs_dropped = ATOMIC64_INIT(0);
static atomic64_t cprof_snap_nr_unwalked = ATOMIC64_INIT(0);

struct cprof_snap {
	struct work_struct work;
	const struct cprof_settings *set;
	struct mm_struct *mm;	/* in use by the worker during a batch */
	char *dst;		/* this batch's buffer */
	size_t room;
	size_t len;
	u64 threads;		/* records written */
	u32 ustack;		/* bytes a stack copy: as a tick's */
	int next_nr;		/* the next tid to look at */
	bool done;
};

/* One look at a thread: its record being filled in, and its copy. */
struct cprof_snap_look {
	struct task_struct *tsk;
	const struct cprof_settings *set;
	u32 ustack;		/* the snapshot's */
	struct cprof_thread *t;
	struct cprof_ucopy copy;
	struct pt_regs uregs;	/* off the CPU: the saved ones, copied */
	u16 flags;
	bool found;		/* on the CPU: the interrupt found it there */
	bool exiting;
};

/*
 * Bytes a thread may need: its mappings before and after its walk, its
 * record, its stack copy.
 */
static size_t cprof_snap_need(const struct cprof_settings *set)
{
	return 2 * CPROF_MAPS_ROOM + sizeof(struct cprof_thread) +
	       (2 * set->depth + 1) * sizeof(u64) +
	       sizeof(struct cprof_ustack) + set->ustack;
}

/*
 * Room for a listing of mappings: what cprof_snap_need() set aside, not
 * more (a process may have thousands; the rest come with a later thread).
 */
static size_t cprof_snap_maps_room(const struct cprof_snap *sn)
{
	return min_t(size_t, sn->room - sn->len, CPROF_MAPS_ROOM);
}

/* The copy of the user stack, after the record, if the walk wanted one. */
static void cprof_snap_put_copy(struct cprof_snap_look *lk)
{
	struct cprof_thread *t = lk->t;
	struct cprof_ustack *u;

	if (!(lk->flags & CPROF_SAMPLE_USTACK))
		return;
	u = (void *)&t->ips[t->nr_kernel + t->nr_user + 1];
	u->time_ns = t->time_ns;
	u->tid = t->tid;
	u->cpu = t->cpu;
	u->rec.type = CPROF_REC_USTACK;
	u->rec.flags = cprof_unwind_copy(&lk->copy, u, lk->ustack);
	u->rec.size = sizeof(*u) + CPROF_ALIGN(u->size);
}

/* On the thread's CPU, in an interrupt: walk it if it is still there. */
static void cprof_snap_running(void *arg)
{
	struct cprof_snap_look *lk = arg;
	const struct cprof_settings *set = lk->set;
	struct cprof_thread *t = lk->t;
	struct pt_regs *regs, *uregs;
	struct cprof_uaccess acc;
	int nk = 0, nu = 0;

	if (current != lk->tsk)
		return;
	/* interrupts off, as a tick's: the tick's bound on user reads */
	cprof_uaccess_start(&acc, set->accesses);
	/* (this interrupt's handler keeps no irq regs) */
	regs = cprof_unwind_irq_regs();
	if (!regs)
		return;
	lk->found = true;
	lk->flags = 0;
	if (user_mode(regs))
		lk->flags |= CPROF_SAMPLE_USER_MODE;
	else if (set->mode != CPROF_MODE_USER)
		nk = cprof_unwind_kernel(regs, t->ips, set->depth, &lk->flags);
	uregs = cprof_user_regs(current, regs);
	if (uregs && set->mode != CPROF_MODE_KERNEL) {
		struct cprof_uwalk_req req = {
			.tsk = current,
			.uregs = uregs,
			.ips = t->ips + nk,
			.acc = &acc,
			.copy = lk->ustack ? &lk->copy : NULL,
			.max = set->depth,
			.entry = uregs != regs,
		};

		nu = cprof_unwind_user(&req);
		lk->flags |= req.flags;
	}
	/* the copy whole or none, as the tick's */
	if (lk->flags & CPROF_SAMPLE_USTACK &&
	    !cprof_uaccess_take(&acc, CPROF_UACCESS_COPY(lk->ustack)))
		lk->flags &= ~CPROF_SAMPLE_USTACK;
	t->nr_kernel = nk;
	t->nr_user = nu;
	t->cpu = smp_processor_id();
	t->time_ns = ktime_get_ns();
	t->ips[nk + nu] = __cprof_cgroup_id(current);
	cprof_snap_put_copy(lk);
}

/*
 * Off the CPU: walk it, if its stack is still its own (not exiting).
 * Return: true if it did not run meanwhile.
 */
static bool cprof_snap_off(struct cprof_snap *sn, struct cprof_snap_look *lk)
{
	const struct cprof_settings *set = lk->set;
	struct task_struct *tsk = lk->tsk;
	struct cprof_thread *t = lk->t;
	bool user = false, same;
	unsigned long sw;
	int nk = 0, nu = 0, err;
	u64 exec_start;

	sw = READ_ONCE(tsk->nvcsw) + READ_ONCE(tsk->nivcsw);
	/* the counts before the walk; pairs with the scheduler's rq lock */
	smp_rmb();
	lk->flags = 0;
	/* its stack stays mapped: see cprof_unwind_kernel_task() */
	cpus_read_lock();
	rcu_read_lock();
	if (READ_ONCE(tsk->flags) & PF_EXITING) {
		rcu_read_unlock();
		cpus_read_unlock();
		lk->exiting = true;
		return true;
	}
	if (set->mode != CPROF_MODE_USER)
		nk = cprof_unwind_kernel_task(tsk, t->ips, set->depth,
					      &lk->flags);
	t->state = cprof_offcpu_state(READ_ONCE(tsk->__state));
	exec_start = READ_ONCE(tsk->se.exec_start);
	rcu_read_unlock();
	cpus_read_unlock();
	if (set->mode != CPROF_MODE_KERNEL && sn->mm &&
	    READ_ONCE(tsk->mm) == sn->mm) {
		err = cprof_copy_user_regs(tsk, &lk->uregs);
		if (err == -ESTALE) {
			atomic64_inc(&cprof_snap_regs_dropped);
			lk->exiting = true;
			return true;
		}
		user = !err;
	}
	if (!user && tsk->flags & PF_KTHREAD)
		lk->flags |= CPROF_SAMPLE_KTHREAD;
	if (user) {
		/* asleep: no bound on its reads but the depth (no .acc) */
		struct cprof_uwalk_req req = {
			.tsk = tsk,
			.uregs = &lk->uregs,
			.ips = t->ips + nk,
			.copy = lk->ustack ? &lk->copy : NULL,
			.max = set->depth,
			.entry = true,
		};

		rcu_read_lock();
		nu = cprof_unwind_user(&req);
		rcu_read_unlock();
		lk->flags |= req.flags;
	}
	t->nr_kernel = nk;
	t->nr_user = nu;
	t->cpu = task_cpu(tsk);
	t->time_ns = ktime_get_ns();
	t->off_ns = exec_start ? local_clock() - exec_start : 0;
	if ((s64)t->off_ns < 0)
		t->off_ns = 0;
	t->ips[nk + nu] = cprof_cgroup_id(tsk);
	/* the walks' reads before the counts again (the smp_rmb() above) */
	smp_rmb();
	same = !READ_ONCE(tsk->on_cpu) &&
	       sw == READ_ONCE(tsk->nvcsw) + READ_ONCE(tsk->nivcsw);
	return same;
}

/*
 * Why @cpu may not be interrupted to walk a thread running there
 * (CPROF_THREAD_* flags), or 0 if it may: it is not one of cpus=, or the
 * kernel keeps its own noise off it.
 */
static u16 cprof_snap_no_ipi(const struct cprof_settings *set, int cpu)
{
	if (!set->all_cpus && !cpumask_test_cpu(cpu, set->cpus))
		return CPROF_THREAD_NOT_SELECTED;
	if (cpu_is_isolated(cpu))
		return CPROF_THREAD_ISOLATED;
	return 0;
}

/* A thread running on a CPU not to interrupt: its state, and why. */
static void cprof_snap_unwalked(struct cprof_snap_look *lk, int cpu, u16 why)
{
	struct cprof_thread *t = lk->t;

	lk->found = true;
	lk->flags = why;
	if (lk->tsk->flags & PF_KTHREAD)
		lk->flags |= CPROF_SAMPLE_KTHREAD;
	t->state = CPROF_OFF_RUNNING;
	t->nr_kernel = 0;
	t->nr_user = 0;
	t->cpu = cpu;
	t->time_ns = ktime_get_ns();
	t->off_ns = 0;
	t->ips[0] = cprof_cgroup_id(lk->tsk);
	atomic64_inc(&cprof_snap_nr_unwalked);
}

/* Use @tsk's address space in the worker; false: it has none. */
static bool cprof_snap_use_mm(struct cprof_snap *sn, struct task_struct *tsk)
{
	struct mm_struct *mm;

	/* (a kernel thread may borrow an address space, as this worker) */
	if (tsk->flags & PF_KTHREAD)
		return false;
	if (sn->mm && READ_ONCE(tsk->mm) == sn->mm)
		return true;
	mm = get_task_mm(tsk);
	if (!mm)
		return false;
	if (sn->mm) {
		kthread_unuse_mm(sn->mm);
		mmput(sn->mm);
	}
	kthread_use_mm(mm);
	sn->mm = mm;
	return true;
}

static void cprof_snap_unuse_mm(struct cprof_snap *sn)
{
	if (!sn->mm)
		return;
	kthread_unuse_mm(sn->mm);
	mmput(sn->mm);
	sn->mm = NULL;
}

/* The record of one thread, and what goes with it, at sn->dst + sn->len. */
static void cprof_snap_thread(struct cprof_snap *sn, struct task_struct *tsk)
{
	const struct cprof_settings *set = sn->set;
	struct cprof_snap_look lk = {
		.tsk = tsk, .set = set, .ustack = sn->ustack,
		.copy = { .always = true },
	};
	struct cprof_thread *t;
	bool user, on_cpu, still = false;
	u32 size;
	u16 why;
	int i, cpu;

	user = set->mode != CPROF_MODE_KERNEL && cprof_snap_use_mm(sn, tsk);
	if (user)
		sn->len += cprof_maps_task(tsk, sn->mm, NULL, 0, ktime_get_ns(),
					   sn->dst + sn->len,
					   cprof_snap_maps_room(sn));
	t = (void *)(sn->dst + sn->len);
	memset(t, 0, sizeof(*t));
	lk.t = t;
	/* the worker itself: running, from where it called this module */
	if (tsk == current) {
		if (set->mode != CPROF_MODE_USER)
			t->nr_kernel = cprof_unwind_kernel_here(t->ips,
								set->depth,
								&lk.flags, 0);
		lk.flags |= CPROF_SAMPLE_KTHREAD;
		lk.found = true;
		t->state = CPROF_OFF_RUNNING;
		t->cpu = raw_smp_processor_id();
		t->time_ns = ktime_get_ns();
		t->ips[t->nr_kernel] = cprof_cgroup_id(tsk);
	}
	for (i = 0; i < CPROF_SNAP_TRIES && !still && !lk.found; i++) {
		cpu = task_cpu(tsk);
		why = cprof_snap_no_ipi(set, cpu);
		/* read once: an interrupt only where why is 0 */
		on_cpu = READ_ONCE(tsk->on_cpu);
		if (on_cpu && why) {
			cprof_snap_unwalked(&lk, cpu, why);
			break;
		}
		if (on_cpu &&
		    !smp_call_function_single(cpu, cprof_snap_running,
					      &lk, 1) && lk.found) {
			t->state = CPROF_OFF_RUNNING;
			t->off_ns = 0;
			break;
		}
		still = cprof_snap_off(sn, &lk);
		if (lk.exiting)
			return;
	}
	if (!lk.found && !still)
		lk.flags |= CPROF_THREAD_MOVED;
	t->pid = tsk->tgid;
	t->tid = tsk->pid;
	memcpy(t->comm, tsk->comm, sizeof(t->comm));
	t->comm[sizeof(t->comm) - 1] = '\0';
	size = sizeof(*t) + (t->nr_kernel + t->nr_user + 1) * sizeof(u64);
	t->rec.type = CPROF_REC_THREAD;
	t->rec.flags = lk.flags | CPROF_SAMPLE_CGROUP;
	t->rec.size = size;
	if (!lk.found)
		cprof_snap_put_copy(&lk);
	sn->len += size;
	if (lk.flags & CPROF_SAMPLE_USTACK)
		sn->len += ((struct cprof_rec *)(sn->dst + sn->len))->size;
	sn->threads++;
	/* code the listing before the walk did not have */
	if (user && t->nr_user)
		sn->len += cprof_maps_task(tsk, sn->mm, t->ips + t->nr_kernel,
					   t->nr_user, t->time_ns,
					   sn->dst + sn->len,
					   cprof_snap_maps_room(sn));
}

/* The next thread from sn->next_nr on, with a reference; NULL: done. */
static struct task_struct *cprof_snap_next(struct cprof_snap *sn)
{
	struct task_struct *tsk = NULL;
	struct pid *pid;

	rcu_read_lock();
	while (!tsk) {
		pid = find_ge_pid(sn->next_nr, &init_pid_ns);
		if (!pid) {
			sn->done = true;
			break;
		}
		sn->next_nr = pid_nr(pid) + 1;
		tsk = pid_task(pid, PIDTYPE_PID);
	}
	if (tsk)
		get_task_struct(tsk);
	rcu_read_unlock();
	return tsk;
}

static bool cprof_snap_wanted(const struct cprof_settings *set,
			      struct task_struct *tsk)
{
	if (tsk->exit_state || tsk->flags & PF_EXITING)
		return false;
	if (set->pid && tsk->tgid != set->pid)
		return false;
	return set->mode != CPROF_MODE_USER || !(tsk->flags & PF_KTHREAD);
}

static void cprof_snap_work(struct work_struct *work)
{
	struct cprof_snap *sn = container_of(work, struct cprof_snap, work);
	size_t need = cprof_snap_need(sn->set);
	struct task_struct *tsk;

	while (!sn->done && !WARN_ON_ONCE(sn->len > sn->room) &&
	       sn->room - sn->len >= need) {
		tsk = cprof_snap_next(sn);
		if (!tsk)
			break;
		if (cprof_snap_wanted(sn->set, tsk))
			cprof_snap_thread(sn, tsk);
		put_task_struct(tsk);
		cond_resched();
	}
	cprof_snap_unuse_mm(sn);
}

/**
 * cprof_snap_new() - a thread snapshot, to be taken
 * @set: the profile's settings, read until cprof_snap_free()
 *
 * Context: process.
 * Return: the snapshot, or NULL without memory.
 */
struct cprof_snap *cprof_snap_new(const struct cprof_settings *set)
{
	struct cprof_snap *sn = kzalloc(sizeof(*sn), GFP_KERNEL);

	if (!sn)
		return NULL;
	INIT_WORK(&sn->work, cprof_snap_work);
	sn->set = set;
	sn->ustack = cprof_sample_ustack_max(set);
	sn->next_nr = 1;
	return sn;
}

/**
 * cprof_snap_fill() - the next batch of thread records
 * @sn: the snapshot
 * @dst: where the records go (CPROF_REC_THREAD, CPROF_REC_USTACK,
 *	CPROF_REC_MMAP)
 * @room: bytes at @dst
 * @threads: incremented by the thread records written
 *
 * Waits for the batch, which ends when @room runs short or the pass is
 * done (cprof_snap_done()).
 *
 * Context: process; sleeps.
 * Return: the bytes written.
 */
size_t cprof_snap_fill(struct cprof_snap *sn, void *dst, size_t room,
		       u64 *threads)
{
	sn->dst = dst;
	sn->room = room;
	sn->len = 0;
	sn->threads = 0;
	queue_work(system_unbound_wq, &sn->work);
	flush_work(&sn->work);
	*threads += sn->threads;
	return sn->len;
}

/**
 * cprof_snap_done() - has the pass seen every thread?
 * @sn: the snapshot
 * Return: true when it has.
 */
bool cprof_snap_done(const struct cprof_snap *sn)
{
	return sn->done;
}

/**
 * cprof_snap_usage() - what snapshots left out, since load
 * @regs_dropped: register copies that could not be proven a thread's (it
 *	was exiting): those threads were left out
 * @unwalked: threads running on a CPU not to interrupt, recorded without
 *	stacks
 */
void cprof_snap_usage(u64 *regs_dropped, u64 *unwalked)
{
	*regs_dropped = atomic64_read(&cprof_snap_regs_dropped);
	*unwalked = atomic64_read(&cprof_snap_nr_unwalked);
}

/**
 * cprof_snap_free() - free a snapshot
 * @sn: from cprof_snap_new(), no batch running (NULL: nothing)
 */
void cprof_snap_free(struct cprof_snap *sn)
{
	kfree(sn);
}
