# cprof top-level Makefile.
#   make                 build kmod/cprof.ko (for KDIR) and userland/cprof-dump
#   make KDIR=/usr/src/linux-headers-X   build the module for another kernel
#   make module CPROF_KTAP=m   also kmod/cprof_ktap.ko, the in-kernel tests
#                        (k_ktap loads it; never installed)
#   make demo            profile a sample workload (here, or in a QEMU VM)
#   make check           install what is missing, run every test (make lint first)
#   make test [T=NAME]   the quick loop: lint, host unit tests, the module's
#                        k_ tests on one kernel; or one test by name
#   make lint            checkpatch --strict, sparse on 6.1 and 6.12, shellcheck,
#                        userland's extra warnings: in about a minute
#   make check-long      the long VM tests make check leaves out (anchors' side-by-sides)
#   make check-debug     the module's VM tests on a KASAN+lockdep kernel (built once)
#   make bench           benchmarks against perf (docs/BENCHMARKS.md)
#   make fuzz            fuzz the stream decoder, the CFI compiler and the stack-copy walk for FUZZ_SECONDS (default 600)
#   make install         install cprof-dump, its man pages and cprof.ko (for
#                        the running kernel, if KDIR builds for it)
#   make install-dkms    install the module's source for DKMS to
#                        $(DESTDIR)/usr/src/cprof-VERSION
#   make deb             Debian packages cprof-dkms and cprof-dump in build/deb/
#   make workloads       build the sample workloads into build/workloads

# Default kernel: the running kernel's build dir, else the newest Debian headers.
KDIR ?= $(firstword $(wildcard /lib/modules/$(shell uname -r)/build) \
	$(shell ls -d /usr/src/linux-headers-*-amd64 2>/dev/null | sort -V | tail -n 1))
PREFIX ?= /usr/local
MANDIR ?= $(PREFIX)/share/man
# The release, written in VERSION only (dkms.conf and debian/changelog are
# checked against it by make check).
VERSION := $(shell cat VERSION)
# What DKMS builds the module from: dkms.conf, VERSION, Kbuild, kmod/ and
# include/ (the format, shared with userland).
DKMS_SRC := dkms.conf VERSION Kbuild kmod/Kbuild \
	$(sort $(filter-out %.mod.c,$(wildcard kmod/*.[ch]))) \
	$(sort $(wildcard include/*.h include/*/*.h))
# The release KDIR builds for: cprof.ko is installed only if it is the running one.
KREL = $(shell cat $(KDIR)/include/config/kernel.release 2>/dev/null)
# make bench runs these VM tests (tests/vm/run.sh patterns) on BENCH_KERNELS.
BENCH_TESTS ?= b_*
BENCH_KERNELS ?= 6.1 6.12
# b_unwind also times the module as it was before unwind tables.
BENCH_BASELINE ?= dda7f02
# Builds of the module that b_modules times in one boot (commits; none: skipped),
# in this many rounds, under each of these workloads (cpuburn, fpburn).
BENCH_MODULES ?=
BENCH_ROUNDS ?= 5
BENCH_WORKLOADS ?= cpuburn fpburn
# A commit: b_modules also times its module without each part of the tick
# (tests/bench/parts.sh), where the tick's instructions go.
BENCH_PARTS ?=
# Set (to a shift, 0: 1 ns an instruction): the VM's clocks count
# instructions (tests/vm/run.sh --icount), timings free of the host's load.
BENCH_ICOUNT ?=
# The VM's CPUs (tests/vm/run.sh --cpus; empty: its default, 2).
BENCH_CPUS ?=

.PHONY: all module userland clean install install-userland install-module install-dkms deb \
	check check-long check-debug demo bench workloads fuzz lint test

all: module userland

module:
	@test -n "$(KDIR)" || { echo "no kernel headers found: install linux-headers-amd64 or set KDIR" >&2; exit 1; }
	$(MAKE) -C $(KDIR) M=$(CURDIR) modules

userland:
	$(MAKE) -C userland

clean:
	-test -z "$(KDIR)" || $(MAKE) -C $(KDIR) M=$(CURDIR) clean
	$(MAKE) -C userland clean

workloads:
	$(MAKE) -C tests/workloads O=$(CURDIR)/build/workloads

check:
	tests/check.sh

test:
	tests/test.sh $(T)

lint:
	tests/lint.sh

check-long:
	tests/deps.sh
	tests/vm/run.sh --long

check-debug:
	tests/debug/check.sh

FUZZ_SECONDS ?= 600
fuzz:
	tests/fuzz/run.sh $(FUZZ_SECONDS)

demo:
	tests/demo/run.sh

bench: workloads
	mkdir -p build/bench
	$(CC) -O2 -g -fno-omit-frame-pointer -Wall -o build/bench/spin tests/bench/spin.c
	set -e; for h in /usr/src/linux-headers-*-amd64; do \
		k=$${h#/usr/src/linux-headers-}; \
		rm -rf build/bench/$$k/nulltick; mkdir -p build/bench/$$k; \
		cp -r tests/bench/nulltick build/bench/$$k/; \
		$(MAKE) -s -C $$h M=$(CURDIR)/build/bench/$$k/nulltick modules; \
		rm -rf build/bench/$$k/baseline; mkdir -p build/bench/$$k/baseline; \
		git archive $(BENCH_BASELINE) kmod $$(git ls-tree --name-only $(BENCH_BASELINE) include) | \
			tar -x -C build/bench/$$k/baseline; \
		$(MAKE) -s -C $$h M=$(CURDIR)/build/bench/$$k/baseline/kmod modules; \
		rm -rf build/bench/$$k/modules; mkdir -p build/bench/$$k/modules; \
		echo $(BENCH_ROUNDS) >build/bench/$$k/modules/rounds; \
		echo $(BENCH_WORKLOADS) >build/bench/$$k/modules/workloads; \
		for c in $(BENCH_MODULES); do \
			d=build/bench/$$k/modules/$$(git rev-parse --short $$c); mkdir -p $$d; \
			git archive $$c kmod $$(git ls-tree --name-only $$c VERSION include) | tar -x -C $$d; \
			$(MAKE) -s -C $$h M=$(CURDIR)/$$d/kmod modules; \
		done; \
		if [ -n "$(BENCH_PARTS)" ]; then \
			tests/bench/parts.sh $(BENCH_PARTS) build/bench/$$k/modules; \
			for d in build/bench/$$k/modules/all build/bench/$$k/modules/no-*; do \
				$(MAKE) -s -C $$h M=$(CURDIR)/$$d/kmod modules; \
			done; \
		fi; \
	done
	CPROF_VM_KERNELS="$(BENCH_KERNELS)" CPROF_VM_ICOUNT="$(BENCH_ICOUNT)" CPROF_VM_CPUS="$(BENCH_CPUS)" tests/vm/run.sh $(foreach t,$(BENCH_TESTS),'$(t)')
	@set -- build/vm-results/*/b_perf/results; \
	if [ -e "$$1" ]; then tests/bench/report.sh "$$@"; \
	else echo "bench: no b_perf results (BENCH_TESTS='$(BENCH_TESTS)'): the figures are in build/vm-results/*/b_*.log"; fi
	@set -- build/vm-results/*/vm.env; \
	if [ -e "$$1" ]; then echo "## Summary"; echo; tests/bench/summary.sh $$(dirname "$$@"); fi

install: install-userland install-module

install-userland: userland
	install -D -m 0755 userland/cprof-dump $(DESTDIR)$(PREFIX)/bin/cprof-dump
	install -D -m 0644 man/cprof-dump.1 $(DESTDIR)$(MANDIR)/man1/cprof-dump.1
	install -D -m 0644 man/cprof.4 $(DESTDIR)$(MANDIR)/man4/cprof.4

install-module:
	@if [ -n "$(KREL)" ] && [ "$(KREL)" = "$$(uname -r)" ]; then \
		$(MAKE) module && \
		echo "install -D -m 0644 kmod/cprof.ko $(DESTDIR)/lib/modules/$(KREL)/extra/cprof.ko" && \
		install -D -m 0644 kmod/cprof.ko $(DESTDIR)/lib/modules/$(KREL)/extra/cprof.ko && \
		{ [ -n "$(DESTDIR)" ] || depmod -a $(KREL); }; \
	else \
		echo "cprof.ko not installed: KDIR=$(KDIR) builds for '$(KREL)', the running kernel is $$(uname -r)"; \
	fi

# Then: dkms install cprof/$(VERSION) (builds, installs, and rebuilds for
# each new kernel).
install-dkms:
	@for f in $(DKMS_SRC); do \
		echo "install -D -m 0644 $$f $(DESTDIR)/usr/src/cprof-$(VERSION)/$$f"; \
		install -D -m 0644 $$f $(DESTDIR)/usr/src/cprof-$(VERSION)/$$f || exit 1; \
	done

# The packages (and the native source package) are built by
# dpkg-buildpackage in a copy of the sources (what git tracks, and untracked
# files it does not ignore) in build/deb/src, so the working tree stays
# clean; then lintian checks them, pedantic and experimental tags included
# (the ones overridden, and why: debian/source/lintian-overrides).
deb:
	rm -rf build/deb
	mkdir -p build/deb/src
	git ls-files -co --exclude-standard | while IFS= read -r f; do \
		[ ! -e "$$f" ] || cp -P --parents "$$f" build/deb/src || exit 1; \
	done
	cd build/deb/src && dpkg-buildpackage -us -uc
	lintian -I -E --pedantic build/deb/*.changes
	@ls build/deb/*.deb

