// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * cprof-dump - turn a cprof stream into a symbolized pprof profile, folded
 * stacks or a top table; or run the profile itself with -d.
 */
#include <argp.h>
#include <errno.h>
#include <limits.h>
#include <malloc.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/atomicfile.h"
#include "python/pyframes.h"
#include "cprof_format.h"
#include "symbolize/debugfetch.h"
#include "symbolize/kcache.h"
#include "serve/httpd.h"
#include "ingest/ingest.h"
#include "stream/modprofile.h"
#include "output/chrome.h"
#include "output/output.h"
#include "run/heapfind.h"
#include "run/pipeline.h"
#include "stream/profile.h"
#include "symbolize/resolve.h"
#include "symbolize/symcache.h"
#include "unwind/tableload.h"
#include "lib/util.h"
#include "serve/windows.h"

enum {
	OPT_NO_SYMBOLIZE = 256,
	OPT_KALLSYMS,
	OPT_MODULES,
	OPT_PROC_DIR,
	OPT_NO_TABLES,
	OPT_NO_PYTHON,
	OPT_LOAD_TABLES,
	OPT_HTTP,
	OPT_HTTP_TOKEN,
	OPT_HTTP_CERT,
	OPT_HTTP_KEY,
	OPT_HTTP_CA,
	OPT_HTTP_GROUP,
	OPT_HTTP_INSECURE,
	OPT_HTTP_MAX_SECONDS,
	OPT_HTTP_MAX_FREQ,
	OPT_EVERY,
	OPT_KEEP,
	OPT_CGROUP,
	OPT_DEBUGINFOD,
	OPT_DEBUGINFOD_SECONDS,
	OPT_TABLE_CACHE,
	OPT_SYMBOL_CACHE,
	OPT_KIND,
	OPT_TRACE_BYTES,
	OPT_RATE,
};

static struct env {
	const char *input;
	const char *output;
	struct output_opts out;
	bool symbolize;
	long duration;		/* 0: read a stream instead (or with --every: until stopped) */
	long freq;		/* 0: leave as set */
	long pid;		/* -1: not given (every process) */
	const char *kind;	/* --kind; NULL: cpu */
	long rate;		/* --rate: kind heap's mean bytes a sample */
	const char *kallsyms;
	const char *modules;
	const char *proc_dir;
	bool unwind_tables;	/* with -d: load unwind tables */
	bool load_tables;	/* only load them, for a later profile */
	struct httpd_opts http;	/* --http ADDR and the --http-* options */
	bool http_opts;		/* an --http-* option was given */
	long every;		/* --every SECONDS: continuous windows */
	long keep;
	const char *table_cache;	/* --table-cache; NULL: the default */
	const char *symbol_cache;	/* --symbol-cache; NULL: the default */
	bool no_python;			/* --no-python-frames */
	bool format_set;		/* -f given */
} env = {
	.out = { .format = FORMAT_PPROF, .nodes = 20 },
	.symbolize = true,
	.pid = -1,
	.rate = HEAP_RATE_DEFAULT,
	.proc_dir = MODPROFILE_PROC_DIR,
	.unwind_tables = true,
	.http = {
		.max_seconds = HTTPD_SECONDS_MAX,
		.max_freq = HTTPD_FREQ_MAX,
	},
};

const char *argp_program_version = "cprof-dump " CPROF_RELEASE;
static const char argp_program_doc[] =
"Convert a cprof CPU profile stream into pprof, folded stacks or a top table.\n"
"\n"
"USAGE: cprof-dump [-i FILE|-] [-o FILE|-] [-f pprof|folded|top|text|trace]\n"
"                  [--no-symbolize] [-n NODES]\n"
"                  [-d SECONDS [-F FREQ] [-p PID] [--no-unwind-tables]]\n"
"       cprof-dump --every SECONDS [--keep N] [-o DIR] [-d SECONDS]\n"
"                  [-F FREQ] [-p PID]\n"
"       cprof-dump --http ADDR [--http-token-file FILE]\n"
"                  [--http-tls-cert FILE --http-tls-key FILE\n"
"                   [--http-client-ca FILE]] [--http-group GROUP]\n"
"       cprof-dump --load-unwind-tables [-p PID]\n"
"\n"
"The stream is what /proc/cprof/profile gives (cprof.ko); with -d, cprof-dump\n"
"starts the profile itself and reads it to the end (Ctrl-C stops it early and\n"
"keeps what was collected).  The default output is a gzipped pprof profile,\n"
"kernel and user stacks symbolized.  -d starts the profile at once and gives\n"
"the module the unwind tables of the programs it samples as they come, so\n"
"user stacks are complete in code built without frame pointers.  --every\n"
"profiles without end (or for -d SECONDS) and writes a file per window into\n"
"DIR;\n"
"--http serves Go's /debug/pprof/profile for the whole machine.\n"
"\n"
"EXAMPLES:\n"
"    cprof-dump -d 10 -o cpu.pb.gz          # profile every CPU for 10 s\n"
"    cprof-dump -d 5 -F 999 -p 1234 -f top  # 5 s of pid 1234 at 999 Hz\n"
"    cat /proc/cprof/profile > raw; cprof-dump -i raw -o cpu.pb.gz\n"
"    cprof-dump -i raw -f folded | flamegraph.pl > fg.svg\n"
"    cprof-dump -i raw --no-symbolize -o raw.pb.gz  # let pprof symbolize later\n"
"    cprof-dump --every 60 --keep 1440 -o /var/lib/cprof  # a day of minutes\n"
"    cprof-dump --http unix:/run/cprof.sock &  # for root, or through\n"
"                                              # ssh -L 6060:/run/cprof.sock\n"
"    cprof-dump --http :606 --http-token-file /etc/cprof/token &  # below 1024:\n"
"                                              # no user can take the port\n"
"    curl -H \"Authorization: Bearer $(cat /etc/cprof/token)\" -o cpu.pb.gz \\\n"
"        'http://localhost:606/debug/pprof/profile?seconds=30'\n"
"    go tool pprof -top cpu.pb.gz\n"
"\n"
"OPTIONS:";

static const struct argp_option opts[] = {
	{ "input", 'i', "FILE", 0,
	  "Read the stream from FILE ('-': stdin, the default when it is not a terminal)", 0 },
	{ "output", 'o', "FILE", 0,
	  "Write to FILE ('-': stdout, the default; pprof needs -o on a terminal)", 0 },
	{ "format", 'f', "FORMAT", 0,
	  "pprof (default), folded, top, text (Go's debug=1 form), threads (a snapshot's every thread: Go's goroutine debug=2) or trace (--kind trace's timeline as the Chrome trace event format, JSON, gzipped when -o ends in .gz; the default of --kind trace)", 0 },
	{ "trace-bytes", OPT_TRACE_BYTES, "BYTES", 0,
	  "-f trace: at most BYTES of JSON, before gzip (default "
	  STRINGIFY(CHROME_BYTES_DEFAULT_MB) " MiB); the events past them left out and counted", 0 },
	{ "cgroup", OPT_CGROUP, NULL, 0,
	  "folded and top: a root frame cgroup:PATH for each sample's cgroup", 0 },
	{ "no-symbolize", OPT_NO_SYMBOLIZE, NULL, 0,
	  "Addresses and mappings only: pprof can symbolize later", 0 },
	{ "nodes", 'n', "N", 0, "Rows of -f top (default 20, 0: all)", 0 },
	{ "debuginfod", OPT_DEBUGINFOD, "URLS", 0,
	  "Fetch missing debug files by build ID from these debuginfod servers (space-separated; default $DEBUGINFOD_URLS; '': none)", 0 },
	{ "debuginfod-seconds", OPT_DEBUGINFOD_SECONDS, "N", 0,
	  "Wait at most N seconds in all on debuginfod servers (default "
	  STRINGIFY(DEBUGFETCH_SECONDS_DEFAULT) "; 0: their cache only)", 0 },
	{ "duration", 'd', "SECONDS", 0,
	  "Run a profile of SECONDS through /proc/cprof instead of reading a stream", 0 },
	{ "frequency", 'F', "HZ", 0, "With -d: samples per second per CPU", 0 },
	{ "pid", 'p', "PID", 0, "With -d: profile only this process (0: all)", 0 },
	{ "kind", OPT_KIND, "KIND", 0,
	  "With -d: cpu (default: where the CPUs run), offcpu (where tasks wait off the CPU, and how long), wall (both), threadcreate (the stacks that create threads and processes, each creation counted), mutex (the stacks that end futex waits, the unlockers, with each wait), trace (every context switch and wake-up, and the stacks each task leaves the CPU with: a timeline) or heap (-p PID's glibc allocations, sampled by bytes: Go's heap profile); threads: a snapshot of every thread now (no -d needed)", 0 },
	{ "rate", OPT_RATE, "BYTES", 0,
	  "With --kind heap: sample one allocation per BYTES allocated on average (default 524288, Go's)", 0 },
	{ "no-unwind-tables", OPT_NO_TABLES, NULL, 0,
	  "With -d: walk user stacks by frame pointers only", 0 },
	{ "no-python-frames", OPT_NO_PYTHON, NULL, 0,
	  "Give the module no CPython interpreter's layout with its unwind table: no Python frames (and none of their cost)", 0 },
	{ "table-cache", OPT_TABLE_CACHE, "DIR", 0,
	  "Keep compiled unwind tables in DIR (default: root's "
	  "/var/cache/cprof-dump/tables; '': none)", 0 },
	{ "symbol-cache", OPT_SYMBOL_CACHE, "DIR", 0,
	  "Keep the symbols of system binaries' addresses in DIR (default: root's "
	  "/var/cache/cprof-dump/symbols; '': none)", 0 },
	{ "every", OPT_EVERY, "SECONDS", 0,
	  "Profile continuously (for -d SECONDS if given), writing a file per window of SECONDS into -o DIR (default .), named by its start", 0 },
	{ "keep", OPT_KEEP, "N", 0,
	  "With --every: keep the newest N files in DIR, removing older ones (default: all)", 0 },
	{ "http", OPT_HTTP, "ADDR", 0,
	  "Serve /debug/pprof/ and /debug/pprof/profile?seconds=N on ADDR: unix:PATH (a socket only its owner may use), or HOST:PORT, :PORT or PORT (TCP, on loopback without HOST) with a token or client certificates", 0 },
	{ "http-token-file", OPT_HTTP_TOKEN, "FILE", 0,
	  "--http: clients must send Authorization: Bearer with the token in FILE", 0 },
	{ "http-tls-cert", OPT_HTTP_CERT, "FILE", 0,
	  "--http: serve HTTPS with this PEM certificate (chain)", 0 },
	{ "http-tls-key", OPT_HTTP_KEY, "FILE", 0,
	  "--http: ... and its PEM private key", 0 },
	{ "http-client-ca", OPT_HTTP_CA, "FILE", 0,
	  "--http: clients must show a certificate signed by a CA in FILE (PEM)", 0 },
	{ "http-group", OPT_HTTP_GROUP, "GROUP", 0,
	  "--http unix:PATH: the socket is 0660 and GROUP's, not 0600", 0 },
	{ "http-insecure-no-auth", OPT_HTTP_INSECURE, NULL, 0,
	  "--http on TCP without a token or certificates: every process that reaches the port reads every process's stacks", 0 },
	{ "http-max-seconds", OPT_HTTP_MAX_SECONDS, "N", 0,
	  "--http: the most seconds= a client may ask (default "
	  STRINGIFY(HTTPD_SECONDS_MAX) ")", 0 },
	{ "http-max-freq", OPT_HTTP_MAX_FREQ, "HZ", 0,
	  "--http: the most freq= a client may ask (default "
	  STRINGIFY(HTTPD_FREQ_MAX) ")", 0 },
	{ "load-unwind-tables", OPT_LOAD_TABLES, NULL, 0,
	  "Load the unwind tables of the running programs (-p: of one) into the module and exit, for a profile read with cat", 0 },
	{ "kallsyms", OPT_KALLSYMS, "FILE", 0,
	  "Kernel symbols (default /proc/kallsyms)", 0 },
	{ "modules", OPT_MODULES, "FILE", 0,
	  "Kernel modules (default /proc/modules)", 0 },
	{ "proc-dir", OPT_PROC_DIR, "DIR", 0,
	  "Where the module's ctl and profile files are (default " MODPROFILE_PROC_DIR ")", 0 },
	{ NULL, 'h', NULL, OPTION_HIDDEN, "Show the full help", 0 },
	{},
};

static error_t parse_arg(int key, char *arg, struct argp_state *state)
{
	long l;

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
			env.out.format = FORMAT_PPROF;
		else if (!strcmp(arg, "folded"))
			env.out.format = FORMAT_FOLDED;
		else if (!strcmp(arg, "top"))
			env.out.format = FORMAT_TOP;
		else if (!strcmp(arg, "text"))
			env.out.format = FORMAT_TEXT;
		else if (!strcmp(arg, "threads"))
			env.out.format = FORMAT_THREADS;
		else if (!strcmp(arg, "trace"))
			env.out.format = FORMAT_TRACE;
		else {
			fail("invalid format: '%s' (pprof, folded, top, text, threads or trace)", esc(arg));
			return EINVAL;
		}
		env.format_set = true;
		break;
	case OPT_TRACE_BYTES:
		if (parse_long("trace bytes", arg, CHROME_BYTES_MIN, LONG_MAX,
			       &l))
			return EINVAL;
		env.out.trace_bytes = l;
		break;
	case OPT_NO_SYMBOLIZE:
		env.symbolize = false;
		break;
	case 'n':
		if (parse_long("number of nodes", arg, 0, 1000000, &l))
			return EINVAL;
		env.out.nodes = l;
		break;
	case 'd':
		if (parse_long("duration", arg, 1, CPROF_SECONDS_MAX,
			       &env.duration))
			return EINVAL;
		break;
	case 'F':
		if (parse_long("frequency", arg, 1, CPROF_FREQ_MAX, &env.freq))
			return EINVAL;
		break;
	case 'p':
		if (parse_long("pid", arg, 0, MODPROFILE_PID_MAX, &env.pid))
			return EINVAL;
		break;
	case OPT_KIND:
		if (strcmp(arg, "cpu") && strcmp(arg, "offcpu") &&
		    strcmp(arg, "wall") && strcmp(arg, "threads") &&
		    strcmp(arg, "threadcreate") && strcmp(arg, "mutex") &&
		    strcmp(arg, "trace") && strcmp(arg, "heap")) {
			fail("bad --kind '%s': cpu, offcpu, wall, threads, threadcreate, mutex, trace or heap",
			     esc(arg));
			return EINVAL;
		}
		env.kind = arg;
		break;
	case OPT_RATE:
		if (parse_long("rate", arg, 1, HEAP_RATE_MAX, &env.rate))
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
	case OPT_NO_PYTHON:
		env.no_python = true;
		break;
	case OPT_LOAD_TABLES:
		env.load_tables = true;
		break;
	case OPT_HTTP:
		env.http.addr = arg;
		break;
	case OPT_HTTP_TOKEN:
		env.http.auth.token_file = arg;
		env.http_opts = true;
		break;
	case OPT_HTTP_CERT:
		env.http.auth.tls_cert = arg;
		env.http_opts = true;
		break;
	case OPT_HTTP_KEY:
		env.http.auth.tls_key = arg;
		env.http_opts = true;
		break;
	case OPT_HTTP_CA:
		env.http.auth.client_ca = arg;
		env.http_opts = true;
		break;
	case OPT_HTTP_GROUP:
		env.http.group = arg;
		env.http_opts = true;
		break;
	case OPT_HTTP_INSECURE:
		env.http.auth.insecure = true;
		env.http_opts = true;
		break;
	case OPT_HTTP_MAX_SECONDS:
		if (parse_long("--http-max-seconds", arg, 1, CPROF_SECONDS_MAX,
			       &env.http.max_seconds))
			return EINVAL;
		env.http_opts = true;
		break;
	case OPT_HTTP_MAX_FREQ:
		if (parse_long("--http-max-freq", arg, 1, CPROF_FREQ_MAX,
			       &env.http.max_freq))
			return EINVAL;
		env.http_opts = true;
		break;
	case OPT_EVERY:
		if (parse_long("window length", arg, 1, CPROF_SECONDS_MAX,
			       &env.every))
			return EINVAL;
		break;
	case OPT_KEEP:
		if (parse_long("number of files to keep", arg, 1, 100000000,
			       &env.keep))
			return EINVAL;
		break;
	case OPT_CGROUP:
		env.out.cgroup = true;
		break;
	case OPT_DEBUGINFOD:
		if (setenv("DEBUGINFOD_URLS", arg, 1)) {
			fail("--debuginfod: %s", strerror(errno));
			return EINVAL;
		}
		break;
	case OPT_DEBUGINFOD_SECONDS:
		if (parse_long("number of seconds", arg, 0,
			       DEBUGFETCH_SECONDS_MAX, &l))
			return EINVAL;
		debugfetch_set_budget(l);
		break;
	case OPT_TABLE_CACHE:
		env.table_cache = arg;
		break;
	case OPT_SYMBOL_CACHE:
		env.symbol_cache = arg;
		break;
	case ARGP_KEY_ARG:
		fail("unexpected argument: '%s' (see --help)", esc(arg));
		return EINVAL;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

/*
 * Signals.  While -d or --every reads the profile, the first SIGINT (or
 * SIGTERM) only asks the module to stop ("stop=1" in ctl: the signal itself
 * reaches the module only if it lands while read() sleeps); the module ends
 * the stream with an END record and the output is written as usual.
 * Otherwise, or on a second signal, the temporary output is removed and the
 * process exits.
 */
static volatile sig_atomic_t interrupted;
static bool soft_interrupt;
static struct pipeline *volatile pl;	/* NULL-ed before it is freed */
static char tmp_path[4096];

static void sig_handler(int sig)
{
	if (sig != SIGHUP && soft_interrupt && !interrupted) {
		struct pipeline *p = pl;

		interrupted = 1;
		if (p)
			pipeline__stop(p);
		return;
	}
	if (tmp_path[0])
		unlink(tmp_path);
	_exit(128 + sig);
}

static void setup_signals(const struct atomicfile *out)
{
	/* no SA_RESTART: a blocked read returns and the loop goes on */
	struct sigaction sa = { .sa_handler = sig_handler };
	const char *tmp = out ? atomicfile__tmp_path(out) : NULL;

	if (tmp)
		snprintf(tmp_path, sizeof(tmp_path), "%s", tmp);
	soft_interrupt = env.duration > 0 || env.every > 0;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
}

/*
 * Queue the unwind tables of what runs now for the module (loaded while
 * the profile runs), configure it and open its profile.  0, or -1 after
 * one line saying why.
 */
static int start_profile(void)
{
	struct modprofile_settings set = {
		.seconds = env.duration,
		.freq = env.freq,
		.pid = env.pid,
		.kind = env.kind,
	};
	static char heap[512];
	char msg[1024];
	int err;

	if (env.kind && !strcmp(env.kind, "heap")) {
		if (heapfind__settings(env.pid, env.rate, heap, sizeof(heap),
				       msg, sizeof(msg)))
			return fail("%s", msg);
		set.extra = heap;
	}
	pipeline__load_tables(pl, env.pid);
	if (pipeline__start(pl, &set, &interrupted, &err, msg, sizeof(msg)))
		return fail("%s", msg);
	return 0;
}

/*
 * Task creations, futex wake-ups, a timeline's switches, wake-ups and
 * stacks: those not recorded, so that the counts are short.
 */
static void warn_not_recorded(const struct profile *prof, const char *name)
{
	const struct cprof_end *end = profile__end(prof);
	uint64_t other, lost = profile__lost_total(prof, &other);

	if (profile__header(prof)->kind != CPROF_KIND_THREADCREATE &&
	    profile__header(prof)->kind != CPROF_KIND_MUTEX &&
	    profile__header(prof)->kind != CPROF_KIND_TRACE &&
	    profile__header(prof)->kind != CPROF_KIND_HEAP)
		return;
	if (end && end->lost > lost)
		lost = end->lost;
	if (profile__header(prof)->kind == CPROF_KIND_HEAP) {
		if (lost || other)
			warning("%s: %llu sampled allocations not recorded (buffers full, over the budget, or the module's table of live allocations full: ctl's heap_kb=) and %llu frees not recorded (they count as in use)",
				esc(name), (unsigned long long)lost,
				(unsigned long long)other);
		return;
	}
	if ((lost || other) && profile__header(prof)->kind == CPROF_KIND_TRACE)
		warning("%s: %llu context switches and wake-ups not recorded (buffers full), %llu stacks of tasks leaving the CPU not recorded (buffers full, or over the budget): said in the trace's otherData",
			esc(name), (unsigned long long)other,
			(unsigned long long)lost);
	else if (lost && profile__header(prof)->kind == CPROF_KIND_MUTEX)
		warning("%s: %llu futex wake-ups not recorded (buffers full, over the budget, or no room to note the sleep): counted as [lost samples], without their stacks or delay",
			esc(name), (unsigned long long)lost);
	else if (lost)
		warning("%s: %llu task creations not recorded (buffers full, or over the budget): counted as [lost samples], without their stacks",
			esc(name), (unsigned long long)lost);
}

/*
 * Off the CPU: records lost (a full buffer), so that some waits count
 * until the end of the profile, or some returns have no leaving; switches
 * the module recorded one in several of (over its budget), whose counts
 * and times are estimates.
 */
static void warn_off_cpu(const struct profile *prof, const char *name)
{
	uint64_t open, orphans, other, waits, weighted;
	uint32_t every;

	if (profile__header(prof)->kind == CPROF_KIND_CPU ||
	    profile__header(prof)->kind == CPROF_KIND_THREADS ||
	    profile__header(prof)->kind == CPROF_KIND_THREADCREATE ||
	    profile__header(prof)->kind == CPROF_KIND_MUTEX ||
	    profile__header(prof)->kind == CPROF_KIND_TRACE ||
	    profile__header(prof)->kind == CPROF_KIND_HEAP)
		return;
	profile__lost_total(prof, &other);
	profile__off_unmatched(prof, &open, &orphans);
	if (other || orphans)
		warning("%s: %llu records of tasks leaving or coming back to the CPU lost (buffers full); %llu returns without their leaving; %llu waits without their return counted until the end (some may have ended)",
			esc(name), (unsigned long long)other,
			(unsigned long long)orphans, (unsigned long long)open);
	if (profile__off_dropped(prof))
		warning("%s: %llu records of tasks leaving or coming back to the CPU not kept for their other half, past %u MiB of them waiting: their time is not counted",
			esc(name),
			(unsigned long long)profile__off_dropped(prof),
			PROFILE_OFF_KEEP_MAX >> 20);
	every = profile__off_sampled(prof, &waits, &weighted);
	if (weighted)
		warning("%s: recording switches passed the module's budget (ctl's budget=): it recorded 1 in up to %u; %llu of %llu waits off the CPU stand for several each, their counts and times are estimates",
			esc(name), every, (unsigned long long)weighted,
			(unsigned long long)waits);
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
		return fail("failed to open %s: %s", esc(env.input), strerror(errno));
	*name = env.input;
	return fd;
}

/* "profiling: 3/10 s, 1234 samples" on a terminal, at most once a second. */
struct progress {
	double start, last;
	const struct profile *p;
};

static void progress(double start, double *last, uint64_t samples, bool done)
{
	double t = monotonic_seconds();

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

/* -d: a progress line on a terminal, as records arrive. */
static int show_progress(void *arg, const struct cprof_rec *rec)
{
	struct progress *pr = arg;

	(void)rec;
	/*
	 * Only as records arrive: a timer signal would end the profile,
	 * the module takes any signal as a stop.
	 */
	progress(pr->start, &pr->last, profile__nr_records(pr->p), false);
	return 0;
}

/*
 * Read the whole stream on fd (< 0: the profile started) into a profile.
 * NULL after printing why.
 */
static struct profile *read_stream(int fd, const char *name)
{
	struct progress pr = { .start = monotonic_seconds() };
	struct ingest_ops ops = { .after = show_progress, .arg = &pr };
	bool show = env.duration && isatty(STDERR_FILENO);
	struct ingest *in = pipeline__open(pl, fd, name);
	struct profile *p = NULL;

	if (!in)
		return NULL;
	pr.p = ingest__profile(in);
	pipeline__read(pl, show ? &ops : NULL, &p);
	if (show)
		progress(pr.start, &pr.last, 0, true);
	pipeline__close(pl);
	return p;
}

/* --load-unwind-tables: exit status 0 when every file was handled. */
static int load_tables_only(void)
{
	struct tableload *l = NULL;
	struct tableload_stats st;

	tableload__prime(&l, env.proc_dir, env.pid > 0 ? env.pid : 0,
			 &interrupted, -1);
	if (!l)
		return 1;
	tableload__report_stops(l, true);
	tableload__stop(l, &st);
	fprintf(stderr, PROG_NAME ": loaded %llu unwind tables (%llu rows; %llu from the cache, %llu of them before any program asked; %llu of CPython interpreters); %llu files without call frame information, %llu refused, %llu mappings on FUSE not read\n",
		(unsigned long long)st.loaded, (unsigned long long)st.rows,
		(unsigned long long)(st.cached + st.preloaded),
		(unsigned long long)st.preloaded,
		(unsigned long long)st.python,
		(unsigned long long)st.no_cfi, (unsigned long long)st.refused,
		(unsigned long long)st.on_fuse);
	return st.refused ? 1 : 0;
}

/* The combinations of options that make no sense.  0 ok, else 2. */
static int check_options(void)
{
	bool profiling = env.duration || env.every;

	if (env.http.addr && (env.duration || env.every || env.input ||
			      env.output || env.freq || env.pid >= 0 ||
			      env.load_tables)) {
		fail("--http serves profiles: it takes the --http-* options, --proc-dir, --no-unwind-tables and --no-python-frames alone (the URL sets the rest)");
		return 2;
	}
	if (env.http_opts && !env.http.addr) {
		fail("the --http-* options go with --http ADDR");
		return 2;
	}
	if (env.load_tables && (env.duration || env.input || env.freq ||
				env.every)) {
		fail("--load-unwind-tables only loads tables: it takes -p alone");
		return 2;
	}
	if (profiling && env.input) {
		fail("%s runs a profile: it does not read -i %s",
		     env.every ? "--every" : "-d", esc(env.input));
		return 2;
	}
	if (!profiling && !env.http.addr && !env.load_tables &&
	    (env.freq || env.pid >= 0)) {
		fail("-F and -p set up a profile: use them with -d SECONDS or --every");
		return 2;
	}
	if (env.kind && (!env.duration || env.every)) {
		fail("--kind runs a profile of that kind: use it with -d SECONDS (--every profiles CPU time; --http serves /debug/pprof/block, /debug/pprof/wall, /debug/pprof/goroutine, /debug/pprof/threadcreate, /debug/pprof/mutex, /debug/pprof/trace, /debug/pprof/heap and /debug/pprof/allocs)");
		return 2;
	}
	/* a timeline is written as one, gzipped into a .gz file */
	if (env.kind && !strcmp(env.kind, "trace") && !env.format_set)
		env.out.format = FORMAT_TRACE;
	if (env.kind && !strcmp(env.kind, "trace") &&
	    env.out.format != FORMAT_TRACE) {
		fail("--kind trace is a timeline: it is written with -f trace only");
		return 2;
	}
	if (env.out.format == FORMAT_TRACE && env.every) {
		fail("-f trace writes --kind trace's timeline: --every profiles CPU time");
		return 2;
	}
	if (env.out.format == FORMAT_TRACE && env.output &&
	    strlen(env.output) > 3 &&
	    !strcmp(env.output + strlen(env.output) - 3, ".gz"))
		env.out.gzip = true;
	if (env.kind && !strcmp(env.kind, "heap") && env.pid <= 0) {
		fail("--kind heap profiles one process: give -p PID");
		return 2;
	}
	if (env.keep && !env.every) {
		fail("--keep rotates the files of --every: use them together");
		return 2;
	}
	if (env.every && env.output && !strcmp(env.output, "-")) {
		fail("--every writes files into a directory: -o DIR");
		return 2;
	}
	if (!env.every && env.out.format == FORMAT_PPROF &&
	    (!env.output || !strcmp(env.output, "-")) &&
	    isatty(STDOUT_FILENO) && !env.http.addr && !env.load_tables) {
		fail("not writing a binary pprof profile to a terminal: use -o FILE");
		return 2;
	}
	return 0;
}

/* The pipeline, out of the signal handler's reach: to free. */
static struct pipeline *unset_pipeline(void)
{
	struct pipeline *p = pl;

	pl = NULL;
	return p;
}

/* --every: continuous windows.  The exit status. */
static int run_windows(void)
{
	struct windows_opts wo = {
		.dir = env.output ? env.output : ".",
		.every = env.every,
		.keep = env.keep,
		.out = env.out,
		.pl = pl,
		.tmp_path = tmp_path,
		.tmp_path_size = sizeof(tmp_path),
	};
	struct stat st;

	/* a run of weeks does not find out at its first window */
	if (stat(wo.dir, &st)) {
		fail("--every writes into -o %s: %s", esc(wo.dir), strerror(errno));
		return 1;
	}
	if (!S_ISDIR(st.st_mode)) {
		fail("--every writes into -o %s: not a directory", esc(wo.dir));
		return 1;
	}
	if (access(wo.dir, W_OK | X_OK)) {
		fail("--every writes into -o %s: %s", esc(wo.dir), strerror(errno));
		return 1;
	}
	/* users must not replace or read what root writes there */
	if (atomicfile__check_dir(wo.dir))
		return 1;
	setup_signals(NULL);
	if (start_profile())
		return 1;
	return windows__run(-1, NULL, &wo) ? 1 : 0;
}

int main(int argc, char **argv)
{
	static const struct argp argp = {
		.options = opts,
		.parser = parse_arg,
		.doc = argp_program_doc,
	};
	struct pipeline_opts popts;
	struct resolve_opts ropts;
	const struct cprof_end *end;
	struct atomicfile *out = NULL;
	struct profile *prof = NULL;
	struct resolved *res = NULL;
	const char *in_name = NULL;
	int fd = -1, err = 1;

	/* an unknown option is a usage error too: exit 2, not EX_USAGE */
	argp_err_exit_status = 2;
	if (argp_parse(&argp, argc, argv, 0, NULL, NULL))
		return 2;
	/* a snapshot takes no time of its own: -d is not needed */
	if (env.kind && !strcmp(env.kind, "threads") && !env.duration &&
	    !env.every && !env.input && !env.http.addr)
		env.duration = 1;
	err = check_options();
	if (err)
		return err;
	/*
	 * One profile converted, then exit: freed memory stays in the heap,
	 * one heap for all threads.  While kernel symbols load in a thread,
	 * each unmap flushes the other CPU's TLB and waits for it: under
	 * emulation on a busy host, a quarter of a conversion.
	 */
	if (!env.every && !env.http.addr) {
		mallopt(M_MMAP_THRESHOLD, 32 << 20);
		mallopt(M_TRIM_THRESHOLD, INT_MAX);
		mallopt(M_ARENA_MAX, 1);
	}
	debugfetch_setup();
	tableload_set_cache(env.table_cache);
	/* before kallsyms is loaded, in a thread or a child */
	if (env.symbolize)
		kcache_setup(env.symbol_cache);
	tableload_set_python(!env.no_python);
	pyframes_set_read(!env.no_python);
	err = 1;
	if (env.load_tables)
		return load_tables_only();
	/* before any child: windows and requests use it, and fill it */
	if (env.symbolize && (env.every || env.http.addr))
		symcache_setup(env.symbol_cache);
	popts = (struct pipeline_opts){
		.proc_dir = env.proc_dir,
		.unwind_tables = env.unwind_tables,
	};
	if (env.http.addr) {
		env.http.pipe = popts;
		return httpd__run(&env.http);
	}
	popts.symbolize = env.symbolize;
	popts.kallsyms = env.kallsyms;
	popts.modules = env.modules;
	popts.jit = true;
	/* windows ask debuginfod's cache only (answer.h): a queue fills it */
	popts.debug_queue = env.every && env.symbolize;
	popts.warn_walks = !env.every;
	popts.compile_running = env.every;
	pl = pipeline__new(&popts);
	if (!pl || pipeline__begin(pl)) {
		fail("out of memory");
		pipeline__free(unset_pipeline());
		return 1;
	}
	if (env.every) {
		err = run_windows();
		goto cleanup;
	}

	out = atomicfile__open(env.output);
	if (!out)
		goto cleanup;
	setup_signals(out);
	if (env.duration) {
		if (start_profile())
			goto cleanup;
	} else {
		fd = open_input(&in_name);
		if (fd < 0)
			goto cleanup;
	}
	/*
	 * Kernel symbols load while the stream is read, but not during a
	 * profile run here (-d): that would be in the profile.
	 */
	if (env.symbolize && !env.duration && pipeline__load_ksyms(pl)) {
		fail("failed to load kernel symbols: %s", strerror(ENOMEM));
		goto cleanup;
	}
	prof = read_stream(fd, in_name);
	if (!prof)
		goto cleanup;
	in_name = pipeline__name(pl);
	end = profile__end(prof);
	if (end->samples != profile__nr_records(prof))
		warning("%s: the END record counts %llu samples, the stream has %llu",
			esc(in_name), (unsigned long long)end->samples,
			(unsigned long long)profile__nr_records(prof));
	warn_off_cpu(prof, in_name);
	warn_not_recorded(prof, in_name);

	/* -i, -d: once there is a profile to name (a refused one says why only) */
	if (env.symbolize)
		symcache_setup(env.symbol_cache);
	pipeline__resolve_opts(pl, &ropts);
	res = resolved__new(prof, &ropts);
	if (!res)
		goto cleanup;
	err = output__write(res, &env.out, atomicfile__stream(out),
			    atomicfile__name(out));
	if (!err) {
		err = atomicfile__commit(out);
		out = NULL;
	}
	err = err ? 1 : 0;
cleanup:
	atomicfile__abort(out);
	resolved__free(res);
	profile__free(prof);
	pipeline__free(unset_pipeline());
	if (fd > STDIN_FILENO)
		close(fd);
	return err;
}
