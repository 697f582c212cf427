#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# h_env: the guest is what tests/vm/run.sh promises the tests: a clean
# kernel log, the environment variables, a read-only repository as cwd, a
# writable and empty OUT, a writable /tmp, two CPUs, root, and the real
# kernel under test.
set -euo pipefail

# shellcheck source=../lib/assert.sh
. "$REPO/tests/vm/lib/assert.sh"

# The harness clears the kernel log before each test (so a warning is
# blamed on the test that caused it) and starts from an untainted kernel
# but for O (out-of-tree) and E (unsigned module).
if dmesg | grep -q 'Linux version'; then
	fail "the kernel log was not cleared before the test: boot messages still there"
fi
taint=$(</proc/sys/kernel/tainted)
(((taint & ~(4096 | 8192)) == 0)) || fail "kernel tainted $taint before the test"

for var in REPO KVER CPROF_KO CPROF_DUMP WORKLOADS OUT; do
	[[ -n ${!var:-} ]] || fail "\$$var is not set"
	echo "$var=${!var}"
done
[[ $(pwd) == "$REPO" ]] || fail "cwd is $(pwd), not \$REPO"
[[ -f $REPO/tests/vm/run.sh ]] || fail "\$REPO does not look like the repository"
[[ $KVER == "$(uname -r)" ]] || fail "\$KVER=$KVER but uname -r says $(uname -r)"
[[ -f /boot/vmlinuz-$KVER ]] || fail "the guest runs $KVER, which is not a kernel installed on the host"
[[ $(id -u) == 0 ]] || fail "not root"
[[ $(nproc) == 2 ]] || fail "$(nproc) CPUs online, want 2"
[[ $CPROF_KO == "$REPO/build/$KVER/cprof.ko" ]] || fail "\$CPROF_KO is not build/\$KVER/cprof.ko"
[[ -x $WORKLOADS/cpuburn ]] || fail "no cpuburn in \$WORKLOADS"

# The repository is read-only, OUT and /tmp are writable.
if touch "$REPO/.h_env_probe" 2>/dev/null; then
	rm -f "$REPO/.h_env_probe"
	fail "the repository is writable from the guest"
fi
[[ -z $(ls -A "$OUT") ]] || fail "\$OUT is not empty"
echo probe >"$OUT/probe"
[[ $(<"$OUT/probe") == probe ]] || fail "cannot write \$OUT"
tmp=$(mktemp)
echo probe >"$tmp"
rm "$tmp"

# The guest's own proc and sys, not a view of the host's.
[[ $(awk '$2 == "/proc" { print $3 }' /proc/mounts) == proc ]] || fail "/proc is not a procfs"
echo "h_env: ok on $KVER"
