#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# u_hostile: `cprof-dump --http` as a root service meets hostile users,
# clients and files, and each case ends in a refusal or a clear line, the
# server answering the next authorized request:
#   - a client without the token: 401;
#   - 100 or more connections from one address, opened faster than the 20
#     a second (40 at once) it may open, that send half a request: each is
#     refused at once or closed 5 s after it connected, as the server's
#     line of counts every 10 s says, and a client from another address
#     gets its profile meanwhile;
#   - a client that sends a header every 3 s (never idle): closed 5 s after
#     it connected, its request not whole, and counted;
#   - a request naming the server by a DNS name (rebinding) gets 403 on
#     an unauthenticated server, its own request a profile (a browser on
#     another origin's page: tests/host/check-http.sh, on the host, where
#     chromium starts in seconds rather than a minute);
#   - clients that vanish as the profile starts (while new programs'
#     tables load) and right after it ends (while it is symbolized): the
#     request is abandoned (one line) and the next one works;
#   - programs whose path becomes a FIFO, or a symlink to a device, once
#     they exit: the symbolizer (and the table loader, when it reads one
#     after it exited) says "not a regular file" instead of opening it,
#     and the next request works;
#   - a library whose compressed debug section inflates to 512 MiB, run
#     by a process (its samples in it): the table loader and the symbolizer
#     leave its DWARF alone, its function is named from its symbols, and
#     the server's peak RSS stays far below 512 MiB;
#   - SIGTERM during a profile: the listening socket is closed at once, a
#     request sent after it on a connection accepted before gets 503, the
#     profile's client its profile.
# vm-timeout: 600
set -euo pipefail
# userland only: the same on every kernel
[[ $(uname -r) == 6.1.*-amd64 && $(uname -r) != *-rt-* ]] || { echo "u_hostile: runs on 6.1 only"; exit 77; }
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

# guard_counts FROM: the connections the server's lines of counts (one
# every 10 s, when it has any) after line FROM of its log say were closed
# without a whole request 5 s after connecting, closed for newer ones, and
# refused at once (too many a second from one address): "LATE CROWDED FAST".
guard_counts() {
	awk -v from="$1" '
	function num(re) { return match(s, re) ? substr(s, RSTART + 2) + 0 : 0 }
	NR > from && /: in the last [0-9]+ s: / {
		s = $0
		sub(/.*: in the last [0-9]+ s: /, ", ", s)
		late += num(", [0-9]+ connections? closed without")
		crowded += num(", [0-9]+ closed for newer")
		fast += num(", [0-9]+ refused")
	}
	END { print late + 0, crowded + 0, fast + 0 }' "$OUT/server.err"
}

# Half-sent requests from 127.0.0.1, more than an address may open (40 at
# once, 20 a second) in the time even a slow guest takes to open them; a
# scraper from 127.0.0.2.  Those the server refuses at once are closed:
# writing to them is EPIPE, not death.
flood=$((60 + 40 * CPROF_SLOW))
logged=$(wc -l <"$OUT/server.err")
trap '' PIPE
t0=$(date +%s%N)
fds=()
for _ in $(seq 1 "$flood"); do
	exec {fd}<>/dev/tcp/127.0.0.1/6060
	printf 'GET /debug/pprof/profile HTTP/1.1\r\nHost: 127.0.0.1\r\n' 2>/dev/null 1>&"$fd" || true
	fds+=("$fd")
done
opened=$((($(date +%s%N) - t0) / 1000000))
code=$(get other.pb.gz '?seconds=1' --interface 127.0.0.2)
echo "$flood half-sent requests from 127.0.0.1 in $opened ms; from 127.0.0.2 meanwhile: $code after $((($(date +%s%N) - t0) / 1000000)) ms"
[[ $code == 200 ]] || fail "a client from another address got $code during the flood"
open=0
for fd in "${fds[@]}"; do
	# a closed connection reads end of file (or a reset: its request was
	# never read) at once; one still open times out.  bash's read, not a
	# program a connection: starting one can take 0.3 s in a loaded guest
	rc=0
	while ((rc == 0)); do
		read -r -t $((15 * CPROF_SLOW)) -u "$fd" _ 2>/dev/null || rc=$?
	done
	((rc <= 128)) || open=$((open + 1))
	exec {fd}<&-
done
ms=$((($(date +%s%N) - t0) / 1000000))
echo "all $flood closed by the server after $ms ms ($open still open)"
((open == 0)) || fail "$open half-sent connections were still open"
# Each is counted in a line within 10 s of its closing.
for _ in $(seq 1 $((200 * CPROF_SLOW))); do
	read -r late crowded fast < <(guard_counts "$logged")
	((late + crowded + fast < flood)) || break
	sleep 0.1
done
{ grep ': in the last [0-9]* s: ' "$OUT/server.err" || true; } | sed 's/^/  server: /'
echo "the server counted $fast refused at once, $late closed 5 s after connecting, $crowded closed for newer ones (of $flood opened in $opened ms)"
((fast > 0)) || fail "none of $flood connections opened in $opened ms was refused by the per-address rate"
((late + crowded + fast == flood)) ||
	fail "the server counted $((late + crowded + fast)) of the $flood connections"
code=$(get after-flood.pb.gz '?seconds=1')
[[ $code == 200 ]] || fail "the request after the flood got $code"

# A client that sends its request one header every 3 s: never idle for
# the idle timeout, it is closed 5 s after it connected, its request not
# whole (and authenticated) by then.
logged=$(wc -l <"$OUT/server.err")
exec {fd}<>/dev/tcp/127.0.0.1/6060
t0=$(date +%s%N)
printf 'GET /debug/pprof/profile HTTP/1.1\r\nHost: 127.0.0.1\r\n' 1>&"$fd"
closed=
for i in $(seq 1 $((10 * CPROF_SLOW))); do
	sleep 3
	printf 'X-Slow: %d\r\n' "$i" 2>/dev/null 1>&"$fd" || { closed=1; break; }
	# end of file (or a reset) at once once the server closed it
	rc=0
	timeout 0.2 cat <&"$fd" >/dev/null 2>&1 || rc=$?
	((rc == 124)) || { closed=1; break; }
done
exec {fd}<&-
ms=$((($(date +%s%N) - t0) / 1000000))
echo "a request trickled a header every 3 s: $([[ -n $closed ]] && echo closed || echo still open) after $ms ms"
[[ -n $closed ]] || fail "a trickling request kept its connection for $ms ms"
((ms < 20000 * CPROF_SLOW)) || fail "the trickling request was closed only after $ms ms"
for _ in $(seq 1 $((200 * CPROF_SLOW))); do
	read -r late _ _ < <(guard_counts "$logged")
	((late == 0)) || break
	sleep 0.1
done
((late == 1)) || fail "the server counted $late connections closed without a whole request, not the trickling one"

# A vanishing client, as its profile starts: a new program's tables load
# (a copy of python3.11, a new file to compile).
tmp=$(mktemp -d)
cp /usr/bin/python3.11 "$tmp/fresh-python"
spawn "$tmp/fresh-python" -c 'import time; time.sleep(120)'
sleep 1
curl -s "${auth[@]}" -o /dev/null "$URL/profile?seconds=5" &
client=$!
# once its request is in (it is sent as soon as it connects)
for _ in $(seq 1 100); do
	ss -Htn state established '( dport = :6060 )' | grep -q . && break
	sleep 0.05
done
sleep 0.1
kill -9 "$client"
wait "$client" 2>/dev/null || true
for _ in $(seq 1 100); do
	grep -q 'went away' "$OUT/server.err" && break
	sleep 0.1
done
line=$(grep 'went away' "$OUT/server.err" | tail -n 1 || true)
echo "vanished 0.1 s after connecting, a new program's tables loading: $line"
[[ -n $line ]] || fail "the server did not notice the client leaving"
code=$(get next1.pb.gz '?seconds=1')
[[ $code == 200 ]] || fail "the request after it got $code"

# ... and at the end of the profile, while it is symbolized.
before=$(grep -c 'went away' "$OUT/server.err" || true)
curl -s "${auth[@]}" -o /dev/null "$URL/profile?seconds=2" &
client=$!
wait_profiling || fail "no profile ran"
while [[ -e /proc/$client && $(stat_of profiling) == 1 ]]; do
	sleep 0.02
done
kill -9 "$client" 2>/dev/null || true
wait "$client" 2>/dev/null || true
sleep 1
after=$(grep -c 'went away' "$OUT/server.err" || true)
last=$(grep 'GET /debug/pprof/profile' "$OUT/server.err" | tail -n 1)
echo "vanished as the profile ended: $last"
((after > before)) || [[ $last == *": 200: "* ]] ||
	fail "neither abandoned nor answered: $last"
code=$(get next2.pb.gz '?seconds=1')
[[ $code == 200 ]] || fail "the request after it got $code"
stop

# Programs whose path becomes a FIFO, or a symlink to a device, when they
# exit.  Each has a build ID of its own: copies sharing one are symbolized
# from whichever of them the symbolizer read first, and a path it never
# opens is never refused.
mkdir -p "$tmp/fifo" "$tmp/dev"
progs=("$tmp"/fifo/prog{1,2,3,4} "$tmp"/dev/prog{1,2})
id=$(readelf -n "$WORKLOADS/cpuburn" | awk '/Build ID:/ { print $3 }')
[[ -n $id ]] || fail "cpuburn has no build ID"
python3 -c 'import sys
b, i = open(sys.argv[1], "rb").read(), bytes.fromhex(sys.argv[2])
assert b.count(i) == 1
for n, p in enumerate(sys.argv[3:]):
    open(p, "wb").write(b.replace(i, i[:-1] + bytes([i[-1] ^ (n + 1)])))' \
	"$WORKLOADS/cpuburn" "$id" "${progs[@]}" || fail "cannot give cpuburn's copies build IDs of their own"
chmod +x "${progs[@]}"
curl -s "${auth[@]}" -o "$OUT/fifo.pb.gz" -w '%{http_code}' "$URL/profile?seconds=8" >"$OUT/fifo.code" &
client=$!
wait_profiling || fail "no profile ran"
# a second each, all at once (a loaded guest has no time for them one
# after the other within the profile); then their paths are replaced
running=()
for p in "${progs[@]}"; do
	"$p" 1 >/dev/null &
	running+=($!)
done
wait "${running[@]}"
for p in "${progs[@]}"; do
	rm "$p"
	case $p in
	*/fifo/*) mkfifo "$p" ;;
	*) ln -s /dev/zero "$p" ;;
	esac
done
wait "$client"
loader=$(grep -c 'unwind tables: .* is not a regular file now' "$OUT/server.err" || true)
symbolizer=$({ grep -o '[0-9]* in [^ ]*/fifo/prog[0-9]* (not a regular file)' "$OUT/server.err" || true; } | wc -l)
echo "programs turned FIFOs: the profile $(cat "$OUT/fifo.code"); the symbolizer refused $symbolizer of them, the table loader $loader (it reads a program while it runs, when it can)"
{ grep 'not a regular file' "$OUT/server.err" || true; } | head -n 2 | sed 's/^/  server: /'
[[ $(cat "$OUT/fifo.code") == 200 ]] || fail "the profile with FIFOs got $(cat "$OUT/fifo.code")"
((symbolizer + loader > 0)) || fail "no FIFO was met (the programs had no samples?)"
devs=$({ grep -o "[0-9]* in [^ ]*/dev/prog[0-9]* (not a regular file)\|unwind tables: [^ ]*/dev/prog[0-9]* (pid [0-9]*) is not a regular file" "$OUT/server.err" || true; } | wc -l)
echo "programs turned symlinks to /dev/zero: refused $devs times"
((devs > 0)) || fail "no symlink to a device was met (the programs had no samples?)"
code=$(get next3.pb.gz '?seconds=1')
[[ $code == 200 ]] || fail "the request after the FIFOs got $code"

# A library that decompresses to 512 MiB, mapped by a running process: a
# GNU-compressed .zdebug_macro ("ZLIB", the size, a zlib stream of zeros).
# It spins in its constructor, so the profile's samples are in it and the
# symbolizer reads it too.
printf 'static volatile unsigned long n;\n__attribute__((constructor)) static void bomb_spin(void) { for (;;) n++; }\n' >"$tmp/bomb.c"
cc -g -fno-asynchronous-unwind-tables -fpic -shared -o "$tmp/bomb0.so" "$tmp/bomb.c"
# (tests/vm/lib/zbomb.py: made from 1 MiB)
python3 -B -c 'import sys; sys.path.insert(0, sys.argv[1]); import zbomb
n = 512 << 20
sys.stdout.buffer.write(b"ZLIB" + n.to_bytes(8, "big") + zbomb.zeros(n))' "$REPO/tests/vm/lib" >"$tmp/bomb.z"
objcopy --add-section .zdebug_macro="$tmp/bomb.z" --set-section-flags .zdebug_macro=readonly,debug \
	"$tmp/bomb0.so" "$OUT/bomb.so"
LD_PRELOAD=$OUT/bomb.so spawn sleep 120
code=$(get bomb.pb.gz '?seconds=2')
hwm=$(awk '/^VmHWM/ { print $2 }' /proc/"$server"/status)
echo "a $(stat -c %s "$OUT/bomb.so")-byte library whose .zdebug_macro inflates to 512 MiB: $code, server peak RSS $hwm kB"
[[ $code == 200 ]] || fail "the profile with the bomb got $code"
pp -top "$OUT/bomb.pb.gz" >"$OUT/bomb.top" || fail "the profile with the bomb is not whole"
grep -q 'bomb_spin' "$OUT/bomb.top" || fail "the bomb's function is not in the profile: $(head -n 12 "$OUT/bomb.top")"
((hwm < 200 * 1024)) || fail "the server's peak RSS is $hwm kB"
stop

# SIGTERM: listener closed at once, 503 on a connection accepted before.
exec {ka}<>/dev/tcp/127.0.0.1/6060
request() {
	printf 'GET /debug/pprof/ HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer %s\r\n\r\n' \
		"$(cat "$OUT/token")" 1>&"$ka" || true
}
curl -s "${auth[@]}" -o "$OUT/term1.pb.gz" -w '%{http_code}\n' \
	"$URL/profile?seconds=30" >"$OUT/term.codes" &
client=$!
wait_profiling || fail "no profile ran"
kill -TERM "$server"
sleep 0.5
request
timeout 15 cat <&"$ka" >"$OUT/keepalive.txt" || true
exec {ka}<&-
status=$(grep -ao '^HTTP/1.1 [0-9]*' "$OUT/keepalive.txt" || true)
echo "a connection accepted before SIGTERM, its request sent after: ${status:-no answer}"
[[ $status == "HTTP/1.1 503" ]] || fail "a request on a connection accepted before SIGTERM got ${status:-nothing}"
code=$(curl -s -m 5 "${auth[@]}" -o /dev/null -w '%{http_code}' "$URL/" || true)
echo "a new connection 0.5 s after SIGTERM: ${code:-none} (000: refused)"
[[ $code == 000 ]] || fail "a new connection after SIGTERM got $code"
wait "$client" || true
wait "$server" || fail "the server exited with $? on SIGTERM"
echo "the profile being served at SIGTERM: $(cat "$OUT/term.codes")"
[[ $(cat "$OUT/term.codes") == 200 ]] || fail "the profile at SIGTERM got $(cat "$OUT/term.codes")"

# A name (rebinding), on a server without authentication.
"$CPROF_DUMP" --http 127.0.0.1:6062 --http-insecure-no-auth 2>"$OUT/insecure.err" &
server=$!
for _ in $(seq 1 100); do
	curl -sf -o /dev/null http://127.0.0.1:6062/debug/pprof/ && break
	sleep 0.1
done
code=$(curl -s -H 'Host: rebound.example:6062' -o "$OUT/rebind.txt" -w '%{http_code}' http://127.0.0.1:6062/debug/pprof/)
echo "Host rebound.example: $code $(cat "$OUT/rebind.txt")"
[[ $code == 403 ]] || fail "a request naming the server rebound.example got $code"
code=$(curl -s -o /dev/null -w '%{http_code}' 'http://127.0.0.1:6062/debug/pprof/profile?seconds=1')
[[ $code == 200 ]] || fail "the unauthenticated server's own request got $code"
kill -TERM "$server"
wait "$server" || fail "the insecure server exited with $?"
echo "u_hostile: ok"
