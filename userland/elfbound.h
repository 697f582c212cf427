/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * elfbound - what reading a file's debug sections with libdw would cost.
 *
 * libdw decompresses every compressed debug section of a file when it
 * opens its DWARF (dwarf_begin_elf()): a file of a few KiB can name
 * gigabytes.  Both readers of users' files (cfi.c for .debug_frame,
 * elfsyms.c for lines and inline frames) ask first, and leave a file's
 * DWARF alone past ELFBOUND_INFLATE_MAX.
 */
#ifndef CPROF_ELFBOUND_H
#define CPROF_ELFBOUND_H

#include <stdint.h>

#define ELFBOUND_INFLATE_MAX	(64ULL << 20)

/*
 * The decompressed sizes of fd's compressed sections (SHF_COMPRESSED, and
 * GNU .zdebug_*), summed, read from their headers without decompressing
 * anything (the file is read with pread(), never mapped).  A header that
 * cannot be read counts as more than ELFBOUND_INFLATE_MAX; a file libelf
 * cannot read as ELF, as 0.
 */
uint64_t elfbound_inflated(int fd);

#endif /* CPROF_ELFBOUND_H */
