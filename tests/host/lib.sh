# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Helpers for the host checks (tests/host/check-*.sh, and
# tests/deb/check.sh), sourced by them.  A
# check prints "ok   WHAT" or "FAIL WHAT" (and what is wrong, indented), and
# report() ends it with "NAME: N passed, N failed", which
# tests/unit/run-tests.sh adds up.

passed=0
failed=0

ok() {
	echo "ok   $*"
	passed=$((passed + 1))
}

not_ok() {
	echo "FAIL $*"
	failed=$((failed + 1))
}

# expect_none WHAT PROBLEMS: ok if PROBLEMS (one per line) is empty.
expect_none() {
	if [[ -z $2 ]]; then
		ok "$1"
	else
		not_ok "$1"
		printf '    %s\n' "${2//$'\n'/$'\n'    }"
	fi
}

# expect_found WHAT NEEDLE PROBLEMS: ok if PROBLEMS names NEEDLE.  For the
# checks of the checks: a damaged input must be caught.
expect_found() {
	if grep -qF -- "$2" <<<"$3"; then
		ok "$1"
	else
		not_ok "$1: no problem naming '$2' reported${3:+ (reported: $3)}"
	fi
}

report() {
	echo "${0##*/}: $passed passed, $failed failed"
	[[ $failed -eq 0 ]]
}

# man_entries PAGE: the .TP entries of a man page as groff renders them
# (ASCII, no line breaks in a paragraph), one per line:
#   SECTION<TAB>TAG<TAB>BODY
# SECTION is the .SH or .SS heading above the entry, TAG the entry's tag
# line, BODY the first paragraph of its text.  Markers put around each tag
# before rendering tell a tag from the text, wherever groff puts them.
man_entries() {
	awk 'prev == ".TP" { print "\\&@@TAG@@\\c"; print; print "\\&@@END@@\\c"; prev = ""; next }
		{ print; prev = $0 }' "$1" |
		groff -man -Tascii -P-cbou -rLL=20000n -rHY=0 2>/dev/null |
		awk -v OFS='\t' '
		function trim(s) { gsub(/^ +| +$/, "", s); gsub(/  +/, " ", s); return s }
		/^[^ ]/ || /^   [^ ]/ { sec = trim($0); next }
		/@@TAG@@/ { tag = $0; sub(/.*@@TAG@@/, "", tag); tag = trim(tag); next }
		/@@END@@/ { body = $0; sub(/.*@@END@@/, "", body); print sec, tag, trim(body) }'
}

# section_tags SECTION: the tags of man_entries lines (stdin) in SECTION.
section_tags() {
	awk -F'\t' -v s="$1" '$1 == s { print $2 }'
}

# entry_body SECTION TAG_PREFIX: the body of the first entry of SECTION
# whose tag starts with TAG_PREFIX (man_entries lines on stdin).
entry_body() {
	awk -F'\t' -v s="$1" -v t="$2" '$1 == s && index($2, t) == 1 { print $3; exit }'
}
