/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * windowsrun.h - windows__run() over a stream through a pipeline made as
 * cprof-dump --every --no-symbolize makes it (the unwind tables aside: a
 * test has no module).
 */
#ifndef CPROF_TEST_WINDOWSRUN_H
#define CPROF_TEST_WINDOWSRUN_H

#include "run/pipeline.h"
#include "serve/windows.h"

/*
 * windows__run()'s status through a pipeline made with po, or -1 if none
 * could be made.
 */
static inline int windows_run_with(int fd, const char *name,
				   const struct windows_opts *wo,
				   const struct pipeline_opts *po)
{
	struct windows_opts o = *wo;
	int err = -1;

	o.pl = pipeline__new(po);
	if (o.pl && !pipeline__begin(o.pl))
		err = windows__run(fd, name, &o);
	pipeline__free(o.pl);
	return err;
}

/* windows__run()'s status, or -1 if no pipeline could be made. */
static inline int windows_run(int fd, const char *name,
			      const struct windows_opts *wo)
{
	struct pipeline_opts po = { .jit = true };

	return windows_run_with(fd, name, wo, &po);
}

#endif /* CPROF_TEST_WINDOWSRUN_H */
