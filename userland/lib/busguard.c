// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * busguard - SIGBUS back to the guard's entry.  See busguard.h.
 */
#include <pthread.h>
#include <signal.h>
#include <string.h>

#include "lib/busguard.h"

__thread struct busguard *busguard_cur;

static void on_sigbus(int sig)
{
	struct busguard *g = busguard_cur;

	if (!g) {
		/* not ours: die of it, as without the handler */
		signal(sig, SIG_DFL);
		return;		/* the access faults again */
	}
	busguard_cur = g->prev;
	siglongjmp(g->jb, 1);
}

static void install(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_sigbus;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGBUS, &sa, NULL);
}

void busguard__install(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, install);
}
