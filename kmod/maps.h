/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CPROF_MAPS_H
#define CPROF_MAPS_H

#include <linux/lockdep.h>
#include <linux/percpu.h>
#include <linux/sched.h>
#include <linux/types.h>
#include <asm/barrier.h>

struct cprof_mmstate;
struct mm_struct;
struct task_struct;

/*
 * The file of a mapping (the key to unwind tables) and where the mapping
 * is: the file offset of an address in [start, end) is address - start +
 * pgoff.
 */
struct cprof_file_pos {
	u64 ino;
	u64 size;
	s64 mtime_ns;
	u64 start;
	u64 end;
	u64 pgoff;
	u32 dev;
};

/* What the address-space states take (cprof_maps_usage()). */
struct cprof_maps_usage {
	u64 states;
	u64 bytes;
	u64 limit;		/* maps_mb */
	u64 evicted;		/* least recently sampled, to make room */
	u64 exited;		/* their process exited or exec'd */
	u64 capped;		/* mappings left out: CPROF_MAPS_RANGES */
};

/* Default of the module parameter maps_mb: all states together. */
#define CPROF_MAPS_MB_DEFAULT	32
#define CPROF_MAPS_MB_MAX	4096

int cprof_maps_init(u64 limit);
void cprof_maps_exit(void);
void cprof_maps_reset(void);
void cprof_maps_usage(struct cprof_maps_usage *u);
bool cprof_maps_exec_addr(struct task_struct *tsk, u64 addr);
u64 cprof_maps_start_ns(struct task_struct *tsk);

/*
 * As cprof_maps_start_ns(), inside an RCU read side: rcu_read_lock(), or
 * interrupts disabled (since 5.0 a grace period waits for those too),
 * which keeps a released task's group_leader from being freed under it.
 */
static inline u64 __cprof_maps_start_ns(struct task_struct *tsk)
{
	return pid_alive(tsk) ? READ_ONCE(tsk->group_leader)->start_boottime :
				0;
}

const struct cprof_mmstate *cprof_maps_of(struct task_struct *tsk);
void cprof_maps_touch(const struct cprof_mmstate *st);

extern unsigned long cprof_mm_epoch;	/* maps.c's, for the inline below */

/**
 * cprof_maps_epoch() - a count of the changes to the emitted ranges
 *
 * What cprof_maps_of() returns for a task, and what cprof_maps_file_pos()
 * then does, stays the same while this does; a change is counted before
 * the state it unhashed is passed to cprof_rcufree().  So a lookup's result
 * kept from an earlier RCU read side may be used in a later one that
 * reads the same count: what it points to is not freed before that one
 * ends.  Inline: every walk with tables reads it.
 *
 * Context: inside an RCU read side, before the lookups whose results are
 * kept by it.
 * Return: the count.
 */
static inline unsigned long cprof_maps_epoch(void)
{
	/* before the lookups it vouches for */
	return smp_load_acquire(&cprof_mm_epoch);
}

/*
 * What this CPU's last cprof_maps_note() looked up: an address space's
 * state, good while the epoch read before the lookup is the current one
 * (cprof_maps_epoch()), and the last two of its ranges that covered a
 * sampled address (a stack's frames are in a few files, and the next
 * tick's mostly in the same ones).  Its callers run with interrupts
 * disabled (checked): no two notes at once on a CPU, so a state and the
 * epoch it was looked up under are always set together.
 */
struct cprof_maps_memo {
	const struct mm_struct *mm;	/* the key, as cprof_mm_lookup()'s */
	pid_t tgid;
	u64 exec_id;
	u64 start_ns;
	unsigned long epoch;
	struct cprof_mmstate *st;	/* NULL: none emitted */
	u64 start[2];			/* covered ranges: [start, end) */
	u64 end[2];			/* 0: none */
	unsigned int next;		/* the one to replace */
};

DECLARE_PER_CPU(struct cprof_maps_memo, cprof_maps_memo);

bool __cprof_maps_note(const u64 *ips, int n, int known, u64 now);

/**
 * cprof_maps_note() - ask for the mappings of current's address space if
 *	a sampled user address is not covered by what was emitted
 * @ips: the sample's user addresses, innermost first
 * @n: how many
 * @known: how many of the first are known to be covered (the walk found
 *	them in the emitted ranges); callers with all @n known skip the call
 * @now: the sample's time, kept with the request
 *
 * Inline, what most events find: each address in one of the last two
 * ranges this CPU's notes found for the address space.
 *
 * Context: the tick, or a hook with interrupts disabled; no allocation, no
 * lock.  Interrupts disabled are also the RCU read side its lookups need.
 * Return: true when a request was queued (the reader should be woken).
 */
static inline bool cprof_maps_note(const u64 *ips, int n, int known, u64 now)
{
	const struct cprof_maps_memo *m = this_cpu_ptr(&cprof_maps_memo);
	struct task_struct *tsk = current;
	int i = known;

	lockdep_assert_irqs_disabled();
	if (m->mm == tsk->mm && m->tgid == tsk->tgid &&
	    m->exec_id == READ_ONCE(tsk->self_exec_id) &&
	    m->start_ns == __cprof_maps_start_ns(tsk) &&
	    m->epoch == cprof_maps_epoch()) {
		for (; i < n; i++)
			if ((ips[i] < m->start[0] || ips[i] >= m->end[0]) &&
			    (ips[i] < m->start[1] || ips[i] >= m->end[1]))
				break;
		if (i == n)
			return false;
	}
	return __cprof_maps_note(ips, n, known, now);
}

const struct cprof_file_pos *cprof_maps_file_pos(const struct cprof_mmstate *st,
						 u64 addr);
bool cprof_maps_settling(const struct cprof_mmstate *st, u64 addr,
			 bool compiling);
bool cprof_maps_pending(void);
size_t cprof_maps_sync(void *dst, size_t room);
size_t cprof_maps_task(struct task_struct *tsk, struct mm_struct *mm,
		       const u64 *addrs, int n, u64 now, void *dst,
		       size_t room);

/* Room a reader should have before calling cprof_maps_sync(). */
#define CPROF_MAPS_ROOM		(64 * 1024)

#endif /* CPROF_MAPS_H */
