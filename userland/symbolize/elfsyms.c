// SPDX-License-Identifier: GPL-2.0
/*
 * Symbols of user binaries, through elfutils' libdwfl: ELF .symtab/.dynsym,
 * DWARF line tables and inline frames, separate debug files (.gnu_debuglink,
 * /usr/lib/debug/.build-id/), and C++ demangling through libiberty.
 *
 * A syms_cache owns every binary it opened and every string it handed out,
 * all until syms_cache__free().  Its containers are the rest of userland's:
 * names are interned once in a strtab (strtab.c), and libiberty's hashtab
 * holds the cache's binaries, by path and build id, and per binary its
 * resolved file offsets (an offset is symbolized once however many samples
 * hit it, its frames kept in an arena) and the function index of each
 * compile unit it looked into.
 *
 * A binary of the system (cachedir_keeps(), read at its path) is first
 * looked up in the symbol cache (symcache.h), by its identity and build
 * ID, which libelf reads without touching DWARF; its entry, if its debug
 * file is still the one it was made from, serves its addresses, and the
 * file is given to libdwfl only for an address the entry lacks.  What
 * libdwfl symbolized is added to the entry when the syms_cache is freed.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <gelf.h>
#include <hashtab.h>
#include <libiberty/demangle.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/busguard.h"
#include "lib/cachedir.h"
#include "symbolize/debugfind.h"
#include "lib/elfbound.h"
#include "symbolize/elfsyms.h"
#include "lib/mapfile.h"
#include "lib/safeopen.h"
#include "lib/strtab.h"
#include "lib/util.h"
#include "symbolize/symcache.h"

/* frames kept per address; deeper inline chains lose their outer frames */
#define MAX_FRAMES	SYMCACHE_FRAMES_MAX
#define ARENA_CHUNK	(64 * 1024)
#define NOFILE_MAX	(1 << 20)	/* the kernel's default fs.nr_open */

struct arena_chunk {
	struct arena_chunk *next;
	size_t used, size;
	char data[];
};

/* the frames of one file offset, symbolized once; in the cache's arena */
struct resolved {
	uint64_t offset;
	hashval_t hash;
	int nr_frames;
	struct sym_frame frames[];
};

/*
 * an ELF function symbol; name points into the ELF file's string table.
 * 24 bytes: a table holds up to ELFBOUND_SYMBOLS_MAX of them.
 */
struct elf_sym {
	GElf_Addr addr;
	const char *name;
	uint32_t size;		/* at most UINT32_MAX */
	uint32_t ndx : 28;	/* symbol table index: the earlier wins ties */
	uint32_t rank : 4;
};
_Static_assert(ELFBOUND_SYMBOLS_MAX < 1u << 28, "elf_sym.ndx holds an index");

/* one address range of a concrete function (subprogram) in a CU */
struct func_range {
	Dwarf_Addr lo, hi;
	Dwarf_Die die;
};

/* the functions of one compile unit, sorted by address; built on first use */
struct cu_funcs {
	Dwarf_Off cu_off;
	hashval_t hash;
	struct func_range *funcs;
	size_t nr_funcs;
};

struct binary {
	struct syms_cache *cache;
	const char *path;
	const char *want_build_id;	/* hex from the stream, "" if none */
	/* the mapped file's identity: the key instead of the path */
	bool has_id;
	struct cprof_file_id id;
	hashval_t hash;			/* of the key and want_build_id */
	const char *open_path;		/* the path it was opened at */
	/* not reached (mapfile.h): the pid it was looked for through last */
	bool unreached;
	uint32_t pid;
	/* read through its process: its debug files are in its root */
	struct debugfind_root root;
	const char *build_id;		/* hex from the file, "" if none */
	const char *error;
	int mismatch;
	int has_debuginfo;

	Dwfl *dwfl;
	Dwfl_Module *mod;
	GElf_Addr bias;
	GElf_Phdr *loads;		/* PT_LOAD headers of the file */
	size_t nr_loads;
	struct elf_sym *syms;		/* function symbols by address */
	size_t nr_syms;

	htab_t cus;			/* struct cu_funcs by CU offset */
	htab_t tab;			/* struct resolved by file offset */

	/* found (mapfile.h): its stat, and where; what it would inflate to */
	struct stat st;
	bool via_path;
	struct elfbound bound;
	/* given to libdwfl (binary_load()), else its descriptor, or -1 */
	bool loaded;
	int fd;
	/* kept in the symbol cache: its key; its entry read, NULL if none */
	bool keep;
	struct symcache_key key;
	struct symcache_entry *entry;
};

struct syms_cache {
	struct symcache *disk;		/* NULL: no symbol cache */
	htab_t bins;			/* struct binary by path + build id */
	struct strtab *strs;		/* every string handed out */
	struct arena_chunk *arena;	/* struct resolved */
};

static char *debuginfo_path;	/* NULL: elfutils' default search path */

static const Dwfl_Callbacks offline_callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = debugfind_dwfl,	/* a FIFO must not hang us */
	.section_address = dwfl_offline_section_address,
	.debuginfo_path = &debuginfo_path,
};

/* Hash of a file or DIE offset; the tables' prime sizes spread it. */
static hashval_t hash_off(uint64_t x)
{
	return (hashval_t)(x ^ x >> 32) * 2654435761u;
}

static hashval_t resolved_hash(const void *e)
{
	return ((const struct resolved *)e)->hash;
}

static int resolved_eq(const void *a, const void *b)
{
	return ((const struct resolved *)a)->offset ==
	       ((const struct resolved *)b)->offset;
}

static hashval_t cu_hash(const void *e)
{
	return ((const struct cu_funcs *)e)->hash;
}

static int cu_eq(const void *a, const void *b)
{
	return ((const struct cu_funcs *)a)->cu_off ==
	       ((const struct cu_funcs *)b)->cu_off;
}

static void cu_del(void *e)
{
	free(((struct cu_funcs *)e)->funcs);
	free(e);
}

static hashval_t bin_hash(const void *e)
{
	return ((const struct binary *)e)->hash;
}

static int bin_eq(const void *a, const void *b)
{
	const struct binary *x = a, *y = b;

	if (x->hash != y->hash || x->has_id != y->has_id ||
	    strcmp(x->want_build_id, y->want_build_id))
		return 0;
	return x->has_id ? !mapfile_id_cmp(&x->id, &y->id) :
	       !strcmp(x->path, y->path);
}

static void *arena_alloc(struct syms_cache *c, size_t size, size_t align)
{
	struct arena_chunk *ch = c->arena;
	size_t off;

	if (ch) {
		off = (ch->used + align - 1) & ~(align - 1);
		if (off + size <= ch->size) {
			ch->used = off + size;
			return ch->data + off;
		}
	}
	off = size > ARENA_CHUNK / 4 ? size : ARENA_CHUNK;
	ch = malloc(sizeof(*ch) + off);
	if (!ch)
		return NULL;
	ch->size = off;
	ch->used = size;
	/* a big block gets a chunk of its own, behind the current one */
	if (size > ARENA_CHUNK / 4 && c->arena) {
		ch->next = c->arena->next;
		c->arena->next = ch;
	} else {
		ch->next = c->arena;
		c->arena = ch;
	}
	return ch->data;
}

/* Returns a copy of s that lives as long as the cache; NULL on OOM. */
static const char *intern(struct syms_cache *c, const char *s)
{
	int64_t i = strtab__intern(c->strs, s);

	return i < 0 ? NULL : strtab__get(c->strs, i);
}

/*
 * Every binary keeps its file and its debug file open until the cache is
 * freed, and a system-wide profile touches hundreds of binaries: lift the
 * soft limit on open files to the hard one, as perf does, rather than fail
 * to open them.
 */
static void raise_nofile_limit(void)
{
	struct rlimit rl;
	rlim_t lim;

	if (getrlimit(RLIMIT_NOFILE, &rl))
		return;
	lim = rl.rlim_max == RLIM_INFINITY || rl.rlim_max > NOFILE_MAX ?
	      NOFILE_MAX : rl.rlim_max;
	if (rl.rlim_cur >= lim)
		return;
	rl.rlim_cur = lim;
	setrlimit(RLIMIT_NOFILE, &rl);
}

static void binary_free(void *e)
{
	struct binary *b = e;

	if (!b)
		return;
	if (b->fd >= 0)
		close(b->fd);
	symcache_entry__free(b->entry);
	dwfl_end(b->dwfl);
	free(b->loads);
	free(b->syms);
	if (b->cus)
		htab_delete(b->cus);
	if (b->tab)
		htab_delete(b->tab);
	free(b);
}

struct syms_cache *syms_cache__new(void)
{
	static int elf_ready;
	struct syms_cache *c;

	if (!elf_ready) {
		if (elf_version(EV_CURRENT) == EV_NONE)
			return NULL;
		elf_ready = 1;
	}
	raise_nofile_limit();
	c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->disk = symcache_default();
	c->bins = htab_create_alloc(64, bin_hash, bin_eq, binary_free,
				    calloc, free);
	c->strs = strtab__new();
	if (!c->bins || !c->strs) {
		syms_cache__free(c);
		return NULL;
	}
	return c;
}

/*
 * What b's entry says of it, as libdwfl read it: false if not to be kept
 * (its debug file is not a system file, see cachedir_keeps()).
 */
static bool binary_state(const struct binary *b, struct symcache_bin *bin)
{
	const char *main_file = NULL, *debug_file = NULL;

	memset(bin, 0, sizeof(*bin));
	bin->has_debuginfo = b->has_debuginfo;
	dwfl_module_info(b->mod, NULL, NULL, NULL, NULL, NULL, &main_file,
			 &debug_file);
	if (debug_file && (!main_file || strcmp(debug_file, main_file))) {
		bin->debug = SYMCACHE_DEBUG_FILE;
		bin->debug_path = debug_file;
		return cachedir_keeps_path(debug_file, &bin->debug_st);
	}
	bin->debug = b->has_debuginfo ? SYMCACHE_DEBUG_OWN :
		     SYMCACHE_DEBUG_NONE;
	return true;
}

/* Do a and b say the same of their binary? */
static bool same_state(const struct symcache_bin *a,
		       const struct symcache_bin *b)
{
	return a->has_debuginfo == b->has_debuginfo && a->debug == b->debug &&
	       (a->debug != SYMCACHE_DEBUG_FILE ||
		(!strcmp(a->debug_path, b->debug_path) &&
		 cachedir_same_file(&a->debug_st, &b->debug_st)));
}

struct fresh {
	struct symcache_addr *v;
	size_t n, cap;
	bool oom;
};

static int collect_fresh(void **slot, void *arg)
{
	const struct resolved *r = *slot;
	struct fresh *f = arg;

	if (grow_array(&f->v, &f->cap, f->n + 1, sizeof(*f->v))) {
		f->oom = true;
		return 0;
	}
	f->v[f->n++] = (struct symcache_addr){
		.offset = r->offset, .nr_frames = r->nr_frames,
		.frames = r->frames,
	};
	return 1;
}

static int by_offset(const void *a, const void *b)
{
	const struct symcache_addr *x = a, *y = b;

	return (x->offset > y->offset) - (x->offset < y->offset);
}

/* b's addresses libdwfl symbolized, added to its entry. */
static int keep_binary(void **slot, void *arg)
{
	const struct binary *b = *slot;
	struct fresh f = { 0 };
	struct symcache_bin bin;
	const struct symcache_entry *old = b->entry;

	(void)arg;
	/* what a file that shrank gave is not kept */
	if (!b->keep || !b->loaded || b->error || !b->mod ||
	    !htab_elements(b->tab) || !binary_state(b, &bin))
		return 1;
	/* the entry was of another debug file: it goes */
	if (old && !same_state(symcache_entry__bin(old), &bin))
		old = NULL;
	htab_traverse_noresize(b->tab, collect_fresh, &f);
	if (!f.oom) {
		qsort(f.v, f.n, sizeof(*f.v), by_offset);
		symcache__put(b->cache->disk, &b->key, &bin, old, f.v, f.n);
	}
	free(f.v);
	return 1;
}

void syms_cache__free(struct syms_cache *c)
{
	struct arena_chunk *ch, *next;

	if (!c)
		return;
	if (c->bins && c->disk)
		htab_traverse_noresize(c->bins, keep_binary, NULL);
	if (c->bins)
		htab_delete(c->bins);
	strtab__free(c->strs);
	for (ch = c->arena; ch; ch = next) {
		next = ch->next;
		free(ch);
	}
	free(c);
}

/* Paths the kernel reports for mappings that are no file on disk. */
static int is_pseudo_path(const char *path)
{
	return !*path || path[0] == '[' || !strncmp(path, "//anon", 6) ||
	       !strncmp(path, "/memfd:", 7) || !strncmp(path, "anon_inode:", 11) ||
	       !strncmp(path, "/dev/zero", 9) || !strncmp(path, "/SYSV", 5);
}

static int read_loads(struct binary *b, Elf *elf)
{
	size_t phnum, i;

	if (elf_getphdrnum(elf, &phnum))
		return -1;
	b->loads = calloc(phnum ? phnum : 1, sizeof(*b->loads));
	if (!b->loads)
		return -1;
	for (i = 0; i < phnum; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD)
			b->loads[b->nr_loads++] = ph;
	}
	return 0;
}

static int elf_sym_cmp(const void *a, const void *b)
{
	const struct elf_sym *x = a, *y = b;

	if (x->addr != y->addr)
		return (x->addr > y->addr) - (x->addr < y->addr);
	if (x->rank != y->rank)
		return (x->rank > y->rank) - (x->rank < y->rank);
	if (x->size != y->size)
		return (x->size > y->size) - (x->size < y->size);
	return (x->ndx < y->ndx) - (x->ndx > y->ndx);
}

/*
 * The defined function symbols of .symtab (or .dynsym, or the debug file's),
 * as libdwfl picked them, sorted by address: libdwfl's own address lookup
 * scans every symbol, which is too slow for a profile's worth of addresses.
 * At one address, the last one sorted (exported, global, then larger) is the
 * one used.
 */
static int load_elf_syms(struct binary *b)
{
	int n = dwfl_module_getsymtab(b->mod), i;
	char why[128];

	if (n <= 1)
		return 0;
	/* found without section headers (elfbound.h read those) */
	if ((uint64_t)n > ELFBOUND_SYMBOLS_MAX) {
		elfbound_symbols_why((uint64_t)n, why, sizeof(why));
		b->error = intern(b->cache, why);
		return b->error ? 0 : -1;
	}
	b->syms = calloc((size_t)n, sizeof(*b->syms));
	if (!b->syms)
		return -1;
	for (i = 1; i < n; i++) {
		struct elf_sym *e = &b->syms[b->nr_syms];
		GElf_Word shndx = SHN_UNDEF;
		const char *name;
		GElf_Addr addr;
		GElf_Sym sym;
		int type, bind;

		name = dwfl_module_getsym_info(b->mod, i, &sym, &addr, &shndx,
					       NULL, NULL);
		type = GELF_ST_TYPE(sym.st_info);
		bind = GELF_ST_BIND(sym.st_info);
		if (!name || !*name || shndx == SHN_UNDEF ||
		    (type != STT_FUNC && type != STT_GNU_IFUNC))
			continue;
		e->addr = addr;
		e->size = sym.st_size < UINT32_MAX ? sym.st_size : UINT32_MAX;
		e->name = name;
		e->ndx = i;
		/* exported names first: global, weak, then hidden or local */
		e->rank = bind == STB_GLOBAL ? 2 : bind == STB_WEAK ? 1 : 0;
		if (GELF_ST_VISIBILITY(sym.st_other) == STV_DEFAULT)
			e->rank += 3;
		b->nr_syms++;
	}
	qsort(b->syms, b->nr_syms, sizeof(*b->syms), elf_sym_cmp);
	return 0;
}

/* The function symbol holding addr; sizeless ones reach the next symbol. */
static const char *elf_sym_name(const struct binary *b, GElf_Addr addr)
{
	size_t lo = 0, hi = b->nr_syms;
	const struct elf_sym *e;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (b->syms[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	e = &b->syms[lo - 1];
	if (e->size && addr - e->addr >= e->size)
		return NULL;
	return e->name;
}

/* DWARF with a line table in at least one compile unit. */
static int has_line_info(Dwfl_Module *mod)
{
	Dwarf_Addr bias;
	Dwarf *dw = dwfl_module_getdwarf(mod, &bias);
	Dwarf_Off off = 0, next;
	size_t hsize;

	if (!dw)
		return 0;
	while (dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		Dwarf_Die cu;
		Dwarf_Lines *lines;
		size_t n;

		if (dwarf_offdie(dw, off + hsize, &cu) &&
		    dwarf_getsrclines(&cu, &lines, &n) == 0 && n > 0)
			return 1;
		off = next;
	}
	return 0;
}

/*
 * SIGBUS while libdwfl read b's mapped file: it shrank.  What libdwfl
 * built of it may be half made: it is left, not freed, and b resolves
 * nothing from here on.
 */
static void binary_shrank(struct binary *b)
{
	b->error = "the file shrank while it was read";
	b->dwfl = NULL;
	b->mod = NULL;
	b->cus = NULL;
	b->has_debuginfo = 0;
	b->nr_loads = 0;
}

/*
 * b's file, open on fd (found at b->st, its owner's names in b->root,
 * weighed in b->bound), given to libdwfl, which owns fd from here; on
 * failure sets b->error and leaves a binary resolving nothing.
 */
static int binary_load(struct binary *b, int fd)
{
	struct syms_cache *c = b->cache;
	const unsigned char *bits;
	GElf_Addr id_vaddr;
	char hex[2 * 256 + 1];
	int id_len;
	Elf *elf;

	b->loaded = true;
	b->dwfl = dwfl_begin(&offline_callbacks);
	if (!b->dwfl) {
		close(fd);
		return -1;
	}
	dwfl_report_begin(b->dwfl);
	/*
	 * base 0 + p_vaddr: module addresses are the file's own addresses.
	 * The module owns fd from here if it is made.
	 */
	b->mod = dwfl_report_elf(b->dwfl, b->open_path, b->open_path, fd, 0,
				 true);
	dwfl_report_end(b->dwfl, NULL, NULL);
	if (!b->mod) {
		close(fd);
		b->error = intern(c, dwfl_errmsg(-1));
		return b->error ? 0 : -1;
	}
	{
		void **userdata;

		/* whose names its debuglink's are; and its process's root */
		if (dwfl_module_info(b->mod, &userdata, NULL, NULL, NULL, NULL,
				     NULL, NULL))
			*userdata = &b->root;
	}
	elf = dwfl_module_getelf(b->mod, &b->bias);
	if (!elf) {
		b->error = intern(c, dwfl_errmsg(-1));
		b->mod = NULL;
		return b->error ? 0 : -1;
	}
	if (read_loads(b, elf))
		return -1;

	id_len = dwfl_module_build_id(b->mod, &bits, &id_vaddr);
	if (id_len > 0 && id_len <= 256) {
		hex_encode(hex, bits, (size_t)id_len);
		b->build_id = intern(c, hex);
		if (!b->build_id)
			return -1;
	}
	b->mismatch = *b->want_build_id && strcmp(b->want_build_id,
						  b->build_id);

	if (load_elf_syms(b))
		return -1;
	if (b->error)
		return 0;
	/* DWARF whose decompression costs too much is not read (elfbound.h) */
	b->has_debuginfo = b->bound.inflated <= ELFBOUND_INFLATE_MAX &&
			   has_line_info(b->mod);
	/* none, its debug file refused (debugfind.h): that says why */
	if (!b->has_debuginfo && !b->nr_syms) {
		b->error = *b->root.refused ? intern(c, b->root.refused) :
			   "no symbols";
		if (!b->error)
			return -1;
	}
	return 0;
}

/*
 * The symbol cache's entry of b (found on fd at b->open_path), if b is a
 * binary it keeps and the entry stands: b then takes what the entry says
 * of the file and is not read with libdwfl until an address is not in it.
 * The build ID and debuglink are libelf's, read from the file's notes and
 * section headers: no DWARF is touched.  true if served so.
 */
static bool binary_cached(struct binary *b, int fd)
{
	const struct symcache_bin *bin;
	const char *link = NULL;
	char hex[2 * SYMCACHE_BUILD_ID_MAX + 1], *debuglink = NULL;
	const void *id;
	GElf_Word crc;
	struct stat now;
	ssize_t n = 0;
	bool stands;
	Elf *elf;

	if (!b->cache->disk || !b->via_path || !cachedir_keeps(&b->st, fd))
		return false;
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf)
		return false;
	n = dwelf_elf_gnu_build_id(elf, &id);
	link = dwelf_elf_gnu_debuglink(elf, &crc);
	if (link)
		debuglink = strdup(link);
	if (n >= 0 && n <= SYMCACHE_BUILD_ID_MAX && (!link || debuglink)) {
		b->keep = true;
		b->key.st = b->st;
		b->key.build_id_len = n;
		if (n > 0)
			memcpy(b->key.build_id, id, n);
	}
	elf_end(elf);
	if (b->keep)
		b->entry = symcache__get(b->cache->disk, &b->key);
	if (!b->entry) {
		free(debuglink);
		return false;
	}
	/* made from the debug file there is now, or none there still */
	bin = symcache_entry__bin(b->entry);
	stands = bin->debug == SYMCACHE_DEBUG_OWN ||
		 (bin->debug == SYMCACHE_DEBUG_FILE &&
		  cachedir_keeps_path(bin->debug_path, &now) &&
		  cachedir_same_file(&now, &bin->debug_st)) ||
		 (bin->debug == SYMCACHE_DEBUG_NONE &&
		  !debugfind_maybe(b->open_path, b->key.build_id,
				   b->key.build_id_len, debuglink));
	free(debuglink);
	if (!stands) {
		symcache_entry__free(b->entry);
		b->entry = NULL;
		return false;
	}
	hex_encode(hex, b->key.build_id, b->key.build_id_len);
	b->build_id = intern(b->cache, hex);
	if (!b->build_id) {
		symcache_entry__free(b->entry);
		b->entry = NULL;
		return false;
	}
	b->mismatch = *b->want_build_id && strcmp(b->want_build_id,
						  b->build_id);
	b->has_debuginfo = bin->has_debuginfo;
	b->fd = fd;
	return true;
}

/*
 * Finds m's file (at path, if m has no identity), then its entry in the
 * symbol cache or else reads it (binary_load()); on failure sets b->error
 * and leaves a binary resolving nothing.
 */
static int binary_open(struct binary *b, const struct mapfile *m,
		       const char *path)
{
	struct syms_cache *c = b->cache;
	struct mapfile at = *m;
	const char *why, *via = NULL;
	char why_not[128];
	int fd;

	if (is_pseudo_path(path)) {
		b->error = "not a file";
		return 0;
	}
	/* the very file mapped; a FIFO or a device is never opened */
	at.path = path;
	fd = mapfile_open(&at, &b->st, &why, &via);
	if (fd < 0) {
		b->unreached = m->has_id && m->strict;
		b->pid = m->pid;
		b->error = intern(c, why);
		return b->error ? 0 : -1;
	}
	b->open_path = intern(c, path);
	if (!b->open_path) {
		close(fd);
		return -1;
	}
	b->unreached = false;
	b->error = NULL;
	b->root.refused[0] = '\0';
	b->root.owner = b->st.st_uid;
	b->via_path = !strcmp(via, "path");
	if (!b->via_path) {
		b->root.pid = m->pid;
		b->root.path = b->path;
	}
	/* what libelf or libdwfl would decompress or read is weighed first */
	elfbound_measure(fd, &b->bound);
	if (!elfbound_symbols_fit(&b->bound, why_not, sizeof(why_not))) {
		close(fd);
		b->error = intern(c, why_not);
		return b->error ? 0 : -1;
	}
	if (binary_cached(b, fd))
		return 0;
	return binary_load(b, fd);
}

/* binary_open(), surviving SIGBUS (busguard.h) */
static int binary_open_guarded(struct binary *b, const struct mapfile *m,
				const char *path)
{
	struct busguard guard;
	int ret;

	busguard__enter(&guard);
	if (sigsetjmp(guard.jb, 1)) {
		binary_shrank(b);
		return 0;
	}
	ret = binary_open(b, m, path);
	busguard__leave(&guard);
	return ret;
}

/*
 * A binary served by its cache entry, read now with libdwfl (an address
 * the entry lacks), surviving SIGBUS.  -1 only on OOM.
 */
static int binary_load_guarded(struct binary *b)
{
	struct busguard guard;
	int fd = b->fd, ret;

	b->fd = -1;
	busguard__enter(&guard);
	if (sigsetjmp(guard.jb, 1)) {
		binary_shrank(b);
		return 0;
	}
	ret = binary_load(b, fd);
	busguard__leave(&guard);
	return ret;
}

/* An unlinked file may be there again under its old name: that name. */
static char *undeleted(const char *path)
{
	static const char deleted[] = " (deleted)";
	size_t len = strlen(path), dl = sizeof(deleted) - 1;

	if (len > dl && !strcmp(path + len - dl, deleted) && access(path, F_OK))
		return strndup(path, len - dl);
	return strdup(path);
}

struct binary *syms_cache__get(struct syms_cache *c, const struct mapfile *m,
			       const uint8_t *build_id, size_t build_id_len)
{
	char want[2 * 256 + 1] = "", *open_path = NULL;
	struct binary key = { .want_build_id = want }, *b;
	hashval_t h;
	void **slot;

	if (!c || !m || !m->path)
		return NULL;
	if (build_id && build_id_len > 0 && build_id_len <= 256)
		hex_encode(want, build_id, build_id_len);
	/* another boot's identities mean nothing here: its paths do */
	key.path = m->path;
	key.has_id = m->has_id && m->strict;
	key.id = m->id;
	/* what mapfile_id_cmp() compares */
	h = key.has_id ?
	    iterative_hash(&key.id.btime_ns, sizeof(key.id.btime_ns),
			   iterative_hash(&key.id.ino, sizeof(key.id.ino),
					  key.id.dev)) :
	    htab_hash_string(m->path);
	key.hash = iterative_hash(want, strlen(want), h);
	slot = htab_find_slot_with_hash(c->bins, &key, key.hash, INSERT);
	if (!slot)
		return NULL;
	b = *slot;
	/*
	 * A file not reached through one process (mapfile.h) is looked for
	 * through the next living one that maps it.
	 */
	if (b && !(b->unreached && m->pid && m->pid != b->pid &&
		   mapfile_alive(m->pid)))
		return b;
	open_path = undeleted(m->path);
	if (!open_path)
		return NULL;
	if (b) {
		/* nothing was made of it: try again through this process */
		if (binary_open_guarded(b, m, open_path))
			b = NULL;
		free(open_path);
		return b;
	}

	b = calloc(1, sizeof(*b));
	if (!b)
		goto oom;
	b->cache = c;
	b->fd = -1;
	b->path = intern(c, m->path);
	b->want_build_id = intern(c, want);
	b->has_id = key.has_id;
	b->id = key.id;
	b->hash = key.hash;
	b->build_id = "";
	b->cus = htab_create_alloc(32, cu_hash, cu_eq, cu_del, calloc, free);
	b->tab = htab_create_alloc(256, resolved_hash, resolved_eq, NULL,
				   calloc, free);
	if (!b->path || !b->want_build_id || !b->cus || !b->tab)
		goto oom;
	if (binary_open_guarded(b, m, open_path))
		goto oom;
	free(open_path);
	*slot = b;
	return b;
oom:
	free(open_path);
	binary_free(b);
	return NULL;
}

/* File offset -> address in the ELF, through the PT_LOAD that maps it. */
static int offset_to_vaddr(const struct binary *b, uint64_t off, GElf_Addr *vaddr)
{
	const GElf_Phdr *found = NULL;
	size_t i;

	for (i = 0; i < b->nr_loads; i++) {
		const GElf_Phdr *ph = &b->loads[i];

		if (off < ph->p_offset || off - ph->p_offset >= ph->p_filesz)
			continue;
		/* on a shared page, the executable segment is the likelier */
		if (!found || (ph->p_flags & PF_X))
			found = ph;
	}
	if (!found)
		return -1;
	*vaddr = off - found->p_offset + found->p_vaddr;
	return 0;
}

static const char *attr_string(Dwarf_Die *die, unsigned int name)
{
	Dwarf_Attribute attr;

	return dwarf_formstring(dwarf_attr_integrate(die, name, &attr));
}

static const char *die_linkage_name(Dwarf_Die *die)
{
	const char *s = attr_string(die, DW_AT_linkage_name);

	return s ? s : attr_string(die, DW_AT_MIPS_linkage_name);
}

/* function and system_name from a (possibly mangled) name; 0 ok, -1 OOM */
static int set_names(struct syms_cache *c, struct sym_frame *f,
		     const char *system_name, const char *plain)
{
	char *demangled = NULL;

	f->system_name = intern(c, system_name);
	if (!f->system_name)
		return -1;
	if (!strncmp(system_name, "_Z", 2) || !strncmp(system_name, "_R", 2))
		demangled = cplus_demangle(system_name, DMGL_PARAMS | DMGL_ANSI);
	if (demangled) {
		f->function = intern(c, demangled);
		free(demangled);
	} else {
		/* plain is often system_name itself: interned already */
		f->function = plain && plain != system_name ?
			      intern(c, plain) : f->system_name;
	}
	return f->function ? 0 : -1;
}

struct func_collect {
	struct func_range *v;
	size_t n, cap;
	int oom;
};

static int collect_func(Dwarf_Die *die, void *arg)
{
	struct func_collect *fc = arg;
	Dwarf_Addr base, lo, hi;
	ptrdiff_t off = 0;

	while ((off = dwarf_ranges(die, off, &base, &lo, &hi)) > 0) {
		if (hi <= lo)
			continue;
		if (grow_array((void **)&fc->v, &fc->cap, fc->n + 1,
			       sizeof(*fc->v))) {
			fc->oom = 1;
			return DWARF_CB_ABORT;
		}
		fc->v[fc->n].lo = lo;
		fc->v[fc->n].hi = hi;
		fc->v[fc->n].die = *die;
		fc->n++;
	}
	return DWARF_CB_OK;
}

static int func_range_cmp(const void *a, const void *b)
{
	const struct func_range *x = a, *y = b;

	return (x->lo > y->lo) - (x->lo < y->lo);
}

/* The function index of cu, built on first use; NULL on OOM. */
static const struct cu_funcs *cu_funcs(struct binary *b, Dwarf_Die *cu)
{
	struct cu_funcs key = { .cu_off = dwarf_dieoffset(cu) }, *cf;
	struct func_collect fc = { 0 };
	void **slot;

	key.hash = hash_off(key.cu_off);
	slot = htab_find_slot_with_hash(b->cus, &key, key.hash, INSERT);
	if (!slot)
		return NULL;
	if (*slot)
		return *slot;
	dwarf_getfuncs(cu, collect_func, &fc, 0);
	cf = fc.oom ? NULL : malloc(sizeof(*cf));
	if (!cf) {
		free(fc.v);
		return NULL;
	}
	if (fc.n)
		qsort(fc.v, fc.n, sizeof(*fc.v), func_range_cmp);
	*cf = key;
	cf->funcs = fc.v;
	cf->nr_funcs = fc.n;
	*slot = cf;
	return cf;
}

/* The concrete function of the CU whose code holds pc. */
static Dwarf_Die *find_func(const struct cu_funcs *cf, Dwarf_Addr pc)
{
	size_t lo = 0, hi = cf->nr_funcs, i;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (cf->funcs[mid].lo <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo && pc < cf->funcs[lo - 1].hi)
		return &cf->funcs[lo - 1].die;
	/* nested functions may overlap an earlier range */
	for (i = lo; i-- > 0;)
		if (pc >= cf->funcs[i].lo && pc < cf->funcs[i].hi)
			return &cf->funcs[i].die;
	return NULL;
}

static int is_block_die(Dwarf_Die *die)
{
	int tag = dwarf_tag(die);

	return tag == DW_TAG_inlined_subroutine || tag == DW_TAG_lexical_block ||
	       tag == DW_TAG_try_block || tag == DW_TAG_catch_block;
}

/*
 * From func down to pc: the function, then each inlined subroutine holding
 * pc, outermost first.  Keeps the innermost MAX_FRAMES.  Returns the count.
 */
static int inline_chain(Dwarf_Die *func, Dwarf_Addr pc, Dwarf_Die *chain)
{
	Dwarf_Die cur = *func, child, next;
	int n = 0;

	chain[n++] = cur;
	while (dwarf_child(&cur, &child) == 0) {
		int found = 0;

		do {
			if (is_block_die(&child) && dwarf_haspc(&child, pc) == 1) {
				found = 1;
				break;
			}
		} while (dwarf_siblingof(&child, &next) == 0 &&
			 (child = next, 1));
		if (!found)
			break;
		cur = child;
		if (dwarf_tag(&cur) != DW_TAG_inlined_subroutine)
			continue;
		if (n == MAX_FRAMES) {
			memmove(chain, chain + 1, (MAX_FRAMES - 1) * sizeof(*chain));
			n--;
		}
		chain[n++] = cur;
	}
	return n;
}

/*
 * The inline chain at addr from DWARF: the innermost function gets the line
 * table's file:line, each outer one the call site of the function it holds.
 * Returns the number of frames, 0 if DWARF does not cover addr, -1 on OOM.
 */
static int dwarf_frames(struct binary *b, Dwarf_Addr addr, const char *elf_name,
			struct sym_frame *frames, int max)
{
	struct syms_cache *c = b->cache;
	Dwarf_Die chain[MAX_FRAMES], *cu, *func;
	const struct cu_funcs *cf;
	Dwarf_Files *files = NULL;
	Dwarf_Addr cubias;
	int nchain, i, n = 0, asm_cu;

	cu = dwfl_module_addrdie(b->mod, addr, &cubias);
	if (!cu)
		return 0;
	cf = cu_funcs(b, cu);
	if (!cf)
		return -1;
	/* no function here (assembly with line info only): the ELF symbol */
	func = find_func(cf, addr - cubias);
	if (!func)
		return 0;
	nchain = inline_chain(func, addr - cubias, chain);
	if (dwarf_getsrcfiles(cu, &files, NULL))
		files = NULL;
	asm_cu = dwarf_srclang(cu) == DW_LANG_Mips_Assembler;

	/* chain[] is outermost first; frames[] innermost first */
	for (i = nchain - 1; i >= 0 && n < max; i--) {
		Dwarf_Die *die = &chain[i];
		struct sym_frame *f = &frames[n];
		const char *name, *linkage, *src = NULL;
		Dwarf_Attribute attr;
		Dwarf_Word val;
		int decl;

		name = attr_string(die, DW_AT_name);
		linkage = die_linkage_name(die);
		memset(f, 0, sizeof(*f));
		/* the assembler names a function after any one of its aliases */
		if (i == 0 && elf_name && asm_cu) {
			if (set_names(c, f, elf_name, NULL))
				return -1;
		} else if (linkage || name) {
			if (set_names(c, f, linkage ? linkage : name, name))
				return -1;
		} else if (i == 0 && elf_name) {
			if (set_names(c, f, elf_name, NULL))
				return -1;
		} else if (set_names(c, f, "??", NULL)) {
			return -1;
		}
		if (dwarf_decl_line(die, &decl) == 0)
			f->start_line = decl;

		if (i == nchain - 1) {
			Dwfl_Line *line = dwfl_module_getsrc(b->mod, addr);

			if (line)
				src = dwfl_lineinfo(line, NULL, &f->line, NULL,
						    NULL, NULL);
		} else {
			Dwarf_Die *inner = &chain[i + 1];

			if (files && dwarf_formudata(dwarf_attr(inner,
					DW_AT_call_file, &attr), &val) == 0)
				src = dwarf_filesrc(files, val, NULL, NULL);
			if (dwarf_formudata(dwarf_attr(inner, DW_AT_call_line,
						       &attr), &val) == 0)
				f->line = (int)val;
		}
		if (src) {
			f->file = intern(c, src);
			if (!f->file)
				return -1;
		}
		n++;
	}
	return n;
}

/* Symbolizes one address; -1 only on OOM. */
static int resolve_uncached(struct binary *b, uint64_t file_offset,
			    struct sym_frame *frames, int max)
{
	const char *elf_name;
	GElf_Addr vaddr;
	Dwarf_Addr addr;
	Dwfl_Line *line;
	int n;

	if (!b->mod || offset_to_vaddr(b, file_offset, &vaddr))
		return 0;
	addr = vaddr + b->bias;
	elf_name = elf_sym_name(b, addr);
	if (b->has_debuginfo) {
		n = dwarf_frames(b, addr, elf_name, frames, max);
		if (n)
			return n;
	}
	if (!elf_name || !*elf_name)
		return 0;
	memset(frames, 0, sizeof(*frames));
	if (set_names(b->cache, frames, elf_name, NULL))
		return -1;
	/* a line table without DIEs for this address still gives file:line */
	line = b->has_debuginfo ? dwfl_module_getsrc(b->mod, addr) : NULL;
	if (line) {
		const char *src = dwfl_lineinfo(line, NULL, &frames->line, NULL,
						NULL, NULL);

		frames->file = src ? intern(b->cache, src) : NULL;
		if (src && !frames->file)
			return -1;
	}
	return 1;
}

/* resolve_uncached(), surviving SIGBUS (busguard.h): 0 frames then */
static int resolve_guarded(struct binary *b, uint64_t file_offset,
			   struct sym_frame *frames, int max)
{
	struct busguard guard;
	int n;

	busguard__enter(&guard);
	if (sigsetjmp(guard.jb, 1)) {
		binary_shrank(b);
		return 0;
	}
	n = resolve_uncached(b, file_offset, frames, max);
	busguard__leave(&guard);
	return n;
}

int binary__resolve(struct binary *b, uint64_t file_offset,
		    struct sym_frame *frames, int max)
{
	struct resolved key = { .offset = file_offset }, *r;
	struct sym_frame tmp[MAX_FRAMES];
	void **slot;
	int n;

	if (!b || !frames || max <= 0)
		return 0;
	key.hash = hash_off(file_offset);
	slot = htab_find_slot_with_hash(b->tab, &key, key.hash, NO_INSERT);
	if (slot && *slot) {
		r = *slot;
		n = r->nr_frames < max ? r->nr_frames : max;
		memcpy(frames, r->frames, (size_t)n * sizeof(*frames));
		return n;
	}
	n = symcache_entry__frames(b->entry, file_offset, frames, max);
	if (n >= 0)
		return n;
	/* not in the entry: the file itself, now */
	if (!b->loaded && b->fd >= 0 && !b->error && binary_load_guarded(b))
		return 0;
	n = resolve_guarded(b, file_offset, tmp, MAX_FRAMES);
	if (n < 0)
		return 0;
	slot = htab_find_slot_with_hash(b->tab, &key, key.hash, INSERT);
	/* on OOM, returned but not kept */
	r = slot ? arena_alloc(b->cache, sizeof(*r) + (size_t)n * sizeof(*tmp),
			       _Alignof(struct resolved)) : NULL;
	if (r) {
		*r = key;
		r->nr_frames = n;
		memcpy(r->frames, tmp, (size_t)n * sizeof(*tmp));
		*slot = r;
	}
	n = n < max ? n : max;
	memcpy(frames, tmp, (size_t)n * sizeof(*frames));
	return n;
}

const char *binary__path(const struct binary *b)
{
	return b ? b->path : NULL;
}

const char *binary__build_id_hex(const struct binary *b)
{
	return b ? b->build_id : "";
}

int binary__build_id_mismatch(const struct binary *b)
{
	return b ? b->mismatch : 0;
}

const char *binary__error(const struct binary *b)
{
	return b ? b->error : "no binary";
}

int binary__has_debuginfo(const struct binary *b)
{
	return b ? b->has_debuginfo : 0;
}
