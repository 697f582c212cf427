// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * test_symcache: a binary's symbols kept on disk (symcache.c), end to end
 * through cprof-dump and through a conversion's child (answer.c).
 *
 * A second conversion names every frame as the first and as one without
 * the cache, byte for byte, without opening the binary's debug file; a
 * child converting (--every, --http) fills the cache and uses it; a
 * binary rewritten in place since is read again; a binary its owner (not
 * root) or others may write is never kept; an entry damaged, cut short or
 * made of garbage is not used (one warning line) and frames stay right;
 * an entry of another build ID is not used; the entries stay within the
 * bound, the most recently used kept.
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdint.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ingest/ingest.h"
#include "serve/answer.h"
#include "symbolize/symcache.h"
#include "streambuild.h"
#include "test.h"
#include "testutil.h"
#include "userfix.h"

#define PID		4242

static const char kallsyms_text[] =
	"ffffffff81000000 T _stext\n"
	"ffffffff81100000 T schedule\n"
	"ffffffff81200000 T _etext\n";

static int write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	return f && fputs(text, f) >= 0 && !fclose(f) ? 0 : -1;
}

/* One user-mode sample of the fixture's stack, its binary at path. */
static int build_stream(const struct userfix *fx, const char *bin,
			const char *out)
{
	struct cprof_header h = sb_default_header();
	uint64_t uips[3];
	struct sb b;
	int i, err;

	sb_init(&b);
	sb_header(&b, &h);
	for (i = 0; i < 3; i++)
		if (i == 0 || fx->start[i] != fx->start[i - 1])
			sb_mmap(&b, 1, PID, fx->start[i], fx->end[i],
				fx->pgoff[i], bin, NULL, 0);
	uips[0] = fx->ips[0] - 1;
	uips[1] = fx->ips[1];
	uips[2] = fx->ips[2];
	sb_sample(&b, 10, PID, PID, 0, "fixture", CPROF_SAMPLE_USER_MODE, 0,
		  NULL, 3, uips);
	sb_end(&b, 1000000000, CPROF_END_COMPLETE, 0);
	err = sb_write(&b, out, b.len);
	sb_free(&b);
	return err;
}

/* The entries (*.sym) in dir, their bytes in *bytes (may be NULL). */
static int nr_entries(const char *dir, uint64_t *bytes, char *one,
		      size_t size)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	struct stat st;
	char path[4200];
	int n = 0;
	size_t l;

	if (bytes)
		*bytes = 0;
	while (d && (de = readdir(d))) {
		l = strlen(de->d_name);
		if (l < 4 || strcmp(de->d_name + l - 4, ".sym"))
			continue;
		n++;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (one)
			snprintf(one, size, "%s", path);
		if (bytes && !stat(path, &st))
			*bytes += st.st_size;
	}
	if (d)
		closedir(d);
	return n;
}

/* inotify IN_OPEN events on fd so far. */
static int opens(int fd)
{
	char buf[4096] __attribute__((aligned(8)));
	ssize_t r;
	int n = 0;

	while ((r = read(fd, buf, sizeof(buf))) > 0) {
		char *p = buf;

		while (p < buf + r) {
			const struct inotify_event *ev = (const void *)p;

			n += !!(ev->mask & IN_OPEN);
			p += sizeof(*ev) + ev->len;
		}
	}
	return n;
}

/* -f folded of stream with the cache in dir ("": none): its output. */
static char *folded(const char *stream, const char *dir, const char *ks,
		    const char *mods, int *rc)
{
	*rc = run("%s -i '%s' -f folded --symbol-cache '%s' --kallsyms '%s' --modules '%s'",
		  cprof_dump(), stream, dir, ks, mods);
	return slurp(tmp_path("out.txt"), NULL);
}

/* Lines of the last run's standard error holding s. */
static int err_lines(const char *s)
{
	char *err = slurp(tmp_path("err.txt"), NULL), *p;
	int n = 0;

	for (p = err; p && (p = strstr(p, s)); p += strlen(s))
		n++;
	free(err);
	return n;
}

static bool same_text(const char *a, const char *b)
{
	return a && b && !strcmp(a, b);
}

/* The fixture's stream converted in a child, as a window is. */
static char *child_folded(const char *stream, const char *ks,
			  const char *mods)
{
	struct resolve_opts ro = {
		.symbolize = true, .kallsyms = ks, .modules = mods,
	};
	struct output_opts oo = { .format = FORMAT_FOLDED };
	struct ingest *in;
	char msg[256], *buf = NULL;
	size_t len = 0;
	int fd = open(stream, O_RDONLY);

	in = fd >= 0 ? ingest__open(fd, "stream", NULL, NULL) : NULL;
	if (in && !ingest__run(in, NULL) &&
	    answer__build(ingest__profile(in), &ro, &oo, NULL, "a window",
			  &buf, &len, msg, sizeof(msg)) == 0) {
		buf = realloc(buf, len + 1);
		if (buf)
			buf[len] = '\0';
	} else {
		free(buf);
		buf = NULL;
	}
	ingest__close(in);
	if (fd >= 0)
		close(fd);
	return buf;
}

/* n addresses, each one frame named after tag and i. */
static void put_fake(struct symcache *c, const struct symcache_key *k,
		     int tag, int n)
{
	struct symcache_addr *a = calloc(n, sizeof(*a));
	struct sym_frame *f = calloc(n, sizeof(*f));
	char (*names)[64] = calloc(n, sizeof(*names));
	struct symcache_bin bin = { .debug = SYMCACHE_DEBUG_OWN };
	int i;

	for (i = 0; i < n; i++) {
		snprintf(names[i], sizeof(names[i]),
			 "function_%d_of_entry_%d_with_a_long_name", i, tag);
		f[i].function = f[i].system_name = names[i];
		f[i].line = i + 1;
		a[i].offset = 16 * (uint64_t)i;
		a[i].nr_frames = 1;
		a[i].frames = &f[i];
	}
	symcache__put(c, k, &bin, NULL, a, n);
	free(a);
	free(f);
	free(names);
}

static void test_api(void)
{
	const char *dir = tmp_path("apicache");
	struct symcache_key k = { .build_id_len = 4,
				  .build_id = { 1, 2, 3, 4 } }, k2;
	struct symcache_key keys[24];
	struct sym_frame f[4];
	struct symcache_entry *e;
	struct symcache *c;
	uint64_t bytes, worst = 0;
	char file[64];
	int i, n, gone = 0;

	c = symcache__open(dir, 64 << 10, true);
	test_cond("a cache opens in a new directory", c != NULL);
	if (!c)
		return;
	stat(tmp_path("fixture.c"), &k.st);
	put_fake(c, &k, 0, 10);
	e = symcache__get(c, &k);
	n = e ? symcache_entry__frames(e, 16 * 3, f, 4) : -2;
	test_cond("an entry is read back: an address's frame as kept",
		  n == 1 && !strcmp(f[0].function,
				    "function_3_of_entry_0_with_a_long_name") &&
		  f[0].line == 4 && !f[0].file);
	test_cond("an address not kept is said so",
		  e && symcache_entry__frames(e, 17, f, 4) == -1);
	symcache_entry__free(e);
	k2 = k;
	k2.build_id[3] = 5;
	e = symcache__get(c, &k2);
	test_cond("the same file with another build ID: its entry is not used",
		  e == NULL);
	symcache_entry__free(e);
	k2 = k;
	k2.build_id_len = 3;
	e = symcache__get(c, &k2);
	test_cond("a build ID of another length: not used", e == NULL);
	symcache_entry__free(e);

	/* 24 entries of ~10 KiB into 64 KiB */
	for (i = 0; i < 24; i++) {
		snprintf(file, sizeof(file), "keyfile%d", i);
		write_text(tmp_path(file), file);
		memset(&keys[i], 0, sizeof(keys[i]));
		stat(tmp_path(file), &keys[i].st);
		put_fake(c, &keys[i], i + 1, 150);
		nr_entries(dir, &bytes, NULL, 0);
		worst = bytes > worst ? bytes : worst;
		usleep(2000);	/* mtimes apart: least recently used */
	}
	test_condf(worst <= 64 << 10,
		   "the entries stay within the bound (at most %llu bytes of 65536)",
		   (unsigned long long)worst);
	e = symcache__get(c, &keys[23]);
	test_cond("the newest entry is kept", e != NULL);
	symcache_entry__free(e);
	for (i = 0; i < 12; i++) {
		e = symcache__get(c, &keys[i]);
		gone += !e;
		symcache_entry__free(e);
	}
	test_condf(gone == 12, "the oldest entries went (%d of 12)", gone);
	symcache__close(c);
}

int main(void)
{
	const char *ks = tmp_path("kallsyms"), *mods = tmp_path("modules");
	const char *cache = tmp_path("cache"), *stream = tmp_path("s.raw");
	const char *dbg = tmp_path("fixture.debug");
	char *none, *first, *second, *out, *child, entry[4300] = "";
	struct userfix fx;
	struct stat st, st2;
	int rc, wd, fd, n;

	if (geteuid() != 0)
		test_skip("the binaries a cache keeps are root's: run as root");
	if (userfix_build(&fx)) {
		test_cond("fixture builds and runs", 0);
		return test_report();
	}
	if (write_text(ks, kallsyms_text) || write_text(mods, "") ||
	    chmod(fx.exe, 0755) ||
	    run("cp '%s' '%s'", fx.exe, tmp_path("embedded")) ||
	    run("objcopy --only-keep-debug '%s' '%s' && chmod 0644 '%s' && "
		"objcopy --strip-debug --add-gnu-debuglink='%s' '%s'",
		fx.exe, dbg, dbg, dbg, fx.exe) ||
	    build_stream(&fx, fx.path, stream)) {
		test_cond("fixture split into binary and debug file", 0);
		return test_report();
	}
	test_api();

	/* a second conversion: the same frames, the debug file not opened */
	none = folded(stream, "", ks, mods, &rc);
	test_cond("without the cache: converted, named from the debug file",
		  rc == 0 && none && strstr(none, "leaf_fn") &&
		  strstr(none, "inl_fn"));
	first = folded(stream, cache, ks, mods, &rc);
	test_cond("first conversion: the same folded stacks, byte for byte",
		  rc == 0 && same_text(first, none));
	test_cond("first conversion: the binary's entry written",
		  nr_entries(cache, NULL, entry, sizeof(entry)) == 1);
	fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	wd = fd >= 0 ? inotify_add_watch(fd, dbg, IN_OPEN) : -1;
	second = folded(stream, cache, ks, mods, &rc);
	n = opens(fd);
	test_cond("second conversion: the same folded stacks, byte for byte",
		  rc == 0 && same_text(second, none));
	test_condf(wd >= 0 && n == 0,
		   "second conversion: the debug file not opened (%d opens)", n);
	free(first);
	free(second);

	/* a conversion's child (--every, --http) fills the cache, uses it */
	symcache_setup(tmp_path("childcache"));
	child = child_folded(stream, ks, mods);
	test_cond("a child's conversion: the same folded stacks",
		  same_text(child, none));
	test_cond("a child's conversion fills the cache",
		  nr_entries(tmp_path("childcache"), NULL, NULL, 0) == 1);
	free(child);
	opens(fd);
	child = child_folded(stream, ks, mods);
	n = opens(fd);
	test_condf(same_text(child, none) && n == 0,
		   "a child's second conversion: the same, from the cache (%d opens of the debug file)",
		   n);
	free(child);
	symcache_setup("");

	/* entries damaged, cut short, garbage: not used, frames right */
	if (!entry[0]) {
		test_cond("an entry to damage", 0);
		return test_report();
	}
	run("printf 'XXXX' | dd of='%s' bs=1 seek=2000 conv=notrunc status=none",
	    entry);
	out = folded(stream, cache, ks, mods, &rc);
	test_cond("an entry damaged: frames right, one warning line",
		  rc == 0 && same_text(out, none) &&
		  err_lines("symbols: cache entry") == 1);
	free(out);
	out = folded(stream, cache, ks, mods, &rc);
	test_cond("... and replaced: no warning the next time",
		  rc == 0 && same_text(out, none) &&
		  err_lines("symbols: cache entry") == 0);
	free(out);
	stat(entry, &st);
	test_cond("an entry cut short", !truncate(entry, st.st_size / 2));
	out = folded(stream, cache, ks, mods, &rc);
	test_cond("an entry cut short: frames right, one warning line",
		  rc == 0 && same_text(out, none) &&
		  err_lines("symbols: cache entry") == 1);
	free(out);
	run("head -c 216 '%s' > '%s.g' && head -c 100000 /dev/urandom >> '%s.g' && mv '%s.g' '%s'",
	    entry, entry, entry, entry, entry);
	out = folded(stream, cache, ks, mods, &rc);
	test_cond("an entry of garbage after a good header: frames right, one warning line",
		  rc == 0 && same_text(out, none) &&
		  err_lines("symbols: cache entry") == 1);
	free(out);
	unlink(entry);
	mkfifo(entry, 0600);
	out = folded(stream, cache, ks, mods, &rc);
	test_cond("a FIFO in an entry's place: not waited on, frames right",
		  rc == 0 && same_text(out, none));
	free(out);
	unlink(entry);

	/* a binary rewritten in place: same inode, size and build ID */
	build_stream(&fx, tmp_path("embedded"), tmp_path("e.raw"));
	out = folded(tmp_path("e.raw"), cache, ks, mods, &rc);
	free(out);
	stat(tmp_path("embedded"), &st);
	usleep(20000);
	run("sed 's/leaf_fn/leaf_XY/g' '%s' > '%s' && cp '%s' '%s'",
	    tmp_path("embedded"), tmp_path("patched"), tmp_path("patched"),
	    tmp_path("embedded"));
	stat(tmp_path("embedded"), &st2);
	out = folded(tmp_path("e.raw"), cache, ks, mods, &rc);
	test_cond("a binary rewritten in place (same inode, size, build ID): read again",
		  st.st_ino == st2.st_ino && st.st_size == st2.st_size &&
		  rc == 0 && out && strstr(out, "leaf_XY") &&
		  !strstr(out, "leaf_fn"));
	free(out);

	/* not root's, or others may write it: never kept */
	run("cp '%s' '%s' && chown 65534 '%s'", fx.exe, tmp_path("users"),
	    tmp_path("users"));
	build_stream(&fx, tmp_path("users"), tmp_path("u.raw"));
	n = nr_entries(cache, NULL, NULL, 0);
	out = folded(tmp_path("u.raw"), cache, ks, mods, &rc);
	test_cond("a user's binary: named, never kept",
		  rc == 0 && out && strstr(out, "leaf_fn") &&
		  nr_entries(cache, NULL, NULL, 0) == n);
	free(out);
	run("cp '%s' '%s' && chmod 0775 '%s'", fx.exe, tmp_path("groupw"),
	    tmp_path("groupw"));
	build_stream(&fx, tmp_path("groupw"), tmp_path("g.raw"));
	out = folded(tmp_path("g.raw"), cache, ks, mods, &rc);
	test_cond("root's binary its group may write: named, never kept",
		  rc == 0 && out && strstr(out, "leaf_fn") &&
		  nr_entries(cache, NULL, NULL, 0) == n);
	free(out);
	free(none);
	if (fd >= 0)
		close(fd);
	return test_report();
}
