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

#include <stdbool.h>
#include <stdio.h>

#include "symbolize/resolve.h"

/*
 * With cgroup, each stack gets a root frame "cgroup:PATH" (as pprof's
 * -tagroot=cgroup): in folded output before the comm, in top as a row whose
 * cum is the cgroup's share.
 */
#define CGROUP_FRAME_PREFIX	"cgroup:"

/* 0 ok, -1 after printing why. */
int output__folded(const struct resolved *r, FILE *out, const char *name,
		   bool cgroup);
/* nodes: rows to show, 0 for all.  0 ok, -1 after printing why. */
int output__top(const struct resolved *r, FILE *out, const char *name,
		int nodes, bool cgroup);

/*
 * text: Go's legacy text form of a profile (/debug/pprof/...?debug=1): a
 *   header line, then for each distinct stack, most samples first,
 *   "COUNT NANOS @ ADDR ADDR ..." (leaf first) and one "#\tADDR\tNAME\tFILE:LINE"
 *   line per frame, a blank line between stacks.  A thread snapshot's is
 *   Go's goroutine profile's (debug=1): "threads profile: total N", and
 *   "COUNT @ ..." for each stack.
 */
int output__text(const struct resolved *r, FILE *out, const char *name);

/*
 * threads: every thread of a snapshot (Go's goroutine profile at debug=2),
 *   by pid and tid: "thread TID (COMM, pid PID) [STATE, TIME OFF THE CPU]:"
 *   then its frames, leaf first, each "NAME" and "\tFILE:LINE" if known.
 *   0 ok, -1 after printing why (also for a profile of another kind).
 */
int output__threads(const struct resolved *r, FILE *out, const char *name);

/*
 * trace: a profile of kind trace as the Chrome trace event format
 *   (chrome.h), JSON, gzipped with gzip.
 */
enum output_format {
	FORMAT_PPROF, FORMAT_FOLDED, FORMAT_TOP, FORMAT_TEXT, FORMAT_THREADS,
	FORMAT_TRACE
};

struct output_opts {
	enum output_format format;
	int nodes;		/* top */
	bool cgroup;		/* folded, top */
	bool allocs;		/* pprof of kind heap: alloc_space first */
	bool gzip;		/* trace */
	size_t trace_bytes;	/* trace: the JSON's budget; 0: the default */
};

/*
 * trace: r (kind trace) as chrome__write() writes it, within
 * o->trace_bytes; events left out past it said in one warning line.
 */
int output__trace(const struct resolved *r, const struct output_opts *o,
		  FILE *out, const char *name);

/*
 * r in the chosen format (pprof: pprof__write()); a profile of kind trace
 * in trace only.  0 ok, -1 after printing why.
 */
int output__write(const struct resolved *r, const struct output_opts *o,
		  FILE *out, const char *name);

/*
 * The name of line i of location l ("func", or for an unsymbolized location
 * "file+0xoffset" / "0xaddress") in buf.  Returns buf or a string of r.
 */
const char *output__frame_name(const struct resolved *r,
			       const struct res_location *l, uint32_t i,
			       char *buf, size_t size);

#endif /* CPROF_OUTPUT_H */
