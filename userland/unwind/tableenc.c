// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * tableenc - a compiled unwind table in the module's format.  See
 * tableenc.h.
 *
 * A file's rows repeat few rules (libc's 60 000 rows hold a few hundred),
 * so the format keeps each rule once and a 16-bit index a row.  Finding
 * them takes a hash of every row: done once, when the table is compiled,
 * not each time the cache gives it back.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <hashtab.h>

#include "lib/hash.h"
#include "lib/util.h"
#include "unwind/tableenc.h"

/* a rule is one 64-bit word: hash_words(), not a byte at a time */
_Static_assert(sizeof(struct cprof_urow) == sizeof(uint64_t),
	       "a rule is one word");

static hashval_t rule_hash(const void *p)
{
	return hash_words(p, 1, 0);
}

static int rule_eq(const void *a, const void *b)
{
	return !memcmp(a, b, sizeof(struct cprof_urow));
}

size_t tableenc_len(uint32_t nr_rows, uint32_t nr_rules)
{
	return (size_t)nr_rules * sizeof(struct cprof_urow) +
	       (size_t)nr_rows * (sizeof(uint32_t) + sizeof(uint16_t));
}

int tableenc_encode(const struct cfi_table *t, struct tableenc *e)
{
	size_t cap = t->n < CPROF_UTABLE_RULES_MAX ? t->n :
						     CPROF_UTABLE_RULES_MAX;
	struct cprof_urow *rule = NULL;
	uint16_t *rule_of = NULL;
	htab_t seen = NULL;
	size_t i, nr = 0;
	void **slot;
	char *at;
	int ret = -1;

	memset(e, 0, sizeof(*e));
	if (!t->n || t->n > CPROF_UTABLE_ROWS_MAX)
		return -1;
	rule = malloc(cap * sizeof(*rule));
	rule_of = malloc(t->n * sizeof(*rule_of));
	seen = htab_create_alloc(1024, rule_hash, rule_eq, NULL, calloc, free);
	if (!rule || !rule_of || !seen)
		goto out;
	for (i = 0; i < t->n; i++) {
		slot = htab_find_slot(seen, &t->row[i], INSERT);
		if (!slot)
			goto out;
		if (!*slot) {
			if (nr == cap) {
				warning("unwind tables: a table of %zu rows has more than %u distinct rules: not loaded",
					t->n, CPROF_UTABLE_RULES_MAX);
				goto out;
			}
			rule[nr] = t->row[i];
			*slot = &rule[nr++];
		}
		rule_of[i] = (uint16_t)((struct cprof_urow *)*slot - rule);
	}
	e->nr_rows = t->n;
	e->nr_rules = nr;
	e->len = tableenc_len(e->nr_rows, e->nr_rules);
	e->body = malloc(e->len);
	if (!e->body)
		goto out;
	at = e->body;
	memcpy(at, rule, nr * sizeof(*rule));
	at += nr * sizeof(*rule);
	memcpy(at, t->pc, t->n * sizeof(*t->pc));
	at += t->n * sizeof(*t->pc);
	memcpy(at, rule_of, t->n * sizeof(*rule_of));
	e->frame_pointers = t->frame_pointers;
	memcpy(e->stop_bytes, t->stop_bytes, sizeof(e->stop_bytes));
	ret = 0;
out:
	if (seen)
		htab_delete(seen);
	free(rule);
	free(rule_of);
	if (ret)
		tableenc_free(e);
	return ret;
}

bool tableenc_check(const void *body, size_t len, uint32_t nr_rows,
		    uint32_t nr_rules)
{
	const char *rules = body, *pcs, *idx;
	struct cprof_urow rule;
	uint32_t i, pc, last = 0;
	uint16_t r = 0;

	if (!body || !nr_rows || nr_rows > CPROF_UTABLE_ROWS_MAX ||
	    !nr_rules || nr_rules > CPROF_UTABLE_RULES_MAX ||
	    len != tableenc_len(nr_rows, nr_rules))
		return false;
	pcs = rules + (size_t)nr_rules * sizeof(rule);
	idx = pcs + (size_t)nr_rows * sizeof(pc);
	/* as the module takes a table: see kmod/utable.c */
	for (i = 0; i < nr_rules; i++) {
		memcpy(&rule, rules + i * sizeof(rule), sizeof(rule));
		if (rule.cfa_base > CPROF_CFA_MAX || rule.fp_rule > CPROF_FP_MAX)
			return false;
	}
	for (i = 0; i < nr_rows; i++) {
		memcpy(&pc, pcs + (size_t)i * sizeof(pc), sizeof(pc));
		memcpy(&r, idx + (size_t)i * sizeof(r), sizeof(r));
		if ((i && pc <= last) || r >= nr_rules)
			return false;
		last = pc;
	}
	memcpy(&rule, rules + (size_t)r * sizeof(rule), sizeof(rule));
	return rule.cfa_base == CPROF_CFA_NONE;
}

char *tableenc_table(const struct tableenc *e, struct cprof_utable *hdr,
		     const struct cprof_upy *py, size_t *len)
{
	size_t head = sizeof(*hdr) + (py ? sizeof(*py) : 0);
	char *buf;

	hdr->nr_rows = e->nr_rows;
	hdr->nr_rules = e->nr_rules;
	if (e->frame_pointers)
		hdr->flags |= CPROF_UTABLE_FP;
	if (py)
		hdr->flags |= CPROF_UTABLE_PY;
	*len = head + e->len;
	buf = malloc(*len);
	if (!buf)
		return NULL;
	memcpy(buf, hdr, sizeof(*hdr));
	if (py)
		memcpy(buf + sizeof(*hdr), py, sizeof(*py));
	memcpy(buf + head, e->body, e->len);
	return buf;
}

void tableenc_free(struct tableenc *e)
{
	if (!e)
		return;
	free(e->body);
	memset(e, 0, sizeof(*e));
}
