// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * test_mapfile: a mapping's frames are named from the very file mapped
 * (mapfile.h), never from another file at the same path.
 *
 * This process maps one build of a library, "v1", then another build is
 * renamed over its path ("v2", as a container or an upgrade would leave
 * the path) and mapped too.  A stream of this boot with their records
 * (each with its file's device and inode, as the module writes them) and
 * one sample in each is converted by cprof-dump:
 *   - v1's frame is named from v1 (read through /proc/PID/map_files),
 *     v2's from v2 (at its path): same path, same process, two files;
 *   - a record claiming v1's range but another file (a reused pid's
 *     mapping), and one of a process that is gone whose file is not at
 *     its path, stay addresses, the summary saying why;
 *   - a stream of another boot (-i of a file from elsewhere) reads the
 *     path's file, as before the module recorded identities.
 * Also mapfile_open()'s own answers.
 */
#include <errno.h>
#include <signal.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lib/mapfile.h"
#include "streambuild.h"
#include "test.h"
#include "testutil.h"

#define PAGE	4096u

/* The file offset of function fn in lib (a DSO: addresses are offsets). */
static uint64_t func_offset(const char *lib, const char *fn)
{
	char cmd[1024], *out;
	uint64_t off = 0;

	snprintf(cmd, sizeof(cmd), "nm '%s' | awk '$3 == \"%s\" { print $1 }' > '%s'",
		 lib, fn, tmp_path("nm.txt"));
	if (run("%s", cmd))
		return 0;
	out = slurp(tmp_path("nm.txt"), NULL);
	if (out)
		off = strtoull(out, NULL, 16);
	free(out);
	return off;
}

/* path mapped whole, read-only; *id its file's */
static void *map_whole(const char *path, size_t *len,
		       struct cprof_file_id *id)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	void *p;

	if (fd < 0 || fstat(fd, &st)) {
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	*id = file_id(fd);
	*len = ((size_t)st.st_size + PAGE - 1) & ~(size_t)(PAGE - 1);
	p = mmap(NULL, *len, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	return p == MAP_FAILED ? NULL : p;
}

/* The folded line of comm's sample, or "" (the line is returned whole). */
static const char *line_of(const char *folded, const char *comm, char *buf,
			   size_t size)
{
	const char *p = folded;
	size_t n = strlen(comm);

	buf[0] = '\0';
	while (p && *p) {
		const char *eol = strchr(p, '\n');
		size_t len = eol ? (size_t)(eol - p) : strlen(p);

		if (len > n && !strncmp(p, comm, n) && p[n] == ';') {
			snprintf(buf, size, "%.*s", (int)len, p);
			break;
		}
		p = eol ? eol + 1 : NULL;
	}
	return buf;
}

struct fixture {
	const char *path;		/* where v1 was, v2 is */
	uint64_t a, alen, b, blen;	/* v1's and v2's mappings here */
	struct cprof_file_id v0, v1, v2;	/* v0: a build removed */
	uint64_t off1, off2;		/* host_build in v1, container_build in v2 */
	pid_t child;			/* a fork: the same mappings, alive */
	pid_t gone;			/* a process reaped */
};

static void sample(struct sb *b, pid_t pid, const char *comm, uint64_t ip)
{
	sb_sample(b, 10, (uint32_t)pid, (uint32_t)pid, 0, comm,
		  CPROF_SAMPLE_USER_MODE, 0, NULL, 1, &ip);
}

static int convert(const struct fixture *fx, bool this_boot,
		   const struct cprof_file_id *other, char **folded,
		   char **err)
{
	struct cprof_header h = sb_header_of_boot(this_boot);
	const char *in = tmp_path("in.bin"), *out = tmp_path("out.txt");
	const char *errp = tmp_path("err.txt");
	uint64_t far = fx->a + (128u << 20);	/* mapped by no one here */
	struct cprof_file_id v1 = fx->v1, forged = *other;
	pid_t me = getpid();
	struct sb b;
	int rc;

	sb_init(&b);
	sb_header(&b, &h);
	/*
	 * First, a process gone that mapped v1 (elsewhere): its file is not
	 * at its path; a process further on maps it and still runs.
	 */
	sb_mmap_id(&b, 1, (uint32_t)fx->gone, far, far + fx->alen, fx->path,
		   &fx->v1);
	sample(&b, fx->gone, "gonev1", far + fx->off1);
	v1.start_ns = start_ns(me);
	sb_mmap_id(&b, 1, (uint32_t)me, fx->a, fx->a + fx->alen, fx->path,
		   &v1);
	sample(&b, me, "v1", fx->a + fx->off1);
	sb_mmap_id(&b, 1, (uint32_t)me, fx->b, fx->b + fx->blen, fx->path,
		   &fx->v2);
	sample(&b, me, "v2", fx->b + fx->off2);
	/*
	 * A live process (a reused pid, as it were) whose mapping at that
	 * range is v1, where the record says another file
	 */
	forged.start_ns = start_ns(fx->child);
	sb_mmap_id(&b, 1, (uint32_t)fx->child, fx->a, fx->a + fx->alen,
		   fx->path, &forged);
	sample(&b, fx->child, "forged", fx->a + fx->off1);
	/* a process gone that mapped v0, a build now nowhere */
	sb_mmap_id(&b, 1, (uint32_t)fx->gone, fx->b, fx->b + fx->blen,
		   fx->path, &fx->v0);
	sample(&b, fx->gone, "gone", fx->b + fx->off1);
	sb_end(&b, 1000000000, CPROF_END_COMPLETE, 0);
	rc = sb_write(&b, in, b.len);
	sb_free(&b);
	if (rc)
		return -1;
	rc = run("%s -i '%s' -f folded -o '%s' --kallsyms /dev/null 2>'%s'",
		 cprof_dump(), in, out, errp);
	*folded = slurp(out, NULL);
	*err = slurp(errp, NULL);
	return rc;
}

static void test_resolve(void)
{
	const char *src = tmp_path("v.c"), *lib1 = tmp_path("libv1.so");
	const char *lib2 = tmp_path("libv2.so"), *other = tmp_path("other");
	char path[512], line[1024], *folded = NULL, *err = NULL;
	struct fixture fx = { 0 };
	struct cprof_file_id ost;
	void *a, *b;
	size_t alen, blen;
	int rc;

	snprintf(path, sizeof(path), "%s", tmp_path("libv.so"));
	fx.path = path;
	if (run("printf 'int NAME(int x) { return x * 3 + 1; }\\n' > '%s' && "
		"cc -shared -fPIC -O0 -g0 -DNAME=host_build -o '%s' '%s' && "
		"cc -shared -fPIC -O0 -g0 -DNAME=container_build -o '%s' '%s' && "
		"echo other > '%s' && cp '%s' '%s'",
		src, lib1, src, lib2, src, other, lib1, path)) {
		test_cond("fixture: two builds of a library", false);
		return;
	}
	if (run("cp '%s' '%s.v0'", lib1, path) ||
	    !(fx.v0 = path_id(tmp_path("libv.so.v0"))).ino ||
	    unlink(tmp_path("libv.so.v0"))) {
		test_cond("fixture: a build removed", false);
		return;
	}
	fx.off1 = func_offset(lib1, "host_build");
	fx.off2 = func_offset(lib2, "container_build");
	a = map_whole(path, &alen, &fx.v1);
	/* the other build over its path, as another namespace would see */
	rc = run("cp '%s' '%s.new' && mv '%s.new' '%s'", lib2, path, path, path);
	b = map_whole(path, &blen, &fx.v2);
	test_cond("fixture: v1 mapped, v2 at its path and mapped",
		  a && b && !rc && fx.off1 && fx.off2 &&
		  fx.v1.ino != fx.v2.ino && (ost = path_id(other)).ino);
	if (!a || !b || rc || !fx.off1 || !fx.off2)
		return;
	fx.a = (uintptr_t)a;
	fx.alen = alen;
	fx.b = (uintptr_t)b;
	fx.blen = blen;
	fx.gone = gone_pid();
	fx.child = fork();
	if (fx.child == 0) {
		pause();
		_exit(0);
	}

	rc = convert(&fx, true, &ost, &folded, &err);
	test_condf(rc == 0 && folded, "this boot's stream converts (%d)", rc);
	test_condf(strstr(line_of(folded, "v1", line, sizeof(line)),
			  ";host_build "),
		   "v1's frame named from v1, through the process (%s)", line);
	test_condf(strstr(line_of(folded, "v2", line, sizeof(line)),
			  ";container_build "),
		   "v2's frame named from v2, at its path (%s)", line);
	line_of(folded, "forged", line, sizeof(line));
	test_condf(line[0] && !strstr(line, "_build"),
		   "a live process mapping v1 where its record says another file: an address (%s)",
		   line);
	test_condf(strstr(line_of(folded, "gonev1", line, sizeof(line)),
			  ";host_build "),
		   "a gone process that mapped v1, first in the stream: named from v1 through a later one (%s)",
		   line);
	line_of(folded, "gone", line, sizeof(line));
	test_condf(line[0] && !strstr(line, "_build"),
		   "a gone process whose file is nowhere: an address (%s)",
		   line);
	test_condf(err && strstr(err, "the process is gone") &&
		   strstr(err, "nor the process's mapping is the file mapped"),
		   "... the summary says why, for both (%s)", err ? err : "");
	free(folded);
	free(err);

	rc = convert(&fx, false, &ost, &folded, &err);
	test_condf(rc == 0 &&
		   strstr(line_of(folded, "gone", line, sizeof(line)),
			  ";container_build "),
		   "another boot's stream: the path's file, as before (%s)",
		   line);
	free(folded);
	free(err);
	if (fx.child > 0) {
		kill(fx.child, SIGKILL);
		waitpid(fx.child, NULL, 0);
	}
	munmap(a, alen);
	munmap(b, blen);
}

static void test_open(void)
{
	const char *f = tmp_path("plain"), *why = NULL, *via = NULL;
	struct mapfile m = { .path = f, .has_id = true, .strict = true };
	struct cprof_file_id id;
	struct stat st, st2;
	size_t len;
	void *p;
	int fd;

	if (run("head -c 10000 /dev/urandom > '%s'", f) || stat(f, &st)) {
		test_cond("fixture", false);
		return;
	}
	m.id = path_id(f);
	fd = mapfile_open(&m, &st2, &why, &via);
	test_cond("the very file at its path opens there",
		  fd >= 0 && via && !strcmp(via, "path") &&
		  st2.st_ino == st.st_ino);
	if (fd >= 0)
		close(fd);

	m.id.ino++;
	fd = mapfile_open(&m, &st2, &why, &via);
	test_condf(fd < 0 && why && strstr(why, "another"),
		   "another inode at its path, no process: refused (%s)",
		   why ? why : "");
	m.strict = false;
	fd = mapfile_open(&m, &st2, &why, &via);
	test_cond("... taken when not strict", fd >= 0);
	if (fd >= 0)
		close(fd);

	/* through the process: this one maps it, then the path goes */
	m.strict = true;
	m.id.ino--;
	p = map_whole(f, &len, &id);
	unlink(f);
	test_cond("unlinking leaves the identity as it was",
		  p && !memcmp(&id, &m.id, sizeof(id)));
	m.pid = (uint32_t)getpid();
	m.start = (uintptr_t)p;
	m.end = (uintptr_t)p + len;
	fd = p ? mapfile_open(&m, &st2, &why, &via) : -1;
	test_cond("an unlinked file, through the process mapping it",
		  fd >= 0 && via && !strcmp(via, "process") &&
		  st2.st_ino == st.st_ino);
	if (fd >= 0)
		close(fd);
	alarm(10);
	fd = p && !mkfifo(f, 0600) ? mapfile_open(&m, &st2, &why, &via) : -1;
	alarm(0);
	test_cond("... also with a FIFO planted at its path",
		  fd >= 0 && via && !strcmp(via, "process"));
	if (fd >= 0)
		close(fd);
	m.pid = (uint32_t)gone_pid();
	alarm(10);
	fd = mapfile_open(&m, &st2, &why, &via);
	alarm(0);
	test_condf(fd < 0 && why && !strcmp(why, "not a regular file"),
		   "... which, the process gone, is named as what it is (%s)",
		   why ? why : "");
	m.pid = (uint32_t)getpid();
	unlink(f);
	m.id.ino++;
	fd = p ? mapfile_open(&m, &st2, &why, &via) : 0;
	test_cond("... but not if the mapping there is another file",
		  fd < 0);
	m.id.ino--;
	m.id.start_ns = start_ns(getpid());
	fd = p ? mapfile_open(&m, &st2, &why, &via) : -1;
	test_cond("... through the process it started as", fd >= 0);
	if (fd >= 0)
		close(fd);
	m.id.start_ns += 2000000000ULL;
	fd = p ? mapfile_open(&m, &st2, &why, &via) : 0;
	test_cond("... not through a pid that another process started as (a reused pid)",
		  fd < 0);
	m.id.start_ns = 0;
	if (m.id.btime_ns) {
		m.id.btime_ns++;
		fd = p ? mapfile_open(&m, &st2, &why, &via) : 0;
		test_cond("... nor if it was born at another time (a recycled inode number)",
			  fd < 0);
		m.id.btime_ns--;
	}
	m.end += PAGE;
	fd = p ? mapfile_open(&m, &st2, &why, &via) : 0;
	test_cond("... nor for another range", fd < 0);
	if (p)
		munmap(p, len);

	fd = mapfile_open(MAPFILE_PATH("/dev/null"), &st2, &why, &via);
	test_condf(fd < 0 && why && !strcmp(why, "not a regular file"),
		   "a device is refused (%s)", why ? why : "");
}

int main(void)
{
	test_open();
	test_resolve();
	return test_report();
}
