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

#include "lib/safeopen.h"

/* a busy machine renames often; each try is one path walk */
#define SAFEOPEN_EAGAIN_TRIES 64

static int open_path(int rootfd, const char *path, bool nofollow)
{
	struct open_how how = {
		.flags = O_PATH | O_CLOEXEC | (nofollow ? O_NOFOLLOW : 0),
		/* symlinks are followed, but inside the root */
		.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
	};

	if (rootfd < 0)
		return open(path, O_PATH | O_CLOEXEC |
			    (nofollow ? O_NOFOLLOW : 0));
	/*
	 * No fallback without openat2 (Linux < 5.6): nothing is opened.  A
	 * ".." resolved in the root fails with EAGAIN when anything on the
	 * machine was renamed or mounted meanwhile (openat2(2)): tried again,
	 * a bounded number of times.
	 */
	for (int tries = 0;; tries++) {
		int fd = syscall(SYS_openat2, rootfd, path, &how, sizeof(how));

		if (fd >= 0 || errno != EAGAIN || tries == SAFEOPEN_EAGAIN_TRIES)
			return fd;
	}
}

int safe_open(int rootfd, const char *path, struct stat *st)
{
	return safe_open_if(rootfd, path, st, NULL, NULL);
}

static int open_checked(int pfd, struct stat *st,
			bool (*want)(const struct statx *sx, const void *arg),
			const void *arg);

int safe_open_if(int rootfd, const char *path, struct stat *st,
		 bool (*want)(const struct statx *sx, const void *arg),
		 const void *arg)
{
	int pfd = open_path(rootfd, path, false);

	return pfd < 0 ? -1 : open_checked(pfd, st, want, arg);
}

int safe_open_nofollow_if(int rootfd, const char *path, struct stat *st,
			  bool (*want)(const struct statx *sx,
				       const void *arg),
			  const void *arg)
{
	int pfd = open_path(rootfd, path, true);

	return pfd < 0 ? -1 : open_checked(pfd, st, want, arg);
}

/* pfd (O_PATH, closed here) checked and reopened for reading. */
static int open_checked(int pfd, struct stat *st,
			bool (*want)(const struct statx *sx, const void *arg),
			const void *arg)
{
	char self[40];
	struct statx sx;
	int fd, err;

	/* from the cached attributes: nothing asks a FUSE server */
	if (statx(pfd, "", AT_EMPTY_PATH | AT_STATX_DONT_SYNC,
		  STATX_BASIC_STATS | STATX_BTIME, &sx)) {
		err = errno;
		goto fail;
	}
	if (!S_ISREG(sx.stx_mode)) {
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
	if (fstat(fd, st) || !S_ISREG(st->st_mode) ||
	    st->st_dev != makedev(sx.stx_dev_major, sx.stx_dev_minor) ||
	    st->st_ino != sx.stx_ino) {
		close(fd);
		errno = SAFEOPEN_NOT_REGULAR;
		return -1;
	}
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
