#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# tests/deps.sh: install, from Debian's archive, what building and testing
# cprof needs on Debian 12 (amd64).  Quick when everything is there: it
# asks dpkg first and runs apt-get (update, then install) only for what is
# missing.  Needs root for that.  Add a package here when a build or a
# test starts to need it.
set -euo pipefail

packages=(
	# build
	make gcc libc6-dev git
	# the kernels the VM tests boot, and their headers
	linux-image-amd64 linux-headers-amd64
	linux-image-6.12-amd64 linux-headers-6.12-amd64
	# and their PREEMPT_RT flavours
	linux-image-rt-amd64 linux-headers-rt-amd64
	linux-image-6.12-rt-amd64 linux-headers-6.12-rt-amd64
	# the VM (QEMU itself: below)
	busybox-static cpio kmod xz-utils util-linux procps bc
	# u_offcpu's slow device (dm-delay)
	dmsetup
	# userland: cprof-dump and its tests
	protobuf-c-compiler libprotobuf-c-dev zlib1g-dev liblzma-dev libelf-dev libdw-dev
	libdebuginfod-dev debuginfod libiberty-dev
	libmicrohttpd-dev libgnutls28-dev golang-go golang-github-google-pprof-dev
	# u_debuginfod serves python3.11's detached debug file
	python3.11-dbg
	# tests and checks (make lint takes checkpatch.pl from linux-source-6.1)
	linux-perf perl sparse shellcheck linux-source-6.1
	# check-abi.sh: the format's layout from the objects' debug information
	pahole
	# what a person sees: u_browser renders pages in it
	chromium
	clang libclang-rt-14-dev
	libcap2-bin strace
	# p_offcpu: BCC's offcputime beside cprof's off-CPU profile
	bpfcc-tools
	# b_rtstall: cyclictest
	rt-tests
	# u_jit: JIT code named from the perf maps of Node.js and the JVM
	nodejs openjdk-17-jdk-headless
	# u_threads: cprof-dump's largest resident size
	time
	# packaging: make deb, DKMS, and the man pages' checks
	debhelper dh-dkms dkms dpkg-dev fakeroot lintian groff man-db
)

# tests/deps.sh --debug: also what make check-debug needs to build its
# kernel.
if [[ ${1:-} == --debug ]]; then
	packages+=(bc bison flex libssl-dev libelf-dev rsync)
fi

missing=()
for pkg in "${packages[@]}"; do
	status=$(dpkg-query -W -f='${db:Status-Status}' "$pkg" 2>/dev/null || true)
	[[ $status == installed ]] || missing+=("$pkg")
done

# QEMU 10 or later.  Debian 12's 7.2 runs, under multi-threaded TCG, stale
# translations of kernel text that another vCPU just patched: a guest that
# opens and closes a profile of scheduler tracepoints (jump labels in
# __schedule and try_to_wake_up) in a loop crashed on an int3 about once in
# 15 cycles, on 6.1, 6.12 and 6.12-rt alike; 10.0 from bookworm-backports
# (part of Debian's archive) once in 340, and ran three u_ tests 16 to 20 %
# faster (docs/design.md, "Known problems").  On Debian 12 it comes from
# bookworm-backports, which this adds to apt's sources if none names it
# (backports are never installed unless asked for by name).
qemu_min=1:10
have=$(dpkg-query -W -f='${db:Status-Status} ${Version}' qemu-system-x86 2>/dev/null || true)
# shellcheck source=/dev/null
codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
qemu=
if [[ $have == "installed "* ]] && dpkg --compare-versions "${have#installed }" ge "$qemu_min"; then
	:
elif [[ $codename == bookworm ]]; then
	qemu=bookworm-backports
elif [[ $have != "installed "* ]]; then
	missing+=(qemu-system-x86)
fi

if [[ ${#missing[@]} -eq 0 && -z $qemu ]]; then
	echo "deps: all ${#packages[@]} packages and QEMU installed"
	exit 0
fi

echo "deps: installing ${missing[*]}${qemu:+ qemu-system-x86 (from $qemu)}"
if [[ $(id -u) != 0 ]]; then
	echo "deps: not root: run as root${missing[*]:+, or apt-get install ${missing[*]}}${qemu:+; QEMU: apt-get install -t $qemu qemu-system-x86 (with $qemu among the apt sources)}" >&2
	exit 1
fi
# (the files apt reads, not commented out)
if [[ -n $qemu ]] && ! grep -qsE "^[^#]*[[:space:]]$qemu([[:space:]]|\$)" /etc/apt/sources.list \
	/etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; then
	printf '%s\n' "Types: deb" "URIs: http://deb.debian.org/debian" "Suites: $qemu" \
		"Components: main" "Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg" \
		>/etc/apt/sources.list.d/cprof-$qemu.sources
	echo "deps: added /etc/apt/sources.list.d/cprof-$qemu.sources (Debian's $qemu, for QEMU $qemu_min or later)"
fi
export DEBIAN_FRONTEND=noninteractive
# INITRD=No: the kernel packages' hooks skip building an initramfs for each
# kernel (the VM tests boot their own).  --force-unsafe-io: dpkg does not
# sync every file it unpacks, which on a slow disk takes many minutes.
export INITRD=No
t0=$(date +%s)
apt=(apt-get install -y -q --no-install-recommends -o Dpkg::Options::=--force-unsafe-io)
# a source that cannot be reached (the backports) fails the update but
# not what the others provide; apt-get install says what is missing
apt-get update -q || echo "deps: apt-get update failed for some source: going on" >&2
[[ ${#missing[@]} -eq 0 ]] || "${apt[@]}" "${missing[@]}"
if [[ -n $qemu ]] && ! "${apt[@]}" -t "$qemu" qemu-system-x86; then
	echo "deps: QEMU from $qemu could not be installed: Debian 12's QEMU instead (its TCG crashes guests now and then; tests/vm/run.sh boots again)" >&2
	"${apt[@]}" qemu-system-x86
	qemu="Debian 12 ($qemu failed)"
fi
echo "deps: installed ${#missing[@]} packages${qemu:+ and QEMU from $qemu} in $(($(date +%s) - t0)) s"
