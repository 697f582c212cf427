// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * test_container: the frames of a process in another mount namespace are
 * named from the files it saw (userland/procview.c, and the view in the
 * keys of elfsyms.c's cache and resolve.c's mappings), never from the
 * host's file at the same path.
 *
 * Three builds of one library, laid out alike (functions of equal-length
 * names at the same offsets): the host's, at lib/libpick.so; another,
 * bind-mounted over that path in a mount namespace of its own; and a
 * forged one carrying the host build's build ID, bind-mounted likewise.
 * Processes (sleep, the library preloaded) map it at that path, in the
 * host's view or in their own; a stream of their mapping records and one
 * sample each in the library is read with the views noted, as a live
 * profile is, and resolved:
 *   - the namespace's process is named from its file, the host's process
 *     from the host's, in the same resolve;
 *   - the forged file (the host's build ID, at the host's path, even at the
 *     same addresses as the host process's mapping, first in the stream)
 *     names none of the host process's frames;
 *   - a stripped build's debug file is looked for in its process's view:
 *     a decoy with its build ID at that path in the host's is not read;
 *   - so is the dwz alternate file of that debug file;
 *   - a process that exited before symbolization is named from the file
 *     held since its record was read, in this process and in the child
 *     an --http answer or --every window is built in; without a held file
 *     its frame stays unnamed, the summary saying why;
 *   - a stream read from a file (no views) reads every file at the host's
 *     path: the namespace's frame is then not named from its file.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "answer.h"
#include "elfsyms.h"
#include "ingest.h"
#include "procview.h"
#include "resolve.h"
#include "streambuild.h"
#include "test.h"
#include "testutil.h"

#define ID_HOST		"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
#define ID_CTNR		"bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
#define ID_DBG		"cccccccccccccccccccccccccccccccccccccccc"
#define ID_LEN		20

static const char lib_src[] =
	"volatile int sink;\n"
	"__attribute__((noinline)) int NAME(int x)\n"
	"{\n"
	"	sink = x;\n"
	"	return x + 1;\n"
	"}\n";

/* its function in .symtab only: named from a debug file once stripped */
static const char dbg_src[] =
	"volatile int sink;\n"
	"static __attribute__((noinline)) int NAME(int x)\n"
	"{\n"
	"	sink = x;\n"
	"	return x + 1;\n"
	"}\n"
	"int pick_entry(int x)\n"
	"{\n"
	"	return NAME(x) * 2;\n"
	"}\n";

static const char kallsyms_text[] = "ffffffff81000000 T _stext\n";

static char lib[4200], ctnr[4200], fake[4200], dbg[4200], dbgdir[4200];
static char dotdebug[4200];
static uint8_t id_host[ID_LEN], id_ctnr[ID_LEN], id_dbg[ID_LEN];
static unsigned long fn_off;		/* the functions' file offset */

/* A process mapping lib, and where: its executable mapping of the file. */
struct proc {
	pid_t pid;
	uint64_t start, end, pgoff;
	unsigned long ino;		/* of the file it mapped */
};

static void unhex(uint8_t *out, const char *hex)
{
	size_t i;

	for (i = 0; i < ID_LEN; i++) {
		unsigned int x;

		sscanf(hex + 2 * i, "%2x", &x);
		out[i] = (uint8_t)x;
	}
}

/* The file offset of fn in the library at path (a .so: its address). */
static unsigned long offset_of(const char *path, const char *fn)
{
	unsigned long off = 0;
	char *text;

	if (run("nm --defined-only %s | awk '$3 == \"%s\" { print $1 }'",
		path, fn))
		return 0;
	text = slurp(tmp_path("out.txt"), NULL);
	if (text)
		off = strtoul(text, NULL, 16);
	free(text);
	return off;
}

/* Its executable mapping of lib, from /proc/PID/maps; 0 when there. */
static int find_mapping(struct proc *p)
{
	char path[64], line[8192], perm[8], file[4200];
	unsigned long long s, e, off;
	unsigned long ino;
	int found = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)p->pid);
	f = fopen(path, "r");
	while (f && fgets(line, sizeof(line), f)) {
		file[0] = '\0';
		if (sscanf(line, "%llx-%llx %7s %llx %*s %lu %4199s", &s, &e,
			   perm, &off, &ino, file) < 6 ||
		    strcmp(file, lib) || perm[2] != 'x')
			continue;
		p->start = s;
		p->end = e;
		p->pgoff = off;
		p->ino = ino;
		found = 0;
	}
	if (f)
		fclose(f);
	return found;
}

/*
 * sleep with lib preloaded: in the host's view (over NULL), or in a mount
 * namespace of its own with over bind-mounted on lib (and debug on lib's
 * .debug/, if given).  pid -1 on failure.
 */
static struct proc spawn_with(const char *over, const char *debug)
{
	struct proc p = { .pid = -1 };
	int i;

	p.pid = fork();
	if (p.pid == 0) {
		if (over)
			execlp("unshare", "unshare", "-m", "--propagation",
			       "private", "sh", "-c",
			       "mount --bind \"$1\" \"$2\" && "
			       "{ [ -z \"$3\" ] || mount --bind \"$3\" \"$4\"; } && "
			       "LD_PRELOAD=\"$2\" exec sleep 60",
			       "sh", over, lib, debug ? debug : "", dotdebug,
			       (char *)NULL);
		else
			execlp("sh", "sh", "-c",
			       "LD_PRELOAD=\"$1\" exec sleep 60", "sh", lib,
			       (char *)NULL);
		_exit(127);
	}
	for (i = 0; p.pid > 0 && i < 200; i++) {
		if (!find_mapping(&p))
			return p;
		usleep(25000);
	}
	if (p.pid > 0) {
		kill(p.pid, SIGKILL);
		waitpid(p.pid, NULL, 0);
	}
	p.pid = -1;
	return p;
}

static struct proc spawn(const char *over)
{
	return spawn_with(over, NULL);
}

static void reap(struct proc *p)
{
	if (p->pid <= 0)
		return;
	kill(p->pid, SIGKILL);
	waitpid(p->pid, NULL, 0);
	p->pid = -1;
}

static unsigned long ino_of(const char *path)
{
	struct stat st;

	return stat(path, &st) ? 0 : (unsigned long)st.st_ino;
}

/* A record of p's mapping (at another's range if at: the same addresses). */
static void add_mmap(struct sb *b, const struct proc *p, const struct proc *at,
		     const uint8_t *id)
{
	if (!at)
		at = p;
	sb_mmap(b, 1000, (uint32_t)p->pid, at->start, at->end, at->pgoff, lib,
		id, ID_LEN);
}

/* One sample of p in the functions' code (within at's range, if given). */
static void add_sample(struct sb *b, const struct proc *p,
		       const struct proc *at)
{
	uint64_t ip;

	if (!at)
		at = p;
	ip = at->start + fn_off + 2 - at->pgoff;
	sb_sample(b, 2000, (uint32_t)p->pid, (uint32_t)p->pid, 0, "sleep",
		  CPROF_SAMPLE_USER_MODE, 0, NULL, 1, &ip);
}

/*
 * The stream b, read as a live one with the views noted in v (NULL: none,
 * a stream from a file).  The profile, or NULL.
 */
static struct profile *ingest(struct sb *b, const char *name,
			      struct procviews *v)
{
	struct profile *p = NULL;
	struct ingest *in;
	int fd;

	sb_end(b, 1000000000, CPROF_END_COMPLETE, 0);
	if (sb_write(b, tmp_path(name), b->len))
		return NULL;
	fd = open(tmp_path(name), O_RDONLY);
	in = fd >= 0 ? ingest__open(fd, name, NULL, NULL) : NULL;
	if (in) {
		ingest__note_views(in, v);
		if (!ingest__run(in, NULL))
			p = ingest__take(in);
	}
	ingest__close(in);
	if (fd >= 0)
		close(fd);
	return p;
}

static struct resolve_opts opts(struct procviews *v)
{
	struct resolve_opts o = {
		.symbolize = true,
		.kallsyms = tmp_path("kallsyms"),
		.modules = tmp_path("modules"),
		.views = v,
	};

	return o;
}

/*
 * p resolved with views v; stderr (the summary) to TEST_TMPDIR/err-NAME.
 * NULL on failure.
 */
static struct resolved *resolve(const struct profile *p, struct procviews *v,
				const char *name)
{
	struct resolve_opts o = opts(v);
	struct resolved *r;
	int err = dup(STDERR_FILENO);
	int fd = open(tmp_path(name), O_WRONLY | O_CREAT | O_TRUNC, 0600);

	fflush(stderr);
	if (fd >= 0) {
		dup2(fd, STDERR_FILENO);
		close(fd);
	}
	r = resolved__new(p, &o);
	fflush(stderr);
	if (err >= 0) {
		dup2(err, STDERR_FILENO);
		close(err);
	}
	return r;
}

/* The name of pid's leaf frame in r: "" if unnamed, "-" if no sample. */
static const char *leaf_of(const struct resolved *r, pid_t pid)
{
	size_t i;

	for (i = 0; r && i < r->nr_samples; i++) {
		const struct res_sample *s = &r->samples[i];
		const struct res_location *l;

		if (s->pid != pid || !s->nr_locs)
			continue;
		l = &r->locations[r->loc_ids[s->loc] - 1];
		if (!l->nr_lines)
			return "";
		return strtab__get(r->strings,
				   r->functions[r->lines[l->line].function - 1].name);
	}
	return "-";
}

static bool has(const char *name, const char *text)
{
	char *s = slurp(tmp_path(name), NULL);
	bool found = s && strstr(s, text);

	free(s);
	return found;
}

/* Build the three libraries; 0 ok. */
static int build(const char *dir)
{
	const char *cc = getenv("CC") && *getenv("CC") ? getenv("CC") : "cc";
	FILE *f = fopen(tmp_path("lib.c"), "w");

	if (!f || fputs(lib_src, f) < 0 || fclose(f))
		return -1;
	snprintf(lib, sizeof(lib), "%s/lib/libpick.so", dir);
	snprintf(ctnr, sizeof(ctnr), "%s/ctnr/libpick.so", dir);
	snprintf(fake, sizeof(fake), "%s/fake/libpick.so", dir);
	snprintf(dbg, sizeof(dbg), "%s/dbg/libpick.so", dir);
	snprintf(dbgdir, sizeof(dbgdir), "%s/dbg/debug", dir);
	snprintf(dotdebug, sizeof(dotdebug), "%s/lib/.debug", dir);
	unhex(id_host, ID_HOST);
	unhex(id_ctnr, ID_CTNR);
	unhex(id_dbg, ID_DBG);
	f = fopen(tmp_path("dbg.c"), "w");
	if (!f || fputs(dbg_src, f) < 0 || fclose(f))
		return -1;
	/*
	 * names of one length: the builds laid out alike.  dbg: stripped,
	 * its debug file beside it in .debug/ (a namespace's view), and at
	 * that path in the host's view a decoy of the same build ID.
	 */
	return run("cd %s && mkdir -p lib/.debug ctnr fake dbg/debug && "
		   "%s -shared -fPIC -O1 -DNAME=pick_host_fn -Wl,--build-id=0x" ID_HOST " -o lib/libpick.so lib.c && "
		   "%s -shared -fPIC -O1 -DNAME=pick_ctnr_fn -Wl,--build-id=0x" ID_CTNR " -o ctnr/libpick.so lib.c && "
		   "%s -shared -fPIC -O1 -DNAME=pick_fake_fn -Wl,--build-id=0x" ID_HOST " -o fake/libpick.so lib.c && "
		   "%s -shared -fPIC -O1 -g -DNAME=pick_ctnr_fn -Wl,--build-id=0x" ID_DBG " -o dbg/full.so dbg.c && "
		   "%s -shared -fPIC -O1 -g -DNAME=pick_decy_fn -Wl,--build-id=0x" ID_DBG " -o dbg/decoy.so dbg.c && "
		   "objcopy --only-keep-debug dbg/full.so dbg/debug/libpick.debug && "
		   "objcopy --only-keep-debug dbg/decoy.so lib/.debug/libpick.debug && "
		   "objcopy --strip-all --add-gnu-debuglink=dbg/debug/libpick.debug dbg/full.so dbg/libpick.so",
		   dir, cc, cc, cc, cc, cc) ? -1 : 0;
}

/*
 * A stripped library whose debug file is in the namespace's view: that
 * one names its frame, not the decoy of the same build ID at that path in
 * the host's.
 */
static void test_debug_file(const struct proc *host, struct procviews *v)
{
	struct proc ns = spawn_with(dbg, dbgdir);
	struct resolved *r = NULL;
	struct profile *p = NULL;
	unsigned long off = offset_of(tmp_path("dbg/full.so"), "pick_ctnr_fn");
	struct sb b;

	test_condf(ns.pid > 0 && ns.ino == ino_of(dbg) && off &&
		   off == offset_of(tmp_path("dbg/decoy.so"), "pick_decy_fn") &&
		   !offset_of(dbg, "pick_ctnr_fn"),
		   "a stripped build in a namespace, its debug file in its .debug/, a decoy in the host's (pid %d)",
		   (int)ns.pid);
	sb_init(&b);
	sb_header(&b, NULL);
	if (ns.pid > 0) {
		uint64_t ip = ns.start + off + 2 - ns.pgoff;

		sb_mmap(&b, 1000, (uint32_t)ns.pid, ns.start, ns.end, ns.pgoff,
			lib, id_dbg, ID_LEN);
		add_mmap(&b, host, NULL, id_host);
		sb_sample(&b, 2000, (uint32_t)ns.pid, (uint32_t)ns.pid, 0,
			  "sleep", CPROF_SAMPLE_USER_MODE, 0, NULL, 1, &ip);
		add_sample(&b, host, NULL);
		p = ingest(&b, "debug.bin", v);
	}
	if (p)
		r = resolve(p, v, "err-debug");
	test_condf(!strcmp(leaf_of(r, ns.pid), "pick_ctnr_fn"),
		   "its frame named from the debug file in its own view: %s",
		   leaf_of(r, ns.pid));
	test_condf(!strcmp(leaf_of(r, host->pid), "pick_host_fn"),
		   "the host's process beside it: %s", leaf_of(r, host->pid));
	resolved__free(r);
	profile__free(p);
	sb_free(&b);
	reap(&ns);
}

/* an inlined function, the same in two libraries: dwz shares it */
static const char dwz_common[] =
	"struct pt { int x, y; };\n"
	"static inline __attribute__((always_inline)) int inl_common(struct pt *p, int k)\n"
	"{\n"
	"	extern volatile int sink;\n"
	"	sink = p->x * k + p->y;\n"
	"	return sink + 1;\n"
	"}\n";

static const char dwz_lib[] =
	"#include \"common.h\"\n"
	"volatile int sink;\n"
	"__attribute__((noinline)) int NAME(int k)\n"
	"{\n"
	"	struct pt p = { k, 2 * k };\n"
	"	return inl_common(&p, k) * 3;\n"
	"}\n";

static int put(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	return !f || fputs(text, f) < 0 || fclose(f) ? -1 : 0;
}

/* A syms_view's open(): TEST_TMPDIR/dwz/lib.so, its root TEST_TMPDIR/dwz/root. */
static int open_dwz(void *arg, struct stat *st, int *root, const char **why)
{
	int fd = open(tmp_path("dwz/lib.so"), O_RDONLY | O_CLOEXEC);

	(void)arg;
	*why = "not built";
	*root = open(tmp_path("dwz/root"), O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0 && fstat(fd, st)) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/*
 * A debug file made smaller by dwz: its inlined function's name is in the
 * alternate file it links to (/usr/lib/debug/.dwz/...), found inside the
 * view's root, as the debug file is.
 */
static void test_dwz(void)
{
	struct syms_view view = { .id = 1, .open = open_dwz };
	struct syms_cache *c;
	struct binary *bin;
	struct sym_frame fr[4];
	unsigned long off;
	bool found = false;
	int n = 0, i;

	if (run("command -v dwz")) {
		printf("note: no dwz here: a dwz alternate file in a view's root not checked\n");
		return;
	}
	test_cond("a stripped library, its dwz-reduced debug file and the alternate file in a root of their own",
		  !mkdir(tmp_path("dwz"), 0700) &&
		  !put(tmp_path("dwz/common.h"), dwz_common) &&
		  !put(tmp_path("dwz/x.c"), dwz_lib) &&
		  !run("cd %s/dwz && sed s/NAME/outer_y/ x.c > y.c && sed -i s/NAME/outer_x/ x.c && "
		       "for n in x y; do ${CC:-cc} -shared -fPIC -O2 -g -o lib$n.so $n.c && "
		       "objcopy --only-keep-debug lib$n.so $n.debug || exit 1; done && "
		       "dwz -m common.debug -M /usr/lib/debug/.dwz/common.debug x.debug y.debug && "
		       "objcopy --strip-all --add-gnu-debuglink=x.debug libx.so lib.so && "
		       "id=$(readelf -n libx.so | awk '/Build ID/ { print $3 }') && "
		       "d=root/usr/lib/debug && mkdir -p $d/.build-id/$(echo $id | cut -c1-2) $d/.dwz && "
		       "cp x.debug $d/.build-id/$(echo $id | cut -c1-2)/$(echo $id | cut -c3-).debug && "
		       "cp common.debug $d/.dwz/",
		       getenv("TEST_TMPDIR")));
	off = offset_of(tmp_path("dwz/libx.so"), "outer_x");
	c = syms_cache__new();
	bin = c ? syms_cache__get_in(c, &view, "/usr/lib/libx.so", NULL, 0) :
		  NULL;
	/* an instruction of outer_x's that is inl_common's */
	for (i = 0; bin && off && i < 16 && !found; i++) {
		n = binary__resolve(bin, off + i, fr, 4);
		found = n == 2 && !strcmp(fr[0].function, "inl_common") &&
			!strcmp(fr[1].function, "outer_x");
	}
	test_condf(found,
		   "its inlined frame named from the alternate file in the root: %s",
		   n > 0 ? fr[0].function : "nothing");
	syms_cache__free(c);
}

/* The host's process and a namespace's, in one profile. */
static void test_two_views(const struct proc *host, const struct proc *ns,
			   struct procviews *v)
{
	struct resolved *r = NULL, *plain = NULL;
	struct profile *p;
	struct sb b;

	sb_init(&b);
	sb_header(&b, NULL);
	add_mmap(&b, ns, NULL, id_ctnr);
	add_mmap(&b, host, NULL, id_host);
	add_sample(&b, ns, NULL);
	add_sample(&b, host, NULL);
	p = ingest(&b, "two.bin", v);
	test_cond("the stream of both is read, views noted", p != NULL);
	if (p)
		r = resolve(p, v, "err-two");
	test_condf(!strcmp(leaf_of(r, ns->pid), "pick_ctnr_fn"),
		   "the namespace's process is named from its own file: %s",
		   leaf_of(r, ns->pid));
	test_condf(!strcmp(leaf_of(r, host->pid), "pick_host_fn"),
		   "the host's process, same path, same resolve: from the host's file: %s",
		   leaf_of(r, host->pid));
	test_cond("two mappings of one path: one per view",
		  r && r->nr_mappings == 2);

	/* -i: no views, every file at the host's path */
	if (p)
		plain = resolve(p, NULL, "err-plain");
	test_condf(plain && !strcmp(leaf_of(plain, ns->pid), "") &&
		   has("err-plain", "build ID differs from the profiled one"),
		   "without views (a stream from a file) the host's file is read, and refused by build ID: '%s'",
		   leaf_of(plain, ns->pid));
	resolved__free(plain);
	resolved__free(r);
	profile__free(p);
	sb_free(&b);
}

/*
 * A forged file with the host's build ID at the host's path, in a
 * namespace: first in the stream, at the very addresses of the host
 * process's record.
 */
static void test_poison(const struct proc *host, const struct proc *forger,
			struct procviews *v)
{
	struct resolved *r = NULL;
	struct profile *p;
	struct sb b;

	sb_init(&b);
	sb_header(&b, NULL);
	add_mmap(&b, forger, NULL, id_host);
	add_mmap(&b, host, forger, id_host);
	add_sample(&b, forger, NULL);
	add_sample(&b, host, forger);
	p = ingest(&b, "poison.bin", v);
	test_cond("the stream with a forged file is read", p != NULL);
	if (p)
		r = resolve(p, v, "err-poison");
	test_condf(!strcmp(leaf_of(r, host->pid), "pick_host_fn"),
		   "the host's process is named from the host's file, not the forged one with its build ID: %s",
		   leaf_of(r, host->pid));
	test_condf(!strcmp(leaf_of(r, forger->pid), "pick_fake_fn"),
		   "the forger's own frame is named from its own file: %s",
		   leaf_of(r, forger->pid));
	resolved__free(r);
	profile__free(p);
	sb_free(&b);
}

/*
 * A namespace's process that exits between ingest and symbolization, with
 * its file held (max_files) or not.
 */
static void test_exited(const struct proc *host, size_t max_files)
{
	struct procviews *v = procviews__new(max_files);
	struct output_opts oo = { .format = FORMAT_FOLDED };
	struct resolve_opts o = opts(v);
	struct proc gone = spawn(ctnr);
	const char *err = max_files ? "err-held" : "err-unheld";
	struct resolved *r = NULL;
	struct profile *p = NULL;
	pid_t pid = gone.pid;
	char msg[160], *buf = NULL;
	size_t len = 0;
	struct sb b;

	test_condf(v && pid > 0, "a namespace's process, %s",
		   max_files ? "its file held" : "no file held");
	sb_init(&b);
	sb_header(&b, NULL);
	add_mmap(&b, &gone, NULL, id_ctnr);
	add_mmap(&b, host, NULL, id_host);
	add_sample(&b, &gone, NULL);
	add_sample(&b, host, NULL);
	if (v && pid > 0)
		p = ingest(&b, max_files ? "held.bin" : "unheld.bin", v);
	reap(&gone);
	test_condf(p && kill(pid, 0) && errno == ESRCH,
		   "its stream read, then it exited (pid %d)", (int)pid);
	if (p)
		r = resolve(p, v, err);
	if (max_files) {
		test_condf(!strcmp(leaf_of(r, pid), "pick_ctnr_fn"),
			   "exited: named from the file held since its record came: %s",
			   leaf_of(r, pid));
		/* an --http answer, an --every window: in a child (boxed.h) */
		test_condf(p && !answer__build(p, &o, &oo, NULL, "a window",
					       &buf, &len, msg, sizeof(msg)) &&
			   memmem(buf, len, "pick_ctnr_fn", 12) &&
			   memmem(buf, len, "pick_host_fn", 12),
			   "and so in the child an answer is built in: %.*s",
			   buf ? (int)len : 0, buf ? buf : msg);
	} else {
		test_condf(!strcmp(leaf_of(r, pid), "") &&
			   has(err, PROCVIEW_UNREAD),
			   "exited, nothing held: its frame unnamed ('%s'), the summary says why",
			   leaf_of(r, pid));
	}
	test_condf(!strcmp(leaf_of(r, host->pid), "pick_host_fn"),
		   "the host's process beside it: %s", leaf_of(r, host->pid));
	free(buf);
	resolved__free(r);
	profile__free(p);
	sb_free(&b);
	procviews__free(v);
}

int main(void)
{
	const char *dir = getenv("TEST_TMPDIR");
	struct proc host = { .pid = -1 }, ns = { .pid = -1 };
	struct proc forger = { .pid = -1 };
	struct procviews *v;
	unsigned long ctnr_off, fake_off;

	if (geteuid() != 0 || run("command -v unshare && unshare -m true"))
		test_skip("no mount namespaces here (root and unshare(1) needed)");
	if (build(dir))
		test_skip("no C compiler here");
	fn_off = offset_of(lib, "pick_host_fn");
	ctnr_off = offset_of(ctnr, "pick_ctnr_fn");
	fake_off = offset_of(fake, "pick_fake_fn");
	test_condf(fn_off && fn_off == ctnr_off && fn_off == fake_off,
		   "three builds, their functions at one offset (%#lx %#lx %#lx)",
		   fn_off, ctnr_off, fake_off);
	test_cond("kernel symbol fixtures",
		  !run("printf '%s' > %s && : > %s", kallsyms_text,
		       tmp_path("kallsyms"), tmp_path("modules")));

	host = spawn(NULL);
	ns = spawn(ctnr);
	forger = spawn(fake);
	test_condf(host.pid > 0 && host.ino == ino_of(lib),
		   "a host process maps the host's build (pid %d)", (int)host.pid);
	test_condf(ns.pid > 0 && ns.ino == ino_of(ctnr) && ns.ino != host.ino,
		   "a process in its own mount namespace maps the other build at the same path (pid %d)",
		   (int)ns.pid);
	test_condf(forger.pid > 0 && forger.ino == ino_of(fake),
		   "and one the forged build (pid %d)", (int)forger.pid);

	v = procviews__new(PROCVIEW_FILES_MAX);
	test_cond("views", v != NULL);
	if (host.pid > 0 && ns.pid > 0)
		test_two_views(&host, &ns, v);
	if (host.pid > 0 && forger.pid > 0)
		test_poison(&host, &forger, v);
	if (host.pid > 0)
		test_debug_file(&host, v);
	test_dwz();
	procviews__free(v);
	if (host.pid > 0) {
		test_exited(&host, PROCVIEW_FILES_MAX);
		test_exited(&host, 0);
	}
	reap(&host);
	reap(&ns);
	reap(&forger);
	return test_report();
}
