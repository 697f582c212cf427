// SPDX-License-Identifier: GPL-2.0
/*
 * The record ring (ring.c, built here as it is in cprof.ko), one side at
 * a time: records come out whole, in order, as committed; a record that
 * does not fit before the end starts the ring again after a pad the drain
 * skips; a full ring refuses the next record (the tick counts it lost)
 * and keeps those it holds; the drain leaves what does not fit its room.
 */
#include "../ring.c"

#include <linux/numa.h>
#include <linux/slab.h>

#include "ktap.h"

#define RT_SIZE		4096
#define RT_DRAIN	(2 * RT_SIZE)

/* A record: its header, then its number in the sequence written. */
struct rt_rec {
	struct cprof_rec rec;
	u64 seq;
};

static struct cprof_ring rt_ring;
static void *rt_out;

/* Reserve @max bytes, write record @seq and commit @size of them. */
static bool rt_put(u32 max, u32 size, u32 type, u64 seq)
{
	struct rt_rec *r = cprof_ring_reserve(&rt_ring, max);

	if (!r)
		return false;
	r->seq = seq;
	cprof_ring_commit(&rt_ring, type, (u32)seq & 0xffff, size);
	return true;
}

/*
 * Drain into @room bytes and check what came out: records numbered
 * @*seq on, each of @size bytes (0: any size) and flags its number's low
 * bits; @*seq is the next number expected.  Return: the records.
 */
static int rt_take(struct ktap *k, size_t room, u32 size, u64 *seq,
		   u64 *samples)
{
	size_t n = cprof_ring_drain(&rt_ring, rt_out, room, samples), off;
	int recs = 0;

	for (off = 0; off < n; off += ((struct rt_rec *)(rt_out + off))->rec.size) {
		struct rt_rec *r = rt_out + off;

		if (!ktap_check(k, r->rec.type != CPROF_REC_PAD &&
				r->rec.size >= sizeof(*r) && !(r->rec.size & 7) &&
				(!size || r->rec.size == size) &&
				r->seq == *seq && r->rec.flags == (*seq & 0xffff),
				"record %llu: type %u size %u flags %#x seq %llu",
				*seq, r->rec.type, r->rec.size, r->rec.flags,
				r->seq))
			break;
		(*seq)++;
		recs++;
	}
	return recs;
}

static bool rt_fresh(void)
{
	cprof_ring_free(&rt_ring);
	return !cprof_ring_init(&rt_ring, RT_SIZE, NUMA_NO_NODE);
}

static bool rt_cases(struct ktap *k)
{
	u64 seq, want, samples = 0;
	int n, i;

	ktap_check(k, cprof_ring_empty(&rt_ring), "a new ring is not empty");
	n = cprof_ring_drain(&rt_ring, rt_out, RT_DRAIN, &samples);
	ktap_check(k, !n && !samples, "drained %d bytes", n);
	ktap_check(k, !cprof_ring_half_full(&rt_ring), "half full");
	ktap_end(k, "a new ring is empty");

	seq = 0;
	rt_put(32, 24, CPROF_REC_SAMPLE, 0);
	ktap_check(k, !cprof_ring_empty(&rt_ring), "empty after a commit");
	n = rt_take(k, RT_DRAIN, 24, &seq, &samples);
	ktap_check(k, n == 1 && samples == 1, "%d records, %llu samples", n,
		   samples);
	ktap_check(k, cprof_ring_empty(&rt_ring), "not empty once drained");
	ktap_end(k, "a record comes out as committed, its size the one used");

	samples = 0;
	rt_put(16, 16, CPROF_REC_SAMPLE, seq);
	rt_put(16, 16, CPROF_REC_MMAP, seq + 1);
	rt_put(16, 16, CPROF_REC_SAMPLE, seq + 2);
	n = rt_take(k, RT_DRAIN, 16, &seq, &samples);
	ktap_check(k, n == 3 && samples == 2, "%d records, %llu samples", n,
		   samples);
	ktap_end(k, "records come out in order, samples counted");

	/* full: RT_SIZE / 64 records, then none, the ones held intact */
	if (!rt_fresh())
		return false;
	for (i = 0; rt_put(64, 64, CPROF_REC_SAMPLE, i); i++)
		;
	ktap_check(k, i == RT_SIZE / 64, "%d records fit, want %d", i,
		   RT_SIZE / 64);
	ktap_check(k, cprof_ring_half_full(&rt_ring), "not half full");
	ktap_check(k, !cprof_ring_reserve(&rt_ring, 8),
		   "8 more bytes fit a full ring");
	seq = 0;
	n = rt_take(k, RT_DRAIN, 64, &seq, &samples);
	ktap_check(k, n == RT_SIZE / 64, "%d records drained", n);
	ktap_check(k, rt_put(64, 64, CPROF_REC_SAMPLE, seq),
		   "no room once drained");
	ktap_end(k, "a full ring refuses a record and keeps those it holds");

	/* 256 bytes at 3968: a pad of 128, the record at 0 */
	if (!rt_fresh())
		return false;
	for (i = 0; i < 62; i++)
		rt_put(64, 64, CPROF_REC_SAMPLE, i);
	seq = 0;
	rt_take(k, RT_DRAIN, 64, &seq, &samples);
	ktap_check(k, rt_ring.tail == 62 * 64, "tail %llu", rt_ring.tail);
	ktap_check(k, rt_put(256, 256, CPROF_REC_SAMPLE, seq),
		   "no room after the end for 256 bytes");
	ktap_check(k, rt_ring.head == RT_SIZE + 256, "head %llu, want %u",
		   rt_ring.head, RT_SIZE + 256);
	n = rt_take(k, RT_DRAIN, 256, &seq, &samples);
	ktap_check(k, n == 1 && rt_ring.tail == rt_ring.head,
		   "%d records, tail %llu", n, rt_ring.tail);
	ktap_end(k, "a record past the end starts the ring again, the pad skipped");

	/* at 4032 with 256 bytes free: a pad of 64 and 192 bytes, no more */
	if (!rt_fresh())
		return false;
	for (i = 0; i < 63; i++)
		rt_put(64, 64, CPROF_REC_SAMPLE, i);
	seq = 0;
	rt_take(k, 3 * 64, 64, &seq, &samples);
	ktap_check(k, !cprof_ring_reserve(&rt_ring, 4 * 64),
		   "a pad of 64 and 256 bytes fit in 256");
	ktap_check(k, rt_put(3 * 64, 3 * 64, CPROF_REC_SAMPLE, 63),
		   "a pad of 64 and 192 bytes did not fit in 256");
	n = rt_take(k, RT_DRAIN, 0, &seq, &samples);
	ktap_check(k, n == 61 && seq == 64, "%d records, up to %llu", n, seq);
	ktap_end(k, "a record that needs a pad needs room for both");

	/*
	 * Many times round, records of 8 to 256 bytes: every offset of a
	 * pad, the drain taking a few at a time.
	 */
	if (!rt_fresh())
		return false;
	seq = 0;
	want = 0;
	for (i = 0; i < 2000; i++) {
		u32 size = 8 * (2 + (i * 7) % 31);

		while (!rt_put(size, size, CPROF_REC_SAMPLE, want))
			if (!rt_take(k, 300, 0, &seq, &samples))
				break;
		want++;
	}
	rt_take(k, RT_DRAIN, 0, &seq, &samples);
	ktap_check(k, seq == want && cprof_ring_empty(&rt_ring),
		   "%llu records out of %llu", seq, want);
	ktap_check(k, rt_ring.head > 50 * RT_SIZE, "only %llu bytes",
		   rt_ring.head);
	ktap_end(k, "records of every size round the ring come out whole");

	/* the drain keeps the record that does not fit its room */
	if (!rt_fresh())
		return false;
	for (i = 0; i < 3; i++)
		rt_put(64, 64, CPROF_REC_SAMPLE, i);
	seq = 0;
	n = rt_take(k, 100, 64, &seq, &samples);
	ktap_check(k, n == 1, "%d records in 100 bytes", n);
	n = rt_take(k, RT_DRAIN, 64, &seq, &samples);
	ktap_check(k, n == 2 && seq == 3, "then %d records, up to %llu", n,
		   seq);
	ktap_end(k, "a record larger than the room left stays for the next drain");

	/* with 64 reserved, half the ring (2048) is for it and the next */
	if (!rt_fresh())
		return false;
	cprof_ring_reserve(&rt_ring, 64);
	ktap_check(k, cprof_ring_fits_next(&rt_ring, 64, 2048 - 64),
		   "64 + 1984 does not fit half the ring");
	ktap_check(k, !cprof_ring_fits_next(&rt_ring, 64, 2048 - 56),
		   "64 + 1992 fits half the ring");
	cprof_ring_commit(&rt_ring, CPROF_REC_SAMPLE, 0, 64);
	ktap_end(k, "a record and the next are given half the ring at most");
	return true;
}

static bool rt_run(struct ktap *k)
{
	bool ok;

	rt_out = kzalloc(RT_DRAIN, GFP_KERNEL);
	if (!rt_out || cprof_ring_init(&rt_ring, RT_SIZE, NUMA_NO_NODE)) {
		kfree(rt_out);
		return false;
	}
	ok = rt_cases(k);
	cprof_ring_free(&rt_ring);
	kfree(rt_out);
	return ok;
}

const struct ktap_suite ktap_ring_suite = { "cprof_ring", rt_run };
