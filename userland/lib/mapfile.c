// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * mapfile - the very file a mapping maps.  See mapfile.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/magic.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "lib/mapfile.h"
#include "lib/safeopen.h"

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

/* The kernel's timespec64_to_ns() of sec, nsec, equal to ns? */
static bool same_ns(int64_t sec, uint32_t nsec, int64_t ns)
{
	const int64_t max = INT64_MAX, sec_max = INT64_MAX / 1000000000;

	if (sec >= sec_max)
		return ns == max;
	if (sec <= -sec_max)
		return ns == -max - 1;
	return sec * 1000000000 + nsec == ns;
}

int mapfile_id_cmp(const struct cprof_file_id *a,
		   const struct cprof_file_id *b)
{
	if (a->dev != b->dev)
		return a->dev < b->dev ? -1 : 1;
	if (a->ino != b->ino)
		return a->ino < b->ino ? -1 : 1;
	if (a->btime_ns != b->btime_ns)
		return a->btime_ns < b->btime_ns ? -1 : 1;
	return 0;
}

/* Is sx the file m maps?  Yes when m has no identity or is not strict. */
static bool mapfile_is(const struct mapfile *m, const struct statx *sx)
{
	if (!m->has_id || !m->strict)
		return true;
	if ((uint32_t)makedev(sx->stx_dev_major, sx->stx_dev_minor) !=
	    m->id.dev || sx->stx_ino != m->id.ino)
		return false;
	/* none recorded: its file system keeps none, and gives none now */
	if (!m->id.btime_ns)
		return !(sx->stx_mask & STATX_BTIME) || !sx->stx_btime.tv_sec;
	return (sx->stx_mask & STATX_BTIME) &&
	       same_ns(sx->stx_btime.tv_sec, sx->stx_btime.tv_nsec,
		       m->id.btime_ns);
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

/* /proc/PID/stat's starttime (clock ticks since boot), or -1. */
static long long start_ticks(uint32_t pid)
{
	char path[40], buf[1024], *p;
	long long ticks = -1;
	ssize_t n;
	int fd, i;

	snprintf(path, sizeof(path), "/proc/%" PRIu32 "/stat", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	/* after the comm, which may hold anything: state is field 3 */
	p = strrchr(buf, ')');
	for (i = 2; p && i < 22; i++)
		p = strchr(p + 1, ' ');
	if (p)
		ticks = strtoll(p + 1, NULL, 10);
	return ticks;
}

int mapfile_pidfd(uint32_t pid, uint64_t start_ns)
{
	long hz = sysconf(_SC_CLK_TCK);
	int pidfd;

	if (!pid || pid > INT32_MAX) {
		errno = ESRCH;
		return -1;
	}
	pidfd = pidfd_open((pid_t)pid, 0);
	if (pidfd < 0)
		return -1;
	if (start_ns && hz > 0 &&
	    start_ticks(pid) != (long long)(start_ns /
					    (1000000000 / (uint64_t)hz))) {
		close(pidfd);
		errno = ESTALE;
		return -1;
	}
	return pidfd;
}

bool mapfile_pidfd_alive(int pidfd)
{
	return !pidfd_send_signal(pidfd, 0, NULL, 0) || errno == EPERM;
}

/*
 * The mapping through its process, if it is the process of the record
 * (started when it says: a pid may be another process's by now) and
 * still maps the very file.  The pidfd keeps the pid from being reused
 * in between: the process is checked alive after the open.
 */
static int open_through_process(const struct mapfile *m, struct stat *st)
{
	char path[80];
	int pidfd, fd;

	pidfd = mapfile_pidfd(m->pid, m->id.start_ns);
	if (pidfd < 0)
		return -1;
	snprintf(path, sizeof(path), "/proc/%" PRIu32 "/map_files/%" PRIx64
		 "-%" PRIx64, m->pid, m->start, m->end);
	fd = safe_open_if(-1, path, st, want, m);
	if (fd >= 0 && pidfd_send_signal(pidfd, 0, NULL, 0)) {
		close(fd);
		fd = -1;
	}
	close(pidfd);
	return fd;
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
	if (!m->has_id || !m->strict) {
		*why = err == ENOENT || err == ENOTDIR ? "not found" :
		       safe_strerror(err);
		return -1;
	}
	/* a FIFO planted at its path does not hide the process's file */
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
	}
	if (err == SAFEOPEN_NOT_REGULAR)
		*why = safe_strerror(err);	/* what was planted there */
	else if (mapfile_alive(m->pid))
		*why = other_live;
	else
		*why = other ? other_gone : none_gone;
	return -1;
}
