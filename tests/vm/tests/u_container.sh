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
#     symbolized, and is named from the file held since its mappings came.
#   - In the folded output, each program's samples in libpick.so carry its
#     own build's function only (at least half of its samples, and none
#     the other build's), and no libpick.so frame is left unnamed.
# vm-timeout: 240
set -euo pipefail
# shellcheck source=../lib/kprof.sh
. "$REPO/tests/vm/lib/kprof.sh"

command -v cc >/dev/null || skip "no C compiler here"
command -v unshare >/dev/null || skip "no unshare(1) here"
unshare -m true || skip "no mount namespaces here"

# The two builds and the program, on the guest's tmpfs (the root is the
# host's, read-only).
tmp=$(mktemp -d)
mkdir "$tmp/lib" "$tmp/ctnr"
cat >"$tmp/pick.c" <<'EOF'
volatile unsigned long pick_sink;
__attribute__((noinline)) void NAME(void)
{
	for (;;)
		pick_sink++;
}
void pick_spin(void)
{
	NAME();
}
EOF
cat >"$tmp/spin.c" <<'EOF'
#include <stdlib.h>
#include <unistd.h>
void pick_spin(void);
int main(int argc, char **argv)
{
	if (argc > 1)
		alarm(atoi(argv[1]));	/* SIGALRM ends it */
	pick_spin();
	return 0;
}
EOF
for b in host:lib ctnr:ctnr; do
	cc -shared -fPIC -O1 -Wl,-soname,libpick.so -DNAME="pick_${b%%:*}_spin" \
		-o "$tmp/${b#*:}/libpick.so" "$tmp/pick.c" || fail "cc libpick.so (${b%%:*}) failed"
done
cc -O1 -o "$tmp/spin_host" "$tmp/spin.c" -L"$tmp/lib" -lpick -Wl,-rpath,"$tmp/lib" || fail "cc spin failed"
cp "$tmp/spin_host" "$tmp/spin_ctnr"
cp "$tmp/spin_host" "$tmp/spin_gone"
lib=$tmp/lib/libpick.so
nm -D "$lib" | grep -q pick_host_spin || fail "the host's build has no pick_host_spin"
nm -D "$tmp/ctnr/libpick.so" | grep -q pick_ctnr_spin || fail "the other build has no pick_ctnr_spin"

# in_ns PROG [ARG] &: PROG in a mount namespace of its own, the other
# build over the host's at $lib; in the background, $! is PROG's pid (it
# execs).
in_ns() {
	# shellcheck disable=SC2016 # $1 and $2 are the inner shell's
	exec unshare -m --propagation private sh -c 'mount --bind "$1" "$2" && shift 2 && exec "$@"' \
		sh "$tmp/ctnr/libpick.so" "$lib" "$@"
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
in_ns "$tmp/spin_ctnr" &
ctnr=$!
pids+=("$ctnr")
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
in_ns "$tmp/spin_gone" 1 &
gone=$!
pids+=("$gone")
wait "$gone" 2>/dev/null || true
echo "spin_gone $gone ran a second and exited"
wait "$dump" || fail "cprof-dump -d failed: $(cat "$OUT/dump.err")"
sed 's/^/  cprof-dump: /' "$OUT/dump.err"

# Per program: samples, those in each build's function, those with a
# libpick.so frame left unnamed ("libpick.so+0x...").
counts() { # COMM: "total own other unnamed"
	rawk -v c="$1" '{ n = split($folded_stack, f, ";") } f[1] == c {
		t += $NF
		if ($folded_stack ~ /(^|;)pick_host_spin(;|$)/) h += $NF
		if ($folded_stack ~ /(^|;)pick_ctnr_spin(;|$)/) k += $NF
		if ($folded_stack ~ /libpick\.so\+0x/) u += $NF
	} END { print t + 0, h + 0, k + 0, u + 0 }' "$OUT/p.folded"
}
read -r ht hh hk hu < <(counts spin_host)
read -r ct ch ck cu < <(counts spin_ctnr)
read -r gt gh gk gu < <(counts spin_gone)
echo "spin_host: $ht samples, $hh in pick_host_spin, $hk in pick_ctnr_spin, $hu with unnamed libpick.so frames"
echo "spin_ctnr: $ct samples, $ck in pick_ctnr_spin, $ch in pick_host_spin, $cu with unnamed libpick.so frames"
echo "spin_gone: $gt samples, $gk in pick_ctnr_spin, $gh in pick_host_spin, $gu with unnamed libpick.so frames"
((ht >= 50 && ct >= 50 && gt >= 10)) || fail "too few samples to judge (spin_host $ht, spin_ctnr $ct, spin_gone $gt)"
((hk == 0)) || fail "$hk samples of the host's program carry the other build's name"
((ch == 0)) || fail "$ch samples of the namespace's program carry the host's build's name"
((gh == 0)) || fail "$gh samples of the exited namespace's program carry the host's build's name"
((hh * 2 >= ht)) || fail "only $hh of $ht samples of spin_host in pick_host_spin"
((ck * 2 >= ct)) || fail "only $ck of $ct samples of spin_ctnr in pick_ctnr_spin"
((gk * 2 >= gt)) || fail "only $gk of $gt samples of the exited spin_gone in pick_ctnr_spin"
((hu + cu + gu == 0)) || fail "libpick.so frames left unnamed: $(grep -m 3 'libpick.so+0x' "$OUT/p.folded")"
echo "u_container: ok"
