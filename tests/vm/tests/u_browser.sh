#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# u_browser: what a person sees of a profile served by `cprof-dump --http`,
# in Debian's chromium, headless, in the guest:
#   - Google's standalone pprof -http fetches
#     /debug/pprof/profile?seconds=3 from cprof-dump while cpuburn runs; its
#     flame graph page (/ui/flamegraph), as chromium renders it, has frames
#     for leaf1, leaf2, leaf3 and main;
#   - speedscope (npm) opens the same profile file (its own command line
#     makes the page); chromium renders its sandwich view, whose table names
#     leaf1, leaf2 and leaf3, with leaf3 the largest;
#   - speedscope opens a timeline (cprof-dump --kind trace -p of tracepong's
#     two threads, the Chrome trace event format) without an error: the
#     page loads it and names its thread profiles tracepong.
# The pages are the same on every kernel: this runs on 6.1 only.
# vm-timeout: 600
set -euo pipefail
# shellcheck source=../lib/kprof.sh
. "$REPO/tests/vm/lib/kprof.sh"

# shellcheck source=../lib/uprof.sh
. "$REPO/tests/vm/lib/uprof.sh"

[[ $(uname -r) == 6.1.*-amd64 && $(uname -r) != *-rt-* ]] || { echo "u_browser: runs on 6.1 only"; exit 77; }
command -v chromium >/dev/null || { echo "u_browser: no chromium (apt-get install chromium, as tests/deps.sh does): skip"; exit 77; }
speedscope=$WORKLOADS/speedscope/node_modules/.bin/speedscope
[[ -x $speedscope ]] || { echo "u_browser: speedscope was not installed from npm ($WORKLOADS/speedscope.log): skip"; exit 77; }
[[ -x $WORKLOADS/pprof ]] || fail "no standalone pprof at $WORKLOADS/pprof"

# chromium FILE URL [ARGS...]: the DOM of URL, as rendered, into FILE.
# Under TCG one such run takes 20 to 30 s, a minute on a loaded host.
# Without WebGL (--disable-3d-apis): speedscope draws its flame charts
# with it, in software in chromium's GPU process, and under TCG with the
# guest's AVX that process dies of SIGSEGV in every such render (not with
# -cpu max,-avx,-avx2); chromium restarts it, and 1 render in 6 or so
# then never finished (a 240 s time limit in CI).  The page's DOM, what
# is checked here, is the same without: the canvases stay blank.
chromium_dom() {
	local file=$1 url=$2 rc=0
	shift 2
	rm -rf "$HOME/chromium"
	timeout $((240 * CPROF_SLOW)) chromium --headless --no-sandbox --disable-gpu \
		--disable-3d-apis --no-first-run --user-data-dir="$HOME/chromium" "$@" \
		--virtual-time-budget=10000 --dump-dom "$url" >"$file" 2>"$OUT/chromium.err" ||
		rc=$?
	((rc == 0)) && return 0
	# what chromium said, without its complaints about the missing D-Bus
	grep -v 'dbus/' "$OUT/chromium.err" | tail -n 8 | sed 's/^/  chromium: /' || true
	fail "chromium --dump-dom $url failed (exit status $rc)"
}

ip link set lo up
kload
# loopback, as a person tries it at their desk: pprof fetches with Host 127.0.0.1
"$CPROF_DUMP" --http 127.0.0.1:6060 --http-insecure-no-auth 2>"$OUT/server.err" &
server=$!
spawn "$WORKLOADS/cpuburn" 6000
t0=$(date +%s%N)
# pprof fetches the profile, keeps a copy in $HOME/pprof and serves its UI.
# It waits 1.5 x seconds (+5 s) by default: 9.5 s, less than a 3 s
# profile and its symbolizing take under emulation on a loaded host.
"$WORKLOADS/pprof" -http=127.0.0.1:8080 -no_browser -timeout=$((60 * CPROF_SLOW)) \
	'http://127.0.0.1:6060/debug/pprof/profile?seconds=3&freq=999' >"$OUT/pprof-http.log" 2>&1 &
ui=$!
for _ in $(seq 1 $((600 * CPROF_SLOW))); do
	curl -sf -o /dev/null http://127.0.0.1:8080/ui/top 2>/dev/null && break
	kill -0 "$ui" 2>/dev/null || fail "pprof -http exited: $(cat "$OUT/pprof-http.log")"
	sleep 0.1
done
echo "pprof -http serving after $((($(date +%s%N) - t0) / 1000000)) ms"
# the profile is taken: cpuburn would only hold a CPU the pages need
stop
t0=$(date +%s%N)
chromium_dom "$OUT/flamegraph.html" http://127.0.0.1:8080/ui/flamegraph
echo "chromium rendered pprof's flame graph in $((($(date +%s%N) - t0) / 1000000)) ms ($(wc -c <"$OUT/flamegraph.html") bytes of DOM)"
# d3-flame-graph draws one <g name="FUNCTION" class="frame"> per box.
for f in leaf1 leaf2 leaf3 main; do
	grep -q "name=\"$f\" class=\"frame\"" "$OUT/flamegraph.html" ||
		fail "the flame graph has no frame for $f"
done
echo "flame graph frames: $(grep -o 'name="[a-z0-9_]*" class="frame"' "$OUT/flamegraph.html" | sed 's/name="\([^"]*\)".*/\1/' | sort -u | grep -E '^(leaf[123]|b|a|main)$' | tr '\n' ' ')"
kill "$ui"
wait "$ui" 2>/dev/null || true

profs=("$HOME"/pprof/*.pb.gz)
prof=${profs[0]}
[[ -f $prof ]] || fail "pprof kept no copy of the profile"
cp "$prof" "$OUT/profile.pb.gz"

# speedscope's command line writes the page's data and opens $BROWSER with
# its URL: take the URL and render it, in the sandwich view (a table).
# shellcheck disable=SC2016 # $1 is the script's
printf '#!/bin/sh\necho "$1" >"%s"\n' "$OUT/speedscope.url" >"$HOME/browser"
chmod +x "$HOME/browser"
BROWSER=$HOME/browser TMPDIR=$HOME timeout 60 "$speedscope" "$OUT/profile.pb.gz" >"$OUT/speedscope.log" 2>&1 ||
	fail "speedscope failed: $(cat "$OUT/speedscope.log")"
for _ in $(seq 1 100); do
	[[ -s $OUT/speedscope.url ]] && break
	sleep 0.1
done
url=$(cat "$OUT/speedscope.url")
[[ $url == file://*'#localProfilePath='* ]] || fail "speedscope gave no page: $(cat "$OUT/speedscope.log")"
t0=$(date +%s%N)
chromium_dom "$OUT/speedscope.html" "$url&view=sandwich" --allow-file-access-from-files
echo "chromium rendered speedscope's sandwich view in $((($(date +%s%N) - t0) / 1000000)) ms"
grep -q '<title>profile.pb.gz - speedscope' "$OUT/speedscope.html" || fail "speedscope did not load the profile: $(grep -o '<title>[^<]*' "$OUT/speedscope.html")"
# One table row per function, most self time first: total, self, name.
perl -ne 'while (/<tr[^>]*><td[^>]*>([^<]*)<.*?<td[^>]*>([^<]*)<.*?<\/span>([^<]*)<\/td><\/tr>/g) {
	print "$3: total $1, self $2\n" }' "$OUT/speedscope.html" >"$OUT/speedscope.rows"
echo "speedscope's sandwich table, first rows:"
head -n 4 "$OUT/speedscope.rows" | sed 's/^/  /'
for f in leaf1 leaf2 leaf3; do
	grep -q "^$f: " "$OUT/speedscope.rows" || fail "speedscope's table does not name $f"
done
[[ $(head -n 1 "$OUT/speedscope.rows") == "leaf3: "* ]] || fail "speedscope's first row is not leaf3"

# A timeline of tracepong's two threads, in speedscope's time order view:
# 256 KiB of it at most (a second of the ping-pong is some 20 MB of it,
# which chromium under TCG on a loaded host took past its 240 s to
# render)
spawn taskset -c 0 "$WORKLOADS/tracepong" 600
"$CPROF_DUMP" --kind trace -d 1 --trace-bytes 262144 -p "${bg[-1]}" \
	-o "$OUT/trace.json" 2>"$OUT/trace.err" ||
	fail "cprof-dump --kind trace failed: $(cat "$OUT/trace.err")"
stop
rm -f "$OUT/speedscope.url"
BROWSER=$HOME/browser TMPDIR=$HOME timeout 60 "$speedscope" "$OUT/trace.json" >"$OUT/speedscope-trace.log" 2>&1 ||
	fail "speedscope failed on the trace: $(cat "$OUT/speedscope-trace.log")"
for _ in $(seq 1 100); do
	[[ -s $OUT/speedscope.url ]] && break
	sleep 0.1
done
url=$(cat "$OUT/speedscope.url")
[[ $url == file://*'#localProfilePath='* ]] || fail "speedscope gave no page for the trace: $(cat "$OUT/speedscope-trace.log")"
t0=$(date +%s%N)
chromium_dom "$OUT/speedscope-trace.html" "$url" --allow-file-access-from-files
echo "chromium rendered speedscope's view of a $(wc -c <"$OUT/trace.json")-byte trace in $((($(date +%s%N) - t0) / 1000000)) ms"
grep -q '<title>trace.json - speedscope' "$OUT/speedscope-trace.html" ||
	fail "speedscope did not load the trace: $(grep -o '<title>[^<]*' "$OUT/speedscope-trace.html")"
! grep -qi 'something went wrong' "$OUT/speedscope-trace.html" ||
	fail "speedscope said something went wrong with the trace"
sed 's/<title>[^<]*//' "$OUT/speedscope-trace.html" | grep -q 'tracepong' ||
	fail "speedscope's page names no tracepong thread"
echo "speedscope's profile: $(grep -o '[^<>]*tracepong[^<>]*' "$OUT/speedscope-trace.html" | grep -v ' - speedscope' | head -n 1)"
kill -TERM "$server"
wait "$server" || fail "the server exited with $?"
echo "u_browser: ok"
