// SPDX-License-Identifier: GPL-2.0
/*
 * Kernel symbols from /proc/kallsyms, module extents from /proc/modules.
 *
 * All names live in one string buffer; symbols in one array sorted by
 * address, so a lookup is a binary search.  Only text symbols are kept
 * (t/T and weak w/W).  A symbol's size is the distance to the next symbol,
 * capped at the end of the object (vmlinux text or module) it belongs to.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "symbolize/ksyms.h"
#include "lib/util.h"

/* the end of a last symbol nothing bounds: the end of its page, like perf */
#define KSYM_PAGE	4096ULL

struct kmod {
	const char *name;
	uint64_t start;
	uint64_t end;
	int from_syms;		/* not in /proc/modules: span of its symbols */
};

struct ksyms {
	struct ksym *syms;
	size_t nr_syms;
	struct kmod *mods;
	size_t nr_mods;
	char *strs;
	uint64_t stext, etext;	/* vmlinux text range, [stext, etext) */
	int have_etext;		/* from _stext/_etext, so sizes may be capped */
	bool packed;		/* from ksyms__unpack(): a part of kallsyms */
	uint64_t vlo, vhi;	/* packed: vmlinux's symbols' span */
};

/*
 * While loading, names are offsets into the (growing) string buffer; they
 * become pointers once the buffer stops moving.
 */
struct raw_sym {
	uint64_t addr;
	size_t name_off;
	size_t mod_off;		/* SIZE_MAX for vmlinux */
	size_t seq;		/* line number, for a stable order */
	int rank;		/* among aliases the highest rank wins lookups */
};

struct raw_mod {
	size_t name_off;
	uint64_t start, end;
	int from_syms;
};

struct loader {
	const char *path;
	char err[KSYMS_ERR_MAX];	/* the first error, reported by the caller */
	char *strs;
	size_t strs_len, strs_cap;
	struct raw_sym *syms;
	size_t nr_syms, syms_cap;
	struct raw_mod *mods;
	size_t nr_mods, mods_cap;
};

static void ld_err(struct loader *ld, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void ld_err(struct loader *ld, const char *fmt, ...)
{
	va_list ap;

	if (ld->err[0])
		return;
	va_start(ap, fmt);
	vsnprintf(ld->err, sizeof(ld->err), fmt, ap);
	va_end(ap);
}

static size_t add_str(struct loader *ld, const char *s, size_t len)
{
	size_t off = ld->strs_len;

	if (grow_array((void **)&ld->strs, &ld->strs_cap, off + len + 1, 1))
		return SIZE_MAX;
	memcpy(ld->strs + off, s, len);
	ld->strs[off + len] = '\0';
	ld->strs_len += len + 1;
	return off;
}

static int find_raw_mod(const struct loader *ld, const char *name)
{
	size_t i;

	for (i = 0; i < ld->nr_mods; i++)
		if (!strcmp(ld->strs + ld->mods[i].name_off, name))
			return (int)i;
	return -1;
}

static bool ends_with(const char *s, const char *end)
{
	size_t n = strlen(s), m = strlen(end);

	return n >= m && !strcmp(s + n - m, end);
}

/*
 * Among symbols at one address, prefer global over local over weak names,
 * and any function over the linker's marks of a section's bounds
 * (__sched_text_start is io_schedule_timeout's address, _stext another's).
 */
static int sym_rank(char type, const char *name)
{
	int rank = 0;

	if (type == 'T')
		rank = 2;
	else if (type == 't')
		rank = 1;
	if (!strncmp(name, "__pfx_", 6) || !strncmp(name, "__cfi_", 6))
		rank -= 4;
	else if (name[0] == '_' && (ends_with(name, "_start") ||
				    ends_with(name, "_end") ||
				    !strcmp(name, "_stext") ||
				    !strcmp(name, "_text")))
		rank -= 2;
	return rank;
}

static int hexval(unsigned char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c |= 0x20;
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/*
 * One kallsyms line "addr type name[\t[module]]" in place at ld->strs +
 * off, NUL-terminated where its newline was: a text symbol's name and
 * module become strings right there.  1 kept, 0 skipped, -1 OOM.
 */
static int parse_kallsyms_line(struct loader *ld, size_t off, size_t *mod_hint)
{
	char *line = ld->strs + off, *p = line, *name, *mod = NULL;
	uint64_t addr = 0;
	struct raw_sym *s;
	size_t name_len;
	char type;
	int v;

	for (; (v = hexval(*p)) >= 0; p++) {
		if (p - line == 16)
			return 0;	/* not a 64-bit address */
		addr = addr << 4 | v;
	}
	if (p == line || (*p != ' ' && *p != '\t'))
		return 0;
	while (*p == ' ' || *p == '\t')
		p++;
	type = *p++;
	if ((type | 0x20) != 't' && (type | 0x20) != 'w')
		return 0;
	if (*p != ' ' && *p != '\t')
		return 0;
	while (*p == ' ' || *p == '\t')
		p++;
	name = p;
	name_len = strcspn(name, " \t\r");
	if (!name_len)
		return 0;
	p = name + name_len;
	if (*p) {
		mod = strchr(p + 1, '[');
		if (mod) {
			char *close = strchr(++mod, ']');

			if (!close)
				mod = NULL;
			else
				*close = '\0';
		}
	}
	name[name_len] = '\0';

	if (grow_array((void **)&ld->syms, &ld->syms_cap, ld->nr_syms + 1,
		 sizeof(*ld->syms)))
		return -1;
	s = &ld->syms[ld->nr_syms];
	s->addr = addr;
	s->seq = ld->nr_syms;
	s->rank = sym_rank(type, name);
	s->mod_off = SIZE_MAX;
	if (mod && *mod) {
		/* module symbols come grouped: reuse the previous name */
		if (*mod_hint == SIZE_MAX || strcmp(ld->strs + *mod_hint, mod))
			*mod_hint = mod - ld->strs;
		s->mod_off = *mod_hint;
	}
	s->name_off = name - ld->strs;
	ld->nr_syms++;
	return 1;
}

/*
 * The whole file, read into ld->strs in large reads (the kernel formats
 * /proc/kallsyms per read: few reads, few round trips), then parsed in place.
 */
static int read_whole(struct loader *ld, const char *path)
{
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		ld_err(ld, "failed to open %s: %s", esc(path), strerror(errno));
		return -1;
	}
	for (;;) {
		if (grow_array((void **)&ld->strs, &ld->strs_cap,
			       ld->strs_len + (1 << 20) + 1, 1)) {
			ld_err(ld, "failed to load %s: out of memory", esc(path));
			break;
		}
		n = read(fd, ld->strs + ld->strs_len,
			 ld->strs_cap - ld->strs_len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			ld_err(ld, "failed to read %s: %s", esc(path),
			       strerror(errno));
			break;
		}
		if (!n) {
			close(fd);
			ld->strs[ld->strs_len++] = '\0';
			return 0;
		}
		ld->strs_len += n;
	}
	close(fd);
	return -1;
}

static int load_kallsyms(struct loader *ld, const char *path)
{
	size_t mod_hint = SIZE_MAX, off = 0, end, i;
	int nonzero = 0;
	char *nl;

	if (read_whole(ld, path))
		return -1;
	/* the terminating NUL read_whole() added is the last string */
	end = ld->strs_len - 1;
	while (off < end) {
		nl = memchr(ld->strs + off, '\n', end - off);
		if (nl)
			*nl = '\0';
		if (parse_kallsyms_line(ld, off, &mod_hint) < 0) {
			ld_err(ld, "failed to load %s: out of memory", esc(path));
			return -1;
		}
		off = nl ? (size_t)(nl - ld->strs) + 1 : end;
	}
	if (!ld->nr_syms) {
		ld_err(ld, "failed to load %s: no text symbols", esc(path));
		return -1;
	}
	for (i = 0; i < ld->nr_syms && !nonzero; i++)
		nonzero = ld->syms[i].addr != 0;
	if (!nonzero) {
		ld_err(ld, "failed to load %s: kernel addresses hidden: run as root",
			esc(path));
		return -1;
	}
	return 0;
}

/* "name size refcount deps state addr [taint]" */
static int load_modules(struct loader *ld, const char *path)
{
	char *line = NULL, name[256];
	unsigned long long size, addr;
	size_t cap = 0;
	int err = 0, idx;
	FILE *f;

	f = fopen(path, "r");
	if (!f) {
		/* a kernel without module support has no /proc/modules */
		if (errno == ENOENT)
			return 0;
		ld_err(ld, "failed to open %s: %s", esc(path), strerror(errno));
		return -1;
	}
	while (getline(&line, &cap, f) > 0) {
		struct raw_mod *m;

		if (sscanf(line, "%255s %llu %*s %*s %*s %llx", name, &size,
			   &addr) != 3 || !addr)
			continue;
		idx = find_raw_mod(ld, name);
		if (idx < 0) {
			if (grow_array((void **)&ld->mods, &ld->mods_cap,
				 ld->nr_mods + 1, sizeof(*ld->mods))) {
				err = -1;
				break;
			}
			m = &ld->mods[ld->nr_mods];
			m->from_syms = 0;
			m->name_off = add_str(ld, name, strlen(name));
			if (m->name_off == SIZE_MAX) {
				err = -1;
				break;
			}
			ld->nr_mods++;
		} else {
			m = &ld->mods[idx];
		}
		m->start = addr;
		m->end = addr + size;
	}
	if (err)
		ld_err(ld, "failed to load %s: out of memory", esc(path));
	else if (ferror(f)) {
		ld_err(ld, "failed to read %s: %s", esc(path),
			strerror(errno));
		err = -1;
	}
	free(line);
	fclose(f);
	return err;
}

static int raw_sym_cmp(const void *a, const void *b)
{
	const struct raw_sym *x = a, *y = b;

	if (x->addr != y->addr)
		return (x->addr > y->addr) - (x->addr < y->addr);
	if (x->rank != y->rank)
		return (x->rank > y->rank) - (x->rank < y->rank);
	return (x->seq > y->seq) - (x->seq < y->seq);
}

static const struct kmod *find_mod(const struct ksyms *ks, const char *name)
{
	size_t i;

	for (i = 0; i < ks->nr_mods; i++)
		if (!strcmp(ks->mods[i].name, name))
			return &ks->mods[i];
	return NULL;
}

/*
 * Module symbols whose module /proc/modules did not list (bpf programs,
 * ftrace trampolines, hidden addresses) get an extent from their symbols.
 */
static int add_symbol_only_mods(struct loader *ld)
{
	size_t i;
	int idx;

	for (i = 0; i < ld->nr_syms; i++) {
		struct raw_sym *s = &ld->syms[i];
		struct raw_mod *m;

		if (s->mod_off == SIZE_MAX)
			continue;
		idx = find_raw_mod(ld, ld->strs + s->mod_off);
		if (idx < 0) {
			if (grow_array((void **)&ld->mods, &ld->mods_cap,
				 ld->nr_mods + 1, sizeof(*ld->mods)))
				return -1;
			m = &ld->mods[ld->nr_mods++];
			m->name_off = s->mod_off;
			m->start = 0;
			m->end = 0;
			m->from_syms = 1;
		}
	}
	return 0;
}

/* The end a symbol's size may not cross; 0 if unknown. */
static uint64_t sym_limit(const struct ksyms *ks, const struct ksym *s)
{
	const struct kmod *m;

	if (!s->module)
		return ks->have_etext && s->addr >= ks->stext &&
		       s->addr < ks->etext ? ks->etext : 0;
	m = find_mod(ks, s->module);
	if (m && !m->from_syms && s->addr >= m->start && s->addr < m->end)
		return m->end;
	return 0;
}

static int same_object(const struct ksym *a, const struct ksym *b)
{
	if (!a->module || !b->module)
		return a->module == b->module;
	return !strcmp(a->module, b->module);
}

static void compute_sizes(struct ksyms *ks)
{
	size_t i;

	for (i = 0; i < ks->nr_syms; i++) {
		struct ksym *s = &ks->syms[i];
		uint64_t limit, next = 0;

		if (i + 1 < ks->nr_syms && same_object(s, &ks->syms[i + 1]))
			next = ks->syms[i + 1].addr;
		limit = sym_limit(ks, s);
		if (!limit && !next) {
			/* last of its object, end unknown: to the page end */
			limit = (s->addr | (KSYM_PAGE - 1)) + 1;
			if (i + 1 < ks->nr_syms && ks->syms[i + 1].addr < limit)
				limit = ks->syms[i + 1].addr;
		}
		if (limit && (!next || next > limit))
			next = limit;
		s->size = next > s->addr ? next - s->addr : 0;
	}
}

/* Extents of modules that /proc/modules did not list: their symbols' span. */
static void compute_symbol_only_mods(struct ksyms *ks)
{
	struct kmod *m = NULL;
	size_t i;

	for (i = 0; i < ks->nr_syms; i++) {
		const struct ksym *s = &ks->syms[i];
		uint64_t end = s->addr + (s->size ? s->size : 1);

		if (!s->module)
			continue;
		if (!m || strcmp(m->name, s->module))
			m = (struct kmod *)find_mod(ks, s->module);
		if (!m || !m->from_syms)
			continue;
		if (!m->end) {
			m->start = s->addr;
			m->end = end;
			continue;
		}
		if (s->addr < m->start)
			m->start = s->addr;
		if (end > m->end)
			m->end = end;
	}
}

/* _stext/_etext; else the span of the vmlinux text symbols */
static void compute_kernel_range(struct ksyms *ks, int use_sizes)
{
	uint64_t lo = UINT64_MAX, hi = 0;
	uint64_t stext = 0, etext = 0;
	size_t i;

	for (i = 0; i < ks->nr_syms; i++) {
		const struct ksym *s = &ks->syms[i];
		uint64_t end = s->addr + (s->size ? s->size : 1);

		if (s->module)
			continue;
		if (!strcmp(s->name, "_stext"))
			stext = s->addr;
		else if (!strcmp(s->name, "_etext"))
			etext = s->addr;
		if (s->addr < lo)
			lo = s->addr;
		if (end > hi)
			hi = end;
	}
	if (stext && etext > stext) {
		ks->stext = stext;
		ks->etext = etext;
		ks->have_etext = 1;
	} else if (use_sizes && hi > lo) {
		ks->stext = lo;
		ks->etext = hi;
	}
}

static struct ksyms *build(struct loader *ld)
{
	struct ksyms *ks;
	size_t i;

	ks = calloc(1, sizeof(*ks));
	if (!ks)
		return NULL;
	ks->syms = calloc(ld->nr_syms, sizeof(*ks->syms));
	ks->mods = calloc(ld->nr_mods ? ld->nr_mods : 1, sizeof(*ks->mods));
	if (!ks->syms || !ks->mods) {
		ksyms__free(ks);
		return NULL;
	}
	ks->strs = ld->strs;
	ld->strs = NULL;

	qsort(ld->syms, ld->nr_syms, sizeof(*ld->syms), raw_sym_cmp);
	for (i = 0; i < ld->nr_syms; i++) {
		const struct raw_sym *r = &ld->syms[i];

		ks->syms[i].addr = r->addr;
		ks->syms[i].name = ks->strs + r->name_off;
		ks->syms[i].module = r->mod_off == SIZE_MAX ? NULL :
				     ks->strs + r->mod_off;
	}
	ks->nr_syms = ld->nr_syms;
	for (i = 0; i < ld->nr_mods; i++) {
		ks->mods[i].name = ks->strs + ld->mods[i].name_off;
		ks->mods[i].start = ld->mods[i].start;
		ks->mods[i].end = ld->mods[i].end;
		ks->mods[i].from_syms = ld->mods[i].from_syms;
	}
	ks->nr_mods = ld->nr_mods;

	/* vmlinux sizes are capped at _etext: find it before sizing */
	compute_kernel_range(ks, 0);
	compute_sizes(ks);
	compute_symbol_only_mods(ks);
	compute_kernel_range(ks, 1);
	return ks;
}

struct ksyms *ksyms__load_quiet(const char *kallsyms_path, const char *modules_path,
			  char *err, size_t err_len)
{
	struct loader ld = { .path = kallsyms_path };
	struct ksyms *ks = NULL;

	if (!kallsyms_path) {
		ld_err(&ld, "failed to load kernel symbols: no kallsyms path");
		goto out;
	}
	if (load_kallsyms(&ld, kallsyms_path))
		goto out;
	if (modules_path && load_modules(&ld, modules_path))
		goto out;
	if (add_symbol_only_mods(&ld)) {
		ld_err(&ld, "failed to load %s: out of memory", esc(kallsyms_path));
		goto out;
	}
	ks = build(&ld);
	if (!ks)
		ld_err(&ld, "failed to load %s: out of memory", esc(kallsyms_path));
out:
	snprintf(err, err_len, "%s", ld.err);
	free(ld.strs);
	free(ld.syms);
	free(ld.mods);
	return ks;
}

struct ksyms *ksyms__load(const char *kallsyms_path, const char *modules_path)
{
	char err[KSYMS_ERR_MAX];
	struct ksyms *ks = ksyms__load_quiet(kallsyms_path, modules_path, err,
					     sizeof(err));

	if (err[0])
		fprintf(stderr, "%s\n", err);
	return ks;
}

void ksyms__free(struct ksyms *ks)
{
	if (!ks)
		return;
	free(ks->syms);
	free(ks->mods);
	free(ks->strs);
	free(ks);
}

const struct ksym *ksyms__map_addr(const struct ksyms *ks, uint64_t addr)
{
	size_t lo = 0, hi;
	const struct ksym *s;

	if (!ks || !ks->nr_syms)
		return NULL;
	/* the last symbol with s->addr <= addr */
	hi = ks->nr_syms;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ks->syms[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	s = &ks->syms[lo - 1];
	return addr - s->addr < s->size ? s : NULL;
}

int ksyms__module_range(const struct ksyms *ks, const char *module,
			uint64_t *start, uint64_t *end)
{
	const struct kmod *m;

	if (!ks || !module)
		return -1;
	m = find_mod(ks, module);
	if (!m || !m->end)
		return -1;
	*start = m->start;
	*end = m->end;
	return 0;
}

int ksyms__kernel_range(const struct ksyms *ks, uint64_t *start, uint64_t *end)
{
	if (!ks || ks->etext <= ks->stext)
		return -1;
	*start = ks->stext;
	*end = ks->etext;
	return 0;
}

uint64_t ksyms__addr_of(const struct ksyms *ks, const char *name)
{
	size_t i;

	if (!ks || !name)
		return 0;
	for (i = 0; i < ks->nr_syms; i++)
		if (!strcmp(ks->syms[i].name, name))
			return ks->syms[i].addr;
	return 0;
}

/*
 * The packed form: a head, the symbols (each its name and module as
 * offsets into the strings, UINT32_MAX for vmlinux), the modules, then
 * the strings, each ended by a NUL.
 */
struct pk_head {
	uint64_t stext, etext;
	uint32_t nr_syms, nr_mods, strs_len, pad;
};

struct pk_sym {
	uint64_t addr, size;
	uint32_t name, mod;
};

struct pk_mod {
	uint64_t start, end;
	uint32_t name, pad;
};

#define PK_NONE	UINT32_MAX

/* The listed module s belongs to, or NULL. */
static const struct kmod *listed_mod(const struct ksyms *ks,
				     const struct ksym *s)
{
	const struct kmod *m = s->module ? find_mod(ks, s->module) : NULL;

	return m && !m->from_syms && s->addr >= m->start && s->addr < m->end ?
	       m : NULL;
}

/*
 * Is s kept packed: vmlinux's (its init code's too: the boot CPU's idle
 * stack returns into it), or in a module /proc/modules lists?
 */
static bool packs(const struct ksyms *ks, const struct ksym *s)
{
	return !s->module || listed_mod(ks, s);
}

static bool pk_str(char *strs, uint32_t *len, uint32_t cap, const char *s,
		   uint32_t *off)
{
	size_t n = strlen(s) + 1;

	if (n > cap - *len)
		return false;
	memcpy(strs + *len, s, n);
	*off = *len;
	*len += n;
	return true;
}

void *ksyms__pack(const struct ksyms *ks, size_t *len)
{
	uint64_t strs = 0, total;
	struct pk_head h = { 0 };
	struct pk_sym *ps;
	struct pk_mod *pm;
	char *buf, *sp;
	uint32_t *at;
	size_t i, j;

	if (!ks || ks->packed || !ks->have_etext)
		return NULL;
	for (i = 0; i < ks->nr_mods; i++)
		if (!ks->mods[i].from_syms) {
			h.nr_mods++;
			strs += strlen(ks->mods[i].name) + 1;
		}
	for (i = 0; i < ks->nr_syms; i++)
		if (packs(ks, &ks->syms[i])) {
			h.nr_syms++;
			strs += strlen(ks->syms[i].name) + 1;
		}
	total = sizeof(h) + (uint64_t)h.nr_syms * sizeof(*ps) +
		(uint64_t)h.nr_mods * sizeof(*pm) + strs;
	if (strs >= PK_NONE || total > SIZE_MAX)
		return NULL;
	buf = calloc(1, total);
	/* each module's index among those packed */
	at = calloc(ks->nr_mods ? ks->nr_mods : 1, sizeof(*at));
	if (!buf || !at) {
		free(buf);
		free(at);
		return NULL;
	}
	h.stext = ks->stext;
	h.etext = ks->etext;
	ps = (struct pk_sym *)(buf + sizeof(h));
	pm = (struct pk_mod *)(ps + h.nr_syms);
	sp = (char *)(pm + h.nr_mods);
	for (i = 0, j = 0; i < ks->nr_mods; i++) {
		const struct kmod *m = &ks->mods[i];

		if (m->from_syms)
			continue;
		pm[j].start = m->start;
		pm[j].end = m->end;
		at[i] = j;
		pk_str(sp, &h.strs_len, strs, m->name, &pm[j++].name);
	}
	for (i = 0, j = 0; i < ks->nr_syms; i++) {
		const struct ksym *s = &ks->syms[i];
		const struct kmod *m;

		if (!packs(ks, s))
			continue;
		ps[j].addr = s->addr;
		ps[j].size = s->size;
		ps[j].mod = PK_NONE;
		m = s->module ? listed_mod(ks, s) : NULL;
		if (m)
			ps[j].mod = at[m - ks->mods];
		pk_str(sp, &h.strs_len, strs, s->name, &ps[j++].name);
	}
	memcpy(buf, &h, sizeof(h));
	free(at);
	*len = total;
	return buf;
}

struct ksyms *ksyms__unpack(void *buf, size_t len)
{
	const struct pk_head *h = buf;
	const struct pk_sym *ps;
	const struct pk_mod *pm;
	struct ksyms *ks;
	const char *sp;
	uint64_t need;
	size_t i;

	if (len < sizeof(*h))
		return NULL;
	need = sizeof(*h) + (uint64_t)h->nr_syms * sizeof(*ps) +
	       (uint64_t)h->nr_mods * sizeof(*pm) + h->strs_len;
	if (need != len || !h->strs_len || h->stext >= h->etext)
		return NULL;
	ps = (const struct pk_sym *)(h + 1);
	pm = (const struct pk_mod *)(ps + h->nr_syms);
	sp = (const char *)(pm + h->nr_mods);
	if (sp[h->strs_len - 1])
		return NULL;
	ks = calloc(1, sizeof(*ks));
	if (!ks)
		return NULL;
	ks->syms = calloc(h->nr_syms ? h->nr_syms : 1, sizeof(*ks->syms));
	ks->mods = calloc(h->nr_mods ? h->nr_mods : 1, sizeof(*ks->mods));
	if (!ks->syms || !ks->mods)
		goto bad;
	for (i = 0; i < h->nr_mods; i++) {
		if (pm[i].name >= h->strs_len || pm[i].start >= pm[i].end)
			goto bad;
		ks->mods[i].name = sp + pm[i].name;
		ks->mods[i].start = pm[i].start;
		ks->mods[i].end = pm[i].end;
	}
	for (i = 0; i < h->nr_syms; i++) {
		struct ksym *s = &ks->syms[i];

		/* sorted, or lookups would not find them */
		if (ps[i].name >= h->strs_len ||
		    (ps[i].mod != PK_NONE && ps[i].mod >= h->nr_mods) ||
		    (i && ps[i].addr < ps[i - 1].addr))
			goto bad;
		s->addr = ps[i].addr;
		s->size = ps[i].size;
		s->name = sp + ps[i].name;
		s->module = ps[i].mod == PK_NONE ? NULL :
			    ks->mods[ps[i].mod].name;
		if (!s->module && (!ks->vhi || s->addr < ks->vlo))
			ks->vlo = s->addr;
		if (!s->module && s->addr + s->size > ks->vhi)
			ks->vhi = s->addr + s->size;
	}
	ks->nr_syms = h->nr_syms;
	ks->nr_mods = h->nr_mods;
	ks->stext = h->stext;
	ks->etext = h->etext;
	ks->have_etext = 1;
	ks->packed = true;
	/* the names are in buf: it is ks's now */
	ks->strs = buf;
	return ks;
bad:
	ksyms__free(ks);
	return NULL;
}

bool ksyms__covers(const struct ksyms *ks, uint64_t addr)
{
	const struct ksym *s;
	const struct kmod *m;

	if (!ks || !ks->packed)
		return true;
	/* vmlinux's symbols are its build's, moved by KASLR: all there */
	if (addr >= ks->vlo && addr < ks->vhi)
		return true;
	/*
	 * A module's address: a symbol of its own not its last one (whose
	 * extent, to the module's end, may hold what kallsyms alone lists).
	 */
	s = ksyms__map_addr(ks, addr);
	if (!s || !s->module || s + 1 >= ks->syms + ks->nr_syms ||
	    s[1].module != s->module)
		return false;
	m = find_mod(ks, s->module);
	return m && addr >= m->start && addr < m->end;
}
