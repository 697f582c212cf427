// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * test_safeopen: the files cprof-dump opens as root, as users leave them.
 * safe_open() opens a regular file and refuses, without blocking or
 * opening it, a FIFO nobody writes, a symlink to a device, a directory;
 * inside a root, an absolute symlink and ".." stay in the root.
 * busguard turns SIGBUS from a truncated mapping into a return to the
 * guard.  The table compiler refuses a small file whose compressed debug
 * sections decompress to more than their bound, and the symbolizer reads
 * its symbols but not its DWARF, neither decompressing them.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/busguard.h"
#include "unwind/cfi.h"
#include "symbolize/elfsyms.h"
#include "lib/mapfile.h"
#include "lib/safeopen.h"
#include "test.h"
#include "testutil.h"

static void test_safe_open(void)
{
	struct stat st;
	char path[512];
	int fd, root;

	snprintf(path, sizeof(path), "%s", tmp_path("regular"));
	test_cond("fixture", !run("echo hello > '%s'", path));
	fd = safe_open(-1, path, &st);
	test_cond("a regular file opens", fd >= 0 && S_ISREG(st.st_mode) &&
		  st.st_size == 6);
	if (fd >= 0) {
		char buf[8] = "";

		test_cond("... for reading", read(fd, buf, 5) == 5 &&
			  !memcmp(buf, "hello", 5));
		close(fd);
	}

	/* a FIFO nobody writes: open(O_RDONLY) would block for ever */
	snprintf(path, sizeof(path), "%s", tmp_path("fifo"));
	alarm(10);
	test_cond("a FIFO is refused at once",
		  !mkfifo(path, 0600) && safe_open(-1, path, &st) < 0 &&
		  errno == SAFEOPEN_NOT_REGULAR);
	alarm(0);
	test_cond("... named so", !strcmp(safe_strerror(SAFEOPEN_NOT_REGULAR),
					  "not a regular file"));

	snprintf(path, sizeof(path), "%s", tmp_path("dev"));
	test_cond("a symlink to a device is refused",
		  !symlink("/dev/null", path) && safe_open(-1, path, &st) < 0 &&
		  errno == SAFEOPEN_NOT_REGULAR);
	test_cond("a directory is refused",
		  safe_open(-1, "/", &st) < 0 && errno == SAFEOPEN_NOT_REGULAR);
	test_cond("a missing file is ENOENT",
		  safe_open(-1, tmp_path("none"), &st) < 0 && errno == ENOENT);

	/* a "container root": /etc/passwd in it is its own */
	test_cond("root fixture",
		  !run("mkdir -p '%s/etc' '%s/bin' && echo inside > '%s/etc/passwd' && ln -s /etc/passwd '%s/bin/abs' && ln -s ../../../../../etc/passwd '%s/bin/up'",
		       tmp_path("root"), tmp_path("root"), tmp_path("root"),
		       tmp_path("root"), tmp_path("root")));
	root = open(tmp_path("root"), O_PATH | O_DIRECTORY | O_CLOEXEC);
	fd = root >= 0 ? safe_open(root, "/bin/abs", &st) : -1;
	test_cond("inside a root, an absolute symlink resolves in the root",
		  fd >= 0 && st.st_size == 7);
	if (fd >= 0)
		close(fd);
	fd = root >= 0 ? safe_open(root, "/bin/up", &st) : -1;
	test_cond("... and so does one climbing with ..",
		  fd >= 0 && st.st_size == 7);
	if (fd >= 0)
		close(fd);
	fd = root >= 0 ? safe_open(root, "/proc/self/exe", &st) : -1;
	test_cond("... and a path to the host's /proc is not found",
		  fd < 0);
	if (fd >= 0)
		close(fd);
	if (root >= 0)
		close(root);
}

static void test_busguard(void)
{
	volatile int caught = 0;
	struct busguard g;
	volatile char *p;
	long page = sysconf(_SC_PAGESIZE);
	int fd = open(tmp_path("shrinks"), O_RDWR | O_CREAT | O_TRUNC, 0600);

	if (fd < 0 || ftruncate(fd, 2 * page)) {
		test_cond("busguard fixture", false);
		return;
	}
	p = mmap(NULL, 2 * page, PROT_READ, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		test_cond("busguard fixture", false);
		close(fd);
		return;
	}
	test_cond("truncate the mapped file", !ftruncate(fd, 0));
	busguard__enter(&g);
	if (sigsetjmp(g.jb, 1))
		caught = 1;
	else
		(void)p[page];
	busguard__leave(&g);
	test_cond("SIGBUS inside a guard returns to it", caught == 1);
	test_cond("... and the guard is left", busguard_cur == NULL);
	munmap((void *)p, 2 * page);
	close(fd);
}

/*
 * A small ELF with .debug_frame and a 65 MiB .debug_macro of zeros,
 * zlib-compressed to some 64 KiB.
 */
static void test_inflate_bound(void)
{
	const char *elf = tmp_path("bomb.o");
	struct cfi_table t;
	struct rusage ru0, ru1;
	struct stat st;
	char err[256];
	int fd, rc;

	if (run("printf 'int f(int x){return x+1;}\\n' > '%s' && cc -g -fno-asynchronous-unwind-tables -fpic -shared -nostdlib -o '%s.so' '%s' && head -c 68157440 /dev/zero > '%s.zeros' && objcopy --add-section .debug_macro='%s.zeros' --set-section-flags .debug_macro=readonly,debug '%s.so' '%s.big' && objcopy --compress-debug-sections=zlib-gabi '%s.big' '%s' && rm -f '%s.zeros' '%s.big'",
		tmp_path("bomb.c"), tmp_path("bomb"), tmp_path("bomb.c"),
		tmp_path("bomb"), tmp_path("bomb"), tmp_path("bomb"),
		tmp_path("bomb"), tmp_path("bomb"), elf, tmp_path("bomb"),
		tmp_path("bomb"))) {
		test_cond("decompression bomb fixture (cc, objcopy)", false);
		return;
	}
	fd = open(elf, O_RDONLY);
	test_cond("the bomb is small", fd >= 0 && !fstat(fd, &st) &&
		  st.st_size < 1 << 20);
	getrusage(RUSAGE_SELF, &ru0);
	rc = fd >= 0 ? cfi_compile(fd, &t, err, sizeof(err)) : 0;
	getrusage(RUSAGE_SELF, &ru1);
	test_condf(rc != 0 && strstr(err, "decompress to"),
		   "a file whose sections decompress past the bound is refused (%s)",
		   err);
	test_condf(ru1.ru_maxrss - ru0.ru_maxrss < 32 * 1024,
		   "... without decompressing them (max RSS grew %ld KiB)",
		   ru1.ru_maxrss - ru0.ru_maxrss);
	if (!rc)
		cfi_table_free(&t);
	if (fd >= 0)
		close(fd);

	/* the symbolizer reads the same file's ELF symbols, not its DWARF */
	{
		struct syms_cache *c = syms_cache__new();
		struct binary *b;

		getrusage(RUSAGE_SELF, &ru0);
		b = c ? syms_cache__get(c, MAPFILE_PATH(elf), NULL, 0) : NULL;
		getrusage(RUSAGE_SELF, &ru1);
		test_cond("the symbolizer opens the bomb without its DWARF",
			  b && !binary__error(b) && !binary__has_debuginfo(b));
		test_condf(ru1.ru_maxrss - ru0.ru_maxrss < 32 * 1024,
			   "... without decompressing it (max RSS grew %ld KiB)",
			   ru1.ru_maxrss - ru0.ru_maxrss);
		syms_cache__free(c);
	}

	/*
	 * The same bomb as the separate debug file of a stripped binary,
	 * beside it (where the binary's owner may put anything): not read.
	 */
	if (run("strip -s -o '%s' '%s.so' && objcopy --add-gnu-debuglink='%s' '%s'",
		tmp_path("linked"), tmp_path("bomb"), elf, tmp_path("linked"))) {
		test_cond("debuglink bomb fixture (strip, objcopy)", false);
		return;
	}
	{
		struct syms_cache *c = syms_cache__new();
		struct binary *b;

		getrusage(RUSAGE_SELF, &ru0);
		b = c ? syms_cache__get(c, MAPFILE_PATH(tmp_path("linked")), NULL, 0) : NULL;
		getrusage(RUSAGE_SELF, &ru1);
		test_cond("a debug file that would inflate past the bound is not taken",
			  b && !binary__has_debuginfo(b));
		test_condf(ru1.ru_maxrss - ru0.ru_maxrss < 32 * 1024,
			   "... and not decompressed (max RSS grew %ld KiB)",
			   ru1.ru_maxrss - ru0.ru_maxrss);
		syms_cache__free(c);
	}
}

int main(void)
{
	test_safe_open();
	test_busguard();
	test_inflate_bound();
	return test_report();
}
