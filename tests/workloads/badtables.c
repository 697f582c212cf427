// SPDX-License-Identifier: GPL-2.0
/*
 * badtables: hostile unwind tables for /proc/cprof/unwind (k_utables).
 *
 *   badtables reject UNWIND_FILE
 *	writes malformed tables, each of which the module must refuse with
 *	the errno the format promises (EINVAL, ENOENT, and ENOSPC for 1.3 MB
 *	of rows: set unwind_mb=1 first); prints one line per case and exits 1
 *	if any was taken or refused otherwise, or the table list changed.
 *   badtables random UNWIND_FILE FILE SECONDS
 *	for SECONDS, replaces FILE's table every few milliseconds with random
 *	rows that pass the module's checks (sorted offsets, known rules) but
 *	say anything: any base, any offset, any saved-rbp slot; every other
 *	one with a CPython layout (CPROF_UTABLE_PY) whose addresses and
 *	offsets are anything the module's checks let through.  A walk
 *	through FILE's code then reads whatever the rows point at, and a
 *	Python walk whatever the layout does; both must end, fault-free,
 *	every time.  Prints how many tables it wrote.
 *   badtables remove UNWIND_FILE FILE
 *	writes a table of no rows for FILE, which removes its table.
 *   badtables fill UNWIND_FILE INO ROWS
 *	writes a table of ROWS rows for a file no process maps (a device
 *	of no such file, inode INO): it takes room under unwind_mb, and no
 *	tick ever uses it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../../include/uapi/cprof_format.h"

struct table {
	struct cprof_utable hdr;
	struct cprof_upy py;		/* written if hdr.flags has PY */
	uint32_t *pc;
	struct cprof_urow *row;
	uint32_t alloc;			/* rows in pc[] and row[] */
};

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* The bytes of a table of n rows and r rules (cprof_format.h). */
static size_t table_bytes(size_t n, size_t r)
{
	return sizeof(struct cprof_utable) + r * sizeof(struct cprof_urow) +
	       n * (sizeof(uint32_t) + sizeof(uint16_t));
}

/* A layout the module takes: 3.11's offsets, addresses in no file. */
static void good_py(struct table *t)
{
	struct cprof_upy *py = &t->py;

	memset(py, 0, sizeof(*py));
	py->runtime = 0x656220;
	py->code_type = 0x554440;
	py->version = 0x030b02f0;
	py->tstate_current = 576;
	py->interp_gil = py->gil_holder = CPROF_UPY_NONE;
	py->interp_head = 40;
	py->interp_next = 0;
	py->threads_head = 16;
	py->ts_next = 8;
	py->ts_native_tid = 160;
	py->ts_cframe = 56;
	py->ts_frame = CPROF_UPY_NONE;
	py->cframe_current = 8;
	py->fr_code = 32;
	py->fr_previous = 48;
	py->fr_instr = 56;
	py->fr_owner = 69;
	py->fr_is_entry = 68;
	py->code_firstlineno = 72;
	py->code_adaptive = 184;
	py->code_qualname = 128;
	py->code_filename = 112;
	py->code_linetable = 136;
	t->hdr.flags |= CPROF_UTABLE_PY;
}

/* A layout of anything the module's checks let through. */
static void random_py(struct table *t)
{
	uint16_t *f = &t->py.tstate_current;
	uint16_t *end = &t->py.reserved;

	good_py(t);
	/* offsets from the text: anywhere in the user address space */
	t->py.runtime = rnd() % 3 ? rnd() % (1u << 24) : rnd() >> 18;
	t->py.code_type = rnd() % 3 ? rnd() % (1u << 24) : rnd() >> 18;
	t->py.version = 0x030b0000 + rnd() % 0x30000;	/* 3.11 to 3.13 */
	for (; f < end; f++)
		*f = rnd() % 4 ? rnd() % 512 : (uint16_t)rnd();
	/* what the checks want: a frame path, the GIL's both or neither */
	if (t->py.ts_frame == CPROF_UPY_NONE)
		t->py.ts_cframe = t->py.cframe_current = 8;
	if (t->py.interp_gil == CPROF_UPY_NONE)
		t->py.gil_holder = CPROF_UPY_NONE;
	else if (t->py.gil_holder == CPROF_UPY_NONE)
		t->py.gil_holder = 8;
	for (f = &t->py.interp_head; f < end; f++)
		if (*f == CPROF_UPY_NONE && f != &t->py.ts_cframe &&
		    f != &t->py.ts_frame && f != &t->py.cframe_current &&
		    f != &t->py.fr_owner && f != &t->py.fr_is_entry)
			*f = 0;
	/* the field that ends one C call's frames: 3.11's flag, or the owner */
	if (t->py.version < 0x030c0000 && t->py.fr_is_entry == CPROF_UPY_NONE)
		t->py.fr_is_entry = 68;
	if (t->py.version >= 0x030c0000 && t->py.fr_owner == CPROF_UPY_NONE)
		t->py.fr_owner = 70;
}

/*
 * Write the table as one buffer of len bytes, or of the size the header's
 * counts make (at most the rows there are).  Each row its own rule (the
 * module does not ask for distinct ones), but past CPROF_UTABLE_RULES_MAX
 * rows, which share the rules of the first; the last row keeps its own.
 * rules: the header's nr_rules (-1: that count; another is written as it
 * is, with the rules there are).  bad_index: the row whose rule index is
 * one past the last (-1: none).
 */
static ssize_t put(int fd, const struct table *t, size_t len, long rules,
		   long bad_index)
{
	size_t n = t->hdr.nr_rows < t->alloc ? t->hdr.nr_rows : t->alloc;
	size_t r = n < CPROF_UTABLE_RULES_MAX ? n : CPROF_UTABLE_RULES_MAX;
	size_t head = sizeof(t->hdr) +
		      (t->hdr.flags & CPROF_UTABLE_PY ? sizeof(t->py) : 0);
	struct cprof_utable hdr = t->hdr;
	size_t exact, i;
	uint16_t *rule_of;
	char *buf;
	ssize_t ret;

	hdr.nr_rules = rules < 0 ? r : (uint32_t)rules;
	exact = table_bytes(n, hdr.nr_rules) + head - sizeof(hdr);
	buf = calloc(1, (len > exact ? len : exact) + 64 + sizeof(t->py) +
			r * sizeof(struct cprof_urow));
	if (!buf)
		return -1;
	memcpy(buf, &hdr, sizeof(hdr));
	memcpy(buf + sizeof(hdr), &t->py, head - sizeof(hdr));
	memcpy(buf + head, t->row, (r ? r - 1 : 0) * sizeof(*t->row));
	if (r)
		memcpy(buf + head + (r - 1) * sizeof(*t->row),
		       &t->row[n - 1], sizeof(*t->row));
	memcpy(buf + head + hdr.nr_rules * sizeof(*t->row), t->pc,
	       n * sizeof(uint32_t));
	rule_of = (uint16_t *)(buf + head +
			       hdr.nr_rules * sizeof(*t->row) +
			       n * sizeof(uint32_t));
	for (i = 0; i < n; i++)
		rule_of[i] = i + 1 == n ? r - 1 : i % (r > 1 ? r - 1 : 1);
	if (bad_index >= 0 && (size_t)bad_index < n)
		rule_of[bad_index] = hdr.nr_rules;
	ret = write(fd, buf, len ? len : exact);
	free(buf);
	return ret;
}

static void good(struct table *t, uint32_t n)
{
	uint32_t i;

	memset(&t->hdr, 0, sizeof(t->hdr));
	t->hdr.magic = CPROF_UTABLE_MAGIC;
	t->hdr.size = sizeof(t->hdr);
	t->hdr.dev = 0x12345;		/* no such file: never used */
	t->hdr.ino = 987654321;
	t->hdr.nr_rows = n;
	t->alloc = n;
	t->pc = calloc(n, sizeof(*t->pc));
	t->row = calloc(n, sizeof(*t->row));
	if (!t->pc || !t->row)
		exit(2);
	for (i = 0; i < n; i++) {
		t->pc[i] = i * 16;
		t->row[i].cfa_base = i + 1 < n ? CPROF_CFA_SP : CPROF_CFA_NONE;
		t->row[i].cfa_off = 8;
	}
}

static int lines(const char *path)
{
	FILE *f = fopen(path, "r");
	int c, n = 0;

	if (!f)
		return -1;
	while ((c = fgetc(f)) != EOF)
		n += c == '\n';
	fclose(f);
	return n;
}

static int reject(const char *path)
{
	int fd = open(path, O_RDWR), bad = 0, before = lines(path), i;
	static const char *const names[] = {
		"shorter than a header", "bad magic", "bad header size",
		"header size too small", "too many rows", "one byte short",
		"one byte over", "offsets not increasing", "equal offsets",
		"unknown CFA rule", "unknown rbp rule", "last row not NONE",
		"removing a table that is not there", "over unwind_mb",
		"unknown flag", "rows but no rules", "too many rules",
		"a rule index past the rules", "rules but no rows",
		"compiling, with rows", "compiling and idle at once",
		"idle, with the frame-pointer flag",
		"Python layout missing", "Python: no code offset",
		"Python: no frame path", "Python: GIL holder half given",
		"Python: reserved bytes set", "Python 3.10",
		"Python layout on a removal", "Python layout on compiling",
		"Python: runtime past user space",
	};
	static const int want[] = {
		EINVAL, EINVAL, EINVAL, EINVAL, EINVAL, EINVAL, EINVAL,
		EINVAL, EINVAL, EINVAL, EINVAL, EINVAL, ENOENT, ENOSPC,
		EINVAL, EINVAL, EINVAL, EINVAL, EINVAL,
		EINVAL, EINVAL, EINVAL,
		EINVAL, EINVAL, EINVAL, EINVAL, EINVAL, EINVAL, EINVAL, EINVAL,
		EINVAL,
	};

	if (fd < 0) {
		perror(path);
		return 1;
	}
	for (i = 0; i < (int)(sizeof(want) / sizeof(want[0])); i++) {
		struct table t;
		long bad_index = -1, rules = -1;
		size_t len = 0;
		ssize_t r;
		int err;

		good(&t, 8);
		switch (i) {
		case 0: len = sizeof(t.hdr) - 1; break;
		case 1: t.hdr.magic ^= 1; break;
		case 2: t.hdr.size += 8; break;
		case 3: t.hdr.size -= 8; break;
		case 4: t.hdr.nr_rows = CPROF_UTABLE_ROWS_MAX + 1; len = 4096; break;
		case 5: len = table_bytes(8, 8) - 1; break;
		case 6: len = table_bytes(8, 8) + 1; break;
		case 7: t.pc[3] = t.pc[2] - 1; break;
		case 8: t.pc[3] = t.pc[2]; break;
		case 9: t.row[2].cfa_base = CPROF_CFA_MAX + 1; break;
		case 10: t.row[2].fp_rule = CPROF_FP_MAX + 1; break;
		case 11: t.row[7].cfa_base = CPROF_CFA_SP; break;
		case 12: t.hdr.nr_rows = 0; break;
		case 13:
			/* 1.3 MB: k_utables sets unwind_mb=1 first */
			free(t.pc);
			free(t.row);
			good(&t, 200000);
			break;
		case 14: t.hdr.flags = CPROF_UTABLE_FP << 1; break;
		case 15: rules = 0; break;
		case 16: rules = CPROF_UTABLE_RULES_MAX + 1; break;
		case 17: bad_index = 3; break;
		case 18: t.hdr.nr_rows = 0; rules = 1; break;
		case 19: t.hdr.flags = CPROF_UTABLE_BUSY; break;
		case 20:
			t.hdr.nr_rows = 0;
			rules = 0;
			t.hdr.flags = CPROF_UTABLE_BUSY | CPROF_UTABLE_IDLE;
			break;
		case 21:
			t.hdr.nr_rows = 0;
			rules = 0;
			t.hdr.flags = CPROF_UTABLE_IDLE | CPROF_UTABLE_FP;
			break;
		case 22:
			good_py(&t);
			len = table_bytes(8, 8);
			break;
		case 23: good_py(&t); t.py.fr_code = CPROF_UPY_NONE; break;
		case 24: good_py(&t); t.py.ts_cframe = CPROF_UPY_NONE; break;
		case 25: good_py(&t); t.py.interp_gil = 384; break;
		case 26: good_py(&t); t.py.reserved = 1; break;
		case 27: good_py(&t); t.py.version = 0x030a0cf0; break;
		case 28: good_py(&t); t.hdr.nr_rows = 0; rules = 0; break;
		case 29:
			good_py(&t);
			t.hdr.nr_rows = 0;
			rules = 0;
			t.hdr.flags |= CPROF_UTABLE_BUSY;
			break;
		case 30: good_py(&t); t.py.runtime = 0xffff888000000000ull; break;
		}
		r = put(fd, &t, len, rules, bad_index);
		err = r < 0 ? errno : 0;
		printf("%-36s %s\n", names[i], err ? strerror(err) : "taken");
		if (err != want[i]) {
			printf("  want %s\n", strerror(want[i]));
			bad++;
		}
		free(t.pc);
		free(t.row);
	}
	close(fd);
	if (lines(path) != before) {
		printf("the table list changed: %d lines, %d before\n",
		       lines(path), before);
		bad++;
	}
	return bad ? 1 : 0;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int random_tables(const char *path, const char *file, double secs)
{
	static const int32_t offs[] = {
		0, 8, 16, -8, 1, 7, 4096, -4096, 0x7fffffff, -0x7fffffff - 1,
	};
	int fd = open(path, O_RDWR);
	double end = now() + secs;
	unsigned long written = 0, refused = 0;
	struct stat st;

	if (fd < 0 || stat(file, &st)) {
		perror(fd < 0 ? path : file);
		return 1;
	}
	rng ^= (uint64_t)getpid() << 32;
	while (now() < end) {
		uint32_t n = 2 + rnd() % 2000, i, span = st.st_size ? st.st_size : 1;
		struct table t;

		good(&t, n);
		t.hdr.dev = st.st_dev;
		t.hdr.ino = st.st_ino;
		t.hdr.file_size = st.st_size;
		t.hdr.mtime_ns = st.st_mtim.tv_sec * 1000000000LL +
				 st.st_mtim.tv_nsec;
		for (i = 0; i < n; i++) {
			struct cprof_urow *r = &t.row[i];

			t.pc[i] = (uint64_t)span * i / n;
			if (i && t.pc[i] <= t.pc[i - 1])
				t.pc[i] = t.pc[i - 1] + 1;
			r->cfa_base = rnd() % (CPROF_CFA_MAX + 1);
			r->fp_rule = rnd() % (CPROF_FP_MAX + 1);
			r->cfa_off = rnd() % 3 ? offs[rnd() % 10] : (int32_t)rnd();
			r->fp_off = rnd() % 3 ? (int16_t)offs[rnd() % 4] : (int16_t)rnd();
		}
		t.row[n - 1].cfa_base = CPROF_CFA_NONE;
		if (rnd() & 1)
			random_py(&t);
		if (put(fd, &t, 0, -1, -1) < 0)
			refused++;
		else
			written++;
		free(t.pc);
		free(t.row);
		usleep(5000);
	}
	printf("%lu random tables written, %lu refused\n", written, refused);
	close(fd);
	return !written || refused;
}

/* A table of no rows for FILE: its table goes. */
static int remove_table(const char *path, const char *file)
{
	int fd = open(path, O_RDWR);
	struct table t = { 0 };
	struct stat st;
	ssize_t r;

	if (fd < 0 || stat(file, &st)) {
		perror(fd < 0 ? path : file);
		return 1;
	}
	t.hdr.magic = CPROF_UTABLE_MAGIC;
	t.hdr.size = sizeof(t.hdr);
	t.hdr.dev = st.st_dev;
	t.hdr.ino = st.st_ino;
	r = put(fd, &t, 0, -1, -1);
	if (r < 0)
		perror("removing the table");
	close(fd);
	return r < 0;
}

/* A table of rows rows for the fake file (good()'s device, inode ino). */
static int fill(const char *path, unsigned long long ino, uint32_t rows)
{
	int fd = open(path, O_RDWR);
	struct table t;
	ssize_t r;

	if (fd < 0 || rows < 2) {
		perror(path);
		return 1;
	}
	good(&t, rows);
	t.hdr.ino = ino;
	r = put(fd, &t, 0, -1, -1);
	if (r < 0)
		perror("writing the table");
	free(t.pc);
	free(t.row);
	close(fd);
	return r < 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "reject"))
		return reject(argv[2]);
	if (argc == 4 && !strcmp(argv[1], "remove"))
		return remove_table(argv[2], argv[3]);
	if (argc == 5 && !strcmp(argv[1], "random"))
		return random_tables(argv[2], argv[3], atof(argv[4]));
	if (argc == 5 && !strcmp(argv[1], "fill"))
		return fill(argv[2], strtoull(argv[3], NULL, 0),
			    strtoul(argv[4], NULL, 0));
	fprintf(stderr, "usage: badtables reject UNWIND_FILE | random UNWIND_FILE FILE SECONDS | remove UNWIND_FILE FILE | fill UNWIND_FILE INO ROWS\n");
	return 2;
}
