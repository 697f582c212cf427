/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * profile - aggregation of a decoded cprof stream.
 *
 * Samples are merged on (stack, pid, tid, cpu, cgroup, comm, off_state,
 * waiter): memory
 * grows with the number of distinct keys, not with the number of samples.
 * Stacks are interned once; a sample's Python frames (its trailer: each
 * code object, instruction and first line) are part of its stack.  Each sample weighs its CPU's effective period:
 * the header's period_ns, replaced by THROTTLE records of that CPU from
 * their time on.  A task's time off the CPU (an OFFCPU record and the
 * ONCPU record of its return, in either order; without its return by the
 * END record, until then) counts every events and every times that time.
 * A THREAD record of a snapshot counts once, with its time off the CPU
 * so far (on the CPU: PROF_ON_CPU, 0 ns).
 * MMAP records are kept per pid for the symbolizer (one that repeats the
 * pid's last record is not kept again; past profile__cap_mmaps(), those no
 * sample uses are dropped); LOST records are summed per CPU.  A profile
 * of kind trace keeps its SWITCH and WAKE records too (timeline.h).
 */
#ifndef CPROF_PROFILE_H
#define CPROF_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cprof_format.h"

struct profile;

/* One interned stack. */
struct prof_stack {
	const uint64_t *ips;	/* nr_kernel then nr_user, each innermost first */
	unsigned int nr_kernel;
	unsigned int nr_user;
	int user_mode;		/* ips[nr_kernel] is an instruction, not a return address */
	/* the thread's Python frames (a sample's trailer), innermost first */
	const struct cprof_pyframe *py;
	unsigned int nr_py;
	/*
	 * With Python frames: both walks reached the thread's outermost
	 * frame (the Python one CPROF_PY_COMPLETE, the user one neither cut
	 * at the depth nor stopped by a bad frame).
	 */
	bool py_whole;
	/*
	 * A walk stopped short of the thread's outermost frame: at the depth
	 * or at the module's per-event access budget (the kernel or the user
	 * walk flagged truncated, or the Python walk CPROF_PY_DEPTH).
	 */
	bool truncated;
};

/* One aggregation key and its totals. */
struct prof_sample {
	uint32_t stack;		/* for profile__stack() */
	uint32_t pid, tid, cpu;
	uint64_t cgroup;	/* cgroup v2 id, 0: not in the stream */
	char comm[CPROF_COMM_LEN];	/* NUL-terminated */
	unsigned int off_state;	/* PROF_ON_CPU, or 1 + enum cprof_off_state */
	/* kind mutex: the thread woken (0: none) */
	uint32_t waiter_pid, waiter_tid;
	char waiter_comm[CPROF_COMM_LEN];	/* NUL-terminated */
	uint64_t count;		/* samples, or times it left the CPU */
	/* sum of their effective periods, or time off; kind heap: bytes */
	uint64_t nanos;
	/* kind heap: of count and nanos, those not seen freed */
	uint64_t live_count, live_bytes;
	uint64_t first_ns;	/* earliest sample time (sample clock) */
};

/* prof_sample.off_state of a tick's sample: on the CPU. */
#define PROF_ON_CPU	0

/* hdr is copied.  NULL on allocation failure. */
struct profile *profile__new(const struct cprof_header *hdr);
/*
 * A profile of part of a stream (a window of it), whose MMAP and THROTTLE
 * records go to maps, a profile of the whole stream: they are looked up
 * there, and ignored by profile__add() on the window.  maps must outlive
 * the window.  NULL on allocation failure.
 */
struct profile *profile__new_window(const struct cprof_header *hdr,
				    const struct profile *maps);
/* NULL-safe. */
void profile__free(struct profile *p);

/* Account one record checked by stream__next().  0 ok, -1 out of memory. */
int profile__add(struct profile *p, const struct cprof_rec *rec);

const struct cprof_header *profile__header(const struct profile *p);
/* The END record, NULL if none was added. */
const struct cprof_end *profile__end(const struct profile *p);
/* Sample records added (before aggregation). */
uint64_t profile__nr_records(const struct profile *p);
/*
 * Of those, how many have user frames, and how many of these the module
 * walked with unwind tables (the others by frame pointers only).
 */
void profile__user_walks(const struct profile *p, uint64_t *user,
			 uint64_t *table);

/* Aggregated keys, in the order they first appeared. */
size_t profile__nr_samples(const struct profile *p);
const struct prof_sample *profile__sample(const struct profile *p, size_t i);
void profile__stack(const struct profile *p, uint32_t id, struct prof_stack *st);

/*
 * The MMAP record of pid covering ip at time_ns: the latest one with
 * time_ns <= the given time, else the earliest covering one.  NULL if none.
 * Owned by p.
 */
const struct cprof_mmap *profile__find_mmap(const struct profile *p,
					    uint32_t pid, uint64_t ip,
					    uint64_t time_ns);

/*
 * Has any MMAP record of pid mapped anonymous code (CPROF_ANON_NAME: a
 * JIT's)?  False means none of its frames is in such code, without a
 * lookup per frame; true may remain after a sweep dropped the record.
 */
bool profile__pid_has_anon(const struct profile *p, uint32_t pid);

/*
 * Keep at most about bytes of MMAP records that no sample's user frame is
 * in (as profile__find_mmap() finds them at the sample's first time); a
 * record past that is dropped, with those of the same address range of the
 * same pid first (the newest stays), then from the pids with the most,
 * each one's oldest first, down to half of bytes.  For a profile whose
 * samples are its own (not a window's maps).  0: no cap (the default).
 */
void profile__cap_mmaps(struct profile *p, size_t bytes);
/* MMAP records dropped past that cap. */
uint64_t profile__mmaps_dropped(const struct profile *p);

/*
 * Drop the MMAP records of every pid for which gone(pid, arg) says true (a
 * process that exited, in a run of weeks).  How many pids were dropped.
 */
size_t profile__drop_pids(struct profile *p,
			  bool (*gone)(uint32_t pid, void *arg), void *arg);
/*
 * Drop the THROTTLE records older than the latest one at or before
 * time_ns, on each CPU: the periods of samples from time_ns on are
 * unchanged (a run of weeks keeps only those its open windows need).
 * How many were dropped.
 */
size_t profile__drop_periods(struct profile *p, uint64_t time_ns);
/* Pids with MMAP records. */
size_t profile__nr_pids(const struct profile *p);
/*
 * fn(mm, arg) for every MMAP record (pid by pid, each pid's in stream
 * order) until it returns non-zero, which is returned; else 0.
 */
int profile__for_each_mmap(const struct profile *p,
			   int (*fn)(const struct cprof_mmap *mm, void *arg),
			   void *arg);

/*
 * Samples lost on cpu according to LOST records; *nanos gets them weighted
 * by that CPU's period at the time.  cpu < header.nr_cpu_ids.
 */
uint64_t profile__lost(const struct profile *p, unsigned int cpu,
		       uint64_t *nanos);
/*
 * Times off the CPU counted until the profile's end, their return not seen
 * (still off the CPU then, or its record lost), and returns without their
 * leaving (lost).
 */
void profile__off_unmatched(const struct profile *p, uint64_t *open,
			    uint64_t *orphans);
/*
 * The most bytes of leavings and returns kept for their other half.  A
 * stream has at most one a task it writes for (the module records a
 * task's return before it can leave again): tens of thousands of tasks
 * at most, a few hundred bytes each; a stream of leavings that never
 * come back (made, not recorded) is not kept past this.
 */
#define PROFILE_OFF_KEEP_MAX	(32u << 20)

/*
 * Leavings and returns not kept for their other half, past the bytes kept
 * (a made stream's: their time is not counted).
 */
uint64_t profile__off_dropped(const struct profile *p);
/*
 * Times off the CPU counted (*waits), those whose record stands for more
 * than one switch (*weighted: the module recorded 1 in every, over its
 * budget); returns the largest every seen (1: every switch recorded).
 */
uint32_t profile__off_sampled(const struct profile *p, uint64_t *waits,
			      uint64_t *weighted);
/* Sum over all CPUs of LOST samples, and of other lost records. */
uint64_t profile__lost_total(const struct profile *p, uint64_t *other);

struct timeline;
/*
 * A profile of kind trace: its SWITCH and WAKE records, each switch with
 * the sample of its leaving task's stacks (timeline.h).  NULL for another
 * kind.  Owned by p.
 */
const struct timeline *profile__timeline(const struct profile *p);

#endif /* CPROF_PROFILE_H */
