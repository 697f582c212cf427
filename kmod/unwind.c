// SPDX-License-Identifier: GPL-2.0
/*
 * Stack walks from an interrupt.
 *
 * Kernel: the kernel's own unwinder (ORC on Debian kernels, frame pointers
 * elsewhere) from the interrupted registers.  User: from the interrupted
 * user registers, or those the task saved entering the kernel, each step
 * by the unwind table userland loaded for the frame's file (utable.c, the
 * step of cprof/unwind_step.h), else by the frame-pointer chain; the
 * caller's stack pointer must lie above the frame's, so every walk ends.
 * User memory is read with page faults disabled and only where
 * access_ok() allows, each read taking one of the event's user accesses
 * (struct cprof_uaccess): a table or a stack that lies gives a wrong or
 * short stack, never a fault.  Why: docs/design.md, "The user walk".
 */
#include <linux/bits.h>
#include <linux/cpu.h>
#include <linux/delay.h>
#include <linux/hash.h>
#include <linux/module.h>
#include <linux/percpu.h>
#include <linux/preempt.h>
#include <linux/sched.h>
#include <linux/sched/task_stack.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <asm/ptrace.h>
#include <asm/unwind.h>

#include "cprof_format.h"
#include "maps.h"
#include "unwind.h"
#include "utable.h"

/*
 * The return addresses of a started walk into @ips from @n on, up to @max;
 * CPROF_SAMPLE_KERN_TRUNC in @flags if it stopped there.  The new count.
 */
static int cprof_unwind_collect(struct unwind_state *state, u64 *ips, int n,
				int max, u16 *flags)
{
	unsigned long addr;

	for (; !unwind_done(state); unwind_next_frame(state)) {
		addr = unwind_get_return_address(state);
		if (!addr)
			break;
		if (n == max) {
			*flags |= CPROF_SAMPLE_KERN_TRUNC;
			break;
		}
		ips[n++] = addr;
	}
	return n;
}

/**
 * cprof_unwind_kernel() - the kernel stack of the interrupted context
 * @regs: the interrupted registers, in kernel mode
 * @ips: where the addresses go, the interrupted ip first
 * @max: room in @ips, at least 1
 * @flags: the sample's flags; CPROF_SAMPLE_KERN_TRUNC is set here
 *
 * Context: the tick (hard interrupt).
 * Return: the number of entries written to @ips.
 */
int cprof_unwind_kernel(struct pt_regs *regs, u64 *ips, int max, u16 *flags)
{
	struct unwind_state state;

	ips[0] = regs->ip;
	/*
	 * A new task interrupted before its first function's frame (in
	 * ret_from_fork, or the prologue of schedule_tail() or of a kernel
	 * thread's function) still has the frame pointer copy_thread()
	 * encoded to its first registers: nothing lies below, and the
	 * frame-pointer unwinder, led to a kernel thread's zeroed ones, warns
	 * of their bad 'bp'.  (Without frame pointers that encoding is 0.)
	 */
	if (regs->bp == (unsigned long)task_pt_regs(current) + 1)
		return 1;
	unwind_start(&state, current, regs, NULL);
	return cprof_unwind_collect(&state, ips, 1, max, flags);
}

/**
 * cprof_unwind_kernel_here() - current's kernel stack where it runs
 * @ips: where the return addresses go, innermost first
 * @max: room in @ips, at least 1
 * @flags: CPROF_SAMPLE_KERN_TRUNC is set here if @max was reached
 * @skip: the start of a function whose frame is left out when it is the
 *	first one outside this module (a tracepoint's iterator, whose frames
 *	are at most CPROF_SKIP_SPAN bytes in); 0: none
 *
 * The frames of this module on top are left out: the stack starts where
 * the kernel called into it.
 *
 * Context: any; current's stack.
 * Return: the number of entries written to @ips.
 */
int cprof_unwind_kernel_here(u64 *ips, int max, u16 *flags,
			     unsigned long skip)
{
	struct unwind_state state;
	unsigned long addr;
	bool top = true;
	int n = 0;

	for (unwind_start(&state, current, NULL, NULL); !unwind_done(&state);
	     unwind_next_frame(&state)) {
		addr = unwind_get_return_address(&state);
		if (!addr)
			break;
		if (top && within_module(addr, THIS_MODULE))
			continue;
		if (top && skip && addr - skip < CPROF_SKIP_SPAN) {
			top = false;
			continue;
		}
		top = false;
		if (n == max) {
			*flags |= CPROF_SAMPLE_KERN_TRUNC;
			break;
		}
		ips[n++] = addr;
	}
	return n;
}

/**
 * cprof_unwind_kernel_caller() - current's kernel stack from a probe's caller
 * @caller: where the probe was called from (cprof_caller_here())
 * @ips: where the return addresses go, innermost first
 * @max: room in @ips, at least 1
 * @flags: CPROF_SAMPLE_KERN_TRUNC is set here if @max was reached
 * @skip: the start of a function whose frame is left out when it is the
 *	caller (a tracepoint's iterator, as cprof_unwind_kernel_here()'s); 0:
 *	none
 *
 * cprof_unwind_kernel_here()'s stack, without stepping through the
 * probe's frames and this module's to find where the kernel called in:
 * the walk starts in the caller's function, whose return address is
 * the first.  Each step saved is an ORC lookup, a module's being a search
 * of the module tree as well.
 *
 * Context: the probe that took @caller, on current's stack.
 * Return: the number of entries written to @ips.
 */
int cprof_unwind_kernel_caller(const struct cprof_caller *caller, u64 *ips,
			       int max, u16 *flags, unsigned long skip)
{
	struct pt_regs regs = {
		.ip = caller->ip,
		.sp = caller->sp,
		.bp = caller->bp,
		.cs = __KERNEL_CS,
	};
	struct unwind_state state;
	int n = 0;

	/* taken elsewhere than in the probe (a split or inlined copy) */
	if (WARN_ON_ONCE(within_module(caller->ip, THIS_MODULE)))
		return cprof_unwind_kernel_here(ips, max, flags, skip);
	if (!skip || caller->ip - skip >= CPROF_SKIP_SPAN)
		ips[n++] = caller->ip;
	/* from the caller's regs: at once at its caller, the first frame kept */
	unwind_start(&state, current, &regs, NULL);
	return cprof_unwind_collect(&state, ips, n, max, flags);
}

/**
 * cprof_unwind_kernel_task() - the kernel stack of a task off the CPU
 * @tsk: the task, not current, not exiting when the caller looked
 * @ips: where the return addresses go, innermost first
 * @max: room in @ips, at least 1
 * @flags: CPROF_SAMPLE_KERN_TRUNC is set here if @max was reached
 *
 * The walk the kernel makes for /proc/PID/stack, from where the task
 * switched out: stack_trace_save_tsk(), which pins the task's stack,
 * where the kernel exports it (6.3 and later).  Before, the walk is made
 * here without that pin (put_task_stack() is not exported either): the
 * stack stays mapped as long as CPU hotplug is held off (an offline CPU's
 * cache of stacks is freed at once) and the caller's RCU read side runs,
 * which a stack freed at its task's last switch waits for unless it goes
 * into that cache.  One hole stays: a cached stack is freed at once when
 * a new task takes it and its memory cgroup charge fails.  If the task
 * runs meanwhile, the unwinder reads a stack that changes under it, as
 * for /proc/PID/stack: its reads are checked, its frames may be wrong; the
 * caller finds out and looks again.
 *
 * Context: process; cpus_read_lock() held and inside rcu_read_lock()
 * (both unneeded with the pin, harmless).
 * Return: the number of entries written to @ips.
 */
int cprof_unwind_kernel_task(struct task_struct *tsk, u64 *ips, int max,
			     u16 *flags)
{
	struct unwind_state state;
	int n;

	static_assert(sizeof(unsigned long) == sizeof(*ips));
	n = cprof_compat_save_tsk(tsk, (unsigned long *)ips, max);
	if (n >= 0) {
		if (n == max)
			*flags |= CPROF_SAMPLE_KERN_TRUNC;
		return n;
	}
	RCU_LOCKDEP_WARN(!rcu_read_lock_held(), "the task's stack may go");
	unwind_start(&state, tsk, NULL, NULL);
	return cprof_unwind_collect(&state, ips, 0, max, flags);
}

/**
 * cprof_unwind_irq_regs() - the registers the interrupt being handled saved
 *
 * For an interrupt whose handler does not set_irq_regs() (the function
 * call IPIs): the first full set of entry registers the unwinder finds
 * walking out from here.
 *
 * Context: hard interrupt.
 * Return: the registers, or NULL if the unwinder finds none.
 */
struct pt_regs *cprof_unwind_irq_regs(void)
{
	struct unwind_state state;
	struct pt_regs *regs;
	bool partial;

	for (unwind_start(&state, current, NULL, NULL); !unwind_done(&state);
	     unwind_next_frame(&state)) {
		regs = unwind_get_entry_regs(&state, &partial);
		if (regs && !partial)
			return regs;
	}
	return NULL;
}

/**
 * cprof_saved_user_regs() - the user registers @tsk saved on kernel entry
 * @tsk: a task in the kernel, current (another's stack may go at any
 *	time: cprof_copy_user_regs())
 *
 * Context: any, current's.
 * Return: the registers, or NULL (kernel threads and user workers, a task
 * without an mm, execve(), saved registers that are not user mode's).
 */
struct pt_regs *cprof_saved_user_regs(struct task_struct *tsk)
{
	struct pt_regs *regs;

	if (!tsk->mm || tsk->flags & (PF_KTHREAD | PF_USER_WORKER) ||
	    tsk->in_execve)
		return NULL;
	regs = task_pt_regs(tsk);
	return user_mode(regs) ? regs : NULL;
}

#ifdef DEBUG
/*
 * Debug builds (CPROF_DEBUG=y) only: a wait between reading a task's stack
 * pointer and copying its registers, so that tests can make the task exit
 * in between.
 */
static uint regs_delay_us;
module_param(regs_delay_us, uint, 0600);
MODULE_PARM_DESC(regs_delay_us, "debug: wait before copying a task's saved registers, us");

static void cprof_regs_delay(void)
{
	uint us = READ_ONCE(regs_delay_us);

	if (us)
		fsleep(min(us, 100000U));
}
#else
static inline void cprof_regs_delay(void) { }
#endif

/**
 * cprof_copy_user_regs() - a copy of the user registers a task off the CPU
 *	saved on kernel entry
 * @tsk: the task, not current; it may exit meanwhile
 * @regs: where the copy goes
 *
 * Once @tsk exits, its stack may be freed or given to a new task at any
 * time (nothing a module can call pins it: put_task_stack() is not
 * exported), so the registers are not read in place: the stack pointer is
 * read once, the registers copied from it without faulting, and then the
 * task must still not be exiting, its stack the one read.  A stack is
 * freed only after its task's last switch, long after PF_EXITING is set,
 * and whatever a new owner writes there is written after that: a copy
 * that saw any of it sees PF_EXITING after it (the read barrier).
 *
 * Context: process; sleeps only in debug builds (regs_delay_us).
 * Return: 0 with the copy; -ENOENT: no user registers (kernel threads and
 * user workers, a task without an mm, execve(), a task stopped in kernel
 * mode); -ESTALE: the copy cannot be proven the task's (it is exiting).
 */
int cprof_copy_user_regs(struct task_struct *tsk, struct pt_regs *regs)
{
	void *stack;

	if (READ_ONCE(tsk->flags) & (PF_KTHREAD | PF_USER_WORKER) ||
	    !READ_ONCE(tsk->mm) || tsk->in_execve)
		return -ENOENT;
	stack = READ_ONCE(tsk->stack);
	if (!stack)
		return -ESTALE;
	cprof_regs_delay();
	/* where task_pt_regs() finds them, from the pointer read once */
	if (copy_from_kernel_nofault(regs, (struct pt_regs *)(stack +
				     THREAD_SIZE - TOP_OF_KERNEL_STACK_PADDING) - 1,
				     sizeof(*regs)))
		return -ESTALE;
	/* the copy before the checks: see above */
	smp_rmb();
	if (READ_ONCE(tsk->flags) & PF_EXITING || READ_ONCE(tsk->stack) != stack)
		return -ESTALE;
	return user_mode(regs) ? 0 : -ENOENT;
}

/* cprof_unwind_read_word(), inline in the walk: a word of most frames */
static __always_inline bool cprof_read_word(struct cprof_uaccess *acc,
					    unsigned long addr,
					    unsigned long *val)
{
	const unsigned long __user *p = (const void __user *)addr;

	if (!cprof_uaccess_take(acc, 1) || !user_access_begin(p, sizeof(*p)))
		return false;
	unsafe_get_user(*val, p, fault);
	user_access_end();
	return true;
fault:
	user_access_end();
	return false;
}

/**
 * cprof_unwind_read_word() - one word of current's user memory
 * @acc: the event's accesses, one taken; NULL: no bound
 * @addr: its address
 * @val: where it goes
 *
 * Context: page faults disabled (the tick's walks).
 * Return: false if it could not be read (not a user address, not
 * resident, @acc spent).
 */
bool cprof_unwind_read_word(struct cprof_uaccess *acc, unsigned long addr,
			    unsigned long *val)
{
	return cprof_read_word(acc, addr, val);
}

/*
 * A frame record: the two user words at @a and the next, in one user
 * access window; the caller has page faults disabled.  Both or neither.
 * One range to check where cprof_read_words() checks two words anywhere.
 */
static __always_inline bool cprof_read_record(struct cprof_uaccess *acc,
					      unsigned long a,
					      unsigned long *v0,
					      unsigned long *v1)
{
	const unsigned long __user *p = (const void __user *)a;

	if (!cprof_uaccess_take(acc, 1) ||
	    !user_access_begin(p, 2 * sizeof(*p)))
		return false;
	unsafe_get_user(*v0, p, fault);
	unsafe_get_user(*v1, p + 1, fault);
	user_access_end();
	return true;
fault:
	user_access_end();
	return false;
}

/*
 * The user words at @a and @b in one user access window; the caller has
 * page faults disabled.  Both or neither.  Inline in the walk: every
 * frame-pointer step and most table steps read two words (58 of a
 * 1 922-instruction tick walking 5 frames, as a call), most of them a
 * frame record (a table's rbp saved just below the return address too).
 */
static __always_inline bool cprof_read_words(struct cprof_uaccess *acc,
					     unsigned long a,
					     unsigned long *va,
					     unsigned long b,
					     unsigned long *vb)
{
	unsigned long lo = min(a, b), hi = max(a, b);
	const unsigned long __user *pa = (const void __user *)a;
	const unsigned long __user *pb = (const void __user *)b;

	if (b == a + sizeof(long))
		return cprof_read_record(acc, a, va, vb);
	if (hi - lo > ULONG_MAX - sizeof(long) || !cprof_uaccess_take(acc, 1) ||
	    !user_access_begin((const void __user *)lo, hi - lo + sizeof(long)))
		return false;
	unsafe_get_user(*va, pa, fault);
	unsafe_get_user(*vb, pb, fault);
	user_access_end();
	return true;
fault:
	user_access_end();
	return false;
}

/*
 * A mapping a walk looked up, with its file's table.  The view points
 * into RCU-protected data: see struct cprof_ufiles for how long it holds.
 */
struct cprof_ufile {
	unsigned long start;		/* the mapping: [start, end) */
	unsigned long end;		/* 0: none */
	u64 pgoff;			/* the file offset of start */
	struct cprof_utable_view table;
	bool has_table;
};

/*
 * The rows a CPU keeps, by return address less one: direct-mapped by a
 * hash of it, a slot good while its gen is the lookups' (struct
 * cprof_ufiles).
 */
#define CPROF_UROWS_BITS	5
#define CPROF_UROWS		BIT(CPROF_UROWS_BITS)

struct cprof_urow_memo {
	unsigned long at;
	unsigned long gen;
	struct cprof_urow row;
};

/*
 * An address space's state (cprof_maps_of()) and the last two mappings
 * looked up in it, which the next frames are most often in too (a
 * program's frames, the C library's start code under them, the program's
 * _start under that), and the next walk's frames too: a CPU keeps the
 * last walk's (cprof_uwalk_files()), with the rows found for return
 * addresses.  What they point to, and the rows, hold while the epochs
 * read before they were looked up are the current ones
 * (cprof_maps_epoch(), cprof_utable_epoch()), within an RCU read side.
 */
struct cprof_ufiles {
	const struct mm_struct *mm;	/* the key, as cprof_maps_of()'s */
	pid_t tgid;
	u64 exec_id;
	u64 start_ns;
	unsigned long maps_epoch;
	unsigned long utab_epoch;
	const struct cprof_mmstate *st;	/* NULL: none emitted */
	unsigned int cur;
	struct cprof_ufile file[2];	/* file[cur]: the last one used */
	unsigned long gen;		/* a count of the lookups reset */
	struct cprof_urow_memo *rows;	/* CPROF_UROWS; NULL: none kept */
};

/* The last walk's lookups and rows, for walks with interrupts disabled. */
struct cprof_ucpu {
	struct cprof_ufiles files;
	struct cprof_urow_memo rows[CPROF_UROWS];
};

static DEFINE_PER_CPU(struct cprof_ucpu, cprof_ucpu);

/* DWARF's x86-64 register numbers (0 rax ... 15 r15) in struct pt_regs. */
static const u8 cprof_dwarf_regs[] = {
	offsetof(struct pt_regs, ax), offsetof(struct pt_regs, dx),
	offsetof(struct pt_regs, cx), offsetof(struct pt_regs, bx),
	offsetof(struct pt_regs, si), offsetof(struct pt_regs, di),
	offsetof(struct pt_regs, bp), offsetof(struct pt_regs, sp),
	offsetof(struct pt_regs, r8), offsetof(struct pt_regs, r9),
	offsetof(struct pt_regs, r10), offsetof(struct pt_regs, r11),
	offsetof(struct pt_regs, r12), offsetof(struct pt_regs, r13),
	offsetof(struct pt_regs, r14), offsetof(struct pt_regs, r15),
};

static_assert(sizeof(struct pt_regs) <= 256);

/* DWARF's register @reg of @regs. */
static bool cprof_dwarf_reg(struct pt_regs *regs, int reg, unsigned long *val)
{
	if ((unsigned int)reg >= ARRAY_SIZE(cprof_dwarf_regs))
		return false;
	*val = regs_get_register(regs, cprof_dwarf_regs[reg]);
	return true;
}

/*
 * The table step's reads (cprof/unwind_step.h): current's user memory,
 * each read taking one of the event's accesses; the interrupted frame's
 * registers when they are all as the code left them (not a system
 * call's), else none.
 */
struct cprof_ustep_env {
	struct cprof_uaccess *acc;
	struct pt_regs *regs;		/* NULL: none */
};

#define CPROF_USTEP_READER

static __always_inline bool cprof_ustep_read(struct cprof_ustep_env *env,
					     unsigned long addr,
					     unsigned long *val)
{
	return cprof_read_word(env->acc, addr, val);
}

/* Both in one user access window. */
static __always_inline bool cprof_ustep_read2(struct cprof_ustep_env *env,
					      unsigned long a,
					      unsigned long *va,
					      unsigned long b,
					      unsigned long *vb)
{
	return cprof_read_words(env->acc, a, va, b, vb);
}

static __always_inline bool cprof_ustep_reg(struct cprof_ustep_env *env,
					    int reg, unsigned long *val)
{
	return env->regs && cprof_dwarf_reg(env->regs, reg, val);
}

#include "cprof/unwind_step.h"

/*
 * A tick inside a system call, whose C library wrapper (read(), ...) is a
 * frameless leaf with no table: the word at the user stack pointer is its
 * return address if it pushed nothing.  Taken only if it lies in an
 * executable mapping maps.c knows and the instruction before it is a call
 * (docs/design.md, "Reading user memory").  The caller has page faults
 * disabled.
 */
static bool cprof_syscall_caller(struct task_struct *tsk,
				 struct cprof_uaccess *acc,
				 struct cprof_ustep_frame *f)
{
	unsigned long cand, before;
	u8 b[sizeof(before)];

	if (!cprof_read_word(acc, f->sp, &cand) ||
	    !cprof_maps_exec_addr(tsk, cand) ||
	    !cprof_read_word(acc, cand - sizeof(before), &before))
		return false;
	/* b[7] is the byte just before the return address */
	memcpy(b, &before, sizeof(b));
	if (b[3] != 0xe8 &&					/* call rel32 */
	    (b[2] != 0xff || b[3] != 0x15) &&			/* call *rip+d32 */
	    (b[6] != 0xff || (b[7] & 0xf8) != 0xd0))		/* call *%reg */
		return false;
	f->ip = cand;
	f->sp += sizeof(cand);
	return true;
}

/*
 * The mapping holding @at with its file's table: one of the two @fs keeps,
 * else looked up in @fs->st in place of the one used less lately.  NULL when no
 * emitted range of a file holds @at.
 */
static const struct cprof_ufile *cprof_ufile_of(struct cprof_ufiles *fs,
						unsigned long at)
{
	const struct cprof_file_pos *pos;
	struct cprof_ufile *u;

	u = &fs->file[fs->cur];
	if (at >= u->start && at < u->end)
		return u;
	u = &fs->file[!fs->cur];
	if (at < u->start || at >= u->end) {
		pos = cprof_maps_file_pos(fs->st, at);
		if (!pos)
			return NULL;
		u->start = pos->start;
		u->end = pos->end;
		u->pgoff = pos->pgoff;
		u->has_table = cprof_utable_get(pos, &u->table);
	}
	fs->cur = !fs->cur;
	return u;
}

/*
 * The row of @u's table for @at, which @u's mapping holds, into @row.
 * With @keep (@at is a return address less one: a stack's callers are the
 * same few from one tick to the next), looked up in @fs's rows first, and
 * kept there, if @fs keeps rows.
 * Return: false when no row covers @at with a rule (@row is not filled).
 */
static bool cprof_ufile_row(struct cprof_ufiles *fs,
			    const struct cprof_ufile *u, unsigned long at,
			    bool keep, struct cprof_urow *row)
{
	u64 off = at - u->start + u->pgoff;
	struct cprof_urow_memo *m;

	if (!keep || !fs->rows)
		return cprof_uindex_row(&u->table.rows, off, row);
	m = &fs->rows[hash_long(at, CPROF_UROWS_BITS)];
	if (m->at != at || m->gen != fs->gen) {
		if (!cprof_uindex_row(&u->table.rows, off, &m->row))
			m->row.cfa_base = CPROF_CFA_NONE;
		m->at = at;
		m->gen = fs->gen;
	}
	*row = m->row;
	return row->cfa_base != CPROF_CFA_NONE;
}

/*
 * A user walk, an iterator over the frames (cprof_uwalk_start(), then
 * cprof_uwalk_next() until done): the
 * frame it is at, the address space's mappings (NULL: frame pointers only)
 * and what the first step found.  Lives inside the walk's
 * pagefault_disable() and its caller's RCU read side.
 * cprof_uwalk_start() zeroes what lies before tsk and sets tsk, acc and f.
 */
struct cprof_uwalk {
	const struct cprof_mmstate *st;	/* files->st; NULL: no lookups */
	struct pt_regs *regs;		/* f's while first, if exact */
	struct cprof_ucopy *copy;	/* NULL: no stack copy wanted */
	struct cprof_pyhint *py;	/* NULL: not wanted, or found */
	unsigned long wrapper_caller;	/* by cprof_syscall_caller() */
	int nr;				/* frames so far: f is the last */
	int mapped;			/* the first of them in @st's ranges */
	u16 flags;			/* the walk's CPROF_SAMPLE_USER_* */
	bool first;			/* f.ip is the interrupted ip */
	bool leaf_only;
	bool done;
	struct cprof_ufiles *files;	/* its address space's lookups */
	struct task_struct *tsk;	/* whose stack: see cprof_uwalk_req */
	struct cprof_uaccess *acc;	/* every read takes one */
	struct cprof_ustep_frame f;	/* where the walk is */
	struct cprof_ufiles own;	/* last: see cprof_uwalk_start() */
};

/*
 * The walk reached code it has no table for: keep where, so that the
 * stack from here can be copied for userland to walk once it has the
 * table (cprof_unwind_copy()), if the table may be on its way.  Decided
 * at the first such frame, once: the frames after it come from the
 * frame-pointer chain, which may be anything.
 */
static void cprof_uwalk_copy_here(struct cprof_uwalk *w, bool first)
{
	unsigned long at = first ? w->f.ip : w->f.ip - 1;
	struct cprof_ucopy *copy = w->copy;

	w->copy = NULL;
	if (!copy->always &&
	    !cprof_maps_settling(w->st, at, cprof_utable_compiling()))
		return;
	*copy = (struct cprof_ucopy){
		.always = copy->always,
		.frame = w->nr - 1,
		.sp = w->f.sp,
		.fp = w->f.fp,
		.regs = first ? w->regs : NULL,
	};
	w->flags |= CPROF_SAMPLE_USTACK;
}

/*
 * The frame stepped from was a CPython interpreter's code: keep its layout
 * (a copy: the table goes with the walk's RCU read side) for the Python
 * walk after this one.  The first such frame only.
 */
static void cprof_uwalk_python(struct cprof_uwalk *w,
			       const struct cprof_ufile *u)
{
	struct cprof_pyhint *py = w->py;

	py->found = true;
	py->text = u->start;
	py->base = u->start - u->pgoff;
	py->py = *u->table.py;
	w->py = NULL;
}

/*
 * The mapping of the frame's code (@at: @w->f.ip, or @w->f.ip - 1 for a
 * return address) in @w->st's file ranges, if it has a table.  Any file
 * range that holds @w->f.ip counts the frame as mapped if all before it
 * are; a table of an interpreter's code is noted as where Python's frames
 * are, if they are wanted.  @again: a second pass, at another frame than
 * the walk's last (see cprof_uwalk_step()), which is not counted.
 */
static const struct cprof_ufile *cprof_uwalk_file(struct cprof_uwalk *w,
						  unsigned long at, bool again)
{
	const struct cprof_ufile *u = cprof_ufile_of(w->files, at);

	if (!u)
		return NULL;
	if (!again && w->mapped == w->nr - 1 &&
	    w->f.ip >= u->start && w->f.ip < u->end)
		w->mapped = w->nr;
	if (!u->has_table)
		return NULL;
	if (w->py && u->table.py)
		cprof_uwalk_python(w, u);
	return u;
}

/*
 * One step from the frame to its caller's: by the unwind table; where no
 * table covers it, by the system call wrapper's return address (first
 * frame only), else by the frame-pointer chain.  Past the first frame,
 * code whose table says it keeps frame pointers wherever it calls takes
 * the frame-pointer step at once: the same step, and cheaper.  Never
 * CPROF_STEP_NONE.
 */
static enum cprof_step cprof_uwalk_step(struct cprof_uwalk *w)
{
	unsigned long at, wrapper_caller = w->wrapper_caller;
	const struct cprof_ufile *u = NULL;
	enum cprof_step step = CPROF_STEP_NONE;
	bool first = w->first, again = false;
	struct cprof_ustep_env env = { .acc = w->acc };
	struct cprof_urow row;

	w->first = false;
	w->wrapper_caller = 0;
	for (;; first = false, again = true) {
		/*
		 * The first ip is in the interrupted function even when it
		 * is a system call's return address: the call is not last.
		 */
		at = first ? w->f.ip : w->f.ip - 1;
		if (w->st)
			u = cprof_uwalk_file(w, at, again);
		if (u && (first || !u->table.frame_pointers) &&
		    cprof_ufile_row(w->files, u, at, !first, &row)) {
			env.regs = first ? w->regs : NULL;
			step = cprof_ustep_row(&row, &w->f, &env);
		}
		if (step == CPROF_STEP_OK)
			w->flags |= CPROF_SAMPLE_USER_TABLE;
		if (step != CPROF_STEP_NONE)
			return step;
		/* (a second pass is at another frame than nr's) */
		if (w->copy && !u && !again)
			cprof_uwalk_copy_here(w, first);
		if (first && !(w->flags & CPROF_SAMPLE_USER_EXACT) &&
		    cprof_syscall_caller(w->tsk, w->acc, &w->f)) {
			w->wrapper_caller = w->f.ip;
			return CPROF_STEP_OK;
		}
		step = cprof_ustep_fp(&w->f, &env);
		/* A wrapper with a frame: its caller again; step once more. */
		if (step != CPROF_STEP_OK || !wrapper_caller ||
		    w->f.ip != wrapper_caller)
			return step;
		wrapper_caller = 0;
		u = NULL;
		step = CPROF_STEP_NONE;
	}
}

/*
 * No user code lives below the default mmap_min_addr or above the user
 * address space: a return address outside is a register used as data,
 * not a frame chain (ld.so's start-up, code built without frame
 * pointers), and ends a walk as a bad frame, not as a frame.
 */
static __always_inline bool cprof_uip_ok(unsigned long ip)
{
	return ip >= CONFIG_DEFAULT_MMAP_MIN_ADDR && ip < TASK_SIZE_MAX;
}

/*
 * To the next frame; or done, flagged if the walk ended on a bad frame, or
 * truncated if it ran out of accesses (a read refused: the step's other
 * ways read too, and are refused as well).
 */
static void cprof_uwalk_next(struct cprof_uwalk *w)
{
	enum cprof_step step;

	step = w->leaf_only ? CPROF_STEP_END : cprof_uwalk_step(w);
	if (cprof_uaccess_spent(w->acc)) {
		w->flags |= CPROF_SAMPLE_USER_TRUNC;
		w->done = true;
		return;
	}
	if (step == CPROF_STEP_END || (step == CPROF_STEP_OK && !w->f.ip)) {
		w->done = true;
		return;
	}
	if (step == CPROF_STEP_BAD || !cprof_uip_ok(w->f.ip)) {
		w->flags |= CPROF_SAMPLE_USER_FAULT;
		w->done = true;
	}
}

/*
 * The rest of a walk with nothing to look up or note on the way (no
 * address space's lookups, so no tables, no copy, no Python, no system
 * call wrapper's caller to check, which only a first frame that is not
 * the interrupted registers' own may need): the frame-pointer chain,
 * stepped as cprof_uwalk_next() steps it and ended as it ends, without
 * its checks for all that at every frame.  Its step is
 * cprof_ustep_fp()'s written out, the frame in registers: through that
 * step and cprof_uwalk_next()'s ending the tick took 14 to 20
 * instructions more (b_tick, 5 frames).  The return addresses go into
 * @ips from @n on, up to @max; @w is done.
 * Return: the new count.
 */
static int cprof_uwalk_fp(struct cprof_uwalk *w, u64 *ips, int n, int max)
{
	unsigned long sp = w->f.sp, fp = w->f.fp, next, ret;

	/* as cprof_uwalk_next() after any step: a walk handed a spent budget */
	if (cprof_uaccess_spent(w->acc)) {
		w->flags |= CPROF_SAMPLE_USER_TRUNC;
		w->done = true;
		return n;
	}
	for (; fp; sp = fp + 2 * sizeof(long), fp = next) {
		if (fp < sp || fp & (sizeof(long) - 1) ||
		    !cprof_read_record(w->acc, fp, &next, &ret)) {
			w->flags |= cprof_uaccess_spent(w->acc) ?
				    CPROF_SAMPLE_USER_TRUNC :
				    CPROF_SAMPLE_USER_FAULT;
			break;
		}
		if (!ret)
			break;
		if (!cprof_uip_ok(ret)) {
			w->flags |= CPROF_SAMPLE_USER_FAULT;
			break;
		}
		if (n == max) {
			w->flags |= CPROF_SAMPLE_USER_TRUNC;
			break;
		}
		ips[n++] = ret;
	}
	w->done = true;
	return n;
}

/*
 * The lookups @w starts from: with interrupts disabled (the tick, the
 * scheduler's hook, a snapshot's interrupt: no two at once on a CPU),
 * the ones this CPU's last walk left if they are of the same address
 * space and still hold, the two files' tables then marked used; else
 * empty ones (the walk's own in process context, which keep no rows).
 * The epochs are read first: a change during the lookups voids them for
 * the next walk.
 * Return: the address space's state, as cprof_maps_of().
 */
static const struct cprof_mmstate *cprof_uwalk_files(struct cprof_uwalk *w)
{
	struct task_struct *tsk = w->tsk;
	unsigned long maps_epoch = cprof_maps_epoch();
	unsigned long utab_epoch = cprof_utable_epoch();
	u64 exec_id = READ_ONCE(tsk->self_exec_id);
	u64 start_ns = __cprof_maps_start_ns(tsk);
	struct cprof_ufiles *fs;
	struct cprof_ucpu *c;

	if (irqs_disabled() && !in_nmi()) {
		c = this_cpu_ptr(&cprof_ucpu);
		fs = &c->files;
		if (fs->mm == tsk->mm && fs->tgid == tsk->tgid &&
		    fs->exec_id == exec_id && fs->start_ns == start_ns &&
		    fs->maps_epoch == maps_epoch &&
		    fs->utab_epoch == utab_epoch) {
			cprof_maps_touch(fs->st);
			if (fs->file[0].end && fs->file[0].has_table)
				cprof_utable_touch(&fs->file[0].table);
			if (fs->file[1].end && fs->file[1].has_table)
				cprof_utable_touch(&fs->file[1].table);
			w->files = fs;
			return fs->st;
		}
		fs->rows = c->rows;
		fs->gen++;	/* the rows kept go with the rest */
	} else {
		fs = &w->own;
		fs->rows = NULL;
	}
	fs->mm = tsk->mm;
	fs->tgid = tsk->tgid;
	fs->exec_id = exec_id;
	fs->start_ns = start_ns;
	fs->maps_epoch = maps_epoch;
	fs->utab_epoch = utab_epoch;
	fs->st = cprof_maps_of(tsk);
	fs->cur = 0;
	fs->file[0].start = 0;
	fs->file[0].end = 0;
	fs->file[1].start = 0;
	fs->file[1].end = 0;
	w->files = fs;
	return fs->st;
}

/*
 * At @req's interrupted frame; the caller has disabled page faults and
 * is inside an RCU read side.
 */
static void cprof_uwalk_start(struct cprof_uwalk *w,
			      const struct cprof_uwalk_req *req)
{
	struct pt_regs *uregs = req->uregs;
	unsigned int hints;

	/*
	 * Not what is set below, nor the lookups, set up by
	 * cprof_uwalk_files() if used: zeroing hundreds of bytes more each
	 * tick costs, under emulation above all.
	 */
	memset(w, 0, offsetof(struct cprof_uwalk, tsk));
	w->f.ip = uregs->ip;
	w->f.sp = uregs->sp;
	w->f.fp = uregs->bp;
	w->f.base = uregs->sp;
	w->acc = req->acc;
	w->tsk = req->tsk;
	w->first = true;
	/*
	 * Entry code sets orig_ax to -1 for interrupts and exceptions; a
	 * system call's entry overwrote rax, rcx and r11.
	 */
	if (!req->entry || (long)uregs->orig_ax < 0) {
		w->flags |= CPROF_SAMPLE_USER_EXACT;
		w->regs = uregs;
	}
	/* 32-bit tasks have another frame layout: leaf only. */
	w->leaf_only = !user_64bit_mode(uregs);
	/* Tables' rules read a span above sp: it must not wrap. */
	if (w->leaf_only || uregs->sp < CPROF_USTACK_REDZONE ||
	    uregs->sp > TASK_SIZE_MAX - CPROF_USTACK_SPAN)
		return;
	hints = cprof_utable_hints();
	if (hints & CPROF_UHINT_ANY) {
		w->st = cprof_uwalk_files(w);
		if (req->py && (hints & CPROF_UHINT_PYTHON))
			w->py = req->py;
		/* a table may be on its way */
		if (hints & CPROF_UHINT_LOADER)
			w->copy = req->copy;
	}
	if (req->copy && req->copy->always && (hints & CPROF_UHINT_LOADER))
		w->copy = req->copy;
}

/**
 * cprof_unwind_user() - the user stack of the interrupted task
 * @req: the walk: what to walk, where to, and what to note on the way
 *	(struct cprof_uwalk_req); its outputs are set here
 *
 * Never sleeps or faults: user memory is read with page faults disabled.
 *
 * Context: the tick (hard interrupt), the scheduler's hook (interrupts
 * disabled), or a thread snapshot (process context, another task's
 * registers, its address space in use), inside an RCU read side, which
 * keeps the address space's state and tables looked up: interrupts
 * disabled are one (since 5.0 a grace period waits for them too), and
 * a pair of calls less a tick; a snapshot holds rcu_read_lock().
 * Return: the number of entries written to @req->ips.
 */
int cprof_unwind_user(struct cprof_uwalk_req *req)
{
	/* set up by cprof_uwalk_start(), which leaves own be */
	struct cprof_uwalk w __uninitialized;
	int n = 0;

	RCU_LOCKDEP_WARN(!rcu_read_lock_any_held(),
			 "a user walk outside an RCU read side");
	if (req->py)
		req->py->found = false;
	pagefault_disable();
	for (cprof_uwalk_start(&w, req); !w.done; cprof_uwalk_next(&w)) {
		if (n == req->max) {
			w.flags |= CPROF_SAMPLE_USER_TRUNC;
			break;
		}
		req->ips[n++] = w.f.ip;
		w.nr = n;
		/* (a first frame not EXACT may be a wrapper's: its own step) */
		if ((!w.first || w.flags & CPROF_SAMPLE_USER_EXACT) &&
		    !w.st && !w.copy && !w.py && !w.wrapper_caller &&
		    !w.leaf_only) {
			n = cprof_uwalk_fp(&w, req->ips, n, req->max);
			break;
		}
	}
	pagefault_enable();
	req->flags = w.flags;
	req->mapped = w.mapped;
	return n;
}

/* The holes' bits count pages of the uapi's size. */
static_assert(CPROF_USTACK_PAGE == PAGE_SIZE);
static_assert(DIV_ROUND_UP(CPROF_USTACK_MAX, PAGE_SIZE) + 1 <=
	      sizeof_field(struct cprof_ustack, holes) * BITS_PER_BYTE);

/**
 * cprof_unwind_copy() - the payload of a CPROF_REC_USTACK
 * @c: where cprof_unwind_user() stopped for want of a table
 * @u: the record; its header, time_ns, tid and cpu are the caller's
 * @size: bytes of stack wanted, a multiple of 8
 *
 * Copies up to @size bytes of user memory from the frame's stack pointer,
 * a page at a time (copy_from_user_nofault(): page faults disabled, user
 * addresses only).  Pages not there before the last one that is read as
 * zeros, their bits set in @u->holes: a function that has made room for
 * its frame has not always touched all of it yet (its lowest page, or
 * arrays in its middle: bzip2's mainSort() writes 4.7 KB of them only
 * after a long first loop), which the first write would fault in as
 * zeros, and its caller's frames are above.  A page swapped out reads so
 * too, which is why the holes are named: userland reads no word in them.
 * More than CPROF_USTACK_HOLE_PAGES in a row not there after one that was
 * end the copy (the top of the stack, where each page past it costs a
 * fault); it ends at the last page that was there.  At most one fault a
 * page of the span, as a copy with nothing there.  The record's padding
 * is zeroed.  The registers are read from @c->regs, which must still be
 * the walk's.
 *
 * Context: right after cprof_unwind_user(), in its context.
 * Return: the record's flags (CPROF_USTACK_*).
 */
u16 cprof_unwind_copy(const struct cprof_ucopy *c, struct cprof_ustack *u,
		      u32 size)
{
	unsigned long addr = c->sp;
	u32 done = 0, got = 0, missing = 0, chunk, page;
	u16 holes = 0, kept = 0;	/* kept: the holes below got */
	int i;

	u->frame = c->frame;
	memset(u->regs, 0, sizeof(u->regs));
	if (c->regs) {
		for (i = 0; i < ARRAY_SIZE(u->regs); i++)
			cprof_dwarf_reg(c->regs, i, (unsigned long *)&u->regs[i]);
	} else {
		u->regs[6] = c->fp;
		u->regs[7] = c->sp;
	}
	for (page = 0; done < size; page++) {
		chunk = min_t(u32, size - done, PAGE_SIZE - offset_in_page(addr));
		if (copy_from_user_nofault(u->data + done,
					   (const void __user *)addr, chunk)) {
			if (got && ++missing > CPROF_USTACK_HOLE_PAGES)
				break;
			holes |= BIT(page);
		} else {
			/* what was not there since the last page that was */
			memset(u->data + got, 0, done - got);
			got = done + chunk;
			kept = holes;
			missing = 0;
		}
		done += chunk;
		addr += chunk;
	}
	u->holes = kept;
	u->size = got;
	memset(u->data + got, 0, CPROF_ALIGN(got) - got);
	return c->regs ? CPROF_USTACK_REGS : 0;
}
