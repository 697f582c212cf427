#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# tests/vm/run.sh: run the VM tests on real Debian kernels under QEMU.
#
#   tests/vm/run.sh [--kernel K]... [options] [TEST]...
#
#   --kernel K        6.1, 6.12, 6.1-rt, 6.12-rt, a full release (6.1.0-56-amd64)
#                     or a kernel build tree (a directory holding
#                     arch/x86/boot/bzImage, built with what the VM needs
#                     built in: tests/debug/build-kernel.sh); repeatable.
#                     Default: every kernel in $CPROF_VM_KERNELS, else
#                     "6.1 6.12 6.1-rt 6.12-rt" (Debian's linux-image-amd64,
#                     linux-image-6.12-amd64 and their PREEMPT_RT flavours).
#   --cpu MODEL       QEMU's CPU model under TCG (default: $CPROF_VM_CPU, else
#                     max on the PREEMPT_RT flavours and qemu64 on the
#                     others: kernel_cpu; a debug kernel wants qemu64)
#   --cpus N          the guest's CPUs (default: $CPROF_VM_CPUS, else 2); 1
#                     leaves a 2-core host a core for itself, which steadies
#                     timings (benchmarks: make bench BENCH_CPUS=1)
#   --icount SHIFT    TCG counts instructions: the guest's clocks advance
#                     2^SHIFT ns per instruction, whatever the host does
#                     (-icount), so durations the guest measures count
#                     instructions and do not vary with the host's load;
#                     ONE CPU (QEMU's x86 guests hang bringing up a second
#                     one under -icount).  For benchmarks (make bench
#                     BENCH_ICOUNT=0); default: $CPROF_VM_ICOUNT, else off
#   --test-timeout S  per-test limit inside the guest (default 180; a test can
#                     set its own with a "# vm-timeout: S" line)
#   --timeout S       host-side limit for a whole boot (default: $CPROF_VM_TIMEOUT,
#                     else 120 + the sum of the test limits + 10 per test,
#                     times the slowness the guest last reported, CPROF_SLOW)
#   --deadline T      finish by T (seconds since the epoch; default
#                     $CPROF_DEADLINE, set by make check): each kernel gets
#                     an equal share of the time left, or all of it but 600 s
#                     for each kernel after it if that is more, and a test
#                     that would start too late is reported as not run
#   --summary FILE    append "PASSED FAILED SKIPPED" to FILE (for make check)
#   --list            print the tests that would run and exit
#   --build-only      build each kernel's modules and initramfs for the
#                     tests that would run there, and exit (make check does
#                     so while the host tests run; the VM run then finds
#                     them up to date)
#   --print-logs      print every test's output, not only a failing one's
#   -v, --verbose     copy the guest console to stdout
#   TEST              a name in tests/vm/tests (k_ctl, k_ctl.sh), a glob
#                     ('k_*') or a path to a script anywhere in the repo.
#                     Default: every test in tests/vm/tests/ORDER but the
#                     benchmarks b_*, the debug kernel's stress tests d_*
#                     and the long tests (a "# vm-long: WHY" line).
#   --long            the long tests only (make check-long): anchors'
#                     side-by-sides and races that earn their minutes
#                     less often than make check runs.
#
# The tests run in the order tests/vm/tests/ORDER lists them, however they
# are named (a script outside tests/vm/tests, named by its path, runs
# before them, in the order named).  ORDER must list every
# tests/vm/tests/*.sh exactly once: run.sh refuses to run (--list
# included) while it does not.
#
# For each kernel, one after the other: build the module against that
# kernel's headers into build/KVER/cprof.ko (in a copy of the sources under
# build/KVER/src, so builds for different kernels never clash), with it
# the in-kernel tests into build/KVER/cprof_ktap.ko (CPROF_KTAP=m: k_ktap
# loads it), and with
# CPROF_DEBUG=y (its debug-only knobs) into build/KVER/cprof-debug.ko (from
# build/KVER/src-debug), build or
# reuse the initramfs (build/vm/KVER/), then boot ONE VM that runs all the
# tests: qemu-system-x86_64, TCG (KVM only if /dev/kvm really works), 2 CPUs
# (--cpus; 1 with --icount), 2 GiB, booted with panic_on_warn=1 oops=panic panic=-1
# and -no-reboot.
# The guest mounts the host's / read-only over 9p and switches root to it, so the
# tests run with the host's tools and this very checkout.
#
# Test convention (tests/vm/tests/NAME.sh, executable, bash):
#   - runs in the guest as root, with cwd = the repository (read-only!)
#   - environment:
#       REPO        the repository root
#       KVER        the guest's kernel release (uname -r)
#       CPROF_KO    the cprof.ko built for KVER
#       CPROF_KO_DEBUG  the same built with CPROF_DEBUG=y (debug-only knobs)
#       CPROF_DUMP  userland/cprof-dump (built on the host; may be missing)
#       WORKLOADS   the built tests/workloads programs (build/workloads)
#       OUT         a writable, empty scratch folder for this test, kept
#                   on the host as build/vm-results/KVER/NAME/
#     plus PATH, HOME=/tmp, TMPDIR=/tmp (a tmpfs), LC_ALL=C.UTF-8.
#   - exit 0 = pass, 77 = skip, anything else = fail.  Output goes to
#     build/vm-results/KVER/NAME.log, printed when the test fails.
#   - limit: 180 s unless the script has a "# vm-timeout: SECONDS" line.
#   - after each test the harness kills whatever the test left running,
#     rmmods cprof if still loaded (a failing rmmod fails the test), and
#     fails the test on BUG/WARNING/Oops/Call Trace in the kernel log or on
#     a new taint other than O (out-of-tree) and E (unsigned).  A WARN
#     panics the guest (panic_on_warn): that test and every later one fail,
#     but for one kind of panic only an emulator explains: an "Oops: int3"
#     under TCG whose dumped code holds no int3 where the CPU took it (a
#     stale translation of code the kernel patched; tcg_stale_int3), or a
#     hang with a CPU looping on such an int3 (int3_stale_loop): that
#     test and the rest of the plan run in a new boot, each test twice
#     again at most, four boots at most, and the output says so.
#     A kernel that panics before the guest's init reports anything (no
#     test run, no module of ours loaded), or that stops making progress
#     before then (nothing new on the console for $CPROF_BOOT_STALL
#     seconds, default 90, times the slowness the guest last reported),
#     is booted again, up to three boots.  CPROF_VM_APPEND_FIRST adds
#     kernel parameters to the first boot only: a way to see that
#     (e.g. "rdinit=/bin/busybox -- sleep 100000" never reaches init).
#     A guest that stops answering once its tests run (no status line for
#     $CPROF_VM_HANG seconds, default 300, 1800 under --icount, while
#     guest.sh sends one every 10 s) is stopped; the failure says where
#     its CPUs were, from QEMU's monitor, and the console shows the
#     backtrace an NMI from the host makes the guest panic with.
#   - listed in tests/vm/tests/ORDER, where it should run.
#   - its host half, if it has one: tests/vm/host/NAME.sh, run on the host
#     once the VM has exited if NAME passed, on what it left in OUT
#     (kernel_host_halves).
#   - name prefixes: h_ harness, i_ the installed packages (DKMS's module),
#     k_ kernel module, p_ against perf, u_ userland end to end,
#     b_ benchmarks (run only when named, by make bench), d_ stress tests
#     for a debug kernel (run only when named, by make check-debug),
#     z_lockdown last.
#   - lines of text (the stream as build/workloads/streamtext prints it,
#     pprof's tables) are read by field name: rawk in tests/vm/lib/records.sh.
#
# Exit status: 0 if every test passed or skipped, 1 otherwise.
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
lib=$REPO/tests/vm/lib
build=$REPO/build

kernels=()
tests=()
cpu_model=${CPROF_VM_CPU:-}
icount=${CPROF_VM_ICOUNT:-}
smp=${CPROF_VM_CPUS:-2}
boot_stall=${CPROF_BOOT_STALL:-90}
hang_bound=${CPROF_VM_HANG:-}
test_timeout=180
host_timeout=${CPROF_VM_TIMEOUT:-}
deadline=${CPROF_DEADLINE:-0}
summary=
list_only=
build_only=
long_only=
print_logs=
verbose=

die() {
	echo "run.sh: $*" >&2
	exit 2
}

usage() {
	sed -n '/^#   tests\/vm\/run.sh/,/^#   TEST /p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2
	exit 2
}

is_uint() {
	[[ $1 =~ ^[1-9][0-9]*$ ]]
}

while [[ $# -gt 0 ]]; do
	case $1 in
	--kernel) [[ $# -ge 2 ]] || usage; kernels+=("$2"); shift 2 ;;
	--kernel=*) kernels+=("${1#*=}"); shift ;;
	--cpu) [[ $# -ge 2 ]] || usage; cpu_model=$2; shift 2 ;;
	--icount) [[ $# -ge 2 ]] || usage; icount=$2; shift 2 ;;
	--cpus) [[ $# -ge 2 ]] || usage; smp=$2; shift 2 ;;
	--test-timeout)
		{ [[ $# -ge 2 ]] && is_uint "$2"; } || usage
		test_timeout=$2
		shift 2
		;;
	--timeout)
		{ [[ $# -ge 2 ]] && is_uint "$2"; } || usage
		host_timeout=$2
		shift 2
		;;
	--deadline)
		{ [[ $# -ge 2 ]] && is_uint "$2"; } || usage
		deadline=$2
		shift 2
		;;
	--summary) [[ $# -ge 2 ]] || usage; summary=$2; shift 2 ;;
	--list) list_only=1; shift ;;
	--build-only) build_only=1; shift ;;
	--long) long_only=1; shift ;;
	--print-logs) print_logs=1; shift ;;
	-v | --verbose) verbose=1; shift ;;
	-h | --help) usage ;;
	-*) echo "run.sh: unknown option $1" >&2; usage ;;
	*) tests+=("$1"); shift ;;
	esac
done
[[ -z $host_timeout ]] || is_uint "$host_timeout" || die "CPROF_VM_TIMEOUT must be a number of seconds"
[[ $deadline == 0 ]] || is_uint "$deadline" || die "CPROF_DEADLINE must be seconds since the epoch"
is_uint "$boot_stall" || die "CPROF_BOOT_STALL must be a number of seconds"
[[ -z $hang_bound ]] || is_uint "$hang_bound" || die "CPROF_VM_HANG must be a number of seconds"
[[ -z $cpu_model || $cpu_model =~ ^[A-Za-z0-9_.,+=-]+$ ]] || die "bad CPU model '$cpu_model'"
[[ $smp =~ ^[1-8]$ ]] || die "--cpus (CPROF_VM_CPUS) must be 1 to 8, not '$smp'"
[[ -z $icount || $icount =~ ^([0-9]|10)$ ]] || die "--icount (CPROF_VM_ICOUNT) must be a shift, 0 to 10, not '$icount'"
if [[ ${#kernels[@]} -eq 0 ]]; then
	read -r -a kernels <<<"${CPROF_VM_KERNELS:-6.1 6.12 6.1-rt 6.12-rt}"
fi

# The guest reads paths from vm.env with busybox sh and from the kernel's
# 9p mount: keep them plain.
[[ $REPO =~ ^/[A-Za-z0-9/._+-]*$ ]] || die "the repository path '$REPO' has characters the VM cannot take"

# ---------------------------------------------------------------- tests

# read_order: order (the names in tests/vm/tests/ORDER, in order) and
# order_index (each name's place); dies unless ORDER names every
# tests/vm/tests/*.sh, once each, and nothing else.
order=()
declare -A order_index=()
read_order() {
	local list=$REPO/tests/vm/tests/ORDER line name rest f
	[[ -f $list ]] || die "no tests/vm/tests/ORDER: the order of the tests"
	while IFS= read -r line || [[ -n $line ]]; do
		read -r name rest <<<"${line%%#*}"
		[[ -n $name ]] || continue
		[[ -z $rest && $name =~ ^[A-Za-z0-9_.+-]+$ ]] || die "tests/vm/tests/ORDER: bad line '$line'"
		[[ -z ${order_index[$name]:-} ]] || die "tests/vm/tests/ORDER lists $name twice"
		[[ -f $REPO/tests/vm/tests/$name.sh ]] || die "tests/vm/tests/ORDER lists $name: no tests/vm/tests/$name.sh"
		order_index[$name]=${#order[@]}
		order+=("$name")
	done <"$list"
	for f in "$REPO"/tests/vm/tests/*.sh; do
		[[ -e $f ]] || continue
		name=$(basename "$f" .sh)
		[[ -n ${order_index[$name]:-} ]] ||
			die "tests/vm/tests/$name.sh is not in tests/vm/tests/ORDER: add it where it should run"
	done
}

# Fills plan_names/plan_scripts/plan_timeouts from the TEST arguments.
plan_names=()
plan_scripts=()
plan_timeouts=()
plan_kernels=()	# a test's "# vm-kernels:" line (kernel_skip_elsewhere)

add_test() {
	local script=$1 name t k
	name=$(basename "$script" .sh)
	[[ $name =~ ^[A-Za-z0-9_.+-]+$ ]] || die "bad test name '$name'"
	[[ -x $REPO/$script ]] || die "$script is not executable"
	for t in "${plan_names[@]}"; do
		[[ $t != "$name" ]] || return 0
	done
	t=$(sed -n 's/^# vm-timeout: *\([0-9][0-9]*\) *$/\1/p' "$REPO/$script" | head -n 1)
	k=$(sed -n 's/^# vm-kernels: *\([0-9a-z. -]*[0-9a-z]\) *$/\1/p' "$REPO/$script" | head -n 1)
	plan_names+=("$name")
	plan_scripts+=("$script")
	plan_timeouts+=("${t:-$test_timeout}")
	plan_kernels+=("$k")
}

# kernel_series KVER: KVER's name in "# vm-kernels:" lines (6.1, 6.12,
# 6.1-rt, 6.12-rt); none for another kernel, a debug one (make
# check-debug), which runs every test.
kernel_series() {
	case $1 in
	*-cprof-debug) ;;
	6.1.*-rt-*) echo 6.1-rt ;;
	6.12.*-rt-*) echo 6.12-rt ;;
	6.1.*) echo 6.1 ;;
	6.12.*) echo 6.12 ;;
	esac
}

# runs_here I SERIES: whether the plan's Ith test runs on the kernel
# kernel_series named SERIES.
runs_here() {
	[[ -z $2 || -z ${plan_kernels[$1]} || " ${plan_kernels[$1]} " == *" $2 "* ]]
}

# is_long NAME: whether tests/vm/tests/NAME.sh is a long test (a
# "# vm-long: WHY" line): make check-long's, not make check's (a b_ test
# so marked is make bench's too).
is_long() {
	grep -q '^# vm-long: ' "$REPO/tests/vm/tests/$1.sh"
}

# resolve_tests: the plan, in ORDER's order: the tests named (when none
# is, all but b_, d_ and the long ones; with --long, the long ones), after
# the scripts named by a path outside tests/vm/tests.
resolve_tests() {
	local arg path matched f name
	local -A named=()
	local -a outside=()
	if [[ ${#tests[@]} -eq 0 ]]; then
		for name in "${order[@]}"; do
			if [[ -n $long_only ]]; then
				is_long "$name" || continue
			else
				[[ $name != [bd]_* ]] || continue
				! is_long "$name" || continue
			fi
			add_test "tests/vm/tests/$name.sh"
		done
		return 0
	fi
	[[ -z $long_only ]] || die "--long takes no test names"
	for arg in "${tests[@]}"; do
		if [[ $arg == */* ]]; then
			path=$(realpath -e "$arg" 2>/dev/null) || die "no such test script: $arg"
			[[ $path == "$REPO"/* ]] || die "$arg is outside the repository (the guest sees only the repo)"
			name=$(basename "$path" .sh)
			if [[ $path == "$REPO/tests/vm/tests/$name.sh" && -n ${order_index[$name]:-} ]]; then
				named[$name]=1
			else
				outside+=("${path#"$REPO"/}")
			fi
			continue
		fi
		matched=
		for f in "$REPO"/tests/vm/tests/${arg%.sh}.sh; do
			[[ -e $f ]] || continue
			named[$(basename "$f" .sh)]=1
			matched=1
		done
		[[ -n $matched ]] || die "no test matches '$arg' in tests/vm/tests"
	done
	for path in "${outside[@]}"; do
		add_test "$path"
	done
	for name in "${order[@]}"; do
		[[ -z ${named[$name]:-} ]] || add_test "tests/vm/tests/$name.sh"
	done
}

read_order
resolve_tests
[[ ${#plan_names[@]} -gt 0 ]] || die "no tests to run"

# ---------------------------------------------------------------- kernels

# Where each kernel's pieces are, by release: the image booted, the tree
# cprof.ko builds against, the modules folder the initramfs takes from.
declare -A k_image=() k_kdir=() k_moddir=()

# resolve_kernel SEL: the release SEL names in $resolved, its pieces in k_*.  SEL is a
# kernel build tree, a release in /boot, or a series: "6.1" is the newest
# installed 6.1.x-amd64 that has its headers (not 6.12.x, not -rt-),
# "6.1-rt" the newest 6.1.x-rt-amd64.
resolve_kernel() {
	local sel=$1 f kver best='' flavour=''
	if [[ -d $sel ]]; then
		[[ -f $sel/arch/x86/boot/bzImage && -f $sel/include/config/kernel.release ]] ||
			return 1
		sel=$(cd "$sel" && pwd)
		kver=$(<"$sel/include/config/kernel.release")
		k_image[$kver]=$sel/arch/x86/boot/bzImage
		k_kdir[$kver]=$sel
		k_moddir[$kver]=$sel
		resolved=$kver
		return 0
	fi
	if [[ -e /boot/vmlinuz-$sel ]]; then
		best=$sel
	else
		[[ $sel != *-rt ]] || flavour=rt-
		for f in /boot/vmlinuz-"${sel%-rt}".[0-9]*-amd64; do
			[[ -e $f ]] || continue
			kver=${f#/boot/vmlinuz-}
			[[ -n $flavour ]] || [[ $kver != *-rt-amd64 ]] || continue
			[[ -z $flavour ]] || [[ $kver == *-rt-amd64 ]] || continue
			[[ -d /usr/src/linux-headers-$kver || -d /lib/modules/$kver/build ]] || continue
			best=$(printf '%s\n' "$best" "$kver" | sed '/^$/d' | sort -V | tail -n 1)
		done
		[[ -n $best ]] || return 1
	fi
	k_image[$best]=/boot/vmlinuz-$best
	if [[ -d /usr/src/linux-headers-$best ]]; then
		k_kdir[$best]=/usr/src/linux-headers-$best
	else
		k_kdir[$best]=/lib/modules/$best/build
	fi
	k_moddir[$best]=/lib/modules/$best
	resolved=$best
}

# ---------------------------------------------------------------- list

kvers=()
for sel in "${kernels[@]}"; do
	resolve_kernel "$sel" ||
		die "no kernel '$sel' with headers in /boot and /usr/src (run tests/deps.sh)"
	kvers+=("$resolved")
done

if [[ -n $list_only ]]; then
	for kver in "${kvers[@]}"; do
		for i in "${!plan_names[@]}"; do
			runs_here "$i" "$(kernel_series "$kver")" || continue
			printf '%s %s %ss\n' "$kver" "${plan_names[i]}" "${plan_timeouts[i]}"
		done
	done
	exit 0
fi

for tool in qemu-system-x86_64 busybox cpio make timeout flock; do
	command -v "$tool" >/dev/null || die "$tool not found: run tests/deps.sh (as root) first"
done

# ---------------------------------------------------------------- builds

# Another run.sh in the same checkout would fight over build/: take turns.
mkdir -p "$build/vm"
exec 9>"$build/vm/lock"
if ! flock -n 9; then
	echo "run.sh: waiting for another run.sh in this checkout to finish"
	flock 9
fi

# sync_sources DEST: copy the module's sources (top Makefile, Kbuild, VERSION,
# kmod/, include/) into DEST, touching only what changed so kbuild rebuilds
# incrementally.
sync_sources() {
	local dest=$1 f
	local -a files
	if git -C "$REPO" rev-parse --git-dir >/dev/null 2>&1; then
		mapfile -t files < <(git -C "$REPO" ls-files -co --exclude-standard -- Makefile Kbuild VERSION kmod include)
	else
		mapfile -t files < <(cd "$REPO" && find Makefile Kbuild VERSION kmod include -type f \
			! -name '*.o' ! -name '*.ko' ! -name '*.mod' ! -name '*.mod.c' ! -name '.*.cmd' \
			! -name modules.order ! -name Module.symvers ! -name '*.a')
	fi
	mkdir -p "$dest"
	if [[ -f $dest/.manifest ]]; then
		while IFS= read -r f; do
			[[ -e $REPO/$f ]] || rm -f "$dest/$f"
		done <"$dest/.manifest"
	fi
	: >"$dest/.manifest.new"
	for f in "${files[@]}"; do
		[[ -f $REPO/$f ]] || continue
		echo "$f" >>"$dest/.manifest.new"
		cmp -s "$REPO/$f" "$dest/$f" && continue
		mkdir -p "$dest/$(dirname "$f")"
		cp "$REPO/$f" "$dest/$f"
	done
	mv "$dest/.manifest.new" "$dest/.manifest"
}

# build_module KVER [debug]: build/KVER/cprof.ko and cprof_ktap.ko (the
# in-kernel tests, k_ktap), and with "debug" cprof-debug.ko; log in
# build/KVER/build.log.
build_module() {
	local kver=$1 src=$build/$1/src dsrc=$build/$1/src-debug
	rm -f "$build/$kver/cprof.ko" "$build/$kver/cprof-debug.ko" "$build/$kver/cprof_ktap.ko"
	sync_sources "$src"
	[[ -z ${2:-} ]] || sync_sources "$dsrc"
	if ! make -j"$(nproc)" -C "$src" module KDIR="${k_kdir[$kver]}" CPROF_KTAP=m >"$build/$kver/build.log" 2>&1 ||
		{ [[ -n ${2:-} ]] &&
			! make -j"$(nproc)" -C "$dsrc" module KDIR="${k_kdir[$kver]}" CPROF_DEBUG=y >>"$build/$kver/build.log" 2>&1; }; then
		sed 's/^/    /' "$build/$kver/build.log" | tail -n 40
		return 1
	fi
	cp "$src/kmod/cprof.ko" "$build/$kver/cprof.ko"
	[[ -z ${2:-} ]] || cp "$dsrc/kmod/cprof.ko" "$build/$kver/cprof-debug.ko"
	cp "$src/kmod/cprof_ktap.ko" "$build/$kver/cprof_ktap.ko"
}

# needs_debug_module: whether a test this kernel runs loads cprof-debug.ko
# (its script names CPROF_KO_DEBUG: k_threads, d_stress).  From a fresh
# clone, 6.12's modules built in 35 s with it, 19 s without.
needs_debug_module() {
	local i
	for i in "${!plan_names[@]}"; do
		[[ -z ${result[${plan_names[i]}]:-} ]] || continue
		grep -q CPROF_KO_DEBUG "$REPO/${plan_scripts[i]}" && return 0
	done
	return 1
}

# initramfs KVER: path of the (cached) initramfs for KVER.
initramfs() {
	local kver=$1 moddir=${k_moddir[$1]} key dir
	key=$( (cat "$lib/initramfs.sh" "$lib/init.sh" "$(command -v busybox)"
		cat "$moddir/modules.dep" "$moddir/modules.builtin" 2>/dev/null) |
		sha256sum | cut -c1-16)
	dir=$build/vm/$kver
	if [[ ! -f $dir/initramfs-$key.cpio ]]; then
		mkdir -p "$dir"
		rm -f "$dir"/initramfs-*.cpio
		"$lib/initramfs.sh" "$kver" "$dir/initramfs-$key.cpio" "$moddir" >&2 || return 1
	fi
	echo "$dir/initramfs-$key.cpio"
}

# KVM only if it really runs a guest: /dev/kvm can exist and still hang or
# fail.  The answer is kept in build/vm/kvm for this host kernel.
accel=
accel_cpu=	# -cpu under KVM (host); under TCG kernel_cpu's
mon=	# the folder of the monitor's pipes (vm_start)
pick_accel() {
	local kver=$1 initrd=$2 key answer=no out
	[[ -z $accel ]] || return 0
	if [[ -n $icount ]]; then
		accel="-accel tcg,thread=single -icount shift=$icount,sleep=off"
		smp=1
		return 0
	fi
	accel="-accel tcg,thread=multi"
	[[ -w /dev/kvm ]] || return 0
	key="$(uname -r) $(stat -c %i /dev/kvm)"
	if [[ -f $build/vm/kvm && $(head -n 1 "$build/vm/kvm") == "$key" ]]; then
		answer=$(tail -n 1 "$build/vm/kvm")
	else
		out=$(timeout 10 qemu-system-x86_64 -nodefaults -display none -no-reboot -monitor none \
			-accel kvm -cpu host -m 256M -kernel "${k_image[$kver]}" -initrd "$initrd" \
			-append "console=ttyS0 panic=-1 rdinit=/bin/busybox -- poweroff -f" \
			-serial stdio </dev/null 2>&1) || true
		[[ $out != *"Linux version"* ]] || answer=yes
	fi
	printf '%s\n%s\n' "$key" "$answer" >"$build/vm/kvm"
	[[ $answer == yes ]] && accel="-accel kvm" accel_cpu=host
	return 0
}

# kernel_cpu KVER: the CPU model KVER's guest emulates: --cpu's, else max
# on the PREEMPT_RT flavours and qemu64 on the others.  max has SMAP, which
# TCG pays for on every switch between kernel and user access: the same
# cprof-dump tests took 15 % longer on 6.1 under max than under qemu64.
# Every k_ test but k_mapsbudget runs on an RT flavour (tests/README.md).
kernel_cpu() {
	if [[ -n $accel_cpu || -n $cpu_model ]]; then
		echo "${accel_cpu:-$cpu_model}"
	elif [[ $1 == *-rt-* ]]; then
		echo max
	else
		echo qemu64
	fi
}

# ---------------------------------------------------------------- run

passed=0
failed=0
skipped=0
max_slow=1	# the largest slowness any guest reported in this run

report() { # STATUS NAME KVER SECONDS NOTE
	local tag secs=$4
	[[ $secs == - ]] || secs+=s
	case $1 in
	pass) tag=PASS; passed=$((passed + 1)) ;;
	skip) tag=SKIP; skipped=$((skipped + 1)) ;;
	*) tag=FAIL; failed=$((failed + 1)) ;;
	esac
	printf '%s  %-22s %-16s %9s  %s\n' "$tag" "$3" "$2" "$secs" "$5"
}

show_file() { # TITLE FILE LINES
	[[ -s $2 ]] || return 0
	echo "    ---- $1 (last $3 lines of ${2#"$REPO"/})"
	tail -n "$3" "$2" | sed 's/^/    | /'
}

# show_oops FILE: the first kernel report in a console log, from its first
# line (BUG:, Oops, WARNING: ..., or the NMI vm_diagnose sends) to the end
# of the panic that followed (its kernel offset line), 60 lines at most:
# the faulting RIP, the registers and the call trace, which the last lines
# of a long console may not reach.
show_oops() {
	local from
	from=$(grep -n -m 1 -E 'BUG:|WARNING:|Oops|general protection fault|KASAN:|UBSAN:|kernel BUG|watchdog: .*stuck|rcu_.*detected stall|NMI received for unknown reason' "$1" | cut -d: -f1) || true
	[[ -n $from ]] || return 0
	echo "    ---- the first kernel report (line $from of ${1#"$REPO"/})"
	tail -n +"$from" "$1" | tr -d '\r' | sed -n '1,60p; /Kernel Offset:/q' | sed 's/^/    | /'
}

build_userland() {
	[[ -f $REPO/userland/Makefile ]] || {
		echo "run.sh: userland/Makefile missing: userland/cprof-dump not built"
		return 0
	}
	if ! make -C "$REPO/userland" >"$build/userland.log" 2>&1; then
		report fail userland-build host "-" "make -C userland failed"
		show_file "make -C userland" "$build/userland.log" 40
	fi
}

# (not for --build-only: make check's unit tests build userland meanwhile)
if [[ -z $build_only ]]; then
	if ! make -s -C "$REPO/tests/workloads" O="$build/workloads" >"$build/workloads.log" 2>&1; then
		cat "$build/workloads.log" >&2
		die "building tests/workloads failed"
	fi
	build_userland
fi

# fail_plan KVER WHY: every test of the plan failed, not run for WHY.
fail_plan() {
	local name
	for name in "${plan_names[@]}"; do
		[[ -z ${result[$name]:-} ]] || continue
		report fail "$name" "$1" "-" "not run: $2"
	done
}

# The steps of run_kernel, one function each.  They share run_kernel's
# locals (a function sees the locals of the functions that called it):
#   kver kdeadline res     the kernel, its DEADLINE, its results folder
#   initrd total           its initramfs; the plan's time limits, summed
#   attempt t0 slow        this boot: its number (three at most), its start,
#                          the slowness the guest last reported
#   qemu_pid rc seen       the VM, its exit status, the status lines handled
#   timed_out stalled why  why the host stopped it or boots it again
#   result boot_note done_seen fate   what the guest reported: each test's
#                          status, BOOT's note, DONE; why the VM ended early

# kernel_build: build/KVER/cprof.ko and the initramfs (initrd); false, with
# every test reported not run, if either cannot be had.
kernel_build() {
	local debug=
	! needs_debug_module || debug=debug
	if ! build_module "$kver" $debug; then
		fail_plan "$kver" "the module did not build (build/$kver/build.log)"
		return 1
	fi
	if ! initrd=$(initramfs "$kver"); then
		fail_plan "$kver" "no initramfs"
		return 1
	fi
}

# kernel_write_plan: the results folder, emptied, with what guest.sh reads
# there (vm.env and plan); total: 120 s for the boot, and each test's time
# limit plus 10 s.  vm.env also records what the run was: the -icount
# shift (empty without), the CPU model and QEMU's version, the commit
# tested ("+" if the tree has changes) and the day (tests/bench/summary.sh
# reads ICOUNT, COMMIT and DATE).
qemu_version=$(qemu-system-x86_64 --version | awk 'NR == 1 { print $4 }')
if ! commit=$(git -C "$REPO" rev-parse --short HEAD 2>/dev/null); then
	commit=unknown
elif ! git -C "$REPO" diff --quiet HEAD --; then
	commit+=+
fi
kernel_write_plan() {
	rm -rf "$res"
	mkdir -p "$res"
	cat >"$res/vm.env" <<-EOF
		REPO=$REPO
		RESULTS=$res
		CPROF_KO=$build/$kver/cprof.ko
		CPROF_KO_DEBUG=$build/$kver/cprof-debug.ko
		CPROF_DUMP=$REPO/userland/cprof-dump
		WORKLOADS=$build/workloads
		DEADLINE=$kdeadline
		ICOUNT=$icount
		CPU=$(kernel_cpu "$kver")
		QEMU=$qemu_version
		COMMIT=$commit
		DATE=$(date -u +%F)
	EOF
	# the kernel's symbols, for ksym, once per image
	[[ $build/vm/$kver/kallsyms -nt ${k_image[$kver]} ]] ||
		echo "KALLSYMS=1" >>"$res/vm.env"
	kernel_rest_plan
}

# kernel_rest_plan: the plan file, with the tests that have no result
# yet: all of them at first, the rest in a boot after one that ended
# mid-plan; total, the boot's time limit before stretching.
kernel_rest_plan() {
	local i
	total=120
	: >"$res/plan"
	for i in "${!plan_names[@]}"; do
		[[ -z ${result[${plan_names[i]}]:-} ]] || continue
		echo "${plan_names[i]} ${plan_timeouts[i]} ${plan_scripts[i]}" >>"$res/plan"
		total=$((total + plan_timeouts[i] + 10))
	done
}

# kernel_skip_elsewhere: the tests whose "# vm-kernels: K..." line does not
# name this kernel, skipped here before the module is built or the guest
# booted (a skip in the guest costs a second or more under TCG).  make
# check pairs the kernels so (tests/README.md).  Returns 1 if none is left.
# With an argument (--build-only): mark them, report nothing.
kernel_skip_elsewhere() {
	local i series list left=0
	series=$(kernel_series "$kver")
	for i in "${!plan_names[@]}"; do
		if runs_here "$i" "$series"; then
			left=$((left + 1))
			continue
		fi
		list=${plan_kernels[i]// /, }
		[[ $list != *", "* ]] || list="${list%, *} and ${list##*, }"
		result[${plan_names[i]}]=skip
		[[ -n ${1:-} ]] || report skip "${plan_names[i]}" "$kver" - "runs on $list only"
	done
	((left > 0))
}

# tcg_stale_int3: whether this boot ended in an int3 oops that only an
# emulator's stale translation explains.  The kernel patches a jump label
# or a static call by writing int3 first and the final byte last, with a
# sync IPI to every CPU after each step, and it handles an int3 taken
# while a patch is under way: an "Oops: int3" means the CPU ran an int3
# after the patch was done.  When the bytes the oops dumps (its Code:
# line, read from memory) hold something else than int3 (0xcc) before the
# trapping address, the CPU ran code memory no longer held: QEMU's TCG
# (multi-threaded) kept a translation of the patched code.  Seen in
# __schedule under TCG (docs/design.md, "Known problems").
tcg_stale_int3() {
	local code
	[[ $accel == *tcg* ]] || return 1
	code=$(grep -A 12 -m 1 'Oops: int3' "$res/console.log" | grep -m 1 'Code:' | tr -d '\r') || return 1
	[[ $code =~ ([0-9a-f]{2})\ \<[0-9a-f]{2}\> ]] || return 1
	[[ ${BASH_REMATCH[1]} != cc ]]
}

# vm_stop_at: the host's own limit for this boot, in epoch seconds:
# --timeout, else the plan's total stretched by the slowness the guest
# reports, and never past DEADLINE + 60 s (the guest stops starting tests
# at DEADLINE).
vm_stop_at() {
	local t=$((t0 + ${host_timeout:-$((total * slow))}))
	((kdeadline == 0 || t <= kdeadline + 60)) || t=$((kdeadline + 60))
	echo "$t"
}

# vm_start: boot the VM in the background (qemu_pid, killed on exit), its
# serial ports written to console.log and status, both emptied first; t0
# is when.  CPROF_VM_APPEND_FIRST goes to the first boot only.
vm_start() {
	local append
	: >"$res/status"
	: >"$res/console.log"
	append="console=ttyS0 panic_on_warn=1 oops=panic panic=-1 mitigations=off tsc=reliable no_timer_check"
	# an NMI from the host (vm_diagnose) panics: the CPU's backtrace
	append+=" unknown_nmi_panic"
	((attempt > 1)) || append+=${CPROF_VM_APPEND_FIRST:+ $CPROF_VM_APPEND_FIRST}
	t0=$(date +%s)
	# QEMU's monitor on two named pipes, for vm_diagnose (a socket's path
	# under the results folder could pass the 108 bytes a name may have)
	[[ -n $mon ]] || mon=$(mktemp -d)
	rm -f "$mon"/m.in "$mon"/m.out
	mkfifo "$mon/m.in" "$mon/m.out"

	# shellcheck disable=SC2086 # $accel is a list of options
	qemu-system-x86_64 \
		-nodefaults -display none -no-reboot -monitor "pipe:$mon/m" \
		$accel -cpu "$(kernel_cpu "$kver")" -smp $smp -m 2G \
		-kernel "${k_image[$kver]}" -initrd "$initrd" -append "$append" \
		-serial "file:$res/console.log" -serial "file:$res/status" \
		-virtfs "local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap" \
		-virtfs "local,path=$res,mount_tag=results,security_model=none,multidevs=remap" \
		</dev/null >"$res/qemu.log" 2>&1 &
	qemu_pid=$!
	# shellcheck disable=SC2064 # this VM's pid and pipes, now
	trap "kill $qemu_pid 2>/dev/null || true; rm -rf '$mon'" EXIT
	if [[ -n $verbose ]]; then
		tail -n +1 -f --pid="$qemu_pid" "$res/console.log" &
	fi
}

# vm_handle_line LINE: one line from the guest's status port; results are
# printed as the guest reports them.
vm_handle_line() {
	local line=${1%$'\r'} name status secs note
	case $line in
	"RESULT "*)
		read -r _ name status secs note <<<"$line"
		result[$name]=$status
		report "$status" "$name" "$kver" "$secs" "$note"
		if [[ -n $print_logs ]]; then
			show_file "$name output" "$res/$name.log" 10000
		elif [[ $status == fail ]]; then
			show_file "$name output" "$res/$name.log" 60
		fi
		if [[ $status == fail ]]; then
			show_file "$name kernel log" "$res/$name.dmesg" 40
		fi
		;;
	"SLOW "*)
		if [[ ${line#SLOW } =~ ^[0-9]+$ ]] && ((${line#SLOW } > slow)); then
			slow=${line#SLOW }
			((slow <= max_slow)) || max_slow=$slow
		fi
		;;
	"BOOT ok") echo "   booted in $(($(date +%s) - t0)) s" ;;
	"BOOT "* | "INIT-FAIL "*) boot_note=${line#* } ;;
	DONE) done_seen=1 ;;
	esac
}

# mon_cmd COMMAND: what QEMU's monitor answers to COMMAND in 5 s (nothing
# if QEMU itself is stuck).
mon_cmd() {
	# shellcheck disable=SC2016 # expanded by that bash
	timeout 5 bash -c 'printf "%s\n" "$1" >"$2"' _ "$1" "$mon/m.in" || return 0
	timeout 5 cat "$mon/m.out" | tr -d '\r' || true
}

# ksym ADDR: the kernel text symbol ADDR (hex, as the guest runs) is in,
# "SYMBOL+0xOFF", by the kernel's symbols a boot of it wrote (kallsyms, in
# the results or kept in build/vm/KVER/; Debian's System.map is a stub)
# moved by this boot's KASLR offset (results' ktext); the address itself
# if it is not in the kernel's image (a module's).
ksym() {
	local a=$1 map=$build/vm/$kver/kallsyms real text at sym
	[[ ! -s $res/kallsyms ]] || map=$res/kallsyms
	if [[ -s $map && -s $res/ktext ]]; then
		real=$(<"$res/ktext")
		text=$(awk '$3 == "_text" { print $1; exit }' "$map")
		if [[ $real =~ ^[0-9a-f]{16}$ && $text =~ ^[0-9a-f]{16}$ ]]; then
			printf -v a '%016x' $((0x$a - 0x$real + 0x$text))
			read -r at sym < <(awk -v a="$a" '
				($1 "") <= (a "") && ($1 "") >= (at "") { at = $1; s = $3 }
				$3 == "_etext" { e = $1 }
				END { if (s != "" && (a "") < (e "")) print at, s }' "$map")
			if [[ -n ${sym:-} ]]; then
				printf '%s+0x%x\n' "$sym" $((0x$a - 0x$at))
				return 0
			fi
		fi
	fi
	echo "0x$1"
}

# int3_stale_loop CPU REGS: whether CPU, found in the kernel's int3
# handler by REGS (the monitor's "info registers -a"), took an int3 where
# memory holds none (stale_loop says where): 0 yes, 1 no, 2 not known
# from these registers (the CPU elsewhere, or its frame not found).  kprobes'
# handler answers an int3 at a probe just removed by backing the CPU up to
# run the byte memory holds again: a CPU that runs a stale translation
# holding the int3 (tcg_stale_int3) takes it again at once, for ever, and
# with interrupts off it holds up the next text patch's sync IPI: a hang,
# not an oops (seen in p_offcpu under TCG: CPU 0 in exc_int3, CPU 1
# patching in smp_call_function_many_cond).  The handler's frame (struct
# pt_regs: ip at 0x80, cs 0x88, ss 0xa0) is found through the CPU's
# registers, or on its stack: at RSP at the entry, above the return
# address once the handler runs (exc_int3 tail-calls irqentry_nmi_exit,
# where both CPUs of a 6.1-rt guest were found looping), so the 32 words
# from RSP are searched; it must be a kernel frame whose ip is in kernel
# text, and memory must hold no int3 at ip (where kprobes backed the CPU
# up to).  An int3 at ip - 1 (where the CPU trapped, unless it was backed
# up) does not count against it: it is often the padding after a ret
# that a patch site follows (seen in CI on 6.1: ip try_to_wake_up+0x9e,
# bytes c3 cc cc cc cc before the jump the tracepoint's patch wrote), and
# an int3 a patch under way wrote there is handled at once
# (poke_int3_handler), never looped on for the minutes a hang takes.
int3_stale_loop() {
	local cpu=$1 regs ptrs p out ip cs ss bytes w k
	regs=$(awk -v c="$cpu" '
		/^CPU#[0-9]+/ { in_cpu = (substr($1, 5) + 0 == c) }
		in_cpu' <<<"$2" | tr ' ' '\n')
	[[ $(ksym "$(sed -n 's/^RIP=//p' <<<"$regs")") =~ ^(asm_)?(exc_int3|do_int3|poke_int3_handler|kprobe_int3_handler|irqentry_nmi_(enter|exit))\+ ]] || return 2
	[[ -n $int3_seen ]] || int3_seen="CPU $cpu in the int3 handler, its frame not found"
	# where a frame's ip may be, ADDR:WORDS to read: 0x80 into a frame a
	# register points to (its 5 words), or any of the 32 words from RSP
	ptrs=$(sed -n 's/^R[A-Z0-9]*=\(ff[0-9a-f]\{14\}\)$/\1/p' <<<"$regs" | sort -u |
		while read -r p; do printf '%x:5\n' $((0x$p + 0x80)); done)
	p=$(sed -n 's/^RSP=\(ff[0-9a-f]\{14\}\)$/\1/p' <<<"$regs")
	[[ -z $p ]] || ptrs+=$'\n'"$p:36"
	for p in $ptrs; do
		out=$(mon_cmd "$(printf 'cpu %d\nx /%dgx 0x%s' "$cpu" "${p#*:}" "${p%:*}")" |
			awk -F': ' '/^[0-9a-f]+: / { print $2 }' | tr ' ' '\n' | sed -n 's/^0x//p')
		mapfile -t w <<<"$out"
		for ((k = 0; k + 4 < ${#w[@]}; k++)); do
			ip=${w[k]:-} cs=${w[k + 1]:-} ss=${w[k + 4]:-}
			[[ $cs == 0000000000000010 && $ss == 0000000000000018 ]] || continue
			[[ $(ksym "$ip") == [a-z_]*+0x* ]] || continue
			bytes=$(mon_cmd "$(printf 'cpu %d\nx /2bx 0x%x' "$cpu" $((0x$ip - 1)))" |
				awk -F': ' '/^[0-9a-f]+: / { print $2 }' | tr -d '\n')
			int3_seen="CPU $cpu's int3 frame: ip $(ksym "$ip"), bytes at ip - 1: $bytes"
			echo "$int3_seen" >>"${int3_log:-$res/hang.txt}"
			[[ $bytes =~ ^0x[0-9a-f]{2}\ (0x[0-9a-f]{2})$ && ${BASH_REMATCH[1]} != 0xcc ]] || return 1
			stale_loop="CPU $cpu loops on an int3 at $(ksym "$ip") where memory holds ${bytes#* } (${bytes% *} before it)"
			stale_at="$cpu $((0x$ip))"
			return 0
		done
	done
	# no frame yet (the entry code builds it): read again
	return 2
}

# vm_diagnose: the guest stopped answering (hung: seconds without a status
# line, while guest.sh writes ALIVE every 10 s at real-time priority).
# Where its CPUs are goes to the fate line and results' hang.txt: QEMU's
# monitor gives each CPU's registers (RIP named by ksym; HLT=1: idle),
# then an NMI, which the guest (unknown_nmi_panic) answers by panicking
# with a backtrace of the CPU that takes it on the console.  A monitor
# that does not answer means QEMU is stuck, not the guest's kernel.
vm_diagnose() {
	local regs cpus='' cpu rip hlt i rc
	regs=$(mon_cmd "info registers -a")
	printf '%s\n' "$regs" >"$res/hang.txt"
	while read -r cpu rip hlt; do
		if [[ $hlt == 1 ]]; then
			cpus+="${cpus:+, }CPU $cpu idle"
		else
			cpus+="${cpus:+, }CPU $cpu at $(ksym "$rip")"
		fi
	done < <(printf '%s\n' "$regs" | awk '
		/^CPU#[0-9]+/ { c = substr($1, 5) }
		/^RIP=/ { r = substr($1, 5); h = 0
			  for (i = 2; i <= NF; i++) if ($i == "HLT=1") h = 1
			  print c + 0, r, h }')
	fate="the guest stopped answering for $hung s"
	if [[ -z $cpus ]]; then
		fate+=" and so did QEMU's monitor (the emulator is stuck, not the guest)"
		return 0
	fi
	fate+=" ($cpus; QEMU's registers in $res/hang.txt)"
	# A CPU that loops through the int3 handler is seen there in one of a
	# few reads of its registers, or at the int3 itself.
	if [[ $accel == *tcg* ]]; then
		for ((i = 0; i < 6; i++)); do
			((i == 0)) || regs=$(mon_cmd "info registers -a")
			rc=0
			stale_scan "$regs" || rc=$?
			((rc == 2)) || break
		done
		# what CI's output shows of it: the loop, the frame, or that none
		# was found
		if [[ -n $stale_loop ]]; then
			fate+="; $stale_loop"
		elif [[ -n $int3_seen ]]; then
			fate+="; $int3_seen"
		fi
	fi
	mon_cmd nmi >/dev/null
	# the panic's backtrace, then the VM's exit (panic=-1, -no-reboot)
	for ((i = 0; i < 60; i++)); do
		kill -0 "$qemu_pid" 2>/dev/null || break
		sleep 1
	done
}

# stale_scan REGS: int3_stale_loop on each CPU of REGS (the monitor's
# "info registers -a"): 0 once one loops on a stale int3, else 1 if a
# CPU's int3 frame was found (memory holds its int3), else 2 (no CPU in
# the handler, or its frame not found yet: read again).
stale_scan() {
	local cpu rc found=2
	for cpu in $(printf '%s\n' "$1" | sed -n 's/^CPU#\([0-9]*\).*/\1/p'); do
		rc=0
		int3_stale_loop "$cpu" "$1" || rc=$?
		((rc != 0)) || return 0
		((rc != 1)) || found=1
	done
	return "$found"
}

# stale_probe: whether a CPU of this TCG guest loops on a stale int3
# (stale_scan; stale_loop says where): found in one read of the CPUs'
# registers, and found again on the same CPU at the same ip or the byte
# before it (its frame read before or after kprobes backed it up; both
# seen on 6.1 in u_mutex) in a read 3 s later (a CPU caught once in the
# int3 handler may be handling a patch under way).  Each monitor command
# waits its 5 s (mon_cmd): a read where no CPU is in the handler takes
# 5 s.  What the reads find of frames goes to results' probe.txt; what a
# probe that finds no loop leaves in int3_seen is forgotten.
stale_probe() {
	local i first='' stale_at='' int3_log=$res/probe.txt
	for ((i = 0; i < 2; i++)); do
		((i == 0)) || sleep 3
		stale_scan "$(mon_cmd "info registers -a")" || break
		if ((i == 0)); then
			first=$stale_at
		elif [[ ${stale_at% *} == "${first% *}" ]] &&
			((${stale_at#* } - ${first#* } <= 1 && ${first#* } - ${stale_at#* } <= 1)); then
			return 0
		fi
	done
	stale_loop=''
	int3_seen=''
	return 1
}

# vm_watch: until the VM exits (rc: qemu's exit status), handle the status
# lines as they come, and stop the VM once it runs past vm_stop_at
# (timed_out), or, until the guest's init reports BOOT, once its console
# stays silent for the stall bound (stalled: a boot that stopped, seen
# under TCG at "Loading compiled-in X.509 certificates"), or, once the
# guest reports, once no status line (ALIVE every 10 s) comes for the hang
# bound, CPROF_VM_HANG (default 300 s, 1800 under --icount, whose clock
# may run slower than the host's): hung, vm_diagnose.  Under TCG a
# silence of 40 s is looked into at once, and again every 30 s: a CPU
# looping on a stale int3 (stale_probe) is a hang now, not in minutes
# (each such hang cost CI 300 s before its tests ran again in a new boot).
vm_watch() {
	local line now console_size=0 stall_t=$t0 killing='' n line_t=$t0 probe_t=0
	local bound=${hang_bound:-$([[ -n $icount ]] && echo 1800 || echo 300)}
	timed_out=''
	stalled=''
	hung=''
	while kill -0 "$qemu_pid" 2>/dev/null; do
		sleep 1
		n=$seen
		while IFS= read -r line; do
			seen=$((seen + 1))
			vm_handle_line "$line"
		done < <(tail -n +"$((seen + 1))" "$res/status")
		now=$(date +%s)
		((seen == n)) || line_t=$now
		if [[ -z $timed_out$stalled$hung ]] && ((now > $(vm_stop_at))); then
			timed_out=1
		elif [[ -z $timed_out$stalled$hung ]] && ((seen > 0 && now - line_t > bound)); then
			hung=$((now - line_t))
			vm_diagnose
		elif [[ -z $timed_out$stalled$hung && $accel == *tcg* && -z $icount ]] &&
			((seen > 0 && now - line_t > 40 && now - probe_t >= 30)); then
			if stale_probe; then
				hung=$((now - line_t))
				vm_diagnose
			fi
			probe_t=$(date +%s)
		elif [[ -z $timed_out$stalled$hung ]] && ((seen == 0)); then
			if (($(stat -c %s "$res/console.log") != console_size)); then
				console_size=$(stat -c %s "$res/console.log")
				stall_t=$now
			elif ((now - stall_t > boot_stall * max_slow)); then
				stalled=$((now - stall_t))
			fi
		fi
		if [[ -n $timed_out$stalled$hung && -z $killing ]]; then
			killing=1
			kill -TERM "$qemu_pid" 2>/dev/null || true
			( sleep 10 && kill -KILL "$qemu_pid" 2>/dev/null ) &
		fi
	done
	rc=0
	wait "$qemu_pid" || rc=$?
	# Lines that arrived after the last poll.  (read fails on a last line
	# without its newline: a partial line waits for the next round.)
	while IFS= read -r line; do
		vm_handle_line "$line"
	done < <(tail -n +"$((seen + 1))" "$res/status")
}

# vm_boot_failed: why, if this boot failed before the guest's init reported
# anything (no BOOT line: no test started, no module of ours loaded): it
# stalled, or the kernel panicked.  Seen on 6.12 under TCG: an int3 oops
# in sched_clock_cpu while the boot patched static keys, and the stall.
vm_boot_failed() {
	why=
	if [[ -n $stalled ]]; then
		why="the guest made no progress for $stalled s before init (last console line: $(tail -n 1 "$res/console.log" | tr -d '\r' | cut -c1-100))"
	elif [[ -z $timed_out ]] && ! grep -q '^BOOT ' "$res/status" &&
		grep -q "Kernel panic" "$res/console.log"; then
		why="the kernel panicked before init ($(grep -m 1 "Kernel panic" "$res/console.log" | tr -d '\r'))"
	fi
}

# kernel_running: the test that was running when the VM ended: the first
# in plan order without a result, once guest.sh had started.
kernel_running() {
	local name
	grep -q '^BOOT ' "$res/status" || return 0
	for name in "${plan_names[@]}"; do
		[[ -n ${result[$name]:-} ]] || { echo "$name"; return 0; }
	done
}

# kernel_report: what the guest could not report: a boot that failed, a VM
# that ended before DONE, and the tests left without a result.
kernel_report() {
	local name what="did not finish" running=
	if [[ -n $boot_note ]]; then
		report fail "boot" "$kver" "-" "$boot_note"
		show_file "console" "$res/console.log" 60
	fi
	if [[ -z $done_seen ]]; then
		running=$(kernel_running)
		if [[ -n $fate ]]; then
			:
		elif [[ -n $timed_out ]]; then
			fate="host timeout: the VM ran past $(($(vm_stop_at) - t0))s"
		elif grep -q "Kernel panic" "$res/console.log"; then
			fate="kernel panic: $(grep -m 1 "Kernel panic" "$res/console.log" | tr -d '\r')"
		else
			fate="the VM stopped (qemu exit $rc) before reporting DONE"
		fi
		report fail "vm" "$kver" "-" "${running:+during $running: }$fate"
		show_oops "$res/console.log"
		show_file "console" "$res/console.log" 30
		show_file "qemu" "$res/qemu.log" 20
	fi
	# Tests run in plan order: the first one without a result was running
	# when the VM died, unless it died before guest.sh started.
	grep -q '^BOOT ' "$res/status" || what="not run"
	for name in "${plan_names[@]}"; do
		[[ -n ${result[$name]:-} ]] && continue
		report fail "$name" "$kver" "-" "$what: ${fate:-no result reported}"
		[[ $what == "not run" ]] || show_file "$name output" "$res/$name.log" 40
		what="not run"
	done
}

# run_kernel KVER DEADLINE: build for KVER, boot it and run the plan,
# finishing by DEADLINE (epoch seconds, 0 for none).
run_kernel() {
	local kver=$1 kdeadline=$2 res=$build/vm-results/$1 initrd total
	local attempt=1 t0 slow=1 qemu_pid rc seen=0 timed_out='' stalled='' hung='' why=''
	local stale_loop='' stale_at='' int3_seen=''
	local boot_note='' done_seen='' fate='' left='' running
	local -A result=() retried=()

	((kdeadline == 0)) || left=", $((kdeadline - $(date +%s))) s left for them"
	echo "== $kver: ${#plan_names[@]} test(s)$left"
	if ((kdeadline > 0 && kdeadline - $(date +%s) < 120)); then
		fail_plan "$kver" "make check's time budget ran out (CPROF_CHECK_MINUTES)"
		return 0
	fi
	kernel_skip_elsewhere || return 0
	mkdir -p "$build/$kver"
	t0=$(date +%s)
	kernel_build || return 0
	pick_accel "$kver" "$initrd"
	echo "   module and initramfs ready in $(($(date +%s) - t0)) s"

	kernel_write_plan
	# A boot that fails before the guest's init reports (vm_boot_failed)
	# failed to boot the emulated machine, not a test: boot again, three
	# boots at most; each failed boot's console log is kept as
	# console-bootN.log.
	while :; do
		vm_start
		vm_watch
		vm_boot_failed
		if [[ -n $why ]] && ((attempt < 3)); then
			echo "   $why: booting once more"
			mv "$res/console.log" "$res/console-boot$attempt.log"
			attempt=$((attempt + 1))
			seen=0
			slow=1
			continue
		fi
		# The emulator's fault, not the kernel's (tcg_stale_int3): the
		# test that was running and the rest of the plan in a new boot,
		# twice for each test, four boots at most (u_mutex hung so in two
		# boots in a row on 6.1, at __schedule's sched_switch site).
		running=$(kernel_running)
		if [[ -z $done_seen && -n $running ]] && ((${retried[$running]:-0} < 2)) &&
			((attempt < 4)) && { [[ -n $stale_loop ]] || tcg_stale_int3; }; then
			if [[ -n $stale_loop ]]; then
				echo "   during $running: the guest hung: $stale_loop:"
			else
				echo "   during $running: $(grep -m 1 -o 'Oops: int3.*' "$res/console.log" | tr -d '\r')" \
					"at $(grep -A 4 -m 1 'Oops: int3' "$res/console.log" | grep -m 1 -o 'RIP: [^ ]*' | tr -d '\r')," \
					"where memory holds no int3:"
			fi
			echo "   TCG ran a stale translation of code the kernel patched;" \
				"$running and the tests after it in a new boot (console-boot$attempt.log)"
			retried[$running]=$((${retried[$running]:-0} + 1))
			mv "$res/console.log" "$res/console-boot$attempt.log"
			attempt=$((attempt + 1))
			seen=0
			slow=1
			timed_out='' stalled='' hung='' fate='' boot_note='' stale_loop='' int3_seen=''
			kernel_rest_plan
			continue
		fi
		[[ -z $stalled ]] || fate=$why
		break
	done
	if [[ -s $res/kallsyms ]]; then
		mv "$res/kallsyms" "$build/vm/$kver/kallsyms"
	fi
	kernel_report
	kernel_host_halves
}

# kernel_host_halves: once the VM is gone, the host half of each test
# that passed in it and has one (tests/vm/host/NAME.sh: what needs no
# kernel of ours, checked on what the guest half left in its results
# folder), 300 s at most, in an environment of PATH, LC_ALL and those of
# the guest half's it needs (REPO, KVER, WORKLOADS, OUT), reported as
# NAME:host.
kernel_host_halves() {
	local name host rc t0 secs
	for name in "${plan_names[@]}"; do
		host=$REPO/tests/vm/host/$name.sh
		[[ ${result[$name]:-} == pass && -f $host ]] || continue
		t0=$EPOCHREALTIME
		rc=0
		env -i PATH="$PATH" LC_ALL=C.UTF-8 REPO="$REPO" KVER="$kver" \
			WORKLOADS="$build/workloads" OUT="$res/$name" \
			timeout -k 10 300 bash "$host" </dev/null >"$res/$name.host.log" 2>&1 || rc=$?
		secs=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.3f", b - a }')
		case $rc in
		0) report pass "$name:host" "$kver" "$secs" "" ;;
		77) report skip "$name:host" "$kver" "$secs" "$(tail -n 1 "$res/$name.host.log")" ;;
		124 | 137) report fail "$name:host" "$kver" "$secs" "timed out after 300 s" ;;
		*) report fail "$name:host" "$kver" "$secs" "exit status $rc: $(tail -n 1 "$res/$name.host.log")" ;;
		esac
		if [[ -n $print_logs ]] || ((rc != 0 && rc != 77)); then
			show_file "$name:host output" "$res/$name.host.log" 60
		fi
	done
}

# --build-only: for each kernel that any planned test runs on, what
# run_kernel builds before it boots (kernel_build); no boot.
if [[ -n $build_only ]]; then
	rc=0
	for kver in "${kvers[@]}"; do
		# the tests that run elsewhere marked, unreported (needs_debug_module
		# and fail_plan pass them by)
		declare -A result=()
		kernel_skip_elsewhere quiet || continue
		mkdir -p "$build/$kver"
		t0=$(date +%s)
		if kernel_build; then
			echo "$kver: module and initramfs ready in $(($(date +%s) - t0)) s"
		else
			rc=1
		fi
	done
	exit $rc
fi

# With a deadline, each kernel gets an equal share of the time left, or,
# if that is more, all of it but a reserve of kernel_reserve seconds for
# each kernel after it: the plans are not equal (the u_ tests run on 6.1
# only, and take most of its time), so an equal share would cut the
# longest plan short while the others finish early.
kernel_reserve=600
for i in "${!kvers[@]}"; do
	kd=0
	if ((deadline > 0)); then
		now=$(date +%s)
		kd=$((now + (deadline - now) / (${#kvers[@]} - i)))
		reserved=$((deadline - (${#kvers[@]} - i - 1) * kernel_reserve))
		((reserved <= kd)) || kd=$reserved
	fi
	run_kernel "${kvers[i]}" "$kd"
done

echo "vm: $passed passed, $failed failed, $skipped skipped"
if [[ -n $summary ]]; then
	echo "$passed $failed $skipped" >>"$summary"
fi
[[ $failed -eq 0 ]]
