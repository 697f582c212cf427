// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * gen-stream - write a large synthetic cprof stream, for benchmarking
 * cprof-dump (docs/BENCHMARKS.md).
 *
 *   gen-stream [-n SAMPLES] [-s STACKS] [-P PIDS] [-m MAPS] [-b BINARY]... > raw
 *
 * Each of PIDS processes maps every BINARY (its executable PT_LOAD segment,
 * at a per-process base); STACKS distinct stacks of 8 kernel and 24 user
 * frames are drawn with a skew (a few hot, a long tail), user frames at
 * addresses inside the binaries' text.  -m adds MAPS distinct mapping
 * records no sample refers to (a process mapping and unmapping a library
 * in a loop), spread over the processes, before the samples.  Without -b one fake binary path is
 * used (for --no-symbolize runs).  Deterministic: same arguments, same bytes.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../unit/streambuild.h"

#define MAX_BINS	16
#define KDEPTH		8
#define UDEPTH		24

struct bin {
	const char *path;
	uint64_t off, size;	/* executable segment in the file */
};

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* The executable PT_LOAD of an ELF64 file. */
static int exec_segment(struct bin *b)
{
	Elf64_Ehdr eh;
	Elf64_Phdr ph;
	int fd, i, err = -1;

	fd = open(b->path, O_RDONLY);
	if (fd < 0)
		return -1;
	if (pread(fd, &eh, sizeof(eh), 0) != sizeof(eh) ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG) || eh.e_ident[EI_CLASS] != ELFCLASS64)
		goto out;
	for (i = 0; i < eh.e_phnum; i++) {
		if (pread(fd, &ph, sizeof(ph), eh.e_phoff + i * sizeof(ph)) != sizeof(ph))
			goto out;
		if (ph.p_type == PT_LOAD && (ph.p_flags & PF_X)) {
			b->off = ph.p_offset & ~0xfffull;
			b->size = (ph.p_offset + ph.p_filesz - b->off + 0xfff) & ~0xfffull;
			err = 0;
			break;
		}
	}
out:
	close(fd);
	return err;
}

static long arg(const char *s)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || v <= 0) {
		fprintf(stderr, "gen-stream: invalid number '%s'\n", s);
		exit(2);
	}
	return v;
}

static void flush(struct sb *b)
{
	if (fwrite(b->buf, 1, b->len, stdout) != b->len) {
		perror("gen-stream: write");
		exit(1);
	}
	b->len = 0;
	b->nr_recs = 0;
}

int main(int argc, char **argv)
{
	long nr_samples = 1000000, nr_stacks = 20000, nr_pids = 50, nr_maps = 0;
	struct bin bins[MAX_BINS] = { { "/opt/fake/app", 0, 1 << 20 } };
	int nr_bins = 0, opt;
	uint64_t *stacks, i;
	struct sb b;
	long p, s;

	while ((opt = getopt(argc, argv, "n:s:P:m:b:")) != -1) {
		switch (opt) {
		case 'n': nr_samples = arg(optarg); break;
		case 's': nr_stacks = arg(optarg); break;
		case 'P': nr_pids = arg(optarg); break;
		case 'm': nr_maps = arg(optarg); break;
		case 'b':
			if (nr_bins == MAX_BINS) {
				fprintf(stderr, "gen-stream: at most %d -b\n", MAX_BINS);
				return 2;
			}
			bins[nr_bins].path = optarg;
			if (exec_segment(&bins[nr_bins])) {
				fprintf(stderr, "gen-stream: %s: no executable ELF64 segment\n", optarg);
				return 1;
			}
			nr_bins++;
			break;
		default:
			fprintf(stderr, "usage: gen-stream [-n SAMPLES] [-s STACKS] [-P PIDS] [-m MAPS] [-b BINARY]...\n");
			return 2;
		}
	}
	if (!nr_bins)
		nr_bins = 1;

	/* stack s: KDEPTH kernel ips, then UDEPTH (binary, offset) pairs */
	stacks = calloc(nr_stacks, (KDEPTH + UDEPTH) * sizeof(*stacks));
	if (!stacks)
		return 1;
	for (s = 0; s < nr_stacks; s++) {
		uint64_t *st = stacks + s * (KDEPTH + UDEPTH);

		for (i = 0; i < KDEPTH; i++)
			st[i] = 0xffffffff81000000ull + next() % 0x1000000;
		for (i = 0; i < UDEPTH; i++) {
			int k = next() % nr_bins;

			st[KDEPTH + i] = (uint64_t)k << 48 |
					 (next() % bins[k].size);
		}
	}

	sb_init(&b);
	sb_header(&b, NULL);
	for (p = 0; p < nr_pids; p++)
		for (i = 0; i < (uint64_t)nr_bins; i++)
			sb_mmap(&b, 0, 1000 + p,
				0x550000000000ull + (p << 32) + (i << 28),
				0x550000000000ull + (p << 32) + (i << 28) + bins[i].size,
				bins[i].off, bins[i].path, NULL, 0);
	/* below the binaries' bases, one page each, never sampled */
	for (i = 0; i < (uint64_t)nr_maps; i++) {
		p = i % nr_pids;
		sb_mmap(&b, i, 1000 + p, 0x10000000ull + (i << 12),
			0x10000000ull + (i << 12) + 0x1000, 0,
			"/opt/fake/libchurn.so", NULL, 0);
		if (b.len > (1 << 20))
			flush(&b);
	}
	for (i = 0; i < (uint64_t)nr_samples; i++) {
		/* skewed: the square of a uniform number favours low indexes */
		uint64_t u = next() % 65536;
		long k = (long)((u * u * (uint64_t)nr_stacks) >> 32);
		uint64_t ips[KDEPTH + UDEPTH];
		const uint64_t *st;
		int nk, j;

		st = stacks + k * (KDEPTH + UDEPTH);
		p = k % nr_pids;
		nk = (k & 1) ? KDEPTH : 0;	/* half in user mode */
		for (j = 0; j < KDEPTH; j++)
			ips[j] = st[j];
		for (j = 0; j < UDEPTH; j++) {
			uint64_t v = st[KDEPTH + j];
			int bi = v >> 48;

			ips[nk + j] = 0x550000000000ull + ((uint64_t)p << 32) +
				      ((uint64_t)bi << 28) + (v & 0xffffffffffffull);
		}
		sb_sample(&b, i * 1000, 1000 + p, 1000 + p + (k % 4), i % 4,
			  "bench", nk ? 0 : CPROF_SAMPLE_USER_MODE, nk, ips,
			  UDEPTH, ips + nk);
		if (b.len > (1 << 20))
			flush(&b);
	}
	sb_end(&b, 1000000000, CPROF_END_COMPLETE, 0);
	flush(&b);
	sb_free(&b);
	free(stacks);
	return fflush(stdout) ? 1 : 0;
}
