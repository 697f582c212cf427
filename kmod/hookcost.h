/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CPROF_HOOKCOST_H
#define CPROF_HOOKCOST_H

#include <linux/types.h>

/*
 * One CPU's time recording the events of a hook that records every one
 * (kinds threadcreate, mutex and trace), against ctl's budget: its own CPU only
 * writes it; hookcost.c reads its fields.
 */
struct cprof_hookcost {
	u64 window_start;
	u64 window_ns;		/* spent recording in this window */
	u64 ns_total;		/* since load */
	u64 ns_max;		/* the longest record */
};

void cprof_hookcost_reset(struct cprof_hookcost *hc);
bool cprof_hookcost_over(struct cprof_hookcost *hc, u64 now, u32 budget);
void cprof_hookcost_add(struct cprof_hookcost *hc, u64 dt);
void cprof_hookcost_stats(const struct cprof_hookcost *hc, u64 *total,
			  u64 *max);

#endif /* CPROF_HOOKCOST_H */
