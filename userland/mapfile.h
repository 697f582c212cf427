/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * mapfile - the file a mapping record maps, opened for symbolizing.
 *
 * A record names its file by path as the mapping process sees it; a
 * process in another mount namespace or under another root (a container)
 * has other files at the same paths, and a path's file may have been
 * replaced since.  The module records the mapped file's device and inode
 * (struct cprof_file_id), so the file is taken only if it is that one:
 *
 *   1. at the record's path here, if it is the very file;
 *   2. else through the process while it lives, /proc/PID/map_files/S-E
 *      (the mapped file itself, wherever it is and even if unlinked),
 *      again only if it is the very file: a reused pid's mapping is not;
 *   3. else nothing: the frames stay addresses, and why says so.  Never
 *      the host's file of the same path and build ID: a build ID is a
 *      claim any file can make.
 *
 * A record without an identity (a stream from an older module; a file the
 * kernel could not stat) is read at its path, as are all of a stream that
 * may come from another machine (-i), where no identity can match: the
 * build ID check is then the only one.  Files are opened by safe_open().
 */
#ifndef CPROF_MAPFILE_H
#define CPROF_MAPFILE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>

struct mapfile {
	const char *path;	/* the record's */
	uint32_t pid;		/* the mapping process, 0 none */
	uint64_t start, end;	/* its mapping */
	bool has_id;		/* dev and ino are the mapped file's */
	uint32_t dev;		/* as st_dev */
	uint64_t ino;
	/*
	 * The stream is this machine's, read now (-d, --every, --http): a
	 * file whose identity is known is taken only if it matches.  Unset
	 * (-i): the path's file is taken when no match is found.
	 */
	bool strict;
};

/* A file named by its path alone, no process's mapping. */
#define MAPFILE_PATH(p)	(&(struct mapfile){ .path = (p) })

/*
 * Open m's file read-only.  The descriptor (st filled) or -1 with *why
 * saying what was missing, one phrase: "not found", "the file at its path
 * is not the mapped one and the process is gone", ...  via (may be NULL)
 * says where it was found: "path" or "process".
 */
int mapfile_open(const struct mapfile *m, struct stat *st, const char **why,
		 const char **via);

/*
 * Is why (from mapfile_open()) a file refused for not being the one
 * mapped, which a summary names before any count?
 */
bool mapfile_refused(const char *why);

/* Is st the file m maps?  True when m has no identity. */
bool mapfile_is(const struct mapfile *m, const struct stat *st);

#endif /* CPROF_MAPFILE_H */
