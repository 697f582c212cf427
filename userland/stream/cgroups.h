/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * cgroups - the paths of cgroup v2 ids, as samples carry them
 * (CPROF_SAMPLE_CGROUP): a cgroup's id is the inode number of its
 * directory in the cgroup2 mount, and the id of its file handle.  An id
 * not seen yet is opened by that handle (root's privilege: a new cgroup a
 * sample costs one lookup, however many there are), else the mount is
 * walked, once per such id.  Paths are relative to the mount's root ("/"
 * is the root cgroup, "/system.slice/ssh.service" a unit), as
 * /proc/PID/cgroup shows them.  A cgroup removed before its id was asked
 * about has no path.
 */
#ifndef CPROF_CGROUPS_H
#define CPROF_CGROUPS_H

#include <stdint.h>

struct cgroups;

/*
 * Look ids up under root, NULL for the cgroup2 mount /proc/self/mountinfo
 * lists (none: every id is unknown).  NULL on allocation failure.
 */
struct cgroups *cgroups__new(const char *root);
/* NULL-safe. */
void cgroups__free(struct cgroups *c);

/*
 * The path of id, or NULL if no cgroup under root has it (now or at the
 * lookup that first looked for it).  Owned by c.  The first question about
 * an id not yet known looks it up; ask while the cgroup lives (as samples
 * arrive) so that short-lived cgroups get their paths.
 */
const char *cgroups__path(struct cgroups *c, uint64_t id);

/* How many times the hierarchy was walked (0 while handles work). */
unsigned int cgroups__walks(const struct cgroups *c);

/*
 * Ask about the cgroup of rec if it is a sample that has one, so that its
 * path is known while the cgroup lives.  NULL-safe.
 */
struct cprof_rec;
void cgroups__note(struct cgroups *c, const struct cprof_rec *rec);

#endif /* CPROF_CGROUPS_H */
