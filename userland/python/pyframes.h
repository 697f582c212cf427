/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * pyframes - the names of the Python frames samples carry (struct
 * cprof_pytrail): each code object a sample's trailer names is read from
 * its process (pycode.h) while the stream is read, so that a program that
 * exits before the profile is written still gets its names, and kept for
 * the resolver (resolve.c) by (pid, code object, first line): its
 * qualified name, file name, first line and line table.
 *
 * The interpreter's layout (pyrt.h) comes from the file of the mapping
 * record of the sample's pid that covers the trailer's text (opened as
 * mapfile.h opens a mapping's file: the very file mapped, never another;
 * one detection per file), the process's bias from that record (its start
 * less its file offset less the file's text_delta).  A record that comes
 * after the sample (the module lists a process's mappings when its first
 * samples ask) has its pid's code objects read when it arrives.  A
 * process's new code objects wait up to 100 ms to be read together: a
 * batch is one child (boxed.h), which costs milliseconds, and a program
 * that starts meets new code at nearly every sample.
 *
 * The process is read only if it is still the record's (its start time, a
 * pidfd held across the reads, the pid checked alive after them), only in
 * its own memory (anonymous mappings, and the interpreter's file if that
 * is not on FUSE: a user's file system could hold a read for ever), and
 * only for a stream of this boot.  A code object whose first line is not
 * the one the tick read is another (the address was freed and reused):
 * unknown.  What could not be read is kept with why, one phrase, for the
 * resolver's summary.
 *
 * Bounded: PYFRAMES_ENTRIES_MAX code objects, PYFRAMES_BYTES_MAX bytes of
 * names and line tables; past them new code objects stay unnamed ("not
 * read: too many code objects").
 */
#ifndef CPROF_PYFRAMES_H
#define CPROF_PYFRAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cprof_format.h"
#include "stream/profile.h"

#define PYFRAMES_ENTRIES_MAX	(1u << 20)
#define PYFRAMES_BYTES_MAX	(256u << 20)

struct pyframes;

/* A code object read from its process; owned by the cache. */
struct pyframes_code {
	const char *qualname;		/* co_qualname, UTF-8 */
	const char *filename;		/* co_filename, UTF-8 */
	int firstlineno;
	const uint8_t *linetable;	/* co_linetable */
	size_t linetable_len;
};

/*
 * Whether code objects are read from the processes (the default) or only
 * named by the stream's records, for the readers made from now on:
 * --no-python-frames reads no process.
 */
void pyframes_set_read(bool on);

/* NULL on allocation failure. */
struct pyframes *pyframes__new(void);
/* NULL-safe. */
void pyframes__free(struct pyframes *py);

/*
 * A checked sample of the stream whose profile (the mapping records) is
 * p: its code objects not known yet are read with the others its process
 * meets in the next 100 ms (one child reads them all), or when the
 * mapping record of its interpreter arrives.  NULL-safe.
 */
void pyframes__note_sample(struct pyframes *py, const struct profile *p,
			   const struct cprof_sample *smp);
/*
 * A checked CPROF_REC_PYCODE: the code object the module copied at a tick
 * names its frames, unless it was read from the process already (a
 * whole copy); whatever the stream's boot.  NULL-safe.
 */
void pyframes__note_code(struct pyframes *py, const struct cprof_pycode *rec);

/*
 * Read the code objects that wait to be read (pyframes__note_sample()),
 * now: at the stream's end, while the reader idles, before a profile of
 * what was read so far is written.  p: as pyframes__note_sample()'s.
 * NULL-safe.
 */
void pyframes__flush(struct pyframes *py, const struct profile *p);

/* A mapping record, after it was added to p: what waited for it.  NULL-safe. */
void pyframes__note_mmap(struct pyframes *py, const struct cprof_mmap *mm);

/*
 * The code object at code (CPROF_PYFRAME_ENTRY ignored) of pid whose first
 * line the tick read as firstlineno; NULL with *why (one phrase) if it was
 * not read.  py may be NULL (nothing read).
 */
const struct pyframes_code *pyframes__get(const struct pyframes *py,
					  uint32_t pid, uint64_t code,
					  int firstlineno, const char **why);

/*
 * The line of instruction instr (code units; -1: not started) of c, 0 if
 * its line table has none.
 */
int pyframes_code__line(const struct pyframes_code *c, int32_t instr);

/* Forget what was read of pid (a process gone, in a run of weeks). */
void pyframes__drop_pid(struct pyframes *py, uint32_t pid);

/* Code objects kept, and bytes they take. */
void pyframes__counts(const struct pyframes *py, size_t *entries,
		      size_t *bytes);

#endif /* CPROF_PYFRAMES_H */
