// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Call frame information compiled into unwind rows for the module.
 *
 * The module walks user stacks at each tick, in interrupt context, also
 * through code built without frame pointers.  It does not interpret DWARF
 * there: CFI is a stateful bytecode (remember/restore state, expressions,
 * pointer encodings, two section formats) read from files anyone may write.
 * Userland does that work once per file instead.  libdw executes the CFI;
 * this unit reduces the rules at each address to a fixed-size row (the CFA
 * is sp or rbp plus an offset, the word at sp or rbp plus an offset plus
 * another (a realigned stack), another register plus an offset (the
 * interrupted frame only), or the PLT rule; the return address is at
 * CFA - 8; the caller's rbp is unchanged, or saved at CFA or rbp plus an
 * offset) keyed
 * by file offset, which is what a frame's address turns into through
 * /proc/PID/maps.  The tick binary-searches the last row at or below a
 * frame's offset and applies it with a few loads.
 *
 * The steps:
 *  - the executable PT_LOAD segments: only code in them gets rows, and they
 *    turn addresses into file offsets;
 *  - the FDEs of .eh_frame and of .debug_frame (Go has only the latter;
 *    where both describe an address, the one starting first wins, .eh_frame
 *    on a tie), listed with dwarf_next_cfi() and a small decoder of each
 *    FDE's address range;
 *  - for each FDE, libdw's rules at its first address, which also say up
 *    to where they hold (dwarf_cfi_addrframe(), dwarf_frame_info()); then
 *    at that address, and so on to the FDE's end;
 *  - each rule set becomes a row: what the tick cannot follow (a CFA
 *    from another register or by another expression, a return address
 *    not at CFA - 8, a signal frame, an FDE libdw cannot execute) becomes
 *    CPROF_CFA_STOP (the tick tries the frame-pointer chain there, as
 *    where no table is, rather than a rule that guesses), its code
 *    counted by reason (struct cfi_table's stop_bytes); an undefined
 *    return address (_start) CPROF_CFA_END; addresses no FDE covers
 *    CPROF_CFA_NONE (the tick walks frame pointers there);
 *  - equal neighbours merge, and addresses become file offsets.
 *
 * The PLT: ld describes lazy PLT entries (16 bytes each: jmp *GOT; push n;
 * jmp PLT0) with one expression, CFA = rsp + 8, + 8 once the push ran,
 * i.e. if (rip & 15) >= 11.  That becomes CPROF_CFA_PLT.  IBT PLTs (endbr64
 * first) test >= 9 instead; the tick knows only 11, so those entries get
 * two CPROF_CFA_SP rows each, before and after the push.
 *
 * libdw re-executes an FDE from its start for every row, so an FDE of n
 * bytes and r rows costs about n * r.  Budgets on that product bound the
 * time a hostile file can take: past one for an FDE, the rest of the FDE
 * is STOP; past one for the file, the file is refused.  libdw also sizes
 * its rule sets by the largest register number an instruction names, and
 * copies one for each remember_state: a register number of 2^28 costs it
 * gigabytes.  libdw finds the FDE for an address itself, so a check of
 * the FDE asked about is not enough: cfiscan.c decodes every CIE and FDE
 * of the section first, and refuses the file if one is not as compilers
 * and linkers emit them.
 *
 * Two files: cfiscan.c reads the ELF file (segments, sections) and lists
 * the FDEs, checking each; this one turns libdw's rules into rows and
 * rows into file offsets.  cfi_ctx.h holds the state they share.
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <gelf.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "unwind/cfi.h"
#include "unwind/cfi_ctx.h"
#include "lib/elfbound.h"

#define REG_RBP		6
#define REG_RSP		7
#define REG_LAST_GP	15		/* r15: the last of rax ... r15 */
#define REG_RA		16
#define PLT_THRESHOLD	11		/* the (ip & 15) >= 11 of CPROF_CFA_PLT */
/* FDE bytes libdw executes, summed over rows: some 3 GB a second */
#define FDE_WORK_MAX	(1ULL << 30)	/* one FDE: the rest of it is STOP */
#define WORK_MAX	(1ULL << 32)	/* the file: refused */
#define ROW_WORK	64		/* per row: lookup, CIE instructions */
#define RAW_ROWS_MAX	((size_t)CPROF_UTABLE_ROWS_MAX + 2 * MAX_SEGS)

static const struct cprof_urow none_row = { .cfa_base = CPROF_CFA_NONE };
static const struct cprof_urow stop_row = { .cfa_base = CPROF_CFA_STOP };

int cfi_fail(struct ctx *c, const char *fmt, ...)
{
	va_list ap;
	char *p;

	if (!c->err || !c->errlen)
		return -1;
	va_start(ap, fmt);
	vsnprintf(c->err, c->errlen, fmt, ap);
	va_end(ap);
	for (p = c->err; *p; p++)
		if (*p == '\n' || *p == '\r')
			*p = ' ';
	return -1;
}

static bool same_row(const struct cprof_urow *a, const struct cprof_urow *b)
{
	return a->cfa_base == b->cfa_base && a->fp_rule == b->fp_rule &&
	       a->fp_off == b->fp_off && a->cfa_off == b->cfa_off;
}

/*
 * Appends (pc, r) to a step function: pc is at or after the last row's; at
 * the same pc the new row replaces the last; a row equal to the one before
 * it is not added.
 */
static int push_row(struct ctx *c, struct rows *rs, uint64_t pc,
		    const struct cprof_urow *r)
{
	if (rs->n) {
		struct vrow *last = &rs->v[rs->n - 1];

		if (pc < last->pc)
			return cfi_fail(c, "internal error: rows out of order");
		if (pc == last->pc) {
			last->r = *r;
			if (rs->n >= 2 && same_row(&rs->v[rs->n - 2].r, r))
				rs->n--;
			return 0;
		}
		if (same_row(&last->r, r))
			return 0;
	}
	if (rs->n >= RAW_ROWS_MAX)
		return cfi_fail(c, "too many unwind rows (more than %u)",
				CPROF_UTABLE_ROWS_MAX);
	if (rs->n == rs->cap) {
		size_t cap = rs->cap ? rs->cap * 2 : 1024;

		if (cap > RAW_ROWS_MAX)
			cap = RAW_ROWS_MAX;
		struct vrow *v = reallocarray(rs->v, cap, sizeof(*v));

		if (!v)
			return cfi_fail(c, "out of memory");
		rs->v = v;
		rs->cap = cap;
	}
	rs->v[rs->n].pc = pc;
	rs->v[rs->n].r = *r;
	rs->n++;
	return 0;
}

/* ---- rows ---- */

static bool fits(int64_t v, int64_t min, int64_t max)
{
	return v >= min && v <= max;
}

/*
 * The PLT expression: DW_OP_breg7 8; DW_OP_breg16 0; DW_OP_lit15;
 * DW_OP_and; DW_OP_lit<K>; DW_OP_ge; DW_OP_lit3; DW_OP_shl; DW_OP_plus,
 * i.e. rsp + 8 + ((rip & 15) >= K) * 8.  K, or -1 for anything else.
 */
static int plt_threshold(const Dwarf_Op *ops, size_t n)
{
	if (n != 9 ||
	    ops[0].atom != DW_OP_breg7 || ops[0].number != 8 ||
	    ops[1].atom != DW_OP_breg16 || ops[1].number != 0 ||
	    ops[2].atom != DW_OP_lit15 || ops[3].atom != DW_OP_and ||
	    ops[4].atom < DW_OP_lit0 || ops[4].atom > DW_OP_lit31 ||
	    ops[5].atom != DW_OP_ge || ops[6].atom != DW_OP_lit3 ||
	    ops[7].atom != DW_OP_shl || ops[8].atom != DW_OP_plus)
		return -1;
	return ops[4].atom - DW_OP_lit0;
}

/* Register saved at CFA + *off (DW_CFA_offset and kin)? */
static bool saved_at_cfa(Dwarf_Frame *fr, int reg, int64_t *off)
{
	Dwarf_Op mem[3], *ops;
	size_t n;

	if (dwarf_frame_register(fr, reg, mem, &ops, &n) != 0 || !ops)
		return false;
	if (n == 1 && ops[0].atom == DW_OP_call_frame_cfa) {
		*off = 0;
		return true;
	}
	if (n == 2 && ops[0].atom == DW_OP_call_frame_cfa &&
	    ops[1].atom == DW_OP_plus_uconst) {
		*off = (int64_t)ops[1].number;
		return true;
	}
	return false;
}

/* Return address undefined: the outermost frame. */
static bool ra_undefined(Dwarf_Frame *fr)
{
	Dwarf_Op mem[3], *ops;
	size_t n;

	return dwarf_frame_register(fr, REG_RA, mem, &ops, &n) == 0 &&
	       n == 0 && ops != NULL;
}

/*
 * Register reg saved at rbp + *off (DW_CFA_expression reg: DW_OP_breg6
 * off, as gcc describes registers in a function that realigns the stack)?
 * libdw gives the expression after a DW_OP_call_frame_cfa (DWARF pushes
 * the CFA first), which DW_OP_breg6 does not use.
 */
static bool saved_at_rbp(Dwarf_Frame *fr, int reg, int64_t *off)
{
	Dwarf_Op mem[3], *ops;
	size_t n;

	if (dwarf_frame_register(fr, reg, mem, &ops, &n) != 0 || !ops)
		return false;
	if (n == 2 && ops[0].atom == DW_OP_call_frame_cfa) {
		ops++;
		n--;
	}
	if (n != 1 || ops[0].atom != DW_OP_breg6)
		return false;
	*off = (int64_t)ops[0].number;
	return true;
}

/* The register a DW_OP_breg<N> or DW_OP_bregx names, or -1. */
static int breg(const Dwarf_Op *op)
{
	if (op->atom >= DW_OP_breg0 && op->atom <= DW_OP_breg31)
		return op->atom - DW_OP_breg0;
	if (op->atom == DW_OP_bregx && op->number <= INT32_MAX)
		return (int)op->number;
	return -1;
}

/* A DW_OP_breg<N>'s or DW_OP_bregx's offset. */
static int64_t breg_off(const Dwarf_Op *op)
{
	return (int64_t)(op->atom == DW_OP_bregx ? op->number2 : op->number);
}

/*
 * The CFA of the rules as a row's cfa_base and offset, or the reason the
 * tick cannot follow it (*why):
 *  - sp or rbp plus an offset;
 *  - the word at sp or rbp plus N, plus M: a function that realigned its
 *    stack saved the CFA there (gcc's DRAP: DW_OP_breg6 -8; DW_OP_deref;
 *    OpenSSL's perlasm: DW_OP_breg7 N; DW_OP_deref; DW_OP_plus_uconst M);
 *  - another general register plus an offset (prologues that realign
 *    the stack, gcc's r10; assembly that keeps the entry sp in rax or
 *    r11), which the tick follows in the interrupted frame only;
 *  - ld's PLT expression (*plt: its threshold);
 * anything else stops the walk.
 */
static bool cfa_rule(const Dwarf_Op *ops, size_t n, struct cprof_urow *r,
		     int64_t *off, int *plt, enum cfi_stop *why)
{
	int reg = n ? breg(&ops[0]) : -1;
	int64_t m = 0;

	*why = CFI_STOP_CFA_EXPR;
	if (n == 1 && (reg == REG_RSP || reg == REG_RBP)) {
		r->cfa_base = reg == REG_RSP ? CPROF_CFA_SP : CPROF_CFA_FP;
		*off = breg_off(&ops[0]);
		return true;
	}
	if (n == 1 && reg >= 0) {
		*why = CFI_STOP_CFA_REG;
		if (reg > REG_LAST_GP ||
		    !fits(breg_off(&ops[0]), INT16_MIN, INT16_MAX))
			return false;
		r->cfa_base = CPROF_CFA_REG;
		*off = CPROF_CFA_PAIR(breg_off(&ops[0]), reg);
		return true;
	}
	if ((*plt = plt_threshold(ops, n)) >= 0) {
		r->cfa_base = CPROF_CFA_PLT;
		*off = 0;
		return true;
	}
	if ((n == 2 || n == 3) && (reg == REG_RSP || reg == REG_RBP) &&
	    ops[1].atom == DW_OP_deref) {
		if (n == 3 && ops[2].atom != DW_OP_plus_uconst)
			return false;
		if (n == 3 && ops[2].number > INT16_MAX)
			return false;
		if (n == 3)
			m = (int64_t)ops[2].number;
		if (!fits(breg_off(&ops[0]), INT16_MIN, INT16_MAX))
			return false;
		r->cfa_base = reg == REG_RSP ? CPROF_CFA_SP_DEREF :
					       CPROF_CFA_FP_DEREF;
		*off = CPROF_CFA_PAIR(breg_off(&ops[0]), m);
		return true;
	}
	return false;
}

/*
 * The row for the rules of fr; *why says what made it CPROF_CFA_STOP.
 * *plt is the PLT expression's threshold if the CFA is that expression
 * (the row is then CPROF_CFA_PLT), else -1.
 */
static void classify(Dwarf_Frame *fr, bool signal, struct cprof_urow *r,
		     int *plt, enum cfi_stop *why)
{
	Dwarf_Op *ops;
	int64_t off;
	size_t n;

	*plt = -1;
	*r = stop_row;
	*why = CFI_STOP_SIGNAL;
	if (signal)
		return;
	if (ra_undefined(fr)) {
		r->cfa_base = CPROF_CFA_END;
		return;
	}
	*why = CFI_STOP_RA;
	if (!saved_at_cfa(fr, REG_RA, &off) || off != -8)
		return;
	*why = CFI_STOP_LIBDW;
	if (dwarf_frame_cfa(fr, &ops, &n) != 0 || !ops)
		return;
	if (!cfa_rule(ops, n, r, &off, plt, why) ||
	    !fits(off, INT32_MIN, INT32_MAX)) {
		*r = stop_row;
		*plt = -1;
		return;
	}
	r->cfa_off = (int32_t)off;
	if (saved_at_cfa(fr, REG_RBP, &off) && fits(off, INT16_MIN, INT16_MAX)) {
		r->fp_rule = CPROF_FP_AT;
		r->fp_off = (int16_t)off;
	} else if (saved_at_rbp(fr, REG_RBP, &off) &&
		   fits(off, INT16_MIN, INT16_MAX)) {
		r->fp_rule = CPROF_FP_AT_FP;
		r->fp_off = (int16_t)off;
	}
}

/*
 * A PLT whose expression tests (ip & 15) >= k for a k other than the
 * tick's: rows sp + 8 and sp + 16 around the push of each 16-byte entry.
 */
static int push_plt_rows(struct ctx *c, uint64_t pc, uint64_t end, int k,
			 const struct cprof_urow *tmpl)
{
	struct cprof_urow r = *tmpl;

	r.cfa_base = CPROF_CFA_SP;
	if (k == 0 || k > 15) {
		r.cfa_off = k == 0 ? 16 : 8;
		return push_row(c, &c->rows, pc, &r);
	}
	while (pc < end) {
		bool pushed = (pc & 15) >= (uint64_t)k;
		uint64_t next = pushed ? (pc | 15) + 1 : (pc & ~15ULL) + k;

		r.cfa_off = pushed ? 16 : 8;
		if (push_row(c, &c->rows, pc, &r))
			return -1;
		if (next <= pc)
			break;		/* wrapped at the top of the space */
		pc = next;
	}
	return 0;
}

/* Rows for [pc, f->hi): libdw's rules, up to where each set holds. */
/*
 * Does a function with these rules keep the frame-pointer chain intact
 * where it calls?  Yes if it sets up a frame (CFA = rbp + 16, the caller's
 * rbp at CFA - 16); if it is a PLT (in a .plt section, or with the PLT
 * rule: it jumps) or outermost (_start: the chain ends there); if its CFA
 * stays sp + 8 and its code holds no byte that may start a call (gcc calls
 * a local function it knows needs no aligned stack without a push or a
 * sub: sp + 8 alone does not make a leaf).  Any other function may call
 * with rbp holding anything.
 */
struct fde_kind {
	bool frame, other;
};

static void fde_kind_add(struct fde_kind *k, const struct cprof_urow *r)
{
	if (r->cfa_base == CPROF_CFA_FP && r->cfa_off == 16 &&
	    r->fp_rule == CPROF_FP_AT && r->fp_off == -16)
		k->frame = true;
	else if (r->cfa_base == CPROF_CFA_PLT || r->cfa_base == CPROF_CFA_END)
		k->frame = true;	/* never a caller with a frame to find */
	else if (!(r->cfa_base == CPROF_CFA_SP && r->cfa_off == 8))
		k->other = true;
}

/*
 * May the code at [lo, hi) hold a call?  Any 0xe8 byte (call rel32) or
 * 0xff with a ModRM of /2 (call r/m) counts: never a wrong no.
 */
static bool may_call(struct ctx *c, uint64_t lo, uint64_t hi)
{
	const uint8_t *b;
	Elf_Data *d;
	size_t j;
	int i;

	for (i = 0; i < c->nseg; i++) {
		const struct seg *sg = &c->seg[i];

		if (lo < sg->vaddr || hi > sg->end || hi <= lo)
			continue;
		d = elf_getdata_rawchunk(c->elf, sg->offset + (lo - sg->vaddr),
					 hi - lo, ELF_T_BYTE);
		if (!d || !d->d_buf)
			return true;
		b = d->d_buf;
		for (j = 0; j < d->d_size; j++)
			if (b[j] == 0xe8 || (b[j] == 0xff && j + 1 < d->d_size &&
					     (b[j + 1] & 0x38) == 0x10))
				return true;
		return false;
	}
	return true;
}

/* PLT entries jump, they never call. */
static bool in_plt(const struct ctx *c, uint64_t pc)
{
	int i;

	for (i = 0; i < c->nplt; i++)
		if (pc >= c->plt_lo[i] && pc < c->plt_hi[i])
			return true;
	return false;
}

static int fde_rows(struct ctx *c, const struct fde *f, uint64_t pc)
{
	struct fde_kind kind = { .frame = in_plt(c, pc) };
	uint64_t work = 0, lo = pc;
	int ret = 0;

	while (pc < f->hi) {
		Dwarf_Addr start, end;
		Dwarf_Frame *fr = NULL;
		struct cprof_urow r;
		bool signal = false;
		enum cfi_stop why;
		int plt;

		work += f->cost + ROW_WORK;
		c->work += f->cost + ROW_WORK;
		if (c->work > WORK_MAX)
			return cfi_fail(c, "call frame information too complex (libdw would execute over %llu bytes of it)",
					WORK_MAX);
		if (work > FDE_WORK_MAX) {	/* a huge FDE: give up on it */
			kind.other = true;
			c->stop_bytes[CFI_STOP_LIBDW] += f->hi - pc;
			ret = push_row(c, &c->rows, pc, &stop_row);
			break;
		}
		if (dwarf_cfi_addrframe(c->cfi[f->src], pc, &fr) != 0 ||
		    dwarf_frame_info(fr, &start, &end, &signal) < 0 ||
		    start > pc || end <= pc) {
			/* libdw cannot say: the tick must not guess */
			free(fr);
			kind.other = true;
			c->stop_bytes[CFI_STOP_LIBDW] += f->hi - pc;
			ret = push_row(c, &c->rows, pc, &stop_row);
			break;
		}
		classify(fr, signal, &r, &plt, &why);
		free(fr);
		if (end > f->hi)
			end = f->hi;
		if (r.cfa_base == CPROF_CFA_STOP)
			c->stop_bytes[why] += end - pc;
		if (plt >= 0 && plt != PLT_THRESHOLD) {
			kind.frame = true;	/* an IBT PLT: jumps only */
			if (push_plt_rows(c, pc, end, plt, &r))
				return -1;
		} else if (push_row(c, &c->rows, pc, &r)) {
			return -1;
		}
		fde_kind_add(&kind, &r);
		pc = end;
	}
	if (!kind.frame && !c->not_fp &&
	    (kind.other || may_call(c, lo, f->hi)))
		c->not_fp = true;
	return ret;
}

static int fde_cmp(const void *a, const void *b)
{
	const struct fde *x = a, *y = b;

	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	if (x->src != y->src)
		return x->src - y->src;
	return x->hi < y->hi ? 1 : x->hi > y->hi ? -1 : 0;
}

/* The rows by address: each FDE's, NONE in the gaps and after the last. */
static int build_rows(struct ctx *c)
{
	uint64_t covered = 0;
	bool any = false;
	size_t i;

	if (c->nfde)
		qsort(c->fde, c->nfde, sizeof(*c->fde), fde_cmp);
	for (i = 0; i < c->nfde; i++) {
		const struct fde *f = &c->fde[i];
		uint64_t pc = f->lo;

		if (any && pc < covered)
			pc = covered;	/* overlaps the one before: clipped */
		if (pc >= f->hi)
			continue;
		if (any && pc > covered &&
		    push_row(c, &c->rows, covered, &none_row))
			return -1;
		if (fde_rows(c, f, pc))
			return -1;
		covered = f->hi;
		any = true;
	}
	if (any && push_row(c, &c->rows, covered, &none_row))
		return -1;
	return 0;
}

/* ---- file offsets ---- */

static int to_offsets(struct ctx *c, struct cfi_table *t)
{
	const struct rows *in = &c->rows;
	struct rows out = { 0 };
	size_t i, n, k;
	int s, ret = -1;

	for (s = 0; s < c->nseg; s++) {
		const struct seg *sg = &c->seg[s];
		size_t lo = 0, hi = in->n;

		if (out.n && sg->offset < out.v[out.n - 1].pc) {
			cfi_fail(c, "executable segments overlap in the file");
			goto out;
		}
		/* the row in effect at the segment's start */
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;

			if (in->v[mid].pc <= sg->vaddr)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (push_row(c, &out, sg->offset,
			     lo ? &in->v[lo - 1].r : &none_row))
			goto out;
		for (i = lo; i < in->n && in->v[i].pc < sg->end; i++)
			if (push_row(c, &out, in->v[i].pc - sg->vaddr + sg->offset,
				     &in->v[i].r))
				goto out;
		if (push_row(c, &out, sg->end - sg->vaddr + sg->offset,
			     &none_row))
			goto out;
	}
	/* no leading NONE rows: before the first row is NONE too */
	for (k = 0; k < out.n && out.v[k].r.cfa_base == CPROF_CFA_NONE; k++)
		;
	n = out.n - k;
	if (!n) {
		cfi_fail(c, "no call frame information for executable code");
		goto out;
	}
	if (n > CPROF_UTABLE_ROWS_MAX) {
		cfi_fail(c, "too many unwind rows (%zu, at most %u)", n,
			 CPROF_UTABLE_ROWS_MAX);
		goto out;
	}
	t->pc = calloc(n, sizeof(*t->pc));
	t->row = calloc(n, sizeof(*t->row));
	if (!t->pc || !t->row) {
		cfi_table_free(t);
		cfi_fail(c, "out of memory");
		goto out;
	}
	for (i = 0; i < n; i++) {
		t->pc[i] = (uint32_t)out.v[k + i].pc;
		t->row[i] = out.v[k + i].r;
	}
	t->n = n;
	t->frame_pointers = !c->not_fp;
	ret = 0;
out:
	free(out.v);
	return ret;
}

/* ---- the whole ---- */

static int check_elf(struct ctx *c, int fd)
{
	struct stat st;
	GElf_Ehdr eh;

	if (elf_kind(c->elf) != ELF_K_ELF)
		return cfi_fail(c, "not an ELF file");
	c->ident = (const unsigned char *)elf_getident(c->elf, NULL);
	if (!c->ident || c->ident[EI_CLASS] != ELFCLASS64 ||
	    c->ident[EI_DATA] != ELFDATA2LSB)
		return cfi_fail(c, "not a 64-bit little-endian ELF file");
	if (!gelf_getehdr(c->elf, &eh))
		return cfi_fail(c, "cannot read the ELF header: %s",
				elf_errmsg(-1));
	if (eh.e_machine != EM_X86_64)
		return cfi_fail(c, "not an x86-64 ELF file (machine %u)",
				eh.e_machine);
	if (eh.e_type != ET_EXEC && eh.e_type != ET_DYN)
		return cfi_fail(c, "not an executable or shared object (ELF type %u)",
				eh.e_type);
	if (fstat(fd, &st))
		return cfi_fail(c, "cannot stat the file");
	c->fsize = st.st_size;
	/* libelf would show a truncated file as one without sections */
	if (eh.e_shoff &&
	    (eh.e_shoff > (uint64_t)st.st_size ||
	     (uint64_t)eh.e_shnum * eh.e_shentsize >
	     (uint64_t)st.st_size - eh.e_shoff))
		return cfi_fail(c, "truncated file (the section headers are past its end)");
	return 0;
}

static int compile(struct ctx *c, int fd, struct cfi_table *t)
{
	Elf_Scn *scn[NR_SRC];
	size_t found[NR_SRC] = { 0 };
	uint64_t headers;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return cfi_fail(c, "libelf: %s", elf_errmsg(-1));
	/* libelf would set up every one (elfbound.h) */
	headers = elfbound_headers(fd);
	if (headers > ELFBOUND_HEADERS_MAX)
		return cfi_fail(c, "it claims %llu section or program headers, more than %llu",
				(unsigned long long)headers,
				ELFBOUND_HEADERS_MAX);
	/*
	 * Read, not mapped: a file truncated while it is read is then a
	 * read error, not SIGBUS.
	 */
	c->elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!c->elf)
		return cfi_fail(c, "cannot read the file as ELF: %s",
				elf_errmsg(-1));
	if (check_elf(c, fd) || cfi_scan_segments(c) || cfi_scan_sections(c, scn))
		return -1;
	if (!scn[SRC_EH] && !scn[SRC_DEBUG])
		return cfi_fail(c, "no .eh_frame or .debug_frame section");

	if (scn[SRC_EH]) {
		if (cfi_scan_fdes(c, scn[SRC_EH], SRC_EH, &found[SRC_EH]))
			return -1;
		if (found[SRC_EH]) {
			if (cfi_scan_eh_hdr(c, scn[SRC_EH]))
				return -1;
			c->cfi[SRC_EH] = dwarf_getcfi_elf(c->elf);
			if (!c->cfi[SRC_EH])
				return cfi_fail(c, "libdw cannot read .eh_frame: %s",
						dwarf_errmsg(-1));
		}
	}
	/* libdw would decompress every debug section (elfbound.h) */
	if (scn[SRC_DEBUG])
		c->inflated = elfbound_inflated(fd);
	if (scn[SRC_DEBUG] && c->inflated > ELFBOUND_INFLATE_MAX) {
		if (!found[SRC_EH])
			return cfi_fail(c, "its compressed sections decompress to %llu MiB, more than %llu MiB",
					(unsigned long long)(c->inflated >> 20),
					ELFBOUND_INFLATE_MAX >> 20);
		scn[SRC_DEBUG] = NULL;	/* .eh_frame will do */
	}
	if (scn[SRC_DEBUG]) {
		size_t before = c->nfde;

		/* decompresses the debug sections, .debug_frame included */
		c->dw = dwarf_begin_elf(c->elf, DWARF_C_READ, NULL);
		if (c->dw)
			c->cfi[SRC_DEBUG] = dwarf_getcfi(c->dw);
		if (!c->cfi[SRC_DEBUG]) {
			if (!found[SRC_EH])
				return cfi_fail(c, "libdw cannot read .debug_frame: %s",
						dwarf_errmsg(-1));
		} else if (cfi_scan_fdes(c, scn[SRC_DEBUG], SRC_DEBUG,
					&found[SRC_DEBUG])) {
			if (!found[SRC_EH])
				return -1;
			c->nfde = before;	/* .eh_frame will do */
		}
	}
	if (!found[SRC_EH] && !found[SRC_DEBUG])
		return cfi_fail(c, "no FDEs in %s%s%s",
				scn[SRC_EH] ? ".eh_frame" : "",
				scn[SRC_EH] && scn[SRC_DEBUG] ? " or " : "",
				scn[SRC_DEBUG] ? ".debug_frame" : "");
	if (build_rows(c))
		return -1;
	return to_offsets(c, t);
}

int cfi_compile(int fd, struct cfi_table *t, char *err, size_t errlen)
{
	struct ctx c = { .err = err, .errlen = errlen };
	int ret;

	memset(t, 0, sizeof(*t));
	c.stop_bytes = t->stop_bytes;
	if (err && errlen)
		err[0] = '\0';
	ret = compile(&c, fd, t);
	if (ret)
		cfi_table_free(t);
	else if (err && errlen)
		err[0] = '\0';	/* a .debug_frame given up for .eh_frame */
	if (c.cfi[SRC_EH])
		dwarf_cfi_end(c.cfi[SRC_EH]);
	if (c.dw)
		dwarf_end(c.dw);	/* owns c.cfi[SRC_DEBUG] */
	if (c.elf)
		elf_end(c.elf);
	free(c.fde);
	free(c.eh_off);
	free(c.rows.v);
	return ret;
}

void cfi_table_free(struct cfi_table *t)
{
	if (!t)
		return;
	free(t->pc);
	free(t->row);
	t->pc = NULL;
	t->row = NULL;
	t->n = 0;
}

const char *cfi_stop_name(enum cfi_stop why)
{
	static const char *const names[CFI_STOP_NR] = {
		[CFI_STOP_SIGNAL] = "signal frame",
		[CFI_STOP_RA] = "return address not at CFA - 8",
		[CFI_STOP_CFA_REG] = "CFA from another register",
		[CFI_STOP_CFA_EXPR] = "other CFA expression",
		[CFI_STOP_LIBDW] = "rules libdw could not give",
	};

	return (unsigned int)why < CFI_STOP_NR ? names[why] : "?";
}

static const char *base_name(unsigned int b)
{
	static const char *const names[] = {
		[CPROF_CFA_NONE] = "none", [CPROF_CFA_SP] = "sp",
		[CPROF_CFA_FP] = "fp", [CPROF_CFA_PLT] = "plt",
		[CPROF_CFA_END] = "end", [CPROF_CFA_STOP] = "stop",
		[CPROF_CFA_SP_DEREF] = "*sp", [CPROF_CFA_FP_DEREF] = "*fp",
		[CPROF_CFA_REG] = "reg",
	};

	return b <= CPROF_CFA_MAX ? names[b] : "?";
}

static const char *fp_rule_name(unsigned int r)
{
	static const char *const names[] = {
		[CPROF_FP_SAME] = "same", [CPROF_FP_AT] = "at",
		[CPROF_FP_AT_FP] = "atfp",
	};

	return r <= CPROF_FP_MAX ? names[r] : "?";
}

void cfi_table_print(FILE *f, const struct cfi_table *t)
{
	const struct cprof_urow *r;
	size_t i;

	for (i = 0; i < t->n; i++) {
		r = &t->row[i];
		if (r->cfa_base == CPROF_CFA_SP_DEREF ||
		    r->cfa_base == CPROF_CFA_FP_DEREF ||
		    r->cfa_base == CPROF_CFA_REG)
			fprintf(f, "%x %s %d+%d %s %d\n", (unsigned int)t->pc[i],
				base_name(r->cfa_base),
				CPROF_CFA_LO(r->cfa_off),
				CPROF_CFA_HI(r->cfa_off),
				fp_rule_name(r->fp_rule), (int)r->fp_off);
		else
			fprintf(f, "%x %s %d %s %d\n", (unsigned int)t->pc[i],
				base_name(r->cfa_base), (int)r->cfa_off,
				fp_rule_name(r->fp_rule), (int)r->fp_off);
	}
}
