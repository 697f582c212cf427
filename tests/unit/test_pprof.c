// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The pprof writer: a hand-built stream through the decoder, aggregation and
 * the (unsymbolized) model, written with pprof__write, read back with zlib +
 * protobuf-c and compared with the model and with what the stream said.
 */
#include <fcntl.h>
#include <math.h>
#include <unistd.h>

#include "output/output.h"
#include "output/pprof.h"
#include "stream/profile.h"
#include "symbolize/resolve.h"
#include "stream/stream.h"
#include "streambuild.h"
#include "test.h"
#include "testutil.h"

#define P	SB_PERIOD_NS
static const uint8_t bid[20] = { 0xde, 0xad, 0xbe, 0xef };
static const uint64_t kips[3] = { 0xffffffff81000100, 0xffffffff81000200,
				  0xffffffff81000300 };
static const uint64_t uips[2] = { 0x401000, 0x402000 };
static const uint64_t xips[1] = { 0x1234 };

static void build(struct sb *b)
{
	sb_init(b);
	sb_header(b, NULL);
	sb_mmap(b, 1, 42, 0x400000, 0x500000, 0x1000, "/usr/bin/x", bid, 20);
	/* A: user mode, twice */
	sb_sample(b, 10, 42, 43, 1, "x", CPROF_SAMPLE_USER_MODE, 0, NULL, 2, uips);
	sb_sample(b, 10, 42, 43, 1, "x", CPROF_SAMPLE_USER_MODE, 0, NULL, 2, uips);
	/* B: kernel mode, before and after cpu 2 is throttled to 2P */
	sb_sample(b, 11, 42, 43, 2, "x", 0, 3, kips, 2, uips);
	sb_throttle(b, 12, 2, 2 * P);
	sb_sample(b, 13, 42, 43, 2, "x", 0, 3, kips, 2, uips);
	sb_lost(b, 13, 0, 5, 1);
	/* C: a kernel thread */
	sb_sample(b, 14, 0, 0, 3, "swapper/3", CPROF_SAMPLE_KTHREAD, 1, kips, 0,
		  NULL);
	/* D: a pid without mappings */
	sb_sample(b, 15, 77, 77, 0, "y", CPROF_SAMPLE_USER_MODE, 0, NULL, 1, xips);
	sb_end(b, 999000000, CPROF_END_SIGNAL, 7);
}

/* Decode, aggregate and resolve a stream file the way cprof-dump does. */
static struct resolved *load(const char *path, bool symbolize)
{
	struct resolve_opts o = { .symbolize = symbolize };
	const struct cprof_header *h;
	const struct cprof_rec *rec;
	struct resolved *r = NULL;
	struct profile *p = NULL;
	struct stream *s;
	int fd = open(path, O_RDONLY);

	s = stream__new(fd, path);
	h = stream__read_header(s);
	if (!h)
		goto out;
	p = profile__new(h);
	while (stream__next(s, &rec) > 0)
		if (profile__add(p, rec))
			goto out;
	if (!profile__end(p))
		goto out;
	r = resolved__new(p, &o);
out:
	profile__free(p);
	stream__free(s);
	close(fd);
	return r;
}

/* The unpacked profile says exactly what the model holds. */
static void test_round_trip(const struct resolved *r,
			    const Perftools__Profiles__Profile *p)
{
	bool ok;
	size_t i, j;

	/* the writer appends its own strings (sample types, label keys) */
	ok = p->n_string_table > strtab__nr(r->strings);
	for (i = 0; ok && i < strtab__nr(r->strings); i++)
		ok = !strcmp(p->string_table[i], strtab__get(r->strings, i));
	test_cond("string table round-trips", ok);
	test_cond("string 0 is empty", p->n_string_table && !p->string_table[0][0]);

	ok = p->n_mapping == r->nr_mappings;
	for (i = 0; ok && i < r->nr_mappings; i++) {
		const Perftools__Profiles__Mapping *m = p->mapping[i];
		const struct res_mapping *rm = &r->mappings[i];

		ok = m->id == i + 1 && m->memory_start == rm->start &&
		     m->memory_limit == rm->limit && m->file_offset == rm->offset &&
		     m->filename == rm->file && m->build_id == rm->build_id &&
		     m->has_functions == rm->has_functions &&
		     m->has_filenames == rm->has_filenames &&
		     m->has_line_numbers == rm->has_line_numbers &&
		     m->has_inline_frames == rm->has_inline_frames;
	}
	test_condf(ok, "%zu mappings round-trip", r->nr_mappings);

	ok = p->n_location == r->nr_locations;
	for (i = 0; ok && i < r->nr_locations; i++) {
		const Perftools__Profiles__Location *l = p->location[i];
		const struct res_location *rl = &r->locations[i];

		ok = l->id == i + 1 && l->mapping_id == rl->mapping &&
		     l->address == rl->address && l->n_line == rl->nr_lines;
		for (j = 0; ok && j < l->n_line; j++)
			ok = l->line[j]->function_id ==
				     r->lines[rl->line + j].function &&
			     l->line[j]->line == r->lines[rl->line + j].line;
	}
	test_condf(ok, "%zu locations round-trip", r->nr_locations);

	ok = p->n_function == r->nr_functions;
	for (i = 0; ok && i < r->nr_functions; i++) {
		const Perftools__Profiles__Function *f = p->function[i];

		ok = f->id == i + 1 && f->name == r->functions[i].name &&
		     f->system_name == r->functions[i].system_name &&
		     f->filename == r->functions[i].filename &&
		     f->start_line == r->functions[i].start_line;
	}
	test_condf(ok, "%zu functions round-trip", r->nr_functions);

	ok = p->n_sample == r->nr_samples;
	for (i = 0; ok && i < r->nr_samples; i++) {
		const Perftools__Profiles__Sample *s = p->sample[i];
		const struct res_sample *rs = &r->samples[i];

		ok = s->n_value == 2 && s->value[0] == (int64_t)rs->count &&
		     s->value[1] == (int64_t)rs->nanos &&
		     s->n_location_id == rs->nr_locs &&
		     pb_num_label(p, s, "pid", -1) == rs->pid &&
		     pb_num_label(p, s, "tid", -1) == rs->tid &&
		     pb_num_label(p, s, "cpu", -1) == rs->cpu;
		for (j = 0; ok && j < s->n_location_id; j++)
			ok = s->location_id[j] == r->loc_ids[rs->loc + j];
	}
	test_condf(ok, "%zu samples round-trip", r->nr_samples);

	ok = p->n_comment == r->nr_comments;
	for (i = 0; ok && i < r->nr_comments; i++)
		ok = p->comment[i] == r->comments[i];
	test_cond("comments round-trip", ok);
}

/* The sample with these labels, or NULL. */
static const Perftools__Profiles__Sample *
find_sample(const Perftools__Profiles__Profile *p, int64_t pid, int64_t cpu)
{
	size_t i;

	for (i = 0; i < p->n_sample; i++)
		if (pb_num_label(p, p->sample[i], "pid", -1) == pid &&
		    pb_num_label(p, p->sample[i], "cpu", -1) == cpu)
			return p->sample[i];
	return NULL;
}

static uint64_t addr_of(const Perftools__Profiles__Profile *p,
			const Perftools__Profiles__Sample *s, size_t i)
{
	const Perftools__Profiles__Location *l;

	if (!s || i >= s->n_location_id)
		return 0;
	l = pb_loc(p, s->location_id[i]);
	return l ? l->address : 0;
}

static const char *map_of(const Perftools__Profiles__Profile *p,
			  const Perftools__Profiles__Sample *s, size_t i)
{
	const Perftools__Profiles__Location *l;
	const Perftools__Profiles__Mapping *m;

	if (!s || i >= s->n_location_id)
		return NULL;
	l = pb_loc(p, s->location_id[i]);
	m = l ? pb_map(p, l->mapping_id) : NULL;
	return m ? pb_str(p, m->filename) : NULL;
}

/* What the stream said is what the profile says. */
static void test_semantics(const Perftools__Profiles__Profile *p)
{
	const Perftools__Profiles__Sample *a, *b, *c, *d, *lost0 = NULL,
					  *lostx = NULL;
	const Perftools__Profiles__Mapping *m;
	int64_t count = 0, nanos = 0;
	size_t i;
	char hex[41];

	test_cond("sample types samples/count, cpu/nanoseconds",
		  p->n_sample_type == 2 &&
		  !strcmp(pb_str(p, p->sample_type[0]->type), "samples") &&
		  !strcmp(pb_str(p, p->sample_type[0]->unit), "count") &&
		  !strcmp(pb_str(p, p->sample_type[1]->type), "cpu") &&
		  !strcmp(pb_str(p, p->sample_type[1]->unit), "nanoseconds"));
	test_cond("period type cpu/nanoseconds, period = header period",
		  p->period_type &&
		  !strcmp(pb_str(p, p->period_type->type), "cpu") &&
		  !strcmp(pb_str(p, p->period_type->unit), "nanoseconds") &&
		  p->period == (int64_t)P);
	test_cond("time_nanos = header start_realtime_ns",
		  p->time_nanos == (int64_t)sb_default_header().start_realtime_ns);
	test_cond("duration_nanos = END duration_ns",
		  p->duration_nanos == 999000000);

	a = find_sample(p, 42, 1);
	test_cond("A: two identical samples merged: count 2, 2 periods",
		  a && a->value[0] == 2 && a->value[1] == 2 * (int64_t)P);
	test_cond("A: labels comm x, tid 43",
		  a && pb_str_label(p, a, "comm") &&
		  !strcmp(pb_str_label(p, a, "comm"), "x") &&
		  pb_num_label(p, a, "tid", -1) == 43);
	test_cond("A: user-mode leaf kept, return address - 1",
		  a && a->n_location_id == 2 && addr_of(p, a, 0) == 0x401000 &&
		  addr_of(p, a, 1) == 0x401fff);
	test_cond("A: frames in /usr/bin/x", a && map_of(p, a, 0) &&
		  !strcmp(map_of(p, a, 0), "/usr/bin/x"));

	b = find_sample(p, 42, 2);
	test_cond("B: throttle applies from its time on: P + 2P",
		  b && b->value[0] == 2 && b->value[1] == 3 * (int64_t)P);
	test_cond("B: kernel frames first, leaf exact, callers - 1",
		  b && b->n_location_id == 5 &&
		  addr_of(p, b, 0) == kips[0] && addr_of(p, b, 1) == kips[1] - 1 &&
		  addr_of(p, b, 2) == kips[2] - 1);
	test_cond("B: kernel frames in [kernel.kallsyms]",
		  b && map_of(p, b, 0) && !strcmp(map_of(p, b, 0), "[kernel.kallsyms]"));
	test_cond("B: user part after a kernel-mode tick: every frame - 1",
		  b && addr_of(p, b, 3) == 0x400fff && addr_of(p, b, 4) == 0x401fff);
	test_cond("A and B share the location of 0x401fff",
		  a && b && a->location_id[1] == b->location_id[4]);

	c = find_sample(p, 0, 3);
	test_cond("C: kernel thread, one kernel frame",
		  c && c->n_location_id == 1 && addr_of(p, c, 0) == kips[0] &&
		  !strcmp(pb_str_label(p, c, "comm"), "swapper/3"));
	d = find_sample(p, 77, 0);
	test_cond("D: unmapped user address kept, without mapping",
		  d && d->n_location_id == 1 && addr_of(p, d, 0) == 0x1234 &&
		  pb_loc(p, d->location_id[0])->mapping_id == 0);
	test_cond("numeric labels carry a unit, so readers keep cpu 0",
		  d && d->n_label == 4 && d->label[3]->num == 0 &&
		  !strcmp(pb_str(p, d->label[3]->key), "cpu") &&
		  d->label[3]->num_unit != 0);

	for (i = 0; i < p->n_sample; i++) {
		const Perftools__Profiles__Sample *s = p->sample[i];
		const char *f = pb_loc_func(p, s->location_id[0], 0);

		count += s->value[0];
		nanos += s->value[1];
		if (!f || strcmp(f, "[lost samples]"))
			continue;
		if (pb_num_label(p, s, "cpu", -1) == 0)
			lost0 = s;
		else if (pb_num_label(p, s, "cpu", -1) == -1)
			lostx = s;
	}
	test_cond("lost: 5 on cpu 0 from the LOST record",
		  lost0 && lost0->value[0] == 5 && lost0->value[1] == 5 * (int64_t)P);
	test_cond("lost: END's 2 more, without a cpu",
		  lostx && lostx->value[0] == 2);
	test_cond("totals: 6 samples + 7 lost", count == 13);
	test_cond("totals: nanos", nanos == (2 + 3 + 1 + 1 + 7) * (int64_t)P);
	for (i = 0; i < p->n_comment; i++)
		if (strstr(pb_str(p, p->comment[i]), "7 samples lost"))
			break;
	test_cond("a comment says 7 samples were lost", i < p->n_comment);
	for (i = 0; i < p->n_comment; i++)
		if (strstr(pb_str(p, p->comment[i]), "stopped early by a signal"))
			break;
	test_cond("a comment says the profile was stopped by a signal",
		  i < p->n_comment);

	m = NULL;
	for (i = 0; i < p->n_mapping; i++)
		if (!strcmp(pb_str(p, p->mapping[i]->filename), "/usr/bin/x"))
			m = p->mapping[i];
	snprintf(hex, sizeof(hex), "deadbeef%032d", 0);
	test_cond("user mapping: range, offset, hex build id",
		  m && m->memory_start == 0x400000 && m->memory_limit == 0x500000 &&
		  m->file_offset == 0x1000 && !strcmp(pb_str(p, m->build_id), hex));
	test_cond("unsymbolized: no mapping claims functions",
		  m && !m->has_functions && !m->has_line_numbers);
	test_cond("unsymbolized: only the [lost samples] function",
		  p->n_function == 1);
}

static void test_write_error(const struct resolved *r)
{
	FILE *f = fopen("/dev/full", "w");
	int save, err;

	if (!f) {
		test_cond("open /dev/full", 0);
		return;
	}
	fflush(stderr);
	save = dup(2);
	dup2(open("/dev/null", O_WRONLY), 2);
	err = pprof__write(r, f, "/dev/full");
	dup2(save, 2);
	close(save);
	fclose(f);
	test_cond("a failed write is reported", err == -1);
}

/*
 * The stream in b (freed here) written to in, decoded and resolved, and
 * its pprof written to out and read back into *p (NULL if that failed).
 * Return: the resolved profile, NULL if it failed (a failed check).
 */
static struct resolved *to_pprof(struct sb *b, const char *in,
				 const char *out, const char *what,
				 Perftools__Profiles__Profile **p)
{
	struct resolved *r;
	FILE *f;

	*p = NULL;
	test_condf(sb_write(b, in, b->len) == 0, "write the %s", what);
	sb_free(b);
	r = load(in, false);
	test_condf(r != NULL, "decode and resolve the %s", what);
	if (!r)
		return NULL;
	f = fopen(out, "w");
	test_cond("write its pprof", f && pprof__write(r, f, out) == 0);
	if (f)
		fclose(f);
	*p = pprof_read(out);
	return r;
}

/*
 * A thread snapshot: Go's goroutine profile's types, every thread listed
 * (a comm with a newline cannot make a line of its own), grouped by stack.
 */
static void test_threads(void)
{
	const char *in = tmp_path("threads.bin"), *out = tmp_path("threads.pb.gz");
	struct cprof_header h = sb_default_header();
	Perftools__Profiles__Profile *p = NULL;
	struct output_opts oo = { .format = FORMAT_THREADS };
	char *text = NULL, *st;
	struct resolved *r;
	size_t len = 0;
	struct sb b;
	FILE *f;

	h.kind = CPROF_KIND_THREADS;
	sb_init(&b);
	sb_header(&b, &h);
	sb_mmap(&b, 1, 42, 0x400000, 0x500000, 0x1000, "/usr/bin/x", bid, 20);
	sb_thread(&b, 10, 42, 44, "evil\nthread 1 (", CPROF_OFF_SLEEPING,
		  2500000, 3, kips, 2, uips);
	sb_thread(&b, 11, 42, 43, "x", CPROF_OFF_RUNNING, 0, 0, NULL, 2, uips);
	sb_end(&b, 300000000, CPROF_END_COMPLETE, 0);
	r = to_pprof(&b, in, out, "snapshot", &p);
	if (!r)
		return;
	if (p) {
		const char *const *str = (const char *const *)p->string_table;

		test_cond("threads/count first, then offcpu/nanoseconds, threads shown",
			  p->n_sample_type == 2 &&
			  !strcmp(str[p->sample_type[0]->type], "threads") &&
			  !strcmp(str[p->sample_type[0]->unit], "count") &&
			  !strcmp(str[p->sample_type[1]->type], "offcpu") &&
			  !strcmp(str[p->sample_type[1]->unit], "nanoseconds") &&
			  !strcmp(str[p->default_sample_type], "threads") &&
			  p->period == 1 && p->n_sample == 2);
		perftools__profiles__profile__free_unpacked(p, NULL);
	} else {
		test_cond("gunzip + unpack the snapshot's pprof", 0);
	}
	f = open_memstream(&text, &len);
	test_cond("list every thread", f &&
		  output__write(r, &oo, f, "memory") == 0);
	if (f)
		fclose(f);
	st = text ? strstr(text, "\nthread 43 (x, pid 42) [running]:\n") : NULL;
	test_condf(st && strstr(text, "\nthread 44 (evil\\x0athread 1 (, pid 42) [sleeping, 2.50ms]:\n") > st,
		   "by tid, state and time off the CPU, a newline in a comm escaped:\n%s",
		   text ? text : "");
	test_cond("no line made by a comm", text && !strstr(text, "\nthread 1 ("));
	free(text);
	text = NULL;
	oo.format = FORMAT_TEXT;
	f = open_memstream(&text, &len);
	test_cond("group them by stack", f &&
		  output__write(r, &oo, f, "memory") == 0);
	if (f)
		fclose(f);
	test_condf(text && !strncmp(text, "threads profile: total 2\n", 25) &&
		   strstr(text, "\n1 @ "),
		   "Go's goroutine debug=1 form:\n%s", text ? text : "");
	free(text);
	oo.format = FORMAT_THREADS;
	resolved__free(r);
}

/*
 * Tasks created: Go's threadcreate profile's one type, a count each, and
 * the creations not recorded as lost samples, so that the total is the
 * kernel's.
 */
static void test_threadcreate(void)
{
	const char *in = tmp_path("tc.bin"), *out = tmp_path("tc.pb.gz");
	struct cprof_header h = sb_default_header();
	Perftools__Profiles__Profile *p = NULL;
	struct output_opts oo = { .format = FORMAT_TEXT };
	int64_t total = 0;
	char *text = NULL;
	struct resolved *r;
	size_t len = 0, i;
	struct sb b;
	FILE *f;

	h.kind = CPROF_KIND_THREADCREATE;
	sb_init(&b);
	sb_header(&b, &h);
	sb_mmap(&b, 1, 42, 0x400000, 0x500000, 0x1000, "/usr/bin/x", bid, 20);
	sb_sample(&b, 10, 42, 43, 1, "x", 0, 3, kips, 2, uips);
	sb_sample(&b, 11, 42, 43, 1, "x", 0, 3, kips, 2, uips);
	sb_sample(&b, 12, 42, 44, 0, "x", 0, 3, kips, 1, uips);
	sb_lost(&b, 13, 0, 2, 0);
	sb_end(&b, 300000000, CPROF_END_COMPLETE, 2);
	r = to_pprof(&b, in, out, "threadcreate stream", &p);
	if (!r)
		return;
	if (p) {
		const char *const *str = (const char *const *)p->string_table;

		for (i = 0; i < p->n_sample; i++)
			total += p->sample[i]->n_value == 1 ?
				 p->sample[i]->value[0] : -1000;
		test_condf(p->n_sample_type == 1 &&
			   !strcmp(str[p->sample_type[0]->type], "threadcreate") &&
			   !strcmp(str[p->sample_type[0]->unit], "count") &&
			   !strcmp(str[p->period_type->type], "threadcreate") &&
			   !strcmp(str[p->period_type->unit], "count") &&
			   p->period == 1 && total == 5,
			   "threadcreate/count alone, one value a sample, 3 created and 2 lost: %lld",
			   (long long)total);
		perftools__profiles__profile__free_unpacked(p, NULL);
	} else {
		test_cond("gunzip + unpack the threadcreate pprof", 0);
	}
	f = open_memstream(&text, &len);
	test_cond("write its text", f && output__write(r, &oo, f, "memory") == 0);
	if (f)
		fclose(f);
	test_condf(text && !strncmp(text, "threadcreate profile: total 5\n", 30) &&
		   strstr(text, "\n2 @ ") && strstr(text, "\n1 @ "),
		   "Go's threadcreate debug=1 form:\n%s", text ? text : "");
	free(text);
	resolved__free(r);
}

/* The label of sample s keyed @key, or NULL. */
static const Perftools__Profiles__Label *
find_label(const Perftools__Profiles__Profile *p,
	   const Perftools__Profiles__Sample *s, const char *key)
{
	const char *const *str = (const char *const *)p->string_table;
	size_t i;

	for (i = 0; i < s->n_label; i++)
		if (!strcmp(str[s->label[i]->key], key))
			return s->label[i];
	return NULL;
}

/*
 * Futex waits ended: Go's mutex profile's types, contentions and delay
 * summed by waker stack and waiter, the waiter's pid, tid and name as
 * labels, lost wake-ups counted without a delay; debug=1 is Go's text.
 */
static void test_mutex(void)
{
	const char *in = tmp_path("mx.bin"), *out = tmp_path("mx.pb.gz");
	struct cprof_header h = sb_default_header();
	Perftools__Profiles__Profile *p = NULL;
	struct output_opts oo = { .format = FORMAT_TEXT };
	int64_t count = 0, delay = 0, waiter43 = 0;
	char *text = NULL;
	struct resolved *r;
	size_t len = 0, i;
	struct sb b;
	FILE *f;

	h.kind = CPROF_KIND_MUTEX;
	sb_init(&b);
	sb_header(&b, &h);
	sb_mmap(&b, 1, 42, 0x400000, 0x500000, 0x1000, "/usr/bin/x", bid, 20);
	sb_sample_wake(&b, 10, 42, 44, "holder", 3, kips, 2, uips,
		       42, 43, "waiter", 3000);
	sb_sample_wake(&b, 11, 42, 44, "holder", 3, kips, 2, uips,
		       42, 43, "waiter", 4000);
	sb_sample_wake(&b, 12, 42, 44, "holder", 3, kips, 2, uips,
		       42, 45, "other", 500);
	sb_lost(&b, 13, 0, 2, 0);
	sb_end(&b, 300000000, CPROF_END_COMPLETE, 2);
	r = to_pprof(&b, in, out, "mutex stream", &p);
	if (!r)
		return;
	if (p) {
		const char *const *str = (const char *const *)p->string_table;

		for (i = 0; i < p->n_sample; i++) {
			const Perftools__Profiles__Sample *s = p->sample[i];
			const Perftools__Profiles__Label *tid, *comm, *pid;

			count += s->value[0];
			delay += s->value[1];
			tid = find_label(p, s, "waiter_tid");
			comm = find_label(p, s, "waiter_comm");
			pid = find_label(p, s, "waiter_pid");
			if (tid && tid->num == 43 && comm && pid &&
			    pid->num == 42 && !strcmp(str[comm->str], "waiter"))
				waiter43 += s->value[1];
		}
		test_condf(p->n_sample_type == 2 &&
			   !strcmp(str[p->sample_type[0]->type], "contentions") &&
			   !strcmp(str[p->sample_type[0]->unit], "count") &&
			   !strcmp(str[p->sample_type[1]->type], "delay") &&
			   !strcmp(str[p->sample_type[1]->unit], "nanoseconds") &&
			   !strcmp(str[p->period_type->type], "contentions") &&
			   p->period == 1 && count == 5 && delay == 7500,
			   "contentions/count and delay/nanoseconds, 3 waits and 2 lost, 7500 ns: %lld, %lld",
			   (long long)count, (long long)delay);
		test_condf(waiter43 == 7000,
			   "waiter 42/43 \"waiter\" labelled, its 7000 ns: %lld",
			   (long long)waiter43);
		perftools__profiles__profile__free_unpacked(p, NULL);
	} else {
		test_cond("gunzip + unpack the mutex pprof", 0);
	}
	f = open_memstream(&text, &len);
	test_cond("write its text", f && output__write(r, &oo, f, "memory") == 0);
	if (f)
		fclose(f);
	test_condf(text && !strncmp(text, "--- mutex:\ncycles/second=1000000000\nsampling period=1\n", 54) &&
		   strstr(text, "\n7500 3 @ ") && strstr(text, "\n0 2 @ "),
		   "Go's mutex debug=1 form:\n%s", text ? text : "");
	free(text);
	resolved__free(r);
}

/*
 * Allocations sampled by bytes: Go's heap profile's four types, each
 * scaled as Go scales a sample (1/(1-exp(-size/rate))), in use until a
 * free names its id, whether the free comes before or after its sample
 * in the stream; period space/bytes of the rate; allocs names
 * alloc_space its default type.
 */
static void test_heap(void)
{
	const char *in = tmp_path("heap.bin"), *out = tmp_path("heap.pb.gz");
	struct cprof_header h = sb_default_header();
	Perftools__Profiles__Profile *p = NULL;
	int64_t v[4] = { 0 };
	double scale = 1 / (1 - exp(-4096.0 / 8192));
	struct resolved *r;
	size_t i, k;
	struct sb b;
	FILE *f;

	h.kind = CPROF_KIND_HEAP;
	h.heap_rate = 8192;
	h.period_ns = 1;
	sb_init(&b);
	sb_header(&b, &h);
	sb_mmap(&b, 1, 42, 0x400000, 0x500000, 0x1000, "/usr/bin/x", bid, 20);
	/* 4 allocations of 4096 bytes: 1 freed after, 1 freed before */
	sb_sample_heap(&b, 10, 42, 42, "alloc", 2, uips, 4096, 1);
	sb_sample_heap(&b, 11, 42, 42, "alloc", 2, uips, 4096, 2);
	sb_heapfree(&b, 12, 3);
	sb_sample_heap(&b, 13, 42, 42, "alloc", 2, uips, 4096, 3);
	sb_sample_heap(&b, 14, 42, 42, "alloc", 2, uips, 4096, 4);
	sb_heapfree(&b, 15, 1);
	sb_end(&b, 300000000, CPROF_END_COMPLETE, 0);
	r = to_pprof(&b, in, out, "heap stream", &p);
	if (!r)
		return;
	if (p) {
		const char *const *str = (const char *const *)p->string_table;
		static const char *const types[4][2] = {
			{ "alloc_objects", "count" }, { "alloc_space", "bytes" },
			{ "inuse_objects", "count" }, { "inuse_space", "bytes" },
		};
		bool named = p->n_sample_type == 4;

		for (k = 0; named && k < 4; k++)
			named = !strcmp(str[p->sample_type[k]->type], types[k][0]) &&
				!strcmp(str[p->sample_type[k]->unit], types[k][1]);
		test_condf(named && !strcmp(str[p->period_type->type], "space") &&
			   !strcmp(str[p->period_type->unit], "bytes") &&
			   p->period == 8192 && !p->default_sample_type,
			   "Go's heap types, period space/bytes 8192 (%zu types, period %lld)",
			   p->n_sample_type, (long long)p->period);
		for (i = 0; i < p->n_sample; i++)
			for (k = 0; k < 4 && k < p->sample[i]->n_value; k++)
				v[k] += p->sample[i]->value[k];
		test_condf(v[0] == (int64_t)(4 * scale) &&
			   v[1] == (int64_t)(4 * 4096 * scale) &&
			   v[2] == (int64_t)(2 * scale) &&
			   v[3] == (int64_t)(2 * 4096 * scale),
			   "4 allocated, 2 in use (one freed before its sample came), scaled by %.3f: %lld %lld %lld %lld",
			   scale, (long long)v[0], (long long)v[1],
			   (long long)v[2], (long long)v[3]);
		perftools__profiles__profile__free_unpacked(p, NULL);
	} else {
		test_cond("gunzip + unpack the heap pprof", 0);
	}
	f = fopen(out, "w");
	test_cond("write it as allocs", f && pprof__write_heap(r, f, out, true) == 0);
	if (f)
		fclose(f);
	p = pprof_read(out);
	test_cond("allocs: default sample type alloc_space",
		  p && p->default_sample_type > 0 &&
		  !strcmp(p->string_table[p->default_sample_type], "alloc_space"));
	if (p)
		perftools__profiles__profile__free_unpacked(p, NULL);
	resolved__free(r);
}

int main(void)
{
	const char *in = tmp_path("s.bin"), *out = tmp_path("out.pb.gz");
	Perftools__Profiles__Profile *p = NULL;
	struct resolved *r;
	struct sb b;
	FILE *f;

	build(&b);
	test_cond("write the stream", sb_write(&b, in, b.len) == 0);
	sb_free(&b);
	r = load(in, false);
	test_cond("decode and resolve the stream", r != NULL);
	if (r) {
		f = fopen(out, "w");
		test_cond("write pprof", f && pprof__write(r, f, out) == 0);
		if (f)
			fclose(f);
		p = pprof_read(out);
		test_cond("gunzip + unpack the pprof file", p != NULL);
	}
	if (p) {
		test_round_trip(r, p);
		test_semantics(p);
		perftools__profiles__profile__free_unpacked(p, NULL);
	}
	if (r)
		test_write_error(r);
	resolved__free(r);
	test_threads();
	test_threadcreate();
	test_mutex();
	test_heap();
	return test_report();
}
