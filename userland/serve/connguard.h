/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * connguard - what connections not yet authenticated may hold of
 * `cprof-dump --http`, and what is said about them.
 *
 * A connection is pending from the moment it is accepted until its request
 * has arrived whole and passed httpauth.h.  Pending connections are few
 * (CONNGUARD_PENDING_MAX, CONNGUARD_PER_NET from one IPv4 /24, one IPv6
 * /64 or the Unix socket) and short-lived (CONNGUARD_DEADLINE_S): a new
 * connection past a limit makes room by shutting down the oldest pending
 * one of the address holding most of its network's (or, past the global
 * limit, of the network holding most), so that a client sending its
 * request at once gets in however many connections others trickle theirs
 * on.  Authenticated connections count in none of these.  An address
 * (IPv6: a /64) opening more than CONNGUARD_RATE connections a second is
 * refused at once, before they cost a thread: what is closed above comes
 * back no faster.
 *
 * What would be a log line per refusal (libmicrohttpd's own messages, the
 * lines of refused requests) is printed CONNGUARD_BURST times per
 * CONNGUARD_LOG_S at most; the rest, and the connections shut down, are
 * counted and said in one line per CONNGUARD_LOG_S.
 */
#ifndef CPROF_CONNGUARD_H
#define CPROF_CONNGUARD_H

#include <stdarg.h>
#include <stdbool.h>
#include <sys/socket.h>

#define CONNGUARD_PENDING_MAX	128
#define CONNGUARD_PER_NET	64
#define CONNGUARD_DEADLINE_S	5.0
#define CONNGUARD_LOG_S		10.0
#define CONNGUARD_BURST		5
/* new connections from one address: this many a second, so many at once */
#define CONNGUARD_RATE		20
#define CONNGUARD_BURST_CONNS	40
#define CONNGUARD_SOURCES	256

struct connguard;
struct connguard_conn;

struct connguard *connguard__new(void);
void connguard__free(struct connguard *g);

/* The accept policy: may a connection from sa be taken? */
bool connguard__admit(struct connguard *g, const struct sockaddr *sa);

/*
 * A connection accepted on fd from sa (NULL: unknown), pending: NULL if
 * out of memory (it then has the idle timeout only).  May shut down an
 * older pending connection to make room.
 */
struct connguard_conn *connguard__add(struct connguard *g, int fd,
				      const struct sockaddr *sa);

/* Its request came and was let through: it is pending no more. */
void connguard__authenticated(struct connguard *g, struct connguard_conn *c);

/* It is closed (c may be NULL). */
void connguard__remove(struct connguard *g, struct connguard_conn *c);

/*
 * Shut down the pending connections past their deadline, and print the
 * counts line if one is due.  Called a few times a second.
 */
void connguard__tick(struct connguard *g);

/* A line about a refusal (a prefix is added), printed or counted. */
void connguard__refusal(struct connguard *g, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* MHD_OPTION_EXTERNAL_LOGGER: libmicrohttpd's lines, as refusals. */
void connguard__mhd_log(void *g, const char *fmt, va_list ap)
	__attribute__((format(printf, 2, 0)));

#endif /* CPROF_CONNGUARD_H */
