/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * listen - the socket `cprof-dump --http ADDR` listens on.
 *
 *   unix:PATH, or a PATH starting with /   a Unix socket, created 0600
 *                                          (0660 with a group)
 *   HOST:PORT, [V6ADDR]:PORT               TCP on that address
 *   :PORT, PORT                            TCP on 127.0.0.1
 */
#ifndef CPROF_LISTEN_H
#define CPROF_LISTEN_H

#include <stdbool.h>
#include <sys/types.h>

struct listen_addr {
	bool unix_socket;
	char path[108];		/* the Unix socket's path */
	const char *base;	/* its last component, in path */
	int dir_fd;		/* its directory, once open; else -1 */
	dev_t dev;		/* the socket listen__open() made there */
	ino_t ino;
	char host[256];		/* TCP: what to bind, numeric or a name */
	char port[8];
	char shown[300];	/* as announced: "127.0.0.1:6060", "unix:/run/x" */
};

/* Parse addr into *la.  0, or -1 after printing why. */
int listen__parse(const char *addr, struct listen_addr *la);

/* Is la's host loopback only (127.0.0.0/8, ::1, localhost)? */
bool listen__loopback(const struct listen_addr *la);

/*
 * A listening socket for la, or -1 after printing why.  A Unix socket's
 * path is replaced only if it is a socket already; it is made 0600, or
 * 0660 owned by group gid if gid != (gid_t)-1, in a private directory
 * and then renamed into place, so that no file a user puts at the path
 * meanwhile is followed or replaced.
 */
int listen__open(struct listen_addr *la, gid_t gid);

/* Close fd and remove a Unix socket's path if it is still the one made. */
void listen__close(struct listen_addr *la, int fd);

#endif /* CPROF_LISTEN_H */
