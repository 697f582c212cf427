#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# k_budget: one event's user memory reads have a hard bound (ctl
# accesses=).  A wall profile (ticks and recorded switches, stack copies
# on: cprof-dump -d loads tables, so young programs' stacks are copied)
# while three programs start in it: deepswitch (two threads blocking 127
# C frames deep, no frame pointers), a python3.11 spinning 120 Python
# calls deep, and cpuburn (a 5-frame stack).
#   1. accesses=24: the most user accesses a tick and a recorded switch
#      made (stats accesses_max, offcpu_accesses_max) is at most 24; walks
#      were cut (budget_truncated, offcpu_budget_truncated) and copies or
#      code records left out (budget_skipped); cprof-dump shows no
#      deepswitch stack at its depth (100 frames or more, down to its
#      loop) complete, and every python3.11 stack with Python
#      frames (the ticks') with a [truncated] root, and cpuburn's complete (at
#      most 1 % [truncated]: its exec's kernel stacks; >= 95 % past its
#      start in ld.so reach main: not its exit);
#   2. the default budget (256): the same maxima at most 256, cpuburn's
#      stacks complete, deepswitch's still marked (cut at the depth).
# Runs on 6.1 and 6.12-rt (the stock kernel and the RT one the bound is
# for; make check's time).
# vm-kernels: 6.1 6.12-rt
# vm-timeout: 300
set -euo pipefail
# shellcheck source=../lib/kprof.sh
. "$REPO/tests/vm/lib/kprof.sh"

PY=/usr/bin/python3.11
[[ -x $PY ]] || fail "no $PY (Debian's python3.11)"
SECS=3
kload
DEF=$(awk -F= '$1 == "accesses" { print $2 }' /proc/cprof/ctl)
[[ $DEF == 256 ]] || fail "the default accesses= is '$DEF', not 256"
LOCAL=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$LOCAL"' EXIT

# share FOLDED COMM PATTERN [EXCEPT]: "N M": COMM's samples (time, in a
# wall profile) whose stack matches PATTERN and not EXCEPT, and of them
# the ones with a [truncated] frame
share() {
	awk -v c="$2" -v p="$3" -v x="${4:-^$}" '{
		n = $NF; st = $0; sub(/ [0-9]+$/, "", st)
		split(st, f, ";")
		if (f[1] != c || st !~ p || st ~ x) next
		all += n
		if (st ~ /(^|;)\[truncated\](;|$)/) cut += n
	} END { printf "%.0f %.0f\n", all, cut }' "$1"
}

# run NAME ACCESSES: the profile, its stats deltas in BT OT SK, its maxima
# in AM OM
run() {
	local name=$1 bt0 ot0 sk0 dump work
	ctl accesses="$2"
	bt0=$(stat_of budget_truncated)
	ot0=$(stat_of offcpu_budget_truncated)
	sk0=$(stat_of budget_skipped)
	# ended by stop=1 once the three have run SECS seconds, however slow
	# their start
	"$CPROF_DUMP" -d 600 --kind wall -f folded -o "$OUT/$name.folded" \
		2>"$OUT/$name.err" &
	dump=$!
	wait_profiling || fail "the profile did not start"
	"$WORKLOADS/deepswitch" 600 127 >"$LOCAL/ds.out" &
	work=($!)
	"$WORKLOADS/cpuburn" 600 >/dev/null &
	work+=($!)
	"$PY" -S "$REPO/tests/vm/lib/pydeep.py" 600 >"$LOCAL/py.out" &
	work+=($!)
	wait_started "$LOCAL/py.out" "deep started"
	# the Python walk needs python3.11's table, and deepswitch's switches
	# (no stack copies) its own, which the profile loads as it samples
	# them (after libc's and the others' on a cold cache): the window
	# starts once both are in the module
	wait_table "$PY" || fail "python3.11's table was not loaded"
	wait_table "$WORKLOADS/deepswitch" || fail "deepswitch's table was not loaded"
	sleep "$SECS"
	ctl stop=1
	wait "$dump" || fail "cprof-dump failed: $(tail -n 3 "$OUT/$name.err")"
	kill "${work[@]}"
	wait "${work[@]}" || true
	BT=$(($(stat_of budget_truncated) - bt0))
	OT=$(($(stat_of offcpu_budget_truncated) - ot0))
	SK=$(($(stat_of budget_skipped) - sk0))
	AM=$(stat_of accesses_max)
	OM=$(stat_of offcpu_accesses_max)
	read -r DS DSC < <(share "$OUT/$name.folded" deepswitch 'descend;descend;descend')
	# shown complete though 127 deep: 100 descend frames down to its
	# loop (bounce) and no [truncated]; a stack taken while deepswitch
	# still went down to its depth is complete and may be 100 deep (on
	# the debug kernel, a tick in the page fault that grew its stack at
	# 119 frames), but does not reach the loop
	read -r DF _ < <(share "$OUT/$name.folded" deepswitch "$(printf 'descend;%.0s' {1..100})(descend;)*bounce(;|$)" '(^|;)\[truncated\](;|$)')
	# the Python walk's: with Python frames (ticks: a switch has none)
	read -r PA PAC < <(share "$OUT/$name.folded" python3.11 ';rec;rec;')
	# past its start in ld.so
	read -r CB CBC < <(share "$OUT/$name.folded" cpuburn '.' ';_dl_start;')
	read -r CM _ < <(share "$OUT/$name.folded" cpuburn ';main;')
	echo "accesses=$2: most a tick $AM, a switch $OM; cut ticks +$BT, switches +$OT, skipped +$SK;" \
		"longest tick $(stat_of handler_ns_max) ns, switch $(stat_of offcpu_ns_max) ns (since load);" \
		"deepswitch $DSC of $DS deep samples [truncated] ($DF 100 deep complete), python3.11 $PAC of $PA with Python frames," \
		"cpuburn $CBC of $CB ($CM reach main)"
	((DS >= 20 && PA >= 20 && CB >= 20)) || fail "too few samples: deepswitch $DS, python3.11 $PA, cpuburn $CB"
	((DF == 0)) || fail "$DF deepswitch stacks 100 or more frames deep shown complete"
	# (its exec's kernel stacks are deeper than a recorded switch's 32
	# frames under KASAN: 0.2 % of its samples on the debug kernel)
	((CBC * 100 <= CB)) || fail "$CBC of $CB cpuburn stacks shown [truncated]"
	((CM * 100 >= CB * 95)) || fail "only $CM of $CB cpuburn stacks reach main"
}

run low 24
((AM > 0 && AM <= 24)) || fail "a tick made $AM user accesses, the budget is 24"
((OM > 0 && OM <= 24)) || fail "a recorded switch made $OM user accesses, the budget is 24"
((BT > 0 && OT > 0)) || fail "no walk was cut for the budget (ticks $BT, switches $OT)"
((SK > 0)) || fail "no copy or code record was left out for the budget"
((PAC == PA)) || fail "$((PA - PAC)) python3.11 stacks 120 calls deep shown complete with 24 accesses"

run default 256
((AM <= 256 && OM <= 256)) || fail "most accesses $AM (tick), $OM (switch): over the default 256"
echo "k_budget: ok"
