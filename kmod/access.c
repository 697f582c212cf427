// SPDX-License-Identifier: GPL-2.0
/*
 * Who may profile, and what they see: perf's model for a system-wide
 * profile with kernel stacks.  Opening any file in /proc/cprof needs
 * perfmon_capable() -- CAP_PERFMON or CAP_SYS_ADMIN in the initial user
 * namespace: uid 0 in a container without those capabilities, or in a
 * user namespace of its own, is not enough, since stacks and kernel
 * addresses would show it the host's layout and other tenants' work (and
 * ctl's settings say who is profiled).  Then the LSMs' perf_event_open
 * hook is asked about a kernel profile, where the kernel lets a module
 * ask it (perf_allow_kernel(); its CPU-wide question cannot be asked).
 * Lockdown (LOCKDOWN_PERF) refuses profiling altogether.  The check is
 * made at open, with the opener's credentials, so a file descriptor handed
 * to another program carries the opener's rights and no more.  A profile
 * that probes one process's code (kind heap) also needs what attaching
 * to it with ptrace needs, as perf's uprobes do.
 */
#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/sched/coredump.h>
#include <linux/sched/mm.h>
#include <linux/kernel.h>
#include <linux/security.h>
#include <linux/string.h>

#include "access.h"

/**
 * cprof_access_check() - may the current task profile the machine?
 * Return: 0, -EPERM under lockdown, -EACCES without CAP_PERFMON or
 * CAP_SYS_ADMIN in the initial user namespace (what perf returns), or an
 * LSM's refusal of a kernel profile (cprof_compat_allow_kernel()).
 */
int cprof_access_check(void)
{
	int err = security_locked_down(LOCKDOWN_PERF);

	if (err)
		return err;
	if (!perfmon_capable())
		return -EACCES;
	return cprof_compat_allow_kernel();
}

/**
 * cprof_access_kernel_addrs() - may the current task see kernel addresses?
 *
 * As %pK decides, by kptr_restrict (not exported to modules, so asked of
 * vsprintf): 0 shows them (a hashed pointer here), 1 only to CAP_SYSLOG
 * with matching real and effective ids, 2 to nobody (zeros here).  (With
 * kptr_restrict 0, /proc/kallsyms also wants perf_event_paranoid <= 1 or
 * CAP_SYSLOG; a profiler is perfmon_capable(), which perf takes as enough
 * for kernel samples.)
 *
 * Context: process, the opener.
 * Return: true if it may.
 */
bool cprof_access_kernel_addrs(void)
{
	char buf[2 * sizeof(void *) + 1];

	snprintf(buf, sizeof(buf), "%pK", (void *)cprof_access_kernel_addrs);
	return strspn(buf, "0") != strlen(buf);
}

/* Are the current task's real ids all of @tcred's? */
static bool cprof_access_same_ids(const struct cred *tcred)
{
	const struct cred *cred = current_cred();

	return uid_eq(cred->uid, tcred->euid) &&
	       uid_eq(cred->uid, tcred->suid) &&
	       uid_eq(cred->uid, tcred->uid) &&
	       gid_eq(cred->gid, tcred->egid) &&
	       gid_eq(cred->gid, tcred->sgid) &&
	       gid_eq(cred->gid, tcred->gid);
}

/**
 * cprof_access_probe() - may the current task probe @task's code?
 * @task: a user process
 * @mm: its address space, held
 *
 * As ptrace's attach (its real ids): the same user or CAP_SYS_PTRACE in
 * the process's user namespace; and, for a process that may not be dumped
 * (setuid, made undumpable), CAP_SYS_PTRACE in its memory's namespace too.
 * (The LSMs' ptrace hook cannot be asked by a module.)
 *
 * Context: process, the opener.
 * Return: 0, or -EACCES.
 */
int cprof_access_probe(struct task_struct *task, struct mm_struct *mm)
{
	const struct cred *tcred = get_task_cred(task);
	bool ok;

	ok = (cprof_access_same_ids(tcred) ||
	      ns_capable(tcred->user_ns, CAP_SYS_PTRACE)) &&
	     (get_dumpable(mm) == SUID_DUMP_USER ||
	      ns_capable(mm->user_ns, CAP_SYS_PTRACE));
	put_cred(tcred);
	return ok ? 0 : -EACCES;
}
