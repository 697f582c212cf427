// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * cprof-dump's glue to the symbolizer, end to end through the binary: a
 * stream whose user frames point into a fixture program that has exited
 * (mapping records with its real path and offsets) and whose kernel frames
 * point into a kallsyms fixture.  The pprof must name the right functions,
 * lines and inlined frames; folded and top must agree.
 */
#include <unistd.h>

#include "streambuild.h"
#include "test.h"
#include "testutil.h"
#include "userfix.h"

#define PID		4242
#define SCHEDULE	0xffffffff81100000ull

static const char kallsyms_text[] =
	"ffffffff81000000 T _stext\n"
	"ffffffff81000100 T do_syscall_64\n"
	"ffffffff81000200 T entry_SYSCALL_64\n"
	"ffffffff81100000 T schedule\n"
	"ffffffff81200000 T _etext\n"
	"ffffffffc0001000 t cprof_tick\t[cprof]\n"
	"ffffffffc0001100 t cprof_other\t[cprof]\n";
static const char modules_text[] =
	"cprof 16384 0 - Live 0xffffffffc0001000\n";
static const uint64_t kips[3] = {
	0xffffffffc0001010,	/* cprof_tick, interrupted here */
	0xffffffff81000111,	/* return into do_syscall_64 */
	0xffffffff81000221,	/* return into entry_SYSCALL_64 */
};

/* The first line of a message, for test names. */
static const char *first_line(char *msg)
{
	if (!msg)
		return "";
	msg[strcspn(msg, "\n")] = '\0';
	return msg;
}

static int write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	return f && fputs(text, f) >= 0 && !fclose(f) ? 0 : -1;
}

/* The fixture's stack sampled in user mode and in the kernel. */
static int build_stream(const struct userfix *fx, uint64_t schedule,
			bool missing_binary, const char *path)
{
	struct cprof_header h = sb_default_header();
	uint64_t uips[3];
	struct sb b;
	int i, err;

	h.ksym_schedule = schedule;
	sb_init(&b);
	sb_header(&b, &h);
	for (i = 0; i < 3; i++)
		if (i == 0 || fx->start[i] != fx->start[i - 1])
			sb_mmap(&b, 1, PID, fx->start[i], fx->end[i],
				fx->pgoff[i], fx->path, NULL, 0);
	/*
	 * In user mode the leaf is the interrupted instruction itself: the
	 * call in leaf_fn (return address - 1).  After a kernel tick the leaf
	 * is a return address like the others and cprof-dump subtracts 1.
	 */
	uips[0] = fx->ips[0] - 1;
	uips[1] = fx->ips[1];
	uips[2] = fx->ips[2];
	sb_sample(&b, 10, PID, PID, 0, "fixture", CPROF_SAMPLE_USER_MODE, 0,
		  NULL, 3, uips);
	sb_sample(&b, 20, PID, PID, 1, "fixture", 0, 3, kips, 3, fx->ips);
	if (missing_binary) {
		sb_mmap(&b, 1, PID + 1, fx->start[0], fx->end[0], fx->pgoff[0],
			"/nonexistent/app", NULL, 0);
		sb_sample(&b, 30, PID + 1, PID + 1, 0, "gone",
			  CPROF_SAMPLE_USER_MODE, 0, NULL, 3, uips);
	}
	sb_end(&b, 1000000000, CPROF_END_COMPLETE, 0);
	err = sb_write(&b, path, b.len);
	sb_free(&b);
	return err;
}

static const Perftools__Profiles__Sample *
sample_on_cpu(const Perftools__Profiles__Profile *p, int64_t pid, int64_t cpu)
{
	size_t i;

	for (i = 0; i < p->n_sample; i++)
		if (pb_num_label(p, p->sample[i], "cpu", -1) == cpu &&
		    pb_num_label(p, p->sample[i], "pid", -1) == pid)
			return p->sample[i];
	return NULL;
}

static bool has_line(const Perftools__Profiles__Profile *p,
		     const Perftools__Profiles__Sample *s, size_t loc, size_t j,
		     const char *func, int line)
{
	const Perftools__Profiles__Location *l;
	const char *f;

	if (!s || loc >= s->n_location_id)
		return false;
	l = pb_loc(p, s->location_id[loc]);
	f = pb_loc_func(p, s->location_id[loc], j);
	return f && !strcmp(f, func) && (line < 0 || l->line[j]->line == line);
}

static const Perftools__Profiles__Mapping *
loc_map(const Perftools__Profiles__Profile *p,
	const Perftools__Profiles__Sample *s, size_t loc)
{
	const Perftools__Profiles__Location *l;

	if (!s || loc >= s->n_location_id)
		return NULL;
	l = pb_loc(p, s->location_id[loc]);
	return l ? pb_map(p, l->mapping_id) : NULL;
}

static void test_pprof(const struct userfix *fx, const char *ks,
		       const char *mods, const char *in)
{
	const char *out = tmp_path("sym.pb.gz");
	const Perftools__Profiles__Sample *u, *k;
	const Perftools__Profiles__Mapping *m;
	const Perftools__Profiles__Function *fn;
	const Perftools__Profiles__Location *l;
	Perftools__Profiles__Profile *p;
	char *err;
	int rc;

	rc = run("%s -i '%s' -o '%s' --kallsyms '%s' --modules '%s'",
		 cprof_dump(), in, out, ks, mods);
	err = slurp(tmp_path("err.txt"), NULL);
	test_condf(rc == 0 && err && !err[0], "symbolized pprof written silently (exit %d: %s)",
		   rc, first_line(err));
	free(err);
	p = pprof_read(out);
	test_cond("read it back", p != NULL);
	if (!p)
		return;

	u = sample_on_cpu(p, PID, 0);
	test_cond("user-mode sample: 3 locations", u && u->n_location_id == 3);
	test_condf(has_line(p, u, 0, 0, "leaf_fn", fx->line_leaf),
		   "leaf location: leaf_fn at line %d", fx->line_leaf);
	test_condf(has_line(p, u, 1, 0, "inl_fn", fx->line_inl) &&
		   has_line(p, u, 1, 1, "mid_fn", fx->line_mid),
		   "caller location: inl_fn:%d inlined into mid_fn:%d",
		   fx->line_inl, fx->line_mid);
	test_cond("two lines in the inlined location, innermost first",
		  u && pb_loc(p, u->location_id[1])->n_line == 2);
	test_condf(has_line(p, u, 2, 0, "main", fx->line_main),
		   "outer location: main at line %d (return address - 1)",
		   fx->line_main);
	l = u ? pb_loc(p, u->location_id[0]) : NULL;
	fn = l ? pb_func(p, l->line[0]->function_id) : NULL;
	test_cond("function file and start line",
		  fn && strstr(pb_str(p, fn->filename), "fixture.c") &&
		  fn->start_line == userfix_line("int leaf_fn("));
	m = loc_map(p, u, 0);
	test_cond("user mapping: the fixture's path and offsets",
		  m && !strcmp(pb_str(p, m->filename), fx->path) &&
		  m->memory_start == fx->start[0] && m->memory_limit == fx->end[0] &&
		  m->file_offset == fx->pgoff[0]);
	test_cond("user mapping: build id from the file (stream had none)",
		  m && strlen(pb_str(p, m->build_id)) == 40);
	test_cond("user mapping: has functions, files, lines, inline frames",
		  m && m->has_functions && m->has_filenames &&
		  m->has_line_numbers && m->has_inline_frames);

	k = sample_on_cpu(p, PID, 1);
	test_cond("kernel-mode sample: 3 kernel + 3 user locations",
		  k && k->n_location_id == 6);
	test_cond("module frame: cprof_tick in [cprof]",
		  has_line(p, k, 0, 0, "cprof_tick", 0) && loc_map(p, k, 0) &&
		  !strcmp(pb_str(p, loc_map(p, k, 0)->filename), "[cprof]"));
	m = loc_map(p, k, 1);
	test_cond("vmlinux frames: do_syscall_64, entry_SYSCALL_64 in [kernel.kallsyms]",
		  has_line(p, k, 1, 0, "do_syscall_64", 0) &&
		  has_line(p, k, 2, 0, "entry_SYSCALL_64", 0) && m &&
		  !strcmp(pb_str(p, m->filename), "[kernel.kallsyms]"));
	test_cond("kernel mapping covers its frames and claims functions",
		  m && m->memory_start <= kips[1] - 1 && kips[2] - 1 < m->memory_limit &&
		  m->has_functions);
	test_cond("user part after a kernel tick: first frame - 1 is the same location",
		  has_line(p, k, 3, 0, "leaf_fn", fx->line_leaf) && u &&
		  k->location_id[3] == u->location_id[0]);
	perftools__profiles__profile__free_unpacked(p, NULL);
}

static void test_text_formats(const char *ks, const char *mods, const char *in)
{
	char *out;
	int rc;

	rc = run("%s -i '%s' -f folded --kallsyms '%s' --modules '%s'",
		 cprof_dump(), in, ks, mods);
	out = slurp(tmp_path("out.txt"), NULL);
	test_cond("folded: exit 0", rc == 0);
	test_condf(out && strstr(out, "fixture;main;mid_fn;inl_fn;leaf_fn 1\n"),
		   "folded: user stack root first, inlined frames expanded");
	test_condf(out && strstr(out, "fixture;main;mid_fn;inl_fn;leaf_fn;entry_SYSCALL_64_[k];do_syscall_64_[k];cprof_tick_[k] 1\n"),
		   "folded: kernel frames after user ones, suffixed _[k]");
	test_cond("folded: two lines", nr_lines(out) == 2);
	free(out);

	rc = run("%s -i '%s' -f top --kallsyms '%s' --modules '%s'",
		 cprof_dump(), in, ks, mods);
	out = slurp(tmp_path("out.txt"), NULL);
	test_cond("top: exit 0", rc == 0);
	test_cond("top: header", out && strstr(out, "Duration: 1s, Total samples = 20.20ms ( 2.02%)") &&
		  strstr(out, "      flat  flat%   sum%        cum   cum%\n"));
	test_cond("top: leaf_fn and cprof_tick hold the flat time",
		  out && strstr(out, "   10.10ms 50.00% 50.00%    20.20ms   100%  leaf_fn\n"
				     "   10.10ms 50.00%   100%    10.10ms 50.00%  cprof_tick\n"));
	test_cond("top: main is cum only",
		  out && strstr(out, "         0     0%   100%    20.20ms   100%  main\n"));
	free(out);
}

static void test_wrong_boot(const struct userfix *fx, const char *ks,
			    const char *mods)
{
	const char *in = tmp_path("boot.bin"), *out = tmp_path("boot.pb.gz");
	Perftools__Profiles__Profile *p;
	const Perftools__Profiles__Sample *k;
	char *err;
	int rc;

	build_stream(fx, SCHEDULE + 0x1000, false, in);
	rc = run("%s -i '%s' -o '%s' --kallsyms '%s' --modules '%s'",
		 cprof_dump(), in, out, ks, mods);
	err = slurp(tmp_path("err.txt"), NULL);
	test_condf(rc == 0 && nr_lines(err) == 1 &&
		   strstr(err, "not from the profiled kernel"),
		   "kallsyms of another boot: one warning (%s)", first_line(err));
	free(err);
	p = pprof_read(out);
	k = p ? sample_on_cpu(p, PID, 1) : NULL;
	test_cond("... kernel frames kept unsymbolized, user frames symbolized",
		  k && k->n_location_id == 6 &&
		  pb_loc(p, k->location_id[0])->n_line == 0 &&
		  has_line(p, k, 3, 0, "leaf_fn", -1));
	if (p)
		perftools__profiles__profile__free_unpacked(p, NULL);
}

static void test_missing_binary(const struct userfix *fx, const char *ks,
				const char *mods)
{
	const char *in = tmp_path("missing.bin"), *out = tmp_path("missing.pb.gz");
	Perftools__Profiles__Profile *p;
	const Perftools__Profiles__Sample *s;
	char *err;
	int rc;

	build_stream(fx, SCHEDULE, true, in);
	rc = run("%s -i '%s' -o '%s' --kallsyms '%s' --modules '%s'",
		 cprof_dump(), in, out, ks, mods);
	err = slurp(tmp_path("err.txt"), NULL);
	test_condf(rc == 0 && nr_lines(err) == 1 &&
		   strstr(err, "3 addresses left unsymbolized: 3 in /nonexistent/app (not found)"),
		   "missing binary: the run goes on, one summary line (%s)",
		   first_line(err));
	free(err);
	p = pprof_read(out);
	s = p ? sample_on_cpu(p, PID + 1, 0) : NULL;
	test_cond("... its frames keep mapping and address",
		  s && s->n_location_id == 3 && loc_map(p, s, 0) &&
		  !strcmp(pb_str(p, loc_map(p, s, 0)->filename), "/nonexistent/app") &&
		  pb_loc(p, s->location_id[0])->address == fx->ips[0] - 1 &&
		  !loc_map(p, s, 0)->has_functions);
	if (p)
		perftools__profiles__profile__free_unpacked(p, NULL);
}

/*
 * A walk the module stopped short (the user walk at the depth or the
 * access budget, the kernel walk at the depth): the stack is shown with a
 * "[truncated]" frame at its root, never as a complete one; the same
 * stack complete has none.
 */
static void test_truncated(const struct userfix *fx, const char *ks,
			   const char *mods)
{
	struct cprof_header h = sb_default_header();
	const char *in = tmp_path("trunc.bin");
	uint64_t uips[3] = { fx->ips[0] - 1, fx->ips[1], fx->ips[2] };
	char *out;
	struct sb b;
	int rc;

	sb_init(&b);
	sb_header(&b, &h);
	sb_mmap(&b, 1, PID, fx->start[0], fx->end[0], fx->pgoff[0], fx->path,
		NULL, 0);
	if (fx->start[2] != fx->start[0])
		sb_mmap(&b, 1, PID, fx->start[2], fx->end[2], fx->pgoff[2],
			fx->path, NULL, 0);
	sb_sample(&b, 10, PID, PID, 0, "whole", CPROF_SAMPLE_USER_MODE, 0,
		  NULL, 3, uips);
	sb_sample(&b, 20, PID, PID, 0, "cut", CPROF_SAMPLE_USER_MODE |
		  CPROF_SAMPLE_USER_TRUNC, 0, NULL, 2, uips);
	sb_sample(&b, 30, PID, PID, 1, "kcut", CPROF_SAMPLE_KERN_TRUNC, 3,
		  kips, 3, fx->ips);
	sb_end(&b, 1000000000, CPROF_END_COMPLETE, 0);
	test_cond("write the truncated stacks' stream", !sb_write(&b, in, b.len));
	sb_free(&b);
	rc = run("%s -i '%s' -f folded --kallsyms '%s' --modules '%s'",
		 cprof_dump(), in, ks, mods);
	out = slurp(tmp_path("out.txt"), NULL);
	test_condf(rc == 0 && out &&
		   strstr(out, "whole;main;mid_fn;inl_fn;leaf_fn 1\n"),
		   "a whole stack: no [truncated] frame");
	test_condf(out && strstr(out, "cut;[truncated];mid_fn;inl_fn;leaf_fn 1\n"),
		   "a user walk cut short: [truncated] at its root");
	test_condf(out && strstr(out, "kcut;[truncated];main;mid_fn;inl_fn;leaf_fn;"),
		   "a kernel walk cut short: [truncated] at its root");
	free(out);
}

int main(void)
{
	const char *ks = tmp_path("kallsyms"), *mods = tmp_path("modules");
	const char *in = tmp_path("sym.bin");
	struct userfix fx;

	if (userfix_build(&fx)) {
		test_cond("build and run the fixture program", 0);
		return test_report();
	}
	test_cond("fixture ran and reported its stack",
		  fx.ips[0] && fx.ips[1] && fx.ips[2] && fx.path[0] == '/');
	test_cond("write fixtures",
		  !write_text(ks, kallsyms_text) && !write_text(mods, modules_text) &&
		  !build_stream(&fx, SCHEDULE, false, in));
	test_pprof(&fx, ks, mods, in);
	test_text_formats(ks, mods, in);
	test_wrong_boot(&fx, ks, mods);
	test_missing_binary(&fx, ks, mods);
	test_truncated(&fx, ks, mods);
	return test_report();
}
