// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * procview - the view of each mapping record, and the files of other
 * views held open.  See procview.h.
 *
 * Only what is not the host's is kept: per pid, the records seen in
 * another view (a record not there is the host's), the views by what
 * identifies them and by id, and the files held, each once per view and
 * file however many records map it.
 */
#include <errno.h>
#include <fcntl.h>
#include <hashtab.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "cprof_format.h"
#include "procview.h"
#include "safeopen.h"
#include "util.h"

/* What identifies a view: its mount namespace and its root directory. */
struct view_key {
	uint64_t ns_dev, ns_ino;
	uint64_t root_dev, root_ino;
};

struct view {
	struct view_key key;
	hashval_t hash;
	unsigned int id;
	size_t refs;			/* records seen in it */
};

/* A mapping record seen in another view. */
struct rec {
	uint64_t time_ns, start, end, pgoff;
	unsigned int view;
	int file;			/* index in fds[], -1: none held */
};

struct pid_recs {
	uint32_t pid;
	struct rec *recs;
	size_t nr, cap;
};

/* A file held open; its descriptor is fds[] at the same index. */
struct held {
	uint64_t dev, ino;
	unsigned int view;
	size_t refs;			/* records that hold it */
};

struct procviews {
	struct view_key host;
	htab_t views;			/* struct view by key */
	struct view **by_id;		/* [id]; NULL: free ([0]: the host) */
	size_t nr_ids, cap_ids;
	htab_t pids;			/* struct pid_recs by pid */
	int *fds;			/* held files, -1: a free slot */
	struct held *held;
	size_t nr_fds, cap_fds, cap_held;
	size_t nr_held, max_files;
};

static hashval_t view_hash(const void *e)
{
	return ((const struct view *)e)->hash;
}

static int view_eq(const void *a, const void *b)
{
	return !memcmp(&((const struct view *)a)->key,
		       &((const struct view *)b)->key, sizeof(struct view_key));
}

static hashval_t pid_hash(const void *e)
{
	return ((const struct pid_recs *)e)->pid * 2654435761u;
}

static int pid_eq(const void *a, const void *b)
{
	return ((const struct pid_recs *)a)->pid ==
	       ((const struct pid_recs *)b)->pid;
}

static void pid_del(void *e)
{
	struct pid_recs *pr = e;

	free(pr->recs);
	free(pr);
}

/* The view of process pid ("self": ours) now.  -1 if it cannot be had. */
static int view_of(const char *pid, struct view_key *k)
{
	char path[64];
	struct stat ns, root;

	snprintf(path, sizeof(path), "/proc/%s/ns/mnt", pid);
	if (stat(path, &ns))
		return -1;
	snprintf(path, sizeof(path), "/proc/%s/root", pid);
	if (stat(path, &root))
		return -1;
	memset(k, 0, sizeof(*k));
	k->ns_dev = ns.st_dev;
	k->ns_ino = ns.st_ino;
	k->root_dev = root.st_dev;
	k->root_ino = root.st_ino;
	return 0;
}

static int view_of_pid(uint32_t pid, struct view_key *k)
{
	char s[16];

	snprintf(s, sizeof(s), "%" PRIu32, pid);
	return view_of(s, k);
}

static bool same_view(const struct view_key *a, const struct view_key *b)
{
	return !memcmp(a, b, sizeof(*a));
}

struct procviews *procviews__new(size_t max_files)
{
	struct procviews *v = calloc(1, sizeof(*v));
	struct rlimit rl;

	if (!v)
		return NULL;
	if (view_of("self", &v->host)) {
		free(v);
		return NULL;
	}
	/* the symbolizer needs most descriptors: a quarter at most here */
	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur != RLIM_INFINITY &&
	    max_files > rl.rlim_cur / 4)
		max_files = rl.rlim_cur / 4;
	v->max_files = max_files;
	v->views = htab_create_alloc(16, view_hash, view_eq, free, calloc,
				     free);
	v->pids = htab_create_alloc(64, pid_hash, pid_eq, pid_del, calloc,
				    free);
	if (!v->views || !v->pids ||
	    grow_array(&v->by_id, &v->cap_ids, 1, sizeof(*v->by_id))) {
		procviews__free(v);
		return NULL;
	}
	v->by_id[0] = NULL;		/* the host's: never a struct view */
	v->nr_ids = 1;
	return v;
}

void procviews__free(struct procviews *v)
{
	size_t i;

	if (!v)
		return;
	for (i = 0; i < v->nr_fds; i++)
		if (v->fds[i] >= 0)
			close(v->fds[i]);
	free(v->fds);
	free(v->held);
	if (v->pids)
		htab_delete(v->pids);
	if (v->views)
		htab_delete(v->views);
	free(v->by_id);
	free(v);
}

/* The id of the view k, made if new (a free id first).  0 on ENOMEM. */
static unsigned int view_id(struct procviews *v, const struct view_key *k)
{
	struct view key = { .key = *k }, *view;
	size_t id;
	void **slot;

	key.hash = iterative_hash(k, sizeof(*k), 0);
	slot = htab_find_slot_with_hash(v->views, &key, key.hash, INSERT);
	if (!slot)
		return 0;
	if (*slot)
		return ((struct view *)*slot)->id;
	for (id = 1; id < v->nr_ids && v->by_id[id]; id++)
		;
	/* on failure the slot stays empty: nothing was inserted */
	if (id >= UINT32_MAX || (id == v->nr_ids &&
	    grow_array(&v->by_id, &v->cap_ids, id + 1, sizeof(*v->by_id))))
		return 0;
	view = malloc(sizeof(*view));
	if (!view)
		return 0;
	*view = key;
	view->id = (unsigned int)id;
	view->refs = 0;
	v->by_id[id] = view;
	if (id == v->nr_ids)
		v->nr_ids++;
	*slot = view;
	return view->id;
}

/* One record fewer in view id: the view goes with its last. */
static void view_put(struct procviews *v, unsigned int id)
{
	struct view *view = v->by_id[id];

	if (!view || --view->refs)
		return;
	v->by_id[id] = NULL;
	htab_remove_elt_with_hash(v->views, view, view->hash);	/* frees it */
}

static bool is_file_path(const char *path)
{
	return path[0] == '/' && strncmp(path, "/memfd:", 7) &&
	       strncmp(path, "/SYSV", 5) && strncmp(path, "//anon", 6) &&
	       strncmp(path, "/dev/zero", 9);
}

/* The file process pid mapped at [start, end), as it mapped it.  -1. */
static int open_mapped(uint32_t pid, const struct cprof_mmap *m,
		       struct stat *st)
{
	char path[96];

	snprintf(path, sizeof(path),
		 "/proc/%" PRIu32 "/map_files/%" PRIx64 "-%" PRIx64, pid,
		 (uint64_t)m->start, (uint64_t)m->end);
	return safe_open(-1, path, st);
}

/* The root of process pid, if it is still the one of view k.  -1. */
static int open_root(uint32_t pid, const struct view_key *k)
{
	struct view_key now;
	char path[64];
	struct stat st;
	int fd;

	snprintf(path, sizeof(path), "/proc/%" PRIu32 "/root", pid);
	fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	/* the process, or one that took its pid, in the same view still */
	if (fstat(fd, &st) || st.st_dev != k->root_dev ||
	    st.st_ino != k->root_ino || view_of_pid(pid, &now) ||
	    !same_view(&now, k)) {
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * Hold the file of m, seen in view id, open: its index in fds[], or -1
 * (past the bound, or it cannot be opened: the process may still be
 * there at symbolization).
 */
static int hold(struct procviews *v, const struct cprof_mmap *m,
		unsigned int id)
{
	struct stat st;
	size_t i, slot;
	int fd;

	if (v->nr_held >= v->max_files || !is_file_path(m->path))
		return -1;
	fd = open_mapped(m->pid, m, &st);
	if (fd < 0)
		return -1;
	slot = v->nr_fds;
	for (i = 0; i < v->nr_fds; i++) {
		if (v->fds[i] < 0) {
			slot = slot < i ? slot : i;
			continue;
		}
		if (v->held[i].view == id && v->held[i].dev == st.st_dev &&
		    v->held[i].ino == st.st_ino) {
			close(fd);
			v->held[i].refs++;
			return (int)i;
		}
	}
	if (slot == v->nr_fds &&
	    (slot >= INT32_MAX ||
	     grow_array(&v->fds, &v->cap_fds, slot + 1, sizeof(*v->fds)) ||
	     grow_array(&v->held, &v->cap_held, slot + 1, sizeof(*v->held)))) {
		close(fd);
		return -1;
	}
	v->fds[slot] = fd;
	v->held[slot] = (struct held){
		.dev = st.st_dev, .ino = st.st_ino, .view = id, .refs = 1,
	};
	if (slot == v->nr_fds)
		v->nr_fds++;
	v->nr_held++;
	return (int)slot;
}

static void unhold(struct procviews *v, int i)
{
	if (i < 0 || --v->held[i].refs)
		return;
	close(v->fds[i]);
	v->fds[i] = -1;
	v->nr_held--;
}

int procviews__note(struct procviews *v, const struct cprof_mmap *m)
{
	struct pid_recs key = { .pid = m->pid }, *pr;
	struct view_key k;
	unsigned int id;
	struct rec *r;
	void **slot;

	/* gone already: nothing to read it by but the host's files */
	if (!v || view_of_pid(m->pid, &k) || same_view(&k, &v->host))
		return 0;
	id = view_id(v, &k);
	if (!id)
		return -1;
	slot = htab_find_slot(v->pids, &key, INSERT);
	if (!slot)
		goto oom;
	pr = *slot;
	if (!pr) {
		pr = calloc(1, sizeof(*pr));
		if (!pr)
			goto oom;
		pr->pid = m->pid;
		*slot = pr;
	}
	if (grow_array(&pr->recs, &pr->cap, pr->nr + 1, sizeof(*pr->recs)))
		goto oom;
	r = &pr->recs[pr->nr++];
	*r = (struct rec){
		.time_ns = m->time_ns, .start = m->start, .end = m->end,
		.pgoff = m->pgoff, .view = id,
	};
	v->by_id[id]->refs++;
	r->file = hold(v, m, id);
	return 0;
oom:
	/* a view with no record goes */
	if (!v->by_id[id]->refs) {
		v->by_id[id]->refs = 1;
		view_put(v, id);
	}
	return -1;
}

static const struct rec *find(const struct procviews *v,
			      const struct cprof_mmap *m)
{
	struct pid_recs key = { .pid = m->pid };
	const struct pid_recs *pr;
	size_t i;

	if (!v)
		return NULL;
	pr = htab_find(v->pids, &key);
	for (i = 0; pr && i < pr->nr; i++) {
		const struct rec *r = &pr->recs[i];

		if (r->time_ns == m->time_ns && r->start == m->start &&
		    r->end == m->end && r->pgoff == m->pgoff)
			return r;
	}
	return NULL;
}

unsigned int procviews__view(const struct procviews *v,
			     const struct cprof_mmap *m)
{
	const struct rec *r = find(v, m);

	return r ? r->view : 0;
}

int procviews__open(const struct procviews *v, const struct cprof_mmap *m,
		    struct stat *st, int *root, const char **why)
{
	const struct rec *r = find(v, m);
	const struct view *view = r ? v->by_id[r->view] : NULL;
	int fd = -1;

	*root = -1;
	*why = PROCVIEW_UNREAD;
	if (!view)
		return -1;
	*root = open_root(m->pid, &view->key);
	if (r->file >= 0) {
		/* the file the process mapped, held since its record came */
		fd = fcntl(v->fds[r->file], F_DUPFD_CLOEXEC, 0);
		if (fd >= 0 && fstat(fd, st)) {
			close(fd);
			fd = -1;
		}
	}
	if (fd < 0 && *root >= 0) {
		/* still there, in that view: the mapped file, else its path */
		fd = open_mapped(m->pid, m, st);
		if (fd < 0 && errno != SAFEOPEN_NOT_REGULAR &&
		    is_file_path(m->path))
			fd = safe_open(*root, m->path, st);
	}
	if (fd < 0 && *root >= 0) {
		close(*root);
		*root = -1;
	}
	return fd;
}

void procviews__forget(struct procviews *v, uint32_t pid)
{
	struct pid_recs key = { .pid = pid }, *pr;
	void **slot;
	size_t i;

	if (!v)
		return;
	slot = htab_find_slot(v->pids, &key, NO_INSERT);
	if (!slot)
		return;
	pr = *slot;
	for (i = 0; i < pr->nr; i++) {
		unhold(v, pr->recs[i].file);
		view_put(v, pr->recs[i].view);
	}
	htab_clear_slot(v->pids, slot);		/* pid_del() frees it */
}

int *procviews__fds(struct procviews *v, size_t *n)
{
	*n = v ? v->nr_fds : 0;
	return v ? v->fds : NULL;
}
