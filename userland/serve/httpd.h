/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * httpd - Go's /debug/pprof endpoints for the whole machine, on
 * libmicrohttpd (cprof-dump --http ADDR).
 *
 *   /debug/pprof/          an index page, as Go's
 *   /debug/pprof/profile   a CPU profile of ?seconds=N (default 30, at most
 *                          max_seconds), gzipped pprof with Go's headers;
 *                          nosymbol=1: addresses, mappings and build IDs
 *                          only; debug=1: Go's legacy text form; freq=HZ
 *                          (at most max_freq), pid=PID: cprof's own
 *                          settings.  Other parameters are ignored, as
 *                          Go's handler does; HEAD runs no profile.
 *   /debug/pprof/symbol    pprof's remote symbolizer: knows no names (they
 *                          are in the client's copies of the files)
 *
 * Who may ask: httpauth.h; where it listens: listen.h.  One profile at a
 * time: a request while one runs gets 409 and one line.  A client that
 * goes away stops its request in whatever step it is.  A bad value of a
 * known parameter gets 400 and a line naming it.  Idle connections close
 * after 10 s; those not authenticated are connguard.h's.  One line per
 * request goes to stderr (refusals: connguard.h's counted log).
 */
#ifndef CPROF_HTTPD_H
#define CPROF_HTTPD_H

#include <stdbool.h>

#include "run/pipeline.h"
#include "serve/httpauth.h"

/*
 * The default ceilings of seconds= and freq= (--http-max-seconds,
 * --http-max-freq): deliberately below the module's CPROF_SECONDS_MAX and
 * CPROF_FREQ_MAX, which the options may raise them to, so that a client
 * holds the profiler an hour at most, at perf record's default frequency
 * at most.  Plain numbers: --help and the index page print them.
 */
#define HTTPD_SECONDS_MAX	3600
#define HTTPD_FREQ_MAX		4000

struct httpd_opts {
	const char *addr;	/* listen.h's forms */
	const char *group;	/* a Unix socket's group (0660), or NULL */
	struct httpauth_opts auth;
	long max_seconds, max_freq;
	/* proc_dir and unwind_tables; the server sets the rest */
	struct pipeline_opts pipe;
};

/*
 * Serve until SIGINT or SIGTERM (which also end a profile being served).
 * Returns the exit status: 0, or 1 after printing why it could not serve.
 */
int httpd__run(const struct httpd_opts *o);

#endif /* CPROF_HTTPD_H */
