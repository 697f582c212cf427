// SPDX-License-Identifier: GPL-2.0
/*
 * Executable mappings of the sampled processes, so that user frames can be
 * symbolized after the process has gone.
 *
 * The tick cannot take the mmap lock, so the work is split.  In the tick,
 * cprof_maps_note() checks the sampled user addresses against the ranges
 * already emitted for the address space (an RCU hash keyed by mm, tgid,
 * exec count and start time) and queues a request on its CPU's queue for
 * one not covered: no allocation, no lock.  The reader serves the requests
 * in cprof_maps_sync(): it tries the task's mmap lock, lists its executable
 * mappings, reads build IDs from the page cache only and emits a
 * CPROF_REC_MMAP for each range not emitted before.  What any user's
 * processes make it keep is bounded (CPROF_MAPS_RANGES, maps_mb).  Why the
 * reader and not a task_work: docs/design.md, "Mappings".
 */
#include <linux/cred.h>
#include <linux/elf.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/hashtable.h>
#include <linux/mm.h>
#include <linux/highmem.h>
#include <linux/mutex.h>
#include <linux/pagemap.h>
#include <linux/percpu.h>
#include <linux/pid.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/sched/mm.h>
#include <linux/sched/task.h>
#include <linux/slab.h>
#include <linux/stat.h>
#include <linux/string.h>
#include <linux/timekeeping.h>

#include "cprof_format.h"
#include "maps.h"
#include "rcufree.h"

#define CPROF_MAPS_QLEN		32	/* requests per CPU */
#define CPROF_MAPS_RECENT	4	/* recently requested keys per CPU */
#define CPROF_MAPS_MAX		4096	/* address spaces tracked */
#define CPROF_MAPS_RANGES	1024	/* ranges a state keeps, at most */
#define CPROF_MAPS_SWEEP	HZ	/* between sweeps for exited processes */
#define CPROF_MAPS_RETRY	(HZ / 10)	/* longest wait between requests */
#define CPROF_MAPS_JUNK_RETRY	HZ		/* for uncovered non-leaf frames */
#define CPROF_MAPS_FRESH_NS	NSEC_PER_SEC	/* its records on their way */
#define CPROF_MAPS_YOUNG_NS	(30 * NSEC_PER_SEC) /* its tables compiling */
#define CPROF_NT_GNU_BUILD_ID	3	/* ELF note type, as in <elf.h> */

/* The ranges emitted for one address space, sorted by start. */
struct cprof_mmstate {
	struct hlist_node node;
	struct cprof_rcufree free;
	const struct mm_struct *mm;	/* a key: never dereferenced */
	pid_t tgid;
	u64 exec_id;
	u64 start_ns;			/* a key: its leader's start_boottime */
	struct pid *pid;		/* its tgid's, held: the sweep's */
	size_t bytes;			/* counted in cprof_mm_held() */
	unsigned long used;		/* jiffies: last sampled */
	u64 first_ns;			/* the first sample that asked */
	unsigned long retry_at;		/* jiffies: next request allowed */
	unsigned long synced_at;	/* jiffies: when this was built */
	u32 syncs;			/* requests served so far */
	bool junk;			/* a sampled address no mapping covers */
	u32 nr;
	/* dev 0: no file (but the vDSO), or not stat()ed */
	struct cprof_file_pos ranges[];
};

struct cprof_maps_req {
	struct pid *pid;
	const struct mm_struct *mm;
	u64 exec_id;
	u64 start_ns;
	u64 addr;			/* the uncovered address */
	u64 time_ns;			/* of the sample that asked */
};

struct cprof_maps_key {
	const struct mm_struct *mm;
	u64 exec_id;
	u64 start_ns;
	unsigned long at;
};

/* Producer: the tick on this CPU.  Consumer: the reader (under maps_mutex). */
struct cprof_maps_queue {
	struct cprof_maps_req req[CPROF_MAPS_QLEN];
	u32 head;
	u32 tail;
	struct cprof_maps_key recent[CPROF_MAPS_RECENT];
	u32 recent_next;
};

static DEFINE_PER_CPU(struct cprof_maps_queue, cprof_maps_queue);

DEFINE_PER_CPU(struct cprof_maps_memo, cprof_maps_memo);
static DEFINE_HASHTABLE(cprof_mm_table, 10);
static DEFINE_MUTEX(cprof_maps_mutex);	/* table writers, queue consumer */
static unsigned int cprof_mm_count;
unsigned long cprof_mm_epoch;		/* cprof_maps_epoch() */
static char *cprof_maps_page;		/* paths and ELF notes */
/* Under the mutex: the budget, what the states take, and what befell them. */
static u64 cprof_mm_limit;		/* maps_mb, in bytes */
static u64 cprof_mm_bytes;		/* the states in the table */
/* Dropped states not yet freed: dropped under the mutex (rcufree.c). */
static struct cprof_rcufree_pool cprof_mm_freeing = CPROF_RCUFREE_POOL_INIT;
static u64 cprof_mm_evicted;		/* to keep within the budget or count */
static u64 cprof_mm_exited;		/* swept: process exited or exec'd */
static u64 cprof_mm_capped;		/* mappings left out of listings */
static unsigned long cprof_mm_sweep_at;	/* jiffies: the next sweep */

/* One entry of the mapping list taken under the mmap lock. */
struct cprof_vma {
	struct cprof_file_pos pos;
	struct file *file;
	const char *name;		/* for mappings without a file */
	s64 btime_ns;			/* with pos.dev, pos.ino: its record's */
	u32 fs_magic;
	bool keep;			/* in the new state */
};

/* A listing: CPROF_MAPS_RANGES + 1 entries (old ones, and the one asked). */
static struct cprof_vma *cprof_maps_vmas;

static struct cprof_mmstate *cprof_mm_lookup(const struct mm_struct *mm,
					     pid_t tgid, u64 exec_id,
					     u64 start_ns)
{
	struct cprof_mmstate *st;

	/*
	 * Readers: the walks and notes, inside an RCU read side (interrupts
	 * disabled will do); writers hold the mutex.
	 */
	hash_for_each_possible_rcu(cprof_mm_table, st, node, (unsigned long)mm,
				   lockdep_is_held(&cprof_maps_mutex))
		if (st->mm == mm && st->tgid == tgid &&
		    st->exec_id == exec_id && st->start_ns == start_ns)
			return st;
	return NULL;
}

/**
 * cprof_maps_start_ns() - when a task's process started, boot time
 * @tsk: the task
 *
 * Its group leader's start_boottime (/proc/PID/stat's starttime; an exec
 * by another thread makes that thread the leader, with this time): part of
 * an address space's key, which pid and mm reuse cannot repeat.  Once
 * @tsk is released its group_leader may be freed (see pid_alive()): 0
 * then, a key no live task has.
 *
 * Context: any (__cprof_maps_start_ns() inside an RCU read side).
 * Return: the time, in ns, or 0.
 */
u64 cprof_maps_start_ns(struct task_struct *tsk)
{
	u64 ns;

	rcu_read_lock();
	ns = __cprof_maps_start_ns(tsk);
	rcu_read_unlock();
	return ns;
}

/**
 * cprof_maps_touch() - a sample used the state: not the least recently used
 * @st: from cprof_maps_of(), or NULL
 *
 * A store a jiffy at most.
 *
 * Context: as cprof_maps_of().
 */
void cprof_maps_touch(const struct cprof_mmstate *st)
{
	unsigned long now = jiffies;

	/* the clock is the only field a tick writes */
	if (st && READ_ONCE(st->used) != now)
		WRITE_ONCE(((struct cprof_mmstate *)st)->used, now);
}

/*
 * The table changed: a state was hashed, or unhashed and not yet passed to
 * cprof_rcufree() (see cprof_maps_epoch()); under the mutex.
 */
static void cprof_mm_changed(void)
{
	lockdep_assert_held(&cprof_maps_mutex);
	/* after the hash change (cprof_maps_epoch()) */
	smp_store_release(&cprof_mm_epoch, cprof_mm_epoch + 1);
}

/*
 * What the states take, counted against maps_mb: those in the table and
 * those dropped and not yet freed (rcufree.c says why).  Under the mutex.
 */
static u64 cprof_mm_held(void)
{
	return cprof_mm_bytes + cprof_rcufree_pending(&cprof_mm_freeing);
}

/* Unhash @st and free it once the ticks are done with it; under the mutex. */
static void cprof_mm_drop(struct cprof_mmstate *st)
{
	hash_del_rcu(&st->node);
	cprof_mm_changed();
	cprof_mm_bytes -= st->bytes;
	cprof_mm_count--;
	put_pid(st->pid);
	cprof_rcufree(&cprof_mm_freeing, &st->free, st, st->bytes);
}

/* The memory a state of @nr ranges takes: kvmalloc()'s bucket at most. */
static size_t cprof_mm_size(u32 nr)
{
	struct cprof_mmstate *st;

	return kmalloc_size_roundup(struct_size(st, ranges, nr));
}

static const struct cprof_file_pos *
cprof_mm_range(const struct cprof_mmstate *st, u64 ip)
{
	u32 lo = 0, hi = st->nr;

	while (lo < hi) {
		u32 mid = lo + (hi - lo) / 2;

		if (ip < st->ranges[mid].start)
			hi = mid;
		else if (ip >= st->ranges[mid].end)
			lo = mid + 1;
		else
			return &st->ranges[mid];
	}
	return NULL;
}

static bool cprof_mm_covers(const struct cprof_mmstate *st, u64 ip)
{
	return cprof_mm_range(st, ip);
}

/**
 * cprof_maps_of() - the ranges emitted for a task's address space
 * @tsk: current, or a task whose address space current uses
 *
 * Context: inside an RCU read side (rcu_read_lock(), or interrupts
 * disabled), which keeps the result valid.
 * Return: NULL when none were emitted yet.
 */
const struct cprof_mmstate *cprof_maps_of(struct task_struct *tsk)
{
	const struct cprof_mmstate *st;

	st = cprof_mm_lookup(tsk->mm, tsk->tgid, READ_ONCE(tsk->self_exec_id),
			     __cprof_maps_start_ns(tsk));
	cprof_maps_touch(st);
	return st;
}

/**
 * cprof_maps_file_pos() - which file's mapping holds @addr?
 * @st: from cprof_maps_of()
 * @addr: a user address
 *
 * Context: as cprof_maps_of(); the result is valid as long as @st.
 * Return: the emitted range of a file that holds @addr, or NULL.
 */
const struct cprof_file_pos *cprof_maps_file_pos(const struct cprof_mmstate *st,
						 u64 addr)
{
	const struct cprof_file_pos *r = st ? cprof_mm_range(st, addr) : NULL;

	return r && r->dev ? r : NULL;
}

/**
 * cprof_maps_settling() - may the table of @addr's code be on its way?
 * @st: from cprof_maps_of()
 * @addr: a user address
 * @compiling: userland is compiling tables now
 *
 * Context: as cprof_maps_of().
 * Return: true when no mapping was emitted for current's address space yet
 * (@st NULL), when none emitted covers @addr (unless sampled addresses
 * that no mapping covers were seen in it before: code of no file, or a
 * frame-pointer chain through code without frame pointers), in its first
 * CPROF_MAPS_FRESH_NS since a sample first asked for its mappings (their
 * records are on their way to the loader), or, while @compiling, in its
 * first CPROF_MAPS_YOUNG_NS: a program whose unwind tables userland may
 * be compiling, or have queued.
 */
bool cprof_maps_settling(const struct cprof_mmstate *st, u64 addr,
			 bool compiling)
{
	u64 age;

	if (!st || (!st->junk && !cprof_mm_covers(st, addr)))
		return true;
	age = ktime_get_ns() - READ_ONCE(st->first_ns);
	return age < CPROF_MAPS_FRESH_NS ||
	       (compiling && age < CPROF_MAPS_YOUNG_NS);
}

/**
 * cprof_maps_exec_addr() - is @addr in an executable mapping already emitted
 *	for a task's address space?
 * @tsk: as for cprof_maps_of()
 * @addr: a user address
 *
 * Context: as cprof_maps_of().
 * Return: false also when none was emitted yet.
 */
bool cprof_maps_exec_addr(struct task_struct *tsk, u64 addr)
{
	struct cprof_mmstate *st;

	st = cprof_mm_lookup(tsk->mm, tsk->tgid, READ_ONCE(tsk->self_exec_id),
			     __cprof_maps_start_ns(tsk));
	return st && cprof_mm_covers(st, addr);
}

/* Was this key requested lately on this CPU?  Records it if not. */
static bool cprof_maps_recent(struct cprof_maps_queue *q,
			      const struct mm_struct *mm, u64 exec_id,
			      u64 start_ns)
{
	struct cprof_maps_key *k;
	int i;

	for (i = 0; i < CPROF_MAPS_RECENT; i++) {
		k = &q->recent[i];
		if (k->mm == mm && k->exec_id == exec_id &&
		    k->start_ns == start_ns &&
		    time_before(jiffies, k->at + CPROF_MAPS_RETRY))
			return true;
	}
	k = &q->recent[q->recent_next++ % CPROF_MAPS_RECENT];
	k->mm = mm;
	k->exec_id = exec_id;
	k->start_ns = start_ns;
	k->at = jiffies;
	return false;
}

/*
 * current's state, as cprof_mm_lookup() gives it: @m's while it holds,
 * else looked up into @m.  Inside an RCU read side.
 */
static struct cprof_mmstate *cprof_maps_memo_state(struct cprof_maps_memo *m,
						   u64 exec_id, u64 start_ns)
{
	struct task_struct *tsk = current;
	unsigned long epoch = cprof_maps_epoch();

	if (m->mm == tsk->mm && m->tgid == tsk->tgid &&
	    m->exec_id == exec_id && m->start_ns == start_ns &&
	    m->epoch == epoch)
		return m->st;
	m->mm = tsk->mm;
	m->tgid = tsk->tgid;
	m->exec_id = exec_id;
	m->start_ns = start_ns;
	m->epoch = epoch;
	m->st = cprof_mm_lookup(tsk->mm, tsk->tgid, exec_id, start_ns);
	m->end[0] = 0;
	m->end[1] = 0;
	return m->st;
}

/* Does @m->st cover @ip?  One of @m's two ranges, else searched and kept. */
static bool cprof_maps_memo_covers(struct cprof_maps_memo *m, u64 ip)
{
	const struct cprof_file_pos *r;

	if ((ip >= m->start[0] && ip < m->end[0]) ||
	    (ip >= m->start[1] && ip < m->end[1]))
		return true;
	r = cprof_mm_range(m->st, ip);
	if (!r)
		return false;
	m->start[m->next] = r->start;
	m->end[m->next] = r->end;
	m->next = !m->next;
	return true;
}

/*
 * cprof_maps_note() past its inline look: the memo's key and ranges
 * looked at again, a range searched, a request queued.
 */
bool __cprof_maps_note(const u64 *ips, int n, int known, u64 now)
{
	struct task_struct *tsk = current;
	struct cprof_maps_queue *q = this_cpu_ptr(&cprof_maps_queue);
	struct cprof_maps_memo *m = this_cpu_ptr(&cprof_maps_memo);
	struct cprof_mmstate *st;
	struct cprof_maps_req *req;
	u64 exec_id, start_ns;
	u64 addr = ips[0];
	int i = known;

	/* the queue's one producer, and the memo's one user, on this CPU */
	if (WARN_ON_ONCE(!irqs_disabled()))
		return false;
	exec_id = READ_ONCE(tsk->self_exec_id);
	start_ns = __cprof_maps_start_ns(tsk);
	/*
	 * Full: a later tick asks again.  Checked first, so that a request
	 * dropped here does not hold back the next one.  Pairs with
	 * smp_store_release() in cprof_maps_pop().
	 */
	if (q->head - smp_load_acquire(&q->tail) >= CPROF_MAPS_QLEN)
		return false;
	st = cprof_maps_memo_state(m, exec_id, start_ns);
	if (st) {
		for (; i < n && cprof_maps_memo_covers(m, ips[i]); i++)
			;
		/*
		 * An uncovered leaf is code that ran: something was mapped.
		 * Deeper frames of a chain broken by code built without frame
		 * pointers may be junk that no mapping covers even after a
		 * request was served: then ask about those only rarely.
		 */
		if (i == n || time_before(jiffies, READ_ONCE(st->retry_at)) ||
		    (i && st->junk &&
		     time_before(jiffies, st->synced_at + CPROF_MAPS_JUNK_RETRY)))
			return false;
		addr = ips[i];
		WRITE_ONCE(st->retry_at, jiffies + CPROF_MAPS_RETRY);
	}
	if (!st && cprof_maps_recent(q, tsk->mm, exec_id, start_ns))
		return false;
	req = &q->req[q->head % CPROF_MAPS_QLEN];
	req->pid = get_pid(task_pid(tsk));
	req->mm = tsk->mm;
	req->exec_id = exec_id;
	req->start_ns = start_ns;
	req->addr = addr;
	req->time_ns = now;
	/* Pairs with smp_load_acquire() in cprof_maps_pop(). */
	smp_store_release(&q->head, q->head + 1);
	return true;
}

/**
 * cprof_maps_pending() - are requests waiting to be served?
 *
 * Context: the reader.
 * Return: true if any CPU's queue holds one.
 */
bool cprof_maps_pending(void)
{
	int cpu;

	for_each_possible_cpu(cpu) {
		struct cprof_maps_queue *q = per_cpu_ptr(&cprof_maps_queue, cpu);

		/* Pairs with smp_store_release() in __cprof_maps_note(). */
		if (smp_load_acquire(&q->head) != q->tail)
			return true;
	}
	return false;
}

static bool cprof_maps_pop(struct cprof_maps_queue *q, struct cprof_maps_req *out)
{
	/* Pairs with smp_store_release() in __cprof_maps_note(). */
	if (smp_load_acquire(&q->head) == q->tail)
		return false;
	*out = q->req[q->tail % CPROF_MAPS_QLEN];
	/* Pairs with smp_load_acquire() in __cprof_maps_note(). */
	smp_store_release(&q->tail, q->tail + 1);
	return true;
}

/*
 * The file of @v as stat() describes it (device, inode, size, mtime): the
 * key to its unwind table, which userland makes from the file it opens;
 * with its birth time and file system, its MMAP record's identity.  The path
 * the user mapped, as /proc/PID/map_files and stat() show it: overlayfs
 * maps a file of a lower layer in its place.  Cached attributes only: a
 * network file system is not asked.
 */
static void cprof_vma_stat(struct cprof_vma *v)
{
	const struct path *path = file_user_path(v->file);
	struct kstat ks;

	if (vfs_getattr_nosec(path, &ks,
			      STATX_INO | STATX_SIZE | STATX_MTIME |
			      STATX_BTIME, AT_STATX_DONT_SYNC))
		return;		/* dev 0: no table */
	v->pos.dev = new_encode_dev(ks.dev);
	v->pos.ino = ks.ino;
	v->pos.size = ks.size;
	v->pos.mtime_ns = timespec64_to_ns(&ks.mtime);
	if (ks.result_mask & STATX_BTIME)
		v->btime_ns = timespec64_to_ns(&ks.btime);
	/* the file mapped: under an overlay, the lower layer's (FUSE?) */
	v->fs_magic = file_inode(v->file)->i_sb->s_magic;
}

#define CPROF_MAPS_STATS	4	/* files a listing remembers stat()ing */

/*
 * cprof_vma_stat() for each of @n mappings with a file; a file mapped
 * many times (a network file system may answer each stat() with a round
 * trip) is asked once while it is among the last CPROF_MAPS_STATS asked.
 */
static void cprof_vmas_stat(struct cprof_vma *v, u32 n)
{
	const struct cprof_vma *seen[CPROF_MAPS_STATS] = {};
	u32 i, j, next = 0;

	for (i = 0; i < n; i++) {
		if (!v[i].file)
			continue;
		for (j = 0; j < CPROF_MAPS_STATS && seen[j]; j++)
			if (path_equal(file_user_path(seen[j]->file),
				       file_user_path(v[i].file)))
				break;
		if (j < CPROF_MAPS_STATS && seen[j]) {
			v[i].pos.dev = seen[j]->pos.dev;
			v[i].pos.ino = seen[j]->pos.ino;
			v[i].pos.size = seen[j]->pos.size;
			v[i].pos.mtime_ns = seen[j]->pos.mtime_ns;
			v[i].btime_ns = seen[j]->btime_ns;
			v[i].fs_magic = seen[j]->fs_magic;
			continue;
		}
		cprof_vma_stat(&v[i]);
		seen[next++ % CPROF_MAPS_STATS] = &v[i];
	}
}

/* Did @old keep a range at [@start, @end) of offset @pgoff? */
static bool cprof_range_was(const struct cprof_mmstate *old, u64 start,
			    u64 end, u64 pgoff)
{
	const struct cprof_file_pos *r = old ? cprof_mm_range(old, start) : NULL;

	return r && r->start == start && r->end == end && r->pgoff == pgoff;
}

/*
 * The executable mappings of @mm, with file references, into
 * cprof_maps_vmas: the one holding @addr, those @old kept, and new ones
 * while fewer than CPROF_MAPS_RANGES in all are taken (the rest counted
 * in cprof_mm_capped).  Nothing is allocated under the lock, which is
 * only tried: a stuck process may hold it.  Sleeps.
 * Return: how many, or -EAGAIN when the lock was busy.
 */
static int cprof_maps_collect(struct mm_struct *mm,
			      const struct cprof_mmstate *old, u64 addr)
{
	struct cprof_vma *v = cprof_maps_vmas;
	u32 n = 0, fresh = 0, room, left = 0;
	struct vm_area_struct *vma;

	VMA_ITERATOR(vmi, mm, 0);
	/* old->nr <= CPROF_MAPS_RANGES: n <= CPROF_MAPS_RANGES + 1 */
	room = CPROF_MAPS_RANGES - 1 - min_t(u32, old ? old->nr : 0,
					     CPROF_MAPS_RANGES - 1);
	if (!mmap_read_trylock(mm))
		return -EAGAIN;
	for_each_vma(vmi, vma) {
		/* as emitted: an offset in the file, 0 without one */
		u64 pgoff = vma->vm_file ? (u64)vma->vm_pgoff << PAGE_SHIFT : 0;
		bool asked;

		if (!(vma->vm_flags & VM_EXEC))
			continue;
		asked = addr >= vma->vm_start && addr < vma->vm_end;
		if (n > CPROF_MAPS_RANGES ||
		    (!asked &&
		     !cprof_range_was(old, vma->vm_start, vma->vm_end, pgoff) &&
		     fresh++ >= room)) {
			left++;
			continue;
		}
		memset(&v[n], 0, sizeof(v[n]));
		v[n].pos.start = vma->vm_start;
		v[n].pos.end = vma->vm_end;
		v[n].pos.pgoff = pgoff;
		if (vma->vm_file) {
			v[n].file = get_file(vma->vm_file);
		} else if (vma->vm_start == (unsigned long)mm->context.vdso) {
			v[n].name = "[vdso]";
			/* its table's key (cprof_format.h) */
			v[n].pos.dev = CPROF_UTABLE_VDSO_DEV;
			v[n].pos.ino = CPROF_UTABLE_VDSO_INO;
			v[n].pos.size = vma->vm_end - vma->vm_start;
		} else {
			v[n].name = CPROF_ANON_NAME;
		}
		n++;
	}
	mmap_read_unlock(mm);
	cprof_mm_capped += left;
	cprof_vmas_stat(v, n);
	return n;
}

/*
 * Copy file bytes from the page cache only.  The files are chosen by the
 * profiled processes (FUSE, NFS...): starting I/O on one could block the
 * reader for ever.  Their first pages are mapped and so almost always cached.
 */
static bool cprof_read_cached(struct file *file, loff_t pos, void *buf,
			      size_t len)
{
	struct inode *inode = file_inode(file);

	if (!S_ISREG(inode->i_mode) || pos < 0 ||
	    pos + len > i_size_read(inode))
		return false;
	while (len) {
		size_t n = min_t(size_t, len, PAGE_SIZE - offset_in_page(pos));
		struct folio *folio;
		void *src;
		bool ok;

		folio = filemap_get_folio(file->f_mapping, pos >> PAGE_SHIFT);
		if (IS_ERR_OR_NULL(folio))
			return false;
		ok = folio_test_uptodate(folio);
		if (ok) {
			src = kmap_local_folio(folio, offset_in_folio(folio, pos));
			memcpy(buf, src, n);
			kunmap_local(src);
		}
		folio_put(folio);
		if (!ok)
			return false;
		buf += n;
		pos += n;
		len -= n;
	}
	return true;
}

/* The GNU build ID in the notes of @len bytes at cprof_maps_page. */
static u8 cprof_build_id_note(size_t len, u8 *id)
{
	const char *p = cprof_maps_page;

	while (len >= sizeof(Elf64_Nhdr)) {
		const Elf64_Nhdr *nh = (const void *)p;
		size_t name = ALIGN((size_t)nh->n_namesz, 4);
		size_t desc = ALIGN((size_t)nh->n_descsz, 4);

		len -= sizeof(*nh);
		p += sizeof(*nh);
		if (name > len || desc > len - name)
			break;
		if (nh->n_type == CPROF_NT_GNU_BUILD_ID && nh->n_namesz == 4 &&
		    !memcmp(p, "GNU", 4) && nh->n_descsz &&
		    nh->n_descsz <= CPROF_BUILD_ID_MAX) {
			memcpy(id, p + name, nh->n_descsz);
			return nh->n_descsz;
		}
		p += name + desc;
		len -= name + desc;
	}
	return 0;
}

/* The GNU build ID of an ELF file, from its program headers' notes. */
static u8 cprof_build_id(struct file *file, u8 *id)
{
	Elf64_Ehdr eh;
	Elf64_Phdr ph;
	u8 size;
	int i;

	if (!cprof_read_cached(file, 0, &eh, sizeof(eh)) ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_phentsize != sizeof(ph) || eh.e_phnum > 64)
		return 0;
	for (i = 0; i < eh.e_phnum; i++) {
		if (!cprof_read_cached(file, eh.e_phoff + i * sizeof(ph), &ph,
				       sizeof(ph)))
			return 0;
		if (ph.p_type != PT_NOTE || ph.p_filesz > PAGE_SIZE ||
		    !cprof_read_cached(file, ph.p_offset, cprof_maps_page,
				       ph.p_filesz))
			continue;
		size = cprof_build_id_note(ph.p_filesz, id);
		if (size)
			return size;
	}
	return 0;
}

/* The process whose mappings are listed, as its records name it. */
struct cprof_maps_proc {
	pid_t tgid;
	u64 start_ns;		/* when it started, for a file's identity */
	u32 uid;		/* its euid, initial user namespace */
};

static void cprof_maps_proc_of(struct task_struct *tsk,
			       struct cprof_maps_proc *p)
{
	p->tgid = tsk->tgid;
	p->start_ns = cprof_maps_start_ns(tsk);
	p->uid = from_kuid_munged(&init_user_ns, task_euid(tsk));
}

/*
 * Write one CPROF_REC_MMAP of @p at @dst, stamped @time_ns; 0 if it does
 * not fit in @room.  A sample before that time belongs to whatever was
 * mapped there before (the binary a process ran before an exec, at the
 * same addresses), one after it to this mapping.
 */
static size_t cprof_maps_emit(void *dst, size_t room,
			      const struct cprof_maps_proc *p,
			      const struct cprof_vma *v, u64 time_ns)
{
	struct cprof_mmap *m = dst;
	struct cprof_file_id *id;
	const char *path = v->name;
	bool has_id = v->file && v->pos.dev;
	size_t len, size;

	if (v->file) {
		path = d_path(file_user_path(v->file), cprof_maps_page,
			      PAGE_SIZE);
		if (IS_ERR(path))
			path = "[unknown]";
	}
	len = strlen(path) + 1;
	size = CPROF_ALIGN(sizeof(*m) + len) + (has_id ? sizeof(*id) : 0);
	if (size > room)
		return 0;
	memset(m, 0, size);
	memmove(m->path, path, len);	/* path may live in cprof_maps_page */
	m->rec.type = CPROF_REC_MMAP;
	m->rec.size = size;
	m->rec.flags = CPROF_MMAP_UID;
	m->uid = p->uid;
	if (has_id) {
		m->rec.flags |= CPROF_MMAP_FILE_ID;
		id = dst + size - sizeof(*id);
		id->ino = v->pos.ino;
		id->btime_ns = v->btime_ns;
		id->start_ns = p->start_ns;
		id->dev = v->pos.dev;
		id->fs_magic = v->fs_magic;
	}
	m->time_ns = time_ns;
	m->pid = p->tgid;
	m->start = v->pos.start;
	m->end = v->pos.end;
	m->pgoff = v->pos.pgoff;
	if (v->file)
		m->build_id_size = cprof_build_id(v->file, m->build_id);
	return size;
}

/* Was @v emitted before?  @old's ranges are sorted and do not overlap. */
static bool cprof_range_known(const struct cprof_mmstate *old,
			      const struct cprof_vma *v)
{
	u32 lo = 0, hi = old ? old->nr : 0;

	while (lo < hi) {
		u32 mid = lo + (hi - lo) / 2;
		const struct cprof_file_pos *r = &old->ranges[mid];

		if (v->pos.start < r->start)
			hi = mid;
		else if (v->pos.start > r->start)
			lo = mid + 1;
		else
			return r->end == v->pos.end && r->pgoff == v->pos.pgoff &&
			       r->dev == v->pos.dev && r->ino == v->pos.ino;
	}
	return false;
}

/* The index of the mapping in @v (sorted) holding @addr, or @nr. */
static u32 cprof_vma_index(const struct cprof_vma *v, u32 nr, u64 addr)
{
	u32 lo = 0, hi = nr;

	while (lo < hi) {
		u32 mid = lo + (hi - lo) / 2;

		if (addr < v[mid].pos.start)
			hi = mid;
		else if (addr >= v[mid].pos.end)
			lo = mid + 1;
		else
			return mid;
	}
	return nr;
}

/*
 * Has the process of @st exited (its last thread, zombie or reaped) or
 * exec'd since?  Then no tick can ask for @st again.
 */
static bool cprof_mm_gone(const struct cprof_mmstate *st)
{
	struct task_struct *leader;
	bool gone;

	rcu_read_lock();
	leader = st->pid ? pid_task(st->pid, PIDTYPE_TGID) : NULL;
	gone = !leader || !atomic_read(&leader->signal->live) ||
	       READ_ONCE(leader->self_exec_id) != st->exec_id ||
	       leader->start_boottime != st->start_ns;
	rcu_read_unlock();
	return gone;
}

/* Drop the states of processes gone, but @keep; under the mutex. */
static void cprof_mm_sweep(const struct cprof_mmstate *keep)
{
	struct cprof_mmstate *st;
	struct hlist_node *tmp;
	int bkt;

	lockdep_assert_held(&cprof_maps_mutex);
	cprof_mm_sweep_at = jiffies + CPROF_MAPS_SWEEP;
	hash_for_each_safe(cprof_mm_table, bkt, tmp, st, node) {
		if (st != keep && cprof_mm_gone(st)) {
			cprof_mm_drop(st);
			cprof_mm_exited++;
		}
	}
}

/*
 * Evict the least recently sampled states but @keep until one of @bytes
 * fits under @limit (and, @keep NULL, one more is allowed).  A scan an
 * eviction: at most CPROF_MAPS_MAX states.  Under the mutex.
 */
static void cprof_mm_evict(const struct cprof_mmstate *keep, size_t bytes,
			   u64 limit)
{
	struct cprof_mmstate *st, *lru;
	int bkt;

	while (cprof_mm_bytes + bytes > limit ||
	       (!keep && cprof_mm_count >= CPROF_MAPS_MAX)) {
		lru = NULL;
		hash_for_each(cprof_mm_table, bkt, st, node)
			if (st != keep &&
			    (!lru || time_before(READ_ONCE(st->used),
						 READ_ONCE(lru->used))))
				lru = st;
		if (!lru)
			break;
		cprof_mm_drop(lru);
		cprof_mm_evicted++;
		cond_resched();
	}
}

/*
 * Make room for a state of @bytes besides @keep (NULL: one more state),
 * which stays (its process may be exiting as it is served) and, once
 * replaced, is counted until it is freed: sweep, then evict.  If dropped
 * states still take the room, evict down to an eighth under the budget
 * (cprof_rcufree_target()) and wait for all of them to be freed: one
 * wait, then room for the next few without one.  Under the mutex.
 */
static void cprof_mm_make_room(const struct cprof_mmstate *keep, size_t bytes)
{
	lockdep_assert_held(&cprof_maps_mutex);
	if (cprof_mm_held() + bytes > cprof_mm_limit ||
	    (!keep && cprof_mm_count >= CPROF_MAPS_MAX))
		cprof_mm_sweep(keep);
	cprof_mm_evict(keep, bytes, cprof_mm_limit);
	if (cprof_rcufree_pending(&cprof_mm_freeing) &&
	    cprof_mm_held() + bytes > cprof_mm_limit) {
		cprof_mm_evict(keep, bytes,
			       cprof_rcufree_target(cprof_mm_limit, bytes));
		/* drops are made under the mutex only: after it, none waits */
		cprof_rcufree_wait();
	}
}

/*
 * Serve one request: emit the new ranges of @tsk's address space, the one
 * holding the address that asked first, then others while the state has
 * room (CPROF_MAPS_RANGES) and CPROF_MAPS_ROOM of @room lasts: a process
 * with thousands of mappings, listed again and again (evicted, or asking
 * about one more), must not hold up the next process's request (it may
 * exit before it is served) by filling the reader's buffer.
 */
static size_t cprof_maps_serve(struct task_struct *tsk, struct mm_struct *mm,
			       const struct cprof_maps_req *req, void *dst,
			       size_t room)
{
	struct cprof_mmstate *old, *st;
	struct cprof_vma *v = cprof_maps_vmas;
	size_t done = 0, size, bytes;
	u32 nr = 0, kept = 0, i, first;
	struct cprof_maps_proc proc;
	u64 first_ns, stamp;
	int listed;

	room = min_t(size_t, room, CPROF_MAPS_ROOM);
	cprof_maps_proc_of(tsk, &proc);
	old = cprof_mm_lookup(mm, tsk->tgid, req->exec_id, req->start_ns);
	listed = cprof_maps_collect(mm, old, req->addr);
	/*
	 * Not listed now (the mmap lock was busy): a new address space is
	 * entered all the same, without ranges, to keep the time it was
	 * first asked about and to let the ticks ask again soon.
	 */
	if (listed < 0 && old) {
		/* published: read by ticks (cprof_maps_settling()) */
		WRITE_ONCE(old->first_ns, min(old->first_ns, req->time_ns));
		return 0;
	}
	if (listed > 0)
		nr = listed;
	first_ns = old ? min(old->first_ns, req->time_ns) : req->time_ns;
	/*
	 * The first listing of an address space is stamped with its first
	 * asking sample (an exec'd program's own mappings); later ones with
	 * the sample that asked, so that a library mapped where another was
	 * unmapped does not claim the earlier one's samples.
	 */
	stamp = old && old->nr ? req->time_ns : first_ns;
	first = cprof_vma_index(v, nr, req->addr);
	if (first < nr) {
		v[first].keep = cprof_range_known(old, &v[first]);
		if (!v[first].keep) {
			size = cprof_maps_emit(dst, room, &proc, &v[first],
					       stamp);
			v[first].keep = size;
			done = size;
		}
		kept += v[first].keep;
	}
	for (i = 0; i < nr; i++) {
		if (i == first)
			continue;
		v[i].keep = cprof_range_known(old, &v[i]);
		if (!v[i].keep && kept < CPROF_MAPS_RANGES) {
			size = cprof_maps_emit(dst + done, room - done, &proc,
					       &v[i], stamp);
			v[i].keep = size;
			done += size;
		}
		kept += v[i].keep;
	}
	/* one over with the one asked: an old one goes */
	for (i = nr; kept > CPROF_MAPS_RANGES && i--;) {
		if (i != first && v[i].keep) {
			v[i].keep = false;
			kept--;
			cprof_mm_capped++;
		}
	}
	bytes = cprof_mm_size(kept);
	cprof_mm_make_room(old, bytes);
	st = kvzalloc(bytes, GFP_KERNEL_ACCOUNT);
	for (i = 0; i < nr; i++) {
		if (st && v[i].keep)
			st->ranges[st->nr++] = v[i].pos;
		if (v[i].file)
			fput(v[i].file);
	}
	/* (without a state, what was emitted is emitted again when asked) */
	if (!st)
		return done;
	st->bytes = bytes;
	st->mm = mm;
	st->tgid = tsk->tgid;
	st->exec_id = req->exec_id;
	st->start_ns = req->start_ns;
	st->pid = old ? old->pid : get_task_pid(tsk, PIDTYPE_TGID);
	if (old)
		old->pid = NULL;	/* handed over */
	st->used = jiffies;
	st->first_ns = first_ns;
	st->junk = (old && old->junk) ||
		   (listed >= 0 && !cprof_mm_covers(st, req->addr));
	/*
	 * Back off from one jiffy to CPROF_MAPS_RETRY: a new process maps
	 * its libraries right after the first request (made from ld.so), and
	 * a short-lived one may exit before a long wait is over.
	 */
	st->syncs = old ? old->syncs + 1 : 0;
	st->synced_at = jiffies;
	st->retry_at = jiffies + min_t(unsigned long, CPROF_MAPS_RETRY,
				       1UL << min(st->syncs, 8u));
	if (old)
		cprof_mm_drop(old);
	hash_add_rcu(cprof_mm_table, &st->node, (unsigned long)mm);
	cprof_mm_changed();
	cprof_mm_count++;
	cprof_mm_bytes += bytes;
	return done;
}

static size_t cprof_maps_handle(const struct cprof_maps_req *req, void *dst,
				size_t room)
{
	struct task_struct *tsk = get_pid_task(req->pid, PIDTYPE_PID);
	struct mm_struct *mm;
	size_t done = 0;

	put_pid(req->pid);
	if (!tsk)
		return 0;
	mm = get_task_mm(tsk);
	if (mm == req->mm && READ_ONCE(tsk->self_exec_id) == req->exec_id &&
	    cprof_maps_start_ns(tsk) == req->start_ns)
		done = cprof_maps_serve(tsk, mm, req, dst, room);
	if (mm)
		mmput(mm);
	put_task_struct(tsk);
	return done;
}

/**
 * cprof_maps_sync() - serve the queued requests
 * @dst: where to write CPROF_REC_MMAP records
 * @room: bytes available at @dst; requests are served while at least
 *	CPROF_MAPS_ROOM of it is left
 *
 * Once a second, first drops the states of processes that exited.
 *
 * Context: the reader, process context; may sleep, and wait for RCU
 *	callbacks (rcu_barrier()): under no lock one or CPU hotplug takes.
 * Return: the bytes written.
 */
size_t cprof_maps_sync(void *dst, size_t room)
{
	struct cprof_maps_req req;
	size_t done = 0;
	int cpu;

	mutex_lock(&cprof_maps_mutex);
	if (time_after_eq(jiffies, cprof_mm_sweep_at))
		cprof_mm_sweep(NULL);
	for_each_possible_cpu(cpu) {
		struct cprof_maps_queue *q = per_cpu_ptr(&cprof_maps_queue, cpu);

		while (room - done >= CPROF_MAPS_ROOM && cprof_maps_pop(q, &req))
			done += cprof_maps_handle(&req, dst + done,
						  room - done);
	}
	mutex_unlock(&cprof_maps_mutex);
	return done;
}

/**
 * cprof_maps_task() - emit the mappings of a task's address space now
 * @tsk: a task of the address space
 * @mm: its address space, a reference held
 * @addrs: user addresses its stack holds, innermost first
 * @n: how many
 * @now: the time to stamp them with
 * @dst: where to write CPROF_REC_MMAP records
 * @room: bytes available at @dst, at least CPROF_MAPS_ROOM
 *
 * As a tick's request, served at once: made when nothing was emitted for
 * the address space yet, or one of @addrs is not covered (a frame past the
 * first: at most once in CPROF_MAPS_JUNK_RETRY).  A thread snapshot lists
 * each address space before it walks a thread of it, and again after if
 * the walk found code not listed.
 *
 * Context: process; may sleep, and wait for RCU callbacks as
 *	cprof_maps_sync() does.
 * Return: the bytes written.
 */
size_t cprof_maps_task(struct task_struct *tsk, struct mm_struct *mm,
		       const u64 *addrs, int n, u64 now, void *dst,
		       size_t room)
{
	struct cprof_maps_req req = {
		.mm = mm, .exec_id = READ_ONCE(tsk->self_exec_id),
		.start_ns = cprof_maps_start_ns(tsk),
		.addr = n ? addrs[0] : 0, .time_ns = now,
	};
	struct cprof_mmstate *st;
	size_t done = 0;
	int i = 0;

	if (room < CPROF_MAPS_ROOM)
		return 0;
	mutex_lock(&cprof_maps_mutex);
	st = cprof_mm_lookup(mm, tsk->tgid, req.exec_id, req.start_ns);
	if (st) {
		cprof_maps_touch(st);
		while (i < n && cprof_mm_covers(st, addrs[i]))
			i++;
		/* deeper frames may be junk: asked about once a second */
		if (i == n || (i && time_before(jiffies, st->synced_at +
						CPROF_MAPS_JUNK_RETRY)))
			goto unlock;
		req.addr = addrs[i];
	}
	done = cprof_maps_serve(tsk, mm, &req, dst, room);
unlock:
	mutex_unlock(&cprof_maps_mutex);
	return done;
}

/**
 * cprof_maps_usage() - what the address-space states take
 * @u: filled in; counts are since the module was loaded
 *
 * Context: process; sleeps.
 */
void cprof_maps_usage(struct cprof_maps_usage *u)
{
	mutex_lock(&cprof_maps_mutex);
	u->states = cprof_mm_count;
	u->bytes = cprof_mm_held();
	u->limit = cprof_mm_limit;
	u->evicted = cprof_mm_evicted;
	u->exited = cprof_mm_exited;
	u->capped = cprof_mm_capped;
	mutex_unlock(&cprof_maps_mutex);
}

/**
 * cprof_maps_reset() - forget all ranges and requests
 * Context: between profiles: no tick runs.
 */
void cprof_maps_reset(void)
{
	struct cprof_maps_req req;
	struct cprof_mmstate *st;
	struct hlist_node *tmp;
	int bkt, cpu;

	mutex_lock(&cprof_maps_mutex);
	for_each_possible_cpu(cpu) {
		struct cprof_maps_queue *q = per_cpu_ptr(&cprof_maps_queue, cpu);

		while (cprof_maps_pop(q, &req))
			put_pid(req.pid);
		memset(q->recent, 0, sizeof(q->recent));
	}
	hash_for_each_safe(cprof_mm_table, bkt, tmp, st, node)
		cprof_mm_drop(st);
	mutex_unlock(&cprof_maps_mutex);
}

/**
 * cprof_maps_init() - set the budget; allocate the page paths and ELF notes
 *	are read into, and the buffer of a listing
 * @limit: the bytes all address-space states may take (maps_mb)
 *
 * Context: module init.
 * Return: 0 or -ENOMEM.
 */
int cprof_maps_init(u64 limit)
{
	cprof_mm_limit = limit;
	cprof_maps_page = kmalloc(PAGE_SIZE, GFP_KERNEL);
	cprof_maps_vmas = kvmalloc_array(CPROF_MAPS_RANGES + 1,
					 sizeof(*cprof_maps_vmas), GFP_KERNEL);
	if (cprof_maps_page && cprof_maps_vmas)
		return 0;
	kfree(cprof_maps_page);
	kvfree(cprof_maps_vmas);
	return -ENOMEM;
}

/**
 * cprof_maps_exit() - forget every address space, wait for their states
 *	to be freed, and free the page
 *
 * Context: module exit, after the last tick and the last reader.
 */
void cprof_maps_exit(void)
{
	cprof_maps_reset();
	cprof_rcufree_exit(&cprof_mm_freeing);
	kfree(cprof_maps_page);
	kvfree(cprof_maps_vmas);
}
