// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * pyrt - a CPython interpreter's layout, from its ELF file.  See pyrt.h.
 */
#include <gelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#include <sys/vfs.h>

#include <linux/magic.h>

#include "lib/elfbound.h"
#include "python/pyrt.h"

/*
 * The layouts of the minor versions, x86_64: 3.11 from Debian 12's
 * python3.11 (3.11.2) and its debug information, 3.12 from a 3.12.1 build;
 * 3.13 and later carry theirs in _Py_DebugOffsets, read below.
 */
static const struct pyrt layout_311 = {
	.tstate_current = 576, .interp_gil = PYRT_NONE, .gil_holder = PYRT_NONE,
	.interp_head = 40, .interp_next = 0, .threads_head = 16,
	.ts_next = 8, .ts_native_tid = 160, .ts_cframe = 56,
	.ts_frame = PYRT_NONE, .cframe_current = 8,
	.fr_code = 32, .fr_previous = 48, .fr_instr = 56, .fr_owner = 69,
	.fr_is_entry = 68,
	.code_firstlineno = 72, .code_filename = 112, .code_name = 120,
	.code_qualname = 128, .code_linetable = 136, .code_adaptive = 184,
	.str_ascii_data = 48, .str_compact_data = 72,
};

static const struct pyrt layout_312 = {
	.tstate_current = PYRT_NONE, .interp_gil = 384, .gil_holder = 8,
	.interp_head = 40, .interp_next = 0, .threads_head = 72,
	.ts_next = 8, .ts_native_tid = 144, .ts_cframe = 56,
	.ts_frame = PYRT_NONE, .cframe_current = 0,
	.fr_code = 0, .fr_previous = 8, .fr_instr = 56, .fr_owner = 70,
	.fr_is_entry = PYRT_NONE,
	.code_firstlineno = 68, .code_filename = 112, .code_name = 120,
	.code_qualname = 128, .code_linetable = 136, .code_adaptive = 192,
	.str_ascii_data = 40, .str_compact_data = 56,
};

/* _Py_DebugOffsets (3.13): where each field's offset is, all u64 */
enum {
	DBG_COOKIE = 0, DBG_VERSION = 8,
	DBG_INTERP_HEAD = 40,
	DBG_INTERP_NEXT = 64, DBG_THREADS_HEAD = 72,
	DBG_INTERP_GIL = 112, DBG_GIL_STATE = 120, DBG_GIL_HOLDER = 144,
	DBG_TS_NEXT = 168, DBG_TS_FRAME = 184, DBG_TS_NATIVE_TID = 200,
	DBG_FR_PREVIOUS = 232, DBG_FR_CODE = 240, DBG_FR_INSTR = 248,
	DBG_FR_OWNER = 264,
	DBG_CODE_FILENAME = 280, DBG_CODE_NAME = 288, DBG_CODE_QUALNAME = 296,
	DBG_CODE_LINETABLE = 304, DBG_CODE_FIRSTLINENO = 312,
	DBG_CODE_ADAPTIVE = 344,
	DBG_STR_ASCII_SIZE = 560,
	DBG_SIZE = 568,
};

/*
 * The most bytes of dynamic symbols read (libpython has some 600 KB): the
 * file is whatever a process mapped.
 */
#define DYNSYM_MAX	(64u << 20)
/* and of their names (libpython's: some 400 KB) */
#define DYNSTR_MAX	(16u << 20)

/*
 * A defined dynamic symbol's value, or 0.  The first SHT_DYNSYM only (an
 * ELF file has one; a hostile one could list the same bytes many times),
 * its string table bounded too: libelf reads each whole.  The table must
 * end in a NUL, and a name is taken at its offset: elf_strptr() would
 * search the table from there for one, each time, which for a table of
 * 16 MiB without another and a million symbols takes the better part of
 * an hour.
 */
static uint64_t dynsym(Elf *elf, const char *name)
{
	Elf_Scn *scn = NULL, *str;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh, ss;
		Elf_Data *d, *sd;
		const char *names;
		size_t i, n;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNSYM)
			continue;
		str = elf_getscn(elf, sh.sh_link);
		if (!sh.sh_entsize || sh.sh_size > DYNSYM_MAX || !str ||
		    !gelf_getshdr(str, &ss) || ss.sh_type != SHT_STRTAB ||
		    ss.sh_size > DYNSTR_MAX)
			return 0;
		sd = elf_getdata(str, NULL);
		names = sd ? sd->d_buf : NULL;
		if (!names || !sd->d_size || names[sd->d_size - 1])
			return 0;
		d = elf_getdata(scn, NULL);
		n = d ? d->d_size / sh.sh_entsize : 0;
		for (i = 0; i < n; i++) {
			GElf_Sym sym;

			if (!gelf_getsym(d, (int)i, &sym) ||
			    sym.st_shndx == SHN_UNDEF ||
			    sym.st_name >= sd->d_size)
				continue;
			if (!strcmp(names + sym.st_name, name))
				return sym.st_value;
		}
		return 0;
	}
	return 0;
}

/*
 * p_vaddr - p_offset of the file's executable segments into *delta: false
 * if it has none, or two that disagree (a process's one mapping of its
 * code would not say where the rest is).
 */
static bool text_delta(Elf *elf, uint64_t *delta)
{
	bool found = false;
	size_t i, n;

	if (elf_getphdrnum(elf, &n))
		return false;
	for (i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD ||
		    !(ph.p_flags & PF_X))
			continue;
		if (found && *delta != ph.p_vaddr - ph.p_offset)
			return false;
		*delta = ph.p_vaddr - ph.p_offset;
		found = true;
	}
	return found;
}

/* size bytes of the file at link-time address vaddr, or false. */
static bool read_at(Elf *elf, uint64_t vaddr, void *buf, size_t size)
{
	size_t i, n;

	if (elf_getphdrnum(elf, &n))
		return false;
	for (i = 0; i < n; i++) {
		Elf_Data *d;
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD ||
		    vaddr < ph.p_vaddr || vaddr - ph.p_vaddr > ph.p_filesz ||
		    ph.p_filesz - (vaddr - ph.p_vaddr) < size)
			continue;
		d = elf_getdata_rawchunk(elf, (int64_t)(ph.p_offset +
							(vaddr - ph.p_vaddr)),
					 size, ELF_T_BYTE);
		if (!d || d->d_size != size)
			return false;
		memcpy(buf, d->d_buf, size);
		return true;
	}
	return false;
}

static uint64_t u64_at(const unsigned char *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/* 3.13's own offsets; false if they are not there or not plausible. */
static bool from_debug_offsets(Elf *elf, struct pyrt *rt)
{
	static const struct { size_t at; size_t field; } map[] = {
#define F(dbg, f)	{ dbg, offsetof(struct pyrt, f) }
		F(DBG_INTERP_HEAD, interp_head),
		F(DBG_INTERP_NEXT, interp_next),
		F(DBG_THREADS_HEAD, threads_head),
		F(DBG_INTERP_GIL, interp_gil),
		F(DBG_TS_NEXT, ts_next),
		F(DBG_TS_FRAME, ts_frame),
		F(DBG_TS_NATIVE_TID, ts_native_tid),
		F(DBG_FR_PREVIOUS, fr_previous),
		F(DBG_FR_CODE, fr_code),
		F(DBG_FR_INSTR, fr_instr),
		F(DBG_FR_OWNER, fr_owner),
		F(DBG_CODE_FILENAME, code_filename),
		F(DBG_CODE_NAME, code_name),
		F(DBG_CODE_QUALNAME, code_qualname),
		F(DBG_CODE_LINETABLE, code_linetable),
		F(DBG_CODE_FIRSTLINENO, code_firstlineno),
		F(DBG_CODE_ADAPTIVE, code_adaptive),
		F(DBG_STR_ASCII_SIZE, str_ascii_data),
#undef F
	};
	unsigned char d[DBG_SIZE];
	uint64_t state, holder;
	size_t i;

	if (!read_at(elf, rt->runtime, d, sizeof(d)) ||
	    memcmp(d + DBG_COOKIE, "xdebugpy", 8) ||
	    u64_at(d + DBG_VERSION) != rt->version)
		return false;
	for (i = 0; i < sizeof(map) / sizeof(map[0]); i++) {
		uint64_t v = u64_at(d + map[i].at);

		/* offsets into structures of at most a few pages */
		if (v >= PYRT_NONE)
			return false;
		memcpy((char *)rt + map[i].field, &(uint16_t){ (uint16_t)v },
		       sizeof(uint16_t));
	}
	/* the holder's offset in the GIL (the state is the GIL itself) */
	state = u64_at(d + DBG_GIL_STATE);
	holder = u64_at(d + DBG_GIL_HOLDER);
	if (holder < state || holder - state >= PYRT_NONE)
		return false;
	rt->gil_holder = (uint16_t)(holder - state);
	rt->tstate_current = PYRT_NONE;
	rt->ts_cframe = PYRT_NONE;
	rt->cframe_current = PYRT_NONE;
	rt->fr_is_entry = PYRT_NONE;
	/* sizeof(PyCompactUnicodeObject): the ASCII header and 16 bytes */
	rt->str_compact_data = rt->str_ascii_data + 16;
	return true;
}

int pyrt_detect(Elf *elf, struct pyrt *rt, const char **why)
{
	uint64_t runtime, code_type, version_at, version = 0;

	*why = NULL;
	memset(rt, 0, sizeof(*rt));
	if (elf_kind(elf) != ELF_K_ELF) {
		*why = "not an ELF file";
		return -1;
	}
	runtime = dynsym(elf, "_PyRuntime");
	code_type = dynsym(elf, "PyCode_Type");
	version_at = dynsym(elf, "Py_Version");
	if (!runtime || !code_type)
		return 0;
	if (!version_at || !read_at(elf, version_at, &version, 4)) {
		*why = "CPython before 3.11 (no Py_Version)";
		return 0;
	}
	switch ((version >> 16) & 0xffff) {
	case 0x030b:
		*rt = layout_311;
		break;
	case 0x030c:
		*rt = layout_312;
		break;
	case 0x030d:
		rt->version = (uint32_t)version;
		rt->runtime = runtime;
		if (from_debug_offsets(elf, rt))
			break;
		*why = "a CPython 3.13 without its debug offsets";
		return 0;
	default:
		/* 3.14 tags frames' code pointers, numbers owners anew */
		*why = "a CPython version whose layout is not known";
		return 0;
	}
	rt->version = (uint32_t)version;
	rt->runtime = runtime;
	rt->code_type = code_type;
	if (!text_delta(elf, &rt->text_delta)) {
		*why = "a CPython whose executable segments are not one piece";
		return 0;
	}
	return 1;
}

int pyrt_detect_fd(int fd, struct pyrt *rt, const char **why)
{
	struct statfs fs;
	Elf *elf;
	int ret;

	memset(rt, 0, sizeof(*rt));
	if (elf_version(EV_CURRENT) == EV_NONE) {
		*why = "libelf is too old";
		return -1;
	}
	/* read in this process: a user's file system could hold it for ever */
	if (fstatfs(fd, &fs) || fs.f_type == FUSE_SUPER_MAGIC) {
		*why = "a file on FUSE (or of no known file system): not read";
		return -1;
	}
	/* libelf would set up every one (elfbound.h) */
	if (elfbound_headers(fd) > ELFBOUND_HEADERS_MAX) {
		*why = "more section or program headers than cprof-dump reads";
		return -1;
	}
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf) {
		*why = "not an ELF file";
		return -1;
	}
	ret = pyrt_detect(elf, rt, why);
	elf_end(elf);
	return ret;
}

_Static_assert(PYRT_NONE == CPROF_UPY_NONE &&
	       PYRT_OWNED_BY_CSTACK == CPROF_UPY_OWNED_BY_CSTACK,
	       "pyrt's offsets are the module's");

void pyrt_upy(const struct pyrt *rt, struct cprof_upy *upy)
{
	*upy = (struct cprof_upy){
		.runtime = rt->runtime - rt->text_delta,
		.code_type = rt->code_type - rt->text_delta,
		.version = rt->version,
		.tstate_current = rt->tstate_current,
		.interp_gil = rt->interp_gil,
		.gil_holder = rt->gil_holder,
		.interp_head = rt->interp_head,
		.interp_next = rt->interp_next,
		.threads_head = rt->threads_head,
		.ts_next = rt->ts_next,
		.ts_native_tid = rt->ts_native_tid,
		.ts_cframe = rt->ts_cframe,
		.ts_frame = rt->ts_frame,
		.cframe_current = rt->cframe_current,
		.fr_code = rt->fr_code,
		.fr_previous = rt->fr_previous,
		.fr_instr = rt->fr_instr,
		.fr_owner = rt->fr_owner,
		.fr_is_entry = rt->fr_is_entry,
		.code_firstlineno = rt->code_firstlineno,
		.code_adaptive = rt->code_adaptive,
		.code_qualname = rt->code_qualname,
		.code_filename = rt->code_filename,
		.code_linetable = rt->code_linetable,
	};
}

bool pyrt_str_layout(uint32_t version, struct pyrt *rt)
{
	switch ((version >> 16) & 0xffff) {
	case 0x030b:
		rt->str_ascii_data = layout_311.str_ascii_data;
		rt->str_compact_data = layout_311.str_compact_data;
		return true;
	case 0x030c:
	case 0x030d:
		/* 3.13's _Py_DebugOffsets say the same */
		rt->str_ascii_data = layout_312.str_ascii_data;
		rt->str_compact_data = layout_312.str_compact_data;
		return true;
	}
	return false;
}
