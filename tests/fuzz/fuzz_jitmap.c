// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * libFuzzer target: jitmap (jitmap.c), which reads the perf map a profiled
 * runtime writes (/tmp/perf-PID.map): any user's bytes, read by root.
 * Nothing may crash, hang, or read out of bounds (built with ASan and
 * UBSan).
 *
 * An input is the map's content.  Its first half is written as
 * DIR/perf-1.map (a directory of this process's, the file its user's) and
 * read through jitmaps__get(), then the rest appended and read again (a
 * map the runtime writes while it is read: a line may be cut between the
 * two), then the file rewritten with its second half alone (shorter or
 * not: read again from its start) and read a third time; looked up at
 * every address its lines start at, one before and one past, and at 64
 * addresses made from its first bytes, each for a sample before the first
 * read, between the first two, between the last two and after all.
 *
 * Checked, a wrong one aborting with a line "fuzz_jitmap: ...": a name
 * found is not empty and at most JITMAP_NAME_MAX bytes.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "symbolize/jitmap.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char dir[] = "/tmp/fuzz_jitmap.XXXXXX";

static void bad(const char *what)
{
	fprintf(stderr, "fuzz_jitmap: %s\n", what);
	abort();
}

static uint64_t between, between2;	/* sample clock times between reads */

static void check_at(const struct jitmap *j, uint64_t addr, uint64_t t)
{
	const char *n = jitmap__lookup(j, addr, t, NULL);
	size_t len;

	if (!n)
		return;
	len = strlen(n);
	if (!len || len > JITMAP_NAME_MAX)
		bad("a name that is empty or past JITMAP_NAME_MAX");
}

static void check(const struct jitmap *j, uint64_t addr)
{
	check_at(j, addr, 0);
	check_at(j, addr, between);
	check_at(j, addr, between2);
	check_at(j, addr, UINT64_MAX);
}

/* Write @n bytes of @buf to @path opened with @mode ("w" or "a"). */
static void put(const char *path, const char *mode, const uint8_t *buf,
		size_t n, const char *what)
{
	FILE *f = fopen(path, mode);

	if (!f || fwrite(buf, 1, n, f) != n || fclose(f))
		bad(what);
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static bool made;
	const struct jitmap *j;
	struct jitmaps *c;
	const char *why;
	char path[64], *text, *line, *save;
	uint64_t v;
	size_t i;

	if (!made) {
		if (!mkdtemp(dir))
			bad("no directory");
		made = true;
	}
	snprintf(path, sizeof(path), "%s/perf-1.map", dir);
	put(path, "w", data, size / 2, "cannot write the map");
	c = jitmaps__new(dir);
	if (!c)
		return 0;
	j = jitmaps__get(c, 1, (uint32_t)getuid(), true, &why);
	between = mono_ns();
	put(path, "a", data + size / 2, size - size / 2,
	    "cannot append to the map");
	j = jitmaps__get(c, 1, (uint32_t)getuid(), true, &why);
	between2 = mono_ns();
	put(path, "w", data + size / 2, size - size / 2,
	    "cannot rewrite the map");
	j = jitmaps__get(c, 1, (uint32_t)getuid(), true, &why);
	if (!j) {
		jitmaps__free(c);
		return 0;
	}
	/* the addresses the lines name, as sscanf() reads them */
	text = malloc(size + 1);
	if (text) {
		memcpy(text, data, size);
		text[size] = '\0';
		for (line = strtok_r(text, "\n", &save); line;
		     line = strtok_r(NULL, "\n", &save)) {
			if (sscanf(line, "%" SCNx64, &v) != 1)
				continue;
			check(j, v);
			check(j, v - 1);
			check(j, v + 1);
		}
		free(text);
	}
	for (i = 0; i + 8 <= size && i < 64 * 8; i += 8) {
		memcpy(&v, data + i, 8);
		check(j, v);
	}
	jitmaps__free(c);
	return 0;
}
