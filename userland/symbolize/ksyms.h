/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ksyms - kernel symbols from /proc/kallsyms (+ /proc/modules for module
 * extents), or from a packed copy of them.  One string buffer + one array
 * sorted by address; lookups are a binary search.  Every string returned
 * stays valid until ksyms__free().
 */
#ifndef CPROF_KSYMS_H
#define CPROF_KSYMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ksyms;

/* The most bytes of ksyms__load_quiet()'s error. */
#define KSYMS_ERR_MAX	320

struct ksym {
	const char *name;
	uint64_t addr;
	uint64_t size;
	const char *module;	/* NULL for vmlinux */
};

/* NULL on error, with a one-line message on stderr naming the file and why */
struct ksyms *ksyms__load(const char *kallsyms_path, const char *modules_path);
/* NULL-safe */
void ksyms__free(struct ksyms *ks);

/* ksyms__load()'s one-line error, if any, in err instead of on stderr. */
struct ksyms *ksyms__load_quiet(const char *kallsyms_path,
				const char *modules_path, char *err,
				size_t err_len);

/*
 * The text symbols of vmlinux and of the modules /proc/modules listed,
 * with their extents, as one malloc'd block of *len bytes, to keep on
 * disk (kcache.h); NULL if there is no _stext/_etext or out of memory.  What
 * else kallsyms lists (BPF programs, trampolines) comes and goes: not kept.
 */
void *ksyms__pack(const struct ksyms *ks, size_t *len);
/*
 * A packed block's symbols, every count and index checked; NULL if bad.
 * Their names stay in buf, a malloc'd block: on success, ksyms__free()
 * frees it.
 */
struct ksyms *ksyms__unpack(void *buf, size_t len);
/*
 * Does ks name addr as kallsyms would?  Always for symbols loaded from
 * kallsyms; for unpacked ones, addresses within vmlinux's symbols, and in
 * a module's symbol not its last one.
 */
bool ksyms__covers(const struct ksyms *ks, uint64_t addr);

/* NULL if none */
const struct ksym *ksyms__map_addr(const struct ksyms *ks, uint64_t addr);
/* 0 ok, -1 unknown module */
int ksyms__module_range(const struct ksyms *ks, const char *module,
			uint64_t *start, uint64_t *end);
/* vmlinux text range; 0 ok */
int ksyms__kernel_range(const struct ksyms *ks, uint64_t *start, uint64_t *end);
/* 0 if absent */
uint64_t ksyms__addr_of(const struct ksyms *ks, const char *name);

#endif /* CPROF_KSYMS_H */
