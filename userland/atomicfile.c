// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * atomicfile - an output that appears whole or not at all.  See
 * atomicfile.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "atomicfile.h"
#include "util.h"

struct atomicfile {
	FILE *f;
	char *path;	/* NULL: stdout */
	char *tmp;
};

struct atomicfile *atomicfile__open(const char *path)
{
	struct atomicfile *o = calloc(1, sizeof(*o));
	char *dir = NULL, *base = NULL;
	struct stat st;
	int fd = -1;

	if (!o)
		goto oom;
	if (!path || !strcmp(path, "-")) {
		o->f = stdout;
		return o;
	}
	o->path = strdup(path);
	if (!o->path)
		goto oom;
	/*
	 * A device or a FIFO (-o /dev/null, a named pipe) is written in
	 * place: renaming a file over it would replace it.
	 */
	if (!stat(path, &st) && !S_ISREG(st.st_mode)) {
		o->f = fopen(path, "w");
		if (!o->f) {
			fail("failed to open %s: %s", esc(path), strerror(errno));
			goto err;
		}
		return o;
	}
	dir = strdup(path);
	base = strdup(path);
	if (!dir || !base ||
	    asprintf(&o->tmp, "%s/.%s.XXXXXX", dirname(dir),
		     basename(base)) < 0) {
		o->tmp = NULL;
		goto oom;
	}
	fd = mkstemp(o->tmp);
	if (fd < 0) {
		fail("failed to create %s: %s", esc(path), strerror(errno));
		free(o->tmp);
		o->tmp = NULL;
		goto err;
	}
	/*
	 * Owner only (mkstemp's 0600, kept): a profile holds kernel
	 * addresses and every process's stacks, which the module shows
	 * only to CAP_PERFMON.
	 */
	if (!(o->f = fdopen(fd, "w"))) {
		fail("failed to create %s: %s", esc(path), strerror(errno));
		close(fd);
		goto err;
	}
	free(dir);
	free(base);
	return o;
oom:
	fail("failed to open the output: %s", strerror(ENOMEM));
err:
	free(dir);
	free(base);
	atomicfile__abort(o);
	return NULL;
}

FILE *atomicfile__stream(const struct atomicfile *o)
{
	return o->f;
}

const char *atomicfile__name(const struct atomicfile *o)
{
	return o->path ? o->path : "stdout";
}

const char *atomicfile__tmp_path(const struct atomicfile *o)
{
	return o->tmp;
}

static void atomicfile__free(struct atomicfile *o)
{
	free(o->path);
	free(o->tmp);
	free(o);
}

int atomicfile__commit(struct atomicfile *o)
{
	int err = 0;

	if (!o->path) {
		if (fflush(stdout) || ferror(stdout))
			err = fail("failed to write stdout: %s", strerror(errno));
		atomicfile__free(o);
		return err;
	}
	if (fclose(o->f)) {
		o->f = NULL;
		err = fail("failed to write %s: %s", esc(o->path), strerror(errno));
	} else if (o->tmp && rename(o->tmp, o->path)) {
		o->f = NULL;
		err = fail("failed to rename %s to %s: %s", esc(o->tmp), esc(o->path),
			   strerror(errno));
	} else {
		atomicfile__free(o);
		return 0;
	}
	atomicfile__abort(o);
	return err;
}

void atomicfile__abort(struct atomicfile *o)
{
	if (!o)
		return;
	if (o->path && o->f)
		fclose(o->f);
	if (o->tmp)
		unlink(o->tmp);
	atomicfile__free(o);
}
