// SPDX-License-Identifier: GPL-2.0
/*
 * realign [SECONDS]: spin for SECONDS (default 5) below functions that
 * realign their stack, built without frame pointers (see the Makefile):
 *
 *   main -> one   -> spin    1 part of the work
 *        -> three -> spin    3 parts
 *        -> rspin            2 parts (in turns of its loop, whose
 *                            time differs: under TCG about 45 %; spin
 *                            keeps the most samples, which its split
 *                            needs)
 *
 * one and three hold a 64-byte aligned buffer and an array of variable
 * length: gcc then realigns the stack through a register (its "DRAP",
 * r10) and describes the frame by expressions, the CFA being the word at
 * rbp - 8 (DW_CFA_def_cfa_expression: DW_OP_breg6 -8; DW_OP_deref) and
 * the caller's rbp the word at rbp.  spin is a frameless leaf.  A walk
 * that reaches main from spin, and the 1:3 split, need those rules.
 *
 * rspin (assembly) keeps its entry stack pointer in r11 and realigns
 * the stack, its CFA r11 + 8 throughout, as OpenSSL's assembly does: a
 * walk that reaches main from it needs that rule in the interrupted frame
 * (rbp holds no frame: main has none).
 *
 * Prints the rounds done.
 */
#include "common.h"

static volatile unsigned long sink;

NOINLINE void spin(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		sink += i;
}

/* rspin(n): n turns of a loop, the CFA in r11 (see above). */
void rspin(unsigned long n);
__asm__(
	"	.text\n"
	"	.globl	rspin\n"
	"	.type	rspin, @function\n"
	"rspin:\n"
	"	.cfi_startproc\n"
	"	movq	%rsp, %r11\n"
	"	.cfi_def_cfa_register %r11\n"
	"	subq	$192, %rsp\n"
	"	andq	$-64, %rsp\n"
	"1:	movq	%rdi, (%rsp)\n"
	"	decq	%rdi\n"
	"	jnz	1b\n"
	"	movq	%r11, %rsp\n"
	"	.cfi_def_cfa_register %rsp\n"
	"	ret\n"
	"	.cfi_endproc\n"
	"	.size	rspin, .-rspin\n");

/* Identical bodies: the split is 1:3 by the calls alone. */
NOINLINE void one(unsigned long n)
{
	volatile char var[n % 64 + 1];
	volatile char buf[64] __attribute__((aligned(64)));

	buf[0] = (char)n;
	var[0] = 1;
	spin(n + buf[0] * 0 + var[0] * 0);
	sink += buf[1];
}

NOINLINE void three(unsigned long n)
{
	volatile char var[n % 64 + 1];
	volatile char buf[64] __attribute__((aligned(64)));

	buf[0] = (char)n;
	var[0] = 1;
	spin(n + buf[0] * 0 + var[0] * 0);
	sink += buf[1];
}

int main(int argc, char **argv)
{
	double end = now_sec() + parse_seconds(argc, argv, 5);
	unsigned long rounds = 0;

	do {
		one(100000);
		three(100000);
		three(100000);
		three(100000);
		rspin(200000);
		rounds++;
	} while (now_sec() < end);
	printf("realign: %lu rounds of one:three:rspin = 1:3:2\n", rounds);
	return 0;
}
