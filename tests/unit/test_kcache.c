// SPDX-License-Identifier: GPL-2.0
/*
 * kcache on a fake running kernel (kallsyms, modules and /sys fixtures):
 * a first load reads kallsyms and keeps its symbols; a second one names
 * the same addresses the same with only the head of kallsyms left; what
 * the kept symbols cannot name as kallsyms would (BPF, a module's last
 * symbol) is not taken from them; another kernel, a changed module, a
 * damaged entry or another cprof-dump's entry is not used.  Then, on the
 * running kernel (root's kallsyms): cprof-dump's output of a capture
 * converted with an empty symbol cache and again with the cache it filled
 * is the same, byte for byte, and so with its kernel entry damaged.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <inttypes.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "streambuild.h"
#include "test.h"
#include "testutil.h"
#include "symbolize/kcache.h"
#include "symbolize/ksyms.h"

static char tmpdir[4096], cache[4200], sys[4200];
static char kallsyms[4200], modules[4200];

static void write_file(const char *path, const void *data, size_t len)
{
	FILE *f = fopen(path, "w");

	if (!f || fwrite(data, 1, len, f) != len || fclose(f)) {
		perror(path);
		exit(1);
	}
}

static void mkdirs(const char *path)
{
	char buf[4200], *p;

	snprintf(buf, sizeof(buf), "%s", path);
	for (p = buf + 1; *p; p++)
		if (*p == '/') {
			*p = '\0';
			mkdir(buf, 0700);
			*p = '/';
		}
	mkdir(buf, 0700);
}

/* An ELF note section holding a GNU build ID of 20 bytes, all b. */
static void write_notes(const char *path, unsigned char b)
{
	unsigned char buf[12 + 4 + 20 + 12 + 4 + 4];
	uint32_t w;

	/* a note of another kind first: it is skipped */
	w = 4, memcpy(buf, &w, 4);
	w = 4, memcpy(buf + 4, &w, 4);
	w = 1, memcpy(buf + 8, &w, 4);
	memcpy(buf + 12, "Xen", 4);
	memset(buf + 16, 0, 4);
	w = 4, memcpy(buf + 20, &w, 4);
	w = 20, memcpy(buf + 24, &w, 4);
	w = 3, memcpy(buf + 28, &w, 4);
	memcpy(buf + 32, "GNU", 4);
	memset(buf + 36, b, 20);
	write_file(path, buf, 56);
}

static const char kallsyms_text[] =
	"0000000000000000 A fixed_percpu_data\n"
	"0000000000001000 A cpu_number\n"
	"ffffffff81000000 T _text\n"
	"ffffffff81000000 T _stext\n"
	"ffffffff81000100 T schedule\n"
	"ffffffff81000200 t do_idle\n"
	"ffffffff81000300 D some_data\n"
	"ffffffff81000400 W weak_fn\n"
	"ffffffff81001000 T _etext\n"
	"ffffffff81400000 T _sinittext\n"
	"ffffffffc0001000 t moda_first\t[moda]\n"
	"ffffffffc0001080 T moda_last\t[moda]\n"
	"ffffffffc0003000 t modb_one\t[modb]\n"
	"ffffffffc0003100 t modb_two\t[modb]\n"
	"ffffffffc0005000 t bpf_prog_1234_handler\t[bpf]\n";

static const char modules_text[] =
	"moda 6144 1 - Live 0xffffffffc0001000\n"
	"modb 4096 0 moda, Live 0xffffffffc0003000 (OE)\n";

/* kallsyms up to _text: what the kernel says of itself, no more */
static const char kallsyms_head[] =
	"0000000000000000 A fixed_percpu_data\n"
	"0000000000001000 A cpu_number\n"
	"ffffffff81000000 T _text\n";

/* The fake kernel: kallsyms (whole or its head), modules, build IDs. */
static void fake_kernel(const char *ks, const char *mods, unsigned char vid,
			unsigned char modb_id)
{
	char path[4400];

	write_file(kallsyms, ks, strlen(ks));
	write_file(modules, mods, strlen(mods));
	snprintf(path, sizeof(path), "%s/kernel", sys);
	mkdirs(path);
	snprintf(path, sizeof(path), "%s/kernel/notes", sys);
	write_notes(path, vid);
	snprintf(path, sizeof(path), "%s/module/moda/notes", sys);
	mkdirs(path);
	snprintf(path, sizeof(path), "%s/module/moda/notes/.note.gnu.build-id",
		 sys);
	write_notes(path, 0xaa);
	snprintf(path, sizeof(path), "%s/module/modb/notes", sys);
	mkdirs(path);
	snprintf(path, sizeof(path), "%s/module/modb/notes/.note.gnu.build-id",
		 sys);
	write_notes(path, modb_id);
}

/* The loader's result, its stderr into buf. */
static struct ksyms *load(char *buf, size_t len)
{
	char path[4400];
	struct ksyms *ks;
	int saved, fd;

	snprintf(path, sizeof(path), "%s/stderr", tmpdir);
	fd = stderr_to(path, &saved);
	ks = kcache__load_finish(kcache__load_start(NULL, NULL));
	stderr_back(fd, saved, buf, len);
	return ks;
}

/* How many kernel entries the cache has; the last one's path in path. */
static int entries(char *path, size_t size)
{
	struct dirent *de;
	int n = 0;
	DIR *d = opendir(cache);
	size_t l;

	while (d && (de = readdir(d))) {
		l = strlen(de->d_name);
		if (l > 5 && !strcmp(de->d_name + l - 5, ".ksym")) {
			snprintf(path, size, "%s/%s", cache, de->d_name);
			n++;
		}
	}
	if (d)
		closedir(d);
	return n;
}

/* Loaded from kallsyms's head alone: the entry was not used. */
static bool head_only(const struct ksyms *ks)
{
	return ks && !ksyms__addr_of(ks, "schedule");
}

static const char *name_at(const struct ksyms *ks, uint64_t addr)
{
	const struct ksym *s = ksyms__covers(ks, addr) ?
			       ksyms__map_addr(ks, addr) : NULL;

	return s ? s->name : "(none)";
}

/* The addresses looked up, and what kallsyms says of each. */
static const struct {
	uint64_t addr;
	const char *name;
	bool kept;		/* named by the kept symbols */
} addrs[] = {
	{ 0xffffffff81000100, "schedule", true },
	{ 0xffffffff810001ff, "schedule", true },
	{ 0xffffffff81000350, "do_idle", true },	/* data is not text */
	{ 0xffffffff81000fff, "weak_fn", true },
	{ 0xffffffff81000010, "_stext", true },
	{ 0xffffffffc0001010, "moda_first", true },
	{ 0xffffffffc0001090, "moda_last", false },	/* its module's last */
	{ 0xffffffffc0003050, "modb_one", true },
	{ 0xffffffffc0005010, "bpf_prog_1234_handler", false },
	{ 0xffffffff81400010, "_sinittext", true },	/* init code too */
};

static bool same_names(const struct ksyms *ks, bool kept_only)
{
	size_t i;

	for (i = 0; i < sizeof(addrs) / sizeof(addrs[0]); i++) {
		const char *want = addrs[i].name;

		if (kept_only && !addrs[i].kept)
			want = "(none)";
		if (strcmp(name_at(ks, addrs[i].addr), want)) {
			printf("# %#llx: %s, not %s\n",
			       (unsigned long long)addrs[i].addr,
			       name_at(ks, addrs[i].addr), want);
			return false;
		}
	}
	return true;
}

static void test_kept(void)
{
	struct ksyms *ks, *whole;
	char buf[1024], entry[4400];
	uint64_t a = 0, b = 0, c = 0, d = 0;

	fake_kernel(kallsyms_text, modules_text, 0x11, 0xbb);
	ks = load(buf, sizeof(buf));
	test_cond("first load: from kallsyms, quietly", ks && !buf[0]);
	test_cond("first load: kallsyms's names", ks && same_names(ks, false));
	test_cond("first load: keeps one entry",
		  entries(entry, sizeof(entry)) == 1);
	ksyms__free(ks);

	/* kallsyms now ends at _text: only the kept symbols can name these */
	write_file(kallsyms, kallsyms_head, strlen(kallsyms_head));
	ks = load(buf, sizeof(buf));
	test_cond("second load: from the entry, quietly", ks && !buf[0]);
	test_cond("second load: the kept addresses named as kallsyms does, the others not taken from it",
		  ks && same_names(ks, true));
	test_cond("second load: schedule where kallsyms has it",
		  ksyms__addr_of(ks, "schedule") == 0xffffffff81000100);
	test_cond("second load: vmlinux's text range and moda's extent as kallsyms's",
		  !ksyms__kernel_range(ks, &a, &b) && a == 0xffffffff81000000 &&
		  b == 0xffffffff81001000 &&
		  !ksyms__module_range(ks, "moda", &c, &d) &&
		  c == 0xffffffffc0001000 && d == 0xffffffffc0002800);
	test_cond("second load: BPF programs are not kept",
		  ksyms__module_range(ks, "bpf", &c, &d));
	ksyms__free(ks);

	/* what the entry does not cover: all of kallsyms, read now */
	write_file(kallsyms, kallsyms_text, strlen(kallsyms_text));
	whole = kcache__load_kallsyms(NULL, NULL);
	test_cond("all of kallsyms: the running kernel's",
		  whole && same_names(whole, false));
	ksyms__free(whole);
}

/* Keys: a changed kernel or module is another entry; nothing is mixed. */
static void test_identity(void)
{
	char buf[1024], entry[4400];
	struct ksyms *ks;
	int n;

	/* modb rebuilt, same name, size and address */
	fake_kernel(kallsyms_head, modules_text, 0x11, 0xbc);
	ks = load(buf, sizeof(buf));
	test_cond("a module's build ID changed: the entry is not used",
		  head_only(ks));
	ksyms__free(ks);

	/* another boot: KASLR moved the kernel */
	fake_kernel("ffffffff82000000 T _text\n", modules_text, 0x11, 0xbb);
	ks = load(buf, sizeof(buf));
	test_cond("the kernel moved: the entry is not used", head_only(ks));
	ksyms__free(ks);

	/* another kernel build */
	fake_kernel(kallsyms_head, modules_text, 0x12, 0xbb);
	ks = load(buf, sizeof(buf));
	test_cond("another vmlinux build ID: the entry is not used",
		  head_only(ks));
	ksyms__free(ks);

	/* a module unloaded */
	fake_kernel(kallsyms_head, "moda 6144 1 - Live 0xffffffffc0001000\n",
		    0x11, 0xbb);
	ks = load(buf, sizeof(buf));
	test_cond("a module unloaded: the entry is not used", head_only(ks));
	ksyms__free(ks);

	/* a module coming: nothing kept, nothing used */
	n = entries(entry, sizeof(entry));
	fake_kernel(kallsyms_head,
		    "moda 6144 1 - Live 0xffffffffc0001000\n"
		    "modb 4096 0 moda, Loading 0xffffffffc0003000 (OE)\n",
		    0x11, 0xbb);
	ks = load(buf, sizeof(buf));
	test_cond("a module loading: kallsyms read, nothing kept",
		  head_only(ks) && entries(entry, sizeof(entry)) == n);
	ksyms__free(ks);

	/* the same kernel as at first: its entry still there */
	fake_kernel(kallsyms_head, modules_text, 0x11, 0xbb);
	ks = load(buf, sizeof(buf));
	test_cond("the first kernel again: its entry used",
		  ks && same_names(ks, true));
	ksyms__free(ks);
}

/* An entry damaged, or another build's: kallsyms instead, then a good one. */
static void test_damaged(void)
{
	char buf[1024], entry[4400];
	struct ksyms *ks;
	struct stat st;
	int fd;

	fake_kernel(kallsyms_text, modules_text, 0x11, 0xbb);
	if (entries(entry, sizeof(entry)) != 1 || stat(entry, &st)) {
		test_cond("an entry to damage", false);
		return;
	}
	/* a byte of a name */
	fd = open(entry, O_WRONLY);
	test_cond("damage the entry",
		  fd >= 0 && pwrite(fd, "#", 1, st.st_size - 3) == 1);
	if (fd >= 0)
		close(fd);
	ks = load(buf, sizeof(buf));
	test_cond("a damaged entry: one warning, kallsyms's names",
		  ks && strstr(buf, "does not check") &&
		  strchr(buf, '\n') == buf + strlen(buf) - 1 &&
		  same_names(ks, false));
	ksyms__free(ks);
	write_file(kallsyms, kallsyms_head, strlen(kallsyms_head));
	ks = load(buf, sizeof(buf));
	test_cond("a damaged entry: replaced by a good one",
		  ks && !buf[0] && same_names(ks, true));
	ksyms__free(ks);

	/* another build's entry (its ID's first byte): not used, quietly */
	fd = open(entry, O_WRONLY);
	test_cond("make it another build's",
		  fd >= 0 && pwrite(fd, "\xff", 1, 8) == 1);
	if (fd >= 0)
		close(fd);
	ks = load(buf, sizeof(buf));
	test_cond("another build's entry: not used, quietly",
		  head_only(ks) && !buf[0]);
	ksyms__free(ks);

	/* no cache at all ("" as --symbol-cache): kallsyms every time */
	unlink(entry);
	fake_kernel(kallsyms_text, modules_text, 0x11, 0xbb);
	kcache_setup("");
	ks = load(buf, sizeof(buf));
	test_cond("no cache: kallsyms, nothing kept",
		  ks && same_names(ks, false) && !entries(entry, sizeof(entry)));
	ksyms__free(ks);
	kcache_setup(cache);

	/* filled again for test_identity() */
	fake_kernel(kallsyms_text, modules_text, 0x11, 0xbb);
	ksyms__free(load(buf, sizeof(buf)));
}

#define LIVE_MAX	48

/* A capture of the running kernel's addresses: vmlinux's and a module's. */
static int live_stream(const char *path)
{
	struct cprof_header h = sb_header_of_boot(true);
	uint64_t ips[LIVE_MAX], schedule = 0, addr;
	char line[512], type, name[256], mod[256];
	unsigned int n = 0, mods = 0, k, seen = 0;
	FILE *f = fopen("/proc/kallsyms", "r");
	struct sb b;
	int err;

	while (f && fgets(line, sizeof(line), f)) {
		k = sscanf(line, "%" SCNx64 " %c %255s %255s", &addr, &type,
			   name, mod);
		if (k < 3 || !addr || (type | 0x20) != 't')
			continue;
		if (!strcmp(name, "schedule"))
			schedule = addr;
		/* every 997th text symbol, a few of a module's */
		if (n < LIVE_MAX && (k == 4 ? mods < 4 && ++mods : !(++seen % 997)))
			ips[n++] = addr + 1;
	}
	if (f)
		fclose(f);
	if (!schedule || n < 8)
		return -1;
	h.ksym_schedule = schedule;
	sb_init(&b);
	sb_header(&b, &h);
	for (k = 0; k + 4 <= n; k++)
		sb_sample(&b, 10 + k, 1, 1, k % 4, "live", 0, 4, ips + k, 0,
			  NULL);
	sb_end(&b, 1000000000ull, CPROF_END_COMPLETE, 0);
	err = sb_write(&b, path, b.len);
	sb_free(&b);
	return err;
}

static void test_live(void)
{
	const char *raw = tmp_path("live.raw"), *dir = tmp_path("livecache");
	char *cold, *warm, *again, *err, entry[4400];
	size_t cold_len = 0, warm_len = 0, again_len = 0;
	struct stat st;
	int rc, fd;

	if (live_stream(raw)) {
		printf("note: the running kernel's addresses are hidden here: no live test\n");
		return;
	}
	mkdir(dir, 0700);
	rc = run("%s -i '%s' -f folded --symbol-cache '%s' -o '%s'",
		 cprof_dump(), raw, dir, tmp_path("cold.folded"));
	err = slurp(tmp_path("err.txt"), NULL);
	test_condf(rc == 0 && err && !err[0], "live: converted, empty cache (exit %d: %s)",
		   rc, err ? err : "");
	free(err);
	snprintf(cache, sizeof(cache), "%s", dir);
	test_cond("live: the kernel's entry kept",
		  entries(entry, sizeof(entry)) == 1);
	rc = run("%s -i '%s' -f folded --symbol-cache '%s' -o '%s'",
		 cprof_dump(), raw, dir, tmp_path("warm.folded"));
	cold = slurp(tmp_path("cold.folded"), &cold_len);
	warm = slurp(tmp_path("warm.folded"), &warm_len);
	test_cond("live: the kernel named", cold && strstr(cold, "live;") &&
		  !strstr(cold, "[unknown]"));
	test_cond("live: from the cache, the same output, byte for byte",
		  rc == 0 && cold && warm && cold_len == warm_len &&
		  !memcmp(cold, warm, cold_len));
	/* a name's byte: one warning, kallsyms read, the same output */
	fd = open(entry, O_WRONLY);
	if (fd >= 0 && !fstat(fd, &st))
		test_cond("live: damage the entry",
			  pwrite(fd, "#", 1, st.st_size - 2) == 1);
	if (fd >= 0)
		close(fd);
	rc = run("%s -i '%s' -f folded --symbol-cache '%s' -o '%s'",
		 cprof_dump(), raw, dir, tmp_path("again.folded"));
	again = slurp(tmp_path("again.folded"), &again_len);
	err = slurp(tmp_path("err.txt"), NULL);
	test_cond("live: a damaged entry: one warning, the same output",
		  rc == 0 && err && strstr(err, "does not check") &&
		  strchr(err, '\n') == err + strlen(err) - 1 && again &&
		  again_len == cold_len && !memcmp(cold, again, cold_len));
	free(err);
	free(cold);
	free(warm);
	free(again);
}

int main(void)
{
	const char *base = getenv("TEST_TMPDIR");
	struct kcache_src src;

	snprintf(tmpdir, sizeof(tmpdir), "%s/kcache.XXXXXX",
		 base && *base ? base : "/tmp");
	if (!mkdtemp(tmpdir)) {
		perror(tmpdir);
		return 1;
	}
	snprintf(cache, sizeof(cache), "%s/cache", tmpdir);
	snprintf(sys, sizeof(sys), "%s/sys", tmpdir);
	snprintf(kallsyms, sizeof(kallsyms), "%s/kallsyms", tmpdir);
	snprintf(modules, sizeof(modules), "%s/modules", tmpdir);
	mkdir(cache, 0700);
	src = (struct kcache_src){ kallsyms, modules, sys };
	kcache_set_src(&src);
	kcache_setup(cache);

	test_kept();
	test_damaged();
	test_identity();
	kcache_set_src(NULL);
	test_live();
	return test_report();
}
