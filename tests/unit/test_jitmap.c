// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * test_jitmap: JIT code named from its process's perf map (jitmap.h), and
 * only from a map the process's user or root wrote.
 *   - jitmap itself: entries with and without 0x, a later entry over an
 *     earlier one wins, malformed lines skipped, a name cut at
 *     JITMAP_NAME_MAX, an address in no entry;
 *   - the owner: another user's map refused (named as such), the process's
 *     user's taken, without the user in the stream only root's;
 *   - a symlink, a FIFO and a directory at the path refused, none read;
 *   - a map rewritten in place, replaced, emptied: read again from its
 *     start, its lines naming later samples only (test_rewrite);
 *   - 40 reads of overlapping lines: each lookup as a search of the lines
 *     one by one says (test_many_reads);
 *   - a map that grows while the stream is read: each sample named by
 *     the map as read by its time (test_growth);
 *   - through cprof-dump: a stream of this boot with anonymous executable
 *     mappings of a process that is gone, one whose map is in /tmp: its
 *     frames are named, its mapping is "[jit]" in pprof; one without a
 *     map: "[jit]+0x..." frames and a summary saying why.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ingest/ingest.h"
#include "symbolize/jitmap.h"
#include "symbolize/resolve.h"
#include "streambuild.h"
#include "lib/strtab.h"
#include "test.h"
#include "testutil.h"

static int write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return -1;
	fputs(text, f);
	return fclose(f);
}

static void test_parse(const char *dir)
{
	char path[4096], longline[3000], *text;
	const struct jitmap *j;
	struct jitmaps *c;
	const char *why, *n;
	uint64_t used, skipped;

	snprintf(path, sizeof(path), "%s/perf-100.map", dir);
	memset(longline, 'L', sizeof(longline) - 1);
	longline[sizeof(longline) - 1] = '\0';
	if (asprintf(&text,
		     "1000 100 LazyCompile:*fib /app/fib.js:3\n"
		     "0x2000 0x80 JS:~outer file:///app/a.js:10\r\n"
		     "garbage line\n"
		     "3000 0 zero-size\n"
		     "3000 10\n"
		     "ffffffffffffff00 1000 wraps\n"
		     "12345678901234567 10 too-many-digits\n"
		     "1020 10 replaced\n"
		     "4000 10 %s\n"
		     "5000 10 no-newline-at-end",
		     longline) < 0 || write_file(path, text)) {
		test_cond("fixture: a perf map", false);
		return;
	}
	free(text);
	c = jitmaps__new(dir);
	j = c ? jitmaps__get(c, 100, 1000, true, &why) : NULL;
	test_condf(j, "a root-owned map is read (%s)", j ? "" : why ? why : "ENOMEM");
	if (!j) {
		jitmaps__free(c);
		return;
	}
	n = jitmap__lookup(j, 0x1000, UINT64_MAX, NULL);
	test_condf(n && !strcmp(n, "LazyCompile:*fib /app/fib.js:3"),
		   "the first byte of an entry: '%s'", n ? n : "(none)");
	n = jitmap__lookup(j, 0x10ff, UINT64_MAX, NULL);
	test_condf(n && !strcmp(n, "LazyCompile:*fib /app/fib.js:3"),
		   "its last byte: '%s'", n ? n : "(none)");
	test_cond("one past its end is in no entry",
		  !jitmap__lookup(j, 0x1100, UINT64_MAX, NULL));
	n = jitmap__lookup(j, 0x1025, UINT64_MAX, NULL);
	test_condf(n && !strcmp(n, "replaced"),
		   "a later entry over an earlier one wins: '%s'", n ? n : "(none)");
	n = jitmap__lookup(j, 0x2040, UINT64_MAX, NULL);
	test_condf(n && !strcmp(n, "JS:~outer file:///app/a.js:10"),
		   "0x-prefixed numbers, CR dropped: '%s'", n ? n : "(none)");
	n = jitmap__lookup(j, 0x4000, UINT64_MAX, NULL);
	test_condf(n && strlen(n) == JITMAP_NAME_MAX && n[0] == 'L',
		   "a long name is cut at %d bytes (%zu)", JITMAP_NAME_MAX,
		   n ? strlen(n) : 0);
	test_cond("a last line without its newline is left out",
		  !jitmap__lookup(j, 0x5000, UINT64_MAX, NULL));
	test_cond("below every entry: none",
		  !jitmap__lookup(j, 0x10, UINT64_MAX, NULL));
	test_cond("a zero-size entry is none",
		  !jitmap__lookup(j, 0x3000, UINT64_MAX, NULL));
	jitmap__counts(j, &used, &skipped);
	test_condf(used == 4 && skipped == 5,
		   "4 entries used, 5 malformed lines skipped (%" PRIu64 ", %" PRIu64 ")",
		   used, skipped);
	jitmaps__free(c);
}

/*
 * Overlaps: a later entry over many earlier ones (code space reused), an
 * earlier big one resuming where a later small one inside it ends.
 */
static void test_overlap(const char *dir)
{
	char path[4096], *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	const struct jitmap *j;
	struct jitmaps *c;
	const char *why, *n;
	int i;

	for (i = 0; f && i < 300; i++)
		fprintf(f, "%x 10 small%d\n", 0x100000 + 16 * i, i);
	if (f) {
		fprintf(f, "fff00 2000 NEW_BIG\n200000 1000 OLD_BIG\n200100 10 NEW_SMALL\n");
		fclose(f);
	}
	snprintf(path, sizeof(path), "%s/perf-150.map", dir);
	if (!text || write_file(path, text)) {
		test_cond("fixture: overlapping entries", false);
		free(text);
		return;
	}
	free(text);
	c = jitmaps__new(dir);
	j = c ? jitmaps__get(c, 150, getuid(), true, &why) : NULL;
	n = j ? jitmap__lookup(j, 0x100800, UINT64_MAX, NULL) : NULL;
	test_condf(n && !strcmp(n, "NEW_BIG"),
		   "a later entry over 300 earlier ones wins: '%s'", n ? n : "(none)");
	n = j ? jitmap__lookup(j, 0x101f00, UINT64_MAX, NULL) : "x";
	test_cond("one past its end: none", !n);
	n = j ? jitmap__lookup(j, 0x200105, UINT64_MAX, NULL) : NULL;
	test_condf(n && !strcmp(n, "NEW_SMALL"),
		   "a later small entry inside an earlier big one: '%s'", n ? n : "(none)");
	n = j ? jitmap__lookup(j, 0x200200, UINT64_MAX, NULL) : NULL;
	test_condf(n && !strcmp(n, "OLD_BIG"),
		   "past it, the earlier big one again: '%s'", n ? n : "(none)");
	jitmaps__free(c);
}

static void test_owner(const char *dir)
{
	char path[4096];
	const struct jitmap *j;
	struct jitmaps *c;
	const char *why;

	snprintf(path, sizeof(path), "%s/perf-200.map", dir);
	if (write_file(path, "1000 10 f\n") || chown(path, 4242, 4242)) {
		test_cond("fixture: a map owned by uid 4242", false);
		return;
	}
	c = jitmaps__new(dir);
	j = jitmaps__get(c, 200, 1000, true, &why);
	test_condf(!j && why && jitmap_refused(why) && strstr(why, "4242"),
		   "another user's map is refused, its owner named: %s",
		   why ? why : "(read)");
	jitmaps__free(c);
	c = jitmaps__new(dir);
	j = jitmaps__get(c, 200, 4242, true, &why);
	test_cond("the process's user's map is read",
		  j && jitmap__lookup(j, 0x1005, UINT64_MAX, NULL));
	jitmaps__free(c);
	{
		char other[4096];

		snprintf(other, sizeof(other), "%s/another-name", dir);
		if (link(path, other)) {
			test_cond("fixture: a hard link", false);
		} else {
			c = jitmaps__new(dir);
			j = jitmaps__get(c, 200, 4242, true, &why);
			test_condf(!j && why && strstr(why, "hard links"),
				   "a map with another name is refused: %s",
				   why ? why : "(read)");
			jitmaps__free(c);
			unlink(other);
		}
	}
	c = jitmaps__new(dir);
	j = jitmaps__get(c, 200, 0, false, &why);
	test_condf(!j && why && jitmap_refused(why),
		   "without the process's user, only root's is read: %s",
		   why ? why : "(read)");
	jitmaps__free(c);
}

static void test_not_files(const char *dir)
{
	char path[4096], target[4096];
	const struct jitmap *j;
	struct jitmaps *c;
	const char *why;
	double t0;

	snprintf(target, sizeof(target), "%s/root-owned", dir);
	snprintf(path, sizeof(path), "%s/perf-300.map", dir);
	if (write_file(target, "1000 10 secret\n") || symlink(target, path)) {
		test_cond("fixture: a symlink", false);
		return;
	}
	snprintf(path, sizeof(path), "%s/perf-301.map", dir);
	if (mkfifo(path, 0600)) {
		test_cond("fixture: a FIFO", false);
		return;
	}
	snprintf(path, sizeof(path), "%s/perf-302.map", dir);
	if (mkdir(path, 0700)) {
		test_cond("fixture: a directory", false);
		return;
	}
	c = jitmaps__new(dir);
	j = jitmaps__get(c, 300, 0, true, &why);
	test_condf(!j && why && strstr(why, "not a regular file"),
		   "a symlink to a root-owned file is not followed: %s",
		   why ? why : "(read)");
	t0 = (double)time(NULL);
	j = jitmaps__get(c, 301, 0, true, &why);
	test_condf(!j && why && strstr(why, "not a regular file") &&
		   time(NULL) - t0 < 5,
		   "a FIFO is refused without blocking: %s", why ? why : "(read)");
	j = jitmaps__get(c, 302, 0, true, &why);
	test_condf(!j && why && strstr(why, "not a regular file"),
		   "a directory is refused: %s", why ? why : "(read)");
	j = jitmaps__get(c, 303, 0, true, &why);
	test_condf(!j && why && strstr(why, "no perf map"),
		   "no map: %s", why ? why : "(read)");
	jitmaps__free(c);
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* A sample time after the reads so far and before the next one. */
static uint64_t between_reads(void)
{
	uint64_t t = mono_ns();
	struct timespec ms = { 0, 1000000 };

	nanosleep(&ms, NULL);
	return t;
}

static const char *name_at(const struct jitmap *j, uint64_t addr, uint64_t t)
{
	const char *n = j ? jitmap__lookup(j, addr, t, NULL) : NULL;

	return n ? n : "(none)";
}

/*
 * A map rewritten while it is read (jcmd Compiler.perfmap rewrites it in
 * place; a file replaced at the path): read again from its start, its
 * lines in place of the earlier ones from then on, the earlier ones still
 * naming the samples taken before; never read from the middle of a line.
 */
static void test_rewrite(const char *dir)
{
	const char *first = "1000 100 OLD\n", *appended = "2000 100 APPENDED\n";
	char path[4096], tail[64], *text = NULL;
	const struct jitmap *j = NULL;
	uint64_t t1, t2, t3, t4;
	struct jitmaps *c = jitmaps__new(dir);
	const char *why, *n;
	size_t off = strlen(first) + strlen(appended);
	FILE *f;
	int i;

	snprintf(path, sizeof(path), "%s/perf-400.map", dir);
	if (c && !write_file(path, first))
		j = jitmaps__get(c, 400, getuid(), true, &why);
	t1 = between_reads();
	f = fopen(path, "a");
	if (!j || !f || fputs(appended, f) < 0 || fclose(f) ||
	    !jitmaps__get(c, 400, getuid(), true, &why)) {
		test_cond("fixture: a map read, then appended to", false);
		jitmaps__free(c);
		return;
	}
	t2 = between_reads();
	test_condf(!strcmp(name_at(j, 0x2010, UINT64_MAX), "APPENDED"),
		   "an appended line is read: APPENDED (%s)",
		   name_at(j, 0x2010, UINT64_MAX));
	/*
	 * Rewritten in place, longer: from the offset read so far its first
	 * line reads as an entry of its own, "10 20 BOGUS_TAIL"
	 */
	snprintf(tail, sizeof(tail), " 10 20 BOGUS_TAIL\n");
	if (asprintf(&text, "1000 800 WHOLE%-*s%s3000 100 REWRITTEN\n",
		     (int)(off - strlen("1000 800 WHOLE") - 1), "_LINE", tail) < 0 ||
	    write_file(path, text) || !jitmaps__get(c, 400, getuid(), true, &why)) {
		test_cond("fixture: the map rewritten in place", false);
		free(text);
		jitmaps__free(c);
		return;
	}
	free(text);
	t3 = between_reads();
	test_condf(!strcmp(name_at(j, 0x10, UINT64_MAX), "(none)"),
		   "a map rewritten in place is not read from the middle of a line (%s)",
		   name_at(j, 0x10, UINT64_MAX));
	n = name_at(j, 0x1010, UINT64_MAX);
	test_condf(!strncmp(n, "WHOLE_LINE", 10),
		   "it is read from its start, its lines naming later samples: WHOLE_LINE... (%s)",
		   n);
	test_condf(!strcmp(name_at(j, 0x3010, UINT64_MAX), "REWRITTEN"),
		   "its other lines too: REWRITTEN (%s)", name_at(j, 0x3010, UINT64_MAX));
	test_condf(!strcmp(name_at(j, 0x2010, UINT64_MAX), "(none)"),
		   "a line it no longer has names no later sample (%s)",
		   name_at(j, 0x2010, UINT64_MAX));
	test_condf(!strcmp(name_at(j, 0x1010, t1), "OLD") &&
		   !strcmp(name_at(j, 0x2010, t2), "APPENDED"),
		   "samples taken before the rewrite keep their names: OLD, APPENDED (%s, %s)",
		   name_at(j, 0x1010, t1), name_at(j, 0x2010, t2));
	/* replaced by another, shorter file */
	if (unlink(path) || write_file(path, "4000 100 REPLACED\n") ||
	    !jitmaps__get(c, 400, getuid(), true, &why)) {
		test_cond("fixture: the map replaced", false);
		jitmaps__free(c);
		return;
	}
	t4 = between_reads();
	test_condf(!strcmp(name_at(j, 0x4010, UINT64_MAX), "REPLACED") &&
		   !strcmp(name_at(j, 0x1010, UINT64_MAX), "(none)"),
		   "a map replaced at its path is read, in place of the earlier one: REPLACED, (none) (%s, %s)",
		   name_at(j, 0x4010, UINT64_MAX), name_at(j, 0x1010, UINT64_MAX));
	n = name_at(j, 0x1010, t3);
	test_condf(!strncmp(n, "WHOLE_LINE", 10) &&
		   !strcmp(name_at(j, 0x1010, t1), "OLD"),
		   "earlier samples keep the names of their time: WHOLE_LINE..., OLD (%s, %s)",
		   n, name_at(j, 0x1010, t1));
	/* emptied, then written again */
	if (truncate(path, 0) || !jitmaps__get(c, 400, getuid(), true, &why)) {
		test_cond("fixture: the map emptied", false);
		jitmaps__free(c);
		return;
	}
	between_reads();
	f = fopen(path, "a");
	if (!f || fputs("5000 100 AFTER_EMPTY\n", f) < 0 || fclose(f) ||
	    !jitmaps__get(c, 400, getuid(), true, &why)) {
		test_cond("fixture: the emptied map written again", false);
		jitmaps__free(c);
		return;
	}
	test_condf(!strcmp(name_at(j, 0x4010, UINT64_MAX), "(none)") &&
		   !strcmp(name_at(j, 0x4010, t4), "REPLACED") &&
		   !strcmp(name_at(j, 0x5010, UINT64_MAX), "AFTER_EMPTY"),
		   "emptied, its lines name no later sample, then its new lines do: (none), REPLACED, AFTER_EMPTY (%s, %s, %s)",
		   name_at(j, 0x4010, UINT64_MAX), name_at(j, 0x4010, t4),
		   name_at(j, 0x5010, UINT64_MAX));
	/* past JITMAP_READS_MAX reads, a rewrite is not read */
	for (i = 0; i < JITMAP_READS_MAX; i++) {
		f = fopen(path, "a");
		if (!f || fprintf(f, "%x 10 more%d\n", 0x10000 + 16 * i, i) < 0 ||
		    fclose(f) || !jitmaps__get(c, 400, getuid(), true, &why))
			break;
	}
	if (i < JITMAP_READS_MAX || write_file(path, "5000 100 TOO_LATE\n") ||
	    !jitmaps__get(c, 400, getuid(), true, &why)) {
		test_cond("fixture: many reads, then a rewrite", false);
		jitmaps__free(c);
		return;
	}
	test_condf(!strcmp(name_at(j, 0x5010, UINT64_MAX), "AFTER_EMPTY"),
		   "past %d reads a rewrite is not read, what was read stays: AFTER_EMPTY (%s)",
		   JITMAP_READS_MAX, name_at(j, 0x5010, UINT64_MAX));
	/* a map with no line yet, rewritten shorter: a read of nothing */
	snprintf(path, sizeof(path), "%s/perf-401.map", dir);
	if (write_file(path, "17") || !jitmaps__get(c, 401, getuid(), true, &why) ||
	    write_file(path, "7") ||
	    !(j = jitmaps__get(c, 401, getuid(), true, &why))) {
		test_cond("fixture: a map of no line rewritten", false);
		jitmaps__free(c);
		return;
	}
	test_condf(!strcmp(name_at(j, 0x17, UINT64_MAX), "(none)") &&
		   !strcmp(name_at(j, 0x17, 0), "(none)"),
		   "a map of no line, rewritten: no name (%s, %s)",
		   name_at(j, 0x17, UINT64_MAX), name_at(j, 0x17, 0));
	jitmaps__free(c);
}

/*
 * Many reads of overlapping lines (more than JITMAP_READS_MAX): each
 * lookup, at each read's time and after all, is what the lines say when
 * searched one by one: the last written covering the address of those
 * read by the sample's time, else the last covering it in the first read
 * after that does (past the limit, lines join the last read).
 */
#define RND_READS	40
#define RND_LINES	(RND_READS * 24)

static void test_many_reads(const char *dir)
{
	static uint64_t start[RND_LINES], end[RND_LINES];
	static unsigned int read_of[RND_LINES];
	uint64_t t[RND_READS + 1], x = 0x9e3779b97f4a7c15ull;
	struct jitmaps *c = jitmaps__new(dir);
	const struct jitmap *j = NULL;
	unsigned int nr = 0, r, bad = 0, checked = 0, k, i;
	char path[4096];
	const char *why;

	snprintf(path, sizeof(path), "%s/perf-500.map", dir);
	if (!c || write_file(path, "")) {
		test_cond("fixture: an empty map", false);
		jitmaps__free(c);
		return;
	}
	for (r = 0; r < RND_READS; r++) {
		unsigned int n = 1 + (unsigned int)(x >> 59) % 24;
		FILE *f = fopen(path, "a");

		for (i = 0; f && i < n; i++, nr++) {
			x = x * 6364136223846793005ull + 1442695040888963407ull;
			start[nr] = 0x1000 + (x >> 40) % 0x2000;
			end[nr] = start[nr] + 1 + (x >> 20) % 0x200;
			read_of[nr] = r < JITMAP_READS_MAX ? r : JITMAP_READS_MAX - 1;
			fprintf(f, "%" PRIx64 " %" PRIx64 " L%u\n", start[nr],
				end[nr] - start[nr], nr);
		}
		if (!f || fclose(f) ||
		    !(j = jitmaps__get(c, 500, getuid(), true, &why))) {
			test_cond("fixture: lines appended and read", false);
			jitmaps__free(c);
			return;
		}
		t[r] = between_reads();
	}
	t[RND_READS] = UINT64_MAX;
	for (k = 0; k <= RND_READS; k++) {
		/* reads done by t[k]: k + 1 (merged past the limit) */
		unsigned int done = k + 1 < JITMAP_READS_MAX ? k + 1 :
				    JITMAP_READS_MAX;

		for (uint64_t a = 0xff0; a < 0x3300; a += 5) {
			const char *n = jitmap__lookup(j, a, t[k], NULL);
			int want = -1;
			char name[16];

			for (i = 0; i < nr; i++)
				if (a >= start[i] && a < end[i] && read_of[i] < done)
					want = (int)i;
			for (r = done; want < 0 && r < JITMAP_READS_MAX; r++)
				for (i = 0; i < nr; i++)
					if (read_of[i] == r && a >= start[i] && a < end[i])
						want = (int)i;
			snprintf(name, sizeof(name), "L%d", want);
			checked++;
			if (want < 0 ? n != NULL : !n || strcmp(n, name))
				bad++;
		}
	}
	test_condf(!bad, "%u lines in %d reads: %u lookups of %u as the lines say",
		   nr, RND_READS, checked - bad, checked);
	jitmaps__free(c);
}

/* An [anon] mapping of pid, as the module lists it, with the process's uid. */
static void anon(struct sb *b, pid_t pid, uint64_t start, uint32_t uid)
{
	struct cprof_mmap *m;

	sb_mmap(b, 1, (uint32_t)pid, start, start + 0x10000, 0,
		CPROF_ANON_NAME, NULL, 0);
	m = (struct cprof_mmap *)(b->buf + b->offs[b->nr_recs - 1]);
	m->rec.flags |= CPROF_MMAP_UID;
	m->uid = uid;
}

/* The map of test_growth's process, and what happens after each record. */
struct growth {
	const char *map;
	const char *append[8];	/* after record i: lines the runtime writes */
	uint64_t next_ns[8];	/* after record i: wait until then */
	unsigned int rec;
	bool late;		/* a record handled after the next one's time */
};

static int growth_after(void *arg, const struct cprof_rec *rec)
{
	struct growth *g = arg;
	unsigned int i = g->rec++;
	struct timespec ts;
	FILE *f;

	(void)rec;
	if (i >= 8)
		return 0;
	if (g->append[i]) {
		f = fopen(g->map, "a");
		if (!f)
			return -1;
		fputs(g->append[i], f);
		if (fclose(f))
			return -1;
	}
	/* as live: a sample is read once its time has passed */
	clock_gettime(CLOCK_MONOTONIC, &ts);
	if (g->next_ns[i] && (uint64_t)ts.tv_sec * 1000000000u +
			     (uint64_t)ts.tv_nsec + 1000000u > g->next_ns[i])
		g->late = true;
	if (g->next_ns[i]) {
		ts.tv_sec = (time_t)(g->next_ns[i] / 1000000000u);
		ts.tv_nsec = (long)(g->next_ns[i] % 1000000000u);
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL))
			;
	}
	return 0;
}

/* The leaf frame's name in r's sample of comm, or "(none)". */
static const char *leaf_of(const struct resolved *r, const char *comm)
{
	size_t i;

	for (i = 0; i < r->nr_samples; i++) {
		const struct res_sample *s = &r->samples[i];
		const struct res_location *l;

		if (!s->comm || strcmp(strtab__get(r->strings, s->comm), comm) ||
		    !s->nr_locs)
			continue;
		l = &r->locations[r->loc_ids[s->loc] - 1];
		if (!l->nr_lines)
			return "[jit]";
		return strtab__get(r->strings,
				   r->functions[r->lines[l->line].function - 1].name);
	}
	return "(none)";
}

/*
 * test_growth's first sample, this long after the stream's start (its
 * reading starts before), and the time between its samples: a read one
 * makes is done before the next one's time, on a loaded host too
 */
#define GROWTH_T0_NS	200000000ull
#define GROWTH_GAP_NS	100000000ull

/*
 * A map that grows while the stream is read, as a runtime writes it: each
 * sample is named by the map as read by its time.  s1 makes the first
 * read (OLD); then the runtime writes NEW over OLD's range and LATE; s2,
 * in OLD's range, makes no read (covered): OLD; s3, in LATE, reads them:
 * LATE; s4, after that read, in the range: NEW; s5 in no entry: [jit];
 * s6's line is written after the stream's end: the last read names it.
 * A host that stalls a record past the next sample's time breaks the
 * premise: true then, unless last (the checks made anyway).
 */
static bool growth_once(bool last)
{
	const char *in = tmp_path("growth.bin");
	struct cprof_header h = sb_header_of_boot(true);
	struct resolve_opts o = { .symbolize = true, .kallsyms = "/dev/null",
				  .modules = "/dev/null" };
	static const uint64_t at[6] = { 0x1010, 0x1020, 0x3010, 0x1030,
					0x9010, 0x7010 };
	struct growth g = { 0 };
	struct resolved *r = NULL;
	struct ingest *ing = NULL;
	struct profile *p = NULL;
	struct ingest_ops ops = { .after = growth_after, .arg = &g };
	char map[4096], comm[8];
	struct sb b;
	uint64_t t0 = h.start_time_ns + GROWTH_T0_NS;
	pid_t pid = gone_pid();
	bool late = false;
	unsigned int i;
	int fd = -1;

	snprintf(map, sizeof(map), "/tmp/perf-%d.map", (int)pid);
	g.map = map;
	o.jit = jitmaps__new(NULL);
	if (pid <= 0 || write_file(map, "1000 100 OLD\n") || !o.jit) {
		test_cond("fixture: a map that grows", false);
		jitmaps__free(o.jit);
		return false;
	}
	sb_init(&b);
	sb_header(&b, &h);
	anon(&b, pid, 0, getuid());
	for (i = 0; i < 6; i++) {
		uint64_t ip = at[i];

		snprintf(comm, sizeof(comm), "s%u", i + 1);
		sb_sample(&b, t0 + GROWTH_GAP_NS * i, (uint32_t)pid, 1000 + i, 0, comm,
			  CPROF_SAMPLE_USER_MODE, 0, NULL, 1, &ip);
		g.next_ns[i] = t0 + GROWTH_GAP_NS * i + 1000000u;
	}
	sb_end(&b, GROWTH_T0_NS + 10 * GROWTH_GAP_NS, CPROF_END_COMPLETE, 0);
	g.append[1] = "1000 100 NEW\n3000 100 LATE\n";
	g.append[7] = "7000 100 END_READ\n";
	if (sb_write(&b, in, b.len)) {
		test_cond("fixture: the stream", false);
		goto out;
	}
	fd = open(in, O_RDONLY);
	ing = fd >= 0 ? ingest__open(fd, in, NULL, NULL) : NULL;
	if (ing) {
		ingest__jit(ing, o.jit);
		if (!ingest__run(ing, &ops))
			p = ingest__take(ing);
	}
	r = p ? resolved__new(p, &o) : NULL;
	late = g.late && !last;
	if (late)
		goto out;
	test_cond("the stream is read and resolved", r);
	if (!r)
		goto out;
	test_condf(!strcmp(leaf_of(r, "s1"), "OLD"),
		   "the sample that made the first read: OLD (%s)", leaf_of(r, "s1"));
	test_condf(!strcmp(leaf_of(r, "s2"), "OLD"),
		   "a sample before the newer entry was read keeps the older name: OLD (%s)",
		   leaf_of(r, "s2"));
	test_condf(!strcmp(leaf_of(r, "s3"), "LATE"),
		   "a sample no entry covered reads the new lines: LATE (%s)",
		   leaf_of(r, "s3"));
	test_condf(!strcmp(leaf_of(r, "s4"), "NEW"),
		   "after that read, the newer entry: NEW (%s)", leaf_of(r, "s4"));
	test_condf(!strcmp(leaf_of(r, "s5"), "[jit]"),
		   "an address in no entry: [jit] (%s)", leaf_of(r, "s5"));
	test_condf(!strcmp(leaf_of(r, "s6"), "END_READ"),
		   "a line written after the stream ended is read at the end: END_READ (%s)",
		   leaf_of(r, "s6"));
out:
	unlink(map);
	resolved__free(r);
	profile__free(p);
	ingest__close(ing);
	if (fd >= 0)
		close(fd);
	sb_free(&b);
	jitmaps__free(o.jit);
	return late;
}

static void test_growth(void)
{
	int tries = 3;

	while (growth_once(tries == 1) && --tries)
		fprintf(stderr, "test_growth: the host stalled past a sample's time: again\n");
}

static void test_dump(void)
{
	const char *in = tmp_path("jit.bin"), *out = tmp_path("jit.folded");
	const char *pb = tmp_path("jit.pb.gz"), *errp = tmp_path("jit.err");
	struct cprof_header h = sb_header_of_boot(true);
	pid_t named = gone_pid(), bare = gone_pid();
	uint64_t ips[2];
	char map[64], *folded, *err;
	Perftools__Profiles__Profile *p;
	struct sb b;
	bool jit_mapping = false;
	size_t i;

	snprintf(map, sizeof(map), "/tmp/perf-%d.map", (int)named);
	unlink(map);
	if (named <= 0 || bare <= 0 ||
	    write_file(map, "7f0000001000 200 JS:*hot /app/hot.js:1\n"
			    "7f0000002000 100 JS:~caller /app/hot.js:9\n")) {
		test_cond("fixture: a perf map in /tmp", false);
		return;
	}
	sb_init(&b);
	sb_header(&b, &h);
	anon(&b, named, 0x7f0000000000, 0);
	anon(&b, bare, 0x7f0000000000, 0);
	/* leaf first: hot, called from caller (a return address) */
	ips[0] = 0x7f0000001010;
	ips[1] = 0x7f0000002050;
	sb_sample(&b, 10, (uint32_t)named, (uint32_t)named, 0, "node",
		  CPROF_SAMPLE_USER_MODE, 0, NULL, 2, ips);
	sb_sample(&b, 10, (uint32_t)bare, (uint32_t)bare, 0, "bare",
		  CPROF_SAMPLE_USER_MODE, 0, NULL, 2, ips);
	sb_end(&b, 1000000000, CPROF_END_COMPLETE, 0);
	if (sb_write(&b, in, b.len)) {
		test_cond("fixture: the stream", false);
		sb_free(&b);
		unlink(map);
		return;
	}
	sb_free(&b);
	test_cond("cprof-dump converts JIT frames",
		  run("%s -i '%s' -f folded -o '%s' --kallsyms /dev/null 2>'%s'",
		      cprof_dump(), in, out, errp) == 0 &&
		  run("%s -i '%s' -o '%s' --kallsyms /dev/null", cprof_dump(),
		      in, pb) == 0);
	unlink(map);
	folded = slurp(out, NULL);
	err = slurp(errp, NULL);
	test_condf(folded && strstr(folded, "node;JS:~caller /app/hot.js:9;JS:*hot /app/hot.js:1 1"),
		   "frames named from the map of a process that is gone:\n%s",
		   folded ? folded : "(none)");
	test_condf(folded && strstr(folded, "bare;[jit]+0x204f;[jit]+0x1010 1"),
		   "without a map, [jit] frames:\n%s", folded ? folded : "(none)");
	test_condf(err && strstr(err, "in [jit] (no perf map /tmp/perf-PID.map)"),
		   "the summary says why: %s", err ? err : "(none)");
	p = pprof_read(pb);
	for (i = 0; p && i < p->n_mapping; i++)
		jit_mapping |= !strcmp(pb_str(p, p->mapping[i]->filename), "[jit]");
	test_cond("the mapping is [jit] in pprof", jit_mapping);
	if (p)
		perftools__profiles__profile__free_unpacked(p, NULL);
	free(folded);
	free(err);
}

int main(void)
{
	const char *dir = tmp_path("maps");

	if (mkdir(dir, 0755)) {
		test_cond("fixture: a directory of maps", false);
		return test_report();
	}
	test_parse(dir);
	test_overlap(dir);
	test_owner(dir);
	test_not_files(dir);
	test_rewrite(dir);
	test_many_reads(dir);
	test_growth();
	test_dump();
	return test_report();
}
