/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CPROF_PROCFS_H
#define CPROF_PROCFS_H

int cprof_procfs_init(void);
void cprof_procfs_exit(void);

#endif /* CPROF_PROCFS_H */
