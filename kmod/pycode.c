// SPDX-License-Identifier: GPL-2.0
/*
 * Python code objects into the stream, so that Python frames can be named
 * after their process is gone.
 *
 * The first time a CPU meets a code object in a stream (its address, first
 * line and process), the tick copies the leading bytes of the code's
 * qualified name, file name and line table (struct cprof_pycode) into a
 * record after the sample, at most CPROF_PYCODE_PER_TICK codes a tick; a
 * per-CPU direct-mapped table of the codes named keeps the stream from
 * repeating them.  The reads are the tick's (fault-free, bounded, within
 * its accesses); the module does not decode the objects beyond the sizes
 * of a str and a bytes object.  Why: docs/design.md, "Python frames: the
 * tick's walk".
 */
#include <linux/hash.h>
#include <linux/mm.h>
#include <linux/percpu.h>
#include <linux/sched.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include "pycode.h"

#define CPROF_PYCODE_SEEN_BITS	9	/* codes remembered per CPU */

/*
 * CPython's objects on 64-bit: a bytes object's size and data; a str's
 * length (in characters), its state (bits 2-4: bytes a character), and
 * the longest header before its characters.
 */
#define CPROF_PYBYTES_SIZE	16
#define CPROF_PYBYTES_DATA	32
#define CPROF_PYSTR_LENGTH	16
#define CPROF_PYSTR_STATE	32
#define CPROF_PYSTR_HEAD	72

struct cprof_pycode_seen {
	u64 code;
	s32 firstlineno;
	pid_t tgid;
};

/* Per CPU, 1 << CPROF_PYCODE_SEEN_BITS each: too large for static per-CPU data. */
static struct cprof_pycode_seen __percpu *cprof_pycode_seen;

static struct cprof_pycode_seen *cprof_pycode_slot(u64 code, pid_t tgid)
{
	return this_cpu_ptr(cprof_pycode_seen) +
	       hash_64(code ^ tgid, CPROF_PYCODE_SEEN_BITS);
}

/**
 * cprof_pycode_pick() - which codes of a sample's Python frames to name
 * @h: the interpreter the sample's user walk met
 * @t: the sample's Python frames
 * @need: filled in: the codes this CPU has not named in the stream, at
 *	most CPROF_PYCODE_PER_TICK, innermost first, with what reading them
 *	takes
 *
 * Context: the tick, before the sample is committed (@t is in it).
 */
void cprof_pycode_pick(const struct cprof_pyhint *h,
		       const struct cprof_pytrail *t,
		       struct cprof_pyneed *need)
{
	const struct cprof_upy *py = &h->py;
	pid_t tgid = current->tgid;
	const struct cprof_pycode_seen *seen;
	u64 code;
	int i, j;

	need->nr = 0;
	if (py->code_qualname == CPROF_UPY_NONE ||
	    py->code_filename == CPROF_UPY_NONE ||
	    py->code_linetable == CPROF_UPY_NONE)
		return;
	need->version = py->version;
	need->qualname = py->code_qualname;
	need->filename = py->code_filename;
	need->linetable = py->code_linetable;
	for (i = 0; i < t->nr && need->nr < CPROF_PYCODE_PER_TICK; i++) {
		code = t->frame[i].code & ~CPROF_PYFRAME_ENTRY;
		seen = cprof_pycode_slot(code, tgid);
		if (seen->code == code && seen->tgid == tgid &&
		    seen->firstlineno == t->frame[i].firstlineno)
			continue;
		/* a recursion's frames: one code, many times */
		for (j = 0; j < need->nr && need->code[j] != code; j++)
			;
		if (j < need->nr)
			continue;
		need->code[need->nr] = code;
		need->firstlineno[need->nr++] = t->frame[i].firstlineno;
	}
}

/* The pointer field at @off of the code object @code, or 0. */
static unsigned long cprof_pycode_field(u64 code, u16 off)
{
	unsigned long val;

	if (copy_from_user_nofault(&val, (const void __user *)(code + off),
				   sizeof(val)))
		return 0;
	return val;
}

/*
 * Up to @max bytes of user memory at @addr into @dst, page by page until
 * one is not there.  The bytes copied.
 */
static u32 cprof_pycode_copy(void *dst, unsigned long addr, u32 max)
{
	u32 done = 0, chunk;

	if (!addr)
		return 0;
	while (done < max) {
		chunk = min_t(u32, max - done,
			      PAGE_SIZE - offset_in_page(addr + done));
		if (copy_from_user_nofault(dst + done,
					   (const void __user *)(addr + done),
					   chunk))
			break;
		done += chunk;
	}
	return done;
}

/* A str's header and characters, at most CPROF_PYSTR_MAX bytes. */
static u32 cprof_pycode_str(void *dst, unsigned long addr)
{
	long length;
	u32 state, kind;

	if (!addr ||
	    copy_from_user_nofault(&length, (const void __user *)(addr +
							CPROF_PYSTR_LENGTH),
				   sizeof(length)) ||
	    copy_from_user_nofault(&state, (const void __user *)(addr +
							CPROF_PYSTR_STATE),
				   sizeof(state)))
		return 0;
	kind = (state >> 2) & 7;
	if (length < 0 || (kind != 1 && kind != 2 && kind != 4))
		return 0;
	return cprof_pycode_copy(dst, addr,
				 min_t(u64, CPROF_PYSTR_MAX,
				       CPROF_PYSTR_HEAD + (u64)length * kind));
}

/* A bytes object's header and data, at most CPROF_PYLINES_MAX bytes. */
static u32 cprof_pycode_bytes(void *dst, unsigned long addr)
{
	long size;

	if (!addr ||
	    copy_from_user_nofault(&size, (const void __user *)(addr +
							CPROF_PYBYTES_SIZE),
				   sizeof(size)) ||
	    size < 0)
		return 0;
	return cprof_pycode_copy(dst, addr,
				 min_t(u64, CPROF_PYLINES_MAX,
				       CPROF_PYBYTES_DATA + (u64)size));
}

/**
 * cprof_pycode_fill() - the record of one code to name
 * @need: from cprof_pycode_pick()
 * @i: which of its codes
 * @rec: where the record goes, CPROF_PYCODE_RECORD_MAX bytes; its header
 *	but for time_ns is filled in here
 *
 * Context: the tick, after cprof_pycode_pick(), in current's address
 * space.
 * Return: the record's size, 8-byte aligned.
 */
u32 cprof_pycode_fill(const struct cprof_pyneed *need, int i,
		      struct cprof_pycode *rec)
{
	u64 code = need->code[i];
	unsigned long addr;
	u32 n = 0, len;

	rec->pid = current->tgid;
	rec->firstlineno = need->firstlineno[i];
	rec->code = code;
	rec->version = need->version;
	rec->reserved = 0;
	rec->reserved2 = 0;
	addr = cprof_pycode_field(code, need->qualname);
	rec->qualname_len = cprof_pycode_str(rec->data, addr);
	n += rec->qualname_len;
	addr = cprof_pycode_field(code, need->filename);
	rec->filename_len = cprof_pycode_str(rec->data + n, addr);
	n += rec->filename_len;
	addr = cprof_pycode_field(code, need->linetable);
	rec->linetable_len = cprof_pycode_bytes(rec->data + n, addr);
	n += rec->linetable_len;
	len = sizeof(*rec) + n;
	memset(rec->data + n, 0, CPROF_ALIGN(len) - len);
	return CPROF_ALIGN(len);
}

/**
 * cprof_pycode_named() - a code's record is in the stream
 * @need: from cprof_pycode_pick()
 * @i: which of its codes
 *
 * Context: the tick, on the CPU that picked it.
 */
void cprof_pycode_named(const struct cprof_pyneed *need, int i)
{
	struct cprof_pycode_seen *seen;
	pid_t tgid = current->tgid;

	seen = cprof_pycode_slot(need->code[i], tgid);
	seen->code = need->code[i];
	seen->firstlineno = need->firstlineno[i];
	seen->tgid = tgid;
}

/**
 * cprof_pycode_reset() - forget which codes were named: a new stream
 *
 * Context: between profiles: no tick runs.
 */
void cprof_pycode_reset(void)
{
	int cpu;

	for_each_possible_cpu(cpu)
		memset(per_cpu_ptr(cprof_pycode_seen, cpu), 0,
		       sizeof(struct cprof_pycode_seen) <<
		       CPROF_PYCODE_SEEN_BITS);
}

/**
 * cprof_pycode_init() - allocate the per-CPU tables of named codes
 *
 * Context: module init.
 * Return: 0 or -ENOMEM.
 */
int cprof_pycode_init(void)
{
	cprof_pycode_seen = __alloc_percpu(sizeof(struct cprof_pycode_seen) <<
					   CPROF_PYCODE_SEEN_BITS,
					   __alignof__(struct cprof_pycode_seen));
	return cprof_pycode_seen ? 0 : -ENOMEM;
}

/**
 * cprof_pycode_exit() - free them
 *
 * Context: module exit, after the last tick.
 */
void cprof_pycode_exit(void)
{
	free_percpu(cprof_pycode_seen);
}
