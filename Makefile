# cprof top-level Makefile.
#   make                 build kmod/cprof.ko (for KDIR) and userland/cprof-dump
#   make KDIR=/usr/src/linux-headers-X   build the module for another kernel
#   make demo            profile a sample workload (here, or in a QEMU VM)
#   make check           install what is missing, run every test
#   make bench           benchmarks against perf (docs/BENCHMARKS.md)
#   make install         install cprof-dump and cprof.ko

# Default kernel: the running kernel's build dir, else the newest Debian headers.
KDIR ?= $(firstword $(wildcard /lib/modules/$(shell uname -r)/build) \
	$(shell ls -d /usr/src/linux-headers-*-amd64 2>/dev/null | sort -V | tail -n 1))
PREFIX ?= /usr/local

.PHONY: all module userland clean install check demo bench

all: module userland

module:
	@test -n "$(KDIR)" || { echo "no kernel headers found: install linux-headers-amd64 or set KDIR" >&2; exit 1; }
	$(MAKE) -C $(KDIR) M=$(CURDIR) modules

userland:
	$(MAKE) -C userland

clean:
	-test -z "$(KDIR)" || $(MAKE) -C $(KDIR) M=$(CURDIR) clean
	$(MAKE) -C userland clean
