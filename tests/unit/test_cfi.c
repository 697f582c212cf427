// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * cfi_compile() on fixtures this test builds with the C compiler (PIE and
 * non-PIE, .eh_frame and compressed .debug_frame, an IBT PLT, Go if `go`
 * is there), on the system's libc, and on broken files.
 *
 * The expected rows come from the fixtures themselves: assembly with
 * hand-written CFI and labels where the rules change, a frameless -O2 leaf,
 * a C function with a frame pointer whose push and mov objdump finds, the
 * program's _start and its PLT.  Addresses become file offsets here through
 * the program headers, independently of cfi.c.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <elf.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "test.h"
#include "testutil.h"
#include "unwind/cfi.h"

#define LIBC_PATH	"/lib/x86_64-linux-gnu/libc.so.6"
#define PYTHON_PATH	"/usr/bin/python3.11"

static const char *cc;

static const char main_src[] =
	"#include <stdio.h>\n"
	"\n"
	"volatile int sink;\n"
	"int framed(int n);\n"
	"int asm_fp(int x);\n"
	"\n"
	"/* frameless at -O2: the CFA is sp + 8 throughout */\n"
	"__attribute__((noinline)) int leaf(int x)\n"
	"{\n"
	"	return x * 3 + sink;\n"
	"}\n"
	"\n"
	"int main(int argc, char **argv)\n"
	"{\n"
	"	(void)argv;\n"
	"	printf(\"%d\\n\", framed(argc + sink) + leaf(sink) + asm_fp(1));\n"
	"	return 0;\n"
	"}\n";

/* built with -fno-omit-frame-pointer: push %rbp; mov %rsp,%rbp */
static const char framed_src[] =
	"int leaf(int x);\n"
	"\n"
	"__attribute__((noinline)) int framed(int n)\n"
	"{\n"
	"	volatile int buf[n + 16];\n"
	"\n"
	"	for (int i = 0; i < n + 16; i++)\n"
	"		buf[i] = leaf(i);\n"
	"	return buf[n];\n"
	"}\n";

/* Hand-written CFI; each label is where a rule changes. */
static const char asm_src[] =
	"	.text\n"
	"	.globl	asm_fp\n"
	"	.type	asm_fp, @function\n"
	"asm_fp:\n"
	"	.cfi_startproc\n"
	"	pushq	%rbp\n"
	"asm_fp_pushed:\n"
	"	.cfi_def_cfa_offset 16\n"
	"	.cfi_offset %rbp, -16\n"
	"	movq	%rsp, %rbp\n"
	"asm_fp_framed:\n"
	"	.cfi_def_cfa_register %rbp\n"
	"	subq	$32, %rsp\n"
	"	call	leaf\n"
	"	leave\n"
	"asm_fp_left:\n"
	"	.cfi_def_cfa %rsp, 8\n"
	"	ret\n"
	"	.cfi_endproc\n"
	"	.size	asm_fp, .-asm_fp\n"
	"asm_gap:\n"			/* no FDE covers these bytes */
	"	.fill	16, 1, 0xcc\n"
	"asm_expr:\n"
	"	.cfi_startproc\n"
	"	nop\n"
	"asm_expr_in:\n"
	/* DW_CFA_def_cfa_expression: DW_OP_breg7 8; DW_OP_breg7 0; plus */
	"	.cfi_escape 0x0f, 0x05, 0x77, 0x08, 0x77, 0x00, 0x22\n"
	"	nop\n"
	"	ret\n"
	"	.cfi_endproc\n"
	"asm_gap2:\n"
	"	.fill	16, 1, 0xcc\n"
	"asm_sig:\n"
	"	.cfi_startproc\n"
	"	.cfi_signal_frame\n"
	"	nop\n"
	"	ret\n"
	"	.cfi_endproc\n"
	"asm_gap3:\n"
	"	.fill	16, 1, 0xcc\n"
	"asm_ra:\n"
	"	.cfi_startproc\n"
	"	nop\n"
	"asm_ra_in:\n"
	"	.cfi_offset %rip, -16\n"
	"	ret\n"
	"	.cfi_endproc\n"
	"asm_big:\n"
	"	.cfi_startproc\n"
	"	nop\n"
	"asm_big_in:\n"
	/* DW_CFA_def_cfa_offset 0x100000008: beyond s32 */
	"	.cfi_escape 0x0e, 0x88, 0x80, 0x80, 0x80, 0x10\n"
	"	ret\n"
	"	.cfi_endproc\n"
	"asm_fpfar:\n"
	"	.cfi_startproc\n"
	"	nop\n"
	"asm_fpfar_in:\n"
	"	.cfi_def_cfa_offset 40016\n"
	"	.cfi_offset %rbp, -40000\n"
	"	ret\n"
	"	.cfi_endproc\n"
	"asm_undef:\n"
	"	.cfi_startproc\n"
	"	.cfi_undefined %rip\n"
	"	nop\n"
	"	ret\n"
	"	.cfi_endproc\n"
	"asm_state:\n"
	"	.cfi_startproc\n"
	"	pushq	%rbx\n"
	"asm_state_pushed:\n"
	"	.cfi_adjust_cfa_offset 8\n"
	"	.cfi_remember_state\n"
	"	popq	%rbx\n"
	"asm_state_popped:\n"
	"	.cfi_adjust_cfa_offset -8\n"
	"	ret\n"
	"asm_state_restored:\n"
	"	.cfi_restore_state\n"
	"	popq	%rbx\n"
	"	ret\n"
	"	.cfi_endproc\n"
	"asm_deref:\n"			/* OpenSSL's realigned frames */
	"	.cfi_startproc\n"
	"	nop\n"
	"asm_deref_in:\n"
	/* DW_CFA_def_cfa_expression: DW_OP_breg7 24; DW_OP_deref; +8 */
	"	.cfi_escape 0x0f, 0x05, 0x77, 0x18, 0x06, 0x23, 0x08\n"
	"	.cfi_offset %rbp, -24\n"
	"	nop\n"
	"asm_deref_far:\n"
	/* the same, N = 40000: beyond the row's 16 bits */
	"	.cfi_escape 0x0f, 0x07, 0x77, 0xc0, 0xb8, 0x02, 0x06, 0x23, 0x08\n"
	"	ret\n"
	"	.cfi_endproc\n"
	"asm_drap:\n"			/* gcc's stack realignment */
	"	.cfi_startproc\n"
	"	nop\n"
	"asm_drap_r10:\n"
	"	.cfi_def_cfa %r10, 0\n"
	"	nop\n"
	"asm_drap_in:\n"
	/* DW_CFA_def_cfa_expression: DW_OP_breg6 -8; DW_OP_deref */
	"	.cfi_escape 0x0f, 0x03, 0x76, 0x78, 0x06\n"
	/* DW_CFA_expression: rbp at DW_OP_breg6 0 */
	"	.cfi_escape 0x10, 0x06, 0x02, 0x76, 0x00\n"
	"	nop\n"
	"asm_drap_xmm:\n"
	/* DW_CFA_def_cfa: xmm0 (17), 8: not a general register */
	"	.cfi_escape 0x0c, 0x11, 0x08\n"
	"	ret\n"
	"	.cfi_endproc\n"
	"asm_reg255:\n"
	"	.cfi_startproc\n"
	"	nop\n"
	"asm_reg255_in:\n"
	/* DW_CFA_undefined r255: the largest register number accepted */
	"	.cfi_escape 0x07, 0xff, 0x01\n"
	"	ret\n"
	"	.cfi_endproc\n"
	"	.section .note.GNU-stack,\"\",%progbits\n";

static const char go_src[] =
	"package main\n"
	"\n"
	"import \"fmt\"\n"
	"\n"
	"//go:noinline\n"
	"func leaf(x int) int { return x*3 + 1 }\n"
	"\n"
	"//go:noinline\n"
	"func framed(x int) int {\n"
	"	var a [64]int\n"
	"	for i := range a {\n"
	"		a[i] = leaf(x + i)\n"
	"	}\n"
	"	return a[x&63]\n"
	"}\n"
	"\n"
	"func main() { fmt.Println(framed(3)) }\n";

/* ---- helpers ---- */

static const char *write_file(const char *name, const char *text)
{
	const char *path = tmp_path(name);
	FILE *f = fopen(path, "w");

	if (!f || fputs(text, f) < 0 || fclose(f)) {
		perror(path);
		exit(1);
	}
	return path;
}

static int compile_path(const char *path, struct cfi_table *t, char *err,
			size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), r;

	if (fd < 0) {
		memset(t, 0, sizeof(*t));
		snprintf(err, len, "cannot open %s", path);
		return -1;
	}
	r = cfi_compile(fd, t, err, len);
	close(fd);
	return r;
}

static const struct cprof_urow none_row = { .cfa_base = CPROF_CFA_NONE };

/* What the tick would use at file offset off: the last row at or below. */
static const struct cprof_urow *row_at(const struct cfi_table *t,
				       uint64_t off)
{
	size_t lo = 0, hi = t->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->pc[mid] <= off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? &t->row[lo - 1] : &none_row;
}

static bool row_is(const struct cprof_urow *r, int base, int cfa_off,
		   int fp_rule, int fp_off)
{
	return r->cfa_base == base && r->cfa_off == cfa_off &&
	       r->fp_rule == fp_rule && r->fp_off == fp_off;
}

static const char *row_str(const struct cprof_urow *r)
{
	static char buf[4][64];
	static int next;
	char *b = buf[next++ % 4];

	snprintf(b, sizeof(buf[0]), "base %u cfa_off %d fp_rule %u fp_off %d",
		 r->cfa_base, r->cfa_off, r->fp_rule, r->fp_off);
	return b;
}

/* The format's invariants: what the module would check and rely on. */
static bool table_sane(const struct cfi_table *t)
{
	size_t i;

	if (!t->n || t->n > CPROF_UTABLE_ROWS_MAX || !t->pc || !t->row)
		return false;
	for (i = 0; i < t->n; i++) {
		const struct cprof_urow *r = &t->row[i];

		if ((i && t->pc[i] <= t->pc[i - 1]) ||
		    r->cfa_base > CPROF_CFA_MAX || r->fp_rule > CPROF_FP_MAX)
			return false;
		/* equal neighbours are merged */
		if (i && !memcmp(&t->row[i - 1], r, sizeof(*r)))
			return false;
	}
	return t->row[t->n - 1].cfa_base == CPROF_CFA_NONE;
}

static size_t count_base(const struct cfi_table *t, int base)
{
	size_t i, n = 0;

	for (i = 0; i < t->n; i++)
		n += t->row[i].cfa_base == base;
	return n;
}

static bool one_line(const char *err)
{
	return err[0] && !strchr(err, '\n');
}

/* An ELF file through libelf, for addresses, symbols and sections. */
struct elfinfo {
	int fd;
	Elf *elf;
};

static int elfinfo_open(struct elfinfo *e, const char *path)
{
	elf_version(EV_CURRENT);
	e->fd = open(path, O_RDONLY | O_CLOEXEC);
	e->elf = e->fd >= 0 ? elf_begin(e->fd, ELF_C_READ, NULL) : NULL;
	if (!e->elf) {
		if (e->fd >= 0)
			close(e->fd);
		return -1;
	}
	return 0;
}

static void elfinfo_close(struct elfinfo *e)
{
	elf_end(e->elf);
	close(e->fd);
}

/* File offset of vaddr in an executable PT_LOAD; UINT64_MAX if none. */
static uint64_t file_off(struct elfinfo *e, uint64_t vaddr)
{
	size_t n, i;

	if (elf_getphdrnum(e->elf, &n))
		return UINT64_MAX;
	for (i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(e->elf, (int)i, &ph) && ph.p_type == PT_LOAD &&
		    (ph.p_flags & PF_X) && vaddr >= ph.p_vaddr &&
		    vaddr < ph.p_vaddr + ph.p_filesz)
			return vaddr - ph.p_vaddr + ph.p_offset;
	}
	return UINT64_MAX;
}

static Elf_Scn *section(struct elfinfo *e, const char *name, GElf_Shdr *sh)
{
	Elf_Scn *scn = NULL;
	size_t strndx;

	if (elf_getshdrstrndx(e->elf, &strndx))
		return NULL;
	while ((scn = elf_nextscn(e->elf, scn))) {
		const char *s;

		if (gelf_getshdr(scn, sh) &&
		    (s = elf_strptr(e->elf, strndx, sh->sh_name)) &&
		    !strcmp(s, name))
			return scn;
	}
	return NULL;
}

/* Address (and size) of a .symtab symbol; 0 if not found. */
static uint64_t sym_addr(struct elfinfo *e, const char *name, uint64_t *size)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(e->elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		size_t i;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB ||
		    !sh.sh_entsize || !(d = elf_getdata(scn, NULL)))
			continue;
		for (i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym s;
			const char *n;

			if (gelf_getsym(d, (int)i, &s) &&
			    (n = elf_strptr(e->elf, sh.sh_link, s.st_name)) &&
			    !strcmp(n, name) && s.st_value) {
				if (size)
					*size = s.st_size;
				return s.st_value;
			}
		}
	}
	return 0;
}

/* File offset of a symbol plus delta; UINT64_MAX if not there. */
static uint64_t sym_off(struct elfinfo *e, const char *name, uint64_t delta)
{
	uint64_t a = sym_addr(e, name, NULL);

	return a ? file_off(e, a + delta) : UINT64_MAX;
}

/* Collapses blanks so objdump's column padding does not matter. */
static void squeeze(char *s)
{
	char *d = s, *start = s;
	bool blank = false;

	for (; *s; s++) {
		if (*s == ' ' || *s == '\t' || *s == '\n') {
			blank = true;
			continue;
		}
		if (blank && d != start)
			*d++ = ' ';
		blank = false;
		*d++ = *s;
	}
	*d = '\0';
}

/*
 * Address of the instruction insn ("push %rbp") in function fn and of the
 * instruction after it, from objdump; -1 if not found.
 */
static int insn_addr(const char *path, const char *fn, const char *insn,
		     uint64_t *at, uint64_t *next)
{
	char cmd[8192], line[512];
	bool found = false;
	FILE *p;

	snprintf(cmd, sizeof(cmd),
		 "objdump -d --no-show-raw-insn '%s' | "
		 "awk '/^[0-9a-f]+ <%s>:$/ { f = 1; next } f && /^$/ { exit } f'",
		 path, fn);
	p = popen(cmd, "r");
	if (!p)
		return -1;
	while (fgets(line, sizeof(line), p)) {
		unsigned long a;
		char *colon = strchr(line, ':');

		if (!colon || sscanf(line, " %lx:", &a) != 1)
			continue;
		if (found) {
			*next = a;
			pclose(p);
			return 0;
		}
		squeeze(colon + 1);
		if (!strcmp(colon + 1, insn)) {
			*at = a;
			found = true;
		}
	}
	pclose(p);
	return -1;
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* ---- fixtures built here ---- */

static void check_rule(const struct cfi_table *t, const char *label,
		       const char *what, uint64_t off, int base, int cfa_off,
		       int fp_rule, int fp_off)
{
	const struct cprof_urow *r = off == UINT64_MAX ? NULL : row_at(t, off);

	test_condf(r && row_is(r, base, cfa_off, fp_rule, fp_off),
		   "%s: %s (got %s)", label, what, r ? row_str(r) : "no offset");
}

/* The hand-written CFI of asm_src. */
static void check_asm(struct elfinfo *e, const struct cfi_table *t,
		      const char *label)
{
	uint64_t size = 0, fp = sym_addr(e, "asm_fp", &size);

	check_rule(t, label, "asm: entry is sp+8",
		   sym_off(e, "asm_fp", 0), CPROF_CFA_SP, 8, CPROF_FP_SAME, 0);
	check_rule(t, label, "asm: after push %rbp sp+16, rbp at cfa-16",
		   sym_off(e, "asm_fp_pushed", 0), CPROF_CFA_SP, 16,
		   CPROF_FP_AT, -16);
	check_rule(t, label, "asm: the byte before that is still sp+8",
		   sym_off(e, "asm_fp_pushed", 0) - 1, CPROF_CFA_SP, 8,
		   CPROF_FP_SAME, 0);
	check_rule(t, label, "asm: after mov %rsp,%rbp rbp+16",
		   sym_off(e, "asm_fp_framed", 0), CPROF_CFA_FP, 16,
		   CPROF_FP_AT, -16);
	check_rule(t, label, "asm: after leave sp+8, rbp rule kept",
		   sym_off(e, "asm_fp_left", 0), CPROF_CFA_SP, 8,
		   CPROF_FP_AT, -16);
	test_condf(size > 0 && fp, "%s: asm_fp has a size", label);
	check_rule(t, label, "asm: the bytes after the FDE have no information",
		   fp ? file_off(e, fp + size) : UINT64_MAX, CPROF_CFA_NONE, 0,
		   CPROF_FP_SAME, 0);
	check_rule(t, label, "asm: up to the next FDE",
		   sym_off(e, "asm_gap", 15), CPROF_CFA_NONE, 0,
		   CPROF_FP_SAME, 0);
	check_rule(t, label, "asm: CFA expression: sp+8 before it",
		   sym_off(e, "asm_expr", 0), CPROF_CFA_SP, 8, CPROF_FP_SAME, 0);
	check_rule(t, label, "asm: other CFA expressions stop",
		   sym_off(e, "asm_expr_in", 0), CPROF_CFA_STOP, 0,
		   CPROF_FP_SAME, 0);
	check_rule(t, label, "asm: CFA = *(sp + 24) + 8, rbp at cfa-24",
		   sym_off(e, "asm_deref_in", 0), CPROF_CFA_SP_DEREF,
		   CPROF_CFA_PAIR(24, 8), CPROF_FP_AT, -24);
	check_rule(t, label, "asm: *(sp + 40000) + 8 does not fit: stops",
		   sym_off(e, "asm_deref_far", 0), CPROF_CFA_STOP, 0,
		   CPROF_FP_SAME, 0);
	check_rule(t, label, "asm: DRAP prologue: CFA = r10 + 0",
		   sym_off(e, "asm_drap_r10", 0), CPROF_CFA_REG,
		   CPROF_CFA_PAIR(0, 10), CPROF_FP_SAME, 0);
	check_rule(t, label, "asm: DRAP body: CFA = *(rbp - 8), rbp at rbp",
		   sym_off(e, "asm_drap_in", 0), CPROF_CFA_FP_DEREF,
		   CPROF_CFA_PAIR(-8, 0), CPROF_FP_AT_FP, 0);
	check_rule(t, label, "asm: a CFA from xmm0 stops",
		   sym_off(e, "asm_drap_xmm", 0), CPROF_CFA_STOP, 0,
		   CPROF_FP_SAME, 0);
	/* asm_expr_in's 2 bytes, asm_deref_far's 1, asm_big_in's 1 */
	test_condf(t->stop_bytes[CFI_STOP_CFA_EXPR] == 4,
		   "%s: stops counted: other CFA expressions 4 bytes (got %llu)",
		   label, (unsigned long long)t->stop_bytes[CFI_STOP_CFA_EXPR]);
	test_condf(t->stop_bytes[CFI_STOP_CFA_REG] == 1 &&
		   t->stop_bytes[CFI_STOP_SIGNAL] == 2 &&
		   t->stop_bytes[CFI_STOP_RA] == 1,
		   "%s: stops counted: xmm0 1 byte, signal frame 2, return address 1 (got %llu, %llu, %llu)",
		   label, (unsigned long long)t->stop_bytes[CFI_STOP_CFA_REG],
		   (unsigned long long)t->stop_bytes[CFI_STOP_SIGNAL],
		   (unsigned long long)t->stop_bytes[CFI_STOP_RA]);
	check_rule(t, label, "asm: after the expression's FDE: none",
		   sym_off(e, "asm_gap2", 0), CPROF_CFA_NONE, 0,
		   CPROF_FP_SAME, 0);
	check_rule(t, label, "asm: a signal frame stops",
		   sym_off(e, "asm_sig", 0), CPROF_CFA_STOP, 0,
		   CPROF_FP_SAME, 0);
	check_rule(t, label, "asm: ra elsewhere than cfa-8: sp+8 before",
		   sym_off(e, "asm_ra", 0), CPROF_CFA_SP, 8, CPROF_FP_SAME, 0);
	check_rule(t, label, "asm: ra elsewhere than cfa-8 stops",
		   sym_off(e, "asm_ra_in", 0), CPROF_CFA_STOP, 0,
		   CPROF_FP_SAME, 0);
	check_rule(t, label, "asm: a CFA offset beyond s32 stops",
		   sym_off(e, "asm_big_in", 0), CPROF_CFA_STOP, 0,
		   CPROF_FP_SAME, 0);
	check_rule(t, label, "asm: an rbp offset beyond s16 is not kept",
		   sym_off(e, "asm_fpfar_in", 0), CPROF_CFA_SP, 40016,
		   CPROF_FP_SAME, 0);
	check_rule(t, label, "asm: undefined return address: end",
		   sym_off(e, "asm_undef", 0), CPROF_CFA_END, 0,
		   CPROF_FP_SAME, 0);
	check_rule(t, label, "asm: remember_state: pushed",
		   sym_off(e, "asm_state_pushed", 0), CPROF_CFA_SP, 16,
		   CPROF_FP_SAME, 0);
	check_rule(t, label, "asm: popped",
		   sym_off(e, "asm_state_popped", 0), CPROF_CFA_SP, 8,
		   CPROF_FP_SAME, 0);
	check_rule(t, label, "asm: restore_state: pushed again",
		   sym_off(e, "asm_state_restored", 0), CPROF_CFA_SP, 16,
		   CPROF_FP_SAME, 0);
	check_rule(t, label, "asm: register 255: run by libdw, sp+8",
		   sym_off(e, "asm_reg255", 0), CPROF_CFA_SP, 8,
		   CPROF_FP_SAME, 0);
	check_rule(t, label, "asm: register 255: sp+8 after it too",
		   sym_off(e, "asm_reg255_in", 0), CPROF_CFA_SP, 8,
		   CPROF_FP_SAME, 0);
}

/* The C functions: leaf frameless, framed with a frame pointer. */
static void check_c(struct elfinfo *e, const char *path,
		    const struct cfi_table *t, const char *label)
{
	uint64_t size = 0, leaf = sym_addr(e, "leaf", &size), i, push, mov,
		 after_push, after_mov;
	bool all_sp8 = leaf && size;

	for (i = 0; leaf && i < size; i++) {
		uint64_t off = file_off(e, leaf + i);

		if (off == UINT64_MAX ||
		    !row_is(row_at(t, off), CPROF_CFA_SP, 8, CPROF_FP_SAME, 0))
			all_sp8 = false;
	}
	test_condf(all_sp8, "%s: frameless leaf: sp+8 on each of its %llu bytes",
		   label, (unsigned long long)size);

	check_rule(t, label, "framed: entry is sp+8", sym_off(e, "framed", 0),
		   CPROF_CFA_SP, 8, CPROF_FP_SAME, 0);
	if (insn_addr(path, "framed", "push %rbp", &push, &after_push) ||
	    insn_addr(path, "framed", "mov %rsp,%rbp", &mov, &after_mov)) {
		test_condf(0, "%s: objdump finds framed's push and mov", label);
		return;
	}
	check_rule(t, label, "framed: at the push still sp+8",
		   file_off(e, push), CPROF_CFA_SP, 8, CPROF_FP_SAME, 0);
	check_rule(t, label, "framed: after push %rbp sp+16, rbp at cfa-16",
		   file_off(e, after_push), CPROF_CFA_SP, 16, CPROF_FP_AT, -16);
	check_rule(t, label, "framed: after mov %rsp,%rbp rbp+16",
		   file_off(e, after_mov), CPROF_CFA_FP, 16, CPROF_FP_AT, -16);
}

static void check_start_plt(struct elfinfo *e, const struct cfi_table *t,
			    const char *label)
{
	GElf_Ehdr eh;
	GElf_Shdr sh;

	check_rule(t, label, "_start (the entry point) is the outermost frame",
		   gelf_getehdr(e->elf, &eh) ? file_off(e, eh.e_entry)
					     : UINT64_MAX,
		   CPROF_CFA_END, 0, CPROF_FP_SAME, 0);
	if (!section(e, ".plt", &sh) || sh.sh_size < 32) {
		test_condf(0, "%s: has a .plt of two entries or more", label);
		return;
	}
	check_rule(t, label, "PLT0: sp+16", file_off(e, sh.sh_addr),
		   CPROF_CFA_SP, 16, CPROF_FP_SAME, 0);
	check_rule(t, label, "PLT0 after its push: sp+24",
		   file_off(e, sh.sh_addr + 6), CPROF_CFA_SP, 24,
		   CPROF_FP_SAME, 0);
	check_rule(t, label, "PLT entries: the PLT rule",
		   file_off(e, sh.sh_addr + 16), CPROF_CFA_PLT, 0,
		   CPROF_FP_SAME, 0);
	check_rule(t, label, "PLT entries: up to the end of .plt",
		   file_off(e, sh.sh_addr + sh.sh_size - 1), CPROF_CFA_PLT, 0,
		   CPROF_FP_SAME, 0);
}

static void check_print(const struct cfi_table *t, uint64_t leaf_off)
{
	char *buf = NULL, want[64];
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f) {
		test_cond("open_memstream", 0);
		return;
	}
	cfi_table_print(f, t);
	fclose(f);
	snprintf(want, sizeof(want), "\n%llx sp 8 same 0\n",
		 (unsigned long long)leaf_off);
	test_condf(buf && nr_lines(buf) == (int)t->n,
		   "cfi_table_print: one line a row (%d for %zu)", nr_lines(buf),
		   t->n);
	test_condf(buf && strstr(buf, want),
		   "cfi_table_print: leaf's row reads '%llx sp 8 same 0'",
		   (unsigned long long)leaf_off);
	test_cond("cfi_table_print: rbp rule 'at'",
		  buf && strstr(buf, " sp 16 at -16\n"));
	test_cond("cfi_table_print: base words",
		  buf && strstr(buf, " fp 16 at -16\n") &&
		  strstr(buf, " plt 0 same 0\n") &&
		  strstr(buf, " end 0 same 0\n") &&
		  strstr(buf, " stop 0 same 0\n") &&
		  strstr(buf, " none 0 same 0\n"));
	free(buf);
}

/* What the last run() said on stderr. */
static void print_err_txt(const char *what)
{
	char *e = slurp(tmp_path("err.txt"), NULL);

	printf("note: building %s failed:\n%s", what, e ? e : "");
	free(e);
}

static const char *build_fixture(const char *name, const char *flags)
{
	const char *exe = tmp_path(name);
	const char *fr_o = tmp_path("framed.o");

	if (run("%s -O2 %s -fcf-protection=none -fno-omit-frame-pointer -c -o '%s' '%s'",
		cc, flags, fr_o, tmp_path("framed.c")) ||
	    run("%s -O2 %s -fcf-protection=none -Wl,-z,lazy -o '%s' '%s' '%s' '%s'",
		cc, flags, exe, tmp_path("main.c"), tmp_path("asm.s"), fr_o)) {
		print_err_txt(name);
		return NULL;
	}
	return exe;
}

static void test_fixture(const char *label, const char *flags)
{
	const char *exe = build_fixture(label, flags);
	struct cfi_table t;
	struct elfinfo e;
	char err[256];
	int r;

	if (!exe) {
		test_condf(0, "%s: build the fixture", label);
		return;
	}
	r = compile_path(exe, &t, err, sizeof(err));
	test_condf(r == 0, "%s: compiles (%s)", label, r ? err : "ok");
	test_condf(r == 0 && !err[0], "%s: no error text on success", label);
	test_condf(table_sane(&t),
		   "%s: rows strictly increasing, merged, last is none", label);
	if (r || elfinfo_open(&e, exe)) {
		cfi_table_free(&t);
		return;
	}
	check_asm(&e, &t, label);
	check_c(&e, exe, &t, label);
	check_start_plt(&e, &t, label);
	if (!strcmp(label, "pie"))
		check_print(&t, sym_off(&e, "leaf", 0));
	elfinfo_close(&e);
	cfi_table_free(&t);
	cfi_table_free(&t);
	test_condf(!t.pc && !t.row && !t.n, "%s: freed twice, safely", label);
}

/*
 * .debug_frame only, compressed; and both sections (.eh_frame for crt's
 * _start, .debug_frame for the code compiled here).
 */
static void test_debug_frame(void)
{
	const char *both = tmp_path("dbg-both"), *only = tmp_path("dbg-only");
	const char *fr_o = tmp_path("framed-dbg.o");
	struct cfi_table t;
	struct elfinfo e;
	char err[256];
	int r;

	if (run("%s -O2 -g -fno-asynchronous-unwind-tables -fcf-protection=none -fno-omit-frame-pointer -c -o '%s' '%s'",
		cc, fr_o, tmp_path("framed.c")) ||
	    run("%s -O2 -g -fno-asynchronous-unwind-tables -fcf-protection=none -o '%s' '%s' '%s' '%s'",
		cc, both, tmp_path("main.c"), tmp_path("asm.s"), fr_o) ||
	    run("objcopy --compress-debug-sections=zlib-gabi -R .eh_frame -R .eh_frame_hdr '%s' '%s'",
		both, only)) {
		test_cond("build the .debug_frame fixtures", 0);
		return;
	}
	r = run("readelf -SW '%s' | grep -E '\\.debug_frame .* C '", only);
	test_cond("debug-only: .debug_frame is compressed, no .eh_frame",
		  r == 0 && run("readelf -SW '%s' | grep -q eh_frame", only) == 1);

	r = compile_path(only, &t, err, sizeof(err));
	test_condf(r == 0, "debug-only: compiles (%s)", r ? err : "ok");
	test_cond("debug-only: sane", r == 0 && table_sane(&t));
	if (r == 0 && elfinfo_open(&e, only) == 0) {
		uint64_t push, after_push, mov, after_mov;

		check_rule(&t, "debug-only", "leaf: sp+8", sym_off(&e, "leaf", 0),
			   CPROF_CFA_SP, 8, CPROF_FP_SAME, 0);
		if (insn_addr(only, "framed", "push %rbp", &push, &after_push) ||
		    insn_addr(only, "framed", "mov %rsp,%rbp", &mov,
			      &after_mov)) {
			test_cond("debug-only: objdump finds framed's push", 0);
		} else {
			check_rule(&t, "debug-only", "framed after push",
				   file_off(&e, after_push), CPROF_CFA_SP, 16,
				   CPROF_FP_AT, -16);
			check_rule(&t, "debug-only", "framed after mov",
				   file_off(&e, after_mov), CPROF_CFA_FP, 16,
				   CPROF_FP_AT, -16);
		}
		elfinfo_close(&e);
	}
	/* binutils' older compression names it .zdebug_frame: the same rows */
	if (r == 0 &&
	    !run("objcopy --compress-debug-sections=zlib-gnu -R .eh_frame -R .eh_frame_hdr '%s' '%s'",
		 both, tmp_path("dbg-gnu")) &&
	    !run("readelf -SW '%s' | grep -q '\\.zdebug_frame'", tmp_path("dbg-gnu"))) {
		struct cfi_table g;
		int rg = compile_path(tmp_path("dbg-gnu"), &g, err, sizeof(err));

		test_condf(rg == 0 && g.n == t.n &&
			   !memcmp(g.pc, t.pc, t.n * sizeof(*t.pc)) &&
			   !memcmp(g.row, t.row, t.n * sizeof(*t.row)),
			   ".zdebug_frame (zlib-gnu): the same %zu rows (%s)",
			   t.n, rg ? err : "ok");
		if (!rg)
			cfi_table_free(&g);
	} else {
		test_cond("build the .zdebug_frame fixture", 0);
	}
	cfi_table_free(&t);

	/* crt's _start in .eh_frame, the compiled code in .debug_frame */
	r = compile_path(both, &t, err, sizeof(err));
	test_condf(r == 0, "eh+debug: compiles (%s)", r ? err : "ok");
	if (r == 0 && elfinfo_open(&e, both) == 0) {
		GElf_Ehdr eh;

		test_cond("eh+debug: sane", table_sane(&t));
		check_rule(&t, "eh+debug", "leaf from .debug_frame",
			   sym_off(&e, "leaf", 0), CPROF_CFA_SP, 8,
			   CPROF_FP_SAME, 0);
		check_rule(&t, "eh+debug", "_start from .eh_frame",
			   gelf_getehdr(e.elf, &eh) ? file_off(&e, eh.e_entry)
						    : UINT64_MAX,
			   CPROF_CFA_END, 0, CPROF_FP_SAME, 0);
		elfinfo_close(&e);
	}
	cfi_table_free(&t);
}

/*
 * An IBT PLT (endbr64; push; jmp) tests (ip & 15) >= 9: the tick's PLT rule
 * says 11, so its entries get sp rows around the push.
 */
static void test_ibt_plt(void)
{
	const char *exe = tmp_path("ibt");
	struct cfi_table t;
	struct elfinfo e;
	GElf_Shdr sh;
	char err[256];
	uint64_t ent;
	int r;

	if (run("%s -O2 -fcf-protection=full -Wl,-z,ibtplt -Wl,-z,lazy -o '%s' '%s' '%s' '%s'",
		cc, exe, tmp_path("main.c"), tmp_path("asm.s"),
		tmp_path("framed.c"))) {
		printf("note: no IBT PLT fixture (the toolchain does not build one)\n");
		return;
	}
	if (run("readelf --debug-dump=frames '%s' | grep -q 'DW_OP_lit9; DW_OP_ge'",
		exe)) {
		printf("note: the IBT fixture's PLT is not described with DW_OP_lit9\n");
		return;
	}
	r = compile_path(exe, &t, err, sizeof(err));
	test_condf(r == 0 && table_sane(&t), "ibt: compiles (%s)",
		   r ? err : "ok");
	if (r == 0 && elfinfo_open(&e, exe) == 0) {
		if (section(&e, ".plt", &sh) && sh.sh_size >= 32) {
			ent = sh.sh_addr + 16;
			check_rule(&t, "ibt", "PLT entry start: sp+8",
				   file_off(&e, ent), CPROF_CFA_SP, 8,
				   CPROF_FP_SAME, 0);
			check_rule(&t, "ibt", "PLT entry before the push ends: sp+8",
				   file_off(&e, ent + 8), CPROF_CFA_SP, 8,
				   CPROF_FP_SAME, 0);
			check_rule(&t, "ibt", "PLT entry after the push: sp+16",
				   file_off(&e, ent + 9), CPROF_CFA_SP, 16,
				   CPROF_FP_SAME, 0);
			check_rule(&t, "ibt", "PLT entry's last byte: sp+16",
				   file_off(&e, ent + 15), CPROF_CFA_SP, 16,
				   CPROF_FP_SAME, 0);
			test_cond("ibt: no PLT rows", !count_base(&t, CPROF_CFA_PLT));
		} else {
			test_cond("ibt: has a .plt", 0);
		}
		elfinfo_close(&e);
	}
	cfi_table_free(&t);
}

/* Go keeps its CFI in .debug_frame only (compressed). */
static void test_go(void)
{
	const char *dir = getenv("TEST_TMPDIR") ?: "/tmp";
	const char *exe = tmp_path("gobin");
	uint64_t size = 0, framed, i, max = 0;
	char gocache[4096];
	struct cfi_table t;
	struct elfinfo e;
	bool all_sp = true;
	char err[256];
	int r;

	if (run("command -v go")) {
		printf("note: no go: the Go fixture is not built\n");
		return;
	}
	write_file("main.go", go_src);
	if (getenv("GOCACHE") && *getenv("GOCACHE"))
		snprintf(gocache, sizeof(gocache), "%s", getenv("GOCACHE"));
	else
		snprintf(gocache, sizeof(gocache), "%s/gocache", dir);
	/* a GOCACHE of the caller's spares rebuilding the standard library */
	if (run("cd '%s' && HOME='%s' GOCACHE='%s' GOPATH='%s/gopath' GO111MODULE=off GOFLAGS= GOTOOLCHAIN=local CGO_ENABLED=0 go build -o '%s' main.go",
		dir, dir, gocache, dir, exe)) {
		print_err_txt("the Go fixture");
		test_cond("go: build the Go fixture", 0);
		return;
	}
	test_cond("go: no .eh_frame",
		  run("readelf -SW '%s' | grep -q eh_frame", exe) == 1);
	r = compile_path(exe, &t, err, sizeof(err));
	test_condf(r == 0 && table_sane(&t), "go: compiles (%s)",
		   r ? err : "ok");
	test_condf(t.n > 1000, "go: more than 1000 rows (%zu)", t.n);
	if (r || elfinfo_open(&e, exe)) {
		cfi_table_free(&t);
		return;
	}
	check_rule(&t, "go", "main.leaf: sp+8", sym_off(&e, "main.leaf", 0),
		   CPROF_CFA_SP, 8, CPROF_FP_SAME, 0);
	check_rule(&t, "go", "main.framed's entry: sp+8",
		   sym_off(&e, "main.framed", 0), CPROF_CFA_SP, 8,
		   CPROF_FP_SAME, 0);
	framed = sym_addr(&e, "main.framed", &size);
	for (i = 0; framed && i < size; i++) {
		const struct cprof_urow *row = row_at(&t, file_off(&e, framed + i));

		if (row->cfa_base != CPROF_CFA_SP)
			all_sp = false;
		else if ((uint64_t)row->cfa_off > max)
			max = row->cfa_off;
	}
	test_condf(size && all_sp && max >= 8 + 64 * 8,
		   "go: main.framed is sp-based with its 512-byte array in the frame (max sp+%llu)",
		   (unsigned long long)max);
	elfinfo_close(&e);
	cfi_table_free(&t);
}

/*
 * The frame-pointer flag: a program built with frame pointers (its leaf
 * frameless) keeps the chain wherever it calls; built -O2 without them,
 * its caller pushes registers and calls without a frame.
 */
static void test_frame_pointer_flag(void)
{
	static const char src[] =
		"__attribute__((noinline)) int leaf(int x) { return x * 3 + 1; }\n"
		"__attribute__((noinline)) int mid(int x)\n"
		"{ int s = 0; for (int i = 0; i < x * 1000; i++) s += leaf(i) ^ s; return s + 1; }\n"
		"int main(int argc, char **argv) { (void)argv; return mid(argc) & 1; }\n";
	static const char *const flags[] = {
		"-fno-omit-frame-pointer", "-fomit-frame-pointer",
	};
	const char *c = tmp_path("fpflag.c"), *exe = tmp_path("fpflag");
	struct cfi_table t;
	char err[256];
	FILE *f = fopen(c, "w");
	int i;

	if (f) {
		fputs(src, f);
		fclose(f);
	}
	for (i = 0; i < 2; i++) {
		if (run("%s -O2 %s -fcf-protection=none -o '%s' '%s'", cc,
			flags[i], exe, c)) {
			print_err_txt("fpflag");
			test_condf(0, "fp flag %s: build", flags[i]);
			continue;
		}
		test_condf(compile_path(exe, &t, err, sizeof(err)) == 0 &&
			   t.frame_pointers == (i == 0),
			   "built -O2 %s: frame_pointers %d", flags[i], i == 0);
		cfi_table_free(&t);
	}
}

static void test_system(void)
{
	struct cfi_table t;
	char err[256];
	double t0;
	int r;

	if (access(LIBC_PATH, R_OK)) {
		printf("note: no %s\n", LIBC_PATH);
	} else {
		t0 = now_ms();
		r = compile_path(LIBC_PATH, &t, err, sizeof(err));
		printf("note: libc.so.6: %zu rows, %zu bytes, %.1f ms\n", t.n,
		       sizeof(struct cprof_utable) + t.n * (sizeof(*t.pc) +
							    sizeof(*t.row)),
		       now_ms() - t0);
		test_condf(r == 0, "libc: compiles (%s)", r ? err : "ok");
		test_condf(t.n > 1000, "libc: more than 1000 rows (%zu)", t.n);
		test_cond("libc: sane", table_sane(&t));
		test_cond("libc: has the PLT rule, sp and fp rows",
			  count_base(&t, CPROF_CFA_PLT) >= 1 &&
			  count_base(&t, CPROF_CFA_SP) > 1000 &&
			  count_base(&t, CPROF_CFA_FP) >= 1);
		test_cond("libc: not all frame pointers (-O2)",
			  !t.frame_pointers);
		cfi_table_free(&t);
	}
	if (!access(PYTHON_PATH, R_OK)) {
		t0 = now_ms();
		r = compile_path(PYTHON_PATH, &t, err, sizeof(err));
		printf("note: python3.11: %zu rows, %zu bytes, %.1f ms\n", t.n,
		       sizeof(struct cprof_utable) + t.n * (sizeof(*t.pc) +
							    sizeof(*t.row)),
		       now_ms() - t0);
		test_condf(r == 0 && table_sane(&t), "python3.11: compiles (%s)",
			   r ? err : "ok");
		cfi_table_free(&t);
	}
}

/* ---- broken files ---- */

static int write_all(const char *path, const void *buf, size_t len)
{
	FILE *f = fopen(path, "wb");
	int ok = f && fwrite(buf, 1, len, f) == len;

	if (f && fclose(f))
		ok = 0;
	return ok ? 0 : -1;
}

/* cfi_compile() of these bytes: -1, an error line and an empty table. */
static void expect_refused(const char *what, const void *buf, size_t len,
			   const char *want)
{
	const char *path = tmp_path("broken");
	struct cfi_table t;
	char err[256];
	int r;

	if (write_all(path, buf, len)) {
		test_condf(0, "%s: write the file", what);
		return;
	}
	memset(&t, 0x5a, sizeof(t));
	strcpy(err, "");
	r = compile_path(path, &t, err, sizeof(err));
	test_condf(r == -1 && one_line(err) && !t.n && !t.pc && !t.row &&
		   (!want || strstr(err, want)),
		   "%s: refused (%s)", what, err);
	cfi_table_free(&t);
}

static bool sane_or_refused(const char *path, char *err, size_t errlen)
{
	struct cfi_table t;
	bool ok;
	int r;

	r = compile_path(path, &t, err, errlen);
	ok = r == 0 ? table_sane(&t) && !err[0]
		    : r == -1 && one_line(err) && !t.n && !t.pc;
	cfi_table_free(&t);
	return ok;
}

static void test_broken(void)
{
	static const char garbage[] = "\177ELF\2\1\1\0garbage, garbage, garbage";
	const char *exe = tmp_path("pie");
	uint64_t state = 0x9e3779b97f4a7c15ULL;
	Elf64_Ehdr *eh;
	Elf64_Phdr *ph;
	GElf_Shdr sh;
	struct elfinfo e;
	size_t len, i, eh_off = 0, eh_size = 0, hdr_off = 0, hdr_size = 0;
	char *img, *copy, err[256];
	int bad = 0, ok = 0, refused = 0, iter;

	expect_refused("empty file", "", 0, NULL);
	expect_refused("text file", "hello, world\n", 13, "not an ELF");
	expect_refused("ELF magic and garbage", garbage, sizeof(garbage) - 1,
		       NULL);
	{
		struct cfi_table t;
		int r = cfi_compile(-1, &t, err, sizeof(err));

		test_condf(r == -1 && one_line(err) && !t.n,
			   "bad descriptor: refused (%s)", err);
		r = cfi_compile(-1, &t, NULL, 0);
		test_cond("no error buffer: refused all the same", r == -1);
	}
	if (run("%s -O2 -c -o '%s' '%s'", cc, tmp_path("obj.o"),
		tmp_path("main.c")) == 0) {
		char *o;
		size_t olen;

		o = slurp(tmp_path("obj.o"), &olen);
		if (o)
			expect_refused("relocatable object", o, olen,
				       "not an executable");
		free(o);
	}

	img = slurp(exe, &len);
	if (!img || len < 4096 || elfinfo_open(&e, exe)) {
		test_cond("read the pie fixture", 0);
		free(img);
		return;
	}
	if (section(&e, ".eh_frame", &sh)) {
		eh_off = sh.sh_offset;
		eh_size = sh.sh_size;
	}
	if (section(&e, ".eh_frame_hdr", &sh)) {
		hdr_off = sh.sh_offset;
		hdr_size = sh.sh_size;
	}
	elfinfo_close(&e);
	test_cond("pie: has .eh_frame and .eh_frame_hdr",
		  eh_size >= 64 && hdr_size >= 16 && eh_off + eh_size <= len);
	if (eh_size < 64 || eh_off + eh_size > len) {
		free(img);
		return;
	}
	copy = malloc(len);
	if (!copy)
		abort();

	/* truncated copies: the section headers are at the end */
	expect_refused("truncated to 64 bytes", img, 64, NULL);
	expect_refused("truncated to 1000 bytes", img, 1000, "truncated");
	expect_refused("truncated to half", img, len / 2, "truncated");
	expect_refused("truncated by 100 bytes", img, len - 100, "truncated");

	memcpy(copy, img, len);
	copy[EI_CLASS] = ELFCLASS32;
	expect_refused("ELFCLASS32", copy, len, NULL);
	memcpy(copy, img, len);
	eh = (Elf64_Ehdr *)copy;
	eh->e_machine = EM_AARCH64;
	expect_refused("aarch64", copy, len, "x86-64");

	memcpy(copy, img, len);
	memset(copy + eh_off, 0xff, eh_size);
	expect_refused(".eh_frame overwritten with 0xff", copy, len,
		       ".eh_frame");
	memcpy(copy, img, len);
	memset(copy + eh_off, 0, eh_size);
	expect_refused(".eh_frame zeroed", copy, len, "no FDEs");

	/* an executable segment beyond the 4 GiB a u32 offset reaches */
	memcpy(copy, img, len);
	eh = (Elf64_Ehdr *)copy;
	for (i = 0; i < eh->e_phnum && eh->e_phoff + (i + 1) * sizeof(*ph) <= len;
	     i++) {
		ph = (Elf64_Phdr *)(copy + eh->e_phoff + i * sizeof(*ph));
		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X))
			ph->p_offset += 1ULL << 32;
	}
	expect_refused("executable segment at 4 GiB", copy, len, "4 GiB");

	if (run("objcopy -R .eh_frame -R .eh_frame_hdr '%s' '%s'", exe,
		tmp_path("nocfi")) == 0) {
		char *n;
		size_t nlen;

		n = slurp(tmp_path("nocfi"), &nlen);
		if (n)
			expect_refused("no CFI sections", n, nlen, "no .eh_frame");
		free(n);
	}

	/*
	 * Random damage to .eh_frame, .eh_frame_hdr and the headers: either a
	 * sane table or a clean refusal, never a crash (the ASan build checks
	 * memory too).
	 */
	for (iter = 0; iter < 400; iter++) {
		int flips = 1 + iter % 8, k;

		memcpy(copy, img, len);
		for (k = 0; k < flips; k++) {
			uint64_t r, where;

			state = state * 6364136223846793005ULL +
				1442695040888963407ULL;
			r = state >> 17;
			switch (iter % 4) {
			case 0:
			case 1:
				where = eh_off + r % eh_size;
				break;
			case 2:
				where = hdr_size ? hdr_off + r % hdr_size
						 : eh_off + r % eh_size;
				break;
			default:
				where = r % 4096;	/* headers */
				break;
			}
			copy[where] ^= (char)(1 + (r >> 32) % 255);
		}
		if (write_all(tmp_path("fuzzed"), copy, len)) {
			bad++;
			break;
		}
		if (!sane_or_refused(tmp_path("fuzzed"), err, sizeof(err))) {
			if (bad++ < 3)
				printf("note: damaged copy %d: neither sane nor refused (%s)\n",
				       iter, err);
		} else if (err[0]) {
			refused++;
		} else {
			ok++;
		}
	}
	test_condf(!bad,
		   "400 damaged copies: each a sane table or a clean refusal (%d sane, %d refused)",
		   ok, refused);
	free(copy);
	free(img);
}

/*
 * CFI libdw must not run: it sizes its rules by the largest register named
 * (r268435440: gigabytes) and copies them per remember_state.  Such an
 * FDE refuses the whole file (libdw finds the FDE for an address itself,
 * so one FDE's check would not do), and so does a LEB128 number longer
 * than libdw reads.
 */
static void test_unsafe(void)
{
	static const struct {
		const char *what, *cfi;
	} cases[] = {
		{ "register 268435440", ".cfi_escape 0x07, 0xf0, 0xff, 0xff, 0x7f" },
		{ "remember_state 65 deep",
		  ".rept 65\n\t.cfi_remember_state\n\t.endr" },
		{ "a 10-byte LEB128",
		  ".cfi_escape 0x2e, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00" },
	};
	const char *src = tmp_path("unsafe.s"), *so = tmp_path("unsafe.so");
	char text[1024], what[64];
	size_t i, len;
	char *img;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		/* the bad FDE, then a clean one */
		snprintf(text, sizeof(text),
			 "\t.text\nf:\n\t.cfi_startproc\n\tnop\n\t%s\n\tnop\n\t.cfi_endproc\n"
			 "g:\n\t.cfi_startproc\n\tnop\n\tnop\n\tnop\n\tret\n\t.cfi_endproc\n"
			 "\t.section .note.GNU-stack,\"\",%%progbits\n",
			 cases[i].cfi);
		write_file("unsafe.s", text);
		snprintf(what, sizeof(what), "unsafe: %s", cases[i].what);
		if (run("%s -shared -nostdlib -o '%s' '%s'", cc, so, src) ||
		    !(img = slurp(so, &len))) {
			test_condf(0, "%s: build the fixture", what);
			continue;
		}
		expect_refused(what, img, len,
			       "cannot be decoded, or names a register past 255");
		free(img);
	}
}

/*
 * libdw looks FDEs up through .eh_frame_hdr: an entry pointing one byte
 * into an FDE (where a crafted file could hide one cfi.c never checked)
 * refuses the file.
 */
static void test_eh_hdr(void)
{
	const char *src = tmp_path("hdr.s"), *so = tmp_path("hdr.so");
	struct cfi_table t;
	struct elfinfo e;
	char err[256], *img = NULL;
	GElf_Shdr sh = { 0 };
	size_t len = 0;
	int32_t rel;
	int r;

	write_file("hdr.s", "\t.text\nf:\n\t.cfi_startproc\n\tnop\n\tret\n\t.cfi_endproc\n"
		   "\t.section .note.GNU-stack,\"\",%progbits\n");
	if (!run("%s -shared -nostdlib -Wl,--eh-frame-hdr -o '%s' '%s'", cc,
		 so, src) && !elfinfo_open(&e, so)) {
		if (!section(&e, ".eh_frame_hdr", &sh))
			sh.sh_size = 0;
		elfinfo_close(&e);
		img = slurp(so, &len);
	}
	if (!img || sh.sh_size < 20 || sh.sh_offset + 20 > len) {
		test_cond("eh_frame_hdr: build the fixture", 0);
		free(img);
		return;
	}
	r = compile_path(so, &t, err, sizeof(err));
	test_condf(r == 0, "eh_frame_hdr: the table as ld wrote it (%s)",
		   r ? err : "ok");
	cfi_table_free(&t);
	/* entry 0's FDE pointer, one byte further */
	memcpy(&rel, img + sh.sh_offset + 16, 4);
	rel++;
	memcpy(img + sh.sh_offset + 16, &rel, 4);
	expect_refused("eh_frame_hdr: entry 0 moved one byte into its FDE",
		       img, len, ".eh_frame_hdr: entry 0 names no FDE");
	free(img);
}

int main(void)
{
	cc = getenv("CC");
	if (!cc || !*cc)
		cc = "cc";
	if (run("command -v %s && command -v objdump && command -v objcopy && command -v readelf",
		cc))
		test_skip("needs a C compiler and binutils");

	write_file("main.c", main_src);
	write_file("framed.c", framed_src);
	write_file("asm.s", asm_src);

	test_fixture("pie", "-fPIE -pie");
	test_fixture("non-pie", "-fno-pie -no-pie");
	test_debug_frame();
	test_ibt_plt();
	test_go();
	test_frame_pointer_flag();
	test_system();
	test_broken();
	test_unsafe();
	test_eh_hdr();
	return test_report();
}
