// SPDX-License-Identifier: GPL-2.0
/*
 * The budget of a hook that records every event, none sampled away
 * (newtask.c, mutex.c, trace.c): a CPU that spent more than ctl's budget
 * (% of a CPU) of the current CPROF_HOOKCOST_WINDOW_NS recording skips
 * the events (trace.c: the stacks) until the window ends, each counted.
 * docs/design.md, "Tasks created".
 */
#include <linux/compiler.h>
#include <linux/time64.h>

#include "hookcost.h"

#define CPROF_HOOKCOST_WINDOW_NS	(100 * NSEC_PER_MSEC)

/**
 * cprof_hookcost_reset() - a new profile's window
 * @hc: the CPU's
 *
 * Context: process, no hook running; the totals are kept.
 */
void cprof_hookcost_reset(struct cprof_hookcost *hc)
{
	hc->window_start = 0;
	hc->window_ns = 0;
}

/**
 * cprof_hookcost_over() - is this CPU past its budget in the current
 *	window?
 * @hc: its own
 * @now: the time; a window that ended gives way to one starting now
 * @budget: ctl's, % of a CPU
 *
 * Context: the hook, on @hc's CPU, interrupts disabled.
 * Return: true if the event is to be skipped.
 */
bool cprof_hookcost_over(struct cprof_hookcost *hc, u64 now, u32 budget)
{
	if (now - hc->window_start >= CPROF_HOOKCOST_WINDOW_NS) {
		hc->window_start = now;
		hc->window_ns = 0;
	}
	return hc->window_ns >
	       (u64)budget * (CPROF_HOOKCOST_WINDOW_NS / 100);
}

/**
 * cprof_hookcost_add() - count the time a record took
 * @hc: its CPU's
 * @dt: nanoseconds
 *
 * Context: as cprof_hookcost_over().
 */
void cprof_hookcost_add(struct cprof_hookcost *hc, u64 dt)
{
	hc->window_ns += dt;
	WRITE_ONCE(hc->ns_total, hc->ns_total + dt);
	if (dt > hc->ns_max)
		WRITE_ONCE(hc->ns_max, dt);
}

/**
 * cprof_hookcost_stats() - the time spent recording since load
 * @hc: a CPU's
 * @total: set to the sum
 * @max: set to the longest record
 *
 * Context: any; the values may be a little stale.
 */
void cprof_hookcost_stats(const struct cprof_hookcost *hc, u64 *total,
			  u64 *max)
{
	*total = READ_ONCE(hc->ns_total);
	*max = READ_ONCE(hc->ns_max);
}
