// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * symcache - a binary's symbolized addresses on disk.  See symcache.h.
 *
 * An entry: a header (the binary's key, the debug file's, this build's
 * ID, the counts, a CRC of the whole entry), then its addresses sorted
 * by file offset (each its first frame and how many), its frames (each
 * string an index), and its strings, one after the other, each ended by
 * a NUL.  Root's directory is /var/cache/cprof-dump/symbols (or
 * /run/cprof-dump/symbols when that is read-only), beside the tables'.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "lib/cachedir.h"
#include "lib/strtab.h"
#include "lib/util.h"
#include "symbolize/symcache.h"

#define SC_MAGIC	"CPROFSC1"
#define SC_NONE		UINT32_MAX	/* no string */

struct sc_head {
	char magic[8];
	uint8_t exe_id[CACHEDIR_ID_MAX];	/* the cprof-dump that made it */
	uint8_t build_id[SYMCACHE_BUILD_ID_MAX];	/* the binary's */
	uint64_t ino, size;
	int64_t mtime_ns, ctime_ns;
	uint64_t debug_ino, debug_size;
	int64_t debug_mtime_ns, debug_ctime_ns;
	uint32_t exe_id_len, build_id_len;
	uint32_t dev, debug_dev;
	uint32_t has_debuginfo, debug;		/* enum symcache_debug */
	uint32_t debug_path;			/* a string, or SC_NONE */
	uint32_t nr_addrs, nr_frames, nr_strings, strings_len;
	uint32_t crc;				/* of all, this field 0 */
};
_Static_assert(sizeof(struct sc_head) == 216, "sc_head has no padding");

struct sc_addr {
	uint64_t offset;
	uint32_t first, nr;
};

struct sc_frame {
	uint32_t function, system_name, file;	/* strings; file SC_NONE */
	int32_t line, start_line;
};

struct symcache {
	struct cachedir *dir;
	struct cachedir_kind kind;
};

struct symcache_entry {
	char *buf;
	const struct sc_addr *addrs;
	const struct sc_frame *frames;
	const char **strs;
	uint32_t nr_addrs, nr_frames, nr_strings;
	struct symcache_bin bin;
};

/* The process's cache, and the process that opened it. */
static struct symcache *process_cache;
static pid_t process_pid;

/*
 * A cache in dir (or, if fallback and dir is on a read-only file system,
 * in fallback, said once); NULL if unusable.
 */
static struct symcache *open_cache(const char *dir, const char *fallback,
				   uint64_t max_bytes, bool loud)
{
	static bool said;
	struct symcache *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->kind = (struct cachedir_kind){
		.what = "symbols",
		.items = "symbols",
		.without = "binaries are read every time",
		.suffix = ".sym",
		.max_bytes = max_bytes,
	};
	c->dir = fallback ?
		 cachedir__open_default(dir, fallback, &c->kind, &said) :
		 cachedir__open(dir, &c->kind, loud);
	if (!c->dir) {
		free(c);
		return NULL;
	}
	return c;
}

struct symcache *symcache__open(const char *dir, uint64_t max_bytes,
				bool loud)
{
	return open_cache(dir, NULL, max_bytes, loud);
}

void symcache__close(struct symcache *c)
{
	if (!c)
		return;
	cachedir__close(c->dir);
	free(c);
}

void symcache_setup(const char *dir)
{
	char def[4096], fb[4096];

	symcache__close(process_cache);
	process_cache = NULL;
	process_pid = getpid();
	if (dir) {
		if (*dir)
			process_cache = symcache__open(dir, SYMCACHE_MAX_BYTES,
						       true);
		return;
	}
	dir = cachedir_default("symbols", def, sizeof(def));
	if (dir)
		process_cache = open_cache(dir, cachedir_fallback("symbols", fb,
								  sizeof(fb)),
					   SYMCACHE_MAX_BYTES, false);
}

/*
 * In a child (boxed.c: a conversion of --every or --http), the directory
 * the parent opened is opened again: the child closes what it inherits.
 */
struct symcache *symcache_default(void)
{
	struct symcache *c;

	if (!process_cache || process_pid == getpid())
		return process_cache;
	process_pid = getpid();
	c = symcache__open(cachedir__path(process_cache->dir),
			   process_cache->kind.max_bytes, false);
	/* the parent's descriptor is not this process's to close */
	cachedir__forget(process_cache->dir);
	free(process_cache);
	process_cache = c;
	return c;
}

static uint32_t entry_crc(const struct sc_head *h, const void *rest,
			  size_t len)
{
	struct sc_head z = *h;
	uLong crc;

	z.crc = 0;
	crc = crc32(0L, (const Bytef *)&z, sizeof(z));
	return crc32(crc, rest, len);
}

/* One line a run: an entry that is not what this build writes. */
static void bad_entry(const char *name, const char *why)
{
	static bool said;

	if (said)
		return;
	said = true;
	warning("symbols: cache entry %s %s: not used (its binary is read instead)",
		esc(name), why);
}

/* Is a frame's string index i one of n strings (none allowed: may_none)? */
static bool str_ok(uint32_t i, uint32_t n, bool may_none)
{
	return i < n || (may_none && i == SC_NONE);
}

/* The entry's parts in e, every count and index checked; false if bad. */
static bool parse(struct symcache_entry *e, const struct sc_head *h,
		  size_t len)
{
	const char *blob, *p, *end;
	uint64_t need;
	uint32_t i, n = 0;

	need = sizeof(*h) + (uint64_t)h->nr_addrs * sizeof(struct sc_addr) +
	       (uint64_t)h->nr_frames * sizeof(struct sc_frame) +
	       h->strings_len;
	if (need != len || !h->nr_strings || h->nr_strings > h->strings_len ||
	    h->debug > SYMCACHE_DEBUG_FILE ||
	    h->build_id_len > SYMCACHE_BUILD_ID_MAX ||
	    entry_crc(h, e->buf + sizeof(*h), len - sizeof(*h)) != h->crc)
		return false;
	e->addrs = (const struct sc_addr *)(e->buf + sizeof(*h));
	e->frames = (const struct sc_frame *)(e->addrs + h->nr_addrs);
	blob = (const char *)(e->frames + h->nr_frames);
	if (blob[h->strings_len - 1])
		return false;
	e->strs = malloc((size_t)h->nr_strings * sizeof(*e->strs));
	if (!e->strs)
		return false;
	end = blob + h->strings_len;
	for (p = blob; p < end && n < h->nr_strings; n++) {
		e->strs[n] = p;
		p = memchr(p, '\0', end - p);
		p++;
	}
	if (n != h->nr_strings || p != end)
		return false;
	for (i = 0; i < h->nr_addrs; i++) {
		const struct sc_addr *a = &e->addrs[i];

		if (a->nr > SYMCACHE_FRAMES_MAX || a->first > h->nr_frames ||
		    a->nr > h->nr_frames - a->first ||
		    (i && a->offset <= e->addrs[i - 1].offset))
			return false;
	}
	for (i = 0; i < h->nr_frames; i++) {
		const struct sc_frame *f = &e->frames[i];

		if (!str_ok(f->function, n, false) ||
		    !str_ok(f->system_name, n, false) ||
		    !str_ok(f->file, n, true))
			return false;
	}
	if (h->debug == SYMCACHE_DEBUG_FILE &&
	    !str_ok(h->debug_path, n, false))
		return false;
	e->nr_addrs = h->nr_addrs;
	e->nr_frames = h->nr_frames;
	e->nr_strings = n;
	return true;
}

static bool same_key(const struct sc_head *h, const struct symcache_key *k)
{
	return h->dev == (uint32_t)k->st.st_dev &&
	       h->ino == (uint64_t)k->st.st_ino &&
	       h->size == (uint64_t)k->st.st_size &&
	       h->mtime_ns == cachedir_ns(&k->st.st_mtim) &&
	       h->ctime_ns == cachedir_ns(&k->st.st_ctim) &&
	       h->build_id_len == k->build_id_len &&
	       !memcmp(h->build_id, k->build_id, k->build_id_len);
}

struct symcache_entry *symcache__get(struct symcache *c,
				     const struct symcache_key *k)
{
	struct symcache_entry *e = NULL;
	const struct sc_head *h;
	const uint8_t *id;
	struct stat st;
	char name[128];
	uint32_t id_len;
	size_t len, n;
	ssize_t r;
	int fd;

	if (!c)
		return NULL;
	id = cachedir__exe_id(c->dir, &id_len);
	if (!id_len)
		return NULL;
	cachedir__name(c->dir, &k->st, name, sizeof(name));
	fd = cachedir__open_entry(c->dir, name, 0, SYMCACHE_ENTRY_MAX, &st);
	if (fd < 0)
		return NULL;
	len = st.st_size;
	e = calloc(1, sizeof(*e));
	if (!e || !(e->buf = malloc(len ? len : 1)))
		goto bad;
	for (n = 0; n < len; n += r) {
		r = pread(fd, e->buf + n, len - n, n);
		if (r <= 0)
			break;
	}
	h = (const struct sc_head *)e->buf;
	if (n != len || len < sizeof(*h) ||
	    memcmp(h->magic, SC_MAGIC, sizeof(h->magic))) {
		bad_entry(name, n != len ? "could not be read" : "is not one");
		goto bad;
	}
	/* another build's (an upgrade made them all stale) */
	if (h->exe_id_len != id_len || memcmp(h->exe_id, id, id_len)) {
		cachedir__drop(c->dir, name, len);
		goto bad;
	}
	/* the name's file, another build ID: not this binary's */
	if (!same_key(h, k))
		goto bad;
	if (!parse(e, h, len)) {
		bad_entry(name, "does not check");
		goto bad;
	}
	e->bin.has_debuginfo = h->has_debuginfo;
	e->bin.debug = h->debug;
	if (h->debug == SYMCACHE_DEBUG_FILE) {
		e->bin.debug_path = e->strs[h->debug_path];
		e->bin.debug_st.st_dev = h->debug_dev;
		e->bin.debug_st.st_ino = h->debug_ino;
		e->bin.debug_st.st_size = h->debug_size;
		e->bin.debug_st.st_mtim.tv_sec = h->debug_mtime_ns / 1000000000LL;
		e->bin.debug_st.st_mtim.tv_nsec = h->debug_mtime_ns % 1000000000LL;
		e->bin.debug_st.st_ctim.tv_sec = h->debug_ctime_ns / 1000000000LL;
		e->bin.debug_st.st_ctim.tv_nsec = h->debug_ctime_ns % 1000000000LL;
	}
	/* used now: the last to go */
	cachedir__touch(fd);
	close(fd);
	return e;
bad:
	close(fd);
	symcache_entry__free(e);
	return NULL;
}

const struct symcache_bin *symcache_entry__bin(const struct symcache_entry *e)
{
	return &e->bin;
}

/* The index of offset in e's addresses, or -1. */
static int64_t find(const struct symcache_entry *e, uint64_t offset)
{
	size_t lo = 0, hi = e->nr_addrs;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (e->addrs[mid].offset < offset)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < e->nr_addrs && e->addrs[lo].offset == offset ?
	       (int64_t)lo : -1;
}

/* Frame i of e as the symbolizer hands it out. */
static void frame_of(const struct symcache_entry *e, uint32_t i,
		     struct sym_frame *f)
{
	const struct sc_frame *s = &e->frames[i];

	f->function = e->strs[s->function];
	f->system_name = e->strs[s->system_name];
	f->file = s->file == SC_NONE ? NULL : e->strs[s->file];
	f->line = s->line;
	f->start_line = s->start_line;
}

int symcache_entry__frames(const struct symcache_entry *e, uint64_t offset,
			   struct sym_frame *frames, int max)
{
	int64_t at = e ? find(e, offset) : -1;
	const struct sc_addr *a;
	int i, n;

	if (at < 0)
		return -1;
	a = &e->addrs[at];
	n = (int)a->nr < max ? (int)a->nr : max;
	for (i = 0; i < n; i++)
		frame_of(e, a->first + i, &frames[i]);
	return n;
}

void symcache_entry__free(struct symcache_entry *e)
{
	if (!e)
		return;
	free(e->strs);
	free(e->buf);
	free(e);
}

/* What an entry is made of while written. */
struct builder {
	struct strtab *strs;
	struct sc_addr *addrs;
	struct sc_frame *frames;
	size_t nr_addrs, nr_frames, alloc_addrs, alloc_frames;
};

static int add_string(struct builder *b, const char *s, uint32_t *i)
{
	int64_t n;

	if (!s) {
		*i = SC_NONE;
		return 0;
	}
	n = strtab__intern(b->strs, s);
	if (n < 0 || n >= SC_NONE)
		return -1;
	*i = n;
	return 0;
}

static int add_addr(struct builder *b, uint64_t offset,
		    const struct sym_frame *f, int nr)
{
	int i;

	if (nr < 0)
		nr = 0;
	if (nr > SYMCACHE_FRAMES_MAX)
		nr = SYMCACHE_FRAMES_MAX;
	if (grow_array(&b->addrs, &b->alloc_addrs, b->nr_addrs + 1,
		       sizeof(*b->addrs)) ||
	    grow_array(&b->frames, &b->alloc_frames, b->nr_frames + nr,
		       sizeof(*b->frames)))
		return -1;
	b->addrs[b->nr_addrs++] = (struct sc_addr){
		.offset = offset, .first = b->nr_frames, .nr = nr,
	};
	for (i = 0; i < nr; i++) {
		struct sc_frame *s = &b->frames[b->nr_frames++];

		if (add_string(b, f[i].function ? f[i].function : "", &s->function) ||
		    add_string(b, f[i].system_name ? f[i].system_name : "",
			       &s->system_name) ||
		    add_string(b, f[i].file, &s->file))
			return -1;
		s->line = f[i].line;
		s->start_line = f[i].start_line;
	}
	return 0;
}

/* old's addresses and add's, in offset order, into b. */
static int merge(struct builder *b, const struct symcache_entry *old,
		 const struct symcache_addr *add, size_t n)
{
	struct sym_frame f[SYMCACHE_FRAMES_MAX];
	size_t i = 0, j = 0, nold = old ? old->nr_addrs : 0;

	while (i < nold || j < n) {
		if (j == n || (i < nold && old->addrs[i].offset < add[j].offset)) {
			const struct sc_addr *a = &old->addrs[i++];
			uint32_t k;

			for (k = 0; k < a->nr; k++)
				frame_of(old, a->first + k, &f[k]);
			if (add_addr(b, a->offset, f, a->nr))
				return -1;
		} else {
			/* one both have: this run's */
			if (i < nold && old->addrs[i].offset == add[j].offset)
				i++;
			if (add_addr(b, add[j].offset, add[j].frames,
				     add[j].nr_frames))
				return -1;
			j++;
		}
	}
	return 0;
}

void symcache__put(struct symcache *c, const struct symcache_key *k,
		   const struct symcache_bin *bin,
		   const struct symcache_entry *old,
		   const struct symcache_addr *add, size_t n)
{
	struct sc_head h = { .magic = SC_MAGIC };
	struct builder b = { 0 };
	struct iovec iov[4];
	const uint8_t *id;
	char name[128], *blob = NULL;
	uint64_t total;
	uint32_t id_len, dpath = SC_NONE;
	size_t i, at;

	if (!c || k->build_id_len > SYMCACHE_BUILD_ID_MAX)
		return;
	id = cachedir__exe_id(c->dir, &id_len);
	if (!id_len)
		return;
	b.strs = strtab__new();
	if (!b.strs || merge(&b, old, add, n) ||
	    (bin->debug == SYMCACHE_DEBUG_FILE &&
	     add_string(&b, bin->debug_path ? bin->debug_path : "", &dpath)))
		goto out;
	memcpy(h.exe_id, id, id_len);
	h.exe_id_len = id_len;
	memcpy(h.build_id, k->build_id, k->build_id_len);
	h.build_id_len = k->build_id_len;
	h.dev = k->st.st_dev;
	h.ino = k->st.st_ino;
	h.size = k->st.st_size;
	h.mtime_ns = cachedir_ns(&k->st.st_mtim);
	h.ctime_ns = cachedir_ns(&k->st.st_ctim);
	h.has_debuginfo = bin->has_debuginfo;
	h.debug = bin->debug;
	if (bin->debug == SYMCACHE_DEBUG_FILE) {
		h.debug_dev = bin->debug_st.st_dev;
		h.debug_ino = bin->debug_st.st_ino;
		h.debug_size = bin->debug_st.st_size;
		h.debug_mtime_ns = cachedir_ns(&bin->debug_st.st_mtim);
		h.debug_ctime_ns = cachedir_ns(&bin->debug_st.st_ctim);
	}
	h.debug_path = dpath;
	h.nr_addrs = b.nr_addrs;
	h.nr_frames = b.nr_frames;
	h.nr_strings = strtab__nr(b.strs);
	for (i = 0, total = 0; i < h.nr_strings; i++)
		total += strlen(strtab__get(b.strs, i)) + 1;
	total += sizeof(h) + b.nr_addrs * sizeof(*b.addrs) +
		 b.nr_frames * sizeof(*b.frames);
	/* too large to be read back: not kept */
	if (total > SYMCACHE_ENTRY_MAX)
		goto out;
	h.strings_len = total - sizeof(h) - b.nr_addrs * sizeof(*b.addrs) -
			b.nr_frames * sizeof(*b.frames);
	blob = malloc(h.strings_len);
	if (!blob)
		goto out;
	for (i = 0, at = 0; i < h.nr_strings; i++) {
		const char *s = strtab__get(b.strs, i);
		size_t l = strlen(s) + 1;

		memcpy(blob + at, s, l);
		at += l;
	}
	iov[1] = (struct iovec){ b.addrs, b.nr_addrs * sizeof(*b.addrs) };
	iov[2] = (struct iovec){ b.frames, b.nr_frames * sizeof(*b.frames) };
	iov[3] = (struct iovec){ blob, h.strings_len };
	{
		uLong crc = crc32(0L, Z_NULL, 0);

		crc = crc32(crc, (const Bytef *)&h, sizeof(h));
		for (i = 1; i < 4; i++)
			if (iov[i].iov_len)
				crc = crc32(crc, iov[i].iov_base,
					    iov[i].iov_len);
		h.crc = crc;
	}
	iov[0] = (struct iovec){ &h, sizeof(h) };
	cachedir__name(c->dir, &k->st, name, sizeof(name));
	/* a full disk: no entry, symbols are read again next time */
	cachedir__write(c->dir, name, iov, 4);
out:
	free(blob);
	free(b.addrs);
	free(b.frames);
	strtab__free(b.strs);
}
