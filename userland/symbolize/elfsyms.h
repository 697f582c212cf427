/* SPDX-License-Identifier: GPL-2.0 */
/*
 * elfsyms - user binaries: ELF .symtab/.dynsym + DWARF lines + inline frames,
 * C++ demangling, separate debug files (.gnu_debuglink, build-id).
 * Every string returned stays valid until syms_cache__free().
 */
#ifndef CPROF_ELFSYMS_H
#define CPROF_ELFSYMS_H

#include <stddef.h>
#include <stdint.h>

#include "symbolize/symcache.h"

struct syms_cache;
struct binary;

/*
 * A cache of binaries for one conversion, with the process's symbol
 * cache (symcache_default()): a binary of the system (cachedir_keeps())
 * whose entry holds every address asked is not read with libdw at all,
 * and the addresses read are kept in its entry when the cache is freed.
 */
struct syms_cache *syms_cache__new(void);
/* Keep what was read in the symbol cache, then free; NULL-safe. */
void syms_cache__free(struct syms_cache *c);
/*
 * The binary m maps, opened once per file (its device and inode when m has
 * them, else its path) and build id, as mapfile.h finds it; failures cached
 * too (returns a binary that resolves nothing, so callers can count it),
 * but a file not reached through one process is looked for again through
 * the next one.  NULL only on OOM.
 */
struct mapfile;
struct binary *syms_cache__get(struct syms_cache *c, const struct mapfile *m,
			       const uint8_t *build_id, size_t build_id_len);
/*
 * Frames for one FILE OFFSET (ip - mapping.start + mapping.pgoff), translated
 * to the ELF's virtual address via its PT_LOAD program headers (PIE, non-PIE,
 * shared libraries).  Innermost (most inlined) first; returns the count
 * (0 = unknown), at most max.
 */
int binary__resolve(struct binary *b, uint64_t file_offset,
		    struct sym_frame *frames, int max);
const char *binary__path(const struct binary *b);
/* from the file on disk; "" if none */
const char *binary__build_id_hex(const struct binary *b);
/* 1: stream's build id given and differs from the file's */
int binary__build_id_mismatch(const struct binary *b);
/* NULL if the file opened fine; else why ("not found", "no symbols", ...) */
const char *binary__error(const struct binary *b);
/* DWARF line info available */
int binary__has_debuginfo(const struct binary *b);

#endif /* CPROF_ELFSYMS_H */
