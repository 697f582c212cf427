/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A per-CPU byte ring of stream records: one producer (the CPU that owns it,
 * in hard-IRQ context or with interrupts off), one consumer (the reader).
 * Records never wrap: a record that does not fit before the end is preceded
 * by a pad that the consumer skips.
 */
#ifndef CPROF_RING_H
#define CPROF_RING_H

#include <asm/barrier.h>
#include <linux/compiler.h>
#include <linux/types.h>

#include "cprof_format.h"

#define CPROF_REC_PAD	0	/* ring-internal, never reaches the stream */

struct cprof_ring {
	void *data;
	u32 size;		/* power of two */
	u64 head;		/* bytes produced; written by the producer */
	u64 tail;		/* bytes consumed; written by the consumer */
	u64 resv_head;		/* head after the pending reservation */
	u32 resv_off;		/* offset of the reserved record */
};

int cprof_ring_init(struct cprof_ring *r, u32 size, int node);
void cprof_ring_free(struct cprof_ring *r);
bool cprof_ring_empty(const struct cprof_ring *r);
size_t cprof_ring_drain(struct cprof_ring *r, void *dst, size_t room,
			u64 *nr_samples);

/*
 * The producer's side, inline: the tick reserves, commits and checks its
 * ring every time, three calls it need not pay.
 */

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
static inline void *cprof_ring_reserve(struct cprof_ring *r, u32 max)
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
static inline void cprof_ring_commit(struct cprof_ring *r, u32 type, u32 flags, u32 size)
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
static inline bool cprof_ring_fits_next(const struct cprof_ring *r, u32 size, u32 next)
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
static inline bool cprof_ring_half_full(const struct cprof_ring *r)
{
	return r->head - READ_ONCE(r->tail) > r->size / 2;
}

#endif /* CPROF_RING_H */
