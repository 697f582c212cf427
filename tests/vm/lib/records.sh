# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Text records read by field name, sourced by kprof.sh (and so by every
# test that reads a stream).  The VM tests check lines of text with awk:
# the stream as build/workloads/streamtext prints it ("S time pid tid ..."),
# and what the libraries make of it or parse (symbolize's lines in
# kprof.sh; pprof's and cprof-dump's tables in uprof.sh).  Each kind of line
# has a layout: a prefix and the names of its fields, in order.  rawk is awk
# with a variable PREFIX_NAME for each field of each layout, holding the
# field's number:
#
#   rawk -v p="$pid" '$1 == "S" && $S_pid == p { n++; k += $S_nr_kernel }' FILE
#
# Layouts:
#   H S O I ...  streamtext's lines, the tag first (S_time is field 2).  The
#                layouts are streamtext's own table (streamtext --fields),
#                which it checks every line it prints against: the names
#                and their order are defined there and nowhere else.
#   sym          symbolize's lines (kprof.sh)
#   folded       cprof-dump -f folded's lines, "stack count": folded_stack
#                is the stack (its first field, should a frame hold a
#                blank), the count is the last field, $NF
#   top trace pp_sample pp_loc pp_map   pprof's and cprof-dump -f top's
#                tables, pprof -traces as traces_tsv prints it, the
#                sections of pprof -raw (uprof.sh)
# A name "x..." is the rest of the line (a variable number of fields: ips,
# frames, a path or a function name that may hold blanks): PREFIX_x is its
# first field.
#
# The output of other tools (/proc files, nm, perf script, ftrace) and the
# tests' own scratch tables are read by number, next to a comment or code
# that says what each column is.

# shellcheck source=assert.sh
. "$REPO/tests/vm/lib/assert.sh"

RECORDS_AWK=

# record_layout PREFIX FIRST NAME...: awk's PREFIX_NAME is field FIRST for
# the first NAME, FIRST + 1 for the next, and so on.
record_layout() {
	local prefix=$1 i=$2 name
	shift 2
	for name in "$@"; do
		name=${prefix}_${name%...}
		[[ $name =~ ^[A-Za-z][A-Za-z0-9_]*$ ]] || fail "record_layout: '$name' is not an awk name"
		RECORDS_AWK+="$name = $i; "
		i=$((i + 1))
	done
}

# streamtext's layouts: "TAG NAME..." lines ("?", for records it does not
# know, gives no names).
records_streamtext() {
	local layouts tag rest
	local -a names
	layouts=$("$WORKLOADS/streamtext" --fields) || fail "$WORKLOADS/streamtext --fields failed"
	while read -r tag rest; do
		[[ $tag != "?" ]] || continue
		read -r -a names <<<"$rest"
		record_layout "$tag" 2 "${names[@]}"
	done <<<"$layouts"
	[[ $RECORDS_AWK == *"S_pid = "* ]] || fail "streamtext --fields gave no S_pid: $layouts"
}
records_streamtext
record_layout folded 1 stack

# rawk [-v NAME=VALUE | -F FS]... PROGRAM [ARG]...: awk PROGRAM with every
# layout's names set (in a BEGIN rule of their own, before PROGRAM's).
rawk() {
	local -a opts=()
	while [[ $# -gt 1 && ($1 == -v || $1 == -F) ]]; do
		opts+=("$1" "$2")
		shift 2
	done
	[[ $# -ge 1 ]] || fail "rawk: no program"
	awk "${opts[@]}" "BEGIN { $RECORDS_AWK}"$'\n'"$1" "${@:2}"
}
