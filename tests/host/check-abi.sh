#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# check-abi.sh: the module and cprof-dump agree on the format,
# include/uapi/cprof_format.h.  One translation unit that includes it is
# built twice: by kbuild, as an object of kmod/ (the kernel's headers and
# flags, kmod/Kbuild's own, compat.h force-included), for each kernel
# whose headers are installed; and with userland's flags.  pahole reads
# each object's debug information: every struct's layout (each field's
# offset and size, the size), every enum's values, and (gcc -g3) every
# CPROF_ macro as defined; the kernels' tables must be userland's.  The
# real objects are read too where they are built (userland's in build/obj,
# the module's in kmod/): each struct of the format they hold is as in the
# table, whatever the unit included before it.  Then a damaged header (a
# field under #ifdef __KERNEL__) must be caught.  Run by tests/host/run.sh.
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$REPO"
# shellcheck source=lib.sh
. tests/host/lib.sh
tmp=${TEST_TMPDIR:-$(mktemp -d)}

for tool in pahole readelf make; do
	command -v "$tool" >/dev/null || {
		not_ok "$tool not found: run tests/deps.sh (as root) first"
		report
	}
done

# The structs and enums the format declares.
mapfile -t types < <(sed -n -E 's/^(struct|enum) (cprof_[a-z0-9_]+) \{.*/\2/p' \
	include/uapi/cprof_format.h | sort -u)
list=$(IFS=,; echo "${types[*]}")
# And its macros.
mapfile -t macros < <(sed -n -E 's/^#define (CPROF_[A-Z0-9_]+).*/\1/p' include/uapi/cprof_format.h | sort -u)

# Debug information for every type and macro, used or not.
DEBUG_FLAGS="-g3 -fno-eliminate-unused-debug-types"

# table OBJ: the format as OBJ's debug information has it.
table() {
	pahole -C "$list" "$1"
	readelf --debug-dump=macro "$1" |
		sed -n -E 's/.* lineno : [0-9]+ macro : (CPROF_[A-Z0-9_]+)(.*)/\1\2/p' |
		awk 'NR == FNR { want[$1] = 1; next } { n = $1; sub(/\(.*/, "", n) } n in want' \
			<(printf '%s\n' "${macros[@]}") - | sed 's/ *$//; s/^/#define /' | sort -u
}

# userland_obj INCLUDE OUT: the translation unit built as userland builds
# its objects, the header found in INCLUDE first.
userland_obj() {
	local flags
	flags=$(make -s -C userland print-cflags)
	echo '#include "cprof_format.h"' >"$tmp/abi-layout.c"
	# shellcheck disable=SC2086 # the flags are words
	(cd userland && ${CC:-cc} -I"$1" $flags $DEBUG_FLAGS -c -o "$2" "$tmp/abi-layout.c")
}

# kernel_obj KDIR INCLUDE OUT: the same, built by kbuild as an object of
# kmod/ in a scratch copy of the module's tree whose include/ is INCLUDE.
kernel_obj() {
	local kdir=$1 src=$tmp/ksrc
	rm -rf "$src" && mkdir -p "$src/kmod" &&
		cp Kbuild VERSION "$src/" && cp kmod/Kbuild kmod/*.h "$src/kmod/" &&
		cp -r "$2" "$src/include" &&
		echo '#include "cprof_format.h"' >"$src/kmod/abi_layout.c" || return 1
	make -s -C "$kdir" M="$src" kmod/abi_layout.o \
		CFLAGS_abi_layout.o="$DEBUG_FLAGS" >"$tmp/kbuild.log" 2>&1 || {
		tail -n 20 "$tmp/kbuild.log"
		return 1
	}
	mv "$src/kmod/abi_layout.o" "$3"
}

# differences A B NAME_A NAME_B: what differs between two tables, one
# line each ("struct cprof_end: kbuild: field x at 8, 4 bytes"); none:
# empty.
differences() {
	awk -v na="$3" -v nb="$4" '
		function norm(l) {
			if (match(l, /\/\* *[0-9]+ +[0-9]+ \*\//)) {
				split(substr(l, RSTART + 2, RLENGTH - 4), p, " ")
				sub(/;.*/, "", l); n = split(l, w, /[ \t*]+/)
				return "field " w[n] " at " p[1] ", " p[2] " bytes"
			}
			if (match(l, /size: [0-9]+/)) return substr(l, RSTART, RLENGTH)
			gsub(/^[ \t]+|[ \t]*,?$/, "", l); gsub(/[ \t]+/, " ", l)
			return l
		}
		FNR == 1 { f++ }
		/^(struct|enum) / { key = $1 " " $2; keys[key]; next }
		/^#define / { k = $2; sub(/\(.*/, "", k); keys[k]; t[f, k, $0] = 1; all[k, $0]; next }
		/^};/ || /^[ \t]*$/ || /last cacheline|sum members|XXX/ { next }
		{ l = norm($0); t[f, key, l] = 1; all[key, l] }
		END {
			for (x in all) {
				split(x, kl, SUBSEP)
				if (!((1, kl[1], kl[2]) in t)) { print kl[1] ": " nb ": " kl[2]; bad[kl[1]] }
				if (!((2, kl[1], kl[2]) in t)) { print kl[1] ": " na ": " kl[2]; bad[kl[1]] }
			}
			for (k in bad) print "differ: " k >"/dev/stderr"
		}' "$1" "$2" 2>"$tmp/differ" | sort >"$tmp/differences"
	[[ ! -s $tmp/differ ]] || sort "$tmp/differ" | paste -sd, - | sed 's/,differ: /, /g'
	head -n 12 "$tmp/differences"
}

# The reference: userland's view.
if ! userland_obj "$REPO/include/uapi" "$tmp/user.o" >"$tmp/user.log" 2>&1; then
	not_ok "the format does not build as userland builds it:"
	sed 's/^/    /' "$tmp/user.log"
	report
fi
table "$tmp/user.o" >"$tmp/user.txt"
missing=$(for t in "${types[@]}"; do grep -qE "^(struct|enum) $t \{" "$tmp/user.txt" || echo "$t"; done)
expect_none "userland's table holds every struct and enum of the format (${#types[@]})" "$missing"
nfields=$(grep -cE '^\s+[^/].*/\* +[0-9]+ +[0-9]+ \*/' "$tmp/user.txt" || true)
nmacros=$(grep -c '^#define' "$tmp/user.txt" || true)
echo "format: ${#types[@]} structs and enums, $nfields fields, $nmacros macros; sizes:" \
	"$(awk '/^struct/ { s = $2 } /\/\* size: / { sub(/,/, "", $3); printf "%s%s %s", sep, s, $3; sep = ", " }' "$tmp/user.txt")"

# Each kernel's view (the RT flavours' are their base kernel's).
kernels=0
first=
for kdir in /usr/src/linux-headers-*-amd64; do
	[[ -f $kdir/Makefile && $kdir != *-rt-amd64 ]] || continue
	k=${kdir#/usr/src/linux-headers-}
	kernels=$((kernels + 1))
	first=${first:-$kdir}
	if ! kernel_obj "$kdir" "$REPO/include" "$tmp/kernel-$k.o" >"$tmp/kernel.log" 2>&1; then
		not_ok "$k: kbuild did not build the format as an object of kmod/:"
		sed 's/^/    /' "$tmp/kernel.log"
		continue
	fi
	table "$tmp/kernel-$k.o" >"$tmp/kernel-$k.txt"
	if cmp -s "$tmp/user.txt" "$tmp/kernel-$k.txt"; then
		ok "$k: kbuild's objects lay the format out as userland's ($nfields fields, $nmacros macros)"
	else
		not_ok "$k: kbuild's and userland's views of the format differ (diff $tmp/user.txt $tmp/kernel-$k.txt):"
		differences "$tmp/user.txt" "$tmp/kernel-$k.txt" userland kbuild | sed 's/^/    /'
	fi
done
[[ $kernels -gt 0 ]] || not_ok "no kernel headers in /usr/src/linux-headers-*-amd64: tests/deps.sh installs them"

# The objects the builds made, where they are: the format's structs as
# each unit compiled them.
# blocks FILE: each struct of the format FILE holds, one line each.
blocks() {
	awk -v list=",$list," '/^struct [a-z0-9_]+ \{$/ && index(list, "," $2 ",") { on = 1; b = "" }
		on { b = b $0 "|" } on && /^};/ { print b; on = 0 }' "$1"
}
blocks "$tmp/user.txt" | sort >"$tmp/ref.blocks"
seen=0
: >"$tmp/objs.bad"
for o in build/obj/*.o kmod/*.o; do
	[[ -f $o && $o != *.mod.o ]] || continue
	pahole "$o" >"$tmp/obj.txt" 2>/dev/null || true
	blocks "$tmp/obj.txt" | sort -u >"$tmp/obj.blocks"
	[[ -s $tmp/obj.blocks ]] || continue
	seen=$((seen + 1))
	comm -23 "$tmp/obj.blocks" "$tmp/ref.blocks" | cut -d'|' -f1 |
		sed "s|^|$o: |; s| {$| is not as in the table (built from another header?)|" >>"$tmp/objs.bad"
done
if [[ $seen -gt 0 ]]; then
	expect_none "$seen built objects that use the format hold its structs as the table has them" "$(cat "$tmp/objs.bad")"
fi

# The check of the check: a field only the kernel sees, in a copy of the
# header that both sides build, is caught.
if [[ -n $first ]]; then
	mkdir -p "$tmp/damaged/uapi"
	awk '{ print } /^struct cprof_end \{/ { on = 1 }
		on && /struct cprof_rec/ { print "#ifdef __KERNEL__\n\t__u32\tkernel_only;\n#endif"; on = 0 }' \
		include/uapi/cprof_format.h >"$tmp/damaged/uapi/cprof_format.h"
	if userland_obj "$tmp/damaged/uapi" "$tmp/user-damaged.o" >"$tmp/user.log" 2>&1 &&
		kernel_obj "$first" "$tmp/damaged" "$tmp/kernel-damaged.o" >"$tmp/kernel.log" 2>&1; then
		table "$tmp/user-damaged.o" >"$tmp/user-damaged.txt"
		table "$tmp/kernel-damaged.o" >"$tmp/kernel-damaged.txt"
		expect_found "caught: a field of struct cprof_end under #ifdef __KERNEL__" "struct cprof_end: kbuild: field kernel_only at 8, 4 bytes" \
			"$(differences "$tmp/user-damaged.txt" "$tmp/kernel-damaged.txt" userland kbuild)"
	else
		not_ok "the damaged header did not build: $(cat "$tmp/user.log" "$tmp/kernel.log" | tail -n 5)"
	fi
fi

report
