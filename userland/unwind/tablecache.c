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
 * inode is another name); system files only (tablecache__keeps()).  An
 * entry holds a header (that key, the GNU build ID of the cprof-dump that
 * compiled it: another build's compiler may make other rows; the path the
 * file was opened by; a CRC of it all) and the table as the module takes
 * it (tableenc.h), so that one read back is written to the module as it
 * is.  An entry that does not check is not used, and is replaced when the
 * file is compiled again.
 *
 * The directory (cachedir.h) is this user's only (root's:
 * /var/cache/cprof-dump/tables, or /run/cprof-dump/tables when that is
 * read-only): nobody else can plant an entry.  The entries take
 * TABLECACHE_MAX_BYTES at most: past that, the least recently used go.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "lib/cachedir.h"
#include "unwind/cfi.h"
#include "unwind/tablecache.h"
#include "unwind/tableenc.h"
#include "lib/util.h"

#define TC_MAGIC	"CPROFTC2"
#define TC_ID_MAX	CACHEDIR_ID_MAX	/* a build ID's bytes */
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
	uint32_t nrules;
	uint32_t frame_pointers;
	uint32_t reserved;		/* 0 */
	uint64_t stop_bytes[CFI_STOP_NR];
	uint32_t path_len;		/* with its NUL */
	uint32_t crc;			/* of all, this field 0 */
};

struct tablecache {
	struct cachedir *dir;
};

static const struct cachedir_kind kind = {
	.what = "unwind tables",
	.items = "tables",
	.without = "tables are compiled every time",
	.suffix = ".tab",
	.max_bytes = TABLECACHE_MAX_BYTES,
};

const char *tablecache__default_dir(void)
{
	static char dir[4096];

	return cachedir_default("tables", dir, sizeof(dir));
}

const char *tablecache__fallback_dir(void)
{
	static char dir[4096];

	return cachedir_fallback("tables", dir, sizeof(dir));
}

static struct tablecache *wrap(struct cachedir *d)
{
	struct tablecache *c = d ? calloc(1, sizeof(*c)) : NULL;

	if (!c) {
		cachedir__close(d);
		return NULL;
	}
	c->dir = d;
	return c;
}

struct tablecache *tablecache__open(const char *dir, bool loud)
{
	return wrap(cachedir__open(dir, &kind, loud));
}

struct tablecache *tablecache__open_default(const char *dir,
					    const char *fallback)
{
	static bool said;

	return wrap(cachedir__open_default(dir, fallback, &kind, &said));
}

/* The CRC of an entry: its header (crc 0), then the rest, in two pieces. */
static uint32_t entry_crc(const struct tc_head *h, const void *a, size_t alen,
			  const void *b, size_t blen)
{
	struct tc_head z = *h;
	uLong crc;

	z.crc = 0;
	crc = crc32(0L, (const Bytef *)&z, sizeof(z));
	crc = crc32_z(crc, a, alen);
	return blen ? crc32_z(crc, b, blen) : crc;
}

/*
 * An entry read whole, checked; 0 ok (*e and path filled).  Its header is
 * read first: another build's entry (an upgrade made them all stale) is
 * removed without reading the rest.  touch: mark it used now.
 */
static int read_entry(struct tablecache *c, const char *name,
		      const struct stat *want, struct tableenc *e,
		      char *path, size_t path_size, bool touch)
{
	uint32_t id_len;
	const uint8_t *id = cachedir__exe_id(c->dir, &id_len);
	struct tc_head h;
	struct stat st;
	char *buf = NULL;
	size_t len, n;
	ssize_t r;
	int fd, ret = -1;

	memset(e, 0, sizeof(*e));
	fd = cachedir__open_entry(c->dir, name, sizeof(h),
				  sizeof(h) + TC_PATH_MAX +
				  tableenc_len(CPROF_UTABLE_ROWS_MAX,
					       CPROF_UTABLE_RULES_MAX), &st);
	if (fd < 0)
		return -1;
	len = st.st_size;
	if (pread(fd, &h, sizeof(h), 0) != (ssize_t)sizeof(h))
		goto out;
	if (memcmp(h.magic, TC_MAGIC, sizeof(h.magic)) ||
	    h.exe_id_len != id_len || !id_len ||
	    memcmp(h.exe_id, id, id_len)) {
		cachedir__drop(c->dir, name, len);
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
	    h.mtime_ns != cachedir_ns(&want->st_mtim) ||
	    h.ctime_ns != cachedir_ns(&want->st_ctim) ||
	    !h.path_len || h.path_len > TC_PATH_MAX ||
	    len < sizeof(h) + h.path_len || h.reserved ||
	    entry_crc(&h, buf + sizeof(h), len - sizeof(h), NULL, 0) != h.crc ||
	    buf[sizeof(h) + h.path_len - 1])
		goto out;
	/* counts or rows the module would refuse: gone, compiled again */
	if (!tableenc_check(buf + sizeof(h) + h.path_len,
			    len - sizeof(h) - h.path_len, h.nrows, h.nrules)) {
		cachedir__drop(c->dir, name, len);
		goto out;
	}
	e->len = len - sizeof(h) - h.path_len;
	e->body = malloc(e->len);
	if (!e->body)
		goto out;
	memcpy(e->body, buf + sizeof(h) + h.path_len, e->len);
	e->nr_rows = h.nrows;
	e->nr_rules = h.nrules;
	e->frame_pointers = h.frame_pointers;
	memcpy(e->stop_bytes, h.stop_bytes, sizeof(e->stop_bytes));
	if (path)
		snprintf(path, path_size, "%s", buf + sizeof(h));
	/* used now: the last to go */
	if (touch)
		cachedir__touch(fd);
	ret = 0;
out:
	if (ret)
		tableenc_free(e);
	free(buf);
	close(fd);
	return ret;
}

bool tablecache__keeps(const struct stat *st, int fd)
{
	return cachedir_keeps(st, fd);
}

int tablecache__get(struct tablecache *c, const struct stat *st,
		    struct tableenc *e)
{
	char name[128];

	if (!c)
		return -1;
	cachedir__name(c->dir, st, name, sizeof(name));
	return read_entry(c, name, st, e, NULL, 0, true);
}

void tablecache__put(struct tablecache *c, const struct stat *st,
		     const char *path, const struct tableenc *e)
{
	struct tc_head h = { .magic = TC_MAGIC };
	size_t plen = strlen(path) + 1;
	const uint8_t *id;
	struct iovec iov[3];
	uint32_t id_len;
	char name[128];

	if (!c)
		return;
	id = cachedir__exe_id(c->dir, &id_len);
	if (!id_len || !e->body || plen > TC_PATH_MAX)
		return;
	memcpy(h.exe_id, id, id_len);
	h.exe_id_len = id_len;
	h.dev = st->st_dev;
	h.ino = st->st_ino;
	h.size = st->st_size;
	h.mtime_ns = cachedir_ns(&st->st_mtim);
	h.ctime_ns = cachedir_ns(&st->st_ctim);
	h.nrows = e->nr_rows;
	h.nrules = e->nr_rules;
	h.frame_pointers = e->frame_pointers;
	memcpy(h.stop_bytes, e->stop_bytes, sizeof(h.stop_bytes));
	h.path_len = plen;
	h.crc = entry_crc(&h, path, plen, e->body, e->len);
	cachedir__name(c->dir, st, name, sizeof(name));
	iov[0] = (struct iovec){ &h, sizeof(h) };
	iov[1] = (struct iovec){ (void *)path, plen };
	iov[2] = (struct iovec){ e->body, e->len };
	/* a full disk: no entry, the table itself is loaded */
	cachedir__write(c->dir, name, iov, 3);
}

void tablecache__each_recent(struct tablecache *c, uint64_t max_rows,
			     bool (*skip)(void *arg, const struct stat *st),
			     void (*fn)(void *arg, const struct stat *st,
					const char *path,
					const struct tableenc *e),
			     void *arg)
{
	char path[TC_PATH_MAX];
	struct cachedir_entry *v;
	struct tableenc e;
	struct stat key, now;
	uint64_t rows = 0;
	size_t n, i;

	if (!c)
		return;
	n = cachedir__list(c->dir, &v, true);
	for (i = 0; i < n && rows < max_rows; i++) {
		if (!cachedir__parse_name(c->dir, v[i].name, &key) ||
		    (skip && skip(arg, &key)) ||
		    read_entry(c, v[i].name, &key, &e, path, sizeof(path),
			       false))
			continue;
		/*
		 * Only the file as it is now: an older entry of the same
		 * inode would replace the newer one's table in the module.
		 */
		if (!stat(path, &now) && tablecache__keeps(&now, -1) &&
		    cachedir_same_file(&now, &key)) {
			rows += e.nr_rows;
			fn(arg, &key, path, &e);
		}
		tableenc_free(&e);
	}
	free(v);
}

void tablecache__close(struct tablecache *c)
{
	if (!c)
		return;
	cachedir__close(c->dir);
	free(c);
}
