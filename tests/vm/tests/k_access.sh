#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# k_access: perf's permission model, not the file mode alone (cprof(4)'s
# PERMISSIONS).
#   - uid 0 without CAP_PERFMON and CAP_SYS_ADMIN (capsh --drop, a default
#     container's root), and uid 0 of a user namespace of its own
#     (unshare -Ur), can open none of profile, stats, ctl (read or write)
#     and unwind (EACCES), and the settings stay as they were;
#   - a plain user, and a user with CAP_PERFMON in its ambient set, are
#     refused by the file mode (EACCES);
#   - CAP_PERFMON alone is enough for root;
#   - with kptr_restrict=2 a profile carries no kernel address: no kernel
#     frames, no schedule() address, the header says kernel stacks were
#     withheld, and a kernel-only profile is refused.
# vm-kernels: 6.12 6.1-rt
# vm-timeout: 120
set -euo pipefail
# shellcheck source=../lib/kprof.sh
. "$REPO/tests/vm/lib/kprof.sh"

command -v capsh >/dev/null || fail "capsh missing (libcap2-bin)"
kload
ctl freq=123 seconds=2 depth=50
before=$(cat /proc/cprof/ctl)

# try WHO CMD...: CMD must fail with "Permission denied" for WHO.
denied() {
	local who=$1 out
	shift
	if out=$("$@" 2>&1); then
		fail "$who: '${*: -1}' succeeded"
	fi
	[[ $out == *"Permission denied"* ]] || fail "$who: '${*: -1}' failed otherwise: $out"
}

for how in capsh unshare; do
	# shellcheck disable=SC2054 # capsh's list is one argument
	case $how in
	capsh) run=(capsh --drop=cap_perfmon,cap_sys_admin -- -c) ;;
	unshare) run=(unshare -Ur sh -c) ;;
	esac
	denied "$how" "${run[@]}" 'cat /proc/cprof/profile >/dev/null'
	denied "$how" "${run[@]}" 'cat /proc/cprof/stats >/dev/null'
	denied "$how" "${run[@]}" 'echo freq=5 >/proc/cprof/ctl'
	denied "$how" "${run[@]}" 'echo stop=1 >/proc/cprof/ctl'
	denied "$how" "${run[@]}" 'cat /proc/cprof/ctl >/dev/null'
	denied "$how" "${run[@]}" 'cat /proc/cprof/unwind >/dev/null'
	echo "$how: profile, stats, ctl and unwind refused with EACCES"
done
# Users other than root: the file mode, whatever their capabilities.
for caps in "" +perfmon; do
	run=(setpriv --reuid=65534 --regid=65534 --clear-groups)
	[[ -z $caps ]] || run+=(--inh-caps "$caps" --ambient-caps "$caps")
	for f in profile stats ctl unwind; do
		denied "uid 65534${caps:+ $caps}" "${run[@]}" sh -c "cat /proc/cprof/$f >/dev/null"
	done
	echo "uid 65534${caps:+ with CAP_PERFMON}: every file refused with EACCES"
done
[[ $(cat /proc/cprof/ctl) == "$before" ]] || fail "the settings changed: $(cat /proc/cprof/ctl)"

# cprof-dump says what is missing in one line.
if capsh --drop=cap_perfmon,cap_sys_admin -- -c "$CPROF_DUMP -d 1 -o $OUT/x.pb.gz" 2>"$OUT/dump.err"; then
	fail "cprof-dump -d ran without CAP_PERFMON"
fi
echo "cprof-dump without CAP_PERFMON: $(cat "$OUT/dump.err")"
if (($(wc -l <"$OUT/dump.err") != 1)) || ! grep -q CAP_PERFMON "$OUT/dump.err"; then
	fail "cprof-dump's refusal is not one line naming CAP_PERFMON"
fi

# A refused writer cannot stop a running profile either.
cat /proc/cprof/profile >"$OUT/run.raw" &
reader=$!
wait_profiling || fail "the profile did not start"
capsh --drop=cap_perfmon,cap_sys_admin -- -c 'echo stop=1 >/proc/cprof/ctl' 2>/dev/null &&
	fail "a refused writer wrote stop=1"
wait "$reader"
"$WORKLOADS/streamtext" <"$OUT/run.raw" >"$OUT/run.txt" || fail "the stream is malformed"
reason=$(rawk '$1 == "E" { print $E_reason }' "$OUT/run.txt")
((reason == 0)) || fail "the profile ended with reason $reason, want 0 (complete)"
echo "the settings and the running profile are untouched"

# CAP_PERFMON alone: allowed.
capsh --drop=cap_sys_admin -- -c "cat /proc/cprof/profile >$OUT/perfmon.raw" ||
	fail "CAP_PERFMON without CAP_SYS_ADMIN could not profile"
"$WORKLOADS/streamtext" <"$OUT/perfmon.raw" >/dev/null || fail "the CAP_PERFMON profile is malformed"
echo "CAP_PERFMON alone may profile"

# kptr_restrict=2: no kernel addresses for anyone.
kptr=$(</proc/sys/kernel/kptr_restrict)
trap 'echo "$kptr" >/proc/sys/kernel/kptr_restrict' EXIT
echo 2 >/proc/sys/kernel/kptr_restrict
ctl seconds=2 freq=499
"$WORKLOADS/readzero" 3 >/dev/null &
profile "$OUT/kptr.raw"
wait
read -r hflags < <(rawk '$1 == "H" { print $H_flags }' "$OUT/kptr.raw.txt")
read -r n nk < <(rawk '$1 == "S" { n++; k += $S_nr_kernel } END { print n + 0, k + 0 }' "$OUT/kptr.raw.txt")
echo "kptr_restrict=2: header flags $hflags, $n samples with $nk kernel frames"
((hflags & 2)) || fail "the header does not say kernel stacks were withheld"
((n > 100 && nk == 0)) || fail "$nk kernel frames in $n samples with kptr_restrict=2"
ctl mode=kernel
denied "kptr_restrict=2" cat /proc/cprof/profile
ctl mode=both
echo "$kptr" >/proc/sys/kernel/kptr_restrict
trap - EXIT
echo "k_access: ok"
