#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# check-version.sh: the release is written once, in VERSION; what repeats
# it agrees: dkms.conf's PACKAGE_VERSION, debian/changelog's latest entry,
# cprof-dump --version.  dkms.conf builds what Kbuild builds (module name
# and place), and make install-dkms installs every file of the module's
# source tree but its tests, kmod/tests/ (and only those).  Then a damaged
# copy must be caught.  Run by
# tests/host/run.sh (CPROF_DUMP: the cprof-dump to ask).
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$REPO"
# shellcheck source=lib.sh
. tests/host/lib.sh
dump=${CPROF_DUMP:-userland/cprof-dump}
tmp=${TEST_TMPDIR:-$(mktemp -d)}

version=$(<VERSION)
if [[ $version =~ ^[0-9]+(\.[0-9]+)+$ ]]; then
	ok "VERSION is a release number: $version"
else
	not_ok "VERSION is '$version', not a release number like 0.1 or 1.2.3"
fi

# dkms_var CONF NAME: NAME as DKMS reads it (dkms.conf is sourced by bash).
dkms_var() {
	# shellcheck disable=SC1090,SC2034
	(kernel_source_dir=/kdir dkms_tree=/dkms && . "$1" && eval "echo \"\${$2}\"")
}

# changelog_version CHANGELOG: the version of its latest entry.
changelog_version() {
	dpkg-parsechangelog -l "$1" -S Version
}

# problems_versions DKMS_CONF CHANGELOG VERSION_TEXT
problems_versions() {
	local v
	v=$(dkms_var "$1" PACKAGE_VERSION)
	[[ $v == "$3" ]] || echo "dkms.conf: PACKAGE_VERSION=$v, VERSION says $3"
	v=$(changelog_version "$2")
	[[ $v == "$3" ]] || echo "debian/changelog: version $v, VERSION says $3"
	v=$(dkms_var "$1" PACKAGE_NAME)
	[[ $v == cprof ]] || echo "dkms.conf: PACKAGE_NAME=$v, not cprof"
	v=$(dpkg-parsechangelog -l "$2" -S Source)
	[[ $v == cprof ]] || echo "debian/changelog: source $v, not cprof"
}

# problems_dkms DKMS_CONF: what DKMS would build is what Kbuild builds.
problems_dkms() {
	local name loc dest obj
	name=$(dkms_var "$1" 'BUILT_MODULE_NAME[0]')
	loc=$(dkms_var "$1" 'BUILT_MODULE_LOCATION[0]')
	dest=$(dkms_var "$1" 'DEST_MODULE_LOCATION[0]')
	obj=$(sed -n 's/^obj-m[ \t]*:=[ \t]*\([a-z_]*\)\.o$/\1/p' kmod/Kbuild)
	[[ $name == "$obj" ]] || echo "dkms.conf: BUILT_MODULE_NAME=$name, kmod/Kbuild builds $obj.o"
	grep -qx 'obj-m := kmod/' Kbuild || echo "Kbuild: does not descend into kmod/"
	[[ $loc == kmod/ ]] || echo "dkms.conf: BUILT_MODULE_LOCATION=$loc, the module is built in kmod/"
	[[ $dest =~ ^/(updates|extra)(/|$) ]] || echo "dkms.conf: DEST_MODULE_LOCATION=$dest"
	[[ $(dkms_var "$1" AUTOINSTALL) == yes ]] || echo "dkms.conf: AUTOINSTALL is not yes (no rebuild for a new kernel)"
	[[ $(dkms_var "$1" 'MAKE[0]') == *"-C /kdir M=/dkms/cprof/$version/build modules" ]] ||
		echo "dkms.conf: MAKE[0] does not build in \$dkms_tree/cprof/$version/build: $(dkms_var "$1" 'MAKE[0]')"
}

expect_none "VERSION, dkms.conf and debian/changelog agree" \
	"$(problems_versions dkms.conf debian/changelog "$version")"
out=$("$dump" --version)
if [[ $out == "cprof-dump $version" ]]; then
	ok "cprof-dump --version: $out"
else
	not_ok "cprof-dump --version says '$out', VERSION says $version"
fi
expect_none "dkms.conf builds kmod/cprof.ko as Kbuild does" "$(problems_dkms dkms.conf)"

# make install-dkms: the module's sources as git has them, and the files
# DKMS needs beside them; not the in-kernel tests (kmod/tests/), which are
# never shipped.
make -s install-dkms DESTDIR="$tmp/root" >"$tmp/install.log" 2>&1 ||
	not_ok "make install-dkms failed: $(tail -n 5 "$tmp/install.log")"
(cd "$tmp/root/usr/src/cprof-$version" 2>/dev/null && find . -type f | sed 's|^\./||' | sort) >"$tmp/installed"
if git rev-parse --git-dir >/dev/null 2>&1; then
	git ls-files -- dkms.conf VERSION Kbuild kmod include ':(exclude)kmod/tests' | sort >"$tmp/wanted"
	expect_none "make install-dkms installs dkms.conf, VERSION, Kbuild, kmod/ but its tests and include/, nothing else" \
		"$(diff "$tmp/wanted" "$tmp/installed" | sed -n 's/^< /missing: /p; s/^> /extra: /p')"
else
	echo "note: not a git checkout: the installed source tree is not compared with git's"
fi

# The checks of the checks.
sed 's/^PACKAGE_VERSION=.*/PACKAGE_VERSION="9.9"/' dkms.conf >"$tmp/dkms.conf"
expect_found "caught: dkms.conf with another version" "PACKAGE_VERSION=9.9" \
	"$(problems_versions "$tmp/dkms.conf" debian/changelog "$version")"
sed '1s/(\([^)]*\))/(\1.1)/' debian/changelog >"$tmp/changelog"
expect_found "caught: debian/changelog with another version" "debian/changelog: version $version.1" \
	"$(problems_versions dkms.conf "$tmp/changelog" "$version")"
sed 's/^BUILT_MODULE_LOCATION\[0\]=.*/BUILT_MODULE_LOCATION[0]="."/' dkms.conf >"$tmp/dkms.conf"
expect_found "caught: dkms.conf looking for the module elsewhere" "BUILT_MODULE_LOCATION" \
	"$(problems_dkms "$tmp/dkms.conf")"

report
