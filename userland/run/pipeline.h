/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * pipeline - what a profile travels through on its way to the aggregated
 * profile, owned in one place: the unwind-table loader, the debuginfod
 * queue, the module's profile (modprofile.h), the ingest reading its
 * stream, and the helpers that follow the stream (cgroup paths, Python
 * code objects, perf maps) and then name it (resolve.h's options, the
 * kernel symbols).  cprof-dump -i and -d run one profile through it,
 * --every one cut into windows, --http one per request.
 *
 * A profile's steps, in order: pipeline__begin(), [pipeline__load_tables(),
 * pipeline__start()], pipeline__open(), pipeline__read(),
 * pipeline__close(), pipeline__resolve_opts() for as long as the model is
 * built, pipeline__end().  pipeline__free() ends whatever is open.
 */
#ifndef CPROF_PIPELINE_H
#define CPROF_PIPELINE_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include "ingest/ingest.h"
#include "stream/modprofile.h"
#include "symbolize/resolve.h"

struct pipeline;

struct pipeline_opts {
	const char *proc_dir;	/* the module's files */
	bool unwind_tables;	/* give the module the programs' tables */
	/*
	 * Profile after profile (--http): the loader starts at once on the
	 * files of every process, and it and the queue live as long as the
	 * pipeline, the loader swept before each profile.  Else both serve
	 * one stream: they stop once it is read.
	 */
	bool serve;
	/*
	 * The tables of every program that runs at a profile's start are
	 * compiled in the background (a long run: --every, --http); else
	 * only those the cache holds are loaded, and what the profile
	 * samples is compiled once its mapping records name it.
	 */
	bool compile_running;
	/*
	 * The most seconds a profile waits at its END record for the
	 * tables its stream asked for (an answer is due); 0: ingest.h's
	 * default.
	 */
	double table_wait;
	bool jit;		/* read perf maps as the stream is read */
	/*
	 * Fill debuginfod's cache from a queue of the stream's build IDs
	 * (--http, --every: their answers read the cache only).
	 */
	bool debug_queue;
	/*
	 * Once a stream was read, one warning line each on the samples'
	 * stack copies left as the module walked them and on code where the
	 * tables stop a walk (-i, -d).
	 */
	bool warn_walks;
	/* for pipeline__resolve_opts() */
	bool symbolize;
	const char *kallsyms, *modules;
};

/*
 * With serve, the loader and the queue (if debug_queue and servers are to
 * be asked) started; o is copied.  NULL when out of memory (no message).
 */
struct pipeline *pipeline__new(const struct pipeline_opts *o);
/* End what is open, stop the loader and the queue, free; NULL-safe. */
void pipeline__free(struct pipeline *pl);

/*
 * A profile's own helpers, new (the cgroups and Python code of what ran
 * during it only).  0, or -1 when out of memory (no message).
 */
int pipeline__begin(struct pipeline *pl);
/* The profile is done with: all its pieces closed and freed. */
void pipeline__end(struct pipeline *pl);

/*
 * Before a profile: start the loader (unless kept from an earlier one)
 * and queue the tables of what pid (<= 0: every process) runs now, as
 * compile_running says, without waiting for them: the profile starts at
 * once, and the module copies the stacks the tables on their way will
 * complete.  Nothing without unwind_tables.
 */
void pipeline__load_tables(struct pipeline *pl, long pid);

/*
 * Start the module's profile (s's proc_dir is the options'), SIGINT and
 * SIGTERM held meanwhile; stopped at once if *stop (NULL: never) is
 * set by then.  0, or -1 with the errno in *err and one line in msg.
 */
int pipeline__start(struct pipeline *pl, const struct modprofile_settings *s,
		    const volatile sig_atomic_t *stop, int *err, char *msg,
		    size_t size);
/* Ask the module to end the profile started.  Async-signal-safe. */
void pipeline__stop(const struct pipeline *pl);

/*
 * Load the kernel symbols while the stream is read (not while a
 * profile runs: that would be in it).  0, or -1 when out of memory.
 */
int pipeline__load_ksyms(struct pipeline *pl);

/*
 * Read the stream on fd (name for messages; fd < 0: the profile
 * started) through an ingest that hands the stream to the pipeline's
 * helpers.  It is the pipeline's; NULL after one line saying why.
 */
struct ingest *pipeline__open(struct pipeline *pl, int fd, const char *name);
/* The name of the stream opened, for messages. */
const char *pipeline__name(const struct pipeline *pl);
/*
 * Read the stream opened to its end: ingest__run()'s value; if 0 and
 * prof is not NULL, the aggregated profile in *prof, the caller's.
 */
int pipeline__read(struct pipeline *pl, const struct ingest_ops *ops,
		   struct profile **prof);
/*
 * The stream was read: the warnings of warn_walks (if it was read
 * whole), the ingest and the module's profile closed, the queue and the
 * loader stopped unless serve.
 */
void pipeline__close(struct pipeline *pl);

/*
 * The options to name the profile with: the kernel symbols loading, if
 * any, are the caller's from now on (resolved__new() finishes them).  The
 * Python code objects of a stream still being read that wait to be read
 * (pyframes.h) are read first.
 */
void pipeline__resolve_opts(struct pipeline *pl, struct resolve_opts *ro);

/* While a stream is read for long: forget what was read of a gone pid. */
void pipeline__forget_pid(struct pipeline *pl, uint32_t pid);
/* ... and sweep the tables of programs deleted (TABLELOAD_SWEEP_S). */
void pipeline__sweep(struct pipeline *pl);

#endif /* CPROF_PIPELINE_H */
