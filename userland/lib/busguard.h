/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * busguard - survive SIGBUS from a mapped file that shrank.
 *
 * libdwfl maps the files it reads; a file truncated meanwhile (by its
 * owner, any user) makes a read of the lost pages raise SIGBUS, which
 * would kill cprof-dump.  Code that calls into such a library enters a
 * guard first; SIGBUS in that thread then returns to the guard's entry a
 * second time with a non-zero value, and the caller drops what it was
 * reading (leaking the library's state: it may be half-built).  SIGBUS
 * outside a guard is fatal as before.
 *
 *	struct busguard g;
 *
 *	busguard__enter(&g);
 *	if (sigsetjmp(g.jb, 1)) {
 *		... SIGBUS: the file changed under us
 *	} else {
 *		... read it
 *	}
 *	busguard__leave(&g);	(on both paths)
 *
 * (sigsetjmp() must be called by the function that stays on the stack,
 * in an if: C allows it nowhere else.)
 */
#ifndef CPROF_BUSGUARD_H
#define CPROF_BUSGUARD_H

#include <setjmp.h>

struct busguard {
	sigjmp_buf jb;
	struct busguard *prev;
};

extern __thread struct busguard *busguard_cur;

/* Install the SIGBUS handler (once; later calls do nothing). */
void busguard__install(void);

/* Make g the guard of this thread; sigsetjmp(g->jb, 1) follows at once. */
static inline void busguard__enter(struct busguard *g)
{
	busguard__install();
	g->prev = busguard_cur;
	busguard_cur = g;
}

/* Leave the guard entered last (after a SIGBUS too: it is then a no-op). */
static inline void busguard__leave(struct busguard *g)
{
	if (busguard_cur == g)
		busguard_cur = g->prev;
}

#endif /* CPROF_BUSGUARD_H */
