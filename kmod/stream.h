/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CPROF_STREAM_H
#define CPROF_STREAM_H

#include <linux/types.h>

struct file;
struct inode;

int cprof_stream_open(struct file *file, bool kernel_addrs);
ssize_t cprof_stream_read(struct file *file, char __user *buf, size_t count,
			  loff_t *ppos);
int cprof_stream_release(struct inode *inode, struct file *file);

#endif /* CPROF_STREAM_H */
