// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * safeopen - regular files only, resolved inside a root.  See safeopen.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
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

int safe_open(int rootfd, const char *path, struct stat *st)
{
	char self[40];
	struct stat st2;
	int pfd, fd, err;

	pfd = open_path(rootfd, path);
	if (pfd < 0)
		return -1;
	if (fstat(pfd, st)) {
		err = errno;
		goto fail;
	}
	if (!S_ISREG(st->st_mode)) {
		err = SAFEOPEN_NOT_REGULAR;
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
