// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * ingest - read a cprof stream into a profile.  See ingest.h.
 *
 * A sample (or a snapshot's thread) whose user walk reached code without
 * a table (CPROF_SAMPLE_USTACK) is held until its stack copy arrives (a
 * CPROF_REC_USTACK of its CPU, before that CPU's next sample), then until
 * its tables may have: INGEST_USTACK_HOLD_NS past its time on the sample
 * clock once the loader has nothing left to do (its mapping record came
 * long before), INGEST_USTACK_HOLD_MAX_NS past it in any case (looked at
 * after each record, and when a reader's idle op runs), or the END record
 * (after waiting up to INGEST_USTACK_WAIT_S for the loader, or what
 * ingest__table_wait() set).  --every does not write a window while a
 * sample of it is held (ingest__holds_before()).  A walk that needs a
 * table the module held before the loader started (tablekeep's marks)
 * asks the loader for it, once, and is walked again when it is there.  Then
 * its copy is walked with the tables the loader wrote (ustack.c,
 * tablekeep.c), and it is added with the walk's frames if that walk
 * reached the stack's outermost frame (or the depth), else as the module
 * walked it.  Held copies take at most INGEST_USTACK_BYTES; past that a
 * sample is added as it came.
 *
 * A copy whose walk met an address no mapping record of its process
 * covers, and came out short of the module's or of the outermost frame,
 * may have been walked before its process's records came (the module
 * asks for them at the sample that first needs them; a loaded machine
 * lists them late): it waits at the head of the queue, walked again
 * each time mapping records have come, until INGEST_USTACK_MMAP_NS past
 * its time or the END record.
 *
 * The stream's own profile (no record op) keeps at most about
 * INGEST_MMAP_UNUSED_MIB of mapping records no sample uses
 * (profile__cap_mmaps()): a process that maps and unmaps code in a loop
 * costs that, not its stream's size.  One warning counts those dropped.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "symbolize/debugfetch.h"
#include "ingest/ingest.h"
#include "symbolize/jitmap.h"
#include "stream/stream.h"
#include "unwind/tablekeep.h"
#include "unwind/ustack.h"
#include "lib/util.h"

#define INGEST_USTACK_HOLD_NS	2000000000ull
/*
 * As long as the module copies a young program's stacks while tables
 * compile (maps.c's CPROF_MAPS_YOUNG_NS): a profile that starts before
 * its tables load can have many to compile on a machine's first run.
 */
#define INGEST_USTACK_HOLD_MAX_NS	30000000000ull
#define INGEST_USTACK_WAIT_S	30.0
#define INGEST_USTACK_MMAP_NS	5000000000ull
#define INGEST_USTACK_BYTES	(64u << 20)
#define INGEST_MMAP_UNUSED_MIB	64u

/* A sample and the copy of its stack, waiting for tables. */
struct pending {
	struct pending *next;
	struct cprof_sample *s;
	struct cprof_ustack *u;
	bool again;		/* walked once, waiting for a table asked for */
	bool unmapped;		/* walked, an address in no mapping record */
	uint64_t mmaps_at;	/* struct ingest's mmaps when it was */
};

struct ingest {
	struct stream *s;
	const char *name;		/* the input's, for messages */
	const struct cprof_header *hdr;	/* owned by s */
	struct profile *p;
	struct tableload *unw;
	struct cgroups *cg;
	struct debugfetch_queue *debug;
	struct pyframes *py;
	struct jitmaps *jit;
	struct cprof_sample **held;	/* per CPU: its copy may follow */
	struct pending *head, **tail;	/* in stream order */
	size_t pending_bytes;
	uint64_t last_ns;		/* the latest sample's time */
	uint64_t mmaps;			/* mapping records read */
	double table_wait;		/* at END, for the loader: seconds */
	struct ingest_copies copies;
	const struct ingest_ops *ops;	/* ingest__run()'s */
};

struct ingest *ingest__open(int fd, const char *name, struct tableload *unw,
			    struct cgroups *cg)
{
	struct ingest *in = calloc(1, sizeof(*in));

	if (!in || !(in->s = stream__new(fd, name))) {
		fail("failed to read %s: %s", esc(name), strerror(ENOMEM));
		free(in);
		return NULL;
	}
	in->name = name;
	in->unw = unw;
	in->cg = cg;
	in->tail = &in->head;
	in->table_wait = INGEST_USTACK_WAIT_S;
	in->hdr = stream__read_header(in->s);
	if (!in->hdr) {
		ingest__close(in);
		return NULL;
	}
	in->p = profile__new(in->hdr);
	if (!in->p) {
		fail("failed to aggregate samples: %s", strerror(ENOMEM));
		ingest__close(in);
		return NULL;
	}
	return in;
}

void ingest__fetch_debug(struct ingest *in, struct debugfetch_queue *q)
{
	in->debug = q;
}

void ingest__python(struct ingest *in, struct pyframes *py)
{
	in->py = py;
}

void ingest__jit(struct ingest *in, struct jitmaps *jit)
{
	in->jit = jit;
}

void ingest__from_module(struct ingest *in)
{
	stream__from_module(in->s);
}

void ingest__table_wait(struct ingest *in, double seconds)
{
	in->table_wait = seconds;
}

static void pending_free(struct pending *pd)
{
	free(pd->s);
	free(pd->u);
	free(pd);
}

void ingest__close(struct ingest *in)
{
	struct pending *pd;
	unsigned int cpu;

	if (!in)
		return;
	while ((pd = in->head)) {
		in->head = pd->next;
		pending_free(pd);
	}
	for (cpu = 0; in->held && cpu < in->hdr->nr_cpu_ids; cpu++)
		free(in->held[cpu]);
	free(in->held);
	profile__free(in->p);
	stream__free(in->s);
	free(in);
}

/* A record to the stream's profile, or to the reader's op. */
static int deliver(struct ingest *in, const struct ingest_ops *ops,
		   const struct cprof_rec *rec)
{
	if (ops->record)
		return ops->record(ops->arg, in->p, rec);
	if (profile__add(in->p, rec))
		return fail("failed to aggregate samples: %s",
			    strerror(ENOMEM));
	return 0;
}

/* Where ustack_walk() finds code: the stream's mappings of one process. */
struct walk_ctx {
	struct ingest *in;
	struct tablekeep *keep;
	uint32_t pid;
	uint64_t time_ns;
	const struct cprof_mmap *elsewhere;	/* a table the module has */
	bool unmapped;			/* an address no record covers */
};

static bool walk_code(void *arg, uint64_t ip, struct ustack_code *c)
{
	struct walk_ctx *w = arg;
	const struct cprof_mmap *m;
	struct cprof_file_id id;

	m = profile__find_mmap(w->in->p, w->pid, ip, w->time_ns);
	if (!m) {
		w->unmapped = true;
		return false;
	}
	c->start = m->start;
	c->end = m->end;
	c->pgoff = m->pgoff;
	if (!strcmp(m->path, "[vdso]"))
		c->table = tablekeep__get(w->keep, CPROF_UTABLE_VDSO_DEV,
					  CPROF_UTABLE_VDSO_INO, &c->elsewhere);
	else if (stream__mmap_file_id(m, &id))
		c->table = tablekeep__get(w->keep, id.dev, id.ino,
					  &c->elsewhere);
	if (c->elsewhere)
		w->elsewhere = m;
	return true;
}

/*
 * Add the pending sample: with its copy's walk in place of the module's
 * frames from the copy's on, if that walk reached the outermost frame (or
 * the depth) and is no shorter than the module's; else as it came.  A
 * walk that needs a table the module had before this run (not kept)
 * asks the loader for it and leaves the sample pending (the first time,
 * and each time it asks for a table not asked for before: the walk goes
 * further each time): 1, *pd to be queued again.  With @may_wait, a walk
 * that met an address of no mapping record and came out short leaves
 * the sample pending too, for its process's records: 2.
 */
static int deliver_walked(struct ingest *in, const struct ingest_ops *ops,
			  struct pending *pd, bool may_wait)
{
	struct cprof_file_id id;
	const struct cprof_sample *s = pd->s;
	const struct cprof_ustack *u = pd->u;
	unsigned int nk = s->nr_kernel, k = u->frame;
	bool cgroup = s->rec.flags & CPROF_SAMPLE_CGROUP;
	size_t head = stream__frames_head(s->rec.type);
	const uint64_t *s_ips = (const void *)((const char *)s + head);
	uint64_t *out_ips;
	struct walk_ctx w = {
		.in = in, .keep = tableload__kept(in->unw), .pid = s->pid,
		.time_ns = s->time_ns,
	};
	uint64_t ips[CPROF_MAX_DEPTH];
	const struct cprof_pytrail *py;
	struct cprof_sample *out;
	enum ustack_end end;
	unsigned int max;
	size_t size, trail;
	int n, ret;

	tablekeep__hold(w.keep);
	max = in->hdr->depth < CPROF_MAX_DEPTH ? in->hdr->depth :
						  CPROF_MAX_DEPTH;
	end = ustack_walk(u, s_ips[nk + k], k == 0, walk_code, &w, ips,
			  max > k ? max - k : 1, &n);
	tablekeep__release(w.keep);
	if (end == USTACK_NO_TABLE && w.elsewhere &&
	    stream__mmap_file_id(w.elsewhere, &id)) {
		bool asked = tablekeep__ask(w.keep, id.dev, id.ino);

		if (asked)
			tableload__keep(in->unw, w.elsewhere);
		/* once, or for each table asked for (the next file up) */
		if (asked || !pd->again) {
			pd->again = true;
			return 1;
		}
	}
	if (may_wait && w.unmapped &&
	    ((end != USTACK_COMPLETE && end != USTACK_DEPTH) ||
	     k + n < s->nr_user))
		return 2;
	if (end == USTACK_SHORT)
		in->copies.short_copy++;
	else if (end == USTACK_NO_TABLE)
		in->copies.no_table++;
	else if (end == USTACK_STOPPED || k + n < s->nr_user)
		in->copies.other++;
	else
		in->copies.completed++;
	if ((end != USTACK_COMPLETE && end != USTACK_DEPTH) ||
	    k + n < s->nr_user) {
		pd->s->rec.flags &= ~CPROF_SAMPLE_USTACK;
		return deliver(in, ops, &pd->s->rec);
	}
	/* the Python frames after them, as they came */
	py = stream__sample_pytrail(s);
	trail = py ? sizeof(*py) + py->nr * sizeof(py->frame[0]) : 0;
	size = head + (nk + k + n + cgroup) * sizeof(s_ips[0]) + trail;
	out = malloc(size);
	if (!out)
		return fail("failed to aggregate samples: %s",
			    strerror(ENOMEM));
	memcpy(out, s, head + (nk + k) * sizeof(s_ips[0]));
	out_ips = (void *)((char *)out + head);
	memcpy(out_ips + nk + k, ips, n * sizeof(ips[0]));
	if (cgroup)
		out_ips[nk + k + n] = s_ips[nk + s->nr_user];
	if (py)
		memcpy((char *)out + size - trail, py, trail);
	out->nr_user = k + n;
	out->rec.size = size;
	out->rec.flags &= ~(CPROF_SAMPLE_USTACK | CPROF_SAMPLE_USER_FAULT |
			    CPROF_SAMPLE_USER_TRUNC);
	out->rec.flags |= CPROF_SAMPLE_USER_TABLE |
			  (end == USTACK_DEPTH ? CPROF_SAMPLE_USER_TRUNC : 0);
	ret = deliver(in, ops, &out->rec);
	free(out);
	return ret;
}

/*
 * Add the pending samples taken INGEST_USTACK_HOLD_NS or more before the
 * latest one; all of them at the end (after waiting a little for the
 * loader), with the held samples whose copies did not come.
 */
static size_t count_pending(const struct ingest *in)
{
	const struct pending *pd;
	size_t n = 0;

	for (pd = in->head; pd; pd = pd->next)
		n++;
	return n;
}

static int flush_pending(struct ingest *in, const struct ingest_ops *ops,
			 bool end)
{
	static const volatile sig_atomic_t no_stop;
	double until = monotonic_seconds() + in->table_wait, left;
	size_t round = 0, requeued = 0;
	struct pending *pd;
	struct timespec ts;
	unsigned int cpu;
	bool may_wait;
	uint64_t now;
	int ret = 0;

	if (end && in->head)
		tableload__wait_asked(in->unw, &no_stop, in->table_wait);
	/* the sample clock is CLOCK_MONOTONIC: a live stream's is this one */
	clock_gettime(CLOCK_MONOTONIC, &ts);
	now = (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
	if (now < in->last_ns)
		now = in->last_ns;
	/* the rounds are the end's: a count per record would be quadratic */
	round = end ? count_pending(in) : 0;
	while (!ret && (pd = in->head) &&
	       (end || pd->s->time_ns + INGEST_USTACK_HOLD_MAX_NS < now ||
		(pd->s->time_ns + INGEST_USTACK_HOLD_NS < now &&
		 tableload__asked_idle(in->unw)))) {
		may_wait = !end && pd->s->time_ns + INGEST_USTACK_MMAP_NS >= now;
		/* no mapping record since its last walk */
		if (may_wait && pd->unmapped && pd->mmaps_at == in->mmaps)
			break;
		/*
		 * At the end, in rounds: the samples that asked the loader
		 * for a table are walked again after it, within the wait's
		 * time in all (each file is asked for once: rounds end).
		 */
		if (end && !round) {
			left = until - monotonic_seconds();
			if (requeued && left > 0)
				tableload__wait_asked(in->unw, &no_stop, left);
			round = count_pending(in);
			requeued = 0;
		}
		if (end)
			round--;
		in->head = pd->next;
		if (!in->head)
			in->tail = &in->head;
		ret = deliver_walked(in, ops, pd, may_wait);
		if (ret == 2) {
			/* at the head again, for its process's records */
			pd->unmapped = true;
			pd->mmaps_at = in->mmaps;
			pd->next = in->head;
			in->head = pd;
			if (!pd->next)
				in->tail = &pd->next;
			ret = 0;
			break;
		}
		if (ret == 1) {
			/* at the end of the queue, for the loader to fetch */
			pd->next = NULL;
			*in->tail = pd;
			in->tail = &pd->next;
			ret = 0;
			requeued++;
			if (!end)
				break;
			continue;
		}
		in->pending_bytes -= pd->u->size;
		pending_free(pd);
	}
	for (cpu = 0; end && !ret && in->held && cpu < in->hdr->nr_cpu_ids;
	     cpu++) {
		if (!in->held[cpu])
			continue;
		in->held[cpu]->rec.flags &= ~CPROF_SAMPLE_USTACK;
		ret = deliver(in, ops, &in->held[cpu]->rec);
		free(in->held[cpu]);
		in->held[cpu] = NULL;
	}
	return ret;
}

static void *dup_rec(const struct cprof_rec *rec)
{
	void *p = malloc(rec->size);

	if (p)
		memcpy(p, rec, rec->size);
	return p;
}

/* A sample: held if its copy may follow; else added, as its CPU's held one. */
static int take_sample(struct ingest *in, const struct ingest_ops *ops,
		       const struct cprof_sample *s)
{
	struct cprof_sample **slot;
	int ret = 0;

	if (s->time_ns > in->last_ns)
		in->last_ns = s->time_ns;
	if (!in->unw || s->cpu >= in->hdr->nr_cpu_ids)
		return deliver(in, ops, &s->rec);
	if (!in->held) {
		in->held = calloc(in->hdr->nr_cpu_ids, sizeof(*in->held));
		if (!in->held)
			return fail("failed to aggregate samples: %s",
				    strerror(ENOMEM));
	}
	slot = &in->held[s->cpu];
	if (*slot) {
		/* its copy did not come (the buffer had no room for it) */
		(*slot)->rec.flags &= ~CPROF_SAMPLE_USTACK;
		ret = deliver(in, ops, &(*slot)->rec);
		free(*slot);
		*slot = NULL;
	}
	if (!ret && (s->rec.flags & CPROF_SAMPLE_USTACK) &&
	    in->pending_bytes > INGEST_USTACK_BYTES)
		in->copies.not_held++;
	if (ret || !(s->rec.flags & CPROF_SAMPLE_USTACK) ||
	    in->pending_bytes > INGEST_USTACK_BYTES ||
	    !(*slot = dup_rec(&s->rec)))
		return ret ? ret : deliver(in, ops, &s->rec);
	return 0;
}

/* A stack copy: pending with its held sample, if it is that one's. */
static int take_ustack(struct ingest *in, const struct cprof_ustack *u)
{
	struct cprof_sample *s;
	struct pending *pd;

	s = in->held && u->cpu < in->hdr->nr_cpu_ids ? in->held[u->cpu] :
						      NULL;
	if (!s || s->time_ns != u->time_ns || s->tid != u->tid ||
	    u->frame >= s->nr_user)
		return 0;
	pd = calloc(1, sizeof(*pd));
	if (!pd || !(pd->u = dup_rec(&u->rec))) {
		free(pd);
		return fail("failed to aggregate samples: %s",
			    strerror(ENOMEM));
	}
	pd->s = s;
	in->held[u->cpu] = NULL;
	*in->tail = pd;
	in->tail = &pd->next;
	in->pending_bytes += u->size;
	return 0;
}

/*
 * No record for a while: the reader's idle op, after the code objects
 * waiting to be read and the pending due.
 */
static int ingest_idle(void *arg)
{
	struct ingest *in = arg;

	pyframes__flush(in->py, in->p);
	if (in->head && flush_pending(in, in->ops, false))
		return -1;
	return in->ops->idle(in->ops->arg);
}

/* Nothing to read yet: the Python code objects met last are read now. */
static void ingest_wait(void *arg)
{
	struct ingest *in = arg;

	pyframes__flush(in->py, in->p);
}

int ingest__run(struct ingest *in, const struct ingest_ops *ops)
{
	static const struct ingest_ops none;
	const struct cprof_rec *rec;
	uint64_t dropped;
	int ret;

	if (!ops)
		ops = &none;
	in->ops = ops;
	if (!ops->record)
		profile__cap_mmaps(in->p, INGEST_MMAP_UNUSED_MIB << 20);
	stream__on_interrupt(in->s, ops->idle ? ingest_idle : NULL, in);
	stream__on_wait(in->s, in->py ? ingest_wait : NULL, in);
	while ((ret = stream__next(in->s, &rec)) > 0) {
		switch (rec->type) {
		case CPROF_REC_SAMPLE:
			/* its code objects, while its process runs */
			pyframes__note_sample(in->py, in->p,
					      (const struct cprof_sample *)rec);
			/* the perf maps of its JIT code, as they grow */
			jitmaps__note_sample(in->jit, in->p,
					     (const struct cprof_sample *)rec);
			/* fall through */
		case CPROF_REC_THREAD:
			/* a thread's fields up to comm are a sample's */
			ret = take_sample(in, ops,
					  (const struct cprof_sample *)rec);
			break;
		case CPROF_REC_USTACK:
			ret = take_ustack(in, (const struct cprof_ustack *)rec);
			break;
		case CPROF_REC_PYCODE:
			/* names for frames whose process may be gone */
			pyframes__note_code(in->py,
					    (const struct cprof_pycode *)rec);
			ret = deliver(in, ops, rec);
			break;
		case CPROF_REC_END:
			ret = flush_pending(in, ops, true);
			if (!ret)
				ret = deliver(in, ops, rec);
			break;
		default:
			ret = deliver(in, ops, rec);
		}
		if (ret)
			break;
		/* the loader hears of a mapping before it may look idle */
		if (rec->type == CPROF_REC_MMAP) {
			in->mmaps++;
			tableload__note(in->unw,
					(const struct cprof_mmap *)rec);
			debugfetch_queue__note(in->debug,
					       (const struct cprof_mmap *)rec);
			pyframes__note_mmap(in->py,
					    (const struct cprof_mmap *)rec);
		}
		if (in->head) {
			ret = flush_pending(in, ops, false);
			if (ret)
				break;
		}
		cgroups__note(in->cg, rec);
		if (ops->after) {
			ret = ops->after(ops->arg, rec);
			if (ret)
				break;
		}
	}
	stream__on_interrupt(in->s, NULL, NULL);
	stream__on_wait(in->s, NULL, NULL);
	/*
	 * what waits is read before the profile is named (a window the END
	 * closes is written through pipeline__resolve_opts(), which reads
	 * it too)
	 */
	pyframes__flush(in->py, in->p);
	dropped = profile__mmaps_dropped(in->p);
	if (dropped)
		warning("%s: dropped %llu mapping records no sample had used, past %u MiB of them; frames of later samples in what they mapped are left unnamed",
			esc(in->name), (unsigned long long)dropped,
			INGEST_MMAP_UNUSED_MIB);
	return ret;
}

bool ingest__holds_before(const struct ingest *in, uint64_t time_ns)
{
	const struct pending *pd;
	unsigned int cpu;

	for (pd = in->head; pd; pd = pd->next)
		if (pd->s->time_ns < time_ns)
			return true;
	for (cpu = 0; in->held && cpu < in->hdr->nr_cpu_ids; cpu++)
		if (in->held[cpu] && in->held[cpu]->time_ns < time_ns)
			return true;
	return false;
}

const struct ingest_copies *ingest__copies(const struct ingest *in)
{
	return &in->copies;
}

void ingest_copies__warn(const struct ingest_copies *c)
{
	uint64_t left = c->short_copy + c->no_table + c->other + c->not_held;

	if (left)
		warning("stack copies: %llu samples completed from them, %llu left as the module walked them (%llu copies that ended before the walk did: ctl's ustack= bytes, or more than four stack pages in a row not in memory; %llu whose code's table was not there; %llu walks that met a bad frame or came out shorter than the module's; %llu not held, past %u MiB of copies waiting for tables)",
			(unsigned long long)c->completed,
			(unsigned long long)left,
			(unsigned long long)c->short_copy,
			(unsigned long long)c->no_table,
			(unsigned long long)c->other,
			(unsigned long long)c->not_held,
			INGEST_USTACK_BYTES >> 20);
}

const struct cprof_header *ingest__header(const struct ingest *in)
{
	return in->hdr;
}

struct profile *ingest__profile(const struct ingest *in)
{
	return in->p;
}

struct profile *ingest__take(struct ingest *in)
{
	struct profile *p = in->p;

	in->p = NULL;
	return p;
}
