// SPDX-License-Identifier: GPL-2.0 OR MIT
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "util.h"

int fail(const char *fmt, ...)
{
	va_list ap;

	fputs(PROG_NAME ": ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return -1;
}

void warning(const char *fmt, ...)
{
	va_list ap;

	fputs(PROG_NAME ": warning: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

enum parse_result parse_long_quiet(const char *s, long min, long max,
				   long *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno == ERANGE || (errno == 0 && *s && !*end && (v < min || v > max)))
		return PARSE_RANGE;
	if (errno || !*s || *end)
		return PARSE_NOT_NUMBER;
	*out = v;
	return PARSE_OK;
}

int parse_long(const char *what, const char *s, long min, long max, long *out)
{
	switch (parse_long_quiet(s, min, max, out)) {
	case PARSE_RANGE:
		return fail("invalid %s: '%s' (must be %ld..%ld)", what, s, min,
			    max);
	case PARSE_NOT_NUMBER:
		return fail("invalid %s: '%s' (not a number)", what, s);
	default:
		return 0;
	}
}

double monotonic_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

const char *user_cache_path(char *buf, size_t size, const char *name)
{
	const char *base = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");

	if (base && *base)
		snprintf(buf, size, "%s/%s", base, name);
	else if (home && *home)
		snprintf(buf, size, "%s/.cache/%s", home, name);
	else
		return NULL;
	return buf;
}

void hex_encode(char *out, const uint8_t *bytes, size_t n)
{
	static const char digits[] = "0123456789abcdef";
	size_t i;

	for (i = 0; i < n; i++) {
		out[2 * i] = digits[bytes[i] >> 4];
		out[2 * i + 1] = digits[bytes[i] & 15];
	}
	out[2 * n] = '\0';
}

int grow_array(void *vec, size_t *cap, size_t need, size_t elem)
{
	void **v = vec;
	size_t want;
	void *p;

	if (need <= *cap)
		return 0;
	want = *cap ? *cap * 2 : 16;
	while (want < need)
		want *= 2;
	p = reallocarray(*v, want, elem);
	if (!p)
		return -1;
	*v = p;
	*cap = want;
	return 0;
}

bool same_boot(uint64_t start_realtime_ns, uint64_t start_time_ns)
{
	struct timespec rt, mono;
	int64_t boot, then;

	if (clock_gettime(CLOCK_REALTIME, &rt) ||
	    clock_gettime(CLOCK_MONOTONIC, &mono))
		return false;
	boot = (rt.tv_sec - mono.tv_sec) * 1000000000LL +
	       (rt.tv_nsec - mono.tv_nsec);
	then = (int64_t)(start_realtime_ns - start_time_ns);
	/* a header's times are anything: no overflow */
	if (__builtin_sub_overflow(boot, then, &boot))
		return false;
	return boot > -10 * 1000000000LL && boot < 10 * 1000000000LL;
}
