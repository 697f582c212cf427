/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * modprofile - a profile the module runs, through its files: the settings
 * written to PROC_DIR/ctl, the stream opened (PROC_DIR/profile), a stop
 * asked for; for -d, --every and --http alike.
 */
#ifndef CPROF_MODPROFILE_H
#define CPROF_MODPROFILE_H

#include <stddef.h>

#define MODPROFILE_PROC_DIR	"/proc/cprof"
/*
 * The most ctl's pid= takes: the module checks it against the kernel's
 * PID_MAX_LIMIT (4 Mi on 64-bit), which no userland header holds.
 */
#define MODPROFILE_PID_MAX	4194304

struct modprofile_settings {
	const char *proc_dir;
	long seconds;		/* 0: until modprofile__stop(), a signal */
	long freq;		/* 0: leave as set */
	long pid;		/* <= 0: every process */
	const char *kind;	/* ctl's kind=; NULL: cpu */
	const char *extra;	/* more ctl lines (kind heap's), or NULL */
};

struct modprofile {
	int fd;			/* the stream */
	int ctl_fd;		/* for modprofile__stop */
	char path[4096];	/* of the stream, for messages */
};

/*
 * Configure the module and open its profile into *mp.  0, or -1 with the
 * errno in *err and one line saying what failed and why in msg.
 */
int modprofile__start(struct modprofile *mp,
		      const struct modprofile_settings *s, int *err,
		      char *msg, size_t size);
/*
 * Ask the module to end the profile ("stop=1"): the stream then ends with
 * an END record.  Async-signal-safe.
 */
void modprofile__stop(const struct modprofile *mp);
/* Close both files (a profile still running ends); mp may be unstarted. */
void modprofile__close(struct modprofile *mp);

#endif /* CPROF_MODPROFILE_H */
