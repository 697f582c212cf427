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
#include <time.h>
#include <unistd.h>

#include <hashtab.h>

#include "symbolize/jitmap.h"
#include "lib/safeopen.h"
#include "stream/stream.h"
#include "lib/strtab.h"
#include "lib/util.h"

#define JITMAP_LINE_MAX	(JITMAP_NAME_MAX + 64)

struct jit_entry {
	uint64_t start, end;
	int64_t name;		/* in the cache's strtab */
	uint32_t read;		/* the read that found it */
};

/* A range of addresses and the entry that names it (its index). */
struct jit_seg {
	uint64_t start, end;
	uint32_t e;
};

/*
 * One read that found lines, or that found the map rewritten: they apply
 * from its time on.  A rewrite starts an epoch: the reads of one epoch
 * read one content of the file, each adding to the last.
 */
struct jit_read {
	uint64_t from_ns;	/* sample clock, once read */
	size_t first_e;		/* its first entry */
	size_t first_seg, nr_seg;	/* its own segments, in rseg */
	uint32_t epoch;		/* the first read of its epoch */
};

/* The bytes compared to see a map rewritten (see jitmap__rewritten()). */
#define JITMAP_TAIL	64

struct jitmap {
	uint32_t pid;
	const char *why;	/* set: none to use, and why */
	char why_buf[160];
	bool known;		/* read once: the file is dev, ino */
	dev_t dev;
	ino_t ino;
	uint64_t offset;	/* bytes of the file read so far */
	uint64_t bytes;		/* of all its contents: JITMAP_MAX_BYTES */
	char tail[JITMAP_TAIL];	/* the last bytes before offset */
	size_t tail_len;
	uint32_t epoch;		/* the current epoch's first read */
	bool frozen;		/* rewritten past JITMAP_READS_MAX: not read */
	bool tried;		/* a sample asked for a read at tried_ns */
	uint64_t tried_ns;
	char line[JITMAP_LINE_MAX + 1];	/* a line not ended yet */
	size_t len;
	struct jit_entry *e;	/* in line order: the index is the line's */
	size_t nr, alloc;
	/* the current epoch's entries as segments, each named by its last line */
	struct jit_seg *seg;
	size_t nr_seg;
	struct jit_read *reads;
	size_t nr_reads, alloc_reads;
	struct jit_seg *rseg;	/* each read's entries alone, likewise */
	size_t nr_rseg, alloc_rseg;
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
	int live;		/* the noted stream is this boot's; -1: not known */
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
	free(j->reads);
	free(j->rseg);
	free(j);
}

struct jitmaps *jitmaps__new(const char *dir)
{
	struct jitmaps *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->live = -1;
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
static int jitmap__line(struct jitmap *j, struct strtab *names, char *line)
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
		.start = start, .end = start + size, .name = name,
	};
	return 0;
skip:
	j->skipped++;
	return 0;
}

/* Entry indices by start, then line order (qsort_r: the entries). */
static int idx_cmp(const void *a, const void *b, void *arg)
{
	const struct jit_entry *e = arg;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	if (e[x].start != e[y].start)
		return e[x].start < e[y].start ? -1 : 1;
	return (x > y) - (x < y);
}

/* The n bytes at buf, just read up to j->offset, as the tail. */
static void tail_add(struct jitmap *j, const char *buf, size_t n)
{
	size_t keep;

	if (n >= JITMAP_TAIL) {
		memcpy(j->tail, buf + n - JITMAP_TAIL, JITMAP_TAIL);
		j->tail_len = JITMAP_TAIL;
		return;
	}
	keep = j->tail_len + n > JITMAP_TAIL ? JITMAP_TAIL - n : j->tail_len;
	memmove(j->tail, j->tail + j->tail_len - keep, keep);
	memcpy(j->tail + keep, buf, n);
	j->tail_len = keep + n;
}

/*
 * The lines of fd from j->offset on, bounded (see jitmap.h): a line longer
 * than JITMAP_LINE_MAX keeps its first bytes, and a last line without its
 * newline (the runtime may be writing it) waits for the next read.  -1 on
 * ENOMEM.
 */
static int jitmap__read(struct jitmap *j, struct jitmaps *c, int fd)
{
	struct strtab *names = c->names;
	enum { CHUNK = 65536 };
	char *buf = malloc(CHUNK);
	size_t before = j->nr;
	int err = 0;
	ssize_t n, i;

	if (!buf)
		return -1;
	while (!err && j->bytes < JITMAP_MAX_BYTES &&
	       j->nr < JITMAP_MAX_ENTRIES &&
	       c->entries + j->nr - before < JITMAP_ALL_ENTRIES) {
		n = pread(fd, buf, CHUNK, (off_t)j->offset);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		for (i = 0; i < n && !err && j->nr < JITMAP_MAX_ENTRIES &&
			    c->entries + j->nr - before < JITMAP_ALL_ENTRIES;
		     i++) {
			j->offset++;
			j->bytes++;
			if (buf[i] != '\n') {
				/* a NUL would cut the name short: dropped */
				if (j->len < JITMAP_LINE_MAX && buf[i] != '\0')
					j->line[j->len++] = buf[i];
				continue;
			}
			j->line[j->len] = '\0';
			if (j->len)
				err = jitmap__line(j, names, j->line);
			j->len = 0;
		}
		tail_add(j, buf, (size_t)i);
	}
	free(buf);
	c->entries += j->nr - before;
	return err;
}

/* A max-heap of entry indices: the last written on top. */
static void heap_push(uint32_t *h, size_t *n, uint32_t v)
{
	size_t i = (*n)++;

	while (i && h[(i - 1) / 2] < v) {
		h[i] = h[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	h[i] = v;
}

static void heap_pop(uint32_t *h, size_t *n)
{
	uint32_t v = h[--(*n)];
	size_t i = 0, c;

	while ((c = 2 * i + 1) < *n) {
		if (c + 1 < *n && h[c + 1] > h[c])
			c++;
		if (h[c] <= v)
			break;
		h[i] = h[c];
		i = c;
	}
	if (*n)
		h[i] = v;
}

/* One more segment; adjacent ones of one entry merged. */
static void seg_add(struct jit_seg *seg, size_t *nr, uint64_t start,
		    uint64_t end, uint32_t e)
{
	struct jit_seg *last = *nr ? &seg[*nr - 1] : NULL;

	if (last && last->end == start && last->e == e)
		last->end = end;
	else
		seg[(*nr)++] = (struct jit_seg){ start, end, e };
}

/*
 * Entries [first, last) of j as segments that do not overlap, appended to
 * seg (room for 2n + 1), each named by the entry written last among those
 * covering it: a sweep by address, the entries that cover the current
 * address in a heap by line order.  Each entry starts at most one segment
 * and its end at most one more.  -1 on ENOMEM.
 */
static int sweep(const struct jitmap *j, size_t first, size_t last,
		 struct jit_seg *seg, size_t *nr_seg)
{
	size_t n = last - first, nh = 0, i = 0;
	uint32_t *idx = malloc((n ? n : 1) * sizeof(*idx));
	uint32_t *heap = malloc((n ? n : 1) * sizeof(*heap));
	const struct jit_entry *e = j->e;
	uint64_t x;

	if (!idx || !heap) {
		free(idx);
		free(heap);
		return -1;
	}
	for (i = 0; i < n; i++)
		idx[i] = (uint32_t)(first + i);
	qsort_r(idx, n, sizeof(*idx), idx_cmp, (void *)e);
	i = 0;
	x = n ? e[idx[0]].start : 0;
	while (i < n || nh) {
		uint64_t next;

		while (i < n && e[idx[i]].start <= x)
			heap_push(heap, &nh, idx[i++]);
		/* entries that ended are dropped when they come on top */
		while (nh && e[heap[0]].end <= x)
			heap_pop(heap, &nh);
		if (!nh) {
			if (i < n)
				x = e[idx[i]].start;
			continue;
		}
		next = e[heap[0]].end;
		if (i < n && e[idx[i]].start < next)
			next = e[idx[i]].start;
		seg_add(seg, nr_seg, x, next, heap[0]);
		x = next;
	}
	free(heap);
	free(idx);
	return 0;
}

/* The entry segs names addr with, or -1. */
static int64_t seg_find(const struct jit_seg *seg, size_t nr, uint64_t addr)
{
	size_t lo = 0, hi = nr;

	/* the last segment starting at or before addr */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (seg[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || addr >= seg[lo - 1].end)
		return -1;
	return seg[lo - 1].e;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/*
 * The segments of a (na) with those of b (nb) over them, b's winning
 * where both cover an address (b's entries were written later), into out
 * (room for na + 2 nb + 1): each of b's segments cuts at most one of a's
 * in two.  Linear: a read costs its own lines' sort, not all of them.
 */
static void overlay(const struct jit_seg *a, size_t na,
		    const struct jit_seg *b, size_t nb, struct jit_seg *out,
		    size_t *no)
{
	size_t i, k = 0, done = SIZE_MAX;	/* b's segment put out already */

	*no = 0;
	for (i = 0; i < na; i++) {
		uint64_t x = a[i].start, end = a[i].end;

		for (; k < nb && b[k].start < end; k++) {
			if (b[k].start > x)
				seg_add(out, no, x, b[k].start, a[i].e);
			if (k != done)
				seg_add(out, no, b[k].start, b[k].end, b[k].e);
			if (b[k].end > x)
				x = b[k].end;
			if (b[k].end > end) {
				done = k;	/* on into a's next ones */
				break;
			}
		}
		if (x < end)
			seg_add(out, no, x, end, a[i].e);
	}
	for (; k < nb; k++)
		if (k != done)
			seg_add(out, no, b[k].start, b[k].end, b[k].e);
}

/* Segments over *seg (*nr): overlay()'s, or b's alone if fresh.  -1 on ENOMEM. */
static int seg_update(struct jit_seg **seg, size_t *nr, const struct jit_seg *b,
		      size_t nb, bool fresh)
{
	size_t na = fresh ? 0 : *nr;
	struct jit_seg *out = malloc((na + 2 * nb + 1) * sizeof(*out));

	if (!out)
		return -1;
	overlay(*seg, na, b, nb, out, nr);
	free(*seg);
	*seg = out;
	return 0;
}

/*
 * The entries from first on, just read: a read of their own (or, past
 * JITMAP_READS_MAX, the last read's), swept into segments alone and laid
 * over the read's and the epoch's.  A read of a rewritten map (fresh)
 * starts an epoch, lines or none (read before that limit only).  -1 on
 * ENOMEM.
 */
static int jitmap__index(struct jitmap *j, size_t first, bool fresh)
{
	size_t i, n = j->nr - first, nb = 0, nr_seg;
	struct jit_seg *b, *rs = NULL;
	struct jit_read *r;
	int err = -1;

	if (!n && !fresh)
		return 0;
	b = malloc((2 * n + 1) * sizeof(*b));
	if (!b || sweep(j, first, j->nr, b, &nb))
		goto out;
	if (j->nr_reads < JITMAP_READS_MAX) {
		if (grow_array(&j->reads, &j->alloc_reads, j->nr_reads + 1,
			       sizeof(*j->reads)))
			goto out;
		if (fresh)
			j->epoch = (uint32_t)j->nr_reads;
		j->reads[j->nr_reads++] = (struct jit_read){
			.from_ns = now_ns(), .first_e = first,
			.first_seg = j->nr_rseg, .epoch = j->epoch,
		};
	}
	/* the read's segments: the last ones in rseg, made again */
	r = &j->reads[j->nr_reads - 1];
	nr_seg = r->nr_seg;
	if (nr_seg) {
		rs = malloc(nr_seg * sizeof(*rs));
		if (!rs)
			goto out;
		memcpy(rs, j->rseg + r->first_seg, nr_seg * sizeof(*rs));
	}
	if (seg_update(&rs, &nr_seg, b, nb, false) ||
	    grow_array(&j->rseg, &j->alloc_rseg, r->first_seg + nr_seg,
		       sizeof(*j->rseg)) ||
	    seg_update(&j->seg, &j->nr_seg, b, nb, fresh))
		goto out;
	if (nr_seg)
		memcpy(j->rseg + r->first_seg, rs, nr_seg * sizeof(*rs));
	r->nr_seg = nr_seg;
	j->nr_rseg = r->first_seg + nr_seg;
	for (i = first; i < j->nr; i++)
		j->e[i].read = (uint32_t)(j->nr_reads - 1);
	err = 0;
out:
	free(rs);
	free(b);
	return err;
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

/*
 * Is fd (st) not the content j read so far: another file at the path, one
 * shorter than what was read, or one whose last JITMAP_TAIL bytes before
 * where the last read stopped changed?
 */
static bool jitmap__rewritten(const struct jitmap *j, int fd,
			      const struct stat *st)
{
	char buf[JITMAP_TAIL];
	ssize_t n;

	if (st->st_dev != j->dev || st->st_ino != j->ino ||
	    (uint64_t)st->st_size < j->offset)
		return true;
	if (!j->tail_len)
		return false;
	do
		n = pread(fd, buf, j->tail_len,
			  (off_t)(j->offset - j->tail_len));
	while (n < 0 && errno == EINTR);
	return n != (ssize_t)j->tail_len || memcmp(buf, j->tail, j->tail_len);
}

/*
 * Read j's file's new lines, or set j->why if it was never read.  A map
 * rewritten (jitmap__rewritten()) is read from its start, as an epoch of
 * its own, until JITMAP_READS_MAX reads; past that what was read stays.
 * -1 on ENOMEM.
 */
static int jitmap__update(struct jitmaps *c, struct jitmap *j, uint32_t uid,
			  bool has_uid)
{
	struct owner_want w = { .uid = uid, .has_uid = has_uid };
	size_t first = j->nr;
	char path[4096];
	struct stat st;
	bool fresh;
	int fd, err;

	if (j->frozen)
		return 0;
	if ((size_t)snprintf(path, sizeof(path), "%s/perf-%" PRIu32 ".map",
			     c->dir, j->pid) >= sizeof(path)) {
		j->why = "perf map path too long";
		return 0;
	}
	fd = safe_open_nofollow_if(-1, path, &st, owned_right, &w);
	if (fd < 0 && errno == ENOENT)
		fd = open_in_root(c, j->pid, &st, &w);
	if (fd < 0 && j->known)
		return 0;	/* gone, or out of reach: what was read stays */
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
	fresh = j->known && j->bytes < JITMAP_MAX_BYTES &&
		jitmap__rewritten(j, fd, &st);
	if (fresh) {
		if (j->nr_reads >= JITMAP_READS_MAX) {
			j->frozen = true;
			close(fd);
			return 0;
		}
		j->offset = 0;
		j->len = 0;
		j->tail_len = 0;
	}
	j->known = true;
	j->dev = st.st_dev;
	j->ino = st.st_ino;
	j->why = NULL;
	err = jitmap__read(j, c, fd);
	close(fd);
	return err ? err : jitmap__index(j, first, fresh);
}

/* pid's map, made (not read) if new; NULL on ENOMEM. */
static struct jitmap *jitmaps__of(struct jitmaps *c, uint32_t pid,
				  bool *made)
{
	struct jitmap key = { .pid = pid }, *j;
	void **slot;

	*made = false;
	slot = htab_find_slot(c->by_pid, &key, INSERT);
	if (!slot)
		return NULL;
	if (*slot)
		return *slot;
	j = calloc(1, sizeof(*j));
	if (!j) {
		htab_clear_slot(c->by_pid, slot);
		return NULL;
	}
	j->pid = pid;
	j->names = c->names;
	*slot = j;
	*made = true;
	return j;
}

const struct jitmap *jitmaps__get(struct jitmaps *c, uint32_t pid,
				  uint32_t uid, bool has_uid,
				  const char **why)
{
	struct jitmap *j;
	bool made;

	*why = NULL;
	j = jitmaps__of(c, pid, &made);
	if (!j || jitmap__update(c, j, uid, has_uid))
		return NULL;
	if (j->why) {
		*why = j->why;
		return NULL;
	}
	return j;
}

/* Is the noted stream this boot's (its pids these)?  Decided once. */
static bool live(struct jitmaps *c, const struct profile *p)
{
	const struct cprof_header *h;

	if (c->live < 0) {
		h = profile__header(p);
		c->live = same_boot(h->start_realtime_ns, h->start_time_ns);
	}
	return c->live;
}

void jitmaps__note_sample(struct jitmaps *c, const struct profile *p,
			  const struct cprof_sample *smp)
{
	const __u64 *ips = smp->ips + smp->nr_kernel;
	const struct cprof_mmap *mm = NULL;
	struct jitmap *j = NULL;
	uint32_t uid = 0;
	bool made, has_uid;
	unsigned int i;

	if (!c || !smp->nr_user || !live(c, p) ||
	    !profile__pid_has_anon(p, smp->pid))
		return;
	for (i = 0; i < smp->nr_user; i++) {
		mm = profile__find_mmap(p, smp->pid, ips[i], smp->time_ns);
		if (!mm || strcmp(mm->path, CPROF_ANON_NAME))
			continue;
		if (!j && !(j = jitmaps__of(c, smp->pid, &made)))
			return;
		if (seg_find(j->seg, j->nr_seg, ips[i]) < 0)
			break;
	}
	/* a map not there (or refused) is looked for again once a second */
	if (i == smp->nr_user ||
	    (j->tried && smp->time_ns < j->tried_ns +
	     (j->why ? 100 * JITMAP_REREAD_NS : JITMAP_REREAD_NS)))
		return;
	j->tried = true;
	j->tried_ns = smp->time_ns;
	has_uid = stream__mmap_uid(mm, &uid);
	/* out of memory: names are missed, the profile goes on */
	jitmap__update(c, j, uid, has_uid);
}

void jitmaps__drop_pid(struct jitmaps *c, uint32_t pid)
{
	struct jitmap key = { .pid = pid }, *j;

	if (!c || !(j = htab_find(c->by_pid, &key)))
		return;
	c->entries -= j->nr;
	htab_remove_elt(c->by_pid, &key);
}

/* The entry read b of j names addr with, or -1 (a read may have none). */
static int64_t read_find(const struct jitmap *j, size_t b, uint64_t addr)
{
	if (!j->reads[b].nr_seg)
		return -1;
	return seg_find(j->rseg + j->reads[b].first_seg, j->reads[b].nr_seg,
			addr);
}

const char *jitmap__lookup(const struct jitmap *j, uint64_t addr,
			   uint64_t time_ns, uint64_t *line)
{
	size_t k = 0, b, ep;
	int64_t e = -1;

	if (!j->nr_reads)
		return NULL;
	/* the reads done by time_ns, and the epoch of the last (or first) */
	while (k < j->nr_reads && j->reads[k].from_ns <= time_ns)
		k++;
	ep = j->reads[k ? k - 1 : 0].epoch;
	if (ep == j->epoch) {
		e = seg_find(j->seg, j->nr_seg, addr);
		if (e < 0)
			return NULL;	/* in no entry of the map as it is */
		if (j->e[e].read >= k)
			e = -1;
	}
	/* the latest of those by then that covers addr, in its epoch */
	for (b = k; e < 0 && b-- > ep;)
		e = read_find(j, b, addr);
	/* none: the first read after that covers it, in the same epoch */
	for (b = k; e < 0 && b < j->nr_reads && j->reads[b].epoch == ep; b++)
		e = read_find(j, b, addr);
	if (e < 0)
		return NULL;
	if (line)
		*line = (uint64_t)e;
	return strtab__get(j->names, j->e[e].name);
}

void jitmap__counts(const struct jitmap *j, uint64_t *used, uint64_t *skipped)
{
	*used = j->nr;
	*skipped = j->skipped;
}
