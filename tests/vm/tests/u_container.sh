#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# u_container: programs in a mount namespace of their own, over another
# build of a library at the same path as the host's, are named from their
# build; the host's program from the host's; in one `cprof-dump -d`.
#   - Two builds of libpick.so, one soname, one path (a tmpfs here), their
#     spinning function named pick_host_spin in one and pick_ctnr_spin in
#     the other; one program linked against it, copied under three names.
#   - spin_host runs in the host's view; spin_ctnr in `unshare -m` with the
#     other build bind-mounted over that path; spin_gone likewise, for a
#     second of the profile only: it has exited when the profile is
#     symbolized, and is named from the same build, which spin_ctnr still
#     maps (the module's records say which file, by device and inode);
#     spin_lone, with a third build that nothing else maps, has exited too:
#     its file cannot be had, and its frames stay addresses; spin_ovl sees
#     a fourth build through an overlayfs mount over the library's
#     directory (since 6.8 the file mapped is then the lower layer's, and
#     what the process and stat() see is the overlay's); spin_dbg, with a
#     fifth build stripped of its symbol table, whose spinning function is
#     static, and its debug file under /usr/lib/debug/.build-id/ in its own
#     namespace only: named from that debug file, read through
#     /proc/PID/root.
# Runs on 6.1 and 6.12, not their -rt flavours.
#   - In the folded output, each program's samples in libpick.so carry its
#     own build's function only (at least half of its samples, and none
#     another build's); no libpick.so frame but spin_lone's is left
#     unnamed, and the summary says why spin_lone's are.
# vm-kernels: 6.1 6.12
# vm-timeout: 240
set -euo pipefail
# shellcheck source=../lib/kprof.sh
. "$REPO/tests/vm/lib/kprof.sh"

# what the kernel does here (the record's identity, overlayfs's backing
# files since 6.8) is the same in the -rt flavours: make check's time
command -v unshare >/dev/null || skip "no unshare(1) here"
unshare -m true || skip "no mount namespaces here"

# The builds and the program (make workloads: pick/, from
# tests/workloads/pick.c and pickspin.c), copied to the guest's tmpfs (the
# root is the host's, read-only).
tmp=$(mktemp -d)
[[ -e $WORKLOADS/pick/ok ]] || fail "no libpick.so builds in $WORKLOADS/pick (make workloads)"
cp -a "$WORKLOADS/pick/." "$tmp/" || fail "cannot copy $WORKLOADS/pick to $tmp"
mkdir "$tmp/empty"
dbg_id=$(readelf -n "$tmp/dbg/libpick.so" | awk '/Build ID:/ { print $3 }')
[[ -n $dbg_id ]] || fail "the fifth build has no build ID"
[[ ! -e /usr/lib/debug/.build-id/${dbg_id:0:2}/${dbg_id:2}.debug ]] || fail "the host has the fifth build's debug file"
for p in host ctnr gone lone ovl dbg; do
	cp "$tmp/pickspin" "$tmp/spin_$p"
done
lib=$tmp/lib/libpick.so

# in_ns BUILD PROG [ARG] &: PROG in a mount namespace of its own, BUILD's
# libpick.so over the host's at $lib; in the background, $! is PROG's pid
# (it execs).
in_ns() {
	local build=$1
	shift
	# shellcheck disable=SC2016 # $1 and $2 are the inner shell's
	exec unshare -m --propagation private sh -c 'mount --bind "$1" "$2" && shift 2 && exec "$@"' \
		sh "$tmp/$build/libpick.so" "$lib" "$@"
}

# in_dbg PROG &: in_ns with the fifth build, and its debug files over
# /usr/lib/debug
in_dbg() {
	# shellcheck disable=SC2016 # $1, $2 and $3 are the inner shell's
	exec unshare -m --propagation private sh -c 'mount --bind "$1" "$2" && mount --bind "$3" /usr/lib/debug && shift 3 && exec "$@"' \
		sh "$tmp/dbg/libpick.so" "$lib" "$tmp/debug" "$@"
}

# in_ovl PROG &: PROG in a mount namespace of its own, an overlayfs of the
# fourth build over the library's directory.
in_ovl() {
	# shellcheck disable=SC2016 # $1 and $2 are the inner shell's
	exec unshare -m --propagation private sh -c 'mount -t overlay overlay -o "lowerdir=$1" "$2" && shift 2 && exec "$@"' \
		sh "$tmp/ovl:$tmp/empty" "$tmp/lib" "$@"
}

# mapped_ino PID: the inode of the libpick.so PID maps (its maps' 5th
# column), once it does.
mapped_ino() {
	local i
	for ((i = 0; i < 100 * ${CPROF_SLOW:-1}; i++)); do
		awk -v f="$lib" '$6 == f { print $5; exit }' "/proc/$1/maps" 2>/dev/null | grep . && return 0
		sleep 0.1
	done
	return 1
}

pids=()
trap 'kill "${pids[@]}" 2>/dev/null || true' EXIT
"$tmp/spin_host" &
host=$!
pids+=("$host")
in_ns ctnr "$tmp/spin_ctnr" &
ctnr=$!
pids+=("$ctnr")
in_dbg "$tmp/spin_dbg" &
dbg=$!
pids+=("$dbg")
ovl=
if modprobe overlay 2>/dev/null || grep -qw overlay /proc/filesystems; then
	in_ovl "$tmp/spin_ovl" &
	ovl=$!
	pids+=("$ovl")
	mapped_ino "$ovl" >/dev/null || fail "spin_ovl did not map $lib through the overlay"
else
	echo "no overlayfs in this kernel: spin_ovl not run"
fi
host_ino=$(mapped_ino "$host") || fail "spin_host did not map $lib"
ctnr_ino=$(mapped_ino "$ctnr") || fail "spin_ctnr did not map $lib"
[[ $host_ino == "$(stat -c %i "$lib")" ]] || fail "spin_host maps inode $host_ino, not the host's build"
[[ $ctnr_ino == "$(stat -c %i "$tmp/ctnr/libpick.so")" ]] ||
	fail "spin_ctnr maps inode $ctnr_ino, not the other build: no namespace of its own?"
echo "spin_host $host maps $lib inode $host_ino; spin_ctnr $ctnr, in its own mount namespace, inode $ctnr_ino"

kload
"$CPROF_DUMP" -d 4 -F 199 -f folded -o "$OUT/p.folded" 2>"$OUT/dump.err" &
dump=$!
wait_profiling || fail "the profile did not start"
in_ns ctnr "$tmp/spin_gone" 1 &
gone=$!
pids+=("$gone")
in_ns lone "$tmp/spin_lone" 1 &
lone=$!
pids+=("$lone")
wait "$gone" 2>/dev/null || true
wait "$lone" 2>/dev/null || true
echo "spin_gone $gone and spin_lone $lone ran a second and exited"
wait "$dump" || fail "cprof-dump -d failed: $(cat "$OUT/dump.err")"
sed 's/^/  cprof-dump: /' "$OUT/dump.err"

# Per program: samples, those in each build's function, those with a
# libpick.so frame left unnamed ("libpick.so+0x...").
counts() { # COMM: "total own other unnamed"
	rawk -v c="$1" '{ n = split($folded_stack, f, ";") } f[1] == c {
		t += $NF
		if ($folded_stack ~ /(^|;)pick_host_spin(;|$)/) h += $NF
		if ($folded_stack ~ /(^|;)pick_ctnr_spin(;|$)/) k += $NF
		if ($folded_stack ~ /(^|;)pick_lone_spin(;|$)/) l += $NF
		if ($folded_stack ~ /(^|;)pick_ovl_spin(;|$)/) o += $NF
		if ($folded_stack ~ /(^|;)pick_dbg_inner(;|$)/) d += $NF
		if ($folded_stack ~ /libpick\.so\+0x/) u += $NF
	} END { print t + 0, h + 0, k + 0, l + 0, u + 0, o + 0, d + 0 }' "$OUT/p.folded"
}
read -r ht hh hk hl hu ho _ < <(counts spin_host)
read -r ct ch ck cl cu co _ < <(counts spin_ctnr)
read -r gt gh gk gl gu go _ < <(counts spin_gone)
read -r lt lh lk ll lu lo _ < <(counts spin_lone)
read -r ot oh ok ol ou oo _ < <(counts spin_ovl)
read -r dt dh dk dl du dov dd < <(counts spin_dbg)
echo "spin_host: $ht samples, $hh in pick_host_spin, $hk in pick_ctnr_spin, $hu with unnamed libpick.so frames"
echo "spin_ctnr: $ct samples, $ck in pick_ctnr_spin, $ch in pick_host_spin, $cu with unnamed libpick.so frames"
echo "spin_gone: $gt samples, $gk in pick_ctnr_spin, $gh in pick_host_spin, $gu with unnamed libpick.so frames"
echo "spin_lone: $lt samples, $ll in pick_lone_spin, $lh in pick_host_spin, $lk in pick_ctnr_spin, $lu with unnamed libpick.so frames"
((ht >= 50 && ct >= 50 && gt >= 10 && lt >= 10)) ||
	fail "too few samples to judge (spin_host $ht, spin_ctnr $ct, spin_gone $gt, spin_lone $lt)"
((hl + cl + gl == 0)) || fail "samples of programs that never mapped the third build carry its name"
((ho + co + go + lo == 0)) || fail "samples of programs outside the overlay carry its build's name"
if [[ -n $ovl ]]; then
	echo "spin_ovl: $ot samples, $oo in pick_ovl_spin, $oh in pick_host_spin, $ok + $ol in the others, $ou with unnamed libpick.so frames"
	((ot >= 50)) || fail "too few samples of spin_ovl to judge ($ot)"
	((oh + ok + ol == 0)) || fail "spin_ovl's samples carry another build's name"
	((oo * 2 >= ot && ou == 0)) || fail "spin_ovl, through an overlay: only $oo of $ot samples in pick_ovl_spin, $ou unnamed"
fi
echo "spin_dbg: $dt samples, $dd in pick_dbg_inner (named by the debug file in its namespace only), $((dh + dk + dl + dov)) in the others, $du with unnamed libpick.so frames"
((dt >= 50)) || fail "too few samples of spin_dbg to judge ($dt)"
((dd * 2 >= dt && du == 0)) || fail "spin_dbg: only $dd of $dt samples named from the debug file in its own root, $du unnamed"
((lh + lk + ll == 0)) || fail "the exited spin_lone, whose build nothing maps now, was named ($lh host, $lk other, $ll its own)"
((lu * 2 >= lt)) || fail "only $lu of $lt samples of spin_lone have an unnamed libpick.so frame"
grep -q "libpick.so.*the process is gone" "$OUT/dump.err" ||
	fail "the summary does not say why spin_lone's frames are unnamed: $(cat "$OUT/dump.err")"
((hk == 0)) || fail "$hk samples of the host's program carry the other build's name"
((ch == 0)) || fail "$ch samples of the namespace's program carry the host's build's name"
((gh == 0)) || fail "$gh samples of the exited namespace's program carry the host's build's name"
((hh * 2 >= ht)) || fail "only $hh of $ht samples of spin_host in pick_host_spin"
((ck * 2 >= ct)) || fail "only $ck of $ct samples of spin_ctnr in pick_ctnr_spin"
((gk * 2 >= gt)) || fail "only $gk of $gt samples of the exited spin_gone in pick_ctnr_spin"
((hu + cu + gu == 0)) || fail "libpick.so frames left unnamed: $(grep -m 3 'libpick.so+0x' "$OUT/p.folded")"
echo "u_container: ok"
