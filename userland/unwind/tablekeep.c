// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * tablekeep - unwind tables kept in memory by file.  See tablekeep.h.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <hashtab.h>
#include <pthread.h>

#include "unwind/tablekeep.h"

struct kept {
	uint32_t dev;
	uint64_t ino;
	uint64_t used;			/* k->clock at the last put or get */
	size_t len;
	char *buf;			/* NULL: the module has it, not kept */
	struct ustack_table *index;	/* buf's; NULL: not a table */
	bool asked;			/* tablekeep__ask() said yes */
};

struct tablekeep {
	pthread_mutex_t lock;
	htab_t tables;			/* struct kept */
	size_t bytes, cap;
	uint64_t clock;
};

static hashval_t kept_hash(const void *p)
{
	const struct kept *e = p;

	return iterative_hash(&e->ino, sizeof(e->ino), e->dev);
}

static int kept_eq(const void *a, const void *b)
{
	const struct kept *x = a, *y = b;

	return x->dev == y->dev && x->ino == y->ino;
}

static void kept_free(void *p)
{
	struct kept *e = p;

	ustack_table_free(e->index);
	free(e->buf);
	free(e);
}

struct tablekeep *tablekeep__new(size_t cap)
{
	struct tablekeep *k = calloc(1, sizeof(*k));

	if (!k)
		return NULL;
	k->tables = htab_create_alloc(64, kept_hash, kept_eq, kept_free,
				      calloc, free);
	if (!k->tables) {
		free(k);
		return NULL;
	}
	pthread_mutex_init(&k->lock, NULL);
	k->cap = cap;
	return k;
}

void tablekeep__free(struct tablekeep *k)
{
	if (!k)
		return;
	htab_delete(k->tables);
	pthread_mutex_destroy(&k->lock);
	free(k);
}

static int oldest_one(void **slot, void *arg)
{
	struct kept **oldest = arg;
	struct kept *e = *slot;

	if (e->buf && (!*oldest || e->used < (*oldest)->used))
		*oldest = e;
	return 1;
}

/* Drop the least recently used until len more bytes fit; locked. */
static void make_room(struct tablekeep *k, size_t len)
{
	struct kept *oldest;

	while (k->bytes + len > k->cap && k->bytes) {
		oldest = NULL;
		htab_traverse_noresize(k->tables, oldest_one, &oldest);
		k->bytes -= oldest->len;
		/* the module still has it: leave the mark */
		ustack_table_free(oldest->index);
		oldest->index = NULL;
		free(oldest->buf);
		oldest->buf = NULL;
		oldest->len = 0;
	}
}

void tablekeep__put(struct tablekeep *k, uint32_t dev, uint64_t ino,
		    char *buf, size_t len)
{
	struct kept key = { .dev = dev, .ino = ino }, *e;
	struct ustack_table *index = NULL;
	void **slot;

	if (!k) {
		free(buf);
		return;
	}
	/* indexed here, in the loader's thread, not by each walk */
	if (len <= k->cap)
		index = ustack_table_new(buf, len);
	pthread_mutex_lock(&k->lock);
	e = htab_find(k->tables, &key);
	if (e) {
		k->bytes -= e->len;
		htab_remove_elt(k->tables, e);
	}
	if (len > k->cap) {
		/* the module has it all the same: leave a mark */
		free(buf);
		buf = NULL;
		len = 0;
	}
	make_room(k, len);
	e = calloc(1, sizeof(*e));
	slot = e ? htab_find_slot(k->tables, &key, INSERT) : NULL;
	if (!slot) {
		free(e);
		ustack_table_free(index);
		free(buf);
	} else {
		*e = (struct kept){ .dev = dev, .ino = ino, .len = len,
				    .buf = buf, .index = buf ? index : NULL,
				    .used = ++k->clock };
		*slot = e;
		k->bytes += len;
	}
	pthread_mutex_unlock(&k->lock);
}

void tablekeep__mark(struct tablekeep *k, uint32_t dev, uint64_t ino)
{
	struct kept key = { .dev = dev, .ino = ino }, *e;
	void **slot;

	if (!k)
		return;
	pthread_mutex_lock(&k->lock);
	slot = htab_find_slot(k->tables, &key, INSERT);
	if (slot && !*slot && (e = calloc(1, sizeof(*e)))) {
		*e = key;
		*slot = e;
	}
	pthread_mutex_unlock(&k->lock);
}

bool tablekeep__ask(struct tablekeep *k, uint32_t dev, uint64_t ino)
{
	struct kept key = { .dev = dev, .ino = ino }, *e;
	bool ask = false;

	if (!k)
		return false;
	pthread_mutex_lock(&k->lock);
	e = htab_find(k->tables, &key);
	if (e && !e->buf && !e->asked)
		ask = e->asked = true;
	pthread_mutex_unlock(&k->lock);
	return ask;
}

bool tablekeep__marked(struct tablekeep *k, uint32_t dev, uint64_t ino)
{
	struct kept key = { .dev = dev, .ino = ino }, *e;
	bool marked;

	if (!k)
		return false;
	pthread_mutex_lock(&k->lock);
	e = htab_find(k->tables, &key);
	marked = e && !e->buf;
	pthread_mutex_unlock(&k->lock);
	return marked;
}

void tablekeep__hold(struct tablekeep *k)
{
	if (k)
		pthread_mutex_lock(&k->lock);
}

void tablekeep__release(struct tablekeep *k)
{
	if (k)
		pthread_mutex_unlock(&k->lock);
}

const struct ustack_table *tablekeep__get(struct tablekeep *k, uint32_t dev,
					  uint64_t ino, bool *elsewhere)
{
	struct kept key = { .dev = dev, .ino = ino }, *e;

	e = k ? htab_find(k->tables, &key) : NULL;
	*elsewhere = e && !e->buf;
	if (!e || !e->buf)
		return NULL;
	e->used = ++k->clock;
	return e->index;
}
