/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * debugfind - a binary's separate debug file, found the way libdwfl's
 * dwfl_standard_find_debuginfo() does, but opened as safeopen.h opens
 * files: the .gnu_debuglink candidates are in the binary's directory,
 * which its owner controls, and a FIFO there must not hang a root
 * symbolizer.
 *
 *   1. by build ID under /usr/lib/debug/.build-id/ (libdwfl's own lookup);
 *   2. by .gnu_debuglink: DIR/NAME, DIR/.debug/NAME, /usr/lib/debug/DIR/NAME,
 *      regular files only, owned by the binary's owner, or by root and
 *      readable by anybody (a symlink the owner planted there to a file
 *      root or another user keeps to themselves is not opened), taken if their build ID is the binary's (or,
 *      when it has none, their CRC32 is the debuglink's, read from files
 *      of at most DEBUGFIND_CRC_MAX), their compressed sections
 *      inflate to at most ELFBOUND_INFLATE_MAX and their symbol tables
 *      are within elfbound.h's bounds;
 *   0. for a binary read through its process (in another mount namespace:
 *      a container), first inside that process's root, /proc/PID/root
 *      (safeopen.h: resolved inside it), by build ID under its
 *      /usr/lib/debug/.build-id/ and by its .gnu_debuglink beside its
 *      path there, held to the same checks as 2.;
 *   3. with DEBUGINFOD_URLS set, by build ID from a debuginfod server or
 *      its cache, within the run's time budget (debugfetch.h), held to
 *      the same build ID and inflate checks; only if no candidate of 2.
 *      was there at all (a planted file refused there is not worked
 *      around).
 */
#ifndef CPROF_DEBUGFIND_H
#define CPROF_DEBUGFIND_H

#include <elfutils/libdwfl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Largest debug file whose CRC32 is computed (1 GiB). */
#define DEBUGFIND_CRC_MAX	(1LL << 30)

/*
 * The binary a module is: the module's userdata (dwfl_module_info())
 * points at one while the module lives (NULL: owner unknown, not read
 * through a process).
 */
struct debugfind_root {
	uint32_t pid;		/* read through this process (0: not), */
	const char *path;	/* ... at its path there */
	uid_t owner;		/* the binary file's owner */
	/* set here: why its debug file was not read (past elfbound.h's) */
	char refused[160];
};

/* A Dwfl_Callbacks.find_debuginfo. */
int debugfind_dwfl(Dwfl_Module *mod, void **userdata, const char *modname,
		   Dwarf_Addr base, const char *file_name,
		   const char *debuglink_file, GElf_Word debuglink_crc,
		   char **debuginfo_file_name);

/*
 * Might a debug file of the binary at path (build ID id of len bytes,
 * .gnu_debuglink name debuglink, NULL if none) be found now, as above but
 * through no process?  false only if nothing is there at all, by build ID
 * nor at the debuglink's names, and no debuginfod server is to be asked:
 * what was symbolized without one then still stands.
 */
bool debugfind_maybe(const char *path, const unsigned char *id, size_t len,
		     const char *debuglink);

#endif /* CPROF_DEBUGFIND_H */
