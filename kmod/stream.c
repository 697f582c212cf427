// SPDX-License-Identifier: GPL-2.0
/*
 * /proc/cprof/profile: opening it starts a profile, reading it streams the
 * records as the ticks produce them, and it ends (EOF) after the configured
 * seconds.  One reader at a time.
 *
 * The reader drains the per-CPU rings into a private bounce buffer, serves
 * the mapping requests of the ticks (maps.c) into the same buffer, and hands
 * the buffer out in whatever pieces read() asks for.  It sleeps between
 * drains; a tick wakes it early (through irq_work, never a lock of its own)
 * when its ring is half full or it queued a mapping request.
 *
 * Ending early: a signal to the reader while it is in read(), "stop=1" in
 * ctl (for readers that catch a signal while in user space), or rmmod stops
 * the ticks; the reader then drains what was collected and closes the
 * stream with CPROF_REC_END, so what was collected is never lost and the
 * stream stays well-formed.  The ticks also stop by themselves at the end
 * of the requested duration, whether or not anybody reads.
 */
#include <linux/fs.h>
#include <linux/irq_work.h>
#include <linux/jiffies.h>
#include <linux/mm.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/timekeeping.h>
#include <linux/uaccess.h>
#include <linux/utsname.h>
#include <linux/wait.h>

#include "cprof.h"
#include "ctl.h"
#include "maps.h"
#include "sample.h"
#include "stream.h"

#define CPROF_BOUNCE_SIZE	(256 * 1024)
/*
 * Between kicks the reader wakes this often.  Each wake-up may preempt a
 * profiled task, which then shows up in its own profile in the scheduler:
 * rare is better.  A 1 MiB ring at 1 kHz is half full after seconds.
 */
#define CPROF_DRAIN_MS		250

struct cprof_reader {
	struct mutex lock;	/* one read() at a time on this file */
	char *buf;		/* pending bytes are [pos, len) */
	size_t len;
	size_t pos;
	u64 start_ns;
	u64 deadline_ns;
	u64 stop_ns;
	u64 samples;
	int next_cpu;		/* where the next drain starts */
	u32 reason;		/* enum cprof_end_reason once stopping */
	bool stopping;
	bool done;
};

#define CPROF_UNLOAD_WAIT_MS	5000

static DECLARE_WAIT_QUEUE_HEAD(cprof_wq);	/* the reader sleeps here */
static DECLARE_WAIT_QUEUE_HEAD(cprof_eof_wq);	/* rmmod waits for the end */
static atomic_t cprof_busy = ATOMIC_INIT(0);
static bool cprof_unloading;
static bool cprof_kicked;
static bool cprof_eof;		/* the reader has read the whole stream */
static bool cprof_stop_req;	/* "stop=1" written to ctl */

static void cprof_kick_fn(struct irq_work *work)
{
	WRITE_ONCE(cprof_kicked, true);
	wake_up_interruptible(&cprof_wq);
}

static struct irq_work cprof_kick_work = IRQ_WORK_INIT(cprof_kick_fn);

/* Any context, including the tick: wake the reader soon. */
void cprof_stream_kick(void)
{
	irq_work_queue(&cprof_kick_work);
}

bool cprof_stream_busy(void)
{
	return atomic_read(&cprof_busy);
}

static void cprof_put_header(struct cprof_reader *rd, u64 period_ns)
{
	const struct cprof_settings *s = &cprof_set;
	struct cprof_header *h = (void *)rd->buf;

	memset(h, 0, sizeof(*h));
	memcpy(h->magic, CPROF_MAGIC, CPROF_MAGIC_LEN);
	h->version = CPROF_VERSION;
	h->size = sizeof(*h);
	h->nr_cpu_ids = nr_cpu_ids;
	h->online_cpus = num_online_cpus();
	h->freq = s->freq;
	h->depth = s->depth;
	h->period_ns = period_ns;
	h->start_realtime_ns = ktime_get_real_ns();
	h->start_time_ns = ktime_get_ns();
	h->duration_ns = (u64)s->seconds * NSEC_PER_SEC;
	h->mode = s->mode;
	h->pid = s->pid;
	h->flags = s->idle ? CPROF_HDR_IDLE : 0;
	h->ksym_schedule = (unsigned long)schedule;
	strscpy(h->release, utsname()->release, sizeof(h->release));
	rd->len = sizeof(*h);
	rd->start_ns = h->start_time_ns;
	rd->deadline_ns = h->start_time_ns + h->duration_ns;
}

int cprof_stream_open(struct inode *inode, struct file *file)
{
	struct cprof_reader *rd;
	u64 period_ns;

	if (READ_ONCE(cprof_unloading))
		return -ENODEV;
	if (atomic_cmpxchg(&cprof_busy, 0, 1))
		return -EBUSY;
	WRITE_ONCE(cprof_eof, false);
	WRITE_ONCE(cprof_stop_req, false);
	rd = kzalloc(sizeof(*rd), GFP_KERNEL);
	if (!rd)
		goto busy;
	rd->buf = kvmalloc(CPROF_BOUNCE_SIZE, GFP_KERNEL);
	if (!rd->buf)
		goto free_rd;
	mutex_init(&rd->lock);
	cprof_maps_reset();
	mutex_lock(&cprof_lock);
	period_ns = div_u64(NSEC_PER_SEC, cprof_set.freq);
	cprof_put_header(rd, period_ns);
	cprof_sample_start(period_ns, rd->deadline_ns);
	mutex_unlock(&cprof_lock);
	file->private_data = rd;
	return nonseekable_open(inode, file);

free_rd:
	kfree(rd);
busy:
	atomic_set(&cprof_busy, 0);
	return -ENOMEM;
}

static void cprof_reader_stop(struct cprof_reader *rd, u32 reason)
{
	if (rd->stopping)
		return;
	cprof_sample_stop();
	rd->stopping = true;
	rd->reason = reason;
	/* The ticks end by themselves at the deadline: a late reader is not. */
	rd->stop_ns = min(ktime_get_ns(), rd->deadline_ns);
}

static int cprof_next_possible(int cpu)
{
	cpu = cpumask_next(cpu, cpu_possible_mask);
	return cpu < nr_cpu_ids ? cpu : cpumask_first(cpu_possible_mask);
}

/*
 * Move what the ticks produced into the bounce buffer, starting each time
 * with the next CPU so that a full buffer favours none.
 */
static void cprof_reader_fill(struct cprof_reader *rd)
{
	u64 now = ktime_get_ns();
	unsigned int i;
	int cpu;

	rd->len += cprof_maps_sync(rd->buf + rd->len,
				   CPROF_BOUNCE_SIZE - rd->len, now);
	cpu = rd->next_cpu = cprof_next_possible(rd->next_cpu);
	for (i = 0; i < num_possible_cpus(); i++) {
		rd->len += cprof_ring_drain(&cprof_cpu(cpu)->ring,
					    rd->buf + rd->len,
					    CPROF_BOUNCE_SIZE - rd->len,
					    &rd->samples);
		cpu = cprof_next_possible(cpu);
	}
}

/*
 * After the last drain: report losses not yet in a ring (as many as fit;
 * the END record has the total), then the end.
 */
static void cprof_reader_finish(struct cprof_reader *rd)
{
	struct cprof_end *e;
	u64 lost = 0;
	int cpu;

	for_each_possible_cpu(cpu) {
		struct cprof_cpu *pc = cprof_cpu(cpu);
		struct cprof_lost *l = (void *)(rd->buf + rd->len);

		lost += pc->lost_profile;
		if (!pc->lost_pending ||
		    rd->len + sizeof(*l) + sizeof(*e) > CPROF_BOUNCE_SIZE)
			continue;
		cprof_sample_put_lost(pc, cpu, l);
		rd->len += sizeof(*l);
	}
	e = (void *)(rd->buf + rd->len);
	memset(e, 0, sizeof(*e));
	e->rec.type = CPROF_REC_END;
	e->rec.size = sizeof(*e);
	e->time_ns = ktime_get_ns();
	e->duration_ns = rd->stop_ns - rd->start_ns;
	e->reason = rd->reason;
	e->samples = rd->samples;
	e->lost = lost;
	rd->len += sizeof(*e);
	rd->done = true;
}

static bool cprof_rings_empty(void)
{
	int cpu;

	for_each_possible_cpu(cpu)
		if (!cprof_ring_empty(&cprof_cpu(cpu)->ring))
			return false;
	return !cprof_maps_pending();
}

static bool cprof_reader_wanted(void)
{
	return xchg(&cprof_kicked, false) || READ_ONCE(cprof_unloading) ||
	       READ_ONCE(cprof_stop_req);
}

/* Should the profile end now, and why?  Checked before every drain. */
static bool cprof_reader_should_stop(struct cprof_reader *rd)
{
	if (READ_ONCE(cprof_unloading))
		cprof_reader_stop(rd, CPROF_END_UNLOAD);
	else if (READ_ONCE(cprof_stop_req))
		cprof_reader_stop(rd, CPROF_END_STOP);
	else if (signal_pending(current))
		cprof_reader_stop(rd, CPROF_END_SIGNAL);
	else if (ktime_get_ns() >= rd->deadline_ns)
		cprof_reader_stop(rd, CPROF_END_COMPLETE);
	return rd->stopping;
}

/* Produce more bytes into the bounce buffer, sleeping if there are none. */
static void cprof_reader_produce(struct cprof_reader *rd)
{
	long timeout;

	if (!cprof_reader_should_stop(rd)) {
		cprof_reader_fill(rd);
		if (rd->len)
			return;
		timeout = nsecs_to_jiffies(rd->deadline_ns - ktime_get_ns());
		timeout = clamp_t(long, timeout, 1,
				  msecs_to_jiffies(CPROF_DRAIN_MS));
		wait_event_interruptible_timeout(cprof_wq,
						 cprof_reader_wanted(),
						 timeout);
		return;
	}
	cprof_reader_fill(rd);
	/* A full bounce buffer or the maps room may hold data back. */
	if (!rd->len && cprof_rings_empty())
		cprof_reader_finish(rd);
}

/* ctl "stop=1": end the running profile early, as a signal would. */
void cprof_stream_stop(void)
{
	WRITE_ONCE(cprof_stop_req, true);
	wake_up_all(&cprof_wq);
}

ssize_t cprof_stream_read(struct file *file, char __user *ubuf, size_t count,
			  loff_t *ppos)
{
	struct cprof_reader *rd = file->private_data;
	ssize_t ret = 0;
	size_t n;

	if (!count)
		return 0;
	if (mutex_lock_interruptible(&rd->lock))
		return -ERESTARTSYS;
	while (rd->pos == rd->len && !rd->done) {
		rd->pos = 0;
		rd->len = 0;
		cprof_reader_produce(rd);
	}
	if (rd->pos < rd->len) {
		n = min(count, rd->len - rd->pos);
		if (copy_to_user(ubuf, rd->buf + rd->pos, n)) {
			ret = -EFAULT;
		} else {
			rd->pos += n;
			ret = n;
		}
	} else {
		WRITE_ONCE(cprof_eof, true);
		wake_up_all(&cprof_eof_wq);
	}
	mutex_unlock(&rd->lock);
	return ret;
}

int cprof_stream_release(struct inode *inode, struct file *file)
{
	struct cprof_reader *rd = file->private_data;

	cprof_reader_stop(rd, CPROF_END_SIGNAL);
	cprof_maps_reset();
	kvfree(rd->buf);
	kfree(rd);
	atomic_set(&cprof_busy, 0);
	wake_up_all(&cprof_eof_wq);
	return 0;
}

/*
 * rmmod: end the profile and give the reader a while to read the rest of
 * the stream to its end, so unloading loses nothing.  A reader that does
 * not read is cut off by procfs when the files are removed.
 */
void cprof_stream_unload(void)
{
	WRITE_ONCE(cprof_unloading, true);
	wake_up_all(&cprof_wq);
	wait_event_timeout(cprof_eof_wq, !cprof_stream_busy() ||
			   READ_ONCE(cprof_eof),
			   msecs_to_jiffies(CPROF_UNLOAD_WAIT_MS));
}

/* After the ticks are gone: no kick may still be in flight. */
void cprof_stream_exit(void)
{
	irq_work_sync(&cprof_kick_work);
}
