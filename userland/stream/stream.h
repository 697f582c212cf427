/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * stream - decoder for the cprof stream (cprof_format.h).
 *
 * Reads from a file descriptor as the data arrives (a pipe, a file or
 * /proc/cprof/profile), never holding more than one record plus a read
 * buffer.  Every record is checked before it is handed out: size (at least
 * 8, a multiple of 8, at most STREAM_REC_MAX, all of it present), the fixed
 * part of each known type, frame counts against the record size (a
 * sample's Python trailer too: its type, status, frame count and size),
 * the mmap path's NUL, cpu numbers against the header.  Records of unknown types are
 * skipped.  The stream must end with CPROF_REC_END and nothing after it.
 *
 * On any problem one line goes to stderr naming the input, what is wrong and
 * the byte offset of the record (or header field) at fault, e.g.
 *   cprof-dump: raw.bin: truncated sample record at byte 4312 (need 96 bytes, have 40)
 */
#ifndef CPROF_STREAM_H
#define CPROF_STREAM_H

#include <stdint.h>

#include "cprof_format.h"

/* Largest record accepted; any real record is far smaller. */
#define STREAM_REC_MAX		(64u * 1024)
/* Largest header accepted (the header may grow by appending fields). */
#define STREAM_HDR_MAX		(64u * 1024)
/* Largest nr_cpu_ids accepted. */
#define STREAM_CPUS_MAX		(1u << 16)

struct stream;

/*
 * Reader over fd (not closed by stream__free).  name is used in messages and
 * must outlive the reader.  NULL on allocation failure.
 */
struct stream *stream__new(int fd, const char *name);
/* NULL-safe. */
void stream__free(struct stream *s);
/*
 * fd is the module's /proc/cprof/profile: a read failing with EIO after the
 * header (procfs removed the file: the module was unloaded before it could
 * write its END) ends the stream with an END of reason CPROF_END_UNLOAD
 * that stream__next() makes up, counting the samples read, and one
 * warning.  Any other stream without its END is an error.
 */
void stream__from_module(struct stream *s);

/*
 * Read and check the stream header; must be called once, first.  Returns the
 * header (owned by s, valid until stream__free) or NULL after printing why.
 */
const struct cprof_header *stream__read_header(struct stream *s);

/*
 * Next record in *rec: returns 1 with *rec pointing into s's buffer (8-byte
 * aligned, valid until the next call), 0 once the END record has been
 * returned and the input is at EOF, -1 after printing why.  The END record
 * itself is returned (1) before the 0.
 */
int stream__next(struct stream *s, const struct cprof_rec **rec);

/*
 * Call fn(arg) whenever a read is interrupted by a signal (EINTR), before
 * it is retried: a reader's chance to act while no record arrives.  A
 * non-zero return ends stream__next() with -1 (fn said why).
 */
void stream__on_interrupt(struct stream *s, int (*fn)(void *arg), void *arg);

/*
 * Call fn(arg) before a read that would wait: nothing to read yet, as
 * poll() tells (a file that cannot tell, as the module's, reads as
 * ready: its reads return at least every few hundred milliseconds while
 * anything is sampled).  A reader's chance to do what should not wait
 * for the next record.
 */
void stream__on_wait(struct stream *s, void (*fn)(void *arg), void *arg);

/* Bytes consumed so far. */
uint64_t stream__offset(const struct stream *s);

/*
 * The identity of the file an mmap record maps: 1 with *id set, 0 when the
 * record has none (no file, or a stream from a module before it was
 * recorded).
 */
int stream__mmap_file_id(const struct cprof_mmap *mm,
			 struct cprof_file_id *id);

/*
 * The effective uid of the process an mmap record's mappings are of, when
 * they were listed: 1 with *uid set, 0 when the record has none (a stream
 * from a module before it was recorded).
 */
int stream__mmap_uid(const struct cprof_mmap *mm, uint32_t *uid);

/*
 * The Python frames after a checked sample's frames (and cgroup id), or
 * NULL if it has none (another record type, a stream before version 3).
 */
const struct cprof_pytrail *stream__sample_pytrail(const struct cprof_sample *smp);
/*
 * The thread a checked sample of a profile of kind mutex woke and its
 * wait, after its frames and cgroup id; NULL if it has none.
 */
const struct cprof_waketrail *stream__sample_waketrail(const struct cprof_sample *smp);
/*
 * The allocation a checked sample of a profile of kind heap stands for
 * (its size and id); NULL for another sample.
 */
const struct cprof_heaptrail *stream__sample_heaptrail(const struct cprof_sample *smp);

/* "sample", "mmap", ... or "unknown". */
const char *stream__rec_name(unsigned int type);
/*
 * Where the frames start in a record with stacks (SAMPLE, OFFCPU, THREAD:
 * the fields before ips[], the same as a sample's up to comm); 0 for other
 * types.
 */
size_t stream__frames_head(unsigned int type);

#endif /* CPROF_STREAM_H */
