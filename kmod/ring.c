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
 * cprof_ring_reserve() - reserve room for the next record
 * @r: the ring
 * @max: the record's largest size, header included, a multiple of 8
 *
 * At most one reservation is outstanding; cprof_ring_commit() ends it.
 *
 * Context: the producer only; does not sleep.
 * Return: where to write the record, or NULL when the ring is full.
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

/**
 * cprof_ring_commit() - publish the reserved record to the consumer
 * @r: the ring, with a reservation outstanding
 * @type: the record's type, enum cprof_rec_type
 * @flags: the record's flags, per type
 * @size: the bytes written, header included: a multiple of 8, at most the
 *	reserved size
 *
 * Fills in the record's header.  The consumer only reads the record: the
 * producer may still read it until its next cprof_ring_reserve().
 *
 * Context: the producer only; does not sleep.
 */
void cprof_ring_commit(struct cprof_ring *r, u32 type, u32 flags, u32 size)
{
	struct cprof_rec *rec = r->data + r->resv_off;

	rec->type = type;
	rec->flags = flags;
	rec->size = size;
	/* Pairs with smp_load_acquire() in cprof_ring_drain(). */
	smp_store_release(&r->head, r->resv_head + size);
}

/**
 * cprof_ring_fits_next() - will a record of @next bytes fit after the one
 *	reserved, once it is committed with @size bytes?
 * @r: the ring, with a reservation outstanding
 * @size: what the reserved record will be committed with
 * @next: the next record's largest size, a multiple of 8
 *
 * The consumer only frees room: if it fits now, the next
 * cprof_ring_reserve() succeeds.  No more than half the ring is given to
 * the two: the samples keep the rest.
 *
 * Context: the producer only.
 * Return: true if it fits.
 */
bool cprof_ring_fits_next(const struct cprof_ring *r, u32 size, u32 next)
{
	u64 head = r->resv_head + size;
	u32 off = head & (r->size - 1);
	u32 pad = off + next > r->size ? r->size - off : 0;

	return head + pad + next - READ_ONCE(r->tail) <= r->size / 2;
}

/**
 * cprof_ring_half_full() - is the ring more than half full?
 * @r: the ring
 *
 * Context: the producer only.
 * Return: true when more than half of @r is produced but not yet consumed.
 */
bool cprof_ring_half_full(const struct cprof_ring *r)
{
	return r->head - READ_ONCE(r->tail) > r->size / 2;
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
