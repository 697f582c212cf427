/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * cprof stream format: what /proc/cprof/profile emits and cprof-dump reads,
 * and the unwind tables cprof-dump writes to /proc/cprof/unwind.  Included
 * by the module and by userland: types and constants only, fixed width,
 * naturally aligned, little-endian (the module is x86-64 only).
 *
 * A stream is one struct cprof_header followed by records, each starting
 * with struct cprof_rec, whose size covers the whole record and is a
 * multiple of 8; CPROF_REC_END ends a complete stream.  Fields are only
 * ever appended to a record and new record types may appear; anything else
 * bumps CPROF_VERSION (an unwind table: CPROF_UTABLE_MAGIC).  Why, and how
 * both sides are checked to agree: docs/design.md, "The format".
 */
#ifndef CPROF_FORMAT_H
#define CPROF_FORMAT_H

#include <linux/types.h>

#define CPROF_MAGIC		"CPROFSTM"	/* 8 bytes, no NUL */
#define CPROF_MAGIC_LEN		8
/*
 * 2: samples carry a cgroup id after their frames (CPROF_SAMPLE_CGROUP),
 * which version 1 readers took for a size mismatch.
 * 3: a sample may carry its thread's Python frames after that
 * (struct cprof_pytrail), which version 2 readers took for a size mismatch.
 * A reader reads the versions before its own too.
 */
#define CPROF_VERSION		3
#define CPROF_VERSION_MIN	1	/* oldest version readers accept */

#define CPROF_MAX_DEPTH		127	/* frames per stack (kernel, user) */
#define CPROF_COMM_LEN		16
#define CPROF_BUILD_ID_MAX	20
#define CPROF_PATH_MAX		4096
#define CPROF_RELEASE_LEN	72	/* utsname release, NUL-padded */

/* The most ctl's freq= and seconds= take (cprof-dump's -F and -d too). */
#define CPROF_FREQ_MAX		100000	/* 10 us period */
#define CPROF_SECONDS_MAX	86400

/* Sampling modes (header.mode, ctl "mode="). */
enum cprof_mode {
	CPROF_MODE_BOTH		= 0,
	CPROF_MODE_USER		= 1,
	CPROF_MODE_KERNEL	= 2,
};

/*
 * What a profile records (header.kind, ctl "kind="): the ticks (cpu),
 * the times tasks leave the CPU and come back (offcpu: CPROF_REC_OFFCPU
 * and CPROF_REC_ONCPU, no ticks), or both (wall); or one pass over every
 * thread (threads: a CPROF_REC_THREAD each, no ticks, no duration); or
 * the creation of every task (threadcreate: a CPROF_REC_SAMPLE each, no
 * ticks; see struct cprof_sample); or every futex wake-up that ends a
 * wait (mutex: a CPROF_REC_SAMPLE of the waker each, with a struct
 * cprof_waketrail, no ticks); or a timeline of the scheduler (trace: a
 * CPROF_REC_SWITCH for every context switch, a CPROF_REC_WAKE for every
 * wake-up, and the stacks of the task leaving as a CPROF_REC_SAMPLE, no
 * ticks; see struct cprof_switch); or one process's allocations, sampled
 * by bytes (heap: a CPROF_REC_SAMPLE of each allocation sampled, with a
 * struct cprof_heaptrail, and a CPROF_REC_HEAPFREE when it is freed; no
 * ticks).
 */
enum cprof_kind {
	CPROF_KIND_CPU		= 0,
	CPROF_KIND_OFFCPU	= 1,
	CPROF_KIND_WALL		= 2,
	CPROF_KIND_THREADS	= 3,
	CPROF_KIND_THREADCREATE	= 4,
	CPROF_KIND_MUTEX	= 5,
	CPROF_KIND_TRACE	= 6,
	CPROF_KIND_HEAP		= 7,
	CPROF_KIND_MAX		= 7,
};

/* header.flags */
#define CPROF_HDR_IDLE		(1u << 0)	/* idle tasks were sampled */
#define CPROF_HDR_NO_KERNEL	(1u << 1)	/* kernel addresses withheld */

struct cprof_header {
	char	magic[CPROF_MAGIC_LEN];	/* CPROF_MAGIC */
	__u32	version;		/* CPROF_VERSION */
	__u32	size;			/* sizeof(struct cprof_header) or more */
	__u32	nr_cpu_ids;		/* every cpu number is below this */
	__u32	online_cpus;		/* CPUs online when the profile began */
	__u32	freq;			/* requested samples per second per CPU */
	__u32	depth;			/* max frames per stack */
	__u64	period_ns;		/* 1e9 / freq */
	__u64	start_realtime_ns;	/* CLOCK_REALTIME at start */
	/* the start: every recorder in place, nothing recorded before it */
	__u64	start_time_ns;		/* same instant on the sample clock */
	__u64	duration_ns;		/* requested duration, 0: none (seconds=0) */
	__u32	mode;			/* enum cprof_mode */
	__u32	pid;			/* tgid filter, 0 = all */
	__u32	flags;			/* CPROF_HDR_* */
	__u32	profile_id;		/* profiles since the module loaded */
	__u64	ksym_schedule;		/* runtime address of schedule() */
	char	release[CPROF_RELEASE_LEN]; /* kernel release, NUL-padded */
	/* from here on, absent (0, cpu) in a header of 160 bytes */
	__u32	kind;			/* enum cprof_kind */
	__u32	heap_rate;		/* kind heap: mean bytes a sample; else 0 */
};

enum cprof_rec_type {
	CPROF_REC_SAMPLE	= 1,
	CPROF_REC_MMAP		= 2,
	CPROF_REC_LOST		= 3,
	CPROF_REC_THROTTLE	= 4,
	CPROF_REC_END		= 5,
	CPROF_REC_USTACK	= 6,
	CPROF_REC_OFFCPU	= 7,
	CPROF_REC_ONCPU		= 8,
	CPROF_REC_THREAD	= 9,
	CPROF_REC_PYCODE	= 10,
	CPROF_REC_SWITCH	= 11,
	CPROF_REC_WAKE		= 12,
	CPROF_REC_HEAPFREE	= 13,
};

struct cprof_rec {
	__u16	type;			/* enum cprof_rec_type */
	__u16	flags;			/* per type */
	__u32	size;			/* whole record, multiple of 8 */
};

/* cprof_sample.rec.flags */
#define CPROF_SAMPLE_USER_MODE	(1u << 0)	/* tick interrupted user mode */
#define CPROF_SAMPLE_KTHREAD	(1u << 1)	/* kernel thread: no user side */
/* user walk stopped at depth, or at the event's accesses (ctl) */
#define CPROF_SAMPLE_USER_TRUNC	(1u << 2)
#define CPROF_SAMPLE_USER_FAULT	(1u << 3)	/* user walk hit a bad frame */
#define CPROF_SAMPLE_KERN_TRUNC	(1u << 4)	/* kernel walk stopped at depth */
#define CPROF_SAMPLE_IDLE	(1u << 5)	/* the idle task */
#define CPROF_SAMPLE_USER_EXACT	(1u << 6)	/* see below */
/* A user frame came from an unwind table; unset: frame pointers only. */
#define CPROF_SAMPLE_USER_TABLE	(1u << 7)
/* A __u64 cgroup id follows ips[]: see below. */
#define CPROF_SAMPLE_CGROUP	(1u << 8)
/*
 * The user walk reached code it had no table for: a CPROF_REC_USTACK of
 * this sample (same cpu, time_ns and tid) follows, before the next sample
 * of its CPU.
 */
#define CPROF_SAMPLE_USTACK	(1u << 9)
/*
 * Bits 10-15: how many whole periods after it was due the tick came (0 to
 * 63; later counts as 63): the CPU ran what it interrupted that long with
 * interrupts disabled, or did not run at all (a virtual CPU its host did
 * not run).  A wall profile weighs the sample by its period times 1 +
 * late; a CPU profile by its period.
 */
#define CPROF_SAMPLE_LATE_SHIFT	10
#define CPROF_SAMPLE_LATE_MAX	63
#define CPROF_SAMPLE_LATE(flags) \
	(((flags) >> CPROF_SAMPLE_LATE_SHIFT) & CPROF_SAMPLE_LATE_MAX)

/*
 * One tick.  ips[] holds nr_kernel kernel frames then nr_user user frames,
 * each innermost first.  The first kernel frame is the interrupted
 * instruction.  The first user frame is an instruction address when
 * CPROF_SAMPLE_USER_EXACT is set (the tick hit user mode, or the kernel was
 * entered by a fault or interrupt), else the return address of a system
 * call.  All other frames are return addresses.
 *
 * With CPROF_SAMPLE_CGROUP, ips[nr_kernel + nr_user] is the id of the task's
 * cgroup in the cgroup v2 hierarchy: the inode number of its directory
 * there (stat(2)'s st_ino, name_to_handle_at(2)'s handle); 1 is the root.
 *
 * Version 3: where the record's size leaves room after that (the cgroup
 * id, or the frames without it), a struct cprof_pytrail follows: the
 * thread's Python frames.
 *
 * In a profile of kind threadcreate a sample is no tick but one task
 * created (a thread, a process, a kernel thread), of the creating thread:
 * its stacks at the creation, in its context (the kernel stack from the
 * task_newtask tracepoint in copy_process() out, the user stack from the
 * system call), nothing after the cgroup id.  Every creation in the
 * profile's time is a sample or counted lost (LOST's samples).
 *
 * In a profile of kind mutex a sample is one futex wait ended: of the
 * thread that woke the waiter from a futex system call of its own (the
 * unlocker), its stacks at the wake-up (the kernel stack from the
 * sched_waking tracepoint in try_to_wake_up() out, the user stack from
 * the system call), then, after the cgroup id, a struct cprof_waketrail:
 * the waiter and how long it waited.
 *
 * In a profile of kind trace a sample is the stacks of a task leaving the
 * CPU (the kernel stack from the sched_switch tracepoint in __schedule()
 * out, the user stack from the system call or the interrupted
 * instruction), right after its CPROF_REC_SWITCH in the CPU's part of the
 * stream: same cpu, time_ns and tid (the switch's prev_tid).  Nothing
 * after the cgroup id.  A switch whose stacks were not recorded (the idle
 * task's, an exiting one's) has none; one whose stacks were left out to
 * spare the ring or ctl's budget says so in its flags
 * (CPROF_SWITCH_NOSTACK_*), which are no lost samples; a sample that
 * finds the ring full is LOST's.
 *
 * In a profile of kind heap a sample is one allocation of the profiled
 * process sampled by bytes (malloc, calloc, realloc, posix_memalign of
 * glibc), of the allocating thread at its return from the allocator: no
 * kernel stack, the user stack from the allocator's caller; then, after
 * the cgroup id, a struct cprof_heaptrail: its size and id.
 */
struct cprof_sample {
	struct cprof_rec rec;		/* CPROF_REC_SAMPLE */
	__u64	time_ns;		/* sample clock (CLOCK_MONOTONIC) */
	__u32	pid;			/* tgid */
	__u32	tid;
	__u32	cpu;
	__u16	nr_kernel;
	__u16	nr_user;
	char	comm[CPROF_COMM_LEN];	/* NUL-terminated */
	__u64	ips[];
};

/*
 * The Python frames of a sample's thread (version 3), after its frames
 * and cgroup id: written when the user walk met the code of a file whose
 * unwind table describes a CPython interpreter (CPROF_UTABLE_PY) and the
 * sample is a tick's.  frame[] holds nr frames, innermost first, read from
 * the thread's chain of interpreter frames at the tick; status says why
 * the walk ended (with nr 0 too: no thread state found, a failed read).
 * text is the start of the interpreter's executable mapping that the user
 * walk met (an MMAP record of the sample's pid covers it): userland reads
 * the code objects through that file's layout.
 */
struct cprof_pyframe {
	/*
	 * The code object's address (8-byte aligned), with
	 * CPROF_PYFRAME_ENTRY in bit 0: the frame is the outermost of one C
	 * call of the interpreter loop (_PyEval_EvalFrameDefault): the
	 * frames up to and including it are that call's, the next ones its
	 * caller's.
	 */
	__u64	code;
	/*
	 * Its instruction: code units (2 bytes) from the code's first, the
	 * last one started (3.11, 3.12: -1 before the first) or the next
	 * (3.13); -1 also when the frame's pointer was out of the code's
	 * range (read while it changed).
	 */
	__s32	instr;
	__s32	firstlineno;		/* co_firstlineno as the tick read it */
};

struct cprof_pytrail {
	__u16	type;			/* CPROF_TRAIL_PYTHON */
	__u16	nr;			/* frames in frame[] */
	__u16	status;			/* enum cprof_py_status */
	__u16	reserved;
	__u64	text;			/* the interpreter's mapping's start */
	struct cprof_pyframe frame[];
};

#define CPROF_TRAIL_PYTHON	1
#define CPROF_TRAIL_WAKE	2

/*
 * The thread a sample of kind mutex woke (version 3), after its frames
 * and cgroup id, the record's last bytes: the waiter's ids and name, and
 * delay_ns, from the moment it went to sleep in a futex system call to
 * the wake-up (sample clock).
 */
struct cprof_waketrail {
	__u16	type;			/* CPROF_TRAIL_WAKE */
	__u16	reserved;
	__u32	pid;			/* the waiter's tgid */
	__u32	tid;
	__u32	reserved2;
	__u64	delay_ns;
	char	comm[CPROF_COMM_LEN];	/* NUL-terminated */
};

/*
 * An allocation a sample of kind heap stands for, after its frames and
 * cgroup id, the record's last bytes: the bytes asked for, and an id,
 * unique in the stream, that a CPROF_REC_HEAPFREE names when the module
 * sees it freed.
 */
struct cprof_heaptrail {
	__u16	type;			/* CPROF_TRAIL_HEAP */
	__u16	reserved;
	__u32	reserved2;
	__u64	size;
	__u64	id;
};

#define CPROF_TRAIL_HEAP	3

/*
 * An allocation sampled in a profile of kind heap was freed (free,
 * realloc), in the profile's time: the id of its sample.  Its sample may
 * come after it in the stream (another CPU's buffer).
 */
struct cprof_heapfree {
	struct cprof_rec rec;		/* CPROF_REC_HEAPFREE */
	__u64	time_ns;
	__u64	id;
};

#define CPROF_PYFRAME_ENTRY	1ull

/* Why a Python walk ended (cprof_pytrail.status). */
enum cprof_py_status {
	CPROF_PY_COMPLETE	= 0,	/* at the thread's outermost frame */
	/* at the depth, the record's room or the tick's accesses (ctl) */
	CPROF_PY_DEPTH		= 1,
	/* a read failed: not resident, a bad pointer, the chain changing */
	CPROF_PY_FAULT		= 2,
	CPROF_PY_NOT_CODE	= 3,	/* a frame's code was no code object */
	/*
	 * no thread state of the thread: one the interpreter does not know,
	 * or past the threads looked at
	 */
	CPROF_PY_NO_THREAD	= 4,
	CPROF_PY_MAX		= 4,
};

/*
 * A Python code object of process pid, as a tick found it among a sample's
 * Python frames (code and firstlineno as in struct cprof_pyframe): the
 * first time in the stream on that CPU (another CPU, or the same one much
 * later, may repeat it), so that its frames can be named after the
 * process is gone.  data[] holds the leading bytes of three objects as
 * the process's memory held them at the tick: the code's co_qualname (a
 * str), its co_filename (a str) and its co_linetable (a bytes),
 * qualname_len, filename_len and linetable_len bytes, in that order, then
 * padding to 8 bytes.  A str's are its header and characters: 72 bytes
 * and its length (at byte 16) times its bytes a character (bits 2-4 of the
 * word at byte 32), at most CPROF_PYSTR_MAX; the bytes' are its header
 * and data (its size at byte 16, its data from byte 32), at most
 * CPROF_PYLINES_MAX: as CPython 3.11 to 3.13 lay them out on 64-bit; cut
 * there, or where readable memory ends.  A length of 0: that object could
 * not be read.  The objects' layouts are the
 * interpreter's (userland finds them from its file, as the code's).
 */
struct cprof_pycode {
	struct cprof_rec rec;		/* CPROF_REC_PYCODE */
	__u64	time_ns;		/* of the sample */
	__u32	pid;			/* tgid */
	__s32	firstlineno;
	__u64	code;			/* CPROF_PYFRAME_ENTRY not set */
	__u32	version;		/* the interpreter's PY_VERSION_HEX */
	__u32	reserved;
	__u16	qualname_len;
	__u16	filename_len;
	__u16	linetable_len;
	__u16	reserved2;
	__u8	data[];
};

#define CPROF_PYSTR_MAX		512
#define CPROF_PYLINES_MAX	4096

/*
 * An executable mapping of process pid, emitted the first time a sampled user
 * address of that address space is not covered by mappings already emitted
 * in this stream (and again after exec).  Later records for the same range
 * supersede earlier ones from time_ns on.
 */
struct cprof_mmap {
	struct cprof_rec rec;		/* CPROF_REC_MMAP */
	__u64	time_ns;
	__u32	pid;
	__u32	uid;			/* CPROF_MMAP_UID: the process's euid */
	__u64	start;			/* first byte */
	__u64	end;			/* one past the last byte */
	__u64	pgoff;			/* file offset of start, in bytes */
	__u8	build_id[CPROF_BUILD_ID_MAX];
	__u8	build_id_size;		/* 0: unknown */
	__u8	pad[3];
	char	path[];			/* NUL-terminated, "[vdso]" etc. */
};

/* cprof_mmap.path of anonymous executable memory (JIT code, trampolines) */
#define CPROF_ANON_NAME		"[anon]"

/* cprof_mmap.rec.flags */
#define CPROF_MMAP_FILE_ID	(1u << 0)	/* a cprof_file_id ends it */
/*
 * uid is the mapping process's effective uid (initial user namespace) when
 * the mappings were listed: a reader trusts files the process wrote, such
 * as a JIT's /tmp/perf-PID.map, only if that user or root owns them.
 */
#define CPROF_MMAP_UID		(1u << 1)

/*
 * The mapped file as statx() describes it, and the process that maps it,
 * the last 32 bytes of a CPROF_REC_MMAP whose CPROF_MMAP_FILE_ID is set
 * (the path's NUL comes before it).  A reader tells by it whether the file
 * at the record's path, or the one it reads through the process, is the
 * very file mapped: a process in another mount namespace has other files
 * at the same paths, a file system may give a freed inode number to the
 * next file it creates (which has another birth time: nobody can set it;
 * unlike the ctime, unlinking or renaming the file does not change it),
 * and a pid may be another process's by then (which started at another
 * time).  Unset for no file, or when the kernel could not stat it.
 */
struct cprof_file_id {
	__u64	ino;
	__s64	btime_ns;		/* stx_btime; 0: the file system has none */
	__u64	start_ns;		/* the process's start, CLOCK_BOOTTIME */
	__u32	dev;			/* st_dev: new_encode_dev() */
	__u32	fs_magic;		/* the mapped file's own file system's */
};

/*
 * A copy of the user stack of one sample, from the frame where its walk
 * reached code no unwind table covered yet (a program or library that
 * started during the profile, before userland compiled its table, or whose
 * mappings the reader had not listed yet), so that the reader can walk
 * it again with the tables it compiles meanwhile.  The module copies only
 * while a table loader has /proc/cprof/unwind open for writing and some
 * table is loaded; only where the process's mappings are not listed yet
 * or do not cover the frame's code, in its first second in the profile,
 * or, while userland compiles or loads tables (CPROF_UTABLE_BUSY), in its
 * first 30 s; and only where the sample and its copy leave half the CPU's
 * buffer free.
 *
 * frame indexes the sample's user frames: ips[nr_kernel + frame] is the
 * frame's ip (an instruction when frame is 0 and the sample's
 * CPROF_SAMPLE_USER_EXACT is set, else a return address).  regs[] are
 * DWARF's x86-64 registers 0 (rax) ... 15 (r15) at that frame: with
 * CPROF_USTACK_REGS all of them, the interrupted ones, else only rbp
 * (regs[6]) and rsp (regs[7]) are known (the others are 0).  data[] holds
 * size bytes of user memory from rsp up.  A page not in memory at the
 * tick (a part of a frame not written yet, which would fault in as zeros;
 * or swapped out, or made inaccessible for a moment by the kernel) is read
 * as zeros below the last page that was, and named in holes: bit i for
 * the i-th page of data[], counted from rsp's page (bit 0: the bytes from
 * rsp to the end of its page, of CPROF_USTACK_PAGE bytes).  Its words are
 * not the stack's: a walk that needs one stops there.  More than
 * CPROF_USTACK_HOLE_PAGES pages in a row not there (the top of the stack)
 * end data[] at the last page that was, fewer bytes than asked.
 */
struct cprof_ustack {
	struct cprof_rec rec;		/* CPROF_REC_USTACK */
	__u64	time_ns;		/* its sample's */
	__u32	tid;			/* its sample's */
	__u32	cpu;			/* its sample's */
	__u16	frame;			/* < its sample's nr_user */
	__u16	holes;			/* data[]'s pages read as zeros */
	__u32	size;			/* bytes in data[] */
	__u64	regs[16];
	__u8	data[];
};

/* cprof_ustack.rec.flags */
#define CPROF_USTACK_REGS	(1u << 0)	/* every regs[] is known */

/* The most bytes of stack one CPROF_REC_USTACK holds (ctl's ustack). */
#define CPROF_USTACK_MAX	32768
/* The pages of cprof_ustack.holes; at most 9 in CPROF_USTACK_MAX bytes. */
#define CPROF_USTACK_PAGE	4096
/* Pages in a row not in memory that end a copy. */
#define CPROF_USTACK_HOLE_PAGES	4

/*
 * A task left the CPU (kind offcpu or wall): its stacks as it left, from
 * the scheduler's sched_switch tracepoint, in the task's own context.  The
 * fields and ips[] are a sample's (struct cprof_sample, its flags
 * CPROF_SAMPLE_*; the kernel stack starts at the scheduler, the user stack
 * at the system call or the interrupted instruction; at most ctl's
 * offcpu_depth frames each); time_ns is when it left.  Only some switches
 * are recorded, each standing for every of them (every >= 1: the module
 * records one in every switches of that CPU,
 * at random, more often than not 1; more to keep the scheduler's cost in
 * budget).  Its CPROF_REC_ONCPU, of the same tid and out_ns == time_ns,
 * comes when the task next runs, maybe on another CPU, so maybe before it
 * in the stream; none if the profile ended first (the task was still off
 * the CPU) or the record was lost (LOST's other).
 */
struct cprof_offcpu {
	struct cprof_rec rec;		/* CPROF_REC_OFFCPU */
	__u64	time_ns;		/* when it left the CPU */
	__u32	pid;			/* tgid */
	__u32	tid;
	__u32	cpu;
	__u16	nr_kernel;
	__u16	nr_user;
	char	comm[CPROF_COMM_LEN];	/* NUL-terminated */
	__u32	every;			/* switches it stands for, >= 1 */
	__u16	state;			/* enum cprof_off_state */
	__u16	reserved;
	__u64	ips[];
};

/* Why a task left the CPU (cprof_offcpu.state). */
enum cprof_off_state {
	CPROF_OFF_PREEMPTED	= 0,	/* still runnable: preempted, yielded */
	CPROF_OFF_SLEEPING	= 1,	/* interruptible sleep (S) */
	CPROF_OFF_DISK		= 2,	/* uninterruptible sleep (D) */
	CPROF_OFF_STOPPED	= 3,	/* stopped or traced (T, t) */
	CPROF_OFF_OTHER		= 4,	/* parked, a lock of PREEMPT_RT, ... */
	CPROF_OFF_MAX		= 4,
	/* cprof_thread.state only */
	CPROF_OFF_RUNNING	= 5,	/* on a CPU when looked at */
	CPROF_THREAD_STATE_MAX	= 5,
};

/*
 * One thread as a snapshot (kind threads) found it, each thread once, in
 * the order of their tids.  The fields and ips[] are a sample's (struct
 * cprof_sample, its flags CPROF_SAMPLE_*; a stack copy may follow, as a
 * sample's).  A thread off the CPU: its kernel stack from where it
 * switched out, its user stack from the registers it saved entering the
 * kernel; one on a CPU (CPROF_OFF_RUNNING): both from where an interrupt
 * found it.  off_ns: how long it has been off the CPU (since the
 * scheduler last accounted its run; 0 when running).  cpu: where it runs
 * or last ran.  CPROF_THREAD_MOVED: it ran while it was looked at, three
 * times over, so its stacks may mix two moments; CPROF_THREAD_NOT_SELECTED,
 * CPROF_THREAD_ISOLATED: why a running thread has no stacks.
 */
struct cprof_thread {
	struct cprof_rec rec;		/* CPROF_REC_THREAD */
	__u64	time_ns;		/* when it was looked at */
	__u32	pid;			/* tgid */
	__u32	tid;
	__u32	cpu;
	__u16	nr_kernel;
	__u16	nr_user;
	char	comm[CPROF_COMM_LEN];	/* NUL-terminated */
	__u64	off_ns;
	__u16	state;			/* enum cprof_off_state */
	__u16	reserved;
	__u32	reserved2;
	__u64	ips[];
};

#define CPROF_THREAD_MOVED	(1u << 10)	/* cprof_thread.rec.flags */
/*
 * Running on a CPU the snapshot does not interrupt, so recorded without
 * stacks (nr_kernel and nr_user 0): one outside ctl's cpus=, or one
 * isolated from the kernel's own work (isolcpus=, nohz_full=, an isolated
 * cpuset partition).
 */
#define CPROF_THREAD_NOT_SELECTED	(1u << 11)
#define CPROF_THREAD_ISOLATED		(1u << 12)

/* A task recorded leaving the CPU (CPROF_REC_OFFCPU) runs again. */
struct cprof_oncpu {
	struct cprof_rec rec;		/* CPROF_REC_ONCPU */
	__u64	time_ns;		/* when it came back */
	__u64	out_ns;			/* its CPROF_REC_OFFCPU's time_ns */
	__u32	tid;
	__u32	cpu;			/* where it came back */
};

/*
 * One context switch (kind trace), from the sched_switch tracepoint, on
 * cpu: prev left it at time_ns, next runs on it from then on.  A tid of 0
 * is the CPU's idle task.  prev_state: why prev left (enum
 * cprof_off_state: preempted, or the sleep it went into).  Every switch of
 * a CPU the profile takes is one, or LOST's other (the ring full): with
 * pid=, those where prev or next is of that process.  The stacks of prev
 * (not the idle task) follow as a CPROF_REC_SAMPLE when recorded.
 */
struct cprof_switch {
	struct cprof_rec rec;		/* CPROF_REC_SWITCH */
	__u64	time_ns;
	__u32	cpu;
	__u32	prev_pid;		/* tgid */
	__u32	prev_tid;
	__u32	next_pid;		/* tgid */
	__u32	next_tid;
	__u16	prev_state;		/* enum cprof_off_state */
	__u16	reserved;
	char	prev_comm[CPROF_COMM_LEN];	/* NUL-terminated */
	char	next_comm[CPROF_COMM_LEN];	/* NUL-terminated */
};

/*
 * One wake-up (kind trace), from the sched_waking tracepoint (a new task's
 * first from sched_wakeup_new, CPROF_WAKE_NEW): on cpu, at
 * time_ns, the waker (the task running there: with CPROF_WAKE_IRQ, the one
 * an interrupt handler that woke the task interrupted) made the wakee
 * runnable; target_cpu is where the wakee last ran, as the tracepoint's
 * own target_cpu (the scheduler may pick another: its CPROF_REC_SWITCH
 * says where it ran).  Every wake-up on a CPU the profile takes, or of a
 * task last run on one (target_cpu), is one, or LOST's other: with pid=,
 * those where the waker or the wakee is of that process (the wakee only
 * with CPROF_WAKE_IRQ).
 */
struct cprof_wake {
	struct cprof_rec rec;		/* CPROF_REC_WAKE */
	__u64	time_ns;
	__u32	cpu;
	__u32	target_cpu;
	__u32	waker_pid;		/* tgid */
	__u32	waker_tid;
	__u32	wakee_pid;		/* tgid */
	__u32	wakee_tid;
	char	waker_comm[CPROF_COMM_LEN];	/* NUL-terminated */
	char	wakee_comm[CPROF_COMM_LEN];	/* NUL-terminated */
};

/*
 * cprof_switch.rec.flags: prev's stacks were not walked, its CPU past
 * ctl's budget of time in the probes, or its ring half full (the switches and
 * wake-ups keep the other half)
 */
#define CPROF_SWITCH_NOSTACK_BUDGET	(1u << 0)
#define CPROF_SWITCH_NOSTACK_RING	(1u << 1)

/* cprof_wake.rec.flags: woken from an interrupt, not by the task */
#define CPROF_WAKE_IRQ		(1u << 0)
/* cprof_wake.rec.flags: a new task's first (sched_wakeup_new) */
#define CPROF_WAKE_NEW		(1u << 1)

/* Records lost on one CPU because its buffer was full. */
struct cprof_lost {
	struct cprof_rec rec;		/* CPROF_REC_LOST */
	__u64	time_ns;		/* first loss */
	__u32	cpu;
	__u32	reserved;
	__u64	samples;		/* samples lost since the last report */
	__u64	other;			/* other records lost (off-CPU, switch...) */
};

/*
 * The effective sampling period of one CPU changed (self-throttle engaged or
 * released) from time_ns on.  Samples on that CPU weigh period_ns.
 */
struct cprof_throttle {
	struct cprof_rec rec;		/* CPROF_REC_THROTTLE */
	__u64	time_ns;
	__u32	cpu;
	__u32	reserved;
	__u64	period_ns;
};

enum cprof_end_reason {
	/* requested duration elapsed; never with seconds=0 (no duration) */
	CPROF_END_COMPLETE	= 0,
	CPROF_END_SIGNAL	= 1,	/* reader interrupted by a signal */
	CPROF_END_UNLOAD	= 2,	/* module unloading */
	CPROF_END_STOP		= 3,	/* "stop=1" written to ctl */
};

struct cprof_end {
	struct cprof_rec rec;		/* CPROF_REC_END */
	__u64	time_ns;
	__u64	duration_ns;		/* actual profiling time */
	__u32	reason;			/* enum cprof_end_reason */
	__u32	reserved;
	__u64	samples;		/* samples written to this stream */
	__u64	lost;			/* samples lost, all CPUs */
};

/*
 * Unwind tables: written to /proc/cprof/unwind, one table per write(), so the
 * tick can walk user code that keeps no frame pointers.  Userland compiles
 * a file's call frame information (.eh_frame, .debug_frame) into rows; the
 * module keeps them keyed by the file as stat() describes it (device,
 * inode, and size and mtime: a file rewritten in place or a recycled inode
 * number is another file, whose frames the table does not describe), and
 * looks up a frame's row by its offset in that file (address - mapping
 * start + mapping offset).
 *
 * A table is struct cprof_utable, then struct cprof_urow rule[nr_rules]
 * (each distinct rule once: a file of a million rows has a few hundred),
 * then __u32 pc[nr_rows] (file offsets, strictly increasing), then __u16
 * rule_of[nr_rows] (indexes into rule[]).  Row i, rule[rule_of[i]], holds
 * from pc[i] up to pc[i + 1]; the last row's rule must be CPROF_CFA_NONE.
 * A table with nr_rows 0 (and nr_rules 0) removes the file's table; a
 * table for a file that has one replaces it.
 */
#define CPROF_UTABLE_MAGIC	0x32545543	/* "CUT2" little-endian */
#define CPROF_UTABLE_ROWS_MAX	(1u << 24)
#define CPROF_UTABLE_RULES_MAX	(1u << 16)

struct cprof_utable {
	__u32	magic;			/* CPROF_UTABLE_MAGIC */
	__u32	size;			/* sizeof(struct cprof_utable) */
	__u64	ino;			/* st_ino */
	__u32	dev;			/* st_dev: makedev(major, minor) */
	__u32	nr_rows;
	__u64	file_size;		/* st_size */
	__s64	mtime_ns;		/* st_mtim, in ns */
	__u32	flags;			/* CPROF_UTABLE_* */
	__u32	nr_rules;		/* 1 ... CPROF_UTABLE_RULES_MAX */
};

/*
 * The vDSO is no file, yet its code has call frame information and
 * frameless leaves (clock_gettime()): its table is keyed by device
 * makedev(4095, 0) (no block device has that major), inode 1, the size of
 * its mapping and mtime 0, and its offsets are addresses in its image,
 * which the kernel maps whole.  Userland makes it from its own vDSO: every
 * 64-bit process of a kernel maps the same one.
 */
#define CPROF_UTABLE_VDSO_DEV	0xfff00u
#define CPROF_UTABLE_VDSO_INO	1

/*
 * Every function of the file that calls keeps the frame-pointer chain (it
 * sets up rbp, or it is a leaf): past a stack's first frame the module
 * walks the file's code by frame pointers, the table's rows serving the
 * first frame (a frameless leaf) only.
 */
#define CPROF_UTABLE_FP		(1u << 0)

/*
 * Not a table: a header alone (nr_rows and nr_rules 0, dev and ino
 * ignored) saying that userland is compiling tables now or reading them
 * from its cache (BUSY), or no longer (IDLE).  While it is, the module
 * copies the stacks of a young address space's samples whose walk meets
 * a file without a table (CPROF_REC_USTACK): that file's table may be the
 * one on its way, or queued behind it.  A BUSY lasts a minute at most (a loader that died).
 */
#define CPROF_UTABLE_BUSY	(1u << 2)
#define CPROF_UTABLE_IDLE	(1u << 3)

/*
 * The file is a CPython interpreter (the executable or libpython that
 * defines _PyRuntime): a struct cprof_upy follows the header, before
 * rule[], and a tick whose user walk meets the file's code reads the
 * thread's Python frames (struct cprof_pytrail).
 */
#define CPROF_UTABLE_PY		(1u << 4)

/*
 * Where a CPython interpreter keeps a thread's frames.  Addresses are in
 * the file's offset space: one is at the start of the file's executable
 * mapping, less that mapping's file offset, plus the value (a symbol's
 * value less the executable segment's p_vaddr - p_offset).  Versions 3.11
 * to 3.13.  Offsets are
 * bytes in the structures named; CPROF_UPY_NONE: the version has no
 * such field.  The walk, for the thread whose tid (in its pid namespace)
 * is T:
 *
 *   thread state: _PyRuntime + tstate_current (3.11: the GIL's holder),
 *     or PyInterpreterState (at _PyRuntime + interp_head) + interp_gil ->
 *     the GIL + gil_holder (3.12+: its last holder), if its
 *     + ts_native_tid == T; else the interpreters' lists of thread states:
 *     _PyRuntime + interp_head -> interpreter (+ interp_next ...)
 *     + threads_head -> thread state (+ ts_next ...) with + ts_native_tid
 *     == T
 *   its frame: + ts_cframe -> + cframe_current -> frame (3.11, 3.12), or
 *     + ts_frame -> frame (3.13+)
 *   each frame (_PyInterpreterFrame): + fr_code -> code object, whose
 *     type (+ 8) must be PyCode_Type; + fr_instr -> its instruction,
 *     from the code's + code_adaptive; + fr_previous -> the caller's frame;
 *     + fr_owner == CPROF_UPY_OWNED_BY_CSTACK: an entry frame of one C call
 *     of the loop, no function (3.12+); + fr_is_entry != 0: the outermost
 *     frame of one C call (3.11)
 */
struct cprof_upy {
	__u64	runtime;		/* &_PyRuntime */
	__u64	code_type;		/* &PyCode_Type */
	__u32	version;		/* PY_VERSION_HEX */
	__u16	tstate_current, interp_gil, gil_holder;
	__u16	interp_head, interp_next, threads_head;
	__u16	ts_next, ts_native_tid, ts_cframe, ts_frame, cframe_current;
	__u16	fr_code, fr_previous, fr_instr, fr_owner, fr_is_entry;
	__u16	code_firstlineno, code_adaptive;
	/* for CPROF_REC_PYCODE; CPROF_UPY_NONE: none written */
	__u16	code_qualname, code_filename, code_linetable;
	__u16	reserved;
};

#define CPROF_UPY_NONE			0xffff
#define CPROF_UPY_OWNED_BY_CSTACK	3

/* How to find the canonical frame address (CFA) at an instruction. */
enum cprof_cfa_base {
	CPROF_CFA_NONE	= 0,	/* no information: walk frame pointers */
	CPROF_CFA_SP	= 1,	/* CFA = sp + cfa_off */
	CPROF_CFA_FP	= 2,	/* CFA = rbp + cfa_off */
	CPROF_CFA_PLT	= 3,	/* PLT entry: sp + 8, + 8 if (ip & 15) >= 11 */
	CPROF_CFA_END	= 4,	/* outermost frame (return address undefined) */
	CPROF_CFA_STOP	= 5,	/* a rule the tick does not follow: stop */
	CPROF_CFA_SP_DEREF = 6,	/* CFA = *(sp + lo) + hi */
	CPROF_CFA_FP_DEREF = 7,	/* CFA = *(rbp + lo) + hi */
	CPROF_CFA_REG	= 8,	/* CFA = DWARF register hi + lo: first frame */
	CPROF_CFA_MAX	= 8,
};

/*
 * The rows whose CFA takes two numbers hold them in cfa_off, lo in its low
 * half and hi in its high half, each a signed 16-bit number:
 *  - *_DEREF: a function that realigned its stack saved the CFA in its
 *    frame: the word at sp or rbp + lo, plus hi (gcc's DRAP: *(rbp - 8);
 *    OpenSSL's assembly: *(rsp + N) + M);
 *  - CPROF_CFA_REG: another register (0 rax ... 15 r15, DWARF's numbers)
 *    plus lo, in prologues and in assembly that keeps the entry stack
 *    pointer in a register.  Only the interrupted frame's registers are
 *    known: in any other frame the row is no information.
 */
#define CPROF_CFA_PAIR(lo, hi) \
	((__s32)(((__u32)(__u16)(__s16)(hi) << 16) | (__u16)(__s16)(lo)))
#define CPROF_CFA_LO(off)	((__s16)((__u32)(off) & 0xffff))
#define CPROF_CFA_HI(off)	((__s16)((__u32)(off) >> 16))

/* Where the caller's rbp is (fp_rule). */
enum cprof_fp_rule {
	CPROF_FP_SAME	= 0,	/* unchanged */
	CPROF_FP_AT	= 1,	/* saved at CFA + fp_off */
	CPROF_FP_AT_FP	= 2,	/* saved at rbp + fp_off (gcc's DRAP) */
	CPROF_FP_MAX	= 2,
};

/*
 * A rule.  The return address is always at CFA - 8 (x86-64).  A frame's
 * caller has sp = CFA.
 */
struct cprof_urow {
	__u8	cfa_base;		/* enum cprof_cfa_base */
	__u8	fp_rule;		/* enum cprof_fp_rule */
	__s16	fp_off;
	__s32	cfa_off;
};

#define CPROF_ALIGN(x)	(((x) + 7) & ~(__u64)7)

#endif /* CPROF_FORMAT_H */
