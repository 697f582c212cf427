/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CPROF_NEWTASK_H
#define CPROF_NEWTASK_H

#include "cprof.h"

int cprof_newtask_start(const struct cprof_settings *set);
void cprof_newtask_stop(void);
void cprof_newtask_stats(int cpu, struct cprof_cpu_stats *st);

#endif /* CPROF_NEWTASK_H */
