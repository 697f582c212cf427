// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * test_tablecache: compiled unwind tables kept on disk (tablecache.c).
 *
 * A table kept is read back as it was; the same file written to since,
 * an entry changed on disk, one whose rows the module would refuse (it is
 * removed), a symlink or a FIFO in an entry's place, or a directory
 * others may write are never used; the most recently used come
 * first, and a loader on a fresh module loads them before any program
 * asks (tableload.c).  A default cache on a read-only file system gives
 * way to its fallback, said once.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdint.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "unwind/tablecache.h"
#include "unwind/tableload.h"
#include "test.h"
#include "testutil.h"

static const volatile sig_atomic_t never;

/* A table of n rows, row i at 16 i with its own offset, encoded. */
static void make_table(struct tableenc *e, size_t n)
{
	struct cfi_table t = { 0 };
	size_t i;

	t.pc = calloc(n, sizeof(*t.pc));
	t.row = calloc(n, sizeof(*t.row));
	for (i = 0; i < n; i++) {
		t.pc[i] = i * 16;
		t.row[i].cfa_base = i + 1 < n ? CPROF_CFA_SP : CPROF_CFA_NONE;
		t.row[i].cfa_off = 8 + i;
	}
	t.n = n;
	t.frame_pointers = true;
	t.stop_bytes[CFI_STOP_SIGNAL] = 10;
	if (tableenc_encode(&t, e))
		memset(e, 0, sizeof(*e));
	cfi_table_free(&t);
}

static bool same_table(const struct tableenc *a, const struct tableenc *b)
{
	return a->body && b->body && a->nr_rows == b->nr_rows &&
	       a->nr_rules == b->nr_rules && a->len == b->len &&
	       a->frame_pointers == b->frame_pointers &&
	       !memcmp(a->body, b->body, a->len) &&
	       !memcmp(a->stop_bytes, b->stop_bytes, sizeof(a->stop_bytes));
}

/* The one entry file in dir (its name into name); false if not one. */
static bool only_entry(const char *dir, char *name, size_t size)
{
	char cmd[4200];
	FILE *p;
	int n = 0;

	snprintf(cmd, sizeof(cmd), "ls '%s'", dir);
	p = popen(cmd, "r");
	while (p && fgets(name, size, p))
		n++;
	if (p)
		pclose(p);
	name[strcspn(name, "\n")] = '\0';
	return n == 1;
}

struct seen {
	int n;
	char path[4][256];
	size_t rows[4];
};

static void collect(void *arg, const struct stat *st, const char *path,
		    const struct tableenc *t)
{
	struct seen *s = arg;

	(void)st;
	if (s->n < 4) {
		snprintf(s->path[s->n], sizeof(s->path[0]), "%s", path);
		s->rows[s->n] = t->nr_rows;
	}
	s->n++;
}

/*
 * In a mount namespace of its own: the default on a read-only tmpfs.  Each
 * check a bit of the exit status when it fails; 77 when no namespace can
 * be made; the warnings on stderr.
 */
static int read_only_default(const char *ro, const char *fallback,
			     const char *writable, const char *unused)
{
	char tables[4200], name[512];
	struct tableenc t, back;
	struct tablecache *c;
	struct stat st;
	int bad = 0;

	if (unshare(CLONE_NEWNS) ||
	    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
	    mount("tmpfs", ro, "tmpfs", 0, "mode=0755"))
		return TEST_SKIP_EXIT;
	snprintf(tables, sizeof(tables), "%s/tables", ro);
	if (mkdir(tables, 0700) ||
	    mount(NULL, ro, NULL, MS_REMOUNT | MS_RDONLY, NULL))
		return TEST_SKIP_EXIT;
	stat("/proc/self/exe", &st);
	make_table(&t, 100);
	c = tablecache__open(tables, false);
	if (c || errno != EROFS)
		bad |= 1;
	tablecache__close(c);
	c = tablecache__open_default(tables, fallback);
	tablecache__put(c, &st, "/proc/self/exe", &t);
	if (!c || tablecache__get(c, &st, &back) ||
	    !only_entry(fallback, name, sizeof(name)))
		bad |= 2;
	tableenc_free(&back);
	tablecache__close(c);
	c = tablecache__open_default(tables, fallback);
	if (!c)
		bad |= 4;
	tablecache__close(c);
	if (tablecache__open_default(tables, NULL))
		bad |= 8;
	c = tablecache__open_default(writable, unused);
	if (!c || !access(unused, F_OK))
		bad |= 16;
	tablecache__close(c);
	tableenc_free(&t);
	return bad;
}

int main(void)
{
	const char *dir = tmp_path("cache"), *file = tmp_path("prog");
	char name[512], entry[4200];
	struct tableenc t, back;
	struct tablecache *c;
	struct stat st, st2;
	struct seen s = { 0 };
	int fd;

	run("echo program > '%s'", file);
	stat(file, &st);
	c = tablecache__open(dir, true);
	test_cond("a cache in a new directory", c != NULL);
	make_table(&t, 1000);
	tablecache__put(c, &st, file, &t);
	test_cond("a table kept is read back as it was",
		  tablecache__get(c, &st, &back) == 0 && same_table(&t, &back));
	tableenc_free(&back);

	/* the same file, written to: its ctime and mtime change */
	usleep(20000);
	run("echo more >> '%s'", file);
	stat(file, &st2);
	test_cond("the file written to since: not its table",
		  tablecache__get(c, &st2, &back) != 0);
	st2 = st;
	st2.st_ctim.tv_nsec ^= 1;
	test_cond("another ctime (a recycled inode, a chmod): not its table",
		  tablecache__get(c, &st2, &back) != 0);

	/* an entry changed on disk */
	test_cond("one entry file", only_entry(dir, name, sizeof(name)));
	snprintf(entry, sizeof(entry), "%s/%s", dir, name);
	fd = open(entry, O_RDWR);
	test_cond("an entry changed on disk (its CRC): not used",
		  pwrite(fd, "X", 1, 300) == 1 &&
		  tablecache__get(c, &st, &back) != 0);
	close(fd);
	/* a symlink to a good entry, and a FIFO, in an entry's place */
	unlink(entry);
	tablecache__put(c, &st, file, &t);
	run("mv '%s' '%s.real' && ln -s '%s.real' '%s'", entry, entry, entry,
	    entry);
	test_cond("a symlink in an entry's place: not followed",
		  tablecache__get(c, &st, &back) != 0);
	unlink(entry);
	mkfifo(entry, 0600);
	test_cond("a FIFO in an entry's place: refused, not waited on",
		  tablecache__get(c, &st, &back) != 0);
	unlink(entry);
	run("mv '%s.real' '%s'", entry, entry);
	test_cond("... the entry back: used",
		  tablecache__get(c, &st, &back) == 0 && same_table(&t, &back));
	tableenc_free(&back);
	/* rows the module would refuse, under a good CRC: dropped */
	{
		struct tableenc bad = t;
		uint32_t zero = 0;

		bad.body = malloc(t.len);
		memcpy(bad.body, t.body, t.len);
		/* the second row's offset back to the first's */
		memcpy(bad.body + (size_t)t.nr_rules * sizeof(struct cprof_urow) +
		       sizeof(zero), &zero, sizeof(zero));
		tablecache__put(c, &st, file, &bad);
		test_cond("an entry whose rows the module would refuse: not used, removed",
			  tablecache__get(c, &st, &back) != 0 &&
			  run("test -z \"$(ls '%s')\"", dir) == 0);
		free(bad.body);
		tablecache__put(c, &st, file, &t);
		test_cond("... the table kept again: used",
			  tablecache__get(c, &st, &back) == 0 &&
			  same_table(&t, &back));
		tableenc_free(&back);
	}

	/*
	 * Most recently used first, only files at their path as they are
	 * now (file was written to since its entry), max_rows bounding what
	 * is read; an older entry of the same inode (second, as it was
	 * before a write) is not given, so it cannot replace the table of
	 * the file as it is.
	 */
	{
		const char *one = tmp_path("one"), *two = tmp_path("two");
		struct stat s1, s2, old2;

		run("echo one > '%s' && echo two > '%s' && chmod 0755 '%s' '%s'",
		    one, two, one, two);
		stat(one, &s1);
		stat(two, &old2);
		tablecache__put(c, &s1, one, &t);
		usleep(20000);
		run("echo more >> '%s'", two);
		stat(two, &s2);
		tablecache__put(c, &s2, two, &t);
		usleep(20000);
		tablecache__put(c, &old2, two, &t);
		tablecache__each_recent(c, UINT64_MAX, NULL, collect, &s);
		test_condf(s.n == 2 && !strcmp(s.path[0], two) &&
			   !strcmp(s.path[1], one) && s.rows[0] == 1000,
			   "each_recent: files as they are now, the newest first; not an older entry of the same inode, nor a file written to since (%d: %s, %s)",
			   s.n, s.path[0], s.path[1]);
		memset(&s, 0, sizeof(s));
		tablecache__each_recent(c, 1, NULL, collect, &s);
		test_condf(s.n == 1, "each_recent: up to max_rows (%d)", s.n);
		run("chmod 0777 '%s'", one);
		memset(&s, 0, sizeof(s));
		tablecache__each_recent(c, UINT64_MAX, NULL, collect, &s);
		test_condf(s.n == 1,
			   "a file others may write: not kept, not preloaded (%d)",
			   s.n);
		stat(one, &s1);
		test_cond("... tablecache__keeps() says so",
			  !tablecache__keeps(&s1, -1));
	}
	tablecache__close(c);
	tableenc_free(&t);

	/* a directory others may write is not used */
	run("chmod 0777 '%s'", dir);
	c = tablecache__open(dir, true);
	test_cond("a directory others may write: not used", c == NULL);
	run("chmod 0700 '%s'", dir);

	/*
	 * The loader: a first one compiles this test's program and keeps its
	 * table; a second on a fresh (empty) module loads it before any
	 * program asks, and compiles nothing.
	 */
	{
		const char *proc = tmp_path("proc"), *cache = tmp_path("tc");
		char unwind[4200];
		struct tableload_stats a, b;
		struct tableload *l;

		mkdir(proc, 0700);
		snprintf(unwind, sizeof(unwind), "%s/unwind", proc);
		close(open(unwind, O_CREAT | O_WRONLY | O_TRUNC, 0600));
		tableload_set_cache(cache);
		l = tableload__start(proc);
		tableload__scan(l, getpid());
		tableload__wait(l, &never, -1);
		tableload__stop(l, &a);
		close(open(unwind, O_CREAT | O_WRONLY | O_TRUNC, 0600));
		l = tableload__start(proc);
		tableload__scan(l, getpid());
		tableload__wait(l, &never, -1);
		tableload__stop(l, &b);
		tableload_set_cache("");
		test_condf(a.loaded >= 3 && !a.cached && !a.preloaded &&
			   b.preloaded + 1 == a.loaded && b.loaded == a.loaded,
			   "a loader on a fresh module: the cache's tables before any program asks (%llu compiled, then %llu preloaded of %llu; %llu/%llu without CFI, %llu/%llu changed)",
			   (unsigned long long)a.loaded,
			   (unsigned long long)b.preloaded,
			   (unsigned long long)b.loaded,
			   (unsigned long long)a.no_cfi,
			   (unsigned long long)b.no_cfi,
			   (unsigned long long)a.changed,
			   (unsigned long long)b.changed);
	}
	{
		const char *ro = tmp_path("ro"), *fb = tmp_path("run/tables");
		const char *err = tmp_path("ro.err"), *w = tmp_path("rw");
		const char *unused = tmp_path("unused");
		int status = -1, said;
		char *text;
		pid_t pid;

		mkdir(ro, 0700);
		mkdir(tmp_path("run"), 0700);
		pid = fork();
		if (pid == 0) {
			if (!freopen(err, "w", stderr))
				_exit(100);
			status = read_only_default(ro, fb, w, unused);
			fflush(stderr);
			_exit(status);
		}
		waitpid(pid, &status, 0);
		if (WIFEXITED(status) && WEXITSTATUS(status) == TEST_SKIP_EXIT) {
			printf("SKIP no mount namespace here: the read-only default is not tried\n");
			return test_report();
		}
		said = run("test \"$(grep -c 'read-only file system: tables are kept in' '%s')\" = 1",
			   err);
		text = slurp(err, NULL);
		test_condf(WIFEXITED(status) && !(WEXITSTATUS(status) & 1),
			   "a cache on a read-only file system: not opened, EROFS (status %#x)",
			   status);
		test_condf(WIFEXITED(status) && !(WEXITSTATUS(status) & 6),
			   "the default on a read-only file system: its fallback keeps the tables (status %#x)",
			   status);
		test_condf(said == 0,
			   "... which one warning line says, once a run: %s",
			   text ? text : "(none)");
		test_condf(WIFEXITED(status) && !(WEXITSTATUS(status) & 8),
			   "... and no fallback: no cache (status %#x)", status);
		test_condf(WIFEXITED(status) && !(WEXITSTATUS(status) & 16),
			   "a writable default: used, its fallback never made (status %#x)",
			   status);
		free(text);
	}
	return test_report();
}
