// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * pipeline - the pieces a profile travels through, owned together.  See
 * pipeline.h.
 */
#include <signal.h>
#include <stdlib.h>

#include "run/pipeline.h"
#include "stream/cgroups.h"
#include "symbolize/debugfetch.h"
#include "symbolize/jitmap.h"
#include "symbolize/kcache.h"
#include "python/pyframes.h"
#include "unwind/tableload.h"

/* The longest a profile's start waits for the loader's first table. */
#define VDSO_WAIT_S	0.2

static const volatile sig_atomic_t no_stop;

struct pipeline {
	struct pipeline_opts o;
	struct tableload *unw;		/* NULL: none (yet) */
	struct debugfetch_queue *debug;	/* NULL: no servers to ask */
	/* the profile's */
	struct modprofile mp;		/* fd -1: none started */
	struct ingest *in;		/* the stream being read */
	const char *name;		/* its name */
	bool read_whole;		/* pipeline__read() got to its end */
	struct cgroups *cg;
	struct pyframes *py;
	struct jitmaps *jit;
	struct kcache_loader *ksyms;
};

struct pipeline *pipeline__new(const struct pipeline_opts *o)
{
	struct pipeline *pl = calloc(1, sizeof(*pl));

	if (!pl)
		return NULL;
	pl->o = *o;
	pl->mp.fd = pl->mp.ctl_fd = -1;
	/* what runs now loads while no one asks yet */
	if (o->serve && o->unwind_tables) {
		pl->unw = tableload__start(o->proc_dir);
		tableload__scan(pl->unw, 0);
	}
	if (o->serve && o->debug_queue)
		pl->debug = debugfetch_queue__start();
	return pl;
}

void pipeline__free(struct pipeline *pl)
{
	if (!pl)
		return;
	pipeline__end(pl);
	debugfetch_queue__stop(pl->debug);
	tableload__stop(pl->unw, NULL);
	free(pl);
}

int pipeline__begin(struct pipeline *pl)
{
	pipeline__end(pl);
	pl->cg = cgroups__new(NULL);
	pl->py = pyframes__new();
	if (pl->o.jit)
		pl->jit = jitmaps__new(NULL);
	if (!pl->cg || !pl->py || (pl->o.jit && !pl->jit)) {
		pipeline__end(pl);
		return -1;
	}
	return 0;
}

void pipeline__end(struct pipeline *pl)
{
	pipeline__close(pl);
	kcache__load_cancel(pl->ksyms);
	pl->ksyms = NULL;
	cgroups__free(pl->cg);
	pyframes__free(pl->py);
	jitmaps__free(pl->jit);
	pl->cg = NULL;
	pl->py = NULL;
	pl->jit = NULL;
}

void pipeline__load_tables(struct pipeline *pl, long pid)
{
	if (!pl->o.unwind_tables)
		return;
	if (!pl->unw) {
		pl->unw = tableload__start(pl->o.proc_dir);
		/*
		 * Its first item, the vDSO's table (milliseconds): a module
		 * that holds no table takes no stack copies, and the ticks
		 * before the tables come need them.
		 */
		if (!tableload__module_had_tables(pl->unw))
			tableload__wait_asked(pl->unw, &no_stop, VDSO_WAIT_S);
	}
	/* a loader kept from an earlier profile: drop what went meanwhile */
	tableload__sweep(pl->unw, TABLELOAD_SWEEP_S);
	if (pl->o.compile_running)
		tableload__scan(pl->unw, pid > 0 ? pid : 0);
	else
		tableload__scan_cached(pl->unw, pid > 0 ? pid : 0);
}

int pipeline__start(struct pipeline *pl, const struct modprofile_settings *s,
		    const volatile sig_atomic_t *stop, int *err, char *msg,
		    size_t size)
{
	struct modprofile_settings set = *s;
	sigset_t block, old;
	int ret;

	set.proc_dir = pl->o.proc_dir;
	/*
	 * A stop request before the profile exists would be lost (or refused
	 * by ctl): the signals wait until it does, then stop it.
	 */
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigprocmask(SIG_BLOCK, &block, &old);
	ret = modprofile__start(&pl->mp, &set, err, msg, size);
	sigprocmask(SIG_SETMASK, &old, NULL);
	if (!ret && stop && *stop)
		modprofile__stop(&pl->mp);
	return ret;
}

void pipeline__stop(const struct pipeline *pl)
{
	modprofile__stop(&pl->mp);
}

int pipeline__load_ksyms(struct pipeline *pl)
{
	struct resolve_opts ro = {
		.kallsyms = pl->o.kallsyms, .modules = pl->o.modules,
	};

	if (resolve_opts__start_ksyms(&ro))
		return -1;
	pl->ksyms = ro.ksyms_loader;
	return 0;
}

struct ingest *pipeline__open(struct pipeline *pl, int fd, const char *name)
{
	if (fd < 0) {
		fd = pl->mp.fd;
		name = pl->mp.path;
	}
	pl->in = ingest__open(fd, name, pl->unw, pl->cg);
	if (!pl->in)
		return NULL;
	if (fd == pl->mp.fd)
		ingest__from_module(pl->in);
	pl->name = name;
	pl->read_whole = false;
	if (!pl->o.serve && pl->o.debug_queue)
		pl->debug = debugfetch_queue__start();
	ingest__fetch_debug(pl->in, pl->debug);
	ingest__python(pl->in, pl->py);
	ingest__jit(pl->in, pl->jit);
	if (pl->o.table_wait > 0)
		ingest__table_wait(pl->in, pl->o.table_wait);
	return pl->in;
}

const char *pipeline__name(const struct pipeline *pl)
{
	return pl->name;
}

int pipeline__read(struct pipeline *pl, const struct ingest_ops *ops,
		   struct profile **prof)
{
	int err = ingest__run(pl->in, ops);

	if (!err && prof)
		*prof = ingest__take(pl->in);
	pl->read_whole = !err;
	return err;
}

void pipeline__close(struct pipeline *pl)
{
	if (pl->in && pl->o.warn_walks)
		ingest_copies__warn(ingest__copies(pl->in));
	ingest__close(pl->in);
	pl->in = NULL;
	/* the module's one profile is free again before the loader's wait */
	modprofile__close(&pl->mp);
	if (pl->read_whole && pl->o.warn_walks)
		tableload__report_stops(pl->unw, false);
	pl->read_whole = false;
	if (!pl->o.serve) {
		debugfetch_queue__stop(pl->debug);
		pl->debug = NULL;
		tableload__stop(pl->unw, NULL);
		pl->unw = NULL;
	}
}

void pipeline__resolve_opts(struct pipeline *pl, struct resolve_opts *ro)
{
	/* the code objects met last, waiting to be read with others */
	if (pl->in)
		pyframes__flush(pl->py, ingest__profile(pl->in));
	*ro = (struct resolve_opts){
		.symbolize = pl->o.symbolize,
		.kallsyms = pl->o.kallsyms,
		.modules = pl->o.modules,
		.ksyms_loader = pl->ksyms,
		.cgroups = pl->cg,
		.python = pl->py,
		.jit = pl->jit,
	};
	pl->ksyms = NULL;
}

void pipeline__forget_pid(struct pipeline *pl, uint32_t pid)
{
	pyframes__drop_pid(pl->py, pid);
	jitmaps__drop_pid(pl->jit, pid);
}

void pipeline__sweep(struct pipeline *pl)
{
	tableload__sweep(pl->unw, TABLELOAD_SWEEP_S);
}
