/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * jitmap - names of code a runtime compiled into anonymous memory, from
 * the map it writes for perf: DIR/perf-PID.map (DIR is /tmp), one line a
 * function, "START SIZE NAME", START and SIZE in hex (0x optional), written
 * by Node.js with --perf-basic-prof, Python >= 3.12 with -X perf, the JVM
 * with -XX:+DumpPerfMapAtExit or jcmd PID Compiler.perfmap.  The file stays
 * after the process exits, so its frames are named then too.
 *
 * A process under another root or in another pid namespace (a container)
 * writes its map in its own DIR, named by the pid it sees: while it runs,
 * a map not at the host's path is looked for inside its root
 * (/proc/PID/root, resolved inside it), as DIR/perf-NSPID.map.
 *
 * The file is the profiled program's word, and cprof-dump runs as root:
 * it is read only if it is a regular file (not a symlink, FIFO or device)
 * owned by the process's user or by root; anyone else's file at that path
 * (planted in the shared /tmp before the pid was the process's) is
 * refused.  A file of the process's own user may still say anything: its
 * names are shown as names, nothing more.  Reading is bounded: at most
 * JITMAP_MAX_BYTES of a map (all its contents, if rewritten),
 * JITMAP_MAX_ENTRIES lines (and JITMAP_ALL_ENTRIES for all the maps of
 * one profile), a name cut at JITMAP_NAME_MAX bytes; malformed lines are
 * skipped.  A file with other names (hard links) is refused too: it may
 * be someone else's.
 *
 * The runtime appends to its map while it runs, and the map has no
 * times: an entry applies from when it was read (the sample clock,
 * CLOCK_MONOTONIC).  While a stream of this boot is read, a sample with an
 * address of JIT code no entry covers has its map's new lines read (from
 * where the last read stopped, at most once per JITMAP_REREAD_NS of
 * sample time, a map not found once per 100 times that); jitmaps__get()
 * reads them once more at the end.  An address is named by the map as
 * read last at or before its sample's time: among the entries covering
 * it, the last written of those read by then.  If none was, by the first
 * read that covers it (its last line there): the code the sample was in
 * had its entry written before it ran, so the earliest entry known is the
 * likeliest, and later ones over it are code that replaced it.  Past
 * JITMAP_READS_MAX reads that found lines, new lines join the last read
 * (they apply from its time).  An address in no entry has no name.
 *
 * A map rewritten (another file at the path, a file shorter than what was
 * read, or its last 64 bytes before where the last read stopped changed)
 * is read again from its start: its lines replace those read before for
 * the samples after that read; the samples before keep their names.  Past
 * JITMAP_READS_MAX reads a rewritten map is no longer read.
 */
#ifndef CPROF_JITMAP_H
#define CPROF_JITMAP_H

#include <stdbool.h>
#include <stdint.h>

#include "cprof_format.h"
#include "stream/profile.h"

#define JITMAP_MAX_BYTES	(512u << 20)
#define JITMAP_MAX_ENTRIES	(8u << 20)
/* lines of all maps one cache reads together (one user's many pids) */
#define JITMAP_ALL_ENTRIES	(8u << 20)
#define JITMAP_NAME_MAX		1024
#define JITMAP_READS_MAX	32
#define JITMAP_REREAD_NS	10000000ull

struct jitmap;
struct jitmaps;

/*
 * A cache of maps by pid, read from dir (NULL: "/tmp").  NULL on ENOMEM.
 */
struct jitmaps *jitmaps__new(const char *dir);
/* NULL-safe. */
void jitmaps__free(struct jitmaps *c);

/*
 * A checked sample of the stream whose profile (the mapping records) is
 * p: if the stream is this boot's and an address of its user frames is in
 * an anonymous mapping ([anon]) that no entry of its process's map covers,
 * the map's new lines are read now.  NULL-safe.
 */
void jitmaps__note_sample(struct jitmaps *c, const struct profile *p,
			  const struct cprof_sample *smp);

/* Forget pid's map (a process gone, in a run of weeks).  NULL-safe. */
void jitmaps__drop_pid(struct jitmaps *c, uint32_t pid);

/*
 * pid's map, its new lines read (at the end of a profile); uid (has_uid)
 * is the process's user, from the stream; without one only root's file
 * is trusted.  NULL with *why (one phrase: "no perf map /tmp/perf-PID.map", "its
 * perf map is owned by another user (uid N) ...", ...) when there is none
 * to use, or with *why NULL when out of memory.
 */
const struct jitmap *jitmaps__get(struct jitmaps *c, uint32_t pid,
				  uint32_t uid, bool has_uid,
				  const char **why);

/*
 * Is why (from jitmaps__get()) a map refused for its owner, which a
 * summary names before any count?
 */
bool jitmap_refused(const char *why);

/*
 * The name of the function at addr in a sample taken at time_ns (sample
 * clock), or NULL; owned by the map.  *line (if line is not NULL) gets
 * the index of the entry's line among those read: one name, one entry.
 */
const char *jitmap__lookup(const struct jitmap *j, uint64_t addr,
			   uint64_t time_ns, uint64_t *line);

/* Lines used and lines skipped as malformed. */
void jitmap__counts(const struct jitmap *j, uint64_t *used,
		    uint64_t *skipped);

#endif /* CPROF_JITMAP_H */
