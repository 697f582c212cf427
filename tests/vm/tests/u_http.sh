#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# u_http: `cprof-dump --http` serves Go's /debug/pprof endpoints to
# authenticated clients, over HTTPS with client certificates (the server
# as docs/serving.md runs it):
#   - the index page lists the profile endpoint;
#   - Google's pprof with -tls_cert -tls_key -tls_ca (go tool pprof of Go
#     1.19 ignores those flags) on /debug/pprof/profile?seconds=3 while
#     cpuburn runs gets a symbolized profile with cpuburn's 1:2:4 leaf
#     split (each within 5 points), and -raw reads it; the answer has Go's
#     headers;
#   - a client without a certificate, or with one of another CA, gets 403;
#     the same server with a bearer token (curl sending exactly what a
#     scrape config's "authorization" sends) answers 200, 401 without it,
#     and 200 to a client that half-closes after its request;
#   - nosymbol=1: no cpuburn function names, and `PPROF_BINARY_PATH=DIR go tool pprof
#     -symbolize=local` names the leaves from the binary;
#   - debug=1: Go's legacy text form, naming the leaves;
#   - a second request while one runs gets 409 and one line, and the first
#     completes with a whole profile;
#   - a client killed mid-profile stops it: the module is free at once and
#     the next request works;
#   - 9 bad values: each 400, its line naming the parameter; an unknown
#     parameter is ignored (200), and HEAD runs no profile;
#   - the answer comes within 8 s of seconds (printed: a symbolized 1 s
#     profile, and the 20 of the loop below, unsymbolized);
#   - 20 short profiles in a loop: the server's open files do not grow
#     from the 5th to the 20th, nor its RSS by 256 KiB (a leak of 17 KiB
#     a request would show; one of 29 KiB once did; at 5721274 the 5th to
#     the 40th grew it by 0 kB);
#   - SIGTERM during a profile: its client gets what was collected, whole
#     and saying it stopped early; the server exits with status 0.
# Runs on 6.1 only: the server is userland, the same on every kernel.
# vm-kernels: 6.1
# vm-timeout: 600
set -euo pipefail
# shellcheck source=../lib/kprof.sh
. "$REPO/tests/vm/lib/kprof.sh"

# shellcheck source=../lib/uprof.sh
. "$REPO/tests/vm/lib/uprof.sh"

ip link set lo up
URL=https://localhost:6060/debug/pprof
pki=$OUT/pki
mkdir -p "$pki"
# P-256 keys: RSA's take 15 s to make under emulation (tests/host's
# check-http.sh serves RSA keys)
ec=(-newkey ec -pkeyopt ec_paramgen_curve:prime256v1)
(
	cd "$pki"
	openssl req -x509 "${ec[@]}" -nodes -keyout ca.key -out ca.pem -days 2 -subj "/CN=cprof test CA"
	openssl req "${ec[@]}" -nodes -keyout server.key -out server.csr -subj "/CN=localhost"
	printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\n' >ext
	openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out server.pem -days 2 -extfile ext
	openssl req "${ec[@]}" -nodes -keyout client.key -out client.csr -subj "/CN=scraper"
	openssl x509 -req -in client.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out client.pem -days 2
	openssl req -x509 "${ec[@]}" -nodes -keyout other.key -out other.pem -days 2 -subj "/CN=stranger"
) >"$OUT/openssl.log" 2>&1 || fail "openssl: $(tail -n 3 "$OUT/openssl.log")"
tls=(--cacert "$pki/ca.pem" --cert "$pki/client.pem" --key "$pki/client.key")
pptls=(-tls_cert "$pki/client.pem" -tls_key "$pki/client.key" -tls_ca "$pki/ca.pem")
kload
"$CPROF_DUMP" --http 127.0.0.1:6060 --http-tls-cert "$pki/server.pem" --http-tls-key "$pki/server.key" \
	--http-client-ca "$pki/ca.pem" 2>"$OUT/server.err" &
server=$!
for _ in $(seq 1 100); do
	curl -sf "${tls[@]}" "$URL/" >"$OUT/index.html" 2>/dev/null && break
	sleep 0.2
done
grep -q "href='profile?debug=1'" "$OUT/index.html" || fail "no index page: $(cat "$OUT/server.err")"
echo "index: $(grep -c . "$OUT/index.html") lines, lists profile"

# leaves_by_address RAW: "leaf1 leaf2 leaf3 b" for pprof -raw's output of
# an unsymbolized profile: the samples with each leaf on the stack, each
# address read through cpuburn's own mapping (/proc/PID/maps, not the
# profile's) and nm; b: the leaf samples whose next frame is in b.
leaves_by_address() {
	local map bias
	map=$(awk '$2 ~ /x/ && $6 ~ /\/cpuburn$/ { print $1, $3 }' "/proc/$burn/maps")
	bias=$(readelf -lW "$WORKLOADS/cpuburn" | awk '$1 == "LOAD" && / E / { print $2, $3 }')
	[[ -n $map && -n $bias ]] || fail "no text mapping of cpuburn ($burn): $(cat "/proc/$burn/maps")"
	nm -S --defined-only "$WORKLOADS/cpuburn" | rawk -v map="$map" -v bias="$bias" '
	function hex(s,   i, v) {
		v = 0; s = tolower(s); sub(/^0x/, "", s)
		for (i = 1; i <= length(s); i++)
			v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
		return v
	}
	# the function of cpuburn holding address a, "" outside its text
	function fn(a,   v, f) {
		if (a < start || a >= end) return ""
		v = a - start + off
		for (f in lo) if (v >= lo[f] && v < hi[f]) return f
		return "?"
	}
	BEGIN {
		split(map, m, /[- ]/); start = hex(m[1]); end = hex(m[2])
		split(bias, b, " "); off = hex(m[3]) - hex(b[1]) + hex(b[2])
	}
	FNR == NR { if ($4 ~ /^(leaf[123]|b)$/) { lo[$4] = hex($1); hi[$4] = lo[$4] + hex($2) } next }
	/^Samples:/ { on = 1; next }
	/^Locations/ { on = 0; locs = 1; next }
	/^Mappings/ { locs = 0 }
	on && $pp_sample_ns ~ /^[0-9]+:$/ {
		ns++; cnt[ns] = $pp_sample_count; ids[ns] = ""
		for (i = pp_sample_loc; i <= NF; i++) ids[ns] = ids[ns] " " $i
		next
	}
	locs && $pp_loc_id ~ /^[0-9]+:$/ { sub(":", "", $pp_loc_id); addr[$pp_loc_id] = hex($pp_loc_address) }
	END {
		for (s = 1; s <= ns; s++) {
			n = split(ids[s], id, " "); k = 0
			for (i = 1; i <= n; i++) if ((f = fn(addr[id[i]])) != "") u[++k] = f
			if (k && u[1] ~ /^leaf/) { c[u[1]] += cnt[s]; if (k > 1 && u[2] == "b") cb += cnt[s] }
		}
		print c["leaf1"] + 0, c["leaf2"] + 0, c["leaf3"] + 0, cb + 0
	}' - "$1"
}

# get NAME QUERY: the answer's body in $OUT/NAME, headers in $OUT/NAME.h;
# prints the status.
get() {
	curl -s "${tls[@]}" -D "$OUT/$1.h" -o "$OUT/$1" -w '%{http_code}' "$URL/profile$2"
}

# Without a certificate of the CA: refused, one line.
for who in none other; do
	case $who in
	none) code=$(curl -s --cacert "$pki/ca.pem" -o "$OUT/refused.txt" -w '%{http_code}' "$URL/profile?seconds=1") ;;
	other) code=$(curl -s --cacert "$pki/ca.pem" --cert "$pki/other.pem" --key "$pki/other.key" \
		-o "$OUT/refused.txt" -w '%{http_code}' "$URL/profile?seconds=1") ;;
	esac
	echo "client certificate $who: $code $(cat "$OUT/refused.txt")"
	[[ $code == 403 ]] || fail "a client with certificate '$who' got $code"
done

spawn "$WORKLOADS/cpuburn" 6000
burn=${bg[-1]}
# pprof fetches the profile itself (given more than its 1.5 x seconds + 5 s
# to wait: a 3 s profile and its symbolizing take longer in a loaded guest).
"$WORKLOADS/pprof" "${pptls[@]}" -timeout=$((60 * CPROF_SLOW)) -top -sample_index=samples -nodecount=100000 -nodefraction=0 "$URL/profile?seconds=3&freq=999" >"$OUT/top.txt" ||
	fail "pprof on the URL failed: $(tail -n 3 "$OUT/pprof.err")"
read -r l1 l2 l3 b a m < <(leaves "$OUT/top.txt")
echo "pprof -tls_cert -tls_key -tls_ca $URL/profile?seconds=3&freq=999: leaf1 $l1, leaf2 $l2, leaf3 $l3, b $b, a $a, main $m"
split_ok "$l1" "$l2" "$l3" || fail "split $l1:$l2:$l3 is not 1:2:4"
((m >= (l1 + l2 + l3) * 9 / 10)) || fail "main is in $m of $((l1 + l2 + l3)) stacks"
code=$(get p.pb.gz '?seconds=2')
[[ $code == 200 ]] || fail "seconds=2: status $code: $(cat "$OUT/p.pb.gz")"
grep -qi '^Content-Type: application/octet-stream' "$OUT/p.pb.gz.h" || fail "no Go Content-Type: $(cat "$OUT/p.pb.gz.h")"
grep -qi '^Content-Disposition: attachment; filename="profile"' "$OUT/p.pb.gz.h" || fail "no Go Content-Disposition"
pp -raw "$OUT/p.pb.gz" >"$OUT/p.raw.txt" || fail "go tool pprof -raw failed: $(tail -n 3 "$OUT/pprof.err")"
grep -q '^PeriodType: cpu nanoseconds' "$OUT/p.raw.txt" || fail "-raw: no cpu period type"

# nosymbol=1: names come from the client's copy of the binary.
code=$(get ns.pb.gz '?seconds=3&freq=999&nosymbol=1')
[[ $code == 200 ]] || fail "nosymbol=1: status $code"
pp -raw -symbolize=none "$OUT/ns.pb.gz" >"$OUT/ns.raw.txt" || fail "-raw of the nosymbol profile failed"
if grep -Eq '(^| )(leaf[123]|main) ' "$OUT/ns.raw.txt"; then
	fail "nosymbol=1 profile names cpuburn functions"
fi
PPROF_BINARY_PATH=$WORKLOADS pp -top -symbolize=local -sample_index=samples -nodecount=100000 -nodefraction=0 "$OUT/ns.pb.gz" >"$OUT/ns.top.txt" ||
	fail "go tool pprof -symbolize=local failed"
read -r l1 l2 l3 _ < <(leaves "$OUT/ns.top.txt")
read -r t1 t2 t3 tb < <(leaves_by_address "$OUT/ns.raw.txt")
echo "nosymbol=1, symbolized by go tool pprof: leaf1 $l1, leaf2 $l2, leaf3 $l3; by cpuburn's maps and nm: $t1, $t2, $t3, b under $tb"
# The names the client gives these samples, against the names their
# addresses have in the running process: equal, every leaf sampled and
# called from b.  Not the window's split: how the guest's CPU time falls
# in 3 s moves with a loaded host (the split above checks cprof's; here
# once 485:672:1740, the window before 237:465:939).
((t1 > 0 && t2 > 0 && t3 > 0)) || fail "nosymbol: cpuburn's leaves are not all in the profile's addresses: $t1:$t2:$t3"
[[ "$l1 $l2 $l3" == "$t1 $t2 $t3" ]] ||
	fail "nosymbol: the client names leaves $l1:$l2:$l3, their addresses in cpuburn's mapping are $t1:$t2:$t3"
((tb == t1 + t2 + t3)) || fail "nosymbol: $((t1 + t2 + t3 - tb)) leaf samples' caller is not b"

# debug=1: text.
code=$(get d.txt '?seconds=1&debug=1')
[[ $code == 200 ]] || fail "debug=1: status $code"
head -n 1 "$OUT/d.txt" | grep -Eq '^cpu profile: [0-9]+ samples' || fail "debug=1 header: $(head -n 1 "$OUT/d.txt")"
grep -Pq '^#\t0x[0-9a-f]+\tleaf3' "$OUT/d.txt" || fail "debug=1 does not name leaf3"
grep -Eq '^[0-9]+ [0-9]+ @( 0x[0-9a-f]+)+$' "$OUT/d.txt" || fail "debug=1 has no stack lines"
echo "debug=1: $(head -n 1 "$OUT/d.txt")"

# One at a time.
get first.pb.gz '?seconds=4' >"$OUT/first.code" &
first=$!
sleep 1.5
code=$(get second.txt '?seconds=1')
wait "$first"
echo "while one runs: $code $(cat "$OUT/second.txt"); the first: $(cat "$OUT/first.code")"
[[ $code == 409 ]] || fail "a second request got $code"
[[ $(wc -l <"$OUT/second.txt") == 1 ]] || fail "the refusal is not one line"
[[ $(cat "$OUT/first.code") == 200 ]] || fail "the first request got $(cat "$OUT/first.code")"
pp -top "$OUT/first.pb.gz" >/dev/null || fail "the first profile is not whole"

# A client that goes away.
curl -s "${tls[@]}" -o /dev/null "$URL/profile?seconds=60" &
client=$!
wait_profiling
t0=$(date +%s%N)
kill -9 "$client"
wait "$client" 2>/dev/null || true
for _ in $(seq 1 100); do
	grep -q 'went away' "$OUT/server.err" && break
	sleep 0.1
done
grep -q 'went away' "$OUT/server.err" || fail "the server did not notice the client leaving"
code=$(get after.pb.gz '?seconds=1')
echo "client killed: profile stopped in $((($(date +%s%N) - t0) / 1000000)) ms; the next request: $code"
[[ $code == 200 ]] || fail "the request after a killed client got $code: $(cat "$OUT/after.pb.gz")"

# Bad values of known parameters; an unknown one is ignored, as Go does.
# One curl asks them all, on one connection (a process and a TLS
# handshake each took most of a second under TCG).
bad=("seconds=0" "seconds=abc" "seconds=99999" "freq=0" "freq=x" "pid=-1"
	"debug=2" "nosymbol=yes" "seconds=")
args=()
for i in "${!bad[@]}"; do
	args+=(-o "$OUT/bad$i.txt" "$URL/profile?${bad[i]}")
done
mapfile -t codes < <(curl -s "${tls[@]}" -w '%{http_code}\n' "${args[@]}" || true)
for i in "${!bad[@]}"; do
	q=${bad[i]}
	code=${codes[i]:-none}
	key=${q%%=*}
	[[ $code == 400 ]] || fail "?$q got $code"
	grep -q "$key" "$OUT/bad$i.txt" || fail "?$q: the answer does not name $key: $(cat "$OUT/bad$i.txt")"
	echo "?$q: $code $(cat "$OUT/bad$i.txt")"
done

t0=$(date +%s%N)
code=$(curl -s "${tls[@]}" -I -o "$OUT/head.h" -w '%{http_code}' "$URL/profile?seconds=30")
ms=$((($(date +%s%N) - t0) / 1000000))
echo "HEAD ?seconds=30: $code in $ms ms"
[[ $code == 200 ]] || fail "HEAD got $code"
# a TLS handshake in a slow guest (once 5.7 s) is not a 30 s profile
limit=$((CPROF_SLOW < 5 ? 5000 * CPROF_SLOW : 25000))
((ms < limit)) || fail "HEAD took $ms ms: it ran a profile"
grep -q 'HEAD' "$OUT/server.err" && fail "HEAD is logged as a profile: $(grep HEAD "$OUT/server.err")"

# How long after seconds the answer comes: waiting for new programs'
# tables is cut at 2 s, the rest is symbolizing (seconds under TCG); the
# unknown parameters are ignored.  (The loop below times 20 more,
# unsymbolized.)
t0=$(date +%s%N)
code=$(get margin.pb.gz '?seconds=1&bogus=1&gc=1')
ms=$((($(date +%s%N) - t0) / 1000000))
echo "?seconds=1&bogus=1&gc=1: $code after $ms ms"
[[ $code == 200 ]] || fail "seconds=1 with unknown parameters got $code: $(cat "$OUT/margin.pb.gz")"
((ms < 1000 + 8000 * CPROF_SLOW)) ||
	fail "seconds=1 was answered after $ms ms: more than 8 s late"

# Short profiles in a loop, each on a connection of its own with a full
# TLS handshake, from one curl (a process a request would add its
# start-up under emulation): no leak.
n=20
usage() { echo "$(find /proc/"$server"/fd -mindepth 1 -maxdepth 1 | wc -l) $(awk '/^VmRSS/ { print $2 }' /proc/"$server"/status)"; }
loop() { # FIRST LAST: "STATUS CONNECTS SECONDS" a request
	local args=() i
	for ((i = $1; i <= $2; i++)); do
		args+=(-o "$OUT/loop.pb.gz" "$URL/profile?seconds=1&nosymbol=1")
	done
	curl -s "${tls[@]}" --no-sessionid -H 'Connection: close' -w '%{http_code} %{num_connects} %{time_total}\n' "${args[@]}" || true
}
loop 1 5 >"$OUT/loop.codes"
read -r fd5 rss5 < <(usage)
loop 6 "$n" >>"$OUT/loop.codes"
read -r fdn rssn < <(usage)
[[ $(grep -c '^200 1 ' "$OUT/loop.codes") == "$n" ]] ||
	fail "of $n requests on a connection each, $(grep -c '^200 1 ' "$OUT/loop.codes") got 200 on a new connection: $(cut -d' ' -f1,2 "$OUT/loop.codes" | sort | uniq -c | tr '\n' ' ')"
read -r lo hi < <(awk '{ s = $3; if (NR == 1 || s < lo) lo = s; if (s > hi) hi = s } END { printf "%d %d\n", lo * 1000, hi * 1000 }' "$OUT/loop.codes")
echo "$n profiles of seconds=1 (nosymbol=1): answered after $lo to $hi ms"
((hi < 1000 + 8000 * CPROF_SLOW)) || fail "a seconds=1 profile was answered after $hi ms: more than 8 s late"
echo "after 5 profiles: $fd5 fds, $rss5 kB; after $n: $fdn fds, $rssn kB"
((fdn == fd5)) || fail "open files grew from $fd5 to $fdn"
((rssn - rss5 < 256)) || fail "RSS grew from $rss5 to $rssn kB"

# The same endpoint with a bearer token, as a scrape config's authorization sends it.
head -c 32 /dev/urandom | base64 >"$OUT/token"
chmod 600 "$OUT/token"
"$CPROF_DUMP" --http 127.0.0.1:6061 --http-token-file "$OUT/token" 2>"$OUT/server-token.err" &
tserver=$!
for _ in $(seq 1 100); do
	grep -q serving "$OUT/server-token.err" && break
	sleep 0.1
done
code=$(curl -s -o "$OUT/tok.txt" -D "$OUT/tok.h" -w '%{http_code}' 'http://127.0.0.1:6061/debug/pprof/profile?seconds=1')
echo "no token: $code $(cat "$OUT/tok.txt")"
[[ $code == 401 ]] || fail "a request without the token got $code"
grep -qi '^WWW-Authenticate: Bearer' "$OUT/tok.h" || fail "401 without WWW-Authenticate: Bearer"
code=$(curl -s -H "Authorization: Bearer wrong-token-of-enough-length" -o "$OUT/tok.txt" -w '%{http_code}' \
	'http://127.0.0.1:6061/debug/pprof/profile?seconds=1')
[[ $code == 401 ]] || fail "a wrong token got $code"
code=$(curl -s -H "Authorization: Bearer $(cat "$OUT/token")" -o "$OUT/tok.pb.gz" -w '%{http_code}' \
	'http://127.0.0.1:6061/debug/pprof/profile?seconds=1')
echo "with the token: $code, $(stat -c %s "$OUT/tok.pb.gz") bytes"
[[ $code == 200 ]] || fail "a request with the token got $code: $(cat "$OUT/tok.pb.gz")"
pp -top "$OUT/tok.pb.gz" >/dev/null || fail "the profile fetched with the token is not whole"
# A client that shuts down its sending side after the request (nc -N)
# still gets its profile (it was taken for gone and got nothing).
got=$(python3 "$REPO/tests/host/halfclose.py" 6061 "$OUT/token" half)
echo "half-closed after the request: $got"
[[ $got == "HTTP/1.1 200 OK" ]] || fail "a client half-closing got '$got': $(tail -n 3 "$OUT/server-token.err")"
kill -TERM "$tserver"
wait "$tserver" || fail "the token server exited with $?"

# SIGTERM while a profile is served: its client gets what was collected.
get last.pb.gz '?seconds=60' >"$OUT/last.code" &
client=$!
wait_profiling || fail "no profile runs for the last request"
sleep 1
kill -TERM "$server"
wait "$client"
wait "$server" || fail "the server exited with $? on SIGTERM"
echo "SIGTERM during a profile: the client got $(cat "$OUT/last.code"), $(stat -c %s "$OUT/last.pb.gz") bytes"
[[ $(cat "$OUT/last.code") == 200 ]] || fail "the profile being served at SIGTERM got $(cat "$OUT/last.code")"
pp -top "$OUT/last.pb.gz" >"$OUT/last.top" || fail "the profile being served at SIGTERM is not whole"
grep -q 'stopped early' "$OUT/last.top" || fail "the profile cut by SIGTERM does not say it stopped early"
stop
sed -n '1,20s/^/  server: /p' "$OUT/server.err"
echo "u_http: ok"
