/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CPROF_SAMPLE_H
#define CPROF_SAMPLE_H

#include "cprof.h"

int cprof_sample_init(u32 ring_size);
void cprof_sample_exit(void);
void cprof_sample_start(u64 period_ns, u64 deadline_ns);
void cprof_sample_stop(void);
struct cprof_cpu *cprof_cpu(int cpu);
void cprof_sample_put_lost(struct cprof_cpu *pc, int cpu, struct cprof_lost *l);

#endif /* CPROF_SAMPLE_H */
