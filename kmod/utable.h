/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CPROF_UTABLE_H
#define CPROF_UTABLE_H

#include <linux/types.h>

#include "cprof_format.h"

struct cprof_file_pos;
struct seq_file;

/* One row of a table: where it starts, its rule. */
struct cprof_uent {
	u16 pc_lo;		/* the offset's low 16 bits */
	u16 rule;		/* in the table's rule[] */
};

/* A table as the tick's lookups see it: from cprof_utable_get(). */
struct cprof_utable_view {
	const struct cprof_uent *ent;
	const u32 *page;
	const struct cprof_urow *rule;
	u32 nr;
	u32 npages;
	u32 first;		/* the first row's offset */
	bool frame_pointers;	/* CPROF_UTABLE_FP */
	const struct cprof_upy *py;	/* CPROF_UTABLE_PY's, else NULL */
};

ssize_t cprof_utable_write(const char __user *buf, size_t count);
void cprof_utable_show(struct seq_file *m);
bool cprof_utable_any(void);
bool cprof_utable_python(void);
void cprof_utable_loader(bool open);
bool cprof_utable_loading(void);
bool cprof_utable_has_loader(void);
bool cprof_utable_compiling(void);
bool cprof_utable_get(const struct cprof_file_pos *pos,
		      struct cprof_utable_view *v);
bool cprof_utable_row(const struct cprof_utable_view *v, u64 off,
		      struct cprof_urow *row);
void cprof_utable_usage(u64 *tables, u64 *bytes, u64 *evicted);
void cprof_utable_exit(void);

#endif /* CPROF_UTABLE_H */
