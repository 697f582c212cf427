#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# check-httplibs.sh: cprof-dump loads libmicrohttpd and GnuTLS for --http
# only (serve/mhd.c).  `--version` and a `--no-symbolize` conversion run
# no constructor of theirs (the dynamic linker's LD_DEBUG=libs trace) and
# work where libmicrohttpd cannot be loaded; --http loads them and serves.
# Where libmicrohttpd.so.12 cannot be loaded (its own dependency missing),
# or lacks a function, or GnuTLS is unusable, --http says so in one line naming
# the library and exits with 1: stand-ins built here are put first on
# LD_LIBRARY_PATH.  Run by tests/host/run.sh (CPROF_DUMP: the cprof-dump
# to run).
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$REPO"
# shellcheck source=lib.sh
. tests/host/lib.sh
dump=${CPROF_DUMP:-userland/cprof-dump}
tmp=${TEST_TMPDIR:-$(mktemp -d)}
mkdir -p "$tmp/noproc"

# a capture of 200 samples (tests/bench/gen-stream.c)
make -s -C userland ../build/obj/gen-stream >/dev/null
build/obj/gen-stream -n 200 >"$tmp/raw"

# inits ARGS...: the libraries whose constructors a run of cprof-dump ARGS
# called, one per line (its stdout and stderr in $tmp/out).
inits() {
	LD_DEBUG=libs LD_DEBUG_OUTPUT="$tmp/ld" "$dump" "$@" >"$tmp/out" 2>&1 || true
	ld_inits
}

# ld_inits: the constructors the LD_DEBUG trace in $tmp/ld.* names.
ld_inits() {
	cat "$tmp/ld".* 2>/dev/null | sed -n 's/.*calling init: //p' | sort -u
	rm -f "$tmp/ld".*
}

for run in "--version" "-i $tmp/raw --no-symbolize -o $tmp/out.pb.gz"; do
	# shellcheck disable=SC2086 # the run's words
	libs=$(inits $run)
	if ! grep -q 'libc\.so' <<<"$libs"; then
		not_ok "cprof-dump $run: the linker's trace names no library it started (LD_DEBUG=libs)"
	elif grep -E 'lib(microhttpd|gnutls)' <<<"$libs" >"$tmp/found"; then
		not_ok "cprof-dump $run starts libraries only --http uses: $(tr '\n' ' ' <"$tmp/found")"
	else
		ok "cprof-dump $run starts neither libmicrohttpd nor GnuTLS ($(wc -l <<<"$libs") libraries)"
	fi
done

# --http loads them, and serves.
sock=$tmp/pprof.sock
LD_DEBUG=libs LD_DEBUG_OUTPUT="$tmp/ld" "$dump" --proc-dir "$tmp/noproc" \
	--no-unwind-tables --http "unix:$sock" 2>"$tmp/err" &
pid=$!
# connections wait in the socket's queue until the server takes them
for _ in $(seq 50); do
	[[ -S $sock ]] && break
	sleep 0.1
done
code=$(curl -s -m 10 -o "$tmp/body" -w '%{http_code}' --unix-socket "$sock" \
	http://localhost/debug/pprof/ || true)
kill "$pid" 2>/dev/null || true
wait "$pid" || true
libs=$(ld_inits)
if [[ $code == 200 ]] && grep -q '/debug/pprof/' "$tmp/body" &&
	grep -q libmicrohttpd <<<"$libs" && grep -q libgnutls <<<"$libs"; then
	ok "--http loads libmicrohttpd and GnuTLS and serves the index page"
else
	not_ok "--http: status $code, libraries started: $(grep -E 'lib(microhttpd|gnutls)' <<<"$libs" | tr '\n' ' ')"
	sed 's/^/    /' "$tmp/err"
fi

# Stand-ins: a libmicrohttpd.so.12 that needs a library no longer there,
# one without any function, a libgnutls.so.30 without any function.
cc=${CC:-cc}
echo 'int cprof_standin;' >"$tmp/standin.c"
mkdir -p "$tmp/gone" "$tmp/broken" "$tmp/empty" "$tmp/notls"
"$cc" -shared -fPIC -o "$tmp/gone/libcprof-gone.so" "$tmp/standin.c"
"$cc" -shared -fPIC -o "$tmp/broken/libmicrohttpd.so.12" \
	-Wl,-soname,libmicrohttpd.so.12 -Wl,--no-as-needed "$tmp/standin.c" \
	-L"$tmp/gone" -lcprof-gone
rm "$tmp/gone/libcprof-gone.so"
"$cc" -shared -fPIC -o "$tmp/empty/libmicrohttpd.so.12" \
	-Wl,-soname,libmicrohttpd.so.12 "$tmp/standin.c"
"$cc" -shared -fPIC -o "$tmp/notls/libgnutls.so.30" \
	-Wl,-soname,libgnutls.so.30 "$tmp/standin.c"

# Without a usable libmicrohttpd, a conversion still works.
if LD_LIBRARY_PATH=$tmp/broken "$dump" -i "$tmp/raw" --no-symbolize \
	-o "$tmp/out.pb.gz" 2>"$tmp/err" && [[ -s $tmp/out.pb.gz ]]; then
	ok "a --no-symbolize conversion works where libmicrohttpd.so.12 cannot be loaded"
else
	not_ok "a --no-symbolize conversion where libmicrohttpd.so.12 cannot be loaded failed:"
	sed 's/^/    /' "$tmp/err"
fi

# standin DIR WANT: --http with DIR first on LD_LIBRARY_PATH exits with 1
# after one line matching WANT.
standin() {
	local rc=0

	LD_LIBRARY_PATH=$1 timeout 10 "$dump" --proc-dir "$tmp/noproc" \
		--no-unwind-tables --http "unix:$tmp/standin.sock" \
		>/dev/null 2>"$tmp/err" || rc=$?
	if [[ $rc == 1 && $(wc -l <"$tmp/err") == 1 ]] &&
		grep -qE "^cprof-dump: --http: $2" "$tmp/err"; then
		ok "--http with ${1##*/}/: $(cat "$tmp/err")"
	else
		not_ok "--http with ${1##*/}/: exit $rc, want 1 and one line '$2':"
		sed 's/^/    /' "$tmp/err"
	fi
}

standin "$tmp/broken" "cannot load libmicrohttpd\.so\.12 \(install package libmicrohttpd12\): .*libcprof-gone\.so"
standin "$tmp/empty" "the libmicrohttpd\.so\.12 found has no MHD_[a-z_]+ \(install package libmicrohttpd12\)"
standin "$tmp/notls" "cannot load libmicrohttpd\.so\.12 \(install package libmicrohttpd12\): .*gnutls"
report
