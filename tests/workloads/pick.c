// SPDX-License-Identifier: GPL-2.0
/*
 * pick.c: libpick.so for u_container, built five times, its spinning
 * function named after each build (NAME), so that a sample says which
 * build a process mapped; PICK_STATIC makes the function static, named
 * only in a detached debug file.  Built by this folder's Makefile into
 * pick/, with pickspin, the program that runs it.
 */
volatile unsigned long pick_sink;

#ifdef PICK_STATIC
static
#endif
__attribute__((noinline)) void NAME(void)
{
	for (;;)
		pick_sink++;
}

void pick_spin(void);

void pick_spin(void)
{
	NAME();
}
