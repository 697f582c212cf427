// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * cgroups - the paths of cgroup v2 ids.  See cgroups.h.
 *
 * One hash table (libiberty's) from id to path; an id not found is kept
 * with no path, so that it costs one lookup only.
 */
#include <errno.h>
#include <fcntl.h>
#include <fts.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <hashtab.h>

#include "stream/cgroups.h"
#include "cprof_format.h"

struct cg_ent {
	uint64_t id;
	char *path;		/* NULL: not found */
};

/*
 * A kernfs file handle's type (the kernel's FILEID_KERNFS, not in its
 * uapi): its 8 bytes are the node's id, a cgroup's id.
 */
#define CGROUPS_FILEID_KERNFS	0xfe

struct cgroups {
	char *root;		/* NULL: no cgroup2 mount */
	int root_fd;		/* root's, for file handles; -1: none */
	bool no_handles;	/* the kernel refused one: walk instead */
	unsigned int walks;
	htab_t tab;
};

static hashval_t cg_hash(const void *e)
{
	uint64_t id = ((const struct cg_ent *)e)->id;

	return (hashval_t)(id ^ id >> 32) * 2654435761u;
}

static int cg_eq(const void *a, const void *b)
{
	return ((const struct cg_ent *)a)->id == ((const struct cg_ent *)b)->id;
}

static void cg_del(void *e)
{
	free(((struct cg_ent *)e)->path);
	free(e);
}

/* Undo mountinfo's octal escapes (\040 for a space) in place. */
static void unescape(char *s)
{
	char *d = s;

	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' &&
		    s[2] >= '0' && s[2] <= '7' && s[3] >= '0' && s[3] <= '7') {
			*d++ = (s[1] - '0') << 6 | (s[2] - '0') << 3 | (s[3] - '0');
			s += 3;
		} else {
			*d++ = *s;
		}
	}
	*d = '\0';
}

/* The first cgroup2 mount point, malloc'd, or NULL. */
static char *find_mount(void)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char *line = NULL, *found = NULL;
	size_t size = 0;

	if (!f)
		return NULL;
	while (!found && getline(&line, &size, f) > 0) {
		char *save = NULL, *tok, *mnt = NULL;
		int field = 0;
		bool dash = false;

		for (tok = strtok_r(line, " \n", &save); tok;
		     tok = strtok_r(NULL, " \n", &save), field++) {
			if (field == 4)
				mnt = tok;
			else if (!strcmp(tok, "-"))
				dash = true;
			else if (dash) {
				if (!strcmp(tok, "cgroup2") && mnt) {
					unescape(mnt);
					found = strdup(mnt);
				}
				break;
			}
		}
	}
	free(line);
	fclose(f);
	return found;
}

static int cgroups__by_handle(struct cgroups *c, uint64_t id);

struct cgroups *cgroups__new(const char *root)
{
	struct cgroups *c = calloc(1, sizeof(*c));
	struct stat st;

	if (!c)
		return NULL;
	c->root_fd = -1;
	c->root = root ? strdup(root) : find_mount();
	/* not O_PATH: open_by_handle_at() refuses such a descriptor */
	if (c->root)
		c->root_fd = open(c->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	c->tab = htab_create_alloc(64, cg_hash, cg_eq, cg_del, calloc, free);
	if (!c->tab || (root && !c->root)) {
		cgroups__free(c);
		return NULL;
	}
	/* handles work here if the root itself is found by its own */
	if (c->root_fd >= 0 && !fstat(c->root_fd, &st)) {
		struct cg_ent key = { .id = st.st_ino }, *e;
		int found = cgroups__by_handle(c, st.st_ino);

		e = htab_find(c->tab, &key);
		if (found <= 0 || !e || !e->path) {
			c->no_handles = true;
			htab_empty(c->tab);
		}
	}
	return c;
}

void cgroups__free(struct cgroups *c)
{
	if (!c)
		return;
	if (c->tab)
		htab_delete(c->tab);
	if (c->root_fd >= 0)
		close(c->root_fd);
	free(c->root);
	free(c);
}

/* Set the path of id (adding it) unless it has one.  -1 on ENOMEM. */
static int cgroups__set(struct cgroups *c, uint64_t id, const char *path)
{
	struct cg_ent key = { .id = id }, *e;
	void **slot = htab_find_slot(c->tab, &key, INSERT);

	if (!slot)
		return -1;
	e = *slot;
	if (!e) {
		e = calloc(1, sizeof(*e));
		if (!e)
			return -1;
		e->id = id;
		*slot = e;
	}
	if (path && !e->path) {
		e->path = strdup(path);
		if (!e->path)
			return -1;
	}
	return 0;
}

/* Record every cgroup directory under the root. */
static void cgroups__walk(struct cgroups *c)
{
	char *const roots[] = { c->root, NULL };
	size_t len = strlen(c->root);
	FTSENT *ent;
	FTS *fts;

	c->walks++;
	fts = fts_open(roots, FTS_PHYSICAL | FTS_NOCHDIR | FTS_XDEV, NULL);
	if (!fts)
		return;
	while ((ent = fts_read(fts))) {
		const char *rel;

		if (ent->fts_info != FTS_D)
			continue;
		rel = ent->fts_path + len;
		if (cgroups__set(c, ent->fts_statp->st_ino, *rel ? rel : "/"))
			break;
	}
	fts_close(fts);
}

/*
 * Record id's path, opened by its file handle (cgroup2 exports kernfs's,
 * for root: CAP_DAC_READ_SEARCH), so that each new id costs one lookup,
 * not a walk of every cgroup: 1 looked up (found, or gone: no path), 0
 * handles do not work here (the caller walks), -1 out of memory.
 */
static int cgroups__by_handle(struct cgroups *c, uint64_t id)
{
	struct {
		struct file_handle fh;
		unsigned char id[sizeof(uint64_t)];
	} h = {
		.fh = {
			.handle_bytes = sizeof(uint64_t),
			.handle_type = CGROUPS_FILEID_KERNFS,
		},
	};
	char link[48], path[PATH_MAX];
	/* the mount's root is "/" when the root is (a path is its own) */
	size_t len = strcmp(c->root, "/") ? strlen(c->root) : 0;
	ssize_t n;
	int fd;

	if (c->root_fd < 0 || c->no_handles)
		return 0;
	memcpy(h.fh.f_handle, &id, sizeof(id));
	fd = open_by_handle_at(c->root_fd, &h.fh,
			       O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 && (errno == ESTALE || errno == ENOENT || errno == ENOTDIR))
		return 1;
	if (fd < 0) {
		c->no_handles = true;
		return 0;
	}
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, path, sizeof(path) - 1);
	close(fd);
	if (n < 0)
		return 1;
	path[n] = '\0';
	/* under the mount (not "(unreachable)/...", not another mount) */
	if (strncmp(path, c->root, len) || (path[len] && path[len] != '/'))
		return 1;
	return cgroups__set(c, id, path[len] ? path + len : "/") ? -1 : 1;
}

const char *cgroups__path(struct cgroups *c, uint64_t id)
{
	struct cg_ent key = { .id = id }, *e;
	int found;

	e = htab_find(c->tab, &key);
	if (e)
		return e->path;
	found = c->root ? cgroups__by_handle(c, id) : 1;
	if (found < 0)
		return NULL;
	if (!found)
		cgroups__walk(c);
	/* not found: remember that, for the next question */
	if (cgroups__set(c, id, NULL))
		return NULL;
	e = htab_find(c->tab, &key);
	return e ? e->path : NULL;
}

unsigned int cgroups__walks(const struct cgroups *c)
{
	return c ? c->walks : 0;
}

void cgroups__note(struct cgroups *c, const struct cprof_rec *rec)
{
	const struct cprof_sample *s = (const struct cprof_sample *)rec;

	if (c && rec->type == CPROF_REC_SAMPLE &&
	    rec->flags & CPROF_SAMPLE_CGROUP)
		cgroups__path(c, s->ips[s->nr_kernel + s->nr_user]);
}
