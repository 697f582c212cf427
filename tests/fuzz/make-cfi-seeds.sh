#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
#
# tests/fuzz/make-cfi-seeds.sh [DIR]: build the seeds of the cfi fuzzer
# (tests/fuzz/fuzz_cfi.c) into DIR (default tests/fuzz/corpus/cfi): small
# real x86-64 ELF files, each at most 16 KiB (but three, below), built with gcc and binutils
# from the sources below, stripped, the segments not page-separated
# (-z noseparate-code) so that they stay small, but for one:
#
#   pie-plt          PIE linked with libc: crt files' FDEs, the lazy PLT's
#                    expression (DW_OP_lit11), .eh_frame_hdr
#   pie-ibt-plt      the same with -fcf-protection and -z ibtplt: the IBT
#                    PLT's expression (DW_OP_lit9), .plt.sec
#   pie-default      the same as pie-plt with the linker's default layout
#                    (code on pages of its own: four PT_LOADs, 14 KiB)
#   exec-nostart     static non-PIE ET_EXEC, -nostartfiles -nostdlib, one
#                    PT_LOAD with code: gcc's own FDEs only
#   shared-lib       an ET_DYN shared object that calls out through its PLT
#   asm-cfi          hand-written CFI in both .eh_frame and .debug_frame
#                    (.cfi_sections): push/pop, rbp frames, remember/restore
#                    state, an expression CFA, the PLT expressions with 11
#                    and 9, a signal frame, an undefined return address, a
#                    return address elsewhere, an offset beyond s32, a
#                    personality and LSDA ("zPLR"), a gap no FDE covers
#   debug-frame-v4   only .debug_frame (no .eh_frame), version 4 CIEs (with
#                    address and segment size)
#   debug-frame-zlib only .debug_frame, version 1 CIEs, SHF_COMPRESSED (zlib)
#   debug-frame-dwarf64  only .debug_frame, written by hand in the 64-bit
#                    DWARF format (gas writes only the 32-bit one)
#   debug-frame-big-zlib, debug-frame-big-zdebug   over 64 KiB (at most
#                    256 KiB): 1000 functions' .debug_frame and debug info,
#                    compressed as SHF_COMPRESSED and as GNU .zdebug_*
#   inflate-bomb     debug-frame-v4 with a .debug_macro of 65 MiB of zeros,
#                    compressed to some 70 KiB: refused, not inflated
#
# The bytes depend on the toolchain (these were made with Debian 12's gcc
# 12.2 and binutils 2.40); any such files do as seeds.  CC (default gcc).
# The corpus also keeps inputs the fuzzer found (regress-*), which this
# script does not make: regression seeds, replayed by run.sh.
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
out=${1:-$REPO/tests/fuzz/corpus/cfi}
cc=${CC:-gcc}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$out"
cd "$tmp"

# small: no build ID, code not on its own pages
small=("-Wl,--build-id=none" "-Wl,-z,noseparate-code" "-Wl,-z,norelro")

cat >main.c <<'EOF'
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) static int leaf(int x) { return x * 3 + 1; }

int main(int argc, char **argv)
{
	puts(argv[0]);
	printf("%d\n", leaf(argc));
	return argc > 3 ? EXIT_FAILURE : 0;
}
EOF

# no libc: _start makes the exit system call itself
cat >nostart.c <<'EOF'
volatile int sink;

__attribute__((noinline)) int leaf(int x) { return x * 3 + sink; }

__attribute__((noinline)) int framed(int n)
{
	volatile int buf[n + 16];

	for (int i = 0; i < n + 16; i++)
		buf[i] = leaf(i);
	return buf[n];
}

void _start(void)
{
	int r = framed(sink) + leaf(2);

	__asm__ volatile("syscall" : : "a"(60), "D"(r) : "rcx", "r11", "memory");
	__builtin_unreachable();
}
EOF

cat >lib.c <<'EOF'
extern int external(int);

__attribute__((noinline)) int lib_leaf(int x) { return external(x) + 1; }

int lib_entry(int x)
{
	int s = 0;

	for (int i = 0; i < x; i++)
		s += lib_leaf(i);
	return s;
}
EOF

cat >cfi.s <<'EOF'
	.cfi_sections .eh_frame, .debug_frame
	.text
	.globl	_start
	.type	_start, @function
_start:
	.cfi_startproc
	.cfi_undefined %rip
	xorl	%ebp, %ebp
	call	asm_fp
	call	asm_state
	movl	$60, %eax
	xorl	%edi, %edi
	syscall
	.cfi_endproc
	.size	_start, .-_start

	.globl	asm_fp
	.type	asm_fp, @function
asm_fp:
	.cfi_startproc
	.cfi_personality 0x9b, DW.ref.pers
	.cfi_lsda 0x1b, lsda
	pushq	%rbp
	.cfi_def_cfa_offset 16
	.cfi_offset %rbp, -16
	movq	%rsp, %rbp
	.cfi_def_cfa_register %rbp
	subq	$32, %rsp
	call	asm_expr
	leave
	.cfi_def_cfa %rsp, 8
	ret
	.cfi_endproc
	.size	asm_fp, .-asm_fp

	.fill	16, 1, 0xcc		# no FDE here
asm_expr:
	.cfi_startproc
	nop
	# DW_CFA_def_cfa_expression: DW_OP_breg7 8; DW_OP_deref
	.cfi_escape 0x0f, 0x03, 0x77, 0x08, 0x06
	nop
	ret
	.cfi_endproc

asm_sig:
	.cfi_startproc
	.cfi_signal_frame
	nop
	ret
	.cfi_endproc

asm_ra:
	.cfi_startproc
	nop
	.cfi_offset %rip, -16
	ret
	.cfi_endproc

asm_big:
	.cfi_startproc
	nop
	# DW_CFA_def_cfa_offset 0x100000008: beyond s32
	.cfi_escape 0x0e, 0x88, 0x80, 0x80, 0x80, 0x10
	ret
	.cfi_endproc

asm_fpfar:
	.cfi_startproc
	nop
	.cfi_def_cfa_offset 40016
	.cfi_offset %rbp, -40000
	ret
	.cfi_endproc

	.globl	asm_state
	.type	asm_state, @function
asm_state:
	.cfi_startproc
	pushq	%rbx
	.cfi_adjust_cfa_offset 8
	.cfi_remember_state
	popq	%rbx
	.cfi_adjust_cfa_offset -8
	ret
	.cfi_restore_state
	popq	%rbx
	ret
	.cfi_endproc
	.size	asm_state, .-asm_state

	.p2align 4
plt11:
	.cfi_startproc
	.cfi_def_cfa_offset 16
	pushq	(%rip)
	jmp	*(%rip)
	.p2align 4
	# DW_CFA_def_cfa_expression: rsp + 8 + ((rip & 15) >= 11) * 8
	.cfi_escape 0x0f, 0x0b, 0x77, 0x08, 0x80, 0x00, 0x3f, 0x1a, 0x3b, 0x2a, 0x33, 0x24, 0x22
	.rept	3
	jmp	*(%rip)
	pushq	$0
	jmp	plt11
	.p2align 4
	.endr
	.cfi_endproc

plt9:
	.cfi_startproc
	# the IBT form: (rip & 15) >= 9
	.cfi_escape 0x0f, 0x0b, 0x77, 0x08, 0x80, 0x00, 0x3f, 0x1a, 0x39, 0x2a, 0x33, 0x24, 0x22
	.rept	2
	endbr64
	pushq	$0
	jmp	plt11
	.p2align 4
	.endr
	.cfi_endproc

pers:
	ret

	.section .rodata
lsda:
	.byte	0xff, 0xff, 0x01, 0x00

	.hidden	DW.ref.pers
	.weak	DW.ref.pers
	.section .data.rel.local.DW.ref.pers,"awG",@progbits,DW.ref.pers,comdat
	.align	8
	.type	DW.ref.pers, @object
	.size	DW.ref.pers, 8
DW.ref.pers:
	.quad	pers
	.section .note.GNU-stack,"",@progbits
EOF

cat >dwarf64.s <<'EOF'
	.text
	.globl	_start
_start:
	call	func
	movl	$60, %eax
	xorl	%edi, %edi
	syscall
func:
	pushq	%rbp
	movq	%rsp, %rbp
	popq	%rbp
	ret
func_end:

	# 64-bit DWARF: the 0xffffffff escape, 8-byte lengths and CIE ids;
	# a version 4 CIE with address and segment selector sizes
	.section .debug_frame,"",@progbits
cie:
	.long	0xffffffff
	.quad	cie_end - cie_start
cie_start:
	.quad	0xffffffffffffffff	# CIE id
	.byte	4			# version
	.asciz	""			# augmentation
	.byte	8			# address size
	.byte	0			# segment selector size
	.uleb128 1			# code alignment
	.sleb128 -8			# data alignment
	.uleb128 16			# return address column
	.byte	0x0c, 7, 8		# DW_CFA_def_cfa rsp 8
	.byte	0x90, 1			# DW_CFA_offset rip, cfa - 8
	.balign	8, 0
cie_end:
	.long	0xffffffff
	.quad	fde_end - fde_start
fde_start:
	.quad	cie			# CIE pointer
	.quad	_start
	.quad	func_end - _start
	.byte	0x4f			# DW_CFA_advance_loc 15: func + 1
	.byte	0x0e, 16		# DW_CFA_def_cfa_offset 16
	.byte	0x86, 2			# DW_CFA_offset rbp, cfa - 16
	.byte	0x44			# DW_CFA_advance_loc 4: func + 5, popped
	.byte	0x0e, 8			# DW_CFA_def_cfa_offset 8
	.byte	0xc6			# DW_CFA_restore rbp
	.balign	8, 0
fde_end:
	.section .note.GNU-stack,"",@progbits
EOF

nolibc=(-nostdlib -nostartfiles -static -no-pie -Os "${small[@]}")

"$cc" -Os -s "${small[@]}" -o pie-plt main.c
"$cc" -Os -s -o pie-default main.c
"$cc" -Os -s -fcf-protection=full -Wl,-z,ibtplt "${small[@]}" -o pie-ibt-plt main.c
"$cc" "${nolibc[@]}" -s -o exec-nostart nostart.c
"$cc" -Os -s -shared -fPIC -nostdlib "${small[@]}" -o shared-lib lib.c
"$cc" "${nolibc[@]}" -o asm-cfi cfi.s
strip -s --keep-section=.debug_frame asm-cfi

# .debug_frame only: no unwind tables, -g for the CFI; strip all but it
"$cc" "${nolibc[@]}" -fno-asynchronous-unwind-tables -fno-unwind-tables \
	-g -Wa,--gdwarf-cie-version=4 -o debug-frame-v4 nostart.c
strip -s --keep-section=.debug_frame debug-frame-v4
"$cc" "${nolibc[@]}" -fno-asynchronous-unwind-tables -fno-unwind-tables \
	-g -o debug-frame-zlib nostart.c
strip -s --keep-section=.debug_frame debug-frame-zlib
objcopy --compress-debug-sections=zlib debug-frame-zlib
"$cc" "${nolibc[@]}" -o debug-frame-dwarf64 dwarf64.s
strip -s --keep-section=.debug_frame debug-frame-dwarf64

# Over 64 KiB, compressed: 1000 functions' CFI in .debug_frame and their
# debug info, SHF_COMPRESSED (zlib-gabi) and as GNU .zdebug_* sections.
for i in $(seq 1 1000); do
	echo "int f$i(int x) { return x * $i + f$((i - 1))(x - 1); }"
done | sed '1s/f0(x - 1)/x/' >many.c
echo 'void _start(void) { for (;;) ; }' >>many.c
"$cc" "${nolibc[@]}" -fno-asynchronous-unwind-tables -fno-unwind-tables \
	-g -o debug-frame-big-zlib many.c
objcopy --compress-debug-sections=zlib-gabi debug-frame-big-zlib
"$cc" "${nolibc[@]}" -fno-asynchronous-unwind-tables -fno-unwind-tables \
	-g -o debug-frame-big-zdebug many.c
objcopy --compress-debug-sections=zlib-gnu debug-frame-big-zdebug
# A decompression bomb: .debug_frame and 65 MiB of zeros in a compressed
# .debug_macro, some 70 KiB in all (cfi.c refuses past 64 MiB inflated).
head -c $((65 << 20)) /dev/zero >zeros
objcopy --add-section .debug_macro=zeros --set-section-flags .debug_macro=readonly,debug \
	debug-frame-v4 inflate-bomb.big
objcopy --compress-debug-sections=zlib-gabi inflate-bomb.big inflate-bomb
rm -f zeros inflate-bomb.big

seeds=(pie-plt pie-default pie-ibt-plt exec-nostart shared-lib asm-cfi debug-frame-v4 debug-frame-zlib debug-frame-dwarf64)
big=(debug-frame-big-zlib debug-frame-big-zdebug inflate-bomb)
for s in "${seeds[@]}" "${big[@]}"; do
	size=$(stat -c %s "$s")
	max=16384
	[[ " ${big[*]} " == *" $s "* ]] && max=262144
	if ((size > max)); then
		echo "make-cfi-seeds: $s is $size bytes, over $((max / 1024)) KiB" >&2
		exit 1
	fi
	install -m 0644 "$s" "$out/$s"
	echo "make-cfi-seeds: $out/$s: $size bytes"
done
