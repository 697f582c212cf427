/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * heapfind - where a process's C allocator is: the addresses of glibc's
 * malloc, calloc, realloc, posix_memalign and free in its memory, as the
 * module's kind heap probes them (ctl's heap_<name>= lines).  A process
 * whose malloc is another library's (jemalloc, tcmalloc), or that has no
 * glibc, is refused.
 */
#ifndef CPROF_HEAPFIND_H
#define CPROF_HEAPFIND_H

#include <stddef.h>

/* Go's MemProfileRate, and the most the module takes */
#define HEAP_RATE_DEFAULT	524288
#define HEAP_RATE_MAX		1073741824

/*
 * The ctl lines for pid's allocator and rate (mean bytes a sample), into
 * buf.  0, or -1 with one line saying why in msg.
 */
int heapfind__settings(long pid, unsigned long rate, char *buf,
		       size_t size, char *msg, size_t msg_size);

#endif /* CPROF_HEAPFIND_H */
