/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * elfbound - what reading a file with libdw and libdwfl would cost, from
 * its section headers, before they read anything.
 *
 * libelf decompresses a compressed section whole when libdw opens a file's
 * DWARF (dwarf_begin_elf()) or libdwfl its symbol table
 * (dwfl_module_getsymtab()), and libdwfl an xz .gnu_debugdata when there
 * is no .symtab: a file of a few MiB can name gigabytes.  And
 * the symbolizer keeps an entry per symbol, so a file of millions of
 * symbols costs hundreds of MiB uncompressed.  Every reader of users'
 * files asks first (cfi.c for .debug_frame, elfsyms.c for symbols, lines
 * and inline frames, debugfind.c for separate debug files; pyrt.c and
 * cfi.c how many headers libelf would set up) and leaves alone what is
 * past a bound.
 */
#ifndef CPROF_ELFBOUND_H
#define CPROF_ELFBOUND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The most a file's compressed sections may decompress to, summed. */
#define ELFBOUND_INFLATE_MAX	(64ULL << 20)
/* The most entries a symbol table may have (some 75 bytes each, read). */
#define ELFBOUND_SYMBOLS_MAX	(1ULL << 21)
/* The largest string table of a symbol table (each name's page is read). */
#define ELFBOUND_NAMES_MAX	(128ULL << 20)
/* The largest table of section names (libelf reads it whole). */
#define ELFBOUND_SHSTRTAB_MAX	(16ULL << 20)
/* The most section or program headers (libelf keeps some 270 bytes each). */
#define ELFBOUND_HEADERS_MAX	(1ULL << 16)

struct elfbound {
	uint64_t inflated;	/* all compressed sections, decompressed */
	uint64_t sym_inflated;	/* the symbol tables', their names', and
				   .gnu_debugdata's with its own */
	uint64_t symbols;	/* entries of the largest symbol table */
	uint64_t names;		/* the largest string table of one */
	uint64_t section_names;	/* past ELFBOUND_SHSTRTAB_MAX: its size */
	uint64_t headers;	/* past ELFBOUND_HEADERS_MAX: how many */
};

/*
 * fd's compressed sections (SHF_COMPRESSED, and GNU .zdebug_*) and symbol
 * tables (SHT_SYMTAB, SHT_DYNSYM), read from their headers without
 * decompressing anything (the file is read, never mapped), but for
 * .gnu_debugdata: that is decompressed, no further than
 * ELFBOUND_INFLATE_MAX (xz streams say what they hold in an index at
 * their end, which the decoder checks only once it got there), and the
 * ELF file in it measured the same way.
 * A header that cannot be read counts as more than ELFBOUND_INFLATE_MAX,
 * and so does a file whose section names are past ELFBOUND_SHSTRTAB_MAX
 * or whose headers are past ELFBOUND_HEADERS_MAX (counted from the ELF
 * header before libelf reads them; nothing more is read of it); a file
 * libelf cannot read as ELF, as nothing.
 */
void elfbound_measure(int fd, struct elfbound *eb);

/* elfbound_measure()'s inflated */
uint64_t elfbound_inflated(int fd);

/*
 * How many section or program headers fd's ELF header claims (the more
 * of the two; 0 if it is no ELF file), read before libelf is handed the
 * file: past ELFBOUND_HEADERS_MAX, elf_begin() must not be called on it.
 */
uint64_t elfbound_headers(int fd);

/*
 * May libdwfl read the symbols of a file measured eb?  If not, false, and
 * a phrase saying which bound it passes in why (unless NULL), e.g. "its
 * symbol tables decompress to 2048 MiB, past the bound of 64 MiB".
 */
bool elfbound_symbols_fit(const struct elfbound *eb, char *why, size_t size);

/* The phrase of elfbound_symbols_fit() for a table of n symbols. */
void elfbound_symbols_why(uint64_t n, char *why, size_t size);

/*
 * What each phrase of a file left unread for a bound says, here and in
 * debugfind's for a debug file; elfbound_refused() looks for it.
 */
#define ELFBOUND_PAST	"past the bound of"

/* Is why one of those phrases: a file left unread for a bound it passes? */
bool elfbound_refused(const char *why);

#endif /* CPROF_ELFBOUND_H */
