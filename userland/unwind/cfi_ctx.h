/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * cfi_ctx - what one compilation of a file's call frame information
 * shares between its two files: cfiscan.c (the ELF file's segments and
 * sections, the FDEs listed and checked) and cfi.c (rules to rows, rows
 * to file offsets).  Not for other units: they use cfi.h.
 */
#ifndef CPROF_CFI_CTX_H
#define CPROF_CFI_CTX_H

#include <elfutils/libdw.h>
#include <gelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cprof_format.h"

#define MAX_SEGS	32

enum { SRC_EH, SRC_DEBUG, NR_SRC };

struct seg {
	uint64_t vaddr, end;		/* [p_vaddr, p_vaddr + p_filesz) */
	uint64_t offset;		/* p_offset */
};

struct fde {
	uint64_t lo, hi;		/* clipped to the segment of lo */
	uint64_t cost;			/* bytes libdw executes per row */
	int src;
};

struct vrow {
	uint64_t pc;			/* address, then file offset */
	struct cprof_urow r;
};

struct rows {
	struct vrow *v;
	size_t n, cap;
};

struct ctx {
	Elf *elf;
	Dwarf *dw;
	Dwarf_CFI *cfi[NR_SRC];
	const unsigned char *ident;
	struct seg seg[MAX_SEGS];
	int nseg;
	struct fde *fde;
	size_t nfde, fde_cap;
	uint64_t *eh_off;		/* .eh_frame's FDE offsets, ascending */
	size_t neh_off, eh_off_cap;
	Elf_Scn *eh_hdr;		/* .eh_frame_hdr, NULL if none */
	struct rows rows;		/* by address */
	uint64_t fsize;			/* the file's size */
	uint64_t inflated;		/* compressed sections, decompressed */
	bool not_fp;			/* a function may call without a frame */
	uint64_t *stop_bytes;		/* struct cfi_table's, by enum cfi_stop */
	uint64_t plt_lo[4], plt_hi[4];	/* .plt, .plt.got, .plt.sec */
	int nplt;
	uint64_t work;
	char *err;
	size_t errlen;
};

/* One line in c->err (why the file is refused); returns -1. */
int cfi_fail(struct ctx *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * cfiscan.c.  Each returns 0, or -1 after cfi_fail().
 *   cfi_scan_segments: the executable PT_LOAD segments into c->seg;
 *   cfi_scan_sections: .eh_frame's and .debug_frame's sections (and
 *     .eh_frame_hdr's, the PLTs' ranges);
 *   cfi_scan_fdes: every CIE and FDE of scn (src: SRC_EH or SRC_DEBUG)
 *     decoded and checked, those of executable code added to c->fde,
 *     *found counting them;
 *   cfi_scan_eh_hdr: each .eh_frame_hdr entry names a checked FDE.
 */
int cfi_scan_segments(struct ctx *c);
int cfi_scan_sections(struct ctx *c, Elf_Scn *scn_of[NR_SRC]);
int cfi_scan_fdes(struct ctx *c, Elf_Scn *scn, int src, size_t *found);
int cfi_scan_eh_hdr(struct ctx *c, Elf_Scn *eh);

#endif /* CPROF_CFI_CTX_H */
