// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * httpd - Go's /debug/pprof endpoints on libmicrohttpd.  See httpd.h.
 *
 * libmicrohttpd runs each connection in its own thread, so a profile
 * request simply runs the profile in its handler: it starts the profile
 * (live.c), reads the stream to its END record, then symbolizes and
 * answers.  Meanwhile a watcher thread polls the connection for the
 * client's hang-up and, if it comes, asks the module to stop: the stream
 * ends at once and nothing is sent.  The listening socket is made here, so
 * that a busy port is reported as such.
 */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <microhttpd.h>

#include "cgroups.h"
#include "httpd.h"
#include "live.h"
#include "output.h"
#include "profile.h"
#include "resolve.h"
#include "stream.h"
#include "unwload.h"
#include "util.h"

struct server {
	const struct httpd_opts *o;
	pthread_mutex_t lock;		/* busy, cur */
	bool busy;			/* a profile is being served */
	struct live *cur;		/* its files, for a stop on SIGTERM */
	bool stopping;
};

/* A profile request's parameters. */
struct query {
	long seconds, freq, pid;
	bool nosymbol, debug;
	char err[256];			/* the first bad parameter */
};

static const char index_page[] =
"<html>\n<head><title>/debug/pprof/</title></head>\n<body>\n"
"/debug/pprof/\n<br>\n"
"<p>Set debug=1 as a query parameter to export in legacy text format</p>\n"
"<br>\nTypes of profiles available:\n"
"<table>\n<thead><td>Count</td><td>Profile</td></thead>\n"
"<tr><td></td><td><a href='profile?debug=1'>profile</a></td></tr>\n"
"</table>\n<br>\n"
"<p>\nProfile Descriptions:\n<ul>\n"
"<li><div class=profile-name>profile: </div> CPU profile of the whole "
"machine (every CPU, kernel and user stacks, cprof.ko). You can specify "
"the duration in the seconds GET parameter (default 30, at most 3600). "
"nosymbol=1 leaves symbolization to the client (addresses, mappings and "
"build IDs only); freq=HZ sets the samples per second per CPU and pid=PID "
"profiles one process. After you get the profile file, use the go tool "
"pprof command to investigate the profile.</li>\n"
"</ul>\n</p>\n</body>\n</html>\n";

/* Queue a response of len bytes of body (taken over: freed by MHD). */
static enum MHD_Result respond(struct MHD_Connection *c, unsigned int status,
			       const char *type, char *body, size_t len,
			       bool attachment)
{
	struct MHD_Response *r;
	enum MHD_Result ret;

	r = MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
	if (!r) {
		free(body);
		return MHD_NO;
	}
	MHD_add_response_header(r, "Content-Type", type);
	MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
	if (attachment)
		MHD_add_response_header(r, "Content-Disposition",
					"attachment; filename=\"profile\"");
	if (status != MHD_HTTP_OK)
		/* google/pprof shows the body of such an error */
		MHD_add_response_header(r, "X-Go-Pprof", "1");
	ret = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return ret;
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

static bool parse_param(const char *key, const char *val, long min, long max,
			long *out, char *err, size_t size)
{
	if (!val || !*val) {
		snprintf(err, size, "bad parameter %s: no value", key);
		return false;
	}
	switch (parse_long_quiet(val, min, max, out)) {
	case PARSE_NOT_NUMBER:
		snprintf(err, size, "bad parameter %s=%.64s: not a number", key,
			 val);
		return false;
	case PARSE_RANGE:
		snprintf(err, size, "bad parameter %s=%.64s: out of range (%ld to %ld)",
			 key, val, min, max);
		return false;
	default:
		return true;
	}
}

/* A copy of s (at most 64 bytes) fit for a log line: no control bytes. */
static const char *printable(char *buf, size_t size, const char *s)
{
	size_t i;

	snprintf(buf, size, "%.64s", s ? s : "");
	for (i = 0; buf[i]; i++)
		if ((unsigned char)buf[i] < 0x20 || buf[i] == 0x7f)
			buf[i] = '?';
	return buf;
}

static enum MHD_Result query_arg(void *cls, enum MHD_ValueKind kind,
				 const char *rkey, const char *rval)
{
	char kbuf[72], vbuf[72];
	const char *key = printable(kbuf, sizeof(kbuf), rkey);
	const char *val = rval ? printable(vbuf, sizeof(vbuf), rval) : NULL;
	struct query *q = cls;
	long flag;

	(void)kind;
	if (q->err[0])
		return MHD_NO;
	if (!strcmp(key, "seconds"))
		parse_param(key, val, 1, HTTPD_SECONDS_MAX, &q->seconds,
			    q->err, sizeof(q->err));
	else if (!strcmp(key, "freq"))
		parse_param(key, val, 1, LIVE_FREQ_MAX, &q->freq, q->err,
			    sizeof(q->err));
	else if (!strcmp(key, "pid"))
		parse_param(key, val, 0, LIVE_PID_MAX, &q->pid, q->err,
			    sizeof(q->err));
	else if (!strcmp(key, "nosymbol")) {
		if (parse_param(key, val, 0, 1, &flag, q->err, sizeof(q->err)))
			q->nosymbol = flag;
	} else if (!strcmp(key, "debug")) {
		if (parse_param(key, val, 0, 1, &flag, q->err, sizeof(q->err)))
			q->debug = flag;
	} else {
		snprintf(q->err, sizeof(q->err),
			 "unknown parameter %.64s (seconds, nosymbol, debug, freq, pid)",
			 key);
	}
	return q->err[0] ? MHD_NO : MHD_YES;
}

/* Watches a connection for the client's hang-up while a profile runs. */
struct watch {
	int conn_fd;
	int wake[2];			/* written when the profile ends */
	const struct live *live;
	volatile bool gone;
	pthread_t thread;
};

static void *watch_main(void *arg)
{
	struct watch *w = arg;
	struct pollfd p[2] = {
		{ .fd = w->conn_fd, .events = POLLRDHUP },
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
		if (p[0].revents) {
			w->gone = true;
			live__stop(w->live);
			break;
		}
	}
	return NULL;
}

/* Run the profile of q; *prof gets what was read.  0 ok, else a status. */
static unsigned int run_profile(struct server *srv, struct MHD_Connection *c,
				const struct query *q, struct profile **prof,
				struct cgroups *cg, bool *gone, char *msg,
				size_t size)
{
	const union MHD_ConnectionInfo *ci;
	struct live_settings set = {
		.proc_dir = srv->o->proc_dir, .seconds = q->seconds,
		.freq = q->freq, .pid = q->pid,
	};
	struct live live = { .fd = -1, .ctl_fd = -1 };
	struct watch w = { .wake = { -1, -1 }, .live = &live };
	const struct cprof_header *h;
	const struct cprof_rec *rec;
	struct unwload *unw = NULL;
	struct stream *s = NULL;
	unsigned int status = MHD_HTTP_INTERNAL_SERVER_ERROR;
	bool watching = false;
	int err, ret;

	if (srv->o->unwind_tables) {
		static const volatile sig_atomic_t never;

		unw = unwload__start(srv->o->proc_dir);
		unwload__scan(unw, q->pid > 0 ? q->pid : 0);
		unwload__wait(unw, &never);
	}
	if (live__start(&live, &set, &err, msg, size)) {
		status = err == EBUSY ? MHD_HTTP_CONFLICT :
			 err == EACCES || err == EPERM ? MHD_HTTP_FORBIDDEN :
			 err == ENOENT ? MHD_HTTP_SERVICE_UNAVAILABLE :
			 MHD_HTTP_INTERNAL_SERVER_ERROR;
		goto out;
	}
	pthread_mutex_lock(&srv->lock);
	srv->cur = &live;
	if (srv->stopping)
		live__stop(&live);
	pthread_mutex_unlock(&srv->lock);

	ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
	if (ci && !pipe2(w.wake, O_CLOEXEC)) {
		w.conn_fd = ci->connect_fd;
		watching = !pthread_create(&w.thread, NULL, watch_main, &w);
	}
	snprintf(msg, size, "failed to read the profile");
	s = stream__new(live.fd, live.path);
	h = s ? stream__read_header(s) : NULL;
	*prof = h ? profile__new(h) : NULL;
	if (!*prof)
		goto stop;
	while ((ret = stream__next(s, &rec)) > 0) {
		if (profile__add(*prof, rec))
			break;
		if (unw && rec->type == CPROF_REC_MMAP)
			unwload__note(unw, (const struct cprof_mmap *)rec);
		cgroups__note(cg, rec);
	}
	if (!ret)
		status = 0;
stop:
	if (watching) {
		ssize_t unreported = write(w.wake[1], "", 1);

		(void)unreported;
		pthread_join(w.thread, NULL);
		*gone = w.gone;
	}
	pthread_mutex_lock(&srv->lock);
	srv->cur = NULL;
	pthread_mutex_unlock(&srv->lock);
out:
	if (w.wake[0] >= 0) {
		close(w.wake[0]);
		close(w.wake[1]);
	}
	stream__free(s);
	live__close(&live);
	unwload__stop(unw, NULL);
	return status;
}

static enum MHD_Result serve_profile(struct server *srv,
				     struct MHD_Connection *c,
				     const char *who)
{
	struct query q = { .seconds = 30, .pid = -1 };
	struct output_opts oo = { .format = FORMAT_PPROF };
	struct resolve_opts ropts = { 0 };
	struct profile *prof = NULL;
	struct resolved *res = NULL;
	char msg[512], *body = NULL;
	unsigned int status;
	size_t len = 0;
	double t0 = monotonic_seconds();
	bool gone = false, bad;
	enum MHD_Result ret;
	FILE *f;

	MHD_get_connection_values(c, MHD_GET_ARGUMENT_KIND, query_arg, &q);
	if (q.err[0]) {
		fprintf(stderr, PROG_NAME ": %s: 400: %s\n", who, q.err);
		return respond_error(c, MHD_HTTP_BAD_REQUEST, q.err);
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

	/* per request: the paths of the cgroups that ran meanwhile only */
	ropts.cgroups = cgroups__new(NULL);
	if (!ropts.cgroups) {
		ret = respond_error(c, MHD_HTTP_INTERNAL_SERVER_ERROR,
				    "out of memory");
		goto out;
	}
	status = run_profile(srv, c, &q, &prof, ropts.cgroups, &gone, msg,
			     sizeof(msg));
	if (gone) {
		fprintf(stderr, PROG_NAME ": %s: the client went away after %.1f s: profile stopped\n",
			who, monotonic_seconds() - t0);
		ret = MHD_NO;
		goto out;
	}
	if (status) {
		fprintf(stderr, PROG_NAME ": %s: %u: %s\n", who, status, msg);
		ret = respond_error(c, status, msg);
		goto out;
	}
	ropts.symbolize = !q.nosymbol;
	oo.format = q.debug ? FORMAT_TEXT : FORMAT_PPROF;
	res = resolved__new(prof, &ropts);
	f = res ? open_memstream(&body, &len) : NULL;
	bad = !f || output__write(res, &oo, f, "the response");
	if (f && fclose(f))
		bad = true;
	if (bad) {
		free(body);
		snprintf(msg, sizeof(msg), "failed to build the profile: %s",
			 strerror(ENOMEM));
		fprintf(stderr, PROG_NAME ": %s: 500: %s\n", who, msg);
		ret = respond_error(c, MHD_HTTP_INTERNAL_SERVER_ERROR, msg);
		goto out;
	}
	fprintf(stderr, PROG_NAME ": %s: 200: %llu samples in %.1f s, %zu bytes\n",
		who, (unsigned long long)profile__nr_records(prof),
		monotonic_seconds() - t0, len);
	ret = respond(c, MHD_HTTP_OK,
		      q.debug ? "text/plain; charset=utf-8" :
				"application/octet-stream",
		      body, len, !q.debug);
out:
	resolved__free(res);
	profile__free(prof);
	cgroups__free(ropts.cgroups);
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

static enum MHD_Result handle(void *cls, struct MHD_Connection *c,
			      const char *url, const char *method,
			      const char *version, const char *upload_data,
			      size_t *upload_data_size, void **req_cls)
{
	struct server *srv = cls;
	const union MHD_ConnectionInfo *ci;
	char who[128], host[64] = "?";

	(void)version;
	(void)upload_data;
	if (!strcmp(url, "/debug/pprof/symbol"))
		return serve_symbol(c, method, upload_data_size, req_cls);
	if (*upload_data_size)
		return respond_error(c, MHD_HTTP_BAD_REQUEST, "no body expected");
	ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	if (ci && ci->client_addr)
		getnameinfo(ci->client_addr, sizeof(struct sockaddr_storage),
			    host, sizeof(host), NULL, 0, NI_NUMERICHOST);
	snprintf(who, sizeof(who), "%s %s %.64s", host, method, url);
	if (strcmp(method, "GET") && strcmp(method, "HEAD"))
		return respond_error(c, MHD_HTTP_METHOD_NOT_ALLOWED,
				     "only GET is served");
	if (!strcmp(url, "/debug/pprof/profile"))
		return serve_profile(srv, c, who);
	if (!strcmp(url, "/debug/pprof/") || !strcmp(url, "/debug/pprof")) {
		char *body = strdup(index_page);

		if (!body)
			return MHD_NO;
		return respond(c, MHD_HTTP_OK, "text/html; charset=utf-8", body,
			       strlen(body), false);
	}
	return respond_error(c, MHD_HTTP_NOT_FOUND,
			     "404 page not found: cprof serves /debug/pprof/ and /debug/pprof/profile");
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
		di = MHD_get_daemon_info(d, MHD_DAEMON_INFO_CURRENT_CONNECTIONS);
		if (!busy && (!di || !di->num_connections))
			return;
		usleep(50 * 1000);
	} while (monotonic_seconds() < until);
}

/* A listening socket for addr, or -1 after printing why. */
static int listen_on(const char *addr)
{
	struct addrinfo hints = {
		.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
		.ai_flags = AI_PASSIVE | AI_NUMERICSERV,
	};
	struct addrinfo *ai = NULL, *a;
	char host[256], *colon;
	const char *port;
	int fd = -1, one = 1, rc, err = 0;

	snprintf(host, sizeof(host), "%s", addr);
	colon = strrchr(host, ':');
	if (colon) {
		*colon = '\0';
		port = colon + 1;
	} else {
		port = host;
	}
	if (!colon || !host[0]) {
		/* nothing listens beyond this machine unless asked */
		memmove(host, "127.0.0.1", sizeof("127.0.0.1"));
		if (!colon)
			port = addr;
	} else if (host[0] == '[' && colon[-1] == ']') {
		colon[-1] = '\0';
		memmove(host, host + 1, strlen(host));
	}
	if (!*port || strspn(port, "0123456789") != strlen(port))
		return fail("invalid --http address '%s': want HOST:PORT, :PORT or PORT",
			    addr);
	rc = getaddrinfo(host, port, &hints, &ai);
	if (rc)
		return fail("invalid --http address '%s': %s", addr,
			    gai_strerror(rc));
	for (a = ai; a; a = a->ai_next) {
		fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC,
			    a->ai_protocol);
		if (fd < 0) {
			err = errno;
			continue;
		}
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (!bind(fd, a->ai_addr, a->ai_addrlen) && !listen(fd, 16))
			break;
		err = errno;
		close(fd);
		fd = -1;
	}
	freeaddrinfo(ai);
	if (fd < 0)
		return fail("failed to listen on %s: %s", addr, strerror(err));
	return fd;
}

int httpd__run(const struct httpd_opts *o)
{
	struct server srv = { .o = o };
	struct MHD_Daemon *d;
	sigset_t set;
	int fd, sig = 0;

	fd = listen_on(o->addr);
	if (fd < 0)
		return 1;
	pthread_mutex_init(&srv.lock, NULL);
	/* the signals come to sigwait() below, not to the server's threads */
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);
	d = MHD_start_daemon(MHD_USE_THREAD_PER_CONNECTION |
			     MHD_USE_INTERNAL_POLLING_THREAD |
			     MHD_USE_ERROR_LOG,
			     0, NULL, NULL, handle, &srv,
			     MHD_OPTION_LISTEN_SOCKET, fd,
			     MHD_OPTION_CONNECTION_LIMIT, 64,
			     MHD_OPTION_END);
	if (!d) {
		close(fd);
		fail("failed to start the HTTP server on %s", o->addr);
		return 1;
	}
	fprintf(stderr, PROG_NAME ": serving http://%s/debug/pprof/\n", o->addr);
	while (sigwait(&set, &sig) || (sig != SIGINT && sig != SIGTERM))
		;
	pthread_mutex_lock(&srv.lock);
	srv.stopping = true;
	if (srv.cur)
		live__stop(srv.cur);
	pthread_mutex_unlock(&srv.lock);
	/*
	 * The profile being served ends now: let its client have it (and
	 * other answers in flight leave) before the connections are shut,
	 * for at most STOP_DRAIN_S.
	 */
	drain(&srv, d);
	MHD_stop_daemon(d);	/* closes the listening socket too */
	pthread_mutex_destroy(&srv.lock);
	fprintf(stderr, PROG_NAME ": stopped serving (signal %d)\n", sig);
	return 0;
}
