/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * httpd - Go's /debug/pprof endpoints for the whole machine, on
 * libmicrohttpd (cprof-dump --http ADDR).
 *
 *   /debug/pprof/          an index page, as Go's
 *   /debug/pprof/profile   a CPU profile of ?seconds=N (default 30, at most
 *                          HTTPD_SECONDS_MAX), gzipped pprof with Go's
 *                          headers; nosymbol=1: addresses, mappings and
 *                          build IDs only; debug=1: Go's legacy text form;
 *                          freq=HZ, pid=PID: cprof's own settings
 *   /debug/pprof/symbol    pprof's remote symbolizer: knows no names (they
 *                          are in the client's copies of the files)
 *
 * One profile at a time: a request while one runs gets 409 and one line.
 * A client that goes away mid-profile stops it (the module is free at
 * once).  A bad query gets 400 and a line naming the parameter.  One line
 * per request goes to stderr.
 */
#ifndef CPROF_HTTPD_H
#define CPROF_HTTPD_H

#include <signal.h>
#include <stdbool.h>

#define HTTPD_SECONDS_MAX	3600

struct httpd_opts {
	const char *addr;	/* "HOST:PORT", ":PORT" (loopback) or "PORT" */
	const char *proc_dir;
	bool unwind_tables;	/* load them before each profile */
};

/*
 * Serve until SIGINT or SIGTERM (which also end a profile being served).
 * Returns the exit status: 0, or 1 after printing why it could not listen.
 */
int httpd__run(const struct httpd_opts *o);

#endif /* CPROF_HTTPD_H */
