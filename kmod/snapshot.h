/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CPROF_SNAPSHOT_H
#define CPROF_SNAPSHOT_H

#include <linux/types.h>

#include "cprof.h"

struct cprof_snap;

struct cprof_snap *cprof_snap_new(const struct cprof_settings *set);
size_t cprof_snap_fill(struct cprof_snap *sn, void *dst, size_t room,
		       u64 *threads);
bool cprof_snap_done(const struct cprof_snap *sn);
void cprof_snap_usage(u64 *regs_dropped, u64 *unwalked);
void cprof_snap_free(struct cprof_snap *sn);

#endif /* CPROF_SNAPSHOT_H */
