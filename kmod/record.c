// SPDX-License-Identifier: GPL-2.0
/*
 * A profile's recorders: the rings and ticks first, then the scheduler's
 * hook (kinds offcpu and wall), the task creation's (threadcreate), the
 * futex sleeps' and wake-ups' (mutex), the switches' and wake-ups'
 * (trace) or a process's allocator's probes (heap) that write into the
 * same rings; they record once all are in place (cprof_record_open()), so
 * that a profile's start is when each of them records.  Stopped hooks and
 * ticks together, so that after a stop nothing writes.  The units below
 * know nothing of each other's lifetime: a hook reserves through
 * sample.c, which never calls back.
 */
#include "heap.h"
#include "mutex.h"
#include "newtask.h"
#include "offcpu.h"
#include "record.h"
#include "sample.h"
#include "trace.h"

/**
 * cprof_record_start() - give the profile its rings, ticks and hook
 * @set: the profile's settings, read until cprof_record_stop()
 * @period_ns: the requested period
 *
 * They record nothing until cprof_record_open().
 *
 * Context: process, may sleep; no profile running.
 * Return: 0, or cprof_sample_start()'s, cprof_offcpu_start()'s,
 * cprof_newtask_start()'s, cprof_mutex_start()'s, cprof_trace_start()'s
 * or cprof_heap_start()'s error, nothing left running or allocated then.
 */
int cprof_record_start(const struct cprof_settings *set, u64 period_ns)
{
	int err;

	err = cprof_sample_start(set, period_ns);
	if (err || set->kind == CPROF_KIND_CPU)
		return err;
	if (set->kind == CPROF_KIND_THREADCREATE)
		err = cprof_newtask_start(set);
	else if (set->kind == CPROF_KIND_MUTEX)
		err = cprof_mutex_start(set);
	else if (set->kind == CPROF_KIND_TRACE)
		err = cprof_trace_start(set);
	else if (set->kind == CPROF_KIND_HEAP)
		err = cprof_heap_start(set);
	else
		err = cprof_offcpu_start(set);
	if (err) {
		cprof_sample_stop();
		cprof_sample_release();
	}
	return err;
}

/**
 * cprof_record_open() - let the recorders record from a time on
 * @from: the profile's start, after cprof_record_start() returned
 * @deadline_ns: the recorders stop writing then by themselves;
 *	CPROF_NO_DEADLINE: only cprof_record_stop() ends them
 *
 * Context: any, after cprof_record_start().
 */
void cprof_record_open(u64 from, u64 deadline_ns)
{
	cprof_sample_open(from, deadline_ns);
	cprof_heap_open(deadline_ns);
}

/**
 * cprof_record_target_exited() - has the one process profiled exited?
 *
 * Only a heap profile's recorders follow one process: then it may end.
 *
 * Context: any.
 * Return: true once the process a heap profile probes has exited.
 */
bool cprof_record_target_exited(void)
{
	return cprof_heap_exited();
}

/**
 * cprof_record_stop() - stop the ticks and the hooks
 *
 * After this returns nothing writes into the rings until the next
 * cprof_record_start(); they keep what is in them for the reader.
 * Idempotent, and harmless with no profile running.
 *
 * Context: process, may sleep: waits for a running tick or hook.
 */
void cprof_record_stop(void)
{
	cprof_sample_stop();
	cprof_offcpu_stop();
	cprof_newtask_stop();
	cprof_mutex_stop();
	cprof_trace_stop();
	cprof_heap_stop();
}

/**
 * cprof_record_exit() - stop everything and free what profiles allocated
 *
 * Context: process, may sleep; module unload, or a load failing after
 * cprof_sample_init() succeeded.  No reader is left.
 */
void cprof_record_exit(void)
{
	cprof_record_stop();
	cprof_offcpu_exit();
	cprof_mutex_exit();
	cprof_sample_exit();
}
