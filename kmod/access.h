/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CPROF_ACCESS_H
#define CPROF_ACCESS_H

#include <linux/types.h>

int cprof_access_check(void);
bool cprof_access_kernel_addrs(void);

#endif /* CPROF_ACCESS_H */
