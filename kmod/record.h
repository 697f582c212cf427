/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A profile's recorders, started and stopped together: the ticks and the
 * per-CPU rings (sample.c) and, for the kinds offcpu and wall, the
 * scheduler's hook (offcpu.c), for the kind threadcreate the task
 * creation's (newtask.c), for the kind mutex the futex sleeps' and
 * wake-ups' (mutex.c), for the kind trace every switch's and wake-up's
 * (trace.c), which write into those rings.
 */
#ifndef CPROF_RECORD_H
#define CPROF_RECORD_H

#include <linux/types.h>

#include "cprof.h"

int cprof_record_start(const struct cprof_settings *set, u64 period_ns);
void cprof_record_open(u64 from, u64 deadline_ns);
bool cprof_record_target_exited(void);
void cprof_record_stop(void);
void cprof_record_exit(void);

#endif /* CPROF_RECORD_H */
