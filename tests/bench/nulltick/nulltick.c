// SPDX-License-Identifier: GPL-2.0
/*
 * nulltick: the floor under the handler costs of make bench.  One pinned
 * hard-IRQ hrtimer per online CPU at @freq Hz, as cprof and perf's
 * cpu-clock arm theirs, whose callback reads the clock and re-arms, nothing
 * else.  Its duration under function_graph is what any hrtimer callback
 * costs there before it does any work: the tracer's own cost and, under
 * emulation, that of entering rarely run code.  Not part of cprof.
 */
#include <linux/cpu.h>
#include <linux/hrtimer.h>
#include <linux/module.h>
#include <linux/percpu.h>
#include <linux/smp.h>

static uint freq = 999;
module_param(freq, uint, 0400);
MODULE_PARM_DESC(freq, "ticks per second per CPU (1-100000, default 999)");

static DEFINE_PER_CPU(struct hrtimer, nulltick_timer);
static u64 nulltick_period_ns;
static bool nulltick_stopping;

static enum hrtimer_restart nulltick_fn(struct hrtimer *timer)
{
	/* as cprof's tick: once stopping, no callback re-arms */
	if (READ_ONCE(nulltick_stopping))
		return HRTIMER_NORESTART;
	hrtimer_forward(timer, ktime_get(), ns_to_ktime(nulltick_period_ns));
	return HRTIMER_RESTART;
}

static void nulltick_arm(void *unused)
{
	struct hrtimer *t = this_cpu_ptr(&nulltick_timer);

	hrtimer_start(t, ns_to_ktime(nulltick_period_ns),
		      HRTIMER_MODE_REL_PINNED_HARD);
}

static int __init nulltick_init(void)
{
	int cpu;

	if (!freq || freq > 100000)
		return -EINVAL;
	nulltick_period_ns = NSEC_PER_SEC / freq;
	for_each_possible_cpu(cpu) {
		struct hrtimer *t = per_cpu_ptr(&nulltick_timer, cpu);

		hrtimer_init(t, CLOCK_MONOTONIC, HRTIMER_MODE_REL_PINNED_HARD);
		t->function = nulltick_fn;
	}
	cpus_read_lock();
	for_each_online_cpu(cpu)
		smp_call_function_single(cpu, nulltick_arm, NULL, 1);
	cpus_read_unlock();
	return 0;
}

static void __exit nulltick_exit(void)
{
	int cpu;

	WRITE_ONCE(nulltick_stopping, true);
	for_each_possible_cpu(cpu)
		hrtimer_cancel(per_cpu_ptr(&nulltick_timer, cpu));
}

module_init(nulltick_init);
module_exit(nulltick_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("make bench: an hrtimer callback that only re-arms");
