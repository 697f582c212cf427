// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * pyframes - Python frames' names, read while the stream is read.  See
 * pyframes.h.
 *
 * Hash tables (libiberty's hashtab): processes by pid, each with its code
 * objects by (address, first line); interpreters' layouts by the file's
 * identity (device, inode, birth time; a record without one: by process
 * and mapping).  A code object is first an entry waiting (why PENDING,
 * with the trailer's text and time) until its interpreter's mapping
 * record is there, then queued (why_queued) with the process's others for
 * up to READ_DELAY_NS; then read, in batches: one child, one pidfd, one
 * look at the process's mappings, the code objects, one check that the
 * process is still the one.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/magic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <hashtab.h>

#include "lib/boxed.h"
#include "lib/mapfile.h"
#include "python/pycode.h"
#include "python/pyframes.h"
#include "python/pyrt.h"
#include "stream/stream.h"
#include "lib/util.h"

static const char why_pending[] =
	"no mapping record of its interpreter came";
static const char why_queued[] = "not read yet when the profile was written";
static const char why_not_live[] =
	"the stream is not of this boot: its processes are not these";
static const char why_not_read[] = "not read while the stream was read";
static const char why_full[] = "not read: too many code objects";
static const char why_gone[] = "the process was gone before it was read";
static const char why_other[] =
	"its pid was another process's by the time it was read";
static const char why_fault[] = "its memory could not be read";
static const char why_not_code[] =
	"no code object there (freed, or a bad address)";
static const char why_reused[] =
	"its code object was freed and the address reused (another first line)";
static const char why_not_own[] =
	"in none of the process's own memory (a mapped file's)";
static const char why_perm[] = "not permitted to read the process";
static const char why_nomem[] = "out of memory";
static const char why_no_cpython[] =
	"its interpreter is no CPython whose layout is known";
static const char why_no_id[] =
	"its interpreter's mapping record names no file to check it by";
static const char why_not_there[] =
	"its process does not map the recorded interpreter there";
static const char why_slow[] =
	"reading it took too long (its memory a user's file system's?)";

/* pyframes_set_read()'s */
static bool read_on = true;

void pyframes_set_read(bool on)
{
	read_on = on;
}

/* Code objects read in one child at most (read_batch()). */
#define READ_CHUNK	1024
/*
 * How long the code objects first met wait to be read with those met
 * after them: one child per process at most this often, not one per
 * sample (a child costs milliseconds; while a program starts, nearly
 * every sample meets new code).
 */
#define READ_DELAY_NS	(100 * 1000000ull)

/* One code object of one process. */
struct code_ent {
	uint64_t code;
	int32_t first;			/* as the tick read it */
	const char *why;		/* NULL: read */
	uint64_t text, time_ns;		/* pending: where to look */
	struct pycode c;		/* read */
	struct pyframes_code view;
	size_t bytes;
};

struct proc {
	uint32_t pid;
	htab_t codes;			/* struct code_ent */
	size_t pending;
	size_t entries, bytes;
	struct code_ent **queue;	/* why_queued, to be read */
	size_t nqueue, queue_alloc;
};

/* An interpreter's file: its layout, or why none. */
struct interp {
	uint64_t key[4];		/* dev, ino, btime; or 0, pid, start */
	const char *why;		/* NULL: rt */
	struct pyrt rt;
};

struct pyframes {
	htab_t procs;			/* struct proc */
	htab_t interps;			/* struct interp */
	int live;			/* -1: not known yet */
	size_t entries, bytes;
	uint64_t full;			/* code objects not kept: bounds */
	uint32_t *qpids;		/* the processes with a queue */
	size_t nqpids, qpids_alloc;
	uint64_t queued_ns;		/* CLOCK_MONOTONIC: the first queued */
};

static hashval_t code_hash(const void *e)
{
	const struct code_ent *c = e;

	return iterative_hash(&c->code, sizeof(c->code), (hashval_t)c->first);
}

static int code_eq(const void *a, const void *b)
{
	const struct code_ent *x = a, *y = b;

	return x->code == y->code && x->first == y->first;
}

static void code_del(void *e)
{
	struct code_ent *c = e;

	pycode_free(&c->c);
	free(c);
}

static hashval_t proc_hash(const void *e)
{
	return ((const struct proc *)e)->pid * 2654435761u;
}

static int proc_eq(const void *a, const void *b)
{
	return ((const struct proc *)a)->pid == ((const struct proc *)b)->pid;
}

static void proc_del(void *e)
{
	struct proc *p = e;

	htab_delete(p->codes);
	free(p->queue);
	free(p);
}

static hashval_t interp_hash(const void *e)
{
	const struct interp *i = e;

	return iterative_hash(i->key, sizeof(i->key), 0);
}

static int interp_eq(const void *a, const void *b)
{
	return !memcmp(((const struct interp *)a)->key,
		       ((const struct interp *)b)->key,
		       sizeof(((const struct interp *)a)->key));
}

struct pyframes *pyframes__new(void)
{
	struct pyframes *py = calloc(1, sizeof(*py));

	if (!py)
		return NULL;
	py->live = -1;
	py->procs = htab_create_alloc(16, proc_hash, proc_eq, proc_del,
				      calloc, free);
	py->interps = htab_create_alloc(4, interp_hash, interp_eq, free,
					calloc, free);
	if (!py->procs || !py->interps) {
		pyframes__free(py);
		return NULL;
	}
	return py;
}

void pyframes__free(struct pyframes *py)
{
	if (!py)
		return;
	if (py->procs)
		htab_delete(py->procs);
	if (py->interps)
		htab_delete(py->interps);
	free(py->qpids);
	free(py);
}

static struct proc *proc_of(struct pyframes *py, uint32_t pid, bool make)
{
	struct proc key = { .pid = pid }, *p;
	void **slot;

	/* made before its slot: an INSERT slot left empty would abort */
	p = htab_find(py->procs, &key);
	if (p || !make)
		return p;
	p = calloc(1, sizeof(*p));
	if (p)
		p->codes = htab_create_alloc(64, code_hash, code_eq, code_del,
					     calloc, free);
	slot = p && p->codes ? htab_find_slot(py->procs, &key, INSERT) : NULL;
	if (!slot) {
		if (p && p->codes)
			htab_delete(p->codes);
		free(p);
		return NULL;
	}
	p->pid = pid;
	*slot = p;
	return p;
}

/* The layout of the interpreter mm maps, or NULL with *why. */
static const struct pyrt *interp_of(struct pyframes *py,
				    const struct cprof_mmap *mm,
				    const char **why)
{
	struct mapfile mf = {
		.path = mm->path, .pid = mm->pid, .start = mm->start,
		.end = mm->end, .strict = true,
	};
	struct interp key = { .key = { 0 } }, *in;
	struct stat st;
	void **slot;
	int fd, ret;

	mf.has_id = stream__mmap_file_id(mm, &mf.id);
	if (mf.has_id) {
		key.key[0] = mf.id.dev;
		key.key[1] = mf.id.ino;
		key.key[2] = (uint64_t)mf.id.btime_ns;
	} else {
		key.key[1] = mm->pid;
		key.key[2] = mm->start;
		key.key[3] = 1;
	}
	in = htab_find(py->interps, &key);
	if (in) {
		*why = in->why;
		return in->why ? NULL : &in->rt;
	}
	fd = mapfile_open(&mf, &st, why, NULL);
	/* a file not opened for this process may be for the next: not kept */
	if (fd < 0)
		return NULL;
	in = malloc(sizeof(*in));
	slot = in ? htab_find_slot(py->interps, &key, INSERT) : NULL;
	if (!slot) {
		close(fd);
		free(in);
		*why = why_nomem;
		return NULL;
	}
	*in = key;
	in->why = NULL;
	ret = pyrt_detect_fd(fd, &in->rt, &in->why);
	close(fd);
	if (ret == 1)
		in->why = NULL;
	else if (!in->why)
		in->why = why_no_cpython;
	*slot = in;
	*why = in->why;
	return in->why ? NULL : &in->rt;
}

/*
 * The memory of a process that may be read: its anonymous mappings, and
 * those of the interpreter's file (the one that maps start) unless that
 * is on FUSE; adjacent ranges merged.
 */
struct ranges {
	uint64_t (*r)[2];
	size_t n, alloc;
};

static bool ranges_ok(void *arg, uint64_t addr, size_t size)
{
	const struct ranges *rg = arg;
	size_t lo = 0, hi = rg->n;

	/* the last range starting at or below addr */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (rg->r[mid][0] <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo && addr < rg->r[lo - 1][1] &&
	       size <= rg->r[lo - 1][1] - addr;
}

static void ranges_add(struct ranges *rg, uint64_t lo, uint64_t hi)
{
	if (rg->n && rg->r[rg->n - 1][1] == lo) {
		rg->r[rg->n - 1][1] = hi;
		return;
	}
	if (grow_array(&rg->r, &rg->alloc, rg->n + 1, sizeof(*rg->r)))
		return;
	rg->r[rg->n][0] = lo;
	rg->r[rg->n][1] = hi;
	rg->n++;
}

/*
 * /proc/PID/maps into rg (in address order, as the kernel lists them):
 * anonymous mappings (device 00:00, inode 0: a file system of its own
 * numbers cannot pass for one), and those of the interpreter's file if it
 * is not on FUSE.  Whether the mapping at start has the inode of id (the
 * record's file): if not, this pid does not run that interpreter there
 * (a stream's record need not be true), and nothing is read.
 */
static bool ranges_read(struct ranges *rg, uint32_t pid, uint64_t start,
			const struct cprof_file_id *id)
{
	bool file_ok = id->fs_magic != FUSE_SUPER_MAGIC;
	unsigned long long lo, hi, ino, text_ino = 0;
	unsigned int maj, min, text_dev = 0;
	char path[64], line[4352], *nl;
	bool have_text = false;
	FILE *f;
	int at, pass;

	snprintf(path, sizeof(path), "/proc/%" PRIu32 "/maps", pid);
	/* first the interpreter's file (the mapping at start), then all */
	for (pass = 0; pass < 2 && (pass == 0 || have_text); pass++) {
		f = fopen(path, "re");
		if (!f)
			return false;
		while (fgets(line, sizeof(line), f)) {
			nl = strchr(line, '\n');
			at = 0;
			if (sscanf(line, "%llx-%llx %*s %*x %x:%x %llu %n", &lo,
				   &hi, &maj, &min, &ino, &at) != 5 ||
			    lo >= hi)
				goto next;
			if (pass == 0) {
				if (lo <= start && start < hi && ino &&
				    ino == id->ino) {
					text_dev = maj << 20 | min;
					text_ino = ino;
					have_text = true;
				}
			} else if (!ino ? !maj && !min &&
					  (line[at] != '[' ||
					   strncmp(line + at, "[v", 2)) :
				   file_ok && ino == text_ino &&
				   (maj << 20 | min) == text_dev) {
				ranges_add(rg, lo, hi);
			}
next:
			while (!nl && fgets(line, sizeof(line), f))
				nl = strchr(line, '\n');
		}
		fclose(f);
	}
	return have_text;
}

/* Why a read failed, from pycode_read()'s errno. */
static const char *why_errno(int err)
{
	switch (err) {
	case ESRCH:
		return why_gone;
	case EINVAL:
		return why_not_code;
	case EACCES:
		return why_not_own;
	case EPERM:
		return why_perm;
	case ENOMEM:
		return why_nomem;
	}
	return why_fault;
}

/*
 * A new entry for key in p, why so far, counted; NULL (counted as full)
 * past the bounds or for want of memory.  Made before its slot: an INSERT
 * slot left empty would abort.
 */
static struct code_ent *code_new(struct pyframes *py, struct proc *p,
				 const struct code_ent *key, const char *why)
{
	struct code_ent *e = NULL;
	void **slot = NULL;

	if (py->entries < PYFRAMES_ENTRIES_MAX &&
	    py->bytes < PYFRAMES_BYTES_MAX && (e = calloc(1, sizeof(*e))))
		slot = htab_find_slot(p->codes, key, INSERT);
	if (!slot) {
		free(e);
		py->full++;
		return NULL;
	}
	e->code = key->code;
	e->first = key->first;
	e->why = why;
	e->bytes = sizeof(*e);
	*slot = e;
	p->entries++;
	p->bytes += e->bytes;
	py->entries++;
	py->bytes += e->bytes;
	return e;
}

/* e holds c (read, or from a record): its view and bytes counted. */
static void code_named(struct pyframes *py, struct proc *p,
		       struct code_ent *e)
{
	size_t bytes;

	e->why = NULL;
	e->view = (struct pyframes_code){
		.qualname = e->c.qualname,
		.filename = e->c.filename,
		.firstlineno = e->c.firstlineno,
		.linetable = e->c.linetable,
		.linetable_len = e->c.linetable_len,
	};
	bytes = strlen(e->c.qualname) + strlen(e->c.filename) +
		e->c.linetable_len;
	e->bytes += bytes;
	p->bytes += bytes;
	py->bytes += bytes;
}

/*
 * The reads of one batch, in a child (boxed.h): a process's memory may be
 * a file its user's file system serves, which could hold a read for ever
 * (or a range remapped so between the ranges' listing and the read); the
 * child is killed past read_limits' time instead.  Per code object it
 * writes: errno (0: read), first line, the lengths of the qualified name,
 * the file name and the line table, then their bytes.
 */
struct read_job {
	pid_t pid;
	const struct pyrt *rt;
	uint64_t bias;
	struct ranges *rg;
	struct code_ent **e;
	size_t n;
};

static const struct boxed_limits read_limits = {
	.mem_bytes = 256ULL << 20,
	.cpu_seconds = 5,
	.wall_seconds = 3,
	.out_max = READ_CHUNK * (5 * sizeof(uint32_t) + 2 * PYCODE_STR_MAX * 4 +
				 2 + PYCODE_LINETABLE_MAX),
};

static int read_child(void *arg, FILE *out)
{
	const struct read_job *j = arg;
	struct pycode c;
	uint32_t h[5];
	size_t i;

	for (i = 0; i < j->n; i++) {
		memset(h, 0, sizeof(h));
		if (pycode_read_if(j->pid, j->rt, j->bias, j->e[i]->code, &c,
				   ranges_ok, j->rg)) {
			h[0] = errno ? (uint32_t)errno : EFAULT;
		} else {
			h[1] = (uint32_t)c.firstlineno;
			h[2] = strlen(c.qualname);
			h[3] = strlen(c.filename);
			h[4] = c.linetable_len;
		}
		if (fwrite(h, sizeof(h), 1, out) != 1 ||
		    (!h[0] && (fwrite(c.qualname, 1, h[2], out) != h[2] ||
			       fwrite(c.filename, 1, h[3], out) != h[3] ||
			       fwrite(c.linetable, 1, h[4], out) != h[4])))
			return -1;
		if (!h[0])
			pycode_free(&c);
	}
	return 0;
}

/* A string of len bytes at *at (within end), malloc'd; NULL if not there. */
static char *take_str(const char **at, const char *end, uint32_t len)
{
	char *s;

	if ((size_t)(end - *at) < len || !(s = malloc(len + 1)))
		return NULL;
	memcpy(s, *at, len);
	s[len] = '\0';
	*at += len;
	return s;
}

/* The child's answer for e[0..n) into their pycodes; false if it is short. */
static bool read_answer(const char *buf, size_t len, struct code_ent **e,
			size_t n)
{
	const char *at = buf, *end = buf + len;
	uint32_t h[5];
	size_t i;

	for (i = 0; i < n; i++) {
		struct pycode *c = &e[i]->c;

		if ((size_t)(end - at) < sizeof(h))
			return false;
		memcpy(h, at, sizeof(h));
		at += sizeof(h);
		if (h[0]) {
			e[i]->why = why_errno((int)h[0]);
			continue;
		}
		if (h[2] > 4 * PYCODE_STR_MAX || h[3] > 4 * PYCODE_STR_MAX ||
		    h[4] > PYCODE_LINETABLE_MAX)
			return false;
		c->firstlineno = (int32_t)h[1];
		c->qualname = take_str(&at, end, h[2]);
		c->filename = c->qualname ? take_str(&at, end, h[3]) : NULL;
		c->linetable = c->filename ?
			(uint8_t *)take_str(&at, end, h[4]) : NULL;
		c->linetable_len = h[4];
		if (!c->linetable) {
			pycode_free(c);
			e[i]->why = why_nomem;
			return (size_t)(end - at) >= h[4];
		}
		if (c->firstlineno != e[i]->first) {
			e[i]->why = why_reused;
			pycode_free(c);
		} else {
			e[i]->why = NULL;
		}
	}
	return true;
}

/* Read the n code objects of e (pending, of one process) mm maps. */
static void read_batch(struct pyframes *py, struct proc *p,
		       const struct cprof_mmap *mm, struct code_ent **e,
		       size_t n)
{
	struct cprof_file_id id = { 0 };
	struct ranges rg = { 0 };
	struct read_job job;
	const struct pyrt *rt;
	const char *why = NULL;
	char *buf, msg[160];
	size_t i, k, len;
	bool has_id;
	int pidfd;

	rt = interp_of(py, mm, &why);
	has_id = stream__mmap_file_id(mm, &id);
	pidfd = rt ? mapfile_pidfd(p->pid, has_id ? id.start_ns : 0) : -1;
	if (rt && pidfd < 0)
		why = errno == ESTALE ? why_other : why_gone;
	else if (pidfd >= 0 && !has_id)
		why = why_no_id;
	else if (pidfd >= 0 && !ranges_read(&rg, p->pid, mm->start, &id))
		why = why_not_there;
	if (pidfd >= 0 && why) {
		close(pidfd);
		pidfd = -1;
	}
	if (pidfd >= 0) {
		job = (struct read_job){
			.pid = p->pid, .rt = rt, .rg = &rg,
			.bias = mm->start - mm->pgoff - rt->text_delta,
		};
		for (i = 0; i < n; i += k) {
			k = n - i < READ_CHUNK ? n - i : READ_CHUNK;
			for (job.e = e + i, job.n = k; job.n; job.n--)
				job.e[job.n - 1]->why = why_slow;
			job.n = k;
			/* past the bound: the rest stays unread */
			if (py->bytes >= PYFRAMES_BYTES_MAX) {
				for (; job.n; job.n--)
					job.e[job.n - 1]->why = why_full;
				continue;
			}
			if (boxed__run(read_child, &job, &read_limits, NULL,
				       &buf, &len, msg, sizeof(msg)))
				continue;
			read_answer(buf, len, job.e, k);
			free(buf);
		}
		/* the pid was that process's throughout, else nothing holds */
		if (!mapfile_pidfd_alive(pidfd))
			why = why_gone;
		close(pidfd);
		free(rg.r);
	}
	for (i = 0; i < n; i++) {
		if (why) {
			pycode_free(&e[i]->c);
			e[i]->why = why;
		}
		if (!e[i]->why)
			code_named(py, p, e[i]);
	}
}

/* Is the stream this boot's?  Decided at its first sample. */
static bool live(struct pyframes *py, const struct profile *p)
{
	const struct cprof_header *h;

	if (py->live < 0) {
		h = profile__header(p);
		py->live = same_boot(h->start_realtime_ns, h->start_time_ns);
	}
	return py->live;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/*
 * Read what waits in p's queue, in one child per interpreter mapping
 * (entries a record named meanwhile are skipped; one whose mapping the
 * profile no longer finds waits for a mapping record).
 */
static void read_queue(struct pyframes *py, const struct profile *prof,
		       struct proc *p)
{
	const struct cprof_mmap *mm, *m;
	struct code_ent **q = p->queue, *e;
	size_t n = 0, i, k;

	for (i = 0; i < p->nqueue; i++)
		if (q[i]->why == why_queued)
			q[n++] = q[i];
	p->nqueue = 0;
	while (n) {
		e = q[0];
		mm = profile__find_mmap(prof, p->pid, e->text, e->time_ns);
		if (!mm) {
			e->why = why_pending;
			p->pending++;
			q[0] = q[--n];
			continue;
		}
		/* those of the same mapping to the front, read together */
		for (i = k = 1; i < n; i++) {
			m = profile__find_mmap(prof, p->pid, q[i]->text,
					       q[i]->time_ns);
			if (m == mm) {
				e = q[k];
				q[k++] = q[i];
				q[i] = e;
			}
		}
		read_batch(py, p, mm, q, k);
		memmove(q, q + k, (n - k) * sizeof(*q));
		n -= k;
	}
}

void pyframes__flush(struct pyframes *py, const struct profile *prof)
{
	struct proc *p;
	size_t i;

	if (!py)
		return;
	for (i = 0; i < py->nqpids; i++) {
		p = proc_of(py, py->qpids[i], false);
		if (p && p->nqueue)
			read_queue(py, prof, p);
	}
	py->nqpids = 0;
}

/* Queue the n new entries e of p; false (nothing queued) without memory. */
static bool queue(struct pyframes *py, struct proc *p, struct code_ent **e,
		  size_t n)
{
	size_t i;

	if (grow_array(&p->queue, &p->queue_alloc, p->nqueue + n,
		       sizeof(*p->queue)))
		return false;
	if (!p->nqueue) {
		if (grow_array(&py->qpids, &py->qpids_alloc, py->nqpids + 1,
			       sizeof(*py->qpids)))
			return false;
		py->qpids[py->nqpids++] = p->pid;
		if (py->nqpids == 1)
			py->queued_ns = mono_ns();
	}
	for (i = 0; i < n; i++) {
		e[i]->why = why_queued;
		p->queue[p->nqueue++] = e[i];
	}
	return true;
}

void pyframes__note_sample(struct pyframes *py, const struct profile *p,
			   const struct cprof_sample *smp)
{
	const struct cprof_pytrail *t = stream__sample_pytrail(smp);
	struct code_ent *todo[CPROF_MAX_DEPTH], key, *e;
	const struct cprof_mmap *mm;
	struct proc *proc;
	size_t n = 0;
	unsigned int i;

	if (!py || !read_on || !live(py, p))
		return;
	if (py->nqpids && mono_ns() - py->queued_ns >= READ_DELAY_NS)
		pyframes__flush(py, p);
	if (!t || !t->nr)
		return;
	proc = proc_of(py, smp->pid, true);
	if (!proc)
		return;
	for (i = 0; i < t->nr && i < CPROF_MAX_DEPTH; i++) {
		key.code = t->frame[i].code & ~(uint64_t)CPROF_PYFRAME_ENTRY;
		key.first = t->frame[i].firstlineno;
		if (htab_find(proc->codes, &key) ||
		    !(e = code_new(py, proc, &key, why_pending)))
			continue;
		e->text = t->text;
		e->time_ns = smp->time_ns;
		todo[n++] = e;
	}
	if (!n)
		return;
	mm = profile__find_mmap(p, smp->pid, t->text, smp->time_ns);
	if (!mm) {
		/* its record is on its way */
		proc->pending += n;
		return;
	}
	/* read with the others met soon after, or now without memory */
	if (!queue(py, proc, todo, n)) {
		read_batch(py, proc, mm, todo, n);
		return;
	}
	if (proc->nqueue >= READ_CHUNK)
		read_queue(py, p, proc);
}

void pyframes__note_code(struct pyframes *py, const struct cprof_pycode *rec)
{
	struct code_ent key = { .code = rec->code, .first = rec->firstlineno };
	struct pyrt rt = { 0 };
	struct code_ent *e;
	struct proc *p;

	if (!py || !pyrt_str_layout(rec->version, &rt))
		return;
	p = proc_of(py, rec->pid, true);
	if (!p)
		return;
	e = htab_find(p->codes, &key);
	/* read from the process already: that copy is whole */
	if (e && !e->why)
		return;
	if (!e && !(e = code_new(py, p, &key, why_not_read)))
		return;
	if (pycode_from_record(&rt, rec, &e->c))
		return;
	if (e->why == why_pending && p->pending)
		p->pending--;
	code_named(py, p, e);
}

struct pending_of {
	const struct cprof_mmap *mm;
	struct code_ent **e;
	size_t n, alloc;
};

static int collect_pending(void **slot, void *arg)
{
	struct code_ent *e = *slot;
	struct pending_of *po = arg;

	if (e->why != why_pending || e->text < po->mm->start ||
	    e->text >= po->mm->end)
		return 1;
	if (grow_array(&po->e, &po->alloc, po->n + 1, sizeof(*po->e)))
		return 0;
	po->e[po->n++] = e;
	return 1;
}

void pyframes__note_mmap(struct pyframes *py, const struct cprof_mmap *mm)
{
	struct pending_of po = { .mm = mm };
	struct proc *p;

	if (!py)
		return;
	p = proc_of(py, mm->pid, false);
	if (!p || !p->pending)
		return;
	htab_traverse_noresize(p->codes, collect_pending, &po);
	if (po.n) {
		read_batch(py, p, mm, po.e, po.n);
		p->pending -= po.n < p->pending ? po.n : p->pending;
	}
	free(po.e);
}

const struct pyframes_code *pyframes__get(const struct pyframes *py,
					  uint32_t pid, uint64_t code,
					  int firstlineno, const char **why)
{
	struct code_ent key = {
		.code = code & ~(uint64_t)CPROF_PYFRAME_ENTRY,
		.first = firstlineno,
	};
	struct proc pkey = { .pid = pid };
	const struct code_ent *e;
	const struct proc *p;

	p = py ? htab_find(py->procs, &pkey) : NULL;
	e = p ? htab_find(p->codes, &key) : NULL;
	/* named by its record, whatever the stream's boot */
	if (e && !e->why)
		return &e->view;
	if (!py || py->live < 0) {
		*why = why_not_read;
		return NULL;
	}
	if (!py->live) {
		*why = why_not_live;
		return NULL;
	}
	if (!e) {
		*why = py->full ? why_full : why_not_read;
		return NULL;
	}
	*why = e->why;
	return NULL;
}

int pyframes_code__line(const struct pyframes_code *c, int32_t instr)
{
	int line = pycode_line(c->linetable, c->linetable_len, c->firstlineno,
			       instr);

	return line > 0 ? line : 0;
}

void pyframes__drop_pid(struct pyframes *py, uint32_t pid)
{
	struct proc key = { .pid = pid }, *p;
	void **slot;

	if (!py)
		return;
	slot = htab_find_slot(py->procs, &key, NO_INSERT);
	if (!slot)
		return;
	p = *slot;
	py->entries -= p->entries;
	py->bytes -= p->bytes;
	htab_clear_slot(py->procs, slot);
}

void pyframes__counts(const struct pyframes *py, size_t *entries,
		      size_t *bytes)
{
	*entries = py ? py->entries : 0;
	*bytes = py ? py->bytes : 0;
}
