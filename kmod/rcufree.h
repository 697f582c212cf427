/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CPROF_RCUFREE_H
#define CPROF_RCUFREE_H

#include <linux/atomic.h>
#include <linux/rcupdate.h>
#include <linux/types.h>

/*
 * Memory dropped from an RCU table and not yet freed, which a budget
 * (maps_mb, unwind_mb) counts until it is: see rcufree.c.
 */
struct cprof_rcufree_pool {
	atomic_long_t bytes;
};

#define CPROF_RCUFREE_POOL_INIT	{ .bytes = ATOMIC_LONG_INIT(0) }

/* Embedded in what is dropped: how its callback finds and counts it. */
struct cprof_rcufree {
	struct rcu_head rcu;
	struct cprof_rcufree_pool *pool;
	void *obj;
	size_t bytes;
};

void cprof_rcufree(struct cprof_rcufree_pool *pool, struct cprof_rcufree *f,
		   void *obj, size_t bytes);
void cprof_rcufree_wait(void);
void cprof_rcufree_exit(struct cprof_rcufree_pool *pool);

/**
 * cprof_rcufree_pending() - the bytes dropped into @pool and not yet freed
 * @pool: the budget's pool
 *
 * Only falls but for the caller's own drops: read under the lock that
 * drops are made under, it is at most too large.
 *
 * Return: the bytes.
 */
static inline u64 cprof_rcufree_pending(struct cprof_rcufree_pool *pool)
{
	return atomic_long_read(&pool->bytes);
}

/**
 * cprof_rcufree_target() - what to evict down to before waiting for the pool
 * @limit: the budget, bytes
 * @bytes: the object that needs the room
 *
 * An eighth under @limit, so that the next few objects need no wait;
 * @limit itself when @bytes would not fit under that.
 *
 * Return: the bytes the objects in the table may take, @bytes among them.
 */
static inline u64 cprof_rcufree_target(u64 limit, u64 bytes)
{
	return bytes > limit - limit / 8 ? limit : limit - limit / 8;
}

#endif
