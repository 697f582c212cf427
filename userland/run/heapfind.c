// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * heapfind - where a process's C allocator is.  See heapfind.h.  Each
 * executable file the process maps is read through /proc/PID/map_files
 * (the file mapped, whatever its path says now): glibc's libc is the one
 * whose dynamic symbols define gnu_get_libc_version; another file that
 * defines malloc replaces glibc's allocator.  A symbol's address is its
 * file offset (through its PT_LOAD) in the mapping that covers it.
 */
#include <fcntl.h>
#include <gelf.h>
#include <stdbool.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "lib/util.h"
#include "run/heapfind.h"

#define NR_FN		5
#define MAX_MAPS	1024

/* ctl's heap_<name>=, in the module's order (enum cprof_heap_fn) */
static const char *const fn_names[NR_FN] = {
	"malloc", "calloc", "realloc", "posix_memalign", "free",
};

struct xmap {
	uint64_t start, end, off;
	unsigned long long ino;
	unsigned int dev_major, dev_minor;
	char path[256];
};

struct xfile {
	uint64_t fn[NR_FN];	/* file offsets, 0: not defined */
	bool glibc;
};

/* The executable file mappings of pid; -1 if its maps cannot be read. */
static int read_maps(long pid, struct xmap *maps, size_t *nr)
{
	char path[64], line[4352], perms[8];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%ld/maps", pid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	*nr = 0;
	while (*nr < MAX_MAPS && fgets(line, sizeof(line), f)) {
		struct xmap *m = &maps[*nr];
		int pos = 0;

		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %7s %" SCNx64 " %x:%x %llu %n",
			   &m->start, &m->end, perms, &m->off, &m->dev_major,
			   &m->dev_minor, &m->ino, &pos) < 7 || !m->ino ||
		    strlen(perms) < 3 || perms[2] != 'x')
			continue;
		snprintf(m->path, sizeof(m->path), "%.*s",
			 (int)strcspn(line + pos, "\n"), line + pos);
		(*nr)++;
	}
	fclose(f);
	return 0;
}

/* A symbol's value to its offset in the file, by its PT_LOAD; 0: none. */
static uint64_t file_offset(Elf *e, uint64_t value)
{
	size_t i, n;
	GElf_Phdr ph;

	if (elf_getphdrnum(e, &n))
		return 0;
	for (i = 0; i < n; i++)
		if (gelf_getphdr(e, i, &ph) && ph.p_type == PT_LOAD &&
		    value >= ph.p_vaddr && value < ph.p_vaddr + ph.p_filesz)
			return value - ph.p_vaddr + ph.p_offset;
	return 0;
}

/* The allocator functions m's file defines; -1 if it cannot be read. */
static int read_file(long pid, const struct xmap *m, struct xfile *xf)
{
	Elf_Scn *scn = NULL;
	char path[96];
	int fd, ret = -1;
	Elf *e;

	memset(xf, 0, sizeof(*xf));
	snprintf(path, sizeof(path), "/proc/%ld/map_files/%" PRIx64 "-%" PRIx64,
		 pid, m->start, m->end);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	while (e && (scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		size_t i, n;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNSYM ||
		    !sh.sh_entsize || !(d = elf_getdata(scn, NULL)))
			continue;
		n = sh.sh_size / sh.sh_entsize;
		for (i = 1; i < n; i++) {
			const char *name;
			GElf_Sym sym;
			int k;

			if (!gelf_getsym(d, i, &sym) || sym.st_shndx == SHN_UNDEF ||
			    GELF_ST_TYPE(sym.st_info) != STT_FUNC ||
			    !(name = elf_strptr(e, sh.sh_link, sym.st_name)))
				continue;
			if (!strcmp(name, "gnu_get_libc_version"))
				xf->glibc = true;
			for (k = 0; k < NR_FN; k++)
				if (!strcmp(name, fn_names[k]))
					xf->fn[k] = file_offset(e, sym.st_value);
		}
		ret = 0;
	}
	if (e)
		elf_end(e);
	close(fd);
	return ret;
}

/* The address of file offset off of the file of maps[i]; 0: not mapped. */
static uint64_t address_of(const struct xmap *maps, size_t nr, size_t i,
			   uint64_t off)
{
	size_t j;

	for (j = 0; j < nr; j++)
		if (maps[j].ino == maps[i].ino &&
		    maps[j].dev_major == maps[i].dev_major &&
		    maps[j].dev_minor == maps[i].dev_minor &&
		    off >= maps[j].off &&
		    off < maps[j].off + (maps[j].end - maps[j].start))
			return maps[j].start + off - maps[j].off;
	return 0;
}

static bool seen_before(const struct xmap *maps, size_t i)
{
	size_t j;

	for (j = 0; j < i; j++)
		if (maps[j].ino == maps[i].ino &&
		    maps[j].dev_major == maps[i].dev_major &&
		    maps[j].dev_minor == maps[i].dev_minor)
			return true;
	return false;
}

int heapfind__settings(long pid, unsigned long rate, char *buf,
		       size_t size, char *msg, size_t msg_size)
{
	static struct xmap maps[MAX_MAPS];
	struct xfile xf, libc = { 0 };
	size_t i, nr, libc_i = 0;
	int k, len;
	bool found = false;

	if (pid <= 0) {
		snprintf(msg, msg_size, "kind heap profiles one process: give its pid");
		return -1;
	}
	if (elf_version(EV_CURRENT) == EV_NONE || read_maps(pid, maps, &nr)) {
		snprintf(msg, msg_size, "cannot read /proc/%ld/maps: %m", pid);
		return -1;
	}
	for (i = 0; i < nr; i++) {
		if (seen_before(maps, i) || read_file(pid, &maps[i], &xf))
			continue;
		if (xf.glibc && !found) {
			libc = xf;
			libc_i = i;
			found = true;
		} else if (xf.fn[0]) {
			snprintf(msg, msg_size, "process %ld's malloc is %s's, not glibc's (jemalloc, tcmalloc?): kind heap probes glibc's allocator only",
				 pid, esc(maps[i].path));
			return -1;
		}
	}
	if (!found || !libc.fn[0] || !libc.fn[NR_FN - 1]) {
		snprintf(msg, msg_size, "process %ld maps no glibc libc with malloc and free (statically linked?): kind heap probes glibc's allocator only",
			 pid);
		return -1;
	}
	len = snprintf(buf, size, "heap_rate=%lu\n", rate);
	for (k = 0; k < NR_FN && len >= 0 && (size_t)len < size; k++)
		len += snprintf(buf + len, size - len, "heap_%s=%#" PRIx64 "\n",
				fn_names[k], libc.fn[k] ?
				address_of(maps, nr, libc_i, libc.fn[k]) : 0);
	if (len < 0 || (size_t)len >= size) {
		snprintf(msg, msg_size, "heap settings too long");
		return -1;
	}
	return 0;
}
