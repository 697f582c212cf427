/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * <linux/types.h> as the module's code sees it, for the objects of a unit
 * test built as the module builds (-D__KERNEL__, e.g. ustep_kmod.c): the
 * uapi types, and the kernel's bool.
 */
#ifndef CPROF_KSHIM_LINUX_TYPES_H
#define CPROF_KSHIM_LINUX_TYPES_H

#include_next <linux/types.h>
#include <stdbool.h>

#endif /* CPROF_KSHIM_LINUX_TYPES_H */
