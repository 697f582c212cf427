/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ksyms - kernel symbols from /proc/kallsyms (+ /proc/modules for module
 * extents).  One string buffer + one array sorted by address; lookups are a
 * binary search.  Every string returned stays valid until ksyms__free().
 */
#ifndef CPROF_KSYMS_H
#define CPROF_KSYMS_H

#include <stdint.h>

struct ksyms;

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
