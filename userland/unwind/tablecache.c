// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Compiled unwind tables on disk.
 *
 * The module keeps a file's table while the module is loaded; a new program
 * otherwise walks by frame pointers from its first sample until cprof-dump
 * has compiled its table (a second or more for python3 under emulation).
 * Kept here, a table is read back in milliseconds, and tableload.c loads
 * the most recently used ones into a module that holds none before any
 * profile, so a program that ran before is complete from its first sample.
 *
 * One file an entry, named by the file it describes: device, inode, size,
 * mtime and ctime (a file written to, replaced, chmod-ed, or a recycled
 * inode is another name); system files only (tablecache__keeps()).  An entry holds a header (that key,
 * the GNU build ID of the cprof-dump that compiled it: another build's
 * compiler may make other rows; the path the file was opened by; a CRC of
 * it all) and the table's rows.  An entry that does not check is not used,
 * and is replaced when the file is compiled again.
 *
 * The directory is this user's only (root's: /var/cache/cprof-dump/tables,
 * or /run/cprof-dump/tables when that is read-only, 0700, under a parent
 * only root may write), checked when opened, and every
 * name is opened relative to it without following symlinks: nobody else
 * can plant an entry.  The entries take TABLECACHE_MAX_BYTES at most: past
 * that, the least recently used go.
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
#include <zlib.h>

#include "unwind/cfi.h"
#include "unwind/tablecache.h"
#include "lib/util.h"

#define TC_MAGIC	"CPROFTC1"
#define FUSE_SUPER_MAGIC	0x65735546
#define TC_ID_MAX	32		/* a build ID's bytes */
#define TC_PATH_MAX	4096

struct tc_head {
	char magic[8];			/* TC_MAGIC */
	uint8_t exe_id[TC_ID_MAX];	/* the compiling cprof-dump's build ID */
	uint32_t exe_id_len;
	uint32_t dev;
	uint64_t ino;
	uint64_t size;
	int64_t mtime_ns;
	int64_t ctime_ns;
	uint32_t nrows;
	uint32_t frame_pointers;
	uint64_t stop_bytes[CFI_STOP_NR];
	uint32_t path_len;		/* with its NUL */
	uint32_t crc;			/* of all, this field 0 */
};

struct tablecache {
	int dirfd;
	uint8_t exe_id[TC_ID_MAX];
	uint32_t exe_id_len;
	/*
	 * The entries' size, all together, once known: found by a scan of
	 * the directory at the first put, not at open (which a profile's
	 * start waits for).
	 */
	uint64_t bytes;
	bool bytes_known;
	unsigned int seq;		/* temporary names */
};

static int64_t ns_of(const struct timespec *ts)
{
	return ts->tv_sec * 1000000000LL + ts->tv_nsec;
}

static void entry_name(char *buf, size_t size, const struct stat *st)
{
	snprintf(buf, size, "%08" PRIx32 "-%" PRIx64 "-%" PRIx64 "-%" PRIx64
		 "-%" PRIx64 ".tab", (uint32_t)st->st_dev,
		 (uint64_t)st->st_ino, (uint64_t)st->st_size,
		 (uint64_t)ns_of(&st->st_mtim), (uint64_t)ns_of(&st->st_ctim));
}

/* The key an entry's name gives; false if it is not such a name. */
static bool parse_name(const char *name, struct stat *st)
{
	uint64_t ino, size, mtime, ctime;
	uint32_t dev;
	int end = 0;

	if (sscanf(name, "%8" SCNx32 "-%" SCNx64 "-%" SCNx64 "-%" SCNx64
		   "-%" SCNx64 ".tab%n", &dev, &ino, &size, &mtime, &ctime,
		   &end) != 5 || !end || name[end])
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

/* The GNU build ID of this program, by libdw, into c (none: length 0). */
static void own_build_id(struct tablecache *c)
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
	if (n > 0 && n <= TC_ID_MAX) {
		memcpy(c->exe_id, id, n);
		c->exe_id_len = n;
	}
	elf_end(elf);
	close(fd);
}

const char *tablecache__default_dir(void)
{
	static char dir[4096];

	if (geteuid() == 0)
		return TABLECACHE_ROOT_DIR;
	return user_cache_path(dir, sizeof(dir), "cprof-dump/tables");
}

const char *tablecache__fallback_dir(void)
{
	static char dir[4096];
	const char *run = getenv("XDG_RUNTIME_DIR");

	if (geteuid() == 0)
		return TABLECACHE_RUN_DIR;
	if (!run || !*run)
		return NULL;
	snprintf(dir, sizeof(dir), "%s/cprof-dump/tables", run);
	return dir;
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
static uint64_t scan_bytes(int dirfd)
{
	DIR *d = list_dir(dirfd);
	struct dirent *de;
	struct stat st, key;
	uint64_t bytes = 0;

	if (!d)
		return 0;
	while ((de = readdir(d))) {
		if (fstatat(dirfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW))
			continue;
		/* another run's, being written now, is younger than an hour */
		if (strstr(de->d_name, ".tmp.") &&
		    st.st_mtim.tv_sec < time(NULL) - 3600)
			unlinkat(dirfd, de->d_name, 0);
		else if (parse_name(de->d_name, &key))
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

struct tablecache *tablecache__open(const char *dir, bool loud)
{
	struct tablecache *c;
	char parent[4096], *slash;
	struct stat st;
	int fd;

	if (!dir || !*dir)
		return NULL;
	snprintf(parent, sizeof(parent), "%s", dir);
	slash = strrchr(parent, '/');
	if (slash && slash != parent) {
		*slash = '\0';
		/* root's default: its parent is made as debugfetch makes it */
		mkdir(parent, !strcmp(dir, TABLECACHE_ROOT_DIR) ? 0755 : 0700);
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
	    ((!strcmp(dir, TABLECACHE_ROOT_DIR) ||
	      !strcmp(dir, TABLECACHE_RUN_DIR)) &&
	     (lstat(parent, &st) || !private_dir(&st)))) {
		close(fd);
		errno = EPERM;
		goto bad;
	}
	c = calloc(1, sizeof(*c));
	if (!c) {
		close(fd);
		goto bad;
	}
	c->dirfd = fd;
	own_build_id(c);
	if (!c->exe_id_len)
		warning("unwind tables: this cprof-dump has no GNU build ID (link it with --build-id): tables are not kept in %s",
			esc(dir));
	return c;
bad:
	if (loud || errno == EPERM)
		warning("unwind tables: cache %s: %s (it must be a directory only this user may write): tables are compiled every time",
			esc(dir), strerror(errno));
	return NULL;
}

struct tablecache *tablecache__open_default(const char *dir,
					    const char *fallback)
{
	static bool said;
	struct tablecache *c = tablecache__open(dir, false);

	if (c || errno != EROFS || !fallback)
		return c;
	c = tablecache__open(fallback, true);
	if (c && !said) {
		said = true;
		warning("unwind tables: %s is on a read-only file system: tables are kept in %s, until the machine restarts",
			esc(dir), esc(fallback));
	}
	return c;
}

static uint32_t entry_crc(const struct tc_head *h, const void *rest,
			  size_t len)
{
	struct tc_head z = *h;
	uLong crc;

	z.crc = 0;
	crc = crc32(0L, (const Bytef *)&z, sizeof(z));
	return crc32(crc, rest, len);
}

/*
 * An entry read whole, checked; 0 ok (*t and path filled).  Its header is
 * read first: another build's entry (an upgrade made them all stale) is
 * removed without reading the rest.  touch: mark it used now.
 */
static int read_entry(struct tablecache *c, const char *name,
		      const struct stat *want, struct cfi_table *t,
		      char *path, size_t path_size, bool touch)
{
	struct tc_head h;
	struct stat st;
	char *buf = NULL;
	size_t len, n;
	ssize_t r;
	int fd, ret = -1;
	uint32_t i;

	memset(t, 0, sizeof(*t));
	fd = openat(c->dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK |
		    O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) ||
	    st.st_size < (off_t)sizeof(h) ||
	    (uint64_t)st.st_size > sizeof(h) + TC_PATH_MAX +
				   (uint64_t)CPROF_UTABLE_ROWS_MAX *
				   (sizeof(*t->pc) + sizeof(*t->row)))
		goto out;
	len = st.st_size;
	if (pread(fd, &h, sizeof(h), 0) != (ssize_t)sizeof(h))
		goto out;
	if (memcmp(h.magic, TC_MAGIC, sizeof(h.magic)) ||
	    h.exe_id_len != c->exe_id_len || !c->exe_id_len ||
	    memcmp(h.exe_id, c->exe_id, c->exe_id_len)) {
		if (unlinkat(c->dirfd, name, 0) == 0 && c->bytes_known)
			c->bytes -= c->bytes < (uint64_t)len ? c->bytes : len;
		goto out;
	}
	buf = malloc(len);
	if (!buf)
		goto out;
	for (n = 0; n < len; n += r) {
		r = read(fd, buf + n, len - n);
		if (r <= 0)
			goto out;
	}
	if (h.dev != (uint32_t)want->st_dev || h.ino != (uint64_t)want->st_ino ||
	    h.size != (uint64_t)want->st_size ||
	    h.mtime_ns != ns_of(&want->st_mtim) ||
	    h.ctime_ns != ns_of(&want->st_ctim) ||
	    !h.nrows || h.nrows > CPROF_UTABLE_ROWS_MAX ||
	    !h.path_len || h.path_len > TC_PATH_MAX ||
	    len != sizeof(h) + h.path_len +
		   (size_t)h.nrows * (sizeof(*t->pc) + sizeof(*t->row)) ||
	    entry_crc(&h, buf + sizeof(h), len - sizeof(h)) != h.crc ||
	    buf[sizeof(h) + h.path_len - 1])
		goto out;
	t->pc = malloc(h.nrows * sizeof(*t->pc));
	t->row = malloc(h.nrows * sizeof(*t->row));
	if (!t->pc || !t->row)
		goto out;
	memcpy(t->pc, buf + sizeof(h) + h.path_len, h.nrows * sizeof(*t->pc));
	memcpy(t->row, buf + sizeof(h) + h.path_len + h.nrows * sizeof(*t->pc),
	       h.nrows * sizeof(*t->row));
	for (i = 1; i < h.nrows; i++)
		if (t->pc[i] <= t->pc[i - 1])
			goto out;
	t->n = h.nrows;
	t->frame_pointers = h.frame_pointers;
	memcpy(t->stop_bytes, h.stop_bytes, sizeof(t->stop_bytes));
	if (path)
		snprintf(path, path_size, "%s", buf + sizeof(h));
	/* used now: the last to go */
	if (touch)
		futimens(fd, NULL);
	ret = 0;
out:
	if (ret)
		cfi_table_free(t);
	free(buf);
	close(fd);
	return ret;
}

bool tablecache__keeps(const struct stat *st, int fd)
{
	struct statfs sf;

	return st->st_uid == 0 && !(st->st_mode & 0022) &&
	       (fd < 0 || (!fstatfs(fd, &sf) &&
			   sf.f_type != FUSE_SUPER_MAGIC));
}

int tablecache__get(struct tablecache *c, const struct stat *st,
		    struct cfi_table *t)
{
	char name[128];

	if (!c)
		return -1;
	entry_name(name, sizeof(name), st);
	return read_entry(c, name, st, t, NULL, 0, true);
}

struct old_entry {
	char name[256];
	int64_t used;
	off_t size;
};

static int by_used(const void *a, const void *b)
{
	const struct old_entry *x = a, *y = b;

	return (x->used > y->used) - (x->used < y->used);
}

/*
 * The entries, least recently used first (most recently used first if
 * newest), into *out; how many.
 */
static size_t list_entries(struct tablecache *c, struct old_entry **out,
			   bool newest)
{
	DIR *d = list_dir(c->dirfd);
	struct old_entry *v = NULL, *e;
	size_t n = 0, cap = 0, i;
	struct dirent *de;
	struct stat st, key;

	*out = NULL;
	if (!d)
		return 0;
	while ((de = readdir(d))) {
		if (!parse_name(de->d_name, &key) ||
		    fstatat(c->dirfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) ||
		    grow_array(&v, &cap, n + 1, sizeof(*v)))
			continue;
		e = &v[n++];
		memcpy(e->name, de->d_name, sizeof(e->name));
		e->name[sizeof(e->name) - 1] = '\0';
		e->used = ns_of(&st.st_mtim);
		e->size = st.st_size;
	}
	closedir(d);
	if (n)
		qsort(v, n, sizeof(*v), by_used);
	if (newest)
		for (i = 0; i < n / 2; i++) {
			struct old_entry tmp = v[i];

			v[i] = v[n - 1 - i];
			v[n - 1 - i] = tmp;
		}
	*out = v;
	return n;
}

/* Past TABLECACHE_MAX_BYTES: the least recently used go, to 3/4 of it. */
static void prune(struct tablecache *c)
{
	struct old_entry *v;
	size_t n, i;

	if (c->bytes <= TABLECACHE_MAX_BYTES)
		return;
	n = list_entries(c, &v, false);
	c->bytes = 0;
	for (i = 0; i < n; i++)
		c->bytes += v[i].size;
	for (i = 0; i < n && c->bytes > TABLECACHE_MAX_BYTES / 4 * 3; i++)
		if (!unlinkat(c->dirfd, v[i].name, 0))
			c->bytes -= v[i].size;
	free(v);
}

void tablecache__put(struct tablecache *c, const struct stat *st,
		     const char *path, const struct cfi_table *t)
{
	struct tc_head h = { .magic = TC_MAGIC };
	size_t plen = strlen(path) + 1, rest;
	char name[128], tmp[160], *buf;
	int fd, ok;

	if (!c || !c->exe_id_len || !t->n || t->n > CPROF_UTABLE_ROWS_MAX ||
	    plen > TC_PATH_MAX)
		return;
	memcpy(h.exe_id, c->exe_id, c->exe_id_len);
	h.exe_id_len = c->exe_id_len;
	h.dev = st->st_dev;
	h.ino = st->st_ino;
	h.size = st->st_size;
	h.mtime_ns = ns_of(&st->st_mtim);
	h.ctime_ns = ns_of(&st->st_ctim);
	h.nrows = t->n;
	h.frame_pointers = t->frame_pointers;
	memcpy(h.stop_bytes, t->stop_bytes, sizeof(h.stop_bytes));
	h.path_len = plen;
	rest = plen + t->n * (sizeof(*t->pc) + sizeof(*t->row));
	buf = malloc(rest);
	if (!buf)
		return;
	memcpy(buf, path, plen);
	memcpy(buf + plen, t->pc, t->n * sizeof(*t->pc));
	memcpy(buf + plen + t->n * sizeof(*t->pc), t->row,
	       t->n * sizeof(*t->row));
	h.crc = entry_crc(&h, buf, rest);
	entry_name(name, sizeof(name), st);
	snprintf(tmp, sizeof(tmp), "%s.tmp.%d.%u", name, (int)getpid(),
		 c->seq++);
	fd = openat(c->dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
		    O_CLOEXEC, 0600);
	if (fd < 0) {
		free(buf);
		return;
	}
	ok = write(fd, &h, sizeof(h)) == (ssize_t)sizeof(h) &&
	     write(fd, buf, rest) == (ssize_t)rest;
	free(buf);
	if (close(fd) || !ok ||
	    renameat(c->dirfd, tmp, c->dirfd, name)) {
		/* a full disk: no entry, the table itself is loaded */
		unlinkat(c->dirfd, tmp, 0);
		return;
	}
	if (!c->bytes_known) {
		c->bytes = scan_bytes(c->dirfd);
		c->bytes_known = true;
	} else {
		c->bytes += sizeof(h) + rest;
	}
	prune(c);
}

void tablecache__each_recent(struct tablecache *c, uint64_t max_rows,
			     bool (*skip)(void *arg, const struct stat *st),
			     void (*fn)(void *arg, const struct stat *st,
					const char *path,
					const struct cfi_table *t),
			     void *arg)
{
	char path[TC_PATH_MAX];
	struct cfi_table t;
	struct old_entry *v;
	struct stat key, now;
	uint64_t rows = 0;
	size_t n, i;

	if (!c)
		return;
	n = list_entries(c, &v, true);
	for (i = 0; i < n && rows < max_rows; i++) {
		if (!parse_name(v[i].name, &key) ||
		    (skip && skip(arg, &key)) ||
		    read_entry(c, v[i].name, &key, &t, path, sizeof(path),
			       false))
			continue;
		/*
		 * Only the file as it is now: an older entry of the same
		 * inode would replace the newer one's table in the module.
		 */
		if (!stat(path, &now) && tablecache__keeps(&now, -1) &&
		    now.st_dev == key.st_dev &&
		    now.st_ino == key.st_ino && now.st_size == key.st_size &&
		    ns_of(&now.st_mtim) == ns_of(&key.st_mtim) &&
		    ns_of(&now.st_ctim) == ns_of(&key.st_ctim)) {
			rows += t.n;
			fn(arg, &key, path, &t);
		}
		cfi_table_free(&t);
	}
	free(v);
}

void tablecache__close(struct tablecache *c)
{
	if (!c)
		return;
	close(c->dirfd);
	free(c);
}
