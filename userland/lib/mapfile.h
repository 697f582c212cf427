/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * mapfile - the file a mapping record maps, opened for symbolizing.
 *
 * A record names its file by path as the mapping process sees it; a
 * process in another mount namespace or under another root (a container)
 * has other files at the same paths, and a path's file may have been
 * replaced since.  The module records the mapped file's device, inode and
 * birth time (struct cprof_file_id: a recycled inode number is another
 * file, born later) and when the mapping process started, so a file is
 * taken only if it is that one:
 *
 *   1. at the record's path here, if it is the very file (a FIFO or
 *      another file there does not stop 2.);
 *   2. else through the process, /proc/PID/map_files/START-END (the mapped
 *      file itself, wherever it is and even if unlinked), if the pid is
 *      still the process of the record (its start time; a pidfd holds it
 *      while the file is opened) and again only if it is the very file.
 *      Not on FUSE (the mapped file's own file system, under any overlay):
 *      a user's FUSE server could hold the open for ever;
 *   3. else nothing: the frames stay addresses, and why says so.  Never
 *      the host's file of the same path and build ID: a build ID is a
 *      claim any file can make.
 *
 * Whether a file is the one is decided from its cached attributes, before
 * it is opened for reading (safe_open_if()): another file is never opened.
 * A record without an identity (a stream from an older module; a file the
 * kernel could not stat) is read at its path, as is every file of a stream
 * that may come from another machine or boot (not strict), where neither an
 * identity nor a pid means anything here: the build ID check is then the
 * only one.  Files are opened by safe_open_if().
 */
#ifndef CPROF_MAPFILE_H
#define CPROF_MAPFILE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>

#include "cprof_format.h"

struct mapfile {
	const char *path;	/* the record's */
	uint32_t pid;		/* the mapping process, 0 none */
	uint64_t start, end;	/* its mapping */
	bool has_id;		/* id is the mapped file's */
	struct cprof_file_id id;
	/*
	 * The stream is this boot's: a file whose identity is known is
	 * taken only if it matches, and the process may be asked.  Unset:
	 * the path's file, whatever it is.
	 */
	bool strict;
};

/* A file named by its path alone, no process's mapping. */
#define MAPFILE_PATH(p)	(&(struct mapfile){ .path = (p) })

/*
 * Open m's file read-only.  The descriptor (st filled) or -1 with *why
 * saying what was missing, one phrase: "not found", "the file at its path
 * is another ... and the process is gone", ...  via (may be NULL) says
 * where it was found: "path" or "process".
 */
int mapfile_open(const struct mapfile *m, struct stat *st, const char **why,
		 const char **via);

/*
 * Is why (from mapfile_open()) a file refused for not being the one
 * mapped, or not read for its file system, which a summary names before
 * any count?
 */
bool mapfile_refused(const char *why);

/* Is there a process pid (running, or not yet reaped)? */
bool mapfile_alive(uint32_t pid);

/*
 * A pidfd of pid if it is the process that started at start_ns
 * (CLOCK_BOOTTIME, as struct cprof_file_id records it; 0: unknown, any
 * process of that pid); -1 with errno ESRCH (no such process) or ESTALE
 * (the pid is another process's now).  While mapfile_pidfd_alive() says
 * so, the pid is still that process's: what was read through the pid in
 * between (/proc/PID/..., process_vm_readv()) was that process's.
 */
int mapfile_pidfd(uint32_t pid, uint64_t start_ns);
bool mapfile_pidfd_alive(int pidfd);

/*
 * Order of the files a and b name (device, inode, birth time): 0 for the
 * same file, whichever process maps it.
 */
int mapfile_id_cmp(const struct cprof_file_id *a,
		   const struct cprof_file_id *b);

#endif /* CPROF_MAPFILE_H */
