// SPDX-License-Identifier: GPL-2.0
/*
 * cprof: a per-CPU hrtimer CPU profiler.
 */
#include <linux/module.h>
#include <linux/proc_fs.h>

static struct proc_dir_entry *cprof_dir;

static int __init cprof_init(void)
{
	cprof_dir = proc_mkdir_mode("cprof", 0500, NULL);
	if (!cprof_dir)
		return -ENOMEM;
	return 0;
}

static void __exit cprof_exit(void)
{
	proc_remove(cprof_dir);
}

module_init(cprof_init);
module_exit(cprof_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("per-CPU hrtimer CPU profiler");
