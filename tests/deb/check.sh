#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# tests/deb/check.sh (make check, before the VM tests): build the Debian
# packages (make deb: dpkg-buildpackage and lintian, with
# DEB_BUILD_OPTIONS=nocheck: make check's own step runs the host unit
# tests, plain and sanitized, on the same sources), install them as a
# user would (dpkg -i: cprof-dkms's postinst has DKMS build and install
# cprof.ko for every installed kernel that has its headers), and check
# that DKMS did so for each of them.  The VM test i_dkms then loads and
# profiles with what was installed.  Ends with "deb: N passed, N
# failed".  Needs root and a git checkout (make deb copies what git
# tracks); otherwise it is skipped, and so is i_dkms unless the packages
# were installed before.
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$REPO"
logs=$REPO/build/check
mkdir -p "$logs"
# ok, not_ok and their counts, as the host checks have them
# shellcheck source=tests/host/lib.sh
. tests/host/lib.sh

finish() {
	echo "deb: $passed passed, $failed failed"
	[[ $failed -eq 0 ]]
	exit
}

skip() {
	echo "deb: skipped: $*"
	echo "1 skipped"
	echo "deb: 0 passed, 0 failed"
	exit 0
}

[[ $(id -u) == 0 ]] || skip "not root: the packages cannot be installed"
git rev-parse --git-dir >/dev/null 2>&1 || skip "not a git checkout: make deb builds what git tracks"

version=$(<VERSION)
t0=$(date +%s)
if DEB_BUILD_OPTIONS=nocheck make deb >"$logs/deb-build.log" 2>&1; then
	ok "make deb: $(cd build/deb && echo *.deb) in $(($(date +%s) - t0)) s"
else
	not_ok "make deb failed (build/check/deb-build.log):"
	tail -n 30 "$logs/deb-build.log" | sed 's/^/    /'
	finish
fi
# --http's libraries, which cprof-dump loads with dlopen() (so shlibs
# cannot see them), are dependencies of the package all the same.
deps=$(dpkg-deb -f build/deb/cprof-dump_"${version}"_*.deb Depends)
for lib in libmicrohttpd12 libgnutls30; do
	if [[ ",$deps," =~ [,\ ]${lib}[\ ,] ]]; then
		ok "cprof-dump's package depends on $lib (--http loads it)"
	else
		not_ok "cprof-dump's package does not depend on $lib: Depends: $deps"
	fi
done
# lintian's tags, the overridden ones aside: none.
tags=$(sed -n '/^lintian /,$p' "$logs/deb-build.log" | grep -E '^[EWIPXC]: ' || true)
if [[ -z $tags ]]; then
	ok "lintian -I -E --pedantic: no tags"
else
	not_ok "lintian tags (build/check/deb-build.log):"
	printf '    %s\n' "${tags//$'\n'/$'\n'    }"
fi

t0=$(date +%s)
if dpkg -i "build/deb/cprof-dkms_${version}_all.deb" build/deb/cprof-dump_"${version}"_*.deb >"$logs/deb-install.log" 2>&1; then
	ok "dpkg -i cprof-dkms cprof-dump: in $(($(date +%s) - t0)) s"
else
	not_ok "dpkg -i failed (build/check/deb-install.log):"
	tail -n 30 "$logs/deb-install.log" | sed 's/^/    /'
	finish
fi
out=$(/usr/bin/cprof-dump --version)
if [[ $out == "cprof-dump $version" ]]; then
	ok "/usr/bin/cprof-dump is $version"
else
	not_ok "/usr/bin/cprof-dump --version: $out"
fi

# Every kernel with headers has DKMS's module installed.
for h in /usr/src/linux-headers-*-amd64; do
	[[ -d $h ]] || continue
	kver=${h#/usr/src/linux-headers-}
	[[ -d /lib/modules/$kver ]] || continue
	mod=$(modinfo -k "$kver" -n cprof 2>/dev/null || true)
	if [[ $mod == /lib/modules/$kver/updates/dkms/cprof.ko* ]] &&
		cmp -s "$mod" "/var/lib/dkms/cprof/$version/$kver/x86_64/module/$(basename "$mod")"; then
		ok "DKMS built and installed cprof $version for $kver: $mod"
	else
		not_ok "no DKMS-installed cprof $version for $kver (modinfo: ${mod:-none}; build/check/deb-install.log)"
	fi
done
finish
