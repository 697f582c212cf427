/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * userfix.h - a user program built and run at test time, which reports the
 * addresses a profiler would have sampled in it and the mappings covering
 * them (from its own /proc/self/maps).  It has exited by the time the
 * stream is converted, as a short-lived process would have.
 *
 * Stack, innermost first: ips[0] inside leaf_fn (an instruction), ips[1] a
 * return address in mid_fn right after a call made from the inlined inl_fn,
 * ips[2] a return address in main.
 */
#ifndef CPROF_USERFIX_H
#define CPROF_USERFIX_H

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

static const char userfix_src[] =
"#include <stdint.h>\n"
"#include <stdio.h>\n"
"#include <string.h>\n"
"static void *ra[3];\n"
"__attribute__((noinline)) void probe(int i)\n"
"{\n"
"	ra[i] = __builtin_return_address(0);\n"
"	__asm__ volatile(\"\" ::: \"memory\");\n"
"}\n"
"__attribute__((noinline)) int leaf_fn(int x)\n"
"{\n"
"	probe(0); /* L_LEAF */\n"
"	return x + 1;\n"
"}\n"
"static inline __attribute__((always_inline)) int inl_fn(int x)\n"
"{\n"
"	probe(1); /* L_INL */\n"
"	return leaf_fn(x) * 2;\n"
"}\n"
"__attribute__((noinline)) int mid_fn(int x)\n"
"{\n"
"	return inl_fn(x) + 1; /* L_MID */\n"
"}\n"
"static void report(int i)\n"
"{\n"
"	unsigned long s, e, off, ip = (unsigned long)ra[i];\n"
"	char line[4096], path[4096], perm[8];\n"
"	FILE *f = fopen(\"/proc/self/maps\", \"r\");\n"
"	while (f && fgets(line, sizeof(line), f)) {\n"
"		path[0] = 0;\n"
"		if (sscanf(line, \"%lx-%lx %7s %lx %*s %*s %4095s\", &s, &e, perm, &off, path) < 4)\n"
"			continue;\n"
"		if (ip >= s && ip < e)\n"
"			printf(\"%lx %lx %lx %lx %s\\n\", ip, s, e, off, path);\n"
"	}\n"
"	if (f) fclose(f);\n"
"}\n"
"int main(void)\n"
"{\n"
"	int r = mid_fn(3);\n"
"	probe(2); /* L_MAIN */\n"
"	report(0); report(1); report(2);\n"
"	return r == 9 ? 0 : 1;\n"
"}\n";

struct userfix {
	char exe[4096];
	char path[4096];	/* as the maps file names it */
	uint64_t ips[3];
	uint64_t start[3], end[3], pgoff[3];	/* mapping of each ip */
	int line_leaf, line_inl, line_mid, line_main;
};

static inline int userfix_line(const char *marker)
{
	const char *p = strstr(userfix_src, marker), *q;
	int line = 1;

	for (q = userfix_src; p && q < p; q++)
		line += *q == '\n';
	return p ? line : -1;
}

/* Build (with $CC, -g -O2) and run the fixture.  0 ok. */
static inline int userfix_build(struct userfix *f)
{
	const char *cc = getenv("CC") ? getenv("CC") : "cc";
	const char *src = tmp_path("fixture.c");
	char *out, *p;
	FILE *s;
	int i;

	memset(f, 0, sizeof(*f));
	snprintf(f->exe, sizeof(f->exe), "%s", tmp_path("fixture"));
	s = fopen(src, "w");
	if (!s || fputs(userfix_src, s) < 0 || fclose(s))
		return -1;
	if (run("%s -g -O2 -o '%s' '%s' && '%s'", cc, f->exe, src, f->exe))
		return -1;
	out = slurp(tmp_path("out.txt"), NULL);
	p = out;
	for (i = 0; p && i < 3; i++) {
		unsigned long long ip, st, en, off;
		char path[4096];
		int n = 0;

		if (sscanf(p, "%llx %llx %llx %llx %4095s%n", &ip, &st, &en, &off,
			   path, &n) < 5)
			break;
		f->ips[i] = ip;
		f->start[i] = st;
		f->end[i] = en;
		f->pgoff[i] = off;
		if (!i)
			snprintf(f->path, sizeof(f->path), "%s", path);
		p = strchr(p + n, '\n');
		p = p ? p + 1 : NULL;
	}
	free(out);
	f->line_leaf = userfix_line("L_LEAF");
	f->line_inl = userfix_line("L_INL");
	f->line_mid = userfix_line("L_MID");
	f->line_main = userfix_line("L_MAIN");
	return i == 3 ? 0 : -1;
}

#endif /* CPROF_USERFIX_H */
