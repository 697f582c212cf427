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
 * holds this offset of that file?  A binary search, no lock, no allocation.
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

struct cprof_utab {
	struct hlist_node node;
	struct rcu_head rcu;
	u64 ino;
	u64 size;
	s64 mtime_ns;
	u32 dev;
	u32 nr;
	size_t bytes;
	struct cprof_urow *row;		/* after pc[nr] */
	u32 pc[];
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
 * Context: any; a hint (the tick skips the lookups when there is none).
 */
bool cprof_utable_any(void)
{
	return READ_ONCE(cprof_utab_count);
}

/**
 * cprof_utable_find() - the unwind row for an offset of a file
 * @pos: the file (device in new_encode_dev() form, inode, size, mtime) and
 *	the byte offset
 * @row: filled in when found
 *
 * Context: any, RCU read side inside.
 * Return: false when no table of that very file covers the offset with a
 *	rule (CPROF_CFA_NONE).
 */
bool cprof_utable_find(const struct cprof_file_pos *pos, struct cprof_urow *row)
{
	struct cprof_utab *t;
	u64 off = pos->off;
	u32 lo, hi, mid;
	bool found = false;

	if (off > U32_MAX)
		return false;
	rcu_read_lock();
	t = cprof_utab_lookup(pos->dev, pos->ino);
	if (t && t->size == pos->size && t->mtime_ns == pos->mtime_ns &&
	    off >= t->pc[0]) {
		/* The last row with pc <= off; the last row is NONE. */
		lo = 0;
		hi = t->nr;
		while (hi - lo > 1) {
			mid = lo + (hi - lo) / 2;
			if (t->pc[mid] <= off)
				lo = mid;
			else
				hi = mid;
		}
		*row = t->row[lo];
		found = row->cfa_base != CPROF_CFA_NONE;
	}
	rcu_read_unlock();
	return found;
}

static bool cprof_utab_valid(const struct cprof_utab *t)
{
	u32 i;

	for (i = 0; i < t->nr; i++) {
		if (i && t->pc[i] <= t->pc[i - 1])
			return false;
		if (t->row[i].cfa_base > CPROF_CFA_MAX ||
		    t->row[i].fp_rule > CPROF_FP_MAX)
			return false;
	}
	return t->row[t->nr - 1].cfa_base == CPROF_CFA_NONE;
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
	ssize_t err;
	u64 limit;

	if (count < sizeof(hdr))
		return -EINVAL;
	if (copy_from_user(&hdr, buf, sizeof(hdr)))
		return -EFAULT;
	if (hdr.magic != CPROF_UTABLE_MAGIC || hdr.size != sizeof(hdr) ||
	    hdr.nr_rows > CPROF_UTABLE_ROWS_MAX)
		return -EINVAL;
	rows_bytes = (size_t)hdr.nr_rows * (sizeof(u32) + sizeof(*t->row));
	if (count != sizeof(hdr) + rows_bytes)
		return -EINVAL;
	if (!hdr.nr_rows) {
		err = cprof_utab_remove(hdr.dev, hdr.ino);
		return err ?: count;
	}
	/* row[] after pc[], aligned for its s32. */
	bytes = ALIGN(struct_size(t, pc, hdr.nr_rows), 8) +
		(size_t)hdr.nr_rows * sizeof(*t->row);
	mutex_lock(&cprof_lock);
	limit = (u64)cprof_set.unwind_mb << 20;
	mutex_unlock(&cprof_lock);
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
	t->bytes = bytes;
	t->row = (void *)t + ALIGN(struct_size(t, pc, t->nr), 8);
	buf += sizeof(hdr);
	err = -EFAULT;
	if (copy_from_user(t->pc, buf, t->nr * sizeof(u32)) ||
	    copy_from_user(t->row, buf + t->nr * sizeof(u32),
			   t->nr * sizeof(*t->row)))
		goto free;
	err = -EINVAL;
	if (!cprof_utab_valid(t))
		goto free;

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

/*
 * One line per table: "MAJOR:MINOR INODE SIZE MTIME_NS ROWS BYTES", the
 * file as stat() shows it.
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

void cprof_utable_usage(u64 *tables, u64 *bytes)
{
	mutex_lock(&cprof_utab_mutex);
	*tables = cprof_utab_count;
	*bytes = cprof_utab_bytes;
	mutex_unlock(&cprof_utab_mutex);
}

/* Context: module unload, after the last tick. */
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
