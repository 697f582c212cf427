// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * debugfind - separate debug files, opened safely.  See debugfind.h.
 */
#include <elfutils/libdwelf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libgen.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "symbolize/debugfetch.h"
#include "symbolize/debugfind.h"
#include "lib/elfbound.h"
#include "lib/safeopen.h"

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

/*
 * A debug file found by a name the binary chose (its .gnu_debuglink, in
 * its directory): the binary's owner's own (not root's: root's binaries
 * are in root's directories), or root's that anybody may read (a
 * package's).  A symlink planted there to a file root or another user
 * keeps to themselves (a key, /etc/shadow, a 0644 file in a 0700 home) is
 * not opened, so its CRC cannot be compared with one the owner picked, nor
 * its names used.  arg: the owner, NULL if not known.
 */
static bool owners_file(const struct statx *sx, const void *arg)
{
	const uid_t *owner = arg;

	if (sx->stx_uid == 0)
		return sx->stx_mode & S_IROTH;
	return owner && sx->stx_uid == *owner;
}

/* Why mod's debug file was not read, for its binary's summary line. */
static void refuse(Dwfl_Module *mod, const char *why)
{
	struct debugfind_root *root;
	void **userdata;

	if (!dwfl_module_info(mod, &userdata, NULL, NULL, NULL, NULL, NULL,
			      NULL) || !*userdata)
		return;
	root = *userdata;
	snprintf(root->refused, sizeof(root->refused), "its debug file: %s",
		 why);
}

/*
 * Is the file at fd the debug file of mod?  And one libdw may read: its
 * compressed sections inflate to at most ELFBOUND_INFLATE_MAX and its
 * symbol tables are within elfbound's bounds, as the binary's own must
 * be (elfsyms.c).
 */
static bool belongs(Dwfl_Module *mod, int fd, const struct stat *st,
		    GElf_Word crc)
{
	const unsigned char *want;
	struct elfbound bound;
	const void *have;
	GElf_Addr vaddr;
	char why[128];
	ssize_t nhave;
	int nwant;
	bool same;
	Elf *elf;

	elfbound_measure(fd, &bound);
	if (bound.inflated > ELFBOUND_INFLATE_MAX)
		snprintf(why, sizeof(why), "its compressed sections decompress " ELFBOUND_PAST " %llu MiB",
			 ELFBOUND_INFLATE_MAX >> 20);
	if (bound.inflated > ELFBOUND_INFLATE_MAX ||
	    !elfbound_symbols_fit(&bound, why, sizeof(why))) {
		refuse(mod, why);
		return false;
	}
	nwant = dwfl_module_build_id(mod, &want, &vaddr);
	if (nwant <= 0)
		return crc_is(fd, st, crc);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf)
		return false;
	nhave = dwelf_elf_gnu_build_id(elf, &have);
	same = nhave == nwant && !memcmp(have, want, nwant);
	elf_end(elf);
	return same;
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
 * Inside the root of the process a binary was read through: by build ID,
 * then by debuglink beside the binary's path there.  The descriptor, its
 * name (/proc/PID/root/...) in *name; -1 if none, *odd set if a candidate
 * was there but refused.
 */
static int in_root(Dwfl_Module *mod, const struct debugfind_root *root,
		   const char *debuglink_file, GElf_Word crc, char **name,
		   bool *odd)
{
	char path[4096], proc[64], *copy = NULL, *dir = NULL;
	const unsigned char *id;
	GElf_Addr vaddr;
	struct stat st;
	int rootfd, fd = -1, n, i, forms = 0;

	snprintf(proc, sizeof(proc), "/proc/%" PRIu32 "/root", root->pid);
	rootfd = open(proc, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (rootfd < 0)
		return -1;
	n = dwfl_module_build_id(mod, &id, &vaddr);
	if (debuglink_file && !strchr(debuglink_file, '/') && root->path) {
		copy = strdup(root->path);
		dir = copy ? dirname(copy) : NULL;
		forms = dir ? 3 : 0;
	}
	for (i = -1; i < forms && fd < 0; i++) {
		int len;

		if (i < 0 && (n <= 0 || n > 64))
			continue;
		if (i < 0) {
			len = snprintf(path, sizeof(path),
				       "/usr/lib/debug/.build-id/%02x/", id[0]);
			for (int k = 1; k < n && len < (int)sizeof(path) - 8; k++)
				len += snprintf(path + len, sizeof(path) - len,
						"%02x", id[k]);
			len += snprintf(path + len, sizeof(path) - len, ".debug");
		} else {
			static const char *const pre[] = { "", "", "/usr/lib/debug" };
			static const char *const mid[] = { "/", "/.debug/", "/" };

			len = snprintf(path, sizeof(path), "%s%s%s%s", pre[i],
				       strcmp(dir, "/") ? dir : "", mid[i],
				       debuglink_file);
		}
		if (len >= (int)sizeof(path) || !strcmp(path, root->path))
			continue;
		/* a build ID's file is the root's own; a debuglink's, above */
		fd = i < 0 ? safe_open(rootfd, path, &st) :
			     safe_open_if(rootfd, path, &st, owners_file,
					  &root->owner);
		if (fd < 0) {
			*odd |= errno == SAFEOPEN_NOT_REGULAR ||
				errno == SAFEOPEN_NOT_WANTED;
			continue;
		}
		if (!belongs(mod, fd, &st, i < 0 ? 0 : crc)) {
			*odd = true;
			close(fd);
			fd = -1;
		}
	}
	close(rootfd);
	free(copy);
	if (fd >= 0 && asprintf(name, "%s%s", proc, path) < 0) {
		close(fd);
		fd = -1;
	}
	return fd;
}

int debugfind_dwfl(Dwfl_Module *mod, void **userdata, const char *modname,
		   Dwarf_Addr base, const char *file_name,
		   const char *debuglink_file, GElf_Word debuglink_crc,
		   char **debuginfo_file_name)
{
	/* PREFIX DIR MIDDLE NAME: beside it, in .debug/, under /usr/lib/debug */
	static const struct { const char *prefix, *middle; } forms[] = {
		{ "", "/" }, { "", "/.debug/" }, { "/usr/lib/debug", "/" },
	};
	const struct debugfind_root *root = userdata ? *userdata : NULL;
	bool odd = false;
	char path[4096], *copy, *dir;
	struct stat st;
	size_t i;
	int fd;

	/*
	 * a container's binary: its own debug files first (not for a dwz
	 * alternate file, file_name then the debug file: that is looked
	 * for by its own build ID, which in_root() does not know)
	 */
	if (root && root->pid &&
	    !(modname && file_name && strcmp(file_name, modname))) {
		fd = in_root(mod, root, debuglink_file, debuglink_crc,
			     debuginfo_file_name, &odd);
		if (fd >= 0 || odd)
			return fd;
	}
	/* root's own files: libdwfl's lookup by build ID */
	fd = dwfl_build_id_find_debuginfo(mod, userdata, modname, base,
					  file_name, debuglink_file,
					  debuglink_crc, debuginfo_file_name);
	if (fd >= 0)
		return fd;
	if (!file_name || !debuglink_file)
		return fetched(mod, debuginfo_file_name);
	if (strchr(debuglink_file, '/'))
		return -1;
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
		fd = safe_open_if(-1, path, &st, owners_file,
				  root ? &root->owner : NULL);
		if (fd < 0) {
			odd |= errno == SAFEOPEN_NOT_REGULAR ||
			       errno == SAFEOPEN_NOT_WANTED;
			continue;
		}
		if (belongs(mod, fd, &st, debuglink_crc)) {
			*debuginfo_file_name = strdup(path);
			free(copy);
			return fd;
		}
		/* refused (another build ID, past a bound): not again below */
		odd = true;
		close(fd);
	}
	free(copy);
	/*
	 * A planted candidate refused: no debuginfod lookup either.  Nor for
	 * a dwz alternate file (file_name is then the debug file, not the
	 * module): the module's build ID would fetch its own debug file.
	 */
	if (odd || (modname && strcmp(file_name, modname)))
		return -1;
	return fetched(mod, debuginfo_file_name);
}

bool debugfind_maybe(const char *path, const unsigned char *id, size_t len,
		     const char *debuglink)
{
	static const char *const pre[] = { "", "", "/usr/lib/debug" };
	static const char *const mid[] = { "/", "/.debug/", "/" };
	char buf[4096], *copy, *dir;
	struct stat st;
	size_t i;
	int at;

	if (debugfetch_enabled())
		return true;
	if (len) {
		at = snprintf(buf, sizeof(buf), "/usr/lib/debug/.build-id/%02x/",
			      id[0]);
		for (i = 1; i < len && at < (int)sizeof(buf) - 8; i++)
			at += snprintf(buf + at, sizeof(buf) - at, "%02x", id[i]);
		snprintf(buf + at, sizeof(buf) - at, ".debug");
		if (!lstat(buf, &st) || errno != ENOENT)
			return true;
	}
	if (!debuglink)
		return false;
	if (strchr(debuglink, '/'))
		return false;	/* never looked for (debugfind_dwfl()) */
	copy = strdup(path);
	if (!copy)
		return true;
	dir = dirname(copy);
	for (i = 0; i < 3; i++) {
		if (snprintf(buf, sizeof(buf), "%s%s%s%s", pre[i],
			     strcmp(dir, "/") ? dir : "", mid[i], debuglink) >=
		    (int)sizeof(buf) || !strcmp(buf, path))
			continue;
		if (!lstat(buf, &st) || errno != ENOENT) {
			free(copy);
			return true;
		}
	}
	free(copy);
	return false;
}
