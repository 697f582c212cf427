// SPDX-License-Identifier: GPL-2.0
/*
 * Unwind tables for user code without frame pointers.
 *
 * The module does not interpret DWARF: cprof-dump compiles each file's
 * call frame information into rows (cprof_format.h) and writes them to
 * /proc/cprof/unwind.  This unit checks a table whole before installing it,
 * keeps the tables in an RCU hash keyed by the file (device and inode,
 * checked against its size and mtime), indexes each table's rows by page
 * and answers the tick's question without a lock or an allocation: which
 * row holds this offset of that file (cprof_uindex_row(), in
 * cprof/unwind_step.h).  The table of a CPython interpreter's file also
 * carries the interpreter's layout (struct cprof_upy) for pywalk.c.  Their
 * memory is bounded by unwind_mb, the least recently used evicted first.
 * Why: docs/design.md, "Why compiled tables, not a stack copy".
 */
#include <linux/atomic.h>
#include <linux/err.h>
#include <linux/hashtable.h>
#include <linux/jiffies.h>
#include <linux/kdev_t.h>
#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/rcupdate.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "cprof.h"
#include "maps.h"
#include "rcufree.h"
#include "utable.h"

#define CPROF_UTABLE_MAX	16384	/* tables */

/*
 * The header, then page[]: page[p] is the last row at or below offset p <<
 * CPROF_UINDEX_PAGE_SHIFT, so a lookup searches one page's rows; then
 * rule[]; then the rows, ent[].  A lookup reads the header, two entries of
 * page[], a few rows and one rule: all but the rows lie together at the
 * table's start (libc's header, page[] and rule[]: 4 KiB), the rows are
 * the bulk of it (libc's: 110 KiB).
 */
struct cprof_utab {
	struct hlist_node node;
	struct cprof_rcufree free;
	u64 ino;
	u64 size;
	s64 mtime_ns;
	u32 dev;
	u32 nr;
	u32 npages;
	u32 nrules;
	u32 first;			/* the first row's offset */
	bool frame_pointers;		/* CPROF_UTABLE_FP */
	bool python;			/* CPROF_UTABLE_PY: py is set */
	unsigned long used;		/* jiffies: last used by a walk */
	struct cprof_upy py;
	size_t bytes;
	u32 *page;
	struct cprof_urow *rule;
	struct cprof_uent *ent;
};

static DEFINE_HASHTABLE(cprof_utab_table, 12);
static DEFINE_MUTEX(cprof_utab_mutex);	/* writers */
u64 cprof_utab_count;			/* read locklessly by the tick */
u64 cprof_utab_python;			/* of them CPROF_UTABLE_PY; likewise */
/* unwind_mb, MiB: what all tables may take (cprof_utable_set_limit()) */
static u32 cprof_utab_limit_mb = CPROF_UNWIND_MB_DEFAULT;
atomic_t cprof_utab_loaders;		/* openings of unwind for writing */
static u64 cprof_utab_bytes;		/* the tables in the hash */
/* Dropped tables not yet freed: dropped under the mutex (rcufree.c). */
static struct cprof_rcufree_pool cprof_utab_freeing = CPROF_RCUFREE_POOL_INIT;
static u64 cprof_utab_evicted;
unsigned long cprof_utab_epoch;		/* cprof_utable_epoch() */
static unsigned long cprof_utab_busy_until;	/* jiffies: CPROF_UTABLE_BUSY */

#define CPROF_UTAB_BUSY_MAX	(60 * HZ)	/* a loader that died busy */

static u64 cprof_utab_key(u32 dev, u64 ino)
{
	return ino ^ ((u64)dev << 32);
}

static struct cprof_utab *cprof_utab_lookup(u32 dev, u64 ino)
{
	struct cprof_utab *t;

	/* Readers: the tick (an RCU read side); writers hold the mutex. */
	hash_for_each_possible_rcu(cprof_utab_table, t, node,
				   cprof_utab_key(dev, ino),
				   lockdep_is_held(&cprof_utab_mutex))
		if (t->ino == ino && t->dev == dev)
			return t;
	return NULL;
}

/**
 * cprof_utable_loader() - a loader opened or closed /proc/cprof/unwind
 * @open: opened for writing (true), or such an opening closed
 *
 * Context: process (the file's open and release).
 */
void cprof_utable_loader(bool open)
{
	if (open)
		atomic_inc(&cprof_utab_loaders);
	else
		atomic_dec(&cprof_utab_loaders);
}

/**
 * cprof_utable_compiling() - is userland compiling tables now?
 *
 * Context: any; a hint for the tick.
 * Return: true between a CPROF_UTABLE_BUSY and the next CPROF_UTABLE_IDLE,
 * a minute at most.
 */
bool cprof_utable_compiling(void)
{
	return time_before(jiffies, READ_ONCE(cprof_utab_busy_until));
}

/**
 * cprof_utable_get() - the table of a file
 * @pos: the file (device in new_encode_dev() form, inode, size, mtime)
 * @v: filled in with what a lookup needs, so that later lookups in the
 *	same file read only the rows
 *
 * Marks the table used now (cprof_utable_touch()).
 *
 * Context: inside an RCU read side, which keeps @v valid; or later ones, as
 * cprof_utable_epoch() says.
 * Return: false when there is no table of that very file.
 */
bool cprof_utable_get(const struct cprof_file_pos *pos,
		      struct cprof_utable_view *v)
{
	struct cprof_utab *t = cprof_utab_lookup(pos->dev, pos->ino);

	if (!t || t->size != pos->size || t->mtime_ns != pos->mtime_ns)
		return false;
	v->used = &t->used;
	cprof_utable_touch(v);
	v->rows.ent = t->ent;
	v->rows.page = t->page;
	v->rows.rule = t->rule;
	v->rows.nr = t->nr;
	v->rows.npages = t->npages;
	v->rows.first = t->first;
	v->frame_pointers = t->frame_pointers;
	v->py = t->python ? &t->py : NULL;
	return true;
}

static bool cprof_urow_valid(const struct cprof_urow *r)
{
	return r->cfa_base <= CPROF_CFA_MAX && r->fp_rule <= CPROF_FP_MAX;
}

/*
 * rule[], pc[] and rule_of[] as userland writes them (after the header, at
 * @buf), into @t's rule[], ent[] and page[], checked: offsets strictly
 * increasing, every rule known and every index naming one, the last row a
 * NONE, the last offset in @t->npages' last page (it sized the index when
 * first read).
 */
static int cprof_utab_copy(struct cprof_utab *t, const char __user *buf)
{
	const u32 __user *upc = (const void __user *)(buf + t->nrules *
						      sizeof(*t->rule));
	const u16 __user *uidx = (const void __user *)(upc + t->nr);
	u32 i, p = 0, pc = 0, prev = 0;
	u16 idx = 0;

	if (copy_from_user(t->rule, buf, t->nrules * sizeof(*t->rule)))
		return -EFAULT;
	for (i = 0; i < t->nrules; i++)
		if (!cprof_urow_valid(&t->rule[i]))
			return -EINVAL;
	for (i = 0; i < t->nr; i++, prev = pc) {
		if (get_user(pc, upc + i) || get_user(idx, uidx + i))
			return -EFAULT;
		if ((i && pc <= prev) || idx >= t->nrules)
			return -EINVAL;
		if (!i)
			t->first = pc;
		cprof_uindex_put(t->ent, t->page, t->npages, &p, i, pc, idx);
		if (!(i & 1023))
			cond_resched();
	}
	if (cprof_uindex_pages(pc) != t->npages ||
	    t->rule[idx].cfa_base != CPROF_CFA_NONE)
		return -EINVAL;
	cprof_uindex_end(t->page, t->npages, &p, t->nr);
	return 0;
}

/*
 * Count @t in (@n 1: hashed) or out (-1: unhashed, not yet passed to
 * cprof_rcufree()) of the tables' totals and cprof_utable_epoch(); under
 * the mutex.
 */
static void cprof_utab_account(const struct cprof_utab *t, int n)
{
	lockdep_assert_held(&cprof_utab_mutex);
	/* after the hash change (cprof_utable_epoch()) */
	smp_store_release(&cprof_utab_epoch, cprof_utab_epoch + 1);
	WRITE_ONCE(cprof_utab_count, cprof_utab_count + n);
	if (t->python)
		WRITE_ONCE(cprof_utab_python, cprof_utab_python + n);
	if (n > 0)
		cprof_utab_bytes += t->bytes;
	else
		cprof_utab_bytes -= t->bytes;
}

/*
 * What the tables take, counted against unwind_mb: those in the hash and
 * those dropped and not yet freed (rcufree.c says why).  Under the mutex.
 */
static u64 cprof_utab_held(void)
{
	return cprof_utab_bytes + cprof_rcufree_pending(&cprof_utab_freeing);
}

/* Free unhashed, counted-out @t once the ticks are done with it. */
static void cprof_utab_free(struct cprof_utab *t)
{
	cprof_rcufree(&cprof_utab_freeing, &t->free, t, t->bytes);
}

/* Unhash and free @t once the ticks are done with it; under the mutex. */
static void cprof_utab_drop(struct cprof_utab *t)
{
	hash_del_rcu(&t->node);
	cprof_utab_account(t, -1);
	cprof_utab_free(t);
}

/* Drop the table of (@dev, @ino).  Return: 0, or -ENOENT (none loaded). */
static int cprof_utab_remove(u32 dev, u64 ino)
{
	struct cprof_utab *old;

	mutex_lock(&cprof_utab_mutex);
	old = cprof_utab_lookup(dev, ino);
	if (old)
		cprof_utab_drop(old);
	mutex_unlock(&cprof_utab_mutex);
	return old ? 0 : -ENOENT;
}

/*
 * Evict the table least recently found by a tick, other than @keep (the
 * one a write replaces); under the mutex.  A scan: evictions happen in
 * writes, which compile a file first, and there are at most
 * CPROF_UTABLE_MAX tables.  Return: false when there was none to evict.
 */
static bool cprof_utab_evict_lru(const struct cprof_utab *keep)
{
	struct cprof_utab *t, *lru = NULL;
	int bkt;

	lockdep_assert_held(&cprof_utab_mutex);
	hash_for_each(cprof_utab_table, bkt, t, node)
		if (t != keep &&
		    (!lru || time_before(READ_ONCE(t->used),
					 READ_ONCE(lru->used))))
			lru = t;
	if (!lru)
		return false;
	cprof_utab_drop(lru);
	cprof_utab_evicted++;
	return true;
}

/*
 * A CPython interpreter's layout (CPROF_UTABLE_PY), checked for what the
 * walk needs: a version it knows the frames of (3.11 to 3.13), every
 * field it follows, and the reserved ones 0.  The offsets themselves are
 * the file's word (16 bits each: within 64 KiB of what they index): a
 * wrong one makes the walk read other memory of the sampled process,
 * fault-free and bounded, and end.
 */
static int cprof_upy_check(const struct cprof_upy *py)
{
	static const u16 none = CPROF_UPY_NONE;

	if (py->reserved)
		return -EINVAL;
	/* offsets from the text's start: within the user address space */
	if (py->runtime >= TASK_SIZE_MAX || py->code_type >= TASK_SIZE_MAX)
		return -EINVAL;
	/* 3.14 tags frame code pointers and renumbers frame owners */
	if (py->version < 0x030b0000 || py->version >= 0x030e0000 ||
	    py->interp_head == none ||
	    py->interp_next == none || py->threads_head == none ||
	    py->ts_next == none || py->ts_native_tid == none ||
	    py->fr_code == none || py->fr_previous == none ||
	    py->fr_instr == none || py->code_firstlineno == none ||
	    py->code_adaptive == none)
		return -EINVAL;
	/* what ends one C call's frames: 3.11's flag, 3.12's owner */
	if (py->version < 0x030c0000 ? py->fr_is_entry == none :
					py->fr_owner == none)
		return -EINVAL;
	/* the thread's frame: directly, or through its _PyCFrame */
	if (py->ts_frame == none &&
	    (py->ts_cframe == none || py->cframe_current == none))
		return -EINVAL;
	/* the GIL's holder through the interpreter: both or neither */
	if (py->interp_gil == none ? py->gil_holder != none :
				     py->gil_holder == none)
		return -EINVAL;
	return 0;
}

/* What a write to /proc/cprof/unwind asks: cprof_utab_parse()'s answer. */
enum cprof_utab_cmd {
	CPROF_UTAB_INSTALL,	/* a table: the file's first, or its new one */
	CPROF_UTAB_REMOVE,	/* a header without rows: drop the file's */
	CPROF_UTAB_BUSY,	/* userland starts compiling tables */
	CPROF_UTAB_IDLE,	/* it is done */
};

/*
 * A write's header, checked, and what it asks; head: the header and the
 * CPython layout if any, where an install's rule[] begins.
 */
struct cprof_utab_req {
	struct cprof_utable hdr;
	size_t head;
	enum cprof_utab_cmd cmd;
};

/*
 * Copy the header of a write of @count bytes at @buf into @req and check
 * it, and @count against what it announces.  Return: 0, -EINVAL (a
 * malformed header, a wrong size) or -EFAULT.
 */
static int cprof_utab_parse(const char __user *buf, size_t count,
			    struct cprof_utab_req *req)
{
	struct cprof_utable *hdr = &req->hdr;
	size_t rows_bytes;

	if (count < sizeof(*hdr))
		return -EINVAL;
	if (copy_from_user(hdr, buf, sizeof(*hdr)))
		return -EFAULT;
	if (hdr->magic != CPROF_UTABLE_MAGIC || hdr->size != sizeof(*hdr) ||
	    hdr->nr_rows > CPROF_UTABLE_ROWS_MAX ||
	    hdr->nr_rules > CPROF_UTABLE_RULES_MAX ||
	    !hdr->nr_rows != !hdr->nr_rules ||
	    hdr->flags & ~(CPROF_UTABLE_FP | CPROF_UTABLE_BUSY |
			   CPROF_UTABLE_IDLE | CPROF_UTABLE_PY))
		return -EINVAL;
	if (hdr->flags & (CPROF_UTABLE_BUSY | CPROF_UTABLE_IDLE)) {
		if (hdr->nr_rows || count != sizeof(*hdr) ||
		    hdr->flags & (CPROF_UTABLE_FP | CPROF_UTABLE_PY) ||
		    (hdr->flags & CPROF_UTABLE_BUSY &&
		     hdr->flags & CPROF_UTABLE_IDLE))
			return -EINVAL;
		req->cmd = hdr->flags & CPROF_UTABLE_BUSY ? CPROF_UTAB_BUSY :
							    CPROF_UTAB_IDLE;
		return 0;
	}
	rows_bytes = (size_t)hdr->nr_rules * sizeof(struct cprof_urow) +
		     (size_t)hdr->nr_rows * (sizeof(u32) + sizeof(u16));
	req->head = sizeof(*hdr) +
		    (hdr->flags & CPROF_UTABLE_PY ? sizeof(struct cprof_upy) : 0);
	if (count != req->head + rows_bytes)
		return -EINVAL;
	if (!hdr->nr_rows) {
		if (hdr->flags & CPROF_UTABLE_PY)
			return -EINVAL;
		req->cmd = CPROF_UTAB_REMOVE;
		return 0;
	}
	req->cmd = CPROF_UTAB_INSTALL;
	return 0;
}

/* CPROF_UTABLE_BUSY (@busy) or IDLE: what cprof_utable_compiling() says. */
static void cprof_utab_set_busy(bool busy)
{
	WRITE_ONCE(cprof_utab_busy_until,
		   jiffies + (busy ? CPROF_UTAB_BUSY_MAX : 0));
}

/*
 * The table @req installs, from its rows at @buf: allocated, copied and
 * checked whole, not hashed.  Return: the table, or ERR_PTR() of -ENOSPC
 * (larger than unwind_mb alone), -ENOMEM, -EFAULT or -EINVAL.
 */
static struct cprof_utab *cprof_utab_build(const struct cprof_utab_req *req,
					   const char __user *buf)
{
	const struct cprof_utable *hdr = &req->hdr;
	struct cprof_utab *t;
	size_t bytes;
	u32 last, npages;
	int err;

	/* The last offset sizes the page index. */
	if (get_user(last, (const u32 __user *)(buf + req->head +
						 hdr->nr_rules *
						 sizeof(struct cprof_urow)) +
		     hdr->nr_rows - 1))
		return ERR_PTR(-EFAULT);
	npages = cprof_uindex_pages(last);
	/* all 4-byte aligned after the header, itself 8-byte aligned */
	bytes = sizeof(*t) + (size_t)npages * sizeof(u32) +
		(size_t)hdr->nr_rules * sizeof(struct cprof_urow) +
		(size_t)hdr->nr_rows * sizeof(struct cprof_uent);
	/* checked again under the mutex: this spares the copy */
	if (bytes > (u64)READ_ONCE(cprof_utab_limit_mb) << 20)
		return ERR_PTR(-ENOSPC);
	t = kvmalloc(bytes, GFP_KERNEL_ACCOUNT);
	if (!t)
		return ERR_PTR(-ENOMEM);
	t->ino = hdr->ino;
	t->size = hdr->file_size;
	t->mtime_ns = hdr->mtime_ns;
	t->dev = hdr->dev;
	t->nr = hdr->nr_rows;
	t->npages = npages;
	t->nrules = hdr->nr_rules;
	t->frame_pointers = hdr->flags & CPROF_UTABLE_FP;
	t->python = hdr->flags & CPROF_UTABLE_PY;
	t->bytes = bytes;
	t->page = (u32 *)(t + 1);
	t->rule = (struct cprof_urow *)(t->page + t->npages);
	t->ent = (struct cprof_uent *)(t->rule + t->nrules);
	err = -EFAULT;
	if (t->python && copy_from_user(&t->py, buf + sizeof(*hdr),
					sizeof(t->py)))
		goto free;
	err = t->python ? cprof_upy_check(&t->py) : 0;
	if (!err)
		err = cprof_utab_copy(t, buf + req->head);
	if (err)
		goto free;
	t->used = jiffies;
	return t;
free:
	kvfree(t);
	return ERR_PTR(err);
}

/*
 * Evict the least recently used tables but @keep (the one a write
 * replaces) while a table of @bytes in its place, or one more, does not
 * fit in @limit with the tables in the hash, or one more would be past
 * CPROF_UTABLE_MAX; under the mutex.
 */
static void cprof_utab_evict(const struct cprof_utab *keep, size_t bytes,
			     u64 limit)
{
	while ((cprof_utab_bytes - (keep ? keep->bytes : 0) + bytes > limit ||
		(!keep && cprof_utab_count >= CPROF_UTABLE_MAX)) &&
	       cprof_utab_evict_lru(keep))
		cond_resched();	/* a scan an eviction: thousands, at worst */
}

/*
 * Hash @t, in place of its file's table @old if there is one, first
 * evicting the least recently used while it does not fit.  Dropped tables
 * count until they are freed: if they take the room, evict down to an
 * eighth under the budget (cprof_rcufree_target()) and wait for them (one
 * wait, then room for the next few tables without one).  @old counts until it is freed too, and
 * goes only once @t is in its place (a tick finds one or the other): if
 * the two do not fit together, wait for @old before the mutex is let go.
 * So the tables hold at most unwind_mb, but for one replaced table for
 * one grace period.  Return: 0, or -ENOSPC (unwind_mb was lowered below
 * it meanwhile), @t freed.
 */
static int cprof_utab_insert(struct cprof_utab *t)
{
	struct cprof_utab *old;
	u64 limit;

	mutex_lock(&cprof_utab_mutex);
	/* unwind_mb may have been lowered since */
	limit = (u64)READ_ONCE(cprof_utab_limit_mb) << 20;
	if (t->bytes > limit) {
		mutex_unlock(&cprof_utab_mutex);
		kvfree(t);
		return -ENOSPC;
	}
	old = cprof_utab_lookup(t->dev, t->ino);
	cprof_utab_evict(old, t->bytes, limit);
	/* @old waits below, once it is out of the hash */
	if (cprof_rcufree_pending(&cprof_utab_freeing) &&
	    cprof_utab_held() - (old ? old->bytes : 0) + t->bytes > limit) {
		cprof_utab_evict(old, t->bytes,
				 cprof_rcufree_target(limit, t->bytes));
		/* drops are made under the mutex only: after it, none waits */
		cprof_rcufree_wait();
	}
	if (old) {
		hlist_replace_rcu(&old->node, &t->node);
		cprof_utab_account(old, -1);
		cprof_utab_free(old);
	} else {
		hash_add_rcu(cprof_utab_table, &t->node,
			     cprof_utab_key(t->dev, t->ino));
	}
	cprof_utab_account(t, 1);
	if (cprof_utab_held() > limit)
		cprof_rcufree_wait();	/* @old, and what was pending */
	mutex_unlock(&cprof_utab_mutex);
	return 0;
}

/* Install or replace the table @req carries, its rows at @buf. */
static int cprof_utab_install(const struct cprof_utab_req *req,
			      const char __user *buf)
{
	struct cprof_utab *t = cprof_utab_build(req, buf);

	if (IS_ERR(t))
		return PTR_ERR(t);
	return cprof_utab_insert(t);
}

/**
 * cprof_utable_write() - install, replace or remove one table
 * @buf: struct cprof_utable, struct cprof_upy if CPROF_UTABLE_PY, rule[],
 *	pc[], rule_of[] (cprof_format.h); or a header alone,
 *	CPROF_UTABLE_BUSY or CPROF_UTABLE_IDLE
 * @count: exactly the table's size
 *
 * A table that does not fit in unwind_mb, or would be one past
 * CPROF_UTABLE_MAX, first evicts the least recently used tables.
 *
 * Context: process; may sleep.
 * Return: @count, or -EINVAL (a malformed table), -ENOSPC (the table alone
 *	is larger than unwind_mb), -ENOENT (removing a table that is not
 *	there), -ENOMEM, -EFAULT.  Nothing changes on error.
 */
ssize_t cprof_utable_write(const char __user *buf, size_t count)
{
	struct cprof_utab_req req;
	int err;

	err = cprof_utab_parse(buf, count, &req);
	if (err)
		return err;
	switch (req.cmd) {
	case CPROF_UTAB_INSTALL:
		err = cprof_utab_install(&req, buf);
		break;
	case CPROF_UTAB_REMOVE:
		err = cprof_utab_remove(req.hdr.dev, req.hdr.ino);
		break;
	case CPROF_UTAB_BUSY:
	case CPROF_UTAB_IDLE:
		cprof_utab_set_busy(req.cmd == CPROF_UTAB_BUSY);
		break;
	}
	if (err)
		return err;
	return count;
}

/**
 * cprof_utable_show() - list the loaded tables
 * @m: the seq_file of a read of /proc/cprof/unwind
 *
 * One line per table: "MAJOR:MINOR INODE SIZE MTIME_NS ROWS BYTES", the
 * file as stat() shows it.
 *
 * Context: process; sleeps.
 */
void cprof_utable_show(struct seq_file *m)
{
	struct cprof_utab *t;
	int bkt;

	mutex_lock(&cprof_utab_mutex);
	hash_for_each(cprof_utab_table, bkt, t, node) {
		dev_t dev = new_decode_dev(t->dev);

		seq_printf(m, "%02x:%02x %llu %llu %lld %u %zu\n", MAJOR(dev),
			   MINOR(dev), t->ino, t->size, t->mtime_ns, t->nr,
			   t->bytes);
	}
	mutex_unlock(&cprof_utab_mutex);
}

/**
 * cprof_utable_set_limit() - the memory tables may take from now on
 * @mb: ctl's unwind_mb, MiB
 *
 * Tables already loaded stay; the next write evicts down to the limit.
 *
 * Context: process (ctl).
 */
void cprof_utable_set_limit(u32 mb)
{
	WRITE_ONCE(cprof_utab_limit_mb, mb);
}

/**
 * cprof_utable_usage() - how many tables are loaded, and their memory
 * @tables: the count
 * @bytes: the memory they take, which unwind_mb bounds
 * @evicted: the tables evicted to make room, since the module was loaded
 *
 * Context: process; sleeps.
 */
void cprof_utable_usage(u64 *tables, u64 *bytes, u64 *evicted)
{
	mutex_lock(&cprof_utab_mutex);
	*tables = cprof_utab_count;
	*bytes = cprof_utab_held();
	*evicted = cprof_utab_evicted;
	mutex_unlock(&cprof_utab_mutex);
}

/**
 * cprof_utable_exit() - free every table, and wait until they are
 *
 * Context: module unload, after the last tick.
 */
void cprof_utable_exit(void)
{
	struct cprof_utab *t;
	struct hlist_node *tmp;
	int bkt;

	mutex_lock(&cprof_utab_mutex);
	hash_for_each_safe(cprof_utab_table, bkt, tmp, t, node)
		cprof_utab_drop(t);
	mutex_unlock(&cprof_utab_mutex);
	cprof_rcufree_exit(&cprof_utab_freeing);
}
