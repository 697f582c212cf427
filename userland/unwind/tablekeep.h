/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * tablekeep - the unwind tables written to the module in this run, kept
 * in memory by file (device and inode, as a mapping record's file
 * identity gives them) and indexed once each, for walking the stack
 * copies of samples taken before their tables arrived (ustack.h).  The
 * least recently used go past a cap.  Thread-safe: the loader's thread
 * puts, the stream's reader gets.
 */
#ifndef CPROF_TABLEKEEP_H
#define CPROF_TABLEKEEP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "unwind/ustack.h"

struct tablekeep;

/* What is kept at most, bytes of tables (their indexes besides). */
#define TABLEKEEP_MAX	(32u << 20)

/* NULL for want of memory. */
struct tablekeep *tablekeep__new(size_t cap);
/* NULL-safe. */
void tablekeep__free(struct tablekeep *k);

/*
 * Keep buf (len bytes of malloc()ed memory, now the keep's: it is freed
 * here if it cannot be kept, larger than the cap, and a mark is left) as
 * the table of the file (dev, ino), replacing one kept for it.  NULL k:
 * buf is freed.
 */
void tablekeep__put(struct tablekeep *k, uint32_t dev, uint64_t ino,
		    char *buf, size_t len);

/*
 * The module has a table of the file (dev, ino) that is not kept here
 * (one it held before this run): a walk that needs it must not take the
 * frame-pointer chain for it.  A table dropped past the cap is marked so
 * too.
 */
void tablekeep__mark(struct tablekeep *k, uint32_t dev, uint64_t ino);

/*
 * Is (dev, ino) marked, its table not kept?  tablekeep__ask(): the same,
 * true only the first time it is asked for a mark (to fetch the table
 * once).
 */
bool tablekeep__marked(struct tablekeep *k, uint32_t dev, uint64_t ino);
bool tablekeep__ask(struct tablekeep *k, uint32_t dev, uint64_t ino);

/* Between hold and release, what get returns stays (puts wait). */
void tablekeep__hold(struct tablekeep *k);
void tablekeep__release(struct tablekeep *k);
/*
 * The table of (dev, ino), indexed; NULL if none (or NULL k, or a table
 * the module would not take), with *elsewhere set if the module has one
 * all the same (tablekeep__mark()).
 */
const struct ustack_table *tablekeep__get(struct tablekeep *k, uint32_t dev,
					  uint64_t ino, bool *elsewhere);

#endif /* CPROF_TABLEKEEP_H */
