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
 * never beyond it nor in its holes (pages not in memory at the tick, read
 * as zeros): a walk that needs a word the copy does not hold stops
 * there.  The caller's stack pointer must lie above the frame's, so every
 * walk ends.
 */
#include <stdlib.h>
#include <string.h>

#include "unwind/tableenc.h"
#include "unwind/ustack.h"

/* As the module: no user code below mmap_min_addr or above user space. */
#define USER_MIN	0x10000ull
#define USER_MAX	0x00007ffffffff000ull

/* DWARF's x86-64 register numbers used here. */
#define DWARF_RBP	6
#define DWARF_RSP	7

/* Is the byte at off in data[] in one of the copy's holes? */
static bool in_hole(const struct cprof_ustack *u, uint64_t base, uint64_t off)
{
	uint64_t page = (base % CPROF_USTACK_PAGE + off) / CPROF_USTACK_PAGE;

	return page < sizeof(u->holes) * 8 && (u->holes >> page & 1);
}

/* The word at addr, if the copy holds it. */
static bool read_word(const struct cprof_ustack *u, uint64_t addr,
		      uint64_t *val)
{
	uint64_t base = u->regs[DWARF_RSP], off = addr - base;

	if (addr < base || off > u->size || u->size - off < sizeof(*val))
		return false;
	if (u->holes && (in_hole(u, base, off) ||
			 in_hole(u, base, off + sizeof(*val) - 1)))
		return false;
	memcpy(val, u->data + off, sizeof(*val));
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

/* An index, then its rows (struct cprof_uent) and pages (__u32). */
struct ustack_table {
	struct cprof_uindex ix;
	bool frame_pointers;	/* CPROF_UTABLE_FP */
};

void ustack_table_free(struct ustack_table *t)
{
	free(t);
}

struct ustack_table *ustack_table_new(const void *table, size_t len)
{
	const struct cprof_utable *h = table;
	const struct cprof_urow *rule;
	const uint16_t *rule_of;
	const uint32_t *pc;
	struct ustack_table *t;
	struct cprof_uent *ent;
	size_t py;

	if (!h || len < sizeof(*h) || h->size != sizeof(*h))
		return NULL;
	/* a CPython interpreter's layout comes before the rules */
	py = h->flags & CPROF_UTABLE_PY ? sizeof(struct cprof_upy) : 0;
	if (len < sizeof(*h) + py ||
	    !tableenc_check((const char *)(h + 1) + py, len - sizeof(*h) - py,
			    h->nr_rows, h->nr_rules))
		return NULL;
	rule = (const void *)((const char *)(h + 1) + py);
	pc = (const void *)(rule + h->nr_rules);
	rule_of = (const void *)(pc + h->nr_rows);
	t = malloc(sizeof(*t) + h->nr_rows * sizeof(*ent) +
		   cprof_uindex_pages(pc[h->nr_rows - 1]) * sizeof(__u32));
	if (!t)
		return NULL;
	ent = (void *)(t + 1);
	/* the table's own rules: it outlives the index (ustack.h) */
	cprof_uindex_fill(&t->ix, ent, (void *)(ent + h->nr_rows), rule, pc,
			  rule_of, h->nr_rows);
	t->frame_pointers = h->flags & CPROF_UTABLE_FP;
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
			    const __u64 *regs, ustack_code_fn code, void *arg)
{
	uint64_t at = exact ? f->ip : f->ip - 1;
	struct ustack_code c = { 0 };
	enum cprof_step step;
	bool past_end;

	if (!code(arg, at, &c) || at < c.start || at >= c.end)
		return STEP_NONE;
	if (c.elsewhere)
		return STEP_NO_TABLE;
	if (!c.table || (!exact && c.table->frame_pointers))
		return STEP_NONE;
	step = ustack_table_step(c.table, at - c.start + c.pgoff, u, regs, f,
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
	enum cprof_step fp_step;
	enum step step;
	bool past_end;

	*n = 0;
	ips[(*n)++] = ip;
	for (;;) {
		step = table_step(u, &f, exact, regs, code, arg);
		if (step == STEP_NONE) {
			fp_step = ustack_fp_step(u, &f, &past_end);
			step = step_of(fp_step, past_end);
		}
		exact = false;
		regs = NULL;
		if (step == STEP_END || (step == STEP_OK && !f.ip))
			return USTACK_COMPLETE;
		if (step == STEP_SHORT)
			return USTACK_SHORT;
		if (step == STEP_NO_TABLE)
			return USTACK_NO_TABLE;
		if (step == STEP_BAD || f.ip < USER_MIN || f.ip >= USER_MAX)
			return USTACK_STOPPED;
		if (*n == max)
			return USTACK_DEPTH;
		ips[(*n)++] = f.ip;
	}
}
