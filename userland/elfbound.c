// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * elfbound - the decompressed size of a file's compressed sections.  See
 * elfbound.h.
 */
#include <gelf.h>
#include <string.h>
#include <unistd.h>

#include "elfbound.h"

#define TOO_MUCH	(ELFBOUND_INFLATE_MAX + 1)

static uint64_t section_inflated(Elf *elf, int fd, Elf_Scn *scn,
				 const GElf_Shdr *sh, size_t shstrndx)
{
	const char *name = elf_strptr(elf, shstrndx, sh->sh_name);
	uint8_t hdr[12];
	uint64_t n = 0;
	int i;
	GElf_Chdr ch;

	if (sh->sh_flags & SHF_COMPRESSED)
		return gelf_getchdr(scn, &ch) ? ch.ch_size : TOO_MUCH;
	if (!name || strncmp(name, ".zdebug", 7) || sh->sh_type == SHT_NOBITS)
		return 0;
	/* "ZLIB" and the size, big-endian */
	if (sh->sh_size < sizeof(hdr) ||
	    pread(fd, hdr, sizeof(hdr), sh->sh_offset) != sizeof(hdr) ||
	    memcmp(hdr, "ZLIB", 4))
		return TOO_MUCH;
	for (i = 4; i < 12; i++)
		n = n << 8 | hdr[i];
	return n;
}

uint64_t elfbound_inflated(int fd)
{
	Elf *elf;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	size_t shstrndx;
	uint64_t total = 0, z;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return 0;
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf)
		return 0;
	if (elf_getshdrstrndx(elf, &shstrndx)) {
		elf_end(elf);
		return 0;
	}
	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &sh))
			continue;
		z = section_inflated(elf, fd, scn, &sh, shstrndx);
		total = total + z < z ? UINT64_MAX : total + z;
	}
	elf_end(elf);
	return total;
}
