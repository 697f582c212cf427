// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * test_debugfetch: debug files from debuginfod servers within one budget
 * (userland/symbolize/debugfetch.c).  A server that accepts and never
 * answers costs the budget once, not once a file: the files after it are
 * not asked; the cache still answers when the budget is spent; a server
 * that refuses costs nothing; without DEBUGINFOD_URLS nothing is asked.
 * And end to end: cprof-dump -i over 8 stripped binaries, against the
 * silent server with --debuginfod-seconds 2, writes its profile in
 * seconds, saying why the names are missing.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "symbolize/debugfetch.h"
#include "streambuild.h"
#include "test.h"
#include "testutil.h"
#include "lib/util.h"

#define NR_BINS	8

/*
 * A stream of one sample in each of NR_BINS stripped binaries, each with
 * its own build ID and no debug file anywhere: each a question for the
 * servers.  0, or -1 if the fixtures could not be built.
 */
static int stripped_stream(const char *path)
{
	const char *cc = getenv("CC") && *getenv("CC") ? getenv("CC") : "cc";
	uint8_t id[20] = { 0 };
	char bin[4200];
	struct sb b;
	uint64_t ip;
	int i, err;

	if (run("cd %s && printf 'int main(void) { return N; }\\n' >bin.c",
		getenv("TEST_TMPDIR")))
		return -1;
	sb_init(&b);
	sb_header(&b, NULL);
	for (i = 0; i < NR_BINS; i++) {
		snprintf(bin, sizeof(bin), "%s/bin%d", getenv("TEST_TMPDIR"), i);
		if (run("%s -DN=%d -o %s %s/bin.c && strip --strip-all %s", cc,
			i, bin, getenv("TEST_TMPDIR"), bin)) {
			sb_free(&b);
			return -1;
		}
		id[0] = (uint8_t)i;	/* the stream's ID is the one asked for */
		sb_mmap(&b, 1, 100 + i, 0x400000, 0x500000, 0, bin, id,
			sizeof(id));
		ip = 0x401000;
		sb_sample(&b, 10, 100 + i, 100 + i, 0, "bin",
			  CPROF_SAMPLE_USER_MODE, 0, NULL, 1, &ip);
	}
	sb_end(&b, 1000000000, CPROF_END_COMPLETE, 0);
	err = sb_write(&b, path, b.len);
	sb_free(&b);
	return err ? -1 : 0;
}

/* A listening socket on loopback; its port in *port. */
static int listen_loopback(int *port)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) ||
	    listen(fd, 64) || getsockname(fd, (struct sockaddr *)&a, &len)) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	*port = ntohs(a.sin_port);
	return fd;
}

static int accepted;	/* connections the silent server took */

/* Accepts every connection and never answers: a hung server. */
static void *silent(void *arg)
{
	int lfd = *(int *)arg;

	for (;;) {
		if (accept(lfd, NULL, NULL) >= 0)
			__atomic_add_fetch(&accepted, 1, __ATOMIC_RELAXED);
		else if (errno != EINTR)
			break;
	}
	return NULL;
}

static void build_id(unsigned char id[20], int n)
{
	int i;

	for (i = 0; i < 20; i++)
		id[i] = (unsigned char)(0x40 + n * 7 + i);
}

static int find(int n, char **path)
{
	unsigned char id[20];

	build_id(id, n);
	return debugfetch_find(id, sizeof(id), path);
}

int main(void)
{
	char urls[64], cached[4096], hex[41], *path = NULL;
	struct debugfetch_stats st;
	unsigned char id[20];
	int lfd, port, fd, i, nfound = 0;
	double t0, took;
	pthread_t t;
	FILE *f;

	setenv("DEBUGINFOD_CACHE_PATH", tmp_path("cache"), 1);
	unsetenv("DEBUGINFOD_URLS");
	test_cond("without DEBUGINFOD_URLS, nothing is asked",
		  !debugfetch_enabled() && find(1, &path) < 0 && !path);

	lfd = listen_loopback(&port);
	if (lfd < 0 || pthread_create(&t, NULL, silent, &lfd))
		test_skip("no loopback socket here");
	snprintf(urls, sizeof(urls), "http://127.0.0.1:%d", port);
	setenv("DEBUGINFOD_URLS", urls, 1);
	debugfetch_set_budget(2);

	/* A debug file already in the cache (libdebuginfod's layout). */
	build_id(id, 9);
	hex_encode(hex, id, sizeof(id));
	snprintf(cached, sizeof(cached), "%s/%s", tmp_path("cache"), hex);
	mkdir(tmp_path("cache"), 0700);
	mkdir(cached, 0700);
	strcat(cached, "/debuginfo");
	f = fopen(cached, "w");
	if (f) {
		fputs("not really ELF", f);
		fclose(f);
	}

	t0 = monotonic_seconds();
	for (i = 1; i <= 6; i++) {
		fd = find(i, &path);
		if (fd >= 0) {
			nfound++;
			close(fd);
		}
		free(path);
		path = NULL;
	}
	took = monotonic_seconds() - t0;
	debugfetch_get_stats(&st);
	test_condf(nfound == 0 && st.cut == 1 && st.unasked == 5 &&
		   st.missing == 0,
		   "a silent server, 6 files, a 2 s budget: 1 cut off, 5 not asked (%u cut, %u not asked, %u missing)",
		   st.cut, st.unasked, st.missing);
	test_condf(took >= 1.5 && took < 5,
		   "... and the 6 cost the budget once: %.1f s in all", took);

	if (stripped_stream(tmp_path("stripped.cprof"))) {
		test_cond("8 stripped binaries and a stream of them", false);
	} else {
		const char *asan = getenv("ASAN_OPTIONS");
		char opts[512];
		char *err;
		int rc;

		/*
		 * Under ASan: whole stacks for allocations, so that the one
		 * leak of libdebuginfod's that tests/unit/lsan.supp names is
		 * matched (the fast unwinder stops in glibc).
		 */
		if (asan) {
			snprintf(opts, sizeof(opts),
				 "%s:fast_unwind_on_malloc=0", asan);
			setenv("ASAN_OPTIONS", opts, 1);
		}
		t0 = monotonic_seconds();
		rc = run("%s -i %s -f top --debuginfod %s --debuginfod-seconds 2",
			 cprof_dump(), tmp_path("stripped.cprof"), urls);
		took = monotonic_seconds() - t0;
		err = slurp(tmp_path("err.txt"), NULL);
		test_condf(rc == 0 && took < 8,
			   "cprof-dump -i, 8 stripped binaries, a silent server, --debuginfod-seconds 2: the profile in %.1f s (exit %d)",
			   took, rc);
		test_condf(err && strstr(err, "debuginfod: 0 debug files fetched or cached") &&
			   strstr(err, "not asked: the budget was spent"),
			   "... and one line says why names are missing: %s",
			   err && strstr(err, "debuginfod:") ?
			   strstr(err, "debuginfod:") : "none");
		free(err);
	}

	fd = find(9, &path);
	test_condf(fd >= 0 && path && !strcmp(path, cached),
		   "the budget spent, the cache still answers (%s)",
		   path ? path : "none");
	if (fd >= 0)
		close(fd);
	free(path);
	path = NULL;

	/* cache only (an --http answer): no connection at all */
	i = __atomic_load_n(&accepted, __ATOMIC_RELAXED);
	debugfetch_cache_only();
	t0 = monotonic_seconds();
	fd = find(20, &path);
	took = monotonic_seconds() - t0;
	test_condf(fd < 0 && took < 0.5 &&
		   __atomic_load_n(&accepted, __ATOMIC_RELAXED) == i,
		   "cache only: a file not in the cache costs no connection (%.3f s, %d new)",
		   took, __atomic_load_n(&accepted, __ATOMIC_RELAXED) - i);
	fd = find(9, &path);
	test_condf(fd >= 0, "cache only: a file in the cache is found");
	if (fd >= 0)
		close(fd);
	free(path);
	path = NULL;
	debugfetch_get_stats(&st);
	test_condf(st.found == 1, "... and counts it found (%u)", st.found);

	/*
	 * A port nobody listens on: refused at once, not waited for.  (A
	 * close() would leave the socket listening while accept() waits on
	 * it; shutdown() ends the accept().)
	 */
	shutdown(lfd, SHUT_RDWR);
	pthread_join(t, NULL);
	close(lfd);
	snprintf(urls, sizeof(urls), "http://127.0.0.1:%d", port);
	setenv("DEBUGINFOD_URLS", urls, 1);
	debugfetch_set_budget(30);
	t0 = monotonic_seconds();
	fd = find(7, &path);
	took = monotonic_seconds() - t0;
	debugfetch_get_stats(&st);
	test_condf(fd < 0 && !path && st.failed == 1 && took < 5,
		   "a server that refuses: a failure, in %.2f s (%u failed)",
		   took, st.failed);
	return test_report();
}
