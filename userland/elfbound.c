// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * elfbound - the decompressed size of a file's compressed sections and
 * the size of its symbol tables.  See elfbound.h.
 */
#include <gelf.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "elfbound.h"

#define TOO_MUCH	(ELFBOUND_INFLATE_MAX + 1)

static uint64_t add_sat(uint64_t a, uint64_t b)
{
	return a + b < b ? UINT64_MAX : a + b;
}

/*
 * The size a SHF_COMPRESSED section decompresses to, from its header
 * alone: gelf_getchdr() would read the whole section first.
 */
static uint64_t chdr_size(Elf *elf, const GElf_Shdr *sh)
{
	int wide = gelf_getclass(elf) == ELFCLASS64;
	size_t len = wide ? sizeof(Elf64_Chdr) : sizeof(Elf32_Chdr);
	Elf_Data *d;

	if (sh->sh_type == SHT_NOBITS || sh->sh_size < len)
		return TOO_MUCH;
	d = elf_getdata_rawchunk(elf, (int64_t)sh->sh_offset, len, ELF_T_CHDR);
	if (!d || d->d_size < len)
		return TOO_MUCH;
	return wide ? ((const Elf64_Chdr *)d->d_buf)->ch_size :
		      ((const Elf32_Chdr *)d->d_buf)->ch_size;
}

/* What libelf would decompress scn to; 0 if it is not compressed. */
static uint64_t section_inflated(Elf *elf, int fd, const GElf_Shdr *sh,
				 size_t shstrndx)
{
	const char *name;
	uint8_t hdr[12];
	uint64_t n = 0;
	int i;

	if (sh->sh_flags & SHF_COMPRESSED)
		return chdr_size(elf, sh);
	name = elf_strptr(elf, shstrndx, sh->sh_name);
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

/* The bytes libelf hands out for a section: decompressed if it is. */
static uint64_t section_bytes(Elf *elf, int fd, const GElf_Shdr *sh,
			      size_t shstrndx)
{
	uint64_t z = section_inflated(elf, fd, sh, shstrndx);

	return z ? z : sh->sh_type == SHT_NOBITS ? 0 : sh->sh_size;
}

/*
 * A symbol table: its entries as libdwfl counts them (its size, once
 * decompressed, over its entry size) and its string table's size into
 * eb, its and its names' decompressed sizes added to eb->sym_inflated.
 */
static void symbol_table(Elf *elf, int fd, const GElf_Shdr *sh,
			 size_t shstrndx, struct elfbound *eb)
{
	uint64_t ent = sh->sh_entsize ? sh->sh_entsize :
		       gelf_fsize(elf, ELF_T_SYM, 1, EV_CURRENT);
	uint64_t n = ent ? section_bytes(elf, fd, sh, shstrndx) / ent :
			   UINT64_MAX;
	Elf_Scn *str = elf_getscn(elf, sh->sh_link);
	GElf_Shdr ss;

	eb->symbols = n > eb->symbols ? n : eb->symbols;
	eb->sym_inflated = add_sat(eb->sym_inflated,
				   section_inflated(elf, fd, sh, shstrndx));
	if (!str || !gelf_getshdr(str, &ss))
		return;
	n = section_bytes(elf, fd, &ss, shstrndx);
	eb->names = n > eb->names ? n : eb->names;
	eb->sym_inflated = add_sat(eb->sym_inflated,
				   section_inflated(elf, fd, &ss, shstrndx));
}

void elfbound_measure(int fd, struct elfbound *eb)
{
	Elf *elf;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	size_t shstrndx;

	memset(eb, 0, sizeof(*eb));
	if (elf_version(EV_CURRENT) == EV_NONE)
		return;
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf)
		return;
	if (elf_getshdrstrndx(elf, &shstrndx)) {
		elf_end(elf);
		return;
	}
	/* elf_strptr() below reads the section names whole */
	scn = elf_getscn(elf, shstrndx);
	if (scn && !gelf_getshdr(scn, &sh))
		sh.sh_size = UINT64_MAX;
	if (scn && sh.sh_size > ELFBOUND_SHSTRTAB_MAX) {
		eb->section_names = sh.sh_size;
		eb->inflated = TOO_MUCH;
		elf_end(elf);
		return;
	}
	scn = NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &sh))
			continue;
		eb->inflated = add_sat(eb->inflated,
				       section_inflated(elf, fd, &sh, shstrndx));
		if (sh.sh_type == SHT_SYMTAB_SHNDX)
			eb->sym_inflated = add_sat(eb->sym_inflated,
				section_inflated(elf, fd, &sh, shstrndx));
		if (sh.sh_type == SHT_SYMTAB || sh.sh_type == SHT_DYNSYM)
			symbol_table(elf, fd, &sh, shstrndx, eb);
	}
	elf_end(elf);
}

uint64_t elfbound_inflated(int fd)
{
	struct elfbound eb;

	elfbound_measure(fd, &eb);
	return eb.inflated;
}

void elfbound_symbols_why(uint64_t n, char *why, size_t size)
{
	snprintf(why, size, "%llu symbols in one table, past the bound of %llu",
		 (unsigned long long)n, ELFBOUND_SYMBOLS_MAX);
}

bool elfbound_symbols_fit(const struct elfbound *eb, char *why, size_t size)
{
	char buf[128];

	if (!why) {
		why = buf;
		size = sizeof(buf);
	}
	if (eb->section_names > ELFBOUND_SHSTRTAB_MAX)
		snprintf(why, size, "its section names take %llu MiB, past the bound of %llu MiB",
			 (unsigned long long)(eb->section_names >> 20),
			 ELFBOUND_SHSTRTAB_MAX >> 20);
	else if (eb->sym_inflated > ELFBOUND_INFLATE_MAX)
		snprintf(why, size, "its symbol tables decompress to %llu MiB, past the bound of %llu MiB",
			 (unsigned long long)(eb->sym_inflated >> 20),
			 ELFBOUND_INFLATE_MAX >> 20);
	else if (eb->symbols > ELFBOUND_SYMBOLS_MAX)
		elfbound_symbols_why(eb->symbols, why, size);
	else if (eb->names > ELFBOUND_NAMES_MAX)
		snprintf(why, size, "a symbol table's names take %llu MiB, past the bound of %llu MiB",
			 (unsigned long long)(eb->names >> 20),
			 ELFBOUND_NAMES_MAX >> 20);
	else
		return true;
	return false;
}
