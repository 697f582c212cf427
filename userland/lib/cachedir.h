/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * cachedir - a directory of entries cprof-dump made from system files and
 * reads back on later runs (compiled unwind tables, symbols), one entry a
 * file, named by the file it is of.
 *
 * The directory is this user's only (0700; root's, under a parent only
 * root may write), checked when opened; every name is opened relative to
 * it without following symlinks, so nobody else can plant an entry.  An
 * entry is written beside its name and renamed over it: it appears whole
 * or not at all, and of two writers the last one wins.  Past the kind's
 * bound in bytes, the least recently used entries go.  What an entry holds
 * is its user's, who checks it: a file in the directory is still input.
 */
#ifndef CPROF_CACHEDIR_H
#define CPROF_CACHEDIR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/uio.h>

/* Root's caches, one subdirectory each. */
#define CACHEDIR_ROOT		"/var/cache/cprof-dump"
/* Root's when that is read-only: a tmpfs, emptied when the machine starts. */
#define CACHEDIR_RUN		"/run/cprof-dump"
/* The most bytes of a cprof-dump build ID an entry is checked against. */
#define CACHEDIR_ID_MAX		32

/* What a directory keeps, for its messages and its entries' names. */
struct cachedir_kind {
	const char *what;	/* "unwind tables": what the messages are on */
	const char *items;	/* "tables": what is kept */
	const char *without;	/* "tables are compiled every time" */
	const char *suffix;	/* ".tab": every entry's name ends so */
	uint64_t max_bytes;	/* the entries' size, all together */
};

struct cachedir;

/*
 * The default directory of sub ("tables") for this user: root's
 * CACHEDIR_ROOT/sub, another user's $XDG_CACHE_HOME/cprof-dump/sub; NULL
 * if none (no home).  In buf.
 */
const char *cachedir_default(const char *sub, char *buf, size_t size);
/*
 * Where the default goes when it is on a read-only file system: root's
 * CACHEDIR_RUN/sub, another user's $XDG_RUNTIME_DIR/cprof-dump/sub; NULL
 * if there is none.  In buf.
 */
const char *cachedir_fallback(const char *sub, char *buf, size_t size);

/*
 * The cache in dir, made (0700) if missing.  dir must be a directory that
 * only this user may write (and, for root's, its parent too).  NULL if it
 * cannot be used (after one warning line if loud, or if it is someone
 * else's; errno EROFS if on a read-only file system).  kind must live as
 * long as the cache.
 */
struct cachedir *cachedir__open(const char *dir,
				const struct cachedir_kind *kind, bool loud);
/*
 * The default cache in dir or, if dir is on a read-only file system, in
 * fallback (NULL: none), which one warning line says once (*said).
 */
struct cachedir *cachedir__open_default(const char *dir, const char *fallback,
					const struct cachedir_kind *kind,
					bool *said);
void cachedir__close(struct cachedir *c);
/*
 * Free a parent's cache in a child, its descriptor left alone: the child
 * may have closed it and reused its number.
 */
void cachedir__forget(struct cachedir *c);
/* The directory c was opened at. */
const char *cachedir__path(const struct cachedir *c);

/*
 * Is the file st describes (open on fd, or -1) one whose entries may be
 * kept?  Root's and written by root only (system programs and libraries,
 * a package's files), and not on FUSE, whose daemon says what inode,
 * owner and times a file has.
 */
bool cachedir_keeps(const struct stat *st, int fd);
/* cachedir_keeps() of the file at path (its stat in *st). */
bool cachedir_keeps_path(const char *path, struct stat *st);
/* Do a and b describe the same file unchanged (device, inode, size, times)? */
bool cachedir_same_file(const struct stat *a, const struct stat *b);
/* A time as nanoseconds. */
int64_t cachedir_ns(const struct timespec *ts);

/*
 * The GNU build ID of this cprof-dump (length 0: none: then nothing is
 * kept, another build may make other entries).
 */
const uint8_t *cachedir__exe_id(const struct cachedir *c, uint32_t *len);

/*
 * The entry's name of the file st describes: its device, inode, size,
 * mtime and ctime (a file written to, replaced, chmod-ed, or a recycled
 * inode is another name), then the kind's suffix.
 */
void cachedir__name(const struct cachedir *c, const struct stat *st,
		    char *buf, size_t size);
/* The key such a name gives (in *st); false if it is not such a name. */
bool cachedir__parse_name(const struct cachedir *c, const char *name,
			  struct stat *st);

/*
 * The entry name, opened read-only (a regular file, not followed if a
 * symlink), its size at most max (and at least min) bytes; its stat in
 * *st.  -1 if not so.
 */
int cachedir__open_entry(struct cachedir *c, const char *name, off_t min,
			 off_t max, struct stat *st);
/* Mark the entry open on fd used now: the last to go. */
void cachedir__touch(int fd);
/* Remove the entry name of size bytes (stale). */
void cachedir__drop(struct cachedir *c, const char *name, uint64_t size);
/*
 * Write the entry name from iov[0..n) (0600), atomically; then the least
 * recently used go while past the bound.  0, or -1 (a full disk: no entry).
 */
int cachedir__write(struct cachedir *c, const char *name,
		    const struct iovec *iov, int n);

struct cachedir_entry {
	char name[256];
	int64_t used;		/* ns: the entry's mtime */
	off_t size;
};

/*
 * The entries, least recently used first (most recently used first if
 * newest), into *out (free it); how many.
 */
size_t cachedir__list(struct cachedir *c, struct cachedir_entry **out,
		      bool newest);

#endif /* CPROF_CACHEDIR_H */
