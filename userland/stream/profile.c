// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * profile - aggregation of a decoded cprof stream.  See profile.h.
 *
 * Hash tables (libiberty's hashtab): stacks, keyed by their frames,
 * whether the user part starts at the interrupted instruction and their
 * Python frames (kept after the frames in one allocation); samples,
 * keyed by (stack, pid, tid, cpu, cgroup, comm, off_state) -- both own
 * their entries through a vector that also keeps first-seen order; MMAP
 * records by pid (each pid's in stream order and indexed by start, the
 * unused ones past the cap swept: profile__sweep_mmaps()); and the OFFCPU
 * and ONCPU records waiting for each other, by (tid, time it left).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <hashtab.h>

#include "stream/profile.h"
#include "stream/stream.h"
#include "stream/timeline.h"
#include "lib/hash.h"
#include "lib/util.h"

struct stack_ent {
	hashval_t hash;
	uint32_t id;
	uint16_t nr_kernel;
	uint16_t nr_user;
	int user_mode;
	uint16_t nr_py;
	bool py_whole;
	bool truncated;
	const uint64_t *ips;	/* points at ips_store, or at a record for lookups */
	const struct cprof_pyframe *py;	/* the same, after the ips */
	uint64_t ips_store[];
};

_Static_assert(sizeof(struct cprof_pyframe) == 2 * sizeof(uint64_t),
	       "a Python frame is two words of ips_store");

struct sample_ent {
	hashval_t hash;
	uint32_t index;		/* in samples[] */
	struct prof_sample s;
};

/* One CPU's period changes, sorted by time. */
struct cpu_state {
	struct period_change {
		uint64_t time_ns;
		uint64_t period_ns;
	} *changes;
	size_t nr_changes, alloc_changes;
	uint64_t lost;
	uint64_t lost_nanos;
};

/* A task's leaving the CPU or its return, waiting for the other. */
struct off_wait {
	uint32_t tid;
	uint64_t out_ns;
	uint64_t in_ns;			/* with rec NULL: its return */
	struct cprof_offcpu *rec;	/* its leaving, a copy */
};

/* A MMAP record kept, and when it came. */
struct map_ent {
	uint64_t seq;		/* its place in the stream, over all pids */
	bool used;		/* a sample's frame is in it (the last sweep) */
	bool drop;		/* this sweep drops it */
	struct cprof_mmap m;	/* the record: m.rec.size bytes */
};

struct pid_maps {
	uint32_t pid;
	size_t nr, alloc;
	struct map_ent **maps;		/* in stream order */
	uint64_t max_time;		/* the latest time_ns of maps */
	bool anon;			/* one of maps was CPROF_ANON_NAME */
	/*
	 * For lookups: maps[0, nr_index) sorted by start, and over them a
	 * tree of the largest end (reach[1] the root, reach[leaves + i] the
	 * end of index[i]); made again once lookups have scanned as many
	 * records past it as it holds.
	 */
	struct map_ent **index;
	uint64_t *reach;
	size_t nr_index, alloc_index, leaves, scanned;
	size_t unused_bytes;		/* a sweep's */
};

struct profile {
	struct cprof_header hdr;
	struct cprof_end end;
	bool have_end;
	uint64_t nr_records;
	uint64_t nr_user;		/* samples with user frames */
	uint64_t nr_user_table;		/* ... walked with unwind tables */
	uint64_t lost_other;

	htab_t stack_tab;
	struct stack_ent **stacks;
	size_t nr_stacks, alloc_stacks;

	htab_t sample_tab;
	struct sample_ent **samples;
	size_t nr_samples, alloc_samples;

	htab_t pid_tab;
	htab_t off_tab;			/* struct off_wait */
	uint64_t off_open, off_orphans;
	size_t off_bytes;		/* kept in off_tab */
	uint64_t off_dropped;		/* not kept: past PROFILE_OFF_KEEP_MAX */
	uint64_t off_waits, off_weighted;
	uint32_t off_every_max;
	bool off_error;
	const struct profile *maps;	/* mappings and periods: p or another */
	uint64_t map_seq;		/* MMAP records kept so far */
	size_t map_cap;			/* profile__cap_mmaps(), 0: none */
	size_t map_unused;		/* bytes of records no sample uses */
	uint64_t map_dropped;
	struct cpu_state *cpus;		/* the CPUs seen so far, [0, nr_cpus) */
	size_t nr_cpus;
	struct timeline *timeline;	/* kind trace's; else NULL */
	uint32_t last_index;		/* the key profile__count() counted */
	htab_t heap_tab;		/* kind heap: struct heap_live by id */
};

_Static_assert(CPROF_COMM_LEN % 8 == 0, "comm is whole words");

static hashval_t stack_hash(const void *e)
{
	return ((const struct stack_ent *)e)->hash;
}

static int stack_eq(const void *a, const void *b)
{
	const struct stack_ent *x = a, *y = b;

	return x->hash == y->hash && x->nr_kernel == y->nr_kernel &&
	       x->nr_user == y->nr_user && x->user_mode == y->user_mode &&
	       x->nr_py == y->nr_py && x->py_whole == y->py_whole &&
	       x->truncated == y->truncated &&
	       !memcmp(x->ips, y->ips,
		       sizeof(x->ips[0]) * (x->nr_kernel + x->nr_user)) &&
	       (!x->nr_py ||
		!memcmp(x->py, y->py, sizeof(x->py[0]) * x->nr_py));
}

static hashval_t sample_hash(const void *e)
{
	return ((const struct sample_ent *)e)->hash;
}

static int sample_eq(const void *a, const void *b)
{
	const struct prof_sample *x = &((const struct sample_ent *)a)->s;
	const struct prof_sample *y = &((const struct sample_ent *)b)->s;

	return x->stack == y->stack && x->pid == y->pid && x->tid == y->tid &&
	       x->cpu == y->cpu && x->cgroup == y->cgroup &&
	       x->off_state == y->off_state &&
	       !memcmp(x->comm, y->comm, sizeof(x->comm)) &&
	       x->waiter_pid == y->waiter_pid &&
	       x->waiter_tid == y->waiter_tid &&
	       !memcmp(x->waiter_comm, y->waiter_comm, sizeof(x->waiter_comm));
}

static hashval_t off_hash(const void *e)
{
	const struct off_wait *w = e;

	return iterative_hash(&w->out_ns, sizeof(w->out_ns), w->tid);
}

static int off_eq(const void *a, const void *b)
{
	const struct off_wait *x = a, *y = b;

	return x->tid == y->tid && x->out_ns == y->out_ns;
}

static void off_del(void *e)
{
	struct off_wait *w = e;

	free(w->rec);
	free(w);
}

static hashval_t pid_hash(const void *e)
{
	return ((const struct pid_maps *)e)->pid * 2654435761u;
}

static int pid_eq(const void *a, const void *b)
{
	return ((const struct pid_maps *)a)->pid ==
	       ((const struct pid_maps *)b)->pid;
}

static void pid_del(void *e)
{
	struct pid_maps *pm = e;
	size_t i;

	for (i = 0; i < pm->nr; i++)
		free(pm->maps[i]);
	free(pm->maps);
	free(pm->index);
	free(pm->reach);
	free(pm);
}

/*
 * Kind heap: an allocation sampled and not seen freed (its key's entry
 * and size), or one seen freed before its sample came (ent NULL).
 */
struct heap_live {
	uint64_t id;
	struct sample_ent *ent;
	uint64_t size;
};

static hashval_t heap_hash(const void *e)
{
	const struct heap_live *h = e;

	return iterative_hash(&h->id, sizeof(h->id), 0);
}

static int heap_eq(const void *a, const void *b)
{
	return ((const struct heap_live *)a)->id ==
	       ((const struct heap_live *)b)->id;
}

struct profile *profile__new(const struct cprof_header *hdr)
{
	struct profile *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->hdr = *hdr;
	p->maps = p;
	p->stack_tab = htab_create_alloc(1024, stack_hash, stack_eq, NULL,
					 calloc, free);
	p->sample_tab = htab_create_alloc(1024, sample_hash, sample_eq, NULL,
					  calloc, free);
	p->pid_tab = htab_create_alloc(64, pid_hash, pid_eq, pid_del,
				       calloc, free);
	p->off_tab = htab_create_alloc(64, off_hash, off_eq, off_del,
				       calloc, free);
	p->heap_tab = htab_create_alloc(64, heap_hash, heap_eq, free,
					calloc, free);
	if (hdr->kind == CPROF_KIND_TRACE)
		p->timeline = timeline__new();
	if (!p->stack_tab || !p->sample_tab || !p->pid_tab || !p->off_tab ||
	    !p->heap_tab || (hdr->kind == CPROF_KIND_TRACE && !p->timeline)) {
		profile__free(p);
		return NULL;
	}
	return p;
}

void profile__free(struct profile *p)
{
	size_t i;

	if (!p)
		return;
	if (p->stack_tab)
		htab_delete(p->stack_tab);
	if (p->sample_tab)
		htab_delete(p->sample_tab);
	if (p->pid_tab)
		htab_delete(p->pid_tab);
	if (p->off_tab)
		htab_delete(p->off_tab);
	if (p->heap_tab)
		htab_delete(p->heap_tab);
	for (i = 0; i < p->nr_stacks; i++)
		free(p->stacks[i]);
	free(p->stacks);
	for (i = 0; i < p->nr_samples; i++)
		free(p->samples[i]);
	free(p->samples);
	for (i = 0; i < p->nr_cpus; i++)
		free(p->cpus[i].changes);
	free(p->cpus);
	timeline__free(p->timeline);
	free(p);
}

/*
 * The state of @cpu (below hdr.nr_cpu_ids: the decoder checked), made when
 * first needed: a header may speak of 65536 CPUs where two were profiled.
 * NULL on ENOMEM.
 */
static struct cpu_state *profile__cpu(struct profile *p, unsigned int cpu)
{
	size_t cap = p->nr_cpus;

	if (cpu >= p->nr_cpus) {
		if (grow_array(&p->cpus, &cap, (size_t)cpu + 1, sizeof(*p->cpus)))
			return NULL;
		memset(p->cpus + p->nr_cpus, 0,
		       (cap - p->nr_cpus) * sizeof(*p->cpus));
		p->nr_cpus = cap;
	}
	return &p->cpus[cpu];
}

/* The period of cpu at time_ns. */
static uint64_t profile__period(const struct profile *w, unsigned int cpu,
				uint64_t time_ns)
{
	const struct profile *p = w->maps;
	const struct cpu_state *c = cpu < p->nr_cpus ? &p->cpus[cpu] : NULL;
	size_t lo = 0, hi = c ? c->nr_changes : 0;

	/* last change with time <= time_ns */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (c->changes[mid].time_ns <= time_ns)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? c->changes[lo - 1].period_ns : p->hdr.period_ns;
}

/*
 * What a SAMPLE, an OFFCPU and a THREAD record have in common: their
 * stacks (ips, flags CPROF_SAMPLE_*) and who.
 */
struct sample_of {
	uint16_t flags;
	uint16_t nr_kernel, nr_user;
	uint32_t pid, tid, cpu;
	const char *comm;		/* CPROF_COMM_LEN bytes */
	const uint64_t *ips;
	uint64_t time_ns;
	const struct cprof_pytrail *py;	/* a sample's Python frames, or NULL */
	const struct cprof_waketrail *wake;	/* the thread it woke, or NULL */
};

/* Intern the stack of smp; its index in *id.  0 ok, -1 ENOMEM. */
static int profile__intern_stack(struct profile *p,
				 const struct sample_of *smp, uint32_t *id)
{
	size_t nr = smp->nr_kernel + smp->nr_user;
	struct stack_ent key = {
		.nr_kernel = smp->nr_kernel,
		.nr_user = smp->nr_user,
		.user_mode = !!(smp->flags & (CPROF_SAMPLE_USER_MODE |
					     CPROF_SAMPLE_USER_EXACT)),
		.ips = smp->ips,
	};
	struct stack_ent *e;
	size_t words;
	void **slot;

	/* the mode only matters for the user part's first frame */
	if (!key.nr_user)
		key.user_mode = 0;
	key.truncated = (smp->flags & (CPROF_SAMPLE_USER_TRUNC |
				       CPROF_SAMPLE_KERN_TRUNC)) ||
			(smp->py && smp->py->status == CPROF_PY_DEPTH);
	if (smp->py && smp->py->nr) {
		key.nr_py = smp->py->nr;
		key.py = smp->py->frame;
		key.py_whole = smp->py->status == CPROF_PY_COMPLETE &&
			       !(smp->flags & (CPROF_SAMPLE_USER_TRUNC |
					       CPROF_SAMPLE_USER_FAULT));
	}
	key.hash = hash_words(smp->ips, nr, key.nr_kernel | key.nr_user << 8 |
			      (uint64_t)key.user_mode << 16 |
			      (uint64_t)key.py_whole << 17 |
			      (uint64_t)key.truncated << 18 |
			      (uint64_t)key.nr_py << 32);
	if (key.nr_py)
		key.hash ^= hash_words(key.py, key.nr_py * sizeof(key.py[0]) / 8,
				       key.hash);
	slot = htab_find_slot_with_hash(p->stack_tab, &key, key.hash, INSERT);
	if (!slot)
		return -1;
	if (!*slot) {
		if (p->nr_stacks >= UINT32_MAX ||
		    grow_array(&p->stacks, &p->alloc_stacks, p->nr_stacks + 1,
			 sizeof(*p->stacks)))
			return -1;
		words = nr + 2 * (size_t)key.nr_py;
		e = malloc(sizeof(*e) + words * sizeof(e->ips_store[0]));
		if (!e)
			return -1;
		*e = key;
		e->id = p->nr_stacks;
		memcpy(e->ips_store, smp->ips, nr * sizeof(e->ips_store[0]));
		e->ips = e->ips_store;
		if (key.nr_py)
			memcpy(e->ips_store + nr, key.py,
			       key.nr_py * sizeof(key.py[0]));
		e->py = key.nr_py ?
			(const struct cprof_pyframe *)(e->ips_store + nr) :
			NULL;
		p->stacks[p->nr_stacks++] = e;
		*slot = e;
	}
	*id = ((struct stack_ent *)*slot)->id;
	return 0;
}

/* Count @count times of @nanos in all under smp's key: its entry. */
static struct sample_ent *profile__count_ent(struct profile *p,
					     const struct sample_of *smp,
					     unsigned int off_state,
					     uint64_t count, uint64_t nanos)
{
	struct sample_ent key = { 0 }, *e;
	uint64_t words[4 + CPROF_COMM_LEN / 8];
	void **slot;
	size_t n;

	if (profile__intern_stack(p, smp, &key.s.stack))
		return NULL;
	key.s.pid = smp->pid;
	key.s.tid = smp->tid;
	key.s.cpu = smp->cpu;
	key.s.off_state = off_state;
	if (smp->flags & CPROF_SAMPLE_CGROUP)
		key.s.cgroup = smp->ips[smp->nr_kernel + smp->nr_user];
	/* comm is NUL-terminated by contract; do not trust it */
	memcpy(key.s.comm, smp->comm, sizeof(key.s.comm) - 1);
	if (smp->wake) {
		key.s.waiter_pid = smp->wake->pid;
		key.s.waiter_tid = smp->wake->tid;
		memcpy(key.s.waiter_comm, smp->wake->comm,
		       sizeof(key.s.waiter_comm) - 1);
	}
	/* what follows a comm's NUL is no part of the key: zeroed */
	n = strlen(key.s.comm);
	memset(key.s.comm + n, 0, sizeof(key.s.comm) - n);
	n = strlen(key.s.waiter_comm);
	memset(key.s.waiter_comm + n, 0, sizeof(key.s.waiter_comm) - n);
	words[0] = key.s.stack | (uint64_t)key.s.pid << 32;
	words[1] = key.s.tid | (uint64_t)key.s.cpu << 32;
	words[2] = key.s.cgroup;
	words[3] = key.s.waiter_tid | (uint64_t)off_state << 32;
	memcpy(words + 4, key.s.comm, sizeof(key.s.comm));
	key.hash = hash_words(words, 4 + sizeof(key.s.comm) / 8, 0);
	slot = htab_find_slot_with_hash(p->sample_tab, &key, key.hash, INSERT);
	if (!slot)
		return NULL;
	e = *slot;
	if (!e) {
		if (grow_array(&p->samples, &p->alloc_samples, p->nr_samples + 1,
			 sizeof(*p->samples)))
			return NULL;
		e = malloc(sizeof(*e));
		if (!e)
			return NULL;
		*e = key;
		e->index = p->nr_samples;
		e->s.first_ns = smp->time_ns;
		p->samples[p->nr_samples++] = e;
		*slot = e;
	}
	p->last_index = e->index;
	e->s.count += count;
	e->s.nanos += nanos;
	if (smp->time_ns < e->s.first_ns)
		e->s.first_ns = smp->time_ns;
	if (smp->nr_user) {
		p->nr_user++;
		if (smp->flags & CPROF_SAMPLE_USER_TABLE)
			p->nr_user_table++;
	}
	return e;
}

static int profile__count(struct profile *p, const struct sample_of *smp,
			  unsigned int off_state, uint64_t count,
			  uint64_t nanos)
{
	return profile__count_ent(p, smp, off_state, count, nanos) ? 0 : -1;
}

/*
 * Kind heap: allocation @id of @size under @e (NULL: a free of @id) meets
 * its other half, or waits for it.  0 ok, -1 ENOMEM.
 */
static int profile__heap_join(struct profile *p, uint64_t id,
			      struct sample_ent *e, uint64_t size)
{
	struct heap_live key = { .id = id }, *h;
	void **slot;

	slot = htab_find_slot(p->heap_tab, &key, INSERT);
	if (!slot)
		return -1;
	h = *slot;
	if (h) {
		/* a free and its allocation: whichever came first waited */
		struct sample_ent *live = e ? NULL : h->ent;

		if (live) {
			live->s.live_count--;
			live->s.live_bytes -= h->size;
		}
		htab_clear_slot(p->heap_tab, slot);
		return 0;
	}
	h = malloc(sizeof(*h));
	if (!h) {
		htab_clear_slot(p->heap_tab, slot);
		return -1;
	}
	*h = (struct heap_live){ .id = id, .ent = e, .size = size };
	*slot = h;
	if (e) {
		e->s.live_count++;
		e->s.live_bytes += size;
	}
	return 0;
}

static int profile__add_sample(struct profile *p,
			       const struct cprof_sample *smp)
{
	const struct sample_of of = {
		.flags = smp->rec.flags, .nr_kernel = smp->nr_kernel,
		.nr_user = smp->nr_user, .pid = smp->pid, .tid = smp->tid,
		.cpu = smp->cpu, .comm = smp->comm,
		.ips = (const uint64_t *)smp->ips, .time_ns = smp->time_ns,
		.py = stream__sample_pytrail(smp),
		.wake = stream__sample_waketrail(smp),
	};

	const struct cprof_heaptrail *heap = stream__sample_heaptrail(smp);
	uint64_t periods = 1;

	/* heap: one allocation sampled, its bytes, live until freed */
	if (heap) {
		struct sample_ent *e = profile__count_ent(p, &of, PROF_ON_CPU,
							  1, heap->size);

		if (!e || profile__heap_join(p, heap->id, e, heap->size))
			return -1;
		p->nr_records++;
		return 0;
	}

	/* mutex: one wait ended, how long it was */
	if (of.wake) {
		if (profile__count(p, &of, PROF_ON_CPU, 1, of.wake->delay_ns))
			return -1;
		p->nr_records++;
		return 0;
	}

	/* wall: the periods the CPU spent on what it ran, a late tick's too */
	if (p->hdr.kind == CPROF_KIND_WALL)
		periods += CPROF_SAMPLE_LATE(smp->rec.flags);
	if (profile__count(p, &of, PROF_ON_CPU, 1, periods *
			   profile__period(p, smp->cpu, smp->time_ns)))
		return -1;
	/* trace: the stacks of the task its CPU's last switch took off */
	if (p->timeline)
		timeline__stack(p->timeline, smp->cpu, smp->time_ns, smp->tid,
				p->last_index);
	/* the END record counts them */
	p->nr_records++;
	return 0;
}

/* A time off the CPU, from its leaving until in_ns. */
static int profile__add_off(struct profile *p, const struct cprof_offcpu *o,
			    uint64_t in_ns)
{
	const struct sample_of of = {
		.flags = o->rec.flags, .nr_kernel = o->nr_kernel,
		.nr_user = o->nr_user, .pid = o->pid, .tid = o->tid,
		.cpu = o->cpu, .comm = o->comm,
		.ips = (const uint64_t *)o->ips, .time_ns = o->time_ns,
	};
	uint64_t off = in_ns > o->time_ns ? in_ns - o->time_ns : 0;

	p->off_waits++;
	if (o->every > 1) {
		p->off_weighted++;
		if (o->every > p->off_every_max)
			p->off_every_max = o->every;
	}
	return profile__count(p, &of, 1 + o->state, o->every,
			      off * o->every);
}

/* A thread of a snapshot: once, its time off the CPU so far. */
static int profile__add_thread(struct profile *p, const struct cprof_thread *t)
{
	const struct sample_of of = {
		.flags = t->rec.flags, .nr_kernel = t->nr_kernel,
		.nr_user = t->nr_user, .pid = t->pid, .tid = t->tid,
		.cpu = t->cpu, .comm = t->comm,
		.ips = (const uint64_t *)t->ips, .time_ns = t->time_ns,
	};

	if (profile__count(p, &of, t->state == CPROF_OFF_RUNNING ?
			   PROF_ON_CPU : 1 + t->state, 1, t->off_ns))
		return -1;
	/* the END record counts them */
	p->nr_records++;
	return 0;
}

/* What keeping a leaving (o) or a return (o NULL) costs off_bytes. */
static size_t off_cost(const struct cprof_offcpu *o)
{
	return sizeof(struct off_wait) + (o ? o->rec.size : 0);
}

/*
 * An OFFCPU record (o) or an ONCPU one (in): counted if the other came
 * before, else kept for it.
 */
static int profile__off_join(struct profile *p, const struct cprof_offcpu *o,
			     const struct cprof_oncpu *in)
{
	struct off_wait key = {
		.tid = o ? o->tid : in->tid,
		.out_ns = o ? o->time_ns : in->out_ns,
	}, *w;
	void **slot;
	int err;

	slot = htab_find_slot(p->off_tab, &key, INSERT);
	if (!slot)
		return -1;
	w = *slot;
	if (w && (o ? !w->rec : !!w->rec)) {
		err = o ? profile__add_off(p, o, w->in_ns) :
			  profile__add_off(p, w->rec, in->time_ns);
		p->off_bytes -= off_cost(w->rec);
		htab_clear_slot(p->off_tab, slot);
		return err;
	}
	if (w)		/* the same twice: a hostile stream's */
		return 0;
	if (p->off_bytes + off_cost(o) > PROFILE_OFF_KEEP_MAX) {
		p->off_dropped++;	/* the slot stays empty */
		return 0;
	}
	p->off_bytes += off_cost(o);
	w = malloc(sizeof(*w));
	if (!w || (o && !(key.rec = malloc(o->rec.size)))) {
		free(w);	/* the slot stays empty */
		return -1;
	}
	if (o)
		memcpy(key.rec, o, o->rec.size);
	else
		key.in_ns = in->time_ns;
	*w = key;
	*slot = w;
	return 0;
}

/*
 * When the profile ended: its start plus END's duration (when it was asked
 * to stop, or its deadline), not END's time, which the module writes once
 * its reader has stopped the hooks and drained the rings (a loaded
 * machine's: a quarter of a second later).  END's time if the sum is past
 * it or wraps (a hostile stream's).
 */
static uint64_t profile__end_ns(const struct profile *p)
{
	uint64_t end = p->hdr.start_time_ns + p->end.duration_ns;

	return end >= p->hdr.start_time_ns && end <= p->end.time_ns ?
	       end : p->end.time_ns;
}

/* At the END record: the times off not ended yet end with the profile. */
static int off_close(void **slot, void *arg)
{
	struct profile *p = arg;
	struct off_wait *w = *slot;

	if (w->rec) {
		p->off_open++;
		if (profile__add_off(p, w->rec, profile__end_ns(p)))
			p->off_error = true;
	} else {
		p->off_orphans++;
	}
	return 1;
}

uint64_t profile__off_dropped(const struct profile *p)
{
	return p->off_dropped;
}

void profile__off_unmatched(const struct profile *p, uint64_t *open,
			    uint64_t *orphans)
{
	*open = p->off_open;
	*orphans = p->off_orphans;
}

uint32_t profile__off_sampled(const struct profile *p, uint64_t *waits,
			      uint64_t *weighted)
{
	*waits = p->off_waits;
	*weighted = p->off_weighted;
	return p->off_every_max > 1 ? p->off_every_max : 1;
}

/* What a kept record costs: its copy, its places in maps, index, reach. */
static size_t map_bytes(const struct map_ent *e)
{
	return offsetof(struct map_ent, m) + e->m.rec.size +
	       2 * sizeof(void *) + 4 * sizeof(uint64_t);
}

/*
 * mm says again what the pid's last record says, as of a time no earlier,
 * and no record of the pid is later than that one: every lookup finds the
 * same mapping with or without it.
 */
static bool map_repeats(const struct pid_maps *pm, const struct cprof_mmap *mm)
{
	const size_t from = offsetof(struct cprof_mmap, pid);
	const struct cprof_mmap *last;

	if (!pm->nr)
		return false;
	last = &pm->maps[pm->nr - 1]->m;
	return last->time_ns == pm->max_time && mm->time_ns >= last->time_ns &&
	       !memcmp(&last->rec, &mm->rec, sizeof(mm->rec)) &&
	       !memcmp((const char *)last + from, (const char *)mm + from,
		       mm->rec.size - from);
}

static int index_cmp(const void *a, const void *b)
{
	const struct map_ent *x = *(struct map_ent *const *)a;
	const struct map_ent *y = *(struct map_ent *const *)b;

	if (x->m.start != y->m.start)
		return x->m.start < y->m.start ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Index every record of pm; on ENOMEM the old index stays (still right). */
static void index_build(struct pid_maps *pm)
{
	size_t i, leaves = 1;
	struct map_ent **index;
	uint64_t *reach;

	while (leaves < pm->nr)
		leaves *= 2;
	if (leaves > pm->alloc_index) {
		index = realloc(pm->index, leaves * sizeof(*index));
		if (!index)
			return;
		pm->index = index;
		reach = realloc(pm->reach, 2 * leaves * sizeof(*reach));
		if (!reach)
			return;
		pm->reach = reach;
		pm->alloc_index = leaves;
	}
	memcpy(pm->index, pm->maps, pm->nr * sizeof(*pm->index));
	qsort(pm->index, pm->nr, sizeof(*pm->index), index_cmp);
	for (i = 0; i < leaves; i++)
		pm->reach[leaves + i] = i < pm->nr ? pm->index[i]->m.end : 0;
	for (i = leaves; --i > 0;)
		pm->reach[i] = pm->reach[2 * i] > pm->reach[2 * i + 1] ?
			       pm->reach[2 * i] : pm->reach[2 * i + 1];
	pm->leaves = leaves;
	pm->nr_index = pm->nr;
	pm->scanned = 0;
}

/* The record a lookup at time_ns finds so far, as profile.h says. */
struct map_pick {
	uint64_t time_ns;
	struct map_ent *before, *after;
};

static void map_pick(struct map_pick *k, struct map_ent *e)
{
	const struct map_ent *b = k->before, *a = k->after;
	uint64_t t = e->m.time_ns;

	/* ties: the later record before time_ns, the earlier one after */
	if (t <= k->time_ns) {
		if (!b || t > b->m.time_ns ||
		    (t == b->m.time_ns && e->seq > b->seq))
			k->before = e;
	} else if (!a || t < a->m.time_ns ||
		   (t == a->m.time_ns && e->seq < a->seq)) {
		k->after = e;
	}
}

/*
 * The indexed records of index[0, hi) (those starting at or below ip) that
 * reach past ip, to k: down the tree, into the subtrees that do.
 */
static void index_pick(const struct pid_maps *pm, size_t hi, uint64_t ip,
		       struct map_pick *k)
{
	/* a node, the first leaf under it and how many */
	struct { size_t v, first, width; } todo[2 * 64], t;
	size_t n = 0;

	if (!hi)
		return;
	todo[n++] = (typeof(t)){ 1, 0, pm->leaves };
	while (n) {
		t = todo[--n];
		if (pm->reach[t.v] <= ip)
			continue;
		if (t.width == 1) {
			map_pick(k, pm->index[t.first]);
			continue;
		}
		t.width /= 2;
		if (t.first + t.width < hi)
			todo[n++] = (typeof(t)){ 2 * t.v + 1, t.first + t.width,
						 t.width };
		todo[n++] = (typeof(t)){ 2 * t.v, t.first, t.width };
	}
}

static struct map_ent *pid_lookup(struct pid_maps *pm, uint64_t ip,
				  uint64_t time_ns)
{
	struct map_pick k = { .time_ns = time_ns };
	size_t lo = 0, hi, i;

	if (pm->nr - pm->nr_index > 16 && pm->scanned >= pm->nr)
		index_build(pm);
	/* the indexed records starting at or below ip, back to the last */
	hi = pm->nr_index;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (pm->index[mid]->m.start <= ip)
			lo = mid + 1;
		else
			hi = mid;
	}
	index_pick(pm, lo, ip, &k);
	for (i = pm->nr_index; i < pm->nr; i++)
		if (ip >= pm->maps[i]->m.start && ip < pm->maps[i]->m.end)
			map_pick(&k, pm->maps[i]);
	pm->scanned += pm->nr - pm->nr_index;
	return k.before ? k.before : k.after;
}

/* A sweep's records no sample uses, in all pids. */
struct sweep {
	htab_t tab;			/* the pids' */
	struct map_ent **unused;
	size_t nr, alloc;
	size_t bytes;			/* theirs, those not dropped */
	size_t *pid_bytes;		/* per pid with some: theirs */
	size_t nr_pids;
	size_t limit;			/* what a pid may keep */
	size_t kept;			/* bytes of those kept */
	uint64_t dropped;
	bool oom;
};

static int sweep_clear(void **slot, void *arg)
{
	struct pid_maps *pm = *slot;
	size_t i;

	(void)arg;
	for (i = 0; i < pm->nr; i++)
		pm->maps[i]->used = pm->maps[i]->drop = false;
	return 1;
}

/* Mark the records the samples' user frames are in, as resolve finds them. */
static void sweep_mark(struct profile *p)
{
	struct pid_maps key, *pm = NULL;
	struct map_ent *e;
	size_t i;
	unsigned int k;

	for (i = 0; i < p->nr_samples; i++) {
		const struct prof_sample *s = &p->samples[i]->s;
		const struct stack_ent *st = p->stacks[s->stack];

		if (!st->nr_user)
			continue;
		if (!pm || pm->pid != s->pid) {
			key.pid = s->pid;
			pm = htab_find(p->pid_tab, &key);
			if (!pm)
				continue;
		}
		for (k = 0; k < st->nr_user; k++) {
			/* a return address: the call before it */
			e = pid_lookup(pm, st->ips[st->nr_kernel + k] -
					   !(k == 0 && st->user_mode),
				       s->first_ns);
			if (e)
				e->used = true;
		}
	}
}

static int sweep_collect(void **slot, void *arg)
{
	struct pid_maps *pm = *slot;
	struct sweep *sw = arg;
	size_t i;

	for (i = 0; i < pm->nr; i++) {
		struct map_ent *e = pm->maps[i];

		if (e->used)
			continue;
		if (grow_array(&sw->unused, &sw->alloc, sw->nr + 1,
			       sizeof(*sw->unused))) {
			sw->oom = true;
			return 0;
		}
		sw->unused[sw->nr++] = e;
		sw->bytes += map_bytes(e);
	}
	return 1;
}

/* By pid and address range, then oldest first. */
static int range_cmp(const void *a, const void *b)
{
	const struct map_ent *x = *(struct map_ent *const *)a;
	const struct map_ent *y = *(struct map_ent *const *)b;

	if (x->m.pid != y->m.pid)
		return x->m.pid < y->m.pid ? -1 : 1;
	if (x->m.start != y->m.start)
		return x->m.start < y->m.start ? -1 : 1;
	if (x->m.end != y->m.end)
		return x->m.end < y->m.end ? -1 : 1;
	if (x->m.time_ns != y->m.time_ns)
		return x->m.time_ns < y->m.time_ns ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int sweep_pid_bytes(void **slot, void *arg)
{
	struct pid_maps *pm = *slot;
	struct sweep *sw = arg;
	size_t i;

	pm->unused_bytes = 0;
	for (i = 0; i < pm->nr; i++)
		if (!pm->maps[i]->used && !pm->maps[i]->drop)
			pm->unused_bytes += map_bytes(pm->maps[i]);
	if (pm->unused_bytes)
		sw->pid_bytes[sw->nr_pids++] = pm->unused_bytes;
	return 1;
}

static int bytes_desc(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;

	return x > y ? -1 : x < y;
}

/*
 * A pid over sw->limit keeps its oldest unused records (what it mapped
 * when it was first listed) up to half of it, its newest (what it maps
 * now) up to the rest: those between go.
 */
static int sweep_trim(void **slot, void *arg)
{
	struct pid_maps *pm = *slot;
	struct sweep *sw = arg;
	size_t i, j, keep = 0;

	if (pm->unused_bytes <= sw->limit)
		return 1;
	for (i = 0; i < pm->nr; i++) {
		struct map_ent *e = pm->maps[i];

		if (e->used || e->drop)
			continue;
		if (keep + map_bytes(e) > sw->limit / 2)
			break;
		keep += map_bytes(e);
	}
	for (j = pm->nr; j > i; j--) {
		struct map_ent *e = pm->maps[j - 1];

		if (e->used || e->drop)
			continue;
		if (keep + map_bytes(e) > sw->limit)
			break;
		keep += map_bytes(e);
	}
	for (; i < j; i++)
		if (!pm->maps[i]->used)
			pm->maps[i]->drop = true;
	pm->unused_bytes = keep;
	return 1;
}

/* Free the records dropped, keep the others in order; a pid left empty goes. */
static int sweep_compact(void **slot, void *arg)
{
	struct pid_maps *pm = *slot;
	struct sweep *sw = arg;
	size_t i, n = 0;

	for (i = 0; i < pm->nr; i++) {
		if (pm->maps[i]->drop) {
			free(pm->maps[i]);
			sw->dropped++;
			continue;
		}
		if (!pm->maps[i]->used)
			sw->kept += map_bytes(pm->maps[i]);
		pm->maps[n++] = pm->maps[i];
	}
	if (n != pm->nr) {
		pm->nr = n;
		pm->nr_index = 0;
		pm->scanned = 0;
	}
	if (!pm->nr)
		htab_clear_slot(sw->tab, slot);	/* pid_del() frees it */
	return 1;
}
/*
 * Past the cap on records no sample uses: drop them down to target bytes.
 * First those of an address range a later record of the pid has too, then
 * from the pids with the most (sweep_trim()).  0, or -1 on ENOMEM.
 */
static int profile__sweep_mmaps(struct profile *p, size_t target)
{
	struct sweep sw = { .tab = p->pid_tab };
	struct map_ent *x, *y;
	size_t i, m, rest;

	htab_traverse_noresize(p->pid_tab, sweep_clear, NULL);
	sweep_mark(p);
	htab_traverse_noresize(p->pid_tab, sweep_collect, &sw);
	if (sw.oom)
		goto fail;
	if (sw.bytes > target) {
		qsort(sw.unused, sw.nr, sizeof(*sw.unused), range_cmp);
		for (i = 0; i + 1 < sw.nr; i++) {
			x = sw.unused[i];
			y = sw.unused[i + 1];
			if (x->m.pid == y->m.pid && x->m.start == y->m.start &&
			    x->m.end == y->m.end) {
				x->drop = true;
				sw.bytes -= map_bytes(x);
			}
		}
	}
	if (sw.bytes > target) {
		sw.pid_bytes = malloc(htab_elements(p->pid_tab) *
				      sizeof(*sw.pid_bytes));
		if (!sw.pid_bytes)
			goto fail;
		htab_traverse_noresize(p->pid_tab, sweep_pid_bytes, &sw);
		qsort(sw.pid_bytes, sw.nr_pids, sizeof(*sw.pid_bytes),
		      bytes_desc);
		/* the largest limit that the m biggest pids over it meet */
		rest = sw.bytes;
		for (m = 1; m <= sw.nr_pids; m++) {
			rest -= sw.pid_bytes[m - 1];
			if (rest > target)
				continue;
			sw.limit = (target - rest) / m;
			if (m == sw.nr_pids || sw.limit >= sw.pid_bytes[m])
				break;
		}
		htab_traverse_noresize(p->pid_tab, sweep_trim, &sw);
	}
	htab_traverse_noresize(p->pid_tab, sweep_compact, &sw);
	p->map_dropped += sw.dropped;
	p->map_unused = sw.kept;
	free(sw.unused);
	free(sw.pid_bytes);
	return 0;
fail:
	free(sw.unused);
	free(sw.pid_bytes);
	return -1;
}

static int profile__add_mmap(struct profile *p, const struct cprof_mmap *mm)
{
	struct pid_maps key = { .pid = mm->pid }, *pm;
	struct map_ent *e;
	void **slot;

	slot = htab_find_slot(p->pid_tab, &key, INSERT);
	if (!slot)
		return -1;
	pm = *slot;
	if (!pm) {
		pm = calloc(1, sizeof(*pm));
		if (!pm)
			return -1;
		pm->pid = mm->pid;
		*slot = pm;
	}
	if (map_repeats(pm, mm))
		return 0;
	if (grow_array(&pm->maps, &pm->alloc, pm->nr + 1, sizeof(*pm->maps)))
		return -1;
	e = malloc(offsetof(struct map_ent, m) + mm->rec.size);
	if (!e)
		return -1;
	memcpy(&e->m, mm, mm->rec.size);
	e->seq = p->map_seq++;
	e->used = e->drop = false;
	pm->maps[pm->nr++] = e;
	if (!strcmp(mm->path, CPROF_ANON_NAME))
		pm->anon = true;
	if (mm->time_ns > pm->max_time)
		pm->max_time = mm->time_ns;
	p->map_unused += map_bytes(e);
	if (p->map_cap && p->map_unused > p->map_cap)
		return profile__sweep_mmaps(p, p->map_cap / 2);
	return 0;
}

void profile__cap_mmaps(struct profile *p, size_t bytes)
{
	p->map_cap = bytes;
}

uint64_t profile__mmaps_dropped(const struct profile *p)
{
	return p->map_dropped;
}
struct drop_ctx {
	htab_t tab;
	bool (*gone)(uint32_t pid, void *arg);
	void *arg;
	size_t dropped;
};

static int drop_one(void **slot, void *arg)
{
	const struct pid_maps *pm = *slot;
	struct drop_ctx *d = arg;

	if (d->gone(pm->pid, d->arg)) {
		htab_clear_slot(d->tab, slot);	/* pid_del() frees it */
		d->dropped++;
	}
	return 1;
}

size_t profile__drop_pids(struct profile *p,
			  bool (*gone)(uint32_t pid, void *arg), void *arg)
{
	struct drop_ctx d = { .tab = p->pid_tab, .gone = gone, .arg = arg };

	htab_traverse_noresize(p->pid_tab, drop_one, &d);
	return d.dropped;
}

size_t profile__nr_pids(const struct profile *p)
{
	return htab_elements(p->pid_tab);
}

struct each_mmap {
	int (*fn)(const struct cprof_mmap *mm, void *arg);
	void *arg;
	int ret;
};

static int each_mmap_of_pid(void **slot, void *info)
{
	const struct pid_maps *pm = *slot;
	struct each_mmap *e = info;
	size_t i;

	for (i = 0; i < pm->nr && !e->ret; i++)
		e->ret = e->fn(&pm->maps[i]->m, e->arg);
	return !e->ret;
}

int profile__for_each_mmap(const struct profile *p,
			   int (*fn)(const struct cprof_mmap *mm, void *arg),
			   void *arg)
{
	struct each_mmap e = { .fn = fn, .arg = arg };

	htab_traverse_noresize(p->pid_tab, each_mmap_of_pid, &e);
	return e.ret;
}

static int profile__add_throttle(struct profile *p,
				 const struct cprof_throttle *t)
{
	struct cpu_state *c = profile__cpu(p, t->cpu);
	size_t i;

	if (!c || grow_array(&c->changes, &c->alloc_changes, c->nr_changes + 1,
		 sizeof(*c->changes)))
		return -1;
	/* keep sorted by time; equal times keep stream order */
	i = c->nr_changes;
	while (i > 0 && c->changes[i - 1].time_ns > t->time_ns) {
		c->changes[i] = c->changes[i - 1];
		i--;
	}
	c->changes[i].time_ns = t->time_ns;
	c->changes[i].period_ns = t->period_ns;
	c->nr_changes++;
	return 0;
}

size_t profile__drop_periods(struct profile *p, uint64_t time_ns)
{
	size_t i, keep, dropped = 0;

	for (i = 0; i < p->nr_cpus; i++) {
		struct cpu_state *c = &p->cpus[i];

		/* the latest change at or before time_ns still rules then */
		for (keep = 0; keep + 1 < c->nr_changes &&
		     c->changes[keep + 1].time_ns <= time_ns; keep++)
			;
		if (!keep)
			continue;
		memmove(c->changes, c->changes + keep,
			(c->nr_changes - keep) * sizeof(*c->changes));
		c->nr_changes -= keep;
		dropped += keep;
	}
	return dropped;
}

struct profile *profile__new_window(const struct cprof_header *hdr,
				    const struct profile *maps)
{
	struct profile *p = profile__new(hdr);

	if (p)
		p->maps = maps;
	return p;
}

int profile__add(struct profile *p, const struct cprof_rec *rec)
{
	const struct cprof_lost *lost;
	struct cpu_state *c;
	int err = 0;

	switch (rec->type) {
	case CPROF_REC_SAMPLE:
		err = profile__add_sample(p, (const struct cprof_sample *)rec);
		break;
	case CPROF_REC_MMAP:
		if (p->maps != p)
			break;
		err = profile__add_mmap(p, (const struct cprof_mmap *)rec);
		break;
	case CPROF_REC_LOST:
		lost = (const struct cprof_lost *)rec;
		c = profile__cpu(p, lost->cpu);
		if (!c) {
			err = -1;
			break;
		}
		c->lost += lost->samples;
		c->lost_nanos += lost->samples *
			profile__period(p, lost->cpu, lost->time_ns);
		p->lost_other += lost->other;
		break;
	case CPROF_REC_THROTTLE:
		if (p->maps != p)
			break;
		err = profile__add_throttle(p,
					    (const struct cprof_throttle *)rec);
		break;
	case CPROF_REC_OFFCPU:
		err = profile__off_join(p, (const struct cprof_offcpu *)rec,
					NULL);
		break;
	case CPROF_REC_ONCPU:
		err = profile__off_join(p, NULL,
					(const struct cprof_oncpu *)rec);
		break;
	case CPROF_REC_THREAD:
		err = profile__add_thread(p, (const struct cprof_thread *)rec);
		break;
	case CPROF_REC_SWITCH:
	case CPROF_REC_WAKE:
		if (p->timeline)
			err = timeline__add(p->timeline, rec);
		break;
	case CPROF_REC_HEAPFREE:
		err = profile__heap_join(p,
			((const struct cprof_heapfree *)rec)->id, NULL, 0);
		break;
	case CPROF_REC_END:
		memcpy(&p->end, rec, sizeof(p->end));
		p->have_end = true;
		htab_traverse_noresize(p->off_tab, off_close, p);
		htab_empty(p->off_tab);
		p->off_bytes = 0;
		err = p->off_error ? -1 : 0;
		break;
	}
	if (err)
		return fail("failed to aggregate samples: %s", strerror(ENOMEM));
	return 0;
}

const struct cprof_header *profile__header(const struct profile *p)
{
	return &p->hdr;
}

const struct cprof_end *profile__end(const struct profile *p)
{
	return p->have_end ? &p->end : NULL;
}

uint64_t profile__nr_records(const struct profile *p)
{
	return p->nr_records;
}

void profile__user_walks(const struct profile *p, uint64_t *user,
			 uint64_t *table)
{
	*user = p->nr_user;
	*table = p->nr_user_table;
}

size_t profile__nr_samples(const struct profile *p)
{
	return p->nr_samples;
}

const struct prof_sample *profile__sample(const struct profile *p, size_t i)
{
	return &p->samples[i]->s;
}

void profile__stack(const struct profile *p, uint32_t id, struct prof_stack *st)
{
	const struct stack_ent *e = p->stacks[id];

	st->ips = e->ips;
	st->nr_kernel = e->nr_kernel;
	st->nr_user = e->nr_user;
	st->user_mode = e->user_mode;
	st->py = e->py;
	st->nr_py = e->nr_py;
	st->py_whole = e->py_whole;
	st->truncated = e->truncated;
}

const struct cprof_mmap *profile__find_mmap(const struct profile *p,
					    uint32_t pid, uint64_t ip,
					    uint64_t time_ns)
{
	struct pid_maps key = { .pid = pid }, *pm;
	const struct map_ent *e;

	/* its index is the one thing a lookup changes */
	pm = htab_find(p->maps->pid_tab, &key);
	e = pm ? pid_lookup(pm, ip, time_ns) : NULL;
	return e ? &e->m : NULL;
}

bool profile__pid_has_anon(const struct profile *p, uint32_t pid)
{
	struct pid_maps key = { .pid = pid }, *pm;

	pm = htab_find(p->maps->pid_tab, &key);
	return pm && pm->anon;
}

uint64_t profile__lost(const struct profile *p, unsigned int cpu,
		       uint64_t *nanos)
{
	if (cpu >= p->nr_cpus) {
		*nanos = 0;
		return 0;
	}
	*nanos = p->cpus[cpu].lost_nanos;
	return p->cpus[cpu].lost;
}

uint64_t profile__lost_total(const struct profile *p, uint64_t *other)
{
	uint64_t sum = 0;
	size_t i;

	for (i = 0; i < p->nr_cpus; i++)
		sum += p->cpus[i].lost;
	*other = p->lost_other;
	return sum;
}

const struct timeline *profile__timeline(const struct profile *p)
{
	return p->timeline;
}
