/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CPROF_UNWIND_H
#define CPROF_UNWIND_H

#include <linux/kernel.h>
#include <linux/types.h>
#include <asm/ptrace.h>

#include "cprof_format.h"

struct cprof_ustack;
struct pt_regs;
struct task_struct;

/*
 * Where a user walk reached code without a table: the frame (an index in
 * the walk's frames), its stack pointer and rbp, and the interrupted
 * registers if it is their frame and they are all known (else NULL).
 * always is set by the caller before the walk, the rest by the walk.
 */
struct cprof_ucopy {
	bool always;		/* the caller's: see struct cprof_uwalk_req */
	int frame;
	unsigned long sp;
	unsigned long fp;
	struct pt_regs *regs;
};

/*
 * A CPython interpreter's code on the walked stack (its table carries
 * CPROF_UTABLE_PY): its layout, and its executable mapping's start and
 * start less file offset, where its offset-space addresses begin.  found
 * is set by the walk, the rest with it.
 */
struct cprof_pyhint {
	bool found;
	unsigned long text;
	unsigned long base;
	struct cprof_upy py;
};

/*
 * The user memory one event (a tick, a recorded switch) may still read.
 * An access is one user access window of a walk (a word, a frame record,
 * a Python frame's fields, a code object's) or CPROF_UACCESS_BYTES bytes
 * of a copy, which is made whole or not at all.  NULL: no bound but the
 * depth (a sleeping thread's snapshot walk).  Why a count and not a time:
 * docs/design.md, "A hard bound per event".
 */
struct cprof_uaccess {
	u32 left;
	u32 used;
	bool spent;		/* some access was refused */
};

#define CPROF_UACCESS_BYTES	512

static inline void cprof_uaccess_start(struct cprof_uaccess *a, u32 max)
{
	a->left = max;
	a->used = 0;
	a->spent = false;
}

/* Take @n accesses of @a; false, none taken and @a spent, if fewer are left. */
static inline bool cprof_uaccess_take(struct cprof_uaccess *a, u32 n)
{
	if (!a)
		return true;
	if (a->left < n) {
		a->spent = true;
		return false;
	}
	a->left -= n;
	a->used += n;
	return true;
}

static inline bool cprof_uaccess_spent(const struct cprof_uaccess *a)
{
	return a && a->spent;
}

/* A copy of at most @size bytes: its pieces, and one for a page's end. */
#define CPROF_UACCESS_COPY(size) \
	(DIV_ROUND_UP(size, CPROF_UACCESS_BYTES) + 1)

/**
 * struct cprof_uwalk_req - a user stack walk, asked of cprof_unwind_user()
 * @tsk: whose stack: current, or a task whose address space current uses
 *	(kthread_use_mm()) and which does not run in it meanwhile
 * @uregs: its user registers (cprof_user_regs(), cprof_saved_user_regs())
 * @ips: where the return addresses go, the interrupted ip first
 * @acc: the event's user accesses, each read taking one; when they run out
 *	the walk stops there, CPROF_SAMPLE_USER_TRUNC (as at @max); NULL: no
 *	bound
 * @copy: where to note the frame to copy the stack from if the walk
 *	reaches code whose table may be on its way (cprof_maps_settling()),
 *	or with @copy->always set by the caller, any code without a table
 *	while a loader is there; NULL: none wanted
 * @py: where to note the first frame in a CPython interpreter's code
 *	(its table's CPROF_UTABLE_PY), @py->found set if there was one;
 *	NULL: not wanted
 * @max: room in @ips, at least 1
 * @entry: the event hit the kernel, not user mode: @uregs are the ones
 *	saved at kernel entry
 * @flags: out: the sample's CPROF_SAMPLE_USER_* the walk found, and
 *	CPROF_SAMPLE_USTACK if it filled in @copy; the caller ORs them in
 * @mapped: out: how many of the first frames the walk found in mappings
 *	maps.c emitted (cprof_maps_note() need not check them again)
 *
 * The caller fills in the inputs with an initializer (a pointer it leaves
 * out is NULL); the walk sets both outputs, whatever it finds.
 */
struct cprof_uwalk_req {
	struct task_struct *tsk;
	struct pt_regs *uregs;
	u64 *ips;
	struct cprof_uaccess *acc;
	struct cprof_ucopy *copy;
	struct cprof_pyhint *py;
	int max;
	bool entry;
	u16 flags;
	int mapped;
};

/* How far into a skipped function (cprof_unwind_kernel_here()) a call is. */
#define CPROF_SKIP_SPAN		256

/*
 * Where a function was called from: the call's return address, and its
 * caller's stack pointer after the call and frame pointer.
 */
struct cprof_caller {
	unsigned long ip;
	unsigned long sp;
	unsigned long bp;
};

/*
 * Into @c, the struct cprof_caller of the function this is written in.
 * Only in that function itself, which then keeps a frame pointer
 * (__builtin_frame_address()), and which must be neither traced nor
 * probed (notrace, NOKPROBE_SYMBOL()): a function graph tracer or a
 * return probe puts a trampoline's address where its return address was.
 */
#define cprof_caller_here(c)						\
	do {								\
		unsigned long *__fp = __builtin_frame_address(0);	\
		struct cprof_caller *__c = (c);				\
									\
		__c->ip = (unsigned long)__builtin_return_address(0);	\
		__c->sp = (unsigned long)(__fp + 2);			\
		__c->bp = __fp[0];					\
	} while (0)

/* Stack walks from the tick, the scheduler's hook, a snapshot: unwind.c. */
int cprof_unwind_kernel(struct pt_regs *regs, u64 *ips, int max, u16 *flags);
int cprof_unwind_kernel_here(u64 *ips, int max, u16 *flags,
			     unsigned long skip);
int cprof_unwind_kernel_caller(const struct cprof_caller *caller, u64 *ips,
			       int max, u16 *flags, unsigned long skip);
int cprof_unwind_kernel_task(struct task_struct *tsk, u64 *ips, int max,
			     u16 *flags);
struct pt_regs *cprof_unwind_irq_regs(void);
int cprof_unwind_user(struct cprof_uwalk_req *req);
u16 cprof_unwind_copy(const struct cprof_ucopy *c, struct cprof_ustack *u,
		      u32 size);
struct pt_regs *cprof_saved_user_regs(struct task_struct *tsk);

/**
 * cprof_user_regs() - the user registers to walk a user stack from
 * @tsk: the interrupted task, current
 * @regs: the interrupted registers
 *
 * @regs themselves if the tick hit user mode, else the ones @tsk saved on
 * kernel entry.  None inside execve(): the saved registers are the old
 * program's while the address space may already be the new one's, where
 * they mean nothing.
 *
 * Context: the tick (hard interrupt).
 * Return: the registers, or NULL (kernel threads and user workers, a task
 * without an mm, execve(), saved registers that are not user mode's).
 */
static inline struct pt_regs *cprof_user_regs(struct task_struct *tsk,
					      struct pt_regs *regs)
{
	return user_mode(regs) ? regs : cprof_saved_user_regs(tsk);
}

int cprof_copy_user_regs(struct task_struct *tsk, struct pt_regs *regs);
bool cprof_unwind_read_word(struct cprof_uaccess *acc, unsigned long addr,
			    unsigned long *val);

#endif /* CPROF_UNWIND_H */
