/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CPROF_HEAP_H
#define CPROF_HEAP_H

#include "cprof.h"

int cprof_heap_start(const struct cprof_settings *set);
void cprof_heap_open(u64 deadline_ns);
bool cprof_heap_exited(void);
void cprof_heap_stop(void);
void cprof_heap_stats(int cpu, struct cprof_cpu_stats *st);

#endif /* CPROF_HEAP_H */
