// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The Chrome trace event format of a profile of kind trace (chrome.h):
 * every string JSON-escaped (a thread's name is its own choice, and
 * cprof-dump runs as root), bytes that are no UTF-8 included; a
 * hand-built timeline written by cprof-dump -f trace and read back by
 * python3's json: the runs, their stacks, the wake-up flows, the names
 * and the losses; the same gzipped into a .gz file; a byte budget that
 * holds, with what it left out counted.
 */
#include <errno.h>

#include "output/chrome.h"
#include "streambuild.h"
#include "test.h"
#include "testutil.h"

/* s as chrome__json_str() writes it, in a static buffer */
static const char *json_of(const char *s)
{
	static char out[256];
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return "";
	chrome__json_str(f, s);
	fclose(f);
	snprintf(out, sizeof(out), "%s", buf ? buf : "");
	free(buf);
	return out;
}

static void test_escape(void)
{
	static const char *const cases[][2] = {
		{ "plain", "\"plain\"" },
		{ "a\"b\\c", "\"a\\\"b\\\\c\"" },
		{ "nl\n\ttab\x01\x1f\x7f", "\"nl\\u000a\\u0009tab\\u0001\\u001f\\u007f\"" },
		{ "</script><!--", "\"</script><!--\"" },
		/* valid UTF-8 kept: é, €, 😀 */
		{ "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80", "\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\"" },
		/* stray bytes, an overlong '/', a surrogate, a cut sequence */
		{ "\xff\xfe", "\"\\u00ff\\u00fe\"" },
		{ "\xc0\xaf", "\"\\u00c0\\u00af\"" },
		{ "\xed\xa0\x80", "\"\\u00ed\\u00a0\\u0080\"" },
		{ "x\xe2\x82", "\"x\\u00e2\\u0082\"" },
		{ "\xf4\x90\x80\x80", "\"\\u00f4\\u0090\\u0080\\u0080\"" },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *got = json_of(cases[i][0]);

		test_condf(!strcmp(got, cases[i][1]),
			   "json string %zu: %s (want %s)", i, got, cases[i][1]);
	}
}

#define T0	5000000000ull		/* the default header's start */
/* a name of 15 bytes, the most: quotes, a backslash, a newline, no UTF-8 */
#define HOSTILE	"a\"b\\\n\xff</x>\x01zzzz"

static void build_timeline(const char *path)
{
	uint64_t k[2] = { 0xffffffff81000100, 0xffffffff81000200 };
	struct cprof_header h = sb_default_header();
	struct sb b;

	h.kind = CPROF_KIND_TRACE;
	sb_init(&b);
	sb_header(&b, &h);
	sb_switch(&b, T0 + 100, 0, 0, 0, "swapper/0", CPROF_OFF_PREEMPTED,
		  42, 42, HOSTILE);
	sb_wake(&b, T0 + 200, 0, 0, 42, 42, HOSTILE, 42, 43, "pong", 0);
	sb_switch(&b, T0 + 300, 0, 42, 42, HOSTILE, CPROF_OFF_SLEEPING,
		  42, 43, "pong");
	sb_sample(&b, T0 + 300, 42, 42, 0, HOSTILE, 0, 2, k, 0, NULL);
	sb_wake(&b, T0 + 400, 0, 0, 42, 43, "pong", 42, 42, HOSTILE, 0);
	sb_switch(&b, T0 + 500, 0, 42, 43, "pong", CPROF_OFF_SLEEPING,
		  42, 42, HOSTILE);
	sb_sample(&b, T0 + 500, 42, 43, 0, "pong", 0, 1, k, 0, NULL);
	sb_lost(&b, T0 + 600, 1, 3, 7);
	/* its stacks left out: the ring half full, no lost sample */
	sb_switch(&b, T0 + 700, 0, 42, 42, HOSTILE, CPROF_OFF_PREEMPTED,
		  0, 0, "swapper/0")->rec.flags = CPROF_SWITCH_NOSTACK_RING;
	sb_end(&b, 1000, CPROF_END_COMPLETE, 3);
	test_cond("write the timeline's stream", sb_write(&b, path, b.len) == 0);
	sb_free(&b);
}

/*
 * The checks, in python3: one "ok NAME" line per check passed, a
 * "FAIL NAME: why" line per one failed.
 */
static const char check_py[] =
"import gzip, json, sys\n"
"raw = open(sys.argv[1], 'rb').read()\n"
"if sys.argv[1].endswith('.gz'):\n"
"    raw = gzip.decompress(raw)\n"
"t = json.loads(raw)\n"
"ev = t['traceEvents']\n"
"def check(name, cond, why=''):\n"
"    print(('ok ' if cond else 'FAIL ') + name + ('' if cond else ': ' + str(why)))\n"
"names = {(e['name'], e['tid']): e['args']['name'] for e in ev if e['ph'] == 'M'}\n"
"hostile = 'a\"b\\\\\\n\\u00ff</x>\\u0001zzzz'\n"
"check('thread name', names.get(('thread_name', 42)) == hostile, names)\n"
"check('process name', names.get(('process_name', 42)) == hostile, names)\n"
"check('second thread', names.get(('thread_name', 43)) == 'pong', names)\n"
"x = sorted((e for e in ev if e['ph'] == 'X'), key=lambda e: e['ts'])\n"
"runs = [(e['tid'], round(e['ts'] * 1000) - 5000000000, round(e['dur'] * 1000), e['args']['cpu'], e['args']['left']) for e in x]\n"
"want = [(42, 100, 200, 0, 'sleeping'), (43, 300, 200, 0, 'sleeping'), (42, 500, 200, 0, 'preempted')]\n"
"check('runs', runs == want, runs)\n"
"check('run names', all(e['name'] == names[('thread_name', e['tid'])] for e in x), x)\n"
"st = [len(e['args'].get('stack', [])) for e in x]\n"
"check('stacks at switch-out', st == [2, 1, 0], st)\n"
"ns = [e['args'].get('no_stack') for e in x]\n"
"check('stacks not walked said', ns == [None, None, 'ring'], ns)\n"
"check('stack frames named', x and x[0]['args'].get('stack', [''])[0].startswith('0xffffffff81000'), x[:1])\n"
"s = {e['id']: e for e in ev if e['ph'] == 's'}\n"
"f = {e['id']: e for e in ev if e['ph'] == 'f'}\n"
"flows = sorted((s[i]['tid'], f[i]['tid'], round(s[i]['ts'] * 1000) - 5000000000, round(f[i]['ts'] * 1000) - 5000000000) for i in s if i in f)\n"
"check('wake-up flows', flows == [(42, 43, 200, 300), (43, 42, 400, 500)], flows)\n"
"check('flow ends bind to the run', all(e.get('bp') == 'e' for e in f.values()), f)\n"
"o = t['otherData']\n"
"check('losses said', o['records_lost'] == 7 and o['stacks_lost'] == 3 and o['events_over_budget'] == 0 and o['stacks_not_walked_ring'] == 1 and o['stacks_not_walked_budget'] == 0, o)\n";

/* Run the checks on path; their lines in out.txt.  Each counted here. */
static void check_json(const char *path, const char *what)
{
	const char *py = tmp_path("check.py");
	char *out, *line, *save = NULL;
	FILE *f = fopen(py, "w");
	int rc, n = 0;

	if (f) {
		fputs(check_py, f);
		fclose(f);
	}
	rc = run("python3 '%s' '%s'", py, path);
	test_condf(rc == 0, "%s: python3's json reads it (exit %d)", what, rc);
	out = slurp(tmp_path("out.txt"), NULL);
	for (line = out ? strtok_r(out, "\n", &save) : NULL; line;
	     line = strtok_r(NULL, "\n", &save), n++)
		test_condf(!strncmp(line, "ok ", 3), "%s: %s", what, line);
	test_condf(n == 11, "%s: 11 checks ran (%d)", what, n);
	free(out);
}

static void test_timeline(void)
{
	const char *in = tmp_path("trace.raw"), *js = tmp_path("trace.json");
	const char *gz = tmp_path("trace.json.gz");
	char *a, *b;
	size_t alen = 0, blen = 0;
	int rc;

	build_timeline(in);
	rc = run("%s -i '%s' --no-symbolize -f trace -o '%s'", cprof_dump(),
		 in, js);
	test_condf(rc == 0, "cprof-dump -f trace (exit %d)", rc);
	check_json(js, "json");
	rc = run("%s -i '%s' --no-symbolize -f trace -o '%s'", cprof_dump(),
		 in, gz);
	test_condf(rc == 0, "cprof-dump -f trace -o .json.gz (exit %d)", rc);
	a = slurp(gz, &alen);
	test_cond("-o .gz: gzip's magic", a && alen > 2 &&
		  (unsigned char)a[0] == 0x1f && (unsigned char)a[1] == 0x8b);
	free(a);
	check_json(gz, "json.gz");
	a = slurp(js, &alen);
	rc = run("gzip -dc '%s' > '%s'", gz, tmp_path("gunzip.json"));
	b = slurp(tmp_path("gunzip.json"), &blen);
	test_cond("gunzip gives the same JSON", rc == 0 && a && b &&
		  alen == blen && !memcmp(a, b, alen));
	free(a);
	free(b);
	rc = run("%s -i '%s' --no-symbolize -f trace -o - | grep -c '\"ph\":\"X\"'",
		 cprof_dump(), in);
	a = slurp(tmp_path("out.txt"), NULL);
	test_cond("-o -: plain JSON on stdout", rc == 0 && a && atoi(a) == 3);
	free(a);
	/* its samples are its switches' stacks: no profile of them */
	rc = run("%s -i '%s' --no-symbolize -f folded", cprof_dump(), in);
	a = slurp(tmp_path("err.txt"), NULL);
	test_cond("-f folded of a trace: refused, saying why",
		  rc != 0 && a && strstr(a, "write it with -f trace"));
	free(a);
	rc = run("%s -d 1 --kind trace -f pprof -o x.pb.gz", cprof_dump());
	a = slurp(tmp_path("err.txt"), NULL);
	test_cond("--kind trace -f pprof: refused before any profile",
		  rc == 2 && a && strstr(a, "with -f trace only"));
	free(a);
}

/* 2000 switches between two threads: more than 8 KiB of JSON. */
static void test_budget(void)
{
	const char *in = tmp_path("many.raw"), *js = tmp_path("many.json");
	struct cprof_header h = sb_default_header();
	char *out;
	size_t len = 0;
	struct sb b;
	int i, rc;

	h.kind = CPROF_KIND_TRACE;
	sb_init(&b);
	sb_header(&b, &h);
	for (i = 0; i < 2000; i++)
		sb_switch(&b, T0 + 1000 * (i + 1), 0, 7, 7 + i % 2, "ab",
			  CPROF_OFF_SLEEPING, 7, 8 - i % 2, "ab");
	sb_end(&b, 10000000, CPROF_END_COMPLETE, 0);
	test_cond("write 2000 switches", sb_write(&b, in, b.len) == 0);
	sb_free(&b);
	rc = run("%s -i '%s' --no-symbolize -f trace --trace-bytes 8192 -o '%s'",
		 cprof_dump(), in, js);
	test_condf(rc == 0, "--trace-bytes 8192 (exit %d)", rc);
	out = slurp(tmp_path("err.txt"), NULL);
	test_cond("the events left out are said on stderr",
		  out && strstr(out, "events left out past the trace's 8192 bytes"));
	free(out);
	out = slurp(js, &len);
	test_condf(out && len <= 8192 && len > 4096, "the JSON within 8192 bytes (%zu)",
		   len);
	free(out);
	/* 2001 runs (the last cut by the end) and 3 names, all accounted */
	rc = run("python3 -c 'import json, sys; t = json.load(open(sys.argv[1])); "
		 "print(len(t[\"traceEvents\"]) + t[\"otherData\"][\"events_over_budget\"], "
		 "t[\"otherData\"][\"events_over_budget\"] > 0)' '%s'", js);
	out = slurp(tmp_path("out.txt"), NULL);
	test_condf(rc == 0 && out && !strcmp(out, "2004 True\n"),
		   "events written + left out = 2004 (%s)", out ? out : "?");
	free(out);
}

static void test_other_kind(void)
{
	const char *in = tmp_path("cpu.raw");
	uint64_t u = 0x401000;
	char *err;
	struct sb b;
	int rc;

	sb_init(&b);
	sb_header(&b, NULL);
	sb_sample(&b, T0 + 10, 42, 42, 0, "x", CPROF_SAMPLE_USER_MODE, 0, NULL,
		  1, &u);
	sb_end(&b, 1000, CPROF_END_COMPLETE, 0);
	test_cond("write a cpu profile", sb_write(&b, in, b.len) == 0);
	sb_free(&b);
	rc = run("%s -i '%s' --no-symbolize -f trace -o '%s'", cprof_dump(),
		 in, tmp_path("cpu.json"));
	err = slurp(tmp_path("err.txt"), NULL);
	test_cond("-f trace of a cpu profile: refused in one line",
		  rc != 0 && err && strstr(err, "--kind trace") &&
		  nr_lines(err) == 1);
	free(err);
}

int main(void)
{
	if (system("python3 -c 'import json, gzip' >/dev/null 2>&1"))
		test_skip("python3 not found");
	test_escape();
	test_timeline();
	test_budget();
	test_other_kind();
	return test_report();
}
