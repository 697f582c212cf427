#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# u_browser: what a person sees of a profile served by `cprof-dump --http`.
# In the guest, the data: /debug/pprof/profile?seconds=3 fetched over
# loopback (as a person tries it at their desk) while cpuburn runs, and
# a timeline of tracepong's two threads (cprof-dump --kind trace -p, the
# Chrome trace event format, 256 KiB at most), into OUT.  Then, on the
# host, tests/vm/host/u_browser.sh renders them in Debian's chromium:
# Google's pprof -http's flame graph, speedscope's sandwich view of the
# profile and its view of the timeline (chromium under TCG took 90 to
# 110 s a page; the pages are the same whichever kernel made the data).
# The pages are the same on every kernel: this runs on 6.1 only.
# vm-timeout: 300
set -euo pipefail
# shellcheck source=../lib/kprof.sh
. "$REPO/tests/vm/lib/kprof.sh"

# shellcheck source=../lib/uprof.sh
. "$REPO/tests/vm/lib/uprof.sh"

[[ $(uname -r) == 6.1.*-amd64 && $(uname -r) != *-rt-* ]] || { echo "u_browser: runs on 6.1 only"; exit 77; }

ip link set lo up
kload
"$CPROF_DUMP" --http 127.0.0.1:6060 --http-insecure-no-auth 2>"$OUT/server.err" &
server=$!
for _ in $(seq 1 $((100 * CPROF_SLOW))); do
	curl -sf -o /dev/null http://127.0.0.1:6060/debug/pprof/ && break
	kill -0 "$server" 2>/dev/null || fail "cprof-dump --http exited: $(cat "$OUT/server.err")"
	sleep 0.1
done
spawn "$WORKLOADS/cpuburn" 6000
code=$(curl -s -o "$OUT/profile.pb.gz" -w '%{http_code}' \
	'http://127.0.0.1:6060/debug/pprof/profile?seconds=3&freq=999') || true
[[ $code == 200 && -s $OUT/profile.pb.gz ]] ||
	fail "/debug/pprof/profile?seconds=3: $code: $(tail -n 3 "$OUT/server.err")"
stop
echo "the profile: $(wc -c <"$OUT/profile.pb.gz") bytes"
kill -TERM "$server"
wait "$server" || fail "the server exited with $?"

# 256 KiB of timeline at most: a second of the ping-pong is some 20 MB of
# it, which chromium under TCG on a loaded host took past 240 s to render
spawn taskset -c 0 "$WORKLOADS/tracepong" 600
"$CPROF_DUMP" --kind trace -d 1 --trace-bytes 262144 -p "${bg[-1]}" \
	-o "$OUT/trace.json" 2>"$OUT/trace.err" ||
	fail "cprof-dump --kind trace failed: $(cat "$OUT/trace.err")"
stop
echo "the timeline: $(wc -c <"$OUT/trace.json") bytes"
echo "u_browser: ok (its pages: the host half)"
