#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# u_browser's host half: what a person sees of the profile and the trace
# the guest half (tests/vm/tests/u_browser.sh) fetched from
# `cprof-dump --http` and wrote, in Debian's chromium, headless, on the
# host (a page is the same whichever kernel made its data, and chromium
# under TCG took 90 to 110 s a page):
#   - Google's standalone pprof -http serves the fetched profile; its flame
#     graph page (/ui/flamegraph), as chromium renders it, has frames for
#     leaf1, leaf2, leaf3 and main;
#   - speedscope (npm) opens the same profile file (its own command line
#     makes the page); chromium renders its sandwich view, whose table names
#     leaf1, leaf2 and leaf3, with leaf3 the largest;
#   - speedscope opens the timeline (the Chrome trace event format) without
#     an error: the page loads it and names its thread profiles tracepong.
# Run by tests/vm/run.sh once the VM has exited, with REPO, KVER,
# WORKLOADS and OUT (the guest half's results folder) set.
set -euo pipefail
# shellcheck source=../lib/assert.sh
. "$REPO/tests/vm/lib/assert.sh"

command -v chromium >/dev/null || skip "no chromium (apt-get install chromium, as tests/deps.sh does)"
speedscope=$WORKLOADS/speedscope/node_modules/.bin/speedscope
[[ -x $speedscope ]] || skip "speedscope was not installed from npm ($WORKLOADS/speedscope.log)"
[[ -x $WORKLOADS/pprof ]] || fail "no standalone pprof at $WORKLOADS/pprof"
[[ -s $OUT/profile.pb.gz && -s $OUT/trace.json ]] ||
	fail "the guest half left no profile.pb.gz and trace.json in $OUT"

W=$(mktemp -d)
ui=
cleanup() {
	[[ -z $ui ]] || kill "$ui" 2>/dev/null || true
	rm -rf "$W"
}
trap cleanup EXIT
export HOME=$W TMPDIR=$W

# chromium FILE URL [ARGS...]: the DOM of URL, as rendered, into FILE.
# Without WebGL (--disable-3d-apis): speedscope draws its flame charts
# with it; the page's DOM, what is checked here, is the same without (the
# canvases stay blank).  Without chromium's sandbox, which refuses to run
# as root.  In this shell's process group (--foreground), so that the
# harness's time limit ends it too.
chromium_dom() {
	local file=$1 url=$2 rc=0
	shift 2
	rm -rf "$W/chromium"
	timeout --foreground -k 5 120 chromium --headless --no-sandbox --disable-gpu \
		--disable-3d-apis --no-first-run --user-data-dir="$W/chromium" "$@" \
		--virtual-time-budget=10000 --dump-dom "$url" >"$file" 2>"$OUT/chromium.err" ||
		rc=$?
	((rc == 0)) && return 0
	# what chromium said, without its complaints about the missing D-Bus
	grep -v 'dbus/' "$OUT/chromium.err" | tail -n 8 | sed 's/^/  chromium: /' || true
	fail "chromium --dump-dom $url failed (exit status $rc)"
}

# pprof's UI on a free port (pprof given port 0 names port 0 as its
# address); a port taken meanwhile ends pprof: another port, three times
ui_start() {
	local port i
	port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	url=http://127.0.0.1:$port
	"$WORKLOADS/pprof" -http="127.0.0.1:$port" -no_browser "$OUT/profile.pb.gz" >"$OUT/pprof-http.log" 2>&1 &
	ui=$!
	for ((i = 0; i < 300; i++)); do
		curl -sf -o /dev/null "$url/ui/top" && return 0
		kill -0 "$ui" 2>/dev/null || return 1
		sleep 0.1
	done
	fail "pprof -http did not answer at $url in 30 s: $(cat "$OUT/pprof-http.log")"
}
for ((try = 0; ; try++)); do
	ui_start && break
	((try < 2)) || fail "pprof -http exited: $(cat "$OUT/pprof-http.log")"
done
t0=$(date +%s%N)
chromium_dom "$OUT/flamegraph.html" "$url/ui/flamegraph"
echo "chromium rendered pprof's flame graph in $((($(date +%s%N) - t0) / 1000000)) ms ($(wc -c <"$OUT/flamegraph.html") bytes of DOM)"
# d3-flame-graph draws one <g name="FUNCTION" class="frame"> per box.
for f in leaf1 leaf2 leaf3 main; do
	grep -q "name=\"$f\" class=\"frame\"" "$OUT/flamegraph.html" ||
		fail "the flame graph has no frame for $f"
done
echo "flame graph frames: $(grep -o 'name="[a-z0-9_]*" class="frame"' "$OUT/flamegraph.html" | sed 's/name="\([^"]*\)".*/\1/' | sort -u | grep -E '^(leaf[123]|b|a|main)$' | tr '\n' ' ')"
kill "$ui"
wait "$ui" 2>/dev/null || true
ui=

# speedscope FILE: the page speedscope's command line makes for FILE: it
# writes the page's data and opens $BROWSER with its URL, which this
# takes.
# shellcheck disable=SC2016 # $1 is the script's
printf '#!/bin/sh\necho "$1" >"%s"\n' "$W/speedscope.url" >"$W/browser"
chmod +x "$W/browser"
speedscope() {
	rm -f "$W/speedscope.url"
	BROWSER=$W/browser timeout 60 "$speedscope" "$1" >"$OUT/speedscope.log" 2>&1 ||
		fail "speedscope failed on $1: $(cat "$OUT/speedscope.log")"
	for _ in $(seq 1 100); do
		[[ -s $W/speedscope.url ]] && break
		sleep 0.1
	done
	page=$(cat "$W/speedscope.url" 2>/dev/null) || true
	[[ $page == file://*'#localProfilePath='* ]] ||
		fail "speedscope gave no page for $1: $(cat "$OUT/speedscope.log")"
}

speedscope "$OUT/profile.pb.gz"
t0=$(date +%s%N)
chromium_dom "$OUT/speedscope.html" "$page&view=sandwich" --allow-file-access-from-files
echo "chromium rendered speedscope's sandwich view in $((($(date +%s%N) - t0) / 1000000)) ms"
grep -q '<title>profile.pb.gz - speedscope' "$OUT/speedscope.html" ||
	fail "speedscope did not load the profile: $(grep -o '<title>[^<]*' "$OUT/speedscope.html")"
# One table row per function, most self time first: total, self, name.
perl -ne 'while (/<tr[^>]*><td[^>]*>([^<]*)<.*?<td[^>]*>([^<]*)<.*?<\/span>([^<]*)<\/td><\/tr>/g) {
	print "$3: total $1, self $2\n" }' "$OUT/speedscope.html" >"$OUT/speedscope.rows"
echo "speedscope's sandwich table, first rows:"
head -n 4 "$OUT/speedscope.rows" | sed 's/^/  /'
for f in leaf1 leaf2 leaf3; do
	grep -q "^$f: " "$OUT/speedscope.rows" || fail "speedscope's table does not name $f"
done
[[ $(head -n 1 "$OUT/speedscope.rows") == "leaf3: "* ]] || fail "speedscope's first row is not leaf3"

speedscope "$OUT/trace.json"
t0=$(date +%s%N)
chromium_dom "$OUT/speedscope-trace.html" "$page" --allow-file-access-from-files
echo "chromium rendered speedscope's view of a $(wc -c <"$OUT/trace.json")-byte trace in $((($(date +%s%N) - t0) / 1000000)) ms"
grep -q '<title>trace.json - speedscope' "$OUT/speedscope-trace.html" ||
	fail "speedscope did not load the trace: $(grep -o '<title>[^<]*' "$OUT/speedscope-trace.html")"
! grep -qi 'something went wrong' "$OUT/speedscope-trace.html" ||
	fail "speedscope said something went wrong with the trace"
sed 's/<title>[^<]*//' "$OUT/speedscope-trace.html" | grep -q 'tracepong' ||
	fail "speedscope's page names no tracepong thread"
echo "speedscope's profile: $(grep -o '[^<>]*tracepong[^<>]*' "$OUT/speedscope-trace.html" | grep -v ' - speedscope' | head -n 1)"
echo "u_browser (host): ok"
