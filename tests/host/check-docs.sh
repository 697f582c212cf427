#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# check-docs.sh: the documentation says what the code does.  From the code
# it takes cprof-dump's options (cprof-dump --help) and the ranges of its
# numbers (userland/cli.c), the ctl keys, their ranges and the modes
# (kmod/ctl.c and the constants of kmod/cprof.h and
# include/uapi/cprof_format.h),
# the module parameters, their ranges and defaults (kmod/main.c), and the
# stats keys (kmod/procfs.c); then checks that
#   - man/cprof-dump.1 has an entry for every option (and none for an option
#     that does not exist), with the range of each number;
#   - docs/cprof-dump.md names every option and the ranges;
#   - man/cprof.4 has an entry for every module parameter, ctl key and stats
#     key (and none for one that does not exist), with the ranges, defaults
#     and modes;
#   - README.md's table names every ctl key and its insmod line every
#     parameter with its default.
# Then it damages copies of the inputs and checks that each damage is
# caught.  Run by tests/host/run.sh (CPROF_DUMP: the cprof-dump to ask;
# TEST_TMPDIR: scratch).
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$REPO"
# shellcheck source=lib.sh
. tests/host/lib.sh
dump=${CPROF_DUMP:-userland/cprof-dump}
tmp=${TEST_TMPDIR:-$(mktemp -d)}

# PID_MAX_LIMIT is the kernel's (include/linux/threads.h): 4 Mi on 64-bit.
KERNEL_DEFINES='PID_MAX_LIMIT 4194304'

# ------------------------------------------------------------ the code

# opts_from_help HELP: "SHORT LONG" per option of --help's text ("-" when
# there is no short option).
opts_from_help() {
	sed -n 's/^ \{1,\}\(-\([^ ,]\), \)\{0,1\} *--\([a-z][a-z-]*\).*/\2 \3/p' "$1" |
		awk '{ if (NF == 1) print "-", $1; else print $1, $2 }'
}

# defines FILE...: "NAME VALUE" of every numeric #define.
defines() {
	sed -n 's/^#define[ \t]\{1,\}\([A-Z0-9_]\{1,\}\)[ \t]\{1,\}\([0-9]\{1,\}\)\([ \t].*\)\{0,1\}$/\1 \2/p' "$@"
	echo "$KERNEL_DEFINES"
}

# resolve DEFS: on stdin, fields that name a define in DEFS become its value.
resolve() {
	awk 'NR == FNR { v[$1] = $2; next } { for (i = 1; i <= NF; i++) if ($i in v) $i = v[$i]; print }' "$1" -
}

# ranges_from_cli CLI_C: "SHORT MIN MAX" of each short option parse_long()
# checks (defines from cli.c, the userland headers of its stages' folders
# and the header they share with the module, include/uapi/cprof_format.h).
ranges_from_cli() {
	defines "$1" "$(dirname "$1")"/*/*.h "$(dirname "$1")"/../include/uapi/cprof_format.h >"$tmp/cli.defs"
	awk 'match($0, /case \x27.\x27:/) { opt = substr($0, RSTART + 6, 1) }
		/case OPT_[A-Z_]+:/ { opt = "" }
		/parse_long\(/ { s = $0; sub(/.*parse_long\("[^"]*", *arg, */, "", s); split(s, a, / *, */); if (opt != "") print opt, a[1], a[2] }' "$1" |
		resolve "$tmp/cli.defs"
}

# ctl_from_c CTL_C HEADER...: "KEY MIN MAX" of each ctl key ("KEY - -" for
# those that are not a number), the keys ctl shows included.
ctl_from_c() {
	local c=$1
	shift
	defines "$@" >"$tmp/ctl.defs"
	{
		awk '/strcmp\(line, "/ { k = $0; sub(/.*strcmp\(line, "/, "", k); sub(/".*/, "", k); keys[k] = 1; last = k }
			/cprof_parse_u32\(val,/ { s = $0; sub(/.*cprof_parse_u32\(val, */, "", s); split(s, a, / *, */); print last, a[1], a[2]; num[last] = 1 }
			/seq_(printf|puts)\(m, "[a-z_]+=/ { k = $0; sub(/.*\(m, "/, "", k); sub(/=.*/, "", k); keys[k] = 1 }
			END { for (k in keys) if (!(k in num)) print k, "-", "-" }' "$c"
	} | resolve "$tmp/ctl.defs" | sort
}

# mode_names CTL_C: the values of mode=.
mode_names() {
	sed -n 's/^[ \t]*\[CPROF_MODE_[A-Z]*\][ \t]*=[ \t]*"\([a-z]*\)",.*/\1/p' "$1"
}

# params_from_main MAIN_C: "NAME MIN MAX DEFAULT" of each module parameter,
# from its MODULE_PARM_DESC "(MIN-MAX, default DEFAULT)".
params_from_main() {
	awk '/^module_param\(/ { p = $0; sub(/^module_param\(/, "", p); sub(/,.*/, "", p); seen[p] = 1 }
		/^MODULE_PARM_DESC\(/ { p = $0; sub(/^MODULE_PARM_DESC\(/, "", p); sub(/,.*/, "", p)
			if (match($0, /\([0-9]+-[0-9]+, default [0-9]+\)/)) {
				s = substr($0, RSTART + 1, RLENGTH - 2); gsub(/[-,]/, " ", s); split(s, a, / +/)
				print p, a[1], a[2], a[4]; done[p] = 1
			} }
		END { for (p in seen) if (!(p in done)) print p, "?", "?", "?" }' "$1" | sort
}

# stats_from_procfs PROCFS_C: "KEY WHERE" of each stats key, WHERE "total"
# (printed once), "both" (totals and per CPU: cprof_stats_print()) or "cpu"
# (per CPU only, as cpuN.KEY).
stats_from_procfs() {
	awk '/^static .*cprof_stats_print\(/ { in_print = 1 } /^}/ { in_print = 0 }
		/seq_printf\(m, "(%s)?[a-z_]+ %/ { s = $0; sub(/.*seq_printf\(m, "/, "", s)
			pre = sub(/^%s/, "", s); sub(/ .*/, "", s)
			print s, (!pre ? "total" : in_print ? "both" : "cpu") }' "$1" | sort
}

# entries_of MAN: man_entries of MAN, formatted once per content (groff
# takes a second or more a page, and the checks of the checks ask again).
entries_of() {
	local f
	f=$tmp/entries.$(md5sum <"$1" | cut -c1-32)
	[[ -s $f ]] || man_entries "$1" >"$f"
	cat "$f"
}

# ------------------------------------------------------------ the checks
# Each prints one line per problem, nothing when all is well.

# problems_man1 MAN1 HELP CLI_C
problems_man1() {
	local man=$1 short long body min max
	entries_of "$man" | section_tags OPTIONS | grep '^-' >"$tmp/man1.tags" || true
	while read -r short long; do
		if [[ $short == - ]]; then
			grep -Eq -- "^--$long(=| |$)" "$tmp/man1.tags" || echo "cprof-dump.1: no entry for --$long"
		else
			grep -Fq -- "-$short, --$long" "$tmp/man1.tags" || echo "cprof-dump.1: no entry '-$short, --$long'"
		fi
	done < <(opts_from_help "$2")
	while read -r long; do
		opts_from_help "$2" | awk -v l="$long" '$2 == l { f = 1 } END { exit !f }' ||
			echo "cprof-dump.1: an entry for --$long, which cprof-dump does not have"
	done < <(sed -n 's/.*--\([a-z][a-z-]*\).*/\1/p' "$tmp/man1.tags")
	while read -r short min max; do
		long=$(opts_from_help "$2" | awk -v s="$short" '$1 == s { print $2 }')
		body=$(entries_of "$man" | entry_body OPTIONS "-$short, --$long")
		[[ $body == *"$min to $max"* ]] || echo "cprof-dump.1: -$short: no '$min to $max' in '$body'"
	done < <(ranges_from_cli "$3")
}

# problems_md MD HELP CLI_C
problems_md() {
	local md=$1 short long min max
	while read -r short long; do
		case $long in help | usage | version) continue ;; esac
		grep -Eq -- "\`--${long}[ =\`]|\`-${short}[ \`]" "$md" ||
			echo "$(basename "$md"): -$short/--$long not named"
	done < <(opts_from_help "$2")
	while read -r short min max; do
		grep -Fq -- "\`-$short\` $min..$max" "$md" || echo "$(basename "$md"): no '\`-$short\` $min..$max'"
	done < <(ranges_from_cli "$3")
}

# problems_man4 MAN4 CTL_C MAIN_C PROCFS_C HEADER...
problems_man4() {
	local man=$1 ctl=$2 main=$3 procfs=$4 key min max def body where tag mode
	shift 4
	entries_of "$man" >"$tmp/man4.entries"
	# ctl
	section_tags /proc/cprof/ctl <"$tmp/man4.entries" | sed 's/=.*//' | sort >"$tmp/man4.ctl"
	ctl_from_c "$ctl" "$@" >"$tmp/ctl.keys"
	while read -r key min max; do
		if ! grep -qx -- "$key" "$tmp/man4.ctl"; then
			echo "cprof.4: no ctl entry for $key="
			continue
		fi
		[[ $min == - ]] && continue
		body=$(entry_body /proc/cprof/ctl "$key=" <"$tmp/man4.entries")
		[[ $body == *"$min to $max"* ]] || echo "cprof.4: ctl $key: no '$min to $max' in '$body'"
	done <"$tmp/ctl.keys"
	while read -r key; do
		grep -q "^$key " "$tmp/ctl.keys" || echo "cprof.4: a ctl entry for $key=, which ctl does not have"
	done <"$tmp/man4.ctl"
	body=$(entry_body /proc/cprof/ctl "mode=" <"$tmp/man4.entries")
	for mode in $(mode_names "$ctl"); do
		[[ " $body " =~ [^a-z]${mode}[^a-z] ]] || echo "cprof.4: ctl mode: no '$mode' in '$body'"
	done
	# module parameters
	section_tags "Module parameters" <"$tmp/man4.entries" | sed 's/=.*//' | sort >"$tmp/man4.params"
	params_from_main "$main" >"$tmp/params"
	while read -r key min max def; do
		if ! grep -qx -- "$key" "$tmp/man4.params"; then
			echo "cprof.4: no module parameter entry for $key="
			continue
		fi
		[[ $min != "?" ]] || { echo "main.c: $key: no '(MIN-MAX, default N)' in its MODULE_PARM_DESC"; continue; }
		body=$(entry_body "Module parameters" "$key=" <"$tmp/man4.entries")
		[[ $body == *"$min to $max"* ]] || echo "cprof.4: parameter $key: no '$min to $max' in '$body'"
		[[ $body == *"default $def)"* ]] || echo "cprof.4: parameter $key: no '(default $def)' in '$body'"
	done <"$tmp/params"
	while read -r key; do
		grep -q "^$key " "$tmp/params" || echo "cprof.4: an entry for module parameter $key, which the module does not have"
	done <"$tmp/man4.params"
	# stats
	section_tags /proc/cprof/stats <"$tmp/man4.entries" | sort >"$tmp/man4.stats"
	stats_from_procfs "$procfs" >"$tmp/stats"
	while read -r key where; do
		tag=$key
		[[ $where != cpu ]] || tag=cpuN.$key
		grep -qx -- "$tag" "$tmp/man4.stats" || echo "cprof.4: no stats entry for $tag"
	done <"$tmp/stats"
	while read -r tag; do
		key=${tag#cpuN.}
		grep -q "^$key " "$tmp/stats" || echo "cprof.4: a stats entry for $tag, which stats does not have"
	done <"$tmp/man4.stats"
}

# problems_readme README CTL_C MAIN_C HEADER...
problems_readme() {
	local readme=$1 ctl=$2 main=$3 key min max def row
	shift 3
	row=$(grep -F "| \`ctl\` |" "$readme" || true)
	[[ -n $row ]] || echo "$(basename "$readme"): no '| \`ctl\` |' row"
	while read -r key min max; do
		[[ $row == *"\`$key"* ]] || echo "$(basename "$readme"): the ctl row does not name $key"
	done < <(ctl_from_c "$ctl" "$@")
	while read -r key min max def; do
		grep -q "^insmod .*\[$key=$def\]" "$readme" ||
			echo "$(basename "$readme"): the insmod line has no [$key=$def]"
	done < <(params_from_main "$main")
}

# ------------------------------------------------------------ run

headers=(kmod/cprof.h include/uapi/cprof_format.h)
"$dump" --help >"$tmp/help.txt"
[[ -s $tmp/help.txt ]] || { not_ok "$dump --help printed nothing"; report; }

# at_least N WHAT: the extraction found at least N of WHAT (counted on stdin).
at_least() {
	local n
	n=$(wc -l)
	if ((n >= $1)); then
		ok "found $n $2"
	else
		not_ok "found only $n $2: the code changed shape, fix the extraction"
	fi
}
at_least 10 "options in cprof-dump --help" < <(opts_from_help "$tmp/help.txt")
at_least 10 "ctl keys in kmod/ctl.c" < <(ctl_from_c kmod/ctl.c "${headers[@]}")
at_least 10 "stats keys in kmod/procfs.c" < <(stats_from_procfs kmod/procfs.c)
at_least 6 "module parameters in kmod/main.c" < <(params_from_main kmod/main.c)
at_least 4 "ranges of numbers in userland/cli.c" < <(ranges_from_cli userland/cli.c)
if ctl_from_c kmod/ctl.c "${headers[@]}" | awk '$2 !~ /^([0-9]+|-)$/ || $3 !~ /^([0-9]+|-)$/ { bad = 1 } END { exit bad }'; then
	ok "every ctl range resolves to numbers"
else
	not_ok "a ctl range does not resolve to numbers: $(ctl_from_c kmod/ctl.c "${headers[@]}" | tr '\n' ';')"
fi

expect_none "man/cprof-dump.1: every option, none extra, the ranges" \
	"$(problems_man1 man/cprof-dump.1 "$tmp/help.txt" userland/cli.c)"
expect_none "docs/cprof-dump.md: every option, the ranges" \
	"$(problems_md docs/cprof-dump.md "$tmp/help.txt" userland/cli.c)"
expect_none "man/cprof.4: every parameter, ctl key and stats key, none extra, ranges, defaults, modes" \
	"$(problems_man4 man/cprof.4 kmod/ctl.c kmod/main.c kmod/procfs.c "${headers[@]}")"
expect_none "README.md: every ctl key, every module parameter with its default" \
	"$(problems_readme README.md kmod/ctl.c kmod/main.c "${headers[@]}")"

# The checks of the checks: a damaged copy must be caught.
awk '/^\.B \\-\\-no\\-unwind\\-tables$/ { skip = 1; next } skip && /^\.TP$/ { skip = 0 } !skip' \
	man/cprof-dump.1 >"$tmp/no-entry.1"
expect_found "caught: an option without its man page entry" "--no-unwind-tables" \
	"$(problems_man1 "$tmp/no-entry.1" "$tmp/help.txt" userland/cli.c)"
{ cat "$tmp/help.txt"; echo "      --new-option           Something new"; } >"$tmp/help-new.txt"
expect_found "caught: a new option in --help" "--new-option" \
	"$(problems_man1 man/cprof-dump.1 "$tmp/help-new.txt" userland/cli.c)"
sed 's/^\(  -i, --input\)/  -j, --injure/' "$tmp/help.txt" >"$tmp/help-renamed.txt"
expect_found "caught: an option documented that cprof-dump does not have" "--input, which" \
	"$(problems_man1 man/cprof-dump.1 "$tmp/help-renamed.txt" userland/cli.c)"
sed "s/\`-F\` 1\.\.100000/\`-F\` 1..1000/" docs/cprof-dump.md >"$tmp/md-range.md"
expect_found "caught: a wrong range in docs/cprof-dump.md" "-F" \
	"$(problems_md "$tmp/md-range.md" "$tmp/help.txt" userland/cli.c)"
awk '/^\.BI freq= HZ$/ { n++ } n == 2 && /1 to 100000/ { sub(/1 to 100000/, "1 to 10000"); n++ } { print }' man/cprof.4 >"$tmp/range.4"
expect_found "caught: a wrong ctl range in cprof.4" "ctl freq" \
	"$(problems_man4 "$tmp/range.4" kmod/ctl.c kmod/main.c kmod/procfs.c "${headers[@]}")"
sed 's/(default 1024)/(default 2048)/' man/cprof.4 >"$tmp/default.4"
expect_found "caught: a wrong parameter default in cprof.4" "parameter buffer_kb" \
	"$(problems_man4 "$tmp/default.4" kmod/ctl.c kmod/main.c kmod/procfs.c "${headers[@]}")"
sed 's/seq_printf(m, "%sticks %llu\\n", prefix, c->ticks);/&\n\tseq_printf(m, "%snew_counter %llu\\n", prefix, c->ticks);/' \
	kmod/procfs.c >"$tmp/procfs.c"
expect_found "caught: a new stats key" "no stats entry for new_counter" \
	"$(problems_man4 man/cprof.4 kmod/ctl.c kmod/main.c "$tmp/procfs.c" "${headers[@]}")"
sed 's/if (!strcmp(line, "budget"))/if (!strcmp(line, "newkey"))\n\t\treturn cprof_parse_u32(val, 1, 2, \&s->budget);\n&/' \
	kmod/ctl.c >"$tmp/ctl.c"
expect_found "caught: a new ctl key (man page)" "newkey" \
	"$(problems_man4 man/cprof.4 "$tmp/ctl.c" kmod/main.c kmod/procfs.c "${headers[@]}")"
expect_found "caught: a new ctl key (README)" "newkey" \
	"$(problems_readme README.md "$tmp/ctl.c" kmod/main.c "${headers[@]}")"
sed 's/\[budget=25\] //' README.md >"$tmp/README.md"
expect_found "caught: a parameter missing from README's insmod line" "[budget=25]" \
	"$(problems_readme "$tmp/README.md" kmod/ctl.c kmod/main.c "${headers[@]}")"

report
