/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CPROF_STREAM_H
#define CPROF_STREAM_H

#include <linux/types.h>

struct file;
struct inode;

int cprof_stream_open(struct inode *inode, struct file *file);
ssize_t cprof_stream_read(struct file *file, char __user *buf, size_t count,
			  loff_t *ppos);
int cprof_stream_release(struct inode *inode, struct file *file);
bool cprof_stream_busy(void);
void cprof_stream_kick(void);
void cprof_stream_stop(void);
void cprof_stream_unload(void);
void cprof_stream_exit(void);

#endif /* CPROF_STREAM_H */
