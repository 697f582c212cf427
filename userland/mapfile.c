// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * mapfile - the very file a mapping maps.  See mapfile.h.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "mapfile.h"
#include "safeopen.h"

static const char other_gone[] =
	"the file at its path is another (another mount namespace, or replaced) and the process is gone";

bool mapfile_refused(const char *why)
{
	return why && !strcmp(why, other_gone);
}

bool mapfile_is(const struct mapfile *m, const struct stat *st)
{
	return !m->has_id ||
	       ((uint32_t)st->st_dev == m->dev && st->st_ino == m->ino);
}

/* The mapping through its process, if it still maps the very file. */
static int open_through_process(const struct mapfile *m, struct stat *st)
{
	char path[80];
	int fd;

	if (!m->pid)
		return -1;
	snprintf(path, sizeof(path), "/proc/%" PRIu32 "/map_files/%" PRIx64
		 "-%" PRIx64, m->pid, m->start, m->end);
	fd = safe_open(-1, path, st);
	if (fd < 0)
		return -1;
	if (!mapfile_is(m, st)) {
		close(fd);
		return -1;
	}
	return fd;
}

int mapfile_open(const struct mapfile *m, struct stat *st, const char **why,
		 const char **via)
{
	const char *where = "path";
	int fd, err;

	fd = safe_open(-1, m->path, st);
	err = fd < 0 ? errno : 0;
	if (fd >= 0 && mapfile_is(m, st))
		goto found;
	if (m->has_id) {
		int other = fd;

		fd = open_through_process(m, st);
		if (fd >= 0) {
			if (other >= 0)
				close(other);
			where = "process";
			goto found;
		}
		fd = other;
		if (fd >= 0 && m->strict) {
			close(fd);
			*why = other_gone;
			return -1;
		}
		/* -i: the path's file, held to the build ID */
		if (fd >= 0 && fstat(fd, st) == 0)
			goto found;
		if (fd >= 0) {
			err = errno;
			close(fd);
		}
		if (err == ENOENT || err == ENOTDIR) {
			*why = m->strict ?
			       "not found at its path, and the process is gone" :
			       "not found";
			return -1;
		}
	}
	*why = err == ENOENT || err == ENOTDIR ? "not found" :
	       safe_strerror(err);
	return -1;
found:
	if (via)
		*via = where;
	return fd;
}
