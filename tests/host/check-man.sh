#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# check-man.sh: every man page in man/ is well-formed roff that groff takes
# without a warning (groff -ww -z), that man(1) renders (man -l, its
# warnings on) and whose NAME line man-db's whatis parser (lexgrog) reads;
# its .TH names the file; and make install installs it.  Then a damaged
# page must be caught.  Run by tests/host/run.sh.
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$REPO"
# shellcheck source=lib.sh
. tests/host/lib.sh
tmp=${TEST_TMPDIR:-$(mktemp -d)}

for tool in groff man lexgrog; do
	command -v "$tool" >/dev/null || { echo "SKIP $tool is not installed (tests/deps.sh installs it)"; exit 77; }
done

# problems_page PAGE: one line per problem of the man page PAGE.
problems_page() {
	local page=$1 name sect out th
	name=$(basename "$page")
	sect=${name##*.}
	name=${name%.*}
	out=$(groff -ww -z -man "$page" 2>&1)
	[[ -z $out ]] || echo "groff -ww -z: $out"
	if ! out=$(LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -l "$page" 2>&1 >"$tmp/rendered"); then
		echo "man -l failed: $out"
	elif [[ -n $out ]]; then
		echo "man -l: $out"
	fi
	grep -q '^NAME' "$tmp/rendered" || echo "man -l: no NAME section in what it rendered"
	out=$(lexgrog "$page" 2>&1) || echo "lexgrog: $out"
	th=$(sed -n 's/^\.TH \([^ ]*\) \([^ ]*\) .*/\1 \2/p' "$page")
	[[ $th == "${name^^} $sect" ]] || echo ".TH says '$th', the file is $name.$sect"
}

pages=(man/*.[1-9])
[[ -e ${pages[0]} ]] || { not_ok "no man pages in man/"; report; }
for page in "${pages[@]}"; do
	expect_none "$page: groff -ww -z silent, man -l renders, whatis entry, .TH" "$(problems_page "$page")"
done

# make install puts each page in man/manN.
make -s install-userland DESTDIR="$tmp/root" PREFIX=/usr >"$tmp/install.log" 2>&1 ||
	not_ok "make install-userland failed: $(tail -n 5 "$tmp/install.log")"
missing=
for page in "${pages[@]}"; do
	f=$(basename "$page")
	cmp -s "$page" "$tmp/root/usr/share/man/man${f##*.}/$f" || missing+=" $f"
done
expect_none "make install installs every man page" "${missing:+not installed:$missing}"

# The checks of the checks.
{ cat man/cprof.4; printf '.XY unknown macro\n\\fQbad font\n'; } >"$tmp/cprof.4"
expect_found "caught: an unknown macro and a bad font" "groff -ww -z" "$(problems_page "$tmp/cprof.4")"
sed '/^\.SH NAME$/,/^\.SH SYNOPSIS$/{/^\.SH NAME$/!{/^\.SH SYNOPSIS$/!d}}' man/cprof-dump.1 >"$tmp/cprof-dump.1"
expect_found "caught: an empty NAME section" "lexgrog" "$(problems_page "$tmp/cprof-dump.1")"
cp man/cprof.4 "$tmp/cprof.5"
expect_found "caught: a .TH that does not name the file" ".TH says" "$(problems_page "$tmp/cprof.5")"

report
