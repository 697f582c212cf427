#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# check-http.sh: every `cprof-dump --http ...` command that README.md,
# docs/serving.md and cprof-dump --help show starts a server as written
# (files under /etc/cprof and /run are made in a temporary directory
# instead, and the group cprof is root's), announces the address it listens on, and lets through the
# client the documentation pairs with it (a token, client certificates, a
# Unix socket) while refusing one without them.  No module runs here: an
# authorized profile request gets 503 "is cprof.ko loaded?", which shows it
# got past authentication; tests/vm/tests/u_http.sh fetches real profiles.
# Then every ADDR form serving.md's table lists, the same way, and a
# parameter whose value is longer than a log line shows (read whole).
# Then what serving.md's threat model lists (each case names its check),
# a browser on another origin's page among them.
# Run by tests/host/run.sh (CPROF_DUMP: the cprof-dump to run).
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$REPO"
# shellcheck source=lib.sh
. tests/host/lib.sh
dump=$(realpath "${CPROF_DUMP:-userland/cprof-dump}")
tmp=$(realpath "${TEST_TMPDIR:-$(mktemp -d)}")
root=$tmp/root
mkdir -p "$root/etc/cprof" "$root/run/cprof" "$tmp/noproc"

# The fixtures the documented commands name.
head -c 32 /dev/urandom | base64 >"$root/etc/cprof/token"
chmod 600 "$root/etc/cprof/token"
pki=$root/etc/cprof
(
	cd "$pki"
	openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem -days 2 -subj "/CN=cprof test CA"
	openssl req -newkey rsa:2048 -nodes -keyout server.key -out server.csr -subj "/CN=localhost"
	printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\n' >ext
	openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out server.pem -days 2 -extfile ext
	openssl req -newkey rsa:2048 -nodes -keyout client.key -out client.csr -subj "/CN=scraper"
	openssl x509 -req -in client.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out client.pem -days 2
	# the client's key in certificates for a server only, a client only
	printf 'extendedKeyUsage=serverAuth\n' >ext-server
	openssl x509 -req -in client.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out eku-server.pem -days 2 -extfile ext-server
	printf 'extendedKeyUsage=clientAuth\n' >ext-client
	openssl x509 -req -in client.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out eku-client.pem -days 2 -extfile ext-client
) >/dev/null 2>&1 || not_ok "openssl made the test PKI"

# The commands, as written.
mapfile -t cmds < <(
	{
		grep -ho 'cprof-dump --http [^&#`]*' README.md docs/serving.md
		"$dump" --help | grep -o 'cprof-dump --http [^&#]*'
	} | grep -v 'ADDR' | sed 's/ *$//' | sort -u
)
if [[ ${#cmds[@]} -ge 4 ]]; then
	ok "found ${#cmds[@]} documented --http commands"
else
	not_ok "found ${#cmds[@]} documented --http commands, want the socket, token, TLS and --help forms"
fi

# serve ARGS...: cprof-dump ARGS with no module, in the background ($pid,
# its stderr in $tmp/err), until it says where it serves or exits.
serve() {
	# emptied here: the background job's own redirection may come after
	# the first look below, which would then read the last server's line
	: >"$tmp/err"
	"$dump" --proc-dir "$tmp/noproc" --no-unwind-tables "$@" 2>"$tmp/err" &
	pid=$!
	for _ in $(seq 50); do
		grep -q 'serving' "$tmp/err" && break
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
}

# status CURL_ARGS...: the HTTP status curl gets (000: no answer).
status() {
	curl -s -m 10 -o "$tmp/body" -w '%{http_code}' "$@" || true
}

for cmd in "${cmds[@]}"; do
	# the documented paths, moved under $root
	run=${cmd//\/etc\/cprof/$root/etc/cprof}
	run=${run//\/run\//$root/run/}
	run=${run//--http-group cprof/--http-group root}
	read -ra argv <<<"${run#cprof-dump }"
	serve "${argv[@]}"
	announced=$(grep -o 'serving [^ ]*' "$tmp/err" || true)
	if ! kill -0 "$pid" 2>/dev/null; then
		not_ok "$cmd: started"
		sed 's/^/    /' "$tmp/err"
		continue
	fi
	url='/debug/pprof/profile?seconds=1'
	case $run in
	*unix:*)
		sock=${run#*unix:}
		sock=${sock%% *}
		want=600
		[[ $run == *--http-group* ]] && want=660
		if [[ $(stat -c %a "$sock") == "$want" ]]; then
			ok "$cmd: the socket is $want"
		else
			not_ok "$cmd: the socket is $(stat -c %a "$sock"), not $want"
		fi
		good=(--unix-socket "$sock" "http://localhost$url")
		bad=()
		;;
	*--http-token-file*)
		port=${run#*--http }
		port=${port%% *}
		port=${port##*:}
		tok=$(<"$root/etc/cprof/token")
		good=(-H "Authorization: Bearer $tok" "http://localhost:$port$url")
		bad=("http://localhost:$port$url")
		;;
	*--http-client-ca*)
		port=${run#*--http }
		port=${port%% *}
		port=${port##*:}
		good=(--cacert "$pki/ca.pem" --cert "$pki/client.pem" --key "$pki/client.key"
		      "https://localhost:$port$url")
		bad=(--cacert "$pki/ca.pem" "https://localhost:$port$url")
		;;
	*)
		not_ok "$cmd: a documented form this check does not know"
		kill "$pid"
		wait "$pid" || true
		continue
		;;
	esac
	case $announced in
	"serving /debug/pprof/"* | "serving http://127.0.0.1:"* | \
	"serving http://0.0.0.0:"* | "serving https://0.0.0.0:"* | \
	"serving https://127.0.0.1:"*)
		ok "$cmd: announces '$announced'" ;;
	*)
		not_ok "$cmd: announces '$announced'" ;;
	esac
	code=$(status "${good[@]}")
	if [[ $code == 503 ]] && grep -q 'cprof.ko loaded' "$tmp/body"; then
		ok "$cmd: its client gets past authentication (503: no module here)"
	else
		not_ok "$cmd: its client got $code: $(head -c 200 "$tmp/body")"
	fi
	if [[ ${#bad[@]} -gt 0 ]]; then
		code=$(status "${bad[@]}")
		if [[ $code == 401 || $code == 403 ]]; then
			ok "$cmd: a client without credentials gets $code"
		else
			not_ok "$cmd: a client without credentials gets $code"
		fi
	fi
	kill -TERM "$pid"
	rc=0
	wait "$pid" || rc=$?
	if [[ $rc == 0 ]]; then
		ok "$cmd: SIGTERM: exit 0"
	else
		not_ok "$cmd: SIGTERM: exit $rc"
	fi
done

# Every ADDR form serving.md's table lists (`unix:PATH`, `/PATH`,
# `HOST:PORT`, `[V6ADDR]:PORT`, `:PORT`, `PORT`), with its placeholders
# filled in: the server starts, announces where it listens, and a client
# there gets past authentication.  The man page and cprof-dump.md must
# name the same forms.
# (the backquotes are Markdown's, not the shell's)
# shellcheck disable=SC2016
mapfile -t forms < <(sed -n '/^| `ADDR` | listens on |$/,/^$/p' docs/serving.md |
	grep -v 'listens on' | sed -n 's/^| \(`[^|]*\) | .*$/\1/p' |
	grep -o '`[^`]*`' | tr -d '`')
if [[ ${#forms[@]} -ge 6 ]]; then
	ok "serving.md's ADDR table: ${forms[*]}"
else
	not_ok "serving.md's ADDR table: ${#forms[@]} forms (${forms[*]}), want 6"
fi
man_text=$(man -l man/cprof-dump.1 2>/dev/null | tr -s ' \n' ' ')
for form in "${forms[@]}"; do
	if [[ $man_text == *"$form"* ]] && grep -qF "\`$form\`" docs/cprof-dump.md; then
		ok "the man page and cprof-dump.md name $form"
	else
		not_ok "the man page or cprof-dump.md does not name $form"
	fi
done
port=46100
tok=$(<"$root/etc/cprof/token")
for form in "${forms[@]}"; do
	port=$((port + 1))
	addr=${form//PORT/$port}
	addr=${addr//V6ADDR/::1}
	addr=${addr//HOST/127.0.0.1}
	addr=${addr//PATH/$tmp/form$port.sock}
	[[ $form == /PATH ]] && addr=$tmp/form$port.sock
	case $addr in
	unix:* | /*)
		sock=${addr#unix:}
		extra=()
		client=(--unix-socket "$sock" "http://localhost/debug/pprof/profile?seconds=1")
		;;
	*)
		extra=(--http-token-file "$root/etc/cprof/token")
		host=127.0.0.1
		[[ $addr == \[* ]] && host='[::1]'
		client=(-H "Authorization: Bearer $tok" "http://$host:$port/debug/pprof/profile?seconds=1")
		;;
	esac
	serve --http "$addr" "${extra[@]}"
	announced=$(grep -m 1 'serving' "$tmp/err" || true)
	code=$(status "${client[@]}")
	case $addr in
	unix:* | /*) want="serving /debug/pprof/ on unix:$sock " ;;
	\[*) want="serving http://[::1]:$port/debug/pprof/" ;;
	*) want="serving http://127.0.0.1:$port/debug/pprof/" ;;
	esac
	if [[ $announced == *"$want"* && $code == 503 ]]; then
		ok "--http $form as $addr: '$announced', a client gets past authentication"
	else
		not_ok "--http $form as $addr: announced '$announced' (want '$want'), the client got $code"
		sed 's/^/    /' "$tmp/err"
	fi
	kill -TERM "$pid" 2>/dev/null || true
	wait "$pid" || true
done

# A parameter's value is read whole, however long: 64 zeros and an x are
# no pid (not pid 0, every process), nor is 1%00x (not pid 1), and 64
# zeros and a 1 are a second.
zeros=$(printf '0%.0s' $(seq 64))
serve --http "unix:$tmp/long.sock"
code=$(status --unix-socket "$tmp/long.sock" "http://localhost/debug/pprof/profile?pid=${zeros}x")
if [[ $code == 400 ]] && grep -q 'bad parameter pid=.*not a number' "$tmp/body"; then
	ok "pid=<64 zeros>x: 400, $(head -c 100 "$tmp/body")"
else
	not_ok "pid=<64 zeros>x: $code, $(head -c 200 "$tmp/body")"
fi
code=$(status --unix-socket "$tmp/long.sock" "http://localhost/debug/pprof/profile?pid=1%00x")
if [[ $code == 400 ]] && grep -q 'bad parameter pid=.*NUL' "$tmp/body"; then
	ok "pid=1%00x: 400, $(head -c 100 "$tmp/body")"
else
	not_ok "pid=1%00x: $code, $(head -c 200 "$tmp/body")"
fi
code=$(status --unix-socket "$tmp/long.sock" "http://localhost/debug/pprof/profile?seconds=${zeros}1")
if [[ $code == 503 ]]; then
	ok "seconds=<64 zeros>1: past the parameters (503: no module here)"
else
	not_ok "seconds=<64 zeros>1: $code, $(head -c 200 "$tmp/body")"
fi
# A path with a NUL byte is no endpoint: /debug/pprof/profile%00x is not
# the profile (the request is refused before a profile would start).
code=$(status --unix-socket "$tmp/long.sock" "http://localhost/debug/pprof/profile%00x?seconds=1")
if [[ $code == 404 ]]; then
	ok "/debug/pprof/profile%00x: 404, $(head -c 100 "$tmp/body")"
else
	not_ok "/debug/pprof/profile%00x: $code, $(head -c 200 "$tmp/body")"
fi
kill -TERM "$pid" 2>/dev/null || true
wait "$pid" || true

# A token file whose line ends in blanks, sent as read (curl -H "...
# $(cat FILE)" keeps them): the token, not a wrong one.
printf '%s  \t\n' "$(head -c 32 /dev/urandom | base64)" >"$tmp/blank-token"
chmod 600 "$tmp/blank-token"
serve --http 127.0.0.1:46119 --http-token-file "$tmp/blank-token"
code=$(status -H "Authorization: Bearer $(cat "$tmp/blank-token")" "http://127.0.0.1:46119/debug/pprof/profile?seconds=1")
if [[ $code == 503 ]]; then
	ok "a token with trailing blanks, sent with them: past authentication"
else
	not_ok "a token with trailing blanks, sent with them: $code, $(head -c 200 "$tmp/body")"
fi
kill -TERM "$pid" 2>/dev/null || true
wait "$pid" || true

# /debug/pprof/cmdline, as Go's: the arguments, NUL-separated, none after
# the last; the server's own, or pid=PID's; no process: 404; not a pid: 400.
serve --http 127.0.0.1:46121 --http-token-file "$tmp/blank-token"
tok=(-H "Authorization: Bearer $(cat "$tmp/blank-token")")
/usr/bin/python3 -c 'import time; time.sleep(300)' 'two words' $'tab\there' &
sleeper=$!
base=http://127.0.0.1:46121/debug/pprof/cmdline
code=$(status "${tok[@]}" "$base")
want=$(printf '%s\0' "$dump" --proc-dir "$tmp/noproc" --no-unwind-tables --http 127.0.0.1:46121 \
	--http-token-file "$tmp/blank-token" | head -c -1 | od -An -c)
if [[ $code == 200 && $(od -An -c "$tmp/body") == "$want" ]]; then
	ok "/debug/pprof/cmdline: the server's own arguments, NUL-separated"
else
	not_ok "/debug/pprof/cmdline: $code, $(od -An -c "$tmp/body" | head -c 300)"
fi
code=$(status "${tok[@]}" "$base?pid=$sleeper")
want=$(printf '/usr/bin/python3\0-c\0import time; time.sleep(300)\0two words\0tab\there' | od -An -c)
if [[ $code == 200 && $(od -An -c "$tmp/body") == "$want" ]]; then
	ok "/debug/pprof/cmdline?pid=PID: that process's arguments"
else
	not_ok "/debug/pprof/cmdline?pid=PID: $code, $(od -An -c "$tmp/body" | head -c 300)"
fi
kill "$sleeper" 2>/dev/null || true
wait "$sleeper" 2>/dev/null || true
# expect_code WANT WHAT CURL_ARGS...
expect_code() {
	local want=$1 what=$2 code
	shift 2
	code=$(status "$@")
	if [[ $code == "$want" ]]; then
		ok "$what: $code"
	else
		not_ok "$what: $code, want $want: $(head -c 200 "$tmp/body")"
	fi
}
expect_code 404 "/debug/pprof/cmdline?pid= of a process gone" "${tok[@]}" "$base?pid=$sleeper"
expect_code 400 "/debug/pprof/cmdline?pid=x" "${tok[@]}" "$base?pid=x"
expect_code 401 "/debug/pprof/cmdline without the token" "$base"
kill -TERM "$pid" 2>/dev/null || true
wait "$pid" || true

# TLS: 1.0 and 1.1 are refused (Debian's openssl offers them only at
# security level 0), 1.2 is spoken.  A certificate of the client CA whose
# extended key usage is a server's only gets 403; one for clients, or one
# without the extension, gets past authentication.
serve --http 127.0.0.1:46120 --http-tls-cert "$pki/server.pem" --http-tls-key "$pki/server.key" \
	--http-client-ca "$pki/ca.pem"
for v in tls1 tls1_1 tls1_2; do
	rc=0
	openssl s_client "-$v" -cipher DEFAULT@SECLEVEL=0 -connect 127.0.0.1:46120 </dev/null >"$tmp/s_client" 2>&1 || rc=$?
	got=$(grep -m 1 -o 'Cipher is .*' "$tmp/s_client" || true)
	if [[ $v == tls1_2 && $rc == 0 ]] || [[ $v != tls1_2 && $rc != 0 ]]; then
		ok "openssl s_client -$v -cipher DEFAULT@SECLEVEL=0: exit $rc, $got"
	else
		not_ok "openssl s_client -$v -cipher DEFAULT@SECLEVEL=0: exit $rc, $got"
	fi
done
for c in eku-server:403 eku-client:503 client:503; do
	code=$(status --cacert "$pki/ca.pem" --cert "$pki/${c%:*}.pem" --key "$pki/client.key" \
		"https://localhost:46120/debug/pprof/profile?seconds=1")
	if [[ $code == "${c#*:}" ]]; then
		ok "a client certificate ${c%:*}.pem: $code"
	else
		not_ok "a client certificate ${c%:*}.pem: $code, want ${c#*:}: $(head -c 200 "$tmp/body")"
	fi
done
kill -TERM "$pid" 2>/dev/null || true
wait "$pid" || true

# A client that half-closes after its request (tests/host/halfclose.py)
# gets its answer, on TCP and on a Unix socket; one that closes is gone
# and its request abandoned, not answered.  A profile that lasts: a stand-in
# for the module's files, whose profile is a FIFO written for 2 s (then
# its end: the answer is 500, it holds no records).
mkdir -p "$tmp/fakeproc"
: >"$tmp/fakeproc/ctl"
mkfifo "$tmp/fakeproc/profile"
for where in 46122 "$tmp/half.sock"; do
	if [[ $where == /* ]]; then
		serve --http "unix:$where" --proc-dir "$tmp/fakeproc"
		tokarg=-
	else
		serve --http "127.0.0.1:$where" --http-token-file "$root/etc/cprof/token" --proc-dir "$tmp/fakeproc"
		tokarg=$root/etc/cprof/token
	fi
	timeout 10 sh -c "sleep 2 >'$tmp/fakeproc/profile'" &
	got=$(timeout 20 python3 tests/host/halfclose.py "$where" "$tokarg" half || echo "failed")
	wait $! || true
	if [[ $got == "HTTP/1.1 500"* ]]; then
		ok "a client half-closing on $where gets its answer: $got"
	else
		not_ok "a client half-closing on $where gets '$got'"
		sed 's/^/    /' "$tmp/err"
	fi
	# (the stand-in's profile does not end when asked: it is written
	# for 1 s, then the request ends, abandoned or answered)
	timeout 10 sh -c "sleep 1 >'$tmp/fakeproc/profile'" &
	before=$(wc -l <"$tmp/err")
	python3 tests/host/halfclose.py "$where" "$tokarg" close
	for _ in $(seq 50); do
		tail -n +$((before + 1)) "$tmp/err" >"$tmp/err.new"
		grep -Eq 'went away|: 500: ' "$tmp/err.new" && break
		sleep 0.1
	done
	if grep -q 'went away after' "$tmp/err.new" && ! grep -q ': 500: ' "$tmp/err.new"; then
		ok "a client closing on $where: $(grep -o 'went away.*' "$tmp/err.new")"
	else
		not_ok "a client closing on $where: not seen gone: $(cat "$tmp/err.new")"
	fi
	wait $! || true
	kill -TERM "$pid" 2>/dev/null || true
	wait "$pid" || true
done

# A browser on another origin's page (a web page can make a browser
# fetch any URL): headless chromium loads a page served from port 46124
# whose image and fetch() ask a server without authentication for a
# profile.  The server refuses them (403, by Sec-Fetch-Site: cross-site)
# before it would look for the module: none is answered 503.
if command -v chromium >/dev/null; then
	serve --http 127.0.0.1:46123 --http-insecure-no-auth
	mkdir -p "$tmp/www"
	cat >"$tmp/www/evil.html" <<'HTML'
<html><body>
<img src="http://127.0.0.1:46123/debug/pprof/profile?seconds=20">
<script>fetch("http://127.0.0.1:46123/debug/pprof/profile?seconds=20", {mode: "no-cors"});</script>
</body></html>
HTML
	python3 -m http.server 46124 --bind 127.0.0.1 --directory "$tmp/www" >"$tmp/www.log" 2>&1 &
	www=$!
	for _ in $(seq 50); do
		curl -sf -o /dev/null http://127.0.0.1:46124/evil.html && break
		sleep 0.1
	done
	rc=0
	timeout 120 chromium --headless --no-sandbox --disable-gpu --no-first-run \
		--user-data-dir="$tmp/chromium" --virtual-time-budget=5000 --dump-dom \
		http://127.0.0.1:46124/evil.html >"$tmp/evil.dom" 2>"$tmp/chromium.err" || rc=$?
	kill "$www" 2>/dev/null || true
	wait "$www" 2>/dev/null || true
	kill -TERM "$pid" 2>/dev/null || true
	wait "$pid" || true
	refused=$(grep -c ': 403: .*Sec-Fetch-Site' "$tmp/err" || true)
	if [[ $rc == 0 ]] && ((refused >= 1)) && ! grep -q ': 503: ' "$tmp/err"; then
		ok "chromium on another origin's page: $refused requests refused by Sec-Fetch-Site, none past it"
	else
		not_ok "chromium on another origin's page: exit $rc, $refused requests refused by Sec-Fetch-Site"
		cut -c 1-200 "$tmp/err" | sed 's/^/    /'
		tail -n 3 "$tmp/chromium.err" | sed 's/^/    /'
	fi
else
	not_ok "chromium on another origin's page: no chromium here (tests/deps.sh installs it)"
fi

# Slowloris (tests/host/slowloris.py): connections from 16 loopback
# addresses and from ::1, trickling requests they never end, for
# CPROF_SLOWLORIS_S seconds (10; docs/serving.md gives a 60 s run): every
# request with the token, once a second from 127.0.0.1, is answered
# within 3 s, and the server's log stays under 1000 lines.
secs=${CPROF_SLOWLORIS_S:-10}
serve --http '[::]:46121' --http-token-file "$root/etc/cprof/token"
read -r asked answered slowest connects < <(python3 tests/host/slowloris.py 46121 "$secs" "$root/etc/cprof/token")
kill -TERM "$pid" 2>/dev/null || true
wait "$pid" || true
lines=$(wc -l <"$tmp/err")
if ((asked >= secs - 1 && answered == asked && connects > 1000 && lines < 1000)); then
	ok "slowloris for $secs s ($connects connections): $answered of $asked requests answered within 3 s (the slowest after $slowest ms), $lines log lines"
else
	not_ok "slowloris for $secs s ($connects connections): $answered of $asked requests answered within 3 s (the slowest after $slowest ms), $lines log lines"
	sort "$tmp/err" | uniq -c | sort -rn | head -n 5 | cut -c 1-200 | sed 's/^/    /'
fi

# --http-group with the socket in a directory every user may write: a user
# who swaps the new socket for a symlink to a root file, 500 times, as
# fast as a busy loop sees it, changes neither that file's mode nor its
# group (cprof-dump chown()ed and chmod()ed the path after bind()).
if [[ $(id -u) == 0 ]] && command -v setpriv >/dev/null; then
	chmod 711 "$tmp"
	mkdir -m 777 "$tmp/shared"
	echo secret >"$tmp/victim"
	chmod 600 "$tmp/victim"
	read -r attempts swaps changed < <(python3 tests/host/sockrace.py "$dump" "$tmp/shared" "$tmp/victim" 500 65534 65534)
	if [[ $changed == 0 && $attempts == 500 && $swaps -gt 0 ]]; then
		ok "--http-group: $attempts starts, $swaps symlinks swapped in by a user: the root file stays $(stat -c '%a %G' "$tmp/victim")"
	else
		not_ok "--http-group: after $attempts starts and $swaps swaps the root file is $(stat -c '%a %G' "$tmp/victim")"
	fi
else
	echo "skip the --http-group race: it needs root and setpriv"
fi

report
