/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * unwload - give the module the unwind tables of the programs it samples.
 */
#ifndef CPROF_UNWLOAD_H
#define CPROF_UNWLOAD_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "cprof_format.h"

struct unwload;

struct unwload_stats {
	uint64_t loaded;	/* tables written to the module */
	uint64_t rows;		/* their rows */
	uint64_t no_cfi;	/* files without usable call frame information */
	uint64_t changed;	/* files written to while compiled: no table */
	uint64_t not_regular;	/* paths that were no regular file: not opened */
	uint64_t removed;	/* tables of files deleted or replaced, removed */
	uint64_t forgotten;	/* files without a table no process maps now */
	uint64_t refused;	/* tables the module refused (unwind_mb, ...) */
};

/*
 * Open PROC_DIR/unwind and start the loader thread.  NULL (after a
 * warning) when the module takes no tables: stacks then use frame pointers
 * only.
 */
struct unwload *unwload__start(const char *proc_dir);

/*
 * Queue the executable file mappings of process pid (0: of every process)
 * as /proc/PID/maps lists them now.
 */
void unwload__scan(struct unwload *l, pid_t pid);

/*
 * Queue a sweep, unless one was queued less than interval seconds ago:
 * the tables this loader wrote whose files no process maps any more and
 * that are gone from their paths or replaced there (a deleted program, an
 * upgraded library) are removed from the module, so that weeks of
 * upgrades do not fill unwind_mb; so are the tables an earlier run left
 * in the module whose files no process maps (their paths are not known).
 * Files that gave no table and that no process maps are forgotten (a
 * file mapped again is compiled again), so that memory follows what
 * runs.  A table refused for want of room sweeps at once and is tried
 * again.
 */
void unwload__sweep(struct unwload *l, double interval);

/* Queue the file of a mapping record from the stream. */
void unwload__note(struct unwload *l, const struct cprof_mmap *m);

/*
 * Wait until everything queued so far is loaded (or failed), until *stop
 * is set (by a signal handler, another thread), or for timeout seconds
 * (< 0: no limit).  Whether all was loaded; what is not goes on loading.
 */
bool unwload__wait(struct unwload *l, const volatile sig_atomic_t *stop,
		   double timeout);

/*
 * What every live reader does before its profile: start the loader on
 * proc_dir unless *l holds one (a server keeps its loader, and what it
 * compiled, from request to request), queue the files pid maps (0: every
 * process) and wait for them as unwload__wait() does.  Whether all was
 * loaded; *l stays NULL (a warning said why) if the module takes no
 * tables.
 */
bool unwload__prime(struct unwload **l, const char *proc_dir, pid_t pid,
		    const volatile sig_atomic_t *stop, double timeout);

/* Stop the thread (the queue is dropped) and free; NULL is fine. */
void unwload__stop(struct unwload *l, struct unwload_stats *stats);

#endif /* CPROF_UNWLOAD_H */
