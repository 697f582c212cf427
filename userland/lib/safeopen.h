/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * safeopen - open a file named by someone else the way an unprivileged
 * reader would meet it: cprof-dump runs as root, and the paths it reads
 * (a mapping's file, a binary's debug file, a path inside a container) are
 * chosen by the users whose programs run.
 *
 * Only a regular file is ever opened: the path is first opened with
 * O_PATH (which runs no driver's open and blocks on no FIFO), checked with
 * fstat(), and only then reopened for reading through /proc/self/fd.  A
 * FIFO, device, socket or directory is refused before anything reads it.
 * With a root directory the path is resolved inside it (openat2's
 * RESOLVE_IN_ROOT): "..", absolute symlinks and magic links cannot leave it.
 */
#ifndef CPROF_SAFEOPEN_H
#define CPROF_SAFEOPEN_H

#include <errno.h>
#include <stdbool.h>
#include <sys/stat.h>

/* errno of a path that is there but is not a regular file */
#define SAFEOPEN_NOT_REGULAR	EMEDIUMTYPE

/* errno of a file that want() refused */
#define SAFEOPEN_NOT_WANTED	ENOTUNIQ

/*
 * Open path for reading (O_RDONLY | O_CLOEXEC), relative to and inside
 * rootfd if rootfd >= 0 (an O_PATH or O_DIRECTORY descriptor of the root),
 * else as the path says.  Fills *st when it opens.  -1 with errno set:
 * ENOENT and the like, or SAFEOPEN_NOT_REGULAR.
 */
int safe_open(int rootfd, const char *path, struct stat *st);

/*
 * The same, opened only if want(sx, arg) accepts the file: sx as its file
 * system has it cached (statx() STATX_BASIC_STATS | STATX_BTIME,
 * AT_STATX_DONT_SYNC: a FUSE server or a network file system is not
 * asked), before anything opens it for reading, which runs its file
 * system's open.  -1 with errno SAFEOPEN_NOT_WANTED if refused.
 */
struct statx;
int safe_open_if(int rootfd, const char *path, struct stat *st,
		 bool (*want)(const struct statx *sx, const void *arg),
		 const void *arg);

/*
 * safe_open_if() of a path whose last component is not followed if it is a
 * symlink (a file in a directory anyone may write, such as /tmp, where a
 * symlink would point root's reader anywhere): a symlink there is refused
 * as SAFEOPEN_NOT_REGULAR.
 */
int safe_open_nofollow_if(int rootfd, const char *path, struct stat *st,
			  bool (*want)(const struct statx *sx,
				       const void *arg),
			  const void *arg);

/* strerror() that names SAFEOPEN_NOT_REGULAR "not a regular file". */
const char *safe_strerror(int err);

#endif /* CPROF_SAFEOPEN_H */
