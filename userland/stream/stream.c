// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * stream - decoder for the cprof stream.  See stream.h.
 *
 * The reader keeps one buffer; records are handed out in place.  Every
 * offset in the stream is a multiple of 8 (header and record sizes are), and
 * the buffer is compacted so that the next record starts at its beginning
 * before it is filled, so records are always 8-byte aligned in memory.
 */
#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "stream/stream.h"
#include "lib/util.h"

#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the cprof stream is little-endian; this reader does not swap bytes"
#endif

/*
 * The largest record and room to read ahead.  (Under 128 KiB: ASan's fast
 * allocator serves it, which keeps the fuzzer fast.)
 */
#define BUF_SIZE	(96u * 1024)

_Static_assert(BUF_SIZE >= STREAM_REC_MAX && BUF_SIZE >= STREAM_HDR_MAX,
	       "a record must fit the buffer");
_Static_assert(sizeof(struct cprof_header) % 8 == 0, "header alignment");
_Static_assert(sizeof(struct cprof_sample) == 48, "sample layout");
_Static_assert(sizeof(struct cprof_mmap) == 72, "mmap layout");
_Static_assert(sizeof(struct cprof_file_id) == 32, "file id layout");
_Static_assert(sizeof(struct cprof_ustack) == 160, "ustack layout");
_Static_assert(sizeof(struct cprof_pytrail) == 16 &&
	       sizeof(struct cprof_pyframe) == 16, "Python trailer layout");

struct stream {
	int fd;
	const char *name;
	unsigned char *buf;
	size_t pos;		/* first unconsumed byte */
	size_t len;		/* end of valid data */
	uint64_t off;		/* stream offset of buf[pos] */
	int eof;
	int ended;		/* END record handed out */
	bool module;		/* the module's own file (stream__from_module) */
	bool gone;		/* ... which the module removed mid-profile */
	uint64_t last_ns;	/* the latest sample's time */
	uint64_t samples;	/* samples handed out */
	struct cprof_end end;	/* made up when the module went away */
	struct cprof_header hdr;
	int (*on_interrupt)(void *arg);
	void *interrupt_arg;
	void (*on_wait)(void *arg);
	void *wait_arg;
};

static const char *const rec_names[] = {
	[CPROF_REC_SAMPLE]	= "sample",
	[CPROF_REC_MMAP]	= "mmap",
	[CPROF_REC_LOST]	= "lost",
	[CPROF_REC_THROTTLE]	= "throttle",
	[CPROF_REC_END]		= "END",
	[CPROF_REC_USTACK]	= "ustack",
	[CPROF_REC_OFFCPU]	= "offcpu",
	[CPROF_REC_ONCPU]	= "oncpu",
	[CPROF_REC_THREAD]	= "thread",
	[CPROF_REC_PYCODE]	= "pycode",
	[CPROF_REC_SWITCH]	= "switch",
	[CPROF_REC_WAKE]	= "wake",
	[CPROF_REC_HEAPFREE]	= "heapfree",
};

static const size_t rec_min_size[] = {
	[CPROF_REC_SAMPLE]	= sizeof(struct cprof_sample),
	[CPROF_REC_MMAP]	= sizeof(struct cprof_mmap) + 1,
	[CPROF_REC_LOST]	= sizeof(struct cprof_lost),
	[CPROF_REC_THROTTLE]	= sizeof(struct cprof_throttle),
	[CPROF_REC_END]		= sizeof(struct cprof_end),
	[CPROF_REC_USTACK]	= sizeof(struct cprof_ustack),
	[CPROF_REC_OFFCPU]	= sizeof(struct cprof_offcpu),
	[CPROF_REC_ONCPU]	= sizeof(struct cprof_oncpu),
	[CPROF_REC_THREAD]	= sizeof(struct cprof_thread),
	[CPROF_REC_PYCODE]	= sizeof(struct cprof_pycode),
	[CPROF_REC_SWITCH]	= sizeof(struct cprof_switch),
	[CPROF_REC_WAKE]	= sizeof(struct cprof_wake),
	[CPROF_REC_HEAPFREE]	= sizeof(struct cprof_heapfree),
};

#define NR_KNOWN	(sizeof(rec_names) / sizeof(rec_names[0]))

const char *stream__rec_name(unsigned int type)
{
	if (type < NR_KNOWN && rec_names[type])
		return rec_names[type];
	return "unknown";
}

struct stream *stream__new(int fd, const char *name)
{
	struct stream *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->buf = malloc(BUF_SIZE);
	if (!s->buf) {
		free(s);
		return NULL;
	}
	s->fd = fd;
	s->name = name;
	return s;
}

void stream__free(struct stream *s)
{
	if (!s)
		return;
	free(s->buf);
	free(s);
}

uint64_t stream__offset(const struct stream *s)
{
	return s->off;
}

/*
 * Make at least need bytes available at buf + pos, reading as much as fits.
 * Returns the number of bytes available (less than need only at EOF), or -1
 * on a read error.  Interrupted and short reads are retried: a profile read
 * from /proc/cprof/profile ends with its END record even after a signal.
 */
static ssize_t stream__fill(struct stream *s, size_t need)
{
	if (s->pos + need > BUF_SIZE) {
		memmove(s->buf, s->buf + s->pos, s->len - s->pos);
		s->len -= s->pos;
		s->pos = 0;
	}
	while (s->len - s->pos < need && !s->eof) {
		struct pollfd pfd = { .fd = s->fd, .events = POLLIN };
		ssize_t n;

		if (s->on_wait && poll(&pfd, 1, 0) == 0)
			s->on_wait(s->wait_arg);
		n = read(s->fd, s->buf + s->len, BUF_SIZE - s->len);

		if (n < 0 && errno == EINTR) {
			if (s->on_interrupt &&
			    s->on_interrupt(s->interrupt_arg))
				return -1;
			continue;
		}
		if (n < 0 && errno == EIO && s->module && s->hdr.size) {
			/* procfs: the file was removed, the module unloaded */
			s->gone = true;
			s->eof = 1;
			break;
		}
		if (n < 0)
			return fail("%s: failed to read at byte %llu: %s",
				    esc(s->name),
				    (unsigned long long)(s->off + s->len - s->pos),
				    strerror(errno));
		if (n == 0)
			s->eof = 1;
		s->len += n;
	}
	return s->len - s->pos;
}

static void stream__consume(struct stream *s, size_t n)
{
	s->pos += n;
	s->off += n;
}

/* Headers before the kind field (version 2 too) are this long. */
#define HDR_MIN		offsetof(struct cprof_header, kind)

const struct cprof_header *stream__read_header(struct stream *s)
{
	const size_t min = HDR_MIN;
	const struct cprof_header *h;
	ssize_t have;

	have = stream__fill(s, min);
	if (have < 0)
		return NULL;
	if (have == 0) {
		fail("%s: empty input: no cprof stream header at byte 0", esc(s->name));
		return NULL;
	}
	if (memcmp(s->buf + s->pos, CPROF_MAGIC,
		   (size_t)have < CPROF_MAGIC_LEN ? (size_t)have : CPROF_MAGIC_LEN)) {
		fail("%s: bad magic at byte 0, not a cprof stream", esc(s->name));
		return NULL;
	}
	if ((size_t)have < min) {
		fail("%s: truncated header at byte 0 (need %zu bytes, have %zd)",
		     esc(s->name), min, have);
		return NULL;
	}
	h = (const struct cprof_header *)(s->buf + s->pos);
	if (h->version < CPROF_VERSION_MIN || h->version > CPROF_VERSION) {
		fail("%s: unsupported stream version %u at byte %zu (this cprof-dump reads versions %u to %u)",
		     esc(s->name), h->version,
		     offsetof(struct cprof_header, version), CPROF_VERSION_MIN,
		     CPROF_VERSION);
		return NULL;
	}
	if (h->size < min || h->size > STREAM_HDR_MAX || h->size % 8) {
		fail("%s: bad header size %u at byte %zu (must be a multiple of 8, %zu..%u)",
		     esc(s->name), h->size, offsetof(struct cprof_header, size),
		     min, STREAM_HDR_MAX);
		return NULL;
	}
	if (h->nr_cpu_ids == 0 || h->nr_cpu_ids > STREAM_CPUS_MAX) {
		fail("%s: bad nr_cpu_ids %u at byte %zu (must be 1..%u)",
		     esc(s->name), h->nr_cpu_ids,
		     offsetof(struct cprof_header, nr_cpu_ids),
		     STREAM_CPUS_MAX);
		return NULL;
	}
	if (h->period_ns == 0) {
		fail("%s: bad period_ns 0 at byte %zu", esc(s->name),
		     offsetof(struct cprof_header, period_ns));
		return NULL;
	}
	memset(&s->hdr, 0, sizeof(s->hdr));
	memcpy(&s->hdr, h, min);
	have = stream__fill(s, s->hdr.size);
	if (have < 0)
		return NULL;
	if ((size_t)have < s->hdr.size) {
		fail("%s: truncated header at byte 0 (need %u bytes, have %zd)",
		     esc(s->name), s->hdr.size, have);
		return NULL;
	}
	/* the fields appended since, where the header has them */
	memcpy(&s->hdr, s->buf + s->pos,
	       s->hdr.size < sizeof(s->hdr) ? s->hdr.size : sizeof(s->hdr));
	if (s->hdr.kind > CPROF_KIND_MAX) {
		fail("%s: bad kind %u at byte %zu (must be 0..%u)", esc(s->name),
		     s->hdr.kind, offsetof(struct cprof_header, kind),
		     CPROF_KIND_MAX);
		return NULL;
	}
	stream__consume(s, s->hdr.size);
	return &s->hdr;
}

size_t stream__frames_head(unsigned int type)
{
	switch (type) {
	case CPROF_REC_SAMPLE:
		return sizeof(struct cprof_sample);
	case CPROF_REC_OFFCPU:
		return sizeof(struct cprof_offcpu);
	case CPROF_REC_THREAD:
		return sizeof(struct cprof_thread);
	}
	return 0;
}

/*
 * The frames of a sample, offcpu or thread record (fixed part: head bytes):
 * each count within the depth, the size theirs (a sample of version 3 and
 * later: or theirs and a Python trailer's, itself checked; in a profile of
 * kind mutex, theirs and a waiter's).  0 ok, -1 after printing why.
 */
static int stream__check_frames(struct stream *s, const struct cprof_rec *r,
				size_t head, unsigned int nr_kernel,
				unsigned int nr_user)
{
	unsigned long long at = s->off;
	const char *what = stream__rec_name(r->type);
	bool cgroup = r->flags & CPROF_SAMPLE_CGROUP;
	const struct cprof_pytrail *py;
	size_t need, trail;

	if (nr_kernel > CPROF_MAX_DEPTH)
		return fail("%s: %s record at byte %llu: nr_kernel %u exceeds %d",
			    esc(s->name), what, at, nr_kernel, CPROF_MAX_DEPTH);
	if (nr_user > CPROF_MAX_DEPTH)
		return fail("%s: %s record at byte %llu: nr_user %u exceeds %d",
			    esc(s->name), what, at, nr_user, CPROF_MAX_DEPTH);
	need = head + sizeof(__u64) * (nr_kernel + nr_user + cgroup);
	/* kinds mutex and heap: one trailer of a fixed size, always */
	if (r->type == CPROF_REC_SAMPLE && (s->hdr.kind == CPROF_KIND_MUTEX ||
					    s->hdr.kind == CPROF_KIND_HEAP)) {
		bool heap = s->hdr.kind == CPROF_KIND_HEAP;
		size_t tsize = heap ? sizeof(struct cprof_heaptrail) :
				      sizeof(struct cprof_waketrail);
		unsigned int ttype = heap ? CPROF_TRAIL_HEAP : CPROF_TRAIL_WAKE;
		const __u16 *type;

		if (r->size != need + tsize)
			return fail("%s: sample record at byte %llu: size %u does not match %u kernel + %u user frames%s and %s (%zu bytes)",
				    esc(s->name), at, r->size, nr_kernel, nr_user,
				    cgroup ? ", a cgroup" : "",
				    heap ? "an allocation" : "a waiter",
				    need + tsize);
		type = (const __u16 *)((const char *)r + need);
		if (*type != ttype)
			return fail("%s: sample record at byte %llu: trailer type %u at byte %llu (%s's is %u)",
				    esc(s->name), at, *type,
				    at + (unsigned long long)need,
				    heap ? "an allocation" : "a waiter", ttype);
		return 0;
	}
	/* version 3: a sample's Python frames may follow */
	if (r->size > need && r->type == CPROF_REC_SAMPLE &&
	    s->hdr.version >= 3 && r->size >= need + sizeof(*py)) {
		py = (const struct cprof_pytrail *)((const char *)r + need);
		if (py->type != CPROF_TRAIL_PYTHON)
			return fail("%s: sample record at byte %llu: trailer type %u at byte %llu (a Python one is %u)",
				    esc(s->name), at, py->type,
				    at + (unsigned long long)need,
				    CPROF_TRAIL_PYTHON);
		if (py->status > CPROF_PY_MAX)
			return fail("%s: sample record at byte %llu: Python trailer status %u (at most %u)",
				    esc(s->name), at, py->status, CPROF_PY_MAX);
		if (py->nr > CPROF_MAX_DEPTH)
			return fail("%s: sample record at byte %llu: Python trailer of %u frames exceeds %d",
				    esc(s->name), at, py->nr, CPROF_MAX_DEPTH);
		trail = sizeof(*py) + py->nr * sizeof(py->frame[0]);
		if (r->size != need + trail)
			return fail("%s: sample record at byte %llu: size %u does not match %u kernel + %u user frames%s and a Python trailer of %u frames (%zu bytes)",
				    esc(s->name), at, r->size, nr_kernel, nr_user,
				    cgroup ? ", a cgroup" : "", py->nr,
				    need + trail);
		return 0;
	}
	if (r->size != need)
		return fail("%s: %s record at byte %llu: size %u does not match %u kernel + %u user frames%s (%zu bytes)",
			    esc(s->name), what, at, r->size, nr_kernel, nr_user,
			    cgroup ? " and a cgroup" : "", need);
	return 0;
}

/* A checked sample's trailer of @type, at least @size bytes; NULL: none. */
static const void *stream__sample_trail(const struct cprof_sample *smp,
					unsigned int type, size_t size)
{
	size_t need;

	if (smp->rec.type != CPROF_REC_SAMPLE)
		return NULL;
	need = sizeof(*smp) + sizeof(__u64) *
	       (smp->nr_kernel + smp->nr_user +
		!!(smp->rec.flags & CPROF_SAMPLE_CGROUP));
	if (smp->rec.size < need + size ||
	    *(const __u16 *)((const char *)smp + need) != type)
		return NULL;
	return (const char *)smp + need;
}

const struct cprof_pytrail *stream__sample_pytrail(const struct cprof_sample *smp)
{
	return stream__sample_trail(smp, CPROF_TRAIL_PYTHON,
				    sizeof(struct cprof_pytrail));
}

const struct cprof_waketrail *stream__sample_waketrail(const struct cprof_sample *smp)
{
	return stream__sample_trail(smp, CPROF_TRAIL_WAKE,
				    sizeof(struct cprof_waketrail));
}

const struct cprof_heaptrail *stream__sample_heaptrail(const struct cprof_sample *smp)
{
	return stream__sample_trail(smp, CPROF_TRAIL_HEAP,
				    sizeof(struct cprof_heaptrail));
}

/* Checks beyond the fixed size; 0 ok, -1 after printing why. */
static int stream__check(struct stream *s, const struct cprof_rec *r)
{
	unsigned long long at = s->off;
	const struct cprof_sample *smp;
	const struct cprof_mmap *mm;
	const struct cprof_lost *lost;
	const struct cprof_throttle *thr;
	const struct cprof_ustack *us;
	const struct cprof_pycode *pc;
	const struct cprof_offcpu *off;
	const struct cprof_oncpu *on;
	const struct cprof_thread *th;
	const struct cprof_switch *sw;
	const struct cprof_wake *wk;
	size_t need;
	unsigned int cpu;

	switch (r->type) {
	case CPROF_REC_SAMPLE:
		smp = (const struct cprof_sample *)r;
		if (stream__check_frames(s, r, sizeof(*smp), smp->nr_kernel,
					 smp->nr_user))
			return -1;
		cpu = smp->cpu;
		break;
	case CPROF_REC_MMAP:
		mm = (const struct cprof_mmap *)r;
		need = sizeof(*mm) + 1;
		if (r->flags & CPROF_MMAP_FILE_ID)
			need += sizeof(struct cprof_file_id);
		if (r->size < need)
			return fail("%s: mmap record at byte %llu: size %u leaves no room for a path%s",
				    esc(s->name), at, r->size,
				    r->flags & CPROF_MMAP_FILE_ID ?
				    " and a file id" : "");
		if (!memchr(mm->path, '\0', r->size - need + 1))
			return fail("%s: mmap record at byte %llu: path not NUL-terminated",
				    esc(s->name), at);
		if (mm->start >= mm->end)
			return fail("%s: mmap record at byte %llu: empty range %#llx-%#llx",
				    esc(s->name), at, (unsigned long long)mm->start,
				    (unsigned long long)mm->end);
		if (mm->build_id_size > CPROF_BUILD_ID_MAX)
			return fail("%s: mmap record at byte %llu: build_id_size %u exceeds %d",
				    esc(s->name), at, mm->build_id_size,
				    CPROF_BUILD_ID_MAX);
		return 0;
	case CPROF_REC_LOST:
		lost = (const struct cprof_lost *)r;
		cpu = lost->cpu;
		break;
	case CPROF_REC_USTACK:
		us = (const struct cprof_ustack *)r;
		if (us->size > CPROF_USTACK_MAX ||
		    r->size != sizeof(*us) + CPROF_ALIGN(us->size))
			return fail("%s: ustack record at byte %llu: size %u does not match %u bytes of stack (at most %u)",
				    esc(s->name), at, r->size, us->size,
				    CPROF_USTACK_MAX);
		if (us->frame >= CPROF_MAX_DEPTH)
			return fail("%s: ustack record at byte %llu: frame %u exceeds %d",
				    esc(s->name), at, us->frame, CPROF_MAX_DEPTH);
		cpu = us->cpu;
		break;
	case CPROF_REC_PYCODE:
		pc = (const struct cprof_pycode *)r;
		if (pc->qualname_len > CPROF_PYSTR_MAX ||
		    pc->filename_len > CPROF_PYSTR_MAX ||
		    pc->linetable_len > CPROF_PYLINES_MAX ||
		    r->size != CPROF_ALIGN(sizeof(*pc) + pc->qualname_len +
					   pc->filename_len +
					   pc->linetable_len))
			return fail("%s: pycode record at byte %llu: size %u does not match its objects' %u + %u + %u bytes (at most %u, %u, %u)",
				    esc(s->name), at, r->size, pc->qualname_len,
				    pc->filename_len, pc->linetable_len,
				    CPROF_PYSTR_MAX, CPROF_PYSTR_MAX,
				    CPROF_PYLINES_MAX);
		if (pc->code & CPROF_PYFRAME_ENTRY)
			return fail("%s: pycode record at byte %llu: code %#llx has its bit 0 set",
				    esc(s->name), at, (unsigned long long)pc->code);
		return 0;
	case CPROF_REC_OFFCPU:
		off = (const struct cprof_offcpu *)r;
		if (stream__check_frames(s, r, sizeof(*off), off->nr_kernel,
					 off->nr_user))
			return -1;
		if (!off->every || off->state > CPROF_OFF_MAX)
			return fail("%s: offcpu record at byte %llu: every %u (must be 1 or more) or state %u (at most %u)",
				    esc(s->name), at, off->every, off->state,
				    CPROF_OFF_MAX);
		cpu = off->cpu;
		break;
	case CPROF_REC_THREAD:
		th = (const struct cprof_thread *)r;
		if (stream__check_frames(s, r, sizeof(*th), th->nr_kernel,
					 th->nr_user))
			return -1;
		if (th->state > CPROF_THREAD_STATE_MAX)
			return fail("%s: thread record at byte %llu: state %u (at most %u)",
				    esc(s->name), at, th->state,
				    CPROF_THREAD_STATE_MAX);
		cpu = th->cpu;
		break;
	case CPROF_REC_ONCPU:
		on = (const struct cprof_oncpu *)r;
		if (on->time_ns < on->out_ns)
			return fail("%s: oncpu record at byte %llu: back at %llu before it left at %llu",
				    esc(s->name), at,
				    (unsigned long long)on->time_ns,
				    (unsigned long long)on->out_ns);
		cpu = on->cpu;
		break;
	case CPROF_REC_SWITCH:
		sw = (const struct cprof_switch *)r;
		if (sw->prev_state > CPROF_OFF_MAX)
			return fail("%s: switch record at byte %llu: prev_state %u (at most %u)",
				    esc(s->name), at, sw->prev_state,
				    CPROF_OFF_MAX);
		cpu = sw->cpu;
		break;
	case CPROF_REC_WAKE:
		wk = (const struct cprof_wake *)r;
		if (wk->target_cpu >= s->hdr.nr_cpu_ids)
			return fail("%s: wake record at byte %llu: target_cpu %u out of range (nr_cpu_ids %u)",
				    esc(s->name), at, wk->target_cpu,
				    s->hdr.nr_cpu_ids);
		cpu = wk->cpu;
		break;
	case CPROF_REC_THROTTLE:
		thr = (const struct cprof_throttle *)r;
		if (thr->period_ns == 0)
			return fail("%s: throttle record at byte %llu: period_ns 0",
				    esc(s->name), at);
		cpu = thr->cpu;
		break;
	default:
		return 0;
	}
	if (cpu >= s->hdr.nr_cpu_ids)
		return fail("%s: %s record at byte %llu: cpu %u out of range (nr_cpu_ids %u)",
			    esc(s->name), stream__rec_name(r->type), at, cpu,
			    s->hdr.nr_cpu_ids);
	return 0;
}

void stream__from_module(struct stream *s)
{
	s->module = true;
}

/*
 * The module went away before its END record (unloading waits a while for
 * the reader, then procfs cuts it off): end the stream here with the END
 * the module would have written, so that what was read is kept.
 */
static int stream__end_gone(struct stream *s, size_t partial,
			    const struct cprof_rec **rec)
{
	uint64_t start = s->hdr.start_time_ns;

	warning("%s: the module was unloaded at byte %llu before the profile's END: the profile holds the %llu samples read%s; losses after the last lost record are not counted",
		esc(s->name), (unsigned long long)s->off,
		(unsigned long long)s->samples,
		partial ? ", a record cut in two is left out" : "");
	stream__consume(s, partial);
	s->end.rec.type = CPROF_REC_END;
	s->end.rec.size = sizeof(s->end);
	s->end.time_ns = s->last_ns > start ? s->last_ns : start;
	s->end.duration_ns = s->end.time_ns - start;
	s->end.reason = CPROF_END_UNLOAD;
	s->end.samples = s->samples;
	s->ended = 1;
	*rec = &s->end.rec;
	return 1;
}

int stream__next(struct stream *s, const struct cprof_rec **rec)
{
	const struct cprof_rec *r;
	ssize_t have;

	for (;;) {
		unsigned long long at = s->off;
		size_t min;

		have = stream__fill(s, sizeof(*r));
		if (have < 0)
			return -1;
		if (s->ended) {
			if (have)
				return fail("%s: unexpected data after the END record at byte %llu",
					    esc(s->name), at);
			return 0;
		}
		if (s->gone && (size_t)have < sizeof(*r))
			return stream__end_gone(s, have, rec);
		if (have == 0)
			return fail("%s: truncated stream: no END record at byte %llu (the profile was cut short)",
				    esc(s->name), at);
		if ((size_t)have < sizeof(*r))
			return fail("%s: truncated record header at byte %llu (need %zu bytes, have %zd)",
				    esc(s->name), at, sizeof(*r), have);
		r = (const struct cprof_rec *)(s->buf + s->pos);
		if (r->size < sizeof(*r) || r->size % 8 ||
		    r->size > STREAM_REC_MAX)
			return fail("%s: bad size %u in %s record (type %u) at byte %llu (must be a multiple of 8, 8..%u)",
				    esc(s->name), r->size, stream__rec_name(r->type),
				    r->type, at, STREAM_REC_MAX);
		min = r->type < NR_KNOWN ? rec_min_size[r->type] : 0;
		if (r->size < min)
			return fail("%s: short %s record at byte %llu (size %u, the fixed part needs %zu)",
				    esc(s->name), stream__rec_name(r->type), at,
				    r->size, min);
		have = stream__fill(s, r->size);
		if (have < 0)
			return -1;
		r = (const struct cprof_rec *)(s->buf + s->pos);
		if (s->gone && (size_t)have < r->size)
			return stream__end_gone(s, have, rec);
		if ((size_t)have < r->size)
			return fail("%s: truncated %s record at byte %llu (need %u bytes, have %zd)",
				    esc(s->name), stream__rec_name(r->type), at,
				    r->size, have);
		if (stream__check(s, r))
			return -1;
		stream__consume(s, r->size);
		if (r->type >= NR_KNOWN || !rec_names[r->type])
			continue;	/* a newer record type: skip it */
		if (r->type == CPROF_REC_END)
			s->ended = 1;
		if (r->type == CPROF_REC_SAMPLE) {
			s->samples++;
			s->last_ns = ((const struct cprof_sample *)r)->time_ns;
		}
		*rec = r;
		return 1;
	}
}

void stream__on_interrupt(struct stream *s, int (*fn)(void *arg), void *arg)
{
	s->on_interrupt = fn;
	s->interrupt_arg = arg;
}

void stream__on_wait(struct stream *s, void (*fn)(void *arg), void *arg)
{
	s->on_wait = fn;
	s->wait_arg = arg;
}

int stream__mmap_uid(const struct cprof_mmap *mm, uint32_t *uid)
{
	if (!(mm->rec.flags & CPROF_MMAP_UID))
		return 0;
	*uid = mm->uid;
	return 1;
}

int stream__mmap_file_id(const struct cprof_mmap *mm,
			 struct cprof_file_id *id)
{
	if (!(mm->rec.flags & CPROF_MMAP_FILE_ID) ||
	    mm->rec.size < sizeof(*mm) + 1 + sizeof(*id))
		return 0;
	memcpy(id, (const char *)mm + mm->rec.size - sizeof(*id), sizeof(*id));
	return id->dev || id->ino;
}
