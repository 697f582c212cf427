/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * boxed - run a piece of work in a child process whose memory and CPU
 * time are limited, and read back what it writes.
 *
 * The symbolizer runs libdw on files any user may write, for a server
 * that runs as root for weeks: what a hostile file makes libdw do must be
 * bounded in memory and time, a fault in it must not end the server, and
 * what it leaks (libdw's half-built state, abandoned after a SIGBUS) must
 * not accumulate.  A child process gives all of that at once: its address
 * space and CPU time are capped with setrlimit(), whatever it allocated
 * goes when it exits, and the parent can kill it the moment the answer is
 * no longer wanted (the client went away, the server is stopping).
 *
 * The child is a fork() of a threaded process: it runs only fn (the other
 * threads do not exist in it), with the file descriptors it inherits
 * closed but the pipe and stderr, so that it holds no client's connection
 * or listening socket open.  What fn calls may take a lock another thread
 * held at the fork: glibc makes its own (malloc's, stdio's, the dynamic
 * loader's) usable in the child; zlib and protobuf-c take none, and
 * libdw's are its objects' own, which no other thread shares with fn.
 * GCC 12's ASan allocator is not made so: in an ASan build up to one
 * child in 80 forked while another thread allocates waits forever on its
 * first malloc, until wall_seconds.
 */
#ifndef CPROF_BOXED_H
#define CPROF_BOXED_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

struct boxed_limits {
	uint64_t mem_bytes;	/* address space beyond the parent's now */
	unsigned int cpu_seconds;	/* RLIMIT_CPU */
	double wall_seconds;	/* then the child is killed */
	size_t out_max;		/* bytes read back at most */
};

/*
 * What symbolizing and writing one profile may take (an --http answer, an
 * --every window): 2 GiB of address space beyond the caller's, 120 s of
 * CPU, 300 s in all, 512 MiB of output.
 */
extern const struct boxed_limits boxed_symbolize;

/*
 * Run fn(arg, out) in a child, out a stream to the parent; fn's non-zero
 * return fails the child (after fn said why on stderr).  0 with *buf (to
 * free, never NULL) and *len what out received; else -1 with one line saying why in
 * msg: fn failed, the child was killed (the CPU limit, a fault, out of
 * memory), it wrote more than out_max or ran past wall_seconds, or *stop
 * was set meanwhile (msg: "stopped"; the child is killed at once).
 */
int boxed__run(int (*fn)(void *arg, FILE *out), void *arg,
	       const struct boxed_limits *lim,
	       const volatile sig_atomic_t *stop, char **buf, size_t *len,
	       char *msg, size_t size);

/*
 * The same, with one more of the caller's descriptors kept open in the
 * child (a file to read there): *keep_fd may be renumbered in the child
 * (fn sees the new number through it), never in the caller.
 */
int boxed__run_fd(int (*fn)(void *arg, FILE *out), void *arg, int *keep_fd,
		  const struct boxed_limits *lim,
		  const volatile sig_atomic_t *stop, char **buf, size_t *len,
		  char *msg, size_t size);

/* A child boxed__start() started. */
struct boxed_child {
	pid_t pid;		/* -1: none */
	double until;		/* monotonic_seconds() when it is killed */
};

/*
 * Start fn(arg, out) in a child as boxed__run() does, without waiting for
 * it: out writes into the caller's out_fd (a file: no one reads it
 * meanwhile).  lim's mem_bytes or cpu_seconds 0: no such limit; out_max
 * is the caller's to check.  0, or -1 with why in msg.
 */
int boxed__start(struct boxed_child *c, int (*fn)(void *arg, FILE *out),
		 void *arg, int out_fd, const struct boxed_limits *lim,
		 char *msg, size_t size);

/*
 * Has c ended?  0: it did, fn succeeded; -1: it failed, died, or ran past
 * wall_seconds (then killed), why in msg; 1: it runs on (block false;
 * block true waits for its end).
 */
int boxed__wait(struct boxed_child *c, bool block, char *msg, size_t size);

/* Kill c, and wait for it: its answer is no longer wanted. */
void boxed__stop(struct boxed_child *c);

#endif /* CPROF_BOXED_H */
