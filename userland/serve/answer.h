/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * answer - a profile symbolized and written out into memory, as an
 * --http answer or an --every window, in a child process bounded by
 * boxed_symbolize (boxed.h): libdw reads users' files there.  If
 * symbolizing fails (a file past the limits, a fault), the profile is
 * written again unsymbolized, as nosymbol=1 writes it: a hostile file
 * costs the names, not the profile.  Debug files come from debuginfod's
 * cache only, never a server (debugfetch.h).
 */
#ifndef CPROF_ANSWER_H
#define CPROF_ANSWER_H

#include <signal.h>
#include <stddef.h>

#include "output/output.h"
#include "stream/profile.h"
#include "symbolize/resolve.h"

/*
 * p resolved with ro and written as oo says into *buf (to free) of *len
 * bytes: 0 (if that was without symbols, a warning line naming what
 * said why); or -1 with why in msg ("stopped" if *stop was set
 * meanwhile; stop may be NULL).
 */
int answer__build(const struct profile *p, const struct resolve_opts *ro,
		  const struct output_opts *oo,
		  const volatile sig_atomic_t *stop, const char *what,
		  char **buf, size_t *len, char *msg, size_t size);

#endif /* CPROF_ANSWER_H */
