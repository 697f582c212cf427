// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * test_pycode: a running CPython's Python frames, read from outside as the
 * profiler will (pyrt.h, pycode.h), against what the interpreter says of
 * itself, with Debian's python3.11 (/usr/bin/python3.11):
 *   - pyrt_detect() knows it (3.11, _PyRuntime's address) and refuses a
 *     file that is no CPython;
 *   - pycode_line() gives every code unit of every function of a few
 *     modules the line co_positions() gives it;
 *   - a script spinning in a method on a known line, two calls deep: from
 *     _PyRuntime to its thread (by its native tid) to its frames, each code
 *     object read by pycode_read(): the method's qualified name, file and
 *     line, then its caller's and its caller's; the GIL's holder, by the
 *     shortcut the tick tries first, is that thread; the executable
 *     mapping's start less its offset and text_delta is the file's bias;
 *   - hostile reads: an address that is no code object, one unmapped.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gelf.h>

#include "python/pycode.h"
#include "python/pyrt.h"
#include "test.h"
#include "testutil.h"
#include "pyspin.h"

#define PYTHON	"/usr/bin/python3.11"

static int detect(const char *path, struct pyrt *rt, const char **why)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), ret = -1;
	Elf *elf;

	*why = "cannot open";
	if (fd < 0)
		return -1;
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (elf) {
		ret = pyrt_detect(elf, rt, why);
		elf_end(elf);
	}
	close(fd);
	return ret;
}

/* Lines of every code unit, as the interpreter decodes them. */
static void test_lines(void)
{
	const char *script = tmp_path("lines.py"), *out = tmp_path("lines.txt");
	char *text, *p, *line;
	int checked = 0, wrong = 0, tables = 0;
	static uint8_t table[1 << 20];

	if (run("cat > '%s' <<'EOF'\n"
		"import argparse, difflib, json.decoder, textwrap, types\n"
		"def codes(c):\n"
		"    yield c\n"
		"    for k in c.co_consts:\n"
		"        if isinstance(k, types.CodeType): yield from codes(k)\n"
		"for m in (argparse, difflib, json.decoder, textwrap):\n"
		"    top = compile(open(m.__file__).read(), m.__file__, 'exec')\n"
		"    for c in codes(top):\n"
		"        lines = [p[0] if p[0] is not None else -1 for p in c.co_positions()]\n"
		"        print(c.co_firstlineno, c.co_linetable.hex(), *lines)\n"
		"EOF\n" PYTHON " '%s' > '%s'", script, script, out)) {
		test_cond("python3.11 lists its code objects' lines", false);
		return;
	}
	text = slurp(out, NULL);
	for (line = text ? strtok_r(text, "\n", &p) : NULL; line;
	     line = strtok_r(NULL, "\n", &p)) {
		char *q, *hex;
		int first = (int)strtol(line, &q, 10);
		size_t len = 0, i;
		long idx = 0;

		hex = strtok(q, " ");
		for (i = 0; hex && hex[2 * i] && len < sizeof(table); i++)
			sscanf(hex + 2 * i, "%2hhx", &table[len++]);
		tables++;
		for (char *tok = strtok(NULL, " "); tok; tok = strtok(NULL, " "), idx++) {
			int want = atoi(tok), got = pycode_line(table, len, first, idx);

			checked++;
			if (got != want && wrong++ < 3)
				fprintf(stderr, "  code unit %ld (first line %d): %d, python says %d\n",
					idx, first, got, want);
		}
	}
	free(text);
	test_condf(tables >= 50 && checked >= 5000 && !wrong,
		   "line of every code unit as co_positions() has it: %d tables, %d units, %d wrong",
		   tables, checked, wrong);
	test_cond("before the first instruction: the first line",
		  pycode_line(table, 0, 42, -1) == 42);
	test_cond("past the table's end: none", pycode_line(table, 0, 42, 0) == -1);
	{
		/* a LONG entry cut short: refused, no read past the end */
		const uint8_t cut[] = { 0xf0 | 0x07, 0x41 };

		test_cond("a truncated entry: none",
			  pycode_line(cut, sizeof(cut), 1, 0) == -1);
	}
}

static int peek_u64(pid_t pid, uint64_t addr, uint64_t *v)
{
	return pyspin_peek(pid, addr, v, 8);
}

/*
 * The frames of thread tid of pid, innermost first: "qualname file:line";
 * the interpreter mapped at bias.
 */
static int walk(pid_t pid, uint32_t tid, const struct pyrt *rt, uint64_t bias,
		char out[][512], int max)
{
	struct cprof_pyframe py[16];
	struct pycode c;
	int n, i;

	n = pyspin_walk(pid, tid, rt, bias, py, max < 16 ? max : 16);
	for (i = 0; i < n; i++) {
		if (pycode_read(pid, rt, bias,
				py[i].code & ~(uint64_t)CPROF_PYFRAME_ENTRY, &c))
			return -1;
		snprintf(out[i], 512, "%s %s:%d", c.qualname, c.filename,
			 pycode_line(c.linetable, c.linetable_len, c.firstlineno,
				     py[i].instr));
		pycode_free(&c);
	}
	return n;
}

/* Where pid maps path's first page: the bias of a shared object. */
static uint64_t map_bias(pid_t pid, const char *path)
{
	char maps[64], line[4096];
	uint64_t start = 0, off;
	FILE *f;

	snprintf(maps, sizeof(maps), "/proc/%d/maps", (int)pid);
	f = fopen(maps, "r");
	while (f && fgets(line, sizeof(line), f)) {
		char *name = strchr(line, '/');

		if (name && !strncmp(name, path, strlen(path)) &&
		    sscanf(line, "%" SCNx64 "-%*x %*s %" SCNx64, &start, &off) == 2 &&
		    !off)
			break;
		start = 0;
	}
	if (f)
		fclose(f);
	return start;
}

/*
 * The file of pid's interpreter (libpython if it maps one, else its
 * executable) into path, detected into rt; its bias in *bias.  0 or -1.
 */
static int interpreter_of(pid_t pid, char *path, size_t size,
			  struct pyrt *rt, uint64_t *bias)
{
	char maps[64], line[4096], exe[64];
	const char *why;
	FILE *f;
	ssize_t n;

	path[0] = '\0';
	snprintf(maps, sizeof(maps), "/proc/%d/maps", (int)pid);
	f = fopen(maps, "r");
	while (f && fgets(line, sizeof(line), f)) {
		char *name = strchr(line, '/');

		if (name && strstr(name, "/libpython3.")) {
			snprintf(path, size, "%s", name);
			path[strcspn(path, "\n")] = '\0';
			break;
		}
	}
	if (f)
		fclose(f);
	if (!path[0]) {
		snprintf(exe, sizeof(exe), "/proc/%d/exe", (int)pid);
		n = readlink(exe, path, size - 1);
		if (n <= 0)
			return -1;
		path[n] = '\0';
	}
	if (detect(path, rt, &why) != 1)
		return -1;
	/* a non-PIE executable is at its own addresses */
	*bias = rt->runtime >= 0x400000 && !strstr(path, "/libpython3.") ? 0 :
		map_bias(pid, path);
	return 0;
}

/*
 * The bias the module will use: pid's executable mapping of path, its
 * start less its file offset less the file's text_delta.  -1 if none.
 */
static uint64_t exec_bias(pid_t pid, const char *path, const struct pyrt *rt)
{
	char maps[64], line[4096], perms[8];
	uint64_t start, off, bias = (uint64_t)-1;
	FILE *f;

	snprintf(maps, sizeof(maps), "/proc/%d/maps", (int)pid);
	f = fopen(maps, "r");
	while (f && fgets(line, sizeof(line), f)) {
		char *name = strchr(line, '/');

		line[strcspn(line, "\n")] = '\0';
		if (name && !strcmp(name, path) &&
		    sscanf(line, "%" SCNx64 "-%*x %7s %" SCNx64, &start, perms,
			   &off) == 3 && perms[2] == 'x') {
			bias = start - off - rt->text_delta;
			break;
		}
	}
	if (f)
		fclose(f);
	return bias;
}

/*
 * The thread holding the GIL, by the shortcut the tick tries first: 3.11's
 * tstate_current, 3.12+'s GIL's last holder.  Its native tid, or 0.
 */
static uint32_t gil_holder_tid(pid_t pid, const struct pyrt *rt, uint64_t bias)
{
	uint64_t ts = 0, interp, gil, tid;

	if (rt->tstate_current != PYRT_NONE) {
		if (peek_u64(pid, rt->runtime + bias + rt->tstate_current, &ts))
			return 0;
	} else if (rt->interp_gil == PYRT_NONE || rt->gil_holder == PYRT_NONE ||
		   peek_u64(pid, rt->runtime + bias + rt->interp_head, &interp) ||
		   peek_u64(pid, interp + rt->interp_gil, &gil) ||
		   peek_u64(pid, gil + rt->gil_holder, &ts)) {
		return 0;
	}
	if (!ts || peek_u64(pid, ts + rt->ts_native_tid, &tid))
		return 0;
	return (uint32_t)tid;
}

static bool refuse_all(void *arg, uint64_t addr, size_t size)
{
	(void)arg, (void)addr, (void)size;
	return false;
}

/* python (a path, or a name looked up in PATH) runs a script spinning. */
static void test_live(const char *python)
{
	struct pyrt own, *rt = &own;
	char interp[4096];
	const char *script = tmp_path("spin.py"), *out = tmp_path("spin.out");
	char frames[8][512], want[3][512];
	struct pycode c;
	uint32_t tid;
	uint64_t bias = 0;
	pid_t pid;
	int n = -1, i;

	pid = pyspin_start(python, script, out, &tid);
	if (pid < 0) {
		test_cond("fixture: the script", false);
		return;
	}
	/* the loop runs: its frame is the innermost */
	if (!tid || interpreter_of(pid, interp, sizeof(interp), rt, &bias)) {
		test_condf(false, "%s: its interpreter is a CPython whose layout is known",
			   python);
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		return;
	}
	for (i = 0; i < 50; i++) {
		n = walk(pid, tid, rt, bias, frames, 8);
		if (n >= 3 && strstr(frames[0], "cprof_hot_loop"))
			break;
		usleep(100000);
	}
	snprintf(want[0], 512, "Spinner.cprof_hot_loop %s:5", script);
	snprintf(want[1], 512, "middle %s:7", script);
	snprintf(want[2], 512, "outer %s:10", script);
	test_condf(n >= 3 && !strcmp(frames[0], want[0]) &&
		   !strcmp(frames[1], want[1]) && !strcmp(frames[2], want[2]),
		   "%s (%s, %#x): the spinning thread's frames from _PyRuntime: %s | %s | %s",
		   python, interp, rt->version, n > 0 ? frames[0] : "(none)", n > 1 ? frames[1] : "",
		   n > 2 ? frames[2] : "");
	test_condf(exec_bias(pid, interp, rt) == bias,
		   "%s: the executable mapping's start - offset - text_delta (%#" PRIx64 ") is the bias (%#" PRIx64 ")",
		   python, exec_bias(pid, interp, rt), bias);
	test_condf(gil_holder_tid(pid, rt, bias) == tid,
		   "%s: the GIL's holder (%s) is the spinning thread %u",
		   python, rt->tstate_current != PYRT_NONE ?
		   "_PyRuntime's tstate_current" : "the interpreter's GIL's last holder",
		   tid);
	errno = 0;
	test_cond("an address that is no code object is refused (EINVAL)",
		  pycode_read(pid, rt, bias, rt->runtime + bias, &c) == -1 &&
		  errno == EINVAL);
	errno = 0;
	test_cond("memory its reader does not allow is not read (EACCES)",
		  pycode_read_if(pid, rt, bias, rt->runtime + bias, &c,
				 refuse_all, NULL) == -1 && errno == EACCES);
	errno = 0;
	test_cond("an unmapped address is refused (EFAULT)",
		  pycode_read(pid, rt, bias, 0x10, &c) == -1 && errno == EFAULT);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	errno = 0;
	test_cond("a process that is gone: ESRCH",
		  pycode_read(pid, rt, bias, rt->runtime + bias, &c) == -1 &&
		  errno == ESRCH);
}

/*
 * A copy of python3.11 whose dynamic symbols' names do not end in a NUL
 * (its last byte overwritten): refused, where libelf would search the
 * whole table for a NUL at each symbol (a file any user can map).  The
 * copy as it was is still CPython.
 */
static void test_unterminated(void)
{
	const char *copy = tmp_path("python3.11-copy");
	struct pyrt rt;
	const char *why;
	Elf_Scn *scn = NULL;
	int64_t last = -1;
	Elf *elf;
	int fd;

	if (run("cp %s '%s'", PYTHON, copy)) {
		test_cond("python3.11 copied", false);
		return;
	}
	test_cond("a copy of python3.11 is CPython",
		  detect(copy, &rt, &why) == 1);
	fd = open(copy, O_RDWR | O_CLOEXEC);
	elf = fd >= 0 ? elf_begin(fd, ELF_C_READ, NULL) : NULL;
	while (elf && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh, ss;

		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_DYNSYM &&
		    gelf_getshdr(elf_getscn(elf, sh.sh_link), &ss) &&
		    ss.sh_size)
			last = (int64_t)(ss.sh_offset + ss.sh_size - 1);
	}
	if (elf)
		elf_end(elf);
	test_condf(last > 0 && pwrite(fd, "x", 1, last) == 1,
		   "the last byte of its dynamic string table (at %" PRId64 ") overwritten",
		   last);
	if (fd >= 0)
		close(fd);
	test_cond("a CPython whose dynamic names do not end in a NUL is not read",
		  detect(copy, &rt, &why) == 0);
	unlink(copy);
}

/*
 * Other minor versions where PATH has them (a build beside Debian's): their
 * layouts (3.12's table, 3.13's _Py_DebugOffsets) walked the same way.
 * Nothing is checked where there is none.
 */
static void test_other_versions(void)
{
	static const char *const names[] = { "python3.12", "python3.13" };
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (run("command -v %s", names[i]) ||
		    run("%s -c 'import sys; sys.exit(sys.version_info[:2] != (3, %s))'",
			names[i], names[i] + 8))
			continue;
		test_live(names[i]);
	}
}

int main(void)
{
	struct pyrt rt;
	const char *why;

	elf_version(EV_CURRENT);
	if (access(PYTHON, X_OK))
		test_skip(PYTHON " is not installed");
	test_condf(detect(PYTHON, &rt, &why) == 1 && (rt.version >> 16) == 0x030b &&
		   rt.runtime && rt.code_type,
		   "python3.11 is CPython 3.11: version %#x, _PyRuntime at %#" PRIx64,
		   rt.version, rt.runtime);
	test_condf(detect("/bin/sh", &(struct pyrt){ 0 }, &why) == 0,
		   "a shell is no CPython");
	test_unterminated();
	test_lines();
	if ((rt.version >> 16) == 0x030b)
		test_live(PYTHON);
	test_other_versions();
	return test_report();
}
