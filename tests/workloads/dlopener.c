// SPDX-License-Identifier: GPL-2.0
/*
 * dlopener [SECONDS]: spin in its own code for SECONDS/2, then dlopen()
 * libm.so.6 (not linked in) and spend the rest calling its cos() through
 * dlsym().  A profiler must pick up the library mapped mid-run.
 */
#include <dlfcn.h>
#include <stdio.h>

#include "common.h"

static volatile double sink;

NOINLINE void spin_own(double end)
{
	while (now_sec() < end)
		for (int i = 0; i < 100000; i++)
			sink += i;
}

NOINLINE void spin_libm(double (*fn)(double), double end)
{
	while (now_sec() < end)
		for (int i = 0; i < 10000; i++)
			sink += fn(sink + i);
}

int main(int argc, char **argv)
{
	double seconds = parse_seconds(argc, argv, 4);
	double start = now_sec();
	double (*fn)(double);
	void *lib;

	spin_own(start + seconds / 2);
	lib = dlopen("libm.so.6", RTLD_NOW);
	if (!lib) {
		fprintf(stderr, "dlopener: %s\n", dlerror());
		return 1;
	}
	*(void **)&fn = dlsym(lib, "cos");
	if (!fn) {
		fprintf(stderr, "dlopener: %s\n", dlerror());
		return 1;
	}
	printf("dlopener: libm loaded after %.2f s\n", now_sec() - start);
	fflush(stdout);
	spin_libm(fn, start + seconds);
	return 0;
}
