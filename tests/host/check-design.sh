#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# check-design.sh: docs/design.md's maps of kmod/ and userland/ against the
# code.  Each "## Units (DIR/)" section lists every unit of DIR in its
# table, and its "Who calls whom" graph names, for each unit, exactly the
# other units whose headers the unit's .c and .h include.  Left out of the
# comparison: a unit's own header, and the headers every unit may use
# (kmod: cprof.h, compat.h and the headers in include/; userland: util.h,
# while its units that read the format or the unwind step say so).  The
# headers in include/ are below both: the format (include/uapi/) includes
# only <linux/...> uapi headers, the step (include/cprof/) those, the
# format and <stdbool.h> and <stdint.h>.
# userland's units sit in a folder per stage; its table's "**stage/**"
# rows name the stages lowest first, and a unit includes, as
# "stage/unit.h", only headers of its own stage or of a stage before it.
# Then damaged copies of design.md, of userland and of the format must be
# caught.  No unit's includes may lead back to it (tsort).
# Run by tests/host/run.sh.
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$REPO"
# shellcheck source=lib.sh
. tests/host/lib.sh
tmp=${TEST_TMPDIR:-$(mktemp -d)}

# documented DESIGN DIR: "unit dep" lines from DIR's section of DESIGN (a
# unit without dependencies: "unit -"), and "table unit" lines for the
# units its table lists.
documented() {
	awk -v sect="## Units ($2/)" '
		/^## / { on = ($0 == sect); graph = 0; code = 0; next }
		!on { next }
		/^\| `[a-z_]+\.[ch]` \|/ {
			u = $2; gsub(/`/, "", u); sub(/\.[ch]$/, "", u)
			print "table", u
		}
		/^Who calls whom/ { graph = 1; next }
		graph && /^```/ { code = !code; if (!code) graph = 0; next }
		graph && code {
			n = split($0, clause, /;/)
			for (c = 1; c <= n; c++) {
				if (split(clause[c], side, /──>/) != 2) continue
				gsub(/\([^)]*\)/, "", side[2])
				if (side[1] ~ /most units/) continue
				nl = split(side[1], left, /,/)
				for (i = 1; i <= nl; i++) {
					l = left[i]; gsub(/[ \t]/, "", l)
					if (side[2] ~ /nothing/) { print l, "-"; continue }
					nr = split(side[2], right, /,/)
					for (j = 1; j <= nr; j++) {
						r = right[j]; gsub(/[ \t]/, "", r); sub(/\.h$/, "", r)
						if (r != "") print l, r
					}
				}
			}
		}' "$1"
}

# included DIR SKIP...: "unit dep" for every local header a unit of DIR
# includes, "unit -" for each unit, "file unit" for each .c file.  DIR/tests
# (kmod's in-kernel tests) is no part of it.
included() {
	local dir=$1 f u h
	shift
	for f in $(git ls-files -- "$dir/*.c" "$dir/*.h" ":(exclude)$dir/tests"); do
		u=$(basename "$f")
		u=${u%.[ch]}
		[[ $f == *.c ]] && echo "file $u"
		echo "$u -"
		sed -n -E 's/^#include "([a-z_]+\/)?([a-z_]+)\.h".*/\2/p' "$f" | while read -r h; do
			[[ $h == "$u" || " $* " == *" $h "* ]] || echo "$u $h"
		done
	done
}

# compare DESIGN DIR SKIP...: the differences, one line each; none: empty.
compare() {
	local design=$1 dir=$2
	shift 2
	documented "$design" "$dir" | sort -u >"$tmp/doc"
	included "$dir" "$@" | sort -u >"$tmp/code"
	# the table: every .c file of DIR, and no unit that is not there
	comm -13 <(sed -n 's/^table //p' "$tmp/doc" | sort -u) \
		<(sed -n 's/^file //p' "$tmp/code" | sort -u) |
		while read -r u; do
			echo "$(git ls-files -- "$dir/$u.c" "$dir/*/$u.c" | head -n 1) is not in design.md's table of $dir/"
		done
	comm -23 <(sed -n 's/^table //p' "$tmp/doc" | sort -u) \
		<(grep -v -e '^file ' -e '^table ' "$tmp/code" | cut -d' ' -f1 | sort -u) |
		sed "s|.*|design.md's table of $dir/ lists &, which is not in $dir/|"
	# the graph: arrows, both ways ("unit -" lines only say a unit exists)
	comm -23 <(grep -v -e '^file ' -e '^table ' -e ' -$' "$tmp/doc") \
		<(grep -v -e '^file ' -e ' -$' "$tmp/code") |
		sed "s|^\([^ ]*\) \(.*\)|design.md: \1 ──> \2, but $dir/\1 includes no \2.h|"
	comm -13 <(grep -v -e '^file ' -e '^table ' -e ' -$' "$tmp/doc") \
		<(grep -v -e '^file ' -e ' -$' "$tmp/code") |
		sed "s|^\([^ ]*\) \(.*\)|$dir/\1 includes \2.h; design.md has no \1 ──> \2|"
}

# The headers in include/, by name: every kmod unit may use them.
mapfile -t abi < <(git ls-files -- 'include/*.h' | sed 's|.*/||; s|\.h$||')

check() {
	local design=$1
	{
		compare "$design" kmod cprof compat "${abi[@]}"
		compare "$design" userland util
	} >"$tmp/diff"
}

check docs/design.md
cp "$tmp/diff" "$tmp/base"
if [[ -s $tmp/diff ]]; then
	not_ok "docs/design.md's unit maps disagree with the code:"
	sed 's/^/    /' "$tmp/diff"
else
	ok "docs/design.md: every unit of kmod/ and userland/ in its tables, every include in its call graphs"
fi

# Damaged copies: an arrow taken out, an arrow added, a unit left out of a
# table.  Each must be caught.
damage() {
	local what=$1 expr=$2
	local found
	sed -E "$expr" docs/design.md >"$tmp/design.md"
	check "$tmp/design.md"
	found=$(comm -13 <(sort "$tmp/base") <(sort "$tmp/diff") | head -n 1)
	if [[ -n $found ]]; then
		ok "a design.md with $what is caught: $found"
	else
		not_ok "a design.md with $what passes"
	fi
}
damage "unwind's arrow to utable taken out" 's/^(unwind ──> .*), utable.*/\1/'
damage "an arrow from ring to maps added" 's/^session, access, ring, rcufree ──> .*/session, access, rcufree ──> nothing\nring ──> maps/'
# shellcheck disable=SC2016 # backquotes of markdown, not of the shell
damage "boxed.c left out of the userland table" '/^\| `boxed\.c` \|/d'

# table_stages DESIGN: "stage NAME" for each "**NAME/**" row of DESIGN's
# userland table, lowest first ("**userland/**" is cli.c's, the top), and
# "row UNIT.c NAME" for each unit listed under it.
table_stages() {
	awk '/^## / { on = ($0 == "## Units (userland/)"); next }
		on && /^\| \*\*[a-z_]+\/\*\* \|/ { s = $2; gsub(/[*\/]/, "", s); print "stage", s }
		on && /^\| `[a-z_]+\.c` \|/ { u = $2; gsub(/`/, "", u); print "row", u, s }' "$1"
}

# stage_rule DESIGN [ROOT]: where userland's units break the stage rule of
# DESIGN's table, one line each; none: empty.  ROOT: a copy of the tree to
# read the sources from.
stage_rule() {
	local design=$1 root=${2:-.} f
	{
		table_stages "$design"
		for f in $(git ls-files -- 'userland/*.c' 'userland/*.h'); do
			echo "file $f"
			sed -n -E "s|^#include \"([^\"]+)\".*|include $f \\1|p" "$root/$f"
		done
	} | awk '
		function stage(path) { sub(/^userland\//, "", path); return path ~ /\// ? substr(path, 1, index(path, "/") - 1) : "userland" }
		function base(path) { sub(/.*\//, "", path); return path }
		$1 == "stage" { if (!($2 in rank)) rank[$2] = ++n; next }
		$1 == "row" { row[$2] = $3; next }
		$1 == "file" {
			st = stage($2); u = base($2); home[u] = st
			if (!(st in rank)) print $2 ": its folder " st "/ is no stage of design.md'"'"'s table"
			else if (u ~ /\.c$/ && (u in row) && row[u] != st)
				print "design.md'"'"'s table puts " u " under " row[u] "/, but it is in " st "/"
			next
		}
		$1 == "include" { inc[++m] = $2 " " $3 }
		END {
			for (i = 1; i <= m; i++) {
				split(inc[i], a, " "); h = base(a[2])
				if (!(h in home)) continue
				fs = stage(a[1])
				if (a[2] !~ /^[a-z_]+\/[a-z_]+\.h$/) { print a[1] " includes \"" a[2] "\": write \"" home[h] "/" h "\""; continue }
				hs = substr(a[2], 1, index(a[2], "/") - 1)
				if ((hs in rank) && (fs in rank) && rank[hs] > rank[fs])
					print a[1] " includes " a[2] ": " hs "/ is above " fs "/"
			}
		}' | sort -u
}
expect_none "userland/: each unit in its stage's folder, each include of its own stage or a lower one ($(table_stages docs/design.md | awk '$1 == "stage" { printf "%s%s/", sep, $2; sep = " < " }'))" \
	"$(stage_rule docs/design.md)"
mkdir -p "$tmp/tree"
git ls-files -z userland | xargs -0 cp --parents -t "$tmp/tree"
sed -i 's|^#include "stream/stream.h"|&\n#include "symbolize/resolve.h"|' "$tmp/tree/userland/stream/stream.c"
expect_found "caught: stream/stream.c including symbolize/resolve.h, a stage above it" \
	"userland/stream/stream.c includes symbolize/resolve.h: symbolize/ is above stream/" \
	"$(stage_rule docs/design.md "$tmp/tree")"
perl -0pe 's/(\| \*\*python\/\*\* \|.*?)(\| \*\*unwind\/\*\* \|.*?)(\| \*\*symbolize\/)/$2$1$3/s' docs/design.md >"$tmp/design.md"
expect_found "caught: a design.md with python/ listed after unwind/" \
	"userland/unwind/tableload.c includes python/pyrt.h: python/ is above unwind/" \
	"$(stage_rule "$tmp/design.md")"
# shellcheck disable=SC2016 # backquotes of markdown, not of the shell
sed -E '/^\| `pyrt\.c` \|/d; /^\| `tableload\.c` \|/a | `pyrt.c` | moved |' docs/design.md >"$tmp/design.md"
expect_found "caught: a design.md listing pyrt.c under unwind/" \
	"design.md's table puts pyrt.c under unwind/, but it is in python/" \
	"$(stage_rule "$tmp/design.md")"

# cycles DIR SKIP... [< extra "unit dep" lines]: the include cycles among
# DIR's units, as tsort(1) names them; none: empty.
cycles() {
	local dir=$1
	shift
	{ included "$dir" "$@"; cat; } | grep -v -e '^file ' -e ' -$' |
		awk '{ print $2, $1 }' | tsort 2>&1 >/dev/null | sed "s|^|$dir: |" || true
}
expect_none "kmod/ has no include cycle" "$(cycles kmod cprof compat "${abi[@]}" </dev/null)"
expect_none "userland/ has no include cycle" "$(cycles userland util </dev/null)"
expect_found "caught: a cycle made by session including sample.h" "input contains a loop" \
	"$(echo "session sample" | cycles kmod cprof compat "${abi[@]}")"

# uapi_includes FILE...: each #include of FILE that is not a <linux/...>
# header: the format would need the module's or userland's headers.
uapi_includes() {
	grep -Hn '^[[:space:]]*#[[:space:]]*include' "$@" | grep -v '#[[:space:]]*include <linux/[a-z0-9_/]*\.h>' || true
}
mapfile -t uapi < <(git ls-files -- 'include/uapi/*.h')
if [[ ${#uapi[@]} -eq 0 ]]; then
	not_ok "no header in include/uapi/: the format is include/uapi/cprof_format.h"
else
	expect_none "include/uapi/'s ${#uapi[@]} header(s) include only the kernel's uapi headers" "$(uapi_includes "${uapi[@]}")"
fi
sed 's|^#include <linux/types.h>|&\n#include "cprof.h"|' include/uapi/cprof_format.h >"$tmp/cprof_format.h"
expect_found "caught: the format including a module header" '#include "cprof.h"' "$(uapi_includes "$tmp/cprof_format.h")"

# shared_includes FILE...: each #include of FILE (include/cprof/: code both
# sides compile) that is none of the kernel's uapi headers, the C library's
# <stdbool.h> and <stdint.h> (userland's half of its types) or the format.
shared_includes() {
	uapi_includes "$@" | grep -v -e '#[[:space:]]*include <std\(bool\|int\)\.h>' \
		-e '#[[:space:]]*include "cprof_format\.h"' || true
}
mapfile -t shared < <(git ls-files -- 'include/*.h' ':!include/uapi/*')
expect_none "include/cprof/'s ${#shared[@]} header(s) include only uapi headers, <stdbool.h>, <stdint.h> and the format" \
	"$(shared_includes "${shared[@]}")"
sed 's|^#include "cprof_format.h"|&\n#include "unwind/ustack.h"|' include/cprof/unwind_step.h >"$tmp/unwind_step.h"
expect_found "caught: the unwind step including a userland header" '#include "unwind/ustack.h"' "$(shared_includes "$tmp/unwind_step.h")"

report
