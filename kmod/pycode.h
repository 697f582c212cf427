/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CPROF_PYCODE_H
#define CPROF_PYCODE_H

#include <linux/types.h>

#include "cprof_format.h"
#include "unwind.h"

/* Code objects named a tick, at most. */
#define CPROF_PYCODE_PER_TICK	2

/*
 * The user accesses (struct cprof_uaccess) one record may take: three
 * fields of the code, each str's length and state and its copy, the
 * bytes' size and its copy.  A record is made only if they are left.
 */
#define CPROF_PYCODE_ACCESSES \
	(3 + 2 * (2 + CPROF_UACCESS_COPY(CPROF_PYSTR_MAX)) + \
	 1 + CPROF_UACCESS_COPY(CPROF_PYLINES_MAX))

/* The largest CPROF_REC_PYCODE record. */
#define CPROF_PYCODE_RECORD_MAX \
	CPROF_ALIGN(sizeof(struct cprof_pycode) + 2 * CPROF_PYSTR_MAX + \
		    CPROF_PYLINES_MAX)

/* The codes of a sample's Python frames to name, and where their fields are. */
struct cprof_pyneed {
	int nr;
	u64 code[CPROF_PYCODE_PER_TICK];
	s32 firstlineno[CPROF_PYCODE_PER_TICK];
	u32 version;
	u16 qualname, filename, linetable;
};

/* Python code objects' names into the stream: pycode.c. */
void cprof_pycode_pick(const struct cprof_pyhint *h,
		       const struct cprof_pytrail *t,
		       struct cprof_pyneed *need);
u32 cprof_pycode_fill(const struct cprof_pyneed *need, int i,
		      struct cprof_pycode *rec);
void cprof_pycode_named(const struct cprof_pyneed *need, int i);
void cprof_pycode_reset(void);
int cprof_pycode_init(void);
void cprof_pycode_exit(void);

#endif /* CPROF_PYCODE_H */
