// SPDX-License-Identifier: GPL-2.0
/*
 * The profile session: one object per profile, from the open of
 * /proc/cprof/profile (cprof_session_begin()) to its release.  It owns the
 * settings frozen at the start, the period, the start time and deadline,
 * the state (running, stopping, ended) with the reason the profile ended,
 * and the kick that wakes the reader: a hard irq_work (docs/design.md, "Off
 * the CPU", says why not a soft one).  The reader (stream.c) drives it; ctl
 * ("stop=1") and unloading ask it to stop, under cprof_session_lock, so a
 * stop reaches only the session that exists; the ticks only kick it.
 * Lock order: ctl's cprof_lock, then cprof_session_lock.
 */
#include <linux/cpumask.h>
#include <linux/err.h>
#include <linux/irq_work.h>
#include <linux/jiffies.h>
#include <linux/math64.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/smp.h>
#include <linux/swait.h>
#include <linux/timekeeping.h>
#include <linux/wait.h>

#include "session.h"

#define CPROF_UNLOAD_WAIT_MS	5000

struct cprof_session {
	struct cprof_settings set;	/* frozen at the start */
	u64 period_ns;			/* requested period */
	u64 start_ns;
	u64 deadline_ns;		/* the ticks stop by themselves then */
	u64 stop_ns;			/* when it was asked to stop */
	u32 id;				/* profiles since load, this one included */
	u32 reason;			/* enum cprof_end_reason, once stopping */
	enum cprof_session_state state;	/* changed under cprof_session_lock */
	bool kernel_addrs;		/* the reader may see kernel addresses */
};

static DEFINE_MUTEX(cprof_session_lock);
static struct cprof_session *cprof_cur;	/* the one session, or NULL */
static u32 cprof_last_id;
static bool cprof_unloading;		/* no new session */
static bool cprof_settled = true;	/* no session, or its END was read */
static bool cprof_kicked;
static DECLARE_SWAIT_QUEUE_HEAD(cprof_reader_wq);	/* the reader waits here */
static DECLARE_WAIT_QUEUE_HEAD(cprof_settled_wq);	/* unloading waits here */

static void cprof_kick_fn(struct irq_work *work)
{
	WRITE_ONCE(cprof_kicked, true);
	swake_up_one(&cprof_reader_wq);
}

static struct irq_work cprof_kick_work = IRQ_WORK_INIT_HARD(cprof_kick_fn);

/**
 * cprof_session_begin() - start a profile with a frozen copy of settings
 * @set: the settings; the caller holds cprof_lock so they cannot change
 * @kernel_addrs: whether the reader may see kernel addresses; if not, a
 *	profile of both kernel and user stacks keeps only the user ones
 *
 * Context: process, may sleep; cprof_lock held.
 * Return: the session, or ERR_PTR(): -EBUSY while another exists, -ENODEV
 * while the module unloads, -EACCES for a kernel-only profile that may not
 * show kernel addresses, -ENOMEM.
 */
struct cprof_session *cprof_session_begin(const struct cprof_settings *set,
					  bool kernel_addrs)
{
	struct cprof_session *s;
	int err;

	if (!kernel_addrs && set->mode == CPROF_MODE_KERNEL)
		return ERR_PTR(-EACCES);
	s = kzalloc(sizeof(*s), GFP_KERNEL);
	if (!s)
		return ERR_PTR(-ENOMEM);
	if (cprof_settings_alloc(&s->set)) {
		kfree(s);
		return ERR_PTR(-ENOMEM);
	}
	cprof_settings_copy(&s->set, set);
	/* an allocation's kernel stack is the uprobe's, the same each time */
	if (!kernel_addrs || set->kind == CPROF_KIND_HEAP)
		s->set.mode = CPROF_MODE_USER;
	s->kernel_addrs = kernel_addrs;
	s->period_ns = div_u64(NSEC_PER_SEC, set->freq);

	mutex_lock(&cprof_session_lock);
	err = cprof_unloading ? -ENODEV : cprof_cur ? -EBUSY : 0;
	if (!err) {
		s->id = ++cprof_last_id;
		s->start_ns = ktime_get_ns();
		s->deadline_ns = cprof_session_deadline_at(s, s->start_ns);
		s->state = CPROF_SESSION_RUNNING;
		WRITE_ONCE(cprof_kicked, false);
		WRITE_ONCE(cprof_settled, false);
		WRITE_ONCE(cprof_cur, s);
	}
	mutex_unlock(&cprof_session_lock);
	if (!err)
		return s;
	cprof_settings_free(&s->set);
	kfree(s);
	return ERR_PTR(err);
}

/**
 * cprof_session_release() - forget a session; the next one may begin
 * @s: the session; no tick may use its settings any more
 *
 * Context: process, may sleep.
 */
void cprof_session_release(struct cprof_session *s)
{
	mutex_lock(&cprof_session_lock);
	WRITE_ONCE(cprof_cur, NULL);
	WRITE_ONCE(cprof_settled, true);
	mutex_unlock(&cprof_session_lock);
	wake_up_all(&cprof_settled_wq);
	cprof_settings_free(&s->set);
	kfree(s);
}

/**
 * cprof_session_settings() - the settings frozen at the start
 * @s: the session
 *
 * Context: any, between cprof_session_begin() and cprof_session_release().
 * Return: the settings; they live until cprof_session_release().
 */
const struct cprof_settings *cprof_session_settings(const struct cprof_session *s)
{
	return &s->set;
}

/**
 * cprof_session_period() - the requested period
 * @s: the session
 *
 * Context: any, between cprof_session_begin() and cprof_session_release().
 * Return: ns between ticks, before any throttling.
 */
u64 cprof_session_period(const struct cprof_session *s)
{
	return s->period_ns;
}

/**
 * cprof_session_deadline_at() - the deadline of the profile, started then
 * @s: the session
 * @start: a ktime_get_ns() time
 *
 * Context: any, between cprof_session_begin() and cprof_session_release().
 * Return: @start plus the seconds asked for, or CPROF_NO_DEADLINE
 * (seconds=0).
 */
u64 cprof_session_deadline_at(const struct cprof_session *s, u64 start)
{
	return s->set.seconds ? start + (u64)s->set.seconds * NSEC_PER_SEC :
				CPROF_NO_DEADLINE;
}

/**
 * cprof_session_started() - the profile's recorders record from @start on
 * @s: the session
 * @start: when they began to, at or after cprof_session_begin()
 *
 * The start time moves to @start and the deadline with it, unless a stop
 * came first (then both stay as cprof_session_begin() set them).
 *
 * Context: process, may sleep; before the reader's first read.
 */
void cprof_session_started(struct cprof_session *s, u64 start)
{
	mutex_lock(&cprof_session_lock);
	if (s->state == CPROF_SESSION_RUNNING) {
		s->start_ns = start;
		s->deadline_ns = cprof_session_deadline_at(s, start);
	}
	mutex_unlock(&cprof_session_lock);
}

/**
 * cprof_session_start_ns() - when the profile began
 * @s: the session
 *
 * Context: any, between cprof_session_begin() and cprof_session_release().
 * Return: the time given to cprof_session_started(); before it, or if a
 * stop came first, ktime_get_ns() at cprof_session_begin().
 */
u64 cprof_session_start_ns(const struct cprof_session *s)
{
	return s->start_ns;
}

/**
 * cprof_session_deadline() - when the ticks stop by themselves
 * @s: the session
 *
 * Context: any, between cprof_session_begin() and cprof_session_release().
 * Return: a ktime_get_ns() time, or CPROF_NO_DEADLINE (seconds=0).
 */
u64 cprof_session_deadline(const struct cprof_session *s)
{
	return s->deadline_ns;
}

/**
 * cprof_session_stop_ns() - when the profile was asked to stop
 * @s: the session
 *
 * Context: once cprof_session_state() no longer returns
 * CPROF_SESSION_RUNNING.
 * Return: a ktime_get_ns() time, at most the deadline.
 */
u64 cprof_session_stop_ns(const struct cprof_session *s)
{
	return s->stop_ns;
}

/**
 * cprof_session_id() - which profile since load this is
 * @s: the session
 *
 * Context: any, between cprof_session_begin() and cprof_session_release().
 * Return: 1 for the first profile since load, and so on.
 */
u32 cprof_session_id(const struct cprof_session *s)
{
	return s->id;
}

/**
 * cprof_session_kernel_addrs() - may the reader see kernel addresses?
 * @s: the session
 *
 * Context: any, between cprof_session_begin() and cprof_session_release().
 * Return: the @kernel_addrs given to cprof_session_begin().
 */
bool cprof_session_kernel_addrs(const struct cprof_session *s)
{
	return s->kernel_addrs;
}

/**
 * cprof_session_state() - where the profile is in its life
 * @s: the session
 *
 * Once this returns other than CPROF_SESSION_RUNNING, the reason and the
 * stop time are set and stay.
 *
 * Context: any, between cprof_session_begin() and cprof_session_release().
 * Return: the state.
 */
enum cprof_session_state cprof_session_state(const struct cprof_session *s)
{
	/* Pairs with smp_store_release() in __cprof_session_stop(). */
	return smp_load_acquire(&s->state);
}

/**
 * cprof_session_reason() - why the profile ended
 * @s: the session
 *
 * Context: once cprof_session_state() no longer returns
 * CPROF_SESSION_RUNNING.
 * Return: enum cprof_end_reason.
 */
u32 cprof_session_reason(const struct cprof_session *s)
{
	return s->reason;
}

static void __cprof_session_stop(struct cprof_session *s, u32 reason)
{
	lockdep_assert_held(&cprof_session_lock);
	u64 now = ktime_get_ns();

	if (s->state != CPROF_SESSION_RUNNING)
		return;
	/* The ticks end by themselves at the deadline: a late request is not. */
	s->reason = now >= s->deadline_ns ? CPROF_END_COMPLETE : reason;
	s->stop_ns = min(now, s->deadline_ns);
	/* Pairs with cprof_session_state(): reason and stop_ns come first. */
	smp_store_release(&s->state, CPROF_SESSION_STOPPING);
}

/**
 * cprof_session_stop() - ask a profile to end
 * @s: the session
 * @reason: enum cprof_end_reason; the first request's reason is kept
 *
 * Context: process, may sleep.
 */
void cprof_session_stop(struct cprof_session *s, u32 reason)
{
	mutex_lock(&cprof_session_lock);
	__cprof_session_stop(s, reason);
	mutex_unlock(&cprof_session_lock);
	swake_up_all(&cprof_reader_wq);
}

/**
 * cprof_session_stop_current() - ask the profile running now, if any, to end
 * @reason: enum cprof_end_reason
 *
 * Context: process, may sleep.
 * Return: whether a profile exists (its ticks should stop).
 */
bool cprof_session_stop_current(u32 reason)
{
	bool any;

	mutex_lock(&cprof_session_lock);
	any = cprof_cur;
	if (any)
		__cprof_session_stop(cprof_cur, reason);
	mutex_unlock(&cprof_session_lock);
	swake_up_all(&cprof_reader_wq);
	return any;
}

/**
 * cprof_session_ended() - the reader has read the stream to its END record
 * @s: the session, stopping
 *
 * Context: the reader, process, may sleep.
 */
void cprof_session_ended(struct cprof_session *s)
{
	mutex_lock(&cprof_session_lock);
	WRITE_ONCE(s->state, CPROF_SESSION_ENDED);
	WRITE_ONCE(cprof_settled, true);
	mutex_unlock(&cprof_session_lock);
	wake_up_all(&cprof_settled_wq);
}

/**
 * cprof_session_active() - does a profile exist?
 *
 * Settings are frozen while one does.
 *
 * Context: any; unlocked.  With cprof_lock held no profile can begin, so a
 * false answer stays false until it is dropped.
 * Return: true from cprof_session_begin() to cprof_session_release().
 */
bool cprof_session_active(void)
{
	return READ_ONCE(cprof_cur);
}

/**
 * cprof_session_unload() - end the profile for rmmod; refuse new ones
 *
 * Gives the reader a while to read the rest of the stream to its end, so
 * unloading loses nothing.  A reader that does not read (stopped, or not
 * calling read()) is cut off when procfs removes the files.
 *
 * Context: process, module unload; sleeps up to CPROF_UNLOAD_WAIT_MS.
 */
void cprof_session_unload(void)
{
	mutex_lock(&cprof_session_lock);
	cprof_unloading = true;
	if (cprof_cur)
		__cprof_session_stop(cprof_cur, CPROF_END_UNLOAD);
	mutex_unlock(&cprof_session_lock);
	swake_up_all(&cprof_reader_wq);
	wait_event_timeout(cprof_settled_wq, READ_ONCE(cprof_settled),
			   msecs_to_jiffies(CPROF_UNLOAD_WAIT_MS));
}

/**
 * cprof_session_kick() - wake the reader soon
 *
 * The wake-up itself runs later, from a hard irq_work (the interrupt the
 * queueing raises, on PREEMPT_RT too); not from a CPU going offline,
 * which would keep the work pending until it came back.
 *
 * Context: any, the tick's hard IRQ included; does not sleep.
 */
void cprof_session_kick(void)
{
	/*
	 * Not on a CPU going offline: the scheduler's hook still runs there
	 * after the CPU's last irq_work flush (smpcfd_dying_cpu()), as its
	 * stopper switches to the idle task, and work queued then would wait
	 * for the CPU to come back (irq_work_sync() at unload for ever, if
	 * it stays offline).  The reader's timed wait reads that ring anyway.
	 */
	if (likely(cpu_online(raw_smp_processor_id())))
		irq_work_queue(&cprof_kick_work);
}

/**
 * cprof_session_wait() - the reader sleeps until kicked, asked to stop,
 *	signalled, or @timeout jiffies have passed
 * @s: the session
 * @timeout: jiffies
 *
 * Context: the reader, process; sleeps interruptibly.
 */
void cprof_session_wait(struct cprof_session *s, long timeout)
{
	swait_event_interruptible_timeout_exclusive(cprof_reader_wq,
						    xchg(&cprof_kicked, false) ||
						    READ_ONCE(s->state) !=
						    CPROF_SESSION_RUNNING,
						    timeout);
}

/**
 * cprof_session_exit() - wait for a kick still in flight
 *
 * Context: process, module unload, after the ticks are gone
 * (cprof_sample_exit()) so that no new kick comes.
 */
void cprof_session_exit(void)
{
	irq_work_sync(&cprof_kick_work);
}
