/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * symcache - the frames of a binary's addresses kept on disk, so that a
 * binary is read with libdw once, not at every conversion (libdw inflates
 * a compressed DWARF section whole when it opens the file).
 *
 * An entry is one binary's: the frames (function, file, line, inlined
 * ones) of each file offset symbolized so far, by the file's identity
 * (cachedir.h: device, inode, size, mtime, ctime), its GNU build ID and
 * the debug file its DWARF came from, and the cprof-dump build that made
 * it.  Only system files' (cachedir_keeps()).  Entries are read whole and
 * checked (sizes, every index, a CRC): one that does not check is not
 * used, with one warning line a run, and is replaced.
 */
#ifndef CPROF_SYMCACHE_H
#define CPROF_SYMCACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

/* The most the cache's files take, all together. */
#define SYMCACHE_MAX_BYTES	(256ULL << 20)
/* The largest entry read. */
#define SYMCACHE_ENTRY_MAX	(64LL << 20)
/* Frames kept per address; deeper inline chains lose their outer ones. */
#define SYMCACHE_FRAMES_MAX	32
/* A binary's build ID, its most bytes kept. */
#define SYMCACHE_BUILD_ID_MAX	64

/* One frame of an address, innermost first (elfsyms.h). */
struct sym_frame {
	const char *function;		/* demangled */
	const char *system_name;	/* mangled, or same as function */
	const char *file;		/* NULL if unknown */
	int line;			/* 0 unknown */
	int start_line;			/* 0 unknown */
};

/* Where a binary's DWARF came from. */
enum symcache_debug {
	SYMCACHE_DEBUG_NONE,		/* nowhere: none was found */
	SYMCACHE_DEBUG_OWN,		/* the binary itself */
	SYMCACHE_DEBUG_FILE,		/* a separate debug file */
};

/* Which binary an entry is of. */
struct symcache_key {
	struct stat st;			/* the file: device, inode, size, times */
	uint8_t build_id[SYMCACHE_BUILD_ID_MAX];
	uint32_t build_id_len;		/* 0: it has none */
};

/* What an entry says of its binary as a whole. */
struct symcache_bin {
	bool has_debuginfo;
	enum symcache_debug debug;
	const char *debug_path;		/* SYMCACHE_DEBUG_FILE: the file, */
	struct stat debug_st;		/* ... its identity then */
};

/* An address's frames, to keep. */
struct symcache_addr {
	uint64_t offset;		/* in the file */
	int nr_frames;			/* 0: nothing is known there */
	const struct sym_frame *frames;
};

struct symcache;
struct symcache_entry;

/*
 * The process's cache, in dir (NULL: the default; "": none), opened now,
 * before any conversion's child is made: every conversion uses it.
 */
void symcache_setup(const char *dir);
/* The process's cache; NULL if none. */
struct symcache *symcache_default(void);

/* A cache in dir whose entries take max_bytes at most; NULL if unusable. */
struct symcache *symcache__open(const char *dir, uint64_t max_bytes,
				bool loud);
void symcache__close(struct symcache *c);

/*
 * The entry of the binary k is, NULL if none or if it does not check.
 * Free it with symcache_entry__free(); its strings live as long.
 */
struct symcache_entry *symcache__get(struct symcache *c,
				     const struct symcache_key *k);
const struct symcache_bin *symcache_entry__bin(const struct symcache_entry *e);
/* The frames of offset (at most max): how many, or -1 if not kept. */
int symcache_entry__frames(const struct symcache_entry *e, uint64_t offset,
			   struct sym_frame *frames, int max);
/* NULL-safe. */
void symcache_entry__free(struct symcache_entry *e);

/*
 * Keep the binary k's entry: old's addresses (old may be NULL) and
 * add[0..n), sorted by offset, none of them in old.
 */
void symcache__put(struct symcache *c, const struct symcache_key *k,
		   const struct symcache_bin *bin,
		   const struct symcache_entry *old,
		   const struct symcache_addr *add, size_t n);

#endif /* CPROF_SYMCACHE_H */
