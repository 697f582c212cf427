// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * httpd - Go's /debug/pprof endpoints on libmicrohttpd.  See httpd.h.
 *
 * libmicrohttpd runs each connection in its own thread, so a profile
 * request simply runs the profile in its handler: it queues the tables of
 * programs started since the last request, starts the profile at once
 * (modprofile.c), reads the stream to its END record (waiting at most
 * TABLES_WAIT_S there for the tables it asked for), then symbolizes and
 * answers.  From the first of these
 * steps to the last a watcher thread polls the connection for the client's
 * hang-up and, if it comes, stops whichever step runs: the module's profile
 * ends at once, table loading and symbolization are left, nothing is sent.
 *
 * Who may ask is httpauth.c's business, where the socket is listen.c's.
 * The unwind-table loader lives as long as the server, so a file is
 * compiled once, not once per request.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <microhttpd.h>

#include "serve/answer.h"
#include "serve/connguard.h"
#include "cprof_format.h"
#include "serve/httpauth.h"
#include "serve/httpd.h"
#include "serve/listen.h"
#include "serve/mhd.h"
#include "stream/modprofile.h"
#include "output/chrome.h"
#include "output/output.h"
#include "run/heapfind.h"
#include "run/pipeline.h"
#include "stream/profile.h"
#include "symbolize/resolve.h"
#include "lib/util.h"

/* How long a request's END waits for its programs' unwind tables. */
#define TABLES_WAIT_S		2.0
/*
 * An idle connection (a request sent slowly, or not at all) is closed;
 * one not authenticated CONNGUARD_DEADLINE_S after it connected too
 * (connguard.h): the idle timeout alone lets a client that sends a byte
 * every 9 s hold its connection for ever.
 */
#define IDLE_TIMEOUT_S		10
/* room for authenticated requests beyond the pending connections */
#define CONNECTIONS_MAX		(2 * CONNGUARD_PENDING_MAX + 32)
/* GnuTLS's defaults, but TLS 1.2 and 1.3 only */
#define TLS_PRIORITIES		"NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2"
/* seconds= when a request gives none, as Go's handler (within max_seconds) */
#define SECONDS_DEFAULT		30
/* the most of a command line /debug/pprof/cmdline sends */
#define CMDLINE_MAX		(1 << 20)

_Static_assert(HTTPD_SECONDS_MAX <= CPROF_SECONDS_MAX &&
	       HTTPD_FREQ_MAX <= CPROF_FREQ_MAX,
	       "a default ceiling above the module's limit");

struct server {
	const struct httpd_opts *o;
	struct httpauth *auth;
	/* the table loader and debuginfod queue for the server's life */
	struct pipeline *pl;
	pthread_mutex_t lock;		/* busy, cur, stopping */
	struct connguard *guard;	/* connections not authenticated */
	bool busy;			/* a profile is being served */
	struct pipeline *cur;		/* its profile runs: a stop on SIGTERM */
	volatile bool stopping;
};

/* A profile request's parameters. */
struct query {
	const struct httpd_opts *o;
	const char *kind;		/* ctl's kind=: the URL's */
	long seconds, freq, pid;
	long rate;			/* kind heap: mean bytes a sample */
	bool allocs;			/* kind heap: /allocs, not /heap */
	long debug;			/* 0: pprof; 1: text; 2: every thread */
	bool nosymbol;
	char err[256];			/* the first bad parameter */
};

static const char index_page[] =
"<html>\n<head><title>/debug/pprof/</title></head>\n<body>\n"
"/debug/pprof/\n<br>\n"
"<p>Set debug=1 as a query parameter to export in legacy text format</p>\n"
"<br>\nTypes of profiles available:\n"
"<table>\n<thead><td>Count</td><td>Profile</td></thead>\n"
"<tr><td></td><td><a href='allocs'>allocs</a></td></tr>\n"
"<tr><td></td><td><a href='block'>block</a></td></tr>\n"
"<tr><td></td><td><a href='cmdline'>cmdline</a></td></tr>\n"
"<tr><td></td><td><a href='goroutine?debug=1'>goroutine</a></td></tr>\n"
"<tr><td></td><td><a href='heap'>heap</a></td></tr>\n"
"<tr><td></td><td><a href='mutex?debug=1'>mutex</a></td></tr>\n"
"<tr><td></td><td><a href='profile?debug=1'>profile</a></td></tr>\n"
"<tr><td></td><td><a href='threadcreate?debug=1'>threadcreate</a></td></tr>\n"
"<tr><td></td><td><a href='trace?seconds=1'>trace</a></td></tr>\n"
"<tr><td></td><td><a href='wall'>wall</a></td></tr>\n"
"</table>\n<br>\n"
"<p>\nProfile Descriptions:\n<ul>\n"
"<li><div class=profile-name>allocs: </div> A sampling of the memory "
"allocations of process pid=PID (required), as heap, shown by "
"alloc_space.</li>\n"
"<li><div class=profile-name>block: </div> Where the threads of the "
"whole machine (or pid=PID's) wait off the CPU, and how long: sleeping, "
"blocked on I/O, locks, pipes and sockets, preempted (contentions and "
"delay, a state label). Taken over seconds (default "
STRINGIFY(SECONDS_DEFAULT) "), as profile.</li>\n"
"<li><div class=profile-name>cmdline: </div> The command line of the "
"server (cprof-dump), or with pid=PID that process's, its arguments "
"separated by NUL bytes.</li>\n"
"<li><div class=profile-name>goroutine: </div> Stack traces of all "
"current threads of the machine (or pid=PID's), kernel and user, with "
"their state and how long they have been off the CPU (threads/count). "
"Taken at once: seconds does not apply. debug=1 groups them by stack, "
"debug=2 lists every thread.</li>\n"
"<li><div class=profile-name>heap: </div> A sampling of the memory "
"allocations of process pid=PID (required): uprobes on its glibc malloc, "
"calloc, realloc, posix_memalign and free, one allocation sampled per "
"rate=BYTES allocated on average (default 524288, Go's), with Go's four "
"types (alloc_objects, alloc_space, inuse_objects, inuse_space) scaled as "
"Go scales them. Allocations made before the profile started are unseen. "
"Taken over seconds, as profile.</li>\n"
"<li><div class=profile-name>mutex: </div> Stack traces of holders of "
"contended locks: of each thread of the whole machine (or pid=PID's) "
"whose futex call (a pthread mutex unlocked, a condition signalled) "
"woke a thread waiting in one, kernel and user, with that wait "
"(contentions and delay, waiter_pid, waiter_tid and waiter_comm labels). "
"Taken over seconds, as profile.</li>\n"
"<li><div class=profile-name>profile: </div> CPU profile of the whole "
"machine (every CPU, kernel and user stacks, cprof.ko). You can specify "
"the duration in the seconds GET parameter (default " STRINGIFY(SECONDS_DEFAULT)
", at most " STRINGIFY(HTTPD_SECONDS_MAX) "). "
"nosymbol=1 leaves symbolization to the client (addresses, mappings and "
"build IDs only); freq=HZ sets the samples per second per CPU and pid=PID "
"profiles one process. After you get the profile file, use the go tool "
"pprof command to investigate the profile.</li>\n"
"<li><div class=profile-name>threadcreate: </div> Stack traces that "
"created new threads and processes on the whole machine (or pid=PID's "
"threads), kernel and user, each creation counted (threadcreate/count). "
"Taken over seconds, as profile.</li>\n"
"<li><div class=profile-name>trace: </div> A timeline of the whole "
"machine (or of pid=PID's threads): every time a thread ran on a CPU, "
"who woke whom, and the kernel and user stack each thread left the CPU "
"with, as the Chrome trace event format (gzipped JSON) that Perfetto's "
"UI (ui.perfetto.dev) and speedscope open; at most " STRINGIFY(CHROME_BYTES_DEFAULT_MB)
" MiB of JSON, what did not fit counted in its otherData. Not Go's "
"runtime execution trace, which only a Go program makes of itself. "
"Taken over seconds, as profile.</li>\n"
"<li><div class=profile-name>wall: </div> Where the time of the threads "
"goes, on the CPU and off it, in one unit (wall/nanoseconds): with "
"pid=PID, a process's wall-clock profile. Taken over seconds, as "
"profile.</li>\n"
"</ul>\n</p>\n</body>\n</html>\n";

/*
 * Queue a response of len bytes of body (taken over: freed by MHD) of
 * type, encoded as encoding (NULL: as is), a download named file (NULL:
 * none).
 */
static enum MHD_Result respond_as(struct MHD_Connection *c,
				  unsigned int status, const char *type,
				  const char *encoding, const char *file,
				  char *body, size_t len)
{
	struct MHD_Response *r;
	enum MHD_Result ret;
	char disp[64];

	r = sym_MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
	if (!r) {
		free(body);
		return MHD_NO;
	}
	sym_MHD_add_response_header(r, "Content-Type", type);
	sym_MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
	if (encoding)
		sym_MHD_add_response_header(r,
					    MHD_HTTP_HEADER_CONTENT_ENCODING,
					    encoding);
	if (file) {
		snprintf(disp, sizeof(disp), "attachment; filename=\"%s\"",
			 file);
		sym_MHD_add_response_header(r, "Content-Disposition", disp);
	}
	/*
	 * One request per connection: a connection left open would wait
	 * idle for the client's next request, and be closed by the idle
	 * timeout just as a client (pprof posting to /symbol after a long
	 * profile) reuses it.
	 */
	sym_MHD_add_response_header(r, MHD_HTTP_HEADER_CONNECTION, "close");
	if (status == MHD_HTTP_UNAUTHORIZED)
		sym_MHD_add_response_header(r, MHD_HTTP_HEADER_WWW_AUTHENTICATE,
					    "Bearer realm=\"cprof\"");
	if (status != MHD_HTTP_OK)
		/* google/pprof shows the body of such an error */
		sym_MHD_add_response_header(r, "X-Go-Pprof", "1");
	ret = sym_MHD_queue_response(c, status, r);
	sym_MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result respond(struct MHD_Connection *c, unsigned int status,
			       const char *type, char *body, size_t len,
			       bool attachment)
{
	return respond_as(c, status, type, NULL,
			  attachment ? "profile" : NULL, body, len);
}

/*
 * A profile's answer: a timeline (kind trace) is gzipped JSON, sent as
 * JSON whose encoding is gzip (a browser or curl --compressed unpacks
 * it; saved as is, it is a .json.gz that Perfetto's UI opens); the
 * others pprof, or text with debug=.
 */
static enum MHD_Result respond_profile(struct MHD_Connection *c,
				       const struct query *q, char *body,
				       size_t len)
{
	if (!strcmp(q->kind, "trace"))
		return respond_as(c, MHD_HTTP_OK, "application/json", "gzip",
				  "trace.json", body, len);
	return respond(c, MHD_HTTP_OK,
		       q->debug ? "text/plain; charset=utf-8" :
				  "application/octet-stream",
		       body, len, !q->debug);
}

/* An error: one line, as Go's http.Error. */
static enum MHD_Result respond_error(struct MHD_Connection *c,
				     unsigned int status, const char *line)
{
	char *body;

	if (asprintf(&body, "%s\n", line) < 0)
		return MHD_NO;
	return respond(c, status, "text/plain; charset=utf-8", body,
		       strlen(body), false);
}

/*
 * The value raw (raw_size bytes as the client sent it, whole: one with a
 * NUL byte in it, %00, is not a number) as a number in min..max, into
 * *out; else false, and err says why, with what a log line may show of it.
 */
static bool parse_param(const char *key, const char *raw, size_t raw_size,
			long min, long max, long *out, char *err, size_t size)
{
	const char *shown = esc_n(raw, 64);

	if (raw && strlen(raw) != raw_size) {
		snprintf(err, size, "bad parameter %s=%s: a NUL byte in it",
			 key, shown);
		return false;
	}
	if (!raw || !*raw) {
		snprintf(err, size, "bad parameter %s: no value", key);
		return false;
	}
	switch (parse_long_quiet(raw, min, max, out)) {
	case PARSE_NOT_NUMBER:
		snprintf(err, size, "bad parameter %s=%s: not a number", key,
			 shown);
		return false;
	case PARSE_RANGE:
		snprintf(err, size, "bad parameter %s=%s: out of range (%ld to %ld)",
			 key, shown, min, max);
		return false;
	default:
		return true;
	}
}

/*
 * Go's handler ignores parameters it does not know: so does this one.  A
 * parameter is matched and parsed as sent, whole (a key with a NUL byte in
 * it is none of ours); only what a message shows of it is cut and cleaned.
 */
static enum MHD_Result query_arg(void *cls, enum MHD_ValueKind kind,
				 const char *key, size_t key_size,
				 const char *val, size_t val_size)
{
	struct query *q = cls;
	long flag;

	(void)kind;
	if (q->err[0])
		return MHD_NO;
	if (strlen(key) != key_size)
		return MHD_YES;
	if (!strcmp(key, "seconds"))
		parse_param(key, val, val_size, 1, q->o->max_seconds,
			    &q->seconds, q->err, sizeof(q->err));
	else if (!strcmp(key, "freq"))
		parse_param(key, val, val_size, 1, q->o->max_freq, &q->freq,
			    q->err, sizeof(q->err));
	else if (!strcmp(key, "pid"))
		parse_param(key, val, val_size, 0, MODPROFILE_PID_MAX, &q->pid,
			    q->err, sizeof(q->err));
	else if (!strcmp(key, "rate"))
		parse_param(key, val, val_size, 1, HEAP_RATE_MAX, &q->rate,
			    q->err, sizeof(q->err));
	else if (!strcmp(key, "nosymbol")) {
		if (parse_param(key, val, val_size, 0, 1, &flag, q->err,
				sizeof(q->err)))
			q->nosymbol = flag;
	} else if (!strcmp(key, "debug")) {
		parse_param(key, val, val_size, 0, 2, &q->debug, q->err,
			    sizeof(q->err));
	}
	return q->err[0] ? MHD_NO : MHD_YES;
}

/*
 * Watches a connection for the client's hang-up while a request is worked
 * on: stop is set (and the profile, if one runs, stopped) when it comes.
 * A client that only shut down its sending side (a half-close) waits for
 * its answer: on a Unix socket only a hang-up is one; on plain TCP the end
 * of the client's data looks the same either way, so an HTTP/1.1 client
 * is sent an interim "100 Continue", which a client that is gone answers
 * with a reset.  Over TLS, and from an HTTP/1.0 client, whom no interim
 * answer may be sent, the end of its data is taken as a hang-up.
 */
struct watch {
	int conn_fd;
	bool unix_sock;			/* a hang-up is POLLHUP */
	bool probe;			/* TCP: may send "100 Continue" */
	int wake[2];			/* written when the work ends */
	pthread_mutex_t lock;		/* pl */
	const struct pipeline *pl;	/* its profile runs, or NULL */
	const char *phase;		/* what the request does now */
	const char *gone_in;		/* ... when the client went away */
	volatile sig_atomic_t stop;
	pthread_t thread;
	bool running;
};

static void *watch_main(void *arg)
{
	struct watch *w = arg;
	static const char interim[] = "HTTP/1.1 100 Continue\r\n\r\n";
	struct pollfd p[2] = {
		{ .fd = w->conn_fd, .events = w->unix_sock ? 0 : POLLRDHUP },
		{ .fd = w->wake[0], .events = POLLIN },
	};

	for (;;) {
		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (p[1].revents)
			break;
		if (p[0].revents == POLLRDHUP && w->probe) {
			/* from now on, only a reset or a hang-up ends it */
			p[0].events = 0;
			if (send(w->conn_fd, interim, sizeof(interim) - 1,
				 MSG_NOSIGNAL) == sizeof(interim) - 1)
				continue;
		}
		if (p[0].revents) {
			pthread_mutex_lock(&w->lock);
			w->gone_in = w->phase;
			w->stop = 1;
			if (w->pl)
				pipeline__stop(w->pl);
			pthread_mutex_unlock(&w->lock);
			break;
		}
	}
	return NULL;
}

static void watch_start(struct watch *w, struct MHD_Connection *c,
			const char *version)
{
	const union MHD_ConnectionInfo *ci, *tls;
	int domain = AF_UNSPEC;
	socklen_t len = sizeof(domain);

	w->wake[0] = w->wake[1] = -1;
	w->phase = w->gone_in = "loading unwind tables";
	w->stop = 0;
	w->pl = NULL;
	w->running = false;
	pthread_mutex_init(&w->lock, NULL);
	ci = sym_MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
	if (!ci || pipe2(w->wake, O_CLOEXEC))
		return;
	w->conn_fd = ci->connect_fd;
	getsockopt(w->conn_fd, SOL_SOCKET, SO_DOMAIN, &domain, &len);
	tls = sym_MHD_get_connection_info(c, MHD_CONNECTION_INFO_GNUTLS_SESSION);
	w->unix_sock = domain == AF_UNIX;
	w->probe = !w->unix_sock && !(tls && tls->tls_session) &&
		   !strcmp(version, MHD_HTTP_VERSION_1_1);
	w->running = !pthread_create(&w->thread, NULL, watch_main, w);
}

static void watch_set_profile(struct watch *w, const struct pipeline *pl)
{
	pthread_mutex_lock(&w->lock);
	w->pl = pl;
	w->phase = pl ? "profiling" : "symbolizing";
	if (pl && w->stop)
		pipeline__stop(pl);
	pthread_mutex_unlock(&w->lock);
}

static void watch_end(struct watch *w)
{
	if (w->running) {
		ssize_t unreported = write(w->wake[1], "", 1);

		(void)unreported;
		pthread_join(w->thread, NULL);
	}
	if (w->wake[0] >= 0) {
		close(w->wake[0]);
		close(w->wake[1]);
	}
	pthread_mutex_destroy(&w->lock);
}

/*
 * Run the profile of q through the server's pipeline, begun: the tables of
 * what runs now queued (the loader keeps what it did before), loaded while
 * the profile runs.  *prof gets what was read.  0 ok, else a status.
 */
static unsigned int run_profile(struct server *srv, const struct query *q,
				struct watch *w, struct profile **prof,
				char *msg, size_t size)
{
	struct modprofile_settings set = {
		.seconds = q->seconds, .freq = q->freq, .pid = q->pid,
		.kind = q->kind,
	};
	unsigned int status = MHD_HTTP_INTERNAL_SERVER_ERROR;
	char heap[512];
	int err;

	if (!strcmp(q->kind, "heap")) {
		if (heapfind__settings(q->pid, q->rate, heap, sizeof(heap), msg,
				       size))
			return MHD_HTTP_BAD_REQUEST;
		set.extra = heap;
	}
	pipeline__load_tables(srv->pl, q->pid);
	if (pipeline__start(srv->pl, &set, NULL, &err, msg, size)) {
		status = err == EBUSY ? MHD_HTTP_CONFLICT :
			 err == EACCES || err == EPERM ? MHD_HTTP_FORBIDDEN :
			 err == ENOENT ? MHD_HTTP_SERVICE_UNAVAILABLE :
			 MHD_HTTP_INTERNAL_SERVER_ERROR;
		goto out;
	}
	pthread_mutex_lock(&srv->lock);
	srv->cur = srv->pl;
	if (srv->stopping)
		pipeline__stop(srv->pl);
	pthread_mutex_unlock(&srv->lock);
	watch_set_profile(w, srv->pl);

	snprintf(msg, size, "failed to read the profile");
	if (pipeline__open(srv->pl, -1, NULL) &&
	    !pipeline__read(srv->pl, NULL, prof))
		status = 0;

	watch_set_profile(w, NULL);
	pthread_mutex_lock(&srv->lock);
	srv->cur = NULL;
	pthread_mutex_unlock(&srv->lock);
out:
	pipeline__close(srv->pl);
	return status;
}

/*
 * Build the answer, *body of *len bytes, in a child process (answer.h):
 * unsymbolized if symbolizing fails.  0; or -1 with why in msg (stopped:
 * the client went away).
 */
static int build_answer(struct server *srv, const struct profile *prof,
			const struct query *q, struct watch *w,
			char **body, size_t *len, char *msg, size_t size)
{
	struct output_opts oo = {
		.format = !strcmp(q->kind, "trace") ? FORMAT_TRACE :
			  q->debug == 2 ? FORMAT_THREADS :
			  q->debug ? FORMAT_TEXT : FORMAT_PPROF,
		.gzip = true,
		.allocs = q->allocs,
	};
	struct resolve_opts ropts;
	char why[160];

	pipeline__resolve_opts(srv->pl, &ropts);
	ropts.symbolize = !q->nosymbol;
	ropts.stop = &w->stop;
	if (!answer__build(prof, &ropts, &oo, &w->stop, "a profile", body, len,
			   why, sizeof(why)))
		return 0;
	snprintf(msg, size, "failed to build the profile: %s", why);
	return -1;
}

/*
 * /debug/pprof/cmdline, as Go's: a command line's arguments separated by
 * NUL bytes, none after the last; cprof-dump's own, or with pid=PID that
 * process's (/proc/PID/cmdline: what the process shows there, at most
 * CMDLINE_MAX bytes; a kernel thread's is empty).
 */
static enum MHD_Result serve_cmdline(struct server *srv,
				     struct MHD_Connection *c)
{
	struct query q = { .o = srv->o, .pid = -1 };
	char path[64], msg[128], *buf;
	size_t len = 0;
	ssize_t n;
	int fd;

	sym_MHD_get_connection_values_n(c, MHD_GET_ARGUMENT_KIND, query_arg, &q);
	if (q.err[0])
		return respond_error(c, MHD_HTTP_BAD_REQUEST, q.err);
	if (q.pid > 0)
		snprintf(path, sizeof(path), "/proc/%ld/cmdline", q.pid);
	else
		snprintf(path, sizeof(path), "/proc/self/cmdline");
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0) {
		snprintf(msg, sizeof(msg), "404 page not found: no process %ld",
			 q.pid);
		return respond_error(c, errno == ENOENT || errno == ESRCH ?
				     MHD_HTTP_NOT_FOUND :
				     MHD_HTTP_INTERNAL_SERVER_ERROR,
				     errno == ENOENT || errno == ESRCH ? msg :
				     "failed to read the command line");
	}
	buf = malloc(CMDLINE_MAX);
	if (!buf) {
		close(fd);
		return MHD_NO;
	}
	while (len < CMDLINE_MAX) {
		n = read(fd, buf + len, CMDLINE_MAX - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += n;
	}
	close(fd);
	if (len && !buf[len - 1])
		len--;
	return respond(c, MHD_HTTP_OK, "text/plain; charset=utf-8", buf, len,
		       false);
}

/*
 * A profile of kind (ctl's kind=: profile, block, wall, goroutine,
 * threadcreate, mutex, trace, heap) for c's request; allocs: /allocs.
 */
static enum MHD_Result serve_profile(struct server *srv,
				     struct MHD_Connection *c,
				     const char *who, const char *version,
				     bool head, const char *kind, bool allocs)
{
	/* Go's default, within the ceiling the server was given */
	struct query q = {
		.o = srv->o, .pid = -1, .kind = kind,
		.rate = HEAP_RATE_DEFAULT, .allocs = allocs,
		.seconds = srv->o->max_seconds < SECONDS_DEFAULT ?
			   srv->o->max_seconds : SECONDS_DEFAULT,
	};
	struct profile *prof = NULL;
	struct watch w;
	char msg[512], *body = NULL;
	unsigned int status;
	size_t len = 0;
	double t0 = monotonic_seconds(), t1;
	enum MHD_Result ret;

	sym_MHD_get_connection_values_n(c, MHD_GET_ARGUMENT_KIND, query_arg, &q);
	if (!q.err[0] && q.debug == 2 && strcmp(kind, "threads"))
		snprintf(q.err, sizeof(q.err),
			 "debug=2 is served for goroutine only");
	else if (!q.err[0] && q.debug && strcmp(kind, "cpu") &&
		 strcmp(kind, "threads") && strcmp(kind, "threadcreate") &&
		 strcmp(kind, "mutex"))
		snprintf(q.err, sizeof(q.err),
			 "debug=1 is served for profile, goroutine, threadcreate and mutex only: block, wall, heap and allocs are pprof, trace JSON");
	else if (!q.err[0] && !strcmp(kind, "heap") && q.pid <= 0)
		snprintf(q.err, sizeof(q.err),
			 "pid=PID is required: heap and allocs profile one process's allocations");
	if (q.err[0]) {
		fprintf(stderr, PROG_NAME ": %s: 400: %s\n", who, q.err);
		return respond_error(c, MHD_HTTP_BAD_REQUEST, q.err);
	}
	if (head) {
		/* what the answer would be, at no cost: no profile runs */
		body = strdup("");
		return body ? respond_profile(c, &q, body, 0) : MHD_NO;
	}
	pthread_mutex_lock(&srv->lock);
	status = srv->busy ? MHD_HTTP_CONFLICT : 0;
	srv->busy = true;
	pthread_mutex_unlock(&srv->lock);
	if (status) {
		snprintf(msg, sizeof(msg), "a profile is already being served: try again when it ends");
		fprintf(stderr, PROG_NAME ": %s: 409: %s\n", who, msg);
		return respond_error(c, status, msg);
	}

	watch_start(&w, c, version);
	/*
	 * per request: the paths of the cgroups that ran meanwhile only, the
	 * Python code that ran meanwhile only
	 */
	if (pipeline__begin(srv->pl)) {
		ret = respond_error(c, MHD_HTTP_INTERNAL_SERVER_ERROR,
				    "out of memory");
		goto out;
	}
	status = run_profile(srv, &q, &w, &prof, msg, sizeof(msg));
	t1 = monotonic_seconds();
	if (!w.stop && !status &&
	    build_answer(srv, prof, &q, &w, &body, &len, msg,
			 sizeof(msg)) && !w.stop)
		status = MHD_HTTP_INTERNAL_SERVER_ERROR;
	if (w.stop) {
		fprintf(stderr, PROG_NAME ": %s: the client went away after %.1f s, %s: request abandoned\n",
			who, monotonic_seconds() - t0, w.gone_in);
		free(body);
		ret = MHD_NO;
		goto out;
	}
	if (status) {
		fprintf(stderr, PROG_NAME ": %s: %u: %s\n", who, status, msg);
		ret = respond_error(c, status, msg);
		goto out;
	}
	fprintf(stderr, PROG_NAME ": %s: 200: %llu samples in %.1f s (the profile %.1f s, the answer %.1f s), %zu bytes\n",
		who, (unsigned long long)profile__nr_records(prof),
		monotonic_seconds() - t0, t1 - t0, monotonic_seconds() - t1,
		len);
	ret = respond_profile(c, &q, body, len);
out:
	watch_end(&w);
	profile__free(prof);
	pipeline__end(srv->pl);
	pthread_mutex_lock(&srv->lock);
	srv->busy = false;
	pthread_mutex_unlock(&srv->lock);
	return ret;
}

/*
 * pprof asks /debug/pprof/symbol for the names of addresses in mappings the
 * profile has none for.  Those are user addresses of files without
 * symbols, or of a nosymbol=1 profile: the names are with the client's
 * copies of the files, not here.  So the answer is none (Go's handler
 * says "num_symbols: 1" to a GET when it has some).
 */
static enum MHD_Result serve_symbol(struct MHD_Connection *c,
				    const char *method,
				    size_t *upload_data_size, void **req_cls)
{
	static int seen;
	char *body;

	if (strcmp(method, "POST")) {
		body = strdup("num_symbols: 0\n");
		return body ? respond(c, MHD_HTTP_OK, "text/plain; charset=utf-8",
				      body, strlen(body), false) : MHD_NO;
	}
	/* the addresses arrive over several calls; answer after the last */
	if (!*req_cls || *upload_data_size) {
		*req_cls = &seen;
		*upload_data_size = 0;
		return MHD_YES;
	}
	body = strdup("");
	return body ? respond(c, MHD_HTTP_OK, "text/plain; charset=utf-8",
			      body, 0, false) : MHD_NO;
}

/* "ADDR METHOD URL" for the log: the client as it connected. */
static void describe(struct MHD_Connection *c, const char *method,
		     const char *url, char *who, size_t size)
{
	const union MHD_ConnectionInfo *ci;
	char host[64] = "unix";

	ci = sym_MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	if (ci && ci->client_addr && ci->client_addr->sa_family != AF_UNIX &&
	    getnameinfo(ci->client_addr, sizeof(struct sockaddr_storage),
			host, sizeof(host), NULL, 0, NI_NUMERICHOST))
		snprintf(host, sizeof(host), "?");
	snprintf(who, size, "%s %s %s", host,
		 esc_n(method, 64), esc_n(url, 64));
}

/* MHD_OPTION_NOTIFY_CONNECTION: connections enter and leave the guard. */
static void on_connection(void *cls, struct MHD_Connection *c,
			  void **socket_context,
			  enum MHD_ConnectionNotificationCode toe)
{
	const union MHD_ConnectionInfo *fd, *addr;
	struct server *srv = cls;

	if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
		fd = sym_MHD_get_connection_info(c,
				MHD_CONNECTION_INFO_CONNECTION_FD);
		addr = sym_MHD_get_connection_info(c,
				MHD_CONNECTION_INFO_CLIENT_ADDRESS);
		/* without it, no deadline for it: the idle timeout holds */
		*socket_context = fd ? connguard__add(srv->guard,
						      fd->connect_fd,
						      addr ? addr->client_addr :
							     NULL) : NULL;
	} else {
		connguard__remove(srv->guard, *socket_context);
		*socket_context = NULL;
	}
}

/* MHD's accept policy: connguard's. */
static enum MHD_Result on_accept(void *cls, const struct sockaddr *addr,
				 socklen_t addrlen)
{
	(void)addrlen;
	return connguard__admit(cls, addr) ? MHD_YES : MHD_NO;
}

/* The request on c came and may be served: its connection is not pending. */
static void authenticated(struct server *srv, struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *ci =
		sym_MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);

	if (ci)
		connguard__authenticated(srv->guard, ci->socket_context);
}

/* The request context of a request whose path has a NUL byte (%00). */
static char nul_in_path;

/*
 * MHD_OPTION_URI_LOG_CALLBACK: the URI as the client sent it, before MHD
 * unescapes it into a C string that a %00 would cut short (so that
 * /debug/pprof/profile%00x would be the profile).
 */
static void *check_uri(void *cls, const char *uri, struct MHD_Connection *c)
{
	size_t i, n = strcspn(uri, "?");

	(void)cls;
	(void)c;
	for (i = 0; i < n; i++)
		if (uri[i] == '%' && uri[i + 1] == '0' && uri[i + 2] == '0')
			return &nul_in_path;
	return NULL;
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c,
			      const char *url, const char *method,
			      const char *version, const char *upload_data,
			      size_t *upload_data_size, void **req_cls)
{
	struct server *srv = cls;
	char who[256], why[256];
	unsigned int status;
	bool head = !strcmp(method, "HEAD");

	(void)upload_data;
	describe(c, method, url, who, sizeof(who));
	if (srv->stopping)
		return respond_error(c, MHD_HTTP_SERVICE_UNAVAILABLE,
				     "the server is stopping");
	status = httpauth__check(srv->auth, c, why, sizeof(why));
	if (status) {
		/* once per request, not per chunk of an upload */
		if (!*req_cls || *req_cls == &nul_in_path)
			connguard__refusal(srv->guard, "%s: %u: %s", who,
					   status, why);
		*upload_data_size = 0;
		return respond_error(c, status, why);
	}
	authenticated(srv, c);
	if (*req_cls == &nul_in_path)
		return respond_error(c, MHD_HTTP_NOT_FOUND,
				     "404 page not found: a NUL byte (%00) in the path");
	if (!strcmp(url, "/debug/pprof/symbol"))
		return serve_symbol(c, method, upload_data_size, req_cls);
	if (*upload_data_size)
		return respond_error(c, MHD_HTTP_BAD_REQUEST, "no body expected");
	if (strcmp(method, "GET") && !head)
		return respond_error(c, MHD_HTTP_METHOD_NOT_ALLOWED,
				     "only GET is served");
	if (!strcmp(url, "/debug/pprof/profile"))
		return serve_profile(srv, c, who, version, head, "cpu", false);
	if (!strcmp(url, "/debug/pprof/block"))
		return serve_profile(srv, c, who, version, head, "offcpu", false);
	if (!strcmp(url, "/debug/pprof/wall"))
		return serve_profile(srv, c, who, version, head, "wall", false);
	if (!strcmp(url, "/debug/pprof/goroutine"))
		return serve_profile(srv, c, who, version, head, "threads", false);
	if (!strcmp(url, "/debug/pprof/threadcreate"))
		return serve_profile(srv, c, who, version, head,
				     "threadcreate", false);
	if (!strcmp(url, "/debug/pprof/heap"))
		return serve_profile(srv, c, who, version, head, "heap", false);
	if (!strcmp(url, "/debug/pprof/allocs"))
		return serve_profile(srv, c, who, version, head, "heap", true);
	if (!strcmp(url, "/debug/pprof/mutex"))
		return serve_profile(srv, c, who, version, head, "mutex", false);
	if (!strcmp(url, "/debug/pprof/trace"))
		return serve_profile(srv, c, who, version, head, "trace", false);
	if (!strcmp(url, "/debug/pprof/cmdline"))
		return serve_cmdline(srv, c);
	if (!strcmp(url, "/debug/pprof/") || !strcmp(url, "/debug/pprof")) {
		char *body = strdup(index_page);

		if (!body)
			return MHD_NO;
		return respond(c, MHD_HTTP_OK, "text/html; charset=utf-8", body,
			       strlen(body), false);
	}
	return respond_error(c, MHD_HTTP_NOT_FOUND,
			     "404 page not found: cprof serves /debug/pprof/, /debug/pprof/profile, /debug/pprof/block, /debug/pprof/wall, /debug/pprof/goroutine, /debug/pprof/threadcreate, /debug/pprof/mutex, /debug/pprof/trace, /debug/pprof/heap, /debug/pprof/allocs and /debug/pprof/cmdline");
}

#define STOP_DRAIN_S	10

/* Wait until no profile is served and no connection is open, or a while. */
static void drain(struct server *srv, struct MHD_Daemon *d)
{
	double until = monotonic_seconds() + STOP_DRAIN_S;
	const union MHD_DaemonInfo *di;
	bool busy;

	do {
		pthread_mutex_lock(&srv->lock);
		busy = srv->busy;
		pthread_mutex_unlock(&srv->lock);
		di = sym_MHD_get_daemon_info(d,
					 MHD_DAEMON_INFO_CURRENT_CONNECTIONS);
		if (!busy && (!di || !di->num_connections))
			return;
		usleep(50 * 1000);
	} while (monotonic_seconds() < until);
}

static struct MHD_Daemon *start_daemon(struct server *srv, int fd)
{
	const char *cert = httpauth__tls_cert(srv->auth);
	const char *ca = httpauth__client_ca(srv->auth);
	unsigned int flags = MHD_USE_THREAD_PER_CONNECTION |
			     MHD_USE_INTERNAL_POLLING_THREAD |
			     MHD_USE_ITC | MHD_USE_ERROR_LOG;
	struct MHD_OptionItem tls[] = {
		{ MHD_OPTION_HTTPS_PRIORITIES, 0, (void *)TLS_PRIORITIES },
		{ MHD_OPTION_HTTPS_MEM_CERT, 0, (void *)cert },
		{ MHD_OPTION_HTTPS_MEM_KEY, 0,
		  (void *)httpauth__tls_key(srv->auth) },
		/* client certificates are asked for, and checked per request */
		{ ca ? MHD_OPTION_HTTPS_MEM_TRUST : MHD_OPTION_END, 0,
		  (void *)ca },
		{ MHD_OPTION_END, 0, NULL },
	};

	if (cert)
		flags |= MHD_USE_TLS;
	return sym_MHD_start_daemon(flags, 0, on_accept, srv->guard, handle, srv,
				    /* first: MHD says so of options before it */
				    MHD_OPTION_EXTERNAL_LOGGER, connguard__mhd_log,
				    srv->guard,
				    MHD_OPTION_LISTEN_SOCKET, fd,
				    MHD_OPTION_CONNECTION_LIMIT, CONNECTIONS_MAX,
				    MHD_OPTION_CONNECTION_TIMEOUT,
				    (unsigned int)IDLE_TIMEOUT_S,
				    MHD_OPTION_NOTIFY_CONNECTION, on_connection,
				    srv,
				    MHD_OPTION_URI_LOG_CALLBACK, check_uri, NULL,
				    MHD_OPTION_ARRAY, cert ? tls : tls + 4,
				    MHD_OPTION_END);
}

/* A group name or number: its gid, or (gid_t)-1 after printing why. */
static gid_t group_id(const char *name)
{
	struct group *g;
	long n;

	if (!name)
		return (gid_t)-1;
	g = getgrnam(name);
	if (g)
		return g->gr_gid;
	if (parse_long_quiet(name, 0, INT32_MAX, &n) == PARSE_OK)
		return (gid_t)n;
	fail("--http-group %s: no such group", esc(name));
	return (gid_t)-1;
}

int httpd__run(const struct httpd_opts *o)
{
	struct server srv = { .o = o };
	struct pipeline_opts po = o->pipe;
	struct listen_addr la;
	struct MHD_Daemon *d;
	sigset_t set;
	gid_t gid = (gid_t)-1;
	int fd, sig = 0;

	if (listen__parse(o->addr, &la))
		return 1;
	if (o->group && !la.unix_socket)
		return !!fail("--http-group is for a Unix socket: TCP clients authenticate");
	if (o->group && (gid = group_id(o->group)) == (gid_t)-1)
		return 1;
	srv.auth = httpauth__new(&o->auth, &la);
	if (!srv.auth)
		return 1;
	/* the libraries only now: the other modes never pay their start-up */
	if (mhd__load()) {
		httpauth__free(srv.auth);
		return 1;
	}
	srv.guard = connguard__new();
	fd = srv.guard ? listen__open(&la, gid) : -1;
	if (fd < 0) {
		if (!srv.guard)
			fail("%s", strerror(ENOMEM));
		connguard__free(srv.guard);
		httpauth__free(srv.auth);
		return 1;
	}
	pthread_mutex_init(&srv.lock, NULL);
	/* the signals come to sigwait() below, not to the server's threads */
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);
	/*
	 * The tables of what runs now load while no one asks yet; the loader
	 * is there before the first request can come, so it is the only one.
	 */
	po.serve = true;
	po.compile_running = true;
	po.table_wait = TABLES_WAIT_S;
	po.debug_queue = true;
	srv.pl = pipeline__new(&po);
	d = srv.pl ? start_daemon(&srv, fd) : NULL;
	if (!d) {
		pipeline__free(srv.pl);
		listen__close(&la, fd);
		httpauth__free(srv.auth);
		connguard__free(srv.guard);
		fail("failed to start the HTTP server on %s%s", la.shown,
		     srv.pl ? "" : ": out of memory");
		return 1;
	}
	if (o->auth.insecure)
		warning("--http-insecure-no-auth: every process that can reach %s reads every process's stacks and the kernel's addresses%s",
			la.shown, listen__loopback(&la) ? "" :
			", and it listens beyond this machine");
	if (la.unix_socket)
		fprintf(stderr, PROG_NAME ": serving /debug/pprof/ on %s (curl --unix-socket %s http://localhost/debug/pprof/profile)\n",
			la.shown, esc(la.path));
	else
		fprintf(stderr, PROG_NAME ": serving %s://%s/debug/pprof/\n",
			httpauth__tls_cert(srv.auth) ? "https" : "http",
			la.shown);
	/* 4 times a second, the connections past their deadline */
	for (;;) {
		struct timespec tick = { .tv_nsec = 250 * 1000 * 1000 };

		sig = sigtimedwait(&set, NULL, &tick);
		if (sig == SIGINT || sig == SIGTERM)
			break;
		connguard__tick(srv.guard);
	}
	/*
	 * New connections are refused from now on (the listening socket is
	 * closed), requests on open ones get 503, and the profile being
	 * served ends now: its client still gets what was collected.  Then
	 * the answers in flight leave, for at most STOP_DRAIN_S.
	 */
	pthread_mutex_lock(&srv.lock);
	srv.stopping = true;
	if (srv.cur)
		pipeline__stop(srv.cur);
	pthread_mutex_unlock(&srv.lock);
	fd = sym_MHD_quiesce_daemon(d);
	listen__close(&la, fd);
	drain(&srv, d);
	sym_MHD_stop_daemon(d);
	pipeline__free(srv.pl);
	httpauth__free(srv.auth);
	connguard__free(srv.guard);
	pthread_mutex_destroy(&srv.lock);
	fprintf(stderr, PROG_NAME ": stopped serving (signal %d)\n", sig);
	return 0;
}
