// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * test_pyframes: samples' Python frames through cprof-dump, with Debian's
 * python3.11 (/usr/bin/python3.11: not PIE, so its symbols are its
 * addresses) as the interpreter whose C frames they are spliced into:
 *   - a synthetic stream: each _PyEval_EvalFrameDefault frame gets its
 *     group of Python frames just inside it, innermost first, paired from
 *     the outermost end (both walks whole) or the innermost (a Python walk
 *     cut at the depth), groups left over to the last frame paired; with
 *     no loop frame named (none in the stack, --no-symbolize), inside the
 *     outermost frame;
 *     frames not read are "[python code 0x...]" and the summary says why
 *     (the process was gone);
 *   - bad trailers: one line naming the byte, exit status 1;
 *   - a live python3.11 spinning two calls deep: its frames walked from
 *     _PyRuntime as the tick will, the stream (the sample before its
 *     mapping record, or after it and then nothing while it runs: read
 *     when the reader waits) piped to cprof-dump while it runs and ended
 *     after it exited: named, "function file:line"; the same stream read
 *     once it is gone: unnamed, and why.
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

#include "python/pyrt.h"
#include "streambuild.h"
#include "test.h"
#include "testutil.h"
#include "pyspin.h"

#define PYTHON	"/usr/bin/python3.11"

/* A dynamic symbol's address in python3.11, from nm; 0 if none. */
static uint64_t sym(const char *name)
{
	static char *text;
	char want[128], *p;

	if (!text) {
		if (run("nm -D --defined-only " PYTHON " > '%s'",
			tmp_path("nm.txt")))
			return 0;
		text = slurp(tmp_path("nm.txt"), NULL);
	}
	snprintf(want, sizeof(want), " %s\n", name);
	for (p = text; p && (p = strstr(p, want)); p++) {
		char *line = p;

		while (line > text && line[-1] != '\n')
			line--;
		if (p > text + 1 && strchr("TtWw", p[-1]))
			return strtoull(line, NULL, 16);
	}
	return 0;
}

/* The text mapping of python3.11 as a non-PIE process maps it. */
#define TEXT_START	0x41f000
#define TEXT_END	0x6cf000
#define TEXT_PGOFF	0x1f000

static const char *run_dump(const char *stream, const char *args)
{
	static char cmd[8192];

	snprintf(cmd, sizeof(cmd),
		 "DEBUGINFOD_URLS= %s -i '%s' --debuginfod '' %s",
		 cprof_dump(), stream, args);
	return cmd;
}

/* Where each of names[] is in line, in order; false if one is missing. */
static bool in_order(const char *line, const char *const *names, size_t n)
{
	const char *at = line;
	size_t i;

	for (i = 0; i < n; i++) {
		at = strstr(at, names[i]);
		if (!at)
			return false;
		at += strlen(names[i]);
	}
	return true;
}

/* The folded line of comm in text, or NULL. */
static char *line_of(char *text, const char *comm)
{
	char want[32], *p;

	snprintf(want, sizeof(want), "%s;", comm);
	for (p = text; p; p = strchr(p, '\n')) {
		if (*p == '\n')
			p++;
		if (!strncmp(p, want, strlen(want))) {
			char *end = strchr(p, '\n');
			static char line[8192];

			snprintf(line, sizeof(line), "%.*s",
				 (int)(end ? end - p : (long)strlen(p)), p);
			return line;
		}
	}
	return NULL;
}

static void test_splice(void)
{
	const char *stream = tmp_path("splice.bin");
	uint64_t eval = sym("_PyEval_EvalFrameDefault"),
		 call = sym("PyObject_Call"), vcall = sym("PyObject_Vectorcall"),
		 runmain = sym("Py_RunMain"), bmain = sym("Py_BytesMain");
	struct cprof_header h = sb_header_of_boot(true);
	/* a leaf, two calls of the loop, the way up to main */
	const uint64_t u[6] = { call, eval + 1, vcall + 1, eval + 1,
				runmain + 1, bmain + 1 };
	const uint64_t u4[3] = { call, runmain + 1, bmain + 1 };
	const struct cprof_pyframe py[5] = {
		{ 0x7f000000a000, 3, 1 },
		{ 0x7f000000b000 | CPROF_PYFRAME_ENTRY, 3, 1 },
		{ 0x7f000000c000, 3, 1 },
		{ 0x7f000000d000 | CPROF_PYFRAME_ENTRY, 3, 1 },
		{ 0x7f000000e000 | CPROF_PYFRAME_ENTRY, 3, 1 },
	};
	static const char *const whole[] = {
		"Py_BytesMain;", "Py_RunMain;", "_PyEval_EvalFrameDefault;",
		"[python code 0x7f000000d000];[python code 0x7f000000c000];",
		"PyObject_Vectorcall;", "_PyEval_EvalFrameDefault;",
		"[python code 0x7f000000b000];[python code 0x7f000000a000];",
		"PyObject_Call ",
	};
	/* three groups, two loop frames, both whole: the inner two inside */
	static const char *const more[] = {
		"_PyEval_EvalFrameDefault;[python code 0x7f000000e000];PyObject_Vectorcall;",
		"_PyEval_EvalFrameDefault;[python code 0x7f000000d000];[python code 0x7f000000c000];[python code 0x7f000000b000];[python code 0x7f000000a000];PyObject_Call ",
	};
	/* the Python walk cut short: one group, to the innermost loop frame */
	static const char *const cut[] = {
		"Py_RunMain;_PyEval_EvalFrameDefault;PyObject_Vectorcall;",
		"_PyEval_EvalFrameDefault;[python code 0x7f000000b000];[python code 0x7f000000a000];PyObject_Call ",
	};
	/* unsymbolized: inside the outermost user frame */
	static const char *const none[] = {
		"t1;python3.11+0x", ";[python code 0x7f000000d000];",
		"[python code 0x7f000000a000];python3.11+0x" };
	const char *l, *t4 = "t4;Py_BytesMain;[python code 0x7f000000b000];"
			      "[python code 0x7f000000a000];Py_RunMain;";
	pid_t gone = gone_pid();
	struct sb b;
	char *text;
	int st;

	if (!eval || !call || !vcall || !runmain || !bmain) {
		test_cond("python3.11's dynamic symbols (nm -D)", false);
		return;
	}
	sb_init(&b);
	sb_header(&b, &h);
	/* a process gone: its code objects are never read */
	sb_mmap(&b, 1, gone, TEXT_START, TEXT_END, TEXT_PGOFF, PYTHON,
		NULL, 0);
	sb_sample_py(&b, 10, gone, 7, 0, "t1", CPROF_SAMPLE_USER_MODE | CPROF_SAMPLE_USER_EXACT,
		     0, NULL, 6, u, 0, TEXT_START, CPROF_PY_COMPLETE, 4, py);
	sb_sample_py(&b, 11, gone, 7, 0, "t2", CPROF_SAMPLE_USER_MODE | CPROF_SAMPLE_USER_EXACT,
		     0, NULL, 6, u, 0, TEXT_START, CPROF_PY_COMPLETE, 5, py);
	sb_sample_py(&b, 12, gone, 7, 0, "t3", CPROF_SAMPLE_USER_MODE | CPROF_SAMPLE_USER_EXACT,
		     0, NULL, 6, u, 0, TEXT_START, CPROF_PY_DEPTH, 2, py);
	/* no loop frame in the stack */
	sb_sample_py(&b, 13, gone, 7, 0, "t4", CPROF_SAMPLE_USER_MODE |
		     CPROF_SAMPLE_USER_EXACT, 0, NULL, 3, u4, 0, TEXT_START,
		     CPROF_PY_COMPLETE, 2, py);
	sb_end(&b, 1000000000, CPROF_END_COMPLETE, 0);
	sb_write(&b, stream, b.len);
	sb_free(&b);

	st = run("%s -f folded", run_dump(stream, ""));
	text = slurp(tmp_path("out.txt"), NULL);
	test_condf(!st && text && line_of(text, "t1") &&
		   in_order(line_of(text, "t1"), whole, 8),
		   "each loop frame gets its group just inside it, innermost first: %s",
		   text && line_of(text, "t1") ? line_of(text, "t1") : "(none)");
	test_condf(text && line_of(text, "t2") &&
		   in_order(line_of(text, "t2"), more, 2),
		   "a group more than loop frames (both walks whole): the innermost loop frame takes it: %s",
		   text && line_of(text, "t2") ? line_of(text, "t2") : "(none)");
	test_condf(text && line_of(text, "t3") &&
		   in_order(line_of(text, "t3"), cut, 2),
		   "a Python walk cut at the depth: paired from the innermost end: %s",
		   text && line_of(text, "t3") ? line_of(text, "t3") : "(none)");
	test_condf(text && line_of(text, "t4") &&
		   !strncmp(line_of(text, "t4"), t4, strlen(t4)),
		   "no loop frame named: the Python frames inside the outermost frame: %s",
		   text && line_of(text, "t4") ? line_of(text, "t4") : "(none)");
	free(text);
	text = slurp(tmp_path("err.txt"), NULL);
	test_condf(text && strstr(text, "Python frames: 5 code objects left unnamed: 5 (the process was gone before it was read)"),
		   "a process gone: its frames unnamed, and the summary says why: %s",
		   text ? text : "");
	test_condf(text && strstr(text, "Python frames: 1 stack with no _PyEval_EvalFrameDefault frame named"),
		   "... and that one stack had no loop frame named");
	free(text);
	st = run("%s -f folded --no-symbolize", run_dump(stream, ""));
	text = slurp(tmp_path("out.txt"), NULL);
	l = text ? line_of(text, "t1") : NULL;
	test_condf(!st && l && in_order(l, none, 3) &&
		   !strncmp(strchr(l + 3, ';'), ";[python code 0x7f000000d000]",
			    29),
		   "no loop frame named: the Python frames inside the outermost frame: %s",
		   text && line_of(text, "t1") ? line_of(text, "t1") : "(none)");
	free(text);
	text = slurp(tmp_path("err.txt"), NULL);
	test_condf(text && !strstr(text, "Python frames"),
		   "... without a word: --no-symbolize names nothing: %s",
		   text ? text : "");
	free(text);
}

/*
 * A str object as CPython 3.11 lays it out (compact; ASCII, or of kind
 * bytes a character), its characters from chars (n of them), into buf;
 * its size.
 */
static size_t str311(uint8_t *buf, const void *chars, uint64_t n,
		     unsigned int kind)
{
	uint32_t state = kind << 2 | 1u << 5 | (kind == 1 ? 1u << 6 : 0);
	size_t at = kind == 1 ? 48 : 72;

	memset(buf, 0, at);
	memcpy(buf + 16, &n, sizeof(n));
	memcpy(buf + 32, &state, sizeof(state));
	memcpy(buf + at, chars, n * kind);
	return at + n * kind;
}

/* A 3.11 line table object: code units 0-7 at line 12 (NO_COLUMNS, +2). */
static void lines311(uint8_t lt[40])
{
	uint64_t size = 2;

	memset(lt, 0, 40);
	memcpy(lt + 16, &size, sizeof(size));
	lt[32] = 0x80 | 13 << 3 | 7;
	lt[33] = 4;
}

/*
 * The start of a stream of another boot in which pid (gone now) mapped
 * python3.11's text at TEXT_START.
 */
static void sb_python_gone(struct sb *b, pid_t pid)
{
	struct cprof_header h = sb_header_of_boot(false);

	sb_init(b);
	sb_header(b, &h);
	sb_mmap(b, 1, pid, TEXT_START, TEXT_END, TEXT_PGOFF, PYTHON, NULL, 0);
}

/*
 * Code objects named by the stream's own records: a stream of another
 * boot whose process is gone, read later, as cat > raw; cprof-dump -i raw.
 */
static void test_records(void)
{
	const char *stream = tmp_path("records.bin");
	uint64_t eval = sym("_PyEval_EvalFrameDefault"),
		 bmain = sym("Py_BytesMain");
	const uint64_t u[2] = { eval, bmain + 1 };
	const struct cprof_pyframe py[2] = {
		{ 0x7f000000a000, 3, 10 },
		{ 0x7f000000b000 | CPROF_PYFRAME_ENTRY, -1, 20 },
	};
	/* "Spinner.spin", "ünïcödé" (Latin-1), the file, a line table */
	static const uint16_t ucs2[] = { 0x263a, 'f', 'n' };
	uint8_t lt[40], q[256], q2[256], f[256], cut[64];
	size_t ql, q2l, fl;
	pid_t gone = gone_pid();
	struct sb b;
	char *text;
	int st;

	if (!eval || !bmain) {
		test_cond("python3.11's dynamic symbols (nm -D)", false);
		return;
	}
	lines311(lt);
	ql = str311(q, "Spinner.spin", 12, 1);
	q2l = str311(q2, ucs2, 3, 2);
	fl = str311(f, "/srv/app/spin.py", 16, 1);
	sb_python_gone(&b, gone);
	sb_sample_py(&b, 10, gone, 7, 0, "r1", CPROF_SAMPLE_USER_MODE |
		     CPROF_SAMPLE_USER_EXACT, 0, NULL, 2, u, 0, TEXT_START,
		     CPROF_PY_COMPLETE, 2, py);
	sb_pycode(&b, 10, gone, 0x7f000000a000, 10, 0x030b02f0, q, ql, f, fl,
		  lt, sizeof(lt));
	sb_pycode(&b, 10, gone, 0x7f000000b000, 20, 0x030b02f0, q2, q2l, f,
		  fl, lt, sizeof(lt));
	/* the same code, first line 30: another code object, its name cut */
	memcpy(cut, q, 48 + 7);
	sb_pycode(&b, 11, gone, 0x7f000000a000, 30, 0x030b02f0, cut, 48 + 7,
		  f, fl, lt, sizeof(lt));
	sb_sample_py(&b, 11, gone, 7, 0, "r2", CPROF_SAMPLE_USER_MODE |
		     CPROF_SAMPLE_USER_EXACT, 0, NULL, 2, u, 0, TEXT_START,
		     CPROF_PY_COMPLETE, 1, (const struct cprof_pyframe[]){
			     { 0x7f000000a000 | CPROF_PYFRAME_ENTRY, 3, 30 } });
	sb_end(&b, 1000000000, CPROF_END_COMPLETE, 0);
	sb_write(&b, stream, b.len);
	sb_free(&b);

	st = run("%s -f folded", run_dump(stream, ""));
	text = slurp(tmp_path("out.txt"), NULL);
	test_condf(!st && text && line_of(text, "r1") &&
		   strstr(line_of(text, "r1"), ";_PyEval_EvalFrameDefault;"
			  "\xe2\x98\xba" "fn;Spinner.spin "),
		   "a process gone, a stream of another boot: its frames named by the stream's code records: %s",
		   text && line_of(text, "r1") ? line_of(text, "r1") : "(none)");
	test_condf(text && line_of(text, "r2") &&
		   strstr(line_of(text, "r2"), ";Spinner ") &&
		   strstr(line_of(text, "r2"), "_PyEval_EvalFrameDefault;"),
		   "a record whose name the module cut: the name as far as it goes, by the code's first line: %s",
		   text && line_of(text, "r2") ? line_of(text, "r2") : "(none)");
	free(text);
	st = run("%s -f text", run_dump(stream, ""));
	text = slurp(tmp_path("out.txt"), NULL);
	test_condf(!st && text && strstr(text, "Spinner.spin") &&
		   strstr(text, "/srv/app/spin.py:12"),
		   "... with the line its line table gives: %s",
		   text ? text : "");
	free(text);
}

/*
 * A Python function's name and file are whatever its process set
 * (code.replace(co_qualname=...)): a newline in them makes no line of its
 * own in any text output (no stack of another count in -f text or
 * folded, no row in the top table), nor does a terminal's escape byte
 * reach it.
 */
static void test_hostile_names(void)
{
	static const char evil[] = "x\n\n999999 0 @ 0x1\n#\t0x1\tsshd";
	static const char file[] = "/srv/\x1b[2Japp.py";
	static const char *const formats[] = { "text", "folded", "top" };
	const char *stream = tmp_path("evil.bin");
	const uint64_t u[2] = { sym("_PyEval_EvalFrameDefault"),
				sym("Py_BytesMain") + 1 };
	const struct cprof_pyframe py[1] = {
		{ 0x7f000000a000 | CPROF_PYFRAME_ENTRY, 3, 10 },
	};
	uint8_t lt[40], q[256], f[256];
	size_t ql, fl, i;
	pid_t gone = gone_pid();
	struct sb b;

	lines311(lt);
	ql = str311(q, evil, sizeof(evil) - 1, 1);
	fl = str311(f, file, sizeof(file) - 1, 1);
	sb_python_gone(&b, gone);
	sb_sample_py(&b, 10, gone, 7, 0, "r1", CPROF_SAMPLE_USER_MODE |
		     CPROF_SAMPLE_USER_EXACT, 0, NULL, 2, u, 0, TEXT_START,
		     CPROF_PY_COMPLETE, 1, py);
	sb_pycode(&b, 10, gone, 0x7f000000a000, 10, 0x030b02f0, q, ql, f, fl,
		  lt, sizeof(lt));
	sb_end(&b, 1000000000, CPROF_END_COMPLETE, 0);
	sb_write(&b, stream, b.len);
	sb_free(&b);
	for (i = 0; i < sizeof(formats) / sizeof(formats[0]); i++) {
		char args[32], *text;
		int st;

		snprintf(args, sizeof(args), "-f %s", formats[i]);
		st = run("%s %s", run_dump(stream, ""), args);
		text = slurp(tmp_path("out.txt"), NULL);
		test_condf(!st && text && strstr(text, "999999") &&
			   !strstr(text, "\n999999") &&
			   !strstr(text, "\n#\t0x1\tsshd") &&
			   !strchr(text, 0x1b),
			   "-f %s: a Python name's newlines and a file's escape byte make no line, reach no terminal:\n%s",
			   formats[i], text ? text : "(none)");
		free(text);
	}
}

/* Streams whose second sample's trailer is damaged. */
static void test_bad_trailer(void)
{
	const char *stream = tmp_path("bad.bin");
	const struct cprof_pyframe py[1] = { { 0x7f000000a000, 3, 1 } };
	const uint64_t u[1] = { 0x401000 };
	struct cprof_pytrail *t;
	char *text;
	int st, i;

	for (i = 0; i < 3; i++) {
		struct sb b;
		size_t at;

		sb_init(&b);
		sb_header(&b, NULL);
		sb_sample_py(&b, 10, 42, 42, 0, "p", 0, 0, NULL, 1, u, 0,
			     0x400000, CPROF_PY_COMPLETE, 1, py);
		sb_sample_py(&b, 11, 42, 42, 0, "p", 0, 0, NULL, 1, u, 0,
			     0x400000, CPROF_PY_COMPLETE, 1, py);
		sb_end(&b, 1000000000, CPROF_END_COMPLETE, 0);
		t = (struct cprof_pytrail *)(b.buf + b.offs[1] +
					     sizeof(struct cprof_sample) + 8);
		if (i == 0)
			t->type = 7;
		else if (i == 1)
			t->status = CPROF_PY_MAX + 1;
		else
			t->nr = 2;
		sb_write(&b, stream, b.len);
		at = b.offs[1];
		sb_free(&b);
		st = run("%s -f folded", run_dump(stream, ""));
		text = slurp(tmp_path("err.txt"), NULL);
		{
			char want[64];

			snprintf(want, sizeof(want), "sample record at byte %zu:",
				 at);
			test_condf(st == 1 && text && nr_lines(text) == 1 &&
				   strstr(text, want),
				   "a bad trailer (%s): exit 1, one line naming the byte: %s",
				   i == 0 ? "type" : i == 1 ? "status" : "frames",
				   text ? text : "");
		}
		free(text);
	}
}

static struct pyrt python_layout(void)
{
	struct pyrt rt = { 0 };
	const char *why;
	int fd = open(PYTHON, O_RDONLY | O_CLOEXEC);

	if (fd >= 0) {
		pyrt_detect_fd(fd, &rt, &why);
		close(fd);
	}
	return rt;
}

/*
 * The stream of one sample of pid's thread tid with frames py, into b;
 * map_first: the mapping record before the sample, not after it.
 */
static void live_stream(struct sb *b, pid_t pid, uint32_t tid,
			const struct cprof_pyframe *py, int n, bool map_first,
			bool end)
{
	struct cprof_header h = sb_header_of_boot(true);
	struct cprof_file_id id = path_id(PYTHON);
	uint64_t eval = sym("_PyEval_EvalFrameDefault");
	const uint64_t u[3] = { eval, sym("Py_RunMain") + 1,
				sym("Py_BytesMain") + 1 };

	id.start_ns = start_ns(pid);
	sb_init(b);
	sb_header(b, &h);
	if (map_first) {
		sb_mmap_id(b, 10, pid, TEXT_START, TEXT_END, PYTHON, &id);
		((struct cprof_mmap *)(b->buf + b->offs[0]))->pgoff =
			TEXT_PGOFF;
	}
	/*
	 * else the sample before its mapping record, as the module writes a
	 * process's first samples: its code is read when the record comes
	 */
	sb_sample_py(b, 10, pid, tid, 0, "spin", CPROF_SAMPLE_USER_MODE |
		     CPROF_SAMPLE_USER_EXACT, 0, NULL, 3, u, 0, TEXT_START,
		     CPROF_PY_COMPLETE, n, py);
	if (!map_first) {
		sb_mmap_id(b, 10, pid, TEXT_START, TEXT_END, PYTHON, &id);
		((struct cprof_mmap *)(b->buf + b->offs[1]))->pgoff =
			TEXT_PGOFF;
	}
	if (end)
		sb_end(b, 1000000000, CPROF_END_COMPLETE, 0);
}

/*
 * The stream piped to cprof-dump while pid runs, the END after it exited;
 * cprof-dump's output text and its exit status, into *st.
 */
static char *piped(pid_t pid, uint32_t tid, const struct cprof_pyframe *py,
		   int n, bool map_first, int *st)
{
	int fds[2];
	pid_t dump;
	struct sb b;
	size_t head;

	live_stream(&b, pid, tid, py, n, map_first, true);
	head = b.offs[b.nr_recs - 1];	/* all but the END record */
	if (pipe(fds))
		abort();
	dump = fork();
	if (dump == 0) {
		dup2(fds[0], 0);
		close(fds[0]);
		close(fds[1]);
		execl("/bin/sh", "sh", "-c",
		      run_dump("-", "-f text > \"$0\" 2> \"$1\""),
		      tmp_path("live.txt"), tmp_path("live.err"), (char *)NULL);
		_exit(127);
	}
	close(fds[0]);
	if (write(fds[1], b.buf, head) != (ssize_t)head)
		abort();
	/*
	 * cprof-dump reads the sample now (or, the sample's mapping known,
	 * once no record follows); the program then ends
	 */
	usleep(1500000);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	if (write(fds[1], b.buf + head, b.len - head) != (ssize_t)(b.len - head))
		abort();
	close(fds[1]);
	sb_free(&b);
	waitpid(dump, st, 0);
	return slurp(tmp_path("live.txt"), NULL);
}

static void test_live(void)
{
	const char *script = tmp_path("spin.py"), *out = tmp_path("spin.out");
	const char *stream = tmp_path("live.bin");
	struct pyrt rt = python_layout();
	struct cprof_pyframe py[16];
	char want[3][512], *text;
	uint32_t tid = 0;
	int n = -1, i, st, round;
	pid_t pid;
	struct sb b;

	snprintf(want[0], sizeof(want[0]), "\tSpinner.cprof_hot_loop\t%s:5\n",
		 script);
	snprintf(want[1], sizeof(want[1]), "\tmiddle\t%s:7\n", script);
	snprintf(want[2], sizeof(want[2]), "\touter\t%s:10\n", script);
	/* 0: the sample before its mapping record; 1: after it */
	for (round = 0; round < 2; round++) {
		if ((rt.version >> 16) != 0x030b ||
		    (pid = pyspin_start(PYTHON, script, out, &tid)) < 0) {
			test_cond("fixture: the script, python3.11's layout",
				  false);
			return;
		}
		for (i = 0, n = -1; tid && i < 50; i++) {
			n = pyspin_walk(pid, tid, &rt, 0, py, 16);
			if (n >= 4 && (py[n - 1].code & CPROF_PYFRAME_ENTRY))
				break;
			usleep(100000);
		}
		test_condf(n >= 4, "python3.11's frames walked as the tick will: %d",
			   n);
		if (n < 4) {
			kill(pid, SIGKILL);
			waitpid(pid, NULL, 0);
			return;
		}
		text = piped(pid, tid, py, n, round, &st);
		test_condf(WIFEXITED(st) && !WEXITSTATUS(st) && text &&
			   strstr(text, want[0]) && strstr(text, want[1]) &&
			   strstr(text, want[2]) &&
			   strstr(text, want[0]) < strstr(text, want[1]) &&
			   strstr(text, want[1]) < strstr(text, want[2]) &&
			   strstr(text, want[2]) < strstr(text, "\t_PyEval_EvalFrameDefault"),
			   "a program that exits before cprof-dump ends (%s): its frames named, innermost first, inside the loop's frame:\n%s",
			   round ? "its mapping record first, then no record while it runs" :
				   "its sample before its mapping record",
			   text ? text : "(none)");
		free(text);
	}

	/* read once it is gone: nothing to read any more */
	live_stream(&b, pid, tid, py, n, false, true);
	sb_write(&b, stream, b.len);
	sb_free(&b);
	st = run("%s -f text", run_dump(stream, ""));
	text = slurp(tmp_path("out.txt"), NULL);
	test_condf(!st && text && !strstr(text, "cprof_hot_loop") &&
		   strstr(text, "[python code 0x"),
		   "read after the program exited: its frames unnamed");
	free(text);
	text = slurp(tmp_path("err.txt"), NULL);
	test_condf(text && strstr(text, "code objects left unnamed:") &&
		   strstr(text, "(the process was gone before it was read)"),
		   "... and the summary says why: %s", text ? text : "");
	free(text);
}

int main(void)
{
	if (access(PYTHON, X_OK))
		test_skip(PYTHON " is not installed");
	test_splice();
	test_bad_trailer();
	test_records();
	test_hostile_names();
	test_live();
	return test_report();
}
