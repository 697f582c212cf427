// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * debugfind - separate debug files, opened safely.  See debugfind.h.
 */
#include <elfutils/libdwelf.h>
#include <errno.h>
#include <libgen.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "debugfetch.h"
#include "debugfind.h"
#include "elfbound.h"
#include "safeopen.h"
#include "util.h"

/*
 * The CRC32 of the whole file, as .gnu_debuglink records it.  Reading it
 * all takes time: a file past DEBUGFIND_CRC_MAX (a sparse file of a
 * terabyte, made to hold the symbolizer for hours) is not read.
 */
static bool crc_is(int fd, const struct stat *st, GElf_Word want)
{
	unsigned char buf[65536];
	uLong crc = crc32(0, Z_NULL, 0);
	off_t at = 0;
	ssize_t n;

	if (st->st_size > DEBUGFIND_CRC_MAX)
		return false;
	while (at < st->st_size &&
	       (n = pread(fd, buf, sizeof(buf), at)) > 0) {
		crc = crc32(crc, buf, n);
		at += n;
	}
	return at == st->st_size && crc == want;
}

/* Is the ELF file at fd the one whose build ID is want (n bytes)? */
static bool has_build_id(int fd, const void *want, size_t n)
{
	const void *have;
	ssize_t nhave;
	bool same;
	Elf *elf;

	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf)
		return false;
	nhave = dwelf_elf_gnu_build_id(elf, &have);
	same = nhave > 0 && (size_t)nhave == n && !memcmp(have, want, n);
	elf_end(elf);
	return same;
}

/*
 * Is the file at fd the debug file of mod?  And one libdw may read: its
 * compressed sections inflate to at most ELFBOUND_INFLATE_MAX, as the
 * binary's own must (elfsyms.c).
 */
static bool belongs(Dwfl_Module *mod, int fd, const struct stat *st,
		    GElf_Word crc)
{
	const unsigned char *want;
	GElf_Addr vaddr;
	int nwant;

	if (elfbound_inflated(fd) > ELFBOUND_INFLATE_MAX)
		return false;
	nwant = dwfl_module_build_id(mod, &want, &vaddr);
	if (nwant <= 0)
		return crc_is(fd, st, crc);
	return has_build_id(fd, want, (size_t)nwant);
}

/*
 * From a debuginfod server (or its cache), by the binary's build ID, and
 * held to what a debug file found on disk is held to.
 */
static int fetched(Dwfl_Module *mod, char **debuginfo_file_name)
{
	const unsigned char *id;
	GElf_Addr vaddr;
	struct stat st;
	char *path;
	int n, fd;

	n = dwfl_module_build_id(mod, &id, &vaddr);
	if (n <= 0)
		return -1;
	fd = debugfetch_find(id, n, &path);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) ||
	    !belongs(mod, fd, &st, 0)) {
		close(fd);
		free(path);
		return -1;
	}
	*debuginfo_file_name = path;
	return fd;
}

/*
 * The .gnu_debuglink candidates of file_name, inside rootfd (-1: this
 * machine's paths): the first that belongs to mod.  *odd: one was there
 * but refused (not a regular file, another build ID, past a bound).
 */
static int by_debuglink(int rootfd, Dwfl_Module *mod, const char *file_name,
			const char *debuglink_file, GElf_Word debuglink_crc,
			char **debuginfo_file_name, bool *odd)
{
	/* PREFIX DIR MIDDLE NAME: beside it, in .debug/, under /usr/lib/debug */
	static const struct { const char *prefix, *middle; } forms[] = {
		{ "", "/" }, { "", "/.debug/" }, { "/usr/lib/debug", "/" },
	};
	char path[4096], *copy, *dir;
	struct stat st;
	size_t i;
	int fd;

	if (strchr(debuglink_file, '/')) {
		*odd = true;
		return -1;
	}
	copy = strdup(file_name);
	if (!copy)
		return -1;
	dir = dirname(copy);
	for (i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
		if (snprintf(path, sizeof(path), "%s%s%s%s", forms[i].prefix,
			     strcmp(dir, "/") ? dir : "", forms[i].middle,
			     debuglink_file) >=
		    (int)sizeof(path) || !strcmp(path, file_name))
			continue;
		fd = safe_open(rootfd, path, &st);
		if (fd < 0) {
			*odd |= errno == SAFEOPEN_NOT_REGULAR;
			continue;
		}
		if (belongs(mod, fd, &st, debuglink_crc)) {
			*debuginfo_file_name = strdup(path);
			free(copy);
			return fd;
		}
		/* refused (another build ID, past a bound): not again below */
		*odd = true;
		close(fd);
	}
	free(copy);
	return -1;
}

/*
 * path inside rootfd, if it is the ELF file of build ID id (n bytes) and
 * within the bounds: a descriptor, its name in *name.  -1 otherwise.
 */
static int open_by_id(int rootfd, const char *path, const void *id, size_t n,
		      char **name)
{
	struct stat st;
	int fd = safe_open(rootfd, path, &st);

	if (fd < 0)
		return -1;
	if (elfbound_inflated(fd) > ELFBOUND_INFLATE_MAX ||
	    !has_build_id(fd, id, n) || !(*name = strdup(path))) {
		close(fd);
		return -1;
	}
	return fd;
}

/* /usr/lib/debug/.build-id/NN/NNNN...debug of build ID id, inside rootfd. */
static int by_build_id(int rootfd, const unsigned char *id, size_t n,
		       char **name)
{
	char hex[2 * 64 + 1], path[256];

	if (n < 2 || n > 64)
		return -1;
	hex_encode(hex, id, n);
	snprintf(path, sizeof(path), "/usr/lib/debug/.build-id/%.2s/%s.debug",
		 hex, hex + 2);
	return open_by_id(rootfd, path, id, n, name);
}

/*
 * The dwz alternate file (.gnu_debugaltlink) of mod's debug file
 * file_name, inside rootfd: by its build ID, then at the path the link
 * names (relative: to the debug file's directory).
 */
static int alt_in_root(int rootfd, Dwfl_Module *mod, const char *file_name,
		       const char *altname, char **name)
{
	char path[4096], *copy;
	const void *id;
	Dwarf_Addr bias;
	const char *link;
	ssize_t n;
	Dwarf *dw;
	int fd;

	if (rootfd < 0 || !file_name || !altname)
		return -1;
	/* libdwfl asks for it once the module's DWARF is there */
	dw = dwfl_module_getdwarf(mod, &bias);
	n = dw ? dwelf_dwarf_gnu_debugaltlink(dw, &link, &id) : -1;
	if (n <= 0)
		return -1;
	fd = by_build_id(rootfd, id, (size_t)n, name);
	if (fd >= 0)
		return fd;
	copy = strdup(file_name);
	if (!copy)
		return -1;
	if (snprintf(path, sizeof(path), "%s%s%s",
		     altname[0] == '/' ? "" : dirname(copy),
		     altname[0] == '/' ? "" : "/", altname) >= (int)sizeof(path))
		path[0] = '\0';
	free(copy);
	return path[0] ? open_by_id(rootfd, path, id, (size_t)n, name) : -1;
}

/* debugfind_dwfl() for a binary of another view: its root only. */
static int in_root(int rootfd, Dwfl_Module *mod, const char *modname,
		   const char *file_name, const char *debuglink_file,
		   GElf_Word debuglink_crc, char **debuginfo_file_name)
{
	const unsigned char *id;
	GElf_Addr vaddr;
	bool odd = false;
	int n, fd;

	if (modname && file_name && strcmp(file_name, modname))
		return alt_in_root(rootfd, mod, file_name, debuglink_file,
				   debuginfo_file_name);
	n = dwfl_module_build_id(mod, &id, &vaddr);
	if (rootfd >= 0 && n > 0) {
		fd = by_build_id(rootfd, id, (size_t)n, debuginfo_file_name);
		if (fd >= 0)
			return fd;
	}
	if (rootfd >= 0 && file_name && debuglink_file) {
		fd = by_debuglink(rootfd, mod, file_name, debuglink_file,
				  debuglink_crc, debuginfo_file_name, &odd);
		if (fd >= 0)
			return fd;
	}
	return odd ? -1 : fetched(mod, debuginfo_file_name);
}

int debugfind_dwfl(Dwfl_Module *mod, void **userdata, const char *modname,
		   Dwarf_Addr base, const char *file_name,
		   const char *debuglink_file, GElf_Word debuglink_crc,
		   char **debuginfo_file_name)
{
	const struct debugfind_root *root = userdata ? *userdata : NULL;
	bool odd = false;
	int fd;

	if (root)
		return in_root(root->fd, mod, modname, file_name,
			       debuglink_file, debuglink_crc,
			       debuginfo_file_name);
	/* root's own files: libdwfl's lookup by build ID */
	fd = dwfl_build_id_find_debuginfo(mod, userdata, modname, base,
					  file_name, debuglink_file,
					  debuglink_crc, debuginfo_file_name);
	if (fd >= 0)
		return fd;
	if (!file_name || !debuglink_file)
		return fetched(mod, debuginfo_file_name);
	fd = by_debuglink(-1, mod, file_name, debuglink_file, debuglink_crc,
			  debuginfo_file_name, &odd);
	if (fd >= 0)
		return fd;
	/*
	 * A planted candidate refused: no debuginfod lookup either.  Nor for
	 * a dwz alternate file (file_name is then the debug file, not the
	 * module): the module's build ID would fetch its own debug file.
	 */
	if (odd || (modname && strcmp(file_name, modname)))
		return -1;
	return fetched(mod, debuginfo_file_name);
}
