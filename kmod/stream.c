// SPDX-License-Identifier: GPL-2.0
/*
 * /proc/cprof/profile: opening it begins a profile session, reading it
 * streams the records as the ticks produce them, and it ends (EOF) after
 * the configured seconds, or with seconds=0 when something else ends it.
 * One reader at a time.
 *
 * The reader drains the per-CPU rings and serves the ticks' mapping
 * requests (maps.c) into a private bounce buffer, handed out in whatever
 * pieces read() asks for; it sleeps between drains unless a tick kicks it.
 * At the end (the deadline, a fatal signal, stop=1, rmmod) it stops the
 * ticks, drains what they collected and closes the stream with
 * CPROF_REC_END.  Other signals do not end the profile: docs/design.md,
 * "One profile: the session", "Buffers and the stream".
 */
#include <linux/err.h>
#include <linux/fs.h>
#include <linux/irqflags.h>
#include <linux/jiffies.h>
#include <linux/mm.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/timekeeping.h>
#include <linux/uaccess.h>
#include <linux/utsname.h>

#include "cprof.h"
#include "ctl.h"
#include "maps.h"
#include "pycode.h"
#include "record.h"
#include "sample.h"
#include "session.h"
#include "snapshot.h"
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
	struct cprof_session *s;
	struct cprof_snap *snap;	/* kind threads: the pass */
	char *buf;		/* pending bytes are [pos, len) */
	size_t len;
	size_t pos;
	u64 samples;
	unsigned int next_cpu;	/* where the next drain starts */
	bool ticks_stopped;	/* cprof_record_stop() was called */
	bool done;		/* the END record is in buf */
};

static void cprof_put_header(struct cprof_reader *rd)
{
	const struct cprof_settings *set = cprof_session_settings(rd->s);
	struct cprof_header *h = (void *)rd->buf;
	u64 start = cprof_session_start_ns(rd->s);

	memset(h, 0, sizeof(*h));
	memcpy(h->magic, CPROF_MAGIC, CPROF_MAGIC_LEN);
	h->version = CPROF_VERSION;
	h->size = sizeof(*h);
	h->nr_cpu_ids = nr_cpu_ids;
	h->online_cpus = num_online_cpus();
	h->freq = set->freq;
	h->depth = set->depth;
	h->period_ns = cprof_session_period(rd->s);
	h->start_time_ns = start;
	h->start_realtime_ns = ktime_get_real_ns() - (ktime_get_ns() - start);
	h->duration_ns = cprof_session_deadline(rd->s) == CPROF_NO_DEADLINE ||
			 rd->snap ? 0 : cprof_session_deadline(rd->s) - start;
	h->mode = set->mode;
	h->kind = set->kind;
	if (set->kind == CPROF_KIND_HEAP)
		h->heap_rate = set->heap_rate;
	h->pid = set->pid;
	h->flags = set->idle ? CPROF_HDR_IDLE : 0;
	h->profile_id = cprof_session_id(rd->s);
	if (cprof_session_kernel_addrs(rd->s))
		h->ksym_schedule = (unsigned long)schedule;
	else
		h->flags |= CPROF_HDR_NO_KERNEL;
	strscpy(h->release, utsname()->release, sizeof(h->release));
	rd->len = sizeof(*h);
}

/**
 * cprof_stream_open() - begin a profile for this open file
 * @file: /proc/cprof/profile, opened by a caller allowed to profile
 * @kernel_addrs: whether that caller may see kernel addresses
 * Return: 0, -EBUSY while another profile runs, -ENODEV while unloading,
 * -EACCES for a kernel-only profile without kernel addresses, -ENOMEM.
 */
int cprof_stream_open(struct file *file, bool kernel_addrs)
{
	struct cprof_reader *rd;
	struct cprof_session *s;
	int err = -ENOMEM;

	rd = kzalloc(sizeof(*rd), GFP_KERNEL);
	if (!rd)
		return -ENOMEM;
	rd->buf = kvmalloc(CPROF_BOUNCE_SIZE, GFP_KERNEL);
	if (!rd->buf)
		goto free_rd;
	mutex_init(&rd->lock);
	s = cprof_ctl_begin_session(kernel_addrs);
	if (IS_ERR(s)) {
		err = PTR_ERR(s);
		goto free_buf;
	}
	rd->s = s;
	cprof_maps_reset();
	cprof_pycode_reset();
	if (cprof_session_settings(s)->kind == CPROF_KIND_THREADS) {
		/* no ticks: the reader takes the snapshot, batch by batch */
		rd->snap = cprof_snap_new(cprof_session_settings(s));
		err = rd->snap ? 0 : -ENOMEM;
	} else {
		err = cprof_record_start(cprof_session_settings(s),
					 cprof_session_period(s));
	}
	if (err)
		goto release;
	/*
	 * Registering the scheduler's hook can take a good part of a second
	 * on a busy machine: the profile starts when everything records, and
	 * nothing may come between the stamp and the opening.  (A stop come
	 * meanwhile keeps the session's first start; the recorders stop
	 * below.)
	 */
	if (!rd->snap &&
	    cprof_session_state(s) == CPROF_SESSION_RUNNING) {
		u64 start;

		local_irq_disable();
		start = ktime_get_ns();
		cprof_record_open(start, cprof_session_deadline_at(s, start));
		local_irq_enable();
		cprof_session_started(s, start);
	}
	cprof_put_header(rd);
	/*
	 * A "stop=1" since the session began found no ticks to stop, or
	 * stopped some while they were being armed: they stop now, as that
	 * write promised, not at the reader's first read.
	 */
	if (cprof_session_state(s) != CPROF_SESSION_RUNNING)
		cprof_record_stop();
	file->private_data = rd;
	return 0;

release:
	cprof_session_release(s);
free_buf:
	kvfree(rd->buf);
free_rd:
	kfree(rd);
	return err;
}

/*
 * Move what the ticks produced into the bounce buffer, starting each time
 * with the next CPU so that a full buffer favours none.
 */
static void cprof_reader_fill(struct cprof_reader *rd)
{
	int cpu;

	rd->len += cprof_maps_sync(rd->buf + rd->len,
				   CPROF_BOUNCE_SIZE - rd->len);
	rd->next_cpu = (rd->next_cpu + 1) % nr_cpu_ids;
	for_each_cpu_wrap(cpu, cpu_possible_mask, rd->next_cpu)
		rd->len += cprof_sample_drain(cpu, rd->buf + rd->len,
					      CPROF_BOUNCE_SIZE - rd->len,
					      &rd->samples);
}

/*
 * After the last drain: report losses not yet in a ring (as many as fit;
 * the END record has the total), then the end.
 */
static void cprof_reader_finish(struct cprof_reader *rd)
{
	struct cprof_end *e;
	u64 lost = 0;

	/* (a snapshot has no rings: the last profile's counts are not its) */
	if (!rd->snap)
		rd->len += cprof_sample_flush_lost(rd->buf + rd->len,
						   CPROF_BOUNCE_SIZE - rd->len -
						   sizeof(*e), &lost);
	e = (void *)(rd->buf + rd->len);
	memset(e, 0, sizeof(*e));
	e->rec.type = CPROF_REC_END;
	e->rec.size = sizeof(*e);
	e->time_ns = ktime_get_ns();
	e->duration_ns = cprof_session_stop_ns(rd->s) -
			 cprof_session_start_ns(rd->s);
	e->reason = cprof_session_reason(rd->s);
	e->samples = rd->samples;
	e->lost = lost;
	rd->len += sizeof(*e);
	rd->done = true;
}

/*
 * Should the profile end now?  Stops the ticks the first time it should.
 * A snapshot ends when its pass is done, whatever the seconds; a profile
 * of one process (kind heap) when the process has exited.
 */
static bool cprof_reader_should_stop(struct cprof_reader *rd)
{
	if (fatal_signal_pending(current))
		cprof_session_stop(rd->s, CPROF_END_SIGNAL);
	else if (rd->snap ? cprof_snap_done(rd->snap) :
		 ktime_get_ns() >= cprof_session_deadline(rd->s) ||
		 cprof_record_target_exited())
		cprof_session_stop(rd->s, CPROF_END_COMPLETE);
	if (cprof_session_state(rd->s) == CPROF_SESSION_RUNNING)
		return false;
	if (!rd->ticks_stopped) {
		cprof_record_stop();
		rd->ticks_stopped = true;
	}
	return true;
}

/*
 * Produce more bytes into the bounce buffer, sleeping if there are none.
 * -ERESTARTSYS: a signal is pending and there is nothing to give yet; the
 * profile goes on.
 */
static int cprof_reader_produce(struct cprof_reader *rd)
{
	u64 deadline = cprof_session_deadline(rd->s), now;
	long timeout;

	bool stop = cprof_reader_should_stop(rd);

	if (rd->snap) {
		if (stop)
			cprof_reader_finish(rd);
		else
			rd->len += cprof_snap_fill(rd->snap, rd->buf + rd->len,
						   CPROF_BOUNCE_SIZE - rd->len,
						   &rd->samples);
		return 0;
	}
	if (!stop) {
		cprof_reader_fill(rd);
		if (rd->len)
			return 0;
		if (signal_pending(current))
			return -ERESTARTSYS;
		/* With no deadline, deadline - now is about U64_MAX. */
		now = ktime_get_ns();
		timeout = nsecs_to_jiffies(min_t(u64, deadline > now ?
						 deadline - now : 0,
						 CPROF_DRAIN_MS * NSEC_PER_MSEC));
		timeout = max(timeout, 1L);
		cprof_session_wait(rd->s, timeout);
		return 0;
	}
	cprof_reader_fill(rd);
	/* A full bounce buffer or the maps room may hold data back. */
	if (!rd->len && cprof_sample_drained() && !cprof_maps_pending())
		cprof_reader_finish(rd);
	return 0;
}

/**
 * cprof_stream_read() - read the stream of a profile: header, records, END
 * @file: opened by cprof_stream_open()
 * @ubuf: where the bytes go
 * @count: room at @ubuf
 * @ppos: unused: the stream is not seekable
 *
 * Blocks until there is something to read or the profile ends.  A read
 * after the END record returns 0 and marks the session ended, so that
 * unloading need not wait for the reader to close the file.
 *
 * Context: process; sleeps.
 * Return: the bytes read, 0 at the end, -ERESTARTSYS on a signal or
 * -EFAULT.
 */
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
		ret = cprof_reader_produce(rd);
		if (ret)
			goto unlock;
	}
	if (rd->pos < rd->len) {
		n = min(count, rd->len - rd->pos);
		if (copy_to_user(ubuf, rd->buf + rd->pos, n)) {
			ret = -EFAULT;
		} else {
			rd->pos += n;
			ret = n;
		}
	} else if (cprof_session_state(rd->s) != CPROF_SESSION_ENDED) {
		cprof_session_ended(rd->s);
	}
unlock:
	mutex_unlock(&rd->lock);
	return ret;
}

/**
 * cprof_stream_release() - the reader closed the file: stop its profile
 * @inode: the file's inode
 * @file: opened by cprof_stream_open()
 *
 * The ticks are stopped and the per-CPU buffers and the emitted mappings
 * dropped before the session is released, so the next profile starts clean.
 *
 * Context: process; sleeps.
 * Return: 0.
 */
int cprof_stream_release(struct inode *inode, struct file *file)
{
	struct cprof_reader *rd = file->private_data;

	cprof_session_stop(rd->s, CPROF_END_SIGNAL);
	cprof_record_stop();
	cprof_sample_release();
	cprof_maps_reset();
	cprof_session_release(rd->s);
	cprof_snap_free(rd->snap);
	kvfree(rd->buf);
	kfree(rd);
	return 0;
}
