/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The one place where kernel differences are handled.  Force-included from
 * Kbuild: the rest of the module is written against the newest kernel API,
 * and this file gives older kernels what they lack, testing for the
 * feature itself (a macro the newer headers define), never for a version.
 */
#ifndef CPROF_COMPAT_H
#define CPROF_COMPAT_H

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/fs.h>
#include <linux/sched.h>

/*
 * Kernel-side workers cloned from a user thread (io_uring, and vhost since
 * 6.4) have an mm but no user context of their own.  Before 6.4 only
 * io_uring's exist, as PF_IO_WORKER (vhost's are kernel threads).
 */
#ifndef PF_USER_WORKER
#define PF_USER_WORKER PF_IO_WORKER
#endif

/*
 * Since 6.8 overlayfs maps a file of a lower layer as a backing file whose
 * path is the layer's; file_user_path() gives the path the user mapped.
 * Before, that was the mapped file's own path (Kbuild looks for the
 * function in the headers: 6.5 to 6.7 have backing files without it).
 */
#ifndef CPROF_HAVE_FILE_USER_PATH
static inline const struct path *file_user_path(const struct file *f)
{
	return &f->f_path;
}
#endif

/*
 * The kernel stack of a task off the CPU, its stack pinned for the walk
 * (try_get_task_stack(), whose put_task_stack() modules cannot call):
 * stack_trace_save_tsk(), exported since 6.3 (Kbuild looks in the
 * kernel's symbol list).  Before, -1: unwind.c walks it itself.
 */
#ifdef CPROF_HAVE_STACK_TRACE_SAVE_TSK
#include <linux/stacktrace.h>

static inline int cprof_compat_save_tsk(struct task_struct *tsk,
					unsigned long *store,
					unsigned int size)
{
	return stack_trace_save_tsk(tsk, store, size, 0);
}
#else
static inline int cprof_compat_save_tsk(struct task_struct *tsk,
					unsigned long *store,
					unsigned int size)
{
	return -1;
}
#endif

/*
 * The futex system calls of 6.7's futex2 (futex_wake, futex_wait,
 * futex_requeue: consecutive numbers); before, futex and futex_waitv
 * are all.
 */
#include <asm/unistd.h>

#ifdef __NR_futex_wake
#define CPROF_NR_FUTEX2_FIRST	__NR_futex_wake
#define CPROF_NR_FUTEX2_LAST	__NR_futex_requeue
#else
#define CPROF_NR_FUTEX2_FIRST	(-1)
#define CPROF_NR_FUTEX2_LAST	(-1)
#endif

/*
 * call_rcu_hurry() (6.2+): a callback not left to wait with the lazy ones
 * (RCU_LAZY) for seconds.  Before it, call_rcu() was never lazy.
 */
#ifndef CPROF_HAVE_CALL_RCU_HURRY
#define call_rcu_hurry call_rcu
#endif

/*
 * perf's decision on a kernel profile: perf_event_paranoid, then the LSMs'
 * perf_event_open hook (security_perf_event_open(), PERF_SECURITY_KERNEL).
 * A module may ask where perf_allow_kernel() is exported taking no
 * argument (Debian's 6.12 does; Kbuild looks in the kernel's symbol list
 * and the header).  Where it is not (6.1), or takes a perf_event_attr,
 * neither the sysctl nor the hook is used: the CAP_PERFMON check is all.
 */
#ifdef CPROF_HAVE_PERF_ALLOW_KERNEL
#include <linux/perf_event.h>

static inline int cprof_compat_allow_kernel(void)
{
	return perf_allow_kernel();
}
#else
static inline int cprof_compat_allow_kernel(void)
{
	return 0;
}
#endif

/*
 * Uprobes (kind heap).  Until 6.11 a consumer is registered and removed
 * by its file and offset (uprobe_register(), uprobe_unregister(), which
 * waits for running handlers) and its filter is told why it is asked;
 * since 6.12 uprobe_register() returns the probe, which removing takes
 * (uprobe_unregister_nosync(), then uprobe_unregister_sync() once for
 * all), and the filter takes the mm alone.  Kbuild looks in the header.
 */
#include <linux/err.h>
#include <linux/uprobes.h>

struct uprobe;

/*
 * One consumer of a probe at a file's offset: uc's handlers set by the
 * user, its filter by registering, asking want().
 */
struct cprof_uprobe {
	struct uprobe_consumer uc;
	bool (*want)(struct mm_struct *mm);	/* is @mm's probe kept? */
	struct inode *inode;
	loff_t offset;
	struct uprobe *probe;		/* 6.12 on: what removing takes */
};

#ifdef CPROF_HAVE_UPROBE_FILTER_CTX
static inline bool cprof_compat_uprobe_filter(struct uprobe_consumer *self,
					      enum uprobe_filter_ctx ctx,
					      struct mm_struct *mm)
#else
static inline bool cprof_compat_uprobe_filter(struct uprobe_consumer *self,
					      struct mm_struct *mm)
#endif
{
	return container_of(self, struct cprof_uprobe, uc)->want(mm);
}

#ifdef CPROF_HAVE_UPROBE_NOSYNC
static inline int cprof_compat_uprobe_register(struct cprof_uprobe *p)
{
	struct uprobe *u;

	p->uc.filter = cprof_compat_uprobe_filter;
	u = uprobe_register(p->inode, p->offset, 0, &p->uc);
	if (IS_ERR(u))
		return PTR_ERR(u);
	p->probe = u;
	return 0;
}

static inline void cprof_compat_uprobe_unregister(struct cprof_uprobe *p)
{
	uprobe_unregister_nosync(p->probe, &p->uc);
}

static inline void cprof_compat_uprobe_sync(void)
{
	uprobe_unregister_sync();
}
#else
static inline int cprof_compat_uprobe_register(struct cprof_uprobe *p)
{
	p->uc.filter = cprof_compat_uprobe_filter;
	return uprobe_register(p->inode, p->offset, &p->uc);
}

static inline void cprof_compat_uprobe_unregister(struct cprof_uprobe *p)
{
	uprobe_unregister(p->inode, p->offset, &p->uc);
}

/* uprobe_unregister() waited for the handlers already */
static inline void cprof_compat_uprobe_sync(void)
{
}
#endif

#endif /* CPROF_COMPAT_H */
