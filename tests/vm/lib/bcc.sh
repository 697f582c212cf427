# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# BCC's offcputime beside cprof, in the off-CPU benchmarks (b_offcpu,
# b_rtstall).  Sourced by a test:
#   bcc_find: BCC is offcputime-bpfcc's path, or empty if bpfcc-tools is
#     not installed (debugfs mounted for it if so);
#   with_bcc CMD...: CMD run while `offcputime -f` records every task
#     (once its programs are compiled, seconds, and attached), its folded
#     output in $OUT/bcc.folded.

bcc_find() {
	BCC=$(command -v offcputime-bpfcc || true)
	[[ -z $BCC ]] || mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug
}

with_bcc() {
	local bcc i
	"$BCC" -f 120 >"$OUT/bcc.folded" 2>"$OUT/bcc.err" &
	bcc=$!
	for ((i = 0; i < 1200; i++)); do
		find "/proc/$bcc/fd" -lname '*bpf-prog*' 2>/dev/null | grep -q . && break
		sleep 0.1
	done
	sleep 1
	"$@"
	kill -INT "$bcc"
	wait "$bcc" || true
}
