/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The one place where kernel differences are handled.  Force-included from
 * Kbuild: the rest of the module is written against the newest kernel API
 * and this file gives older kernels what they lack.
 */
#ifndef CPROF_COMPAT_H
#define CPROF_COMPAT_H

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#endif /* CPROF_COMPAT_H */
