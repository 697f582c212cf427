// SPDX-License-Identifier: GPL-2.0
/*
 * Free after a grace period, and count until then.
 *
 * A mapping state or an unwind table is unhashed under its mutex and freed
 * once the ticks reading it under RCU are done.  kvfree_rcu() may keep what
 * it is given for seconds before the grace period even starts (5 s on 6.1,
 * KFREE_DRAIN_JIFFIES), and so may a lazy call_rcu() (RCU_LAZY, 10 s on
 * 6.12), while a user's processes can have states listed and dropped, or a
 * loader tables loaded and evicted, many times a second.  A budget that
 * forgot an object when it was dropped would let the module hold seconds
 * of drops over it.  So a dropped object is counted in its budget's pool
 * until its callback frees it (call_rcu_hurry(): not left with the lazy
 * ones), and a writer that finds the pool taking the room it needs waits
 * for it with cprof_rcufree_wait().
 */
#include <linux/bug.h>
#include <linux/mm.h>

#include "rcufree.h"

static void cprof_rcufree_cb(struct rcu_head *rcu)
{
	struct cprof_rcufree *f = container_of(rcu, struct cprof_rcufree, rcu);

	atomic_long_sub(f->bytes, &f->pool->bytes);
	kvfree(f->obj);
}

/**
 * cprof_rcufree() - free @obj after a grace period, counted in @pool till then
 * @pool: the budget's pool
 * @f: embedded in @obj
 * @obj: from kvmalloc(), unreachable to RCU readers that start from now
 * @bytes: what @obj takes, as the budget counted it
 *
 * Context: any; does not sleep.
 */
void cprof_rcufree(struct cprof_rcufree_pool *pool, struct cprof_rcufree *f,
		   void *obj, size_t bytes)
{
	f->pool = pool;
	f->obj = obj;
	f->bytes = bytes;
	atomic_long_add(bytes, &pool->bytes);
	call_rcu_hurry(&f->rcu, cprof_rcufree_cb);
}

/**
 * cprof_rcufree_wait() - wait until everything dropped so far is freed
 *
 * rcu_barrier(): a grace period and the callbacks, tens of milliseconds.
 *
 * Context: process; sleeps.  Under no lock that CPU hotplug or an RCU
 * callback takes.
 */
void cprof_rcufree_wait(void)
{
	rcu_barrier();
}

/**
 * cprof_rcufree_exit() - wait for @pool's callbacks: they are module code
 * @pool: the pool, into which nothing is dropped any more
 *
 * Context: module exit; sleeps.
 */
void cprof_rcufree_exit(struct cprof_rcufree_pool *pool)
{
	rcu_barrier();
	WARN_ON_ONCE(cprof_rcufree_pending(pool));
}
