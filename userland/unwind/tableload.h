/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * tableload - give the module the unwind tables of the programs it samples.
 */
#ifndef CPROF_TABLELOAD_H
#define CPROF_TABLELOAD_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "cprof_format.h"

struct tableload;
struct tablekeep;

struct tableload_stats {
	uint64_t loaded;	/* tables written to the module */
	uint64_t rows;		/* their rows */
	uint64_t no_cfi;	/* files without usable call frame information */
	uint64_t changed;	/* files written to while compiled: no table */
	uint64_t not_regular;	/* paths that were no regular file: not opened */
	uint64_t on_fuse;	/* mappings of files on FUSE: not opened */
	uint64_t removed;	/* tables of files deleted or replaced, removed */
	uint64_t forgotten;	/* files without a table no process maps now */
	uint64_t refused;	/* tables the module refused (unwind_mb, ...) */
	uint64_t too_large;	/* of those, tables larger than unwind_mb */
	uint64_t evicted;	/* tables the module evicted, forgotten */
	uint64_t reloaded;	/* of those, queued again: their file mapped */
	uint64_t cached;	/* tables read from the cache, not compiled */
	uint64_t preloaded;	/* cached tables loaded before any sample */
	uint64_t python;	/* of those loaded, CPython interpreters' */
};

/*
 * Keep compiled tables in dir (tablecache.h), for the loaders started from
 * now on: NULL, the default directory (unusable, say a read-only /var,
 * without a word); "", none (as before this is called).
 */
void tableload_set_cache(const char *dir);

/*
 * Give the module a CPython interpreter's layout with its file's table
 * (the default), or not (no Python frames), for the loaders started from
 * now on.
 */
void tableload_set_python(bool on);

/*
 * Open PROC_DIR/unwind and start the loader thread.  NULL (after a
 * warning) when the module takes no tables: stacks then use frame pointers
 * only.
 */
struct tableload *tableload__start(const char *proc_dir);

/*
 * Queue the executable file mappings of process pid (0: of every process)
 * as /proc/PID/maps lists them now, in the background: what a stream asks
 * for (tableload__note(), tableload__keep()) is loaded first.
 */
void tableload__scan(struct tableload *l, pid_t pid);

/*
 * The same, but only the tables the cache holds are loaded: a file not
 * cached is compiled once a mapping record names it (a short profile
 * compiles what it samples, not every program that runs).
 */
void tableload__scan_cached(struct tableload *l, pid_t pid);

/* How often the readers that run for long (--http, --every) sweep. */
#define TABLELOAD_SWEEP_S	60.0

/*
 * Queue a sweep, unless one was queued less than interval seconds ago:
 * the tables this loader wrote whose files no process maps any more and
 * that are gone from their paths or replaced there (a deleted program, an
 * upgraded library) are removed from the module, so that weeks of
 * upgrades do not fill unwind_mb; so are the tables an earlier run left
 * in the module whose files no process maps (their paths are not known).
 * Files that gave no table and that no process maps are forgotten (a
 * file mapped again is compiled again), so that memory follows what
 * runs; so are the tables the module evicted to make room for others
 * (least recently used first): a file whose table was evicted is
 * compiled again at once if a process maps it (twice a file at most, so
 * that tables that keep evicting each other are not compiled every
 * minute), and whenever a mapping record names it again.
 */
void tableload__sweep(struct tableload *l, double interval);

/* Queue the file of a mapping record from the stream. */
void tableload__note(struct tableload *l, const struct cprof_mmap *m);

/*
 * Queue the file of a mapping record whose table the module held before
 * this loader started, to be kept for walking stack copies only
 * (tableload__kept()): read from the cache, else compiled.
 */
void tableload__keep(struct tableload *l, const struct cprof_mmap *m);

/*
 * Wait until everything queued so far is loaded (or failed), until *stop
 * is set (by a signal handler, another thread), or for timeout seconds
 * (< 0: no limit).  Whether all was loaded; what is not goes on loading.
 */
bool tableload__wait(struct tableload *l, const volatile sig_atomic_t *stop,
		     double timeout);

/*
 * The same for what a stream asked for (tableload__note(),
 * tableload__keep()) only, whatever the background holds.
 */
bool tableload__wait_asked(struct tableload *l,
			   const volatile sig_atomic_t *stop, double timeout);

/* Is nothing a stream asked for queued or loading now?  NULL is. */
bool tableload__asked_idle(struct tableload *l);

/*
 * --load-unwind-tables: start the loader on proc_dir unless *l holds one,
 * queue the files pid maps (0: every process) and wait for them as
 * tableload__wait() does.  Whether all was loaded; *l stays NULL (a
 * warning said why) if the module takes no tables.
 */
bool tableload__prime(struct tableload **l, const char *proc_dir, pid_t pid,
		      const volatile sig_atomic_t *stop, double timeout);

/*
 * One warning line naming the files whose tables have code where a user
 * stack walk stops (cfi.h's enum cfi_stop), with the bytes of code by
 * rule: the CFA shapes the module does not follow; with all, also signal
 * frames and return addresses not at CFA - 8 (longjmp, signal
 * trampolines: code every C library has).  Nothing if there are none;
 * NULL is fine.
 */
void tableload__report_stops(struct tableload *l, bool all);

/* Did the module hold tables when l started?  NULL did not. */
bool tableload__module_had_tables(const struct tableload *l);

/*
 * The tables this loader wrote, kept for walking stack copies
 * (tablekeep.h); NULL for NULL l.  Freed by tableload__stop().
 */
struct tablekeep *tableload__kept(struct tableload *l);

/* Stop the thread (the queue is dropped) and free; NULL is fine. */
void tableload__stop(struct tableload *l, struct tableload_stats *stats);

#endif /* CPROF_TABLELOAD_H */
