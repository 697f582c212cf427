/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * strtab - interned strings numbered in insertion order, "" being 0: the
 * shape of pprof's string_table.
 */
#ifndef CPROF_STRTAB_H
#define CPROF_STRTAB_H

#include <stddef.h>
#include <stdint.h>

struct strtab;

/* A table holding "" as string 0.  NULL on allocation failure. */
struct strtab *strtab__new(void);
/* NULL-safe; frees every string. */
void strtab__free(struct strtab *t);
/* Index of s, adding a copy if new; NULL counts as "".  -1 on ENOMEM. */
int64_t strtab__intern(struct strtab *t, const char *s);
size_t strtab__nr(const struct strtab *t);
/* String i (< strtab__nr), owned by t: it stays put until strtab__free(). */
const char *strtab__get(const struct strtab *t, int64_t i);
/* All strings in index order, owned by t (pprof's string_table). */
char **strtab__array(const struct strtab *t);

#endif /* CPROF_STRTAB_H */
