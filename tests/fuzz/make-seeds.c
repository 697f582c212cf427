// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * make-seeds DIR: write synthetic streams that hold every record type into
 * DIR, next to the real captures in tests/fuzz/corpus/stream/, as seeds for
 * the fuzzer: samples user-only, kernel-only and both, idle and kernel
 * threads, mappings with and without a build ID ([vdso], [anon]), LOST and
 * THROTTLE records, every END reason, an unknown record type; a wall
 * profile: ticks (one late) and times off the CPU, their returns in and out
 * of order, missing, and one without its leaving; a thread snapshot;
 * samples with Python frames (version 3's trailer: with and without a
 * cgroup id, two interpreter calls, a walk cut at the depth, none) and a
 * Python code object's record.
 *
 *   cc -I userland -I include/uapi -I tests/unit tests/fuzz/make-seeds.c
 */
#include <stdio.h>

#include "streambuild.h"

static const uint64_t kips[3] = { 0xffffffff81000100ull, 0xffffffff81000200ull,
				  0xffffffff81000300ull };
static const uint64_t uips[4] = { 0x401010, 0x401200, 0x7f0000001000, 0x401300 };
static const uint8_t build_id[20] = { 0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4 };

static int write_seed(const struct sb *b, const char *dir, const char *name)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return sb_write(b, path, b->len);
}

int main(int argc, char **argv)
{
	struct sb b;
	int err = 0;

	if (argc != 2) {
		fprintf(stderr, "usage: make-seeds DIR\n");
		return 2;
	}

	/* every record type, ended by a signal */
	sb_init(&b);
	sb_header(&b, NULL);
	sb_mmap(&b, 1, 42, 0x400000, 0x500000, 0x1000, "/usr/bin/x", build_id, 20);
	sb_mmap(&b, 1, 42, 0x7f0000000000, 0x7f0000100000, 0, "[vdso]", NULL, 0);
	sb_mmap(&b, 2, 43, 0x600000, 0x601000, 0, "[anon]", NULL, 0);
	sb_sample(&b, 10, 42, 43, 1, "x", CPROF_SAMPLE_USER_MODE |
		  CPROF_SAMPLE_USER_EXACT, 0, NULL, 4, uips);
	sb_sample(&b, 11, 42, 43, 0, "x", CPROF_SAMPLE_USER_FAULT, 3, kips, 2, uips);
	sb_throttle(&b, 12, 1, SB_PERIOD_NS * 4);
	sb_sample(&b, 13, 42, 44, 1, "x", CPROF_SAMPLE_USER_TRUNC, 3, kips, 4, uips);
	sb_lost(&b, 13, 0, 5, 0);
	sb_sample(&b, 14, 0, 0, 1, "swapper/1", CPROF_SAMPLE_IDLE |
		  CPROF_SAMPLE_KTHREAD, 1, kips, 0, NULL);
	sb_sample(&b, 15, 2, 2, 0, "kthreadd", CPROF_SAMPLE_KTHREAD |
		  CPROF_SAMPLE_KERN_TRUNC, 3, kips, 0, NULL);
	sb_rec(&b, 77, 0, 24);			/* a type of a later version */
	sb_end(&b, 999000000, CPROF_END_SIGNAL, 5);
	err |= write_seed(&b, argv[1], "synthetic-all-records");
	sb_free(&b);

	/*
	 * a wall profile: a tick, a late one, times off the CPU returned in
	 * order, out of order, never, and a return without its leaving
	 */
	{
		struct cprof_header h = sb_default_header();

		h.kind = CPROF_KIND_WALL;
		sb_init(&b);
		sb_header(&b, &h);
		sb_mmap(&b, 1, 42, 0x400000, 0x500000, 0x1000, "/usr/bin/x",
			build_id, 20);
		sb_sample(&b, 10, 42, 43, 1, "x", CPROF_SAMPLE_USER_MODE, 0,
			  NULL, 2, uips);
		sb_sample(&b, 11, 42, 43, 1, "x", CPROF_SAMPLE_USER_MODE |
			  5 << CPROF_SAMPLE_LATE_SHIFT, 0, NULL, 2, uips);
		sb_offcpu(&b, 20, 42, 43, 0, "x", CPROF_OFF_SLEEPING, 1, 3,
			  kips, 2, uips);
		sb_oncpu(&b, 30, 20, 43, 1);
		sb_oncpu(&b, 45, 40, 44, 0);
		sb_offcpu(&b, 40, 42, 44, 1, "x", CPROF_OFF_DISK, 8, 3, kips,
			  2, uips);
		sb_offcpu(&b, 50, 42, 45, 1, "x", CPROF_OFF_PREEMPTED, 1, 0,
			  NULL, 2, uips);
		sb_oncpu(&b, 70, 60, 46, 0);
		sb_end(&b, 999000000, CPROF_END_STOP, 0);
		err |= write_seed(&b, argv[1], "synthetic-wall");
		sb_free(&b);
	}

	/*
	 * a thread snapshot: sleeping, running, stopped threads, one with a
	 * stack copy after it (as the module writes a thread's)
	 */
	{
		struct cprof_header h = sb_default_header();

		h.kind = CPROF_KIND_THREADS;
		sb_init(&b);
		sb_header(&b, &h);
		sb_mmap(&b, 1, 42, 0x400000, 0x500000, 0x1000, "/usr/bin/x",
			build_id, 20);
		sb_thread(&b, 10, 42, 43, "x", CPROF_OFF_SLEEPING, 2500000, 3,
			  kips, 2, uips);
		sb_thread(&b, 11, 42, 44, "x", CPROF_OFF_RUNNING, 0, 0, NULL,
			  2, uips);
		sb_thread(&b, 12, 42, 45, "x", CPROF_OFF_STOPPED, 1000, 3,
			  kips, 0, NULL);
		sb_end(&b, 300000000, CPROF_END_COMPLETE, 0);
		err |= write_seed(&b, argv[1], "synthetic-threads");
		sb_free(&b);
	}

	/*
	 * Python frames after samples' frames: two calls of the interpreter
	 * loop (entry frames), with a cgroup id and without, a walk cut at
	 * the depth, a thread the interpreter does not know
	 */
	{
		const struct cprof_pyframe py[3] = {
			{ 0x7f1000001000, 40, 12 },
			{ 0x7f1000002000 | CPROF_PYFRAME_ENTRY, 8, 3 },
			{ 0x7f1000003000 | CPROF_PYFRAME_ENTRY, -1, 1 },
		};

		sb_init(&b);
		sb_header(&b, NULL);
		sb_mmap(&b, 1, 42, 0x400000, 0x500000, 0x1000,
			"/usr/bin/python3.11", build_id, 20);
		sb_sample_py(&b, 10, 42, 43, 1, "python3", CPROF_SAMPLE_USER_MODE,
			     0, NULL, 4, uips, 0, 0x400000, CPROF_PY_COMPLETE,
			     3, py);
		sb_sample_py(&b, 11, 42, 43, 0, "python3", 0, 3, kips, 4, uips,
			     1234, 0x400000, CPROF_PY_COMPLETE, 3, py);
		sb_sample_py(&b, 12, 42, 44, 1, "python3", 0, 0, NULL, 2, uips,
			     0, 0x400000, CPROF_PY_DEPTH, 1, py);
		sb_sample_py(&b, 13, 42, 45, 1, "python3", 0, 0, NULL, 2, uips,
			     0, 0x400000, CPROF_PY_NO_THREAD, 0, NULL);
		{
			/* a code record: two str objects, a line table */
			uint8_t q[56] = { [16] = 8, [32] = 0x64, [48] = 'f',
					  'u', 'n', 'c', '_', 'o', 'n', 'e' };
			uint8_t lt[34] = { [16] = 2, [32] = 0xef, [33] = 4 };

			sb_pycode(&b, 13, 42, 0x7f1000001000, 12, 0x030b02f0,
				  q, sizeof(q), q, sizeof(q), lt, sizeof(lt));
		}
		sb_end(&b, 999000000, CPROF_END_COMPLETE, 0);
		err |= write_seed(&b, argv[1], "synthetic-python");
		sb_free(&b);
	}

	/* each END reason, one sample */
	for (unsigned int reason = CPROF_END_COMPLETE; reason <= CPROF_END_STOP; reason++) {
		char name[64];

		sb_init(&b);
		sb_header(&b, NULL);
		sb_sample(&b, 10, 7, 7, 0, "y", CPROF_SAMPLE_USER_MODE, 0, NULL, 1, uips);
		sb_end(&b, 1000000, reason, 0);
		snprintf(name, sizeof(name), "synthetic-end-%u", reason);
		err |= write_seed(&b, argv[1], name);
		sb_free(&b);
	}
	return err ? 1 : 0;
}
