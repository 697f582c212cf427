/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * pprof - write a resolved profile as a gzipped perftools.profiles.Profile
 * (proto/profile.proto), the format `go tool pprof` and google/pprof read.
 *
 * Sample types samples/count and cpu/nanoseconds; period cpu/nanoseconds;
 * labels pid, tid, cpu (numeric), comm and cgroup (strings: the cgroup v2
 * path, "id:N" when not known here) when the sample has them.  A
 * profile of another kind has Go's types for it (docs/serving.md).
 */
#ifndef CPROF_PPROF_H
#define CPROF_PPROF_H

#include <stdbool.h>
#include <stdio.h>

#include "symbolize/resolve.h"

/* Write r to out, streaming through gzip.  0 ok, -1 after printing why. */
int pprof__write(const struct resolved *r, FILE *out, const char *name);
/*
 * The same; with allocs, a profile of kind heap names alloc_space its
 * default sample type (Go's /debug/pprof/allocs), else inuse_space is
 * (the last type, as Go's /debug/pprof/heap).
 */
int pprof__write_heap(const struct resolved *r, FILE *out, const char *name,
		      bool allocs);

#endif /* CPROF_PPROF_H */
