/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A per-CPU byte ring of stream records: one producer (the CPU that owns it,
 * in hard-IRQ context or with interrupts off), one consumer (the reader).
 * Records never wrap: a record that does not fit before the end is preceded
 * by a pad that the consumer skips.
 */
#ifndef CPROF_RING_H
#define CPROF_RING_H

#include <linux/types.h>

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
void *cprof_ring_reserve(struct cprof_ring *r, u32 max);
void cprof_ring_commit(struct cprof_ring *r, u32 type, u32 flags, u32 size);
bool cprof_ring_fits_next(const struct cprof_ring *r, u32 size, u32 next);
bool cprof_ring_half_full(const struct cprof_ring *r);
bool cprof_ring_empty(const struct cprof_ring *r);
size_t cprof_ring_drain(struct cprof_ring *r, void *dst, size_t room,
			u64 *nr_samples);

#endif /* CPROF_RING_H */
