/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * tablecache - compiled unwind tables kept on disk, so that a program that
 * ran before has its table in the module before its first sample.
 */
#ifndef CPROF_TABLECACHE_H
#define CPROF_TABLECACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "lib/cachedir.h"
#include "unwind/tableenc.h"

/* Root's cache; another user's is $XDG_CACHE_HOME/cprof-dump/tables. */
#define TABLECACHE_ROOT_DIR	CACHEDIR_ROOT "/tables"
/* Root's when that is read-only: a tmpfs, emptied when the machine starts. */
#define TABLECACHE_RUN_DIR	CACHEDIR_RUN "/tables"
/* The most the cache's files take, all together. */
#define TABLECACHE_MAX_BYTES	(256ULL << 20)

struct tablecache;

/*
 * The cache in dir, made (0700) if missing.  dir must be a directory that
 * only this user may write (and, for root's default, its parent too).
 * NULL if it cannot be used (after one warning line if loud, or if it is
 * someone else's): tables are then compiled every time, as without one.
 */
struct tablecache *tablecache__open(const char *dir, bool loud);

/* The default directory for this user, or NULL (no home). */
const char *tablecache__default_dir(void);

/*
 * Where the default goes when it is on a read-only file system: root's
 * TABLECACHE_RUN_DIR, another user's $XDG_RUNTIME_DIR/cprof-dump/tables;
 * NULL if there is none.
 */
const char *tablecache__fallback_dir(void);

/*
 * The default cache in dir or, if dir is on a read-only file system, in
 * fallback (a NULL fallback: none), which one warning line says once a run.
 * NULL as tablecache__open(dir, false).
 */
struct tablecache *tablecache__open_default(const char *dir,
					    const char *fallback);

/*
 * The table of the file st describes (device, inode, size, mtime and
 * ctime: a file written to or replaced since is another file), compiled
 * by this very cprof-dump build, encoded as the module takes it.  0 and
 * *e filled (free it with tableenc_free()), or -1: not there, or an entry
 * that does not check (its CRC; one whose counts or rows the module
 * would refuse, tableenc_check(), is removed).
 */
int tablecache__get(struct tablecache *c, const struct stat *st,
		    struct tableenc *e);

/*
 * Is the file st describes (open on fd, or -1) one whose table may be
 * kept?  Root's and written by root only (system programs and libraries:
 * what runs again and again), and not on FUSE, whose daemon says what
 * inode, owner and times a file has.  Other files are compiled each
 * time, as without a cache.
 */
bool tablecache__keeps(const struct stat *st, int fd);

/* Keep e, the table of the file st describes, opened by path. */
void tablecache__put(struct tablecache *c, const struct stat *st,
		     const char *path, const struct tableenc *e);

/*
 * The cached tables, most recently used first, until their rows pass
 * max_rows: fn gets each one's file (st: device, inode, size, mtime,
 * ctime), the path it was opened by and the table (fn frees nothing; the
 * table is freed after fn returns), only if the file at that path is that
 * very file now.  skip, if set, is asked first, from the entry's name
 * alone: a table it says to skip is not read.  Reading them does not
 * count as using them.
 */
void tablecache__each_recent(struct tablecache *c, uint64_t max_rows,
			     bool (*skip)(void *arg, const struct stat *st),
			     void (*fn)(void *arg, const struct stat *st,
					const char *path,
					const struct tableenc *e),
			     void *arg);

void tablecache__close(struct tablecache *c);

#endif /* CPROF_TABLECACHE_H */
