// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * test_tableenc: a compiled table in the module's format (tableenc.c).
 *
 * Each distinct rule is kept once, in the order first seen, and every row
 * points at its own: the body byte for byte; the table behind its header
 * (with a CPython layout or without) is one the walk of stack copies
 * takes; a body the module would refuse (a length that is not its counts',
 * counts past the format's, offsets out of order, a rule index past the
 * rules, an unknown rule kind, a last row that is not the end) does not
 * check; a table of exactly as many distinct rules as the format holds is
 * encoded, one more is not.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "unwind/tableenc.h"
#include "unwind/ustack.h"
#include "test.h"

static struct cprof_urow rule_sp(int off)
{
	return (struct cprof_urow){ .cfa_base = CPROF_CFA_SP, .cfa_off = off };
}

/* n rows at 16 i; rules[i % nr] for each but the last, which ends. */
static void make(struct cfi_table *t, size_t n, const struct cprof_urow *r,
		 size_t nr)
{
	size_t i;

	memset(t, 0, sizeof(*t));
	t->pc = calloc(n, sizeof(*t->pc));
	t->row = calloc(n, sizeof(*t->row));
	for (i = 0; i < n; i++) {
		t->pc[i] = 16 * i;
		t->row[i] = i + 1 < n ? r[i % nr] :
			(struct cprof_urow){ .cfa_base = CPROF_CFA_NONE };
	}
	t->n = n;
}

/* The body's rule index of row i. */
static uint16_t rule_of(const struct tableenc *e, uint32_t i)
{
	uint16_t r;

	memcpy(&r, e->body + (size_t)e->nr_rules * sizeof(struct cprof_urow) +
		   (size_t)e->nr_rows * sizeof(uint32_t) + i * sizeof(r),
	       sizeof(r));
	return r;
}

/* A copy of e's body with the bytes at off replaced by len of p. */
static bool checks_with(const struct tableenc *e, size_t off, const void *p,
			size_t len)
{
	char *b = malloc(e->len);
	bool ok;

	memcpy(b, e->body, e->len);
	memcpy(b + off, p, len);
	ok = tableenc_check(b, e->len, e->nr_rows, e->nr_rules);
	free(b);
	return ok;
}

int main(void)
{
	const struct cprof_urow three[] = { rule_sp(8), rule_sp(16),
					    rule_sp(8), rule_sp(24) };
	struct cprof_utable hdr = { .magic = CPROF_UTABLE_MAGIC,
				    .size = sizeof(hdr) };
	struct cprof_upy py = { 0 };
	struct cfi_table t;
	struct tableenc e;
	struct ustack_table *ut;
	struct cprof_urow row, bad;
	uint32_t pc;
	uint16_t idx;
	size_t len, rules_at;
	char *buf;

	/* 9 rows: 8 over three rules (8 and 8 the same), then the end */
	make(&t, 9, three, 4);
	t.frame_pointers = true;
	t.stop_bytes[CFI_STOP_SIGNAL] = 7;
	test_cond("a table encodes", tableenc_encode(&t, &e) == 0);
	test_condf(e.nr_rows == 9 && e.nr_rules == 4 &&
		   e.len == tableenc_len(9, 4) && e.len == 4 * 8 + 9 * 6,
		   "each distinct rule once: 4 rules for 9 rows (%u, %u; %zu bytes)",
		   e.nr_rows, e.nr_rules, e.len);
	test_condf(rule_of(&e, 0) == rule_of(&e, 2) &&
		   rule_of(&e, 0) == rule_of(&e, 4) &&
		   rule_of(&e, 1) != rule_of(&e, 0) &&
		   rule_of(&e, 3) != rule_of(&e, 1) &&
		   rule_of(&e, 8) != rule_of(&e, 3),
		   "rows with the same rule share it (%u %u %u %u %u)",
		   rule_of(&e, 0), rule_of(&e, 1), rule_of(&e, 2),
		   rule_of(&e, 3), rule_of(&e, 8));
	test_cond("the frame-pointer flag and what stops walks come along",
		  e.frame_pointers && e.stop_bytes[CFI_STOP_SIGNAL] == 7);
	test_cond("a body encoded here checks",
		  tableenc_check(e.body, e.len, e.nr_rows, e.nr_rules));
	{
		/* rules as first seen: 8, 16, 24, the end */
		const struct cprof_urow want_rules[] = {
			rule_sp(8), rule_sp(16), rule_sp(24),
			{ .cfa_base = CPROF_CFA_NONE },
		};
		const uint16_t want_of[] = { 0, 1, 0, 2, 0, 1, 0, 2, 3 };
		char want[4 * 8 + 9 * 6];
		uint32_t i, p;

		memcpy(want, want_rules, sizeof(want_rules));
		for (i = 0; i < 9; i++) {
			p = 16 * i;
			memcpy(want + 32 + 4 * i, &p, sizeof(p));
		}
		memcpy(want + 32 + 36, want_of, sizeof(want_of));
		test_cond("the body byte for byte: rules, offsets, rule indexes",
			  e.len == sizeof(want) &&
			  !memcmp(e.body, want, sizeof(want)));
	}

	/* behind its header, as the module and the copies' walk take it */
	buf = tableenc_table(&e, &hdr, NULL, &len);
	ut = buf ? ustack_table_new(buf, len) : NULL;
	test_condf(ut && hdr.nr_rows == 9 && hdr.nr_rules == 4 &&
		   hdr.flags == CPROF_UTABLE_FP && len == sizeof(hdr) + e.len,
		   "the table behind its header: taken by the copies' walk (flags %#x, %zu bytes)",
		   hdr.flags, len);
	test_cond("... its rows are the table's",
		  ut && ustack_table_row(ut, 16 + 3, &row) &&
		  !memcmp(&row, &three[1], sizeof(row)) &&
		  ustack_table_row(ut, 32 * 2, &row) &&
		  !memcmp(&row, &three[0], sizeof(row)));
	ustack_table_free(ut);
	free(buf);
	hdr.flags = 0;
	buf = tableenc_table(&e, &hdr, &py, &len);
	ut = buf ? ustack_table_new(buf, len) : NULL;
	test_condf(ut && hdr.flags == (CPROF_UTABLE_FP | CPROF_UTABLE_PY) &&
		   len == sizeof(hdr) + sizeof(py) + e.len,
		   "with a CPython layout: after the header, before the rules (flags %#x)",
		   hdr.flags);
	ustack_table_free(ut);
	free(buf);

	/* bodies the module would refuse */
	rules_at = (size_t)e.nr_rules * sizeof(struct cprof_urow);
	test_cond("a length not the counts' does not check",
		  !tableenc_check(e.body, e.len - 1, e.nr_rows, e.nr_rules) &&
		  !tableenc_check(e.body, e.len, e.nr_rows + 1, e.nr_rules) &&
		  !tableenc_check(e.body, e.len, e.nr_rows, e.nr_rules - 1));
	test_cond("counts of none or past the format's do not check",
		  !tableenc_check(e.body, e.len, e.nr_rows, 0) &&
		  !tableenc_check(e.body, e.len, 0, e.nr_rules) &&
		  !tableenc_check(e.body, e.len, CPROF_UTABLE_ROWS_MAX + 1,
				  e.nr_rules) &&
		  !tableenc_check(e.body, e.len, e.nr_rows,
				  CPROF_UTABLE_RULES_MAX + 1));
	pc = 16;
	test_cond("offsets out of order do not check",
		  !checks_with(&e, rules_at + 2 * sizeof(pc), &pc, sizeof(pc)));
	idx = 4;
	test_cond("a rule index past the rules does not check",
		  !checks_with(&e, rules_at + 9 * sizeof(pc) + 3 * sizeof(idx),
			       &idx, sizeof(idx)));
	bad = rule_sp(8);
	bad.cfa_base = CPROF_CFA_MAX + 1;
	test_cond("an unknown rule kind does not check",
		  !checks_with(&e, 0, &bad, sizeof(bad)));
	bad = rule_sp(8);
	bad.fp_rule = CPROF_FP_MAX + 1;
	test_cond("an unknown rbp rule does not check",
		  !checks_with(&e, 0, &bad, sizeof(bad)));
	idx = rule_of(&e, 0);
	test_cond("a last row that is not the end does not check",
		  !checks_with(&e, rules_at + 9 * sizeof(pc) + 8 * sizeof(idx),
			       &idx, sizeof(idx)));
	test_cond("nothing to check: no", !tableenc_check(NULL, 0, 0, 0));
	tableenc_free(&e);
	tableenc_free(&e);
	cfi_table_free(&t);

	/* as many distinct rules as 16 bits index (the end among them), one more */
	{
		size_t n = CPROF_UTABLE_RULES_MAX, i;

		make(&t, n, three, 1);
		for (i = 0; i + 1 < n; i++)
			t.row[i] = rule_sp((int)i);
		test_condf(tableenc_encode(&t, &e) == 0 &&
			   e.nr_rules == CPROF_UTABLE_RULES_MAX &&
			   rule_of(&e, n - 1) == CPROF_UTABLE_RULES_MAX - 1 &&
			   tableenc_check(e.body, e.len, e.nr_rows, e.nr_rules),
			   "exactly as many distinct rules as the format holds: encoded (%u rules, the end's index %u)",
			   e.nr_rules, e.body ? rule_of(&e, n - 1) : 0);
		tableenc_free(&e);
		cfi_table_free(&t);
		make(&t, n + 1, three, 1);
		for (i = 0; i < n; i++)
			t.row[i] = rule_sp((int)i);
		test_cond("one more: not encoded",
			  tableenc_encode(&t, &e) == -1 && !e.body);
		cfi_table_free(&t);
	}
	memset(&t, 0, sizeof(t));
	test_cond("no rows: not encoded", tableenc_encode(&t, &e) == -1);
	return test_report();
}
