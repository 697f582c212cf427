// SPDX-License-Identifier: GPL-2.0
/*
 * What a user walk looks up about an address, kept by each CPU from one
 * tick to the next.
 *
 * A table step asks three questions of an address: which mapping of the
 * address space holds it (maps.c: the address space's entry in a hash, a
 * binary search of its ranges), the table of that mapping's file
 * (utable.c: another hash) and the row covering its offset (a search of
 * the rows of its page).  A profiled program asks the same ones tick
 * after tick: its loop's few addresses, the C library's start code, its
 * _start.  Each CPU keeps the answers: the address space they are for
 * (mm, thread group, exec count), its mapping list, the last two files
 * found in it, and a direct-mapped cache of rows keyed by table and
 * offset, which outlives a change of address space (the C library's rows
 * are every program's).
 *
 * What is kept points into RCU-protected data (mapping lists, tables),
 * freed a grace period after they are replaced or removed, not when a
 * tick is done with them.  So each is stamped with the generations of
 * maps.c and utable.c it was found under; a writer bumps its generation
 * after unpublishing and before the grace period that frees (release),
 * and a walk reads the generations inside its RCU read side (acquire)
 * before using anything kept: a walk that still sees the old generation
 * began before that grace period, which waits for it; one that began
 * after sees the new generation and looks up afresh.
 *
 * A CPU's copy is used with interrupts disabled only (the tick, the
 * scheduler's hook, an IPI), which keeps walks on one CPU from nesting;
 * a walk in process context (a snapshot of a thread off its CPU) looks up
 * with a fresh copy of its own, without rows, as the walk did before.
 */
#include <linux/hash.h>
#include <linux/irqflags.h>
#include <linux/jiffies.h>
#include <linux/percpu.h>
#include <linux/sched.h>
#include <linux/string.h>

#include "maps.h"
#include "ulookup.h"

#define CPROF_UROWS_BITS	6

/* A row found: in the table whose rows are at @ent, for offset @off. */
struct cprof_urow_memo {
	const void *ent;		/* NULL: empty */
	u64 off;
	struct cprof_urow row;		/* CPROF_CFA_NONE: none covers it */
};

struct cprof_urows {
	unsigned long utable_gen;
	struct cprof_urow_memo memo[BIT(CPROF_UROWS_BITS)];
};

static DEFINE_PER_CPU(struct cprof_ulookup, cprof_ulookup_cpu);
static DEFINE_PER_CPU(struct cprof_urows, cprof_urows_cpu);

/* Forget the address space's lookups (not the rows). */
static void cprof_ulookup_clear(struct cprof_ulookup *lk,
				struct task_struct *tsk,
				unsigned long maps_gen,
				unsigned long utable_gen)
{
	lk->mm = tsk->mm;
	lk->tgid = tsk->tgid;
	lk->exec_id = READ_ONCE(tsk->self_exec_id);
	lk->maps_gen = maps_gen;
	lk->utable_gen = utable_gen;
	lk->st = NULL;
	lk->st_known = false;
	lk->cur = 0;
	lk->file[0].start = 0;
	lk->file[0].end = 0;
	lk->file[1].start = 0;
	lk->file[1].end = 0;
}

/**
 * cprof_ulookup_start() - the lookups for a walk of @tsk's user stack
 * @tsk: as for cprof_unwind_user()
 * @own: the caller's, used (cleared) when interrupts are enabled
 *
 * With interrupts disabled, this CPU's copy: what earlier walks found,
 * if still good for @tsk's address space, else cleared.
 *
 * Context: inside the walk's rcu_read_lock(), which keeps what the
 * lookups return valid until it ends.
 * Return: the lookups to pass to the functions below.
 */
struct cprof_ulookup *cprof_ulookup_start(struct task_struct *tsk,
					  struct cprof_ulookup *own)
{
	unsigned long maps_gen = cprof_maps_gen();
	unsigned long utable_gen = cprof_utable_gen();
	struct cprof_ulookup *lk;
	struct cprof_urows *rows;

	if (!irqs_disabled()) {
		cprof_ulookup_clear(own, tsk, maps_gen, utable_gen);
		own->rows = NULL;
		return own;
	}
	lk = this_cpu_ptr(&cprof_ulookup_cpu);
	rows = this_cpu_ptr(&cprof_urows_cpu);
	if (rows->utable_gen != utable_gen) {
		memset(rows->memo, 0, sizeof(rows->memo));
		rows->utable_gen = utable_gen;
	}
	lk->rows = rows;
	if (lk->mm != tsk->mm || lk->tgid != tsk->tgid ||
	    lk->exec_id != READ_ONCE(tsk->self_exec_id) ||
	    lk->maps_gen != maps_gen || lk->utable_gen != utable_gen)
		cprof_ulookup_clear(lk, tsk, maps_gen, utable_gen);
	return lk;
}

/**
 * cprof_ulookup_maps() - the mappings emitted for the walked address space
 * @lk: from cprof_ulookup_start()
 *
 * Context: as cprof_ulookup_start().
 * Return: as cprof_maps_find(): NULL when none were emitted yet.
 */
const struct cprof_mmstate *cprof_ulookup_maps(struct cprof_ulookup *lk)
{
	if (!lk->st_known) {
		lk->st = cprof_maps_find(lk->mm, lk->tgid, lk->exec_id);
		lk->st_known = true;
	}
	return lk->st;
}

/**
 * cprof_ulookup_file() - the mapping holding @at, with its file's table
 * @lk: from cprof_ulookup_start()
 * @at: a user address
 *
 * One of the two kept, else looked up in place of the one used less
 * lately.
 *
 * Context: as cprof_ulookup_start().
 * Return: the mapping, or NULL when no emitted range of a file holds @at.
 */
const struct cprof_ufile *cprof_ulookup_file(struct cprof_ulookup *lk,
					     unsigned long at)
{
	const struct cprof_file_pos *pos;
	unsigned long now = jiffies;
	struct cprof_ufile *u;

	u = &lk->file[lk->cur];
	if (at < u->start || at >= u->end) {
		u = &lk->file[!lk->cur];
		if (at < u->start || at >= u->end) {
			pos = cprof_maps_file_pos(cprof_ulookup_maps(lk), at);
			if (!pos)
				return NULL;
			u->start = pos->start;
			u->end = pos->end;
			u->pgoff = pos->pgoff;
			u->has_table = cprof_utable_get(pos, &u->table);
			u->touched = now;
		}
		lk->cur = !lk->cur;
	}
	/* kept from an earlier tick: the table is in use still */
	if (u->has_table && u->touched != now) {
		cprof_utable_touch(&u->table, now);
		u->touched = now;
	}
	return u;
}

/**
 * cprof_ulookup_row() - the row of @u's table that covers @at
 * @lk: from cprof_ulookup_start()
 * @u: from cprof_ulookup_file(@lk, @at), with a table
 * @at: a user address in @u
 * @row: filled in when found
 *
 * Context: as cprof_ulookup_start().
 * Return: as cprof_utable_row(): false when no row covers @at with a rule.
 */
bool cprof_ulookup_row(struct cprof_ulookup *lk, const struct cprof_ufile *u,
		       unsigned long at, struct cprof_urow *row)
{
	u64 off = at - u->start + u->pgoff;
	struct cprof_urow_memo *m;
	bool found;

	if (!lk->rows)
		return cprof_utable_row(&u->table, off, row);
	m = &lk->rows->memo[hash_64(off ^ (unsigned long)u->table.ent,
				    CPROF_UROWS_BITS)];
	if (m->ent == u->table.ent && m->off == off) {
		*row = m->row;
		return row->cfa_base != CPROF_CFA_NONE;
	}
	found = cprof_utable_row(&u->table, off, row);
	m->ent = u->table.ent;
	m->off = off;
	if (found)
		m->row = *row;
	else
		m->row = (struct cprof_urow){ .cfa_base = CPROF_CFA_NONE };
	return found;
}
