/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * chrome - a profile of kind trace as the Chrome trace event format
 * (JSON, the object form), which Perfetto's UI, chrome://tracing and
 * speedscope open.  Each thread is a track of its process (metadata
 * events name both): each time it ran on a CPU is a complete event ("X",
 * named by the thread's name; args: the cpu, why it left, and the stack
 * it left with, leaf first), each wake-up a flow ("s" on the waker's
 * track at the wake-up, "f" on the wakee's where it next runs); with
 * pid=, only the runs whose start was recorded.  Times
 * are the sample clock's (CLOCK_MONOTONIC), in microseconds.  Every
 * string is JSON-escaped, bytes that are no UTF-8 as the code points of
 * their values.  At most budget bytes of JSON (before any gzip): events
 * past it are left out and counted, with the records the module lost, in
 * otherData.
 */
#ifndef CPROF_CHROME_H
#define CPROF_CHROME_H

#include <stdbool.h>
#include <stdio.h>

#include "symbolize/resolve.h"

#define CHROME_BYTES_DEFAULT_MB	64
#define CHROME_BYTES_DEFAULT	((size_t)CHROME_BYTES_DEFAULT_MB << 20)
#define CHROME_BYTES_MIN	4096u

/* How output.h names line i of location l: output__frame_name(). */
typedef const char *chrome_frame_name_fn(const struct resolved *r,
					 const struct res_location *l,
					 uint32_t i, char *buf, size_t size);

/*
 * r (kind trace) to out, gzipped if gzip.  0 ok, -1 after printing why;
 * *dropped (may be NULL) gets the events left out past budget.
 */
int chrome__write(const struct resolved *r, FILE *out, const char *name,
		  bool gzip, size_t budget, chrome_frame_name_fn *frame_name,
		  uint64_t *dropped);

/* s as a JSON string, quotes included. */
void chrome__json_str(FILE *f, const char *s);

#endif /* CPROF_CHROME_H */
