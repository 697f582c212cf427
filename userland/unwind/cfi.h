/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * cfi - compile an ELF file's call frame information (.eh_frame,
 * .debug_frame) into the rows of a cprof unwind table (cprof_format.h,
 * "Unwind tables").
 */
#ifndef CPROF_CFI_H
#define CPROF_CFI_H

#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "cprof_format.h"

/* Why code got CPROF_CFA_STOP rows: the rules the tick does not follow. */
enum cfi_stop {
	CFI_STOP_SIGNAL,	/* a signal frame */
	CFI_STOP_RA,		/* the return address not at CFA - 8 */
	CFI_STOP_CFA_REG,	/* the CFA from another register than sp, rbp */
	CFI_STOP_CFA_EXPR,	/* another CFA expression */
	CFI_STOP_LIBDW,		/* rules libdw could not give, or too costly */
	CFI_STOP_NR
};

/* "signal frame", ...: for messages */
const char *cfi_stop_name(enum cfi_stop why);

struct cfi_table {
	uint32_t *pc;			/* file offsets, strictly increasing */
	struct cprof_urow *row;		/* row[i] holds from pc[i] to pc[i+1] */
	size_t n;			/* last row is CPROF_CFA_NONE */
	/*
	 * Every function that calls keeps the frame-pointer chain: after a
	 * first frame, the module may walk the file by frame pointers.
	 */
	bool frame_pointers;
	/* bytes of code whose rows are CPROF_CFA_STOP, by reason */
	uint64_t stop_bytes[CFI_STOP_NR];
};

/*
 * Compile the CFI of the ELF file open on fd (ET_EXEC or ET_DYN, x86-64).
 * 0 on success; -1 with a one-line reason in err (no trailing newline) if the
 * file is not such an ELF, has no usable CFI, is too large (offsets beyond
 * u32, more than CPROF_UTABLE_ROWS_MAX rows) or is malformed.  The file
 * offset of fd is not used.  *t is always left so that cfi_table_free()
 * may be called on it.
 */
int cfi_compile(int fd, struct cfi_table *t, char *err, size_t errlen);

/* Frees the arrays; NULL-safe, and t may be freed twice. */
void cfi_table_free(struct cfi_table *t);

/* One row a line: "%x base cfa_off fp_rule fp_off", base and fp_rule words. */
void cfi_table_print(FILE *f, const struct cfi_table *t);

#endif /* CPROF_CFI_H */
