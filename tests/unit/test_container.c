// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * test_container: a file read through the process that maps it
 * (userland/elfsyms.c, syms_cache__get_in()).  A process in its own mount
 * namespace sees another build of a library at the host's path: its
 * frames are named from its file, never the host's; the host's view of
 * the same path says the build ID differs; a build ID only the host's
 * file has is still named from the host's.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "elfsyms.h"
#include "test.h"
#include "testutil.h"

static const char lib_src[] =
	"volatile int sink;\n"
	"__attribute__((noinline)) int NAME(int x)\n"
	"{\n"
	"	sink = x;\n"
	"	return x + 1;\n"
	"}\n";

/* The build ID (bytes) and the file offset of fn in the library at path. */
static int describe(const char *path, const char *fn, uint8_t *id,
		    size_t *id_len, unsigned long *off)
{
	struct syms_cache *c = syms_cache__new();
	struct binary *b = c ? syms_cache__get(c, path, NULL, 0) : NULL;
	const char *hex = b ? binary__build_id_hex(b) : "";
	char *text;
	size_t i;

	*id_len = strlen(hex) / 2;
	for (i = 0; i < *id_len; i++) {
		unsigned int x;

		sscanf(hex + 2 * i, "%2x", &x);
		id[i] = (uint8_t)x;
	}
	syms_cache__free(c);
	/* a shared library's text is at the file offset of its address */
	if (run("nm -D --defined-only %s | awk '$3 == \"%s\" { print $1 }'",
		path, fn))
		return -1;
	text = slurp(tmp_path("out.txt"), NULL);
	*off = text ? strtoul(text, NULL, 16) + 2 : 0;
	free(text);
	return *id_len && *off > 2 ? 0 : -1;
}

/* The name fn's offset gets in path, as pid (0: this machine) sees it. */
static void name_in(pid_t pid, const char *path, const uint8_t *id,
		    size_t id_len, unsigned long off, char *out, size_t n,
		    bool *mismatch)
{
	struct syms_cache *c = syms_cache__new();
	struct binary *b;
	struct sym_frame fr[4];

	*out = '\0';
	b = c ? syms_cache__get_in(c, pid, path, id, id_len) : NULL;
	*mismatch = b && binary__build_id_mismatch(b);
	if (b && !*mismatch && binary__resolve(b, off, fr, 4) > 0)
		snprintf(out, n, "%s", fr[0].function);
	syms_cache__free(c);
}

int main(void)
{
	const char *cc = getenv("CC") && *getenv("CC") ? getenv("CC") : "cc";
	const char *dir = getenv("TEST_TMPDIR");
	uint8_t host_id[64], alt_id[64];
	size_t host_len, alt_len;
	unsigned long host_off, alt_off;
	char lib[4200], alt[4200], name[128];
	bool mismatch;
	pid_t pid = -1;
	int i;

	if (geteuid() != 0 || run("command -v unshare && unshare -m true"))
		test_skip("no mount namespaces here (root and unshare(1) needed)");
	snprintf(lib, sizeof(lib), "%s/lib/libpick.so", dir);
	snprintf(alt, sizeof(alt), "%s/alt/libpick.so", dir);
	{
		FILE *f = fopen(tmp_path("lib.c"), "w");

		if (!f || fputs(lib_src, f) < 0 || fclose(f))
			return test_report();
	}
	if (run("cd %s && mkdir -p lib alt && %s -shared -fPIC -O1 -DNAME=host_build_fn -o lib/libpick.so lib.c && %s -shared -fPIC -O1 -DNAME=container_build_fn -o alt/libpick.so lib.c",
		dir, cc, cc))
		test_skip("no C compiler here");
	test_cond("the two builds and where their functions are",
		  !describe(lib, "host_build_fn", host_id, &host_len, &host_off) &&
		  !describe(alt, "container_build_fn", alt_id, &alt_len,
			    &alt_off));

	/* the other build bind-mounted over the host's path, for it alone */
	pid = fork();
	if (pid == 0) {
		execlp("unshare", "unshare", "-m", "--propagation", "private",
		       "sh", "-c", "mount --bind \"$1\" \"$2\" && touch \"$3\" && exec sleep 60",
		       "sh", alt, lib, tmp_path("mounted"), (char *)NULL);
		_exit(127);
	}
	for (i = 0; i < 100 && access(tmp_path("mounted"), F_OK); i++)
		usleep(50000);
	test_cond("a process in its own mount namespace sees the other build",
		  pid > 0 && !access(tmp_path("mounted"), F_OK));

	name_in(pid, lib, alt_id, alt_len, alt_off, name, sizeof(name),
		&mismatch);
	test_condf(!strcmp(name, "container_build_fn"),
		   "its frame is named from its file: %s", *name ? name : "no name");
	name_in(0, lib, alt_id, alt_len, alt_off, name, sizeof(name),
		&mismatch);
	test_condf(mismatch && !*name,
		   "the host's file at that path is not used: build ID differs (%s)",
		   *name ? name : "no name");
	name_in(pid, lib, host_id, host_len, host_off, name, sizeof(name),
		&mismatch);
	test_condf(!strcmp(name, "host_build_fn"),
		   "a build ID only the host's file has: named from it (%s)",
		   *name ? name : "no name");

	if (pid > 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
	return test_report();
}
