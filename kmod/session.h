/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One profile, from the open of /proc/cprof/profile to its release: the
 * settings frozen at its start, its period and deadline, its state and why
 * it ended, and the kick that wakes its reader.  At most one exists.
 */
#ifndef CPROF_SESSION_H
#define CPROF_SESSION_H

#include <linux/types.h>

#include "cprof.h"

struct cprof_session;

enum cprof_session_state {
	CPROF_SESSION_RUNNING,		/* the ticks sample */
	CPROF_SESSION_STOPPING,		/* asked to end: the reader drains */
	CPROF_SESSION_ENDED,		/* the reader has read the END record */
};

struct cprof_session *cprof_session_begin(const struct cprof_settings *set,
					  bool kernel_addrs);
void cprof_session_release(struct cprof_session *s);

const struct cprof_settings *cprof_session_settings(const struct cprof_session *s);
u64 cprof_session_period(const struct cprof_session *s);
u64 cprof_session_deadline_at(const struct cprof_session *s, u64 start);
void cprof_session_started(struct cprof_session *s, u64 start);
u64 cprof_session_start_ns(const struct cprof_session *s);
u64 cprof_session_deadline(const struct cprof_session *s);
u64 cprof_session_stop_ns(const struct cprof_session *s);
u32 cprof_session_id(const struct cprof_session *s);
bool cprof_session_kernel_addrs(const struct cprof_session *s);

enum cprof_session_state cprof_session_state(const struct cprof_session *s);
u32 cprof_session_reason(const struct cprof_session *s);
void cprof_session_stop(struct cprof_session *s, u32 reason);
void cprof_session_ended(struct cprof_session *s);

bool cprof_session_active(void);
bool cprof_session_stop_current(u32 reason);
void cprof_session_unload(void);

void cprof_session_kick(void);
void cprof_session_wait(struct cprof_session *s, long timeout);
void cprof_session_exit(void);

#endif /* CPROF_SESSION_H */
