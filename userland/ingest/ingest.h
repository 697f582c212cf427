/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * ingest - read a cprof stream into a profile: the one loop every reader
 * of the stream runs (cprof-dump -i and -d, --every, --http, and the unit
 * and fuzz pipelines).
 *
 * Each record is checked by stream.c, added to the stream's profile (or
 * handed to the reader's own record function), and shown to the helpers
 * that follow a live stream: the unwind-table loader is given each
 * mapping's file (a program that started during the profile), the cgroup
 * resolver each sample's cgroup id (looked up while the cgroup exists),
 * a debuginfod queue (if given) each mapping's build ID, the Python frames'
 * reader (if given) each sample's Python frames and each mapping (read
 * while their processes run), the perf maps' reader (if given) each
 * sample (a map read again when its JIT code is not in it).
 */
#ifndef CPROF_INGEST_H
#define CPROF_INGEST_H

#include "stream/cgroups.h"
#include "symbolize/debugfetch.h"
#include "symbolize/jitmap.h"
#include "stream/profile.h"
#include "python/pyframes.h"
#include "unwind/tableload.h"

struct ingest;

/* What a reader does beside adding records to the stream's profile. */
struct ingest_ops {
	/*
	 * Instead of profile__add(p, rec), p being the stream's profile:
	 * a reader that cuts the stream into profiles of its own.  0, or
	 * non-zero to end ingest__run() with that value (after one line
	 * saying why, if it is an error).  NULL: profile__add().
	 */
	int (*record)(void *arg, struct profile *p, const struct cprof_rec *rec);
	/* After each record; non-zero ends ingest__run() with that value. */
	int (*after)(void *arg, const struct cprof_rec *rec);
	/*
	 * While no record arrives: called when a read is interrupted by a
	 * signal (stream__on_interrupt()); non-zero ends ingest__run() with
	 * -1.  NULL: the read is retried.
	 */
	int (*idle)(void *arg);
	void *arg;
};

/*
 * Read fd's stream header (name is used in messages and must outlive the
 * ingest) and make its profile.  unw and cg follow the stream (each may be
 * NULL).  NULL after one line on stderr saying why.
 */
struct ingest *ingest__open(int fd, const char *name, struct tableload *unw,
			    struct cgroups *cg);
/* Queue each mapping's build ID to q (NULL: none) from now on. */
void ingest__fetch_debug(struct ingest *in, struct debugfetch_queue *q);

/*
 * Read the code objects of the samples' Python frames into py (NULL:
 * none) from now on, as they arrive, while their processes run.
 */
void ingest__python(struct ingest *in, struct pyframes *py);

/* Read the perf maps of the samples' JIT code into jit (NULL: none) as they grow. */
void ingest__jit(struct ingest *in, struct jitmaps *jit);
/* fd is the module's profile: see stream__from_module(). */
void ingest__from_module(struct ingest *in);

/*
 * At the END record, wait up to seconds (default 5) for the loader to
 * finish the tables that held samples' stack copies wait for.
 */
void ingest__table_wait(struct ingest *in, double seconds);

/* NULL-safe; fd is not closed, a profile taken is not freed. */
void ingest__close(struct ingest *in);

/*
 * Read records until the END record and the end of the input.  0 then; -1
 * after one line on stderr saying why (a bad stream, out of memory); or
 * the non-zero value an op returned.  ops may be NULL.
 */
int ingest__run(struct ingest *in, const struct ingest_ops *ops);

/* What became of the samples that came with a stack copy. */
struct ingest_copies {
	uint64_t completed;	/* walked to the outermost frame with it */
	uint64_t short_copy;	/* left: the copy ended first */
	uint64_t no_table;	/* left: a table the module has is not here */
	uint64_t other;		/* left: a bad frame, or no better a walk */
	uint64_t not_held;	/* left: past the copies' memory bound */
};

const struct ingest_copies *ingest__copies(const struct ingest *in);

/*
 * Does in hold a sample taken before time_ns, its stack copy waiting for
 * tables (up to 30 s)?  A reader cutting the stream by time waits for it.
 */
bool ingest__holds_before(const struct ingest *in, uint64_t time_ns);
/* One warning line if some were left as the module walked them. */
void ingest_copies__warn(const struct ingest_copies *c);

/* The stream's header, owned by in. */
const struct cprof_header *ingest__header(const struct ingest *in);
/* The stream's profile, owned by in until ingest__take(). */
struct profile *ingest__profile(const struct ingest *in);
/* The stream's profile, now the caller's to free. */
struct profile *ingest__take(struct ingest *in);

#endif /* CPROF_INGEST_H */
