// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * timeline - the scheduler's timeline of a profile.  See timeline.h.
 *
 * Events in one growing array; threads in a vector that owns them,
 * indexed by tid in a hash table (libiberty's); for each CPU, the last
 * switch added there, which the sample of its leaving task's stacks
 * follows in the stream.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <hashtab.h>

#include "stream/timeline.h"
#include "lib/util.h"

struct timeline {
	struct tl_event *events;
	size_t nr_events, alloc_events;
	uint64_t dropped;
	htab_t thread_tab;		/* struct tl_thread, by tid */
	struct tl_thread **threads;
	size_t nr_threads, alloc_threads;
	size_t *last_switch;		/* per CPU: 1 + event index, 0 none */
	size_t nr_cpus;
};

static hashval_t thread_hash(const void *e)
{
	return ((const struct tl_thread *)e)->tid * 2654435761u;
}

static int thread_eq(const void *a, const void *b)
{
	return ((const struct tl_thread *)a)->tid ==
	       ((const struct tl_thread *)b)->tid;
}

struct timeline *timeline__new(void)
{
	struct timeline *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->thread_tab = htab_create_alloc(64, thread_hash, thread_eq, NULL,
					  calloc, free);
	if (!t->thread_tab) {
		free(t);
		return NULL;
	}
	return t;
}

void timeline__free(struct timeline *t)
{
	size_t i;

	if (!t)
		return;
	htab_delete(t->thread_tab);
	for (i = 0; i < t->nr_threads; i++)
		free(t->threads[i]);
	free(t->threads);
	free(t->events);
	free(t->last_switch);
	free(t);
}

/* Note tid's pid and name (comm: CPROF_COMM_LEN bytes, maybe unended). */
static int timeline__name(struct timeline *t, uint32_t pid, uint32_t tid,
			  const char *comm)
{
	struct tl_thread key = { .tid = tid }, *th;
	void **slot;

	if (!tid)
		return 0;
	slot = htab_find_slot(t->thread_tab, &key, INSERT);
	if (!slot)
		return -1;
	th = *slot;
	if (!th) {
		if (grow_array(&t->threads, &t->alloc_threads,
			       t->nr_threads + 1, sizeof(*t->threads)))
			return -1;
		th = calloc(1, sizeof(*th));
		if (!th)
			return -1;
		th->tid = tid;
		t->threads[t->nr_threads++] = th;
		*slot = th;
	}
	th->pid = pid;
	/* NUL-terminated by contract; do not trust it */
	memcpy(th->comm, comm, sizeof(th->comm) - 1);
	th->comm[sizeof(th->comm) - 1] = '\0';
	return 0;
}

int timeline__add(struct timeline *t, const struct cprof_rec *rec)
{
	const struct cprof_switch *sw = (const void *)rec;
	const struct cprof_wake *wk = (const void *)rec;
	struct tl_event *e;
	size_t cap = t->nr_cpus;

	if (rec->type == CPROF_REC_SWITCH) {
		if (timeline__name(t, sw->prev_pid, sw->prev_tid,
				   sw->prev_comm) ||
		    timeline__name(t, sw->next_pid, sw->next_tid,
				   sw->next_comm))
			return -1;
	} else if (rec->type == CPROF_REC_WAKE) {
		if (timeline__name(t, wk->waker_pid, wk->waker_tid,
				   wk->waker_comm) ||
		    timeline__name(t, wk->wakee_pid, wk->wakee_tid,
				   wk->wakee_comm))
			return -1;
	} else {
		return 0;
	}
	if (t->nr_events >= TIMELINE_EVENTS_MAX) {
		t->dropped++;
		return 0;
	}
	if (grow_array(&t->events, &t->alloc_events, t->nr_events + 1,
		       sizeof(*t->events)))
		return -1;
	e = &t->events[t->nr_events];
	memset(e, 0, sizeof(*e));
	e->type = rec->type;
	e->flags = rec->flags;
	if (rec->type == CPROF_REC_SWITCH) {
		if (sw->cpu >= t->nr_cpus) {
			if (grow_array(&t->last_switch, &cap, (size_t)sw->cpu + 1,
				       sizeof(*t->last_switch)))
				return -1;
			memset(t->last_switch + t->nr_cpus, 0,
			       (cap - t->nr_cpus) * sizeof(*t->last_switch));
			t->nr_cpus = cap;
		}
		e->time_ns = sw->time_ns;
		e->cpu = sw->cpu;
		e->state = sw->prev_state;	/* checked: at most OFF_MAX */
		e->a_pid = sw->prev_pid;
		e->a_tid = sw->prev_tid;
		e->b_pid = sw->next_pid;
		e->b_tid = sw->next_tid;
		t->last_switch[sw->cpu] = t->nr_events + 1;
	} else {
		e->time_ns = wk->time_ns;
		e->cpu = wk->cpu;
		e->a_pid = wk->waker_pid;
		e->a_tid = wk->waker_tid;
		e->b_pid = wk->wakee_pid;
		e->b_tid = wk->wakee_tid;
		e->target_cpu = wk->target_cpu;
	}
	t->nr_events++;
	return 0;
}

void timeline__stack(struct timeline *t, uint32_t cpu, uint64_t time_ns,
		     uint32_t tid, uint32_t index)
{
	struct tl_event *e;

	if (cpu >= t->nr_cpus || !t->last_switch[cpu])
		return;
	e = &t->events[t->last_switch[cpu] - 1];
	if (e->time_ns == time_ns && e->a_tid == tid && !e->stack &&
	    index < UINT32_MAX)
		e->stack = index + 1;
}

size_t timeline__nr_events(const struct timeline *t)
{
	return t->nr_events;
}

const struct tl_event *timeline__event(const struct timeline *t, size_t i)
{
	return &t->events[i];
}

uint64_t timeline__dropped(const struct timeline *t)
{
	return t->dropped;
}

size_t timeline__nr_threads(const struct timeline *t)
{
	return t->nr_threads;
}

const struct tl_thread *timeline__thread(const struct timeline *t, size_t i)
{
	return t->threads[i];
}

const struct tl_thread *timeline__find(const struct timeline *t, uint32_t tid)
{
	struct tl_thread key = { .tid = tid };

	return htab_find(t->thread_tab, &key);
}
