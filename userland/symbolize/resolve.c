// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * resolve - from aggregated samples to pprof's tables.  See resolve.h.
 *
 * Each distinct (mapping, address) becomes one location and is symbolized
 * once; each binary is opened once (syms_cache); functions and mappings are
 * deduplicated.  All strings are copied into the string table, so the
 * symbolizer's caches are dropped when the model is built.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <hashtab.h>

#include "stream/cgroups.h"
#include "symbolize/debugfetch.h"
#include "symbolize/elfsyms.h"
#include "symbolize/jitmap.h"
#include "symbolize/kcache.h"
#include "symbolize/ksyms.h"
#include "lib/elfbound.h"
#include "lib/hash.h"
#include "lib/mapfile.h"
#include "python/pyframes.h"
#include "symbolize/resolve.h"
#include "lib/safeopen.h"
#include "stream/stream.h"
#include "lib/util.h"

#define MAX_INLINE	64	/* frames for one address, inlined ones included */
#define SUMMARY_MAX	5	/* binaries named in the unresolved summary */

enum key_kind {
	KEY_KLOC = 1,	/* kernel location: address */
	KEY_ULOC,	/* user location: mapping, address; in JIT code, 1 +
			 * the perf map line that named it */
	KEY_KMAP,	/* kernel mapping: file */
	KEY_UMAP,	/* user mapping: start, end, pgoff, file, build id,
			 * the file's device, inode, birth time (0: unknown),
			 * the pid of JIT code (its names are the process's) */
	KEY_FUNC,	/* function: name, system name, file, start line */
	KEY_MMAP,	/* MMAP record already mapped: its address */
	KEY_PYLOC,	/* Python location: function, line; or 0, the
			 * address of a code object not read */
	KEY_REACH,	/* a file looked for through other processes: its
			 * device, inode, birth time */
	KEY_SYMFN,	/* a symbolizer's frame: its strings (elfsyms.h: each
			 * the same pointer for the same string while the
			 * syms_cache lives), start line */
};

#define KEY_WORDS	9

struct ent {
	hashval_t hash;
	uint32_t index;
	uint64_t kind;
	uint64_t k[KEY_WORDS];
};

/* What resolving one mapping's locations went like. */
struct map_state {
	struct binary *bin;	/* NULL: not symbolized */
	const struct jitmap *jit;	/* JIT code's names; NULL: none */
	const char *why;	/* why the whole binary is unresolved */
	uint64_t nr_locs, nr_func, nr_file, nr_lineno;
	uint64_t unresolved;
};

struct resolver {
	const struct profile *p;
	struct resolved *r;
	bool symbolize;
	/* this boot's stream: files are named only if the very file mapped */
	bool strict_files;
	struct ksyms *ks;		/* NULL: kernel left unsymbolized */
	/* where ks came from, and whether all of kallsyms was read since */
	const char *kallsyms, *modules;
	bool ks_whole;
	struct syms_cache *syms;
	struct jitmaps *jit;		/* perf maps read so far */
	bool own_jit;			/* made here: freed here */
	htab_t tab;
	struct map_state *maps;		/* parallel to r->mappings */
	size_t alloc_maps, alloc_funcs, alloc_locs, alloc_lines;
	size_t alloc_loc_ids, alloc_samples, alloc_comments;
	uint64_t unmapped;		/* user addresses in no mapping */
	/* the record the last user frame was in, its mapping's id */
	const struct cprof_mmap *last_mm;
	uint32_t last_mapping;
	struct cgroups *cgroups;	/* NULL: cgroup ids stay numbers */
	/* records with a file identity whose processes run: by identity */
	struct reach_rec *reach;
	size_t nr_reach;
	bool reach_built;
	const volatile sig_atomic_t *stop;	/* NULL: never */
	const struct pyframes *py;	/* NULL: Python frames not read */
	int64_t eval_name;		/* PY_EVAL_FUNCTION's string, 0: not yet */
	/* Python code objects left unnamed, by why */
	struct py_unnamed {
		const char *why;
		uint64_t nr;
	} py_unnamed[16];
	uint64_t py_unplaced;		/* stacks with no loop frame named */
};

#define CANCELLED	(-2)

static hashval_t ent_hash(const void *e)
{
	return ((const struct ent *)e)->hash;
}

static int ent_eq(const void *a, const void *b)
{
	const struct ent *x = a, *y = b;

	return x->kind == y->kind && !memcmp(x->k, y->k, sizeof(x->k));
}

/*
 * Find key in the table: returns its slot, *found set to the index + 1 of an
 * existing entry or 0.  NULL on ENOMEM.
 */
static void **resolver__find(struct resolver *rs, struct ent *key,
			     uint32_t *found)
{
	void **slot;

	key->hash = hash_words(key->k, KEY_WORDS, key->kind);
	slot = htab_find_slot_with_hash(rs->tab, key, key->hash, INSERT);
	*found = slot && *slot ? ((struct ent *)*slot)->index + 1 : 0;
	return slot;
}

/* Fill an empty slot from resolver__find(). 0 ok, -1 ENOMEM. */
static int resolver__insert(void **slot, const struct ent *key, size_t index)
{
	struct ent *e = malloc(sizeof(*e));

	if (!e)
		return -1;
	*e = *key;
	e->index = index;
	*slot = e;
	return 0;
}

static int resolver__string(struct resolver *rs, const char *s, int64_t *id)
{
	*id = strtab__intern(rs->r->strings, s);
	return *id < 0 ? -1 : 0;
}

/* The function (name, system name, file, start line): index + 1 in *id. */
static int resolver__function(struct resolver *rs, const char *name,
			      const char *system_name, const char *file,
			      int start_line, uint32_t *id)
{
	struct resolved *r = rs->r;
	struct ent key = { .kind = KEY_FUNC };
	struct res_function *f;
	int64_t n, sn, fn;
	void **slot;

	if (resolver__string(rs, name, &n) ||
	    resolver__string(rs, system_name ? system_name : name, &sn) ||
	    resolver__string(rs, file, &fn))
		return -1;
	key.k[0] = n;
	key.k[1] = sn;
	key.k[2] = fn;
	key.k[3] = start_line > 0 ? start_line : 0;
	slot = resolver__find(rs, &key, id);
	if (!slot)
		return -1;
	if (*id)
		return 0;
	if (grow_array(&r->functions, &rs->alloc_funcs, r->nr_functions + 1,
		 sizeof(*r->functions)) ||
	    resolver__insert(slot, &key, r->nr_functions))
		return -1;
	f = &r->functions[r->nr_functions++];
	f->name = n;
	f->system_name = sn;
	f->filename = fn;
	f->start_line = key.k[3];
	*id = r->nr_functions;
	return 0;
}

/*
 * The function of a symbolizer's frame f: its strings are looked up once
 * a conversion, by the pointers the symbolizer hands out.
 */
static int resolver__sym_function(struct resolver *rs,
				  const struct sym_frame *f, uint32_t *id)
{
	struct ent key = { .kind = KEY_SYMFN, .k = {
		(uintptr_t)f->function, (uintptr_t)f->system_name,
		(uintptr_t)f->file, (uint64_t)(int64_t)f->start_line } };
	uint32_t found;
	void **slot;

	slot = resolver__find(rs, &key, &found);
	if (!slot)
		return -1;
	if (found) {
		*id = found;
		return 0;
	}
	if (resolver__function(rs, f->function, f->system_name, f->file,
			       f->start_line, id))
		return -1;
	/* the function added may have resized the table: find it again */
	slot = resolver__find(rs, &key, &found);
	return slot ? resolver__insert(slot, &key, *id - 1) : -1;
}

/* Append mapping m with state st; its index + 1 in *id. */
static int resolver__add_mapping(struct resolver *rs, void **slot,
				 const struct ent *key,
				 const struct res_mapping *m,
				 const struct map_state *st, uint32_t *id)
{
	struct resolved *r = rs->r;
	size_t alloc = rs->alloc_maps;

	if (grow_array(&r->mappings, &rs->alloc_maps, r->nr_mappings + 1,
		 sizeof(*r->mappings)) ||
	    grow_array(&rs->maps, &alloc, rs->alloc_maps, sizeof(*rs->maps)) ||
	    resolver__insert(slot, key, r->nr_mappings))
		return -1;
	r->mappings[r->nr_mappings] = *m;
	rs->maps[r->nr_mappings] = *st;
	*id = ++r->nr_mappings;
	return 0;
}

/*
 * The mapping of a kernel address: [kernel.kallsyms] or [module].  Its
 * range is the kernel's (module's) text according to kallsyms, widened to
 * every address put in it.
 */
static int resolver__kernel_mapping(struct resolver *rs, const char *module,
				    uint64_t addr, uint32_t *id)
{
	struct ent key = { .kind = KEY_KMAP };
	struct res_mapping m = { .kernel = true };
	struct map_state st = { 0 };
	struct res_mapping *found;
	char name[128];
	uint64_t start, end;
	int64_t file;
	void **slot;
	int err;

	if (module)
		snprintf(name, sizeof(name), "[%s]", module);
	if (resolver__string(rs, module ? name : KERNEL_MAPPING_NAME, &file))
		return -1;
	key.k[0] = file;
	slot = resolver__find(rs, &key, id);
	if (!slot)
		return -1;
	if (*id) {
		found = &rs->r->mappings[*id - 1];
		if (addr < found->start)
			found->start = addr;
		if (addr >= found->limit)
			found->limit = addr + 1;
		return 0;
	}
	m.file = file;
	m.start = addr;
	m.limit = addr + 1;
	if (rs->ks) {
		err = module ? ksyms__module_range(rs->ks, module, &start, &end)
			     : ksyms__kernel_range(rs->ks, &start, &end);
		if (!err && start <= addr && addr < end) {
			m.start = start;
			m.limit = end;
		}
	}
	return resolver__add_mapping(rs, slot, &key, &m, &st, id);
}

static int resolver__push_line(struct resolver *rs, uint32_t function,
			       int64_t line)
{
	struct resolved *r = rs->r;

	if (grow_array(&r->lines, &rs->alloc_lines, r->nr_lines + 1,
		 sizeof(*r->lines)))
		return -1;
	r->lines[r->nr_lines].function = function;
	r->lines[r->nr_lines].line = line > 0 ? line : 0;
	r->nr_lines++;
	return 0;
}

/* Append a location to r; returns its index + 1 in *id. */
static int resolver__add_location(struct resolver *rs, void **slot,
				  const struct ent *key, uint32_t mapping,
				  uint64_t addr, uint32_t *id)
{
	struct resolved *r = rs->r;
	struct res_location *l;

	if (grow_array(&r->locations, &rs->alloc_locs, r->nr_locations + 1,
		 sizeof(*r->locations)) ||
	    resolver__insert(slot, key, r->nr_locations))
		return -1;
	l = &r->locations[r->nr_locations];
	l->mapping = mapping;
	l->address = addr;
	l->line = r->nr_lines;
	l->nr_lines = 0;
	*id = ++r->nr_locations;
	return 0;
}

/*
 * The kernel symbol of addr.  Symbols from the cache name only some
 * addresses as kallsyms would (ksyms__covers()): for any other, all of
 * kallsyms is read, once; the names given so far stay, they are its own.
 */
static const struct ksym *resolver__ksym(struct resolver *rs, uint64_t addr)
{
	struct ksyms *whole;

	if (!rs->ks)
		return NULL;
	if (!ksyms__covers(rs->ks, addr) && !rs->ks_whole) {
		rs->ks_whole = true;
		whole = kcache__load_kallsyms(rs->kallsyms, rs->modules);
		if (whole) {
			ksyms__free(rs->ks);
			rs->ks = whole;
		}
	}
	return ksyms__covers(rs->ks, addr) ? ksyms__map_addr(rs->ks, addr) :
	       NULL;
}

static int resolver__kernel_location(struct resolver *rs, uint64_t addr,
				     uint32_t *id)
{
	struct ent key = { .kind = KEY_KLOC, .k = { addr } };
	const struct ksym *sym = NULL;
	struct map_state *st;
	uint32_t mapping, func;
	void **slot;

	slot = resolver__find(rs, &key, id);
	if (!slot)
		return -1;
	if (*id)
		return 0;
	sym = resolver__ksym(rs, addr);
	if (resolver__kernel_mapping(rs, sym ? sym->module : NULL, addr,
				     &mapping))
		return -1;
	/* adding the mapping may have resized the table: find the slot again */
	slot = resolver__find(rs, &key, id);
	if (!slot || resolver__add_location(rs, slot, &key, mapping, addr, id))
		return -1;
	st = &rs->maps[mapping - 1];
	st->nr_locs++;
	if (!sym) {
		st->unresolved++;
		return 0;
	}
	if (resolver__function(rs, sym->name, sym->name, NULL, 0, &func) ||
	    resolver__push_line(rs, func, 0))
		return -1;
	rs->r->locations[*id - 1].nr_lines = 1;
	st->nr_func++;
	return 0;
}

/* A record whose process runs, by its file's identity. */
struct reach_rec {
	struct cprof_file_id id;
	const struct cprof_mmap *mm;
};

static int reach_cmp(const void *a, const void *b)
{
	return mapfile_id_cmp(&((const struct reach_rec *)a)->id,
			      &((const struct reach_rec *)b)->id);
}

struct reach_build {
	struct resolver *rs;
	size_t alloc;
	uint32_t pid;		/* the last pid asked about */
	bool alive;
};

static int reach_add(const struct cprof_mmap *mm, void *arg)
{
	struct reach_build *rb = arg;
	struct resolver *rs = rb->rs;
	struct cprof_file_id id;

	if (!stream__mmap_file_id(mm, &id))
		return 0;
	/* a pid's records come one after the other */
	if (mm->pid != rb->pid) {
		rb->pid = mm->pid;
		rb->alive = mapfile_alive(mm->pid);
	}
	if (!rb->alive)
		return 0;
	if (grow_array(&rs->reach, &rb->alloc, rs->nr_reach + 1,
		       sizeof(*rs->reach)))
		return -1;
	rs->reach[rs->nr_reach].id = id;
	rs->reach[rs->nr_reach++].mm = mm;
	return 0;
}

/*
 * mm's file was not reached through its process (gone, say) nor at its
 * path: another process of the stream that still runs may map it.  The
 * binary reached so, else bin; NULL on OOM.  Whichever process comes first
 * in the samples, every mapping of the file gets its names.  Each file is
 * looked for so once, through an index of the records built once.
 */
static struct binary *resolver__reach(struct resolver *rs,
				      const struct cprof_mmap *mm,
				      const struct mapfile *mf,
				      struct binary *bin)
{
	struct ent key = { .kind = KEY_REACH,
			   .k = { mf->id.dev, mf->id.ino,
				  (uint64_t)mf->id.btime_ns } };
	struct reach_build rb = { .rs = rs };
	struct reach_rec want = { .id = mf->id }, *r;
	uint32_t found;
	void **slot;

	slot = resolver__find(rs, &key, &found);
	if (!slot || (!found && resolver__insert(slot, &key, 0)))
		return NULL;
	if (found)
		return bin;
	if (!rs->reach_built) {
		rs->reach_built = true;
		if (profile__for_each_mmap(rs->p, reach_add, &rb))
			return NULL;
		qsort(rs->reach, rs->nr_reach, sizeof(*rs->reach), reach_cmp);
	}
	r = bsearch(&want, rs->reach, rs->nr_reach, sizeof(*rs->reach),
		    reach_cmp);
	/* to the first of the file's records, then each in turn */
	while (r && r > rs->reach && !reach_cmp(r - 1, &want))
		r--;
	for (; r && r < rs->reach + rs->nr_reach && !reach_cmp(r, &want);
	     r++) {
		struct mapfile other = {
			.path = r->mm->path, .pid = r->mm->pid,
			.start = r->mm->start, .end = r->mm->end,
			.has_id = true, .id = r->id, .strict = true,
		};
		struct binary *b;

		if (r->mm->pid == mm->pid)
			continue;
		b = syms_cache__get(rs->syms, &other, mm->build_id,
				    mm->build_id_size);
		if (!b)
			return NULL;
		if (!binary__error(b))
			return b;
	}
	return bin;
}

/*
 * The names of the JIT code an anonymous executable mapping holds, from
 * its process's perf map (jitmap.h), into st; st->why says why not.  0, or
 * -1 on ENOMEM.
 */
static int resolver__jit(struct resolver *rs, const struct cprof_mmap *mm,
			 struct map_state *st)
{
	uint32_t uid = 0;
	bool has_uid = stream__mmap_uid(mm, &uid);

	if (!rs->strict_files) {
		st->why = "JIT code; perf maps are read for this boot's profiles only";
		return 0;
	}
	if (!rs->jit) {
		rs->jit = jitmaps__new(NULL);
		if (!rs->jit)
			return -1;
		rs->own_jit = true;
	}
	st->jit = jitmaps__get(rs->jit, mm->pid, uid, has_uid, &st->why);
	return st->jit || st->why ? 0 : -1;
}

/* The pprof mapping of an MMAP record, opening its binary once. */
static int resolver__user_mapping(struct resolver *rs,
				  const struct cprof_mmap *mm, uint32_t *id)
{
	struct ent rec_key = { .kind = KEY_MMAP, .k = { (uintptr_t)mm } };
	struct ent key = { .kind = KEY_UMAP };
	struct res_mapping m = { 0 };
	struct map_state st = { 0 };
	struct mapfile mf = {
		.path = mm->path, .pid = mm->pid, .start = mm->start,
		.end = mm->end, .strict = rs->strict_files,
	};
	char hex[2 * CPROF_BUILD_ID_MAX + 1] = "";
	const char *build_id = hex;
	bool jit = !strcmp(mm->path, CPROF_ANON_NAME);
	int64_t file, bid;
	uint32_t found;
	void **slot;

	/* a stack's frames are mostly in one record: the last one asked */
	if (mm == rs->last_mm) {
		*id = rs->last_mapping;
		return 0;
	}
	/* many frames share a record: remember which mapping it became */
	slot = resolver__find(rs, &rec_key, id);
	if (!slot)
		return -1;
	if (*id)
		goto last;
	hex_encode(hex, mm->build_id, mm->build_id_size);
	if (resolver__string(rs, jit ? JIT_MAPPING_NAME : mm->path, &file) ||
	    resolver__string(rs, hex, &bid))
		return -1;
	key.k[0] = mm->start;
	key.k[1] = mm->end;
	key.k[2] = mm->pgoff;
	key.k[3] = file;
	key.k[4] = bid;
	/* a file of the same path in another namespace is another mapping */
	mf.has_id = stream__mmap_file_id(mm, &mf.id);
	key.k[5] = mf.id.dev;
	key.k[6] = mf.id.ino;
	key.k[7] = (uint64_t)mf.id.btime_ns;
	key.k[8] = jit ? mm->pid : 0;
	slot = resolver__find(rs, &key, id);
	if (!slot)
		return -1;
	if (*id)
		goto remember;
	if (!rs->symbolize) {
		/* nothing */
	} else if (jit) {
		if (resolver__jit(rs, mm, &st))
			return -1;
	} else if (mm->path[0] == '\0' || mm->path[0] == '[') {
		st.why = "no file";
	} else {
		st.bin = syms_cache__get(rs->syms, &mf, mm->build_id,
					 mm->build_id_size);
		if (st.bin && binary__error(st.bin) && mf.has_id && mf.strict)
			st.bin = resolver__reach(rs, mm, &mf, st.bin);
		if (!st.bin)
			return -1;
		if (binary__error(st.bin)) {
			st.why = binary__error(st.bin);
			st.bin = NULL;
		} else if (binary__build_id_mismatch(st.bin)) {
			st.why = "build ID differs from the profiled one";
			st.bin = NULL;
		} else if (!mm->build_id_size) {
			build_id = binary__build_id_hex(st.bin);
		}
	}
	if (build_id != hex && resolver__string(rs, build_id, &bid))
		return -1;
	/*
	 * resolver__reach() adds an entry of its own: it may have taken the
	 * empty slot found for this key (the first free one both probed),
	 * or moved the table.
	 */
	slot = resolver__find(rs, &key, &found);
	if (!slot)
		return -1;
	m.start = mm->start;
	m.limit = mm->end;
	m.offset = mm->pgoff;
	m.file = file;
	m.build_id = bid;
	if (resolver__add_mapping(rs, slot, &key, &m, &st, id))
		return -1;
remember:
	slot = resolver__find(rs, &rec_key, &found);
	if (!slot || resolver__insert(slot, &rec_key, *id - 1))
		return -1;
last:
	rs->last_mm = mm;
	rs->last_mapping = *id;
	return 0;
}

/* Location id (index + 1) of JIT code named name from its perf map. */
static int resolver__jit_location(struct resolver *rs, struct map_state *st,
				  const char *name, uint32_t id)
{
	uint32_t func;

	if (!name) {
		st->unresolved++;
		return 0;
	}
	if (resolver__function(rs, name, name, NULL, 0, &func) ||
	    resolver__push_line(rs, func, 0))
		return -1;
	rs->r->locations[id - 1].nr_lines = 1;
	st->nr_func++;
	return 0;
}

static int resolver__user_location(struct resolver *rs, uint32_t pid,
				   uint64_t addr, uint64_t time_ns,
				   uint32_t *id)
{
	struct ent key = { .kind = KEY_ULOC };
	struct sym_frame frames[MAX_INLINE];
	const struct cprof_mmap *mm;
	struct map_state *st;
	uint32_t mapping = 0, func;
	bool file = true, lineno = true;
	const char *jit_name = NULL;
	uint64_t line;
	void **slot;
	int i, n;

	mm = profile__find_mmap(rs->p, pid, addr, time_ns);
	if (mm && resolver__user_mapping(rs, mm, &mapping))
		return -1;
	key.k[0] = mapping;
	key.k[1] = addr;
	/* JIT code: its name when sampled, one location each */
	st = mapping ? &rs->maps[mapping - 1] : NULL;
	if (st && st->jit) {
		jit_name = jitmap__lookup(st->jit, addr, time_ns, &line);
		key.k[2] = jit_name ? line + 1 : 0;
	}
	slot = resolver__find(rs, &key, id);
	if (!slot)
		return -1;
	if (*id)
		return 0;
	if (resolver__add_location(rs, slot, &key, mapping, addr, id))
		return -1;
	if (!mapping) {
		rs->unmapped++;
		return 0;
	}
	st = &rs->maps[mapping - 1];
	st->nr_locs++;
	if (st->jit)
		return resolver__jit_location(rs, st, jit_name, *id);
	if (!st->bin) {
		if (rs->symbolize)
			st->unresolved++;
		return 0;
	}
	n = binary__resolve(st->bin, addr - mm->start + mm->pgoff, frames,
			    MAX_INLINE);
	if (n <= 0) {
		st->unresolved++;
		return 0;
	}
	for (i = 0; i < n; i++) {
		if (resolver__sym_function(rs, &frames[i], &func) ||
		    resolver__push_line(rs, func, frames[i].line))
			return -1;
		file = file && frames[i].file && frames[i].file[0];
		lineno = lineno && frames[i].line > 0;
	}
	rs->r->locations[*id - 1].nr_lines = n;
	st->nr_func++;
	st->nr_file += file;
	st->nr_lineno += lineno;
	return 0;
}

static int resolver__push_loc(struct resolver *rs, uint32_t id);

/* Count a Python code object left unnamed for why. */
static void resolver__py_unnamed(struct resolver *rs, const char *why)
{
	size_t i, n = sizeof(rs->py_unnamed) / sizeof(rs->py_unnamed[0]);

	for (i = 0; i < n && rs->py_unnamed[i].why &&
		    strcmp(rs->py_unnamed[i].why, why); i++)
		;
	if (i == n)
		i = n - 1;	/* whys are a handful: never */
	rs->py_unnamed[i].why = rs->py_unnamed[i].why ? rs->py_unnamed[i].why :
							 why;
	rs->py_unnamed[i].nr++;
}

/* The location (index + 1 in *id) of Python frame f of pid. */
static int resolver__python_location(struct resolver *rs, uint32_t pid,
				     const struct cprof_pyframe *f,
				     uint32_t *id)
{
	uint64_t code = f->code & ~(uint64_t)CPROF_PYFRAME_ENTRY;
	struct ent key = { .kind = KEY_PYLOC };
	const struct pyframes_code *c;
	const char *why = NULL;
	char name[48];
	uint32_t func;
	void **slot;
	int line = 0;

	c = pyframes__get(rs->py, pid, f->code, f->firstlineno, &why);
	if (c) {
		line = pyframes_code__line(c, f->instr);
		if (resolver__function(rs, c->qualname, NULL, c->filename,
				       c->firstlineno, &func))
			return -1;
		key.k[0] = func;
		key.k[1] = (uint64_t)line;
	} else {
		snprintf(name, sizeof(name), "[python code %#llx]",
			 (unsigned long long)code);
		if (resolver__function(rs, name, NULL, NULL, 0, &func))
			return -1;
		key.k[1] = code;
	}
	slot = resolver__find(rs, &key, id);
	if (!slot)
		return -1;
	if (*id)
		return 0;
	if (resolver__add_location(rs, slot, &key, 0, c ? 0 : code, id) ||
	    resolver__push_line(rs, func, line))
		return -1;
	rs->r->locations[*id - 1].nr_lines = 1;
	if (!c)
		resolver__py_unnamed(rs, why ? why : "not read");
	return 0;
}

/* Is location id (index + 1) in the interpreter loop, outermost? */
static bool resolver__is_eval(const struct resolver *rs, uint32_t id)
{
	const struct resolved *r = rs->r;
	const struct res_location *l = &r->locations[id - 1];
	const struct res_line *ln;

	if (!l->nr_lines)
		return false;
	ln = &r->lines[l->line + l->nr_lines - 1];
	return r->functions[ln->function - 1].name == rs->eval_name;
}

/*
 * The user frames of st with its Python frames spliced in (resolve.h),
 * pushed leaf first.
 */
static int resolver__user_python(struct resolver *rs,
				 const struct prof_sample *ps,
				 const struct prof_stack *st)
{
	uint32_t ids[CPROF_MAX_DEPTH];
	/* per group: its first frame; per loop frame: its user frame */
	unsigned int gs[CPROF_MAX_DEPTH + 1], ev[CPROF_MAX_DEPTH];
	/* per loop frame: the groups [ga, gb) it gets */
	unsigned int ga[CPROF_MAX_DEPTH], gb[CPROF_MAX_DEPTH];
	unsigned int nu = st->nr_user < CPROF_MAX_DEPTH ? st->nr_user :
						       CPROF_MAX_DEPTH;
	unsigned int np = st->nr_py < CPROF_MAX_DEPTH ? st->nr_py :
						     CPROF_MAX_DEPTH;
	unsigned int k, i, j, g = 0, q = 0, m, pair, m_at = 0;
	uint32_t id;

	/* (string 0 is "": interned when a stack first has Python frames) */
	if (!rs->eval_name &&
	    resolver__string(rs, PY_EVAL_FUNCTION, &rs->eval_name))
		return -1;
	for (k = 0; k < nu; k++) {
		uint64_t addr = st->ips[st->nr_kernel + k] -
				!(k == 0 && st->user_mode);

		if (resolver__user_location(rs, ps->pid, addr, ps->first_ns,
					    &ids[k]))
			return -1;
		if (resolver__is_eval(rs, ids[k]))
			ev[q++] = k;
	}
	/* groups: each ends at an entry frame (the last one maybe not) */
	for (i = 0; i < np; i++) {
		if (i == 0 || (st->py[i - 1].code & CPROF_PYFRAME_ENTRY))
			gs[g++] = i;
	}
	gs[g] = np;
	memset(ga, 0, sizeof(ga));
	memset(gb, 0, sizeof(gb));
	pair = g < q ? g : q;
	for (m = 0; m < pair; m++) {
		/* loop frame, group: from the outermost end, or the innermost */
		unsigned int e = st->py_whole ? q - 1 - m : m;
		unsigned int grp = st->py_whole ? g - 1 - m : m;

		ga[e] = grp;
		gb[e] = grp + 1;
	}
	if (g > q && q) {
		/* the groups left over: to the last loop frame paired */
		if (st->py_whole)
			ga[0] = 0;		/* the innermost ones */
		else
			gb[q - 1] = g;		/* the outermost ones */
	}
	if (!q) {
		rs->py_unplaced++;
		m_at = nu;	/* inside the outermost user frame */
	}
	for (k = 0; k < nu; k++) {
		unsigned int from = 0, to = 0;

		for (m = 0; m < q; m++)
			if (ev[m] == k && gb[m] > ga[m]) {
				from = gs[ga[m]];
				to = gs[gb[m]];
			}
		if (!q && k + 1 == m_at) {
			from = 0;
			to = np;
		}
		for (j = from; j < to; j++)
			if (resolver__python_location(rs, ps->pid, &st->py[j],
						      &id) ||
			    resolver__push_loc(rs, id))
				return -1;
		if (resolver__push_loc(rs, ids[k]))
			return -1;
	}
	if (!nu)
		for (j = 0; j < np; j++)
			if (resolver__python_location(rs, ps->pid, &st->py[j],
						      &id) ||
			    resolver__push_loc(rs, id))
				return -1;
	return 0;
}

static int resolver__push_loc(struct resolver *rs, uint32_t id)
{
	struct resolved *r = rs->r;

	if (grow_array(&r->loc_ids, &rs->alloc_loc_ids, r->nr_loc_ids + 1,
		 sizeof(*r->loc_ids)))
		return -1;
	r->loc_ids[r->nr_loc_ids++] = id;
	return 0;
}

static int resolver__push_sample(struct resolver *rs,
				 const struct res_sample *s)
{
	struct resolved *r = rs->r;

	if (grow_array(&r->samples, &rs->alloc_samples, r->nr_samples + 1,
		 sizeof(*r->samples)))
		return -1;
	r->samples[r->nr_samples++] = *s;
	r->total_count += s->count;
	r->total_nanos += s->nanos;
	return 0;
}

static int resolver__comment(struct resolver *rs, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int resolver__comment(struct resolver *rs, const char *fmt, ...)
{
	struct resolved *r = rs->r;
	char buf[256];
	int64_t id;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (resolver__string(rs, buf, &id) ||
	    grow_array(&r->comments, &rs->alloc_comments, r->nr_comments + 1,
		 sizeof(*r->comments)))
		return -1;
	r->comments[r->nr_comments++] = id;
	return 0;
}

/* A (stack, pid) pair as an entry of a set: never 0 or 1 (libiberty's). */
static void *stack_pid(const struct prof_sample *ps)
{
	return (void *)(uintptr_t)(((uint64_t)ps->stack << 32 | ps->pid) + 2);
}

static hashval_t stack_pid_hash(const void *e)
{
	uint64_t x = (uintptr_t)e;

	return (hashval_t)(x ^ x >> 29) * 2654435761u;
}

static int stack_pid_eq(const void *a, const void *b)
{
	return a == b;
}

/*
 * Every user location, before the kernel's: opening binaries and reading
 * their DWARF is most of the work, and it overlaps with kallsyms loading.
 * resolver__samples() then finds these locations in the table.  A stack
 * sampled again in the same process is not looked at again here (its
 * locations are there already, unless its mappings changed in between:
 * resolver__samples() makes those).
 */
static int resolver__user_locations(struct resolver *rs)
{
	const struct profile *p = rs->p;
	size_t i, nr = profile__nr_samples(p);
	htab_t seen;
	int err = 0;

	seen = htab_create_alloc(nr ? nr : 1, stack_pid_hash, stack_pid_eq,
				 NULL, calloc, free);
	if (!seen)
		return -1;
	for (i = 0; i < nr && !err; i++) {
		const struct prof_sample *ps = profile__sample(p, i);
		void *key = stack_pid(ps), **slot;
		struct prof_stack st;
		unsigned int k;
		uint32_t id;

		if (rs->stop && *rs->stop) {
			err = CANCELLED;
			break;
		}
		slot = htab_find_slot(seen, key, INSERT);
		if (!slot) {
			err = -1;
			break;
		}
		if (*slot)
			continue;
		*slot = key;
		profile__stack(p, ps->stack, &st);
		for (k = 0; k < st.nr_user; k++) {
			uint64_t addr = st.ips[st.nr_kernel + k] -
					!(k == 0 && st.user_mode);

			if (resolver__user_location(rs, ps->pid, addr,
						    ps->first_ns, &id)) {
				err = -1;
				break;
			}
		}
	}
	htab_delete(seen);
	return err;
}

/* The label of cgroup id (0: none) in *str. */
static int resolver__cgroup(struct resolver *rs, uint64_t id, int64_t *str)
{
	const char *path = rs->cgroups ? cgroups__path(rs->cgroups, id) : NULL;
	char buf[32];

	*str = 0;
	if (!id)
		return 0;
	if (!path) {
		snprintf(buf, sizeof(buf), "id:%llu", (unsigned long long)id);
		path = buf;
	}
	return resolver__string(rs, path, str);
}

/*
 * The state label of a sample (0: none): where it was off the CPU, or, in a
 * wall profile, "running" for a tick's (in a snapshot, a thread's on a
 * CPU).
 */
static int resolver__state(struct resolver *rs, unsigned int off_state,
			   int64_t *str)
{
	static const char *const names[] = {
		[CPROF_OFF_PREEMPTED] = "preempted",
		[CPROF_OFF_SLEEPING] = "sleeping",
		[CPROF_OFF_DISK] = "uninterruptible",
		[CPROF_OFF_STOPPED] = "stopped",
		[CPROF_OFF_OTHER] = "other",
	};

	*str = 0;
	if (off_state == PROF_ON_CPU)
		return rs->r->kind == CPROF_KIND_WALL ||
		       rs->r->kind == CPROF_KIND_THREADS ?
		       resolver__string(rs, "running", str) : 0;
	if (off_state - 1 >= sizeof(names) / sizeof(names[0]))
		return 0;
	return resolver__string(rs, names[off_state - 1], str);
}

/*
 * A location of its own for a frame no address stands for (lost samples,
 * a truncated stack's outermost), named @name; @tag (1, 2, ...) makes its
 * key unlike any real user location's and any other such frame's.  Its
 * index + 1 in *id.  0 ok, -1 ENOMEM.
 */
static int resolver__synthetic(struct resolver *rs, const char *name,
			       uint64_t tag, uint32_t *id)
{
	struct ent key = { .kind = KEY_ULOC, .k = { 0, 0, tag } };
	uint32_t func;
	void **slot;

	slot = resolver__find(rs, &key, id);
	if (!slot)
		return -1;
	if (*id)
		return 0;
	if (resolver__function(rs, name, NULL, NULL, 0, &func))
		return -1;
	/* the function's entry may have taken the slot, or moved the table */
	slot = resolver__find(rs, &key, id);
	if (!slot || resolver__add_location(rs, slot, &key, 0, 0, id) ||
	    resolver__push_line(rs, func, 0))
		return -1;
	rs->r->locations[*id - 1].nr_lines = 1;
	return 0;
}

/*
 * One sample per aggregation key: kernel frames, then user frames, then a
 * "[truncated]" frame if a walk stopped short (never shown as complete).
 */
static int resolver__samples(struct resolver *rs)
{
	const struct profile *p = rs->p;
	size_t i, nr = profile__nr_samples(p);

	for (i = 0; i < nr; i++) {
		const struct prof_sample *ps = profile__sample(p, i);
		struct res_sample s = {
			.loc = rs->r->nr_loc_ids,
			.count = ps->count,
			.nanos = ps->nanos,
			.live_count = ps->live_count,
			.live_bytes = ps->live_bytes,
			.pid = ps->pid,
			.tid = ps->tid,
			.cpu = ps->cpu,
			.waiter_pid = ps->waiter_pid,
			.waiter_tid = ps->waiter_tid,
		};
		struct prof_stack st;
		unsigned int k;
		uint32_t id;

		profile__stack(p, ps->stack, &st);
		for (k = 0; k < st.nr_kernel; k++) {
			uint64_t addr = st.ips[k] - (k > 0);

			if (resolver__kernel_location(rs, addr, &id) ||
			    resolver__push_loc(rs, id))
				return -1;
		}
		for (k = 0; !st.nr_py && k < st.nr_user; k++) {
			uint64_t addr = st.ips[st.nr_kernel + k] -
					!(k == 0 && st.user_mode);

			if (resolver__user_location(rs, ps->pid, addr,
						    ps->first_ns, &id) ||
			    resolver__push_loc(rs, id))
				return -1;
		}
		if (st.nr_py && resolver__user_python(rs, ps, &st))
			return -1;
		if (st.truncated &&
		    (resolver__synthetic(rs, TRUNCATED_FUNCTION_NAME, 2, &id) ||
		     resolver__push_loc(rs, id)))
			return -1;
		s.nr_locs = rs->r->nr_loc_ids - s.loc;
		if (resolver__cgroup(rs, ps->cgroup, &s.cgroup) ||
		    resolver__state(rs, ps->off_state, &s.state) ||
		    resolver__string(rs, ps->comm, &s.comm) ||
		    (ps->waiter_tid &&
		     resolver__string(rs, ps->waiter_comm, &s.waiter_comm)) ||
		    resolver__push_sample(rs, &s))
			return -1;
	}
	return 0;
}

/*
 * Lost samples, on a synthetic "[lost samples]" location so that totals
 * match the kernel's counters: one sample per CPU from LOST records, and
 * whatever more the END record counts without a CPU.
 */
static int resolver__lost(struct resolver *rs)
{
	const struct profile *p = rs->p;
	const struct cprof_header *h = profile__header(p);
	const struct cprof_end *end = profile__end(p);
	struct res_sample s = { .pid = -1, .tid = -1, .nr_locs = 1 };
	uint64_t sum, other, nanos;
	uint32_t loc = 0;
	unsigned int cpu;

	sum = profile__lost_total(p, &other);
	if (end && end->lost > sum)
		sum = end->lost;
	rs->r->lost = sum;
	if (!sum)
		return 0;
	if (resolver__synthetic(rs, LOST_FUNCTION_NAME, 1, &loc))
		return -1;

	sum = 0;
	for (cpu = 0; cpu < h->nr_cpu_ids; cpu++) {
		s.count = profile__lost(p, cpu, &nanos);
		if (!s.count)
			continue;
		/* a futex wake-up lost: its delay unknown; an allocation's size */
		s.nanos = h->kind == CPROF_KIND_MUTEX ||
			  h->kind == CPROF_KIND_HEAP ? 0 : nanos;
		s.cpu = cpu;
		s.loc = rs->r->nr_loc_ids;
		sum += s.count;
		if (resolver__push_loc(rs, loc) || resolver__push_sample(rs, &s))
			return -1;
	}
	if (rs->r->lost > sum) {
		s.count = rs->r->lost - sum;
		s.nanos = h->kind == CPROF_KIND_MUTEX ||
			  h->kind == CPROF_KIND_HEAP ? 0 :
			  s.count * h->period_ns;
		s.cpu = -1;
		s.loc = rs->r->nr_loc_ids;
		if (resolver__push_loc(rs, loc) || resolver__push_sample(rs, &s))
			return -1;
	}
	if (h->kind == CPROF_KIND_MUTEX)
		return resolver__comment(rs, "%llu futex wake-ups not recorded (per-CPU buffers full, over the budget, or no room to note the sleep): counted as [lost samples], their delay unknown",
					 (unsigned long long)rs->r->lost);
	if (h->kind == CPROF_KIND_HEAP)
		return resolver__comment(rs, "%llu sampled allocations not recorded (per-CPU buffers full, over the budget, or the module's table of live allocations full): counted as [lost samples], their size unknown",
					 (unsigned long long)rs->r->lost);
	if (h->kind == CPROF_KIND_THREADCREATE)
		return resolver__comment(rs, "%llu task creations not recorded (per-CPU buffers full, or over the budget): counted as [lost samples]",
					 (unsigned long long)rs->r->lost);
	return resolver__comment(rs, "%llu samples lost (per-CPU buffers full)",
				 (unsigned long long)rs->r->lost);
}

/* has_* flags: true only when every location of the mapping has it. */
static void resolver__mapping_flags(struct resolver *rs)
{
	size_t i;

	for (i = 0; i < rs->r->nr_mappings; i++) {
		struct res_mapping *m = &rs->r->mappings[i];
		const struct map_state *st = &rs->maps[i];
		bool all = st->nr_locs && st->nr_func == st->nr_locs;

		m->has_functions = all;
		if (m->kernel)
			continue;
		m->has_filenames = all && st->nr_file == st->nr_locs;
		m->has_line_numbers = all && st->nr_lineno == st->nr_locs;
		m->has_inline_frames = m->has_line_numbers && st->bin &&
				       binary__has_debuginfo(st->bin);
	}
}

struct unres {
	int64_t file;
	const char *why;
	uint64_t nr;
};

/*
 * A file put where a binary was, that the symbolizer refused to open (a
 * FIFO, a device), another file than the one mapped (another mount
 * namespace's), or one whose symbols it left unread for a bound they pass
 * (a user's decompression bomb): named first, whatever its count, so that
 * none is ever hidden behind "and more".
 */
static bool unres_refused(const struct unres *u)
{
	return !strcmp(u->why, safe_strerror(SAFEOPEN_NOT_REGULAR)) ||
	       mapfile_refused(u->why) || jitmap_refused(u->why) ||
	       elfbound_refused(u->why);
}

static int unres_cmp(const void *a, const void *b)
{
	const struct unres *x = a, *y = b;

	if (unres_refused(x) != unres_refused(y))
		return unres_refused(y) - unres_refused(x);
	if (x->nr != y->nr)
		return (x->nr < y->nr) - (x->nr > y->nr);	/* most first */
	return (x->file > y->file) - (x->file < y->file);
}

/*
 * One line naming what could not be symbolized, by binary, e.g.
 *   12 addresses left unsymbolized: 10 in /usr/bin/foo (not found), 2 in no known mapping
 */
static int resolver__summary(struct resolver *rs)
{
	const struct resolved *r = rs->r;
	struct unres *u;
	const char *why;
	uint64_t total = rs->unmapped;
	size_t i, j, n = 0;
	char *line = NULL;
	size_t len = 0;
	FILE *f;

	if (!rs->symbolize)
		return 0;
	u = calloc(r->nr_mappings + 1, sizeof(*u));
	if (!u)
		return -1;
	for (i = 0; i < r->nr_mappings; i++) {
		const struct map_state *st = &rs->maps[i];

		if (!st->unresolved || (r->mappings[i].kernel && !rs->ks))
			continue;
		total += st->unresolved;
		why = st->why ? st->why : "no symbol";
		/* by path and reason: one namespace's may not hide another's */
		for (j = 0; j < n && (u[j].file != r->mappings[i].file ||
				      strcmp(u[j].why, why)); j++)
			;
		if (j == n) {
			u[n].file = r->mappings[i].file;
			u[n].why = why;
			n++;
		}
		u[j].nr += st->unresolved;
	}
	if (!total) {
		free(u);
		return 0;
	}
	qsort(u, n, sizeof(*u), unres_cmp);
	f = open_memstream(&line, &len);
	if (!f) {
		free(u);
		return -1;
	}
	fprintf(f, "%llu address%s left unsymbolized:",
		(unsigned long long)total, total == 1 ? "" : "es");
	for (i = 0; i < n && i < SUMMARY_MAX; i++)
		fprintf(f, "%s %llu in %s (%s)", i ? "," : "",
			(unsigned long long)u[i].nr,
			esc(strtab__get(r->strings, u[i].file)), esc(u[i].why));
	if (n > SUMMARY_MAX)
		fprintf(f, ", and more in %zu other binaries", n - SUMMARY_MAX);
	if (rs->unmapped)
		fprintf(f, "%s %llu in no known mapping", n ? "," : "",
			(unsigned long long)rs->unmapped);
	if (fclose(f)) {
		free(u);
		free(line);
		return -1;
	}
	warning("%s", line);
	free(line);
	free(u);
	return 0;
}

/*
 * One line on the Python frames that stayed unnamed, by why, e.g.
 *   Python frames: 3 code objects left unnamed: 2 (the process was gone before it was read), 1 (...)
 * and one on the stacks whose Python frames had no loop frame to go in.
 */
static int resolver__py_summary(struct resolver *rs)
{
	size_t i, n = sizeof(rs->py_unnamed) / sizeof(rs->py_unnamed[0]);
	uint64_t total = 0;
	char *line = NULL;
	size_t len = 0;
	FILE *f;

	/* as for addresses: --no-symbolize is not asked to name anything */
	if (!rs->symbolize)
		return 0;
	if (rs->py_unplaced)
		warning("Python frames: %llu stack%s with no " PY_EVAL_FUNCTION " frame named (an unsymbolized interpreter?): their Python frames are shown just inside the outermost user frame",
			(unsigned long long)rs->py_unplaced,
			rs->py_unplaced == 1 ? "" : "s");
	for (i = 0; i < n; i++)
		total += rs->py_unnamed[i].nr;
	if (!total)
		return 0;
	f = open_memstream(&line, &len);
	if (!f)
		return -1;
	fprintf(f, "Python frames: %llu code object%s left unnamed:",
		(unsigned long long)total, total == 1 ? "" : "s");
	for (i = 0; i < n && rs->py_unnamed[i].nr; i++)
		fprintf(f, "%s %llu (%s)", i ? "," : "",
			(unsigned long long)rs->py_unnamed[i].nr,
			esc(rs->py_unnamed[i].why));
	if (fclose(f)) {
		free(line);
		return -1;
	}
	warning("%s", line);
	free(line);
	return 0;
}

int resolve_opts__start_ksyms(struct resolve_opts *opts)
{
	opts->ksyms_loader = kcache__load_start(opts->kallsyms, opts->modules);
	return opts->ksyms_loader ? 0 : -1;
}

/* Take the loaded kallsyms and check it is from the profiled boot. */
static void resolver__load_ksyms(struct resolver *rs,
				 const struct resolve_opts *opts,
				 struct kcache_loader *loader)
{
	const struct cprof_header *h = profile__header(rs->p);
	const char *kallsyms = opts->kallsyms ? opts->kallsyms : "/proc/kallsyms";
	const struct ksym *sym;
	uint64_t schedule;

	rs->kallsyms = opts->kallsyms;
	rs->modules = opts->modules;
	rs->ks = kcache__load_finish(loader);
	if (!rs->ks) {
		warning("no kernel symbols: kernel frames left unsymbolized");
		return;
	}
	if (!h->ksym_schedule)
		return;
	/* the stream's schedule first: a lookup, not a walk of every name */
	sym = ksyms__map_addr(rs->ks, h->ksym_schedule);
	if (sym && sym->addr == h->ksym_schedule &&
	    !strcmp(sym->name, "schedule"))
		return;
	schedule = ksyms__addr_of(rs->ks, "schedule");
	if (schedule != h->ksym_schedule) {
		warning("%s is not from the profiled kernel (schedule at %#llx, the stream says %#llx): kernel frames left unsymbolized",
			esc(kallsyms), (unsigned long long)schedule,
			(unsigned long long)h->ksym_schedule);
		ksyms__free(rs->ks);
		rs->ks = NULL;
	}
}

static int resolver__header(struct resolver *rs)
{
	const struct cprof_header *h = profile__header(rs->p);
	const struct cprof_end *end = profile__end(rs->p);
	struct resolved *r = rs->r;
	char release[CPROF_RELEASE_LEN + 1] = "";
	uint64_t user, table;

	memcpy(release, h->release, CPROF_RELEASE_LEN);
	r->kind = h->kind;
	r->timeline = profile__timeline(rs->p);
	r->period_ns = h->period_ns;
	r->heap_rate = h->kind == CPROF_KIND_HEAP ? h->heap_rate : 0;
	r->time_nanos = h->start_realtime_ns;
	r->duration_nanos = end ? end->duration_ns : h->duration_ns;
	r->start_ns = h->start_time_ns;
	r->pid = h->pid;
	r->end_ns = end && end->time_ns ? end->time_ns :
		    h->start_time_ns + r->duration_nanos;
	profile__lost_total(rs->p, &r->lost_other);
	if (h->kind == CPROF_KIND_THREADS ?
	    resolver__comment(rs, "cprof: Linux %s, a snapshot of every thread, %u CPUs",
			      release, h->online_cpus) :
	    h->kind == CPROF_KIND_MUTEX ?
	    resolver__comment(rs, "cprof: Linux %s, every futex wait ended by a futex call, by the waker's stacks (the unlocker), %u CPUs",
			      release, h->online_cpus) :
	    h->kind == CPROF_KIND_HEAP ?
	    resolver__comment(rs, "cprof: Linux %s, process %u's glibc allocations sampled once per %u bytes on average, by the allocating thread's stack; allocations made before the probes attached are unseen, inuse counts those not seen freed by the end",
			      release, h->pid, h->heap_rate) :
	    h->kind == CPROF_KIND_THREADCREATE ?
	    resolver__comment(rs, "cprof: Linux %s, every task created (thread or process), by the creating thread's stacks, %u CPUs",
			      release, h->online_cpus) :
	    h->kind == CPROF_KIND_TRACE ?
	    resolver__comment(rs, "cprof: Linux %s, every context switch and wake-up, the stacks of each task leaving the CPU, %u CPUs",
			      release, h->online_cpus) :
	    resolver__comment(rs, "cprof: Linux %s, %u Hz, %u CPUs", release,
			      h->freq, h->online_cpus))
		return -1;
	if ((h->flags & CPROF_HDR_NO_KERNEL) &&
	    resolver__comment(rs, "kernel stacks withheld: kernel addresses are hidden from this user (kptr_restrict)"))
		return -1;
	profile__user_walks(rs->p, &user, &table);
	if (user &&
	    resolver__comment(rs, "user stacks: %llu of %llu walked with unwind tables, the others by frame pointers only",
			      (unsigned long long)table,
			      (unsigned long long)user))
		return -1;
	if (end && end->reason == CPROF_END_SIGNAL)
		return resolver__comment(rs, "profile stopped early by a signal");
	if (end && end->reason == CPROF_END_UNLOAD)
		return resolver__comment(rs, "profile stopped early: module unloaded");
	if (end && end->reason == CPROF_END_STOP)
		return resolver__comment(rs, "profile stopped early on request (stop=1 in ctl)");
	if (end && end->reason != CPROF_END_COMPLETE)
		return resolver__comment(rs, "profile stopped early (END reason %u)",
					 end->reason);
	return 0;
}

struct resolved *resolved__new(const struct profile *p,
			       const struct resolve_opts *opts)
{
	struct resolver rs = {
		.p = p, .symbolize = opts->symbolize, .stop = opts->stop,
		.py = opts->python, .jit = opts->jit,
	};
	const struct cprof_header *h = profile__header(p);
	struct resolve_opts own = *opts;
	struct kcache_loader *loader = NULL;
	int err = -1;

	if (rs.symbolize && !own.ksyms_loader &&
	    resolve_opts__start_ksyms(&own))
		goto cleanup;
	loader = own.ksyms_loader;
	rs.strict_files = same_boot(h->start_realtime_ns, h->start_time_ns);
	if (opts->cgroups && rs.strict_files)
		rs.cgroups = opts->cgroups;
	rs.r = calloc(1, sizeof(*rs.r));
	if (!rs.r)
		goto cleanup;
	rs.r->strings = strtab__new();
	rs.tab = htab_create_alloc(4096, ent_hash, ent_eq, free, calloc, free);
	if (!rs.r->strings || !rs.tab)
		goto cleanup;
	if (rs.symbolize) {
		rs.syms = syms_cache__new();
		if (!rs.syms)
			goto cleanup;
		err = resolver__user_locations(&rs);
		if (err)
			goto cleanup;
		err = -1;
		resolver__load_ksyms(&rs, opts, loader);
		loader = NULL;
	}
	if (resolver__header(&rs) || resolver__samples(&rs) ||
	    resolver__lost(&rs))
		goto cleanup;
	resolver__mapping_flags(&rs);
	err = resolver__summary(&rs);
	if (!err)
		err = resolver__py_summary(&rs);
	if (!err && rs.symbolize)
		debugfetch_summary();
cleanup:
	if (err) {
		if (err != CANCELLED)
			fail("failed to build the profile: %s",
			     strerror(ENOMEM));
		resolved__free(rs.r);
		rs.r = NULL;
	}
	kcache__load_cancel(loader);
	if (rs.tab)
		htab_delete(rs.tab);
	free(rs.maps);
	syms_cache__free(rs.syms);
	if (rs.own_jit)
		jitmaps__free(rs.jit);
	free(rs.reach);
	ksyms__free(rs.ks);
	return rs.r;
}

void resolved__free(struct resolved *r)
{
	if (!r)
		return;
	strtab__free(r->strings);
	free(r->mappings);
	free(r->functions);
	free(r->locations);
	free(r->lines);
	free(r->loc_ids);
	free(r->samples);
	free(r->comments);
	free(r);
}
