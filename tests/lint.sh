#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# tests/lint.sh [--fail-fast] (make lint): the style checks, fastest first,
# before anything slow runs.  make check runs it first with --fail-fast (the
# first failing check ends it) and stops there if it fails.
#   - checkpatch --strict --no-tree on kmod/ and include/ (from Debian's
#     linux-source-6.1, unpacked once into build/lint/);
#   - kernel-doc: every function a kmod header declares has a kernel-doc
#     comment, and scripts/kernel-doc -v finds nothing wrong in any;
#   - sparse (make C=2) on kmod/, the in-kernel tests (kmod/tests/)
#     included, for each kernel's headers installed, 6.1 and 6.12 at
#     least: any line sparse prints is a failure;
#   - shellcheck on every shell script git tracks;
#   - the subjects of the commits since the kernel's commit shape was
#     adopted: "unit: summary", at most 72 characters;
#   - userland built with the warnings it is held to beyond -Wall -Wextra
#     (-Wshadow -Wmissing-prototypes -Wformat=2 -Wundef, in its Makefile)
#     and -Werror, the unit tests included: the build make -C userland
#     test runs (build/obj), so the unit tests that follow compile nothing
#     of it again.
# Ends with "lint: N passed, N failed"; exit status 0 only if none failed.
set -uo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$REPO" || exit 1
out=$REPO/build/lint
mkdir -p "$out"
passed=0
failed=0

fail_fast=false
[[ ${1:-} != --fail-fast ]] || fail_fast=true

# check NAME LOG RC: one line for a check; its output on failure (and with
# --fail-fast, the end: make check wants a slip named in seconds).
check() {
	local name=$1 log=$2 rc=$3
	if [[ $rc -eq 0 ]]; then
		echo "ok   $name"
		passed=$((passed + 1))
		return
	fi
	echo "FAIL $name"
	sed 's/^/    /' "$log" | head -n 40
	failed=$((failed + 1))
	if $fail_fast; then
		echo "lint: $passed passed, $failed failed"
		exit 1
	fi
}

# Every tracked shell script through shellcheck, followed into what it
# sources: the longest check on one core, so it runs beside checkpatch and
# kernel-doc, its line printed in its place below.
mapfile -t scripts < <(git ls-files -- '*.sh' .ci/run)
shellcheck -x -P SCRIPTDIR "${scripts[@]}" >"$out/shellcheck.log" 2>&1 &
shellcheck_pid=$!
trap 'kill "$shellcheck_pid" 2>/dev/null' EXIT

# checkpatch.pl, its data files and kernel-doc, from the kernel source
# Debian packages.
checkpatch_dir() {
	local tar=/usr/src/linux-source-6.1.tar.xz ver dir
	[[ -f $tar ]] || return 1
	ver=$(dpkg-query -W -f='${Version}' linux-source-6.1 2>/dev/null) || return 1
	dir=$out/checkpatch-$ver
	if [[ ! -x $dir/scripts/checkpatch.pl || ! -f $dir/scripts/kernel-doc ]]; then
		rm -rf "$dir.tmp" && mkdir -p "$dir.tmp" &&
		tar -xJf "$tar" -C "$dir.tmp" --strip-components=1 --wildcards \
			'*/scripts/checkpatch.pl' '*/scripts/spelling.txt' \
			'*/scripts/const_structs.checkpatch' '*/scripts/kernel-doc' || return 1
		rm -rf "$dir" && mv "$dir.tmp" "$dir"
	fi
	echo "$dir"
}

# checkpatch: what kernel reviewers run, --strict.  --no-tree: out of tree.
# The findings tests/lint-allow.txt excuses are dropped; an entry there
# that excuses nothing is a finding itself.
log=$out/checkpatch.log
if dir=$(checkpatch_dir); then
	mapfile -t files < <(git ls-files -- 'kmod/*.c' 'kmod/*.h' 'include/*.h')
	perl "$dir/scripts/checkpatch.pl" --no-tree --strict --quiet --terse \
		--show-types --ignore SPDX_LICENSE_TAG,FILE_PATH_CHANGES \
		-f "${files[@]}" >"$out/checkpatch.raw" 2>&1
	rc=0
	awk -v allow=tests/lint-allow.txt '
		BEGIN {
			while ((getline line < allow) > 0) {
				sub(/#.*/, "", line)
				if (split(line, f, " ") == 2) ok[f[1] " " f[2]] = 0
			}
		}
		/^total:/ { next }
		match($0, /^[^:]+:[0-9]+: (ERROR|WARNING|CHECK):[A-Z_0-9]+:/) {
			file = $0; sub(/:.*/, "", file)
			type = $0; sub(/^[^:]+:[0-9]+: [A-Z]+:/, "", type); sub(/:.*/, "", type)
			if ((file " " type) in ok) { ok[file " " type]++; next }
		}
		{ print; bad = 1 }
		END {
			for (k in ok) if (!ok[k]) { print allow ": " k ": excuses nothing"; bad = 1 }
			exit bad
		}' "$out/checkpatch.raw" >"$log" || rc=$?
	check "checkpatch --strict --no-tree kmod/ include/ (${#files[@]} files)" "$log" "$rc"
else
	echo "no /usr/src/linux-source-6.1.tar.xz: apt-get install linux-source-6.1 (tests/deps.sh)" >"$log"
	check "checkpatch --strict --no-tree kmod/ include/" "$log" 1
fi

# kernel-doc: each function another unit can call (declared in a kmod
# header, not a static inline) is documented where it is defined or
# declared, and kernel-doc -v has no complaint (a parameter or the return
# value not described).  Its "contents before sections" is not one: it
# flags the layout Documentation/doc-guide/kernel-doc.rst itself shows, a
# description before Context: and Return:.
log=$out/kernel-doc.log
if dir=$(checkpatch_dir); then
	mapfile -t files < <(git ls-files -- 'kmod/*.c' 'kmod/*.h')
	mapfile -t headers < <(git ls-files -- 'kmod/*.h')
	rc=0
	{
		sed -n -E '/^static/d; s/^[a-z].*[ *](cprof_[a-z0-9_]+)\(.*/\1/p' "${headers[@]}" |
			sort -u | while read -r fn; do
				grep -q "^ \* $fn() - " "${files[@]}" ||
					echo "$fn(): declared in a kmod header, no kernel-doc comment"
			done
		perl "$dir/scripts/kernel-doc" -v -none "${files[@]}" 2>&1 |
			grep -v -e ': info: ' -e ': warning: contents before sections$' \
				-e '^[0-9]* warnings$'
	} >"$log"
	[[ ! -s $log ]] || rc=1
	check "kernel-doc kmod/ ($(grep -c '^ \* cprof_[a-z0-9_]*() - ' "${files[@]}" |
		awk -F: '{ n += $2 } END { print n }') functions documented)" "$log" "$rc"
else
	echo "no /usr/src/linux-source-6.1.tar.xz: apt-get install linux-source-6.1 (tests/deps.sh)" >"$log"
	check "kernel-doc kmod/" "$log" 1
fi

# The verdict of the shellcheck run started at the top.
rc=0
wait "$shellcheck_pid" || rc=$?
check "shellcheck (${#scripts[@]} scripts)" "$out/shellcheck.log" "$rc"

# Commit subjects in the kernel's shape, "unit: imperative summary" in at
# most 72 characters, for the commits after SUBJECTS_SINCE (the last one
# before the rule); merges at most 72 characters too.  A shallow clone
# without it has nothing to check.
SUBJECTS_SINCE=f211d35
log=$out/subjects.log
if git cat-file -e "$SUBJECTS_SINCE^{commit}" 2>/dev/null; then
	git log --format='%h %p|%s' "$SUBJECTS_SINCE..HEAD" |
		awk '{ i = index($0, "|"); s = substr($0, i + 1)
		       merge = split(substr($0, 1, i - 1), f, " ") > 2 }
		     length(s) > 72 || (!merge && s !~ /^[^ :]+(, [^ :]+)*: [^ ]/) { print; bad = 1 }
		     END { exit bad }' >"$log" 2>&1
	check "commit subjects since $SUBJECTS_SINCE: 'unit: summary', <= 72 characters (merges: length)" "$log" "$?"
else
	echo "skip commit subjects: $SUBJECTS_SINCE is not in this clone"
fi

# userland and its unit tests, with the warnings userland/Makefile holds it
# to, in its own build (build/obj: the unit tests then reuse it).
log=$out/userland.log
rc=0
make -s -C userland -j"$(nproc)" all test-build >"$log" 2>&1 || rc=$?
check "userland and unit tests: -Werror $(make -s -C userland print-warn 2>/dev/null)" "$log" "$rc"

# sparse on each kernel's headers: 6.1 and 6.12 at least.
kernels=0
for kdir in /usr/src/linux-headers-6.1.[0-9]*-amd64 /usr/src/linux-headers-6.12.[0-9]*-amd64; do
	[[ -d $kdir && $kdir != *-rt-amd64 ]] || continue
	kernels=$((kernels + 1))
	k=${kdir#/usr/src/linux-headers-}
	log=$out/sparse-$k.log
	rc=0
	# a scratch copy: the module's objects in kmod/ are left alone
	rm -rf "$out/sparse-$k" && mkdir -p "$out/sparse-$k" &&
		cp -r Kbuild VERSION kmod include "$out/sparse-$k/" &&
		find "$out/sparse-$k/kmod" \( -name '*.o' -o -name '.*.cmd' \) -delete || rc=$?
	if [[ $rc -eq 0 ]]; then
		make -s -j"$(nproc)" -C "$kdir" M="$out/sparse-$k" C=2 CPROF_KTAP=m modules >"$log" 2>&1 || rc=$?
		# kbuild's own lines are not sparse's findings
		if [[ $rc -eq 0 ]] && grep -v -e '^make\[' -e '^  [A-Z]' \
			-e '^Skipping BTF generation' "$log" | grep -q .; then
			rc=1
		fi
	fi
	check "sparse (C=2) kmod/ on $k" "$log" "$rc"
done
if [[ $kernels -lt 2 ]]; then
	echo "the 6.1 and 6.12 headers are both needed (tests/deps.sh)" >"$out/sparse.log"
	check "sparse on two kernels" "$out/sparse.log" 1
fi

echo "lint: $passed passed, $failed failed"
[[ $failed -eq 0 ]]
