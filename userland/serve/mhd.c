// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * mhd - libmicrohttpd and GnuTLS, opened with dlopen().  See mhd.h.
 *
 * RTLD_NOW: a library that lacks something its own code needs fails here,
 * with a line, not in a request.  RTLD_LOCAL: their symbols serve only
 * the pointers.  libmicrohttpd needs GnuTLS itself: opening GnuTLS after
 * it finds the same copy, whose sessions libmicrohttpd hands out.
 */
#include <dlfcn.h>
#include <stdbool.h>
#include <stddef.h>

#include "serve/mhd.h"
#include "lib/util.h"

#define DEFINE(lib, f) __typeof__(f) *sym_##f;
MHD_FUNCTIONS(DEFINE)

struct lib {
	const char *soname, *package;
};

enum { LIB_MHD, LIB_GNUTLS };

static const struct lib libs[] = {
	[LIB_MHD] = { "libmicrohttpd.so.12", "libmicrohttpd12" },
	[LIB_GNUTLS] = { "libgnutls.so.30", "libgnutls30" },
};

/* A function: which of libs[] has it, its name, where its address goes. */
struct fn {
	unsigned int lib;
	const char *name;
	void **slot;
};

#define FN(lib, f) { LIB_##lib, #f, (void **)&sym_##f },

static const struct fn fns[] = {
	MHD_FUNCTIONS(FN)
};

#define NR_LIBS	(sizeof(libs) / sizeof(libs[0]))
#define NR_FNS	(sizeof(fns) / sizeof(fns[0]))

static void *handles[NR_LIBS];
static bool loaded;

static void unload(void)
{
	size_t i;

	for (i = 0; i < NR_FNS; i++)
		*fns[i].slot = NULL;
	for (i = 0; i < NR_LIBS; i++) {
		if (handles[i])
			dlclose(handles[i]);
		handles[i] = NULL;
	}
}

int mhd__load(void)
{
	const struct lib *lib;
	const struct fn *fn;
	const char *why;
	size_t i;

	if (loaded)
		return 0;
	for (i = 0; i < NR_LIBS; i++) {
		lib = &libs[i];
		handles[i] = dlopen(lib->soname, RTLD_NOW | RTLD_LOCAL);
		if (!handles[i]) {
			why = dlerror();
			fail("--http: cannot load %s (install package %s): %s",
			     lib->soname, lib->package,
			     esc(why ? why : "not found"));
			unload();
			return -1;
		}
	}
	for (i = 0; i < NR_FNS; i++) {
		fn = &fns[i];
		lib = &libs[fn->lib];
		*fn->slot = dlsym(handles[fn->lib], fn->name);
		if (!*fn->slot) {
			fail("--http: the %s found has no %s (install package %s)",
			     lib->soname, fn->name, lib->package);
			unload();
			return -1;
		}
	}
	loaded = true;
	return 0;
}
