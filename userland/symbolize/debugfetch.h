/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * debugfetch - debug files fetched by build ID from the debuginfod servers
 * of DEBUGINFOD_URLS, through libdebuginfod, whose cache keeps them: a
 * later run finds them there without asking a server.
 *
 * One time budget for the whole run, however many files are asked for, so
 * that a slow or silent server costs a profile at most that long
 * (libdebuginfod's own timeout is 90 s a file).  libdebuginfod calls back
 * about once a second while it waits, which is when the budget is
 * checked: a run waits at most about a second past it.  Once it is spent,
 * no server is asked any more; the cache still is.  A budget of 0 asks the
 * cache only.  These functions are for one thread at a time (the
 * symbolizer's).
 *
 * A server (--http) or --every never waits on a server inside a request
 * or a window: those symbolize with the cache only, and a queue fills the
 * cache in the background, from its own thread, with the debug file of
 * each build ID the stream's mappings name, once (a file a server does
 * not have is not asked for again; libdebuginfod also remembers misses for
 * a while).  A build ID first seen in a request's profile is named from
 * the next request on.
 */
#ifndef CPROF_DEBUGFETCH_H
#define CPROF_DEBUGFETCH_H

#include <stdbool.h>

/* The default budget of a run, in seconds. */
#define DEBUGFETCH_SECONDS_DEFAULT	5
#define DEBUGFETCH_SECONDS_MAX		3600
/* root's cache, unless DEBUGINFOD_CACHE_PATH names another */
#define DEBUGFETCH_CACHE_DIR		"/var/cache/cprof-dump/debuginfod"
/* DEBUGINFOD_MAXSIZE unless set: the largest file downloaded (bytes) */
#define DEBUGFETCH_FILE_MAX		"2147483648"
/*
 * Downloads stop when less than this is free where the cache is: 64 MiB
 * and 5 % of that file system (a small /tmp is no reason to stop).
 */
#define DEBUGFETCH_FREE_MIN		(64ULL << 20)
#define DEBUGFETCH_FREE_PERCENT		5

struct debugfetch_stats {
	unsigned int found;	/* from a server or the cache */
	unsigned int missing;	/* no server had it */
	unsigned int failed;	/* another error (a refused connection...) */
	unsigned int cut;	/* a server took longer than the budget left */
	unsigned int unasked;	/* the budget was spent: the cache only */
	double seconds;		/* spent waiting on servers */
};

/*
 * Once, before anything is fetched, if servers are to be asked:
 * DEBUGINFOD_MAXSIZE, and for root a cache only root may write
 * (DEBUGFETCH_CACHE_DIR) unless DEBUGINFOD_CACHE_PATH names one.  If
 * that cannot be, one warning line, and no server is asked.
 */
void debugfetch_setup(void);

/* Servers to ask?  (DEBUGINFOD_URLS is set and not empty.) */
bool debugfetch_enabled(void);

/* The budget of the rest of the run, in seconds; 0: the cache only. */
void debugfetch_set_budget(double seconds);

/*
 * The cache only, read without libdebuginfod (no server, no thread, no
 * network library in a forked child), and no summary: an --http answer
 * or --every window.
 */
void debugfetch_cache_only(void);

/*
 * The debug file of a build ID: a descriptor, and in *path its name
 * (malloc'd), or -1.  The file is whatever a server sent: check it is the
 * binary's before use.
 */
int debugfetch_find(const unsigned char *build_id, int len, char **path);

void debugfetch_get_stats(struct debugfetch_stats *st);

/*
 * One warning line if any debug file could not be fetched (how many, and
 * why: not on the servers, or the budget), e.g.
 *   debuginfod: 2 debug files fetched or cached; 3 not asked: the budget
 *   was spent, 5.2 s of a 5 s budget (the frames of the others keep ...)
 */
void debugfetch_summary(void);

struct cprof_mmap;
struct debugfetch_queue;

/* Longest wait on one file of the queue, in seconds. */
#define DEBUGFETCH_QUEUE_FILE_SECONDS	60
/* Build IDs a queue remembers; past that, it forgets them all. */
#define DEBUGFETCH_QUEUE_MAX		100000
/* Build IDs waiting at most; more are dropped (and come again). */
#define DEBUGFETCH_QUEUE_PENDING	1024

/*
 * Start the queue's thread; NULL when there are no servers to ask, or
 * the budget is 0 (the cache only).
 */
struct debugfetch_queue *debugfetch_queue__start(void);
/* Queue the debug file of a mapping record's build ID; NULL-safe. */
void debugfetch_queue__note(struct debugfetch_queue *q,
			    const struct cprof_mmap *m);
/* Cut the fetch under way, stop the thread and free; NULL-safe. */
void debugfetch_queue__stop(struct debugfetch_queue *q);

#endif /* CPROF_DEBUGFETCH_H */
