// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * pycode - CPython code objects of a running process.  See pycode.h.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "python/pycode.h"

/* PyASCIIObject: length (code points) and state */
#define STR_LENGTH	16
#define STR_STATE	32
#define STATE_KIND(s)	(((s) >> 2) & 7)
#define STATE_COMPACT	(1u << 5)
#define STATE_ASCII	(1u << 6)
/* PyBytesObject: ob_size, then the bytes */
#define BYTES_SIZE	16
#define BYTES_DATA	32
#define OB_TYPE		8

/*
 * The process read, and what of it may be read (NULL: all); or, with
 * bytes set, one object's leading bytes as a record holds them, at
 * address 0 (len of them).
 */
struct mem {
	pid_t pid;
	bool (*ok)(void *arg, uint64_t addr, size_t size);
	void *arg;
	const uint8_t *bytes;
	size_t len;
};

static int peek(const struct mem *m, uint64_t addr, void *buf, size_t size)
{
	struct iovec local = { buf, size };
	struct iovec remote = { (void *)(uintptr_t)addr, size };
	ssize_t n;

	if (!size)
		return 0;
	if (m->bytes) {
		if (addr > m->len || size > m->len - addr) {
			errno = EFAULT;
			return -1;
		}
		memcpy(buf, m->bytes + addr, size);
		return 0;
	}
	if (addr + size < addr || (m->ok && !m->ok(m->arg, addr, size))) {
		errno = EACCES;
		return -1;
	}
	n = process_vm_readv(m->pid, &local, 1, &remote, 1, 0);

	if (n == (ssize_t)size)
		return 0;
	if (n >= 0)
		errno = EFAULT;
	return -1;
}

static int peek_u64(const struct mem *m, uint64_t addr, uint64_t *v)
{
	return peek(m, addr, v, sizeof(*v));
}

/* One code point as UTF-8 at out; its length. */
static size_t utf8_put(char *out, uint32_t cp)
{
	if (cp < 0x80) {
		out[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		out[0] = (char)(0xc0 | cp >> 6);
		out[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		out[0] = (char)(0xe0 | cp >> 12);
		out[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		out[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	out[0] = (char)(0xf0 | cp >> 18);
	out[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
	out[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
	out[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

/* The str object at addr as UTF-8 (malloc'd), or NULL with errno. */
static char *read_str(const struct mem *m, const struct pyrt *rt,
		      uint64_t addr)
{
	uint64_t length;
	uint32_t state, kind;
	unsigned char *raw;
	char *out;
	size_t i, n = 0;

	if (peek_u64(m, addr + STR_LENGTH, &length) ||
	    peek(m, addr + STR_STATE, &state, sizeof(state)))
		return NULL;
	kind = STATE_KIND(state);
	if (!(state & STATE_COMPACT) || length > PYCODE_STR_MAX ||
	    (kind != 1 && kind != 2 && kind != 4) ||
	    ((state & STATE_ASCII) && kind != 1)) {
		errno = EINVAL;
		return NULL;
	}
	/* a record's copy may be cut: the characters it holds */
	if (m->bytes) {
		size_t at = state & STATE_ASCII ? rt->str_ascii_data :
						  rt->str_compact_data;

		if (at > m->len) {
			errno = EFAULT;
			return NULL;
		}
		if (length > (m->len - at) / kind)
			length = (m->len - at) / kind;
	}
	raw = malloc(length * kind + 1);
	out = malloc(length * 4 + 1);
	if (!raw || !out ||
	    peek(m, addr + (state & STATE_ASCII ? rt->str_ascii_data :
						   rt->str_compact_data),
		 raw, length * kind)) {
		free(raw);
		free(out);
		return NULL;
	}
	for (i = 0; i < length; i++) {
		uint32_t cp;

		if (kind == 1) {
			cp = raw[i];
		} else if (kind == 2) {
			uint16_t u;

			memcpy(&u, raw + 2 * i, 2);
			cp = u;
		} else {
			memcpy(&cp, raw + 4 * i, 4);
		}
		/* no NUL inside, nothing past Unicode, no lone surrogate */
		if (!cp || cp > 0x10ffff || (cp >= 0xd800 && cp < 0xe000))
			cp = 0xfffd;
		n += utf8_put(out + n, cp);
	}
	out[n] = '\0';
	free(raw);
	return out;
}

int pycode_read(pid_t pid, const struct pyrt *rt, uint64_t bias,
		uint64_t addr, struct pycode *c)
{
	return pycode_read_if(pid, rt, bias, addr, c, NULL, NULL);
}

int pycode_read_if(pid_t pid, const struct pyrt *rt, uint64_t bias,
		   uint64_t addr, struct pycode *c,
		   bool (*ok)(void *arg, uint64_t addr, size_t size),
		   void *arg)
{
	const struct mem mem = { .pid = pid, .ok = ok, .arg = arg }, *m = &mem;
	uint64_t type, qualname, filename, linetable, size;
	int32_t first;

	memset(c, 0, sizeof(*c));
	if (peek_u64(m, addr + OB_TYPE, &type))
		return -1;
	if (type != rt->code_type + bias) {
		errno = EINVAL;
		return -1;
	}
	if (peek(m, addr + rt->code_firstlineno, &first, sizeof(first)) ||
	    peek_u64(m, addr + rt->code_qualname, &qualname) ||
	    peek_u64(m, addr + rt->code_filename, &filename) ||
	    peek_u64(m, addr + rt->code_linetable, &linetable) ||
	    peek_u64(m, linetable + BYTES_SIZE, &size))
		return -1;
	if (size > PYCODE_LINETABLE_MAX) {
		errno = EINVAL;
		return -1;
	}
	c->firstlineno = first;
	c->linetable_len = size;
	c->linetable = malloc(size ? size : 1);
	c->qualname = c->linetable ? read_str(m, rt, qualname) : NULL;
	c->filename = c->qualname ? read_str(m, rt, filename) : NULL;
	if (!c->filename ||
	    peek(m, linetable + BYTES_DATA, c->linetable, size)) {
		int err = errno;

		pycode_free(c);
		errno = err;
		return -1;
	}
	return 0;
}

int pycode_from_record(const struct pyrt *rt, const struct cprof_pycode *rec,
		       struct pycode *c)
{
	const uint8_t *d = rec->data;
	struct mem q = { .bytes = d, .len = rec->qualname_len };
	struct mem f = { .bytes = d + rec->qualname_len,
			 .len = rec->filename_len };
	struct mem lt = { .bytes = d + rec->qualname_len + rec->filename_len,
			  .len = rec->linetable_len };
	uint64_t size;

	memset(c, 0, sizeof(*c));
	if (lt.len < BYTES_DATA) {
		errno = EFAULT;
		return -1;
	}
	if (peek_u64(&lt, BYTES_SIZE, &size))
		return -1;
	/* cut by the module's bound: the lines it holds */
	if (size > lt.len - BYTES_DATA)
		size = lt.len - BYTES_DATA;
	c->firstlineno = rec->firstlineno;
	c->linetable_len = size;
	c->linetable = malloc(size ? size : 1);
	c->qualname = c->linetable ? read_str(&q, rt, 0) : NULL;
	c->filename = c->qualname ? read_str(&f, rt, 0) : NULL;
	if (!c->filename || peek(&lt, BYTES_DATA, c->linetable, size)) {
		int err = errno;

		pycode_free(c);
		errno = err;
		return -1;
	}
	return 0;
}

void pycode_free(struct pycode *c)
{
	free(c->qualname);
	free(c->filename);
	free(c->linetable);
	memset(c, 0, sizeof(*c));
}

struct reader {
	const uint8_t *t;
	size_t len, p;
	bool bad;
};

static unsigned long varint(struct reader *r)
{
	unsigned long v = 0;
	unsigned int shift = 0;
	uint8_t b;

	do {
		if (r->p >= r->len || shift > 60) {
			r->bad = true;
			return 0;
		}
		b = r->t[r->p++];
		v |= (unsigned long)(b & 63) << shift;
		shift += 6;
	} while (b & 64);
	return v;
}

static long svarint(struct reader *r)
{
	unsigned long u = varint(r);

	return u & 1 ? -(long)(u >> 1) : (long)(u >> 1);
}

int pycode_line(const uint8_t *table, size_t len, int firstlineno, long idx)
{
	struct reader r = { .t = table, .len = len };
	long line = firstlineno, pos = 0;

	if (idx < 0)
		return firstlineno;
	while (r.p < r.len) {
		uint8_t b = r.t[r.p++];
		unsigned int code = (b >> 3) & 15, n = (b & 7) + 1;
		long delta = 0;

		if (code == 15) {
			/* no location */
		} else if (code == 14) {
			delta = svarint(&r);
			varint(&r);
			varint(&r);
			varint(&r);
		} else if (code == 13) {
			delta = svarint(&r);
		} else if (code >= 10) {
			delta = code - 10;
			r.p += 2;
		} else {
			r.p += 1;
		}
		if (r.bad || r.p > r.len || delta > INT32_MAX ||
		    delta < -INT32_MAX)
			return -1;
		line += delta;
		if (idx < pos + n)
			return code == 15 || line < 0 || line > INT32_MAX ?
			       -1 : (int)line;
		pos += n;
	}
	return -1;
}
