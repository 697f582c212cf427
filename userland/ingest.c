// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * ingest - read a cprof stream into a profile.  See ingest.h.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "debugfetch.h"
#include "ingest.h"
#include "stream.h"
#include "util.h"

struct ingest {
	struct stream *s;
	const struct cprof_header *hdr;	/* owned by s */
	struct profile *p;
	struct tableload *unw;
	struct cgroups *cg;
	struct debugfetch_queue *debug;
};

struct ingest *ingest__open(int fd, const char *name, struct tableload *unw,
			    struct cgroups *cg)
{
	struct ingest *in = calloc(1, sizeof(*in));

	if (!in || !(in->s = stream__new(fd, name))) {
		fail("failed to read %s: %s", name, strerror(ENOMEM));
		free(in);
		return NULL;
	}
	in->unw = unw;
	in->cg = cg;
	in->hdr = stream__read_header(in->s);
	if (!in->hdr) {
		ingest__close(in);
		return NULL;
	}
	in->p = profile__new(in->hdr);
	if (!in->p) {
		fail("failed to aggregate samples: %s", strerror(ENOMEM));
		ingest__close(in);
		return NULL;
	}
	return in;
}

void ingest__fetch_debug(struct ingest *in, struct debugfetch_queue *q)
{
	in->debug = q;
}

void ingest__close(struct ingest *in)
{
	if (!in)
		return;
	profile__free(in->p);
	stream__free(in->s);
	free(in);
}

int ingest__run(struct ingest *in, const struct ingest_ops *ops)
{
	static const struct ingest_ops none;
	const struct cprof_rec *rec;
	int ret;

	if (!ops)
		ops = &none;
	stream__on_interrupt(in->s, ops->idle, ops->arg);
	while ((ret = stream__next(in->s, &rec)) > 0) {
		if (ops->record) {
			ret = ops->record(ops->arg, in->p, rec);
			if (ret)
				break;
		} else if (profile__add(in->p, rec)) {
			fail("failed to aggregate samples: %s",
			     strerror(ENOMEM));
			ret = -1;
			break;
		}
		if (rec->type == CPROF_REC_MMAP) {
			tableload__note(in->unw,
					(const struct cprof_mmap *)rec);
			debugfetch_queue__note(in->debug,
					       (const struct cprof_mmap *)rec);
		}
		cgroups__note(in->cg, rec);
		if (ops->after) {
			ret = ops->after(ops->arg, rec);
			if (ret)
				break;
		}
	}
	stream__on_interrupt(in->s, NULL, NULL);
	return ret;
}

const struct cprof_header *ingest__header(const struct ingest *in)
{
	return in->hdr;
}

struct profile *ingest__profile(const struct ingest *in)
{
	return in->p;
}

struct profile *ingest__take(struct ingest *in)
{
	struct profile *p = in->p;

	in->p = NULL;
	return p;
}
