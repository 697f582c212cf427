// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Aggregation: keys, weights, mapping generations, lost counts.
 */
#include "stream/profile.h"
#include "streambuild.h"
#include "test.h"

#define P	SB_PERIOD_NS

/* Feed every record of b (header included) to a new profile. */
static struct profile *feed(const struct sb *b)
{
	struct profile *p = profile__new((const struct cprof_header *)b->buf);
	size_t i;

	for (i = 0; p && i < b->nr_recs; i++)
		if (profile__add(p, (const struct cprof_rec *)(b->buf + b->offs[i])))
			return NULL;
	return p;
}

static void test_keys(void)
{
	uint64_t s1[2] = { 0x1000, 0x2000 }, s2[2] = { 0x1000, 0x2001 };
	const struct prof_sample *ps;
	struct prof_stack st;
	struct profile *p;
	uint64_t total = 0;
	struct sb b;
	size_t i;

	sb_init(&b);
	sb_header(&b, NULL);
	for (i = 0; i < 1000; i++) {
		/* 4 keys: 2 stacks x 2 tids; comm and cpu fixed */
		sb_sample(&b, i, 7, 7 + (i % 2), 0, "app", CPROF_SAMPLE_USER_MODE,
			  0, NULL, 2, (i / 2) % 2 ? s1 : s2);
	}
	/* same frames, but the tick was in the kernel: another stack */
	sb_sample(&b, 5000, 7, 7, 0, "app", 0, 0, NULL, 2, s1);
	/* same everything but comm (after exec): another key */
	sb_sample(&b, 5001, 7, 7, 0, "app2", CPROF_SAMPLE_USER_MODE, 0, NULL, 2, s1);
	/* same everything but cpu */
	sb_sample(&b, 5002, 7, 7, 1, "app", CPROF_SAMPLE_USER_MODE, 0, NULL, 2, s1);
	sb_end(&b, 1, 0, 0);
	p = feed(&b);
	test_cond("profile built", p != NULL);
	if (!p)
		return;
	test_condf(profile__nr_samples(p) == 7, "1003 samples aggregate into 7 keys (%zu)",
		   profile__nr_samples(p));
	for (i = 0; i < profile__nr_samples(p); i++)
		total += profile__sample(p, i)->count;
	test_cond("no sample lost in aggregation", total == 1003 &&
		  profile__nr_records(p) == 1003);
	ps = profile__sample(p, 0);
	test_cond("first key: 250 samples of 1 period each",
		  ps->count == 250 && ps->nanos == 250 * P && ps->first_ns == 0);
	profile__stack(p, ps->stack, &st);
	test_cond("stack kept: 2 user frames in user mode",
		  st.nr_kernel == 0 && st.nr_user == 2 && st.user_mode &&
		  st.ips[0] == 0x1000 && st.ips[1] == 0x2001);
	ps = profile__sample(p, 4);
	profile__stack(p, ps->stack, &st);
	test_cond("kernel-mode tick is a separate stack", !st.user_mode &&
		  ps->count == 1);
	test_cond("comm and cpu are part of the key",
		  !strcmp(profile__sample(p, 5)->comm, "app2") &&
		  profile__sample(p, 6)->cpu == 1);
	profile__free(p);
	sb_free(&b);
}

static void test_throttle_and_lost(void)
{
	uint64_t s[1] = { 0x1000 };
	struct profile *p;
	uint64_t nanos, other;
	struct sb b;

	sb_init(&b);
	sb_header(&b, NULL);
	sb_sample(&b, 100, 1, 1, 1, "a", CPROF_SAMPLE_USER_MODE, 0, NULL, 1, s);
	sb_throttle(&b, 200, 1, 4 * P);
	sb_throttle(&b, 150, 1, 3 * P);	/* arrives late, applies from 150 */
	sb_sample(&b, 160, 1, 1, 1, "a", CPROF_SAMPLE_USER_MODE, 0, NULL, 1, s);
	sb_sample(&b, 250, 1, 1, 1, "a", CPROF_SAMPLE_USER_MODE, 0, NULL, 1, s);
	sb_throttle(&b, 300, 1, P);
	sb_sample(&b, 300, 1, 1, 1, "a", CPROF_SAMPLE_USER_MODE, 0, NULL, 1, s);
	/* another cpu is not throttled */
	sb_sample(&b, 250, 1, 1, 2, "a", CPROF_SAMPLE_USER_MODE, 0, NULL, 1, s);
	sb_lost(&b, 260, 1, 10, 3);
	sb_lost(&b, 270, 2, 4, 0);
	sb_lost(&b, 280, 1, 1, 0);
	sb_end(&b, 1, 0, 15);
	p = feed(&b);
	test_cond("profile built", p != NULL);
	if (!p)
		return;
	test_condf(profile__sample(p, 0)->nanos == P + 3 * P + 4 * P + P,
		   "cpu 1 weights follow its period changes by time (%llu)",
		   (unsigned long long)profile__sample(p, 0)->nanos);
	test_cond("cpu 2 keeps the header period", profile__sample(p, 1)->nanos == P);
	test_cond("lost per cpu", profile__lost(p, 1, &nanos) == 11 &&
		  nanos == 11 * 4 * P && profile__lost(p, 2, &nanos) == 4 &&
		  nanos == 4 * P && profile__lost(p, 0, &nanos) == 0);
	test_cond("lost totals", profile__lost_total(p, &other) == 15 && other == 3);
	test_cond("END kept", profile__end(p) && profile__end(p)->lost == 15);
	/* --every keeps the changes its open windows need, no older ones */
	test_cond("periods before 250: the one at 150 goes, 200 still rules",
		  profile__drop_periods(p, 250) == 1);
	test_cond("... again: nothing more", profile__drop_periods(p, 250) == 0);
	test_cond("... before 1000: 200 goes, 300 rules",
		  profile__drop_periods(p, 1000) == 1 &&
		  profile__drop_periods(p, 5000) == 0);
	profile__free(p);
	sb_free(&b);
}

static void test_mmap_generations(void)
{
	const struct cprof_mmap *m;
	struct profile *p;
	struct sb b;

	sb_init(&b);
	sb_header(&b, NULL);
	sb_mmap(&b, 100, 9, 0x1000, 0x2000, 0, "/old", NULL, 0);
	sb_mmap(&b, 300, 9, 0x1000, 0x3000, 0, "/new", NULL, 0);	/* exec */
	sb_mmap(&b, 200, 9, 0x1000, 0x2000, 0, "/mid", NULL, 0);	/* late */
	sb_mmap(&b, 50, 10, 0x1000, 0x2000, 0, "/other-pid", NULL, 0);
	sb_end(&b, 1, 0, 0);
	p = feed(&b);
	test_cond("profile built", p != NULL);
	if (!p)
		return;
	m = profile__find_mmap(p, 9, 0x1800, 150);
	test_cond("latest mapping at or before the sample", m && !strcmp(m->path, "/old"));
	m = profile__find_mmap(p, 9, 0x1800, 250);
	test_cond("a record read later but older in time counts", m && !strcmp(m->path, "/mid"));
	m = profile__find_mmap(p, 9, 0x1800, 1000);
	test_cond("after exec: the new mapping", m && !strcmp(m->path, "/new"));
	m = profile__find_mmap(p, 9, 0x2800, 150);
	test_cond("no covering record before: the earliest covering one",
		  m && !strcmp(m->path, "/new"));
	m = profile__find_mmap(p, 9, 0x1800, 10);
	test_cond("sample before every record: the earliest covering one",
		  m && !strcmp(m->path, "/old"));
	test_cond("pids are separate", profile__find_mmap(p, 10, 0x1800, 1000) &&
		  !strcmp(profile__find_mmap(p, 10, 0x1800, 1000)->path, "/other-pid"));
	test_cond("outside every mapping: none", !profile__find_mmap(p, 9, 0x3000, 1000) &&
		  !profile__find_mmap(p, 11, 0x1800, 1000));
	profile__free(p);
	sb_free(&b);
}

/* The lookup profile.h describes, over the first nr records of b. */
static const struct cprof_mmap *linear_find(const struct sb *b, size_t nr,
					    uint32_t pid, uint64_t ip,
					    uint64_t time_ns)
{
	const struct cprof_mmap *before = NULL, *after = NULL, *m;
	size_t i;

	for (i = 0; i < nr; i++) {
		m = (const struct cprof_mmap *)(b->buf + b->offs[i]);
		if (m->rec.type != CPROF_REC_MMAP || m->pid != pid ||
		    ip < m->start || ip >= m->end)
			continue;
		if (m->time_ns <= time_ns) {
			if (!before || m->time_ns >= before->time_ns)
				before = m;
		} else if (!after || m->time_ns < after->time_ns) {
			after = m;
		}
	}
	return before ? before : after;
}

static uint64_t xorshift(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

/*
 * Thousands of overlapping records, looked up as they come (a live
 * stream's lookups) and after: the index finds what a scan does.
 */
static void test_mmap_index(void)
{
	uint64_t rng = 0x2545f4914f6cdd1dull, ip, t, start;
	const struct cprof_mmap *got, *want;
	unsigned int i, k, wrong = 0, found = 0, looked = 0;
	struct profile *p;
	char path[32];
	struct sb b;

	sb_init(&b);
	sb_header(&b, NULL);
	p = profile__new((const struct cprof_header *)b.buf);
	for (i = 0; p && i < 3000 + 20; i++) {
		if (i < 3000) {
			start = 0x100000 + (xorshift(&rng) % 4096) * 0x1000;
			snprintf(path, sizeof(path), "/r%u", i);
			/* a few large ones over many small ones; times repeat */
			sb_mmap(&b, xorshift(&rng) % 500, 9, start, start +
				(i % 50 ? 1 + xorshift(&rng) % 8 :
					  1 + xorshift(&rng) % 512) * 0x1000,
				0, path, NULL, 0);
			if (profile__add(p, (const struct cprof_rec *)
					 (b.buf + b.offs[b.nr_recs - 1])))
				break;
			if (i % 100)
				continue;
		}
		for (k = 0; k < 1000; k++, looked++) {
			ip = 0x100000 + xorshift(&rng) % (4600 * 0x1000);
			t = xorshift(&rng) % 520;
			got = profile__find_mmap(p, 9, ip, t);
			want = linear_find(&b, b.nr_recs, 9, ip, t);
			found += !!want;
			wrong += got != want &&
				 (!got || !want || strcmp(got->path, want->path));
		}
	}
	test_condf(p && looked == 50000 && found > 25000 && !wrong,
		   "3000 overlapping records, %u lookups as they come: as a scan finds them (%u wrong of %u found)",
		   looked, wrong, found);
	profile__free(p);
	sb_free(&b);
}

static int count_mmap(const struct cprof_mmap *mm, void *arg)
{
	(void)mm;
	++*(size_t *)arg;
	return 0;
}

static size_t nr_mmaps(const struct profile *p)
{
	size_t n = 0;

	profile__for_each_mmap(p, count_mmap, &n);
	return n;
}

/* A record that says again what its process's last one says. */
static void test_mmap_repeats(void)
{
	struct profile *p;
	struct sb b;

	sb_init(&b);
	sb_header(&b, NULL);
	sb_mmap(&b, 10, 9, 0x1000, 0x2000, 0, "/a", NULL, 0);
	sb_mmap(&b, 20, 9, 0x1000, 0x2000, 0, "/a", NULL, 0);	/* again */
	sb_mmap(&b, 30, 9, 0x3000, 0x4000, 0, "/b", NULL, 0);
	sb_mmap(&b, 40, 9, 0x1000, 0x2000, 0, "/a", NULL, 0);	/* not last */
	sb_mmap(&b, 35, 9, 0x1000, 0x2000, 0, "/a", NULL, 0);	/* earlier */
	sb_mmap(&b, 50, 9, 0x1000, 0x2000, 0x1000, "/a", NULL, 0);
	sb_end(&b, 1, 0, 0);
	p = feed(&b);
	test_condf(p && nr_mmaps(p) == 5,
		   "a record repeating its process's last one, later, is not kept again (%zu of 6 kept)",
		   p ? nr_mmaps(p) : 0);
	test_cond("... its lookups unchanged",
		  p && !strcmp(profile__find_mmap(p, 9, 0x1800, 25)->path, "/a") &&
		  profile__find_mmap(p, 9, 0x1800, 45)->pgoff == 0 &&
		  profile__find_mmap(p, 9, 0x1800, 55)->pgoff == 0x1000);
	profile__free(p);
	sb_free(&b);
}

/*
 * Past the cap on records no sample uses: those a sample uses stay; a
 * range's older records go first; the churning process loses those
 * between its oldest and newest; a small process keeps all of its own.
 */
static void test_mmap_cap(void)
{
	uint64_t ip = 0x401234;
	struct profile *p;
	struct sb b;
	char path[32];
	size_t i, total = 0;

	sb_init(&b);
	sb_header(&b, NULL);
	p = profile__new((const struct cprof_header *)b.buf);
	if (p)
		profile__cap_mmaps(p, 64 << 10);
	sb_mmap(&b, 1, 9, 0x400000, 0x410000, 0, "/app", NULL, 0);
	sb_sample(&b, 2, 9, 9, 0, "app", CPROF_SAMPLE_USER_MODE, 0, NULL, 1, &ip);
	sb_mmap(&b, 3, 9, 0x500000, 0x510000, 0, "/first", NULL, 0);
	for (i = 0; i < 5; i++)
		sb_mmap(&b, 4 + i, 10, 0x400000 + (i << 16),
			0x410000 + (i << 16), 0, "/small", NULL, 0);
	for (i = 0; i < 100; i++) {
		snprintf(path, sizeof(path), "/gen%zu", i);
		sb_mmap(&b, 10 + i, 11, 0x600000, 0x610000, 0, path, NULL, 0);
	}
	for (i = 0; i < 5000; i++)
		sb_mmap(&b, 200 + i, 9, 0x10000000 + (i << 12),
			0x10001000 + (i << 12), 0, "/churn", NULL, 0);
	sb_mmap(&b, 6000, 9, 0x700000, 0x710000, 0, "/last", NULL, 0);
	for (i = 0; p && i < b.nr_recs; i++)
		if (profile__add(p, (const struct cprof_rec *)(b.buf + b.offs[i])))
			break;
	total = p ? nr_mmaps(p) : 0;
	test_condf(p && i == b.nr_recs && profile__mmaps_dropped(p) > 4000 &&
		   total + profile__mmaps_dropped(p) == b.nr_recs - 1,
		   "5108 records, 64 KiB for unused ones: %llu dropped, %zu kept",
		   p ? (unsigned long long)profile__mmaps_dropped(p) : 0ull, total);
	test_cond("... the one a sample uses kept",
		  p && !strcmp(profile__find_mmap(p, 9, ip, 2)->path, "/app"));
	test_cond("... the churning process's oldest and newest kept",
		  p && profile__find_mmap(p, 9, 0x500000, 3) &&
		  profile__find_mmap(p, 9, 0x700000, 6000) &&
		  !profile__find_mmap(p, 9, 0x10000000 + (2500 << 12), 3000));
	test_cond("... a small process's all kept",
		  p && profile__find_mmap(p, 10, 0x400000, 4) &&
		  profile__find_mmap(p, 10, 0x440000, 8));
	test_cond("... of one address range, the newest",
		  p && !strcmp(profile__find_mmap(p, 11, 0x600000, 5)->path,
			       "/gen99"));
	profile__free(p);
	sb_free(&b);
}

/* A time off the CPU: its leaving and its return, in either order. */
static void test_offcpu(void)
{
	uint64_t k[2] = { 0xffffffff81000000ull, 0xffffffff81000100ull };
	uint64_t u[2] = { 0x1000, 0x2000 };
	struct cprof_header h = sb_default_header();
	const struct prof_sample *ps;
	uint64_t open, orphans, sleep = 0, run = 0, pre = 0;
	struct cprof_end *e;
	struct profile *p;
	struct sb b;
	size_t i;

	h.kind = CPROF_KIND_OFFCPU;
	sb_init(&b);
	sb_header(&b, &h);
	/* 10 ms asleep, returned on another CPU */
	sb_offcpu(&b, 1000000, 7, 8, 0, "app", CPROF_OFF_SLEEPING, 1,
		  2, k, 2, u);
	sb_oncpu(&b, 11000000, 1000000, 8, 1);
	/* the return drained first (another CPU's buffer): 5 ms, every 4 */
	sb_oncpu(&b, 25000000, 20000000, 8, 1);
	sb_offcpu(&b, 20000000, 7, 8, 0, "app", CPROF_OFF_SLEEPING, 4,
		  2, k, 2, u);
	/* preempted, never back before END at 100 ms */
	sb_offcpu(&b, 60000000, 7, 9, 1, "app", CPROF_OFF_PREEMPTED, 1,
		  0, NULL, 2, u);
	/* a return whose leaving was lost */
	sb_oncpu(&b, 70000000, 65000000, 10, 1);
	/* the same leaving twice (a hostile stream): counted once */
	sb_offcpu(&b, 80000000, 7, 11, 0, "app", CPROF_OFF_SLEEPING, 1,
		  0, NULL, 2, u);
	sb_offcpu(&b, 80000000, 7, 11, 0, "app", CPROF_OFF_SLEEPING, 1,
		  0, NULL, 2, u);
	sb_oncpu(&b, 81000000, 80000000, 11, 0);
	/* a tick of a wall profile's other half: on the CPU */
	sb_sample(&b, 90000000, 7, 8, 0, "app", CPROF_SAMPLE_USER_MODE,
		  0, NULL, 2, u);
	sb_end(&b, 100000000, 0, 0);
	e = (struct cprof_end *)(b.buf + b.offs[b.nr_recs - 1]);
	e->time_ns = 100000000;
	p = feed(&b);
	test_cond("off-CPU profile built", p != NULL);
	if (!p)
		return;
	for (i = 0; i < profile__nr_samples(p); i++) {
		ps = profile__sample(p, i);
		if (ps->off_state == 1 + CPROF_OFF_SLEEPING && ps->tid == 8)
			sleep += ps->nanos, run += ps->count;
		if (ps->off_state == 1 + CPROF_OFF_PREEMPTED)
			pre += ps->nanos;
	}
	test_condf(sleep == 10000000 + 4 * 5000000 && run == 1 + 4,
		   "asleep: 10 ms and 4 x 5 ms, 5 times (%llu ns, %llu)",
		   (unsigned long long)sleep, (unsigned long long)run);
	test_condf(pre == 40000000,
		   "still off the CPU at END: counted until then (%llu ns)",
		   (unsigned long long)pre);
	profile__off_unmatched(p, &open, &orphans);
	test_cond("one open at END, one return without its leaving",
		  open == 1 && orphans == 1);
	{
		uint64_t waits, weighted;
		uint32_t every = profile__off_sampled(p, &waits, &weighted);

		test_condf(every == 4 && waits == 4 && weighted == 1,
			   "sampled: 1 of 4 waits stands for 4 switches (every %u, %llu of %llu)",
			   every, (unsigned long long)weighted,
			   (unsigned long long)waits);
	}
	ps = NULL;
	for (i = 0; i < profile__nr_samples(p); i++)
		if (profile__sample(p, i)->tid == 11)
			ps = profile__sample(p, i);
	test_cond("a leaving twice counts once", ps && ps->count == 1 &&
		  ps->nanos == 1000000);
	test_cond("ticks apart from times off the CPU, and only they are samples",
		  profile__nr_records(p) == 1);
	profile__free(p);
	sb_free(&b);
}

/*
 * END written late (its reader drained the rings a quarter of a second
 * after the deadline): a wait still going on counts to the profile's
 * end, its start plus END's duration, not to END's time.
 */
static void test_offcpu_late_end(void)
{
	uint64_t u[1] = { 0x1000 };
	struct cprof_header h = sb_default_header();
	const struct prof_sample *ps;
	uint64_t t0 = h.start_time_ns, nanos = 0;
	struct cprof_end *e;
	struct profile *p;
	struct sb b;
	size_t i;

	h.kind = CPROF_KIND_OFFCPU;
	sb_init(&b);
	sb_header(&b, &h);
	/* asleep 30 ms before the 100 ms profile's end, never back */
	sb_offcpu(&b, t0 + 70000000, 7, 8, 0, "app", CPROF_OFF_SLEEPING, 1,
		  0, NULL, 1, u);
	sb_end(&b, 100000000, CPROF_END_COMPLETE, 0);
	e = (struct cprof_end *)(b.buf + b.offs[b.nr_recs - 1]);
	e->time_ns = t0 + 350000000;
	p = feed(&b);
	test_cond("off-CPU profile with a late END built", p != NULL);
	if (!p)
		return;
	for (i = 0; i < profile__nr_samples(p); i++) {
		ps = profile__sample(p, i);
		if (ps->tid == 8)
			nanos += ps->nanos;
	}
	test_condf(nanos == 30000000,
		   "still off the CPU at the end: counted to start + duration, not to END's time (%llu ns)",
		   (unsigned long long)nanos);
	profile__free(p);
	sb_free(&b);
}

/* A snapshot: one count a thread, its time off the CPU, running apart. */
static void test_threads(void)
{
	uint64_t k[1] = { 0xffffffff81000000ull }, u[2] = { 0x1000, 0x2000 };
	struct cprof_header h = sb_default_header();
	const struct prof_sample *ps;
	uint64_t count = 0, nanos = 0, running = 0;
	struct profile *p;
	struct sb b;
	size_t i;

	h.kind = CPROF_KIND_THREADS;
	sb_init(&b);
	sb_header(&b, &h);
	sb_thread(&b, 10, 7, 7, "app", CPROF_OFF_SLEEPING, 3000000, 1, k, 2, u);
	sb_thread(&b, 11, 7, 8, "app", CPROF_OFF_SLEEPING, 2000000, 1, k, 2, u);
	sb_thread(&b, 12, 7, 9, "app", CPROF_OFF_RUNNING, 0, 0, NULL, 2, u);
	sb_end(&b, 100, 0, 0);
	p = feed(&b);
	test_cond("snapshot built", p != NULL);
	if (!p)
		return;
	for (i = 0; i < profile__nr_samples(p); i++) {
		ps = profile__sample(p, i);
		if (ps->off_state == 1 + CPROF_OFF_SLEEPING)
			count += ps->count, nanos += ps->nanos;
		if (ps->off_state == PROF_ON_CPU)
			running += ps->count;
	}
	test_condf(profile__nr_samples(p) == 3 && count == 2 &&
		   nanos == 5000000 && running == 1,
		   "three threads apart, two asleep 3 and 2 ms, one running (%zu keys, %llu, %llu ns, %llu)",
		   profile__nr_samples(p), (unsigned long long)count,
		   (unsigned long long)nanos, (unsigned long long)running);
	test_cond("every thread record counts as the END record counts them",
		  profile__nr_records(p) == 3);
	profile__free(p);
	sb_free(&b);
}

/* Wall: a late tick stands for the periods the CPU spent on it. */
static void test_wall_late(void)
{
	uint64_t u[1] = { 0x1000 };
	struct cprof_header h = sb_default_header();
	struct profile *p;
	struct sb b;
	int kind;

	for (kind = CPROF_KIND_CPU; kind <= CPROF_KIND_WALL;
	     kind += CPROF_KIND_WALL) {
		h.kind = kind;
		sb_init(&b);
		sb_header(&b, &h);
		sb_sample(&b, 10, 7, 7, 0, "app", CPROF_SAMPLE_USER_MODE |
			  3 << CPROF_SAMPLE_LATE_SHIFT, 0, NULL, 1, u);
		sb_end(&b, 1, 0, 0);
		p = feed(&b);
		test_condf(p && profile__nr_samples(p) == 1 &&
			   profile__sample(p, 0)->nanos ==
			   (kind == CPROF_KIND_WALL ? 4 : 1) * P,
			   "a tick 3 periods late weighs %d period(s) in a %s profile",
			   kind == CPROF_KIND_WALL ? 4 : 1,
			   kind == CPROF_KIND_WALL ? "wall" : "CPU");
		profile__free(p);
		sb_free(&b);
	}
}

/*
 * Python frames are part of a stack: the same native frames with other
 * Python frames (another code object, instruction or first line) are
 * another stack; the same ones one; none, or a trailer of none (no thread
 * state), the stack of a sample without a trailer.
 */
static void test_python(void)
{
	const uint64_t u[2] = { 0x1000, 0x2000 };
	const struct cprof_pyframe a[2] = {
		{ 0x7f0000001000, 10, 3 },
		{ 0x7f0000002000 | CPROF_PYFRAME_ENTRY, 4, 1 },
	};
	struct cprof_pyframe b2[2] = { a[0], a[1] };
	struct prof_stack st;
	struct profile *p;
	struct sb b;

	sb_init(&b);
	sb_header(&b, NULL);
	sb_sample_py(&b, 1, 7, 7, 0, "py", 0, 0, NULL, 2, u, 0, 0x400000,
		     CPROF_PY_COMPLETE, 2, a);
	sb_sample_py(&b, 2, 7, 7, 0, "py", 0, 0, NULL, 2, u, 0, 0x400000,
		     CPROF_PY_COMPLETE, 2, a);
	b2[0].instr = 12;
	sb_sample_py(&b, 3, 7, 7, 0, "py", 0, 0, NULL, 2, u, 0, 0x400000,
		     CPROF_PY_COMPLETE, 2, b2);
	b2[0].instr = 10;
	b2[0].firstlineno = 4;
	sb_sample_py(&b, 4, 7, 7, 0, "py", 0, 0, NULL, 2, u, 0, 0x400000,
		     CPROF_PY_COMPLETE, 2, b2);
	/* the Python walk cut short: aligned otherwise (resolve.c) */
	sb_sample_py(&b, 5, 7, 7, 0, "py", 0, 0, NULL, 2, u, 0, 0x400000,
		     CPROF_PY_DEPTH, 2, a);
	sb_sample(&b, 6, 7, 7, 0, "py", 0, 0, NULL, 2, u);
	sb_sample_py(&b, 7, 7, 7, 0, "py", 0, 0, NULL, 2, u, 0, 0x400000,
		     CPROF_PY_NO_THREAD, 0, NULL);
	sb_end(&b, 1, 0, 0);
	p = feed(&b);
	test_condf(p && profile__nr_samples(p) == 5,
		   "Python frames in the key: 7 samples, 5 keys (%zu)",
		   p ? profile__nr_samples(p) : 0);
	if (!p) {
		sb_free(&b);
		return;
	}
	profile__stack(p, profile__sample(p, 0)->stack, &st);
	test_cond("the same Python frames: one stack, its frames kept",
		  profile__sample(p, 0)->count == 2 && st.nr_py == 2 &&
		  st.py_whole && st.py[0].code == a[0].code &&
		  st.py[0].instr == 10 && st.py[1].code == a[1].code &&
		  st.nr_user == 2 && st.ips[1] == 0x2000);
	profile__stack(p, profile__sample(p, 3)->stack, &st);
	test_cond("a Python walk cut short: not whole", st.nr_py == 2 &&
		  !st.py_whole);
	profile__stack(p, profile__sample(p, 4)->stack, &st);
	test_cond("a trailer of no frames: the stack of a sample without one",
		  profile__sample(p, 4)->count == 2 && !st.nr_py && !st.py);
	profile__free(p);
	sb_free(&b);
}

int main(void)
{
	test_keys();
	test_python();
	test_offcpu();
	test_offcpu_late_end();
	test_wall_late();
	test_threads();
	test_throttle_and_lost();
	test_mmap_generations();
	test_mmap_index();
	test_mmap_repeats();
	test_mmap_cap();
	return test_report();
}
