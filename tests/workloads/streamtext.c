// SPDX-License-Identifier: GPL-2.0
/*
 * streamtext < stream: print a cprof stream one record per line, for the VM
 * tests to check with awk what the module wrote, independently of
 * cprof-dump.  Not a user tool: it trusts sizes only as far as not reading
 * past what it has, and exits 1 on anything malformed.
 *
 * streamtext --fields: print the layouts below, one a line.  The VM tests
 * read the fields by these names (tests/vm/lib/records.sh), never by
 * number: this table is where the names and their order are defined.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../include/uapi/cprof_format.h"

/*
 * Each line's layout: its tag (the first field), then the names of the
 * fields after it.  A last name ending in "..." is the rest of the line, any
 * number of fields (the ips, hex, kernel first; a path, which may hold
 * blanks).  Every line printed is checked against its layout.
 */
static const char *const layouts[] = {
	"H version freq period_ns nr_cpu_ids online_cpus mode pid flags duration_ns start_time_ns",
	"S time pid tid cpu flags nr_kernel nr_user comm ip...",
	"R time pid tid cpu flags state off_ns nr_kernel nr_user comm ip...",
	"O time pid tid cpu flags state every nr_kernel nr_user comm ip...",
	"I time out_ns tid cpu",
	"P time tid status nr text frame...",
	"W time tid wpid wtid delay_ns",
	"A time tid size id",
	"F time id",
	"C time pid code firstlineno qualname_len filename_len linetable_len",
	"M time pid start end pgoff build_id_size dev ino path...",
	"U time tid cpu flags frame holes size zeros",
	"L time cpu samples other",
	"T time cpu period_ns",
	"E time duration_ns reason samples lost",
	"? type size",
};

static unsigned char buf[1 << 16];

/* The line being printed: the ips of a 64 KiB record fit, 17 bytes each. */
static char line[1 << 18];
static size_t line_len;

static int read_full(void *p, size_t n)
{
	return fread(p, 1, n, stdin) == n ? 0 : -1;
}

static int count_words(const char *s)
{
	int n = 0, in = 0;

	for (; *s; s++) {
		if (*s == ' ' || *s == '\t' || *s == '\n') {
			in = 0;
		} else if (!in) {
			in = 1;
			n++;
		}
	}
	return n;
}

static void add(const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line + line_len, sizeof(line) - line_len, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(line) - line_len) {
		fprintf(stderr, "streamtext: a line longer than %zu bytes\n",
			sizeof(line));
		exit(1);
	}
	line_len += n;
}

/*
 * Print the line once it fits its tag's layout: as many fields (or, for a
 * layout ending in "...", at least all but the last).
 */
static void end_line(void)
{
	const char *layout = NULL;
	size_t i;
	int want, have, rest;

	for (i = 0; i < sizeof(layouts) / sizeof(layouts[0]); i++)
		if (layouts[i][0] == line[0])
			layout = layouts[i];
	have = count_words(line);
	want = layout ? count_words(layout) : -1;
	rest = layout && strstr(layout, "...") != NULL;
	if (!layout || (rest ? have < want - 1 : have != want)) {
		fprintf(stderr, "streamtext: a line of %d fields does not fit its layout \"%s\": %.80s\n",
			have, layout ? layout : "(none)", line);
		exit(1);
	}
	puts(line);
	line_len = 0;
	line[0] = 0;
}

/*
 * A sample's Python frames, after its frames (and cgroup id): "P" and the
 * trailer, each frame code/instr/firstlineno (code in hex, its
 * CPROF_PYFRAME_ENTRY bit kept).  0, or -1 if it does not fit its room.
 */
static int python_line(const struct cprof_sample *s, const void *at,
		       size_t room)
{
	const struct cprof_pytrail *t = at;
	unsigned int i;

	if (room < sizeof(*t) || t->type != CPROF_TRAIL_PYTHON ||
	    room != sizeof(*t) + t->nr * sizeof(t->frame[0]))
		return -1;
	add("P %" PRIu64 " %u %u %u %" PRIx64, (uint64_t)s->time_ns, s->tid,
	    t->status, t->nr, (uint64_t)t->text);
	for (i = 0; i < t->nr; i++)
		add(" %" PRIx64 "/%d/%d", (uint64_t)t->frame[i].code,
		    t->frame[i].instr, t->frame[i].firstlineno);
	end_line();
	return 0;
}

/*
 * A sample's trailer: the thread it woke (kind mutex), "W" and the
 * waiter's pid, tid and wait; the allocation it stands for (kind heap),
 * "A" and its size and id; or its Python frames.  0, or -1 if it does
 * not fit its room.
 */
static int trailer_line(const struct cprof_sample *s, const void *at,
			size_t room)
{
	const struct cprof_waketrail *w = at;
	const struct cprof_heaptrail *a = at;

	if (room == sizeof(*a) && a->type == CPROF_TRAIL_HEAP) {
		add("A %" PRIu64 " %u %" PRIu64 " %" PRIu64,
		    (uint64_t)s->time_ns, s->tid, (uint64_t)a->size,
		    (uint64_t)a->id);
		end_line();
		return 0;
	}
	if (room < sizeof(*w) || w->type != CPROF_TRAIL_WAKE)
		return python_line(s, at, room);
	if (room != sizeof(*w))
		return -1;
	add("W %" PRIu64 " %u %u %u %" PRIu64, (uint64_t)s->time_ns, s->tid,
	    w->pid, w->tid, (uint64_t)w->delay_ns);
	end_line();
	return 0;
}

int main(int argc, char **argv)
{
	struct cprof_header h;
	struct cprof_rec rec;
	int ended = 0;
	size_t i;

	if (argc == 2 && !strcmp(argv[1], "--fields")) {
		for (i = 0; i < sizeof(layouts) / sizeof(layouts[0]); i++)
			puts(layouts[i]);
		return 0;
	}
	if (argc != 1) {
		fprintf(stderr, "usage: streamtext < stream, or streamtext --fields\n");
		return 1;
	}
	if (read_full(&h, sizeof(h)) || memcmp(h.magic, CPROF_MAGIC, 8) ||
	    h.size < sizeof(h) || h.size - sizeof(h) > sizeof(buf) ||
	    read_full(buf, h.size - sizeof(h))) {
		fprintf(stderr, "streamtext: bad header\n");
		return 1;
	}
	add("H %u %u %" PRIu64 " %u %u %u %u %u %" PRIu64 " %" PRIu64,
	    h.version, h.freq, (uint64_t)h.period_ns, h.nr_cpu_ids,
	    h.online_cpus, h.mode, h.pid, h.flags, (uint64_t)h.duration_ns,
	    (uint64_t)h.start_time_ns);
	end_line();
	while (read_full(&rec, sizeof(rec)) == 0) {
		if (rec.size < sizeof(rec) || rec.size % 8 ||
		    rec.size > sizeof(buf)) {
			fprintf(stderr, "streamtext: bad record size %u\n", rec.size);
			return 1;
		}
		memcpy(buf, &rec, sizeof(rec));
		if (read_full(buf + sizeof(rec), rec.size - sizeof(rec))) {
			fprintf(stderr, "streamtext: truncated record\n");
			return 1;
		}
		switch (rec.type) {
		case CPROF_REC_SAMPLE: {
			struct cprof_sample *s = (void *)buf;
			unsigned int n = s->nr_kernel + s->nr_user;

			if (sizeof(*s) + n * 8 > rec.size)
				return 1;
			/* one field: no blank that awk splits on */
			s->comm[CPROF_COMM_LEN - 1] = 0;
			for (i = 0; s->comm[i]; i++)
				if (strchr(" \t\n", s->comm[i]))
					s->comm[i] = '_';
			add("S %" PRIu64 " %u %u %u %u %u %u %.16s",
			    (uint64_t)s->time_ns, s->pid, s->tid, s->cpu,
			    rec.flags, s->nr_kernel, s->nr_user,
			    s->comm[0] ? s->comm : "-");
			for (i = 0; i < n; i++)
				add(" %" PRIx64, (uint64_t)s->ips[i]);
			end_line();
			n += !!(rec.flags & CPROF_SAMPLE_CGROUP);
			if (sizeof(*s) + n * 8 < rec.size &&
			    trailer_line(s, buf + sizeof(*s) + n * 8,
					rec.size - sizeof(*s) - n * 8))
				return 1;
			break;
		}
		case CPROF_REC_THREAD: {
			struct cprof_thread *t = (void *)buf;
			unsigned int n = t->nr_kernel + t->nr_user;

			if (sizeof(*t) + n * 8 > rec.size)
				return 1;
			t->comm[CPROF_COMM_LEN - 1] = 0;
			for (i = 0; t->comm[i]; i++)
				if (strchr(" \t\n", t->comm[i]))
					t->comm[i] = '_';
			add("R %" PRIu64 " %u %u %u %u %u %" PRIu64 " %u %u %.16s",
			    (uint64_t)t->time_ns, t->pid, t->tid, t->cpu,
			    rec.flags, t->state, (uint64_t)t->off_ns,
			    t->nr_kernel, t->nr_user,
			    t->comm[0] ? t->comm : "-");
			for (i = 0; i < n; i++)
				add(" %" PRIx64, (uint64_t)t->ips[i]);
			end_line();
			break;
		}
		case CPROF_REC_OFFCPU: {
			struct cprof_offcpu *o = (void *)buf;
			unsigned int n = o->nr_kernel + o->nr_user;

			if (sizeof(*o) + n * 8 > rec.size)
				return 1;
			o->comm[CPROF_COMM_LEN - 1] = 0;
			for (i = 0; o->comm[i]; i++)
				if (strchr(" \t\n", o->comm[i]))
					o->comm[i] = '_';
			add("O %" PRIu64 " %u %u %u %u %u %u %u %u %.16s",
			    (uint64_t)o->time_ns, o->pid, o->tid, o->cpu,
			    rec.flags, o->state, o->every, o->nr_kernel,
			    o->nr_user, o->comm[0] ? o->comm : "-");
			for (i = 0; i < n; i++)
				add(" %" PRIx64, (uint64_t)o->ips[i]);
			end_line();
			break;
		}
		case CPROF_REC_ONCPU: {
			struct cprof_oncpu *on = (void *)buf;

			if (sizeof(*on) > rec.size)
				return 1;
			add("I %" PRIu64 " %" PRIu64 " %u %u",
			    (uint64_t)on->time_ns, (uint64_t)on->out_ns, on->tid,
			    on->cpu);
			end_line();
			break;
		}
		case CPROF_REC_MMAP: {
			struct cprof_mmap *m = (void *)buf;
			struct cprof_file_id id = { 0 };

			/* the file's identity, if any, is its last 16 bytes */
			if ((rec.flags & CPROF_MMAP_FILE_ID) &&
			    rec.size >= sizeof(*m) + 1 + sizeof(id))
				memcpy(&id, buf + rec.size - sizeof(id),
				       sizeof(id));
			buf[rec.size - 1] = 0;
			add("M %" PRIu64 " %u %" PRIx64 " %" PRIx64 " %" PRIx64
			    " %u %u %" PRIu64 " %s", (uint64_t)m->time_ns,
			    m->pid, (uint64_t)m->start, (uint64_t)m->end,
			    (uint64_t)m->pgoff, m->build_id_size, id.dev,
			    (uint64_t)id.ino, m->path);
			end_line();
			break;
		}
		case CPROF_REC_USTACK: {
			struct cprof_ustack *u = (void *)buf;
			unsigned int page, off = u->regs[7] % CPROF_USTACK_PAGE;
			int zeros = 1;

			if (rec.size < sizeof(*u) ||
			    u->size > rec.size - sizeof(*u))
				return 1;
			/* zeros: every byte of the holes' pages is 0 */
			for (i = 0; i < u->size; i++) {
				page = (off + i) / CPROF_USTACK_PAGE;
				if (page < 16 && (u->holes >> page & 1) &&
				    u->data[i])
					zeros = 0;
			}
			add("U %" PRIu64 " %u %u %u %u %u %u %d",
			    (uint64_t)u->time_ns, u->tid, u->cpu, rec.flags,
			    u->frame, u->holes, u->size, zeros);
			end_line();
			break;
		}
		case CPROF_REC_PYCODE: {
			struct cprof_pycode *c = (void *)buf;

			if (rec.size < sizeof(*c) ||
			    sizeof(*c) + c->qualname_len + c->filename_len +
			    c->linetable_len > rec.size)
				return 1;
			add("C %" PRIu64 " %u %" PRIx64 " %d %u %u %u",
			    (uint64_t)c->time_ns, c->pid, (uint64_t)c->code,
			    c->firstlineno, c->qualname_len, c->filename_len,
			    c->linetable_len);
			end_line();
			break;
		}
		case CPROF_REC_LOST: {
			struct cprof_lost *l = (void *)buf;

			add("L %" PRIu64 " %u %" PRIu64 " %" PRIu64,
			    (uint64_t)l->time_ns, l->cpu,
			    (uint64_t)l->samples, (uint64_t)l->other);
			end_line();
			break;
		}
		case CPROF_REC_THROTTLE: {
			struct cprof_throttle *t = (void *)buf;

			add("T %" PRIu64 " %u %" PRIu64, (uint64_t)t->time_ns,
			    t->cpu, (uint64_t)t->period_ns);
			end_line();
			break;
		}
		case CPROF_REC_END: {
			struct cprof_end *e = (void *)buf;

			add("E %" PRIu64 " %" PRIu64 " %u %" PRIu64 " %" PRIu64,
			    (uint64_t)e->time_ns, (uint64_t)e->duration_ns,
			    e->reason, (uint64_t)e->samples,
			    (uint64_t)e->lost);
			end_line();
			ended = 1;
			break;
		}
		case CPROF_REC_HEAPFREE: {
			const struct cprof_heapfree *f = (void *)buf;

			if (rec.size != sizeof(*f))
				return 1;
			add("F %" PRIu64 " %" PRIu64, (uint64_t)f->time_ns,
			    (uint64_t)f->id);
			end_line();
			break;
		}
		default:
			add("? %u %u", rec.type, rec.size);
			end_line();
		}
	}
	if (!ended) {
		fprintf(stderr, "streamtext: no end record\n");
		return 1;
	}
	return 0;
}
