// SPDX-License-Identifier: GPL-2.0
/*
 * Single-producer single-consumer record ring.  The producer publishes a
 * record by a release store of head after writing it; the consumer frees
 * space by a release store of tail after copying records out.  Neither side
 * takes a lock, so a full ring costs the sampling path one comparison.
 */
#include <linux/string.h>
#include <linux/vmalloc.h>

#include "cprof_format.h"
#include "ring.h"

/**
 * cprof_ring_init() - allocate an empty ring
 * @r: the ring, holding no memory (it is overwritten, not freed)
 * @size: bytes, a power of two
 * @node: NUMA node for the memory
 *
 * Context: process, may sleep; neither side runs on @r yet.
 * Return: 0, or -ENOMEM.  cprof_ring_free() frees the memory.
 */
int cprof_ring_init(struct cprof_ring *r, u32 size, int node)
{
	memset(r, 0, sizeof(*r));
	r->data = vzalloc_node(size, node);
	if (!r->data)
		return -ENOMEM;
	r->size = size;
	return 0;
}

/**
 * cprof_ring_free() - free a ring's memory
 * @r: the ring; r->data is NULL afterwards (also if it already was)
 *
 * Context: process, may sleep; neither side may run on @r any more.
 */
void cprof_ring_free(struct cprof_ring *r)
{
	vfree(r->data);
	r->data = NULL;
}

/**
 * cprof_ring_empty() - has the consumer taken everything committed?
 * @r: the ring
 *
 * Context: the consumer only.
 * Return: true when nothing committed is left to drain.
 */
bool cprof_ring_empty(const struct cprof_ring *r)
{
	/* Pairs with smp_store_release() in cprof_ring_commit(). */
	return smp_load_acquire(&r->head) == r->tail;
}

/**
 * cprof_ring_drain() - copy whole records out and free their room
 * @r: the ring
 * @dst: where to copy them
 * @room: bytes available at @dst; the first record that does not fit stays
 * @nr_samples: incremented by the CPROF_REC_SAMPLE records copied
 *
 * Pads are skipped, never copied.
 *
 * Context: the consumer only; does not sleep.
 * Return: the bytes copied.
 */
size_t cprof_ring_drain(struct cprof_ring *r, void *dst, size_t room,
			u64 *nr_samples)
{
	/* Pairs with smp_store_release() in cprof_ring_commit(). */
	u64 head = smp_load_acquire(&r->head);
	u64 tail = r->tail;
	size_t done = 0;

	while (tail < head) {
		const struct cprof_rec *rec = r->data + (tail & (r->size - 1));
		u32 size = rec->size;

		if (WARN_ON_ONCE(size < sizeof(*rec) || size & 7 ||
				 size > head - tail)) {
			tail = head;	/* a bug: drop the rest, don't loop */
			break;
		}
		if (rec->type != CPROF_REC_PAD) {
			if (size > room - done)
				break;
			memcpy(dst + done, rec, size);
			done += size;
			if (rec->type == CPROF_REC_SAMPLE)
				(*nr_samples)++;
		}
		tail += size;
	}
	/* Pairs with smp_load_acquire() in cprof_ring_reserve(). */
	smp_store_release(&r->tail, tail);
	return done;
}
