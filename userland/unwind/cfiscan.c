// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * cfiscan - the first half of compiling a file's call frame information
 * (cfi.c says how the whole works): its executable segments, its CFI
 * sections, and the list of its FDEs, each decoded and checked before
 * libdw runs any.
 *
 * libdw finds the FDE for an address itself, so a check of the FDE asked
 * about is not enough: every CIE and FDE of the section is decoded here
 * first, and one that does not decode, names a register past CFI_REG_MAX,
 * nests remember_state past CFI_STATE_MAX or holds a number longer than
 * CFI_LEB_MAX bytes refuses the file, and so does an .eh_frame_hdr table
 * entry (libdw's index) naming anything but a checked FDE.  Compilers and
 * linkers emit none of these.
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <gelf.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "unwind/cfi_ctx.h"
#include "lib/elfbound.h"

/* x86-64's DWARF registers end at 130 (the psABI); 255 leaves room */
#define CFI_REG_MAX	255
#define CFI_STATE_MAX	64		/* remember_state nesting */
/* LEB128 numbers past 9 bytes are read differently by libdw: refused */
#define CFI_LEB_MAX	9

#ifndef SHT_X86_64_UNWIND
#define SHT_X86_64_UNWIND	0x70000001
#endif

static const char *const src_name[NR_SRC] = { ".eh_frame", ".debug_frame" };

/* How a CIE's FDEs encode their address range. */
struct cie_info {
	Dwarf_Off off;
	bool known;			/* off was looked at */
	bool usable;
	uint8_t enc;			/* DW_EH_PE_* */
	uint8_t size;			/* bytes of an absptr */
	bool sized_aug;			/* 'z': FDEs have augmentation data */
	bool safe;			/* its instructions pass program_safe() */
};

/* ---- ELF: segments and sections ---- */

static int seg_cmp(const void *a, const void *b)
{
	const struct seg *x = a, *y = b;

	return x->offset < y->offset ? -1 : x->offset > y->offset;
}

int cfi_scan_segments(struct ctx *c)
{
	size_t n, i;

	if (elf_getphdrnum(c->elf, &n))
		return cfi_fail(c, "cannot read the program headers: %s",
				elf_errmsg(-1));
	for (i = 0; i < n; i++) {
		GElf_Phdr ph;
		struct seg *s;

		if (!gelf_getphdr(c->elf, (int)i, &ph))
			return cfi_fail(c, "cannot read program header %zu: %s",
					i, elf_errmsg(-1));
		if (ph.p_type != PT_LOAD || !(ph.p_flags & PF_X) ||
		    !ph.p_filesz)
			continue;
		if (ph.p_offset > UINT32_MAX ||
		    ph.p_filesz > UINT32_MAX - ph.p_offset)
			return cfi_fail(c, "executable segment beyond 4 GiB of the file");
		/* no code past the end of the file: its rows would be air */
		if (ph.p_offset >= c->fsize)
			continue;
		if (ph.p_filesz > c->fsize - ph.p_offset)
			ph.p_filesz = c->fsize - ph.p_offset;
		if (ph.p_vaddr + ph.p_filesz < ph.p_vaddr)
			return cfi_fail(c, "malformed program header %zu", i);
		if (c->nseg == MAX_SEGS)
			return cfi_fail(c, "more than %d executable segments",
					MAX_SEGS);
		s = &c->seg[c->nseg++];
		s->vaddr = ph.p_vaddr;
		s->end = ph.p_vaddr + ph.p_filesz;
		s->offset = ph.p_offset;
	}
	if (!c->nseg)
		return cfi_fail(c, "no executable segment");
	qsort(c->seg, c->nseg, sizeof(c->seg[0]), seg_cmp);
	return 0;
}

static const struct seg *seg_of(const struct ctx *c, uint64_t vaddr)
{
	int i;

	for (i = 0; i < c->nseg; i++)
		if (vaddr >= c->seg[i].vaddr && vaddr < c->seg[i].end)
			return &c->seg[i];
	return NULL;
}

/* The .eh_frame and .debug_frame sections with contents, NULL if none. */
int cfi_scan_sections(struct ctx *c, Elf_Scn *scn_of[NR_SRC])
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	scn_of[SRC_EH] = scn_of[SRC_DEBUG] = NULL;
	if (elf_getshdrstrndx(c->elf, &shstrndx))
		return cfi_fail(c, "cannot read the section headers: %s",
				elf_errmsg(-1));
	while ((scn = elf_nextscn(c->elf, scn))) {
		const char *name;
		GElf_Shdr sh;
		int s;

		if (!gelf_getshdr(scn, &sh))
			continue;
		if ((sh.sh_type != SHT_PROGBITS &&
		     sh.sh_type != SHT_X86_64_UNWIND) || !sh.sh_size)
			continue;
		name = elf_strptr(c->elf, shstrndx, sh.sh_name);
		if (!name)
			continue;
		if (!strncmp(name, ".plt", 4) && c->nplt < 4 &&
		    sh.sh_addr + sh.sh_size > sh.sh_addr) {
			c->plt_lo[c->nplt] = sh.sh_addr;
			c->plt_hi[c->nplt++] = sh.sh_addr + sh.sh_size;
		}
		for (s = 0; s < NR_SRC; s++)
			if (!scn_of[s] && !strcmp(name, src_name[s]))
				scn_of[s] = scn;
		/* binutils' older compression: .zdebug_frame */
		if (!scn_of[SRC_DEBUG] && !strcmp(name, ".zdebug_frame"))
			scn_of[SRC_DEBUG] = scn;
		if (!c->eh_hdr && !strcmp(name, ".eh_frame_hdr"))
			c->eh_hdr = scn;
	}
	return 0;
}

/* ---- FDE address ranges ---- */

static uint64_t read_le(const uint8_t *p, int n)
{
	uint64_t v = 0;
	int i;

	for (i = n - 1; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

/*
 * One pointer encoded as enc at *p (before end), which is at address
 * field: the fixed-size formats, absolute or pc-relative.  size is the
 * size of DW_EH_PE_absptr.  0 and *p past it, or -1.
 */
static int read_encoded(const uint8_t **p, const uint8_t *end, uint8_t enc,
			int size, uint64_t field, uint64_t *out)
{
	uint64_t v;
	int n;

	switch (enc & 0x0f) {
	case DW_EH_PE_absptr:
		n = size;
		break;
	case DW_EH_PE_udata2:
	case DW_EH_PE_sdata2:
		n = 2;
		break;
	case DW_EH_PE_udata4:
	case DW_EH_PE_sdata4:
		n = 4;
		break;
	case DW_EH_PE_udata8:
	case DW_EH_PE_sdata8:
		n = 8;
		break;
	default:
		return -1;
	}
	if (end - *p < n)
		return -1;
	v = read_le(*p, n);
	if ((enc & DW_EH_PE_signed) && n < 8 && (v >> (8 * n - 1)) & 1)
		v |= ~0ULL << (8 * n);
	switch (enc & 0xf0) {
	case DW_EH_PE_absptr:
		break;
	case DW_EH_PE_pcrel:
		v += field;
		break;
	default:			/* indirect, datarel, ...: not here */
		return -1;
	}
	*p += n;
	*out = v;
	return 0;
}

/* A ULEB128 number; -1 if it runs past end or CFI_LEB_MAX bytes. */
static int read_uleb128(const uint8_t **p, const uint8_t *end, uint64_t *out)
{
	uint64_t v = 0;
	unsigned int shift = 0;

	while (*p < end) {
		uint8_t b = *(*p)++;

		if (shift >= 7 * CFI_LEB_MAX)
			return -1;
		v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
		if (!(b & 0x80)) {
			*out = v;
			return 0;
		}
	}
	return -1;
}

/* Skips a LEB128 number (signed or not); -1 as read_uleb128(). */
static int skip_leb128(const uint8_t **p, const uint8_t *end)
{
	uint64_t v;

	return read_uleb128(p, end, &v);
}

/* A register operand: a ULEB128 number no larger than CFI_REG_MAX. */
static bool reg_ok(const uint8_t **p, const uint8_t *end)
{
	uint64_t reg;

	return !read_uleb128(p, end, &reg) && reg <= CFI_REG_MAX;
}

/* A DW_FORM_block operand (a ULEB128 length, then that many bytes). */
static bool block_ok(const uint8_t **p, const uint8_t *end)
{
	uint64_t len;

	if (read_uleb128(p, end, &len) || len > (uint64_t)(end - *p))
		return false;
	*p += len;
	return true;
}

/*
 * Whether libdw may execute the CFA instructions [p, end): each decodes,
 * names no register past CFI_REG_MAX, and remember_state nests at most
 * CFI_STATE_MAX deep.  enc and size read DW_CFA_set_loc's address.
 */
static bool program_safe(const uint8_t *p, const uint8_t *end, uint8_t enc,
			 int size)
{
	unsigned int depth = 0;
	uint64_t v;

	while (p < end) {
		uint8_t op = *p++;
		bool ok = true;

		switch (op & 0xc0) {
		case DW_CFA_advance_loc:
			continue;
		case DW_CFA_offset:	/* register in the low 6 bits */
			ok = !read_uleb128(&p, end, &v);
			break;
		case DW_CFA_restore:
			continue;
		default:
			switch (op) {
			case DW_CFA_nop:
			case DW_CFA_GNU_window_save:
				break;
			case DW_CFA_set_loc:
				ok = !read_encoded(&p, end, enc, size, 0, &v);
				break;
			case DW_CFA_advance_loc1:
			case DW_CFA_advance_loc2:
			case DW_CFA_advance_loc4:
				v = op == DW_CFA_advance_loc1 ? 1 :
				    op == DW_CFA_advance_loc2 ? 2 : 4;
				ok = v <= (uint64_t)(end - p);
				p += ok ? v : 0;
				break;
			case DW_CFA_MIPS_advance_loc8:
				ok = 8 <= end - p;
				p += ok ? 8 : 0;
				break;
			case DW_CFA_remember_state:
				ok = ++depth <= CFI_STATE_MAX;
				break;
			case DW_CFA_restore_state:
				depth -= depth > 0;
				break;
			case DW_CFA_def_cfa_offset:
			case DW_CFA_def_cfa_offset_sf:
			case DW_CFA_GNU_args_size:
				ok = !skip_leb128(&p, end);
				break;
			case DW_CFA_def_cfa_expression:
				ok = block_ok(&p, end);
				break;
			case DW_CFA_restore_extended:
			case DW_CFA_undefined:
			case DW_CFA_same_value:
			case DW_CFA_def_cfa_register:
				ok = reg_ok(&p, end);
				break;
			case DW_CFA_register:
				ok = reg_ok(&p, end) && reg_ok(&p, end);
				break;
			case DW_CFA_offset_extended:
			case DW_CFA_offset_extended_sf:
			case DW_CFA_def_cfa:
			case DW_CFA_def_cfa_sf:
			case DW_CFA_val_offset:
			case DW_CFA_val_offset_sf:
			case DW_CFA_GNU_negative_offset_extended:
				ok = reg_ok(&p, end) && !skip_leb128(&p, end);
				break;
			case DW_CFA_expression:
			case DW_CFA_val_expression:
				ok = reg_ok(&p, end) && block_ok(&p, end);
				break;
			default:	/* libdw would not run it either */
				ok = false;
			}
		}
		if (!ok)
			return false;
	}
	return true;
}

/* The 'R' encoding from a .eh_frame CIE's augmentation; -1 if not known. */
static int eh_fde_encoding(const Dwarf_CIE *cie, uint8_t *enc)
{
	const uint8_t *p = cie->augmentation_data;
	const uint8_t *end = p ? p + cie->augmentation_data_size : NULL;
	const char *a = cie->augmentation;
	int i;

	*enc = DW_EH_PE_absptr;
	if (!a || !a[0])
		return 0;
	if (a[0] != 'z' || !p)
		return -1;	/* "eh" and other pre-'z' forms */
	for (i = 1; a[i] && i < 16; i++) {
		uint8_t penc;
		uint64_t dummy;

		switch (a[i]) {
		case 'L':		/* LSDA encoding */
			if (p >= end)
				return -1;
			p++;
			break;
		case 'P':		/* personality: encoding, pointer */
			if (p >= end)
				return -1;
			penc = *p++;
			/* libdw sizes a LEB128 personality differently */
			if (read_encoded(&p, end, penc & 0x0f, 8, 0, &dummy))
				return -1;
			break;
		case 'R':
			if (p >= end)
				return -1;
			*enc = *p;
			return 0;
		case 'S':		/* signal frame: libdw's signalp */
		case 'B':
		case 'G':
			break;
		default:
			return -1;
		}
	}
	return a[i] ? -1 : 0;
}

/*
 * .debug_frame: FDE addresses are absolute, address_size bytes: 8 but for
 * a version 4 CIE that says otherwise.  The raw CIE at off, bounded by d.
 */
static int debug_addr_size(const Elf_Data *d, Dwarf_Off off, uint8_t *size)
{
	const uint8_t *p = (const uint8_t *)d->d_buf + off;
	const uint8_t *end = (const uint8_t *)d->d_buf + d->d_size;
	const uint8_t *nul;
	uint64_t len;

	*size = 8;
	if (off >= d->d_size || end - p < 4)
		return -1;
	len = read_le(p, 4);
	p += 4;
	if (len == 0xffffffff) {
		if (end - p < 8)
			return -1;
		len = read_le(p, 8);
		p += 8;
		if (len > (uint64_t)(end - p))
			return -1;
		end = p + len;
		p += 8;			/* CIE id */
	} else {
		if (len > (uint64_t)(end - p))
			return -1;
		end = p + len;
		p += 4;
	}
	if (p >= end)
		return -1;
	if (*p++ != 4)
		return 0;		/* versions 1 and 3: the ELF's 8 */
	nul = memchr(p, 0, end - p);
	if (!nul || end - nul < 3)
		return -1;
	*size = nul[1];
	if (nul[2] != 0 || (*size != 4 && *size != 8))
		return -1;		/* segmented, or not an address */
	return 0;
}

static int cie_info(struct ctx *c, const Elf_Data *d, bool eh, Dwarf_Off off,
		    struct cie_info *ci)
{
	Dwarf_CFI_Entry e;
	Dwarf_Off next;

	if (ci->known && ci->off == off)
		return ci->usable ? 0 : -1;
	ci->known = true;
	ci->off = off;
	ci->usable = false;
	ci->enc = DW_EH_PE_absptr;
	ci->size = 8;
	if (dwarf_next_cfi(c->ident, (Elf_Data *)d, eh, off, &next, &e) != 0 ||
	    !dwarf_cfi_cie_p(&e))
		return -1;
	/* libdw takes 'R' from a .debug_frame CIE too */
	if (eh_fde_encoding(&e.cie, &ci->enc) ||
	    (!eh && debug_addr_size(d, off, &ci->size)))
		return -1;
	ci->sized_aug = e.cie.augmentation && e.cie.augmentation[0] == 'z';
	ci->safe = program_safe(e.cie.initial_instructions,
				e.cie.initial_instructions_end, ci->enc,
				ci->size);
	ci->usable = true;
	return 0;
}

static int add_fde(struct ctx *c, uint64_t lo, uint64_t len, uint64_t cost,
		   int src)
{
	const struct seg *s;
	struct fde *f;

	if (!len || lo + len < lo)
		return 0;
	s = seg_of(c, lo);
	if (!s)
		return 0;	/* not code in the file, or discarded (at 0) */
	if (c->nfde == c->fde_cap) {
		size_t cap = c->fde_cap ? c->fde_cap * 2 : 256;
		struct fde *v = reallocarray(c->fde, cap, sizeof(*v));

		if (!v)
			return cfi_fail(c, "out of memory");
		c->fde = v;
		c->fde_cap = cap;
	}
	f = &c->fde[c->nfde++];
	f->lo = lo;
	f->hi = lo + len < s->end ? lo + len : s->end;
	f->cost = cost;
	f->src = src;
	return 0;
}

static int unsafe_entry(struct ctx *c, int src, const char *what,
			Dwarf_Off off)
{
	return cfi_fail(c, "%s: the %s at offset %#llx cannot be decoded, or names a register past %d or nests remember_state past %d",
			src_name[src], what, (unsigned long long)off,
			CFI_REG_MAX, CFI_STATE_MAX);
}

/* Adds off to .eh_frame's FDE offsets, for cfi_scan_eh_hdr(). */
static int record_eh_off(struct ctx *c, uint64_t off)
{
	if (c->neh_off == c->eh_off_cap) {
		size_t cap = c->eh_off_cap ? c->eh_off_cap * 2 : 256;
		uint64_t *v = reallocarray(c->eh_off, cap, sizeof(*v));

		if (!v)
			return cfi_fail(c, "out of memory");
		c->eh_off = v;
		c->eh_off_cap = cap;
	}
	c->eh_off[c->neh_off++] = off;
	return 0;
}

static int off_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * libdw looks FDEs up through .eh_frame_hdr's table when there is one: each
 * entry must name an FDE cfi_scan_fdes() checked, or the file is refused.
 * The table as linkers write it: version 1, a pc-relative eh_frame_ptr,
 * a udata4 count, entries of two datarel sdata4 (omit: no table).
 */
int cfi_scan_eh_hdr(struct ctx *c, Elf_Scn *eh)
{
	GElf_Shdr hs, es;
	const uint8_t *p;
	Elf_Data *d;
	uint64_t n, i;

	if (!c->eh_hdr)
		return 0;
	if (!gelf_getshdr(c->eh_hdr, &hs) || !gelf_getshdr(eh, &es) ||
	    !(d = elf_getdata(c->eh_hdr, NULL)) || !d->d_buf)
		return cfi_fail(c, "cannot read .eh_frame_hdr: %s",
				elf_errmsg(-1));
	p = d->d_buf;
	if (d->d_size >= 4 && p[0] == 1 && p[3] == DW_EH_PE_omit)
		return 0;
	if (d->d_size < 12 || p[0] != 1 ||
	    p[1] != (DW_EH_PE_pcrel | DW_EH_PE_sdata4) ||
	    p[2] != DW_EH_PE_udata4 ||
	    p[3] != (DW_EH_PE_datarel | DW_EH_PE_sdata4))
		return cfi_fail(c, ".eh_frame_hdr: an encoding linkers do not write");
	n = read_le(p + 8, 4);
	if (n > (d->d_size - 12) / 8)
		return cfi_fail(c, ".eh_frame_hdr: %llu entries do not fit",
				(unsigned long long)n);
	for (i = 0; i < n; i++) {
		int32_t rel = (int32_t)read_le(p + 12 + 8 * i + 4, 4);
		uint64_t off = hs.sh_addr + (int64_t)rel - es.sh_addr;

		if (!c->neh_off ||
		    !bsearch(&off, c->eh_off, c->neh_off, sizeof(*c->eh_off),
			     off_cmp))
			return cfi_fail(c, ".eh_frame_hdr: entry %llu names no FDE of .eh_frame",
					(unsigned long long)i);
	}
	return 0;
}

/* Is sh a GNU-compressed section (.zdebug_*)? */
static bool is_zdebug(struct ctx *c, const GElf_Shdr *sh)
{
	size_t shstrndx;
	const char *name;

	if (elf_getshdrstrndx(c->elf, &shstrndx))
		return false;
	name = elf_strptr(c->elf, shstrndx, sh->sh_name);
	return name && !strncmp(name, ".zdebug", 7);
}

/* Lists the FDEs of one section; how many were found in *found. */
int cfi_scan_fdes(struct ctx *c, Elf_Scn *scn, int src, size_t *found)
{
	bool eh = src == SRC_EH;
	struct cie_info ci = { .known = false };
	Dwarf_Off off = 0, next;
	GElf_Shdr sh;
	Elf_Data *d;

	*found = 0;
	if (!gelf_getshdr(scn, &sh))
		return cfi_fail(c, "cannot read the %s header: %s",
				src_name[src], elf_errmsg(-1));
	if ((sh.sh_flags & SHF_COMPRESSED) && elf_compress(scn, 0, 0) < 0)
		return cfi_fail(c, "cannot decompress %s: %s", src_name[src],
				elf_errmsg(-1));
	d = elf_getdata(scn, NULL);
	/* libdw may have decompressed it already: the header says */
	if (d && d->d_buf && d->d_size >= 12 && is_zdebug(c, &sh) &&
	    !memcmp(d->d_buf, "ZLIB", 4)) {
		if (elf_compress_gnu(scn, 0, 0) < 0)
			return cfi_fail(c, "cannot decompress .zdebug_frame: %s",
					elf_errmsg(-1));
		d = elf_getdata(scn, NULL);
	}
	if (!d)
		return cfi_fail(c, "cannot read %s: %s", src_name[src],
				elf_errmsg(-1));
	if (!d->d_buf)
		return 0;
	while (off < d->d_size) {
		Dwarf_Off at = off;
		const uint8_t *p, *end;
		uint64_t lo, len;
		Dwarf_CFI_Entry e;
		int r;

		r = dwarf_next_cfi(c->ident, d, eh, off, &next, &e);
		if (r > 0)
			break;
		if (r < 0)
			return cfi_fail(c, "malformed %s at offset %#llx: %s",
					src_name[src], (unsigned long long)off,
					dwarf_errmsg(-1));
		if (next <= off)
			return cfi_fail(c, "malformed %s at offset %#llx",
					src_name[src], (unsigned long long)off);
		off = next;
		/* libdw picks entries itself: each one must pass */
		if (dwarf_cfi_cie_p(&e)) {
			if (cie_info(c, d, eh, at, &ci) || !ci.safe)
				return unsafe_entry(c, src, "CIE", at);
			continue;
		}
		p = e.fde.start;
		end = e.fde.end;
		if (cie_info(c, d, eh, e.fde.CIE_pointer, &ci) || !ci.safe ||
		    p < (const uint8_t *)d->d_buf || end < p ||
		    read_encoded(&p, end, ci.enc, ci.size,
				 sh.sh_addr + (p - (const uint8_t *)d->d_buf),
				 &lo) ||
		    read_encoded(&p, end, ci.enc & 0x0f, ci.size, 0, &len) ||
		    /* p is past the address range: the instructions follow */
		    (ci.sized_aug && !block_ok(&p, end)) ||
		    !program_safe(p, end, ci.enc, ci.size))
			return unsafe_entry(c, src, "FDE", at);
		(*found)++;
		if (eh && record_eh_off(c, at))
			return -1;
		if (add_fde(c, lo, len, (uint64_t)(e.fde.end - e.fde.start),
			    src))
			return -1;
	}
	return 0;
}

