// SPDX-License-Identifier: GPL-2.0
/*
 * /proc/cprof/{profile,ctl,stats,unwind}: root's files (mode 0400/0600), and
 * beyond that perf's permission model (access.c), checked at every open.
 */
#include <linux/proc_fs.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "access.h"
#include "cprof.h"
#include "ctl.h"
#include "heap.h"
#include "maps.h"
#include "mutex.h"
#include "newtask.h"
#include "offcpu.h"
#include "procfs.h"
#include "sample.h"
#include "session.h"
#include "snapshot.h"
#include "stream.h"
#include "trace.h"
#include "utable.h"

#define CPROF_CTL_WRITE_MAX	4096

static struct proc_dir_entry *cprof_dir;

static int cprof_profile_open(struct inode *inode, struct file *file)
{
	int err = cprof_access_check();

	if (!err)
		err = cprof_stream_open(file, cprof_access_kernel_addrs());
	return err ?: nonseekable_open(inode, file);
}

static const struct proc_ops cprof_profile_ops = {
	.proc_open	= cprof_profile_open,
	.proc_read	= cprof_stream_read,
	.proc_release	= cprof_stream_release,
};

static int cprof_ctl_seq_show(struct seq_file *m, void *v)
{
	cprof_ctl_show(m);
	return 0;
}

/* The settings say who is profiled: read by those who may profile only. */
static int cprof_ctl_open(struct inode *inode, struct file *file)
{
	return cprof_access_check() ?: single_open(file, cprof_ctl_seq_show,
						   NULL);
}

static ssize_t cprof_ctl_write(struct file *file, const char __user *ubuf,
			       size_t count, loff_t *ppos)
{
	char *text;
	int err;

	if (*ppos || !count || count > CPROF_CTL_WRITE_MAX)
		return -EINVAL;
	text = memdup_user_nul(ubuf, count);
	if (IS_ERR(text))
		return PTR_ERR(text);
	err = -EINVAL;
	if (strlen(text) == count)
		err = cprof_ctl_apply(text);
	kfree(text);
	return err ? err : count;
}

static const struct proc_ops cprof_ctl_ops = {
	.proc_open	= cprof_ctl_open,
	.proc_read	= seq_read,
	.proc_write	= cprof_ctl_write,
	.proc_lseek	= seq_lseek,
	.proc_release	= single_release,
};

static void cprof_stats_add(struct cprof_cpu_stats *sum,
			    const struct cprof_cpu_stats *c)
{
	sum->samples += c->samples;
	sum->lost += c->lost;
	sum->user_faults += c->user_faults;
	sum->user_truncated += c->user_truncated;
	sum->user_table += c->user_table;
	sum->ustack_copies += c->ustack_copies;
	sum->ustack_bytes += c->ustack_bytes;
	sum->ustack_skipped += c->ustack_skipped;
	sum->python_walks += c->python_walks;
	sum->python_frames += c->python_frames;
	sum->python_incomplete += c->python_incomplete;
	sum->python_codes += c->python_codes;
	sum->python_codes_skipped += c->python_codes_skipped;
	sum->offcpu_events += c->offcpu_events;
	sum->offcpu_full += c->offcpu_full;
	sum->offcpu_ns_total += c->offcpu_ns_total;
	sum->offcpu_ns_max = max(sum->offcpu_ns_max, c->offcpu_ns_max);
	sum->offcpu_accesses_max = max(sum->offcpu_accesses_max,
				       c->offcpu_accesses_max);
	sum->offcpu_budget_truncated += c->offcpu_budget_truncated;
	sum->threadcreate_events += c->threadcreate_events;
	sum->threadcreate_skipped += c->threadcreate_skipped;
	sum->threadcreate_ns_total += c->threadcreate_ns_total;
	sum->threadcreate_ns_max = max(sum->threadcreate_ns_max,
				       c->threadcreate_ns_max);
	sum->mutex_events += c->mutex_events;
	sum->mutex_noted += c->mutex_noted;
	sum->mutex_full += c->mutex_full;
	sum->mutex_skipped += c->mutex_skipped;
	sum->mutex_ns_total += c->mutex_ns_total;
	sum->mutex_ns_max = max(sum->mutex_ns_max, c->mutex_ns_max);
	sum->trace_switches += c->trace_switches;
	sum->trace_wakes += c->trace_wakes;
	sum->trace_stacks += c->trace_stacks;
	sum->trace_skipped += c->trace_skipped;
	sum->trace_nostack_ring += c->trace_nostack_ring;
	sum->trace_ns_total += c->trace_ns_total;
	sum->trace_ns_max = max(sum->trace_ns_max, c->trace_ns_max);
	sum->heap_events += c->heap_events;
	sum->heap_frees += c->heap_frees;
	sum->heap_full += c->heap_full;
	sum->heap_free_lost += c->heap_free_lost;
	sum->heap_skipped += c->heap_skipped;
	sum->heap_ns_total += c->heap_ns_total;
	sum->heap_ns_max = max(sum->heap_ns_max, c->heap_ns_max);
	sum->accesses_max = max(sum->accesses_max, c->accesses_max);
	sum->budget_truncated += c->budget_truncated;
	sum->budget_skipped += c->budget_skipped;
	sum->kernel_truncated += c->kernel_truncated;
	sum->throttles += c->throttles;
	sum->handler_ns_total += c->handler_ns_total;
	sum->handler_ns_max = max(sum->handler_ns_max, c->handler_ns_max);
	sum->overhead_ns_total += c->overhead_ns_total;
	sum->ticks += c->ticks;
}

static void cprof_stats_print(struct seq_file *m, const char *prefix,
			      const struct cprof_cpu_stats *c)
{
	seq_printf(m, "%ssamples %llu\n", prefix, c->samples);
	seq_printf(m, "%slost %llu\n", prefix, c->lost);
	seq_printf(m, "%suser_faults %llu\n", prefix, c->user_faults);
	seq_printf(m, "%suser_truncated %llu\n", prefix, c->user_truncated);
	seq_printf(m, "%suser_table %llu\n", prefix, c->user_table);
	seq_printf(m, "%sustack_copies %llu\n", prefix, c->ustack_copies);
	seq_printf(m, "%sustack_bytes %llu\n", prefix, c->ustack_bytes);
	seq_printf(m, "%sustack_skipped %llu\n", prefix, c->ustack_skipped);
	seq_printf(m, "%spython_walks %llu\n", prefix, c->python_walks);
	seq_printf(m, "%spython_frames %llu\n", prefix, c->python_frames);
	seq_printf(m, "%spython_incomplete %llu\n", prefix,
		   c->python_incomplete);
	seq_printf(m, "%spython_codes %llu\n", prefix, c->python_codes);
	seq_printf(m, "%spython_codes_skipped %llu\n", prefix,
		   c->python_codes_skipped);
	seq_printf(m, "%soffcpu_events %llu\n", prefix, c->offcpu_events);
	seq_printf(m, "%soffcpu_full %llu\n", prefix, c->offcpu_full);
	seq_printf(m, "%soffcpu_ns_total %llu\n", prefix, c->offcpu_ns_total);
	seq_printf(m, "%soffcpu_ns_max %llu\n", prefix, c->offcpu_ns_max);
	seq_printf(m, "%soffcpu_accesses_max %llu\n", prefix,
		   c->offcpu_accesses_max);
	seq_printf(m, "%soffcpu_budget_truncated %llu\n", prefix,
		   c->offcpu_budget_truncated);
	seq_printf(m, "%sthreadcreate_events %llu\n", prefix,
		   c->threadcreate_events);
	seq_printf(m, "%sthreadcreate_skipped %llu\n", prefix,
		   c->threadcreate_skipped);
	seq_printf(m, "%sthreadcreate_ns_total %llu\n", prefix,
		   c->threadcreate_ns_total);
	seq_printf(m, "%sthreadcreate_ns_max %llu\n", prefix,
		   c->threadcreate_ns_max);
	seq_printf(m, "%smutex_events %llu\n", prefix, c->mutex_events);
	seq_printf(m, "%smutex_noted %llu\n", prefix, c->mutex_noted);
	seq_printf(m, "%smutex_full %llu\n", prefix, c->mutex_full);
	seq_printf(m, "%smutex_skipped %llu\n", prefix, c->mutex_skipped);
	seq_printf(m, "%smutex_ns_total %llu\n", prefix, c->mutex_ns_total);
	seq_printf(m, "%smutex_ns_max %llu\n", prefix, c->mutex_ns_max);
	seq_printf(m, "%strace_switches %llu\n", prefix, c->trace_switches);
	seq_printf(m, "%strace_wakes %llu\n", prefix, c->trace_wakes);
	seq_printf(m, "%strace_stacks %llu\n", prefix, c->trace_stacks);
	seq_printf(m, "%strace_skipped %llu\n", prefix, c->trace_skipped);
	seq_printf(m, "%strace_nostack_ring %llu\n", prefix,
		   c->trace_nostack_ring);
	seq_printf(m, "%strace_ns_total %llu\n", prefix, c->trace_ns_total);
	seq_printf(m, "%strace_ns_max %llu\n", prefix, c->trace_ns_max);
	seq_printf(m, "%sheap_events %llu\n", prefix, c->heap_events);
	seq_printf(m, "%sheap_frees %llu\n", prefix, c->heap_frees);
	seq_printf(m, "%sheap_full %llu\n", prefix, c->heap_full);
	seq_printf(m, "%sheap_free_lost %llu\n", prefix, c->heap_free_lost);
	seq_printf(m, "%sheap_skipped %llu\n", prefix, c->heap_skipped);
	seq_printf(m, "%sheap_ns_total %llu\n", prefix, c->heap_ns_total);
	seq_printf(m, "%sheap_ns_max %llu\n", prefix, c->heap_ns_max);
	seq_printf(m, "%saccesses_max %llu\n", prefix, c->accesses_max);
	seq_printf(m, "%sbudget_truncated %llu\n", prefix,
		   c->budget_truncated);
	seq_printf(m, "%sbudget_skipped %llu\n", prefix, c->budget_skipped);
	seq_printf(m, "%skernel_truncated %llu\n", prefix,
		   c->kernel_truncated);
	seq_printf(m, "%sthrottles %llu\n", prefix, c->throttles);
	seq_printf(m, "%shandler_ns_total %llu\n", prefix,
		   c->handler_ns_total);
	seq_printf(m, "%shandler_ns_max %llu\n", prefix, c->handler_ns_max);
	seq_printf(m, "%soverhead_ns_total %llu\n", prefix,
		   c->overhead_ns_total);
	seq_printf(m, "%sticks %llu\n", prefix, c->ticks);
}

/* One CPU's counters, from each unit that keeps some; its period. */
static u64 cprof_stats_get(int cpu, struct cprof_cpu_stats *c)
{
	u64 period = cprof_sample_stats(cpu, c);

	cprof_offcpu_stats(cpu, c);
	cprof_newtask_stats(cpu, c);
	cprof_mutex_stats(cpu, c);
	cprof_trace_stats(cpu, c);
	cprof_heap_stats(cpu, c);
	return period;
}

/*
 * The totals, then each CPU's lines in a frame of its own: the sum and a
 * CPU's counters are allocated, since two sets of them pass a KASAN
 * build's frame limit (its redzones).
 */
static int cprof_stats_show_total(struct seq_file *m)
{
	struct cprof_cpu_stats *sum, *c;
	int cpu;

	sum = kcalloc(2, sizeof(*sum), GFP_KERNEL);
	if (!sum)
		return -ENOMEM;
	c = sum + 1;
	for_each_possible_cpu(cpu) {
		cprof_stats_get(cpu, c);
		cprof_stats_add(sum, c);
	}
	cprof_stats_print(m, "", sum);
	kfree(sum);
	return 0;
}

static noinline_for_stack void cprof_stats_show_cpus(struct seq_file *m)
{
	struct cprof_cpu_stats c;
	char prefix[24];
	u64 period;
	int cpu;

	for_each_possible_cpu(cpu) {
		period = cprof_stats_get(cpu, &c);
		snprintf(prefix, sizeof(prefix), "cpu%d.", cpu);
		cprof_stats_print(m, prefix, &c);
		seq_printf(m, "%speriod_ns %llu\n", prefix, period);
	}
}

/*
 * Totals first, then cpuN.key lines; counters are since module load.  Each
 * counter is a u64 written by its own CPU: a torn read cannot happen on the
 * 64-bit machines this module builds for, a slightly stale one is fine.
 */
static int cprof_stats_seq_show(struct seq_file *m, void *v)
{
	struct cprof_maps_usage mu;
	u64 tables, bytes, evicted, dropped, unwalked;
	int err;

	seq_printf(m, "profiling %d\n", cprof_session_active());
	seq_printf(m, "buffer_bytes %llu\n", cprof_sample_ring_bytes());
	cprof_utable_usage(&tables, &bytes, &evicted);
	seq_printf(m, "unwind_tables %llu\n", tables);
	seq_printf(m, "unwind_bytes %llu\n", bytes);
	seq_printf(m, "unwind_evicted %llu\n", evicted);
	cprof_snap_usage(&dropped, &unwalked);
	seq_printf(m, "threads_regs_dropped %llu\n", dropped);
	seq_printf(m, "threads_unwalked %llu\n", unwalked);
	cprof_maps_usage(&mu);
	seq_printf(m, "maps_states %llu\n", mu.states);
	seq_printf(m, "maps_bytes %llu\n", mu.bytes);
	seq_printf(m, "maps_limit %llu\n", mu.limit);
	seq_printf(m, "maps_evicted %llu\n", mu.evicted);
	seq_printf(m, "maps_exited %llu\n", mu.exited);
	seq_printf(m, "maps_capped %llu\n", mu.capped);
	err = cprof_stats_show_total(m);
	if (err)
		return err;
	cprof_stats_show_cpus(m);
	return 0;
}

static int cprof_stats_open(struct inode *inode, struct file *file)
{
	return cprof_access_check() ?: single_open(file, cprof_stats_seq_show,
						   NULL);
}

static const struct proc_ops cprof_stats_ops = {
	.proc_open	= cprof_stats_open,
	.proc_read	= seq_read,
	.proc_lseek	= seq_lseek,
	.proc_release	= single_release,
};

static int cprof_unwind_seq_show(struct seq_file *m, void *v)
{
	cprof_utable_show(m);
	return 0;
}

/*
 * Those who may profile load tables and list them; while one has the file
 * open for writing (a loader), the ticks copy stacks its tables may
 * complete.
 */
static int cprof_unwind_open(struct inode *inode, struct file *file)
{
	int err = cprof_access_check() ?:
		  single_open(file, cprof_unwind_seq_show, NULL);

	if (!err && file->f_mode & FMODE_WRITE)
		cprof_utable_loader(true);
	return err;
}

static int cprof_unwind_release(struct inode *inode, struct file *file)
{
	if (file->f_mode & FMODE_WRITE)
		cprof_utable_loader(false);
	return single_release(inode, file);
}

/* One table per write(), whole: see struct cprof_utable. */
static ssize_t cprof_unwind_write(struct file *file, const char __user *ubuf,
				  size_t count, loff_t *ppos)
{
	return cprof_utable_write(ubuf, count);
}

static const struct proc_ops cprof_unwind_ops = {
	.proc_open	= cprof_unwind_open,
	.proc_read	= seq_read,
	.proc_write	= cprof_unwind_write,
	.proc_lseek	= seq_lseek,
	.proc_release	= cprof_unwind_release,
};

/**
 * cprof_procfs_init() - create /proc/cprof and its files
 *
 * Context: module init, once the units the files call are ready.
 * Return: 0 or -ENOMEM (nothing is left behind).
 */
int cprof_procfs_init(void)
{
	cprof_dir = proc_mkdir_mode("cprof", 0500, NULL);
	if (!cprof_dir)
		return -ENOMEM;
	if (!proc_create("profile", 0400, cprof_dir, &cprof_profile_ops) ||
	    !proc_create("ctl", 0600, cprof_dir, &cprof_ctl_ops) ||
	    !proc_create("stats", 0400, cprof_dir, &cprof_stats_ops) ||
	    !proc_create("unwind", 0600, cprof_dir, &cprof_unwind_ops)) {
		proc_remove(cprof_dir);
		return -ENOMEM;
	}
	return 0;
}

/**
 * cprof_procfs_exit() - remove /proc/cprof
 *
 * Waits for readers inside read() to return, and releases open files (a
 * profile's reader stops it): no file operation runs after it.
 *
 * Context: module exit; sleeps.
 */
void cprof_procfs_exit(void)
{
	proc_remove(cprof_dir);
}
