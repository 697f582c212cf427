/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CPROF_MUTEX_H
#define CPROF_MUTEX_H

#include "cprof.h"

int cprof_mutex_start(const struct cprof_settings *set);
void cprof_mutex_stop(void);
void cprof_mutex_exit(void);
void cprof_mutex_stats(int cpu, struct cprof_cpu_stats *st);

#endif /* CPROF_MUTEX_H */
