/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * live - run a profile through the module's files (PROC_DIR/ctl and
 * PROC_DIR/profile), for -d, --every and --http alike.
 */
#ifndef CPROF_LIVE_H
#define CPROF_LIVE_H

#include <stddef.h>

#define LIVE_PROC_DIR	"/proc/cprof"
/*
 * The most ctl's pid= takes: the module checks it against the kernel's
 * PID_MAX_LIMIT (4 Mi on 64-bit), which no userland header holds.
 */
#define LIVE_PID_MAX	4194304

struct live_settings {
	const char *proc_dir;
	long seconds;		/* 0: until stopped (live__stop, a signal) */
	long freq;		/* 0: leave as set */
	long pid;		/* -1: leave as set, 0: all */
};

struct live {
	int fd;			/* the stream */
	int ctl_fd;		/* for live__stop */
	char path[4096];	/* of the stream, for messages */
};

/*
 * Configure the module and open its profile into *l.  0, or -1 with the
 * errno in *err and one line saying what failed and why in msg.
 */
int live__start(struct live *l, const struct live_settings *s, int *err,
		char *msg, size_t size);
/*
 * Ask the module to end the profile ("stop=1"): the stream then ends with
 * an END record.  Async-signal-safe.
 */
void live__stop(const struct live *l);
/* Close both files (a profile still running ends); l may be unstarted. */
void live__close(struct live *l);

#endif /* CPROF_LIVE_H */
