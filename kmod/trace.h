/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CPROF_TRACE_H
#define CPROF_TRACE_H

#include "cprof.h"

int cprof_trace_start(const struct cprof_settings *set);
void cprof_trace_stop(void);
void cprof_trace_stats(int cpu, struct cprof_cpu_stats *st);

#endif /* CPROF_TRACE_H */
