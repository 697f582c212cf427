# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Helpers for the userland end-to-end VM tests (u_*.sh), sourced after
# kprof.sh: go tool pprof in a private, writable home, and workloads that
# run until stopped (on a loaded TCG host, starting the reader alone can
# take seconds, so a workload timed to outlast the profile may not).

command -v go >/dev/null || { echo "${0##*/}: no go on this host: skip"; exit 77; }
[[ -x $CPROF_DUMP ]] || fail "no cprof-dump at $CPROF_DUMP"
HOME=$(mktemp -d)
export HOME GOCACHE=$HOME/go-cache GOFLAGS='' GOTOOLCHAIN=local

# go tool pprof, run by its path: through the go command, each call
# started that first (on the host 30 ms a call against 20).
GO_PPROF=$(go env GOTOOLDIR)/pprof
[[ -x $GO_PPROF ]] || fail "no pprof among go's tools ($GO_PPROF)"
pp() { "$GO_PPROF" "$@" 2>>"$OUT/pprof.err"; }

# The tables the u_ tests read with rawk (records.sh):
#   top        a row of go tool pprof -top, or of cprof-dump -f top (the same
#              columns): "flat flat% sum% cum cum% name"
#   pp_sample  a sample in pprof -raw's Samples section: "count ns: loc..."
#              (the location ids; ns with its colon)
#   pp_loc     a line of its Locations: "id: address M=mapping function
#              file:line s=start"
#   pp_map     a line of its Mappings: "id: start/limit/offset file build_id
#              flags" (with no build ID, flags is field 4)
#   trace      a line of traces_tsv, below (tab-separated)
record_layout top 1 flat flat_pct sum_pct cum cum_pct name...
record_layout pp_sample 1 count ns loc...
record_layout pp_loc 1 id address mapping function source start
record_layout pp_map 1 id range file build_id flags

# http_start: cprof-dump --http on a Unix socket, $sock (not on the 9p
# share: no sockets there), its pid in $server, its messages in
# $OUT/http.err; waits until it serves the index page, into
# $OUT/index.html (false if it did not: the caller says what it missed).
http_start() {
	local i
	sock=$(mktemp -d)/pprof.sock
	"$CPROF_DUMP" --http "unix:$sock" 2>"$OUT/http.err" &
	# shellcheck disable=SC2034 # the caller's
	server=$!
	for ((i = 0; i < 100 * ${CPROF_SLOW:-1}; i++)); do
		[[ -S $sock ]] && curl -sf --unix-socket "$sock" http://localhost/debug/pprof/ >"$OUT/index.html" && return 0
		sleep 0.1
	done
	return 1
}

# http_kind KIND BASE CMD...: with the server of http_start running, the
# index page lists KIND; /debug/pprof/KIND?seconds=$SECONDS_P is asked
# while CMD runs (a round that ends the profile), answered 200 into
# BASE.pb.gz and read by go tool pprof -raw into BASE.raw.txt.
http_kind() {
	local kind=$1 base=$2 req code
	shift 2
	grep -q "href='$kind?debug=1'" "$OUT/index.html" ||
		fail "the index page lists no $kind: $(cat "$OUT/index.html" "$OUT/http.err")"
	curl -s --unix-socket "$sock" -o "$base.pb.gz" -w '%{http_code}' \
		"http://localhost/debug/pprof/$kind?seconds=$SECONDS_P" >"$base.code" &
	req=$!
	"$@"
	wait "$req" || fail "curl failed"
	code=$(cat "$base.code")
	[[ $code == 200 ]] || fail "$kind: HTTP $code: $(head -c 300 "$base.pb.gz"; tail -n 3 "$OUT/http.err")"
	pp -raw "$base.pb.gz" >"$base.raw.txt" ||
		fail "go tool pprof cannot read /debug/pprof/$kind: $(tail -n 3 "$OUT/pprof.err")"
}

bg=()
spawn() { "$@" >/dev/null & bg+=($!); }
stop() { kill "${bg[@]}" 2>/dev/null || true; wait "${bg[@]}" 2>/dev/null || true; bg=(); }

# traces_tsv FILE: go tool pprof -traces output as one line per sample:
# value, comm, pid, tid, cpu and the stack (frames leaf first, ";"-joined),
# tab-separated: the layout trace.
record_layout trace 1 count comm pid tid cpu stack
traces_tsv() {
	awk '
	function flush() { if (n) printf "%s\t%s\t%s\t%s\t%s\t%s\n", v, l["comm"], l["pid"], l["tid"], l["cpu"], st; n = 0; st = ""; delete l }
	/^-----------\+/ { flush(); on = 1; next }
	!on { next }
	!n && /^ +[a-z]+: / { k = $1; sub(":$", "", k); l[k] = $2; next }
	!n && /^ +[0-9]+ +[^ ]/ { v = $1; st = $0; sub(/^ +[0-9]+ +/, "", st); n = 1; next }
	n && /^ +[^ ]/ { f = $0; sub(/^ +/, "", f); st = st ";" f }
	END { flush() }' "$1"
}

# leaves FILE: "leaf1 leaf2 leaf3 b a main" cum sample counts from -top.
leaves() {
	rawk '{ c[$top_name] = $top_cum } END { print c["leaf1"] + 0, c["leaf2"] + 0, c["leaf3"] + 0, c["b"] + 0, c["a"] + 0, c["main"] + 0 }' "$1"
}
split_ok() { # l1 l2 l3: within 5 points of 1:2:4
	awk -v a="$1" -v b="$2" -v c="$3" 'BEGIN {
		t = a + b + c; if (!t) exit 1
		d1 = 100 * a / t - 100 / 7; d2 = 100 * b / t - 200 / 7; d3 = 100 * c / t - 400 / 7
		exit !(d1 * d1 < 25 && d2 * d2 < 25 && d3 * d3 < 25)
	}'
}
