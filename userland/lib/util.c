// SPDX-License-Identifier: GPL-2.0 OR MIT
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lib/util.h"

/* esc_n()'s strings: 8 per thread, of 4 KiB */
#define ESC_SLOTS	8
#define ESC_SIZE	4096

/*
 * The code point of the well-formed UTF-8 sequence of 2 to 4 bytes at s,
 * its length into *len; -1 if there is none (an overlong form, a
 * surrogate, past U+10FFFF, cut short).
 */
static long utf8_at(const unsigned char *s, size_t *len)
{
	size_t n, i;
	long cp, min;

	if (s[0] >= 0xc2 && s[0] <= 0xdf) {
		n = 2, cp = s[0] & 0x1f, min = 0x80;
	} else if (s[0] >= 0xe0 && s[0] <= 0xef) {
		n = 3, cp = s[0] & 0x0f, min = 0x800;
	} else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		n = 4, cp = s[0] & 0x07, min = 0x10000;
	} else {
		return -1;
	}
	for (i = 1; i < n; i++) {
		/* a NUL ends it as any other non-continuation byte does */
		if ((s[i] & 0xc0) != 0x80)
			return -1;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return -1;
	*len = n;
	return cp;
}

/*
 * Characters past ASCII that move or reorder text: C1 controls (a
 * terminal's CSI among them), the line and paragraph separators, bidi
 * marks, embeddings, overrides and isolates.
 */
static bool moves_text(long cp)
{
	return cp < 0xa0 || cp == 0x200e || cp == 0x200f ||
	       (cp >= 0x2028 && cp <= 0x202e) ||
	       (cp >= 0x2066 && cp <= 0x2069);
}

const char *esc_char(const char **s, char out[ESC_CHAR_MAX])
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *p = (const unsigned char *)*s;
	size_t n = 1, i;
	char *o = out;
	long cp;

	if (*p >= 0x20 && *p < 0x7f) {
		if (*p == '\\')
			*o++ = '\\';
		*o++ = (char)*p;
	} else if (*p >= 0x80 && (cp = utf8_at(p, &n)) >= 0 && !moves_text(cp)) {
		memcpy(o, p, n);
		o += n;
	} else {
		for (i = 0; i < n; i++) {
			*o++ = '\\';
			*o++ = 'x';
			*o++ = hex[p[i] >> 4];
			*o++ = hex[p[i] & 15];
		}
	}
	*o = '\0';
	*s += n;
	return out;
}

void esc_put(FILE *f, const char *s)
{
	char one[ESC_CHAR_MAX];
	size_t n;

	while (*s) {
		/* a run shown as it is, at once */
		for (n = 0; s[n] >= 0x20 && s[n] < 0x7f && s[n] != '\\'; n++)
			;
		fwrite(s, 1, n, f);
		s += n;
		if (*s)
			fputs(esc_char(&s, one), f);
	}
}

const char *esc_n(const char *s, size_t max)
{
	static __thread char ring[ESC_SLOTS][ESC_SIZE];
	static __thread unsigned int next;
	char *out = ring[next++ % ESC_SLOTS], one[ESC_CHAR_MAX];
	size_t len = 0, n;

	/* room for "..." and the NUL */
	if (max > ESC_SIZE - 4)
		max = ESC_SIZE - 4;
	for (s = s ? s : ""; *s; len += n) {
		esc_char(&s, one);
		n = strlen(one);
		if (len + n > max) {
			memcpy(out + len, "...", 4);
			return out;
		}
		memcpy(out + len, one, n);
	}
	out[len] = '\0';
	return out;
}

const char *esc(const char *s)
{
	return esc_n(s, ESC_SIZE);
}

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
		return fail("invalid %s: '%s' (must be %ld..%ld)", what, esc(s), min,
			    max);
	case PARSE_NOT_NUMBER:
		return fail("invalid %s: '%s' (not a number)", what, esc(s));
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
