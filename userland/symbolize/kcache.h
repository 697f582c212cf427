/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * kcache - the kernel's symbols for a conversion, loaded in a thread of
 * their own: from the symbol cache when it holds the running kernel's,
 * else from kallsyms, then kept there (ksyms__pack()).
 *
 * An entry is keyed by the running kernel's identity: vmlinux's build ID
 * (/sys/kernel/notes) and where its text is (_text, KASLR), and each
 * module's name, load address, size and build ID (/proc/modules,
 * /sys/module/NAME/notes): the same key, the same names.  Finding the key
 * reads the head of kallsyms only.  An entry also holds the cprof-dump
 * build that made it and a CRC; one that does not check is not used.
 * Only the running kernel's symbols are kept: not with --kallsyms or
 * --modules, nor while a module is coming or going.
 */
#ifndef CPROF_KCACHE_H
#define CPROF_KCACHE_H

#include <stdint.h>

/* The most the cache's kernel entries take, all together. */
#define KCACHE_MAX_BYTES	(64ULL << 20)
/* The largest entry read. */
#define KCACHE_ENTRY_MAX	(32LL << 20)

struct ksyms;
struct kcache_loader;

/* Where the running kernel says who it is. */
struct kcache_src {
	const char *kallsyms;	/* /proc/kallsyms */
	const char *modules;	/* /proc/modules */
	const char *sys;	/* /sys */
};

/*
 * Keep the running kernel's symbols in dir (NULL: the symbol cache's
 * default directory, symcache.h; "": nowhere).  Until called, nothing is
 * kept.  Call before any loader starts.
 */
void kcache_setup(const char *dir);
/* For tests: the running kernel is src's (NULL: the real one). */
void kcache_set_src(const struct kcache_src *src);

/*
 * Start loading the kernel's symbols: from kallsyms_path and modules_path
 * (NULL: the running kernel's, through the cache), in a thread; when no
 * thread can be started, kcache__load_finish() does the work.  NULL only
 * when out of memory.
 */
struct kcache_loader *kcache__load_start(const char *kallsyms_path,
					 const char *modules_path);
/*
 * Waits for the load and frees the loader: ksyms__load()'s result (or the
 * cache's: see ksyms__covers()), its error printed then.  NULL-safe.
 */
struct ksyms *kcache__load_finish(struct kcache_loader *l);
/* Waits, frees the loader and what it loaded, prints nothing.  NULL-safe. */
void kcache__load_cancel(struct kcache_loader *l);
/*
 * All of kallsyms, at once: ksyms__load() of kallsyms_path and
 * modules_path (NULL: the running kernel's).
 */
struct ksyms *kcache__load_kallsyms(const char *kallsyms_path,
				    const char *modules_path);

#endif /* CPROF_KCACHE_H */
