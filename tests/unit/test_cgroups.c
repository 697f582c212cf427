// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * test_cgroups: cgroup v2 ids to paths (cgroups.h), on this machine's
 * cgroup2 mount, in cgroups made for the test (root only; skipped where
 * there is no cgroup2 mount or it cannot be written):
 *   - fifty new cgroups, each named by its id, without a walk of the
 *     hierarchy (opened by file handle: a user who makes a cgroup a sample
 *     cannot make each lookup cost a walk of all of them);
 *   - the root cgroup is "/"; a removed cgroup and an id nobody has are
 *     unknown, and asking again costs nothing;
 *   - looking under a cgroup (cgroups__new(path)): ids below it by their
 *     path there, ids elsewhere unknown;
 *   - without CAP_DAC_READ_SEARCH (no handles): the same paths, by walking.
 */
#include <errno.h>
#include <inttypes.h>
#include <linux/capability.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "stream/cgroups.h"
#include "test.h"
#include "testutil.h"

#define NR	50

static char mnt[4096], top[4096 + 128];

static uint64_t ino_of(const char *path)
{
	struct stat st;

	return stat(path, &st) ? 0 : (uint64_t)st.st_ino;
}

/* The first cgroup2 mount, as findmnt lists it; false if none. */
static bool find_cgroup2(void)
{
	FILE *f = popen("findmnt -n -t cgroup2 -o TARGET 2>/dev/null | head -n 1", "r");
	bool ok = f && fgets(mnt, sizeof(mnt), f);

	if (f)
		pclose(f);
	mnt[strcspn(mnt, "\n")] = '\0';
	return ok && mnt[0] == '/';
}

/* Each of the NR cgroups by its id: how many got the path they have. */
static int named(struct cgroups *c, const char *under)
{
	char path[4096 + 256], want[256];
	int i, good = 0;

	for (i = 0; i < NR; i++) {
		const char *got;

		snprintf(path, sizeof(path), "%s/n%d", top, i);
		snprintf(want, sizeof(want), "%s/n%d", under, i);
		got = cgroups__path(c, ino_of(path));
		good += got && !strcmp(got, want);
	}
	return good;
}

/* In a child without CAP_DAC_READ_SEARCH: its exit status, 0 if right. */
static int without_handles(const char *under)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct data[2];
	int status = -1;
	pid_t pid = fork();

	if (pid == 0) {
		struct cgroups *c;

		if (syscall(SYS_capget, &hdr, data))
			_exit(10);
		data[0].effective &= ~(1u << CAP_DAC_READ_SEARCH);
		if (syscall(SYS_capset, &hdr, data))
			_exit(11);
		c = cgroups__new(NULL);
		if (!c)
			_exit(12);
		if (named(c, under) != NR)
			_exit(13);
		if (cgroups__walks(c) < 1)
			_exit(14);
		cgroups__free(c);
		_exit(0);
	}
	if (pid > 0)
		waitpid(pid, &status, 0);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

int main(void)
{
	char path[4096 + 256], under[128];
	struct cgroups *c;
	uint64_t gone;
	int i, st;

	if (geteuid())
		test_skip("not root: cannot make cgroups");
	if (!find_cgroup2())
		test_skip("no cgroup2 mount");
	snprintf(under, sizeof(under), "/cprof-test-%d", (int)getpid());
	snprintf(top, sizeof(top), "%s%s", mnt, under);
	if (mkdir(top, 0755))
		test_skip("the cgroup2 mount cannot be written here");
	for (i = 0; i < NR; i++) {
		snprintf(path, sizeof(path), "%s/n%d", top, i);
		mkdir(path, 0755);
	}
	snprintf(path, sizeof(path), "%s/gone", top);
	mkdir(path, 0755);
	gone = ino_of(path);
	rmdir(path);

	c = cgroups__new(NULL);
	test_cond("look cgroups up on the cgroup2 mount", c != NULL);
	if (c) {
		const char *rootp = cgroups__path(c, ino_of(mnt));

		test_condf(named(c, under) == NR && cgroups__walks(c) == 0,
			   "%d new cgroups named by their ids (%d right), %u walks of the hierarchy",
			   NR, named(c, under), cgroups__walks(c));
		test_condf(rootp && !strcmp(rootp, "/"),
			   "the root cgroup is \"/\" (%s)", rootp ? rootp : "none");
		test_cond("a removed cgroup is unknown", gone &&
			  !cgroups__path(c, gone));
		test_cond("an id nobody has is unknown, twice, without a walk",
			  !cgroups__path(c, 1ull << 60) &&
			  !cgroups__path(c, 1ull << 60) &&
			  cgroups__walks(c) == 0);
		cgroups__free(c);
	}
	c = cgroups__new(top);
	if (c) {
		test_condf(named(c, "") == NR && !cgroups__path(c, ino_of(mnt)),
			   "looked up under %s: its cgroups by their paths there, the root unknown",
			   under);
		cgroups__free(c);
	} else {
		test_cond("look cgroups up under a cgroup", false);
	}
	st = without_handles(under);
	test_condf(st == 0,
		   "without CAP_DAC_READ_SEARCH (no file handles): the same paths, by a walk (child's status %d)",
		   st);

	for (i = 0; i < NR; i++) {
		snprintf(path, sizeof(path), "%s/n%d", top, i);
		rmdir(path);
	}
	rmdir(top);
	return test_report();
}
