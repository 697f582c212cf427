// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * cprof-dump - turn a cprof stream into a symbolized pprof profile, folded
 * stacks or a top table; or run the profile itself with -d.
 */
#include <argp.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ksyms.h"
#include "outfile.h"
#include "output.h"
#include "pprof.h"
#include "profile.h"
#include "resolve.h"
#include "stream.h"
#include "unwload.h"
#include "util.h"

#define PROC_DIR	"/proc/cprof"
#define FREQ_MAX	100000
#define SECONDS_MAX	86400
#define PID_MAX		4194304	/* PID_MAX_LIMIT on 64-bit */

enum format { FORMAT_PPROF, FORMAT_FOLDED, FORMAT_TOP };

static struct env {
	const char *input;
	const char *output;
	enum format format;
	bool symbolize;
	long duration;		/* 0: read a stream instead */
	long freq;		/* 0: leave as set */
	long pid;		/* -1: leave as set */
	long nodes;
	const char *kallsyms;
	const char *modules;
	const char *proc_dir;
	bool unwind_tables;	/* with -d: load unwind tables */
	bool load_tables;	/* only load them, for a later profile */
} env = {
	.format = FORMAT_PPROF,
	.symbolize = true,
	.pid = -1,
	.nodes = 20,
	.proc_dir = PROC_DIR,
	.unwind_tables = true,
};

enum {
	OPT_NO_SYMBOLIZE = 256,
	OPT_KALLSYMS,
	OPT_MODULES,
	OPT_PROC_DIR,
	OPT_NO_TABLES,
	OPT_LOAD_TABLES,
};

const char *argp_program_version = "cprof-dump " CPROF_RELEASE;
static const char argp_program_doc[] =
"Convert a cprof CPU profile stream into pprof, folded stacks or a top table.\n"
"\n"
"USAGE: cprof-dump [-i FILE|-] [-o FILE|-] [-f pprof|folded|top] [--no-symbolize]\n"
"                  [-d SECONDS [-F FREQ] [-p PID] [--no-unwind-tables]] [-n NODES]\n"
"       cprof-dump --load-unwind-tables [-p PID]\n"
"\n"
"The stream is what /proc/cprof/profile gives (cprof.ko); with -d, cprof-dump\n"
"starts the profile itself and reads it to the end (Ctrl-C stops it early and\n"
"keeps what was collected).  The default output is a gzipped pprof profile,\n"
"kernel and user stacks symbolized.  -d first gives the module the unwind\n"
"tables of the programs that run (and later of those that start), so user\n"
"stacks are complete in code built without frame pointers.\n"
"\n"
"EXAMPLES:\n"
"    cprof-dump -d 10 -o cpu.pb.gz          # profile every CPU for 10 s\n"
"    cprof-dump -d 5 -F 999 -p 1234 -f top  # 5 s of pid 1234 at 999 Hz, top table\n"
"    cat /proc/cprof/profile > raw; cprof-dump -i raw -o cpu.pb.gz\n"
"    cprof-dump -i raw -f folded | flamegraph.pl > fg.svg\n"
"    cprof-dump -i raw --no-symbolize -o raw.pb.gz  # let pprof symbolize later\n"
"    go tool pprof -top cpu.pb.gz\n"
"\n"
"OPTIONS:";

static const struct argp_option opts[] = {
	{ "input", 'i', "FILE", 0,
	  "Read the stream from FILE ('-': stdin, the default when it is not a terminal)", 0 },
	{ "output", 'o', "FILE", 0,
	  "Write to FILE ('-': stdout, the default; pprof needs -o on a terminal)", 0 },
	{ "format", 'f', "FORMAT", 0, "pprof (default), folded or top", 0 },
	{ "no-symbolize", OPT_NO_SYMBOLIZE, NULL, 0,
	  "Addresses and mappings only: pprof can symbolize later", 0 },
	{ "nodes", 'n', "N", 0, "Rows of -f top (default 20, 0: all)", 0 },
	{ "duration", 'd', "SECONDS", 0,
	  "Run a profile of SECONDS through /proc/cprof instead of reading a stream", 0 },
	{ "frequency", 'F', "HZ", 0, "With -d: samples per second per CPU", 0 },
	{ "pid", 'p', "PID", 0, "With -d: profile only this process (0: all)", 0 },
	{ "no-unwind-tables", OPT_NO_TABLES, NULL, 0,
	  "With -d: walk user stacks by frame pointers only", 0 },
	{ "load-unwind-tables", OPT_LOAD_TABLES, NULL, 0,
	  "Load the unwind tables of the running programs (-p: of one) into the module and exit, for a profile read with cat", 0 },
	{ "kallsyms", OPT_KALLSYMS, "FILE", 0,
	  "Kernel symbols (default /proc/kallsyms)", 0 },
	{ "modules", OPT_MODULES, "FILE", 0,
	  "Kernel modules (default /proc/modules)", 0 },
	{ "proc-dir", OPT_PROC_DIR, "DIR", 0,
	  "Where the module's ctl and profile files are (default " PROC_DIR ")", 0 },
	{ NULL, 'h', NULL, OPTION_HIDDEN, "Show the full help", 0 },
	{},
};

static error_t parse_arg(int key, char *arg, struct argp_state *state)
{
	switch (key) {
	case 'h':
		argp_state_help(state, stderr, ARGP_HELP_STD_HELP);
		break;
	case 'i':
		env.input = arg;
		break;
	case 'o':
		env.output = arg;
		break;
	case 'f':
		if (!strcmp(arg, "pprof"))
			env.format = FORMAT_PPROF;
		else if (!strcmp(arg, "folded"))
			env.format = FORMAT_FOLDED;
		else if (!strcmp(arg, "top"))
			env.format = FORMAT_TOP;
		else {
			fail("invalid format: '%s' (pprof, folded or top)", arg);
			return EINVAL;
		}
		break;
	case OPT_NO_SYMBOLIZE:
		env.symbolize = false;
		break;
	case 'n':
		if (parse_long("number of nodes", arg, 0, 1000000, &env.nodes))
			return EINVAL;
		break;
	case 'd':
		if (parse_long("duration", arg, 1, SECONDS_MAX, &env.duration))
			return EINVAL;
		break;
	case 'F':
		if (parse_long("frequency", arg, 1, FREQ_MAX, &env.freq))
			return EINVAL;
		break;
	case 'p':
		if (parse_long("pid", arg, 0, PID_MAX, &env.pid))
			return EINVAL;
		break;
	case OPT_KALLSYMS:
		env.kallsyms = arg;
		break;
	case OPT_MODULES:
		env.modules = arg;
		break;
	case OPT_PROC_DIR:
		env.proc_dir = arg;
		break;
	case OPT_NO_TABLES:
		env.unwind_tables = false;
		break;
	case OPT_LOAD_TABLES:
		env.load_tables = true;
		break;
	case ARGP_KEY_ARG:
		fail("unexpected argument: '%s' (see --help)", arg);
		return EINVAL;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

/*
 * Signals.  While -d reads the profile, the first SIGINT only asks the
 * module to stop ("stop=1" in ctl: the signal itself reaches the module only
 * if it lands while read() sleeps); the module ends the stream with an END
 * record and the output is written as usual.  Otherwise, or on a second
 * signal, the temporary output is removed and the process exits.
 */
static volatile sig_atomic_t interrupted;
static bool soft_interrupt;
static int ctl_fd = -1;		/* kept open by -d for the stop request */
static char tmp_path[4096];

static void sig_handler(int sig)
{
	static const char stop[] = "stop=1\n";
	ssize_t unreported = 0;

	if (sig == SIGINT && soft_interrupt && !interrupted) {
		interrupted = 1;
		if (ctl_fd >= 0)
			unreported = write(ctl_fd, stop, sizeof(stop) - 1);
		(void)unreported;
		return;
	}
	if (tmp_path[0])
		unlink(tmp_path);
	_exit(128 + sig);
}

static void setup_signals(const struct outfile *out)
{
	/* no SA_RESTART: a blocked read returns and the loop goes on */
	struct sigaction sa = { .sa_handler = sig_handler };
	const char *tmp = outfile__tmp_path(out);

	if (tmp)
		snprintf(tmp_path, sizeof(tmp_path), "%s", tmp);
	soft_interrupt = env.duration > 0;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
}

/* Why the module refused an open, and what to do about it. */
static const char *refusal_hint(int err)
{
	switch (err) {
	case ENOENT:
		return " (is cprof.ko loaded?)";
	case EACCES:
		return " (profiling needs CAP_PERFMON or CAP_SYS_ADMIN in the host's initial user namespace: run as root outside a container or user namespace, or grant CAP_PERFMON)";
	case EPERM:
		return " (the kernel is locked down: lockdown=confidentiality refuses profiling until the next boot)";
	case EBUSY:
		return " (another profile is running)";
	default:
		return "";
	}
}

/* Configure the module and open its profile; the fd, or -1. */
static int start_profile(char *path, size_t size)
{
	char ctl[256], settings[128];
	int fd, len;
	ssize_t n;

	snprintf(ctl, sizeof(ctl), "%s/ctl", env.proc_dir);
	len = snprintf(settings, sizeof(settings), "seconds=%ld\n",
		       env.duration);
	if (env.freq)
		len += snprintf(settings + len, sizeof(settings) - len,
				"freq=%ld\n", env.freq);
	if (env.pid >= 0)
		len += snprintf(settings + len, sizeof(settings) - len,
				"pid=%ld\n", env.pid);
	fd = open(ctl, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return fail("failed to open %s: %s%s", ctl, strerror(errno),
			    refusal_hint(errno));
	n = write(fd, settings, len);
	if (n != len) {
		fail("failed to configure the profile (%.*s) in %s: %s",
		     len - 1, settings, ctl,
		     n < 0 ? strerror(errno) : "short write");
		close(fd);
		return -1;
	}
	ctl_fd = fd;

	snprintf(path, size, "%s/profile", env.proc_dir);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return fail("failed to open %s: %s%s", path, strerror(errno),
			    refusal_hint(errno));
	return fd;
}

/* The stream to read; its name in messages in *name.  -1 on error. */
static int open_input(const char **name)
{
	int fd;

	if (!env.input || !strcmp(env.input, "-")) {
		if (!env.input && isatty(STDIN_FILENO))
			return fail("no input: give -i FILE, pipe a stream in, or run a profile with -d SECONDS");
		*name = "stdin";
		return STDIN_FILENO;
	}
	fd = open(env.input, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return fail("failed to open %s: %s", env.input, strerror(errno));
	*name = env.input;
	return fd;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* "profiling: 3/10 s, 1234 samples" on a terminal, at most once a second. */
static void progress(double start, double *last, uint64_t samples, bool done)
{
	double t = now();

	if (!done && t - *last < 1.0)
		return;
	*last = t;
	if (done) {
		fputs("\r\033[K", stderr);
		return;
	}
	fprintf(stderr, "\r\033[K" PROG_NAME ": profiling: %.0f/%ld s, %llu samples%s",
		t - start, env.duration, (unsigned long long)samples,
		interrupted ? " (stopping)" : ", Ctrl-C to stop");
}

/* Read the whole stream into p.  0 ok, -1 after printing why. */
static int read_stream(struct stream *s, struct profile **p,
		       struct unwload *unw)
{
	bool show = env.duration && isatty(STDERR_FILENO);
	double start = now(), last = 0;
	const struct cprof_header *h;
	const struct cprof_rec *rec;
	int ret;

	h = stream__read_header(s);
	if (!h)
		return -1;
	*p = profile__new(h);
	if (!*p)
		return fail("failed to aggregate samples: %s", strerror(ENOMEM));
	while ((ret = stream__next(s, &rec)) > 0) {
		if (profile__add(*p, rec))
			return -1;
		if (unw && rec->type == CPROF_REC_MMAP)
			unwload__note(unw, (const struct cprof_mmap *)rec);
		/*
		 * Only as records arrive: a timer signal would end the
		 * profile, the module takes any signal as a stop.
		 */
		if (show)
			progress(start, &last, profile__nr_records(*p), false);
	}
	if (show)
		progress(start, &last, 0, true);
	return ret;
}

/* --load-unwind-tables: exit status 0 when every file was handled. */
static int load_tables_only(void)
{
	struct unwload *l = unwload__start(env.proc_dir);
	struct unwload_stats st;

	if (!l)
		return 1;
	unwload__scan(l, env.pid > 0 ? env.pid : 0);
	unwload__wait(l, &interrupted);
	unwload__stop(l, &st);
	fprintf(stderr, PROG_NAME ": loaded %llu unwind tables (%llu rows); %llu files without call frame information, %llu refused\n",
		(unsigned long long)st.loaded, (unsigned long long)st.rows,
		(unsigned long long)st.no_cfi, (unsigned long long)st.refused);
	return st.refused ? 1 : 0;
}

int main(int argc, char **argv)
{
	static const struct argp argp = {
		.options = opts,
		.parser = parse_arg,
		.doc = argp_program_doc,
	};
	struct resolve_opts ropts = { 0 };
	const struct cprof_end *end;
	struct outfile *out = NULL;
	struct profile *prof = NULL;
	struct resolved *res = NULL;
	struct stream *s = NULL;
	struct unwload *unw = NULL;
	char profile_path[4096];
	const char *in_name = NULL;
	int fd = -1, err = 1;

	/* an unknown option is a usage error too: exit 2, not EX_USAGE */
	argp_err_exit_status = 2;
	if (argp_parse(&argp, argc, argv, 0, NULL, NULL))
		return 2;
	if (env.duration && env.input) {
		fail("-d runs a profile: it does not read -i %s", env.input);
		return 2;
	}
	if (env.load_tables) {
		if (env.duration || env.input || env.freq) {
			fail("--load-unwind-tables only loads tables: it takes -p alone");
			return 2;
		}
		return load_tables_only();
	}
	if (!env.duration && (env.freq || env.pid >= 0)) {
		fail("-F and -p set up a profile: use them with -d SECONDS");
		return 2;
	}
	if (env.format == FORMAT_PPROF &&
	    (!env.output || !strcmp(env.output, "-")) &&
	    isatty(STDOUT_FILENO)) {
		fail("not writing a binary pprof profile to a terminal: use -o FILE");
		return 2;
	}

	out = outfile__open(env.output);
	if (!out)
		goto cleanup;
	setup_signals(out);
	if (env.duration && env.unwind_tables) {
		/* before the profile: the work is not in it */
		unw = unwload__start(env.proc_dir);
		unwload__scan(unw, env.pid > 0 ? env.pid : 0);
		unwload__wait(unw, &interrupted);
		if (interrupted) {
			fail("interrupted before the profile started");
			goto cleanup;
		}
	}
	if (env.duration) {
		fd = start_profile(profile_path, sizeof(profile_path));
		in_name = profile_path;
	} else {
		fd = open_input(&in_name);
	}
	if (fd < 0)
		goto cleanup;
	s = stream__new(fd, in_name);
	if (!s) {
		fail("failed to read %s: %s", in_name, strerror(ENOMEM));
		goto cleanup;
	}
	/*
	 * Kernel symbols load while the stream is read, but not during a
	 * profile run here (-d): that would be in the profile.
	 */
	ropts.symbolize = env.symbolize;
	ropts.kallsyms = env.kallsyms;
	ropts.modules = env.modules;
	if (env.symbolize && !env.duration && resolve_opts__start_ksyms(&ropts)) {
		fail("failed to load kernel symbols: %s", strerror(ENOMEM));
		goto cleanup;
	}
	if (read_stream(s, &prof, unw))
		goto cleanup;
	unwload__stop(unw, NULL);
	unw = NULL;
	end = profile__end(prof);
	if (end->samples != profile__nr_records(prof))
		warning("%s: the END record counts %llu samples, the stream has %llu",
			in_name, (unsigned long long)end->samples,
			(unsigned long long)profile__nr_records(prof));

	res = resolved__new(prof, &ropts);
	ropts.ksyms_loader = NULL;
	if (!res)
		goto cleanup;

	switch (env.format) {
	case FORMAT_PPROF:
		err = pprof__write(res, outfile__stream(out), outfile__name(out));
		break;
	case FORMAT_FOLDED:
		err = output__folded(res, outfile__stream(out),
				     outfile__name(out));
		break;
	case FORMAT_TOP:
		err = output__top(res, outfile__stream(out), outfile__name(out),
				  env.nodes);
		break;
	}
	if (!err) {
		err = outfile__commit(out);
		out = NULL;
	}
	err = err ? 1 : 0;
cleanup:
	unwload__stop(unw, NULL);
	ksyms__load_cancel(ropts.ksyms_loader);
	outfile__abort(out);
	resolved__free(res);
	profile__free(prof);
	stream__free(s);
	if (fd > STDIN_FILENO)
		close(fd);
	return err;
}
