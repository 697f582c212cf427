// SPDX-License-Identifier: GPL-2.0
/*
 * elfsyms on fixtures this test builds with the C compiler: PIE and non-PIE
 * executables and shared libraries with an always_inline function, stripped
 * copies, a separate debug file, C++, and files that are not there.
 *
 * The fixtures find their own sample points the way the profiler does: a
 * noinline probe records its return address, and the fixture turns
 * "return address - 1" into a file offset through /proc/self/maps.  The
 * expected lines come from marker comments in the fixture sources.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <ftw.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test.h"
#include "symbolize/elfsyms.h"
#include "lib/mapfile.h"

#define MAX_FRAMES	8

static char tmpdir[4096];
static const char *cc;

/* The fixtures' way to turn an address into a file offset: the maps line. */
#define FILE_OFFSET_SRC							\
	"static unsigned long file_offset(void *p)\n"			\
	"{\n"								\
	"	unsigned long a = (unsigned long)p, lo, hi, pgoff;\n"	\
	"	char line[512];\n"					\
	"	FILE *f = fopen(\"/proc/self/maps\", \"r\");\n"		\
	"\n"								\
	"	while (f && fgets(line, sizeof(line), f))\n"		\
	"		if (sscanf(line, \"%lx-%lx %*s %lx\", &lo, &hi, &pgoff) == 3 &&\n" \
	"		    a >= lo && a < hi) {\n"			\
	"			fclose(f);\n"				\
	"			return a - lo + pgoff;\n"		\
	"		}\n"						\
	"	exit(3);\n"						\
	"}\n"

static const char c_fixture[] =
	"#include <stdio.h>\n"
	"#include <stdlib.h>\n"
	"\n"
	"volatile int sink;\n"
	"void *ret_in_leaf, *ret_in_outer, *ret_in_block;\n"
	"\n"
	"__attribute__((noinline)) int probe(int x)\n"
	"{\n"
	"	ret_in_leaf = __builtin_return_address(0);\n"
	"	return x + sink;\n"
	"}\n"
	"\n"
	"__attribute__((noinline)) int probe3(int x)\n"
	"{\n"
	"	ret_in_block = __builtin_return_address(0);\n"
	"	return x - sink;\n"
	"}\n"
	"\n"
	"__attribute__((noinline)) int probe2(int x)\n"
	"{\n"
	"	ret_in_outer = __builtin_return_address(0);\n"
	"	return x - sink;\n"
	"}\n"
	"\n"
	"static inline __attribute__((always_inline)) int leaf(int x) /* DECL_LEAF */\n"
	"{\n"
	"	int v = probe(x); /* MARK_LEAF */\n"
	"	return v * 3;\n"
	"}\n"
	"\n"
	"static inline __attribute__((always_inline)) int leaf2(int x)\n"
	"{\n"
	"	return probe3(x) ^ 5; /* MARK_LEAF2 */\n"
	"}\n"
	"\n"
	"/* the inlined call sits in a lexical block (the loop body's scope) */\n"
	"__attribute__((noinline)) int blocky(int x)\n"
	"{\n"
	"	int s = 0;\n"
	"\n"
	"	for (int i = 0; i < x; i++) {\n"
	"		int t = i * sink + x;\n"
	"\n"
	"		s += leaf2(t); /* MARK_BLOCK_CALL */\n"
	"		s ^= t;\n"
	"	}\n"
	"	return s;\n"
	"}\n"
	"\n"
	"__attribute__((noinline)) int outer(int x) /* DECL_OUTER */\n"
	"{\n"
	"	int r = leaf(x); /* MARK_CALL */\n"
	"	r += probe2(r); /* MARK_OUTER */\n"
	"	return r + 1;\n"
	"}\n"
	"\n"
	"/* a 1-byte function followed by bytes no symbol covers */\n"
	"__asm__(\".text\\n\"\n"
	"	\".globl asm_fn\\n\"\n"
	"	\".type asm_fn, %function\\n\"\n"
	"	\"asm_fn: .byte 0xc3\\n\"\n"
	"	\".size asm_fn, 1\\n\"\n"
	"	\".fill 64, 1, 0xcc\\n\");\n"
	"extern char asm_fn[];\n"
	"\n"
	FILE_OFFSET_SRC
	"\n"
	"int main(void)\n"
	"{\n"
	"	int r = outer(sink + 2) + blocky(sink + 2);\n"
	"\n"
	"	printf(\"%lx %lx %lx %lx %lx %d\\n\", file_offset(ret_in_leaf) - 1,\n"
	"	       file_offset(ret_in_outer) - 1,\n"
	"	       file_offset((void *)outer), file_offset(asm_fn),\n"
	"	       file_offset(ret_in_block) - 1, r);\n"
	"	return 0;\n"
	"}\n";

static const char lib_fixture[] =
	"volatile int lib_sink;\n"
	"void *lib_ret;\n"
	"\n"
	"__attribute__((noinline)) int lib_probe(int x)\n"
	"{\n"
	"	lib_ret = __builtin_return_address(0);\n"
	"	return x + lib_sink;\n"
	"}\n"
	"\n"
	"static inline __attribute__((always_inline)) int lib_leaf(int x)\n"
	"{\n"
	"	int v = lib_probe(x); /* MARK_LIB_LEAF */\n"
	"	return v * 5;\n"
	"}\n"
	"\n"
	"int lib_entry(int x)\n"
	"{\n"
	"	int r = lib_leaf(x); /* MARK_LIB_CALL */\n"
	"	return r + 7;\n"
	"}\n";

static const char cxx_fixture[] =
	"#include <stdio.h>\n"
	"#include <stdlib.h>\n"
	"\n"
	"int cprobe(int x);\n"
	"\n"
	"namespace ns {\n"
	"struct Widget {\n"
	"	int base;\n"
	"	int spin(int x);\n"
	"	__attribute__((always_inline)) inline int twice(int x) /* DECL_TWICE */\n"
	"	{\n"
	"		return cprobe(x) * 2; /* MARK_TWICE */\n"
	"	}\n"
	"};\n"
	"}\n"
	"\n"
	"volatile int sink;\n"
	"void *ret_in_spin, *ret_in_twice;\n"
	"\n"
	"__attribute__((noinline)) int cprobe(int x)\n"
	"{\n"
	"	if (ret_in_spin)\n"
	"		ret_in_twice = __builtin_return_address(0);\n"
	"	else\n"
	"		ret_in_spin = __builtin_return_address(0);\n"
	"	return x + sink;\n"
	"}\n"
	"\n"
	"__attribute__((noinline)) int ns::Widget::spin(int x)\n"
	"{\n"
	"	int v = cprobe(x + base); /* MARK_SPIN */\n"
	"	v += twice(v); /* MARK_CALL_TWICE */\n"
	"	return v * 2;\n"
	"}\n"
	"\n"
	FILE_OFFSET_SRC
	"\n"
	"int main()\n"
	"{\n"
	"	ns::Widget w = { sink };\n"
	"	int r = w.spin(3);\n"
	"\n"
	"	printf(\"%lx %lx %d\\n\", file_offset(ret_in_spin) - 1,\n"
	"	       file_offset(ret_in_twice) - 1, r);\n"
	"	return 0;\n"
	"}\n";

/* Assembly with two names for one function, the last a local alias. */
static const char asm_fixture[] =
	"	.text\n"
	"	.globl	asm_pub\n"
	"	.type	asm_pub, %function\n"
	"	.type	asm_local_alias, %function\n"
	"asm_pub:\n"
	"asm_local_alias:\n"
	"	nop /* MARK_ASM */\n"
	"	nop\n"
	"	ret\n"
	"	.size	asm_pub, .-asm_pub\n"
	"	.size	asm_local_alias, .-asm_local_alias\n"
	"	.section .note.GNU-stack,\"\",%progbits\n";

/* A GNU C nested function: a subprogram inside a subprogram. */
static const char nested_fixture[] =
	"#include <stdio.h>\n"
	"#include <stdlib.h>\n"
	"\n"
	"volatile int sink;\n"
	"void *ret_in_nested;\n"
	"\n"
	"__attribute__((noinline)) int probe(int x)\n"
	"{\n"
	"	ret_in_nested = __builtin_return_address(0);\n"
	"	return x + sink;\n"
	"}\n"
	"\n"
	"__attribute__((noinline)) int host(int x)\n"
	"{\n"
	"	__attribute__((noinline)) int nested(int y) /* DECL_NESTED */\n"
	"	{\n"
	"		return probe(y) + x; /* MARK_NESTED */\n"
	"	}\n"
	"	return nested(x + sink) * 2;\n"
	"}\n"
	"\n"
	FILE_OFFSET_SRC
	"\n"
	"int main(void)\n"
	"{\n"
	"	int r = host(3);\n"
	"\n"
	"	printf(\"%lx %d\\n\", file_offset(ret_in_nested) - 1, r);\n"
	"	return 0;\n"
	"}\n";

static char *path_in(const char *name)
{
	static char paths[32][4200];
	static int next;
	char *p = paths[next++ % 32];

	snprintf(p, sizeof(paths[0]), "%s/%s", tmpdir, name);
	return p;
}

static const char *write_file(const char *name, const char *text)
{
	const char *path = path_in(name);
	FILE *f = fopen(path, "w");

	if (!f || fputs(text, f) < 0 || fclose(f)) {
		perror(path);
		exit(1);
	}
	return path;
}

static int vsh(int quiet, const char *fmt, va_list ap)
{
	char cmd[16384];
	int st;

	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	st = system(cmd);
	if (st != 0 && !quiet)
		printf("note: `%s` failed\n", cmd);
	return st == 0 ? 0 : -1;
}

/* Runs a shell command; 0 when it exited 0, else says which failed. */
static int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int sh(const char *fmt, ...)
{
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = vsh(0, fmt, ap);
	va_end(ap);
	return ret;
}

/* The same for commands whose failure is an answer, not a problem. */
static int sh_quiet(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int sh_quiet(const char *fmt, ...)
{
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = vsh(1, fmt, ap);
	va_end(ap);
	return ret;
}

/* First line of a command's output, newline stripped; -1 on failure. */
static int capture(char *buf, size_t len, const char *cmd)
{
	FILE *p = popen(cmd, "r");
	int ok;

	if (!p)
		return -1;
	ok = fgets(buf, (int)len, p) != NULL;
	if (pclose(p) != 0 || !ok)
		return -1;
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

/* The line of src holding marker; -1 if absent. */
static int marker_line(const char *src, const char *marker)
{
	const char *at = strstr(src, marker), *p;
	int line = 1;

	if (!at)
		return -1;
	for (p = src; p < at; p++)
		line += *p == '\n';
	return line;
}

static int is(const char *a, const char *b)
{
	return a && b && !strcmp(a, b);
}

/* ELF e_type from the file header (2 = EXEC, 3 = DYN); -1 on error. */
static int elf_type(const char *path)
{
	unsigned char h[18];
	FILE *f = fopen(path, "rb");
	size_t n = f ? fread(h, 1, sizeof(h), f) : 0;

	if (f)
		fclose(f);
	if (n != sizeof(h) || memcmp(h, "\177ELF", 4))
		return -1;
	return h[5] == 1 ? h[16] | h[17] << 8 : h[17] | h[16] << 8;
}

/* The GNU build ID as readelf prints it; "" if none. */
static void read_build_id(const char *path, char *hex, size_t len)
{
	char cmd[8400];

	snprintf(cmd, sizeof(cmd),
		 "readelf -n '%s' | sed -n 's/.*Build ID: *//p'", path);
	if (capture(hex, len, cmd))
		hex[0] = '\0';
}

static int hex_decode(const char *hex, uint8_t *out, size_t max)
{
	size_t n = 0;

	while (hex[0] && hex[1] && n < max) {
		unsigned int v;

		if (sscanf(hex, "%2x", &v) != 1)
			return -1;
		out[n++] = (uint8_t)v;
		hex += 2;
	}
	return (int)n;
}

struct c_offsets {
	unsigned long leaf, outer_call, outer_entry, asm_fn, block;
};

static int run_c_fixture(const char *exe, struct c_offsets *o)
{
	char out[256], cmd[4300];
	int r;

	snprintf(cmd, sizeof(cmd), "'%s'", exe);
	if (capture(out, sizeof(out), cmd) ||
	    sscanf(out, "%lx %lx %lx %lx %lx %d", &o->leaf, &o->outer_call,
		   &o->outer_entry, &o->asm_fn, &o->block, &r) != 6) {
		printf("note: running %s failed\n", exe);
		return -1;
	}
	return 0;
}

static void frame_note(const char *what, const struct sym_frame *f, int n)
{
	int i;

	for (i = 0; i < n; i++)
		printf("  %s #%d: %s [%s] %s:%d (start %d)\n", what, i,
		       f[i].function, f[i].system_name,
		       f[i].file ? f[i].file : "-", f[i].line, f[i].start_line);
}

/* A function without DWARF, and the bytes past its ELF symbol's size. */
static void check_asm_fn(struct binary *b, const char *label,
			 const struct c_offsets *o)
{
	struct sym_frame f[MAX_FRAMES];
	int n;

	n = binary__resolve(b, o->asm_fn, f, MAX_FRAMES);
	test_condf(n == 1 && is(f[0].function, "asm_fn"),
		   "%s: assembly function resolves to its ELF symbol", label);
	test_condf(binary__resolve(b, o->asm_fn + 16, f, MAX_FRAMES) == 0,
		   "%s: past the end of a sized symbol: unknown", label);
}

/* A binary with DWARF: inline chain, lines, caching. */
static void check_with_dwarf(struct syms_cache *c, const char *label,
			     const char *exe, const char *src_path)
{
	struct sym_frame f[MAX_FRAMES], g[MAX_FRAMES];
	struct c_offsets o;
	struct binary *b;
	int n, m;

	if (run_c_fixture(exe, &o)) {
		test_condf(0, "%s: fixture runs", label);
		return;
	}
	b = syms_cache__get(c, MAPFILE_PATH(exe), NULL, 0);
	test_condf(b && !binary__error(b), "%s: opens", label);
	test_condf(binary__has_debuginfo(b), "%s: has DWARF line info", label);
	test_condf(is(binary__path(b), exe), "%s: path kept", label);

	n = binary__resolve(b, o.leaf, f, MAX_FRAMES);
	frame_note(label, f, n);
	test_condf(n == 2, "%s: inlined call gives 2 frames (got %d)", label, n);
	test_condf(n >= 1 && is(f[0].function, "leaf") &&
		   is(f[0].system_name, "leaf"),
		   "%s: innermost frame is the inlined function", label);
	test_condf(n >= 1 && is(f[0].file, src_path),
		   "%s: inlined frame file", label);
	test_condf(n >= 1 && f[0].line == marker_line(c_fixture, "MARK_LEAF"),
		   "%s: inlined frame line is the line inside leaf", label);
	test_condf(n >= 1 &&
		   f[0].start_line == marker_line(c_fixture, "DECL_LEAF"),
		   "%s: inlined frame start line is leaf's", label);
	test_condf(n >= 2 && is(f[1].function, "outer"),
		   "%s: caller frame is outer", label);
	test_condf(n >= 2 && is(f[1].file, src_path) &&
		   f[1].line == marker_line(c_fixture, "MARK_CALL"),
		   "%s: caller frame line is the call site", label);
	test_condf(n >= 2 &&
		   f[1].start_line == marker_line(c_fixture, "DECL_OUTER"),
		   "%s: caller frame start line is outer's", label);

	m = binary__resolve(b, o.leaf, g, MAX_FRAMES);
	test_condf(m == n && n >= 1 && g[0].function == f[0].function &&
		   g[0].file == f[0].file,
		   "%s: a repeated lookup gives the same frames", label);
	m = binary__resolve(b, o.leaf, g, 1);
	test_condf(m == 1 && g[0].function == f[0].function,
		   "%s: max=1 gives the innermost frame only", label);

	n = binary__resolve(b, o.outer_call, f, MAX_FRAMES);
	frame_note(label, f, n);
	test_condf(n == 1 && is(f[0].function, "outer") &&
		   f[0].line == marker_line(c_fixture, "MARK_OUTER"),
		   "%s: a plain call in outer: one frame at its line", label);
	n = binary__resolve(b, o.outer_entry, f, MAX_FRAMES);
	test_condf(n >= 1 && is(f[n - 1].function, "outer"),
		   "%s: outer's entry resolves to outer", label);
	n = binary__resolve(b, o.block, f, MAX_FRAMES);
	frame_note(label, f, n);
	test_condf(n == 2 && is(f[0].function, "leaf2") &&
		   f[0].line == marker_line(c_fixture, "MARK_LEAF2") &&
		   is(f[1].function, "blocky") &&
		   f[1].line == marker_line(c_fixture, "MARK_BLOCK_CALL"),
		   "%s: inlined call inside a lexical block", label);
	test_condf(binary__resolve(b, 1ULL << 40, f, MAX_FRAMES) == 0,
		   "%s: offset beyond the file: unknown", label);
	check_asm_fn(b, label, &o);
}

static void test_executables(struct syms_cache *c, const char *src)
{
	const char *pie = path_in("fix-pie"), *nopie = path_in("fix-nopie");

	if (sh("%s -O2 -g -fPIE -pie -o '%s' '%s'", cc, pie, src) == 0) {
		test_cond("PIE fixture is ET_DYN", elf_type(pie) == 3);
		check_with_dwarf(c, "pie", pie, src);
	} else {
		test_cond("build the PIE fixture", 0);
	}
	if (sh("%s -O2 -g -fno-pie -no-pie -o '%s' '%s'", cc, nopie, src) == 0) {
		test_cond("non-PIE fixture is ET_EXEC", elf_type(nopie) == 2);
		check_with_dwarf(c, "non-pie", nopie, src);
	} else {
		test_cond("build the non-PIE fixture", 0);
	}
}

/* The same code without DWARF: ELF symbols only. */
static void check_symbols_only(struct syms_cache *c, const char *label,
			       const char *exe)
{
	struct sym_frame f[MAX_FRAMES];
	struct c_offsets o;
	struct binary *b;
	int n;

	if (run_c_fixture(exe, &o)) {
		test_condf(0, "%s: fixture runs", label);
		return;
	}
	b = syms_cache__get(c, MAPFILE_PATH(exe), NULL, 0);
	test_condf(b && !binary__error(b), "%s: opens", label);
	test_condf(b && !binary__has_debuginfo(b), "%s: no DWARF", label);
	n = binary__resolve(b, o.leaf, f, MAX_FRAMES);
	frame_note(label, f, n);
	test_condf(n == 1 && is(f[0].function, "outer") &&
		   is(f[0].system_name, "outer"),
		   "%s: inlined code resolves to the ELF symbol", label);
	test_condf(n == 1 && !f[0].file && f[0].line == 0,
		   "%s: no file or line", label);
	n = binary__resolve(b, o.outer_entry, f, MAX_FRAMES);
	test_condf(n == 1 && is(f[0].function, "outer"),
		   "%s: entry resolves to the ELF symbol", label);
	check_asm_fn(b, label, &o);
}

static void test_stripped(struct syms_cache *c, const char *src)
{
	const char *pie = path_in("fix-pie"), *nodebug = path_in("fix-nodebug");
	const char *dyn = path_in("fix-rdynamic"), *dyn_s = path_in("fix-dynsym");
	const char *bare = path_in("fix-bare");
	struct sym_frame f[MAX_FRAMES];
	struct c_offsets o;
	struct binary *b;

	if (sh("strip --strip-debug -o '%s' '%s'", nodebug, pie) == 0)
		check_symbols_only(c, "strip --strip-debug", nodebug);
	else
		test_cond("strip --strip-debug", 0);

	if (sh("%s -O2 -g -rdynamic -o '%s' '%s' && strip -s -o '%s' '%s'",
	       cc, dyn, src, dyn_s, dyn) == 0) {
		test_cond("strip -s leaves no .symtab",
			  sh_quiet("readelf -S '%s' | grep -q '\\.symtab'",
				   dyn_s) != 0);
		check_symbols_only(c, "strip -s, dynsym only", dyn_s);
	} else {
		test_cond("build and strip -s the -rdynamic fixture", 0);
	}

	if (sh("strip -s -o '%s' '%s'", bare, pie) == 0 &&
	    !run_c_fixture(bare, &o)) {
		b = syms_cache__get(c, MAPFILE_PATH(bare), NULL, 0);
		test_cond("stripped, nothing exported: error says no symbols",
			  b && is(binary__error(b), "no symbols"));
		test_cond("stripped, nothing exported: resolves nothing",
			  b && binary__resolve(b, o.leaf, f, MAX_FRAMES) == 0);
	} else {
		test_cond("strip -s the PIE fixture", 0);
	}
}

/*
 * A stripped copy of pie in DIR (under the test's directory), owned by
 * uid, naming dbg (fix-linked.debug) by .gnu_debuglink; its debug file
 * there a symlink to target, or (NULL) a copy of dbg of uid's, 0600.
 * Whether the symbolizer took it: 1 yes, 0 no, -1 the fixture could not
 * be made or the binary not read.
 */
static int debuglink_found(struct syms_cache *c, const char *dir,
			   unsigned int uid, const char *pie, const char *dbg,
			   const char *target)
{
	char linked[4300];
	struct binary *b;

	snprintf(linked, sizeof(linked), "%s/linked", path_in(dir));
	if (sh("d='%s' && mkdir -p \"$d\" && strip -s -o \"$d/linked\" '%s' && "
	       "objcopy --add-gnu-debuglink='%s' \"$d/linked\" && "
	       "chown %u \"$d/linked\" && "
	       "if [ -n '%s' ]; then ln -s '%s' \"$d/fix-linked.debug\"; "
	       "else cp '%s' \"$d/fix-linked.debug\" && "
	       "chown %u \"$d/fix-linked.debug\" && chmod 600 \"$d/fix-linked.debug\"; fi",
	       path_in(dir), pie, dbg, uid, target ? target : "",
	       target ? target : "", dbg, uid))
		return -1;
	b = syms_cache__get(c, MAPFILE_PATH(linked), NULL, 0);
	return b ? binary__has_debuginfo(b) : -1;
}

/* .gnu_debuglink: symbols and DWARF come from the separate file. */
static void test_debuglink(struct syms_cache *c, const char *src)
{
	const char *pie = path_in("fix-pie"), *dbg = path_in("fix-linked.debug");
	const char *linked = path_in("fix-linked");

	if (sh("objcopy --only-keep-debug '%s' '%s' && "
	       "strip -s -o '%s' '%s' && "
	       "objcopy --add-gnu-debuglink='%s' '%s'",
	       pie, dbg, linked, pie, dbg, linked) == 0) {
		test_cond("debuglink copy has no DWARF of its own",
			  sh_quiet("readelf -S '%s' | grep -q debug_info",
				   linked) != 0);
		check_with_dwarf(c, "gnu_debuglink", linked, src);
	} else {
		test_cond("make a debuglink fixture", 0);
	}

	/*
	 * The debug file a binary names, in its owner's directory, made a
	 * FIFO: opening it for reading would wait for a writer for ever.
	 * It is refused; the binary's own symbols still name the leaf.
	 */
	if (sh("mkdir -p '%s' && strip -s -o '%s/linked' '%s' && "
	       "objcopy --add-gnu-debuglink='%s' '%s/linked' && "
	       "mkfifo '%s/fix-linked.debug'",
	       path_in("fifodir"), path_in("fifodir"), pie, dbg,
	       path_in("fifodir"), path_in("fifodir")) == 0) {
		struct binary *b;

		alarm(20);
		b = syms_cache__get(c, MAPFILE_PATH(path_in("fifodir/linked")), NULL, 0);
		alarm(0);
		test_cond("a debuglink that is a FIFO: refused, not waited on",
			  b && !binary__has_debuginfo(b));
	} else {
		test_cond("make a FIFO debuglink fixture", 0);
	}

	/*
	 * The debug file it names, as its owner set it up: a symlink to a
	 * file only root may read (a key, /etc/shadow; here the real debug
	 * file, 0600) is not opened for the user who chose the name, nor
	 * (the binary a user's, uid 4242) one to another user's file (uid
	 * 4343, readable by all, but it may sit in a home only they enter).
	 * The same file readable by all, and the owner's own, 0600, are.
	 */
	if (sh("cp '%s' '%s' && chmod 600 '%s' && cp '%s' '%s' && chmod 644 '%s' && "
	       "cp '%s' '%s' && chown 4343 '%s' && chmod 644 '%s'",
	       dbg, path_in("rootonly.debug"), path_in("rootonly.debug"),
	       dbg, path_in("open.debug"), path_in("open.debug"),
	       dbg, path_in("other.debug"), path_in("other.debug"),
	       path_in("other.debug")) == 0) {
		test_cond("a debuglink to a file only root may read: not opened",
			  debuglink_found(c, "linkdir", 0, pie, dbg,
					  path_in("rootonly.debug")) == 0);
		test_cond("... the same file readable by all: its debug info",
			  debuglink_found(c, "opendir", 0, pie, dbg,
					  path_in("open.debug")) == 1);
		test_cond("a debuglink to another user's file: not opened",
			  debuglink_found(c, "theirs", 4242, pie, dbg,
					  path_in("other.debug")) == 0);
		test_cond("... to the binary's owner's own, 0600: its debug info",
			  debuglink_found(c, "own", 4242, pie, dbg, NULL) == 1);
	} else {
		test_cond("make the debuglink owners' fixtures", 0);
	}
}

/*
 * A binary cut short after the symbolizer opened it (its owner truncates
 * it while a profile is symbolized): libdw reads it through mmap, and
 * the pages past the new end raise SIGBUS.  The lookup gives no frames;
 * the process lives on and the next binary resolves.  In a child: what
 * libdw had allocated for the binary is abandoned, not freed (freeing
 * half-built state could fault again), which LeakSanitizer would report.
 */
static void test_truncated(void)
{
	const char *pie = path_in("fix-pie"), *cut = path_in("fix-cut");
	struct sym_frame f[MAX_FRAMES];
	struct c_offsets o;
	int status = -1, got = 0;
	pid_t pid;

	if (sh("cp '%s' '%s'", pie, cut) || run_c_fixture(cut, &o)) {
		test_cond("truncated-binary fixture", 0);
		return;
	}
	pid = fork();
	if (pid == 0) {
		struct syms_cache *c = syms_cache__new();
		struct binary *b = c ? syms_cache__get(c, MAPFILE_PATH(cut), NULL, 0) : NULL;
		struct binary *other;

		if (!b || binary__error(b))
			_exit(1);
		if (truncate(cut, 4096))
			_exit(2);
		if (binary__resolve(b, o.leaf, f, MAX_FRAMES) != 0)
			_exit(3);
		other = syms_cache__get(c, MAPFILE_PATH(pie), NULL, 0);
		if (!other || binary__resolve(other, o.leaf, f, MAX_FRAMES) < 1 ||
		    !is(f[0].function, "leaf"))
			_exit(4);
		_exit(0);
	}
	if (pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status))
		got = WEXITSTATUS(status);
	else
		got = -1;
	test_condf(got == 0 || got > 1, "a binary to truncate opens (%d)", got);
	test_condf(got == 0 || got > 2, "... cut to one page while open (%d)", got);
	test_condf(got == 0 || got > 3,
		   "... a lookup in it gives no frames, the process lives (status %d)",
		   got);
	test_condf(got == 0, "... and the next binary resolves (%d)", got);
}

static void test_build_ids(struct syms_cache *c)
{
	const char *pie = path_in("fix-pie");
	char hex[256];
	uint8_t id[128];
	struct binary *plain, *same, *other, *again;
	int len;

	read_build_id(pie, hex, sizeof(hex));
	len = hex_decode(hex, id, sizeof(id));
	if (len <= 0) {
		printf("note: the toolchain wrote no build ID; relinking with one\n");
		pie = path_in("fix-pie-id");
		if (sh("%s -O2 -g -Wl,--build-id -o '%s' '%s'", cc, pie,
		       path_in("fixture.c"))) {
			test_cond("link with a build ID", 0);
			return;
		}
		read_build_id(pie, hex, sizeof(hex));
		len = hex_decode(hex, id, sizeof(id));
	}
	test_cond("fixture has a build ID", len > 0);
	if (len <= 0)
		return;
	plain = syms_cache__get(c, MAPFILE_PATH(pie), NULL, 0);
	test_cond("build ID read from the file", is(binary__build_id_hex(plain), hex));
	test_cond("no build ID given: no mismatch",
		  plain && !binary__build_id_mismatch(plain));
	same = syms_cache__get(c, MAPFILE_PATH(pie), id, (size_t)len);
	test_cond("matching build ID: no mismatch",
		  same && !binary__build_id_mismatch(same));
	id[0] ^= 0xff;
	other = syms_cache__get(c, MAPFILE_PATH(pie), id, (size_t)len);
	test_cond("different build ID: a binary of its own",
		  other && other != same && other != plain);
	test_cond("different build ID: mismatch",
		  other && binary__build_id_mismatch(other));
	again = syms_cache__get(c, MAPFILE_PATH(pie), id, (size_t)len);
	test_cond("same path + build ID: the cached binary", again == other);
	test_cond("same path, no build ID: the cached binary",
		  syms_cache__get(c, MAPFILE_PATH(pie), NULL, 0) == plain);
}

/* This process's file mapping of addr: its path and addr's file offset. */
static int map_offset(unsigned long addr, char path[4200], unsigned long *off)
{
	unsigned long lo, hi, pgoff;
	char line[4600];
	FILE *maps = fopen("/proc/self/maps", "r");
	int ret = -1;

	path[0] = '\0';
	while (maps && fgets(line, sizeof(line), maps)) {
		if (sscanf(line, "%lx-%lx %*s %lx %*s %*s %4199s", &lo, &hi,
			   &pgoff, path) == 4 && addr >= lo && addr < hi) {
			*off = addr - lo + pgoff;
			ret = 0;
			break;
		}
		path[0] = '\0';
	}
	if (maps)
		fclose(maps);
	return ret;
}

/*
 * The C library this test runs on, through its build-ID debug file under
 * /usr/lib/debug when the system has one (Debian's libc6-dbg).
 */
static void test_system_debuginfo(struct syms_cache *c)
{
	struct sym_frame f[MAX_FRAMES];
	char libc[4200], hex[256], dbg[4400];
	unsigned long off;
	struct binary *b;
	int n;

	if (map_offset((unsigned long)(void *)getpid, libc, &off)) {
		test_cond("find the C library's mapping", 0);
		return;
	}
	read_build_id(libc, hex, sizeof(hex));
	snprintf(dbg, sizeof(dbg), "/usr/lib/debug/.build-id/%.2s/%s.debug",
		 hex, hex + (hex[0] ? 2 : 0));
	if (!hex[0] || access(dbg, R_OK)) {
		printf("note: no build-ID debug file for %s: checks skipped\n",
		       libc);
		return;
	}
	b = syms_cache__get(c, MAPFILE_PATH(libc), NULL, 0);
	test_cond("libc: build ID read", is(binary__build_id_hex(b), hex));
	test_cond("libc: DWARF found through its build ID",
		  b && !binary__error(b) && binary__has_debuginfo(b));
	n = binary__resolve(b, off, f, MAX_FRAMES);
	frame_note("libc", f, n);
	test_cond("libc: getpid resolves with a source file",
		  n >= 1 && strstr(f[n - 1].function, "getpid") && f[0].file &&
		  f[0].line > 0);
}

/* A library loaded here with dlopen: sample taken from the live mapping. */
static void check_library(struct syms_cache *c, const char *label,
			  const char *so, const char *src_path)
{
	struct sym_frame f[MAX_FRAMES];
	unsigned long ret, off = 0;
	int (*entry)(int);
	char mapped[4200];
	void *h, **ret_slot;
	struct binary *b;
	int n;

	h = dlopen(so, RTLD_NOW | RTLD_LOCAL);
	entry = h ? (int (*)(int))dlsym(h, "lib_entry") : NULL;
	ret_slot = h ? dlsym(h, "lib_ret") : NULL;
	if (!entry || !ret_slot) {
		test_condf(0, "%s: dlopen (%s)", label, dlerror());
		if (h)
			dlclose(h);
		return;
	}
	entry(1);
	ret = (unsigned long)*ret_slot - 1;
	test_condf(!map_offset(ret, mapped, &off) && is(mapped, so),
		   "%s: sample lies in the library's mapping", label);

	b = syms_cache__get(c, MAPFILE_PATH(so), NULL, 0);
	test_condf(b && !binary__error(b) && binary__has_debuginfo(b),
		   "%s: opens with DWARF", label);
	n = binary__resolve(b, off, f, MAX_FRAMES);
	frame_note(label, f, n);
	test_condf(n == 2 && is(f[0].function, "lib_leaf") &&
		   is(f[0].file, src_path) &&
		   f[0].line == marker_line(lib_fixture, "MARK_LIB_LEAF"),
		   "%s: inlined frame through the file offset", label);
	test_condf(n == 2 && is(f[1].function, "lib_entry") &&
		   f[1].line == marker_line(lib_fixture, "MARK_LIB_CALL"),
		   "%s: caller frame at the call site", label);
	dlclose(h);
}

static void test_libraries(struct syms_cache *c)
{
	const char *src = write_file("libfix.c", lib_fixture);
	const char *so = path_in("libfix.so"), *based = path_in("libfix-based.so");
	char hdr[256], cmd[4400];

	if (sh("%s -O2 -g -shared -fPIC -o '%s' '%s'", cc, so, src) == 0)
		check_library(c, "shared library", so, src);
	else
		test_cond("build the shared library fixture", 0);

	/* a library linked at a non-zero base: vaddr != file offset */
	if (sh("%s -O2 -g -shared -fPIC -Wl,-Ttext-segment=0x200000 -o '%s' '%s'",
	       cc, based, src) == 0) {
		snprintf(cmd, sizeof(cmd),
			 "readelf -lW '%s' | awk '$1 == \"LOAD\" { print $2, $3; exit }'",
			 based);
		test_cond("based library: first PT_LOAD vaddr differs from its offset",
			  !capture(hdr, sizeof(hdr), cmd) &&
			  strtoul(hdr, NULL, 16) !=
			  strtoul(strchr(hdr, ' ') ? strchr(hdr, ' ') : hdr,
				  NULL, 16));
		check_library(c, "based library", based, src);
	} else {
		printf("note: the linker cannot set a text segment base\n");
	}
}

static void test_cxx(struct syms_cache *c)
{
	const char *src = write_file("fixture.cc", cxx_fixture);
	const char *exe = path_in("fix-cxx"), *nodebug = path_in("fix-cxx-nodebug");
	struct sym_frame f[MAX_FRAMES];
	char out[256], cmd[4300];
	unsigned long off, off_twice;
	struct binary *b;
	int n, r;

	if (sh_quiet("command -v g++ >/dev/null 2>&1")) {
		printf("note: no g++: C++ checks skipped\n");
		return;
	}
	snprintf(cmd, sizeof(cmd), "'%s'", exe);
	if (sh("g++ -O2 -g -o '%s' '%s'", exe, src) ||
	    capture(out, sizeof(out), cmd) ||
	    sscanf(out, "%lx %lx %d", &off, &off_twice, &r) != 3) {
		test_cond("build and run the C++ fixture", 0);
		return;
	}
	b = syms_cache__get(c, MAPFILE_PATH(exe), NULL, 0);
	n = binary__resolve(b, off, f, MAX_FRAMES);
	frame_note("c++", f, n);
	test_cond("c++: method demangled with its parameters",
		  n == 1 && is(f[0].function, "ns::Widget::spin(int)"));
	test_cond("c++: system name is the mangled name",
		  n == 1 && is(f[0].system_name, "_ZN2ns6Widget4spinEi"));
	test_cond("c++: line of the call",
		  n == 1 && is(f[0].file, src) &&
		  f[0].line == marker_line(cxx_fixture, "MARK_SPIN"));
	n = binary__resolve(b, off_twice, f, MAX_FRAMES);
	frame_note("c++ inlined", f, n);
	test_cond("c++: inlined method is its own frame, demangled",
		  n == 2 && is(f[0].function, "ns::Widget::twice(int)") &&
		  is(f[0].system_name, "_ZN2ns6Widget5twiceEi"));
	test_cond("c++: inlined method line and start line",
		  n == 2 && f[0].line == marker_line(cxx_fixture, "MARK_TWICE") &&
		  f[0].start_line == marker_line(cxx_fixture, "DECL_TWICE"));
	test_cond("c++: caller of the inlined method at the call site",
		  n == 2 && is(f[1].function, "ns::Widget::spin(int)") &&
		  f[1].line == marker_line(cxx_fixture, "MARK_CALL_TWICE"));

	if (sh("strip --strip-debug -o '%s' '%s'", nodebug, exe)) {
		test_cond("strip the C++ fixture", 0);
		return;
	}
	b = syms_cache__get(c, MAPFILE_PATH(nodebug), NULL, 0);
	n = binary__resolve(b, off, f, MAX_FRAMES);
	test_cond("c++ without DWARF: ELF symbol demangled",
		  n == 1 && is(f[0].function, "ns::Widget::spin(int)") &&
		  is(f[0].system_name, "_ZN2ns6Widget4spinEi") && !f[0].file);
}

static void test_nested(struct syms_cache *c)
{
	const char *src = write_file("nested.c", nested_fixture);
	const char *exe = path_in("fix-nested");
	struct sym_frame f[MAX_FRAMES];
	char out[256], cmd[4300];
	unsigned long off;
	struct binary *b;
	int n, r;

	if (sh_quiet("%s -O2 -g -o '%s' '%s' 2>/dev/null", cc, exe, src)) {
		printf("note: %s has no nested functions: checks skipped\n", cc);
		return;
	}
	snprintf(cmd, sizeof(cmd), "'%s'", exe);
	if (capture(out, sizeof(out), cmd) ||
	    sscanf(out, "%lx %d", &off, &r) != 2) {
		test_cond("run the nested-function fixture", 0);
		return;
	}
	b = syms_cache__get(c, MAPFILE_PATH(exe), NULL, 0);
	n = binary__resolve(b, off, f, MAX_FRAMES);
	frame_note("nested", f, n);
	test_cond("nested function: its own frame, named from DWARF",
		  n == 1 && is(f[0].function, "nested"));
	test_cond("nested function: line and start line",
		  n == 1 && is(f[0].file, src) &&
		  f[0].line == marker_line(nested_fixture, "MARK_NESTED") &&
		  f[0].start_line == marker_line(nested_fixture, "DECL_NESTED"));
}

/*
 * The assembler's DWARF has a subprogram per alias: the name comes from the
 * ELF symbols (the exported one), the line from DWARF.
 */
static void test_assembly(struct syms_cache *c)
{
	const char *src = write_file("asmfix.S", asm_fixture);
	const char *so = path_in("libasmfix.so");
	struct sym_frame f[MAX_FRAMES];
	char mapped[4200];
	unsigned long off = 0;
	struct binary *b;
	void *h, *fn;
	int n;

#if !defined(__x86_64__) && !defined(__i386__) && !defined(__aarch64__)
	printf("note: the assembly fixture is for x86 or arm64: checks skipped\n");
	return;
#endif
	if (sh("%s -g -shared -fPIC -o '%s' '%s'", cc, so, src)) {
		test_cond("build the assembly fixture", 0);
		return;
	}
	h = dlopen(so, RTLD_NOW | RTLD_LOCAL);
	fn = h ? dlsym(h, "asm_pub") : NULL;
	test_cond("assembly: sample lies in the library's mapping",
		  fn && !map_offset((unsigned long)fn, mapped, &off) &&
		  is(mapped, so));
	b = syms_cache__get(c, MAPFILE_PATH(so), NULL, 0);
	test_cond("assembly: has DWARF line info", binary__has_debuginfo(b));
	n = fn ? binary__resolve(b, off, f, MAX_FRAMES) : 0;
	frame_note("asm", f, n);
	test_cond("assembly: the exported name, not the last alias",
		  n == 1 && is(f[0].function, "asm_pub"));
	test_cond("assembly: file and line from DWARF",
		  n == 1 && is(f[0].file, src) &&
		  f[0].line == marker_line(asm_fixture, "MARK_ASM"));
	if (h)
		dlclose(h);
}

static void test_failures(struct syms_cache *c)
{
	struct sym_frame f[MAX_FRAMES];
	const char *missing = path_in("no-such-binary");
	const char *text = write_file("not-elf", "just text\n");
	char deleted[4300];
	struct binary *b, *b2;

	b = syms_cache__get(c, MAPFILE_PATH(missing), NULL, 0);
	test_cond("missing file: a binary anyway", b != NULL);
	test_cond("missing file: error says not found",
		  is(binary__error(b), "not found"));
	test_cond("missing file: resolves nothing",
		  binary__resolve(b, 0x1000, f, MAX_FRAMES) == 0);
	test_cond("missing file: no build ID", is(binary__build_id_hex(b), ""));
	b2 = syms_cache__get(c, MAPFILE_PATH(missing), NULL, 0);
	test_cond("missing file: failure cached", b2 == b);

	/* the kernel's name for an unlinked file; one is there again */
	snprintf(deleted, sizeof(deleted), "%s (deleted)", path_in("fix-pie"));
	b = syms_cache__get(c, MAPFILE_PATH(deleted), NULL, 0);
	test_cond("\" (deleted)\": the file under its old name is opened",
		  b && !binary__error(b) && is(binary__path(b), deleted));
	snprintf(deleted, sizeof(deleted), "%s (deleted)", missing);
	b = syms_cache__get(c, MAPFILE_PATH(deleted), NULL, 0);
	test_cond("\" (deleted)\" and gone: not found",
		  is(binary__error(b), "not found"));

	b = syms_cache__get(c, MAPFILE_PATH("[vdso]"), NULL, 0);
	test_cond("[vdso]: not a file", is(binary__error(b), "not a file"));
	b = syms_cache__get(c, MAPFILE_PATH("[anon]"), NULL, 0);
	test_cond("[anon]: not a file", is(binary__error(b), "not a file"));
	test_cond("[anon]: resolves nothing",
		  binary__resolve(b, 0, f, MAX_FRAMES) == 0);

	b = syms_cache__get(c, MAPFILE_PATH(text), NULL, 0);
	test_cond("not an ELF file: an error", b && binary__error(b));
	test_cond("not an ELF file: resolves nothing",
		  binary__resolve(b, 0, f, MAX_FRAMES) == 0);
	b = syms_cache__get(c, MAPFILE_PATH(tmpdir), NULL, 0);
	test_cond("a directory: an error", b && binary__error(b));

	syms_cache__free(NULL);
}

/*
 * Many binaries at once: each holds files open, so with a low soft limit on
 * open files the cache must lift it.  Runs in a child: it changes limits.
 */
static void test_many_binaries(void)
{
	const char *pie = path_in("fix-pie");
	struct rlimit rl;
	pid_t pid;
	int st = 0;

	if (getrlimit(RLIMIT_NOFILE, &rl) || rl.rlim_max < 256) {
		printf("note: hard limit on open files too low to test lifting it\n");
		return;
	}
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		struct syms_cache *c;
		int i, failed = 0;

		rl.rlim_cur = 32;
		if (setrlimit(RLIMIT_NOFILE, &rl))
			_exit(100);
		c = syms_cache__new();
		/* a distinct build ID makes a distinct binary: 64 opens */
		for (i = 0; c && i < 64; i++) {
			uint8_t id[20] = { (uint8_t)i, 0xcf };
			struct binary *b = syms_cache__get(c, MAPFILE_PATH(pie), id, sizeof(id));

			failed += !b || binary__error(b) != NULL;
		}
		syms_cache__free(c);
		_exit(c ? (failed > 99 ? 99 : failed) : 101);
	}
	test_cond("fork", pid > 0);
	if (pid > 0 && waitpid(pid, &st, 0) == pid)
		test_condf(WIFEXITED(st) && WEXITSTATUS(st) == 0,
			   "64 binaries open from a soft limit of 32 files (%d failed)",
			   WIFEXITED(st) ? WEXITSTATUS(st) : -1);
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
	struct syms_cache *c;
	const char *src;
	int ret;

	if (own_tmpdir) {
		snprintf(tmpdir, sizeof(tmpdir), "/tmp/test_elfsyms.XXXXXX");
		if (!mkdtemp(tmpdir)) {
			perror("mkdtemp");
			return 1;
		}
	} else if (!realpath(t, tmpdir)) {
		perror(t);
		return 1;
	}
	cc = getenv("CC");
	if (!cc || !*cc)
		cc = "cc";
	if (sh_quiet("command -v %s >/dev/null 2>&1 && command -v strip >/dev/null "
	       "&& command -v objcopy >/dev/null && command -v readelf >/dev/null",
	       cc))
		test_skip("needs a C compiler and binutils");

	c = syms_cache__new();
	test_cond("new cache", c != NULL);
	if (!c)
		return test_report();
	src = write_file("fixture.c", c_fixture);
	test_executables(c, src);
	test_stripped(c, src);
	test_debuglink(c, src);
	test_truncated();
	test_build_ids(c);
	test_libraries(c);
	test_cxx(c);
	test_nested(c);
	test_system_debuginfo(c);
	test_assembly(c);
	test_failures(c);
	syms_cache__free(c);
	test_many_binaries();

	ret = test_report();
	if (own_tmpdir)
		nftw(tmpdir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	return ret;
}
