#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# u_debuginfod: names from a debuginfod server, and a silent server that
# costs a profile no more than its budget.
#   - A pure-Python loop is profiled; then /usr/lib/debug is hidden
#     (a tmpfs over it), so python3.11's debug file (python3.11-dbg) is
#     nowhere on this machine, and Debian's debuginfod serves the hidden
#     copy on loopback.  Of python3.11's frames (as --no-symbolize counts
#     them), at least 95 % are named with DEBUGINFOD_URLS pointing at it;
#     without a server, the share is printed beside it.
#   - A server that accepts connections and never answers: cprof-dump -d 4
#     still writes its profile, with the frames it could name, and one
#     line saying why the others keep their addresses; it takes at most
#     10 s more than the same profile with no server at all.
# vm-kernels: 6.1
# vm-timeout: 600
set -euo pipefail
# shellcheck source=../lib/kprof.sh
. "$REPO/tests/vm/lib/kprof.sh"
# shellcheck source=../lib/uprof.sh
. "$REPO/tests/vm/lib/uprof.sh"

# userland only: one kernel is enough
if ! command -v debuginfod >/dev/null || ! command -v debuginfod-find >/dev/null; then
	skip "no debuginfod on this host (apt-get install debuginfod)"
fi
py=$(readlink -f /usr/bin/python3)
bid=$(readelf -n "$py" | awk '/Build ID:/ { print $3 }')
[[ -f /usr/lib/debug/.build-id/${bid:0:2}/${bid:2}.debug ]] ||
	skip "no debug file of $py here (apt-get install ${py##*/}-dbg)"
ip link set lo up
tmp=$(mktemp -d)

kload
ctl freq=499 seconds=6
spawn python3 -c '
def leaf(n):
    s = 0
    for i in range(n):
        s += i * i
    return s
def mid():
    return leaf(2000)
while True:
    mid()
'
profile "$OUT/p.raw"
stop

# python3.11's frames, counted weighted by samples, in folded output:
# "python3.11+0x..." is a frame of its mapping that has no name.
base=${py##*/}
unnamed() { # FOLDED: frame occurrences of $base left unnamed
	rawk -v b="$base+0x" '{ n = split($folded_stack, f, ";"); for (i = 1; i <= n; i++) if (index(f[i], b) == 1) u += $NF } END { print u + 0 }' "$1"
}
"$CPROF_DUMP" -i "$OUT/p.raw" --no-symbolize -f folded -o "$OUT/all.folded" 2>"$OUT/all.err" ||
	fail "cprof-dump --no-symbolize failed: $(cat "$OUT/all.err")"
total=$(unnamed "$OUT/all.folded")
((total >= 100)) || fail "only $total frames of $base in the profile"

# Nowhere here: /usr/lib/debug hidden, its old contents served.
mkdir "$tmp/debug"
mount --bind /usr/lib/debug "$tmp/debug"
# the tests after this one find /usr/lib/debug as it was
trap 'umount /usr/lib/debug 2>/dev/null; umount "$tmp/debug" 2>/dev/null' EXIT
mount -t tmpfs tmpfs /usr/lib/debug
[[ ! -e /usr/lib/debug/.build-id/${bid:0:2}/${bid:2}.debug ]] || fail "/usr/lib/debug is still there"
env -u DEBUGINFOD_URLS "$CPROF_DUMP" -i "$OUT/p.raw" -f folded -o "$OUT/none.folded" 2>"$OUT/none.err" ||
	fail "cprof-dump without a server failed: $(cat "$OUT/none.err")"
none=$(unnamed "$OUT/none.folded")

port=8002
debuginfod -p "$port" -d "$tmp/db.sqlite" -F "$tmp/debug" >"$OUT/debuginfod.log" 2>&1 &
server=$!
ready=0
for ((i = 0; i < 600 * ${CPROF_SLOW:-1}; i++)); do
	if DEBUGINFOD_URLS=http://127.0.0.1:$port DEBUGINFOD_CACHE_PATH=$tmp/poll$i \
		debuginfod-find debuginfo "$py" >/dev/null 2>&1; then
		ready=1
		break
	fi
	kill -0 "$server" 2>/dev/null || break
	sleep 0.5
done
((ready)) || fail "debuginfod did not serve $py's debug file: $(tail -n 5 "$OUT/debuginfod.log")"
DEBUGINFOD_URLS=http://127.0.0.1:$port DEBUGINFOD_CACHE_PATH=$tmp/cache \
	"$CPROF_DUMP" -i "$OUT/p.raw" -f folded --debuginfod-seconds 120 -o "$OUT/served.folded" 2>"$OUT/served.err" ||
	fail "cprof-dump with the server failed: $(cat "$OUT/served.err")"
served=$(unnamed "$OUT/served.folded")
kill "$server"
wait "$server" || true
sed 's/^/  cprof-dump: /' "$OUT/served.err"
echo "$base's frames: $total; named with no debug file: $((total - none)) ($((100 * (total - none) / total)) %), from debuginfod: $((total - served)) ($((100 * (total - served) / total)) %)"
((100 * (total - served) >= 95 * total)) ||
	fail "only $((total - served)) of $total $base frames named from debuginfod, want 95 %"
((served < none)) || fail "debuginfod named nothing more ($served unnamed, $none without it)"

# A server that accepts and never answers.
python3 -c '
import socket, sys, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", 8003)); s.listen(64)
open(sys.argv[1], "w").close()
held = []
while True:
    held.append(s.accept()[0])
' "$tmp/silent.ready" &
silent=$!
for ((i = 0; i < 100; i++)); do
	[[ ! -e $tmp/silent.ready ]] || break
	sleep 0.1
done
[[ -e $tmp/silent.ready ]] || fail "the silent server did not start"

spawn python3 -c 'while True: pass'
t0=${EPOCHREALTIME/./}
env -u DEBUGINFOD_URLS "$CPROF_DUMP" -d 4 --no-unwind-tables -o "$OUT/quiet.pb.gz" 2>"$OUT/quiet.err" ||
	fail "cprof-dump -d 4 with no server failed: $(cat "$OUT/quiet.err")"
t1=${EPOCHREALTIME/./}
DEBUGINFOD_URLS=http://127.0.0.1:8003 DEBUGINFOD_CACHE_PATH=$tmp/cache-silent \
	"$CPROF_DUMP" -d 4 --no-unwind-tables -o "$OUT/silent.pb.gz" 2>"$OUT/silent.err" ||
	fail "cprof-dump -d 4 against a silent server failed: $(cat "$OUT/silent.err")"
t2=${EPOCHREALTIME/./}
stop
kill "$silent"
wait "$silent" || true
quiet_ms=$(((t1 - t0) / 1000))
silent_ms=$(((t2 - t1) / 1000))
sed 's/^/  cprof-dump: /' "$OUT/silent.err"
echo "cprof-dump -d 4: $quiet_ms ms with no server, $silent_ms ms against a silent one"
[[ -s $OUT/silent.pb.gz ]] || fail "no profile written against the silent server"
grep -q 'debuginfod: .*budget' "$OUT/silent.err" || fail "no line says the budget cut the servers off"
((silent_ms - quiet_ms <= $(slow_ms 10000))) ||
	fail "the silent server cost $((silent_ms - quiet_ms)) ms, want at most 10 s"
pp -top -nodecount=5 "$OUT/silent.pb.gz" >"$OUT/silent.top" ||
	fail "go tool pprof cannot read the profile: $(tail -n 3 "$OUT/pprof.err")"
