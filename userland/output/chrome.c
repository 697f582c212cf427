// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * chrome - the Chrome trace event format of a timeline.  See chrome.h.
 *
 * The timeline's events in time order (each CPU's are already): a switch
 * ends the run of the task leaving (an "X" event from its switch in, or
 * the profile's start) and starts the next one's; a wake-up starts a flow
 * that ends where the wakee next runs.  The JSON is built in memory (at
 * most the budget), then written out, through zlib's gzip if asked.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <hashtab.h>
#include <zlib.h>

#include "output/chrome.h"
#include "stream/timeline.h"
#include "lib/util.h"

#define NAME_LEN	512
/* room kept past the events for the closing and otherData */
#define TAIL_RESERVE	1024

/* A length of a valid UTF-8 sequence at s; 0: none (a stray byte). */
static size_t utf8_len(const unsigned char *s)
{
	unsigned char c = s[0];
	uint32_t cp;
	size_t n, i;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf) {
		n = 2;
		cp = c & 0x1f;
	} else if (c >= 0xe0 && c <= 0xef) {
		n = 3;
		cp = c & 0x0f;
	} else if (c >= 0xf0 && c <= 0xf4) {
		n = 4;
		cp = c & 0x07;
	} else {
		return 0;
	}
	for (i = 1; i < n; i++) {
		/* the terminating NUL is no continuation byte */
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if ((n == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
	    (n == 4 && (cp < 0x10000 || cp > 0x10ffff)))
		return 0;
	return n;
}

void chrome__json_str(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n;

	fputc('"', f);
	while (*p) {
		if (*p == '"' || *p == '\\') {
			fputc('\\', f);
			fputc(*p++, f);
			continue;
		}
		n = utf8_len(p);
		if (n == 1 && *p >= 0x20 && *p != 0x7f) {
			fputc(*p++, f);
		} else if (n > 1) {
			fwrite(p, 1, n, f);
			p += n;
		} else {
			/* a control character, or a byte that is no UTF-8 */
			fprintf(f, "\\u%04x", *p++);
		}
	}
	fputc('"', f);
}

/* Microseconds, to the nanosecond. */
static void put_us(FILE *f, uint64_t ns)
{
	fprintf(f, "%llu.%03llu", (unsigned long long)(ns / 1000),
		(unsigned long long)(ns % 1000));
}

struct writer {
	const struct resolved *r;
	const struct timeline *tl;
	chrome_frame_name_fn *frame_name;
	FILE *f;		/* the JSON, in memory */
	FILE *e;		/* the event being written, in memory */
	char *ebuf;
	size_t elen;
	size_t budget;
	uint64_t dropped;	/* events left out past the budget */
	bool first;		/* no event written yet */
	htab_t pending;		/* struct wake_flow: a wakee's last wake-up */
	uint64_t flows;		/* flow ids given */
	/* switches whose stacks the module did not walk, by why */
	uint64_t nostack_budget, nostack_ring;
	struct cpu_run {
		uint32_t pid, tid;
		uint64_t start_ns;
		bool known;	/* a switch on it was seen */
	} *cpus;
	size_t nr_cpus;
};

struct wake_flow {
	uint32_t tid;
	uint64_t id;
};

static hashval_t flow_hash(const void *e)
{
	return ((const struct wake_flow *)e)->tid * 2654435761u;
}

static int flow_eq(const void *a, const void *b)
{
	return ((const struct wake_flow *)a)->tid ==
	       ((const struct wake_flow *)b)->tid;
}

/* An event begins: written to w->e until writer__end(). */
static FILE *writer__begin(struct writer *w)
{
	rewind(w->e);
	return w->e;
}

/*
 * The event goes in if it fits in the budget with what must follow it;
 * else it is counted.  True if it went in.
 */
static bool writer__end(struct writer *w)
{
	long at = ftell(w->f), len = fflush(w->e) ? -1 : ftell(w->e);

	/* the stream's buffer holds the event from its start on */
	if (at < 0 || len < 0 ||
	    (size_t)at + (size_t)len + 2 + TAIL_RESERVE > w->budget) {
		w->dropped++;
		return false;
	}
	if (!w->first)
		fputs(",\n", w->f);
	w->first = false;
	fwrite(w->ebuf, 1, (size_t)len, w->f);
	return true;
}

static const char *thread_name(const struct writer *w, uint32_t tid)
{
	const struct tl_thread *th = timeline__find(w->tl, tid);

	return th ? th->comm : "?";
}

static void writer__name(struct writer *w, const char *what, uint32_t pid,
			 uint32_t tid, const char *name)
{
	FILE *f = writer__begin(w);

	fprintf(f, "{\"ph\":\"M\",\"name\":\"%s\",\"pid\":%u,\"tid\":%u,\"args\":{\"name\":",
		what, pid, tid);
	chrome__json_str(f, name);
	fputs("}}", f);
	writer__end(w);
}

/*
 * Name every process and thread seen (metadata events): a process by its
 * main thread's name, or its first thread's when that one was not seen.
 */
static void writer__names(struct writer *w)
{
	size_t i, j, n = timeline__nr_threads(w->tl);

	for (i = 0; i < n; i++) {
		const struct tl_thread *th = timeline__thread(w->tl, i);

		if (th->tid == th->pid)
			writer__name(w, "process_name", th->pid, th->pid,
				     th->comm);
		writer__name(w, "thread_name", th->pid, th->tid, th->comm);
	}
	for (i = 0; i < n; i++) {
		const struct tl_thread *th = timeline__thread(w->tl, i);

		if (timeline__find(w->tl, th->pid))
			continue;
		for (j = 0; j < i; j++)
			if (timeline__thread(w->tl, j)->pid == th->pid)
				break;
		if (j == i)
			writer__name(w, "process_name", th->pid, th->pid,
				     th->comm);
	}
}

/* The frames of profile sample index, leaf first, as a JSON array. */
static void writer__stack(struct writer *w, FILE *f, uint32_t index)
{
	const struct resolved *r = w->r;
	const struct res_sample *s;
	char buf[NAME_LEN];
	bool first = true;
	uint32_t k, j;

	fputc('[', f);
	if (index < r->nr_samples) {
		s = &r->samples[index];
		for (k = 0; k < s->nr_locs; k++) {
			const struct res_location *l =
				&r->locations[r->loc_ids[s->loc + k] - 1];

			for (j = 0; j < (l->nr_lines ? l->nr_lines : 1); j++) {
				if (!first)
					fputc(',', f);
				first = false;
				chrome__json_str(f, w->frame_name(r, l, j, buf,
								  sizeof(buf)));
			}
		}
	}
	fputc(']', f);
}

static const char *const left_names[] = {
	[CPROF_OFF_PREEMPTED] = "preempted",
	[CPROF_OFF_SLEEPING] = "sleeping",
	[CPROF_OFF_DISK] = "uninterruptible",
	[CPROF_OFF_STOPPED] = "stopped",
	[CPROF_OFF_OTHER] = "other",
};

/* One run of tid on cpu from start to end; left NULL: still running. */
static void writer__run(struct writer *w, uint32_t pid, uint32_t tid,
			uint32_t cpu, uint64_t start, uint64_t end,
			const char *left, uint32_t stack, unsigned int flags)
{
	FILE *f;

	if (!tid)
		return;
	f = writer__begin(w);
	fputs("{\"ph\":\"X\",\"cat\":\"run\",\"name\":", f);
	chrome__json_str(f, thread_name(w, tid));
	fprintf(f, ",\"pid\":%u,\"tid\":%u,\"ts\":", pid, tid);
	put_us(f, start);
	fputs(",\"dur\":", f);
	put_us(f, end > start ? end - start : 0);
	fprintf(f, ",\"args\":{\"cpu\":%u,\"left\":\"%s\"", cpu,
		left ? left : "running at the end");
	if (stack) {
		fputs(",\"stack\":", f);
		writer__stack(w, f, stack - 1);
	} else if (flags & CPROF_SWITCH_NOSTACK_BUDGET) {
		fputs(",\"no_stack\":\"budget\"", f);
	} else if (flags & CPROF_SWITCH_NOSTACK_RING) {
		fputs(",\"no_stack\":\"ring\"", f);
	}
	fputs("}}", f);
	writer__end(w);
}

static struct cpu_run *writer__cpu(struct writer *w, uint32_t cpu)
{
	size_t cap = w->nr_cpus;

	if (cpu >= w->nr_cpus) {
		if (grow_array(&w->cpus, &cap, (size_t)cpu + 1, sizeof(*w->cpus)))
			return NULL;
		memset(w->cpus + w->nr_cpus, 0,
		       (cap - w->nr_cpus) * sizeof(*w->cpus));
		w->nr_cpus = cap;
	}
	return &w->cpus[cpu];
}

/* A flow's end where tid starts to run at time, if it was woken. */
static void writer__flow_end(struct writer *w, uint32_t pid, uint32_t tid,
			     uint64_t time)
{
	struct wake_flow key = { .tid = tid }, *fl;
	void **slot = htab_find_slot(w->pending, &key, NO_INSERT);
	FILE *f;

	if (!slot)
		return;
	fl = *slot;
	f = writer__begin(w);
	fprintf(f, "{\"ph\":\"f\",\"bp\":\"e\",\"cat\":\"wakeup\",\"name\":\"wakeup\",\"id\":%llu,\"pid\":%u,\"tid\":%u,\"ts\":",
		(unsigned long long)fl->id, pid, tid);
	put_us(f, time);
	fputc('}', f);
	writer__end(w);
	htab_clear_slot(w->pending, slot);
}

static int writer__switch(struct writer *w, const struct tl_event *e)
{
	struct cpu_run *c = writer__cpu(w, e->cpu);
	uint64_t start;

	if (!c)
		return -1;
	/*
	 * The CPU's first switch ends a run from the profile's start, but
	 * with pid= the switch in may have been another process's: unseen,
	 * as one of a thread not seen switching in.
	 */
	start = c->known ? c->start_ns :
		w->r->start_ns < e->time_ns ? w->r->start_ns : e->time_ns;
	if ((c->known && c->tid == e->a_tid) || (!c->known && !w->r->pid))
		writer__run(w, e->a_pid, e->a_tid, e->cpu, start, e->time_ns,
			    e->state < sizeof(left_names) / sizeof(left_names[0]) ?
			    left_names[e->state] : "other", e->stack, e->flags);
	if (e->flags & CPROF_SWITCH_NOSTACK_BUDGET)
		w->nostack_budget++;
	else if (e->flags & CPROF_SWITCH_NOSTACK_RING)
		w->nostack_ring++;
	c->known = true;
	c->pid = e->b_pid;
	c->tid = e->b_tid;
	c->start_ns = e->time_ns;
	if (e->b_tid)
		writer__flow_end(w, e->b_pid, e->b_tid, e->time_ns);
	return 0;
}

static int writer__wake(struct writer *w, const struct tl_event *e)
{
	struct wake_flow key = { .tid = e->b_tid }, *fl;
	void **slot;
	FILE *f;

	/* a wake-up from an interrupt of the idle task: no track to start on */
	if (!e->a_tid || !e->b_tid)
		return 0;
	f = writer__begin(w);
	fprintf(f, "{\"ph\":\"s\",\"cat\":\"wakeup\",\"name\":\"wakeup\",\"id\":%llu,\"pid\":%u,\"tid\":%u,\"ts\":",
		(unsigned long long)++w->flows, e->a_pid, e->a_tid);
	put_us(f, e->time_ns);
	fprintf(f, ",\"args\":{\"cpu\":%u,\"target_cpu\":%u,\"wakee_pid\":%u,\"wakee_tid\":%u,\"from_interrupt\":%s}}",
		e->cpu, e->target_cpu, e->b_pid, e->b_tid,
		e->flags & CPROF_WAKE_IRQ ? "true" : "false");
	/* its end only with its start */
	if (!writer__end(w))
		return 0;
	slot = htab_find_slot(w->pending, &key, INSERT);
	if (!slot)
		return -1;
	fl = *slot;
	if (!fl) {
		fl = malloc(sizeof(*fl));
		if (!fl)
			return -1;
		fl->tid = e->b_tid;
		*slot = fl;
	}
	fl->id = w->flows;
	return 0;
}

/* By time, then stream order (a CPU's events keep theirs). */
static int event_cmp(const void *a, const void *b, void *arg)
{
	const struct timeline *tl = arg;
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	uint64_t tx = timeline__event(tl, x)->time_ns;
	uint64_t ty = timeline__event(tl, y)->time_ns;

	if (tx != ty)
		return tx < ty ? -1 : 1;
	return x < y ? -1 : x > y;
}

static int writer__events(struct writer *w)
{
	size_t i, n = timeline__nr_events(w->tl), *order;
	int err = 0;

	order = malloc((n ? n : 1) * sizeof(*order));
	if (!order)
		return -1;
	for (i = 0; i < n; i++)
		order[i] = i;
	qsort_r(order, n, sizeof(*order), event_cmp, (void *)w->tl);
	for (i = 0; i < n && !err; i++) {
		const struct tl_event *e = timeline__event(w->tl, order[i]);

		err = e->type == CPROF_REC_SWITCH ? writer__switch(w, e) :
						   writer__wake(w, e);
	}
	free(order);
	/* the runs the profile's end cut */
	for (i = 0; i < w->nr_cpus && !err; i++)
		if (w->cpus[i].known && w->r->end_ns > w->cpus[i].start_ns)
			writer__run(w, w->cpus[i].pid, w->cpus[i].tid, i,
				    w->cpus[i].start_ns, w->r->end_ns, NULL, 0,
				    0);
	return err;
}

/* buf to out through gzip.  0 ok, else errno. */
static int put_gzip(FILE *out, const char *buf, size_t len)
{
	unsigned char chunk[65536];
	z_stream zs = { 0 };
	int ret, err = 0;

	if (deflateInit2(&zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8,
			 Z_DEFAULT_STRATEGY) != Z_OK)
		return ENOMEM;
	zs.next_in = (unsigned char *)buf;
	zs.avail_in = len;
	do {
		zs.next_out = chunk;
		zs.avail_out = sizeof(chunk);
		ret = deflate(&zs, Z_FINISH);
		if (ret == Z_STREAM_ERROR) {
			err = EIO;
			break;
		}
		if (fwrite(chunk, 1, sizeof(chunk) - zs.avail_out, out) !=
		    sizeof(chunk) - zs.avail_out) {
			err = errno ? errno : EIO;
			break;
		}
	} while (ret != Z_STREAM_END);
	deflateEnd(&zs);
	return err;
}

int chrome__write(const struct resolved *r, FILE *out, const char *name,
		  bool gzip, size_t budget, chrome_frame_name_fn *frame_name,
		  uint64_t *dropped)
{
	struct writer w = {
		.r = r, .tl = r->timeline, .frame_name = frame_name,
		.budget = budget < CHROME_BYTES_MIN ? CHROME_BYTES_MIN : budget,
		.first = true,
	};
	char *buf = NULL;
	size_t len = 0;
	int err = 0;

	if (!w.tl)
		return fail("%s: the trace format is a profile of kind trace's (--kind trace)",
			    esc(name));
	w.f = open_memstream(&buf, &len);
	w.e = open_memstream(&w.ebuf, &w.elen);
	w.pending = htab_create_alloc(64, flow_hash, flow_eq, free, calloc,
				      free);
	if (!w.f || !w.e || !w.pending) {
		err = ENOMEM;
		goto out;
	}
	fputs("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n", w.f);
	writer__names(&w);
	if (writer__events(&w)) {
		err = ENOMEM;
		goto out;
	}
	fputs("\n],\"otherData\":{\"cprof\":\"every context switch and wake-up, the stacks of each task leaving the CPU\"", w.f);
	fprintf(w.f, ",\"start_ns\":%llu,\"end_ns\":%llu,\"budget_bytes\":%zu,\"events_over_budget\":%llu,\"events_not_kept\":%llu,\"records_lost\":%llu,\"stacks_lost\":%llu,\"stacks_not_walked_budget\":%llu,\"stacks_not_walked_ring\":%llu}}\n",
		(unsigned long long)r->start_ns, (unsigned long long)r->end_ns,
		w.budget, (unsigned long long)w.dropped,
		(unsigned long long)timeline__dropped(w.tl),
		(unsigned long long)r->lost_other,
		(unsigned long long)r->lost,
		(unsigned long long)w.nostack_budget,
		(unsigned long long)w.nostack_ring);
	if (fclose(w.f)) {
		w.f = NULL;
		err = ENOMEM;
		goto out;
	}
	w.f = NULL;
	if (gzip)
		err = put_gzip(out, buf, len);
	else if (fwrite(buf, 1, len, out) != len)
		err = errno ? errno : EIO;
	if (!err && (fflush(out) || ferror(out)))
		err = errno ? errno : EIO;
out:
	if (w.f)
		fclose(w.f);
	if (w.e)
		fclose(w.e);
	free(w.ebuf);
	free(buf);
	free(w.cpus);
	if (w.pending)
		htab_delete(w.pending);
	if (dropped)
		*dropped = w.dropped;
	if (err)
		return fail("failed to write %s: %s", esc(name), strerror(err));
	return 0;
}
