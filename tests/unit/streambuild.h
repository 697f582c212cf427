/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * streambuild.h - build cprof streams in memory, for tests and the
 * benchmark generator.  Every function aborts on allocation failure (test
 * code); records get the layout of cprof_format.h.
 *
 *	struct sb b;
 *	sb_init(&b);
 *	sb_header(&b, NULL);			// defaults: 99 Hz, 4 CPUs
 *	sb_mmap(&b, 0, 42, 0x400000, 0x401000, 0, "/bin/x", NULL, 0);
 *	sb_sample(&b, 10, 42, 42, 0, "x", CPROF_SAMPLE_USER_MODE,
 *		  0, NULL, 2, (uint64_t[]){ 0x400100, 0x400200 });
 *	sb_end(&b, 1000000000, 1, 0);
 *	... b.buf, b.len; b.offs[i] is where record i starts ...
 *	sb_free(&b);
 */
#ifndef CPROF_STREAMBUILD_H
#define CPROF_STREAMBUILD_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cprof_format.h"

#define SB_PERIOD_NS	10101010ull	/* 1e9 / 99 */

struct sb {
	unsigned char *buf;
	size_t len, cap;
	size_t *offs;		/* start of each record, header excluded */
	size_t nr_recs, cap_recs;
	uint64_t nr_samples;
};

static inline void sb_init(struct sb *b)
{
	memset(b, 0, sizeof(*b));
}

static inline void sb_free(struct sb *b)
{
	free(b->buf);
	free(b->offs);
	memset(b, 0, sizeof(*b));
}

/* Append n zeroed bytes; returns where they start. */
static inline void *sb_grow(struct sb *b, size_t n)
{
	void *p;

	if (b->len + n > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;

		while (cap < b->len + n)
			cap *= 2;
		b->buf = realloc(b->buf, cap);
		if (!b->buf)
			abort();
		b->cap = cap;
	}
	p = b->buf + b->len;
	memset(p, 0, n);
	b->len += n;
	return p;
}

static inline struct cprof_header sb_default_header(void)
{
	struct cprof_header h;

	memset(&h, 0, sizeof(h));
	memcpy(h.magic, CPROF_MAGIC, CPROF_MAGIC_LEN);
	h.version = CPROF_VERSION;
	h.size = sizeof(h);
	h.nr_cpu_ids = 4;
	h.online_cpus = 4;
	h.freq = 99;
	h.depth = CPROF_MAX_DEPTH;
	h.period_ns = SB_PERIOD_NS;
	h.start_realtime_ns = 1700000000ull * 1000000000ull;
	h.start_time_ns = 5000000000ull;
	h.duration_ns = 1000000000ull;
	h.mode = CPROF_MODE_BOTH;
	snprintf(h.release, sizeof(h.release), "6.1.0-test");
	return h;
}

/* The defaults, stamped now: this boot's (or, if not, a day earlier's). */
static inline struct cprof_header sb_header_of_boot(bool this_boot)
{
	struct cprof_header h = sb_default_header();
	struct timespec rt, mono;

	clock_gettime(CLOCK_REALTIME, &rt);
	clock_gettime(CLOCK_MONOTONIC, &mono);
	h.start_time_ns = (uint64_t)mono.tv_sec * 1000000000ull + mono.tv_nsec;
	h.start_realtime_ns = (uint64_t)rt.tv_sec * 1000000000ull + rt.tv_nsec;
	if (!this_boot)
		h.start_realtime_ns -= 86400ull * 1000000000ull;
	return h;
}

/* Header h, or the defaults if NULL. */
static inline void sb_header(struct sb *b, const struct cprof_header *h)
{
	struct cprof_header d = sb_default_header();

	memcpy(sb_grow(b, sizeof(d)), h ? h : &d, sizeof(d));
}

/* A record of size bytes (a multiple of 8), type and flags set. */
static inline void *sb_rec(struct sb *b, unsigned int type, unsigned int flags,
			   size_t size)
{
	struct cprof_rec *r;

	if (b->nr_recs == b->cap_recs) {
		b->cap_recs = b->cap_recs ? 2 * b->cap_recs : 64;
		b->offs = realloc(b->offs, b->cap_recs * sizeof(*b->offs));
		if (!b->offs)
			abort();
	}
	b->offs[b->nr_recs++] = b->len;
	r = sb_grow(b, size);
	r->type = type;
	r->flags = flags;
	r->size = size;
	return r;
}

/* A sample's fields and frames (its record's header is sb_rec()'s). */
static inline void sb_sample_fill(struct cprof_sample *s, uint64_t time_ns,
				  uint32_t pid, uint32_t tid, uint32_t cpu,
				  const char *comm, unsigned int nr_kernel,
				  const uint64_t *kips, unsigned int nr_user,
				  const uint64_t *uips)
{
	s->time_ns = time_ns;
	s->pid = pid;
	s->tid = tid;
	s->cpu = cpu;
	s->nr_kernel = nr_kernel;
	s->nr_user = nr_user;
	snprintf(s->comm, sizeof(s->comm), "%s", comm);
	if (nr_kernel)
		memcpy(s->ips, kips, 8 * nr_kernel);
	if (nr_user)
		memcpy(s->ips + nr_kernel, uips, 8 * nr_user);
}

static inline void sb_sample(struct sb *b, uint64_t time_ns, uint32_t pid,
			     uint32_t tid, uint32_t cpu, const char *comm,
			     unsigned int flags, unsigned int nr_kernel,
			     const uint64_t *kips, unsigned int nr_user,
			     const uint64_t *uips)
{
	size_t size = sizeof(struct cprof_sample) + 8 * (nr_kernel + nr_user);
	struct cprof_sample *s = sb_rec(b, CPROF_REC_SAMPLE, flags, size);

	sb_sample_fill(s, time_ns, pid, tid, cpu, comm, nr_kernel, kips,
		       nr_user, uips);
	b->nr_samples++;
}

/*
 * A sample with a Python trailer (version 3): cgroup (non-zero) is its
 * cgroup id (CPROF_SAMPLE_CGROUP), then nr_py frames of py, innermost
 * first, the interpreter's mapping at text, status as the walk ended.
 */
static inline void sb_sample_py(struct sb *b, uint64_t time_ns, uint32_t pid,
				uint32_t tid, uint32_t cpu, const char *comm,
				unsigned int flags, unsigned int nr_kernel,
				const uint64_t *kips, unsigned int nr_user,
				const uint64_t *uips, uint64_t cgroup,
				uint64_t text, unsigned int status,
				unsigned int nr_py,
				const struct cprof_pyframe *py)
{
	size_t frames = 8 * (nr_kernel + nr_user + !!cgroup);
	size_t size = sizeof(struct cprof_sample) + frames +
		      sizeof(struct cprof_pytrail) +
		      nr_py * sizeof(struct cprof_pyframe);
	struct cprof_sample *s = sb_rec(b, CPROF_REC_SAMPLE,
					flags | (cgroup ? CPROF_SAMPLE_CGROUP : 0),
					size);
	struct cprof_pytrail *t;

	sb_sample_fill(s, time_ns, pid, tid, cpu, comm, nr_kernel, kips,
		       nr_user, uips);
	if (cgroup)
		s->ips[nr_kernel + nr_user] = cgroup;
	t = (struct cprof_pytrail *)((char *)s + sizeof(*s) + frames);
	t->type = CPROF_TRAIL_PYTHON;
	t->nr = nr_py;
	t->status = status;
	t->text = text;
	if (nr_py)
		memcpy(t->frame, py, nr_py * sizeof(*py));
	b->nr_samples++;
}

/*
 * A sample of kind mutex: the waker's stacks and cgroup id 1, then the
 * thread it woke (wpid, wtid, wcomm) and its wait, delay_ns.
 */
static inline void sb_sample_wake(struct sb *b, uint64_t time_ns,
				  uint32_t pid, uint32_t tid, const char *comm,
				  unsigned int nr_kernel, const uint64_t *kips,
				  unsigned int nr_user, const uint64_t *uips,
				  uint32_t wpid, uint32_t wtid,
				  const char *wcomm, uint64_t delay_ns)
{
	size_t frames = 8 * (nr_kernel + nr_user + 1);
	size_t size = sizeof(struct cprof_sample) + frames +
		      sizeof(struct cprof_waketrail);
	struct cprof_sample *s = sb_rec(b, CPROF_REC_SAMPLE,
					CPROF_SAMPLE_CGROUP, size);
	struct cprof_waketrail *t;

	sb_sample_fill(s, time_ns, pid, tid, 0, comm, nr_kernel, kips,
		       nr_user, uips);
	s->ips[nr_kernel + nr_user] = 1;
	t = (struct cprof_waketrail *)((char *)s + sizeof(*s) + frames);
	t->type = CPROF_TRAIL_WAKE;
	t->pid = wpid;
	t->tid = wtid;
	t->delay_ns = delay_ns;
	snprintf(t->comm, sizeof(t->comm), "%s", wcomm);
	b->nr_samples++;
}

/*
 * A sample of kind heap: the allocating thread's user stack and cgroup id
 * 1, then the allocation's size and id.
 */
static inline void sb_sample_heap(struct sb *b, uint64_t time_ns,
				  uint32_t pid, uint32_t tid, const char *comm,
				  unsigned int nr_user, const uint64_t *uips,
				  uint64_t size, uint64_t id)
{
	size_t frames = 8 * (nr_user + 1);
	size_t rsize = sizeof(struct cprof_sample) + frames +
		       sizeof(struct cprof_heaptrail);
	struct cprof_sample *s = sb_rec(b, CPROF_REC_SAMPLE,
					CPROF_SAMPLE_CGROUP, rsize);
	struct cprof_heaptrail *t;

	sb_sample_fill(s, time_ns, pid, tid, 0, comm, 0, NULL, nr_user, uips);
	s->ips[nr_user] = 1;
	t = (struct cprof_heaptrail *)((char *)s + sizeof(*s) + frames);
	t->type = CPROF_TRAIL_HEAP;
	t->size = size;
	t->id = id;
	b->nr_samples++;
}

/* An allocation of kind heap, sampled as id, freed. */
static inline void sb_heapfree(struct sb *b, uint64_t time_ns, uint64_t id)
{
	struct cprof_heapfree *f = sb_rec(b, CPROF_REC_HEAPFREE, 0,
					  sizeof(*f));

	f->time_ns = time_ns;
	f->id = id;
}

/*
 * A code object's record (CPROF_REC_PYCODE) of CPython version: its
 * qualname's, filename's and line table's object bytes, as the module
 * copies them.
 */
static inline void sb_pycode(struct sb *b, uint64_t time_ns, uint32_t pid,
			     uint64_t code, int32_t firstlineno,
			     uint32_t version, const void *q, size_t qlen,
			     const void *f, size_t flen, const void *l,
			     size_t llen)
{
	size_t size = CPROF_ALIGN(sizeof(struct cprof_pycode) + qlen + flen +
				  llen);
	struct cprof_pycode *c = sb_rec(b, CPROF_REC_PYCODE, 0, size);

	c->time_ns = time_ns;
	c->pid = pid;
	c->firstlineno = firstlineno;
	c->code = code;
	c->version = version;
	c->qualname_len = qlen;
	c->filename_len = flen;
	c->linetable_len = llen;
	memcpy(c->data, q, qlen);
	memcpy(c->data + qlen, f, flen);
	memcpy(c->data + qlen + flen, l, llen);
}

static inline void sb_mmap(struct sb *b, uint64_t time_ns, uint32_t pid,
			   uint64_t start, uint64_t end, uint64_t pgoff,
			   const char *path, const uint8_t *build_id,
			   size_t build_id_size)
{
	size_t size = CPROF_ALIGN(sizeof(struct cprof_mmap) + strlen(path) + 1);
	struct cprof_mmap *m = sb_rec(b, CPROF_REC_MMAP, 0, size);

	m->time_ns = time_ns;
	m->pid = pid;
	m->start = start;
	m->end = end;
	m->pgoff = pgoff;
	if (build_id_size)
		memcpy(m->build_id, build_id, build_id_size);
	m->build_id_size = build_id_size;
	memcpy(m->path, path, strlen(path) + 1);
}

/* sb_mmap() with the file's identity at the record's end */
static inline void sb_mmap_id(struct sb *b, uint64_t time_ns, uint32_t pid,
			      uint64_t start, uint64_t end, const char *path,
			      const struct cprof_file_id *file)
{
	size_t base = CPROF_ALIGN(sizeof(struct cprof_mmap) + strlen(path) + 1);
	struct cprof_file_id *id;
	struct cprof_mmap *m;

	m = sb_rec(b, CPROF_REC_MMAP, CPROF_MMAP_FILE_ID, base + sizeof(*id));
	m->time_ns = time_ns;
	m->pid = pid;
	m->start = start;
	m->end = end;
	memcpy(m->path, path, strlen(path) + 1);
	id = (struct cprof_file_id *)((char *)m + base);
	*id = *file;
}

/* A stack copy of the sample at (time_ns, tid, cpu), from its user frame. */
static inline void sb_ustack(struct sb *b, uint64_t time_ns, uint32_t tid,
			     uint32_t cpu, unsigned int frame,
			     unsigned int flags, const uint64_t regs[16],
			     const void *data, size_t size)
{
	struct cprof_ustack *u = sb_rec(b, CPROF_REC_USTACK, flags,
					sizeof(*u) + CPROF_ALIGN(size));

	u->time_ns = time_ns;
	u->tid = tid;
	u->cpu = cpu;
	u->frame = frame;
	u->size = size;
	memcpy(u->regs, regs, sizeof(u->regs));
	memcpy(u->data, data, size);
}

static inline void sb_lost(struct sb *b, uint64_t time_ns, uint32_t cpu,
			   uint64_t samples, uint64_t other)
{
	struct cprof_lost *l = sb_rec(b, CPROF_REC_LOST, 0, sizeof(*l));

	l->time_ns = time_ns;
	l->cpu = cpu;
	l->samples = samples;
	l->other = other;
}

static inline void sb_throttle(struct sb *b, uint64_t time_ns, uint32_t cpu,
			       uint64_t period_ns)
{
	struct cprof_throttle *t = sb_rec(b, CPROF_REC_THROTTLE, 0, sizeof(*t));

	t->time_ns = time_ns;
	t->cpu = cpu;
	t->period_ns = period_ns;
}

/* A task leaving the CPU (kind offcpu, wall). */
static inline void sb_offcpu(struct sb *b, uint64_t time_ns, uint32_t pid,
			     uint32_t tid, uint32_t cpu, const char *comm,
			     unsigned int state, uint32_t every,
			     unsigned int nr_kernel, const uint64_t *kips,
			     unsigned int nr_user, const uint64_t *uips)
{
	size_t size = sizeof(struct cprof_offcpu) + 8 * (nr_kernel + nr_user);
	struct cprof_offcpu *o = sb_rec(b, CPROF_REC_OFFCPU, 0, size);

	o->time_ns = time_ns;
	o->pid = pid;
	o->tid = tid;
	o->cpu = cpu;
	o->nr_kernel = nr_kernel;
	o->nr_user = nr_user;
	snprintf(o->comm, sizeof(o->comm), "%s", comm);
	o->state = state;
	o->every = every;
	if (nr_kernel)
		memcpy(o->ips, kips, 8 * nr_kernel);
	if (nr_user)
		memcpy(o->ips + nr_kernel, uips, 8 * nr_user);
}

/* A thread of a snapshot, off the CPU for off_ns (a sample, to END). */
static inline void sb_thread(struct sb *b, uint64_t time_ns, uint32_t pid,
			     uint32_t tid, const char *comm, unsigned int state,
			     uint64_t off_ns, unsigned int nr_kernel,
			     const uint64_t *kips, unsigned int nr_user,
			     const uint64_t *uips)
{
	size_t size = sizeof(struct cprof_thread) + 8 * (nr_kernel + nr_user);
	struct cprof_thread *t = sb_rec(b, CPROF_REC_THREAD, 0, size);

	t->time_ns = time_ns;
	t->pid = pid;
	t->tid = tid;
	t->nr_kernel = nr_kernel;
	t->nr_user = nr_user;
	snprintf(t->comm, sizeof(t->comm), "%s", comm);
	t->state = state;
	t->off_ns = off_ns;
	if (nr_kernel)
		memcpy(t->ips, kips, 8 * nr_kernel);
	if (nr_user)
		memcpy(t->ips + nr_kernel, uips, 8 * nr_user);
	b->nr_samples++;
}

/* Its return, on cpu at time_ns. */
static inline void sb_oncpu(struct sb *b, uint64_t time_ns, uint64_t out_ns,
			    uint32_t tid, uint32_t cpu)
{
	struct cprof_oncpu *r = sb_rec(b, CPROF_REC_ONCPU, 0, sizeof(*r));

	r->time_ns = time_ns;
	r->out_ns = out_ns;
	r->tid = tid;
	r->cpu = cpu;
}

/* A context switch (kind trace) on cpu: prev left, next runs. */
static inline struct cprof_switch *
sb_switch(struct sb *b, uint64_t time_ns, uint32_t cpu, uint32_t prev_pid,
	  uint32_t prev_tid, const char *prev_comm, unsigned int prev_state,
	  uint32_t next_pid, uint32_t next_tid, const char *next_comm)
{
	struct cprof_switch *r = sb_rec(b, CPROF_REC_SWITCH, 0, sizeof(*r));

	r->time_ns = time_ns;
	r->cpu = cpu;
	r->prev_pid = prev_pid;
	r->prev_tid = prev_tid;
	r->prev_state = prev_state;
	r->next_pid = next_pid;
	r->next_tid = next_tid;
	memcpy(r->prev_comm, prev_comm, strnlen(prev_comm, CPROF_COMM_LEN));
	memcpy(r->next_comm, next_comm, strnlen(next_comm, CPROF_COMM_LEN));
	return r;
}

/* A wake-up (kind trace) on cpu: the waker made the wakee runnable. */
static inline void sb_wake(struct sb *b, uint64_t time_ns, uint32_t cpu,
			   unsigned int flags, uint32_t waker_pid,
			   uint32_t waker_tid, const char *waker_comm,
			   uint32_t wakee_pid, uint32_t wakee_tid,
			   const char *wakee_comm, uint32_t target_cpu)
{
	struct cprof_wake *r = sb_rec(b, CPROF_REC_WAKE, flags, sizeof(*r));

	r->time_ns = time_ns;
	r->cpu = cpu;
	r->target_cpu = target_cpu;
	r->waker_pid = waker_pid;
	r->waker_tid = waker_tid;
	r->wakee_pid = wakee_pid;
	r->wakee_tid = wakee_tid;
	memcpy(r->waker_comm, waker_comm, strnlen(waker_comm, CPROF_COMM_LEN));
	memcpy(r->wakee_comm, wakee_comm, strnlen(wakee_comm, CPROF_COMM_LEN));
}

/* END with the samples added so far. */
static inline void sb_end(struct sb *b, uint64_t duration_ns,
			  unsigned int reason, uint64_t lost)
{
	struct cprof_end *e = sb_rec(b, CPROF_REC_END, 0, sizeof(*e));

	e->duration_ns = duration_ns;
	e->reason = reason;
	e->samples = b->nr_samples;
	e->lost = lost;
}

/* Write the stream to path; 0 ok. */
static inline int sb_write(const struct sb *b, const char *path, size_t len)
{
	FILE *f = fopen(path, "w");
	int err;

	if (!f)
		return -1;
	err = fwrite(b->buf, 1, len, f) != len;
	return fclose(f) || err ? -1 : 0;
}

#endif /* CPROF_STREAMBUILD_H */
