/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * procview - what a profiled process sees of the file system: its view.
 *
 * A process in another mount namespace or under another root (a
 * container, a chroot) has other files at the paths its mappings name
 * than cprof-dump has.  A view is a mount namespace (the inode of
 * /proc/PID/ns/mnt) and a root (the directory /proc/PID/root is); the
 * host's is cprof-dump's own.  Each mapping record's view is taken when
 * the stream shows it (procviews__note(), from ingest.c), while its
 * process most likely runs: by the time the profile is symbolized a
 * short-lived process is gone, and with it the way into its files.
 *
 * Views get small ids, 0 being the host's (and that of a process gone
 * before its record arrived: there is nothing else to read it by).  The
 * symbolizer's cache and the resolver's mappings are keyed by that id, so
 * that what one view shows names no other view's frames: a user in a
 * mount namespace of their own can put any file, carrying any build ID,
 * at any path there.
 *
 * Another view's file is read through its process, never at the host's
 * path: the very file mapped (/proc/PID/map_files/START-END), held open
 * from the moment its record arrived (at most PROCVIEW_FILES_MAX files,
 * and a quarter of the descriptors this process may open), else, while
 * the process still lives in that view, the mapped file or its path
 * resolved inside its root (safeopen.h).
 *
 * A stream read from a file (-i) has no views: nothing is noted, and
 * every process is read as the host's.
 */
#ifndef CPROF_PROCVIEW_H
#define CPROF_PROCVIEW_H

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

/* Files of other views held open at most (procviews__new()'s default). */
#define PROCVIEW_FILES_MAX	256

/* Why another view's file names nothing when it cannot be read. */
#define PROCVIEW_UNREAD		"another mount namespace; its file could not be read"

struct cprof_mmap;
struct procviews;

/*
 * The views of one stream, holding at most max_files files of other views
 * open (0: none: they are then read only while their processes live).
 * NULL on allocation failure, or if cprof-dump's own view cannot be
 * known (no /proc): then every process is read as the host's.
 */
struct procviews *procviews__new(size_t max_files);
/* Closes what it holds; NULL-safe. */
void procviews__free(struct procviews *v);

/*
 * A mapping record as it arrives: the view of its process now, and if
 * that is not the host's, the mapped file held open (within the bound).
 * 0, or -1 out of memory.  NULL-safe.
 */
int procviews__note(struct procviews *v, const struct cprof_mmap *m);

/* The view m was seen in: 0 the host's (or not known), else its id. */
unsigned int procviews__view(const struct procviews *v,
			     const struct cprof_mmap *m);

/*
 * The file of m, seen in another view, as its process saw it: a
 * descriptor for reading (the caller's) and *st; *root gets the root of
 * that process (an O_PATH descriptor, the caller's), or -1 if it no
 * longer lives in that view (its debug files are then not looked for
 * there).  -1 with *why (PROCVIEW_UNREAD) when the file cannot be had;
 * never the host's file at that path.
 */
int procviews__open(const struct procviews *v, const struct cprof_mmap *m,
		    struct stat *st, int *root, const char **why);

/*
 * Forget the records of pid (a process that exited, in a run of weeks),
 * closing the files no other record holds.  NULL-safe.
 */
void procviews__forget(struct procviews *v, uint32_t pid);

/*
 * The descriptors v holds, for a child process to keep open (boxed.h):
 * *n of them, -1 for a free slot.  The child may renumber them in place.
 */
int *procviews__fds(struct procviews *v, size_t *n);

#endif /* CPROF_PROCVIEW_H */
