// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * cgroups - the paths of cgroup v2 ids.  See cgroups.h.
 *
 * One hash table (libiberty's) from id to path; an id a walk did not find
 * is kept with no path, so that it costs one walk only.
 */
#include <errno.h>
#include <fts.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <hashtab.h>

#include "cgroups.h"
#include "cprof_format.h"

struct cg_ent {
	uint64_t id;
	char *path;		/* NULL: not found */
};

struct cgroups {
	char *root;		/* NULL: no cgroup2 mount */
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

struct cgroups *cgroups__new(const char *root)
{
	struct cgroups *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->root = root ? strdup(root) : find_mount();
	c->tab = htab_create_alloc(64, cg_hash, cg_eq, cg_del, calloc, free);
	if (!c->tab || (root && !c->root)) {
		cgroups__free(c);
		return NULL;
	}
	return c;
}

void cgroups__free(struct cgroups *c)
{
	if (!c)
		return;
	if (c->tab)
		htab_delete(c->tab);
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

const char *cgroups__path(struct cgroups *c, uint64_t id)
{
	struct cg_ent key = { .id = id }, *e;

	e = htab_find(c->tab, &key);
	if (e)
		return e->path;
	if (c->root)
		cgroups__walk(c);
	/* not found: remember that, for the next question */
	if (cgroups__set(c, id, NULL))
		return NULL;
	e = htab_find(c->tab, &key);
	return e ? e->path : NULL;
}

void cgroups__note(struct cgroups *c, const struct cprof_rec *rec)
{
	const struct cprof_sample *s = (const struct cprof_sample *)rec;

	if (c && rec->type == CPROF_REC_SAMPLE &&
	    rec->flags & CPROF_SAMPLE_CGROUP)
		cgroups__path(c, s->ips[s->nr_kernel + s->nr_user]);
}
