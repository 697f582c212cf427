/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CPROF_CTL_H
#define CPROF_CTL_H

#include <linux/mutex.h>
#include <linux/types.h>

#include "cprof.h"

struct seq_file;

extern struct cprof_settings cprof_set;
extern struct mutex cprof_lock;	/* settings; profile start and stop */

int cprof_ctl_init(u32 freq, u32 seconds, u32 depth, u32 budget);
void cprof_ctl_exit(void);
int cprof_ctl_apply(const char *text);
void cprof_ctl_show(struct seq_file *m);

#endif /* CPROF_CTL_H */
