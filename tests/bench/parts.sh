#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# tests/bench/parts.sh COMMIT DIR: the module of COMMIT, and builds of it
# each without one part of the tick, for b_modules to time in one boot:
# where a tick's instructions go.  Each is DIR/NAME/kmod (with include/
# and VERSION beside, as make bench lays out BENCH_MODULES):
#   all         COMMIT's module
#   no-account  no second clock read, no budget accounting (cprof_account)
#   no-cgroup   the cgroup id not looked up (1, the root, written)
#   no-note     no mapping request noted (cprof_maps_note): no address
#               space is listed, so no table is ever used either (its
#               tab run is not a table walk: read its fp run only)
#   no-user     no user walk
#   no-kernel   no kernel walk
# The builds are not cprof: each is COMMIT less a part, to be measured
# against "all", never loaded outside a benchmark.  An edit that no longer
# applies to COMMIT's sources fails here, naming the part.
set -euo pipefail

[[ $# -eq 2 ]] || {
	echo "usage: $0 COMMIT DIR" >&2
	exit 2
}
commit=$1 dir=$2

# part NAME [FROM TO]...: COMMIT's module, each line FROM of its
# kmod/sample.c, the first one (the tick's: cprof_sample() comes first),
# made TO
part() {
	local d=$dir/$1 f top i j
	rm -rf "$d"
	mkdir -p "$d"
	mapfile -t top < <(git ls-tree --name-only "$commit" VERSION include)
	git archive "$commit" kmod "${top[@]}" | tar -x -C "$d"
	f=$d/kmod/sample.c
	for ((i = 2; i < $#; i += 2)); do
		grep -qxF -- "${!i}" "$f" || {
			echo "parts.sh: $1: the line '${!i}' is not in $commit's kmod/sample.c" >&2
			exit 1
		}
		j=$((i + 1))
		awk -v from="${!i}" -v to="${!j}" '!done && $0 == from { print to; done = 1; next } { print }' "$f" >"$f.new"
		mv "$f.new" "$f"
	done
}

part all
# (the clock read before the accounting goes too: the re-arm uses now)
part no-account $'\tend = ktime_get_ns();' $'\tend = now;' \
	$'\tcprof_account(pc, entry, end - now);' $'\t(void)cprof_account;'
# (cprof_cgroup_id() before 94baa9f, __cprof_cgroup_id() since)
cgroup_line=$'\ts->ips[nk + nu] = __cprof_cgroup_id(tsk);'
git show "$commit:kmod/sample.c" | grep -qxF -- "$cgroup_line" ||
	cgroup_line=$'\ts->ips[nk + nu] = cprof_cgroup_id(tsk);'
part no-cgroup "$cgroup_line" $'\ts->ips[nk + nu] = 1;'
part no-note $'\tkick = mapped < nu && cprof_maps_note(s->ips + nk, nu, mapped, now);' $'\tkick = false;'
part no-user $'\tif (uregs && set->mode != CPROF_MODE_KERNEL) {' $'\tif (uregs && !set) {'
part no-kernel $'\telse if (set->mode != CPROF_MODE_USER)' $'\telse if (!set)'
