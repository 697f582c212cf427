// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * cprof-dump as a user runs it: option errors, bad input (one line, non-zero
 * exit, no output file left behind, an existing file untouched), -d against
 * a stand-in for /proc/cprof, and signals.
 */
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "streambuild.h"
#include "test.h"
#include "testutil.h"

static void build(struct sb *b)
{
	uint64_t u[2] = { 0x401000, 0x402000 };
	int i;

	sb_init(b);
	sb_header(b, NULL);
	sb_mmap(b, 1, 42, 0x400000, 0x500000, 0, "/nonexistent/x", NULL, 0);
	for (i = 0; i < 10; i++)
		sb_sample(b, 10 + i, 42, 42, i % 4, "x", CPROF_SAMPLE_USER_MODE,
			  0, NULL, 2, u);
	sb_end(b, 1000000000, CPROF_END_COMPLETE, 0);
}

/* Entries of dir other than the ones named (NULL-terminated list). */
static int extra_entries(const char *dir, const char *const *keep)
{
	struct dirent *d;
	int n = 0, i;
	DIR *dp = opendir(dir);

	while (dp && (d = readdir(dp))) {
		bool known = !strcmp(d->d_name, ".") || !strcmp(d->d_name, "..");

		for (i = 0; keep[i] && !known; i++)
			known = !strcmp(d->d_name, keep[i]);
		n += !known;
	}
	if (dp)
		closedir(dp);
	return n;
}

/* The widest line of text before stop (all of text if stop is not in it). */
static size_t widest_before(const char *text, const char *stop)
{
	const char *end = strstr(text, stop);
	size_t w = 0, n;

	if (!end)
		end = text + strlen(text);
	while (text < end) {
		n = strcspn(text, "\n");
		if (n > w)
			w = n;
		text += n + (text[n] == '\n');
	}
	return w;
}

static bool err_is(const char *needle)
{
	char *err = slurp(tmp_path("err.txt"), NULL);
	bool ok = err && nr_lines(err) == 1 && strstr(err, needle) &&
		  !strncmp(err, "cprof-dump: ", 12);

	if (!ok)
		printf("# stderr: %s", err ? err : "(none)\n");
	free(err);
	return ok;
}

static void test_options(void)
{
	const char *d = cprof_dump();
	char tok[64], want[128];
	char *text;

	test_cond("-d abc: not a number", run("%s -d abc", d) != 0 &&
		  err_is("invalid duration: 'abc' (not a number)"));
	test_cond("-d 0: out of range", run("%s -d 0", d) != 0 &&
		  err_is("invalid duration: '0' (must be 1..86400)"));
	test_cond("-d 99999999999999999999: out of range",
		  run("%s -d 99999999999999999999", d) != 0 &&
		  err_is("invalid duration: '99999999999999999999' (must be 1..86400)"));
	test_cond("-F 100001: out of range", run("%s -d 1 -F 100001", d) != 0 &&
		  err_is("invalid frequency: '100001'"));
	test_cond("-p 1x: not a number", run("%s -d 1 -p 1x", d) != 0 &&
		  err_is("invalid pid: '1x' (not a number)"));
	test_cond("-n -1: out of range", run("%s -n -1 -i x", d) != 0 &&
		  err_is("invalid number of nodes: '-1'"));
	test_cond("-f svg: unknown format", run("%s -f svg", d) != 0 &&
		  err_is("invalid format: 'svg'"));
	test_cond("-F without -d", run("%s -F 99 -i x", d) != 0 &&
		  err_is("use them with -d SECONDS"));
	test_cond("--kind bogus", run("%s -d 1 --kind bogus", d) != 0 &&
		  err_is("bad --kind 'bogus': cpu, offcpu, wall, threads, threadcreate, mutex, trace or heap"));
	test_cond("--kind without -d", run("%s --kind offcpu -i x", d) != 0 &&
		  err_is("--kind runs a profile of that kind"));
	test_cond("--kind with --every", run("%s --kind wall --every 5 -o y", d) != 0 &&
		  err_is("--every profiles CPU time"));
	test_cond("-d with -i", run("%s -d 1 -i x", d) != 0 &&
		  err_is("does not read -i"));
	test_cond("--every with -i", run("%s --every 2 -i x", d) != 0 &&
		  err_is("--every runs a profile: it does not read -i x"));
	test_cond("--keep without --every", run("%s --keep 3 -d 1", d) != 0 &&
		  err_is("--keep rotates the files of --every"));
	test_cond("--every 0: out of range", run("%s --every 0", d) != 0 &&
		  err_is("invalid window length: '0'"));
	test_cond("--every to stdout", run("%s --every 5 -o -", d) != 0 &&
		  err_is("--every writes files into a directory"));
	/* before any profile starts: a run of weeks does not find out later */
	test_cond("--every into a directory that is not there",
		  run("%s --every 5 -o /nonexistent/dir --proc-dir /nonexistent", d) == 1 &&
		  err_is("--every writes into -o /nonexistent/dir: No such file or directory"));
	test_cond("--every into a file",
		  run("%s --every 5 -o /etc/hostname --proc-dir /nonexistent", d) == 1 &&
		  err_is("--every writes into -o /etc/hostname: not a directory"));
	test_cond("--http with -d", run("%s --http :6060 -d 5", d) != 0 &&
		  err_is("--http serves profiles: it takes the --http-* options"));
	test_cond("--http on a bad address",
		  run("%s --http localhost:http", d) != 0 &&
		  err_is("invalid --http address 'localhost:http'"));
	test_cond("--http on a port out of range",
		  run("%s --http :65536", d) != 0 &&
		  err_is("invalid --http address ':65536': the port must be a number from 1 to 65535"));
	test_cond("--http on an IPv6 address without brackets",
		  run("%s --http ::1:6060", d) != 0 &&
		  err_is("invalid --http address '::1:6060': an IPv6 address goes in brackets"));
	test_cond("--http on a relative socket path",
		  run("%s --http unix:p.sock", d) != 0 &&
		  err_is("invalid --http address 'unix:p.sock': a Unix socket's path must be absolute"));
	test_cond("--http on TCP without authentication is refused",
		  run("%s --http :6060", d) != 0 &&
		  err_is("--http 127.0.0.1:6060: TCP needs an authenticated client"));
	test_cond("--http on an address not here",
		  run("%s --http 192.0.2.1:6060 --http-insecure-no-auth", d) != 0 &&
		  err_is("failed to listen on 192.0.2.1:6060: Cannot assign requested address"));
	test_cond("--http-token-file without --http",
		  run("%s --http-token-file t -d 1", d) != 0 &&
		  err_is("the --http-* options go with --http ADDR"));
	test_cond("--http-client-ca without TLS",
		  run("%s --http :6060 --http-client-ca ca.pem", d) != 0 &&
		  err_is("--http-client-ca needs TLS"));
	test_cond("--http-insecure-no-auth on a Unix socket",
		  run("%s --http unix:/tmp/x.sock --http-insecure-no-auth", d) != 0 &&
		  err_is("--http-insecure-no-auth is for TCP"));
	test_cond("--http-group on TCP",
		  run("%s --http :6060 --http-group root --http-insecure-no-auth", d) != 0 &&
		  err_is("--http-group is for a Unix socket"));
	/*
	 * (the other tests count the files in TEST_TMPDIR: /dev/shm, named
	 * by this process, as the plain and sanitized builds run side by side)
	 */
	snprintf(tok, sizeof(tok), "/dev/shm/cprof-test-tok-%d", (int)getpid());
	snprintf(want, sizeof(want), "--http-token-file %s.fifo: not a regular file", tok);
	test_cond("a token file that is a FIFO is refused, not waited on",
		  run("rm -f %s.fifo && mkfifo -m 600 %s.fifo", tok, tok) == 0 &&
		  run("timeout 10 %s --http :6060 --http-token-file %s.fifo",
		      d, tok) == 1 &&
		  err_is(want));
	run("rm -f %s.fifo", tok);
	test_cond("a token file on a pipe is refused",
		  run("printf 'abcdefghijklmnopqrstuvwxyz\\n' | %s --http :6060 --http-token-file /dev/stdin",
		      d) != 0 &&
		  err_is("--http-token-file /dev/stdin: not a regular file"));
	test_cond("a short token is refused",
		  run("printf 'short\\n' > %s && %s --http :6060 --http-token-file %s",
		      tok, d, tok) != 0 &&
		  err_is("the token has 5 characters; at least 16 are needed"));
	run("rm -f %s", tok);
	test_cond("missing input file",
		  run("%s -i /nonexistent/raw -f folded", d) != 0 &&
		  err_is("failed to open /nonexistent/raw: No such file or directory"));
	test_cond("a stray argument", run("%s raw.bin", d) != 0 &&
		  err_is("unexpected argument: 'raw.bin'"));
	test_cond("usage errors exit 2: a bad number",
		  run("%s -d 0", d) == 2);
	test_cond("usage errors exit 2: an unknown option",
		  run("%s --no-such-option", d) == 2);
	test_cond("usage errors exit 2: a missing argument",
		  run("%s -d", d) == 2);
	/*
	 * argp breaks a line of the usage and examples that passes its right
	 * margin (column 79) at any space, inside an option ("[-n\nNODES]"):
	 * shown unwrapped, none may be wider.
	 */
	text = NULL;
	test_cond("--help shows usage and examples, within 79 columns",
		  run("ARGP_HELP_FMT=rmargin=1000 %s --help", d) == 0 &&
		  (text = slurp(tmp_path("out.txt"), NULL)) &&
		  strstr(text, "USAGE: cprof-dump") && strstr(text, "EXAMPLES:") &&
		  widest_before(text, "\nOPTIONS:") <= 79);
	free(text);
}

static void test_bad_input(void)
{
	const char *in = tmp_path("bad.bin"), *out = tmp_path("out.pb.gz");
	const char *keep[] = { "bad.bin", "out.txt", "err.txt", NULL };
	const char *keep_old[] = { "bad.bin", "out.txt", "err.txt", "out.pb.gz",
				   NULL };
	char *old;
	struct sb b;

	build(&b);
	sb_write(&b, in, b.len - 20);		/* cut inside END */
	test_cond("truncated stream: non-zero exit, one line naming the offset",
		  run("%s -i '%s' -o '%s'", cprof_dump(), in, out) == 1 &&
		  err_is("truncated END record at byte"));
	test_cond("... and no output file, no temporary file",
		  access(out, F_OK) && extra_entries(getenv("TEST_TMPDIR"), keep) == 0);

	sb_write(&b, in, b.len);
	b.buf[0] = 'X';
	sb_write(&b, in, b.len);
	run("echo old > '%s'", out);
	test_cond("bad magic over an existing output: rejected",
		  run("%s -i '%s' -o '%s'", cprof_dump(), in, out) == 1 &&
		  err_is("bad magic at byte 0"));
	old = slurp(out, NULL);
	test_cond("... the existing file is untouched, nothing else left",
		  old && !strcmp(old, "old\n") &&
		  extra_entries(getenv("TEST_TMPDIR"), keep_old) == 0);
	free(old);
	unlink(out);
	sb_free(&b);

	test_cond("not a stream on stdin",
		  run("echo hello | %s -f folded", cprof_dump()) == 1 &&
		  err_is("stdin: bad magic at byte 0"));
	test_cond("a stream cut in its header, on stdin",
		  run("printf CPROFSTM | %s -f folded", cprof_dump()) == 1 &&
		  err_is("stdin: truncated header at byte 0 (need 160 bytes, have 8)"));
	test_cond("output directory missing",
		  run("%s -i /dev/null -o /nonexistent/dir/out.pb.gz", cprof_dump()) == 1 &&
		  err_is("failed to create /nonexistent/dir/out.pb.gz"));
}

static void test_good_input(void)
{
	const char *in = tmp_path("good.bin"), *out = tmp_path("good.pb.gz");
	Perftools__Profiles__Profile *p;
	struct stat st;
	char *text;
	struct sb b;

	build(&b);
	sb_write(&b, in, b.len);
	sb_free(&b);
	test_cond("pprof to a file",
		  run("umask 022; %s -i '%s' -o '%s' --no-symbolize", cprof_dump(),
		      in, out) == 0);
	p = pprof_read(out);
	test_cond("... is a pprof profile with 4 samples (one per cpu)",
		  p && p->n_sample == 4);
	if (p)
		perftools__profiles__profile__free_unpacked(p, NULL);
	test_cond("... readable by its owner only (0600), whatever the umask",
		  !stat(out, &st) && (st.st_mode & 0777) == 0600);
	test_cond("pprof to a pipe (-o -)",
		  run("%s -i '%s' -o - --no-symbolize | gzip -t", cprof_dump(),
		      in) == 0);
	/* Not renamed over: as root, -o /dev/null replaced /dev/null. */
	test_cond("pprof to a FIFO: written through it, the FIFO left in place",
		  !mkfifo(tmp_path("out.fifo"), 0600) &&
		  run("cat '%s' > '%s' & %s -i '%s' -o '%s' --no-symbolize; wait; gzip -t < '%s'",
		      tmp_path("out.fifo"), tmp_path("fifo.pb.gz"), cprof_dump(), in,
		      tmp_path("out.fifo"), tmp_path("fifo.pb.gz")) == 0 &&
		  !stat(tmp_path("out.fifo"), &st) && S_ISFIFO(st.st_mode));
	unlink(tmp_path("out.fifo"));
	unlink(tmp_path("fifo.pb.gz"));
	test_cond("folded to stdout, reading stdin",
		  run("%s -f folded --no-symbolize < '%s'", cprof_dump(), in) == 0);
	text = slurp(tmp_path("out.txt"), NULL);
	test_cond("... one line, 10 samples", text && nr_lines(text) == 1 &&
		  strstr(text, "x;x+0x1fff;x+0x1000 10\n"));
	free(text);
}

/* Write the stream into the fifo in two parts with a signal in between. */
static int feed_fifo(const char *fifo, const struct sb *b, pid_t child,
		     int sig, size_t split)
{
	struct timespec ts = { 0, 200 * 1000 * 1000 };
	int fd = open(fifo, O_WRONLY);
	int err = 0;

	if (fd < 0)
		return -1;
	err |= write(fd, b->buf, split) != (ssize_t)split;
	nanosleep(&ts, NULL);
	kill(child, sig);
	nanosleep(&ts, NULL);
	/* a killed reader makes this write fail: that is fine */
	signal(SIGPIPE, SIG_IGN);
	if (write(fd, b->buf + split, b->len - split) < 0)
		err |= sig == SIGINT;
	close(fd);
	return err;
}

static pid_t spawn(char *const argv[])
{
	pid_t pid = fork();

	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		dup2(null, STDERR_FILENO);
		execv(argv[0], argv);
		_exit(127);
	}
	return pid;
}

static void test_duration(void)
{
	const char *dir = tmp_path("proc"), *ctl = tmp_path("proc/ctl");
	const char *prof = tmp_path("proc/profile"), *out = tmp_path("d.txt");
	char dump[4096], *text;
	int status = -1;
	struct sb b;
	pid_t pid;

	snprintf(dump, sizeof(dump), "%s", cprof_dump());
	build(&b);
	mkdir(dir, 0700);
	run("touch '%s'", ctl);
	sb_write(&b, prof, b.len);
	test_cond("-d: reads the profile file",
		  run("%s -d 3 -F 999 -p 42 --proc-dir '%s' -f folded", dump,
		      dir) == 0);
	text = slurp(ctl, NULL);
	test_cond("-d: settings written to ctl in one go",
		  text && !strcmp(text, "seconds=3\nkind=cpu\nfreq=999\npid=42\n"));
	free(text);
	text = slurp(tmp_path("out.txt"), NULL);
	test_cond("-d: output from the profile", text && strstr(text, " 10\n"));
	free(text);
	/* a pid= an earlier profile left in ctl does not narrow this one */
	run("echo 'pid=42' > '%s'", ctl);
	test_cond("-d without -p: runs",
		  run("%s -d 3 --proc-dir '%s' -f folded", dump, dir) == 0);
	text = slurp(ctl, NULL);
	test_condf(text && !strcmp(text, "seconds=3\nkind=cpu\npid=0\n"),
		   "-d without -p: every process (pid=0), freq= left as set (ctl got '%s')",
		   text ? text : "(none)");
	free(text);
	test_cond("-d without the module: says so",
		  run("%s -d 1 --proc-dir /nonexistent -f top", dump) == 1 &&
		  err_is("(is cprof.ko loaded?)"));

	/* the module ends the stream with END after SIGINT: keep reading */
	unlink(prof);
	mkfifo(prof, 0600);
	pid = spawn((char *[]){ dump, "-d", "5", "--proc-dir", (char *)dir,
				"-f", "folded", "-o", (char *)out, NULL });
	test_cond("-d + SIGINT: stream written around the signal",
		  feed_fifo(prof, &b, pid, SIGINT, b.len / 2) == 0);
	waitpid(pid, &status, 0);
	text = slurp(out, NULL);
	test_condf(WIFEXITED(status) && WEXITSTATUS(status) == 0 && text &&
		   strstr(text, " 10\n"),
		   "-d + SIGINT: exit 0, every sample kept (status %#x)", status);
	free(text);
	unlink(out);

	/* a plain conversion killed half way leaves nothing behind */
	pid = spawn((char *[]){ dump, "-i", (char *)prof, "-f", "folded", "-o",
				(char *)out, NULL });
	feed_fifo(prof, &b, pid, SIGTERM, b.len / 2);
	waitpid(pid, &status, 0);
	test_condf(WIFEXITED(status) && WEXITSTATUS(status) == 128 + SIGTERM &&
		   access(out, F_OK) &&
		   extra_entries(getenv("TEST_TMPDIR"),
				 (const char *[]){ "proc", "out.txt", "err.txt",
						   "good.bin", "good.pb.gz",
						   "bad.bin", NULL }) == 0,
		   "SIGTERM: exit %d, no output or temporary file left",
		   WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	sb_free(&b);
}

int main(void)
{
	test_options();
	test_bad_input();
	test_good_input();
	test_duration();
	return test_report();
}
