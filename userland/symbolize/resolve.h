/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * resolve - turn an aggregated profile into pprof's model: mappings,
 * locations, functions and samples over one string table, symbolized with
 * ksyms (kernel) and elfsyms (user binaries) unless asked not to.
 *
 * Address convention: the first kernel frame is the interrupted instruction,
 * as is the first user frame when the tick hit user mode; every other frame
 * is a return address and is looked up, and recorded as Location.address,
 * as address - 1 so that it falls inside the call instruction.
 *
 * Every table is an array; ids in pprof are index + 1, and so are the
 * references between tables here (0 meaning none).
 *
 * A sample's Python frames (profile.h) are spliced into its user stack:
 * each user frame whose outermost function is the interpreter loop,
 * _PyEval_EvalFrameDefault, gets, just inside it (leaf side), the Python
 * frames of its call (a group: up to and including a frame flagged
 * CPROF_PYFRAME_ENTRY), innermost first.  Groups and loop frames are paired
 * from the outermost end when both walks reached the thread's outermost
 * frame, else from the innermost end (what a walk cut short still has);
 * groups left over go to the last loop frame paired at the unpaired end,
 * loop frames left over get none.  With no loop frame named (an
 * unsymbolized interpreter, --no-symbolize) the Python frames go just
 * inside the outermost user frame.  Each Python frame is a location of
 * no mapping, address 0, one line: function co_qualname, file co_filename,
 * start line co_firstlineno, the instruction's line; one not read (its
 * process gone first, ...) is a location of the code object's address
 * named "[python code 0xADDR]", counted by why in one warning line (when
 * symbolizing, as for addresses).
 */
#ifndef CPROF_RESOLVE_H
#define CPROF_RESOLVE_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "stream/profile.h"
#include "lib/strtab.h"

#define KERNEL_MAPPING_NAME	"[kernel.kallsyms]"
/* Anonymous executable memory (the stream's "[anon]"): JIT code. */
#define JIT_MAPPING_NAME	"[jit]"
#define LOST_FUNCTION_NAME	"[lost samples]"
/* The outermost frame of a stack whose walk stopped short (prof_stack). */
#define TRUNCATED_FUNCTION_NAME	"[truncated]"
/* The interpreter loop whose calls the Python frames are spliced into. */
#define PY_EVAL_FUNCTION	"_PyEval_EvalFrameDefault"

struct res_mapping {
	uint64_t start, limit, offset;
	int64_t file;			/* string */
	int64_t build_id;		/* string, hex */
	bool kernel;
	bool has_functions, has_filenames, has_line_numbers, has_inline_frames;
};

struct res_function {
	int64_t name, system_name, filename;	/* strings */
	int64_t start_line;
};

struct res_line {
	uint32_t function;		/* index + 1 */
	int64_t line;			/* 0 unknown */
};

struct res_location {
	uint32_t mapping;		/* index + 1, 0 none */
	uint64_t address;
	uint32_t line;			/* first in lines[], innermost first */
	uint32_t nr_lines;		/* 0: not symbolized */
};

struct res_sample {
	uint32_t loc;			/* first in loc_ids[], leaf first */
	uint32_t nr_locs;
	uint64_t count, nanos;		/* kind heap: allocations, bytes */
	uint64_t live_count, live_bytes;	/* kind heap: not seen freed */
	int64_t pid, tid, cpu;		/* -1: no such label */
	int64_t comm;			/* string; 0: no label */
	int64_t cgroup;			/* string (path or "id:N"); 0: none */
	int64_t state;			/* string (on or off the CPU); 0: none */
	uint32_t waiter_pid, waiter_tid;	/* kind mutex; 0: none */
	int64_t waiter_comm;		/* string; 0: none */
};

struct resolved {
	struct strtab *strings;
	struct res_mapping *mappings;
	size_t nr_mappings;
	struct res_function *functions;
	size_t nr_functions;
	struct res_location *locations;
	size_t nr_locations;
	struct res_line *lines;
	size_t nr_lines;
	uint32_t *loc_ids;		/* location index + 1 */
	size_t nr_loc_ids;
	struct res_sample *samples;
	size_t nr_samples;
	int64_t *comments;		/* strings */
	size_t nr_comments;

	uint32_t kind;			/* enum cprof_kind: what count and
					   nanos measure */
	uint64_t period_ns;
	uint32_t heap_rate;		/* kind heap: mean bytes a sample */
	uint64_t time_nanos;		/* wall clock start */
	uint64_t duration_nanos;
	uint64_t total_count, total_nanos;	/* lost samples included */
	uint64_t lost;
	uint64_t lost_other;		/* other records lost (LOST's) */
	/*
	 * Kind trace: the profile's timeline, whose switches name their
	 * stacks by samples[] index (as profile__timeline()); the profile
	 * must outlive r.  NULL for other kinds.
	 */
	const struct timeline *timeline;
	uint64_t start_ns, end_ns;	/* the profile's, sample clock */
	uint32_t pid;			/* the profile's pid=, 0: all */
};

struct kcache_loader;
struct cgroups;
struct pyframes;
struct jitmaps;

struct resolve_opts {
	bool symbolize;
	const char *kallsyms;		/* NULL: /proc/kallsyms */
	const char *modules;		/* NULL: /proc/modules */
	/*
	 * Kernel symbols already loading (kcache__load_start()), or NULL to
	 * start here; resolved__new() always finishes it.
	 */
	struct kcache_loader *ksyms_loader;
	/*
	 * Paths of the samples' cgroup ids, used when the profile is of this
	 * boot of this machine; else (or NULL) a cgroup is shown as "id:N".
	 */
	struct cgroups *cgroups;
	/*
	 * The code objects of the samples' Python frames, read as the
	 * stream was (ingest__python(): the reader that owns these options
	 * hands it to its ingest); NULL: none was, the frames stay unnamed.
	 */
	struct pyframes *python;
	/*
	 * Perf maps of JIT code, read as the stream was (ingest__jit()), read
	 * once more here; NULL: read here only.
	 */
	struct jitmaps *jit;
	/*
	 * Looked at as user frames are symbolized (NULL: never): once set,
	 * resolved__new() stops and returns NULL without a message.
	 */
	const volatile sig_atomic_t *stop;
};

/*
 * Start loading kernel symbols into opts->ksyms_loader, from opts->kallsyms
 * and opts->modules (or their defaults).  0 ok, -1 out of memory.
 */
int resolve_opts__start_ksyms(struct resolve_opts *opts);

/*
 * Build the model of p.  Problems that only cost symbols (no kallsyms, a
 * missing binary) are warnings, summed up in one line at the end; NULL
 * when out of memory (after printing why) or stopped by opts->stop.
 */
struct resolved *resolved__new(const struct profile *p,
			       const struct resolve_opts *opts);
/* NULL-safe. */
void resolved__free(struct resolved *r);

#endif /* CPROF_RESOLVE_H */
