// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * debugfetch - debug files from debuginfod servers within one time budget:
 * debugfetch.h.
 *
 * libdebuginfod is opened (dlopen()) when a server is first asked, not
 * linked: it brings libcurl and some twenty libraries with it, whose
 * loading every cprof-dump would pay before its profile starts.
 */
#include "symbolize/debugfetch.h"

#include <dlfcn.h>
#include <elfutils/debuginfod.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "cprof_format.h"
#include "lib/safeopen.h"
#include "lib/strtab.h"
#include "lib/util.h"

/* Longest build ID asked for (libdwfl takes up to 64 bytes). */
#define ID_MAX		64

/* libdebuginfod's functions, once it is opened; begin NULL: it is not. */
static struct {
	pthread_once_t once;
	debuginfod_client *(*begin)(void);
	void (*end)(debuginfod_client *c);
	void (*set_progressfn)(debuginfod_client *c,
			       debuginfod_progressfn_t fn);
	void (*set_user_data)(debuginfod_client *c, void *data);
	void *(*get_user_data)(debuginfod_client *c);
	int (*find_debuginfo)(debuginfod_client *c, const unsigned char *id,
			      int len, char **path);
} lib = { .once = PTHREAD_ONCE_INIT };

static void lib_open(void)
{
	void *h = dlopen("libdebuginfod.so.1", RTLD_NOW | RTLD_LOCAL);

	if (!h)
		return;
	*(void **)&lib.end = dlsym(h, "debuginfod_end");
	*(void **)&lib.set_progressfn = dlsym(h, "debuginfod_set_progressfn");
	*(void **)&lib.set_user_data = dlsym(h, "debuginfod_set_user_data");
	*(void **)&lib.get_user_data = dlsym(h, "debuginfod_get_user_data");
	*(void **)&lib.find_debuginfo = dlsym(h, "debuginfod_find_debuginfo");
	if (lib.end && lib.set_progressfn && lib.set_user_data &&
	    lib.get_user_data && lib.find_debuginfo)
		*(void **)&lib.begin = dlsym(h, "debuginfod_begin");
}

/* A client of libdebuginfod, opened at the first; NULL if none. */
static debuginfod_client *client_begin(void)
{
	pthread_once(&lib.once, lib_open);
	return lib.begin ? lib.begin() : NULL;
}

static struct {
	debuginfod_client *client;
	bool broken;		/* debuginfod_begin() failed: said once */
	bool quiet;		/* the cache only, and no summary */
	struct strtab *asked;	/* build IDs asked this run, in hex */
	bool *found;		/* by asked's index: was it there? */
	size_t found_cap;
	double budget;		/* seconds, the whole run */
	double start;		/* of the query under way */
	bool cut;		/* and the budget (or the disk) cut it */
	bool disk_full;		/* a download stopped for want of room */
	int last_err;		/* errno of the last failure not a miss */
	struct debugfetch_stats st;
} df = { .budget = DEBUGFETCH_SECONDS_DEFAULT };

bool debugfetch_enabled(void)
{
	const char *urls = getenv("DEBUGINFOD_URLS");

	return urls && *urls && !df.broken;
}

void debugfetch_set_budget(double seconds)
{
	df.budget = seconds > 0 ? seconds : 0;
}

void debugfetch_cache_only(void)
{
	df.budget = 0;
	df.quiet = true;
}

/*
 * Where libdebuginfod keeps its files: DEBUGINFOD_CACHE_PATH (which
 * debugfetch_setup() sets for root), else its default, $XDG_CACHE_HOME
 * or ~/.cache, then debuginfod_client.  NULL if none can be named.
 */
static const char *cache_dir(void)
{
	static char dir[4096];
	const char *env = getenv("DEBUGINFOD_CACHE_PATH");

	if (env && *env)
		return env;
	return user_cache_path(dir, sizeof(dir), "debuginfod_client");
}

void debugfetch_setup(void)
{
	static const char dir[] = DEBUGFETCH_CACHE_DIR;
	struct stat st;
	char parent[sizeof(dir)];

	/* a download may not be larger than a file cprof-dump would read */
	if (!debugfetch_enabled())
		return;
	if (!getenv("DEBUGINFOD_MAXSIZE") &&
	    setenv("DEBUGINFOD_MAXSIZE", DEBUGFETCH_FILE_MAX, 1))
		goto off;
	if (geteuid() != 0 || getenv("DEBUGINFOD_CACHE_PATH"))
		return;
	/*
	 * Root's cache is a directory only root may write, whatever HOME or
	 * XDG_CACHE_HOME an su or sudo -E left behind: libdebuginfod opens,
	 * writes and deletes files there with plain system calls.
	 */
	snprintf(parent, sizeof(parent), "%s", dir);
	*strrchr(parent, '/') = '\0';
	if ((mkdir(parent, 0755) && errno != EEXIST) ||
	    (mkdir(dir, 0700) && errno != EEXIST))
		goto off;
	if (lstat(dir, &st) || !S_ISDIR(st.st_mode) || st.st_uid != 0 ||
	    (st.st_mode & 0077) || lstat(parent, &st) ||
	    !S_ISDIR(st.st_mode) || st.st_uid != 0 || (st.st_mode & 0022)) {
		errno = EPERM;
		goto off;
	}
	if (!setenv("DEBUGINFOD_CACHE_PATH", dir, 1))
		return;
off:
	df.broken = true;
	warning("debuginfod: %s: %s (it must be a directory only root may write): debug files not fetched",
		esc(dir), strerror(errno));
}

/* Too little room left where the cache is: stop downloading. */
static bool disk_full(void)
{
	const char *dir = cache_dir();
	unsigned long long avail;
	struct statvfs sv;

	if (!dir || statvfs(dir, &sv))
		return false;
	avail = (unsigned long long)sv.f_bavail * sv.f_frsize;
	return avail < DEBUGFETCH_FREE_MIN ||
	       avail < (unsigned long long)sv.f_blocks * sv.f_frsize / 100 *
		       DEBUGFETCH_FREE_PERCENT;
}

/*
 * libdebuginfod's progress callback: called while a query waits on a
 * server, about once a second.  Non-zero ends the query.
 */
static int on_progress(debuginfod_client *client, long done, long total)
{
	(void)client;
	(void)done;
	(void)total;
	if (df.st.seconds + (monotonic_seconds() - df.start) >= df.budget)
		df.cut = true;
	else if (disk_full())
		df.cut = df.disk_full = true;
	return df.cut;
}

/*
 * Was build_id asked before in this run?  libdwfl asks for a module's
 * debug file more than once (for its symbols, for its DWARF): a file is
 * asked for, and counted, once.  -1: new (*i its index, -1 if it cannot
 * be remembered), 0: not there, 1: there (in the cache now).
 */
static int asked_before(const char *hex, int64_t *i)
{
	size_t before;

	*i = -1;
	if (!df.asked && !(df.asked = strtab__new()))
		return -1;
	before = strtab__nr(df.asked);
	/* room first: an interned ID always has its slot */
	if (grow_array(&df.found, &df.found_cap, before + 1,
		       sizeof(*df.found)))
		return -1;
	*i = strtab__intern(df.asked, hex);
	if (*i < 0)
		return -1;
	if ((size_t)*i == before) {
		df.found[*i] = false;
		return -1;
	}
	return df.found[*i];
}

/* The debug file of hex in the cache, or -1 (an empty file: a miss). */
static int cached(const char *hex, char **path)
{
	const char *dir = cache_dir();
	struct stat st;
	char *p;
	int fd;

	if (!dir || asprintf(&p, "%s/%s/debuginfo", dir, hex) < 0)
		return -1;
	fd = safe_open(-1, p, &st);
	if (fd >= 0 && st.st_size > 0) {
		*path = p;
		return fd;
	}
	if (fd >= 0)
		close(fd);
	free(p);
	return -1;
}

int debugfetch_find(const unsigned char *build_id, int len, char **path)
{
	char hex[2 * ID_MAX + 1];
	int64_t i;
	int fd, before;

	*path = NULL;
	if (!debugfetch_enabled() || len <= 0 || len > ID_MAX)
		return -1;
	hex_encode(hex, build_id, len);
	before = asked_before(hex, &i);
	if (before == 0)
		return -1;
	/* the cache first, without libdebuginfod: no server, no thread */
	fd = cached(hex, path);
	if (fd >= 0 || before == 1) {
		if (fd >= 0 && before < 0)
			df.st.found++;
		if (fd >= 0 && i >= 0)
			df.found[i] = true;
		return fd;
	}
	if (df.st.seconds >= df.budget) {
		df.st.unasked++;
		return -1;
	}
	if (!df.client) {
		df.client = client_begin();
		if (!df.client) {
			df.broken = true;
			warning("debuginfod: no client (libdebuginfod): debug files not fetched");
			return -1;
		}
		lib.set_progressfn(df.client, on_progress);
	}
	df.cut = false;
	df.start = monotonic_seconds();
	fd = lib.find_debuginfo(df.client, build_id, len, path);
	/* the cache was read above: this call went to a server */
	df.st.seconds += monotonic_seconds() - df.start;
	if (fd >= 0) {
		df.st.found++;
		if (i >= 0)
			df.found[i] = true;
		return fd;
	}
	free(*path);
	*path = NULL;
	if (df.cut)
		df.st.cut++;
	else if (fd == -ENOENT)
		df.st.missing++;
	else {
		df.st.failed++;
		df.last_err = -fd;
	}
	return -1;
}

void debugfetch_get_stats(struct debugfetch_stats *st)
{
	*st = df.st;
}

void debugfetch_summary(void)
{
	const struct debugfetch_stats *st = &df.st;
	char why[256] = "";
	size_t n = 0;

	if (df.quiet || (!st->missing && !st->cut && !st->unasked &&
			 !st->failed))
		return;
	if (st->missing)
		n += snprintf(why + n, sizeof(why) - n, "; %u not on the servers",
			      st->missing);
	if (st->failed && n < sizeof(why))
		n += snprintf(why + n, sizeof(why) - n, "; %u failed (%s)",
			      st->failed, strerror(df.last_err));
	if (st->cut && n < sizeof(why))
		n += snprintf(why + n, sizeof(why) - n, "; %u cut off by %s",
			      st->cut, df.disk_full ?
			      "the budget or a nearly full disk" : "the budget");
	if (st->unasked && n < sizeof(why))
		snprintf(why + n, sizeof(why) - n,
			 "; %u not asked: the budget was spent", st->unasked);
	warning("debuginfod: %u debug file%s fetched or cached%s, %.1f s of a %g s budget (the frames of the others keep their addresses)",
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

/* Cut a fetch that takes too long, fills the disk, or when the queue stops. */
static int queue_progress(debuginfod_client *client, long done, long total)
{
	struct debugfetch_queue *q = lib.get_user_data(client);

	(void)done;
	(void)total;
	return __atomic_load_n(&q->stop, __ATOMIC_RELAXED) ||
	       monotonic_seconds() - q->start > DEBUGFETCH_QUEUE_FILE_SECONDS ||
	       disk_full();
}

static void *queue_main(void *arg)
{
	struct debugfetch_queue *q = arg;
	debuginfod_client *client;
	struct queued one;
	sigset_t all;
	char *path;
	int fd;

	/* the process's signals are for its other threads */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	client = client_begin();
	if (!client)
		warning("debuginfod: no client (libdebuginfod): debug files not fetched in the background");
	if (client) {
		lib.set_user_data(client, q);
		lib.set_progressfn(client, queue_progress);
	}
	pthread_mutex_lock(&q->lock);
	for (;;) {
		while (!q->stop && q->next == q->nr)
			pthread_cond_wait(&q->cond, &q->lock);
		if (q->stop)
			break;
		one = q->ids[q->next++];
		if (q->next == q->nr)
			q->next = q->nr = 0;	/* drained: start over */
		pthread_mutex_unlock(&q->lock);
		if (client) {
			q->start = monotonic_seconds();
			path = NULL;
			fd = lib.find_debuginfo(client, one.id, one.len,
						       &path);
			if (fd >= 0)
				close(fd);
			free(path);
		}
		pthread_mutex_lock(&q->lock);
	}
	pthread_mutex_unlock(&q->lock);
	if (client)
		lib.end(client);
	return NULL;
}

struct debugfetch_queue *debugfetch_queue__start(void)
{
	struct debugfetch_queue *q;

	if (!debugfetch_enabled() || df.budget <= 0)
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
	/*
	 * Bounded whatever the stream names (any user can map files with
	 * made-up build IDs): at most DEBUGFETCH_QUEUE_PENDING waiting (the
	 * rest come again with a later request's mappings), and the set of
	 * those asked for starts over at DEBUGFETCH_QUEUE_MAX.
	 */
	if (strtab__nr(q->seen) > DEBUGFETCH_QUEUE_MAX) {
		struct strtab *fresh = strtab__new();

		if (fresh) {
			strtab__free(q->seen);
			q->seen = fresh;
		}
	}
	before = strtab__nr(q->seen);
	if (q->nr - q->next < DEBUGFETCH_QUEUE_PENDING &&
	    !grow_array(&q->ids, &q->cap, q->nr + 1, sizeof(*q->ids)) &&
	    (i = strtab__intern(q->seen, hex)) >= 0 && (size_t)i == before) {
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
