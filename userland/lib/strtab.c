// SPDX-License-Identifier: GPL-2.0 OR MIT
#include <stdlib.h>
#include <string.h>

#include <hashtab.h>

#include "lib/strtab.h"

/* each string in an allocation of its own: growing t moves no string */
struct str_ent {
	int64_t id;
	char s[];
};

struct strtab {
	htab_t tab;
	char **strs;
	size_t nr, alloc;
};

static hashval_t str_ent_hash(const void *e)
{
	return htab_hash_string(((const struct str_ent *)e)->s);
}

/* entries against lookup keys (plain strings) */
static int str_ent_eq(const void *e, const void *key)
{
	return !strcmp(((const struct str_ent *)e)->s, key);
}

struct strtab *strtab__new(void)
{
	struct strtab *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->tab = htab_create_alloc(1024, str_ent_hash, str_ent_eq, free,
				   calloc, free);
	if (!t->tab || strtab__intern(t, "") != 0) {
		strtab__free(t);
		return NULL;
	}
	return t;
}

void strtab__free(struct strtab *t)
{
	if (!t)
		return;
	if (t->tab)
		htab_delete(t->tab);
	free(t->strs);
	free(t);
}

int64_t strtab__intern(struct strtab *t, const char *s)
{
	struct str_ent *e;
	size_t len;
	void **slot;

	if (!s)
		s = "";
	slot = htab_find_slot_with_hash(t->tab, s, htab_hash_string(s), INSERT);
	if (!slot)
		return -1;
	if (*slot)
		return ((struct str_ent *)*slot)->id;
	if (t->nr == t->alloc) {
		size_t want = t->alloc ? t->alloc * 2 : 1024;
		char **p = reallocarray(t->strs, want, sizeof(*p));

		if (!p)
			return -1;
		t->strs = p;
		t->alloc = want;
	}
	len = strlen(s);
	e = malloc(sizeof(*e) + len + 1);
	if (!e)
		return -1;
	e->id = t->nr;
	memcpy(e->s, s, len + 1);
	t->strs[t->nr++] = e->s;
	*slot = e;
	return e->id;
}

size_t strtab__nr(const struct strtab *t)
{
	return t->nr;
}

const char *strtab__get(const struct strtab *t, int64_t i)
{
	return t->strs[i];
}

char **strtab__array(const struct strtab *t)
{
	return t->strs;
}
