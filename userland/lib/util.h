/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * util - messages, how they show a user's strings, and number parsing
 * shared by cprof-dump's units.
 */
#ifndef CPROF_UTIL_H
#define CPROF_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define PROG_NAME	"cprof-dump"

/* A numeric define as a string literal, for messages: STRINGIFY(N_MAX). */
#define STRINGIFY(x)	STRINGIFY_(x)
#define STRINGIFY_(x)	#x

/*
 * How cprof-dump shows a string any user may have chosen (a file name, a
 * comm, a symbol, a Python name, a cgroup path, an HTTP value) in what it
 * prints: printable ASCII and UTF-8 as they are, a backslash as \\, every
 * other byte as \xHH (control characters, C1 controls and line or bidi
 * formatting characters even when well-formed UTF-8, and malformed UTF-8),
 * so that the string makes no line, no terminal sequence and no reordered
 * text of its own.  Messages pass each such %s through esc() or esc_n();
 * outputs through esc_put() or esc_char().
 */
/* The most bytes esc_char() shows one character as, its NUL included. */
#define ESC_CHAR_MAX	13
/* The character at *s as shown, into out; *s moves past it. */
const char *esc_char(const char **s, char out[ESC_CHAR_MAX]);
/* s as shown, into f, whole. */
void esc_put(FILE *f, const char *s);
/*
 * s (NULL: "") as shown, for a message: its first max bytes shown and
 * "..." if there are more; at most 4 KiB.  The string is one of 8 of the
 * calling thread's: valid until its eighth next esc() or esc_n().
 */
const char *esc_n(const char *s, size_t max);
/* esc_n(s, 4 KiB): a name whole, as a message shows it. */
const char *esc(const char *s);

/* "cprof-dump: <msg>" on stderr; returns -1 so callers write return fail(). */
int fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* "cprof-dump: warning: <msg>" on stderr. */
void warning(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * Parse s as a base-10 integer in [min, max] into *out.  On error prints
 * "invalid <what>: '<s>' (<why>)" and returns -1.
 */
int parse_long(const char *what, const char *s, long min, long max, long *out);

enum parse_result { PARSE_OK, PARSE_NOT_NUMBER, PARSE_RANGE };
/* The same without a message: which problem s has, if any. */
enum parse_result parse_long_quiet(const char *s, long min, long max,
				   long *out);

/* CLOCK_MONOTONIC in seconds. */
double monotonic_seconds(void);

/*
 * Was a profile that started at start_realtime_ns on the wall clock and
 * start_time_ns on the sample clock (CLOCK_MONOTONIC) taken in this boot
 * of this machine?  Its boot time (the one less the other) is this
 * boot's, within what clock adjustments since may have moved it (10 s).
 */
bool same_boot(uint64_t start_realtime_ns, uint64_t start_time_ns);

/*
 * Grow the array whose pointer is at vec (elements of elem bytes, capacity
 * *cap) to hold at least need elements, doubling.  0 ok, -1 out of memory
 * (the array is left as it was).
 */
int grow_array(void *vec, size_t *cap, size_t need, size_t elem);

/*
 * $XDG_CACHE_HOME/name, else $HOME/.cache/name, into buf; NULL if neither
 * is set.
 */
const char *user_cache_path(char *buf, size_t size, const char *name);

/* Lower-case hex of n bytes into out (2n+1 bytes). */
void hex_encode(char *out, const uint8_t *bytes, size_t n);

#endif /* CPROF_UTIL_H */
