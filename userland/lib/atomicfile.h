/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * atomicfile - an output that appears whole or not at all.
 *
 * A named output is a new file (0600: profiles show kernel addresses and
 * every process's stacks) made O_EXCL|O_NOFOLLOW in its directory, held
 * open, and renamed over the name only by atomicfile__commit();
 * atomicfile__abort() removes it.  Nothing another user put at the name
 * is followed or opened: a symlink of root's or this user's is followed
 * (its target checked the same way), and a FIFO or device that is the
 * name itself is written in place in a directory nobody else may write
 * (/dev/null).  The directory, and each one on the way to it, must be
 * root's or this user's and writable by nobody else unless sticky: then
 * nobody else can replace what was made there.
 * "-", /dev/stdout, /dev/stderr and /dev/fd/N are descriptors the caller
 * opened: written directly.
 */
#ifndef CPROF_ATOMICFILE_H
#define CPROF_ATOMICFILE_H

#include <stdio.h>

struct atomicfile;

/* -o: NULL after printing why. */
struct atomicfile *atomicfile__open(const char *path);
/*
 * A file made anew at path whatever is there (a directory made there is
 * swapped out, removed if empty): a name this program owns, such as
 * --every's windows.  NULL after printing why.
 */
struct atomicfile *atomicfile__open_new(const char *path);
/* Is dir one atomicfile may write into?  0, or -1 after printing why. */
int atomicfile__check_dir(const char *dir);
FILE *atomicfile__stream(const struct atomicfile *o);
/* The name to use in messages. */
const char *atomicfile__name(const struct atomicfile *o);
/* The temporary file (for a signal handler to unlink), NULL if none. */
const char *atomicfile__tmp_path(const struct atomicfile *o);
/* Close and move into place; frees o.  0 ok, -1 after printing why. */
int atomicfile__commit(struct atomicfile *o);
/* Close and remove the temporary file; frees o.  NULL-safe. */
void atomicfile__abort(struct atomicfile *o);

#endif /* CPROF_ATOMICFILE_H */
