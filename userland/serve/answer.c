// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * answer - a profile written out in a child process.  See answer.h.
 */
#include "serve/answer.h"
#include "lib/boxed.h"
#include "symbolize/debugfetch.h"
#include "lib/util.h"

struct job {
	const struct profile *p;
	const struct resolve_opts *ro;
	const struct output_opts *oo;
};

/*
 * In the child: resolve and write to out.  A request or window never
 * waits on a debuginfod server: the cache only (debugfetch.h).
 */
static int write_out(void *arg, FILE *out)
{
	const struct job *j = arg;
	struct resolved *res;
	int err;

	debugfetch_cache_only();
	res = resolved__new(j->p, j->ro);
	if (!res)
		return -1;
	err = output__write(res, j->oo, out, "the profile");
	resolved__free(res);
	return err;
}

int answer__build(const struct profile *p, const struct resolve_opts *ro,
		  const struct output_opts *oo,
		  const volatile sig_atomic_t *stop, const char *what,
		  char **buf, size_t *len, char *msg, size_t size)
{
	struct resolve_opts plain = *ro;
	struct job j = { .p = p, .ro = ro, .oo = oo };

	if (!boxed__run(write_out, &j, &boxed_symbolize, stop, buf, len, msg,
			size))
		return 0;
	if ((stop && *stop) || !ro->symbolize)
		return -1;
	warning("%s: failed to symbolize it: %s: written with addresses only",
		esc(what), msg);
	plain.symbolize = false;
	j.ro = &plain;
	return boxed__run(write_out, &j, &boxed_symbolize, stop, buf, len, msg,
			  size);
}
