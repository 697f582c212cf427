// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * cachedir - entries kept on disk by the system file they are of.  See
 * cachedir.h.
 */
#include <dirent.h>
#include <elfutils/libdwelf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#include "lib/cachedir.h"
#include "lib/util.h"

#define FUSE_SUPER_MAGIC	0x65735546

struct cachedir {
	int dirfd;
	char *path;
	const struct cachedir_kind *kind;
	uint8_t exe_id[CACHEDIR_ID_MAX];
	uint32_t exe_id_len;
	/*
	 * The entries' size, all together, once known: found by a scan of
	 * the directory at the first write, not at open (which a profile's
	 * start waits for: a stat an entry).
	 */
	uint64_t bytes;
	bool bytes_known;
	unsigned int seq;		/* temporary names */
};

int64_t cachedir_ns(const struct timespec *ts)
{
	return ts->tv_sec * 1000000000LL + ts->tv_nsec;
}

bool cachedir_same_file(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino &&
	       a->st_size == b->st_size &&
	       cachedir_ns(&a->st_mtim) == cachedir_ns(&b->st_mtim) &&
	       cachedir_ns(&a->st_ctim) == cachedir_ns(&b->st_ctim);
}

void cachedir__name(const struct cachedir *c, const struct stat *st,
		    char *buf, size_t size)
{
	snprintf(buf, size, "%08" PRIx32 "-%" PRIx64 "-%" PRIx64 "-%" PRIx64
		 "-%" PRIx64 "%s", (uint32_t)st->st_dev,
		 (uint64_t)st->st_ino, (uint64_t)st->st_size,
		 (uint64_t)cachedir_ns(&st->st_mtim),
		 (uint64_t)cachedir_ns(&st->st_ctim), c->kind->suffix);
}

bool cachedir__parse_name(const struct cachedir *c, const char *name,
			  struct stat *st)
{
	uint64_t ino, size, mtime, ctime;
	uint32_t dev;
	int end = 0;

	if (sscanf(name, "%8" SCNx32 "-%" SCNx64 "-%" SCNx64 "-%" SCNx64
		   "-%" SCNx64 "%n", &dev, &ino, &size, &mtime, &ctime,
		   &end) != 5 || !end || strcmp(name + end, c->kind->suffix))
		return false;
	memset(st, 0, sizeof(*st));
	st->st_dev = dev;
	st->st_ino = ino;
	st->st_size = size;
	st->st_mtim.tv_sec = (int64_t)mtime / 1000000000LL;
	st->st_mtim.tv_nsec = (int64_t)mtime % 1000000000LL;
	st->st_ctim.tv_sec = (int64_t)ctime / 1000000000LL;
	st->st_ctim.tv_nsec = (int64_t)ctime % 1000000000LL;
	return true;
}

/* The GNU build ID of this program, by libelf, into c (none: length 0). */
static void own_build_id(struct cachedir *c)
{
	int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	const void *id;
	ssize_t n = -1;
	Elf *elf;

	if (fd < 0)
		return;
	elf = elf_version(EV_CURRENT) != EV_NONE ?
		elf_begin(fd, ELF_C_READ, NULL) : NULL;
	if (elf)
		n = dwelf_elf_gnu_build_id(elf, &id);
	if (n > 0 && n <= CACHEDIR_ID_MAX) {
		memcpy(c->exe_id, id, n);
		c->exe_id_len = n;
	}
	elf_end(elf);
	close(fd);
}

const uint8_t *cachedir__exe_id(const struct cachedir *c, uint32_t *len)
{
	*len = c->exe_id_len;
	return c->exe_id;
}

const char *cachedir_default(const char *sub, char *buf, size_t size)
{
	char name[256];

	if (geteuid() == 0) {
		snprintf(buf, size, "%s/%s", CACHEDIR_ROOT, sub);
		return buf;
	}
	snprintf(name, sizeof(name), "cprof-dump/%s", sub);
	return user_cache_path(buf, size, name);
}

const char *cachedir_fallback(const char *sub, char *buf, size_t size)
{
	const char *run = getenv("XDG_RUNTIME_DIR");

	if (geteuid() == 0)
		snprintf(buf, size, "%s/%s", CACHEDIR_RUN, sub);
	else if (run && *run)
		snprintf(buf, size, "%s/cprof-dump/%s", run, sub);
	else
		return NULL;
	return buf;
}

/* A directory only this user may write: owned, not group/other-writable. */
static bool private_dir(const struct stat *st)
{
	return S_ISDIR(st->st_mode) && st->st_uid == geteuid() &&
	       !(st->st_mode & 0022);
}

/* The directory dirfd, to list from its start; NULL if it cannot be. */
static DIR *list_dir(int dirfd)
{
	int fd = dup(dirfd);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;

	if (!d && fd >= 0)
		close(fd);
	if (d)
		rewinddir(d);
	return d;
}

/* Sum the entries' sizes; the temporary files of a run that died go. */
static uint64_t scan_bytes(struct cachedir *c)
{
	DIR *d = list_dir(c->dirfd);
	struct dirent *de;
	struct stat st, key;
	uint64_t bytes = 0;

	if (!d)
		return 0;
	while ((de = readdir(d))) {
		if (fstatat(c->dirfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW))
			continue;
		/* another run's, being written now, is younger than an hour */
		if (strstr(de->d_name, ".tmp.") &&
		    st.st_mtim.tv_sec < time(NULL) - 3600)
			unlinkat(c->dirfd, de->d_name, 0);
		else if (cachedir__parse_name(c, de->d_name, &key))
			bytes += st.st_size;
	}
	closedir(d);
	return bytes;
}

static bool read_only(int fd)
{
	struct statvfs sv;

	return fstatvfs(fd, &sv) == 0 && (sv.f_flag & ST_RDONLY);
}

struct cachedir *cachedir__open(const char *dir,
				const struct cachedir_kind *kind, bool loud)
{
	char parent[4096], *slash;
	struct cachedir *c;
	bool roots = false;
	struct stat st;
	int fd;

	if (!dir || !*dir)
		return NULL;
	snprintf(parent, sizeof(parent), "%s", dir);
	slash = strrchr(parent, '/');
	if (slash && slash != parent) {
		*slash = '\0';
		roots = !strcmp(parent, CACHEDIR_ROOT) ||
			!strcmp(parent, CACHEDIR_RUN);
		/* root's: its parent is made as debugfetch makes its own */
		mkdir(parent, !strcmp(parent, CACHEDIR_ROOT) ? 0755 : 0700);
	}
	if (mkdir(dir, 0700) && errno != EEXIST)
		goto bad;
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		goto bad;
	/* there already, on a file system mounted read-only since */
	if (read_only(fd)) {
		close(fd);
		errno = EROFS;
		goto bad;
	}
	if (fstat(fd, &st) || !private_dir(&st) ||
	    (roots && (lstat(parent, &st) || !private_dir(&st)))) {
		close(fd);
		errno = EPERM;
		goto bad;
	}
	c = calloc(1, sizeof(*c));
	if (c)
		c->path = strdup(dir);
	if (!c || !c->path) {
		free(c);
		close(fd);
		goto bad;
	}
	c->dirfd = fd;
	c->kind = kind;
	own_build_id(c);
	if (!c->exe_id_len)
		warning("%s: this cprof-dump has no GNU build ID (link it with --build-id): %s are not kept in %s",
			kind->what, kind->items, esc(dir));
	return c;
bad:
	if (loud || errno == EPERM)
		warning("%s: cache %s: %s (it must be a directory only this user may write): %s",
			kind->what, esc(dir), strerror(errno), kind->without);
	return NULL;
}

struct cachedir *cachedir__open_default(const char *dir, const char *fallback,
					const struct cachedir_kind *kind,
					bool *said)
{
	struct cachedir *c = cachedir__open(dir, kind, false);

	if (c || errno != EROFS || !fallback)
		return c;
	c = cachedir__open(fallback, kind, true);
	if (c && !*said) {
		*said = true;
		warning("%s: %s is on a read-only file system: %s are kept in %s, until the machine restarts",
			kind->what, esc(dir), kind->items, esc(fallback));
	}
	return c;
}

void cachedir__close(struct cachedir *c)
{
	if (!c)
		return;
	close(c->dirfd);
	free(c->path);
	free(c);
}

void cachedir__forget(struct cachedir *c)
{
	if (!c)
		return;
	free(c->path);
	free(c);
}

const char *cachedir__path(const struct cachedir *c)
{
	return c->path;
}

bool cachedir_keeps(const struct stat *st, int fd)
{
	struct statfs sf;

	return st->st_uid == 0 && !(st->st_mode & 0022) &&
	       (fd < 0 || (!fstatfs(fd, &sf) &&
			   sf.f_type != FUSE_SUPER_MAGIC));
}

bool cachedir_keeps_path(const char *path, struct stat *st)
{
	struct statfs sf;

	return !stat(path, st) && S_ISREG(st->st_mode) &&
	       cachedir_keeps(st, -1) && !statfs(path, &sf) &&
	       sf.f_type != FUSE_SUPER_MAGIC;
}

int cachedir__open_entry(struct cachedir *c, const char *name, off_t min,
			 off_t max, struct stat *st)
{
	int fd = openat(c->dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK |
			O_CLOEXEC);

	if (fd < 0)
		return -1;
	if (fstat(fd, st) || !S_ISREG(st->st_mode) || st->st_size < min ||
	    st->st_size > max) {
		close(fd);
		return -1;
	}
	return fd;
}

void cachedir__touch(int fd)
{
	futimens(fd, NULL);
}

void cachedir__drop(struct cachedir *c, const char *name, uint64_t size)
{
	if (unlinkat(c->dirfd, name, 0) == 0 && c->bytes_known)
		c->bytes -= c->bytes < size ? c->bytes : size;
}

static int by_used(const void *a, const void *b)
{
	const struct cachedir_entry *x = a, *y = b;

	return (x->used > y->used) - (x->used < y->used);
}

size_t cachedir__list(struct cachedir *c, struct cachedir_entry **out,
		      bool newest)
{
	DIR *d = list_dir(c->dirfd);
	struct cachedir_entry *v = NULL, *e;
	size_t n = 0, cap = 0, i;
	struct dirent *de;
	struct stat st, key;

	*out = NULL;
	if (!d)
		return 0;
	while ((de = readdir(d))) {
		if (!cachedir__parse_name(c, de->d_name, &key) ||
		    fstatat(c->dirfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) ||
		    grow_array(&v, &cap, n + 1, sizeof(*v)))
			continue;
		e = &v[n++];
		snprintf(e->name, sizeof(e->name), "%s", de->d_name);
		e->used = cachedir_ns(&st.st_mtim);
		e->size = st.st_size;
	}
	closedir(d);
	if (n)
		qsort(v, n, sizeof(*v), by_used);
	if (newest)
		for (i = 0; i < n / 2; i++) {
			struct cachedir_entry tmp = v[i];

			v[i] = v[n - 1 - i];
			v[n - 1 - i] = tmp;
		}
	*out = v;
	return n;
}

/* Past the bound: the least recently used go, to 3/4 of it. */
static void prune(struct cachedir *c)
{
	struct cachedir_entry *v;
	uint64_t max = c->kind->max_bytes;
	size_t n, i;

	if (c->bytes <= max)
		return;
	n = cachedir__list(c, &v, false);
	c->bytes = 0;
	for (i = 0; i < n; i++)
		c->bytes += v[i].size;
	for (i = 0; i < n && c->bytes > max / 4 * 3; i++)
		if (!unlinkat(c->dirfd, v[i].name, 0))
			c->bytes -= v[i].size;
	free(v);
}

int cachedir__write(struct cachedir *c, const char *name,
		    const struct iovec *iov, int n)
{
	char tmp[512];
	uint64_t len = 0;
	ssize_t w;
	int fd, i;
	bool ok = true;

	snprintf(tmp, sizeof(tmp), "%s.tmp.%d.%u", name, (int)getpid(),
		 c->seq++);
	fd = openat(c->dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
		    O_CLOEXEC, 0600);
	if (fd < 0)
		return -1;
	for (i = 0; i < n && ok; i++) {
		w = write(fd, iov[i].iov_base, iov[i].iov_len);
		ok = w == (ssize_t)iov[i].iov_len;
		len += iov[i].iov_len;
	}
	if (close(fd) || !ok || renameat(c->dirfd, tmp, c->dirfd, name)) {
		unlinkat(c->dirfd, tmp, 0);
		return -1;
	}
	if (!c->bytes_known) {
		c->bytes = scan_bytes(c);
		c->bytes_known = true;
	} else {
		c->bytes += len;
	}
	prune(c);
	return 0;
}
