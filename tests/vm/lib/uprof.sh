# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Helpers for the userland end-to-end VM tests (u_*.sh), sourced after
# kprof.sh: go tool pprof in a private, writable home, and workloads that
# run until stopped (on a loaded TCG host, starting the reader alone can
# take seconds, so a workload timed to outlast the profile may not).

command -v go >/dev/null || { echo "${0##*/}: no go on this host: skip"; exit 77; }
[[ -x $CPROF_DUMP ]] || fail "no cprof-dump at $CPROF_DUMP"
HOME=$(mktemp -d)
export HOME GOCACHE=$HOME/go-cache GOFLAGS='' GOTOOLCHAIN=local

pp() { go tool pprof "$@" 2>>"$OUT/pprof.err"; }

bg=()
spawn() { "$@" >/dev/null & bg+=($!); }
stop() { kill "${bg[@]}" 2>/dev/null || true; wait "${bg[@]}" 2>/dev/null || true; bg=(); }

# traces_tsv FILE: go tool pprof -traces output as one line per sample:
# value, comm, pid, tid, cpu and the stack (frames leaf first, ";"-joined).
traces_tsv() {
	awk '
	function flush() { if (n) printf "%s\t%s\t%s\t%s\t%s\t%s\n", v, l["comm"], l["pid"], l["tid"], l["cpu"], st; n = 0; st = ""; delete l }
	/^-----------\+/ { flush(); on = 1; next }
	!on { next }
	!n && /^ +[a-z]+: / { k = $1; sub(":$", "", k); l[k] = $2; next }
	!n && /^ +[0-9]+ +[^ ]/ { v = $1; st = $0; sub(/^ +[0-9]+ +/, "", st); n = 1; next }
	n && /^ +[^ ]/ { f = $0; sub(/^ +/, "", f); st = st ";" f }
	END { flush() }' "$1"
}
