/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * output - text formats of a resolved profile.
 *
 * folded: Brendan Gregg's folded stacks, one line per distinct stack,
 *   "comm;root;...;leaf count", kernel frames suffixed "_[k]" (as bcc's
 *   profile -f), inlined functions as frames of their own; lines sorted.
 * top: a pprof-like table of the functions with the most CPU time, flat
 *   (as the leaf) and cum (anywhere on the stack), with pprof's header.
 */
#ifndef CPROF_OUTPUT_H
#define CPROF_OUTPUT_H

#include <stdio.h>

#include "resolve.h"

/* 0 ok, -1 after printing why. */
int output__folded(const struct resolved *r, FILE *out, const char *name);
/* nodes: rows to show, 0 for all.  0 ok, -1 after printing why. */
int output__top(const struct resolved *r, FILE *out, const char *name,
		int nodes);

/*
 * The name of line i of location l ("func", or for an unsymbolized location
 * "file+0xoffset" / "0xaddress") in buf.  Returns buf or a string of r.
 */
const char *output__frame_name(const struct resolved *r,
			       const struct res_location *l, uint32_t i,
			       char *buf, size_t size);

#endif /* CPROF_OUTPUT_H */
