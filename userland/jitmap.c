// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * jitmap - perf maps of JIT-compiled code.  See jitmap.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <hashtab.h>

#include "jitmap.h"
#include "safeopen.h"
#include "strtab.h"
#include "util.h"

#define JITMAP_LINE_MAX	(JITMAP_NAME_MAX + 64)

struct jit_entry {
	uint64_t start, end;
	uint32_t seq;		/* line order: the last written wins */
	int64_t name;		/* in the cache's strtab */
};

/* What an address range is named, the entries' overlaps settled. */
struct jit_seg {
	uint64_t start, end;
	int64_t name;
};

struct jitmap {
	uint32_t pid;
	const char *why;	/* set: none to use, and why */
	char why_buf[160];
	struct jit_entry *e;	/* as read; freed once indexed */
	size_t nr, alloc;
	struct jit_seg *seg;	/* by start, not overlapping */
	size_t nr_seg;
	uint64_t skipped;
	const struct strtab *names;
};

static const char owned_other[] = "its perf map is owned by another user";

bool jitmap_refused(const char *why)
{
	return why && !strncmp(why, owned_other, sizeof(owned_other) - 1);
}

struct jitmaps {
	char *dir;
	htab_t by_pid;
	struct strtab *names;
	uint64_t entries;	/* read so far, all maps: JITMAP_ALL_ENTRIES */
};

static hashval_t jm_hash(const void *p)
{
	return ((const struct jitmap *)p)->pid * 2654435761u;
}

static int jm_eq(const void *a, const void *b)
{
	return ((const struct jitmap *)a)->pid ==
	       ((const struct jitmap *)b)->pid;
}

static void jm_free(void *p)
{
	struct jitmap *j = p;

	free(j->e);
	free(j->seg);
	free(j);
}

struct jitmaps *jitmaps__new(const char *dir)
{
	struct jitmaps *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->dir = strdup(dir ? dir : "/tmp");
	c->names = strtab__new();
	c->by_pid = htab_create_alloc(16, jm_hash, jm_eq, jm_free, calloc,
				      free);
	if (!c->dir || !c->names || !c->by_pid) {
		jitmaps__free(c);
		return NULL;
	}
	return c;
}

void jitmaps__free(struct jitmaps *c)
{
	if (!c)
		return;
	if (c->by_pid)
		htab_delete(c->by_pid);
	strtab__free(c->names);
	free(c->dir);
	free(c);
}

/* Hex digits at *p (0x allowed) into *v; false if none or too many. */
static bool parse_hex(const char **p, uint64_t *v)
{
	const char *s = *p;
	int digits = 0;

	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		s += 2;
	*v = 0;
	for (;; s++, digits++) {
		int d;

		if (*s >= '0' && *s <= '9')
			d = *s - '0';
		else if (*s >= 'a' && *s <= 'f')
			d = *s - 'a' + 10;
		else if (*s >= 'A' && *s <= 'F')
			d = *s - 'A' + 10;
		else
			break;
		if (digits == 16)
			return false;
		*v = *v << 4 | (uint64_t)d;
	}
	*p = s;
	return digits > 0;
}

/* One line, NUL-terminated, its newline gone: an entry, or skipped. */
static int jitmap__line(struct jitmap *j, struct strtab *names, char *line,
			uint32_t seq)
{
	const char *p = line;
	uint64_t start, size;
	size_t len;
	int64_t name;

	while (*p == ' ' || *p == '\t')
		p++;
	if (!parse_hex(&p, &start) || (*p != ' ' && *p != '\t'))
		goto skip;
	while (*p == ' ' || *p == '\t')
		p++;
	if (!parse_hex(&p, &size) || (*p != ' ' && *p != '\t'))
		goto skip;
	while (*p == ' ' || *p == '\t')
		p++;
	len = strlen(p);
	while (len && (p[len - 1] == '\r' || p[len - 1] == ' ' ||
		       p[len - 1] == '\t'))
		len--;
	if (!size || start + size < start || !len)
		goto skip;
	if (len > JITMAP_NAME_MAX)
		len = JITMAP_NAME_MAX;
	line[p - line + len] = '\0';
	name = strtab__intern(names, p);
	if (name < 0 || grow_array(&j->e, &j->alloc, j->nr + 1, sizeof(*j->e)))
		return -1;
	j->e[j->nr++] = (struct jit_entry){
		.start = start, .end = start + size, .seq = seq, .name = name,
	};
	return 0;
skip:
	j->skipped++;
	return 0;
}

static int entry_cmp(const void *a, const void *b)
{
	const struct jit_entry *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return (x->seq > y->seq) - (x->seq < y->seq);
}

/*
 * The lines of fd, bounded (see jitmap.h): a line longer than
 * JITMAP_LINE_MAX keeps its first bytes, and a last line without its
 * newline (the runtime may be writing it) is left out.  -1 on ENOMEM.
 */
static int jitmap__read(struct jitmap *j, struct jitmaps *c, int fd)
{
	struct strtab *names = c->names;
	enum { CHUNK = 65536 };
	char line[JITMAP_LINE_MAX + 1], *buf = malloc(CHUNK);
	size_t len = 0, total = 0;
	uint32_t seq = 0;
	int err = 0;
	ssize_t n, i;

	if (!buf)
		return -1;
	while (!err && total < JITMAP_MAX_BYTES &&
	       j->nr < JITMAP_MAX_ENTRIES && c->entries < JITMAP_ALL_ENTRIES) {
		n = read(fd, buf, CHUNK);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		total += (size_t)n;
		for (i = 0; i < n && !err && j->nr < JITMAP_MAX_ENTRIES &&
			    c->entries + j->nr < JITMAP_ALL_ENTRIES; i++) {
			if (buf[i] != '\n') {
				/* a NUL would cut the name short: dropped */
				if (len < JITMAP_LINE_MAX && buf[i] != '\0')
					line[len++] = buf[i];
				continue;
			}
			line[len] = '\0';
			if (len)
				err = jitmap__line(j, names, line, seq++);
			len = 0;
		}
	}
	free(buf);
	c->entries += j->nr;
	return err;
}

/* A max-heap of entry indices by seq: the last written on top. */
static void heap_push(uint32_t *h, size_t *n, const struct jit_entry *e,
		      uint32_t v)
{
	size_t i = (*n)++;

	while (i && e[h[(i - 1) / 2]].seq < e[v].seq) {
		h[i] = h[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	h[i] = v;
}

static void heap_pop(uint32_t *h, size_t *n, const struct jit_entry *e)
{
	uint32_t v = h[--(*n)];
	size_t i = 0, c;

	while ((c = 2 * i + 1) < *n) {
		if (c + 1 < *n && e[h[c + 1]].seq > e[h[c]].seq)
			c++;
		if (e[h[c]].seq <= e[v].seq)
			break;
		h[i] = h[c];
		i = c;
	}
	if (*n)
		h[i] = v;
}

/* One more segment; adjacent ones of one name merged. */
static void seg_add(struct jitmap *j, uint64_t start, uint64_t end,
		    int64_t name)
{
	struct jit_seg *last = j->nr_seg ? &j->seg[j->nr_seg - 1] : NULL;

	if (last && last->end == start && last->name == name)
		last->end = end;
	else
		j->seg[j->nr_seg++] = (struct jit_seg){ start, end, name };
}

/*
 * The entries as segments that do not overlap, each named by the entry
 * written last among those covering it: a sweep by address, the entries
 * that cover the current address in a heap by line order.  Each entry
 * starts at most one segment and its end at most one more: at most 2n.
 */
static int jitmap__index(struct jitmap *j)
{
	uint32_t *heap;
	size_t nh = 0, i = 0;
	uint64_t x;

	if (j->nr)
		qsort(j->e, j->nr, sizeof(*j->e), entry_cmp);
	heap = malloc((j->nr ? j->nr : 1) * sizeof(*heap));
	j->seg = malloc((2 * j->nr + 1) * sizeof(*j->seg));
	if (!heap || !j->seg) {
		free(heap);
		return -1;
	}
	x = j->nr ? j->e[0].start : 0;
	while (i < j->nr || nh) {
		uint64_t next;

		while (i < j->nr && j->e[i].start <= x)
			heap_push(heap, &nh, j->e, (uint32_t)i++);
		/* entries that ended are dropped when they come on top */
		while (nh && j->e[heap[0]].end <= x)
			heap_pop(heap, &nh, j->e);
		if (!nh) {
			if (i < j->nr)
				x = j->e[i].start;
			continue;
		}
		next = j->e[heap[0]].end;
		if (i < j->nr && j->e[i].start < next)
			next = j->e[i].start;
		seg_add(j, x, next, j->e[heap[0]].name);
		x = next;
	}
	free(heap);
	free(j->e);
	j->e = NULL;
	j->alloc = 0;
	return 0;
}

struct owner_want {
	uint32_t uid;
	bool has_uid;
	uint32_t owner;		/* the file's, when refused */
	bool linked;		/* refused for its other names */
};

static bool owned_right(const struct statx *sx, const void *arg)
{
	struct owner_want *w = (struct owner_want *)arg;

	w->owner = sx->stx_uid;
	w->linked = sx->stx_nlink != 1;
	return !w->linked &&
	       (sx->stx_uid == 0 || (w->has_uid && sx->stx_uid == w->uid));
}

/* pid as its own pid namespace numbers it (/proc/PID/status's NSpid); 0 */
static uint32_t ns_pid(uint32_t pid)
{
	char path[64], line[256];
	unsigned long last = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%" PRIu32 "/status", pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		char *p = line + 6, *end;

		if (strncmp(line, "NSpid:", 6))
			continue;
		/* the last number: the innermost namespace's */
		for (;;) {
			unsigned long v = strtoul(p, &end, 10);

			if (end == p)
				break;
			last = v;
			p = end;
		}
		break;
	}
	fclose(f);
	return last <= UINT32_MAX ? (uint32_t)last : 0;
}

/*
 * The map of a process that runs under another root or in another pid
 * namespace (a container): DIR/perf-NSPID.map inside its root, the same
 * rules applying.  -1 with errno ENOENT if it is not such a process (or
 * no longer runs).
 */
static int open_in_root(const struct jitmaps *c, uint32_t pid,
			struct stat *st, struct owner_want *w)
{
	char path[4096], proc[64];
	int pidfd, rootfd = -1, fd = -1, err = ENOENT;
	uint32_t nspid;

	/* the pid stays this process's while its root is looked in */
	pidfd = pidfd_open((pid_t)pid, 0);
	if (pidfd < 0)
		goto out;
	nspid = ns_pid(pid);
	snprintf(proc, sizeof(proc), "/proc/%" PRIu32 "/root", pid);
	rootfd = nspid ? open(proc, O_PATH | O_DIRECTORY | O_CLOEXEC) : -1;
	if (rootfd < 0 ||
	    (size_t)snprintf(path, sizeof(path), "%s/perf-%" PRIu32 ".map",
			     c->dir, nspid) >= sizeof(path))
		goto out;
	fd = safe_open_nofollow_if(rootfd, path, st, owned_right, w);
	err = errno;
	/* and it still ran once the file was open: that root was its */
	if (fd >= 0 && pidfd_send_signal(pidfd, 0, NULL, 0)) {
		close(fd);
		fd = -1;
		err = ENOENT;
	}
out:
	if (rootfd >= 0)
		close(rootfd);
	if (pidfd >= 0)
		close(pidfd);
	errno = err;
	return fd;
}

/* Read j's file, or set j->why.  -1 on ENOMEM. */
static int jitmap__open(struct jitmaps *c, struct jitmap *j, uint32_t uid,
			bool has_uid)
{
	struct owner_want w = { .uid = uid, .has_uid = has_uid };
	char path[4096];
	struct stat st;
	int fd, err;

	if ((size_t)snprintf(path, sizeof(path), "%s/perf-%" PRIu32 ".map",
			     c->dir, j->pid) >= sizeof(path)) {
		j->why = "perf map path too long";
		return 0;
	}
	fd = safe_open_nofollow_if(-1, path, &st, owned_right, &w);
	if (fd < 0 && errno == ENOENT)
		fd = open_in_root(c, j->pid, &st, &w);
	if (fd < 0) {
		if (errno == ENOENT)
			snprintf(j->why_buf, sizeof(j->why_buf),
				 "no perf map %s/perf-PID.map", c->dir);
		else if (errno == SAFEOPEN_NOT_WANTED && w.linked)
			snprintf(j->why_buf, sizeof(j->why_buf),
				 "its perf map has other names (hard links)");
		else if (errno == SAFEOPEN_NOT_WANTED)
			snprintf(j->why_buf, sizeof(j->why_buf),
				 "%s (uid %" PRIu32 "), not %s", owned_other,
				 w.owner, has_uid ? "by the process's user or root" :
				 "by root (the stream does not say the process's user)");
		else
			snprintf(j->why_buf, sizeof(j->why_buf),
				 "its perf map: %s", safe_strerror(errno));
		j->why = j->why_buf;
		return 0;
	}
	err = jitmap__read(j, c, fd);
	close(fd);
	return err ? err : jitmap__index(j);
}

const struct jitmap *jitmaps__get(struct jitmaps *c, uint32_t pid,
				  uint32_t uid, bool has_uid,
				  const char **why)
{
	struct jitmap key = { .pid = pid }, *j;
	void **slot;

	*why = NULL;
	j = htab_find(c->by_pid, &key);
	if (!j) {
		j = calloc(1, sizeof(*j));
		if (!j)
			return NULL;
		j->pid = pid;
		j->names = c->names;
		slot = jitmap__open(c, j, uid, has_uid) ? NULL :
		       htab_find_slot(c->by_pid, &key, INSERT);
		if (!slot) {
			jm_free(j);
			return NULL;
		}
		*slot = j;
	}
	if (j->why) {
		*why = j->why;
		return NULL;
	}
	return j;
}

const char *jitmap__lookup(const struct jitmap *j, uint64_t addr)
{
	size_t lo = 0, hi = j->nr_seg;

	/* the last segment starting at or before addr */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (j->seg[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || addr >= j->seg[lo - 1].end)
		return NULL;
	return strtab__get(j->names, j->seg[lo - 1].name);
}

void jitmap__counts(const struct jitmap *j, uint64_t *used, uint64_t *skipped)
{
	*used = j->nr;
	*skipped = j->skipped;
}
