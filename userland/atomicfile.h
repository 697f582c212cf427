/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * atomicfile - an output that appears whole or not at all.
 *
 * A named output is written to a temporary file in the same directory and
 * renamed over the name only by atomicfile__commit(); atomicfile__abort()
 * removes it.  "-" (or NULL) is stdout, and an existing name that is not a
 * regular file (/dev/null, a FIFO) is that file: both are written directly.
 * A file made here is its owner's only (0600): profiles show kernel
 * addresses and every process's stacks.
 */
#ifndef CPROF_ATOMICFILE_H
#define CPROF_ATOMICFILE_H

#include <stdio.h>

struct atomicfile;

/* NULL after printing why. */
struct atomicfile *atomicfile__open(const char *path);
FILE *atomicfile__stream(const struct atomicfile *o);
/* The name to use in messages. */
const char *atomicfile__name(const struct atomicfile *o);
/* The temporary file (for a signal handler to unlink), NULL for stdout. */
const char *atomicfile__tmp_path(const struct atomicfile *o);
/* Close and move into place; frees o.  0 ok, -1 after printing why. */
int atomicfile__commit(struct atomicfile *o);
/* Close and remove the temporary file; frees o.  NULL-safe. */
void atomicfile__abort(struct atomicfile *o);

#endif /* CPROF_ATOMICFILE_H */
