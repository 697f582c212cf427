/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Types shared by the units of the module.  Each unit's interface is in its
 * own header; this one holds the settings and the per-CPU counters.
 */
#ifndef CPROF_H
#define CPROF_H

#include <linux/cpumask.h>
#include <linux/gfp.h>
#include <linux/stddef.h>
#include <linux/types.h>

#include "cprof_format.h"

#define CPROF_NO_DEADLINE	U64_MAX	/* seconds=0: until stopped */
#define CPROF_BUDGET_DEFAULT	25	/* % of a CPU, as perf's default */
#define CPROF_BUDGET_MAX	50	/* the throttle must always be able to act */
#define CPROF_UNWIND_MB_DEFAULT	64	/* unwind tables, all files together */
#define CPROF_UNWIND_MB_MAX	4096
/* bytes a stack copy: four times perf's default, for deep big frames */
#define CPROF_USTACK_DEFAULT	CPROF_USTACK_MAX
/*
 * User accesses a tick or a recorded switch may make (struct
 * cprof_uaccess): at most ~50 us of cold reads (docs/BENCHMARKS.md); the
 * most is more than any event can take.
 */
#define CPROF_ACCESSES_DEFAULT	256
#define CPROF_ACCESSES_MAX	4096
/* frames a recorded switch walks, kernel and user each: runqueue locked */
#define CPROF_OFFCPU_DEPTH_DEFAULT	32
/* kind heap: bytes between samples on average (Go's MemProfileRate) */
#define CPROF_HEAP_RATE_DEFAULT	(512 * 1024)
#define CPROF_HEAP_RATE_MAX	1073741824
/* kind heap: KiB for the allocations sampled and not yet freed */
#define CPROF_HEAP_KB_DEFAULT	1024
#define CPROF_HEAP_KB_MAX	262144

/* kind heap: the allocator's functions probed, ctl's heap_<name>= */
enum cprof_heap_fn {
	CPROF_HEAP_MALLOC,
	CPROF_HEAP_CALLOC,
	CPROF_HEAP_REALLOC,
	CPROF_HEAP_MEMALIGN,	/* posix_memalign */
	CPROF_HEAP_FREE,
	CPROF_HEAP_NR_FN,
};

/* What ctl shows and sets; frozen while a profile runs. */
struct cprof_settings {
	/* Copied by assignment; cpus is a pointer or an array by config. */
	struct_group(scalars,
		u32 freq;
		u32 seconds;		/* 0: until stopped */
		u32 depth;
		u32 pid;		/* tgid, 0 = all */
		u32 mode;		/* enum cprof_mode */
		u32 budget;		/* handler time, % of a CPU */
		u32 unwind_mb;		/* memory for unwind tables */
		u32 ustack;		/* bytes a stack copy, 0: none */
		u32 kind;		/* enum cprof_kind */
		u32 accesses;		/* user accesses an event may make */
		u32 offcpu_depth;	/* frames a recorded switch walks */
		u32 heap_rate;		/* kind heap: mean bytes per sample */
		u32 heap_kb;		/* kind heap: live allocations kept */
		/* kind heap: each function's address in pid's memory, or 0 */
		u64 heap_fn[CPROF_HEAP_NR_FN];
		bool idle;
		bool all_cpus;
	);
	cpumask_var_t cpus;	/* meaningful when !all_cpus */
};

static inline int cprof_settings_alloc(struct cprof_settings *s)
{
	return zalloc_cpumask_var(&s->cpus, GFP_KERNEL) ? 0 : -ENOMEM;
}

static inline void cprof_settings_free(struct cprof_settings *s)
{
	free_cpumask_var(s->cpus);
}

static inline void cprof_settings_copy(struct cprof_settings *dst,
				       const struct cprof_settings *src)
{
	dst->scalars = src->scalars;
	cpumask_copy(dst->cpus, src->cpus);
}

/* Counters since the module was loaded; written by one CPU only. */
struct cprof_cpu_stats {
	u64 samples;
	u64 lost;
	u64 user_faults;
	u64 user_truncated;
	u64 user_table;		/* user walks that used an unwind table */
	u64 ustack_copies;	/* CPROF_REC_USTACK records written */
	u64 ustack_bytes;	/* the stack bytes they hold */
	u64 ustack_skipped;	/* copies wanted, the buffer too full */
	u64 python_walks;	/* samples with Python frames looked for */
	u64 python_frames;	/* the frames they hold */
	u64 python_incomplete;	/* of the walks, not to the first frame */
	u64 python_codes;	/* CPROF_REC_PYCODE records written */
	u64 python_codes_skipped; /* code records wanted, the buffer too full */
	u64 offcpu_events;	/* CPROF_REC_OFFCPU records written */
	u64 offcpu_full;	/* switches to record, no slot to time them */
	u64 offcpu_ns_total;	/* time the hook took recording them */
	u64 offcpu_ns_max;	/* the longest, runqueue locked */
	u64 offcpu_accesses_max; /* the most user accesses one made */
	u64 offcpu_budget_truncated; /* of them, walks cut for accesses */
	u64 threadcreate_events;	/* task creations recorded */
	u64 threadcreate_skipped;	/* creations not recorded: over budget */
	u64 threadcreate_ns_total;	/* time the hook took recording them */
	u64 threadcreate_ns_max;	/* the longest */
	u64 mutex_events;	/* futex wake-ups recorded */
	u64 mutex_noted;	/* futex sleeps noted */
	u64 mutex_full;		/* sleeps not noted: no slot */
	u64 mutex_skipped;	/* wake-ups not recorded: over budget */
	u64 mutex_ns_total;	/* time the hook took recording them */
	u64 mutex_ns_max;	/* the longest */
	u64 trace_switches;	/* context switches recorded */
	u64 trace_wakes;	/* wake-ups recorded */
	u64 trace_stacks;	/* stacks of tasks leaving recorded */
	u64 trace_skipped;	/* stacks not walked: over budget */
	u64 trace_nostack_ring;	/* stacks not walked: ring half full */
	u64 trace_ns_total;	/* time the probes took, every record */
	u64 trace_ns_max;	/* the longest */
	u64 heap_events;	/* allocations recorded */
	u64 heap_frees;		/* frees of those recorded */
	u64 heap_full;		/* allocations sampled, no room to keep */
	u64 heap_free_lost;	/* frees of those, no room to record */
	u64 heap_skipped;	/* allocations sampled, over budget */
	u64 heap_ns_total;	/* time the probes took recording */
	u64 heap_ns_max;	/* the longest */
	u64 accesses_max;	/* the most user accesses one tick made */
	u64 budget_truncated;	/* ticks whose walks ran out of accesses */
	u64 budget_skipped;	/* stack copies, code records: none left */
	u64 kernel_truncated;
	u64 throttles;
	u64 handler_ns_total;
	u64 handler_ns_max;
	u64 overhead_ns_total;	/* estimated entry, exit and re-arm */
	u64 ticks;
};

#endif /* CPROF_H */
