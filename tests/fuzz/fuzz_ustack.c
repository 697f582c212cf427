// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * libFuzzer target: ustack_walk() (ustack.c), which walks a stack copy
 * from a CPROF_REC_USTACK record with an unwind table.  Both are anyone's
 * to make: the copy is a process's stack memory, the table is compiled
 * from a file a user wrote.  Nothing may crash, hang, or read out of the
 * copy or the table (built with ASan and UBSan).
 *
 * An input is: a 4-byte table length L, then L bytes of table (as the
 * module takes it, cprof_format.h), then struct cprof_ustack's fields from
 * frame on (frame, reserved, size, regs[16]) and the copy's bytes; the
 * record's own size and flags come from the input's length and its first
 * byte.  The table covers code mapped at [0x400000, 0x500000), offset 0;
 * the walk starts at regs[16]'s ip, 0x400000 plus the table's first row.
 *
 * Checked, a wrong one aborting with a line "fuzz_ustack: ...": the walk
 * writes 1 to max frames, the first being the ip it was given, and ends
 * as one of the ways ustack.h names.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "unwind/ustack.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX	32

static struct ustack_code code;

static bool code_at(void *arg, uint64_t ip, struct ustack_code *c)
{
	(void)arg;
	if (ip < code.start || ip >= code.end)
		return false;
	*c = code;
	return true;
}

static void bad(const char *what)
{
	fprintf(stderr, "fuzz_ustack: %s\n", what);
	abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const size_t fixed = sizeof(struct cprof_ustack) -
			     offsetof(struct cprof_ustack, frame);
	struct cprof_ustack *u;
	uint64_t ips[MAX], ip;
	enum ustack_end end;
	uint32_t len;
	void *table;
	size_t copy;
	int n = -1;

	if (size < 4)
		return 0;
	memcpy(&len, data, 4);
	if (len > size - 4 || size - 4 - len < fixed)
		return 0;
	/* each in a heap block of its own size: ASan sees any overread */
	table = malloc(len ? len : 1);
	memcpy(table, data + 4, len);
	copy = size - 4 - len - fixed;
	u = calloc(1, sizeof(*u) + copy);
	memcpy(&u->frame, data + 4 + len, fixed + copy);
	u->rec.type = CPROF_REC_USTACK;
	u->rec.flags = len ? data[4] & CPROF_USTACK_REGS : 0;
	u->size = copy;		/* as stream.c checks it: the data there */
	code = (struct ustack_code){
		.start = 0x400000, .end = 0x500000,
		.table = ustack_table_new(table, len),
	};
	ip = 0x400000 + (u->regs[0] & 0xfffff);
	end = ustack_walk(u, ip, u->frame == 0, code_at, NULL, ips, MAX, &n);
	if (n < 1 || n > MAX)
		bad("frame count out of range");
	if (ips[0] != ip)
		bad("first frame is not the given ip");
	if (end != USTACK_COMPLETE && end != USTACK_DEPTH &&
	    end != USTACK_STOPPED && end != USTACK_SHORT &&
	    end != USTACK_NO_TABLE)
		bad("unknown end");
	if (end == USTACK_DEPTH && n != MAX)
		bad("depth without max frames");
	ustack_table_free((struct ustack_table *)code.table);
	free(u);
	free(table);
	return 0;
}
