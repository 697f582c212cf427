// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * ustack - walk a copy of a user stack with the module's rules.  See
 * ustack.h.
 *
 * Each step is the module's own, compiled from the same header
 * (cprof/unwind_step.h): the frame's row in its file's table, indexed as
 * the module indexes it, the CFA its rule gives, the return address below
 * the CFA, the caller's rbp maybe saved beside it; where no table covers
 * the code, the frame-pointer chain.  Every word is read from the copy,
 * never beyond it: a walk that needs a word the copy does not hold stops
 * there.  The caller's stack pointer must lie above the frame's, so every
 * walk ends.
 */
#include <stdlib.h>
#include <string.h>

#include "unwind/ustack.h"

/* As the module: no user code below mmap_min_addr or above user space. */
#define USER_MIN	0x10000ull
#define USER_MAX	0x00007ffffffff000ull

/* DWARF's x86-64 register numbers used here. */
#define DWARF_RBP	6
#define DWARF_RSP	7

/* The word at addr, if the copy holds it. */
static bool read_word(const struct cprof_ustack *u, uint64_t addr,
		      uint64_t *val)
{
	uint64_t base = u->regs[DWARF_RSP];

	if (addr < base || addr - base > u->size ||
	    u->size - (addr - base) < sizeof(*val))
		return false;
	memcpy(val, u->data + (addr - base), sizeof(*val));
	return true;
}

/*
 * The step's reads (cprof/unwind_step.h), from the copy: a word it does not
 * hold ends the step as a bad frame, past_end set if the word lies past
 * the copy's end (a longer copy might have held it).
 */
struct cprof_ustep_env {
	const struct cprof_ustack *u;
	const __u64 *regs;	/* the interrupted frame's; NULL: none */
	bool past_end;
};

#define CPROF_USTEP_READER

static inline bool cprof_ustep_read(struct cprof_ustep_env *env,
				    uint64_t addr, uint64_t *val)
{
	if (read_word(env->u, addr, val))
		return true;
	env->past_end = addr >= env->u->regs[DWARF_RSP];
	return false;
}

static inline bool cprof_ustep_read2(struct cprof_ustep_env *env,
				     uint64_t a, uint64_t *va,
				     uint64_t b, uint64_t *vb)
{
	return cprof_ustep_read(env, a, va) && cprof_ustep_read(env, b, vb);
}

static inline bool cprof_ustep_reg(struct cprof_ustep_env *env, int reg,
				   uint64_t *val)
{
	if (!env->regs)
		return false;
	*val = env->regs[reg];
	return true;
}

#include "cprof/unwind_step.h"

struct ustack_table {
	struct cprof_uindex ix;
	bool frame_pointers;	/* CPROF_UTABLE_FP */
	struct cprof_uent *ent;
	__u32 *page;
};

void ustack_table_free(struct ustack_table *t)
{
	if (!t)
		return;
	free(t->ent);
	free(t->page);
	free(t);
}

struct ustack_table *ustack_table_new(const void *table, size_t len)
{
	const struct cprof_utable *h = table;
	const struct cprof_urow *rule;
	const uint16_t *rule_of;
	const uint32_t *pc;
	struct ustack_table *t;
	uint32_t i, p = 0;
	size_t py;

	if (!h || len < sizeof(*h) || h->size != sizeof(*h) || !h->nr_rows ||
	    h->nr_rows > CPROF_UTABLE_ROWS_MAX || !h->nr_rules ||
	    h->nr_rules > CPROF_UTABLE_RULES_MAX)
		return NULL;
	/* a CPython interpreter's layout comes before the rules */
	py = h->flags & CPROF_UTABLE_PY ? sizeof(struct cprof_upy) : 0;
	if (len != sizeof(*h) + py + (size_t)h->nr_rules * sizeof(*rule) +
		   (size_t)h->nr_rows * (sizeof(*pc) + sizeof(*rule_of)))
		return NULL;
	rule = (const void *)((const char *)(h + 1) + py);
	pc = (const void *)(rule + h->nr_rules);
	rule_of = (const void *)(pc + h->nr_rows);
	/* as the module takes a table: see kmod/utable.c */
	for (i = 0; i < h->nr_rules; i++)
		if (rule[i].cfa_base > CPROF_CFA_MAX ||
		    rule[i].fp_rule > CPROF_FP_MAX)
			return NULL;
	for (i = 0; i < h->nr_rows; i++)
		if ((i && pc[i] <= pc[i - 1]) || rule_of[i] >= h->nr_rules)
			return NULL;
	if (rule[rule_of[h->nr_rows - 1]].cfa_base != CPROF_CFA_NONE)
		return NULL;
	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->ix.nr = h->nr_rows;
	t->ix.npages = cprof_uindex_pages(pc[h->nr_rows - 1]);
	t->ix.first = pc[0];
	t->frame_pointers = h->flags & CPROF_UTABLE_FP;
	t->ent = malloc(h->nr_rows * sizeof(*t->ent));
	t->page = malloc(t->ix.npages * sizeof(*t->page));
	if (!t->ent || !t->page) {
		ustack_table_free(t);
		return NULL;
	}
	for (i = 0; i < h->nr_rows; i++)
		cprof_uindex_put(t->ent, t->page, t->ix.npages, &p, i, pc[i],
				 rule_of[i]);
	cprof_uindex_end(t->page, t->ix.npages, &p, h->nr_rows);
	t->ix.ent = t->ent;
	t->ix.page = t->page;
	/* the table's own rules: it outlives the index (ustack.h) */
	t->ix.rule = rule;
	return t;
}

bool ustack_table_row(const struct ustack_table *t, uint64_t off,
		      struct cprof_urow *row)
{
	return cprof_uindex_row(&t->ix, off, row);
}

enum cprof_step ustack_table_step(const struct ustack_table *t, uint64_t off,
				  const struct cprof_ustack *u,
				  const __u64 *regs,
				  struct cprof_ustep_frame *f, bool *past_end)
{
	struct cprof_ustep_env env = { .u = u, .regs = regs };
	struct cprof_urow row;
	enum cprof_step step = CPROF_STEP_NONE;

	if (cprof_uindex_row(&t->ix, off, &row))
		step = cprof_ustep_row(&row, f, &env);
	*past_end = env.past_end;
	return step;
}

enum cprof_step ustack_fp_step(const struct cprof_ustack *u,
			       struct cprof_ustep_frame *f, bool *past_end)
{
	struct cprof_ustep_env env = { .u = u };
	enum cprof_step step = cprof_ustep_fp(f, &env);

	*past_end = env.past_end;
	return step;
}

/*
 * The tables a walk met, indexed once each: a stack's frames are in a few
 * files, its callers' return addresses in the same few.
 */
#define WALK_TABLES	4

struct walk_tables {
	struct {
		const void *table;	/* ustack_code's: the key */
		size_t len;
		struct ustack_table *t;	/* NULL: not a table */
	} slot[WALK_TABLES];
	unsigned int next;
};

static const struct ustack_table *walk_table(struct walk_tables *w,
					     const void *table, size_t len)
{
	unsigned int i;

	for (i = 0; i < WALK_TABLES; i++)
		if (w->slot[i].table == table && w->slot[i].len == len)
			return w->slot[i].t;
	i = w->next++ % WALK_TABLES;
	ustack_table_free(w->slot[i].t);
	w->slot[i].table = table;
	w->slot[i].len = len;
	w->slot[i].t = ustack_table_new(table, len);
	return w->slot[i].t;
}

enum step { STEP_OK, STEP_END, STEP_BAD, STEP_NONE, STEP_SHORT,
	     STEP_NO_TABLE };

/* A shared step's end as the walk counts it. */
static enum step step_of(enum cprof_step step, bool past_end)
{
	switch (step) {
	case CPROF_STEP_OK:
		return STEP_OK;
	case CPROF_STEP_END:
		return STEP_END;
	case CPROF_STEP_NONE:
		return STEP_NONE;
	default:
		return past_end ? STEP_SHORT : STEP_BAD;
	}
}

/* One step by the table; regs: the interrupted frame's, or NULL. */
static enum step table_step(const struct cprof_ustack *u,
			    struct cprof_ustep_frame *f, bool exact,
			    const __u64 *regs, ustack_code_fn code, void *arg,
			    struct walk_tables *w)
{
	uint64_t at = exact ? f->ip : f->ip - 1;
	struct ustack_code c = { 0 };
	const struct ustack_table *t;
	enum cprof_step step;
	bool past_end;

	if (!code(arg, at, &c) || at < c.start || at >= c.end)
		return STEP_NONE;
	if (c.elsewhere)
		return STEP_NO_TABLE;
	if (!c.table)
		return STEP_NONE;
	t = walk_table(w, c.table, c.len);
	if (!t || (!exact && t->frame_pointers))
		return STEP_NONE;
	step = ustack_table_step(t, at - c.start + c.pgoff, u, regs, f,
				 &past_end);
	return step_of(step, past_end);
}

enum ustack_end ustack_walk(const struct cprof_ustack *u, uint64_t ip,
			    bool exact, ustack_code_fn code, void *arg,
			    uint64_t *ips, int max, int *n)
{
	struct cprof_ustep_frame f = {
		.ip = ip, .sp = u->regs[DWARF_RSP], .fp = u->regs[DWARF_RBP],
		.base = u->regs[DWARF_RSP],
	};
	const __u64 *regs = u->rec.flags & CPROF_USTACK_REGS ? u->regs :
								 NULL;
	struct walk_tables w = { 0 };
	enum ustack_end end;
	enum step step;
	bool past_end;
	unsigned int i;

	*n = 0;
	ips[(*n)++] = ip;
	for (;;) {
		step = table_step(u, &f, exact, regs, code, arg, &w);
		if (step == STEP_NONE)
			step = step_of(ustack_fp_step(u, &f, &past_end),
				       past_end);
		exact = false;
		regs = NULL;
		if (step == STEP_END || (step == STEP_OK && !f.ip)) {
			end = USTACK_COMPLETE;
			break;
		}
		if (step == STEP_SHORT) {
			end = USTACK_SHORT;
			break;
		}
		if (step == STEP_NO_TABLE) {
			end = USTACK_NO_TABLE;
			break;
		}
		if (step == STEP_BAD || f.ip < USER_MIN || f.ip >= USER_MAX) {
			end = USTACK_STOPPED;
			break;
		}
		if (*n == max) {
			end = USTACK_DEPTH;
			break;
		}
		ips[(*n)++] = f.ip;
	}
	for (i = 0; i < WALK_TABLES; i++)
		ustack_table_free(w.slot[i].t);
	return end;
}
