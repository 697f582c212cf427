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
#include <sys/stat.h>
#include <unistd.h>

#include <hashtab.h>

#include "jitmap.h"
#include "safeopen.h"
#include "strtab.h"
#include "util.h"

/* Entries looked at before the one found, for an address (see lookup). */
#define JITMAP_BACK_MAX	256
#define JITMAP_LINE_MAX	(JITMAP_NAME_MAX + 64)

struct jit_entry {
	uint64_t start, end;
	uint32_t seq;		/* line order: the last written wins */
	int64_t name;		/* in the cache's strtab */
};

struct jitmap {
	uint32_t pid;
	const char *why;	/* set: none to use, and why */
	char why_buf[160];
	struct jit_entry *e;	/* by start */
	uint64_t *max_end;	/* the largest end of e[0..i] */
	size_t nr, alloc;
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
	free(j->max_end);
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
	while (len && (p[len - 1] == '\r' || p[len - 1] == ' '))
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
static int jitmap__read(struct jitmap *j, struct strtab *names, int fd)
{
	enum { CHUNK = 65536 };
	char line[JITMAP_LINE_MAX + 1], *buf = malloc(CHUNK);
	size_t len = 0, total = 0;
	uint32_t seq = 0;
	int err = 0;
	ssize_t n, i;

	if (!buf)
		return -1;
	while (!err && total < JITMAP_MAX_BYTES &&
	       j->nr < JITMAP_MAX_ENTRIES) {
		n = read(fd, buf, CHUNK);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		total += (size_t)n;
		for (i = 0; i < n && !err && j->nr < JITMAP_MAX_ENTRIES; i++) {
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
	return err;
}

/* Sorted, with the running largest end each lookup walks back by. */
static int jitmap__index(struct jitmap *j)
{
	uint64_t m = 0;
	size_t i;

	qsort(j->e, j->nr, sizeof(*j->e), entry_cmp);
	j->max_end = malloc((j->nr ? j->nr : 1) * sizeof(*j->max_end));
	if (!j->max_end)
		return -1;
	for (i = 0; i < j->nr; i++) {
		if (j->e[i].end > m)
			m = j->e[i].end;
		j->max_end[i] = m;
	}
	return 0;
}

struct owner_want {
	uint32_t uid;
	bool has_uid;
	uint32_t owner;		/* the file's, when refused */
};

static bool owned_right(const struct statx *sx, const void *arg)
{
	struct owner_want *w = (struct owner_want *)arg;

	w->owner = sx->stx_uid;
	return sx->stx_uid == 0 || (w->has_uid && sx->stx_uid == w->uid);
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
	struct stat root, ours;
	uint32_t nspid = ns_pid(pid);
	int rootfd, fd, err;

	snprintf(proc, sizeof(proc), "/proc/%" PRIu32 "/root", pid);
	rootfd = nspid ? open(proc, O_PATH | O_DIRECTORY | O_CLOEXEC) : -1;
	if (rootfd < 0 || fstat(rootfd, &root) || stat("/", &ours) ||
	    (nspid == pid && root.st_dev == ours.st_dev &&
	     root.st_ino == ours.st_ino) ||
	    (size_t)snprintf(path, sizeof(path), "%s/perf-%" PRIu32 ".map",
			     c->dir, nspid) >= sizeof(path)) {
		if (rootfd >= 0)
			close(rootfd);
		errno = ENOENT;
		return -1;
	}
	fd = safe_open_nofollow_if(rootfd, path, st, owned_right, w);
	err = errno;
	close(rootfd);
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
	err = jitmap__read(j, c->names, fd);
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
	slot = htab_find_slot(c->by_pid, &key, INSERT);
	if (!slot)
		return NULL;
	if (!*slot) {
		j = calloc(1, sizeof(*j));
		if (!j) {
			htab_clear_slot(c->by_pid, slot);
			return NULL;
		}
		j->pid = pid;
		j->names = c->names;
		if (jitmap__open(c, j, uid, has_uid)) {
			htab_clear_slot(c->by_pid, slot);
			jm_free(j);
			return NULL;
		}
		*slot = j;
	}
	j = *slot;
	if (j->why) {
		*why = j->why;
		return NULL;
	}
	return j;
}

const char *jitmap__lookup(const struct jitmap *j, uint64_t addr)
{
	const struct jit_entry *best = NULL;
	size_t lo = 0, hi = j->nr, steps;

	/* the last entry starting at or before addr */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (j->e[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* back while an earlier entry may still reach addr */
	for (steps = 0; lo > 0 && steps < JITMAP_BACK_MAX; steps++) {
		const struct jit_entry *e = &j->e[--lo];

		if (j->max_end[lo] <= addr)
			break;
		if (addr < e->end && (!best || e->seq > best->seq))
			best = e;
	}
	return best ? strtab__get(j->names, best->name) : NULL;
}

void jitmap__counts(const struct jitmap *j, uint64_t *used, uint64_t *skipped)
{
	*used = j->nr;
	*skipped = j->skipped;
}
