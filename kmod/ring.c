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

#define CPROF_REC_PAD	0	/* ring-internal, never reaches the stream */

int cprof_ring_init(struct cprof_ring *r, u32 size, int node)
{
	memset(r, 0, sizeof(*r));
	r->data = vzalloc_node(size, node);
	if (!r->data)
		return -ENOMEM;
	r->size = size;
	return 0;
}

void cprof_ring_free(struct cprof_ring *r)
{
	vfree(r->data);
	r->data = NULL;
}

/* Only while neither side runs: between profiles. */
void cprof_ring_reset(struct cprof_ring *r)
{
	r->head = 0;
	r->tail = 0;
	r->resv_head = 0;
}

/*
 * Reserve room for a record of at most @max bytes (a multiple of 8).  Returns
 * where to write it, or NULL when the ring is full.  At most one reservation
 * is outstanding; cprof_ring_commit() ends it.
 */
void *cprof_ring_reserve(struct cprof_ring *r, u32 max)
{
	u64 head = r->head;
	/* Pairs with smp_store_release() in cprof_ring_drain(). */
	u64 tail = smp_load_acquire(&r->tail);
	u32 off = head & (r->size - 1);
	u32 pad = 0;

	if (off + max > r->size)
		pad = r->size - off;
	if (head + pad + max - tail > r->size)
		return NULL;
	if (pad) {
		struct cprof_rec *p = r->data + off;

		p->type = CPROF_REC_PAD;
		p->flags = 0;
		p->size = pad;
		off = 0;
	}
	r->resv_head = head + pad;
	r->resv_off = off;
	return r->data + off;
}

void cprof_ring_commit(struct cprof_ring *r, u32 type, u32 flags, u32 size)
{
	struct cprof_rec *rec = r->data + r->resv_off;

	rec->type = type;
	rec->flags = flags;
	rec->size = size;
	/* Pairs with smp_load_acquire() in cprof_ring_drain(). */
	smp_store_release(&r->head, r->resv_head + size);
}

bool cprof_ring_half_full(const struct cprof_ring *r)
{
	return r->head - READ_ONCE(r->tail) > r->size / 2;
}

bool cprof_ring_empty(const struct cprof_ring *r)
{
	/* Pairs with smp_store_release() in cprof_ring_commit(). */
	return smp_load_acquire(&r->head) == r->tail;
}

/*
 * Copy whole records into @dst (at most @room bytes), skipping pads; count
 * the sample records.  Returns the bytes copied.
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
