/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * pycode - a CPython code object read from a running process: its
 * qualified name, file name, first line and line table, and the line of an
 * instruction (the location table of 3.11 and later, Objects/locations.md
 * in CPython's source).
 *
 * The process is another user's program: every read is bounded
 * (PYCODE_STR_MAX bytes of a name, PYCODE_LINETABLE_MAX of a line table),
 * every pointer checked by reading through it (process_vm_readv(), which
 * fails on what is not mapped), the code object by its type (it must point
 * at PyCode_Type), strings by their kind; what does not fit is refused,
 * never guessed at.  A code object may be freed and its address reused
 * while the process runs: a caller keeps what it read with the first line
 * it expects, and rereads when they differ.
 */
#ifndef CPROF_PYCODE_H
#define CPROF_PYCODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "python/pyrt.h"

#define PYCODE_STR_MAX		4096
#define PYCODE_LINETABLE_MAX	(64u << 10)

struct pycode {
	char *qualname;		/* UTF-8 */
	char *filename;		/* UTF-8 */
	int firstlineno;
	uint8_t *linetable;
	size_t linetable_len;
};

/*
 * Read the code object at addr (the process's address) of pid, whose
 * interpreter has layout rt mapped at bias (added to rt's addresses).  0
 * with *c filled (pycode_free() it), -1 with errno: ESRCH the process is
 * gone, EFAULT unreadable, EINVAL not a code object or out of bounds.
 */
int pycode_read(pid_t pid, const struct pyrt *rt, uint64_t bias,
		uint64_t addr, struct pycode *c);
/*
 * The same, reading only what ok(arg, addr, size) allows (its memory, not
 * a file's that a user's file system serves: a FUSE server could hold a
 * read of it for ever): -1 with EACCES for what it refuses.
 */
int pycode_read_if(pid_t pid, const struct pyrt *rt, uint64_t bias,
		   uint64_t addr, struct pycode *c,
		   bool (*ok)(void *arg, uint64_t addr, size_t size),
		   void *arg);
/*
 * The code object a CPROF_REC_PYCODE holds (checked by stream.c: its
 * lengths within it), decoded with rt's str layout (pyrt_str_layout());
 * names and a line table cut by the module's bounds are taken as far as
 * they go.  0, or -1 with errno: EFAULT an object not there, EINVAL not
 * one of a known kind.
 */
int pycode_from_record(const struct pyrt *rt, const struct cprof_pycode *rec,
		       struct pycode *c);
void pycode_free(struct pycode *c);

/*
 * The line of code unit idx (-1: not started: the first line), or -1 if
 * the table says none or ends before it.
 */
int pycode_line(const uint8_t *table, size_t len, int firstlineno, long idx);

#endif /* CPROF_PYCODE_H */
