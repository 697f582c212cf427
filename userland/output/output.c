// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * output - folded stacks and a top table.  See output.h.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "output/chrome.h"
#include "output/output.h"
#include "output/pprof.h"
#include "lib/util.h"

#define NAME_MAX_LEN	512

const char *output__frame_name(const struct resolved *r,
			       const struct res_location *l, uint32_t i,
			       char *buf, size_t size)
{
	const struct res_mapping *m;
	const char *file, *base;

	if (i < l->nr_lines) {
		const struct res_line *ln = &r->lines[l->line + i];

		return strtab__get(r->strings,
				   r->functions[ln->function - 1].name);
	}
	m = l->mapping ? &r->mappings[l->mapping - 1] : NULL;
	file = m ? strtab__get(r->strings, m->file) : "";
	if (!m || m->kernel || !file[0]) {
		snprintf(buf, size, "0x%llx", (unsigned long long)l->address);
		return buf;
	}
	base = strrchr(file, '/');
	snprintf(buf, size, "%s+0x%llx", base ? base + 1 : file,
		 (unsigned long long)(l->address - m->start + m->offset));
	return buf;
}

static bool location_is_kernel(const struct resolved *r,
			       const struct res_location *l)
{
	return l->mapping && r->mappings[l->mapping - 1].kernel;
}

/*
 * Append a frame name to f, keeping the folded syntax intact: ';' as ':',
 * the rest as esc_char() shows it (a name is any process's choice).
 */
static void folded_put(FILE *f, const char *name, bool kernel)
{
	char one[ESC_CHAR_MAX];

	while (*name) {
		if (*name == ';') {
			fputc(':', f);
			name++;
		} else {
			fputs(esc_char(&name, one), f);
		}
	}
	if (kernel)
		fputs("_[k]", f);
}

struct folded_line {
	char *text;
	uint64_t count;
};

static int folded_cmp(const void *a, const void *b)
{
	return strcmp(((const struct folded_line *)a)->text,
		      ((const struct folded_line *)b)->text);
}

/* A profile whose values are counts alone: a snapshot, the tasks created. */
static bool counts_only(const struct resolved *r)
{
	return r->kind == CPROF_KIND_THREADS ||
	       r->kind == CPROF_KIND_THREADCREATE;
}

/* The folded stack of s in *text (malloc'd).  0 ok, -1 ENOMEM. */
static int fold_sample(const struct resolved *r, const struct res_sample *s,
		       bool cgroup, char **text)
{
	const char *comm = strtab__get(r->strings, s->comm);
	char buf[NAME_MAX_LEN];
	size_t len = 0;
	bool first = true;
	uint32_t k, j;
	FILE *f;

	*text = NULL;
	f = open_memstream(text, &len);
	if (!f)
		return -1;
	if (cgroup) {
		fputs(CGROUP_FRAME_PREFIX, f);
		folded_put(f, s->cgroup ? strtab__get(r->strings, s->cgroup) :
			   "?", false);
		first = false;
	}
	if (comm[0]) {
		if (!first)
			fputc(';', f);
		folded_put(f, comm, false);
		first = false;
	}
	/* root first: outermost location, and in it the outermost function */
	for (k = s->nr_locs; k-- > 0;) {
		const struct res_location *l =
			&r->locations[r->loc_ids[s->loc + k] - 1];

		for (j = l->nr_lines ? l->nr_lines : 1; j-- > 0;) {
			if (!first)
				fputc(';', f);
			first = false;
			folded_put(f, output__frame_name(r, l, j, buf,
							 sizeof(buf)),
				   location_is_kernel(r, l));
		}
	}
	if (fclose(f) || !*text) {
		free(*text);
		*text = NULL;
		return -1;
	}
	return 0;
}

int output__folded(const struct resolved *r, FILE *out, const char *name,
		   bool cgroup)
{
	struct folded_line *lines;
	size_t i, n = 0;
	int err = -1;

	lines = calloc(r->nr_samples, sizeof(*lines));
	if (r->nr_samples && !lines)
		return fail("failed to fold stacks: %s", strerror(ENOMEM));
	for (i = 0; i < r->nr_samples; i++) {
		if (!r->samples[i].count)
			continue;
		if (fold_sample(r, &r->samples[i], cgroup, &lines[n].text)) {
			fail("failed to fold stacks: %s", strerror(ENOMEM));
			goto cleanup;
		}
		/* time off the CPU (and on, in a wall profile) in us */
		lines[n++].count = r->kind == CPROF_KIND_CPU ||
				   counts_only(r) ? r->samples[i].count :
				   r->samples[i].nanos / 1000;
	}
	qsort(lines, n, sizeof(*lines), folded_cmp);
	for (i = 0; i < n; i++) {
		uint64_t count = lines[i].count;

		/* one line per distinct stack: merge pids, tids and cpus */
		while (i + 1 < n && !strcmp(lines[i].text, lines[i + 1].text))
			count += lines[++i].count;
		fprintf(out, "%s %llu\n", lines[i].text,
			(unsigned long long)count);
	}
	if (fflush(out) || ferror(out)) {
		fail("failed to write %s: %s", esc(name), strerror(errno));
		goto cleanup;
	}
	err = 0;
cleanup:
	for (i = 0; i < n; i++)
		free(lines[i].text);
	free(lines);
	return err;
}

/* pprof's measurement.ScaledLabel for nanoseconds, "auto" unit. */
static const char *time_label(char *buf, size_t size, uint64_t ns)
{
	static const struct {
		const char *unit;
		double factor;
	} units[] = {
		{ "ns", 1 }, { "us", 1e3 }, { "ms", 1e6 }, { "s", 1e9 },
		{ "hrs", 3600e9 },
	};
	size_t i, u = 0;
	char *dot;

	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if ((double)ns / units[i].factor >= 1.0)
			u = i;
	if (!ns)
		return "0";
	snprintf(buf, size, "%.2f", (double)ns / units[u].factor);
	dot = strstr(buf, ".00");
	if (dot && !dot[3])
		*dot = '\0';
	snprintf(buf + strlen(buf), size - strlen(buf), "%s", units[u].unit);
	return buf;
}

/* A top table's value: threads and tasks created count, the others time. */
static uint64_t top_value(const struct resolved *r, const struct res_sample *s)
{
	return counts_only(r) ? s->count : s->nanos;
}

static const char *value_label(const struct resolved *r, char *buf,
			       size_t size, uint64_t v)
{
	if (!counts_only(r))
		return time_label(buf, size, v);
	snprintf(buf, size, "%llu", (unsigned long long)v);
	return buf;
}

/* pprof's measurement.Percentage: 6 columns. */
static const char *percent(char *buf, size_t size, uint64_t v, uint64_t total)
{
	double ratio = total ? (double)v / (double)total * 100 : 0;

	if (ratio >= 99.95 && ratio <= 100.05)
		snprintf(buf, size, "  100%%");
	else if (ratio >= 1.0)
		snprintf(buf, size, "%5.2f%%", ratio);
	else
		snprintf(buf, size, "%5.2g%%", ratio);
	return buf;
}

struct node {
	uint64_t flat, cum;
	size_t last;		/* sample index + 1 that last added to cum */
};

struct top {
	struct strtab *names;
	struct node *nodes;	/* by name index */
	size_t alloc;
};

static const struct top *sort_top;

static int node_cmp(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	const struct node *nx = &sort_top->nodes[x], *ny = &sort_top->nodes[y];

	if (nx->flat != ny->flat)
		return (nx->flat < ny->flat) - (nx->flat > ny->flat);
	if (nx->cum != ny->cum)
		return (nx->cum < ny->cum) - (nx->cum > ny->cum);
	return strcmp(strtab__get(sort_top->names, x),
		      strtab__get(sort_top->names, y));
}

/* Add sample i's nanos to frame nm: to its flat if it is the leaf. */
static int top_frame(struct top *t, size_t i, uint64_t nanos, const char *nm,
		     bool leaf)
{
	int64_t id = strtab__intern(t->names, nm);
	struct node *n;

	if (id < 0)
		return -1;
	if ((size_t)id >= t->alloc) {
		size_t want = t->alloc ? t->alloc * 2 : 1024;

		while (want <= (size_t)id)
			want *= 2;
		n = reallocarray(t->nodes, want, sizeof(*n));
		if (!n)
			return -1;
		memset(n + t->alloc, 0, (want - t->alloc) * sizeof(*n));
		t->nodes = n;
		t->alloc = want;
	}
	n = &t->nodes[id];
	if (leaf)
		n->flat += nanos;
	if (n->last != i + 1) {
		n->cum += nanos;
		n->last = i + 1;
	}
	return 0;
}

/*
 * Add sample i's value to the flat of its leaf and the cum of every frame,
 * and with cgroup, of a root frame naming its cgroup.
 */
static int top_add(struct top *t, const struct resolved *r, size_t i,
		   bool cgroup)
{
	const struct res_sample *s = &r->samples[i];
	char buf[NAME_MAX_LEN];
	bool leaf = true;
	uint32_t k, j;

	for (k = 0; k < s->nr_locs; k++) {
		const struct res_location *l =
			&r->locations[r->loc_ids[s->loc + k] - 1];

		for (j = 0; j < (l->nr_lines ? l->nr_lines : 1); j++) {
			if (top_frame(t, i, top_value(r, s),
				      output__frame_name(r, l, j, buf,
							 sizeof(buf)), leaf))
				return -1;
			leaf = false;
		}
	}
	if (cgroup) {
		snprintf(buf, sizeof(buf), CGROUP_FRAME_PREFIX "%s",
			 s->cgroup ? strtab__get(r->strings, s->cgroup) : "?");
		if (top_frame(t, i, top_value(r, s), buf, leaf))
			return -1;
	}
	return 0;
}

static void top_header(const struct resolved *r, FILE *out)
{
	char a[64], b[64], c[64];
	size_t i;

	for (i = 0; i < r->nr_comments; i++)
		fprintf(out, "%s\n", esc(strtab__get(r->strings, r->comments[i])));
	/* pprof's name of the value shown: its second sample type */
	fprintf(out, "Type: %s\n", r->kind == CPROF_KIND_OFFCPU ? "delay" :
				    r->kind == CPROF_KIND_WALL ? "wall" :
				    r->kind == CPROF_KIND_THREADS ? "threads" :
				    r->kind == CPROF_KIND_THREADCREATE ?
				    "threadcreate" :
				    r->kind == CPROF_KIND_MUTEX ? "delay" :
				    r->kind == CPROF_KIND_HEAP ? "alloc_space" :
				    "cpu");
	if (r->time_nanos) {
		time_t sec = r->time_nanos / 1000000000;
		struct tm tm;

		if (localtime_r(&sec, &tm) &&
		    strftime(a, sizeof(a), "%b %-d, %Y at %-I:%M%P (%Z)", &tm))
			fprintf(out, "Time: %s\n", a);
	}
	if (r->kind == CPROF_KIND_THREADS)
		fprintf(out, "Threads: %llu, looked at in %s\n",
			(unsigned long long)r->total_count,
			time_label(a, sizeof(a), r->duration_nanos));
	else if (r->kind == CPROF_KIND_THREADCREATE)
		fprintf(out, "Duration: %s, Total tasks created = %llu\n",
			time_label(a, sizeof(a), r->duration_nanos),
			(unsigned long long)r->total_count);
	else if (r->duration_nanos)
		fprintf(out, "Duration: %s, Total samples = %s (%s)\n",
			time_label(a, sizeof(a), r->duration_nanos),
			time_label(b, sizeof(b), r->total_nanos),
			percent(c, sizeof(c), r->total_nanos,
				r->duration_nanos));
}

/* Nodes of every frame name, and their names sorted for the table. */
static int top_build(struct top *t, const struct resolved *r, bool cgroup,
		     int64_t **order, size_t *nr)
{
	size_t i;

	t->names = strtab__new();
	if (!t->names)
		return -1;
	for (i = 0; i < r->nr_samples; i++)
		if (top_add(t, r, i, cgroup))
			return -1;
	/* string 0 is "", never a frame name */
	*nr = strtab__nr(t->names) - 1;
	*order = calloc(*nr + 1, sizeof(**order));
	if (!*order)
		return -1;
	for (i = 0; i < *nr; i++)
		(*order)[i] = i + 1;
	sort_top = t;
	qsort(*order, *nr, sizeof(**order), node_cmp);
	sort_top = NULL;
	return 0;
}

int output__top(const struct resolved *r, FILE *out, const char *name,
		int nodes, bool cgroup)
{
	uint64_t sum = 0, total = counts_only(r) ? r->total_count :
						   r->total_nanos;
	char a[64], b[64], c[64], d[64], e[64];
	struct top t = { 0 };
	int64_t *order = NULL;
	size_t i, nr = 0, shown;
	int err = -1;

	if (top_build(&t, r, cgroup, &order, &nr)) {
		fail("failed to build the top table: %s", strerror(ENOMEM));
		goto cleanup;
	}
	shown = nodes > 0 && (size_t)nodes < nr ? (size_t)nodes : nr;
	for (i = 0; i < shown; i++)
		sum += t.nodes[order[i]].flat;

	top_header(r, out);
	percent(b, sizeof(b), sum, total);
	fprintf(out, "Showing nodes accounting for %s, %s of %s total\n",
		value_label(r, a, sizeof(a), sum), b + strspn(b, " "),
		value_label(r, c, sizeof(c), total));
	if (shown < nr)
		fprintf(out, "Showing top %zu nodes out of %zu\n", shown, nr);
	fprintf(out, "%10s %5s%% %5s%% %10s %5s%%\n", "flat", "flat", "sum",
		"cum", "cum");
	sum = 0;
	for (i = 0; i < shown; i++) {
		const struct node *n = &t.nodes[order[i]];

		sum += n->flat;
		fprintf(out, "%10s %s %s %10s %s  ",
			value_label(r, a, sizeof(a), n->flat),
			percent(b, sizeof(b), n->flat, total),
			percent(c, sizeof(c), sum, total),
			value_label(r, d, sizeof(d), n->cum),
			percent(e, sizeof(e), n->cum, total));
		esc_put(out, strtab__get(t.names, order[i]));
		fputc('\n', out);
	}
	if (fflush(out) || ferror(out)) {
		fail("failed to write %s: %s", esc(name), strerror(errno));
		goto cleanup;
	}
	err = 0;
cleanup:
	free(order);
	free(t.nodes);
	strtab__free(t.names);
	return err;
}

struct text_stack {
	int64_t text;		/* the stack's lines, a string of names */
	uint64_t count, nanos;
};

static int text_cmp(const void *a, const void *b)
{
	const struct text_stack *x = a, *y = b;

	if (x->count != y->count)
		return (x->count < y->count) - (x->count > y->count);
	return (x->text > y->text) - (x->text < y->text);
}

/* The "@ ..." line and the "#" lines of sample s, in a string of names. */
static int text_sample(const struct resolved *r, const struct res_sample *s,
		       struct strtab *names, int64_t *id)
{
	char buf[NAME_MAX_LEN], *text = NULL;
	size_t len = 0;
	uint32_t k, j;
	FILE *f = open_memstream(&text, &len);

	if (!f)
		return -1;
	fputs("@", f);
	for (k = 0; k < s->nr_locs; k++)
		fprintf(f, " 0x%llx", (unsigned long long)
			r->locations[r->loc_ids[s->loc + k] - 1].address);
	fputc('\n', f);
	for (k = 0; k < s->nr_locs; k++) {
		const struct res_location *l =
			&r->locations[r->loc_ids[s->loc + k] - 1];

		for (j = 0; j < (l->nr_lines ? l->nr_lines : 1); j++) {
			const struct res_line *ln =
				j < l->nr_lines ? &r->lines[l->line + j] : NULL;
			const char *file = ln ? strtab__get(r->strings,
				r->functions[ln->function - 1].filename) : "";

			fprintf(f, "#\t0x%llx\t", (unsigned long long)l->address);
			esc_put(f, output__frame_name(r, l, j, buf,
						      sizeof(buf)));
			if (file[0]) {
				fputc('\t', f);
				esc_put(f, file);
			}
			if (file[0] && ln->line)
				fprintf(f, ":%lld", (long long)ln->line);
			fputc('\n', f);
		}
	}
	if (fclose(f) || !text) {
		free(text);
		return -1;
	}
	*id = strtab__intern(names, text);
	free(text);
	return *id < 0 ? -1 : 0;
}

int output__text(const struct resolved *r, FILE *out, const char *name)
{
	struct strtab *names = strtab__new();
	struct text_stack *st = NULL;
	size_t i, nr = 0;
	int err = -1;
	char a[64], b[64];

	if (!names)
		goto nomem;
	/* one entry per distinct stack: strings are numbered from 1 */
	st = calloc(r->nr_samples + 1, sizeof(*st));
	if (!st)
		goto nomem;
	for (i = 0; i < r->nr_samples; i++) {
		const struct res_sample *s = &r->samples[i];
		int64_t id;

		if (!s->count)
			continue;
		if (text_sample(r, s, names, &id))
			goto nomem;
		if (!st[id].count)
			nr++;
		st[id].text = id;
		st[id].count += s->count;
		st[id].nanos += s->nanos;
	}
	qsort(st, r->nr_samples + 1, sizeof(*st), text_cmp);
	if (counts_only(r))
		fprintf(out, "%s profile: total %llu\n",
			r->kind == CPROF_KIND_THREADS ? "threads" :
			"threadcreate", (unsigned long long)r->total_count);
	else if (r->kind == CPROF_KIND_MUTEX)
		/* Go's: its cycles are nanoseconds here, every wait counted */
		fputs("--- mutex:\ncycles/second=1000000000\nsampling period=1\n",
		      out);
	else if (r->kind == CPROF_KIND_CPU)
		fprintf(out, "cpu profile: %llu samples, %s of CPU in %s @ %llu Hz per CPU\n",
			(unsigned long long)r->total_count,
			time_label(a, sizeof(a), r->total_nanos),
			time_label(b, sizeof(b), r->duration_nanos),
			(unsigned long long)(r->period_ns ?
					     1000000000 / r->period_ns : 0));
	else
		fprintf(out, "%s profile: %llu %s, %s %s in %s\n",
			r->kind == CPROF_KIND_OFFCPU ? "off-CPU" : "wall",
			(unsigned long long)r->total_count,
			r->kind == CPROF_KIND_OFFCPU ? "waits" : "samples and waits",
			time_label(a, sizeof(a), r->total_nanos),
			r->kind == CPROF_KIND_OFFCPU ? "off the CPU" : "on and off the CPU",
			time_label(b, sizeof(b), r->duration_nanos));
	for (i = 0; i < r->nr_comments; i++)
		fprintf(out, "# %s\n", esc(strtab__get(r->strings, r->comments[i])));
	for (i = 0; i < nr; i++) {
		/* Go's mutex profile: delay (cycles), then count */
		if (r->kind == CPROF_KIND_MUTEX) {
			fprintf(out, "\n%llu %llu ",
				(unsigned long long)st[i].nanos,
				(unsigned long long)st[i].count);
			fputs(strtab__get(names, st[i].text), out);
			continue;
		}
		fprintf(out, "\n%llu ", (unsigned long long)st[i].count);
		/*
		 * a snapshot, the tasks created: Go's goroutine and
		 * threadcreate profiles' form, no time
		 */
		if (!counts_only(r))
			fprintf(out, "%llu ", (unsigned long long)st[i].nanos);
		fputs(strtab__get(names, st[i].text), out);
	}
	if (fflush(out) || ferror(out)) {
		fail("failed to write %s: %s", esc(name), strerror(errno));
		goto cleanup;
	}
	err = 0;
	goto cleanup;
nomem:
	fail("failed to write %s: %s", esc(name), strerror(ENOMEM));
cleanup:
	free(st);
	strtab__free(names);
	return err;
}

static int thread_cmp(const void *a, const void *b)
{
	const struct res_sample *x = *(const struct res_sample *const *)a;
	const struct res_sample *y = *(const struct res_sample *const *)b;

	if (x->pid != y->pid)
		return (x->pid > y->pid) - (x->pid < y->pid);
	return (x->tid > y->tid) - (x->tid < y->tid);
}

/* One thread: "thread TID (COMM, pid PID) [STATE, WAIT]:" and its frames. */
static void thread_put(const struct resolved *r, const struct res_sample *s,
		       FILE *out)
{
	char buf[NAME_MAX_LEN], t[64];
	uint32_t k, j;

	fprintf(out, "\nthread %lld (", (long long)s->tid);
	esc_put(out, s->comm ? strtab__get(r->strings, s->comm) : "?");
	fprintf(out, ", pid %lld) [%s", (long long)s->pid,
		s->state ? strtab__get(r->strings, s->state) : "?");
	if (s->nanos)
		fprintf(out, ", %s", time_label(t, sizeof(t), s->nanos));
	fputs("]:\n", out);
	for (k = 0; k < s->nr_locs; k++) {
		const struct res_location *l =
			&r->locations[r->loc_ids[s->loc + k] - 1];

		for (j = 0; j < (l->nr_lines ? l->nr_lines : 1); j++) {
			const struct res_line *ln =
				j < l->nr_lines ? &r->lines[l->line + j] : NULL;
			const char *file = ln ? strtab__get(r->strings,
				r->functions[ln->function - 1].filename) : "";

			esc_put(out, output__frame_name(r, l, j, buf,
							sizeof(buf)));
			fputc('\n', out);
			if (file[0]) {
				fputc('\t', out);
				esc_put(out, file);
				if (ln->line)
					fprintf(out, ":%lld", (long long)ln->line);
				fputc('\n', out);
			}
		}
	}
}

int output__threads(const struct resolved *r, FILE *out, const char *name)
{
	const struct res_sample **order;
	char a[64];
	size_t i, n = 0;

	if (r->kind != CPROF_KIND_THREADS)
		return fail("%s: the threads format is a thread snapshot's (--kind threads), not a profile's", esc(name));
	order = calloc(r->nr_samples + 1, sizeof(*order));
	if (!order)
		return fail("failed to write %s: %s", esc(name), strerror(ENOMEM));
	for (i = 0; i < r->nr_samples; i++)
		if (r->samples[i].count)
			order[n++] = &r->samples[i];
	qsort(order, n, sizeof(*order), thread_cmp);
	fprintf(out, "threads: %llu, looked at in %s\n",
		(unsigned long long)r->total_count,
		time_label(a, sizeof(a), r->duration_nanos));
	for (i = 0; i < r->nr_comments; i++)
		fprintf(out, "# %s\n", esc(strtab__get(r->strings, r->comments[i])));
	for (i = 0; i < n; i++)
		thread_put(r, order[i], out);
	free(order);
	if (fflush(out) || ferror(out))
		return fail("failed to write %s: %s", esc(name), strerror(errno));
	return 0;
}

int output__trace(const struct resolved *r, const struct output_opts *o,
		  FILE *out, const char *name)
{
	uint64_t dropped = 0;

	if (chrome__write(r, out, name, o->gzip,
			  o->trace_bytes ? o->trace_bytes : CHROME_BYTES_DEFAULT,
			  output__frame_name, &dropped))
		return -1;
	if (dropped)
		warning("%s: %llu events left out past the trace's %zu bytes (said in its otherData)",
			esc(name), (unsigned long long)dropped,
			o->trace_bytes ? o->trace_bytes :
			(size_t)CHROME_BYTES_DEFAULT);
	return 0;
}

int output__write(const struct resolved *r, const struct output_opts *o,
		  FILE *out, const char *name)
{
	/* its samples are the stacks of its switches, no profile's */
	if (r->kind == CPROF_KIND_TRACE && o->format != FORMAT_TRACE)
		return fail("%s: a profile of kind trace is a timeline: write it with -f trace",
			    esc(name));
	switch (o->format) {
	case FORMAT_PPROF:
		return pprof__write_heap(r, out, name, o->allocs);
	case FORMAT_FOLDED:
		return output__folded(r, out, name, o->cgroup);
	case FORMAT_TOP:
		return output__top(r, out, name, o->nodes, o->cgroup);
	case FORMAT_TEXT:
		return output__text(r, out, name);
	case FORMAT_THREADS:
		return output__threads(r, out, name);
	case FORMAT_TRACE:
		return output__trace(r, o, out, name);
	}
	return fail("unknown output format %d", o->format);
}
