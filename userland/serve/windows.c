// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * windows - a continuous profile cut into back-to-back windows.  See
 * windows.h.
 *
 * The whole stream's MMAP and THROTTLE records go to one profile (the
 * maps), each window's samples and losses to a window profile that looks
 * mappings and periods up there (profile__new_window()).  Open windows are
 * a queue, oldest first; window numbers only grow.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <hashtab.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "serve/answer.h"
#include "lib/atomicfile.h"
#include "lib/boxed.h"
#include "ingest/ingest.h"
#include "run/pipeline.h"
#include "stream/profile.h"
#include "symbolize/resolve.h"
#include "lib/util.h"
#include "serve/windows.h"

#define WINDOWS_OPEN_MAX	64
/* windows waiting behind the one handed on: more, and it goes unsymbolized */
#define WINDOWS_BEHIND_MAX	8

struct window {
	uint64_t k;			/* window number */
	struct profile *p;
};

/* The window being converted and written, one at a time. */
struct writing {
	bool busy;			/* its child runs */
	struct boxed_child c;
	int fd;				/* what the child writes: the file */
	uint64_t k;			/* window number */
	uint64_t samples;
	uint64_t from_ns, to_ns;	/* its bounds, from the start */
	char path[4096];
};

struct windows {
	const struct windows_opts *o;
	struct cprof_header hdr;	/* the stream's */
	struct profile *maps;
	const struct ingest *in;	/* the stream's: samples it holds */
	struct window open[WINDOWS_OPEN_MAX];
	size_t nr_open;
	uint64_t next_k;		/* the next window to open */
	uint64_t every_ns;
	uint64_t written, samples, late;
	uint64_t lost, lost_samples;	/* windows that could not be written */
	htab_t gone;			/* pids seen exited: struct gone */
	uint64_t dropped;		/* pids whose mappings were dropped */
	uint64_t last_t;		/* the latest sample, from the start */
	int lost_end;			/* windows__finish(): 1 if any was lost */
	struct writing wr;
	uint64_t waited;		/* the reader waited for wr: full queue */
	uint64_t plain;			/* windows not symbolized: behind */
};

static const char *extension(enum output_format f)
{
	switch (f) {
	case FORMAT_PPROF:
		return ".pb.gz";
	case FORMAT_FOLDED:
		return ".folded";
	default:
		return ".txt";
	}
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int is_ours(const struct dirent *d, const char *ext)
{
	size_t n = strlen(d->d_name), e = strlen(ext);

	/* cprof-YYYYMMDDTHHMMSSZ.ext */
	return n == 6 + 16 + e && !strncmp(d->d_name, "cprof-", 6) &&
	       strspn(d->d_name + 6, "0123456789") == 8 &&
	       d->d_name[6 + 8] == 'T' &&
	       strspn(d->d_name + 6 + 9, "0123456789") == 6 &&
	       d->d_name[6 + 15] == 'Z' && !strcmp(d->d_name + n - e, ext);
}

/*
 * Remove the oldest of our files in dir beyond the newest keep.  Ours:
 * named so, regular, and this user's: in a directory others may write
 * (sticky), files they put there under such names are neither counted
 * nor removed, so they cannot make a window go as soon as it is written.
 */
static void rotate(const struct windows_opts *o)
{
	const char *ext = extension(o->out.format);
	char **names = NULL;
	size_t n = 0, cap = 0, i;
	struct dirent *d;
	struct stat st;
	DIR *dp;

	if (o->keep <= 0)
		return;
	dp = opendir(o->dir);
	if (!dp) {
		warning("failed to list %s to keep %ld files: %s", esc(o->dir),
			o->keep, strerror(errno));
		return;
	}
	while ((d = readdir(dp))) {
		if (!is_ours(d, ext) ||
		    fstatat(dirfd(dp), d->d_name, &st, AT_SYMLINK_NOFOLLOW) ||
		    !S_ISREG(st.st_mode) || st.st_uid != geteuid())
			continue;
		if (grow_array(&names, &cap, n + 1, sizeof(*names)) ||
		    !(names[n] = strdup(d->d_name))) {
			warning("failed to list %s to keep %ld files: %s",
				esc(o->dir), o->keep, strerror(ENOMEM));
			goto out;
		}
		n++;
	}
	if (n)
		qsort(names, n, sizeof(*names), by_name);
	for (i = 0; i + o->keep < n; i++)
		if (unlinkat(dirfd(dp), names[i], 0) && errno != ENOENT)
			warning("failed to remove %s/%s: %s", esc(o->dir), esc(names[i]),
				strerror(errno));
out:
	for (i = 0; i < n; i++)
		free(names[i]);
	free(names);
	closedir(dp);
}

/*
 * Records of exited processes.  The module sends a process's mappings once
 * per profile, and a run of weeks meets many processes: their records are
 * dropped once no window still open can hold their samples.  A process
 * seen gone (kill(pid, 0): ESRCH) at time T has no sample after T, and the
 * windows up to T are written by T + every + WINDOWS_HOLD_NS; its records
 * go when it is still gone a window later than that.
 */
struct gone {
	uint32_t pid;
	uint64_t since;			/* CLOCK_MONOTONIC ns */
};

static hashval_t gone_hash(const void *e)
{
	return ((const struct gone *)e)->pid * 2654435761u;
}

static int gone_eq(const void *a, const void *b)
{
	return ((const struct gone *)a)->pid == ((const struct gone *)b)->pid;
}

struct prune {
	struct windows *w;
	uint64_t now;
};

static bool pid_gone(uint32_t pid, void *arg)
{
	struct prune *pr = arg;
	struct gone key = { .pid = pid }, *g;
	void **slot;

	if (!kill((pid_t)pid, 0) || errno != ESRCH) {
		htab_remove_elt(pr->w->gone, &key);
		return false;
	}
	slot = htab_find_slot(pr->w->gone, &key, INSERT);
	if (!slot)
		return false;
	g = *slot;
	if (!g) {
		g = malloc(sizeof(*g));
		if (!g) {
			htab_clear_slot(pr->w->gone, slot);
			return false;
		}
		*g = (struct gone){ .pid = pid, .since = pr->now };
		*slot = g;
		return false;
	}
	if (pr->now - g->since < 2 * pr->w->every_ns + WINDOWS_HOLD_NS)
		return false;
	/* a window still waiting to be written may hold its samples */
	if (pr->w->nr_open &&
	    profile__header(pr->w->open[0].p)->start_time_ns <= g->since)
		return false;
	htab_clear_slot(pr->w->gone, slot);
	/* what was read of its Python code goes with its mappings */
	pipeline__forget_pid(pr->w->o->pl, pid);
	return true;
}

static void prune(struct windows *w)
{
	struct prune pr = { .w = w };
	struct timespec ts;

	if (!w->gone)
		return;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	pr.now = ts.tv_sec * 1000000000ull + ts.tv_nsec;
	w->dropped += profile__drop_pids(w->maps, pid_gone, &pr);
	/* the periods the windows still open need, no older ones */
	if (w->nr_open)
		profile__drop_periods(w->maps,
			profile__header(w->open[0].p)->start_time_ns);
}

/*
 * What converts a window, in a child (boxed.h): the window symbolized and
 * written out in memory (answer.h: a grandchild bounded by
 * boxed_symbolize, then one without symbols if that fails), the bytes to
 * out, a memory file the reader copies into the window's file.  Its wall
 * time: both conversions at their limit, and a minute.
 */
static const struct boxed_limits convert_limits = {
	.wall_seconds = 2 * 300 + 60,
};

struct convert {
	const struct profile *p;
	struct resolve_opts ro;
	const struct output_opts *oo;
	const char *path;
	uint64_t k;
};

static int convert(void *arg, FILE *out)
{
	const struct convert *c = arg;
	char *body = NULL, why[160];
	size_t len = 0;
	int err;

	if (answer__build(c->p, &c->ro, c->oo, NULL, c->path, &body, &len,
			  why, sizeof(why))) {
		warning("window %llu: failed to write it out: %s",
			(unsigned long long)c->k, why);
		return -1;
	}
	err = len && fwrite(body, 1, len, out) != len ? -1 : 0;
	free(body);
	return err;
}

/* The window being written could not be: counted and said. */
static void windows__lost(struct windows *w)
{
	struct writing *wr = &w->wr;

	w->lost++;
	w->lost_samples += wr->samples;
	warning("window %llu lost: %s was not written (%llu samples)",
		(unsigned long long)wr->k, esc(wr->path),
		(unsigned long long)wr->samples);
	rotate(w->o);
}

/*
 * The window's file from what its child wrote into wr->fd (a full disk,
 * EIO, the directory gone: atomicfile.c says why; the window is lost, not
 * the run: the next one may have room, all the more once --keep rotated).
 * 0, or -1 if it was lost.
 */
static int windows__save(struct windows *w)
{
	struct writing *wr = &w->wr;
	struct atomicfile *out;
	struct stat st;
	void *body = NULL;
	bool bad;

	if (fstat(wr->fd, &st)) {
		warning("window %llu: failed to write it out: %s",
			(unsigned long long)wr->k, strerror(errno));
		return -1;
	}
	if (st.st_size) {
		body = mmap(NULL, st.st_size, PROT_READ, MAP_PRIVATE, wr->fd, 0);
		if (body == MAP_FAILED) {
			warning("window %llu: failed to write it out: %s",
				(unsigned long long)wr->k, strerror(errno));
			return -1;
		}
	}
	out = atomicfile__open_new(wr->path);
	if (out && w->o->tmp_path && atomicfile__tmp_path(out))
		snprintf(w->o->tmp_path, w->o->tmp_path_size, "%s",
			 atomicfile__tmp_path(out));
	if (out && st.st_size &&
	    fwrite(body, 1, st.st_size, atomicfile__stream(out)) !=
	    (size_t)st.st_size)
		warning("failed to write %s: %s", esc(atomicfile__name(out)),
			strerror(errno));
	bad = !out || ferror(atomicfile__stream(out));
	if (!bad)
		bad = atomicfile__commit(out) != 0;
	else
		atomicfile__abort(out);
	if (w->o->tmp_path)
		w->o->tmp_path[0] = '\0';
	if (body)
		munmap(body, st.st_size);
	return bad ? -1 : 0;
}

/*
 * Has the window being written been converted?  Then its file is written
 * (or it is lost: counted, said) and 0; 1 while its child runs (block
 * false; block true waits for it).
 */
static int windows__reap(struct windows *w, bool block)
{
	struct writing *wr = &w->wr;
	char why[160];
	int ret;

	if (!wr->busy)
		return 0;
	ret = boxed__wait(&wr->c, block, why, sizeof(why));
	if (ret == 1)
		return 1;
	wr->busy = false;
	if (ret)
		warning("window %llu: failed to write it out: %s",
			(unsigned long long)wr->k, why);
	if (ret || windows__save(w)) {
		windows__lost(w);
	} else {
		w->written++;
		w->samples += wr->samples;
		fprintf(stderr, PROG_NAME ": wrote %s: window %llu, +%.3f s to +%.3f s, %llu samples\n",
			esc(wr->path), (unsigned long long)wr->k,
			wr->from_ns / 1e9, wr->to_ns / 1e9,
			(unsigned long long)wr->samples);
		rotate(w->o);
	}
	close(wr->fd);
	wr->fd = -1;
	return 0;
}

/*
 * Hand the oldest open window to a child that converts it (none may be
 * converting); end: the END record if it is the last.  The reader reads
 * on meanwhile: windows__reap() writes the file once the child is done.
 * The child is a copy of this process as it is now: libdw reads users'
 * files there (answer.h), for a run of weeks.  0, or -1 (out of memory).
 */
static int windows__hand(struct windows *w, const struct cprof_end *end)
{
	struct window win = w->open[0];
	const struct cprof_header *h = profile__header(win.p);
	struct writing *wr = &w->wr;
	struct convert job;
	char name[64], why[160];
	struct tm tm;
	time_t sec;
	int err = -1;

	memmove(w->open, w->open + 1, --w->nr_open * sizeof(w->open[0]));
	if (end && profile__add(win.p, &end->rec))
		goto out;
	sec = h->start_realtime_ns / 1000000000;
	if (!gmtime_r(&sec, &tm) ||
	    !strftime(name, sizeof(name), "cprof-%Y%m%dT%H%M%SZ", &tm)) {
		fail("failed to name the window starting at %llu ns",
		     (unsigned long long)h->start_realtime_ns);
		goto out;
	}
	err = 0;
	snprintf(wr->path, sizeof(wr->path), "%s/%s%s", w->o->dir, name,
		 extension(w->o->out.format));
	wr->k = win.k;
	wr->samples = profile__nr_records(win.p);
	wr->from_ns = h->start_time_ns - w->hdr.start_time_ns;
	wr->to_ns = wr->from_ns + (end ? end->duration_ns : h->duration_ns);
	job = (struct convert){
		.p = win.p, .oo = &w->o->out, .path = wr->path, .k = win.k,
	};
	pipeline__resolve_opts(w->o->pl, &job.ro);
	/* too far behind: without symbols, a fraction of the cost, to catch up */
	if (job.ro.symbolize && w->nr_open > WINDOWS_BEHIND_MAX) {
		job.ro.symbolize = false;
		if (!w->plain++)
			warning("window %llu is written with addresses only, as are later ones while more than %d wait: symbolizing them is slower than they come",
				(unsigned long long)win.k, WINDOWS_BEHIND_MAX);
	}
	wr->fd = memfd_create("cprof-window", MFD_CLOEXEC);
	if (wr->fd < 0)
		snprintf(why, sizeof(why), "no memory file: %s",
			 strerror(errno));
	else if (!boxed__start(&wr->c, convert, &job, wr->fd,
			       &convert_limits, why, sizeof(why)))
		wr->busy = true;
	if (!wr->busy) {
		warning("window %llu: failed to write it out: %s",
			(unsigned long long)win.k, why);
		windows__lost(w);
		if (wr->fd >= 0)
			close(wr->fd);
		wr->fd = -1;
	}
out:
	prune(w);
	/* the tables of programs deleted meanwhile */
	pipeline__sweep(w->o->pl);
	profile__free(win.p);
	return err;
}

/* Open windows up to number k; the one holding k, or NULL. */
static struct profile *windows__get(struct windows *w, uint64_t k)
{
	while (w->next_k <= k) {
		struct cprof_header h = w->hdr;
		struct window *win;

		if (w->nr_open == WINDOWS_OPEN_MAX) {
			/* bounded: the oldest waits no longer, the reader does */
			if (windows__reap(w, false) == 1) {
				w->waited++;
				windows__reap(w, true);
			}
			if (windows__hand(w, NULL))
				return NULL;
		}
		h.start_time_ns += w->next_k * w->every_ns;
		h.start_realtime_ns += w->next_k * w->every_ns;
		h.duration_ns = w->every_ns;
		win = &w->open[w->nr_open];
		win->k = w->next_k;
		win->p = profile__new_window(&h, w->maps);
		if (!win->p) {
			fail("failed to aggregate samples: %s", strerror(ENOMEM));
			return NULL;
		}
		w->nr_open++;
		w->next_k++;
	}
	if (k < w->open[0].k) {
		w->late++;
		return w->open[0].p;
	}
	return w->open[k - w->open[0].k].p;
}

/*
 * Hand the oldest window that ended WINDOWS_HOLD_NS or more before now to
 * be written, once the one before is: windows wait here, in the order
 * they end, while a slower conversion runs.
 */
static int windows__flush(struct windows *w)
{
	struct timespec ts;
	uint64_t now;

	if (windows__reap(w, false) == 1)
		return 0;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	now = ts.tv_sec * 1000000000ull + ts.tv_nsec;
	/* keep one open: late samples go there */
	while (w->nr_open > 1 && !w->wr.busy) {
		const struct cprof_header *h = profile__header(w->open[0].p);

		if (h->start_time_ns + h->duration_ns + WINDOWS_HOLD_NS > now ||
		    ingest__holds_before(w->in, h->start_time_ns +
						h->duration_ns))
			break;
		if (windows__hand(w, NULL))
			return -1;
	}
	return 0;
}

/*
 * No record for a while (the machine idles, nothing is sampled): a timer's
 * signal interrupts the read, and the windows whose time is over are
 * written all the same, the current one opened if no record did.
 */
static int windows__idle(void *arg)
{
	struct windows *w = arg;
	struct timespec ts;
	uint64_t now, k;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	now = ts.tv_sec * 1000000000ull + ts.tv_nsec;
	if (now < w->hdr.start_time_ns)
		return 0;
	k = (now - w->hdr.start_time_ns) / w->every_ns;
	/* not a stream of now (one read back): the clock says nothing */
	if (k > w->next_k + WINDOWS_OPEN_MAX)
		return 0;
	if (!windows__get(w, k))
		return -1;
	return w->nr_open > 1 || w->wr.busy ? windows__flush(w) : 0;
}

static void on_tick(int sig)
{
	(void)sig;	/* only to interrupt the read */
}

/*
 * A timer that interrupts this thread's reads once a second (SIGALRM to
 * this thread only: the unwind-table loader's thread must not take it).
 */
static int idle_timer(timer_t *timer)
{
	struct sigaction sa = { .sa_handler = on_tick };	/* no SA_RESTART */
	struct sigevent sev = {
		.sigev_notify = SIGEV_THREAD_ID,
		.sigev_signo = SIGALRM,
	};
	struct itimerspec its = {
		.it_value = { .tv_sec = 1 }, .it_interval = { .tv_sec = 1 },
	};

	sev._sigev_un._tid = gettid();
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGALRM, &sa, NULL) ||
	    timer_create(CLOCK_MONOTONIC, &sev, timer))
		return -1;
	if (timer_settime(*timer, 0, &its, NULL)) {
		timer_delete(*timer);
		return -1;
	}
	return 0;
}

/* The stream ended: the last window ends with it, and all are written. */
static int windows__finish(struct windows *w, const struct cprof_end *end)
{
	/* the ticks may outlive the stop request by a little */
	uint64_t dur = end->duration_ns > w->last_t ? end->duration_ns :
						       w->last_t + 1;
	uint64_t stop = w->hdr.start_time_ns + dur;
	uint64_t last = (dur - 1) / w->every_ns;

	if (last >= w->next_k && !windows__get(w, last))
		return -1;
	while (w->nr_open) {
		const struct cprof_header *h = profile__header(w->open[0].p);
		struct cprof_end e = *end;
		uint64_t other;

		windows__reap(w, true);
		if (w->nr_open > 1) {
			if (windows__hand(w, NULL))
				return -1;
			continue;
		}
		/* the last window: from its start to the profile's end */
		e.duration_ns = stop > h->start_time_ns ?
				stop - h->start_time_ns : 0;
		e.samples = profile__nr_records(w->open[0].p);
		e.lost = profile__lost_total(w->open[0].p, &other);
		if (windows__hand(w, &e))
			return -1;
	}
	windows__reap(w, true);
	fprintf(stderr, PROG_NAME ": %llu windows of %ld s, %llu samples (the module's END record counts %llu)%s\n",
		(unsigned long long)w->written, w->o->every,
		(unsigned long long)(w->samples + w->lost_samples),
		(unsigned long long)end->samples,
		w->late ? "; some arrived after their window was written" : "");
	if (w->late)
		warning("%llu samples arrived after their window was written: they are in the oldest window still open",
			(unsigned long long)w->late);
	if (w->plain)
		warning("%llu windows were written with addresses only: symbolizing them was slower than they came",
			(unsigned long long)w->plain);
	if (w->waited)
		warning("the reader waited %llu times for a window to be written: %d windows were waiting (writing them is slower than they come)",
			(unsigned long long)w->waited, WINDOWS_OPEN_MAX);
	if (w->lost) {
		fail("%llu windows (%llu samples) could not be written",
		     (unsigned long long)w->lost,
		     (unsigned long long)w->lost_samples);
		return 1;
	}
	return 0;
}

/* ingest's record op: samples and losses to their window, the rest to maps. */
static int windows__record(void *arg, struct profile *maps,
			   const struct cprof_rec *rec)
{
	struct windows *w = arg;
	struct profile *win;
	uint64_t t;

	switch (rec->type) {
	case CPROF_REC_SAMPLE:
	case CPROF_REC_LOST:
		/* time_ns follows the record header in both */
		t = ((const struct cprof_sample *)rec)->time_ns;
		t = t > w->hdr.start_time_ns ? t - w->hdr.start_time_ns : 0;
		if (rec->type == CPROF_REC_SAMPLE && t > w->last_t)
			w->last_t = t;
		win = windows__get(w, t / w->every_ns);
		if (!win)
			return -1;
		if (profile__add(win, rec))
			return fail("failed to aggregate samples: %s",
				    strerror(ENOMEM));
		break;
	default:
		if (profile__add(maps, rec))
			return fail("failed to aggregate samples: %s",
				    strerror(ENOMEM));
		if (rec->type == CPROF_REC_END) {
			w->lost_end = windows__finish(w,
					(const struct cprof_end *)rec);
			if (w->lost_end < 0)
				return -1;
		}
	}
	return w->nr_open > 1 || w->wr.busy ? windows__flush(w) : 0;
}

int windows__run(int fd, const char *name, const struct windows_opts *o)
{
	struct windows w = {
		.o = o, .every_ns = o->every * 1000000000ull, .wr.fd = -1,
	};
	struct ingest_ops ops = {
		.record = windows__record, .idle = windows__idle, .arg = &w,
	};
	struct ingest *in;
	bool timing = false;
	timer_t timer;
	int err = -1;

	in = pipeline__open(o->pl, fd, name);
	if (!in)
		goto out;
	w.hdr = *ingest__header(in);
	w.maps = ingest__profile(in);
	w.in = in;
	w.gone = htab_create_alloc(64, gone_hash, gone_eq, free, calloc, free);
	if (!w.gone) {
		fail("failed to aggregate samples: %s", strerror(ENOMEM));
		goto out;
	}
	if (idle_timer(&timer))
		warning("no timer: a window is written only when a record arrives after its end: %s",
			strerror(errno));
	else
		timing = true;
	err = pipeline__read(o->pl, &ops, NULL);
	if (!err)
		err = w.lost_end;
	if (timing)
		timer_delete(timer);
out:
	if (w.wr.busy) {
		boxed__stop(&w.wr.c);
		close(w.wr.fd);
	}
	while (w.nr_open)
		profile__free(w.open[--w.nr_open].p);
	if (w.gone)
		htab_delete(w.gone);
	pipeline__close(o->pl);
	return err;
}
