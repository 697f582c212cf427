// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * mapfile - the very file a mapping maps.  See mapfile.h.
 */
#include <errno.h>
#include <inttypes.h>
#include <linux/magic.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "mapfile.h"
#include "safeopen.h"

static const char other_gone[] =
	"the file at its path is another (another mount namespace, or replaced) and the process is gone";
static const char none_gone[] =
	"not found at its path, and the process is gone";
static const char other_live[] =
	"neither the file at its path nor the process's mapping is the file mapped";
static const char on_fuse[] =
	"on FUSE, not at its path: not read through the process";

bool mapfile_refused(const char *why)
{
	return why && (!strcmp(why, other_gone) || !strcmp(why, other_live) ||
		       !strcmp(why, on_fuse));
}

bool mapfile_is(const struct mapfile *m, const struct statx *sx)
{
	if (!m->has_id || !m->strict)
		return true;
	if ((uint32_t)makedev(sx->stx_dev_major, sx->stx_dev_minor) !=
	    m->id.dev || sx->stx_ino != m->id.ino)
		return false;
	/* no birth time recorded: the file system keeps none */
	return !m->id.btime_ns ||
	       ((sx->stx_mask & STATX_BTIME) &&
		(int64_t)sx->stx_btime.tv_sec * 1000000000 +
		sx->stx_btime.tv_nsec == m->id.btime_ns);
}

static bool want(const struct statx *sx, const void *arg)
{
	return mapfile_is(arg, sx);
}

bool mapfile_alive(uint32_t pid)
{
	return pid && pid <= INT32_MAX &&
	       (kill((pid_t)pid, 0) == 0 || errno == EPERM);
}

/* The mapping through its process, if it still maps the very file. */
static int open_through_process(const struct mapfile *m, struct stat *st)
{
	char path[80];

	snprintf(path, sizeof(path), "/proc/%" PRIu32 "/map_files/%" PRIx64
		 "-%" PRIx64, m->pid, m->start, m->end);
	return safe_open_if(-1, path, st, want, m);
}

int mapfile_open(const struct mapfile *m, struct stat *st, const char **why,
		 const char **via)
{
	int fd, err;
	bool other;

	fd = safe_open_if(-1, m->path, st, want, m);
	if (fd >= 0) {
		if (via)
			*via = "path";
		return fd;
	}
	err = errno;
	if (!m->has_id || !m->strict || err == SAFEOPEN_NOT_REGULAR) {
		*why = err == ENOENT || err == ENOTDIR ? "not found" :
		       safe_strerror(err);
		return -1;
	}
	other = err == SAFEOPEN_NOT_WANTED;
	if (m->id.fs_magic == FUSE_SUPER_MAGIC) {
		*why = on_fuse;
		return -1;
	}
	if (m->pid) {
		fd = open_through_process(m, st);
		if (fd >= 0) {
			if (via)
				*via = "process";
			return fd;
		}
		if (errno == SAFEOPEN_NOT_REGULAR) {
			*why = safe_strerror(errno);
			return -1;
		}
	}
	if (mapfile_alive(m->pid))
		*why = other_live;
	else
		*why = other ? other_gone : none_gone;
	return -1;
}
