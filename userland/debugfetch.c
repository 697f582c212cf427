// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * debugfetch - debug files from debuginfod servers within one time budget:
 * debugfetch.h.
 */
#include "debugfetch.h"

#include <elfutils/debuginfod.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cprof_format.h"
#include "strtab.h"
#include "util.h"

static struct {
	debuginfod_client *client;
	struct strtab *asked;	/* build IDs asked this run, in hex */
	bool *found;		/* by asked's index: was it there? */
	size_t found_cap;
	double budget;		/* seconds, the whole run */
	double start;		/* of the query under way */
	bool waited;		/* it asked a server (the cache did not have it) */
	bool cut;		/* and the budget cut it */
	struct debugfetch_stats st;
} df = { .budget = DEBUGFETCH_SECONDS_DEFAULT };

bool debugfetch_enabled(void)
{
	const char *urls = getenv("DEBUGINFOD_URLS");

	return urls && *urls;
}

void debugfetch_set_budget(double seconds)
{
	df.budget = seconds > 0 ? seconds : 0;
}

/*
 * libdebuginfod's progress callback: called while a query waits on a
 * server (never for a file in the cache), about once a second.  Non-zero
 * ends the query.
 */
static int on_progress(debuginfod_client *client, long done, long total)
{
	(void)client;
	(void)done;
	(void)total;
	df.waited = true;
	if (df.st.seconds + (monotonic_seconds() - df.start) < df.budget)
		return 0;
	df.cut = true;
	return 1;
}

/*
 * Was build_id asked before in this run?  libdwfl asks for a module's
 * debug file more than once (for its symbols, for its DWARF): a file is
 * asked for, and counted, once.  -1: new (*i its index), 0: not there,
 * 1: there (in the cache now).
 */
static int asked_before(const unsigned char *build_id, int len, int64_t *i)
{
	char hex[2 * CPROF_BUILD_ID_MAX + 1];
	size_t before;

	*i = -1;
	if (len > CPROF_BUILD_ID_MAX)
		return -1;
	if (!df.asked && !(df.asked = strtab__new()))
		return -1;
	hex_encode(hex, build_id, len);
	before = strtab__nr(df.asked);
	*i = strtab__intern(df.asked, hex);
	if (*i < 0 || grow_array(&df.found, &df.found_cap, *i + 1,
				 sizeof(*df.found))) {
		*i = -1;
		return -1;
	}
	if ((size_t)*i == before) {
		df.found[*i] = false;
		return -1;
	}
	return df.found[*i];
}

int debugfetch_find(const unsigned char *build_id, int len, char **path)
{
	bool spent = df.st.seconds >= df.budget;
	int64_t i;
	int fd, before;

	*path = NULL;
	if (!debugfetch_enabled() || len <= 0)
		return -1;
	if (!df.client) {
		df.client = debuginfod_begin();
		if (!df.client)
			return -1;
		debuginfod_set_progressfn(df.client, on_progress);
	}
	before = asked_before(build_id, len, &i);
	if (before == 0)
		return -1;
	if (before == 1)
		return debuginfod_find_debuginfo(df.client, build_id, len,
						 path);
	df.waited = false;
	df.cut = false;
	df.start = monotonic_seconds();
	fd = debuginfod_find_debuginfo(df.client, build_id, len, path);
	if (df.waited)
		df.st.seconds += monotonic_seconds() - df.start;
	if (fd >= 0) {
		df.st.found++;
		if (i >= 0)
			df.found[i] = true;
		return fd;
	}
	free(*path);
	*path = NULL;
	if (df.cut && spent)
		df.st.unasked++;
	else if (df.cut)
		df.st.cut++;
	else
		df.st.missing++;
	return -1;
}

void debugfetch_get_stats(struct debugfetch_stats *st)
{
	*st = df.st;
	st->budget = df.budget;
}

void debugfetch_summary(void)
{
	const struct debugfetch_stats *st = &df.st;
	char why[160] = "";
	size_t n = 0;

	if (!st->missing && !st->cut && !st->unasked)
		return;
	if (st->missing)
		n += snprintf(why + n, sizeof(why) - n, "; %u not on the servers",
			      st->missing);
	if (st->cut && n < sizeof(why))
		n += snprintf(why + n, sizeof(why) - n,
			      "; %u cut off by the budget", st->cut);
	if (st->unasked && n < sizeof(why))
		snprintf(why + n, sizeof(why) - n,
			 "; %u not asked: the budget was spent", st->unasked);
	warning("debuginfod: %u debug file%s fetched%s, %.1f s of a %g s budget (the frames of the others keep their addresses)",
		st->found, st->found == 1 ? "" : "s", why, st->seconds,
		df.budget);
}

/* The queue: debugfetch.h. */
struct debugfetch_queue {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct strtab *seen;	/* build IDs queued, in hex */
	struct queued {
		unsigned char id[CPROF_BUILD_ID_MAX];
		int len;
	} *ids;
	size_t nr, cap, next;
	double start;		/* of the fetch under way */
	bool stop;		/* under lock; read unlocked by the callback */
};

/* Cut a fetch that takes too long, or when the queue stops. */
static int queue_progress(debuginfod_client *client, long done, long total)
{
	struct debugfetch_queue *q = debuginfod_get_user_data(client);

	(void)done;
	(void)total;
	return __atomic_load_n(&q->stop, __ATOMIC_RELAXED) ||
	       monotonic_seconds() - q->start > DEBUGFETCH_QUEUE_FILE_SECONDS;
}

static void *queue_main(void *arg)
{
	struct debugfetch_queue *q = arg;
	debuginfod_client *client = debuginfod_begin();
	struct queued one;
	char *path;
	int fd;

	if (client) {
		debuginfod_set_user_data(client, q);
		debuginfod_set_progressfn(client, queue_progress);
	}
	pthread_mutex_lock(&q->lock);
	for (;;) {
		while (!q->stop && q->next == q->nr)
			pthread_cond_wait(&q->cond, &q->lock);
		if (q->stop)
			break;
		one = q->ids[q->next++];
		pthread_mutex_unlock(&q->lock);
		if (client) {
			q->start = monotonic_seconds();
			path = NULL;
			fd = debuginfod_find_debuginfo(client, one.id, one.len,
						       &path);
			if (fd >= 0)
				close(fd);
			free(path);
		}
		pthread_mutex_lock(&q->lock);
	}
	pthread_mutex_unlock(&q->lock);
	if (client)
		debuginfod_end(client);
	return NULL;
}

struct debugfetch_queue *debugfetch_queue__start(void)
{
	struct debugfetch_queue *q;

	if (!debugfetch_enabled())
		return NULL;
	q = calloc(1, sizeof(*q));
	if (!q || !(q->seen = strtab__new())) {
		free(q);
		warning("debuginfod: %s: debug files not fetched in the background",
			strerror(ENOMEM));
		return NULL;
	}
	pthread_mutex_init(&q->lock, NULL);
	pthread_cond_init(&q->cond, NULL);
	if (pthread_create(&q->thread, NULL, queue_main, q)) {
		warning("debuginfod: no thread: debug files not fetched in the background");
		strtab__free(q->seen);
		free(q);
		return NULL;
	}
	return q;
}

void debugfetch_queue__note(struct debugfetch_queue *q,
			    const struct cprof_mmap *m)
{
	char hex[2 * CPROF_BUILD_ID_MAX + 1];
	size_t before;
	int64_t i;

	if (!q || !m->build_id_size || m->build_id_size > CPROF_BUILD_ID_MAX)
		return;
	hex_encode(hex, m->build_id, m->build_id_size);
	pthread_mutex_lock(&q->lock);
	before = strtab__nr(q->seen);
	if (before <= DEBUGFETCH_QUEUE_MAX &&
	    (i = strtab__intern(q->seen, hex)) >= 0 && (size_t)i == before &&
	    !grow_array(&q->ids, &q->cap, q->nr + 1, sizeof(*q->ids))) {
		memcpy(q->ids[q->nr].id, m->build_id, m->build_id_size);
		q->ids[q->nr].len = m->build_id_size;
		q->nr++;
		pthread_cond_signal(&q->cond);
	}
	pthread_mutex_unlock(&q->lock);
}

void debugfetch_queue__stop(struct debugfetch_queue *q)
{
	if (!q)
		return;
	pthread_mutex_lock(&q->lock);
	__atomic_store_n(&q->stop, true, __ATOMIC_RELAXED);
	pthread_cond_signal(&q->cond);
	pthread_mutex_unlock(&q->lock);
	pthread_join(q->thread, NULL);
	pthread_cond_destroy(&q->cond);
	pthread_mutex_destroy(&q->lock);
	strtab__free(q->seen);
	free(q->ids);
	free(q);
}
