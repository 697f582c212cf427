/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CPROF_CTL_H
#define CPROF_CTL_H

#include <linux/types.h>

struct cprof_session;
struct seq_file;

int cprof_ctl_init(u32 freq, u32 seconds, u32 depth, u32 budget,
		   u32 accesses);
void cprof_ctl_exit(void);
int cprof_ctl_apply(const char *text);
void cprof_ctl_show(struct seq_file *m);
struct cprof_session *cprof_ctl_begin_session(bool kernel_addrs);

#endif /* CPROF_CTL_H */
