// SPDX-License-Identifier: GPL-2.0
/*
 * cprof: a per-CPU hrtimer CPU profiler.  This file wires the units and
 * holds the load-time parameters; see each unit for how it works.
 */
#include <linux/log2.h>
#include <linux/module.h>

#include "ctl.h"
#include "maps.h"
#include "procfs.h"
#include "pycode.h"
#include "record.h"
#include "sample.h"
#include "session.h"
#include "utable.h"

static uint freq = 99;
module_param(freq, uint, 0400);
MODULE_PARM_DESC(freq, "samples per second per CPU (1-100000, default 99)");

static uint seconds = 30;
module_param(seconds, uint, 0400);
MODULE_PARM_DESC(seconds, "profile duration, 0: until stopped (0-86400, default 30)");

static uint depth = CPROF_MAX_DEPTH;
module_param(depth, uint, 0400);
MODULE_PARM_DESC(depth, "max frames per stack (1-127, default 127)");

static uint budget = CPROF_BUDGET_DEFAULT;
module_param(budget, uint, 0400);
MODULE_PARM_DESC(budget, "max tick cost, % of a CPU (1-50, default 25)");

static uint accesses = CPROF_ACCESSES_DEFAULT;
module_param(accesses, uint, 0400);
MODULE_PARM_DESC(accesses, "user memory accesses a tick or a recorded switch may make (1-4096, default 256)");

static uint buffer_kb = 1024;
module_param(buffer_kb, uint, 0400);
MODULE_PARM_DESC(buffer_kb, "per-CPU buffer, KiB, power of two (64-65536, default 1024)");

static uint buffers_mb = 64;
module_param(buffers_mb, uint, 0400);
MODULE_PARM_DESC(buffers_mb, "cap on all per-CPU buffers together, MiB (1-65536, default 64): more CPUs get smaller buffers");

static uint maps_mb = CPROF_MAPS_MB_DEFAULT;
module_param(maps_mb, uint, 0400);
MODULE_PARM_DESC(maps_mb, "cap on the sampled processes' mapping lists together, MiB (1-4096, default 32)");

static int __init cprof_init(void)
{
	int err;

	if (buffer_kb < 64 || buffer_kb > 65536 || !is_power_of_2(buffer_kb) ||
	    !buffers_mb || buffers_mb > 65536 || !maps_mb ||
	    maps_mb > CPROF_MAPS_MB_MAX)
		return -EINVAL;
	err = cprof_ctl_init(freq, seconds, depth, budget, accesses);
	if (err)
		return err;
	err = cprof_maps_init((u64)maps_mb << 20);
	if (err)
		goto ctl_exit;
	err = cprof_pycode_init();
	if (err)
		goto maps_exit;
	err = cprof_sample_init(buffer_kb * 1024, (u64)buffers_mb << 20);
	if (err)
		goto pycode_exit;
	err = cprof_procfs_init();
	if (err)
		goto sample_exit;
	return 0;

sample_exit:
	cprof_record_exit();
pycode_exit:
	cprof_pycode_exit();
maps_exit:
	cprof_maps_exit();
ctl_exit:
	cprof_ctl_exit();
	return err;
}

static void __exit cprof_exit(void)
{
	cprof_session_unload();
	cprof_procfs_exit();
	cprof_record_exit();
	cprof_session_exit();
	cprof_pycode_exit();
	cprof_maps_exit();
	cprof_utable_exit();
	cprof_ctl_exit();
}

module_init(cprof_init);
module_exit(cprof_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("per-CPU hrtimer CPU profiler streaming kernel and user stacks");
MODULE_VERSION(CPROF_RELEASE);
