// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * test_tableload: what cprof-dump writes to the module's unwind file, with a
 * regular file standing in for /proc/cprof/unwind: the test process's own
 * executable mappings are scanned, each file's table written once, keyed
 * by the file as fstat() describes it, whole and well-formed; tables the
 * "module" lists already are not written again; a stream's mapping record
 * of a file seen is not either; a missing unwind file is no error; and
 * --load-unwind-tables names the files where walks stop, and why; a
 * CPython interpreter's table carries its layout (CPROF_UTABLE_PY), in the
 * file's offset space, compiled, read from the cache, or preloaded; a file
 * on a FUSE mount whose server answers nothing is not opened (fusehang.h),
 * and a loader held by one anyway does not hold up its stop; a stream's
 * mapping records are loaded before the scan's files, and a scan of the
 * cache only compiles nothing.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/magic.h>

#include "fusehang.h"
#include "streambuild.h"
#include "unwind/tableload.h"
#include "test.h"
#include "testutil.h"

static const volatile sig_atomic_t never;

struct written {
	int tables;
	int bad;		/* malformed */
	int self;		/* tables of this test binary */
	int dup;		/* a file written twice */
	int vdso;		/* tables keyed as the vDSO */
	int busy, idle;		/* CPROF_UTABLE_BUSY, _IDLE headers */
	unsigned int last_say;	/* the flag of the last one */
	uint64_t vdso_size;	/* the last one's file size */
	uint64_t rows, rules;	/* in all */
	uint64_t ino[64];
	int py;			/* tables with CPROF_UTABLE_PY */
	struct cprof_upy upy;	/* the last one's */
	uint64_t py_ino;	/* its file's */
};

/* A table's bytes as cprof_format.h lays it out. */
static size_t table_size(const struct cprof_utable *h)
{
	return sizeof(*h) +
	       (h->flags & CPROF_UTABLE_PY ? sizeof(struct cprof_upy) : 0) +
	       (size_t)h->nr_rules * sizeof(struct cprof_urow) +
	       (size_t)h->nr_rows * (sizeof(uint32_t) + sizeof(uint16_t));
}

/* Parse the tables written to path (one after the other). */
static void parse(const char *path, struct written *w)
{
	struct stat self;
	size_t len = 0, at = 0;
	char *buf = slurp(path, &len), *one = NULL;
	int i;

	memset(w, 0, sizeof(*w));
	stat("/proc/self/exe", &self);
	while (buf && at + sizeof(struct cprof_utable) <= len) {
		struct cprof_utable h;
		const struct cprof_urow *rule;
		const uint32_t *pc;
		const uint16_t *rule_of;
		size_t size;
		uint32_t r;

		memcpy(&h, buf + at, sizeof(h));
		/* not tables: the loader saying it compiles, or no longer */
		if (h.magic == CPROF_UTABLE_MAGIC && !h.nr_rows &&
		    (h.flags == CPROF_UTABLE_BUSY ||
		     h.flags == CPROF_UTABLE_IDLE)) {
			w->busy += h.flags == CPROF_UTABLE_BUSY;
			w->idle += h.flags == CPROF_UTABLE_IDLE;
			w->last_say = h.flags;
			at += sizeof(h);
			continue;
		}
		size = table_size(&h);
		if (h.magic != CPROF_UTABLE_MAGIC || h.size != sizeof(h) ||
		    !h.nr_rows || !h.nr_rules || at + size > len) {
			w->bad++;
			break;
		}
		/* tables follow each other unaligned: one, copied aligned */
		free(one);
		one = malloc(size);
		if (!one) {
			w->bad++;
			break;
		}
		memcpy(one, buf + at, size);
		rule = (const void *)(one + sizeof(h));
		if (h.flags & CPROF_UTABLE_PY) {
			memcpy(&w->upy, rule, sizeof(w->upy));
			w->py++;
			w->py_ino = h.ino;
			rule = (const void *)(one + sizeof(h) + sizeof(w->upy));
		}
		pc = (const void *)(rule + h.nr_rules);
		rule_of = (const void *)(pc + h.nr_rows);
		for (r = 1; r < h.nr_rows; r++)
			if (pc[r] <= pc[r - 1])
				break;
		if (r < h.nr_rows)
			w->bad++;
		for (r = 0; r < h.nr_rows; r++)
			if (rule_of[r] >= h.nr_rules)
				break;
		if (r < h.nr_rows ||
		    rule[rule_of[h.nr_rows - 1]].cfa_base != CPROF_CFA_NONE)
			w->bad++;
		/* each rule once: no two alike */
		for (r = 1; r < h.nr_rules && h.nr_rules <= 4096; r++)
			for (i = 0; i < (int)r; i++)
				if (!memcmp(&rule[r], &rule[i], sizeof(*rule)))
					w->bad++;
		w->rows += h.nr_rows;
		w->rules += h.nr_rules;
		if (h.ino == self.st_ino && h.dev == (uint32_t)self.st_dev &&
		    h.file_size == (uint64_t)self.st_size)
			w->self++;
		if (h.dev == CPROF_UTABLE_VDSO_DEV &&
		    h.ino == CPROF_UTABLE_VDSO_INO && !h.mtime_ns) {
			w->vdso++;
			w->vdso_size = h.file_size;
		}
		for (i = 0; i < w->tables && i < 64; i++)
			if (w->ino[i] == h.ino)
				w->dup++;
		if (w->tables < 64)
			w->ino[w->tables] = h.ino;
		w->tables++;
		at += size;
	}
	free(one);
	free(buf);
}

/*
 * The records written to path from byte from on (after what the test put
 * there as the module's listing): tables, and removals (no rows) of ino.
 */
static void count_records(const char *path, size_t from, uint64_t ino,
			  int *tables, int *removals)
{
	size_t len = 0, at = from;
	char *buf = slurp(path, &len);

	*tables = *removals = 0;
	while (buf && at + sizeof(struct cprof_utable) <= len) {
		struct cprof_utable h;

		memcpy(&h, buf + at, sizeof(h));
		if (h.magic != CPROF_UTABLE_MAGIC)
			break;
		if (!h.nr_rows)
			*removals += h.ino == ino;
		else if (h.dev != CPROF_UTABLE_VDSO_DEV)
			(*tables)++;
		at += table_size(&h);
	}
	free(buf);
}

/* A mapping record of this process naming path, as the stream gives one. */
static void note_path(struct tableload *l, const char *path)
{
	struct {
		struct cprof_mmap m;
		char path[256];
	} rec = { .m = { .pid = getpid(), .start = 0x1000, .end = 0x2000 } };

	snprintf(rec.m.path, sizeof(rec.path), "%s", path);
	tableload__note(l, &rec.m);
}

/*
 * What the module lists for the table of the file st describes, appended
 * to the file that stands for it here: the loader reads the list to learn
 * which of its tables the module evicted.
 */
static void list_table(const char *unwind, const struct stat *st)
{
	FILE *f = fopen(unwind, "a");

	if (!f)
		return;
	fprintf(f, "\n%02x:%02x %llu %llu %lld 10 120\n", major(st->st_dev),
		minor(st->st_dev), (unsigned long long)st->st_ino,
		(unsigned long long)st->st_size,
		(long long)st->st_mtim.tv_sec * 1000000000LL +
			st->st_mtim.tv_nsec);
	fclose(f);
}

/* The size of this process's vDSO mapping (0: none). */
static uint64_t vdso_size(void)
{
	unsigned long long lo, hi;
	char line[512];
	uint64_t size = 0;
	FILE *f = fopen("/proc/self/maps", "r");

	while (f && fgets(line, sizeof(line), f))
		if (strstr(line, "[vdso]") &&
		    sscanf(line, "%llx-%llx", &lo, &hi) == 2)
			size = hi - lo;
	if (f)
		fclose(f);
	return size;
}

/* The module's line for the vDSO's table, appended as list_table() does. */
static void list_vdso(const char *unwind)
{
	struct stat st = {
		.st_dev = CPROF_UTABLE_VDSO_DEV,
		.st_ino = CPROF_UTABLE_VDSO_INO,
		.st_size = vdso_size(),
	};

	list_table(unwind, &st);
}

/*
 * A table the module no longer lists (it evicted it to make room) is
 * forgotten by a sweep, and written again when a mapping names its file
 * again; one it lists is not.
 */
static void test_evicted(const char *dir, const char *unwind)
{
	const char *prog = tmp_path("evicted");
	struct tableload_stats st;
	struct tableload *l;
	int tables, removals;
	char self[256];
	ssize_t n;

	if (run("cp /proc/%d/exe '%s'", (int)getpid(), prog)) {
		test_cond("eviction fixture", false);
		return;
	}
	close(open(unwind, O_CREAT | O_WRONLY | O_TRUNC, 0600));
	l = tableload__start(dir);
	note_path(l, prog);
	tableload__wait(l, &never, -1);
	list_vdso(unwind);
	/* not listed: the module evicted it */
	tableload__sweep(l, 0);
	tableload__wait(l, &never, -1);
	note_path(l, prog);
	tableload__wait(l, &never, -1);
	tableload__stop(l, &st);
	count_records(unwind, 0, 0, &tables, &removals);
	/* st.loaded: the vDSO's too */
	test_condf(tables == 2 && st.evicted == 1 && st.loaded == 3 &&
		   !st.reloaded,
		   "a table the module evicted: forgotten by a sweep, written again when mapped again (%d tables, %llu evicted)",
		   tables, (unsigned long long)st.evicted);
	unlink(prog);

	/*
	 * This test's own program, which a process (this one) maps: each
	 * sweep that finds its table evicted loads it again at once, twice.
	 */
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n < 0) {
		test_cond("eviction fixture (own program)", false);
		return;
	}
	self[n] = '\0';
	close(open(unwind, O_CREAT | O_WRONLY | O_TRUNC, 0600));
	l = tableload__start(dir);
	note_path(l, self);
	tableload__wait(l, &never, -1);
	for (int i = 0; i < 4; i++) {
		/* after the loader's last write, which may cover the last */
		list_vdso(unwind);
		tableload__sweep(l, 0);
		tableload__wait(l, &never, -1);
	}
	tableload__stop(l, &st);
	count_records(unwind, 0, 0, &tables, &removals);
	test_condf(tables == 3 && st.evicted == 3 && st.reloaded == 2,
		   "... of a file a process maps: loaded again by the sweep, twice at most (%d tables, %llu evicted, %llu reloaded)",
		   tables, (unsigned long long)st.evicted,
		   (unsigned long long)st.reloaded);
}

/*
 * A program's table is written; while the file is there (even not
 * mapped) a sweep keeps it; once it is deleted, a sweep removes the table
 * (a header of no rows for its inode), once.
 */
static void test_sweep(const char *dir, const char *unwind)
{
	const char *prog = tmp_path("prog");
	struct tableload_stats st;
	struct tableload *l;
	struct stat pst;
	int tables, removals;

	if (run("cp /proc/%d/exe '%s'", (int)getpid(), prog) ||
	    stat(prog, &pst)) {
		test_cond("sweep fixture", false);
		return;
	}
	close(open(unwind, O_CREAT | O_WRONLY | O_TRUNC, 0600));
	l = tableload__start(dir);
	note_path(l, prog);
	tableload__wait(l, &never, -1);
	list_table(unwind, &pst);
	list_vdso(unwind);
	tableload__sweep(l, 0);
	tableload__wait(l, &never, -1);
	count_records(unwind, 0, pst.st_ino, &tables, &removals);
	test_condf(tables == 1 && !removals,
		   "a program's table, its file there: kept by a sweep (%d tables, %d removals)",
		   tables, removals);
	unlink(prog);
	tableload__sweep(l, 3600);
	tableload__wait(l, &never, -1);
	count_records(unwind, 0, pst.st_ino, &tables, &removals);
	test_cond("... no second sweep within the interval", !removals);
	tableload__sweep(l, 0);
	tableload__wait(l, &never, -1);
	tableload__sweep(l, 0);
	tableload__wait(l, &never, -1);
	tableload__stop(l, &st);
	count_records(unwind, 0, pst.st_ino, &tables, &removals);
	test_condf(removals == 1 && st.removed == 1,
		   "... deleted: its table removed, once (%d removals, %llu counted)",
		   removals, (unsigned long long)st.removed);
}

/*
 * A table an earlier run left in the module, of a file no process maps:
 * the first sweep removes it (its path is not known).  A file that gave
 * no table and that no process maps is forgotten by a sweep, so that it
 * is looked at again if it is mapped again.
 */
static void test_sweep_leftovers(const char *dir, const char *unwind)
{
	const char *text = tmp_path("notes.txt");
	const uint64_t old_ino = 987654321;
	struct tableload_stats st;
	struct tableload *l;
	int tables, removals, listing;
	FILE *f;

	f = fopen(unwind, "w");
	listing = fprintf(f, "08:01 %llu 4096 1000000000 10 120\n",
			  (unsigned long long)old_ino);
	fclose(f);
	if (run("echo not an ELF file > '%s'", text)) {
		test_cond("leftover fixture", false);
		return;
	}
	l = tableload__start(dir);
	note_path(l, text);
	tableload__wait(l, &never, -1);
	tableload__sweep(l, 0);
	tableload__wait(l, &never, -1);
	tableload__stop(l, &st);
	count_records(unwind, listing, old_ino, &tables, &removals);
	test_condf(removals == 1 && st.removed == 1,
		   "an earlier run's table of a file no process maps: removed by the first sweep (%d removals, %llu counted)",
		   removals, (unsigned long long)st.removed);
	test_condf(st.no_cfi == 1 && st.forgotten == 1,
		   "a file without a table no process maps: forgotten by a sweep (%llu without CFI, %llu forgotten)",
		   (unsigned long long)st.no_cfi,
		   (unsigned long long)st.forgotten);
}

/* Is pid, a child not reaped yet, still running (not a zombie)? */
static bool alive(pid_t pid)
{
	char path[40], *buf, *p;
	bool ok;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	buf = slurp(path, NULL);
	p = buf ? strrchr(buf, ')') : NULL;
	ok = p && p[1] == ' ' && p[2] && p[2] != 'Z';
	free(buf);
	return ok;
}

/*
 * --load-unwind-tables names the files whose code stops walks, and why: a
 * python3 that loaded libcrypto (OpenSSL's assembly keeps one CFA shape
 * the module does not follow) and libc (longjmp, the signal trampoline).
 * Three runs on a cache of the test's own: compiled (and kept), read back
 * from the cache, and preloaded from it before the process is asked about:
 * each names the same files.
 */
static void test_report_stops(const char *dir, const char *unwind)
{
	static const char *const how[] = { "compiled", "from the cache",
					   "preloaded" };
	const char *cache = tmp_path("tables");
	char *err;
	pid_t pid;
	int st, i;

	/* libcrypto mapped (by hashlib) before it says ready */
	pid = spawn_ready((char *[]){ "python3", "-c",
				      "import hashlib, sys, time\n"
				      "hashlib.sha256(b'x').digest()\n"
				      "print('ready', flush=True)\n"
				      "time.sleep(3600)", NULL });
	if (pid < 0) {
		test_cond("python3 importing hashlib starts", false);
		return;
	}
	for (i = 0; i < 3; i++) {
		/* an empty module preloads the cache's tables; else not */
		if (i != 1 && truncate(unwind, 0))
			test_cond("emptying the unwind stand-in", false);
		st = run("%s --load-unwind-tables --table-cache '%s' --proc-dir %s -p %d",
			 cprof_dump(), cache, dir, (int)pid);
		err = slurp(tmp_path("err.txt"), NULL);
		/* a failure says whether python3 was still there to be read */
		test_condf(st == 0 && err &&
			   strstr(err, "libcrypto.so.3: other CFA expression ") &&
			   strstr(err, "libc.so.6: signal frame "),
			   "--load-unwind-tables, tables %s: files where walks stop, by rule (%s; python3 %s)",
			   how[i], err ? err : "no output",
			   alive(pid) ? "still running" : "gone");
		free(err);
	}
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

/*
 * A stream's mapping record that comes while the cache's tables are
 * preloaded is served before the rest of them: a program sampled during
 * a preload waits for one cached table, not for all.  The cache holds
 * this process's files (libc, libdw, libelf...); the record names bash,
 * which is not in it: its table comes at most two after those written
 * when the record came (one being written then, one begun).  Judged when
 * the preload had more left (polled: the record is noted once the vDSO's
 * and a first preloaded table are written).
 */
static off_t module_with_vdso(const char *unwind);

static void test_preload_yields(const char *dir, const char *unwind)
{
	const char *bash = "/usr/bin/bash";
	struct tableload_stats st;
	struct tableload *l;
	struct written w;
	struct stat bst;
	int at, before, i;

	if (stat(bash, &bst)) {
		printf("(%s is not there: no preload test)\n", bash);
		return;
	}
	mkdir(tmp_path("ycache"), 0700);
	tableload_set_cache(tmp_path("ycache"));
	module_with_vdso(unwind);
	l = tableload__start(dir);
	tableload__scan(l, getpid());
	tableload__wait(l, &never, -1);
	tableload__stop(l, &st);
	close(open(unwind, O_CREAT | O_WRONLY | O_TRUNC, 0600));
	l = tableload__start(dir);
	for (i = 0; i < 20000; i++) {
		parse(unwind, &w);
		if (w.tables >= 2)
			break;
		usleep(100);
	}
	before = w.tables;
	note_path(l, bash);
	tableload__wait(l, &never, -1);
	tableload__stop(l, &st);
	parse(unwind, &w);
	for (at = 0; at < w.tables && at < 64; at++)
		if (w.ino[at] == bst.st_ino)
			break;
	/* the one being written as it came, and one begun before it came */
	if (w.tables - before < 4) {
		printf("(the preload was over as the record came: %d of %d tables written, %llu preloaded; not judged)\n",
		       before, w.tables, (unsigned long long)st.preloaded);
	} else {
		test_condf(st.preloaded >= 3 && !w.bad && at <= before + 2,
			   "a record during the preload: bash's table written %d of %d, after %d before it came (%llu preloaded)",
			   at + 1, w.tables, before,
			   (unsigned long long)st.preloaded);
	}
	tableload_set_cache("");
}

/*
 * A CPython interpreter mapped by a process: its table carries its layout,
 * compiled, from the cache, and preloaded from the cache into a module
 * that holds none.  Debian's python3.11 (not PIE): _PyRuntime at 0xa56220,
 * its code at p_vaddr - p_offset 0x400000.
 */
static void test_python(const char *dir, const char *unwind)
{
	const char *python = "/usr/bin/python3.11", *cache = tmp_path("pycache");
	struct tableload_stats st;
	struct tableload *l;
	struct stat pst, lst;
	struct written w;
	char *text;
	size_t len;
	int round;
	pid_t pid;
	FILE *f;

	if (access(python, X_OK) || stat(python, &pst)) {
		printf("(%s is not installed: no CPython's table)\n", python);
		return;
	}
	mkdir(cache, 0700);
	tableload_set_cache(cache);
	pid = spawn_ready((char *[]){ (char *)python, "-c",
				      "import time\n"
				      "print('ready', flush=True)\n"
				      "time.sleep(3600)", NULL });
	if (pid < 0) {
		test_cond("python3.11 starts", false);
		return;
	}
	/* compiled (and cached), then read back from the cache */
	for (round = 0; round < 2; round++) {
		close(open(unwind, O_CREAT | O_WRONLY | O_TRUNC, 0600));
		/* a module that holds a table: no preload */
		list_vdso(unwind);
		stat(unwind, &lst);
		l = tableload__start(dir);
		tableload__scan(l, pid);
		tableload__wait(l, &never, -1);
		tableload__stop(l, &st);
		/* the tables written follow the listing */
		text = slurp(unwind, &len);
		f = text ? fopen(unwind, "w") : NULL;
		if (f) {
			fwrite(text + lst.st_size, 1, len - lst.st_size, f);
			fclose(f);
		}
		free(text);
		parse(unwind, &w);
		test_condf(w.py == 1 && st.python == 1 && w.py_ino == pst.st_ino &&
			   (round == 0 || st.cached >= 1),
			   "%s: python3.11's table carries its layout (%d tables with one, %llu counted)",
			   round ? "from the cache" : "compiled", w.py,
			   (unsigned long long)st.python);
		test_condf(w.upy.runtime == 0xa56220 - 0x400000 &&
			   (w.upy.version >> 16) == 0x030b &&
			   w.upy.tstate_current == 576 &&
			   w.upy.interp_gil == CPROF_UPY_NONE &&
			   w.upy.interp_head == 40 && w.upy.ts_native_tid == 160 &&
			   w.upy.fr_is_entry == 68 && w.upy.code_adaptive == 184 &&
			   w.upy.code_type && w.upy.code_type < w.upy.runtime,
			   "%s: its layout in offset space: _PyRuntime at %#llx, version %#x, tstate_current %u",
			   round ? "from the cache" : "compiled",
			   (unsigned long long)w.upy.runtime, w.upy.version,
			   w.upy.tstate_current);
	}
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	/* a module that holds none: the cache's tables before any program */
	close(open(unwind, O_CREAT | O_WRONLY | O_TRUNC, 0600));
	l = tableload__start(dir);
	tableload__wait(l, &never, -1);
	tableload__stop(l, &st);
	parse(unwind, &w);
	test_condf(st.preloaded >= 1 && w.py == 1 && st.python == 1 &&
		   w.upy.runtime == 0xa56220 - 0x400000,
		   "preloaded from the cache: python3.11's table carries its layout (%llu preloaded, %d with one)",
		   (unsigned long long)st.preloaded, w.py);
	tableload_set_cache("");
}

/*
 * A process that maps a program from a FUSE file system whose server then
 * answers nothing (a user's, mounted allow_other): its table is not
 * compiled, and the loader is not held by it: it goes idle, and the
 * process's other files are loaded.  Skipped without FUSE (root, mount).
 */
static void test_fuse(const char *dir, const char *unwind)
{
	struct tableload_stats st = { 0 };
	struct fusehang h;
	struct tableload *l;
	struct written w;
	int ready[2];
	bool idle;
	pid_t pid;
	char c;

	if (fusehang_start(&h, tmp_path("fusemnt"), "/bin/true")) {
		printf("SKIP FUSE: no FUSE mount here (%s)\n", strerror(errno));
		return;
	}
	if (pipe2(ready, O_CLOEXEC)) {
		fusehang_stop(&h);
		return;
	}
	pid = fork();
	if (pid == 0) {
		int fd = open(h.file, O_RDONLY | O_CLOEXEC);
		struct stat fs;

		if (fd < 0 || fstat(fd, &fs) ||
		    mmap(NULL, fs.st_size, PROT_READ | PROT_EXEC, MAP_PRIVATE,
			 fd, 0) == MAP_FAILED)
			_exit(1);
		close(fd);
		if (write(ready[1], "r", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	close(ready[1]);
	test_cond("a process maps a program from a FUSE mount",
		  pid > 0 && read(ready[0], &c, 1) == 1);
	close(ready[0]);
	fusehang_hang(&h);
	if (truncate(unwind, 0))
		test_cond("emptying the unwind stand-in", false);
	l = tableload__start(dir);
	tableload__scan(l, pid);
	idle = tableload__wait(l, &never, 30);
	/* a loader held by the server lets go when it ends */
	if (!idle)
		fusehang_stop(&h);
	tableload__stop(l, &st);
	parse(unwind, &w);
	test_condf(idle && st.on_fuse == 1 && w.tables >= 1 &&
		   w.tables == (int)st.loaded,
		   "its server answering nothing, the loader is not held: %s, %llu mapping on FUSE not read, %d tables of its other files",
		   idle ? "idle" : "still busy after 30 s",
		   (unsigned long long)st.on_fuse, w.tables);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);

	/* the same file named by the module's record, which says FUSE */
	{
		const struct cprof_file_id fid = {
			.ino = 2, .dev = 1, .fs_magic = FUSE_SUPER_MAGIC,
		};
		struct sb b;

		sb_init(&b);
		sb_mmap_id(&b, 1, gone_pid(), 0x400000, 0x401000, h.file,
			   &fid);
		l = tableload__start(dir);
		tableload__note(l, (struct cprof_mmap *)(b.buf + b.offs[0]));
		sb_free(&b);
		idle = tableload__wait(l, &never, 30);
		tableload__stop(l, &st);
		test_condf(idle && st.on_fuse == 1,
			   "a stream's record of a file on FUSE: not opened (%s, %llu on FUSE)",
			   idle ? "idle" : "busy", (unsigned long long)st.on_fuse);
	}

	/*
	 * A record of an older module (no file identity, so nothing says
	 * FUSE) of a process gone: its path is opened on the host, and the
	 * server holds the loader.  Stopping it waits STOP_WAIT_SECONDS, then
	 * leaves the thread behind: the run still ends.
	 */
	{
		struct cprof_mmap *m;
		struct sb b;

		sb_init(&b);
		sb_mmap(&b, 1, gone_pid(), 0x400000, 0x401000, 0, h.file,
			NULL, 0);
		m = (struct cprof_mmap *)(b.buf + b.offs[0]);
		l = tableload__start(dir);
		tableload__note(l, m);
		sb_free(&b);
		idle = tableload__wait(l, &never, 3);
		alarm(120);
		tableload__stop(l, &st);
		alarm(0);
		test_condf(!idle,
			   "a path on FUSE that nothing said was there: the loader held, and stopping it still returns");
	}
	/* the server gone, the thread let go frees what it had */
	fusehang_stop(&h);
	usleep(200000);
}

/* parse() what was written after the listing of listed_size bytes. */
static void parse_after(const char *unwind, off_t listed_size,
			struct written *w)
{
	size_t len = 0;
	char *text = slurp(unwind, &len);
	FILE *f = text ? fopen(unwind, "w") : NULL;

	if (f) {
		fwrite(text + listed_size, 1, len - listed_size, f);
		fclose(f);
	}
	free(text);
	parse(unwind, w);
}

/* An unwind file whose module holds the vDSO's table only; its size. */
static off_t module_with_vdso(const char *unwind)
{
	struct stat lst;

	close(open(unwind, O_CREAT | O_WRONLY | O_TRUNC, 0600));
	list_vdso(unwind);
	stat(unwind, &lst);
	return lst.st_size;
}

/*
 * The loader's two queues: what a stream names (tableload__note()) is
 * loaded before the files a scan queued, and a scan of the cache only
 * (a short profile's) compiles nothing: a file not cached waits for its
 * mapping record.
 */
static void test_queues(const char *dir, const char *unwind)
{
	const char *python = "/usr/bin/python3.11", *cache = tmp_path("qcache");
	struct tableload_stats st, full;
	struct tableload *l;
	struct written w;
	struct stat pst;
	off_t listed;
	int at;

	if (stat(python, &pst)) {
		printf("(%s is not installed: no queue test)\n", python);
		return;
	}
	tableload_set_cache("");
	/* python3.11 is no mapping of this process: named by a record only */
	listed = module_with_vdso(unwind);
	l = tableload__start(dir);
	tableload__scan(l, getpid());
	note_path(l, python);
	tableload__wait(l, &never, -1);
	tableload__stop(l, &st);
	parse_after(unwind, listed, &w);
	for (at = 0; at < w.tables && at < 64; at++)
		if (w.ino[at] == pst.st_ino)
			break;
	/* at most the file the thread held when the record came before it */
	test_condf(w.tables >= 4 && !w.bad && at <= 1,
		   "a stream's mapping record before the scan's files: python3.11's table written %d of %d",
		   at + 1, w.tables);

	listed = module_with_vdso(unwind);
	l = tableload__start(dir);
	tableload__scan_cached(l, getpid());
	tableload__wait(l, &never, -1);
	note_path(l, python);
	tableload__wait(l, &never, -1);
	tableload__stop(l, &st);
	parse_after(unwind, listed, &w);
	test_condf(w.tables == 1 && w.ino[0] == pst.st_ino && st.loaded == 1 &&
		   !w.bad,
		   "no cache: a scan of the cache only compiles nothing, a record's file is compiled (%d tables, the first %s)",
		   w.tables, w.tables && w.ino[0] == pst.st_ino ?
		   "python3.11's" : "another");

	mkdir(cache, 0700);
	tableload_set_cache(cache);
	listed = module_with_vdso(unwind);
	l = tableload__start(dir);
	tableload__scan(l, getpid());
	tableload__wait(l, &never, -1);
	tableload__stop(l, &full);
	listed = module_with_vdso(unwind);
	l = tableload__start(dir);
	tableload__scan_cached(l, getpid());
	tableload__wait(l, &never, -1);
	tableload__stop(l, &st);
	parse_after(unwind, listed, &w);
	test_condf(full.loaded >= 3 && st.cached >= 3 &&
		   st.loaded == st.cached && !w.bad,
		   "a scan of the cache only: the %llu tables cached of %llu written, nothing compiled",
		   (unsigned long long)st.cached,
		   (unsigned long long)full.loaded);
	/* a cached table is on its way as a compiled one is */
	test_condf(w.busy >= 1 && w.last_say == CPROF_UTABLE_IDLE,
		   "... busy said to the module while they loaded (%d times), idle after",
		   w.busy);
	tableload_set_cache("");
}

int main(void)
{
	const char *dir = tmp_path("proc");
	char unwind[4096];
	struct tableload_stats st;
	struct tableload *l;
	struct written w;
	struct stat self;
	FILE *f;

	mkdir(dir, 0700);
	test_cond("no unwind file: no loader, no message",
		  tableload__start(dir) == NULL);

	snprintf(unwind, sizeof(unwind), "%s/unwind", dir);
	close(open(unwind, O_CREAT | O_WRONLY, 0600));
	l = tableload__start(dir);
	test_cond("a loader on the unwind file", l != NULL);
	tableload__scan(l, getpid());
	tableload__wait(l, &never, -1);
	tableload__stop(l, &st);
	parse(unwind, &w);
	test_condf(w.tables >= 2 && w.tables == (int)st.loaded,
		   "own mappings: %d tables written (this binary, libc, ld.so...), %llu counted",
		   w.tables, (unsigned long long)st.loaded);
	test_cond("every table well-formed", w.tables && !w.bad);
	/* (a busy is said again every 30 s: a slow machine says it twice) */
	test_condf(w.busy >= 1 && w.idle >= 1 && w.idle <= w.busy &&
		   w.last_say == CPROF_UTABLE_IDLE,
		   "loading said to the module (%d times), and that it ended (%d, last)",
		   w.busy, w.idle);
	test_condf(w.rules * 20 < w.rows,
		   "each rule written once: %llu rules for %llu rows",
		   (unsigned long long)w.rules, (unsigned long long)w.rows);
	test_cond("this binary's table keyed by its fstat()", w.self == 1);
	test_condf(w.vdso == 1 && w.vdso_size && w.vdso_size == vdso_size(),
		   "the vDSO's table, keyed by the size of its mapping (%d, %llu bytes)",
		   w.vdso, (unsigned long long)w.vdso_size);
	test_cond("no file written twice", !w.dup);

	/* The module lists this binary's table: it is not written again. */
	stat("/proc/self/exe", &self);
	f = fopen(unwind, "w");
	fprintf(f, "%02x:%02x %llu %llu %lld 10 120\n", major(self.st_dev),
		minor(self.st_dev), (unsigned long long)self.st_ino,
		(unsigned long long)self.st_size,
		(long long)self.st_mtim.tv_sec * 1000000000LL +
		self.st_mtim.tv_nsec);
	fclose(f);
	l = tableload__start(dir);
	tableload__scan(l, getpid());
	tableload__scan(l, getpid());
	tableload__wait(l, &never, -1);
	tableload__stop(l, &st);
	parse(unwind, &w);
	/* the listing line is not a table: parse() stops at it */
	test_cond("tables the module holds are not written again", w.bad == 1 &&
		  !w.tables);
	{
		size_t len = 0;
		char *text = slurp(unwind, &len);
		size_t line = text ? strcspn(text, "\n") + 1 : 0;

		/* what follows the listing: the tables written */
		if (text) {
			FILE *out = fopen(unwind, "w");

			fwrite(text + line, 1, len - line, out);
			fclose(out);
		}
		free(text);
	}
	parse(unwind, &w);
	test_condf(!w.self && w.tables >= 1 && !w.bad && !w.dup &&
		   w.tables == (int)st.loaded,
		   "the others written once though scanned twice: %d tables",
		   w.tables);
	test_sweep(dir, unwind);
	test_evicted(dir, unwind);
	test_sweep_leftovers(dir, unwind);
	test_report_stops(dir, unwind);
	test_preload_yields(dir, unwind);
	test_python(dir, unwind);
	test_fuse(dir, unwind);
	test_queues(dir, unwind);
	return test_report();
}
