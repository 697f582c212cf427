// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * safeopen - regular files only, resolved inside a root.  See safeopen.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "safeopen.h"

static int open_path(int rootfd, const char *path)
{
	struct open_how how = {
		.flags = O_PATH | O_CLOEXEC,
		/* symlinks are followed, but inside the root */
		.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
	};

	if (rootfd < 0)
		return open(path, O_PATH | O_CLOEXEC);
	/* no fallback without openat2 (Linux < 5.6): nothing is opened */
	return syscall(SYS_openat2, rootfd, path, &how, sizeof(how));
}

/* fstat() from the cached attributes: nothing asks a FUSE server */
static int cached_stat(int fd, struct stat *st, struct statx *out)
{
	struct statx sx;

	if (statx(fd, "", AT_EMPTY_PATH | AT_STATX_DONT_SYNC,
		  STATX_BASIC_STATS | STATX_BTIME, &sx))
		return -1;
	*out = sx;
	memset(st, 0, sizeof(*st));
	st->st_dev = makedev(sx.stx_dev_major, sx.stx_dev_minor);
	st->st_ino = sx.stx_ino;
	st->st_mode = sx.stx_mode;
	st->st_nlink = sx.stx_nlink;
	st->st_uid = sx.stx_uid;
	st->st_gid = sx.stx_gid;
	st->st_size = (off_t)sx.stx_size;
	st->st_blocks = (blkcnt_t)sx.stx_blocks;
	st->st_blksize = (blksize_t)sx.stx_blksize;
	st->st_atim.tv_sec = sx.stx_atime.tv_sec;
	st->st_atim.tv_nsec = sx.stx_atime.tv_nsec;
	st->st_mtim.tv_sec = sx.stx_mtime.tv_sec;
	st->st_mtim.tv_nsec = sx.stx_mtime.tv_nsec;
	st->st_ctim.tv_sec = sx.stx_ctime.tv_sec;
	st->st_ctim.tv_nsec = sx.stx_ctime.tv_nsec;
	return 0;
}

int safe_open(int rootfd, const char *path, struct stat *st)
{
	return safe_open_if(rootfd, path, st, NULL, NULL);
}

int safe_open_if(int rootfd, const char *path, struct stat *st,
		 bool (*want)(const struct statx *sx, const void *arg),
		 const void *arg)
{
	char self[40];
	struct statx sx;
	struct stat st2;
	int pfd, fd, err;

	pfd = open_path(rootfd, path);
	if (pfd < 0)
		return -1;
	if (cached_stat(pfd, st, &sx)) {
		err = errno;
		goto fail;
	}
	if (!S_ISREG(st->st_mode)) {
		err = SAFEOPEN_NOT_REGULAR;
		goto fail;
	}
	if (want && !want(&sx, arg)) {
		err = SAFEOPEN_NOT_WANTED;
		goto fail;
	}
	/* the O_PATH descriptor's inode itself, not the path again */
	snprintf(self, sizeof(self), "/proc/self/fd/%d", pfd);
	fd = open(self, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		err = errno;
		goto fail;
	}
	close(pfd);
	if (fstat(fd, &st2) || !S_ISREG(st2.st_mode) ||
	    st2.st_dev != st->st_dev || st2.st_ino != st->st_ino) {
		close(fd);
		errno = SAFEOPEN_NOT_REGULAR;
		return -1;
	}
	*st = st2;
	return fd;
fail:
	close(pfd);
	errno = err;
	return -1;
}

const char *safe_strerror(int err)
{
	return err == SAFEOPEN_NOT_REGULAR ? "not a regular file" :
	       strerror(err);
}
