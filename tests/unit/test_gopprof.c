// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * A real pprof reader on cprof-dump's output: `go tool pprof -raw` on a
 * profile from a hand-built stream shows the expected samples, locations,
 * labels and mappings; `go tool pprof -symbolize=local` symbolizes a
 * --no-symbolize profile from the binaries on disk.  Skipped (77) when `go`
 * is not installed.
 */
#include "streambuild.h"
#include "test.h"
#include "testutil.h"
#include "userfix.h"

#define P	SB_PERIOD_NS
#define GO_PPROF "HOME='%s' go tool pprof"

static const uint8_t bid[20] = { 0xde, 0xad, 0xbe, 0xef };

static int build_stream(const char *path)
{
	uint64_t k[2] = { 0xffffffff81000100, 0xffffffff81000200 };
	uint64_t u[2] = { 0x401000, 0x402000 };
	struct sb b;
	int err;

	sb_init(&b);
	sb_header(&b, NULL);
	sb_mmap(&b, 1, 42, 0x400000, 0x500000, 0x1000, "/usr/bin/x", bid, 20);
	sb_sample(&b, 10, 42, 43, 1, "x", CPROF_SAMPLE_USER_MODE, 0, NULL, 2, u);
	sb_sample(&b, 10, 42, 43, 1, "x", CPROF_SAMPLE_USER_MODE, 0, NULL, 2, u);
	sb_sample(&b, 11, 0, 0, 0, "swapper/0", CPROF_SAMPLE_KTHREAD, 2, k, 0,
		  NULL);
	sb_lost(&b, 12, 3, 5, 0);
	sb_end(&b, 2000000000, CPROF_END_COMPLETE, 5);
	err = sb_write(&b, path, b.len);
	sb_free(&b);
	return err;
}

static void test_raw(const char *home)
{
	const char *in = tmp_path("raw.bin"), *pb = tmp_path("raw.pb.gz");
	char want[256], *out;
	int rc;

	test_cond("write the stream", build_stream(in) == 0);
	rc = run("%s -i '%s' --no-symbolize -o '%s'", cprof_dump(), in, pb);
	test_cond("cprof-dump --no-symbolize", rc == 0);
	rc = run(GO_PPROF " -raw '%s'", home, pb);
	out = slurp(tmp_path("out.txt"), NULL);
	test_condf(rc == 0 && out, "go tool pprof -raw reads it (exit %d)", rc);
	if (!out)
		return;
	test_cond("-raw: period type and period",
		  strstr(out, "PeriodType: cpu nanoseconds\n") &&
		  strstr(out, "Period: 10101010\n"));
	test_cond("-raw: sample types", strstr(out, "samples/count cpu/nanoseconds\n"));
	snprintf(want, sizeof(want), "          2   %llu: 1 2 \n"
		 "                comm:[x]\n"
		 "                cpu:[1 id] pid:[42 id] tid:[43 id]\n",
		 2 * P);
	test_cond("-raw: merged user sample: count, ns, leaf first, labels",
		  strstr(out, want));
	snprintf(want, sizeof(want), "          1   %llu: 3 4 \n"
		 "                comm:[swapper/0]\n"
		 "                cpu:[0 id] pid:[0 id] tid:[0 id]\n", P);
	test_cond("-raw: kernel thread on cpu 0, pid 0: zero labels kept",
		  strstr(out, want));
	snprintf(want, sizeof(want), "          5   %llu: 5 \n"
		 "                cpu:[3 id]\n", 5 * P);
	test_cond("-raw: lost samples on cpu 3", strstr(out, want));
	test_cond("-raw: user locations, return address - 1",
		  strstr(out, "     1: 0x401000 M=1 \n") &&
		  strstr(out, "     2: 0x401fff M=1 \n"));
	test_cond("-raw: kernel locations in mapping 2",
		  strstr(out, "     3: 0xffffffff81000100 M=2 \n") &&
		  strstr(out, "     4: 0xffffffff810001ff M=2 \n"));
	test_cond("-raw: the [lost samples] location",
		  strstr(out, "     5: 0x0 [lost samples] :0 s=0\n"));
	test_cond("-raw: user mapping with offset and build id",
		  strstr(out, "1: 0x400000/0x500000/0x1000 /usr/bin/x deadbeef00000000000000000000000000000000 \n"));
	test_cond("-raw: kernel mapping",
		  strstr(out, "2: 0xffffffff81000100/0xffffffff81000200/0x0 [kernel.kallsyms]  \n"));
	test_cond("-raw: lost samples in a comment",
		  strstr(out, "Comment: 5 samples lost"));
	free(out);

	rc = run(GO_PPROF " -top '%s'", home, pb);
	out = slurp(tmp_path("out.txt"), NULL);
	test_cond("-top: total = samples + lost",
		  rc == 0 && out &&
		  strstr(out, "Duration: 2s, Total samples = 80.81ms ( 4.04%)"));
	free(out);
}

static void test_symbolize_later(const char *home)
{
	const char *in = tmp_path("fx.bin"), *ns = tmp_path("fx-ns.pb.gz");
	const char *sym = tmp_path("fx.pb.gz");
	struct userfix fx;
	char *out;
	struct sb b;
	int rc;

	if (userfix_build(&fx)) {
		test_cond("build and run the fixture program", 0);
		return;
	}
	sb_init(&b);
	sb_header(&b, NULL);
	sb_mmap(&b, 1, 7, fx.start[0], fx.end[0], fx.pgoff[0], fx.path, NULL, 0);
	sb_sample(&b, 10, 7, 7, 0, "fixture", 0, 0, NULL, 2, fx.ips);
	sb_end(&b, 1000000000, CPROF_END_COMPLETE, 0);
	test_cond("write the fixture stream", sb_write(&b, in, b.len) == 0);
	sb_free(&b);

	rc = run("%s -i '%s' --no-symbolize -o '%s'", cprof_dump(), in, ns);
	test_cond("cprof-dump --no-symbolize on the fixture", rc == 0);
	rc = run(GO_PPROF " -symbolize=local -traces '%s'", home, ns);
	out = slurp(tmp_path("out.txt"), NULL);
	test_condf(rc == 0 && out && strstr(out, "leaf_fn\n") &&
		   strstr(out, "mid_fn\n"),
		   "go tool pprof -symbolize=local names leaf_fn and mid_fn from %s",
		   fx.path);
	free(out);

	rc = run("%s -i '%s' -o '%s'", cprof_dump(), in, sym);
	test_cond("cprof-dump symbolized on the fixture", rc == 0);
	rc = run(GO_PPROF " -traces '%s'", home, sym);
	out = slurp(tmp_path("out.txt"), NULL);
	test_cond("go tool pprof shows our inlined frame and its caller",
		  rc == 0 && out && strstr(out, "   leaf_fn\n") &&
		  strstr(out, "   inl_fn (inline)\n") && strstr(out, "   mid_fn\n"));
	free(out);
	rc = run(GO_PPROF " -lines -top '%s'", home, sym);
	out = slurp(tmp_path("out.txt"), NULL);
	test_condf(rc == 0 && out && strstr(out, "leaf_fn ") &&
		   strstr(out, "fixture.c:"),
		   "go tool pprof -lines shows file:line");
	free(out);
}

int main(void)
{
	const char *home = tmp_path("home");

	if (run("command -v go"))
		test_skip("go is not installed");
	if (run("mkdir -p '%s'", home))
		test_skip("no temporary directory");
	test_raw(home);
	test_symbolize_later(home);
	return test_report();
}
