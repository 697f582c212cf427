// SPDX-License-Identifier: GPL-2.0
/*
 * Stack walks from an interrupt.
 *
 * Kernel: the kernel's own unwinder (ORC on Debian kernels, frame pointers
 * elsewhere) started from the interrupted registers.
 *
 * User: the frame-pointer chain from the interrupted user registers, or from
 * the registers the task saved on kernel entry when the tick hit a system
 * call or fault, so a sample shows the user frames that led into the kernel.
 * The walk reads user memory with page faults disabled, so it never sleeps
 * or faults pages in, and only at addresses access_ok() accepts; it demands
 * aligned frame pointers that strictly increase, and it stops at the depth.
 * Each frame record is two loads in one user access window, as perf's own
 * walker reads them, and each other word one load: copy_from_user_nofault()
 * costs a call, its checks and a string copy each time.  The page tables loaded in a hard
 * interrupt are current's own (context switches change them with interrupts
 * off), which copy_from_user_nofault() has to check for NMIs; the one
 * window where they are not (exec replacing the mm) reads the old address
 * space's memory, harmlessly.
 */
#include <linux/sched.h>
#include <linux/sched/task_stack.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <asm/ptrace.h>
#include <asm/unwind.h>

#include "cprof_format.h"
#include "maps.h"
#include "unwind.h"

int cprof_unwind_kernel(struct pt_regs *regs, u64 *ips, int max, u16 *flags)
{
	struct unwind_state state;
	unsigned long addr;
	int n = 0;

	ips[n++] = regs->ip;
	for (unwind_start(&state, current, regs, NULL); !unwind_done(&state);
	     unwind_next_frame(&state)) {
		addr = unwind_get_return_address(&state);
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

/*
 * The user registers of @tsk when the tick interrupted @regs, or NULL.
 * None inside execve(): the saved registers are the old program's while
 * the address space may already be the new one's, where they mean nothing.
 */
struct pt_regs *cprof_user_regs(struct task_struct *tsk, struct pt_regs *regs)
{
	if (user_mode(regs))
		return regs;
	if (!tsk->mm || tsk->flags & (PF_KTHREAD | PF_USER_WORKER) ||
	    tsk->in_execve)
		return NULL;
	regs = task_pt_regs(tsk);
	return user_mode(regs) ? regs : NULL;
}

/* One user word at @addr; the caller has page faults disabled. */
static bool cprof_read_word(unsigned long addr, unsigned long *val)
{
	const unsigned long __user *p = (const void __user *)addr;

	if (!user_access_begin(p, sizeof(*p)))
		return false;
	unsafe_get_user(*val, p, fault);
	user_access_end();
	return true;
fault:
	user_access_end();
	return false;
}

/*
 * A tick inside a system call: C libraries' system call wrappers (read(),
 * write(), ...) are leaf functions without a frame, so the frame-pointer
 * chain starts at their caller's caller and the call site would be lost.
 * In a system call, the word at the user stack pointer is the wrapper's
 * return address if the wrapper pushed nothing: take it only if it lies in
 * an executable mapping of the process (as far as maps.c knows them) and
 * the instruction before it is a call.  (The user ip itself is then a
 * return address; after a fault or interrupt it is the interrupted
 * instruction.)  The caller has page faults disabled.
 */
static bool cprof_syscall_caller(struct pt_regs *uregs, unsigned long *ret)
{
	unsigned long cand, before;
	u8 b[sizeof(before)];

	if (!cprof_read_word(uregs->sp, &cand) ||
	    !cprof_maps_exec_addr(cand) ||
	    !cprof_read_word(cand - sizeof(before), &before))
		return false;
	/* b[7] is the byte just before the return address */
	memcpy(b, &before, sizeof(b));
	if (b[3] != 0xe8 &&					/* call rel32 */
	    (b[2] != 0xff || b[3] != 0x15) &&			/* call *rip+d32 */
	    (b[6] != 0xff || (b[7] & 0xf8) != 0xd0))		/* call *%reg */
		return false;
	*ret = cand;
	return true;
}

struct cprof_user_frame {
	unsigned long next_fp;
	unsigned long ret;
};

/* One frame record at @fp; the caller has page faults disabled. */
static bool cprof_read_frame(unsigned long fp, struct cprof_user_frame *frame)
{
	const struct cprof_user_frame __user *uf = (const void __user *)fp;

	if (!user_access_begin(uf, sizeof(*uf)))
		return false;
	unsafe_get_user(frame->next_fp, &uf->next_fp, fault);
	unsafe_get_user(frame->ret, &uf->ret, fault);
	user_access_end();
	return true;
fault:
	user_access_end();
	return false;
}

int cprof_unwind_user(struct pt_regs *uregs, bool entry, u64 *ips, int max,
		      u16 *flags)
{
	struct cprof_user_frame frame;
	unsigned long fp = uregs->bp;
	unsigned long low = uregs->sp;
	unsigned long caller = 0;
	int n = 0;

	ips[n++] = uregs->ip;
	/* Entry code sets orig_ax to -1 for interrupts and exceptions. */
	if (!entry || (long)uregs->orig_ax < 0)
		*flags |= CPROF_SAMPLE_USER_EXACT;
	/* 32-bit tasks have another frame layout: leaf only. */
	if (!user_64bit_mode(uregs))
		return n;
	pagefault_disable();
	if (!(*flags & CPROF_SAMPLE_USER_EXACT) && n < max &&
	    cprof_syscall_caller(uregs, &caller))
		ips[n++] = caller;
	while (fp) {
		if (fp < low || fp & (sizeof(long) - 1) ||
		    !cprof_read_frame(fp, &frame)) {
			*flags |= CPROF_SAMPLE_USER_FAULT;
			break;
		}
		if (!frame.ret)
			break;
		/*
		 * No user code lives below the default mmap_min_addr or above
		 * the user address space: a register used as data, not a
		 * frame chain (ld.so's start-up, code built without frame
		 * pointers).  Ends the walk as a bad frame, not as a frame.
		 */
		if (frame.ret < CONFIG_DEFAULT_MMAP_MIN_ADDR ||
		    frame.ret >= TASK_SIZE_MAX) {
			*flags |= CPROF_SAMPLE_USER_FAULT;
			break;
		}
		if (n == max) {
			*flags |= CPROF_SAMPLE_USER_TRUNC;
			break;
		}
		if (frame.ret != caller)
			ips[n++] = frame.ret;
		caller = 0;
		/* Strictly increasing: no loops, and the walk always ends. */
		low = fp + sizeof(frame);
		fp = frame.next_fp;
	}
	pagefault_enable();
	return n;
}
