// SPDX-License-Identifier: GPL-2.0
/*
 * One process's allocations (profile kind heap): uprobes on its C
 * allocator's functions (ctl's heap_<name>=, their addresses in the
 * process, resolved here to the mapped file and offset), registered only
 * while such a profile runs and filtered to that process's mm.  As Go
 * samples its heap, allocations are sampled by bytes: each CPU counts
 * down an exponentially distributed number of bytes, mean heap_rate, and
 * the allocation that crosses zero is sampled.  A sampled allocation is
 * recorded at its return (the pointer known, the user stack the
 * caller's): a CPROF_REC_SAMPLE with a struct cprof_heaptrail, its
 * pointer kept with its size and id in a table of heap_kb KiB (full: the
 * sample is counted lost); a free of a kept pointer writes a
 * CPROF_REC_HEAPFREE.  Probes run in the process's context, preemptible;
 * records are written with interrupts disabled so that a CPU's ring keeps
 * one producer, within ctl's budget (hookcost.c).  docs/design.md, "Heap".
 */
#include <linux/atomic.h>
#include <linux/hash.h>
#include <linux/irqflags.h>
#include <linux/local_lock.h>
#include <linux/log2.h>
#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/overflow.h>
#include <linux/percpu.h>
#include <linux/pid.h>
#include <linux/ptrace.h>
#include <linux/random.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/timekeeping.h>
#include <linux/uaccess.h>
#include <linux/workqueue.h>

#include "access.h"
#include "heap.h"
#include "hookcost.h"
#include "sample.h"

/* glibc's posix_memalign() calls malloc() for an alignment up to this */
#define CPROF_HEAP_MALLOC_ALIGN	16
/* sampled calls between their entry and return, all threads */
#define CPROF_HEAP_PENDING	64
/* a pending call older than this may give its slot to another thread's */
#define CPROF_HEAP_PEND_NS	NSEC_PER_SEC

/* A sampled allocation kept until it is freed. */
struct cprof_heap_live {
	struct hlist_node node;
	u64 ptr;
	u64 size;
	u64 id;
};

/* A sampled call on its way back: the thread and its stack at the entry. */
struct cprof_heap_pend {
	pid_t pid;			/* with start, the thread; 0: free */
	u64 start;			/* the thread's start_time */
	u64 time;			/* ns at the entry */
	unsigned long sp;
	u64 size;			/* 0: not sampled (realloc) */
	unsigned long memptr;		/* posix_memalign's */
	u64 old;			/* realloc's block, kept ... */
	u64 old_id;			/* ... with this id; else 0 */
	bool outer;			/* noted for the malloc it calls */
};

/* One CPU's sampling and recording; its own CPU only writes it. */
struct cprof_heap_cpu {
	local_lock_t lock;		/* left's */
	struct cprof_hookcost cost;	/* against the budget; stats */
	s64 left;			/* bytes to the next sample */
	u64 events;			/* stats: allocations recorded */
	u64 frees;			/* stats: frees recorded */
	u64 full;			/* stats: no room to keep one */
	u64 free_lost;			/* stats: no room for a free */
	u64 skipped;			/* stats: over budget */
};

static DEFINE_PER_CPU(struct cprof_heap_cpu, cprof_heap_cpus) = {
	.lock = INIT_LOCAL_LOCK(lock),
};

static struct cprof_uprobe cprof_heap_probes[CPROF_HEAP_NR_FN];
static bool cprof_heap_registered[CPROF_HEAP_NR_FN];	/* cprof_heap_lock */
static struct mm_struct *cprof_heap_mm __read_mostly;	/* grabbed */
static const struct cprof_settings *cprof_heap_set __read_mostly;
static DEFINE_MUTEX(cprof_heap_lock);
static u64 cprof_heap_deadline;		/* the profile's end */
static bool cprof_heap_gone;		/* the process exited; heap_lock */

/* The live table and the pending calls, under their spinlocks. */
static DEFINE_SPINLOCK(cprof_heap_live_lock);
static struct hlist_head *cprof_heap_buckets;	/* 1 << cprof_heap_bits */
static unsigned int cprof_heap_bits;
static struct cprof_heap_live *cprof_heap_pool;
static HLIST_HEAD(cprof_heap_free_list);
static atomic_t cprof_heap_nr_live = ATOMIC_INIT(0);
static atomic64_t cprof_heap_last_id = ATOMIC64_INIT(0);
static DEFINE_SPINLOCK(cprof_heap_pend_lock);
static struct cprof_heap_pend cprof_heap_pend[CPROF_HEAP_PENDING];
static atomic_t cprof_heap_nr_pend = ATOMIC_INIT(0);

/* log2(@q) in 16.16 fixed point, @q > 0: the bits by squaring. */
static u32 cprof_heap_log2(u32 q)
{
	u32 ip = ilog2(q), frac = 0;
	u64 x = ((u64)q << 31) >> ip;	/* q / 2^ip in 1.31: [1, 2) */
	int i;

	for (i = 15; i >= 0; i--) {
		x = (x * x) >> 31;
		if (x >= 1ull << 32) {
			frac |= 1u << i;
			x >>= 1;
		}
	}
	return ip << 16 | frac;
}

/*
 * Bytes to the next sample: exponentially distributed, mean @rate, as
 * Go's runtime draws it: -ln(U) * rate, U uniform in (0, 1] in 2^-26
 * steps.
 */
static s64 cprof_heap_next(u32 rate)
{
	u32 q = (get_random_u32() >> 6) + 1;
	u64 nlog2 = (26ull << 16) - cprof_heap_log2(q);	/* -log2(U), 16.16 */
	u64 nln = (nlog2 * 45426) >> 16;		/* * ln 2, 16.16 */

	return ((nln * rate) >> 16) + 1;
}

/*
 * Is an allocation of @size bytes sampled?  Counts it down this CPU's,
 * under a local lock, not with interrupts off: the probes run in process
 * context only, and get_random_u32() takes sleeping locks on PREEMPT_RT.
 */
static bool cprof_heap_sampled(u64 size, u32 rate)
{
	struct cprof_heap_cpu *hc;
	bool hit = false;

	if (rate <= 1)
		return true;
	local_lock(&cprof_heap_cpus.lock);
	hc = this_cpu_ptr(&cprof_heap_cpus);
	if (size >= hc->left) {
		hc->left = cprof_heap_next(rate);
		hit = true;
	} else {
		hc->left -= size;
	}
	local_unlock(&cprof_heap_cpus.lock);
	return hit;
}

static struct hlist_head *cprof_heap_bucket(u64 ptr)
{
	return &cprof_heap_buckets[hash_64(ptr, cprof_heap_bits)];
}

/* The id of the allocation kept at @ptr, or 0 if none is. */
static u64 cprof_heap_lookup(u64 ptr)
{
	struct cprof_heap_live *e;
	u64 id = 0;

	spin_lock(&cprof_heap_live_lock);
	hlist_for_each_entry(e, cprof_heap_bucket(ptr), node) {
		if (e->ptr == ptr) {
			id = e->id;
			break;
		}
	}
	spin_unlock(&cprof_heap_live_lock);
	return id;
}

/*
 * Forget the allocation kept at @ptr, if its id is @want (0: any): its
 * id, or 0 if none was kept.
 */
static u64 cprof_heap_forget(u64 ptr, u64 want)
{
	struct cprof_heap_live *e;
	u64 id = 0;

	spin_lock(&cprof_heap_live_lock);
	hlist_for_each_entry(e, cprof_heap_bucket(ptr), node) {
		if (e->ptr == ptr && (!want || e->id == want)) {
			id = e->id;
			hlist_del(&e->node);
			hlist_add_head(&e->node, &cprof_heap_free_list);
			atomic_dec(&cprof_heap_nr_live);
			break;
		}
	}
	spin_unlock(&cprof_heap_live_lock);
	return id;
}

/* A kept allocation freed: its record; false: no room in the ring. */
static bool cprof_heap_record_free(u64 id)
{
	struct cprof_heap_cpu *hc;
	struct cprof_heapfree *rec;
	unsigned long flags;
	u64 now = ktime_get_ns();

	local_irq_save(flags);
	hc = this_cpu_ptr(&cprof_heap_cpus);
	rec = cprof_sample_reserve(sizeof(*rec), now, false);
	if (rec) {
		rec->time_ns = now;
		rec->id = id;
		cprof_sample_commit(CPROF_REC_HEAPFREE, 0, sizeof(*rec), now,
				    false);
		hc->frees++;
	} else {
		hc->free_lost++;
	}
	local_irq_restore(flags);
	return rec;
}

/*
 * A free of @ptr (free(), realloc()) in the profiled process: of the
 * allocation kept there whose id is @want, 0: whichever.
 */
static void cprof_heap_freed(u64 ptr, u64 want)
{
	u64 id;

	if (!ptr || !atomic_read(&cprof_heap_nr_live))
		return;
	id = cprof_heap_lookup(ptr);
	if (!id || (want && id != want))
		return;
	/*
	 * kept until its record is written: the reader, not told, would
	 * count it in use; a later allocation at @ptr tries again
	 */
	if (cprof_heap_record_free(id))
		cprof_heap_forget(ptr, id);
}

/* Write the sample of current's allocation; interrupts disabled. */
static bool cprof_heap_write(const struct cprof_settings *set, u64 size,
			     u64 id, u64 now)
{
	struct cprof_heap_cpu *hc = this_cpu_ptr(&cprof_heap_cpus);
	struct cprof_heaptrail *trail;
	struct cprof_sample *smp;
	u32 depth = set->depth, n;
	bool kick;
	u16 flags;

	if (cprof_hookcost_over(&hc->cost, now, set->budget)) {
		if (cprof_sample_skip(now, true))
			hc->skipped++;
		return false;
	}
	smp = cprof_sample_reserve(sizeof(*smp) + (2 * depth + 1) *
				   sizeof(u64) + sizeof(*trail), now, true);
	if (!smp)
		return false;
	flags = cprof_sample_current(smp, set, depth, set->accesses, 0, now,
				     &kick);
	n = smp->nr_kernel + smp->nr_user + 1;
	trail = (struct cprof_heaptrail *)(smp->ips + n);
	memset(trail, 0, sizeof(*trail));
	trail->type = CPROF_TRAIL_HEAP;
	trail->size = size;
	trail->id = id;
	cprof_sample_commit(CPROF_REC_SAMPLE, flags, sizeof(*smp) +
			    n * sizeof(u64) + sizeof(*trail), now, kick);
	hc->events++;
	cprof_hookcost_add(&hc->cost, ktime_get_ns() - now);
	return true;
}

/* A sampled allocation of @size bytes at @ptr returned to current. */
static void cprof_heap_allocated(u64 ptr, u64 size)
{
	const struct cprof_settings *set = READ_ONCE(cprof_heap_set);
	struct cprof_heap_live *e = NULL;
	unsigned long flags;
	u64 id, now = ktime_get_ns();
	bool written = false;

	if (!set)
		return;
	/* an address kept already was freed by a call not seen returning */
	cprof_heap_freed(ptr, 0);
	spin_lock(&cprof_heap_live_lock);
	if (!hlist_empty(&cprof_heap_free_list)) {
		e = hlist_entry(cprof_heap_free_list.first,
				struct cprof_heap_live, node);
		hlist_del(&e->node);
	}
	spin_unlock(&cprof_heap_live_lock);
	id = atomic64_inc_return(&cprof_heap_last_id);
	local_irq_save(flags);
	if (e)
		written = cprof_heap_write(set, size, id, now);
	else if (cprof_sample_skip(now, true))
		this_cpu_ptr(&cprof_heap_cpus)->full++;
	local_irq_restore(flags);
	if (!e)
		return;
	spin_lock(&cprof_heap_live_lock);
	if (written) {
		e->ptr = ptr;
		e->size = size;
		e->id = id;
		hlist_add_head(&e->node, cprof_heap_bucket(ptr));
		atomic_inc(&cprof_heap_nr_live);
	} else {
		hlist_add_head(&e->node, &cprof_heap_free_list);
	}
	spin_unlock(&cprof_heap_live_lock);
}

/* Is @p a call of current's? */
static bool cprof_heap_pend_mine(const struct cprof_heap_pend *p)
{
	return p->pid == current->pid && p->start == current->start_time;
}

/*
 * Note a call of current at its entry as @note says (sampled, a realloc
 * of a kept block, a posix_memalign that calls malloc); false: no room.
 * A call whose return is never seen (the thread killed in it, exec,
 * longjmp) leaves its slot: current's own lower or level with @sp is such
 * a call and is reused first (one higher up its stack is a call still
 * running that called this one: realloc calling malloc), then an empty
 * slot, then any noted more than CPROF_HEAP_PEND_NS ago.
 */
static bool cprof_heap_pend_add(unsigned long sp,
				const struct cprof_heap_pend *note)
{
	struct cprof_heap_pend *own = NULL, *empty = NULL, *old = NULL, *p;
	u64 now = ktime_get_ns();
	int i;

	spin_lock(&cprof_heap_pend_lock);
	for (i = 0; i < CPROF_HEAP_PENDING; i++) {
		p = &cprof_heap_pend[i];
		if (!p->pid) {
			if (!empty)
				empty = p;
		} else if (cprof_heap_pend_mine(p)) {
			if (p->sp <= sp) {
				own = p;
				break;
			}
		} else if (!old && (s64)(now - p->time) > CPROF_HEAP_PEND_NS) {
			old = p;
		}
	}
	p = own ?: empty ?: old;
	if (p) {
		if (p == empty)
			atomic_inc(&cprof_heap_nr_pend);
		p->pid = current->pid;
		p->start = current->start_time;
		p->time = now;
		p->sp = sp;
		p->size = note->size;
		p->memptr = note->memptr;
		p->old = note->old;
		p->old_id = note->old_id;
		p->outer = note->outer;
	}
	spin_unlock(&cprof_heap_pend_lock);
	return p;
}

/*
 * Is a noted call of current's running higher up its stack than @sp, one
 * that calls malloc (posix_memalign, realloc)?  It counts the bytes.
 */
static bool cprof_heap_pend_inner(unsigned long sp)
{
	u64 now = ktime_get_ns();
	bool inner = false;
	int i;

	spin_lock(&cprof_heap_pend_lock);
	for (i = 0; i < CPROF_HEAP_PENDING && !inner; i++) {
		struct cprof_heap_pend *p = &cprof_heap_pend[i];

		inner = p->pid && p->sp > sp && cprof_heap_pend_mine(p) &&
			(s64)(now - p->time) <= CPROF_HEAP_PEND_NS;
	}
	spin_unlock(&cprof_heap_pend_lock);
	return inner;
}

/* The sampled call of current returning to @sp's frame, taken; or false. */
static bool cprof_heap_pend_take(unsigned long sp, struct cprof_heap_pend *out)
{
	bool found = false;
	int i;

	spin_lock(&cprof_heap_pend_lock);
	for (i = 0; i < CPROF_HEAP_PENDING; i++) {
		struct cprof_heap_pend *p = &cprof_heap_pend[i];

		if (p->pid && p->sp == sp && cprof_heap_pend_mine(p)) {
			*out = *p;
			p->pid = 0;
			atomic_dec(&cprof_heap_nr_pend);
			found = true;
			break;
		}
	}
	spin_unlock(&cprof_heap_pend_lock);
	return found;
}

static enum cprof_heap_fn cprof_heap_fn_of(struct uprobe_consumer *self)
{
	return container_of(self, struct cprof_uprobe, uc) - cprof_heap_probes;
}

/* Only the profiled process's breakpoints are kept. */
static bool cprof_heap_want(struct mm_struct *mm)
{
	return mm == READ_ONCE(cprof_heap_mm);
}

/* At an allocator function's entry, in the process's context. */
static int cprof_heap_entry(struct uprobe_consumer *self,
			    struct pt_regs *regs)
{
	const struct cprof_settings *set = READ_ONCE(cprof_heap_set);
	enum cprof_heap_fn fn = cprof_heap_fn_of(self);
	struct cprof_heap_pend note = {};
	u64 size;

	/* another process mapping the file: no breakpoint there */
	if (current->mm != READ_ONCE(cprof_heap_mm))
		return UPROBE_HANDLER_REMOVE;
	if (!set || !user_64bit_mode(regs))
		return 0;
	switch (fn) {
	case CPROF_HEAP_FREE:
		cprof_heap_freed(regs->di, 0);
		return 0;
	case CPROF_HEAP_MALLOC:
		/* called by a noted posix_memalign or realloc, which count it */
		if (atomic_read(&cprof_heap_nr_pend) &&
		    cprof_heap_pend_inner(regs->sp))
			return 0;
		size = regs->di;
		break;
	case CPROF_HEAP_CALLOC:
		if (check_mul_overflow((u64)regs->di, (u64)regs->si, &size))
			return 0;
		break;
	case CPROF_HEAP_REALLOC:
		/*
		 * realloc(NULL, n) is malloc(n), realloc(p, 0) free(p): their
		 * probes count them.  A kept block is freed only if the call
		 * succeeds: noted, whether sampled or not.
		 */
		if (!regs->di || !regs->si)
			return 0;
		note.old = regs->di;
		if (atomic_read(&cprof_heap_nr_live))
			note.old_id = cprof_heap_lookup(note.old);
		size = regs->si;
		break;
	case CPROF_HEAP_MEMALIGN:
		/*
		 * glibc's malloc gives 16 bytes' alignment: posix_memalign
		 * calls it, from a frame that hides the caller's (a tail
		 * call), so each such call is noted to count it here
		 */
		note.outer = regs->si <= CPROF_HEAP_MALLOC_ALIGN;
		note.memptr = regs->di;
		size = regs->dx;
		break;
	default:
		return 0;
	}
	if (size && cprof_heap_sampled(size, set->heap_rate))
		note.size = size;
	if (!note.size && !note.old_id && !note.outer)
		return 0;
	if (!cprof_heap_pend_add(regs->sp, &note)) {
		unsigned long flags;

		/* realloc's block then taken as freed, as it most likely is */
		if (note.old_id)
			cprof_heap_freed(note.old, note.old_id);
		if (!note.size)
			return 0;
		local_irq_save(flags);
		if (cprof_sample_skip(ktime_get_ns(), true))
			this_cpu_ptr(&cprof_heap_cpus)->full++;
		local_irq_restore(flags);
	}
	return 0;
}

/*
 * At an allocator function's return: @regs are the caller's, the return
 * address popped.  Every call of a function with a return handler comes
 * here; only a sampled one was noted.
 */
static int cprof_heap_return(struct uprobe_consumer *self,
			     unsigned long func, struct pt_regs *regs)
{
	struct cprof_heap_pend p;
	u64 ptr = regs->ax;

	if (!atomic_read(&cprof_heap_nr_pend) || !user_64bit_mode(regs) ||
	    current->mm != READ_ONCE(cprof_heap_mm) ||
	    !cprof_heap_pend_take(regs->sp - sizeof(long), &p))
		return 0;
	if (!p.size && !p.old_id)
		return 0;
	if (cprof_heap_fn_of(self) == CPROF_HEAP_MEMALIGN) {
		/* it returns 0 and stores the pointer */
		if (ptr || get_user(ptr, (u64 __user *)p.memptr))
			return 0;
	}
	/* failed: a realloc's block is still the caller's */
	if (!ptr)
		return 0;
	if (p.old_id)
		cprof_heap_freed(p.old, p.old_id);
	if (p.size)
		cprof_heap_allocated(ptr, p.size);
	return 0;
}

/* The file and offset at @addr in @mm, which must be code of a file. */
static int cprof_heap_locate(struct mm_struct *mm, u64 addr,
			     struct cprof_uprobe *up)
{
	struct vm_area_struct *vma;
	int err = -EINVAL;

	mmap_read_lock(mm);
	vma = find_vma(mm, addr);
	if (vma && vma->vm_start <= addr && vma->vm_file &&
	    vma->vm_flags & VM_EXEC) {
		up->inode = igrab(file_inode(vma->vm_file));
		up->offset = ((loff_t)vma->vm_pgoff << PAGE_SHIFT) +
			     addr - vma->vm_start;
		err = up->inode ? 0 : -ENOENT;
	}
	mmap_read_unlock(mm);
	return err;
}

/*
 * The process profiled, its mm held; checks the opener may probe it and
 * that it is a 64-bit process (not 32-bit, not x32).
 */
static struct mm_struct *cprof_heap_target(u32 pid)
{
	struct task_struct *task;
	struct mm_struct *mm;
	int err;

	rcu_read_lock();
	task = pid_task(find_pid_ns(pid, &init_pid_ns), PIDTYPE_TGID);
	if (task)
		get_task_struct(task);
	rcu_read_unlock();
	if (!task)
		return ERR_PTR(-ESRCH);
	mm = get_task_mm(task);
	err = mm ? cprof_access_probe(task, mm) : -ESRCH;
	/* the probes read arguments as x86-64's convention passes them */
	if (!err && test_tsk_thread_flag(task, TIF_ADDR32))
		err = -ENOEXEC;
	put_task_struct(task);
	if (err) {
		if (mm)
			mmput(mm);
		return ERR_PTR(err);
	}
	return mm;
}

/* Probes removed, the table and the files let go; cprof_heap_lock held. */
static void cprof_heap_teardown(void)
{
	int i;

	for (i = 0; i < CPROF_HEAP_NR_FN; i++)
		if (cprof_heap_registered[i])
			cprof_compat_uprobe_unregister(&cprof_heap_probes[i]);
	cprof_compat_uprobe_sync();
	for (i = 0; i < CPROF_HEAP_NR_FN; i++) {
		cprof_heap_registered[i] = false;
		iput(cprof_heap_probes[i].inode);
		cprof_heap_probes[i].inode = NULL;
	}
	WRITE_ONCE(cprof_heap_set, NULL);
	if (cprof_heap_mm) {
		mmdrop(cprof_heap_mm);
		WRITE_ONCE(cprof_heap_mm, NULL);
	}
	kvfree(cprof_heap_pool);
	cprof_heap_pool = NULL;
	kvfree(cprof_heap_buckets);
	cprof_heap_buckets = NULL;
}

/* Registering the probes, in a worker: its result. */
struct cprof_heap_reg {
	struct work_struct work;
	int err;
};

/*
 * The probes registered, or on error none: writing and restoring the
 * breakpoints in the process's text (get_user_pages()) fails for a task
 * with a fatal signal pending, so a worker does it, never the opener,
 * which may be killed meanwhile.  cprof_heap_start() holds cprof_heap_lock
 * for it.
 */
static void cprof_heap_register_fn(struct work_struct *work)
{
	struct cprof_heap_reg *reg = container_of(work, struct cprof_heap_reg,
						  work);
	int i, err = 0;

	for (i = 0; i < CPROF_HEAP_NR_FN && !err; i++) {
		struct cprof_uprobe *up = &cprof_heap_probes[i];

		if (!up->inode)
			continue;
		up->uc.handler = cprof_heap_entry;
		if (i != CPROF_HEAP_FREE)
			up->uc.ret_handler = cprof_heap_return;
		up->want = cprof_heap_want;
		err = cprof_compat_uprobe_register(up);
		cprof_heap_registered[i] = !err;
	}
	if (err)
		cprof_heap_teardown();
	reg->err = err;
}

/*
 * An empty live table of heap_kb KiB and no pending call: its entries and
 * a bucket for each one or two of them (a power of two), so that a chain
 * stays short whatever heap_kb.
 */
static int cprof_heap_table(const struct cprof_settings *set)
{
	size_t i, n, nb, bytes = (size_t)set->heap_kb << 10;

	nb = rounddown_pow_of_two(max_t(size_t, 1, bytes /
			(sizeof(*cprof_heap_pool) + sizeof(*cprof_heap_buckets))));
	n = (bytes - nb * sizeof(*cprof_heap_buckets)) /
	    sizeof(*cprof_heap_pool);
	cprof_heap_bits = ilog2(nb);
	cprof_heap_buckets = kvmalloc_array(nb, sizeof(*cprof_heap_buckets),
					    GFP_KERNEL);
	cprof_heap_pool = kvcalloc(n, sizeof(*cprof_heap_pool), GFP_KERNEL);
	if (!cprof_heap_buckets || !cprof_heap_pool)
		return -ENOMEM;
	for (i = 0; i < nb; i++)
		INIT_HLIST_HEAD(&cprof_heap_buckets[i]);
	INIT_HLIST_HEAD(&cprof_heap_free_list);
	for (i = 0; i < n; i++)
		hlist_add_head(&cprof_heap_pool[i].node, &cprof_heap_free_list);
	atomic_set(&cprof_heap_nr_live, 0);
	memset(cprof_heap_pend, 0, sizeof(cprof_heap_pend));
	atomic_set(&cprof_heap_nr_pend, 0);
	atomic64_set(&cprof_heap_last_id, 0);
	return 0;
}

/**
 * cprof_heap_start() - probe the allocator of a profile of kind heap
 * @set: the profile's settings, read until cprof_heap_stop(): pid, the
 *	functions' addresses in it (malloc and free at least), rate, table
 *
 * Context: process, the opener of the profile, may sleep; the rings are
 * set up.
 * Return: 0; -EINVAL without pid, malloc or free, or for an address that
 * is not code of a file in the process; -ESRCH: no such process (or no
 * memory of its own); -EACCES: the opener may not ptrace it; -ENOEXEC:
 * not a 64-bit process; -ENOMEM;
 * or uprobe_register()'s error.  Nothing is left registered on error, a
 * fatal signal to the opener meanwhile included: a worker registers.
 */
int cprof_heap_start(const struct cprof_settings *set)
{
	struct cprof_heap_reg reg;
	struct mm_struct *mm;
	int cpu, i, err = 0;

	if (!set->pid || !set->heap_fn[CPROF_HEAP_MALLOC] ||
	    !set->heap_fn[CPROF_HEAP_FREE])
		return -EINVAL;
	mm = cprof_heap_target(set->pid);
	if (IS_ERR(mm))
		return PTR_ERR(mm);
	mutex_lock(&cprof_heap_lock);
	if (WARN_ON_ONCE(cprof_heap_mm)) {
		err = -EBUSY;
		goto unlock;
	}
	WRITE_ONCE(cprof_heap_gone, false);
	for (i = 0; i < CPROF_HEAP_NR_FN && !err; i++) {
		memset(&cprof_heap_probes[i], 0, sizeof(cprof_heap_probes[i]));
		if (set->heap_fn[i])
			err = cprof_heap_locate(mm, set->heap_fn[i],
						&cprof_heap_probes[i]);
	}
	if (!err)
		err = cprof_heap_table(set);
	mmgrab(mm);
	WRITE_ONCE(cprof_heap_mm, mm);
	if (err)
		goto fail;
	for_each_possible_cpu(cpu) {
		struct cprof_heap_cpu *hc = per_cpu_ptr(&cprof_heap_cpus, cpu);

		cprof_hookcost_reset(&hc->cost);
		hc->left = cprof_heap_next(set->heap_rate);
	}
	WRITE_ONCE(cprof_heap_set, set);
	INIT_WORK_ONSTACK(&reg.work, cprof_heap_register_fn);
	schedule_work(&reg.work);
	flush_work(&reg.work);
	destroy_work_on_stack(&reg.work);
	err = reg.err;
fail:
	if (err && cprof_heap_mm)
		cprof_heap_teardown();
unlock:
	mutex_unlock(&cprof_heap_lock);
	mmput(mm);
	return err;
}

static void cprof_heap_stop_fn(struct work_struct *work)
{
	mutex_lock(&cprof_heap_lock);
	if (cprof_heap_mm)
		cprof_heap_teardown();
	mutex_unlock(&cprof_heap_lock);
}

static DECLARE_WORK(cprof_heap_stop_work, cprof_heap_stop_fn);

/*
 * The probes removed at the profile's deadline, or once the process has
 * exited, whether its reader reads or not (each trap slows the process);
 * otherwise a look again in a second.
 */
static void cprof_heap_watch_fn(struct work_struct *work)
{
	struct delayed_work *dw = to_delayed_work(work);
	u64 now = ktime_get_ns(), wait;

	mutex_lock(&cprof_heap_lock);
	if (cprof_heap_mm) {
		if (!atomic_read(&cprof_heap_mm->mm_users)) {
			WRITE_ONCE(cprof_heap_gone, true);
			cprof_heap_teardown();
		} else if (now >= cprof_heap_deadline) {
			cprof_heap_teardown();
		} else {
			wait = min_t(u64, NSEC_PER_SEC, cprof_heap_deadline - now);
			schedule_delayed_work(dw, nsecs_to_jiffies(wait) + 1);
		}
	}
	mutex_unlock(&cprof_heap_lock);
}

static DECLARE_DELAYED_WORK(cprof_heap_watch, cprof_heap_watch_fn);

/**
 * cprof_heap_open() - remove the probes at the deadline by themselves
 * @deadline_ns: the profile's end, ktime_get_ns(); or CPROF_NO_DEADLINE
 *
 * Also once the process has exited: cprof_heap_exited() says so then.
 * Nothing without a heap profile.
 *
 * Context: any, after cprof_heap_start().
 */
void cprof_heap_open(u64 deadline_ns)
{
	if (!READ_ONCE(cprof_heap_mm))
		return;
	cprof_heap_deadline = deadline_ns;
	schedule_delayed_work(&cprof_heap_watch, 0);
}

/**
 * cprof_heap_exited() - has the profiled process exited?
 *
 * Context: any.
 * Return: true once the probes were removed because it did.
 */
bool cprof_heap_exited(void)
{
	return READ_ONCE(cprof_heap_gone);
}

/**
 * cprof_heap_stop() - the probes removed, what was kept freed
 *
 * After this returns no probe of the module is in the process and none
 * runs.  A worker removes them: a reader killed by a signal closes the
 * profile as it exits, and get_user_pages() would refuse it the
 * process's text to restore (a fatal signal pending), leaving the
 * breakpoints there.  Idempotent.
 *
 * Context: process, may sleep: waits for the worker and running probes.
 */
void cprof_heap_stop(void)
{
	cancel_delayed_work_sync(&cprof_heap_watch);
	schedule_work(&cprof_heap_stop_work);
	flush_work(&cprof_heap_stop_work);
	WRITE_ONCE(cprof_heap_gone, false);
}

/**
 * cprof_heap_stats() - one CPU's allocation counters since load
 * @cpu: the CPU
 * @st: its heap_* fields are set
 *
 * Context: any; the counters may be a little stale.
 */
void cprof_heap_stats(int cpu, struct cprof_cpu_stats *st)
{
	const struct cprof_heap_cpu *hc = per_cpu_ptr(&cprof_heap_cpus, cpu);

	st->heap_events = READ_ONCE(hc->events);
	st->heap_frees = READ_ONCE(hc->frees);
	st->heap_full = READ_ONCE(hc->full);
	st->heap_free_lost = READ_ONCE(hc->free_lost);
	st->heap_skipped = READ_ONCE(hc->skipped);
	cprof_hookcost_stats(&hc->cost, &st->heap_ns_total, &st->heap_ns_max);
}
