// SPDX-License-Identifier: GPL-2.0
/*
 * ksyms on hand-written kallsyms/modules fixtures: lookups at symbol and
 * module boundaries, aliases, module attribution, the kernel text range and
 * the hidden-address (non-root) case.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <fcntl.h>
#include <ftw.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test.h"
#include "testutil.h"
#include "symbolize/kcache.h"
#include "symbolize/ksyms.h"

static char tmpdir[4096];

static const char *fixture(const char *name, const char *text)
{
	static char paths[8][4200];
	static int next;
	char *path = paths[next++ % 8];
	FILE *f;

	snprintf(path, sizeof(paths[0]), "%s/%s", tmpdir, name);
	f = fopen(path, "w");
	if (!f || fputs(text, f) < 0 || fclose(f)) {
		perror(path);
		exit(1);
	}
	return path;
}

enum load_how { LOAD_SYNC, LOAD_THREAD, LOAD_THREAD_CANCEL };

/*
 * Loads kallsyms with stderr captured into buf: ksyms__load(), or through
 * a loader thread finished or cancelled.
 */
static struct ksyms *load_how(enum load_how how, const char *kallsyms,
			      const char *modules, char *buf, size_t len)
{
	struct ksyms *ks = NULL;
	char path[4200];
	int saved, fd;

	snprintf(path, sizeof(path), "%s/stderr", tmpdir);
	fd = stderr_to(path, &saved);
	if (how == LOAD_SYNC)
		ks = ksyms__load(kallsyms, modules);
	else if (how == LOAD_THREAD)
		ks = kcache__load_finish(kcache__load_start(kallsyms, modules));
	else
		kcache__load_cancel(kcache__load_start(kallsyms, modules));
	stderr_back(fd, saved, buf, len);
	return ks;
}

static struct ksyms *load_capturing(const char *kallsyms, const char *modules,
				    char *buf, size_t len)
{
	return load_how(LOAD_SYNC, kallsyms, modules, buf, len);
}

static const char *name_at(const struct ksyms *ks, uint64_t addr)
{
	const struct ksym *s = ksyms__map_addr(ks, addr);

	return s ? s->name : "(none)";
}

static int is(const char *a, const char *b)
{
	return a && b && !strcmp(a, b);
}

static const char kallsyms_text[] =
	"ffffffff81000000 T _text\n"
	"ffffffff81000000 T _stext\n"
	"ffffffff810000f0 t __pfx_schedule\n"
	"ffffffff81000100 t schedule_local_alias\n"
	"ffffffff81000100 T schedule\n"
	"ffffffff81000200 t do_idle\n"
	"ffffffff81000300 D some_data\n"
	"ffffffff81000340 r some_rodata\n"
	"ffffffff81000400 W weak_fn\n"
	"ffffffff81000500 T io_schedule_timeout\n"
	"ffffffff81000500 T __sched_text_start\n"
	"ffffffff81000600 T __sched_text_end\n"
	"ffffffff81000600 t after_sched\n"
	"ffffffff81001000 T _etext\n"
	"ffffffff81400000 T _sinittext\n"
	"ffffffffc0001000 t moda_first\t[moda]\n"
	"ffffffffc0001080 T moda_last\t[moda]\n"
	"ffffffffc0003000 t modb_only\t[modb]\n"
	"ffffffffc0005000 t bpf_prog_1234_handler\t[bpf]\n"
	"garbage line\n"
	"ffffffffc0006000\n";

static const char modules_text[] =
	"moda 6144 1 - Live 0xffffffffc0001000\n"
	"modb 4096 0 moda, Live 0xffffffffc0003000 (OE)\n";

static void test_fixture(void)
{
	const char *kpath = fixture("kallsyms", kallsyms_text);
	const char *mpath = fixture("modules", modules_text);
	struct ksyms *ks = ksyms__load(kpath, mpath);
	const struct ksym *s;
	uint64_t start = 0, end = 0;

	test_cond("load kallsyms + modules fixture", ks != NULL);
	if (!ks)
		return;

	s = ksyms__map_addr(ks, 0xffffffff81000100);
	test_cond("exact start: global name wins over a local alias",
		  s && is(s->name, "schedule"));
	test_cond("size runs to the next symbol", s && s->size == 0x100);
	test_cond("vmlinux symbol has no module", s && s->module == NULL);
	test_cond("last byte of schedule",
		  is(name_at(ks, 0xffffffff810001ff), "schedule"));
	test_cond("__pfx_ padding is its own symbol",
		  is(name_at(ks, 0xffffffff810000f8), "__pfx_schedule"));
	test_cond("next symbol starts at its address",
		  is(name_at(ks, 0xffffffff81000200), "do_idle"));
	test_cond("data symbols are not kept: do_idle spans them",
		  is(name_at(ks, 0xffffffff81000350), "do_idle"));
	test_cond("weak symbols are kept",
		  is(name_at(ks, 0xffffffff81000400), "weak_fn"));
	test_cond("a function over a section's start mark at its address",
		  is(name_at(ks, 0xffffffff81000510), "io_schedule_timeout"));
	test_cond("a local function over a section's end mark at its address",
		  is(name_at(ks, 0xffffffff81000600), "after_sched"));
	s = ksyms__map_addr(ks, 0xffffffff81000fff);
	test_cond("text up to _etext belongs to the last symbol",
		  s && is(s->name, "after_sched") && s->size == 0xa00);
	test_cond("before the first symbol: none",
		  ksyms__map_addr(ks, 0xffffffff80ffffff) == NULL);
	s = ksyms__map_addr(ks, 0xffffffff81000000);
	test_cond("one of several aliases covers the whole span",
		  s && s->size == 0xf0 &&
		  (is(s->name, "_stext") || is(s->name, "_text")));

	test_cond("kernel range known", !ksyms__kernel_range(ks, &start, &end));
	test_cond("kernel range is [_stext, _etext)",
		  start == 0xffffffff81000000 && end == 0xffffffff81001000);

	s = ksyms__map_addr(ks, 0xffffffffc0001000);
	test_cond("module symbol at module start",
		  s && is(s->name, "moda_first") && is(s->module, "moda"));
	s = ksyms__map_addr(ks, 0xffffffffc00017ff);
	test_cond("last module symbol runs to the module end",
		  s && is(s->name, "moda_last") &&
		  s->addr + s->size == 0xffffffffc0002800);
	test_cond("past the module end: none",
		  ksyms__map_addr(ks, 0xffffffffc0002800) == NULL);
	s = ksyms__map_addr(ks, 0xffffffffc0003abc);
	test_cond("second module attributed",
		  s && is(s->name, "modb_only") && is(s->module, "modb"));
	test_cond("moda range from /proc/modules",
		  !ksyms__module_range(ks, "moda", &start, &end) &&
		  start == 0xffffffffc0001000 && end == 0xffffffffc0002800);
	test_cond("modb range from /proc/modules (taint flags ignored)",
		  !ksyms__module_range(ks, "modb", &start, &end) &&
		  start == 0xffffffffc0003000 && end == 0xffffffffc0004000);
	test_cond("unknown module: -1",
		  ksyms__module_range(ks, "nosuch", &start, &end) == -1);

	s = ksyms__map_addr(ks, 0xffffffffc0005fff);
	test_cond("symbol of a pseudo module runs to its page end",
		  s && is(s->name, "bpf_prog_1234_handler") &&
		  is(s->module, "bpf"));
	test_cond("pseudo module range from its symbols",
		  !ksyms__module_range(ks, "bpf", &start, &end) &&
		  start == 0xffffffffc0005000 && end == 0xffffffffc0006000);
	test_cond("past the pseudo module: none",
		  ksyms__map_addr(ks, 0xffffffffc0006000) == NULL);

	test_cond("addr_of a text symbol",
		  ksyms__addr_of(ks, "do_idle") == 0xffffffff81000200);
	test_cond("addr_of a module symbol",
		  ksyms__addr_of(ks, "modb_only") == 0xffffffffc0003000);
	test_cond("addr_of a data symbol: 0 (not kept)",
		  ksyms__addr_of(ks, "some_data") == 0);
	test_cond("addr_of an absent name: 0",
		  ksyms__addr_of(ks, "no_such_symbol") == 0);
	ksyms__free(ks);
}

static void test_without_modules(void)
{
	const char *kpath = fixture("kallsyms", kallsyms_text);
	char missing[4200];
	struct ksyms *ks;
	uint64_t start = 0, end = 0;

	snprintf(missing, sizeof(missing), "%s/no-modules", tmpdir);
	ks = ksyms__load(kpath, missing);
	test_cond("absent modules file (no module support): loads", ks != NULL);
	test_cond("module range falls back to the module's symbols",
		  ks && !ksyms__module_range(ks, "moda", &start, &end) &&
		  start == 0xffffffffc0001000 && end > 0xffffffffc0001080);
	ksyms__free(ks);

	ks = ksyms__load(kpath, NULL);
	test_cond("NULL modules path: loads", ks != NULL);
	test_cond("module attribution from kallsyms alone",
		  ks && ksyms__map_addr(ks, 0xffffffffc0001000) &&
		  is(ksyms__map_addr(ks, 0xffffffffc0001000)->module, "moda"));
	ksyms__free(ks);
}

static void test_range_fallback(void)
{
	const char *kpath = fixture("kallsyms-nostext",
		"ffffffff81000100 T first\n"
		"ffffffff81000180 t middle\n"
		"ffffffff81000300 T last\n"
		"ffffffffc0001000 t m\t[moda]\n");
	struct ksyms *ks = ksyms__load(kpath, NULL);
	uint64_t start = 0, end = 0;

	test_cond("kallsyms without _stext/_etext loads", ks != NULL);
	test_cond("kernel range falls back to the vmlinux symbols' span",
		  ks && !ksyms__kernel_range(ks, &start, &end) &&
		  start == 0xffffffff81000100 && end > 0xffffffff81000300 &&
		  end < 0xffffffffc0001000);
	ksyms__free(ks);
}

static void test_errors(void)
{
	char buf[1024], missing[4200];
	const char *kpath;
	struct ksyms *ks;

	kpath = fixture("kallsyms-hidden",
		"0000000000000000 T _stext\n"
		"0000000000000000 T schedule\n"
		"0000000000000000 t moda_first\t[moda]\n");
	ks = load_capturing(kpath, NULL, buf, sizeof(buf));
	test_cond("hidden addresses: load fails", ks == NULL);
	test_cond("hidden addresses: says to run as root",
		  strstr(buf, "hidden") && strstr(buf, "run as root"));
	test_cond("hidden addresses: names the file", strstr(buf, kpath));
	test_cond("hidden addresses: one line",
		  strchr(buf, '\n') == buf + strlen(buf) - 1);
	ksyms__free(ks);

	snprintf(missing, sizeof(missing), "%s/no-kallsyms", tmpdir);
	ks = load_capturing(missing, NULL, buf, sizeof(buf));
	test_cond("missing kallsyms: load fails", ks == NULL);
	test_cond("missing kallsyms: message names the file and why",
		  strstr(buf, missing) && strstr(buf, "No such file"));

	kpath = fixture("kallsyms-empty", "ffffffff81000000 D only_data\n");
	ks = load_capturing(kpath, NULL, buf, sizeof(buf));
	test_cond("no text symbols: load fails", ks == NULL);
	test_cond("no text symbols: message names the file", strstr(buf, kpath));

	ksyms__free(NULL);
	test_cond("map_addr on NULL ksyms: none",
		  ksyms__map_addr(NULL, 0xffffffff81000000) == NULL);
}

/* Lines that only look like symbols are skipped, the rest still load. */
static void test_odd_lines(void)
{
	const char *kpath = fixture("kallsyms-odd",
		"ffffffff81000000 T _stext\n"
		"1ffffffff81000100 T seventeen_digits\n"
		"0xffffffff81000200 T hex_prefix\n"
		"ffffffff81000300Tno_blank\n"
		"ffffffff81000400 T\n"
		"ffffffff81000500\tt\ttabbed\t[tabmod]\n"
		"FFFFFFFF81000600 T upper_case\r\n"
		"ffffffff81000700 T _etext");	/* no newline at the end */
	struct ksyms *ks = ksyms__load(kpath, NULL);
	const struct ksym *s;

	test_cond("odd lines: loads", ks != NULL);
	if (!ks)
		return;
	test_cond("odd lines: a 17-digit address is not an address",
		  is(name_at(ks, 0xffffffff81000100), "_stext"));
	test_cond("odd lines: 0x prefix, no blank, no name: skipped",
		  is(name_at(ks, 0xffffffff810004ff), "_stext"));
	s = ksyms__map_addr(ks, 0xffffffff81000500);
	test_cond("odd lines: tabs separate, module in brackets",
		  s && is(s->name, "tabbed") && is(s->module, "tabmod"));
	test_cond("odd lines: upper-case hex, CRLF",
		  is(name_at(ks, 0xffffffff81000600), "upper_case"));
	test_cond("odd lines: last line without a newline",
		  ksyms__addr_of(ks, "_etext") == 0xffffffff81000700);
	ksyms__free(ks);
}

/* ksyms__unpack() of a copy of buf (which it then owns, if it takes it). */
static struct ksyms *unpack_copy(const void *buf, size_t len)
{
	void *copy = malloc(len ? len : 1);
	struct ksyms *ks;

	if (!copy)
		return NULL;
	memcpy(copy, buf, len);
	ks = ksyms__unpack(copy, len);
	if (!ks)
		free(copy);
	return ks;
}

/*
 * Packed and unpacked: every address the unpacked symbols say they cover
 * named as kallsyms names it, vmlinux's all (its init code too), modules'
 * but their last symbol; BPF programs not kept; damaged blocks refused.
 */
static void test_pack(void)
{
	const char *kpath = fixture("kallsyms", kallsyms_text);
	const char *mpath = fixture("modules", modules_text);
	struct ksyms *ks = ksyms__load(kpath, mpath), *pk = NULL;
	uint64_t a, start = 0, end = 0;
	bool same = true, covered = true;
	size_t len = 0, i;
	uint32_t w;
	char *buf;

	buf = ksyms__pack(ks, &len);
	test_cond("pack the fixture", buf && len > 0);
	if (buf)
		pk = unpack_copy(buf, len);
	test_cond("unpack it", pk != NULL);
	test_cond("symbols from kallsyms cover every address",
		  ksyms__covers(ks, 0xffffffffc0005010));
	for (a = 0xffffffff80fffff0; pk && a < 0xffffffff81001010; a += 4) {
		covered &= ksyms__covers(pk, a) == (a >= 0xffffffff81000000);
		if (ksyms__covers(pk, a))
			same &= is(name_at(pk, a), name_at(ks, a));
	}
	test_cond("vmlinux: covered from its first symbol, named as kallsyms names it",
		  same && covered);
	test_cond("vmlinux's init code: covered, named",
		  ksyms__covers(pk, 0xffffffff81400010) &&
		  is(name_at(pk, 0xffffffff81400010), "_sinittext"));
	test_cond("a module's symbol but its last: covered, named",
		  ksyms__covers(pk, 0xffffffffc0001010) &&
		  is(name_at(pk, 0xffffffffc0001010), "moda_first"));
	test_cond("a module's last symbol (its extent may hold others'): not covered",
		  !ksyms__covers(pk, 0xffffffffc0001090) &&
		  !ksyms__covers(pk, 0xffffffffc0003010));
	test_cond("a BPF program: not kept, not covered",
		  !ksyms__covers(pk, 0xffffffffc0005010) &&
		  ksyms__module_range(pk, "bpf", &start, &end));
	test_cond("unpacked: kallsyms's text range, modules' extents, schedule",
		  !ksyms__kernel_range(pk, &start, &end) &&
		  start == 0xffffffff81000000 && end == 0xffffffff81001000 &&
		  !ksyms__module_range(pk, "modb", &start, &end) &&
		  start == 0xffffffffc0003000 && end == 0xffffffffc0004000 &&
		  ksyms__addr_of(pk, "schedule") == 0xffffffff81000100);
	ksyms__free(pk);
	test_cond("unpacked symbols are not packed again",
		  !ksyms__pack(pk = buf ? unpack_copy(buf, len) : NULL, &i));
	ksyms__free(pk);

	/* damaged: short, one byte more, a name past the strings, unsorted */
	test_cond("a short block: refused", buf && !unpack_copy(buf, len - 1));
	if (buf) {
		char *more = calloc(1, len + 1), *d = malloc(len);

		memcpy(more, buf, len);
		test_cond("a longer block: refused", !unpack_copy(more, len + 1));
		/* the first symbol's name (after a 32-byte head): far away */
		memcpy(d, buf, len);
		w = UINT32_MAX - 1;
		memcpy(d + 32 + 16, &w, 4);
		test_cond("a name past the strings: refused", !unpack_copy(d, len));
		/* the second symbol's address: below the first's */
		memcpy(d, buf, len);
		memset(d + 32 + 24, 0, 8);
		test_cond("symbols out of order: refused", !unpack_copy(d, len));
		memcpy(d, buf, len);
		d[len - 1] = 'x';
		test_cond("strings not ended: refused", !unpack_copy(d, len));
		free(more);
		free(d);
	}
	free(buf);
	ksyms__free(ks);
}

/* A loader thread: the same table; errors printed only when finished. */
static void test_loader(void)
{
	const char *kpath = fixture("kallsyms", kallsyms_text);
	const char *mpath = fixture("modules", modules_text);
	char buf[1024], missing[4200];
	struct ksyms *ks;

	ks = load_how(LOAD_THREAD, kpath, mpath, buf, sizeof(buf));
	test_cond("loader: loads the fixture quietly", ks && !buf[0]);
	test_cond("loader: same lookups as ksyms__load",
		  is(name_at(ks, 0xffffffff81000100), "schedule") &&
		  is(name_at(ks, 0xffffffffc0001090), "moda_last"));
	ksyms__free(ks);

	snprintf(missing, sizeof(missing), "%s/no-kallsyms", tmpdir);
	ks = load_how(LOAD_THREAD, missing, NULL, buf, sizeof(buf));
	test_cond("loader: missing file fails with one line naming it",
		  !ks && strstr(buf, missing) &&
		  strchr(buf, '\n') == buf + strlen(buf) - 1);
	load_how(LOAD_THREAD_CANCEL, missing, NULL, buf, sizeof(buf));
	test_cond("loader: cancelled, prints nothing", !buf[0]);
	load_how(LOAD_THREAD_CANCEL, kpath, mpath, buf, sizeof(buf));
	test_cond("loader: cancelled after a good load, prints nothing",
		  !buf[0]);
	test_cond("loader: NULL-safe", !kcache__load_finish(NULL));
	kcache__load_cancel(NULL);
}

/* The running kernel's own table, when this user may read addresses. */
static void test_live_kernel(void)
{
	char buf[1024];
	struct ksyms *ks = load_capturing("/proc/kallsyms", NULL, buf,
					  sizeof(buf));
	uint64_t start = 0, end = 0, addr;
	const struct ksym *s;

	if (!ks) {
		printf("note: /proc/kallsyms not usable here: %s", buf);
		return;
	}
	test_cond("live kernel: text range", !ksyms__kernel_range(ks, &start, &end) &&
		  start < end);
	addr = ksyms__addr_of(ks, "_stext");
	s = ksyms__map_addr(ks, start + (end - start) / 2);
	test_cond("live kernel: an address in mid text maps to a symbol",
		  s && s->addr <= start + (end - start) / 2 && !s->module);
	test_cond("live kernel: _stext starts the range", !addr || addr == start);
	ksyms__free(ks);
}

static int rm_entry(const char *path, const struct stat *st, int flag,
		    struct FTW *ftw)
{
	(void)st; (void)flag; (void)ftw;
	return remove(path);
}

int main(void)
{
	const char *t = getenv("TEST_TMPDIR");
	int own_tmpdir = !(t && *t);
	int ret;

	if (t && *t) {
		snprintf(tmpdir, sizeof(tmpdir), "%s", t);
	} else {
		snprintf(tmpdir, sizeof(tmpdir), "/tmp/test_ksyms.XXXXXX");
		if (!mkdtemp(tmpdir)) {
			perror("mkdtemp");
			return 1;
		}
	}
	test_fixture();
	test_without_modules();
	test_range_fallback();
	test_errors();
	test_odd_lines();
	test_pack();
	test_loader();
	test_live_kernel();
	ret = test_report();
	if (own_tmpdir)
		nftw(tmpdir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	return ret;
}
