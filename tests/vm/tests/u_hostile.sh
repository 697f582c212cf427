#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# u_hostile: `cprof-dump --http` as a root service meets hostile users,
# clients and files, and each case ends in a refusal or a clear line, the
# server answering the next authorized request:
#   - a client without the token: 401;
#   - 70 connections from one address that send half a request: those past
#     8 are refused at once, the rest closed by the idle timeout, and a
#     client from another address gets its profile meanwhile;
#   - headless Chromium opening a page of another origin with
#     <img src=".../profile?seconds=20"> and fetch(): 403 (Sec-Fetch-Site),
#     no profile runs; a request naming the server by a DNS name (rebinding)
#     gets 403 on an unauthenticated server;
#   - clients that vanish before the profile starts (while new programs'
#     tables load) and right after it ends (while it is symbolized): the
#     request is abandoned (one line) and the next one works;
#   - programs whose path becomes a FIFO once they exit: the table loader
#     says "not a regular file" instead of blocking, and SIGTERM still ends
#     the server at once;
#   - a library whose compressed debug sections inflate to 512 MiB, mapped
#     by a running process: the server's peak RSS stays far below it;
#   - SIGTERM during a profile: the listening socket is closed at once, a
#     request on a connection already open gets 503, the profile's client
#     its profile.
# vm-timeout: 600
set -euo pipefail
# shellcheck source=../lib/kprof.sh
. "$REPO/tests/vm/lib/kprof.sh"

# shellcheck source=../lib/uprof.sh
. "$REPO/tests/vm/lib/uprof.sh"

ip link set lo up
ip addr add 127.0.0.2/8 dev lo 2>/dev/null || true
kload
head -c 32 /dev/urandom | base64 >"$OUT/token"
chmod 600 "$OUT/token"
auth=(-H "Authorization: Bearer $(cat "$OUT/token")")
URL=http://127.0.0.1:6060/debug/pprof

"$CPROF_DUMP" --http 127.0.0.1:6060 --http-token-file "$OUT/token" 2>"$OUT/server.err" &
server=$!
for _ in $(seq 1 100); do
	grep -q serving "$OUT/server.err" && break
	sleep 0.1
done

# get NAME QUERY [CURL ARGS]: the status of an authorized profile request.
get() {
	local name=$1 query=$2
	shift 2
	curl -s "${auth[@]}" -o "$OUT/$name" -w '%{http_code}' "$@" "$URL/profile$query"
}

code=$(curl -s -o "$OUT/noauth.txt" -w '%{http_code}' "$URL/profile?seconds=1")
echo "no token: $code $(cat "$OUT/noauth.txt")"
[[ $code == 401 ]] || fail "a client without the token got $code"

# Half-sent requests from 127.0.0.1; a scraper from 127.0.0.2.  Those the
# server refuses at once are closed: writing to them is EPIPE, not death.
trap '' PIPE
t0=$(date +%s%N)
fds=()
for _ in $(seq 1 70); do
	exec {fd}<>/dev/tcp/127.0.0.1/6060
	printf 'GET /debug/pprof/profile HTTP/1.1\r\nHost: 127.0.0.1\r\n' >&"$fd" 2>/dev/null || true
	fds+=("$fd")
done
code=$(get other.pb.gz '?seconds=1' --interface 127.0.0.2)
echo "70 half-sent requests from 127.0.0.1; from 127.0.0.2 meanwhile: $code after $((($(date +%s%N) - t0) / 1000000)) ms"
[[ $code == 200 ]] || fail "a client from another address got $code during the flood"
open=0
for fd in "${fds[@]}"; do
	# a closed connection reads end of file (or a reset: its request was
	# never read) at once; one still open times out
	rc=0
	timeout $((15 * CPROF_SLOW)) cat <&"$fd" >/dev/null 2>&1 || rc=$?
	((rc != 124)) || open=$((open + 1))
	exec {fd}<&-
done
ms=$((($(date +%s%N) - t0) / 1000000))
echo "all 70 closed by the server after $ms ms ($open still open)"
((open == 0)) || fail "$open half-sent connections were still open"
grep -q 'connection limit' "$OUT/server.err" || fail "no connection was refused by the per-address limit"
code=$(get after-flood.pb.gz '?seconds=1')
[[ $code == 200 ]] || fail "the request after the flood got $code"

# A vanishing client, before profiling starts: new programs' tables load.
for i in 1 2 3; do
	cp "$WORKLOADS/cpuburn" "$OUT/fresh$i"
	spawn "$OUT/fresh$i" 60
done
curl -s "${auth[@]}" -o /dev/null "$URL/profile?seconds=5" &
client=$!
# once its request is in (it is sent as soon as it connects)
for _ in $(seq 1 100); do
	ss -Htn state established '( dport = :6060 )' | grep -q . && break
	sleep 0.05
done
sleep 0.2
kill -9 "$client"
wait "$client" 2>/dev/null || true
for _ in $(seq 1 100); do
	grep -q 'went away' "$OUT/server.err" && break
	sleep 0.1
done
line=$(grep 'went away' "$OUT/server.err" | tail -n 1 || true)
echo "vanished 0.2 s after connecting, new programs' tables loading: $line"
[[ -n $line ]] || fail "the server did not notice the client leaving"
code=$(get next1.pb.gz '?seconds=1')
[[ $code == 200 ]] || fail "the request after it got $code"

# ... and at the end of the profile, while it is symbolized.
before=$(grep -c 'went away' "$OUT/server.err" || true)
curl -s "${auth[@]}" -o /dev/null "$URL/profile?seconds=2" &
client=$!
wait_profiling || fail "no profile ran"
while [[ -e /proc/$client ]] && grep -q '^profiling: 1' /proc/cprof/stats 2>/dev/null; do
	sleep 0.05
done
kill -9 "$client" 2>/dev/null || true
wait "$client" 2>/dev/null || true
sleep 1
after=$(grep -c 'went away' "$OUT/server.err" || true)
last=$(tail -n 1 "$OUT/server.err")
echo "vanished as the profile ended: $last"
((after > before)) || [[ $last == *": 200: "* ]] ||
	fail "neither abandoned nor answered: $last"
code=$(get next2.pb.gz '?seconds=1')
[[ $code == 200 ]] || fail "the request after it got $code"
stop

# Programs whose path becomes a FIFO when they exit.
mkdir -p "$OUT/fifo"
curl -s "${auth[@]}" -o "$OUT/fifo.pb.gz" -w '%{http_code}' "$URL/profile?seconds=6" >"$OUT/fifo.code" &
client=$!
wait_profiling || fail "no profile ran"
for i in $(seq 1 8); do
	cp "$WORKLOADS/cpuburn" "$OUT/fifo/prog$i"
	"$OUT/fifo/prog$i" 0.3 >/dev/null
	rm "$OUT/fifo/prog$i"
	mkfifo "$OUT/fifo/prog$i"
done
wait "$client"
echo "programs turned FIFOs: the profile $(cat "$OUT/fifo.code"); $(grep -c 'not a regular file' "$OUT/server.err" || true) refusals"
grep 'not a regular file' "$OUT/server.err" | head -n 2 | sed 's/^/  server: /'
[[ $(cat "$OUT/fifo.code") == 200 ]] || fail "the profile with FIFOs got $(cat "$OUT/fifo.code")"
grep -q 'not a regular file' "$OUT/server.err" || fail "the table loader met no FIFO (the race was not hit)"
code=$(get next3.pb.gz '?seconds=1')
[[ $code == 200 ]] || fail "the request after the FIFOs got $code"

# A library that decompresses to 512 MiB, mapped by a running process.
printf 'int bomb(int x) { return x + 1; }\n' >"$OUT/bomb.c"
cc -g -fno-asynchronous-unwind-tables -fpic -shared -o "$OUT/bomb0.so" "$OUT/bomb.c"
head -c $((512 << 20)) /dev/zero >"$OUT/zeros"
objcopy --add-section .debug_macro="$OUT/zeros" --set-section-flags .debug_macro=readonly,debug \
	"$OUT/bomb0.so" "$OUT/bomb1.so"
rm -f "$OUT/zeros"
objcopy --compress-debug-sections=zlib-gabi "$OUT/bomb1.so" "$OUT/bomb.so"
rm -f "$OUT/bomb1.so"
LD_PRELOAD=$OUT/bomb.so spawn "$WORKLOADS/cpuburn" 60
code=$(get bomb.pb.gz '?seconds=2')
hwm=$(awk '/^VmHWM/ { print $2 }' /proc/"$server"/status)
echo "a $(stat -c %s "$OUT/bomb.so")-byte library inflating to 512 MiB: $code, server peak RSS $hwm kB"
[[ $code == 200 ]] || fail "the profile with the bomb got $code"
((hwm < 200 * 1024)) || fail "the server's peak RSS is $hwm kB"
stop

# SIGTERM: listener closed at once, 503 on an open connection.
curl -s "${auth[@]}" -o "$OUT/term1.pb.gz" -w '%{http_code}\n' \
	"$URL/profile?seconds=30" -o "$OUT/term2.txt" "$URL/" >"$OUT/term.codes" &
client=$!
wait_profiling || fail "no profile ran"
kill -TERM "$server"
sleep 0.5
code=$(curl -s -m 5 "${auth[@]}" -o /dev/null -w '%{http_code}' "$URL/" || true)
echo "a new connection 0.5 s after SIGTERM: ${code:-none} (000: refused)"
[[ $code == 000 ]] || fail "a new connection after SIGTERM got $code"
wait "$client" || true
wait "$server" || fail "the server exited with $? on SIGTERM"
mapfile -t codes <"$OUT/term.codes"
echo "the profile's client: ${codes[0]}; the next request on its connection: ${codes[1]:-none} $(cat "$OUT/term2.txt" 2>/dev/null)"
[[ ${codes[0]} == 200 ]] || fail "the profile at SIGTERM got ${codes[0]}"
[[ ${codes[1]:-} == 503 ]] || fail "a request on the open connection got ${codes[1]:-nothing}"

# A browser: another origin's page, and a name (rebinding), on a server
# without authentication.
"$CPROF_DUMP" --http 127.0.0.1:6062 --http-insecure-no-auth 2>"$OUT/insecure.err" &
server=$!
mkdir -p "$OUT/www"
cat >"$OUT/www/evil.html" <<'HTML'
<html><body>
<img src="http://127.0.0.1:6062/debug/pprof/profile?seconds=20">
<script>fetch("http://127.0.0.1:6062/debug/pprof/profile?seconds=20", {mode: "no-cors"});</script>
</body></html>
HTML
busybox httpd -f -p 127.0.0.1:8000 -h "$OUT/www" &
www=$!
sleep 0.5
timeout $((240 * CPROF_SLOW)) chromium --headless --no-sandbox --disable-gpu --no-first-run \
	--user-data-dir="$HOME/chromium" --virtual-time-budget=5000 --dump-dom \
	http://127.0.0.1:8000/evil.html >"$OUT/evil.dom" 2>>"$OUT/chromium.err" ||
	fail "chromium failed: $(tail -n 3 "$OUT/chromium.err")"
kill "$www"
refused=$(grep -c 'Sec-Fetch-Site' "$OUT/insecure.err" || true)
echo "chromium on another origin's page: $refused requests refused"
grep 'Sec-Fetch-Site' "$OUT/insecure.err" | head -n 2 | sed 's/^/  server: /'
((refused >= 1)) || fail "chromium's cross-site requests were not refused: $(cat "$OUT/insecure.err")"
grep -q ': 200: ' "$OUT/insecure.err" && fail "a cross-site request ran a profile"
code=$(curl -s -H 'Host: rebound.example:6062' -o "$OUT/rebind.txt" -w '%{http_code}' http://127.0.0.1:6062/debug/pprof/)
echo "Host rebound.example: $code $(cat "$OUT/rebind.txt")"
[[ $code == 403 ]] || fail "a request naming the server rebound.example got $code"
code=$(curl -s -o /dev/null -w '%{http_code}' 'http://127.0.0.1:6062/debug/pprof/profile?seconds=1')
[[ $code == 200 ]] || fail "the unauthenticated server's own request got $code"
kill -TERM "$server"
wait "$server" || fail "the insecure server exited with $?"
echo "u_hostile: ok"
