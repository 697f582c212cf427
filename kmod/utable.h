/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CPROF_UTABLE_H
#define CPROF_UTABLE_H

#include <linux/types.h>

#include "cprof_format.h"

struct cprof_file_pos;
struct cprof_utab;
struct seq_file;

ssize_t cprof_utable_write(const char __user *buf, size_t count);
void cprof_utable_show(struct seq_file *m);
bool cprof_utable_any(void);
const struct cprof_utab *cprof_utable_get(const struct cprof_file_pos *pos);
bool cprof_utable_row(const struct cprof_utab *t, u64 off,
		      struct cprof_urow *row);
void cprof_utable_usage(u64 *tables, u64 *bytes);
void cprof_utable_exit(void);

#endif /* CPROF_UTABLE_H */
