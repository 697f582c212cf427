/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * tableenc - a compiled unwind table in the module's format
 * (cprof_format.h, struct cprof_utable): each distinct rule once, then
 * every row's offset and the index of its rule.  A table is encoded once,
 * when it is compiled; the table cache keeps it so, and a table read back
 * goes to the module behind its header with nothing else done to it.
 */
#ifndef CPROF_TABLEENC_H
#define CPROF_TABLEENC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cprof_format.h"
#include "unwind/cfi.h"

struct tableenc {
	/* rule[nr_rules], pc[nr_rows], rule_of[nr_rows]; malloc()ed */
	char *body;
	size_t len;			/* tableenc_len() */
	uint32_t nr_rows;
	uint32_t nr_rules;
	bool frame_pointers;		/* CPROF_UTABLE_FP */
	uint64_t stop_bytes[CFI_STOP_NR];	/* as the cfi_table's */
};

/* The bytes of a body of nr_rows rows and nr_rules rules. */
size_t tableenc_len(uint32_t nr_rows, uint32_t nr_rules);

/*
 * Encode t into *e (free it with tableenc_free()).  0, or -1: t has more
 * distinct rules than the format holds (a warning says so), too many rows,
 * or no memory.
 */
int tableenc_encode(const struct cfi_table *t, struct tableenc *e);

/*
 * Does a body of len bytes check as the module checks a table: the
 * counts within the format's, the length theirs, each rule's kinds known,
 * the offsets strictly increasing, each row's rule there, the last row's
 * rule CPROF_CFA_NONE?  Offsets and rule indexes are read unaligned.
 */
bool tableenc_check(const void *body, size_t len, uint32_t nr_rows,
		    uint32_t nr_rules);

/*
 * The table as the module takes it: *hdr with its nr_rows, nr_rules and
 * flags set from e (CPROF_UTABLE_PY if py), py's layout if py, e's body.
 * malloc()ed, its length in *len; NULL for want of memory.
 */
char *tableenc_table(const struct tableenc *e, struct cprof_utable *hdr,
		     const struct cprof_upy *py, size_t *len);

/* NULL-safe; *e can be encoded into again. */
void tableenc_free(struct tableenc *e);

#endif /* CPROF_TABLEENC_H */
