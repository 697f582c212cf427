#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# k_stacks: what each tick captures.
#   - cpuburn (frame pointers, main -> a -> b -> leafN): >= 99% of its
#     user-mode samples have user stacks that reach main;
#   - readzero (read() of /dev/zero in a loop): >= 90% of its kernel-mode
#     samples carry syscall-path kernel frames AND the user frames down to
#     read_loop and main (the user side comes from the saved registers);
#   - kernel frames are the kernel's own unwinder's (ORC): the leaf is a real
#     kernel function, never a duplicate of the next frame.
# vm-kernels: 6.1 6.12-rt
# vm-timeout: 240
set -euo pipefail
# shellcheck source=../lib/kprof.sh
. "$REPO/tests/vm/lib/kprof.sh"

kload
ctl freq=999 seconds=4
"$WORKLOADS/cpuburn" 6 >/dev/null &
"$WORKLOADS/readzero" 6 >/dev/null &
profile "$OUT/p.raw"
wait
BINARIES="$WORKLOADS/cpuburn $WORKLOADS/readzero" symbolize "$OUT/p.raw.txt" >"$OUT/p.sym"

# cpuburn, user-mode samples (flags bit 0).
read -r total main < <(rawk '$sym_comm == "cpuburn" && $sym_flags % 2 == 1 {
	n++; if ($sym_user ~ /(^|;)main(;|$)/) m++ } END { print n + 0, m + 0 }' "$OUT/p.sym")
echo "cpuburn: $main of $total user-mode samples reach main"
((total >= 200)) || fail "only $total cpuburn samples"
((main * 100 >= total * 99)) || {
	rawk '$sym_comm == "cpuburn" && $sym_flags % 2 == 1 && $sym_user !~ /(^|;)main(;|$)/ && n++ < 10' "$OUT/p.sym"
	fail "$main of $total cpuburn stacks reach main, want >= 99%"
}
read -r l1 l3 < <(rawk '$sym_comm == "cpuburn" && $sym_flags % 2 == 1 {
	if ($sym_user ~ /^leaf1;b;a;main/) a++; if ($sym_user ~ /^leaf3;b;a;main/) c++ } END { print a + 0, c + 0 }' "$OUT/p.sym")
echo "cpuburn: leaf1 $l1, leaf3 $l3 samples with the full chain"
((l3 > l1 && l1 > 0)) || fail "leaf3 ($l3) should get more samples than leaf1 ($l1)"

# readzero, kernel-mode samples.
read -r total both < <(rawk '$sym_comm == "readzero" && $sym_flags % 2 == 0 {
	n++
	if ($sym_kernel ~ /(do_syscall_64|ksys_read|vfs_read)/ && $sym_user ~ /;read_loop;main(;|$)/) m++
} END { print n + 0, m + 0 }' "$OUT/p.sym")
echo "readzero: $both of $total kernel-mode samples have syscall frames and read_loop;main"
((total >= 200)) || fail "only $total readzero kernel-mode samples"
((both * 100 >= total * 90)) || {
	rawk '$sym_comm == "readzero" && $sym_flags % 2 == 0 && n++ < 10' "$OUT/p.sym"
	fail "$both of $total readzero kernel samples show kernel+user frames, want >= 90%"
}

# No kernel stack repeats its leaf (the unwinder's first frame is the
# interrupted ip, which the sampler stores itself).
dups=$(rawk '$1 == "S" && $S_nr_kernel >= 2 && $S_ip == $(S_ip + 1)' "$OUT/p.raw.txt" | wc -l)
((dups == 0)) || fail "$dups kernel stacks repeat their leaf"
unknown=$(rawk '$sym_K == "K" && $sym_kernel != "-" && $sym_kernel ~ /(^|;)\?(;|$)/' "$OUT/p.sym" | wc -l)
((unknown == 0)) || fail "$unknown kernel stacks have addresses outside kallsyms"
echo "k_stacks: ok"
