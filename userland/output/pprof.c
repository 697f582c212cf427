// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * pprof - gzipped Profile writer on protobuf-c and zlib.  See pprof.h.
 *
 * The Profile message is built over flat arrays (one allocation per kind of
 * sub-message) that point into the resolved model, then packed straight
 * into a deflate stream: the encoded profile is never held in memory whole.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "output/pprof.h"
#include "profile.pb-c.h"
#include "lib/util.h"

#define GZIP_WINDOW	(15 + 16)	/* 32 KiB window, gzip wrapper */
#define CHUNK		(32 * 1024)

/*
 * A ProtobufCBuffer that deflates what is appended and writes it out.
 * protobuf-c appends field by field, a few bytes at a time: they are
 * gathered in in[] and deflated a chunk at a time.
 */
struct gz_buffer {
	ProtobufCBuffer base;
	z_stream zs;
	FILE *out;
	int zerr;		/* zlib error, Z_OK if none */
	int werr;		/* errno of a failed write, 0 if none */
	size_t in_len;
	unsigned char in[CHUNK];
	unsigned char chunk[CHUNK];
};

/* Deflate in[] (and finish the stream if flush is Z_FINISH). */
static void gz_buffer__deflate(struct gz_buffer *gz, int flush)
{
	int ret;

	gz->zs.next_in = gz->in;
	gz->zs.avail_in = gz->in_len;
	do {
		gz->zs.next_out = gz->chunk;
		gz->zs.avail_out = sizeof(gz->chunk);
		ret = deflate(&gz->zs, flush);
		if (ret == Z_STREAM_ERROR) {
			gz->zerr = ret;
			return;
		}
		if (!gz->werr &&
		    fwrite(gz->chunk, 1, sizeof(gz->chunk) - gz->zs.avail_out,
			   gz->out) != sizeof(gz->chunk) - gz->zs.avail_out)
			gz->werr = errno ? errno : EIO;
	} while (gz->zs.avail_out == 0 ||
		 (flush == Z_FINISH && ret != Z_STREAM_END));
	gz->in_len = 0;
}

static void gz_buffer__append(ProtobufCBuffer *b, size_t len,
			      const uint8_t *data)
{
	struct gz_buffer *gz = (struct gz_buffer *)b;

	while (len && gz->zerr == Z_OK && !gz->werr) {
		size_t n = CHUNK - gz->in_len;

		if (n > len)
			n = len;
		memcpy(gz->in + gz->in_len, data, n);
		gz->in_len += n;
		data += n;
		len -= n;
		if (gz->in_len == CHUNK)
			gz_buffer__deflate(gz, Z_NO_FLUSH);
	}
}

/* Everything the Profile message points to, freed in one place. */
struct pb {
	Perftools__Profiles__Profile prof;
	Perftools__Profiles__ValueType types[5], *type_ptrs[4];
	Perftools__Profiles__Sample *samples, **sample_ptrs;
	Perftools__Profiles__Label *labels, **label_ptrs;
	int64_t *values;
	uint64_t *loc_ids;
	Perftools__Profiles__Mapping *maps, **map_ptrs;
	Perftools__Profiles__Location *locs, **loc_ptrs;
	Perftools__Profiles__Line *lines, **line_ptrs;
	Perftools__Profiles__Function *funcs, **func_ptrs;
	char **strings;
};

/* Strings the writer adds after the model's own. */
enum {
	S_SAMPLES, S_COUNT, S_CPU, S_NANOSECONDS, S_PID, S_TID, S_COMM, S_ID,
	S_CGROUP, S_STATE, S_CONTENTIONS, S_DELAY, S_WALL, S_THREADS, S_OFF,
	S_THREADCREATE, S_WAITER_PID, S_WAITER_TID, S_WAITER_COMM,
	S_ALLOC_OBJECTS, S_ALLOC_SPACE, S_INUSE_OBJECTS, S_INUSE_SPACE,
	S_SPACE, S_BYTES, NR_EXTRA
};

static const char *const extra_strings[NR_EXTRA] = {
	[S_SAMPLES] = "samples", [S_COUNT] = "count", [S_CPU] = "cpu",
	[S_NANOSECONDS] = "nanoseconds", [S_PID] = "pid", [S_TID] = "tid",
	[S_COMM] = "comm", [S_ID] = "id", [S_CGROUP] = "cgroup",
	[S_STATE] = "state", [S_CONTENTIONS] = "contentions",
	[S_DELAY] = "delay", [S_WALL] = "wall", [S_THREADS] = "threads",
	[S_OFF] = "offcpu", [S_THREADCREATE] = "threadcreate",
	[S_WAITER_PID] = "waiter_pid", [S_WAITER_TID] = "waiter_tid",
	[S_WAITER_COMM] = "waiter_comm",
	[S_ALLOC_OBJECTS] = "alloc_objects", [S_ALLOC_SPACE] = "alloc_space",
	[S_INUSE_OBJECTS] = "inuse_objects", [S_INUSE_SPACE] = "inuse_space",
	[S_SPACE] = "space", [S_BYTES] = "bytes",
};

#define NR_VALUES	4	/* most values a sample has: a heap's */

/*
 * Go's estimate of the allocations a sample of @count of @bytes stands
 * for when one in every @rate bytes on average is sampled (runtime/pprof's
 * scaleHeapSample): each of the average size had 1 - exp(-size/rate)
 * chances of being sampled.
 */
static void heap_scale(uint64_t count, uint64_t bytes, uint32_t rate,
		       int64_t *count_out, int64_t *bytes_out)
{
	double scale;

	if (!count || !bytes || rate <= 1) {
		*count_out = count;
		*bytes_out = bytes;
		return;
	}
	scale = 1 / (1 - exp(-((double)bytes / count) / rate));
	*count_out = (int64_t)(count * scale);
	*bytes_out = (int64_t)(bytes * scale);
}

#define NR_LABELS	9	/* most labels a sample has */

static void pb__free(struct pb *pb)
{
	free(pb->samples);
	free(pb->sample_ptrs);
	free(pb->labels);
	free(pb->label_ptrs);
	free(pb->values);
	free(pb->loc_ids);
	free(pb->maps);
	free(pb->map_ptrs);
	free(pb->locs);
	free(pb->loc_ptrs);
	free(pb->lines);
	free(pb->line_ptrs);
	free(pb->funcs);
	free(pb->func_ptrs);
	free(pb->strings);
}

/*
 * Numeric labels carry a unit ("id"): readers drop a numeric label whose
 * value and unit are both zero, and cpu 0 or pid 0 are real values.
 */
static void pb__label(Perftools__Profiles__Label *l, int64_t key, int64_t num,
		      int64_t unit, int64_t str)
{
	perftools__profiles__label__init(l);
	l->key = key;
	l->num = num;
	l->num_unit = unit;
	l->str = str;
}

/*
 * Build pb->prof over r; allocs: a heap profile shows alloc_space first,
 * as Go's /debug/pprof/allocs.  0 ok, -1 ENOMEM.
 */
static int pb__build(struct pb *pb, const struct resolved *r, bool allocs)
{
	Perftools__Profiles__Profile *p = &pb->prof;
	size_t nstr = strtab__nr(r->strings), i, j, nl = 0;
	int64_t x = nstr;	/* index of the first extra string */
	/* tasks created: a count, no time; allocations: Go's four */
	size_t nvalues = r->kind == CPROF_KIND_THREADCREATE ? 1 :
			 r->kind == CPROF_KIND_HEAP ? 4 : 2;
	/* waits, Go's block and mutex profiles' */
	bool contention = r->kind == CPROF_KIND_OFFCPU ||
			  r->kind == CPROF_KIND_MUTEX;

	pb->samples = calloc(r->nr_samples, sizeof(*pb->samples));
	pb->sample_ptrs = calloc(r->nr_samples, sizeof(*pb->sample_ptrs));
	pb->labels = calloc(r->nr_samples * NR_LABELS, sizeof(*pb->labels));
	pb->label_ptrs = calloc(r->nr_samples * NR_LABELS,
				sizeof(*pb->label_ptrs));
	pb->values = calloc(r->nr_samples * NR_VALUES, sizeof(*pb->values));
	pb->loc_ids = calloc(r->nr_loc_ids, sizeof(*pb->loc_ids));
	pb->maps = calloc(r->nr_mappings, sizeof(*pb->maps));
	pb->map_ptrs = calloc(r->nr_mappings, sizeof(*pb->map_ptrs));
	pb->locs = calloc(r->nr_locations, sizeof(*pb->locs));
	pb->loc_ptrs = calloc(r->nr_locations, sizeof(*pb->loc_ptrs));
	pb->lines = calloc(r->nr_lines, sizeof(*pb->lines));
	pb->line_ptrs = calloc(r->nr_lines, sizeof(*pb->line_ptrs));
	pb->funcs = calloc(r->nr_functions, sizeof(*pb->funcs));
	pb->func_ptrs = calloc(r->nr_functions, sizeof(*pb->func_ptrs));
	pb->strings = calloc(nstr + NR_EXTRA, sizeof(*pb->strings));
	if ((r->nr_samples && (!pb->samples || !pb->sample_ptrs ||
			       !pb->labels || !pb->label_ptrs || !pb->values)) ||
	    (r->nr_loc_ids && !pb->loc_ids) ||
	    (r->nr_mappings && (!pb->maps || !pb->map_ptrs)) ||
	    (r->nr_locations && (!pb->locs || !pb->loc_ptrs)) ||
	    (r->nr_lines && (!pb->lines || !pb->line_ptrs)) ||
	    (r->nr_functions && (!pb->funcs || !pb->func_ptrs)) ||
	    !pb->strings)
		return -1;

	perftools__profiles__profile__init(p);
	memcpy(pb->strings, strtab__array(r->strings),
	       nstr * sizeof(*pb->strings));
	for (i = 0; i < NR_EXTRA; i++)
		pb->strings[nstr + i] = (char *)extra_strings[i];
	p->string_table = pb->strings;
	p->n_string_table = nstr + NR_EXTRA;

	/*
	 * Go's CPU profile's types; its block profile's off the CPU (and a
	 * period of one event); fgprof's wall-clock ones for both; a thread
	 * snapshot's as Go's goroutine profile's (one each, shown first),
	 * and how long they have been off the CPU; the tasks created as Go's
	 * threadcreate profile's, a count alone; the futex waits ended as
	 * Go's mutex profile's (its period: one in every 1 recorded).
	 */
	for (i = 0; i < 3; i++)
		perftools__profiles__value_type__init(&pb->types[i]);
	pb->types[0].type = x + (contention ? S_CONTENTIONS :
				 r->kind == CPROF_KIND_THREADS ? S_THREADS :
				 r->kind == CPROF_KIND_THREADCREATE ?
				 S_THREADCREATE : S_SAMPLES);
	pb->types[0].unit = x + S_COUNT;
	pb->types[1].type = x + (contention ? S_DELAY :
				 r->kind == CPROF_KIND_WALL ? S_WALL :
				 r->kind == CPROF_KIND_THREADS ? S_OFF : S_CPU);
	pb->types[1].unit = x + S_NANOSECONDS;
	pb->types[2] = pb->types[contention ||
				 r->kind == CPROF_KIND_THREADS ||
				 r->kind == CPROF_KIND_THREADCREATE ? 0 : 1];
	pb->type_ptrs[0] = &pb->types[0];
	pb->type_ptrs[1] = &pb->types[1];
	p->sample_type = pb->type_ptrs;
	p->n_sample_type = nvalues;
	p->period_type = &pb->types[2];
	p->period = contention ||
		    r->kind == CPROF_KIND_THREADS ||
		    r->kind == CPROF_KIND_THREADCREATE ? 1 : r->period_ns;
	/*
	 * Allocations: Go's heap profile's types, scaled as Go scales them,
	 * the period its sampling rate in bytes.
	 */
	if (r->kind == CPROF_KIND_HEAP) {
		for (i = 0; i < 5; i++)
			perftools__profiles__value_type__init(&pb->types[i]);
		for (i = 0; i < 4; i++) {
			pb->types[i].type = x + S_ALLOC_OBJECTS + i;
			pb->types[i].unit = x + (i % 2 ? S_BYTES : S_COUNT);
			pb->type_ptrs[i] = &pb->types[i];
		}
		pb->types[4].type = x + S_SPACE;
		pb->types[4].unit = x + S_BYTES;
		p->period_type = &pb->types[4];
		p->period = r->heap_rate;
		if (allocs)
			p->default_sample_type = x + S_ALLOC_SPACE;
	}
	if (r->kind == CPROF_KIND_THREADS)
		p->default_sample_type = x + S_THREADS;
	p->time_nanos = r->time_nanos;
	p->duration_nanos = r->duration_nanos;
	p->comment = r->comments;
	p->n_comment = r->nr_comments;

	for (i = 0; i < r->nr_mappings; i++) {
		const struct res_mapping *m = &r->mappings[i];
		Perftools__Profiles__Mapping *pm = &pb->maps[i];

		perftools__profiles__mapping__init(pm);
		pm->id = i + 1;
		pm->memory_start = m->start;
		pm->memory_limit = m->limit;
		pm->file_offset = m->offset;
		pm->filename = m->file;
		pm->build_id = m->build_id;
		pm->has_functions = m->has_functions;
		pm->has_filenames = m->has_filenames;
		pm->has_line_numbers = m->has_line_numbers;
		pm->has_inline_frames = m->has_inline_frames;
		pb->map_ptrs[i] = pm;
	}
	p->mapping = pb->map_ptrs;
	p->n_mapping = r->nr_mappings;

	for (i = 0; i < r->nr_functions; i++) {
		const struct res_function *f = &r->functions[i];
		Perftools__Profiles__Function *pf = &pb->funcs[i];

		perftools__profiles__function__init(pf);
		pf->id = i + 1;
		pf->name = f->name;
		pf->system_name = f->system_name;
		pf->filename = f->filename;
		pf->start_line = f->start_line;
		pb->func_ptrs[i] = pf;
	}
	p->function = pb->func_ptrs;
	p->n_function = r->nr_functions;

	for (i = 0; i < r->nr_lines; i++) {
		perftools__profiles__line__init(&pb->lines[i]);
		pb->lines[i].function_id = r->lines[i].function;
		pb->lines[i].line = r->lines[i].line;
		pb->line_ptrs[i] = &pb->lines[i];
	}
	for (i = 0; i < r->nr_locations; i++) {
		const struct res_location *l = &r->locations[i];
		Perftools__Profiles__Location *pl = &pb->locs[i];

		perftools__profiles__location__init(pl);
		pl->id = i + 1;
		pl->mapping_id = l->mapping;
		pl->address = l->address;
		pl->line = l->nr_lines ? &pb->line_ptrs[l->line] : NULL;
		pl->n_line = l->nr_lines;
		pb->loc_ptrs[i] = pl;
	}
	p->location = pb->loc_ptrs;
	p->n_location = r->nr_locations;

	for (i = 0; i < r->nr_loc_ids; i++)
		pb->loc_ids[i] = r->loc_ids[i];
	for (i = 0; i < r->nr_samples; i++) {
		const struct res_sample *s = &r->samples[i];
		Perftools__Profiles__Sample *ps = &pb->samples[i];
		Perftools__Profiles__Label *l = &pb->labels[nl];

		perftools__profiles__sample__init(ps);
		ps->location_id = s->nr_locs ? &pb->loc_ids[s->loc] : NULL;
		ps->n_location_id = s->nr_locs;
		ps->value = &pb->values[NR_VALUES * i];
		ps->value[0] = s->count;
		ps->value[1] = s->nanos;
		if (r->kind == CPROF_KIND_HEAP) {
			heap_scale(s->count, s->nanos, r->heap_rate,
				   &ps->value[0], &ps->value[1]);
			heap_scale(s->live_count, s->live_bytes, r->heap_rate,
				   &ps->value[2], &ps->value[3]);
		}
		ps->n_value = nvalues;
		ps->label = &pb->label_ptrs[nl];
		j = 0;
		if (s->pid >= 0)
			pb__label(&l[j++], x + S_PID, s->pid, x + S_ID, 0);
		if (s->tid >= 0)
			pb__label(&l[j++], x + S_TID, s->tid, x + S_ID, 0);
		if (s->comm > 0)
			pb__label(&l[j++], x + S_COMM, 0, 0, s->comm);
		if (s->cpu >= 0)
			pb__label(&l[j++], x + S_CPU, s->cpu, x + S_ID, 0);
		if (s->cgroup > 0)
			pb__label(&l[j++], x + S_CGROUP, 0, 0, s->cgroup);
		if (s->state > 0)
			pb__label(&l[j++], x + S_STATE, 0, 0, s->state);
		if (s->waiter_tid) {
			pb__label(&l[j++], x + S_WAITER_PID, s->waiter_pid,
				  x + S_ID, 0);
			pb__label(&l[j++], x + S_WAITER_TID, s->waiter_tid,
				  x + S_ID, 0);
		}
		if (s->waiter_comm > 0)
			pb__label(&l[j++], x + S_WAITER_COMM, 0, 0,
				  s->waiter_comm);
		ps->n_label = j;
		for (; nl < (size_t)(l + j - pb->labels); nl++)
			pb->label_ptrs[nl] = &pb->labels[nl];
		pb->sample_ptrs[i] = ps;
	}
	p->sample = pb->sample_ptrs;
	p->n_sample = r->nr_samples;
	return 0;
}

int pprof__write(const struct resolved *r, FILE *out, const char *name)
{
	return pprof__write_heap(r, out, name, false);
}

int pprof__write_heap(const struct resolved *r, FILE *out, const char *name,
		      bool allocs)
{
	struct gz_buffer *gz = NULL;
	struct pb pb = { 0 };
	int err = -1;

	if (pb__build(&pb, r, allocs)) {
		fail("failed to build the pprof message: %s", strerror(ENOMEM));
		goto cleanup;
	}
	gz = calloc(1, sizeof(*gz));
	if (!gz) {
		fail("failed to compress: %s", strerror(ENOMEM));
		goto cleanup;
	}
	gz->base.append = gz_buffer__append;
	gz->out = out;
	/* the speed over size trade-off Go's runtime/pprof makes */
	if (deflateInit2(&gz->zs, Z_BEST_SPEED, Z_DEFLATED, GZIP_WINDOW,
			 8, Z_DEFAULT_STRATEGY) != Z_OK) {
		fail("failed to compress: %s", gz->zs.msg ? gz->zs.msg : "zlib init");
		free(gz);
		gz = NULL;
		goto cleanup;
	}
	errno = 0;
	protobuf_c_message_pack_to_buffer(&pb.prof.base, &gz->base);
	if (gz->zerr == Z_OK && !gz->werr)
		gz_buffer__deflate(gz, Z_FINISH);
	if (gz->zerr != Z_OK)
		fail("failed to compress: zlib error %d", gz->zerr);
	else if (gz->werr || fflush(out) || ferror(out))
		fail("failed to write %s: %s", esc(name),
		     strerror(gz->werr ? gz->werr : errno ? errno : EIO));
	else
		err = 0;
	deflateEnd(&gz->zs);
cleanup:
	free(gz);
	pb__free(&pb);
	return err;
}
