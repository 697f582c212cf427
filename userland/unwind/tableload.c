// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Unwind tables for the module: which files, compiled when, written how.
 *
 * The module walks user stacks of code without frame pointers with tables
 * that userland compiles from each file's call frame information (cfi.c)
 * and writes to /proc/cprof/unwind, keyed by the file as fstat() describes
 * it (device, inode, size, mtime), which the module compares with what the
 * kernel's stat says of the mapped file.  Files come from two places, in
 * two queues, the first always taken first:
 *  - each mapping record of the stream (tableload__note()): what the
 *    profile samples, programs running, started or a library loaded since;
 *  - as a profile starts, every executable file mapping of the processes
 *    to profile (tableload__scan(), or tableload__scan_cached(): the
 *    cache's tables only);
 * and, not a file, the vDSO (from this process's own).  With a table cache
 * (tablecache.c), a file's table is read back rather than compiled, and a
 * loader also loads the cache's most recently used tables that the
 * module does not hold, so programs that ran before have theirs from
 * their first samples.  One thread compiles and writes, so neither the
 * stream reader nor the profile's start waits for it; the module copies
 * the stacks of samples taken before a file's table arrives (ingest.c).
 *
 * A mapping's file is opened through /proc/PID/map_files (the very file
 * mapped, even if its path was replaced; this needs CAP_SYS_ADMIN), else
 * by its path resolved inside the process's root, else (the process is
 * gone) by its path, and only ever if it is a regular file (safeopen.h):
 * the table is keyed by the file it was made from, so if that is not the
 * mapped one, it is not used.  Each file is compiled once: the set of files seen starts with
 * the tables the module holds.
 *
 * A file that is a CPython interpreter pyrt knows (the executable or
 * libpython) gets its layout with its table (CPROF_UTABLE_PY): read from
 * the descriptor its table was compiled or looked up by, or, for a table
 * preloaded from the cache, from the file at the cache's path if it is
 * still the file the cache describes (else the table goes without).  A
 * table the module held before this loader started carries what was
 * written with it then.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <hashtab.h>
#include <inttypes.h>
#include <linux/magic.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "lib/boxed.h"
#include "unwind/cfi.h"
#include "python/pyrt.h"
#include "lib/safeopen.h"
#include "stream/stream.h"
#include "unwind/tablecache.h"
#include "unwind/tableenc.h"
#include "unwind/tablekeep.h"
#include "unwind/tableload.h"
#include "lib/util.h"

/*
 * What a queued item asks of the loader's thread.  Two queues: what a
 * profile's stream asked for (its mapping records, stack copies' tables)
 * is taken before the background's (the scan of what runs, the cache's
 * preload), so a program sampled waits for no other's compile but the
 * one under way.
 */
enum item_kind {
	ITEM_MAPPING,			/* the table of a mapping's file */
	ITEM_SWEEP,			/* sweep the tables */
	ITEM_VDSO,			/* the vDSO's table */
	ITEM_PRELOAD,			/* the cache's tables */
	ITEM_KEEP,			/* a module's table, for tablekeep only */
	ITEM_SCAN,			/* queue what pid (0: all) maps */
};

struct tableload_item {
	struct tableload_item *next;
	enum item_kind kind;
	pid_t pid;
	bool fuse;			/* the mapping's file is on FUSE */
	bool cached_only;		/* no compile: a table cached, or none */
	uint64_t start, end;
	char path[];
};

/* A file whose table has code the tick cannot walk through, and why. */
struct stopped {
	uint64_t bytes[CFI_STOP_NR];	/* struct cfi_table's stop_bytes */
	char key[96];			/* as in seen */
	char path[];
};

#define STOPPED_MAX	64		/* files kept, the first ones */

struct tableload_queue {
	struct tableload_item *head, **tail;
};

/* How long tableload__stop() waits for the loader thread at most. */
#define STOP_WAIT_SECONDS	10

struct tableload {
	int fd;				/* PROC_DIR/unwind */
	char *list_path;		/* the same, opened to read its list */
	char *ctl_path;			/* PROC_DIR/ctl: unwind_mb */
	struct tablecache *cache;	/* NULL: none */
	struct tablekeep *keep;		/* the tables written, for ustack.c */
	size_t module_tables;		/* those it held at start */
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;		/* queue or busy changed */
	struct tableload_queue asked, background;
	struct tableload_queue *busy;	/* the queue of the item held */
	bool loading;			/* the module was told CPROF_UTABLE_BUSY */
	double busy_said;		/* monotonic_seconds() it was told */
	bool stopping;
	volatile sig_atomic_t quit;	/* stopping: a compile in flight ends */
	bool exited;			/* the thread is at its end */
	bool abandoned;			/* ... and frees l: no one waits */
	htab_t seen;			/* "DEV INO SIZE MTIME" strings */
	htab_t loaded;			/* struct loaded: the tables written */
	htab_t evictions;		/* struct evictions, by key */
	double last_sweep;		/* monotonic_seconds() */
	struct tableload_stats stats;
	struct stopped *stopped[STOPPED_MAX];	/* by the thread, locked */
	size_t nstopped;
	/*
	 * Preloaded tables' stops, the thread's own: said once a program
	 * maps the file (a preloaded file may not be the profile's).
	 */
	struct stopped *preloaded[STOPPED_MAX];
	size_t npreloaded;
};

/*
 * A table in the module: one this loader wrote, and the path its file was
 * opened by; or one it found there at start (path ""), whose path it does
 * not know.
 */
struct loaded {
	char key[96];			/* as in seen */
	uint32_t dev;
	uint64_t ino, size;
	int64_t mtime_ns;
	char path[];
};

/* tableload_set_python()'s: layouts with the tables */
static bool python_on = true;

void tableload_set_python(bool on)
{
	python_on = on;
}

/* tableload_set_cache()'s directory; NULL: no cache. */
static char *cache_dir;
static bool cache_explicit;

void tableload_set_cache(const char *dir)
{
	cache_explicit = dir != NULL;
	if (!dir)
		dir = tablecache__default_dir();
	free(cache_dir);
	cache_dir = dir && *dir ? strdup(dir) : NULL;
}

/* How often the module evicted a file's table (a key of seen). */
struct evictions {
	char key[96];			/* first: a string to htab */
	unsigned int n;
};

/*
 * A sweep loads an evicted table of a file still mapped again at once,
 * this many times at most for one file (a second mapping record still
 * loads it later): when the programs that run need more than unwind_mb,
 * tables that keep evicting each other are not compiled every minute.
 */
#define RELOADS_MAX	2

/* An executable file mapping seen by a sweep, one per inode. */
struct mapped {
	char ino[24];			/* first: a string to htab */
	pid_t pid;
	bool fuse;			/* its file is on FUSE */
	uint64_t start, end;
	char path[];
};

/*
 * The devices of the FUSE mounts (fuse, fuse.*, fuseblk) a process sees,
 * from /proc/PID/mountinfo, kept while the next process is in the same
 * mount namespace.  A mapping's device in /proc/PID/maps is its file
 * system's, as mountinfo lists it: a file on FUSE is known as such before
 * anything asks its server (which may never answer) for it.
 */
struct fusedevs {
	uint64_t ns;			/* the namespace's inode; 0: none */
	size_t n, alloc;
	dev_t *dev;
};

/* Read the FUSE mounts pid sees, unless fu holds its namespace's. */
static void fusedevs_of(struct fusedevs *fu, pid_t pid)
{
	char path[64], *line = NULL;
	unsigned int maj, min;
	size_t size = 0;
	struct stat ns;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/ns/mnt", (int)pid);
	if (stat(path, &ns))
		return;
	if (fu->ns == ns.st_ino)
		return;
	fu->ns = ns.st_ino;
	fu->n = 0;
	snprintf(path, sizeof(path), "/proc/%d/mountinfo", (int)pid);
	f = fopen(path, "re");
	while (f && getline(&line, &size, f) > 0) {
		const char *type = strstr(line, " - ");

		if (sscanf(line, "%*u %*u %u:%u", &maj, &min) != 2 || !type)
			continue;
		/* fuse, fuseblk, and either with a subtype (fuse.sshfs) */
		type += 3;
		if (!strncmp(type, "fuseblk", 7))
			type += 7;
		else if (!strncmp(type, "fuse", 4))
			type += 4;
		else
			continue;
		if (*type != ' ' && *type != '.')
			continue;
		if (grow_array(&fu->dev, &fu->alloc, fu->n + 1,
			       sizeof(*fu->dev)))
			break;
		fu->dev[fu->n++] = makedev(maj, min);
	}
	free(line);
	if (f)
		fclose(f);
}

/* Is device maj:min of pid's mapping a FUSE mount's? */
static bool on_fuse(struct fusedevs *fu, pid_t pid, unsigned int maj,
		    unsigned int min)
{
	dev_t dev = makedev(maj, min);
	size_t i;

	fusedevs_of(fu, pid);
	for (i = 0; i < fu->n; i++)
		if (fu->dev[i] == dev)
			return true;
	return false;
}

/*
 * By device and inode, as the module keys a table and replaces or removes
 * it: one entry per table the module holds, whatever version of the file
 * it was compiled from.
 */
static hashval_t loaded_hash(const void *e)
{
	const struct loaded *l = e;

	return (hashval_t)(l->ino * 0x9e3779b97f4a7c15ULL >> 32) ^ l->dev;
}

static int loaded_eq(const void *a, const void *b)
{
	const struct loaded *x = a, *y = b;

	return x->dev == y->dev && x->ino == y->ino;
}

/* Was key seen before?  Records it if not; the thread's own set. */
static bool seen_before(struct tableload *l, const char *key)
{
	void **slot = htab_find_slot(l->seen, key, INSERT);
	char *copy;

	if (!slot)
		return true;	/* out of memory: do not retry for ever */
	if (*slot)
		return true;
	copy = strdup(key);
	/* an empty slot stays empty (htab_clear_slot() is for full ones) */
	if (!copy)
		return true;
	*slot = copy;
	return false;
}

/* st_mtim in ns, as the module compares it */
static int64_t mtime_ns(const struct stat *st)
{
	return st->st_mtim.tv_sec * 1000000000LL + st->st_mtim.tv_nsec;
}

static void file_key(char *buf, size_t size, uint32_t dev, uint64_t ino,
		     uint64_t fsize, int64_t mtime_ns)
{
	snprintf(buf, size, "%" PRIu32 " %" PRIu64 " %" PRIu64 " %" PRId64,
		 dev, ino, fsize, mtime_ns);
}

/* The key of the file st describes. */
static void stat_key(char *buf, size_t size, const struct stat *st)
{
	file_key(buf, size, st->st_dev, st->st_ino, st->st_size, mtime_ns(st));
}

static void do_sweep(struct tableload *l);

/* Remember the table of key, from the file at path ("": not known). */
static void note_loaded(struct tableload *l, const char *key, uint32_t dev,
			uint64_t ino, uint64_t size, int64_t mtime,
			const char *path)
{
	size_t len = strlen(path) + 1;
	struct loaded *e = malloc(sizeof(*e) + len);
	void **slot;

	if (!e)
		return;
	snprintf(e->key, sizeof(e->key), "%s", key);
	e->dev = dev;
	e->ino = ino;
	e->size = size;
	e->mtime_ns = mtime;
	memcpy(e->path, path, len);
	slot = htab_find_slot(l->loaded, e, INSERT);
	if (!slot) {
		free(e);
		return;
	}
	free(*slot);
	*slot = e;
}

/*
 * Each table the module holds, from its list f (closed here): one
 * "MAJOR:MINOR INODE SIZE MTIME_NS ROWS BYTES" line each (a line of
 * another shape is skipped).  Whether the list could be read.
 */
static bool each_module_table(struct tableload *l, FILE *f,
			      void (*fn)(struct tableload *l, const char *key,
					 uint32_t dev, uint64_t ino,
					 uint64_t size, int64_t mtime,
					 void *arg),
			      void *arg)
{
	unsigned long long ino, size;
	unsigned int maj, min;
	long long mtime;
	char *line = NULL, key[96];
	size_t cap = 0;
	bool whole = true;
	ssize_t len;

	while ((len = getline(&line, &cap, f)) > 0) {
		/* the module's lines are short, text, and end in a newline */
		if (len > 200 || line[len - 1] != '\n' ||
		    memchr(line, '\0', len))
			continue;
		if (sscanf(line, "%x:%x %llu %llu %lld %*u %*u", &maj, &min,
			   &ino, &size, &mtime) != 5)
			continue;
		file_key(key, sizeof(key), makedev(maj, min), ino, size, mtime);
		fn(l, key, makedev(maj, min), ino, size, mtime, arg);
	}
	if (ferror(f))
		whole = false;
	free(line);
	fclose(f);
	return whole;
}

static void found_loaded(struct tableload *l, const char *key, uint32_t dev,
			 uint64_t ino, uint64_t size, int64_t mtime, void *arg)
{
	(void)arg;
	l->module_tables++;
	seen_before(l, key);
	/* not here for walking stack copies: they must not miss it */
	tablekeep__mark(l->keep, dev, ino);
	/* an earlier run's: swept once no process maps its file */
	if (l->loaded)
		note_loaded(l, key, dev, ino, size, mtime, "");
}

/* The tables the module holds already, read through the writer's file. */
static void read_loaded(struct tableload *l)
{
	int fd = dup(l->fd);
	FILE *f = fd >= 0 ? fdopen(fd, "r") : NULL;

	if (!f) {
		if (fd >= 0)
			close(fd);
		return;
	}
	each_module_table(l, f, found_loaded, NULL);
}

/* The header of a table of the file st describes (tableenc_table()). */
static struct cprof_utable table_header(const struct stat *st)
{
	return (struct cprof_utable){
		.magic = CPROF_UTABLE_MAGIC,
		.size = sizeof(struct cprof_utable),
		.ino = st->st_ino,
		.dev = st->st_dev,
		.file_size = st->st_size,
		.mtime_ns = mtime_ns(st),
	};
}

/*
 * The layout of the CPython interpreter open at fd into *py, if it is one
 * that pyrt knows (the tick then reads its threads' Python frames); else
 * false.
 */
static bool python_layout(int fd, struct cprof_upy *py)
{
	const char *why;
	struct pyrt rt;

	if (!python_on || pyrt_detect_fd(fd, &rt, &why) != 1)
		return false;
	pyrt_upy(&rt, py);
	return true;
}

/*
 * Write e as the table of the file st describes, with py (NULL: none), a
 * CPython interpreter's layout; whether it was taken.
 */
static bool write_table(struct tableload *l, const struct stat *st,
			const struct tableenc *e, const struct cprof_upy *py,
			const char *key, const char *path)
{
	struct cprof_utable hdr = table_header(st);
	size_t len = 0;
	char *buf = tableenc_table(e, &hdr, py, &len);
	ssize_t n;

	if (!buf) {
		l->stats.refused++;
		return false;
	}
	n = write(l->fd, buf, len);
	if (n == (ssize_t)len)
		tablekeep__put(l->keep, hdr.dev, hdr.ino, buf, len);
	else
		free(buf);
	if (n == (ssize_t)len) {
		l->stats.loaded++;
		l->stats.rows += e->nr_rows;
		l->stats.python += py != NULL;
		note_loaded(l, key, st->st_dev, st->st_ino, st->st_size,
			    mtime_ns(st), path);
		return true;
	}
	l->stats.refused++;
	if (n < 0 && errno == ENOSPC) {
		/* the module evicts others to make room: this one alone is over */
		if (l->stats.too_large++ < 10)
			warning("unwind tables: %s's table (%zu bytes) is larger than the module's unwind_mb: it unwinds by frame pointers",
				esc(path), len);
	} else if (l->stats.refused - l->stats.too_large == 1) {
		warning("unwind tables: the module refused a table of %u rows: %s%s",
			e->nr_rows, n < 0 ? strerror(errno) : "short write",
			n < 0 && errno == EINVAL ?
			" (is the loaded cprof.ko older than this cprof-dump?)" :
			"");
	}
	return false;
}

/* errno of a mapping whose file is on FUSE: not opened */
#define ON_FUSE		EREMOTE

/*
 * The mapping's file: the one mapped if that can be had.  Regular files
 * only, the path resolved inside the process's root (safeopen.h): a user
 * who replaces a program by a FIFO or a symlink to a device after it
 * started gets nothing opened.  Nor is a file on FUSE: its server answers
 * when it likes, if ever (ON_FUSE).
 */
static int open_mapped(const struct tableload_item *it, struct stat *st)
{
	char path[80];
	int fd, root;

	if (it->fuse) {
		errno = ON_FUSE;
		return -1;
	}
	snprintf(path, sizeof(path), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64,
		 (int)it->pid, it->start, it->end);
	fd = safe_open(-1, path, st);
	if (fd >= 0 || errno == SAFEOPEN_NOT_REGULAR)
		return fd;
	snprintf(path, sizeof(path), "/proc/%d/root", (int)it->pid);
	root = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (root >= 0) {
		fd = safe_open(root, it->path, st);
		close(root);
		return fd;
	}
	/* the process is gone: its path here may still be the same file */
	return safe_open(-1, it->path, st);
}

/*
 * What compiling one file's table may take (boxed.h): cfi.c bounds the
 * work libdw does, not the memory it takes (it keeps each CIE's initial
 * rules for the whole file: some 47 times a hostile section's size).
 */
static const struct boxed_limits compile_limits = {
	.mem_bytes = 1024ULL << 20,
	.cpu_seconds = 30,
	.wall_seconds = 60,
	.out_max = 16 + (size_t)CPROF_UTABLE_ROWS_MAX *
		   (sizeof(uint32_t) + sizeof(struct cprof_urow)),
};

/*
 * The table as the child writes it: n, frame_pointers, stop_bytes[], pc[n],
 * row[n].
 */
struct compile_job {
	int fd;
};

static int compile_child(void *arg, FILE *out)
{
	const struct compile_job *j = arg;
	struct cfi_table t = { 0 };
	uint64_t head[2 + CFI_STOP_NR];
	char err[256];
	int bad;

	if (cfi_compile(j->fd, &t, err, sizeof(err)))
		return -1;	/* no CFI: no line, the caller counts it */
	head[0] = t.n;
	head[1] = t.frame_pointers;
	memcpy(head + 2, t.stop_bytes, sizeof(t.stop_bytes));
	bad = fwrite(head, sizeof(head), 1, out) != 1 ||
	      fwrite(t.pc, sizeof(*t.pc), t.n, out) != t.n ||
	      fwrite(t.row, sizeof(*t.row), t.n, out) != t.n;
	cfi_table_free(&t);
	return bad ? -1 : 0;
}

/*
 * cfi_compile() in a child process bounded by compile_limits, the table
 * read back.  0, or -1 (no usable CFI, or past a limit).
 */
static int compile_boxed(struct tableload *l, int fd, struct cfi_table *t)
{
	struct compile_job j = { .fd = fd };
	char *buf = NULL, msg[160];
	uint64_t head[2 + CFI_STOP_NR];
	size_t len = 0, n;

	memset(t, 0, sizeof(*t));
	if (boxed__run_fd(compile_child, &j, &j.fd, &compile_limits, &l->quit,
			  &buf, &len, msg, sizeof(msg)))
		return -1;
	if (len < sizeof(head))
		goto bad;
	memcpy(head, buf, sizeof(head));
	n = head[0];
	if (!n || n > CPROF_UTABLE_ROWS_MAX ||
	    len != sizeof(head) + n * (sizeof(*t->pc) + sizeof(*t->row)))
		goto bad;
	t->pc = malloc(n * sizeof(*t->pc));
	t->row = malloc(n * sizeof(*t->row));
	if (!t->pc || !t->row) {
		cfi_table_free(t);
		goto bad;
	}
	memcpy(t->pc, buf + sizeof(head), n * sizeof(*t->pc));
	memcpy(t->row, buf + sizeof(head) + n * sizeof(*t->pc),
	       n * sizeof(*t->row));
	t->n = n;
	t->frame_pointers = head[1];
	memcpy(t->stop_bytes, head + 2, sizeof(t->stop_bytes));
	free(buf);
	return 0;
bad:
	free(buf);
	return -1;
}

/*
 * What stops walks in a file (its table's stop_bytes[CFI_STOP_NR]), if
 * anything does; NULL if nothing.
 */
static struct stopped *stops_of(const uint64_t *stop_bytes, const char *key,
				const char *path)
{
	struct stopped *sf;
	uint64_t any = 0;
	int k;

	for (k = 0; k < CFI_STOP_NR; k++)
		any |= stop_bytes[k];
	if (!any)
		return NULL;
	sf = malloc(sizeof(*sf) + strlen(path) + 1);
	if (!sf)
		return NULL;
	memcpy(sf->bytes, stop_bytes, sizeof(sf->bytes));
	snprintf(sf->key, sizeof(sf->key), "%s", key);
	strcpy(sf->path, path);
	return sf;
}

/* Keep sf (NULL: nothing) for the report. */
static void keep_stops(struct tableload *l, struct stopped *sf)
{
	if (!sf)
		return;
	pthread_mutex_lock(&l->lock);
	if (l->nstopped < STOPPED_MAX) {
		l->stopped[l->nstopped++] = sf;
		sf = NULL;
	}
	pthread_mutex_unlock(&l->lock);
	free(sf);
}

/* Keep what stops walks in a file (stops_of()), if anything does. */
static void note_stops(struct tableload *l, const uint64_t *stop_bytes,
		       const char *key, const char *path)
{
	if (l->nstopped < STOPPED_MAX)
		keep_stops(l, stops_of(stop_bytes, key, path));
}

/* A program maps the file of key: a preloaded table's stops now count. */
static void note_preloaded_stops(struct tableload *l, const char *key)
{
	size_t i;

	for (i = 0; i < l->npreloaded; i++) {
		if (strcmp(l->preloaded[i]->key, key))
			continue;
		keep_stops(l, l->preloaded[i]);
		l->preloaded[i] = l->preloaded[--l->npreloaded];
		return;
	}
}

/* Appends to a line of size bytes; *len past size once it is full. */
static void append(char *line, size_t size, size_t *len, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void append(char *line, size_t size, size_t *len, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (*len >= size)
		return;
	va_start(ap, fmt);
	n = vsnprintf(line + *len, size - *len, fmt, ap);
	va_end(ap);
	*len = n < 0 ? size : *len + (size_t)n;
}

void tableload__report_stops(struct tableload *l, bool all)
{
	char line[1024];
	size_t i, len = 0;
	int k;

	if (!l)
		return;
	pthread_mutex_lock(&l->lock);
	for (i = 0; i < l->nstopped; i++) {
		const struct stopped *sf = l->stopped[i];
		const char *base = strrchr(sf->path, '/');
		bool first = true;

		for (k = 0; k < CFI_STOP_NR; k++) {
			if (!sf->bytes[k] || (!all && (k == CFI_STOP_SIGNAL ||
						       k == CFI_STOP_RA)))
				continue;
			if (first)
				append(line, sizeof(line), &len, "%s%s: ",
				       len ? "; " : "",
				       esc(base ? base + 1 : sf->path));
			append(line, sizeof(line), &len, "%s%s %llu B",
			       first ? "" : ", ", cfi_stop_name(k),
			       (unsigned long long)sf->bytes[k]);
			first = false;
		}
	}
	pthread_mutex_unlock(&l->lock);
	if (len)
		warning("unwind tables: code where user stack walks stop, by file and rule: %s%s",
			line, len >= sizeof(line) ? "..." : "");
}

/*
 * Tell the module that tables are on their way (true: before a table is
 * compiled or read from the cache) or not (false: the queue ran dry),
 * once each way (a busy again every 30 s: the module forgets one after a
 * minute): while they are, it copies the stacks its tables may complete
 * (cprof_format.h).  A cached table is on its way too: under load a
 * program's can come seconds after its first samples, queued behind
 * others.
 */
static void say_loading(struct tableload *l, bool loading)
{
	struct cprof_utable hdr = {
		.magic = CPROF_UTABLE_MAGIC,
		.size = sizeof(hdr),
		.flags = loading ? CPROF_UTABLE_BUSY : CPROF_UTABLE_IDLE,
	};

	/* again before the module's minute is over, while loading */
	if (l->loading == loading &&
	    (!loading || monotonic_seconds() - l->busy_said < 30))
		return;
	l->loading = loading;
	if (loading)
		l->busy_said = monotonic_seconds();
	/* an older module refuses it: it copies no stacks then */
	if (write(l->fd, &hdr, sizeof(hdr)) != sizeof(hdr))
		return;
}

/* Compile and load the table of one mapping's file, unless known. */
static void load_one(struct tableload *l, const struct tableload_item *it)
{
	struct cfi_table t = { 0 };
	struct tableenc e = { 0 };
	struct cprof_upy py;
	char key[96];
	struct stat st, after;
	int fd = open_mapped(it, &st);
	bool keep, cached;

	if (fd < 0) {
		/* someone put it there: say so, a few times */
		if (errno == ON_FUSE && l->stats.on_fuse++ < 10)
			warning("unwind tables: %s (pid %d) is on FUSE: not read (walked by frame pointers)",
				esc(it->path), (int)it->pid);
		else if (errno == SAFEOPEN_NOT_REGULAR &&
			 l->stats.not_regular++ < 10)
			warning("unwind tables: %s (pid %d) is not a regular file now: not opened",
				esc(it->path), (int)it->pid);
		return;
	}
	stat_key(key, sizeof(key), &st);
	if (htab_find(l->seen, key)) {
		note_preloaded_stops(l, key);
		goto out;
	}
	keep = l->cache && tablecache__keeps(&st, fd);
	if (keep)
		say_loading(l, true);
	cached = keep && tablecache__get(l->cache, &st, &e) == 0;
	/* a short profile's scan: a file not cached waits for its note */
	if (it->cached_only && !cached)
		goto out;
	seen_before(l, key);
	if (cached) {
		if (write_table(l, &st, &e,
				python_layout(fd, &py) ? &py : NULL, key,
				it->path))
			l->stats.cached++;
		note_stops(l, e.stop_bytes, key, it->path);
		goto out;
	}
	say_loading(l, true);
	if (compile_boxed(l, fd, &t)) {
		l->stats.no_cfi++;
		goto out;
	}
	/*
	 * The key names the file as it was compiled: one written to
	 * meanwhile (a new size, mtime or ctime) gets no table, for its next
	 * key is a new file to the module anyway.
	 */
	if (fstat(fd, &after) || after.st_dev != st.st_dev ||
	    after.st_ino != st.st_ino || after.st_size != st.st_size ||
	    mtime_ns(&after) != mtime_ns(&st) ||
	    after.st_ctim.tv_sec != st.st_ctim.tv_sec ||
	    after.st_ctim.tv_nsec != st.st_ctim.tv_nsec) {
		l->stats.changed++;
		goto out;
	}
	note_stops(l, t.stop_bytes, key, it->path);
	/* encoded once: the cache keeps it so */
	if (tableenc_encode(&t, &e)) {
		l->stats.refused++;
		goto out;
	}
	write_table(l, &st, &e, python_layout(fd, &py) ? &py : NULL, key,
		    it->path);
	if (keep)
		tablecache__put(l->cache, &st, it->path, &e);
out:
	tableenc_free(&e);
	cfi_table_free(&t);
	close(fd);
}

/*
 * The table of a mapping's file that the module held before this run, for
 * walking stack copies only (tablekeep.h): from the cache, else compiled;
 * nothing is written to the module.
 */
static void keep_one(struct tableload *l, const struct tableload_item *it)
{
	struct cfi_table t = { 0 };
	struct tableenc e = { 0 };
	struct cprof_utable hdr;
	struct stat st;
	int fd = open_mapped(it, &st);
	size_t len = 0;
	char *buf;

	if (fd < 0)
		return;
	if (!tablekeep__marked(l->keep, st.st_dev, st.st_ino))
		goto out;
	if (!l->cache || !tablecache__keeps(&st, fd) ||
	    tablecache__get(l->cache, &st, &e)) {
		say_loading(l, true);
		if (compile_boxed(l, fd, &t) || tableenc_encode(&t, &e))
			goto out;
	}
	hdr = table_header(&st);
	buf = tableenc_table(&e, &hdr, NULL, &len);
	if (buf)
		tablekeep__put(l->keep, hdr.dev, hdr.ino, buf, len);
out:
	tableenc_free(&e);
	cfi_table_free(&t);
	close(fd);
}

/* Is this the vDSO's table (cprof_format.h)? */
static bool is_vdso(uint32_t dev, uint64_t ino)
{
	return dev == CPROF_UTABLE_VDSO_DEV && ino == CPROF_UTABLE_VDSO_INO;
}

/* The size of this process's vDSO mapping, 0 if it has none. */
static size_t vdso_size(uintptr_t base)
{
	unsigned long long lo, hi;
	char line[512];
	size_t size = 0;
	FILE *f = fopen("/proc/self/maps", "re");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (strstr(line, "[vdso]") &&
		    sscanf(line, "%llx-%llx", &lo, &hi) == 2 && lo == base &&
		    hi > lo) {
			size = hi - lo;
			break;
		}
	fclose(f);
	return size;
}

/*
 * The vDSO's table: made from this process's own vDSO, which every 64-bit
 * process of this kernel maps too, its image copied to a memory file and
 * compiled as a file is, but here, not in a boxed child: it is the
 * kernel's own image, nobody's file, and this is the loader's first item,
 * forked while the main thread lists mappings (sanitizer builds'
 * allocators do not survive such a fork: the child hung until the wall
 * limit).  Keyed as the module keys the vDSO's mapping.
 */
static void load_vdso(struct tableload *l)
{
	uintptr_t base = getauxval(AT_SYSINFO_EHDR);
	size_t size = base ? vdso_size(base) : 0;
	struct cfi_table t = { 0 };
	struct tableenc e = { 0 };
	struct stat st = { 0 };
	char key[96], err[256];
	int fd;

	if (!size)
		return;
	st.st_dev = CPROF_UTABLE_VDSO_DEV;
	st.st_ino = CPROF_UTABLE_VDSO_INO;
	st.st_size = size;
	stat_key(key, sizeof(key), &st);
	if (seen_before(l, key))
		return;
	fd = memfd_create("vdso", MFD_CLOEXEC);
	if (fd < 0)
		return;
	say_loading(l, true);
	if (write(fd, (const void *)base, size) != (ssize_t)size ||
	    cfi_compile(fd, &t, err, sizeof(err)))
		l->stats.no_cfi++;
	else if (tableenc_encode(&t, &e))
		l->stats.refused++;
	else
		write_table(l, &st, &e, NULL, key, "[vdso]");
	tableenc_free(&e);
	cfi_table_free(&t);
	close(fd);
}

/* unwind_mb, as ctl says it (64 if it cannot be read). */
static uint64_t unwind_mb(const struct tableload *l)
{
	FILE *f = fopen(l->ctl_path, "re");
	unsigned int mb = 64;
	char line[128];

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "unwind_mb=%u", &mb) == 1)
			break;
	if (f)
		fclose(f);
	return mb;
}

static bool serve_asked(struct tableload *l);

static bool preload_skip(void *arg, const struct stat *st)
{
	struct tableload *l = arg;
	char key[96];

	if (!serve_asked(l))
		return true;
	stat_key(key, sizeof(key), st);
	return htab_find(l->seen, key) != NULL;
}

/*
 * The file at path, if it is still the one st describes (the same device,
 * inode, size, mtime and ctime), a CPython interpreter: its layout into
 * *py.  Another file there (replaced since) says nothing of st's.
 */
static bool python_layout_at(const char *path, const struct stat *st,
			     struct cprof_upy *py)
{
	struct stat now;
	bool ok = false;
	int fd = safe_open(-1, path, &now);

	if (fd < 0)
		return false;
	if (now.st_dev == st->st_dev && now.st_ino == st->st_ino &&
	    now.st_size == st->st_size && mtime_ns(&now) == mtime_ns(st) &&
	    now.st_ctim.tv_sec == st->st_ctim.tv_sec &&
	    now.st_ctim.tv_nsec == st->st_ctim.tv_nsec)
		ok = python_layout(fd, py);
	close(fd);
	return ok;
}

static void preload_one(void *arg, const struct stat *st, const char *path,
			const struct tableenc *e)
{
	struct tableload *l = arg;
	struct cprof_upy py;
	struct stopped *sf;
	char key[96];

	stat_key(key, sizeof(key), st);
	if (seen_before(l, key))
		return;
	if (write_table(l, st, e, python_layout_at(path, st, &py) ? &py : NULL,
			key, path)) {
		l->stats.preloaded++;
		if (l->npreloaded < STOPPED_MAX &&
		    (sf = stops_of(e->stop_bytes, key, path)))
			l->preloaded[l->npreloaded++] = sf;
	}
}

/*
 * The cache's most recently used tables, into a module that holds none,
 * before any sample asks, up to half of unwind_mb (at about 4 bytes a
 * row): the programs that ran before are complete from their first
 * sample.  Only tables of files that are at their path now, unchanged.
 * One item of the background queue, which yields to the asked one before
 * each table (preload_skip()).
 */
static void preload(struct tableload *l)
{
	if (l->cache)
		say_loading(l, true);
	tablecache__each_recent(l->cache, (unwind_mb(l) << 20) / 2 / 4,
				preload_skip, preload_one, l);
}

/*
 * The inode of every executable file mapping of every process now, with
 * one mapping of it (struct mapped).  By inode alone: /proc/PID/maps gives
 * the superblock's device, which is not what fstat() says on btrfs
 * subvolumes or overlayfs; a stray match keeps a table, never removes one.
 */
static htab_t mapped_files(void)
{
	htab_t set = htab_create_alloc(1024, htab_hash_string, htab_eq_string,
				       free, calloc, free);
	unsigned long long ino, lo, hi;
	char path[64], line[4352], perms[8], key[24], *nl;
	struct fusedevs fuse = { 0 };
	unsigned int maj, min;
	struct mapped *m;
	struct dirent *de;
	void **slot;
	size_t len;
	DIR *d;
	FILE *f;
	int at;

	d = set ? opendir("/proc") : NULL;
	if (!d) {
		if (set)
			htab_delete(set);
		return NULL;
	}
	while ((de = readdir(d))) {
		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%.20s/maps", de->d_name);
		f = fopen(path, "re");
		if (!f)
			continue;
		while (fgets(line, sizeof(line), f)) {
			nl = strchr(line, '\n');
			if (nl)
				*nl = '\0';
			at = 0;
			if (sscanf(line, "%llx-%llx %7s %*x %x:%x %llu %n",
				   &lo, &hi, perms, &maj, &min, &ino, &at) != 6 ||
			    perms[2] != 'x' || !ino)
				goto next;
			snprintf(key, sizeof(key), "%llu", ino);
			slot = htab_find_slot(set, key, INSERT);
			if (!slot || *slot)
				goto next;
			len = at ? strlen(line + at) + 1 : 1;
			m = malloc(sizeof(*m) + len);
			if (!m)
				goto next;
			memcpy(m->ino, key, sizeof(key));
			m->pid = atoi(de->d_name);
			m->fuse = on_fuse(&fuse, m->pid, maj, min);
			m->start = lo;
			m->end = hi;
			memcpy(m->path, at ? line + at : "", len);
			*slot = m;
next:
			while (!nl && fgets(line, sizeof(line), f))
				nl = strchr(line, '\n');
		}
		fclose(f);
	}
	closedir(d);
	free(fuse.dev);
	return set;
}

struct sweep {
	struct tableload *l;
	htab_t mapped;
	htab_t listed;			/* the module's tables' keys */
	bool vdso;			/* the vDSO's table was evicted */
};

static void enqueue_as(struct tableload *l, struct tableload_queue *q,
		       enum item_kind kind, pid_t pid, uint64_t start,
		       uint64_t end, const char *path, bool fuse);
static void enqueue_kind(struct tableload *l, struct tableload_queue *q,
			 enum item_kind kind);

/*
 * One table: removed if no process maps its file and the file is gone
 * from its path or another one is there (deleted, or replaced by an
 * upgrade): no process can map it again.  A file still there stays.  A
 * table an earlier run wrote, whose path is not known, goes once no
 * process maps its file: if one does again, it is compiled again.
 */
static int sweep_one(void **slot, void *arg)
{
	struct sweep *sw = arg;
	struct tableload *l = sw->l;
	struct loaded *e = *slot;
	struct cprof_utable hdr = {
		.magic = CPROF_UTABLE_MAGIC, .size = sizeof(hdr),
		.dev = e->dev, .ino = e->ino,
	};
	char key[48];
	struct stat st;
	void **seen;

	snprintf(key, sizeof(key), "%" PRIu64, e->ino);
	/* the vDSO's stays: it is no file, and every process maps it */
	if (htab_find(sw->mapped, key) || is_vdso(e->dev, e->ino))
		return 1;
	if (e->path[0] && !stat(e->path, &st) && (uint32_t)st.st_dev == e->dev &&
	    st.st_ino == e->ino && (uint64_t)st.st_size == e->size &&
	    mtime_ns(&st) == e->mtime_ns)
		return 1;
	/* a table of no rows removes the file's (ENOENT: it was not there) */
	if (write(l->fd, &hdr, sizeof(hdr)) != sizeof(hdr) && errno != ENOENT)
		return 1;
	l->stats.removed++;
	seen = htab_find_slot(l->seen, e->key, NO_INSERT);
	if (seen)
		htab_clear_slot(l->seen, seen);
	htab_clear_slot(l->loaded, slot);
	return 1;
}

/*
 * One file seen that has no table (no CFI, written to while compiled):
 * forgotten once no process maps it, so that the set follows the files
 * that run, not every file a run of weeks met.  Mapped again, it is
 * compiled again.
 */
static int forget_one(void **slot, void *arg)
{
	struct sweep *sw = arg;
	const char *key = *slot;
	struct loaded probe;
	char ino[24];

	/* "DEV INO SIZE MTIME" */
	if (sscanf(key, "%" SCNu32 " %" SCNu64, &probe.dev, &probe.ino) != 2 ||
	    htab_find(sw->l->loaded, &probe))
		return 1;
	snprintf(ino, sizeof(ino), "%" PRIu64, probe.ino);
	if (!htab_find(sw->mapped, ino)) {
		htab_clear_slot(sw->l->seen, slot);
		sw->l->stats.forgotten++;
	}
	return 1;
}

static void found_listed(struct tableload *l, const char *key, uint32_t dev,
			 uint64_t ino, uint64_t size, int64_t mtime, void *arg)
{
	htab_t listed = arg;
	void **slot = htab_find_slot(listed, key, INSERT);

	(void)l, (void)dev, (void)ino, (void)size, (void)mtime;
	if (slot && !*slot)
		*slot = strdup(key);
}

/*
 * One table this loader wrote: if the module no longer lists it (evicted
 * to make room for another, or removed by someone else), it is forgotten,
 * and compiled again when a mapping names its file again; at once if a
 * process maps it now (RELOADS_MAX times a file at most): a long stream
 * sends a process's mapping records only once.
 */
static int evicted_one(void **slot, void *arg)
{
	struct sweep *sw = arg;
	struct tableload *l = sw->l;
	struct loaded *e = *slot;
	const struct mapped *m;
	struct evictions *ev;
	char ino[24];
	void **seen, **evs;

	if (htab_find(sw->listed, e->key))
		return 1;
	l->stats.evicted++;
	seen = htab_find_slot(l->seen, e->key, NO_INSERT);
	if (seen)
		htab_clear_slot(l->seen, seen);
	if (is_vdso(e->dev, e->ino)) {
		/* two pages, and every process maps it: at once */
		sw->vdso = true;
		htab_clear_slot(l->loaded, slot);
		return 1;
	}
	snprintf(ino, sizeof(ino), "%" PRIu64, e->ino);
	m = htab_find(sw->mapped, ino);
	evs = m ? htab_find_slot(l->evictions, e->key, INSERT) : NULL;
	if (evs && !*evs) {
		ev = calloc(1, sizeof(*ev));
		if (ev)
			snprintf(ev->key, sizeof(ev->key), "%s", e->key);
		*evs = ev;
	}
	ev = evs ? *evs : NULL;
	if (ev && ++ev->n <= RELOADS_MAX && m->path[0] == '/') {
		enqueue_as(l, &l->background, ITEM_MAPPING, m->pid, m->start,
			   m->end, m->path, m->fuse);
		l->stats.reloaded++;
	}
	htab_clear_slot(l->loaded, slot);
	return 1;
}

/* A file's eviction count goes once no process maps it. */
static int forget_evictions(void **slot, void *arg)
{
	struct sweep *sw = arg;
	const struct evictions *ev = *slot;
	uint64_t ino;
	char key[24];

	if (sscanf(ev->key, "%*" SCNu32 " %" SCNu64, &ino) == 1) {
		snprintf(key, sizeof(key), "%" PRIu64, ino);
		if (htab_find(sw->mapped, key))
			return 1;
	}
	htab_clear_slot(sw->l->evictions, slot);
	return 1;
}

/*
 * Forget the tables the module evicted, remove the tables of files
 * deleted or replaced, and forget the files without a table that no
 * process maps; the loader's thread.
 */
static void do_sweep(struct tableload *l)
{
	struct sweep sw = { .l = l };

	if (!htab_elements(l->loaded) && !htab_elements(l->seen))
		return;
	sw.mapped = mapped_files();
	if (!sw.mapped)
		return;
	sw.listed = htab_create_alloc(256, htab_hash_string, htab_eq_string,
				      free, calloc, free);
	if (sw.listed) {
		/* opened anew: the list from its start, the writer's as it is */
		FILE *f = fopen(l->list_path, "re");

		if (f && each_module_table(l, f, found_listed, sw.listed))
			htab_traverse_noresize(l->loaded, evicted_one, &sw);
		htab_delete(sw.listed);
	}
	htab_traverse_noresize(l->evictions, forget_evictions, &sw);
	if (sw.vdso)
		enqueue_kind(l, &l->asked, ITEM_VDSO);
	htab_traverse_noresize(l->loaded, sweep_one, &sw);
	htab_traverse_noresize(l->seen, forget_one, &sw);
	htab_delete(sw.mapped);
}

static void tableload_free(struct tableload *l);
static void scan(struct tableload *l, pid_t pid, bool cached_only);

/* The next item of q; NULL if none.  Under the lock. */
static struct tableload_item *take_from(struct tableload *l,
					struct tableload_queue *q)
{
	struct tableload_item *it = q->head;

	if (!it)
		return NULL;
	q->head = it->next;
	if (!q->head)
		q->tail = &q->head;
	l->busy = q;
	return it;
}

/* The next item, the asked first; NULL if none.  Under the lock. */
static struct tableload_item *take(struct tableload *l)
{
	return take_from(l, l->asked.head ? &l->asked : &l->background);
}

static void run_item(struct tableload *l, const struct tableload_item *it)
{
	switch (it->kind) {
	case ITEM_SWEEP:
		do_sweep(l);
		break;
	case ITEM_VDSO:
		load_vdso(l);
		break;
	case ITEM_PRELOAD:
		preload(l);
		break;
	case ITEM_MAPPING:
		load_one(l, it);
		break;
	case ITEM_KEEP:
		keep_one(l, it);
		break;
	case ITEM_SCAN:
		scan(l, it->pid, it->cached_only);
		break;
	}
}

/*
 * Between two of a background item's tables (the preload's): what the
 * stream asked for since, first, so that a program sampled waits for one
 * table of the cache's, not for all of them.  Return: false once the
 * loader is stopping (the background item ends there).
 */
static bool serve_asked(struct tableload *l)
{
	struct tableload_item *it;
	bool stopping;

	for (;;) {
		pthread_mutex_lock(&l->lock);
		stopping = l->stopping;
		it = stopping ? NULL : take_from(l, &l->asked);
		if (!it) {
			l->busy = &l->background;
			pthread_cond_broadcast(&l->cond);
			pthread_mutex_unlock(&l->lock);
			return !stopping;
		}
		pthread_mutex_unlock(&l->lock);
		run_item(l, it);
		free(it);
	}
}

static void *loader_main(void *arg)
{
	struct tableload *l = arg;
	struct tableload_item *it;
	bool abandoned;

	pthread_mutex_lock(&l->lock);
	for (;;) {
		while (!(it = take(l)) && !l->stopping)
			pthread_cond_wait(&l->cond, &l->lock);
		if (l->stopping) {
			l->busy = NULL;
			free(it);
			break;
		}
		pthread_mutex_unlock(&l->lock);
		run_item(l, it);
		free(it);
		pthread_mutex_lock(&l->lock);
		if (!l->asked.head && !l->background.head && l->loading) {
			pthread_mutex_unlock(&l->lock);
			say_loading(l, false);
			pthread_mutex_lock(&l->lock);
		}
		l->busy = NULL;
		pthread_cond_broadcast(&l->cond);
	}
	pthread_mutex_unlock(&l->lock);
	if (l->loading)
		say_loading(l, false);
	pthread_mutex_lock(&l->lock);
	l->exited = true;
	abandoned = l->abandoned;
	pthread_mutex_unlock(&l->lock);
	if (abandoned)
		tableload_free(l);
	return NULL;
}

/* Queue an item for the loader's thread. */
static void push(struct tableload *l, struct tableload_queue *q,
		 struct tableload_item *it)
{
	pthread_mutex_lock(&l->lock);
	*q->tail = it;
	q->tail = &it->next;
	pthread_cond_broadcast(&l->cond);
	pthread_mutex_unlock(&l->lock);
}

/* An item of kind for a mapping (path "": not one); NULL: no memory. */
static struct tableload_item *new_item(enum item_kind kind, pid_t pid,
				       uint64_t start, uint64_t end,
				       const char *path, bool fuse)
{
	size_t len = strlen(path) + 1;
	struct tableload_item *it = calloc(1, sizeof(*it) + len);

	if (!it)
		return NULL;
	it->kind = kind;
	it->pid = pid;
	it->fuse = fuse;
	it->start = start;
	it->end = end;
	memcpy(it->path, path, len);
	return it;
}

/* Queue an item of kind for a mapping. */
static void enqueue_as(struct tableload *l, struct tableload_queue *q,
		       enum item_kind kind, pid_t pid, uint64_t start,
		       uint64_t end, const char *path, bool fuse)
{
	struct tableload_item *it = new_item(kind, pid, start, end, path,
					     fuse);

	if (it)
		push(l, q, it);
}

/* Queue an item that is not a mapping. */
static void enqueue_kind(struct tableload *l, struct tableload_queue *q,
			 enum item_kind kind)
{
	enqueue_as(l, q, kind, 0, 0, 0, "", false);
}

struct tableload *tableload__start(const char *proc_dir)
{
	struct tableload *l = calloc(1, sizeof(*l));
	char path[4096];

	if (!l)
		return NULL;
	snprintf(path, sizeof(path), "%s/unwind", proc_dir);
	l->fd = open(path, O_RDWR | O_CLOEXEC);
	if (l->fd < 0) {
		/* no module, or no permission: opening the profile says so */
		if (errno != ENOENT && errno != EACCES && errno != EPERM)
			warning("unwind tables: failed to open %s: %s: user stacks use frame pointers only",
				esc(path), strerror(errno));
		free(l);
		return NULL;
	}
	l->list_path = strdup(path);
	snprintf(path, sizeof(path), "%s/ctl", proc_dir);
	l->ctl_path = strdup(path);
	l->seen = htab_create_alloc(256, htab_hash_string, htab_eq_string,
				    free, calloc, free);
	l->loaded = htab_create_alloc(256, loaded_hash, loaded_eq, free,
				      calloc, free);
	l->evictions = htab_create_alloc(16, htab_hash_string, htab_eq_string,
					 free, calloc, free);
	l->last_sweep = monotonic_seconds();
	l->asked.tail = &l->asked.head;
	l->background.tail = &l->background.head;
	pthread_mutex_init(&l->lock, NULL);
	pthread_cond_init(&l->cond, NULL);
	l->keep = tablekeep__new(TABLEKEEP_MAX);
	if (l->seen && l->list_path)
		read_loaded(l);
	/* the default may be unusable (a read-only /var): no cache */
	if (cache_dir)
		l->cache = cache_explicit ?
			   tablecache__open(cache_dir, true) :
			   tablecache__open_default(cache_dir,
						    tablecache__fallback_dir());
	if (!l->keep || !l->list_path || !l->ctl_path || !l->seen || !l->loaded ||
	    !l->evictions ||
	    pthread_create(&l->thread, NULL, loader_main, l)) {
		tablecache__close(l->cache);
		tablekeep__free(l->keep);
		if (l->seen)
			htab_delete(l->seen);
		if (l->loaded)
			htab_delete(l->loaded);
		if (l->evictions)
			htab_delete(l->evictions);
		free(l->list_path);
		free(l->ctl_path);
		close(l->fd);
		free(l);
		return NULL;
	}
	enqueue_kind(l, &l->asked, ITEM_VDSO);
	/* a module with tables was loaded for already: its room is theirs */
	if (l->cache && !l->module_tables)
		enqueue_kind(l, &l->background, ITEM_PRELOAD);
	return l;
}

/* Queue one mapping of the scan. */
static void scan_one(struct tableload *l, pid_t pid, uint64_t start,
		     uint64_t end, const char *path, bool fuse,
		     bool cached_only)
{
	struct tableload_item *it = new_item(ITEM_MAPPING, pid, start, end,
					     path, fuse);

	if (!it)
		return;
	it->cached_only = cached_only;
	push(l, &l->background, it);
}

/* The executable file mappings of one process, into the background. */
static void scan_pid(struct tableload *l, pid_t pid, struct fusedevs *fuse,
		     bool cached_only)
{
	unsigned long long lo, hi, inode;
	char path[64], line[4352], perms[8], *file, *nl;
	unsigned int maj, min;
	int at;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		nl = strchr(line, '\n');
		if (nl)
			*nl = '\0';
		at = 0;
		if (sscanf(line, "%llx-%llx %7s %*s %x:%x %llu %n", &lo, &hi,
			   perms, &maj, &min, &inode, &at) == 6 && at &&
		    perms[2] == 'x' && inode) {
			file = line + at;
			if (file[0] == '/')
				scan_one(l, pid, lo, hi, file,
					 on_fuse(fuse, pid, maj, min),
					 cached_only);
		}
		while (!nl && fgets(line, sizeof(line), f))
			nl = strchr(line, '\n');
	}
	fclose(f);
}

static void scan(struct tableload *l, pid_t pid, bool cached_only)
{
	struct fusedevs fuse = { 0 };
	struct dirent *de;
	DIR *d;

	if (!l)
		return;
	if (pid > 0) {
		scan_pid(l, pid, &fuse, cached_only);
		free(fuse.dev);
		return;
	}
	d = opendir("/proc");
	if (!d)
		return;
	while ((de = readdir(d)))
		if (de->d_name[0] >= '1' && de->d_name[0] <= '9')
			scan_pid(l, atoi(de->d_name), &fuse, cached_only);
	closedir(d);
	free(fuse.dev);
}

/* The scan itself in the thread: reading /proc holds up no caller. */
static void enqueue_scan(struct tableload *l, pid_t pid, bool cached_only)
{
	struct tableload_item *it;

	if (!l)
		return;
	it = new_item(ITEM_SCAN, pid, 0, 0, "", false);
	if (!it)
		return;
	it->cached_only = cached_only;
	push(l, &l->background, it);
}

void tableload__scan(struct tableload *l, pid_t pid)
{
	enqueue_scan(l, pid, false);
}

void tableload__scan_cached(struct tableload *l, pid_t pid)
{
	enqueue_scan(l, pid, true);
}

void tableload__sweep(struct tableload *l, double interval)
{
	if (!l)
		return;
	pthread_mutex_lock(&l->lock);
	if (monotonic_seconds() - l->last_sweep < interval) {
		pthread_mutex_unlock(&l->lock);
		return;
	}
	l->last_sweep = monotonic_seconds();
	pthread_mutex_unlock(&l->lock);
	enqueue_kind(l, &l->asked, ITEM_SWEEP);
}

/* Is the record's file on FUSE (the module says so)? */
static bool record_on_fuse(const struct cprof_mmap *m)
{
	struct cprof_file_id id;

	return stream__mmap_file_id(m, &id) && id.fs_magic == FUSE_SUPER_MAGIC;
}

void tableload__note(struct tableload *l, const struct cprof_mmap *m)
{
	if (!l || m->path[0] != '/')
		return;
	enqueue_as(l, &l->asked, ITEM_MAPPING, m->pid, m->start, m->end,
		   m->path, record_on_fuse(m));
}

void tableload__keep(struct tableload *l, const struct cprof_mmap *m)
{
	if (!l || m->path[0] != '/')
		return;
	enqueue_as(l, &l->asked, ITEM_KEEP, m->pid, m->start, m->end, m->path,
		   record_on_fuse(m));
}

/* Is there nothing to do in q, or in both queues (q NULL)?  Locked. */
static bool done_with(const struct tableload *l,
		      const struct tableload_queue *q)
{
	if (!q)
		return !l->asked.head && !l->background.head && !l->busy;
	return !q->head && l->busy != q;
}

bool tableload__asked_idle(struct tableload *l)
{
	bool idle;

	if (!l)
		return true;
	pthread_mutex_lock(&l->lock);
	idle = done_with(l, &l->asked);
	pthread_mutex_unlock(&l->lock);
	return idle;
}

/* Wait until done_with(l, q), *stop or timeout seconds (< 0: none). */
static bool wait_for(struct tableload *l, const struct tableload_queue *q,
		     const volatile sig_atomic_t *stop, double timeout)
{
	double until = monotonic_seconds() + timeout;
	struct timespec ts;
	bool done;

	if (!l)
		return true;
	pthread_mutex_lock(&l->lock);
	while (!done_with(l, q) && !*stop &&
	       (timeout < 0 || monotonic_seconds() < until)) {
		/* a signal does not end a condition wait: look every 50 ms */
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 50000000;
		if (ts.tv_nsec >= 1000000000) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000;
		}
		pthread_cond_timedwait(&l->cond, &l->lock, &ts);
	}
	done = done_with(l, q);
	pthread_mutex_unlock(&l->lock);
	return done;
}

bool tableload__wait(struct tableload *l, const volatile sig_atomic_t *stop,
		     double timeout)
{
	return wait_for(l, NULL, stop, timeout);
}

bool tableload__wait_asked(struct tableload *l,
			   const volatile sig_atomic_t *stop, double timeout)
{
	return wait_for(l, l ? &l->asked : NULL, stop, timeout);
}

bool tableload__prime(struct tableload **l, const char *proc_dir, pid_t pid,
		      const volatile sig_atomic_t *stop, double timeout)
{
	if (!*l)
		*l = tableload__start(proc_dir);
	tableload__scan(*l, pid);
	return tableload__wait(*l, stop, timeout);
}

/* What l holds, and l: its thread is gone. */
static void tableload_free(struct tableload *l)
{
	struct tableload_item *it;

	while ((it = take(l)))
		free(it);
	while (l->nstopped)
		free(l->stopped[--l->nstopped]);
	while (l->npreloaded)
		free(l->preloaded[--l->npreloaded]);
	htab_delete(l->seen);
	htab_delete(l->loaded);
	htab_delete(l->evictions);
	tablecache__close(l->cache);
	tablekeep__free(l->keep);
	free(l->list_path);
	free(l->ctl_path);
	pthread_mutex_destroy(&l->lock);
	pthread_cond_destroy(&l->cond);
	close(l->fd);
	free(l);
}

void tableload__stop(struct tableload *l, struct tableload_stats *stats)
{
	struct timespec until;
	bool left;

	if (!l)
		return;
	pthread_mutex_lock(&l->lock);
	l->stopping = true;
	l->quit = 1;
	pthread_cond_broadcast(&l->cond);
	pthread_mutex_unlock(&l->lock);
	/*
	 * A compile in flight is killed at once.  A thread held in the
	 * kernel by a file system that does not answer (a path that leads
	 * onto FUSE, a dead NFS server) is left behind, to free l itself if
	 * it is ever let go: the run ends all the same (but for a sanitizer
	 * build's leak check at exit, which waits for every thread to stop).
	 */
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += STOP_WAIT_SECONDS;
	if (pthread_timedjoin_np(l->thread, NULL, &until)) {
		/* detached before it may free l (and its thread's handle) */
		pthread_mutex_lock(&l->lock);
		left = !l->exited;
		if (left) {
			pthread_detach(l->thread);
			l->abandoned = true;
		}
		if (stats)
			*stats = l->stats;
		pthread_mutex_unlock(&l->lock);
		if (left) {
			warning("unwind tables: the loader still waits on a file after %d s: left behind",
				STOP_WAIT_SECONDS);
			return;
		}
		pthread_join(l->thread, NULL);
	}
	if (stats)
		*stats = l->stats;
	tableload_free(l);
}

bool tableload__module_had_tables(const struct tableload *l)
{
	return l && l->module_tables;
}

struct tablekeep *tableload__kept(struct tableload *l)
{
	return l ? l->keep : NULL;
}
