/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * windows - a continuous profile cut into back-to-back windows
 * (cprof-dump --every SECONDS), each written as a complete file named by
 * its start, DIR/cprof-YYYYMMDDTHHMMSSZ.pb.gz (.folded, .txt).
 *
 * Window k holds the samples whose time is in [start + k * every,
 * start + (k + 1) * every), start being the profile's: no sample is in two
 * windows or in none, and a window's pprof time and duration are exactly
 * its bounds (the last one ends when the profile does).  The module's
 * rings are drained every 250 ms and not in time order across CPUs, so a
 * window is written once the sample clock (CLOCK_MONOTONIC) is
 * WINDOWS_HOLD_NS past its end (a timer interrupts the read once a second,
 * so this holds when no record arrives) and ingest.c holds no sample of
 * it whose stack copy waits for tables (30 s at most), or when the stream
 * ends: handed to a child that converts it while the stream is read on,
 * one at a time, the others due waiting in order (one with too many
 * behind it goes unsymbolized; past the open windows' cap the reader
 * waits, counted).  A sample that comes later still
 * goes into the oldest window not yet handed on, and is counted.
 * The mapping records of a process that exited are dropped once no window
 * still open can hold its samples, and THROTTLE records once a later one
 * rules the oldest window open, so a run of weeks keeps those of the
 * processes that live and the periods in force.
 */
#ifndef CPROF_WINDOWS_H
#define CPROF_WINDOWS_H

#include "output/output.h"
#include "run/pipeline.h"

#define WINDOWS_HOLD_NS		1000000000ull

struct windows_opts {
	const char *dir;
	long every;			/* seconds */
	long keep;			/* files to keep, 0: all */
	struct output_opts out;
	/*
	 * What the stream goes through (begun: pipeline__begin()), and what
	 * names each window (pipeline__resolve_opts()).
	 */
	struct pipeline *pl;
	/*
	 * While a window's file is written, its temporary file's path is
	 * here (else ""), for a signal handler to remove; NULL: not kept.
	 */
	char *tmp_path;
	size_t tmp_path_size;
};

/*
 * Read the stream on fd (name: for messages; fd < 0: the profile
 * o->pl started) to its end through o->pl, writing each
 * window as it completes, symbolized in a child process (boxed.h) while
 * the stream is read on.  A
 * window that cannot be symbolized within boxed_symbolize is written
 * with addresses only; one that cannot be written even so, or whose file
 * cannot be written (ENOSPC, EIO), is lost, one warning line, and the run
 * goes on (--keep still rotates).  0 ok; 1 if windows were lost (a line
 * says how many, at the end); -1 after printing why (out of memory, a bad
 * stream).  The stream is closed (pipeline__close()) at the end.
 */
int windows__run(int fd, const char *name, const struct windows_opts *o);

#endif /* CPROF_WINDOWS_H */
