// SPDX-License-Identifier: GPL-2.0
/*
 * Unwind tables for user code without frame pointers.
 *
 * The module does not interpret DWARF: userland (cprof-dump) compiles each
 * file's call frame information into rows, one per address range, each
 * saying how to find the frame's CFA from sp or rbp and where the caller's
 * rbp is saved (cprof_format.h), and writes them to /proc/cprof/unwind.
 * This unit checks a table whole before it is installed (every pc strictly
 * increasing, every rule known, the last row ending the table), keeps the
 * tables in an RCU hash keyed by the file (device and inode, as stat()
 * gives them) and answers the tick's question: which row
 * holds this offset of that file?  A binary search within the rows of the
 * offset's page (an index the module builds), no lock, no allocation.
 * A table also names the file's size and mtime: a file rewritten in place,
 * or another file that got a freed inode number, does not match it.
 *
 * The memory for tables is bounded by the ctl setting unwind_mb, their
 * number by CPROF_UTABLE_MAX (which keeps the hash chains short: the tick
 * walks one per frame); a table that does not fit is refused with -ENOSPC
 * and changes nothing.  Tables outlive profiles (a binary's table stays
 * good while the file does) and go with the module, or when userland
 * writes a table of no rows for the file.
 */
#include <linux/hashtable.h>
#include <linux/kdev_t.h>
#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/rcupdate.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "ctl.h"
#include "maps.h"
#include "utable.h"

#define CPROF_UTABLE_MAX	16384	/* tables */
#define CPROF_UTAB_PAGE_SHIFT	12	/* the index's granule */

/*
 * ent[] (each row beside its offset, so that a lookup's last probes and
 * the row share cache lines and pages), then page[]: page[p] is the last
 * row at or below offset p << CPROF_UTAB_PAGE_SHIFT, so a lookup searches
 * one page's rows.
 */
struct cprof_utab {
	struct hlist_node node;
	struct rcu_head rcu;
	u64 ino;
	u64 size;
	s64 mtime_ns;
	u32 dev;
	u32 nr;
	u32 npages;
	bool frame_pointers;		/* CPROF_UTABLE_FP */
	size_t bytes;
	u32 *page;
	struct cprof_uent ent[];
};

static DEFINE_HASHTABLE(cprof_utab_table, 12);
static DEFINE_MUTEX(cprof_utab_mutex);	/* writers */
static u64 cprof_utab_count;		/* read locklessly by the tick */
static u64 cprof_utab_bytes;

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
 * cprof_utable_any() - is any table loaded?
 *
 * Context: any; a hint (the tick skips the lookups when there is none).
 * Return: true if one is.
 */
bool cprof_utable_any(void)
{
	return READ_ONCE(cprof_utab_count);
}

/**
 * cprof_utable_get() - the table of a file
 * @pos: the file (device in new_encode_dev() form, inode, size, mtime)
 * @v: filled in with what a lookup needs, so that the walk's later lookups
 *	in the same file touch only the rows
 *
 * Context: inside rcu_read_lock(), which keeps @v valid.
 * Return: false when there is no table of that very file.
 */
bool cprof_utable_get(const struct cprof_file_pos *pos,
		      struct cprof_utable_view *v)
{
	const struct cprof_utab *t = cprof_utab_lookup(pos->dev, pos->ino);

	if (!t || t->size != pos->size || t->mtime_ns != pos->mtime_ns)
		return false;
	v->ent = t->ent;
	v->page = t->page;
	v->nr = t->nr;
	v->npages = t->npages;
	v->frame_pointers = t->frame_pointers;
	return true;
}

/**
 * cprof_utable_row() - the row for offset @off of a table's file
 * @v: from cprof_utable_get()
 * @off: a byte offset in the file
 * @row: filled in when found
 *
 * Context: as cprof_utable_get().
 * Return: false when no row covers @off with a rule (CPROF_CFA_NONE).
 */
bool cprof_utable_row(const struct cprof_utable_view *v, u64 off,
		      struct cprof_urow *row)
{
	u64 p = off >> CPROF_UTAB_PAGE_SHIFT;
	u32 lo, hi, mid;

	/* before the first row, or past the last one (NONE) */
	if (p >= v->npages || off < v->ent[0].pc)
		return false;
	/* The last row with pc <= off is in [page[p], page[p + 1]]. */
	lo = v->page[p];
	hi = p + 1 < v->npages ? v->page[p + 1] + 1 : v->nr;
	while (hi - lo > 1) {
		mid = lo + (hi - lo) / 2;
		if (v->ent[mid].pc <= off)
			lo = mid;
		else
			hi = mid;
	}
	*row = v->ent[lo].row;
	return row->cfa_base != CPROF_CFA_NONE;
}

static bool cprof_utab_valid(const struct cprof_utab *t)
{
	const struct cprof_uent *e = t->ent;
	u32 i;

	for (i = 0; i < t->nr; i++) {
		if (i && e[i].pc <= e[i - 1].pc)
			return false;
		if (e[i].row.cfa_base > CPROF_CFA_MAX ||
		    e[i].row.fp_rule > CPROF_FP_MAX)
			return false;
		if (!(i & 65535))
			cond_resched();
	}
	return e[t->nr - 1].row.cfa_base == CPROF_CFA_NONE;
}

static void cprof_utab_index(struct cprof_utab *t)
{
	u32 p, r = 0;

	for (p = 0; p < t->npages; p++) {
		while (r + 1 < t->nr &&
		       t->ent[r + 1].pc <= (u64)p << CPROF_UTAB_PAGE_SHIFT)
			r++;
		t->page[p] = r;
		if (!(p & 65535))
			cond_resched();
	}
}

/* pc[] and row[] as userland writes them, into @t's ent[]. */
static int cprof_utab_copy(struct cprof_utab *t, const char __user *buf)
{
	const u32 __user *upc = (const void __user *)buf;
	const struct cprof_urow __user *urow =
		(const void __user *)(buf + t->nr * sizeof(u32));
	u32 i;

	for (i = 0; i < t->nr; i++) {
		if (get_user(t->ent[i].pc, upc + i) ||
		    copy_from_user(&t->ent[i].row, urow + i,
				   sizeof(t->ent[i].row)))
			return -EFAULT;
		if (!(i & 1023))
			cond_resched();
	}
	return 0;
}

static ssize_t cprof_utab_remove(u32 dev, u64 ino)
{
	struct cprof_utab *old;

	mutex_lock(&cprof_utab_mutex);
	old = cprof_utab_lookup(dev, ino);
	if (old) {
		hash_del_rcu(&old->node);
		WRITE_ONCE(cprof_utab_count, cprof_utab_count - 1);
		cprof_utab_bytes -= old->bytes;
		kvfree_rcu(old, rcu);
	}
	mutex_unlock(&cprof_utab_mutex);
	return old ? 0 : -ENOENT;
}

/**
 * cprof_utable_write() - install, replace or remove one table
 * @buf: struct cprof_utable, pc[], row[]
 * @count: exactly the table's size
 *
 * Context: process; may sleep.
 * Return: @count, or -EINVAL (a malformed table), -ENOSPC (over unwind_mb
 *	or CPROF_UTABLE_MAX tables),
 *	-ENOENT (removing a table that is not there), -ENOMEM, -EFAULT.
 *	Nothing changes on error.
 */
ssize_t cprof_utable_write(const char __user *buf, size_t count)
{
	struct cprof_utable hdr;
	struct cprof_utab *t, *old;
	size_t rows_bytes, bytes;
	u32 last, npages;
	ssize_t err;
	u64 limit;

	if (count < sizeof(hdr))
		return -EINVAL;
	if (copy_from_user(&hdr, buf, sizeof(hdr)))
		return -EFAULT;
	if (hdr.magic != CPROF_UTABLE_MAGIC || hdr.size != sizeof(hdr) ||
	    hdr.nr_rows > CPROF_UTABLE_ROWS_MAX ||
	    hdr.flags & ~CPROF_UTABLE_FP || hdr.reserved)
		return -EINVAL;
	rows_bytes = (size_t)hdr.nr_rows *
		     (sizeof(u32) + sizeof(struct cprof_urow));
	if (count != sizeof(hdr) + rows_bytes)
		return -EINVAL;
	if (!hdr.nr_rows) {
		err = cprof_utab_remove(hdr.dev, hdr.ino);
		return err ?: count;
	}
	/* The last offset sizes the page index. */
	if (get_user(last, (const u32 __user *)(buf + sizeof(hdr)) +
		     hdr.nr_rows - 1))
		return -EFAULT;
	npages = ((u64)last >> CPROF_UTAB_PAGE_SHIFT) + 1;
	bytes = struct_size(t, ent, hdr.nr_rows) + (size_t)npages * sizeof(u32);
	limit = (u64)cprof_ctl_unwind_mb() << 20;
	/* checked again under the mutex: this spares the copy */
	if (bytes > limit - min(limit, READ_ONCE(cprof_utab_bytes)))
		return -ENOSPC;
	t = kvmalloc(bytes, GFP_KERNEL_ACCOUNT);
	if (!t)
		return -ENOMEM;
	t->ino = hdr.ino;
	t->size = hdr.file_size;
	t->mtime_ns = hdr.mtime_ns;
	t->dev = hdr.dev;
	t->nr = hdr.nr_rows;
	t->npages = npages;
	t->frame_pointers = hdr.flags & CPROF_UTABLE_FP;
	t->bytes = bytes;
	t->page = (u32 *)(t->ent + t->nr);
	err = cprof_utab_copy(t, buf + sizeof(hdr));
	if (err)
		goto free;
	err = -EINVAL;
	/* (the last offset may have changed since it was read) */
	if (t->ent[t->nr - 1].pc != last || !cprof_utab_valid(t))
		goto free;
	cprof_utab_index(t);

	mutex_lock(&cprof_utab_mutex);
	old = cprof_utab_lookup(t->dev, t->ino);
	err = -ENOSPC;
	if (cprof_utab_bytes - (old ? old->bytes : 0) + bytes > limit ||
	    (!old && cprof_utab_count >= CPROF_UTABLE_MAX)) {
		mutex_unlock(&cprof_utab_mutex);
		goto free;
	}
	if (old) {
		/* a tick finds the old table or the new one, never neither */
		hlist_replace_rcu(&old->node, &t->node);
		cprof_utab_bytes -= old->bytes;
		kvfree_rcu(old, rcu);
	} else {
		hash_add_rcu(cprof_utab_table, &t->node,
			     cprof_utab_key(t->dev, t->ino));
		WRITE_ONCE(cprof_utab_count, cprof_utab_count + 1);
	}
	cprof_utab_bytes += bytes;
	mutex_unlock(&cprof_utab_mutex);
	return count;
free:
	kvfree(t);
	return err;
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
 * cprof_utable_usage() - how many tables are loaded, and their memory
 * @tables: the count
 * @bytes: the memory they take, which unwind_mb bounds
 *
 * Context: process; sleeps.
 */
void cprof_utable_usage(u64 *tables, u64 *bytes)
{
	mutex_lock(&cprof_utab_mutex);
	*tables = cprof_utab_count;
	*bytes = cprof_utab_bytes;
	mutex_unlock(&cprof_utab_mutex);
}

/**
 * cprof_utable_exit() - free every table
 *
 * Context: module unload, after the last tick.
 */
void cprof_utable_exit(void)
{
	struct cprof_utab *t;
	struct hlist_node *tmp;
	int bkt;

	mutex_lock(&cprof_utab_mutex);
	hash_for_each_safe(cprof_utab_table, bkt, tmp, t, node) {
		hash_del_rcu(&t->node);
		kvfree_rcu(t, rcu);
	}
	WRITE_ONCE(cprof_utab_count, 0);
	cprof_utab_bytes = 0;
	mutex_unlock(&cprof_utab_mutex);
}
