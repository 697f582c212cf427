/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Types shared by the units of the module.  Each unit's interface is in its
 * own header; this one holds the settings and the per-CPU state.
 */
#ifndef CPROF_H
#define CPROF_H

#include <linux/cpumask.h>
#include <linux/hrtimer.h>
#include <linux/stddef.h>
#include <linux/types.h>

#include "cprof_format.h"
#include "ring.h"

#define CPROF_FREQ_MAX		100000	/* 10 us period */
#define CPROF_SECONDS_MAX	86400
#define CPROF_BUDGET_DEFAULT	25	/* % of a CPU, as perf's default */

/* What ctl shows and sets; frozen while a profile runs. */
struct cprof_settings {
	/* Copied by assignment; cpus is a pointer or an array by config. */
	struct_group(scalars,
		u32 freq;
		u32 seconds;
		u32 depth;
		u32 pid;		/* tgid, 0 = all */
		u32 mode;		/* enum cprof_mode */
		u32 budget;		/* handler time, % of a CPU */
		bool idle;
		bool all_cpus;
	);
	cpumask_var_t cpus;	/* meaningful when !all_cpus */
};

/* Counters since the module was loaded; written by one CPU only. */
struct cprof_cpu_stats {
	u64 samples;
	u64 lost;
	u64 user_faults;
	u64 user_truncated;
	u64 kernel_truncated;
	u64 throttles;
	u64 handler_ns_total;
	u64 handler_ns_max;
	u64 ticks;
};

struct cprof_cpu {
	struct hrtimer timer;
	struct cprof_ring ring;
	struct cprof_cpu_stats stats;
	u64 period_ns;		/* effective period, >= the requested one */
	u64 avg_ns;		/* moving average of the handler time */
	u64 lost_pending;	/* samples lost, not yet reported */
	u64 lost_since;		/* time of the first unreported loss */
	u64 lost_profile;	/* samples lost in this profile */
	bool period_changed;	/* a THROTTLE record is owed */
};

#endif /* CPROF_H */
