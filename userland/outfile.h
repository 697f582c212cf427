/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * outfile - an output that appears whole or not at all.
 *
 * A named output is written to a temporary file in the same directory and
 * renamed over the name only by outfile__commit(); outfile__abort() removes
 * it.  "-" (or NULL) is stdout, and an existing name that is not a regular
 * file (/dev/null, a FIFO) is that file: both are written directly.  A
 * file made here is its owner's only (0600): profiles show kernel
 * addresses and every process's stacks.
 */
#ifndef CPROF_OUTFILE_H
#define CPROF_OUTFILE_H

#include <stdio.h>

struct outfile;

/* NULL after printing why. */
struct outfile *outfile__open(const char *path);
FILE *outfile__stream(const struct outfile *o);
/* The name to use in messages. */
const char *outfile__name(const struct outfile *o);
/* The temporary file (for a signal handler to unlink), NULL for stdout. */
const char *outfile__tmp_path(const struct outfile *o);
/* Close and move into place; frees o.  0 ok, -1 after printing why. */
int outfile__commit(struct outfile *o);
/* Close and remove the temporary file; frees o.  NULL-safe. */
void outfile__abort(struct outfile *o);

#endif /* CPROF_OUTFILE_H */
