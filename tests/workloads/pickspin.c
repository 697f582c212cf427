// SPDX-License-Identifier: GPL-2.0
/*
 * pickspin [SECONDS]: spins in libpick.so's pick_spin() (pick.c), found
 * through its rpath, $ORIGIN/lib; SIGALRM ends it after SECONDS.
 */
#include <stdlib.h>
#include <unistd.h>

void pick_spin(void);

int main(int argc, char **argv)
{
	if (argc > 1)
		alarm(atoi(argv[1]));	/* SIGALRM ends it */
	pick_spin();
	return 0;
}
