/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * timeline - the scheduler's timeline of a profile of kind trace: its
 * SWITCH and WAKE records, in stream order (each CPU's in time order),
 * each switch with the profile sample of the leaving task's stacks that
 * followed it (same cpu, time and tid), and the last pid and name seen
 * of each thread.  At most TIMELINE_EVENTS_MAX events are kept; those
 * past it are counted.
 */
#ifndef CPROF_TIMELINE_H
#define CPROF_TIMELINE_H

#include <stddef.h>
#include <stdint.h>

#include "cprof_format.h"

/* 40 bytes each: 80 MiB at most */
#define TIMELINE_EVENTS_MAX	(1u << 21)

struct tl_event {
	uint64_t time_ns;
	uint32_t cpu;
	uint16_t type;		/* CPROF_REC_SWITCH or CPROF_REC_WAKE */
	uint8_t flags;		/* its rec.flags (those defined fit) */
	uint8_t state;		/* a switch: prev's enum cprof_off_state */
	uint32_t a_pid, a_tid;	/* a switch's prev, a wake's waker */
	uint32_t b_pid, b_tid;	/* a switch's next, a wake's wakee */
	uint32_t target_cpu;	/* a wake's */
	/* a switch: 1 + the profile sample index of prev's stacks; 0: none */
	uint32_t stack;
};

struct tl_thread {
	uint32_t tid, pid;
	char comm[CPROF_COMM_LEN];	/* NUL-terminated */
};

struct timeline;

/* NULL on allocation failure. */
struct timeline *timeline__new(void);
/* NULL-safe. */
void timeline__free(struct timeline *t);
/* A SWITCH or WAKE record checked by stream__next().  0 ok, -1 ENOMEM. */
int timeline__add(struct timeline *t, const struct cprof_rec *rec);
/*
 * A sample of tid's stacks at time_ns on cpu, profile sample index:
 * the stacks of the switch just added on that CPU if it is prev's there.
 */
void timeline__stack(struct timeline *t, uint32_t cpu, uint64_t time_ns,
		     uint32_t tid, uint32_t index);

size_t timeline__nr_events(const struct timeline *t);
const struct tl_event *timeline__event(const struct timeline *t, size_t i);
/* Events not kept: past TIMELINE_EVENTS_MAX. */
uint64_t timeline__dropped(const struct timeline *t);
/* Threads seen (tid 0, the idle tasks, never), in no order. */
size_t timeline__nr_threads(const struct timeline *t);
const struct tl_thread *timeline__thread(const struct timeline *t, size_t i);
/* The thread tid, NULL if not seen. */
const struct tl_thread *timeline__find(const struct timeline *t, uint32_t tid);

#endif /* CPROF_TIMELINE_H */
