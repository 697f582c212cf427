// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * elfbound - the decompressed size of a file's compressed sections and
 * the size of its symbol tables.  See elfbound.h.
 */
#include <gelf.h>
#include <lzma.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/elfbound.h"

#define TOO_MUCH	(ELFBOUND_INFLATE_MAX + 1)
/* the xz decoder's memory, as libdwfl allows it */
#define XZ_MEMLIMIT	(1ULL << 30)

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
static uint64_t section_inflated(Elf *elf, const GElf_Shdr *sh,
				 size_t shstrndx)
{
	const uint8_t *hdr;
	const char *name;
	Elf_Data *d;
	uint64_t n = 0;
	int i;

	if (sh->sh_flags & SHF_COMPRESSED)
		return chdr_size(elf, sh);
	name = elf_strptr(elf, shstrndx, sh->sh_name);
	if (!name || strncmp(name, ".zdebug", 7) || sh->sh_type == SHT_NOBITS)
		return 0;
	/* "ZLIB" and the size, big-endian */
	d = sh->sh_size < 12 ? NULL :
	    elf_getdata_rawchunk(elf, (int64_t)sh->sh_offset, 12, ELF_T_BYTE);
	hdr = d && d->d_size == 12 ? d->d_buf : NULL;
	if (!hdr || memcmp(hdr, "ZLIB", 4))
		return TOO_MUCH;
	for (i = 4; i < 12; i++)
		n = n << 8 | hdr[i];
	return n;
}

/* The bytes libelf hands out for a section: decompressed if it is. */
static uint64_t section_bytes(Elf *elf, const GElf_Shdr *sh,
			      size_t shstrndx)
{
	uint64_t z = section_inflated(elf, sh, shstrndx);

	return z ? z : sh->sh_type == SHT_NOBITS ? 0 : sh->sh_size;
}

/*
 * A symbol table: its entries as libdwfl counts them (its size, once
 * decompressed, over its entry size) and its string table's size into
 * eb, its and its names' decompressed sizes added to eb->sym_inflated.
 */
static void symbol_table(Elf *elf, const GElf_Shdr *sh, size_t shstrndx,
			 struct elfbound *eb)
{
	uint64_t ent = sh->sh_entsize ? sh->sh_entsize :
		       gelf_fsize(elf, ELF_T_SYM, 1, EV_CURRENT);
	uint64_t n = ent ? section_bytes(elf, sh, shstrndx) / ent :
			   UINT64_MAX;
	Elf_Scn *str = elf_getscn(elf, sh->sh_link);
	GElf_Shdr ss;

	eb->symbols = n > eb->symbols ? n : eb->symbols;
	eb->sym_inflated = add_sat(eb->sym_inflated,
				   section_inflated(elf, sh, shstrndx));
	if (!str || !gelf_getshdr(str, &ss))
		return;
	n = section_bytes(elf, &ss, shstrndx);
	eb->names = n > eb->names ? n : eb->names;
	eb->sym_inflated = add_sat(eb->sym_inflated,
				   section_inflated(elf, &ss, shstrndx));
}

static void measure(Elf *elf, int fd, struct elfbound *eb);

/*
 * .gnu_debugdata: an xz-compressed ELF file of symbols (MiniDebugInfo),
 * which libdwfl decompresses whole when the file has no .symtab.
 * Decompressed here, no further than ELFBOUND_INFLATE_MAX, and what its
 * own symbol tables would cost measured too.
 */
static void debugdata(int fd, const GElf_Shdr *sh, struct elfbound *eb)
{
	lzma_stream z = LZMA_STREAM_INIT;
	uint64_t at = 0, got = TOO_MUCH;
	struct elfbound in = { 0 };
	lzma_ret rc = LZMA_OK;
	uint8_t buf[65536], *out = NULL;
	ssize_t n;
	Elf *elf;

	if (sh->sh_type == SHT_NOBITS)
		return;
	/* its pages are taken as they are written */
	out = sh->sh_size > ELFBOUND_INFLATE_MAX ? NULL :
	      malloc(ELFBOUND_INFLATE_MAX);
	if (!out || lzma_auto_decoder(&z, XZ_MEMLIMIT, 0) != LZMA_OK)
		goto out;
	while (rc == LZMA_OK) {
		if (!z.avail_in && at < sh->sh_size) {
			n = pread(fd, buf, sh->sh_size - at < sizeof(buf) ?
				  sh->sh_size - at : sizeof(buf),
				  (off_t)(sh->sh_offset + at));
			if (n <= 0)
				break;
			at += n;
			z.next_in = buf;
			z.avail_in = n;
		}
		if (z.total_out == ELFBOUND_INFLATE_MAX)
			goto out;
		z.next_out = out + z.total_out;
		z.avail_out = ELFBOUND_INFLATE_MAX - z.total_out;
		rc = lzma_code(&z, at < sh->sh_size ? LZMA_RUN : LZMA_FINISH);
	}
	/* what libdwfl decompresses before it fails too */
	got = z.total_out;
	elf = rc == LZMA_STREAM_END ? elf_memory((char *)out, got) : NULL;
	if (elf) {
		measure(elf, -1, &in);
		elf_end(elf);
	}
out:
	lzma_end(&z);
	free(out);
	eb->sym_inflated = add_sat(add_sat(eb->sym_inflated, got),
				   in.sym_inflated);
	eb->symbols = in.symbols > eb->symbols ? in.symbols : eb->symbols;
	eb->names = in.names > eb->names ? in.names : eb->names;
	if (in.section_names > eb->section_names)
		eb->section_names = in.section_names;
}

/*
 * elf's sections into eb; with fd (not -1), its .gnu_debugdata too if it
 * has no .symtab (libdwfl reads it only then).
 */
static void measure(Elf *elf, int fd, struct elfbound *eb)
{
	bool symtab = false, dd = false;
	GElf_Shdr sh, dd_sh;
	const char *name;
	size_t shstrndx;
	Elf_Scn *scn;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return;
	/* elf_strptr() below reads the section names whole */
	scn = elf_getscn(elf, shstrndx);
	if (scn && !gelf_getshdr(scn, &sh))
		sh.sh_size = UINT64_MAX;
	if (scn && sh.sh_size > ELFBOUND_SHSTRTAB_MAX) {
		eb->section_names = sh.sh_size;
		eb->inflated = TOO_MUCH;
		return;
	}
	scn = NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &sh))
			continue;
		eb->inflated = add_sat(eb->inflated,
				       section_inflated(elf, &sh, shstrndx));
		if (sh.sh_type == SHT_SYMTAB_SHNDX)
			eb->sym_inflated = add_sat(eb->sym_inflated,
				section_inflated(elf, &sh, shstrndx));
		if (sh.sh_type == SHT_SYMTAB || sh.sh_type == SHT_DYNSYM)
			symbol_table(elf, &sh, shstrndx, eb);
		symtab |= sh.sh_type == SHT_SYMTAB;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (!dd && name && !strcmp(name, ".gnu_debugdata")) {
			dd = true;
			dd_sh = sh;
		}
	}
	if (fd >= 0 && dd && !symtab)
		debugdata(fd, &dd_sh, eb);
}

/* x, the file's, translated by libelf; false if it cannot be read */
static bool read_xlate(int fd, off_t at, void *x, size_t len, Elf_Type type,
		       const unsigned char *ident)
{
	unsigned char raw[64];
	Elf_Data src = { .d_buf = raw, .d_type = type, .d_size = len,
			 .d_version = EV_CURRENT };
	Elf_Data dst = { .d_buf = x, .d_type = type, .d_size = len,
			 .d_version = EV_CURRENT };

	if (len > sizeof(raw) || pread(fd, raw, len, at) != (ssize_t)len)
		return false;
	return ident[EI_CLASS] == ELFCLASS64 ?
	       elf64_xlatetom(&dst, &src, ident[EI_DATA]) != NULL :
	       elf32_xlatetom(&dst, &src, ident[EI_DATA]) != NULL;
}

/*
 * elf_begin() sets up every section's header (more than 200 bytes each),
 * and a sparse file of a few KiB on disk can claim millions.
 */
uint64_t elfbound_headers(int fd)
{
	unsigned char ident[EI_NIDENT];
	uint64_t shnum, phnum, shoff;
	Elf64_Ehdr e64;
	Elf32_Ehdr e32;
	Elf64_Shdr s64;
	Elf32_Shdr s32;
	bool wide;

	if (pread(fd, ident, sizeof(ident), 0) != sizeof(ident) ||
	    memcmp(ident, ELFMAG, SELFMAG) ||
	    (ident[EI_CLASS] != ELFCLASS32 && ident[EI_CLASS] != ELFCLASS64))
		return 0;
	wide = ident[EI_CLASS] == ELFCLASS64;
	if (wide ? !read_xlate(fd, 0, &e64, sizeof(e64), ELF_T_EHDR, ident) :
		   !read_xlate(fd, 0, &e32, sizeof(e32), ELF_T_EHDR, ident))
		return 0;
	shnum = wide ? e64.e_shnum : e32.e_shnum;
	phnum = wide ? e64.e_phnum : e32.e_phnum;
	shoff = wide ? e64.e_shoff : e32.e_shoff;
	/* past 0xff00 and PN_XNUM, the counts are in the first section's */
	if (shoff && (!shnum || phnum == PN_XNUM)) {
		if (wide ? !read_xlate(fd, shoff, &s64, sizeof(s64),
				       ELF_T_SHDR, ident) :
			   !read_xlate(fd, shoff, &s32, sizeof(s32),
				       ELF_T_SHDR, ident))
			return 0;
		if (!shnum)
			shnum = wide ? s64.sh_size : s32.sh_size;
		if (phnum == PN_XNUM)
			phnum = wide ? s64.sh_info : s32.sh_info;
	}
	return shnum > phnum ? shnum : phnum;
}

void elfbound_measure(int fd, struct elfbound *eb)
{
	uint64_t n;
	Elf *elf;

	memset(eb, 0, sizeof(*eb));
	if (elf_version(EV_CURRENT) == EV_NONE)
		return;
	n = elfbound_headers(fd);
	if (n > ELFBOUND_HEADERS_MAX) {
		eb->headers = n;
		eb->inflated = TOO_MUCH;
		return;
	}
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf)
		return;
	measure(elf, fd, eb);
	elf_end(elf);
}

uint64_t elfbound_inflated(int fd)
{
	struct elfbound eb;

	elfbound_measure(fd, &eb);
	return eb.inflated;
}

bool elfbound_refused(const char *why)
{
	return why && strstr(why, ELFBOUND_PAST);
}

void elfbound_symbols_why(uint64_t n, char *why, size_t size)
{
	snprintf(why, size, "%llu symbols in one table, " ELFBOUND_PAST " %llu",
		 (unsigned long long)n, ELFBOUND_SYMBOLS_MAX);
}

bool elfbound_symbols_fit(const struct elfbound *eb, char *why, size_t size)
{
	char buf[128];

	if (!why) {
		why = buf;
		size = sizeof(buf);
	}
	if (eb->headers > ELFBOUND_HEADERS_MAX)
		snprintf(why, size, "%llu section or program headers, " ELFBOUND_PAST " %llu",
			 (unsigned long long)eb->headers,
			 ELFBOUND_HEADERS_MAX);
	else if (eb->section_names > ELFBOUND_SHSTRTAB_MAX)
		snprintf(why, size, "its section names take %llu MiB, " ELFBOUND_PAST " %llu MiB",
			 (unsigned long long)(eb->section_names >> 20),
			 ELFBOUND_SHSTRTAB_MAX >> 20);
	else if (eb->sym_inflated > TOO_MUCH)
		snprintf(why, size, "its symbol tables decompress to %llu MiB, " ELFBOUND_PAST " %llu MiB",
			 (unsigned long long)(eb->sym_inflated >> 20),
			 ELFBOUND_INFLATE_MAX >> 20);
	else if (eb->sym_inflated > ELFBOUND_INFLATE_MAX)
		snprintf(why, size, "its symbol tables decompress " ELFBOUND_PAST " %llu MiB",
			 ELFBOUND_INFLATE_MAX >> 20);
	else if (eb->symbols > ELFBOUND_SYMBOLS_MAX)
		elfbound_symbols_why(eb->symbols, why, size);
	else if (eb->names > ELFBOUND_NAMES_MAX)
		snprintf(why, size, "a symbol table's names take %llu MiB, " ELFBOUND_PAST " %llu MiB",
			 (unsigned long long)(eb->names >> 20),
			 ELFBOUND_NAMES_MAX >> 20);
	else
		return true;
	return false;
}
