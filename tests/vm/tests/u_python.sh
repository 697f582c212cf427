#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# u_python: the Python functions of a running CPython (Debian's python3.11,
# no flags, no restart) in cprof's stacks, named function (file:line).
# pywork.py runs work_a, work_b and work_c 1:2:4 under spread(), a
# recursive function (recurse, 8 deep, 3 parts of 10), a thread that calls
# zlib (squeeze) and an in-process sampler of its main thread's Python
# stack (sys._current_frames(), every 2 ms: what an outside sampler such as
# py-spy reads); each part times itself: the truth.
#   1. cprof-dump --load-unwind-tables gives the module the interpreter's
#      table and layout; a pid= profile is read by cat; pywork is stopped
#      and has exited before cprof-dump reads the stream: each function
#      named from the stream's own code records, its share of the four
#      within 3 points of the truth, and of the in-process sampler's or
#      as close to the truth as that sampler's (its own error); its
#      samples' lines within the function's loop (pprof -raw); zlib's C
#      code above squeeze's frame and _PyEval_EvalFrameDefault below it;
#      the main thread's stacks still reach the process's entry below the
#      Python frames; the module's python_* counters;
#   2. cprof-dump -d (the whole machine) while a short pywork starts and
#      exits during the profile: its table comes with its mapping, its
#      functions named;
#   3. 64 KiB buffers and a reader that stalls while pyfresh.py makes new
#      code objects: the code records the ticks leave out for room are
#      counted (python_codes_skipped), the stream holds every record
#      python_codes counts, and the functions are named from later ticks'.
# py-spy is not installed here (PyPI is out of reach, Debian has no
# package); Debian's austin (1.0.1) does not read 3.11: the in-process
# sampler stands in for them.
# The Python walk is the module's, the same code on every kernel: make
# check runs this on 6.1 (U_PYTHON_ANY=1: on any kernel); make
# check-debug on its kernel.
# vm-timeout: 900
set -euo pipefail
# shellcheck source=../lib/kprof.sh
. "$REPO/tests/vm/lib/kprof.sh"
# shellcheck source=../lib/uprof.sh
. "$REPO/tests/vm/lib/uprof.sh"

[[ -n ${U_PYTHON_ANY:-} || $KVER == *-cprof-debug || ($KVER == 6.1.* && $KVER != *-rt-*) ]] ||
	skip "runs on 6.1 and the debug kernel (U_PYTHON_ANY=1: on any kernel)"
PY=/usr/bin/python3.11
[[ -x $PY ]] || fail "no $PY (Debian's python3.11)"
WORK=$REPO/tests/workloads/pywork.py
SECS=${U_PYTHON_SECS:-8}

kload
LOCAL=$(mktemp -d)
trap 'rm -rf "$LOCAL"' EXIT
# field OUTFILE KIND NAME: pywork's figure NAME of its "pywork KIND" line
field() {
	awk -v k="$2" -v n="$3" '$1 == "pywork" && $2 == k {
		for (i = 3; i <= NF; i++) { split($i, kv, "="); if (kv[1] == n) print kv[2] }
	}' "$1"
}
# counts FOLDED: "a b c r squeeze zlib_above eval_below main entry setup"
# of python3.11's samples: holding each function's frame, squeeze's in its
# loop (not building its data first: setup, a generator into bytes(),
# which takes longer the slower the host) with a zlib C frame leafward of
# it and _PyEval_EvalFrameDefault rootward, and the main thread's (a work
# or recurse frame) that reach the entry
counts() {
	awk '{
		n = $NF; st = $0; sub(/ [0-9]+$/, "", st)
		k = split(st, f, ";")
		if (f[1] != "python3.11") next
		a = b = c = r = s = 0
		for (i = 1; i <= k; i++) {
			if (f[i] == "work_a") a = i; else if (f[i] == "work_b") b = i
			else if (f[i] == "work_c") c = i; else if (f[i] == "recurse") r = i
			else if (f[i] == "squeeze") s = i
		}
		ca += a ? n : 0; cb += b ? n : 0; cc += c ? n : 0; cr += r ? n : 0
		u = 0
		for (i = s + 1; s && i <= k; i++) if (f[i] ~ /^(squeeze\.<locals>\.<genexpr>|bytes_new)/) u = 1
		if (u) cu += n
		if (s && !u) {
			cs += n; z = e = 0
			for (i = s + 1; i <= k; i++) if (f[i] ~ /^(deflate|zlib_|compress|_tr_|longest_match|fill_window)/) z = 1
			for (i = 1; i < s; i++) if (f[i] == "_PyEval_EvalFrameDefault") e = 1
			if (z && e) cz += n
		}
		if (a || b || c || r) {
			cm += n
			if (f[2] ~ /^(_start|__libc_start_call_main|__libc_start_main)/) ce += n
		}
	} END { print ca + 0, cb + 0, cc + 0, cr + 0, cs + 0, cz + 0, cm + 0, ce + 0, cu + 0 }' "$1"
}
# close4 "a b c r" "ta tb tc tr" ["truth"]: each share (of the four) within
# 3 points; with the truth's shares, a share that is not passes if it is
# as close to the truth as the other's (a sampler's own error is not
# cprof's)
close4() {
	awk -v x="$1" -v y="$2" -v z="${3:-}" 'BEGIN {
		split(x, c, " "); split(y, t, " "); nz = split(z, u, " ")
		s = c[1] + c[2] + c[3] + c[4]; if (!s) exit 1
		ok = 1
		for (i = 1; i <= 4; i++) {
			p = 100 * c[i] / s; d = p - 100 * t[i]
			printf "%s%.1f (%.1f)", (i > 1 ? " : " : ""), p, 100 * t[i]
			if (d * d <= 9) continue
			if (nz == 4 && (p - 100 * u[i]) ^ 2 <= (100 * t[i] - 100 * u[i]) ^ 2) continue
			ok = 0
		}
		exit !ok
	}'
}

# --- 1. a pid= profile read by cat; pywork gone before cprof-dump runs
"$PY" "$WORK" 600 >"$LOCAL/long.out" 2>&1 &
py=$!
wait_started "$LOCAL/long.out" 'pywork started'
# the profile from squeeze's loop on, not its data's making: on a loaded
# host that took the whole profile
wait_started "$LOCAL/long.out" 'pywork squeezing' 120
"$CPROF_DUMP" --load-unwind-tables -p "$py" 2>"$OUT/load.err" ||
	fail "cprof-dump --load-unwind-tables failed: $(cat "$OUT/load.err")"
sed 's/^/  cprof-dump: /' "$OUT/load.err"
grep -qi 'python\|cpython' "$OUT/load.err" || fail "the loader does not say it found the interpreter"
w0=$(stat_of python_walks)
f0=$(stat_of python_frames)
i0=$(stat_of python_incomplete)
c0=$(stat_of python_codes)
ctl freq=499 seconds="$SECS" pid="$py"
profile "$OUT/long.raw"
kill -TERM "$py"
wait "$py" || fail "pywork failed: $(tail -n 5 "$LOCAL/long.out")"
cat "$LOCAL/long.out"
walks=$(($(stat_of python_walks) - w0))
frames=$(($(stat_of python_frames) - f0))
incomplete=$(($(stat_of python_incomplete) - i0))
codes=$(($(stat_of python_codes) - c0))
echo "module: $walks Python walks, $frames frames, $incomplete incomplete, $codes code records"
((walks > 0 && frames > walks)) || fail "the module walked no Python frames"
((incomplete * 10 <= walks)) || fail "$incomplete of $walks Python walks incomplete"
((codes >= 6)) || fail "only $codes code records"
"$CPROF_DUMP" -i "$OUT/long.raw" -f folded -o "$OUT/long.folded" 2>"$OUT/long.err" ||
	fail "cprof-dump failed: $(cat "$OUT/long.err")"
"$CPROF_DUMP" -i "$OUT/long.raw" -o "$OUT/long.pb.gz" 2>/dev/null ||
	fail "cprof-dump (pprof) failed"
sed 's/^/  cprof-dump: /' "$OUT/long.err"
awk '{ print $NF "\t" $0 }' "$OUT/long.folded" | sort -rn >"$OUT/long.sorted"
head -n 6 "$OUT/long.sorted" | sed 's/^\([0-9]*\)\t.*;_PyEval_EvalFrameDefault;/  \1 ...;_PyEval_EvalFrameDefault;/' | cut -c1-300
read -r a b c r s z m e u < <(counts "$OUT/long.folded")
truth="$(field "$LOCAL/long.out" truth work_a) $(field "$LOCAL/long.out" truth work_b) $(field "$LOCAL/long.out" truth work_c) $(field "$LOCAL/long.out" truth recurse)"
sampler="$(field "$LOCAL/long.out" sampler work_a) $(field "$LOCAL/long.out" sampler work_b) $(field "$LOCAL/long.out" sampler work_c) $(field "$LOCAL/long.out" sampler recurse)"
vs_truth=$(close4 "$a $b $c $r" "$truth") || ok_truth=no
vs_sampler=$(close4 "$a $b $c $r" "$sampler" "$truth") || ok_sampler=no
echo "work_a : work_b : work_c : recurse, % of the four ($((a + b + c + r)) samples): cprof (truth) $vs_truth"
echo "  cprof (in-process sampler) $vs_sampler"
echo "squeeze: $s samples in its loop ($u more building its data), $z with zlib's C code above it and _PyEval_EvalFrameDefault below"
echo "main thread: $m samples, $e reach the process's entry"
((a + b + c + r >= 200)) || fail "only $((a + b + c + r)) samples name the four functions"
[[ ${ok_truth:-yes} == yes ]] || fail "the shares are not within 3 points of the truth"
[[ ${ok_sampler:-yes} == yes ]] || fail "the shares are not within 3 points of the in-process sampler's, nor as close to the truth as its"
((s >= 20)) || fail "only $s samples of squeeze in its loop"
((z * 10 >= s * 8)) || fail "only $z of $s squeeze samples show zlib's C frames above it and the interpreter's below"
((e * 100 >= m * 95)) || fail "only $e of $m main-thread samples reach the process's entry"
# lines: the samples with each function innermost (pprof -lines, flat) at
# its loop's lines (the for line or its body)
pp -lines -top -nodecount=1000 -unit=ms "$OUT/long.pb.gz" >"$OUT/long.lines" ||
	fail "go tool pprof -lines failed"
for fn in work_a work_b work_c recurse; do
	want=$(field "$LOCAL/long.out" lines "$fn")
	read -r inloop total < <(awk -v fn="$fn" -v w="$want" '$6 == fn && $7 ~ /\/tests\/workloads\/pywork\.py:[0-9]+$/ {
		v = $1; sub(/ms$/, "", v); n = split($7, p, ":"); t += v
		if (p[n] == w || p[n] == w + 1) in_loop += v
	} END { printf "%d %d\n", in_loop, t }' "$OUT/long.lines")
	echo "$fn: ${inloop} of ${total} ms innermost at pywork.py:$want or :$((want + 1))"
	((total > 0 && inloop * 10 >= total * 9)) || fail "$fn's samples are not at its loop's lines"
done

# --- 2. cprof-dump -d while a short pywork starts and exits in the profile
# (-p 0: the whole machine, as without -p; phase 1 left pid= set in ctl)
"$CPROF_DUMP" -d $((SECS + 4)) -F 499 -p 0 -f folded -o "$OUT/short.folded" 2>"$OUT/short.err" &
dump=$!
# started once the profile runs (cprof-dump loads every program's tables
# first, which takes seconds on a slow guest)
wait_profiling $((600 * ${CPROF_SLOW:-1})) || fail "cprof-dump -d started no profile: $(cat "$OUT/short.err")"
# what the module skipped meanwhile, printed to read a failure by
# (stack copies and code records find no room once the reader lags)
read -r k0 ks0 s0 l0 <<<"$(stat_of python_codes) $(stat_of python_codes_skipped) $(stat_of ustack_skipped) $(stat_of lost)"
"$PY" "$WORK" 3 --no-zlib >"$LOCAL/short.out" 2>&1 &
short=$!
wait "$dump" || fail "cprof-dump -d failed: $(cat "$OUT/short.err")"
wait "$short" || fail "the short pywork failed: $(cat "$LOCAL/short.out")"
grep -q '^pywork truth' "$LOCAL/short.out" || fail "the short pywork did not finish: $(cat "$LOCAL/short.out")"
sed 's/^/  cprof-dump -d: /' "$OUT/short.err"
echo "  the module meanwhile: $(($(stat_of python_codes) - k0)) code records ($(($(stat_of python_codes_skipped) - ks0)) skipped for room), $(($(stat_of ustack_skipped) - s0)) stack copies skipped for room, $(($(stat_of lost) - l0)) samples lost"
read -r a b c r _ _ m e _ < <(counts "$OUT/short.folded")
echo "a pywork started and gone within a -d profile: work_a $a, work_b $b, work_c $c, recurse $r samples"
((c > 0 && a + b + c + r >= 50)) || fail "the short-lived program's functions are not named ($a $b $c $r)"

# --- 3. a reader that stalls: code records left out for room are counted
rmmod cprof || fail "rmmod cprof failed"
kload buffer_kb=64
"$PY" "$REPO/tests/workloads/pyfresh.py" $((20 * ${CPROF_SLOW:-1})) >"$LOCAL/fresh.out" 2>&1 &
fresh=$!
wait_started "$LOCAL/fresh.out" 'pyfresh started'
"$CPROF_DUMP" --load-unwind-tables -p "$fresh" 2>"$OUT/fresh-load.err" ||
	fail "cprof-dump --load-unwind-tables failed: $(cat "$OUT/fresh-load.err")"
read -r k0 ks0 <<<"$(stat_of python_codes) $(stat_of python_codes_skipped)"
ctl freq=999 seconds=6 pid="$fresh"
read_stalled 3 >"$OUT/fresh.raw" || fail "the stalled reader failed"
codes=$(($(stat_of python_codes) - k0))
skipped=$(($(stat_of python_codes_skipped) - ks0))
kill -TERM "$fresh" 2>/dev/null || true
wait "$fresh" || true
"$WORKLOADS/streamtext" <"$OUT/fresh.raw" >"$OUT/fresh.raw.txt" || fail "fresh.raw is not a well-formed stream"
inraw=$(rawk '$1 == "C" { n++ } END { print n + 0 }' "$OUT/fresh.raw.txt")
echo "a stalled reader, 64 KiB buffers: $codes code records ($inraw in the stream), $skipped left out for room, $(stat_of lost) samples lost"
((skipped > 0)) || fail "no code record left out for room with 64 KiB buffers and a reader stalled for 3 s"
((inraw == codes)) || fail "the stream holds $inraw code records, python_codes counted $codes"
"$CPROF_DUMP" -i "$OUT/fresh.raw" -f folded -o "$OUT/fresh.folded" 2>"$OUT/fresh.err" ||
	fail "cprof-dump failed: $(cat "$OUT/fresh.err")"
sed 's/^/  cprof-dump: /' "$OUT/fresh.err"
named=$(awk '$0 ~ /(^|;)fresh_[0-9]+(;| )/ { n += $NF } END { print n + 0 }' "$OUT/fresh.folded")
echo "samples in a named fresh_N function: $named"
((named > 0)) || fail "no sample names a fresh_N function"
