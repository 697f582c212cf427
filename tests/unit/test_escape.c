// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * test_escape: how cprof-dump shows a string a user chose, and that its
 * messages show them so:
 *   - esc(), esc_n(), esc_put(): printable ASCII and UTF-8 as they are, a
 *     backslash doubled, control bytes, C1 and bidi controls, malformed
 *     UTF-8 as \xHH; a message's copy cut with "...";
 *   - through the binary: a stream whose mapping records name files with
 *     a terminal's escape sequence and a newline followed by a line of
 *     cprof-dump's own (one missing, one there but no ELF), and an -i
 *     path with them: stderr holds no escape byte, and each message is
 *     one line of cprof-dump's, naming the file as esc() shows it;
 *   - a process that maps a copy of libcrypto so named: the unwind-table
 *     loader's line on the code where walks stop (--load-unwind-tables,
 *     a regular file standing in for the module's unwind file) names it
 *     escaped, on one line;
 *   - a stream whose kernel release (a comment of the text outputs) holds
 *     them: -f text and top show it on one line, no escape byte.
 */
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "streambuild.h"
#include "test.h"
#include "testutil.h"
#include "lib/util.h"

#define PID	4343
#define EVIL	"\x1b[31mlib\ncprof-dump: injected line\x1b[0m"
#define SHOWN	"\\x1b[31mlib\\x0acprof-dump: injected line\\x1b[0m"

static void test_helper(void)
{
	static const struct { const char *in, *out; } cases[] = {
		{ "/usr/lib/libc.so.6", "/usr/lib/libc.so.6" },
		{ EVIL, SHOWN },
		{ "a\\x1b", "a\\\\x1b" },
		{ "\t\r\x7f", "\\x09\\x0d\\x7f" },
		{ "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80",
		  "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80" },
		/* C1 CSI, as a byte and as UTF-8; a right-to-left override */
		{ "\x9b" "2J\xc2\x9b" "2J", "\\x9b2J\\xc2\\x9b2J" },
		{ "a\xe2\x80\xaegnp.exe", "a\\xe2\\x80\\xaegnp.exe" },
		/* overlong, surrogate, cut short, past U+10FFFF */
		{ "\xc0\xaf\xed\xa0\x80\xe2\x82", "\\xc0\\xaf\\xed\\xa0\\x80\\xe2\\x82" },
		{ "\xf4\x90\x80\x80", "\\xf4\\x90\\x80\\x80" },
	};
	char *buf = NULL;
	size_t i, len;
	FILE *f;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		test_condf(!strcmp(esc(cases[i].in), cases[i].out),
			   "esc() case %zu: %s", i, esc(cases[i].in));
		f = open_memstream(&buf, &len);
		esc_put(f, cases[i].in);
		fclose(f);
		test_condf(!strcmp(buf, cases[i].out),
			   "esc_put() case %zu: as esc() shows it", i);
		free(buf);
	}
	test_cond("esc_n(): cut at a whole character, with \"...\"",
		  !strcmp(esc_n("abcdefgh\x01", 10), "abcdefgh...") &&
		  !strcmp(esc_n("abcdefghij", 10), "abcdefghij") &&
		  !strcmp(esc_n(NULL, 10), ""));
	test_cond("esc(): 8 arguments of one message stay apart",
		  !strcmp(esc("1"), "1") + !strcmp(esc("2"), "2") +
		  !strcmp(esc("3"), "3") + !strcmp(esc("4"), "4") +
		  !strcmp(esc("5"), "5") + !strcmp(esc("6"), "6") +
		  !strcmp(esc("7"), "7") + !strcmp(esc("8"), "8") == 8);
}

/*
 * Every line of err is cprof-dump's own, none holds an escape byte or a
 * line of the attacker's; false otherwise.
 */
static bool lines_are_ours(const char *err)
{
	const char *p;

	if (!err || strchr(err, 0x1b))
		return false;
	for (p = err; *p; p = strchr(p, '\n') + 1) {
		if (strncmp(p, "cprof-dump: ", 12) ||
		    !strncmp(p, "cprof-dump: injected", 20) || !strchr(p, '\n'))
			return false;
	}
	return true;
}

static void test_messages(void)
{
	const char *in = tmp_path("evil.bin");
	char missing[4096], there[4096], *err;
	const uint64_t ips[2] = { 0x401010, 0x402010 };
	struct cprof_header h = sb_default_header();
	struct sb b;
	int rc, fd;

	snprintf(missing, sizeof(missing), "/nonexistent/%s.so", EVIL);
	snprintf(there, sizeof(there), "%s/%s.so", tmp_path("files"), EVIL);
	mkdir(tmp_path("files"), 0755);
	fd = open(there, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	test_cond("a file named with an escape sequence and a newline",
		  fd >= 0 && write(fd, "not an ELF file\n", 16) == 16 &&
		  !close(fd));
	sb_init(&b);
	sb_header(&b, &h);
	sb_mmap(&b, 1, PID, 0x401000, 0x402000, 0, missing, NULL, 0);
	sb_mmap(&b, 1, PID, 0x402000, 0x403000, 0, there, NULL, 0);
	sb_sample(&b, 10, PID, PID, 0, "app", CPROF_SAMPLE_USER_MODE, 0, NULL,
		  2, ips);
	sb_end(&b, 1000000000, CPROF_END_COMPLETE, 0);
	sb_write(&b, in, b.len);
	sb_free(&b);

	rc = run("DEBUGINFOD_URLS= %s -i '%s' -f top", cprof_dump(), in);
	err = slurp(tmp_path("err.txt"), NULL);
	test_condf(rc == 0 && lines_are_ours(err) && nr_lines(err) == 1 &&
		   strstr(err, "/nonexistent/" SHOWN ".so (") &&
		   strstr(err, SHOWN ".so ("),
		   "mapped files' names: one line, escaped, in the summary:\n%s",
		   esc(err));
	free(err);

	rc = run("%s -i '%s' -f top", cprof_dump(), missing);
	err = slurp(tmp_path("err.txt"), NULL);
	test_condf(rc != 0 && lines_are_ours(err) && nr_lines(err) == 1 &&
		   strstr(err, SHOWN),
		   "an -i path: one line, escaped:\n%s", esc(err));
	free(err);
}

static void test_tables(void)
{
	const char *dir = tmp_path("proc"), *lib = tmp_path("files");
	char path[4096], unwind[4096], *err;
	pid_t pid;
	int rc;

	snprintf(path, sizeof(path), "%s/%s.so", lib, EVIL);
	snprintf(unwind, sizeof(unwind), "%s/unwind", dir);
	mkdir(dir, 0700);
	close(open(unwind, O_CREAT | O_WRONLY, 0600));
	rc = run("cp /usr/lib/x86_64-linux-gnu/libcrypto.so.3 '%s'", path);
	pid = rc ? -1 : spawn_ready((char *[]){ "python3", "-c",
				      "import ctypes, sys, time\n"
				      "ctypes.CDLL(sys.argv[1])\n"
				      "print('ready', flush=True)\n"
				      "time.sleep(3600)", path, NULL });
	if (pid < 0) {
		test_cond("python3 mapping a library so named starts", false);
		return;
	}
	rc = run("%s --load-unwind-tables --table-cache '%s' --proc-dir '%s' -p %d",
		 cprof_dump(), tmp_path("tables"), dir, (int)pid);
	err = slurp(tmp_path("err.txt"), NULL);
	test_condf(rc == 0 && lines_are_ours(err) &&
		   strstr(err, "\\x1b[31mlib") &&
		   strstr(err, "injected line\\x1b[0m.so: other CFA expression "),
		   "unwind tables: the file where walks stop, escaped, one line:\n%s",
		   esc(err));
	free(err);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

/* The stream's header is -i's reader's choice too. */
static void test_comments(void)
{
	static const char *const formats[] = { "text", "top" };
	const char *in = tmp_path("release.bin");
	const uint64_t ips[1] = { 0x401010 };
	struct cprof_header h = sb_default_header();
	struct sb b;
	size_t i;

	snprintf(h.release, sizeof(h.release), "6.1\n999 0 @ 0x1\x1b[2J");
	sb_init(&b);
	sb_header(&b, &h);
	sb_sample(&b, 10, PID, PID, 0, "app", CPROF_SAMPLE_USER_MODE, 0, NULL,
		  1, ips);
	sb_end(&b, 1000000000, CPROF_END_COMPLETE, 0);
	sb_write(&b, in, b.len);
	sb_free(&b);
	for (i = 0; i < sizeof(formats) / sizeof(formats[0]); i++) {
		char *text;
		int rc;

		rc = run("%s -i '%s' --no-symbolize -f %s", cprof_dump(), in,
			 formats[i]);
		text = slurp(tmp_path("out.txt"), NULL);
		test_condf(rc == 0 && text && !strchr(text, 0x1b) &&
			   strstr(text, "Linux 6.1\\x0a999 0 @ 0x1\\x1b[2J,") &&
			   !strstr(text, "\n999 0 @"),
			   "-f %s: the release in its comment, one line, escaped:\n%s",
			   formats[i], esc(text));
		free(text);
	}
}

int main(void)
{
	test_helper();
	test_messages();
	test_tables();
	test_comments();
	return test_report();
}
