// SPDX-License-Identifier: GPL-2.0
/*
 * Python frames from the tick.
 *
 * A CPython interpreter (3.11 and later) keeps each thread's Python calls
 * as a chain of interpreter frames in the process's memory.  When the user
 * walk meets the code of a file whose unwind table carries that
 * interpreter's layout (struct cprof_upy, utable.c), the tick finds the
 * interrupted thread's state (the GIL's holder, else the interpreters'
 * thread lists) and appends its chain to the sample (struct cprof_pytrail):
 * per frame the code object's address, the instruction's index and the
 * code's first line.  Nothing is named here (pycode.c, userland).  The
 * reads are the user walk's: fault-free, within access_ok() and the tick's
 * accesses; a chain that lies or changes ends the walk, the record says
 * why.  Why: docs/design.md, "Python frames: the tick's walk".
 */
#include <linux/pid.h>
#include <linux/sched.h>
#include <linux/uaccess.h>

#include "pywalk.h"

#define CPROF_PY_INTERPS	4	/* interpreters looked at */
#define CPROF_PY_THREADS	64	/* thread states looked at, in all */

/* The most code units a code object is taken to have. */
#define CPROF_PY_INSTR_MAX	BIT(24)

/* A pointer field: the word at @base + @off, if @base is not NULL. */
static bool cprof_py_ptr(struct cprof_uaccess *acc, unsigned long base,
			 u16 off, unsigned long *val)
{
	return base && cprof_unwind_read_word(acc, base + off, val);
}

/*
 * The thread state of the thread whose tid is @tid into @found: 0, or
 * CPROF_PY_NO_THREAD (none found, or a list that could not be read).
 */
static int cprof_py_thread(const struct cprof_upy *py,
			   struct cprof_uaccess *acc, unsigned long runtime,
			   unsigned long tid, unsigned long *found)
{
	unsigned long interp, ts = 0, gil, id;
	int i, n = 0;

	/* the GIL's holder: the thread running Python code */
	if (py->tstate_current != CPROF_UPY_NONE) {
		cprof_py_ptr(acc, runtime, py->tstate_current, &ts);
	} else if (py->interp_gil != CPROF_UPY_NONE &&
		   cprof_py_ptr(acc, runtime, py->interp_head, &interp) &&
		   cprof_py_ptr(acc, interp, py->interp_gil, &gil)) {
		cprof_py_ptr(acc, gil, py->gil_holder, &ts);
	}
	if (cprof_py_ptr(acc, ts, py->ts_native_tid, &id) && id == tid)
		goto found;
	if (!cprof_py_ptr(acc, runtime, py->interp_head, &interp))
		return CPROF_PY_NO_THREAD;
	for (i = 0; interp && i < CPROF_PY_INTERPS; i++) {
		if (!cprof_py_ptr(acc, interp, py->threads_head, &ts))
			return CPROF_PY_NO_THREAD;
		for (; ts && n < CPROF_PY_THREADS; n++) {
			if (!cprof_py_ptr(acc, ts, py->ts_native_tid, &id))
				return CPROF_PY_NO_THREAD;
			if (id == tid)
				goto found;
			if (!cprof_py_ptr(acc, ts, py->ts_next, &ts))
				return CPROF_PY_NO_THREAD;
		}
		if (!cprof_py_ptr(acc, interp, py->interp_next, &interp))
			return CPROF_PY_NO_THREAD;
	}
	return CPROF_PY_NO_THREAD;
found:
	*found = ts;
	return 0;
}

/* What the walk reads of one interpreter frame. */
struct cprof_py_frame {
	unsigned long code;
	unsigned long previous;
	unsigned long instr;
	u8 owner;
	u8 is_entry;
};

/* The frame at @at, its fields in one user access window. */
static bool cprof_py_read_frame(const struct cprof_upy *py,
				struct cprof_uaccess *acc, unsigned long at,
				unsigned long span, struct cprof_py_frame *f)
{
	const char __user *p = (const void __user *)at;

	if (!at || !cprof_uaccess_take(acc, 1) || !user_access_begin(p, span))
		return false;
	unsafe_get_user(f->code, (const unsigned long __user *)(p + py->fr_code),
			fault);
	unsafe_get_user(f->previous,
			(const unsigned long __user *)(p + py->fr_previous),
			fault);
	unsafe_get_user(f->instr,
			(const unsigned long __user *)(p + py->fr_instr), fault);
	if (py->fr_owner != CPROF_UPY_NONE)
		unsafe_get_user(f->owner, (const u8 __user *)(p + py->fr_owner),
				fault);
	if (py->fr_is_entry != CPROF_UPY_NONE)
		unsafe_get_user(f->is_entry,
				(const u8 __user *)(p + py->fr_is_entry), fault);
	user_access_end();
	return true;
fault:
	user_access_end();
	return false;
}

/* A code object's type and first line, in one user access window. */
static bool cprof_py_read_code(const struct cprof_upy *py,
			       struct cprof_uaccess *acc, unsigned long code,
			       unsigned long *type, s32 *firstlineno)
{
	const char __user *p = (const void __user *)code;
	unsigned long span = max_t(unsigned long, 2 * sizeof(long),
				   py->code_firstlineno + sizeof(s32));

	if (!cprof_uaccess_take(acc, 1) || !user_access_begin(p, span))
		return false;
	unsafe_get_user(*type, (const unsigned long __user *)(p + sizeof(long)),
			fault);
	unsafe_get_user(*firstlineno,
			(const s32 __user *)(p + py->code_firstlineno), fault);
	user_access_end();
	return true;
fault:
	user_access_end();
	return false;
}

/* The bytes from a frame's start that hold every field the walk reads. */
static unsigned long cprof_py_frame_span(const struct cprof_upy *py)
{
	unsigned long span = max3(py->fr_code, py->fr_previous, py->fr_instr) +
			     sizeof(long);

	if (py->fr_owner != CPROF_UPY_NONE)
		span = max(span, py->fr_owner + 1UL);
	if (py->fr_is_entry != CPROF_UPY_NONE)
		span = max(span, py->fr_is_entry + 1UL);
	return span;
}

/* The thread's innermost frame into @frame (0: none); false: unreadable. */
static bool cprof_py_first_frame(const struct cprof_upy *py,
				 struct cprof_uaccess *acc, unsigned long ts,
				 unsigned long *frame)
{
	unsigned long cframe;

	if (py->ts_frame != CPROF_UPY_NONE)
		return cprof_py_ptr(acc, ts, py->ts_frame, frame);
	return cprof_py_ptr(acc, ts, py->ts_cframe, &cframe) &&
	       cprof_py_ptr(acc, cframe, py->cframe_current, frame);
}

/*
 * The frames of the chain from @at into @t->frame[], at most @max; the
 * status.  A C-stack entry frame (3.12+) is no function: it marks the
 * frame recorded before it as the outermost of its call of the loop, as
 * 3.11's is_entry marks a frame itself.
 */
static enum cprof_py_status cprof_py_chain(const struct cprof_upy *py,
					   struct cprof_uaccess *acc,
					   unsigned long base,
					   unsigned long at,
					   struct cprof_pytrail *t, int max)
{
	unsigned long span = cprof_py_frame_span(py), type;
	unsigned long code_type = base + py->code_type;
	struct cprof_py_frame f = { };
	int steps;
	s32 first;
	long idx;

	/* entry frames take steps too: as many again */
	for (steps = 0; at; at = f.previous) {
		if (steps++ == 2 * max)
			return CPROF_PY_DEPTH;
		if (!cprof_py_read_frame(py, acc, at, span, &f) ||
		    f.previous == at)
			return CPROF_PY_FAULT;
		if (py->fr_is_entry == CPROF_UPY_NONE &&
		    f.owner == CPROF_UPY_OWNED_BY_CSTACK) {
			if (t->nr)
				t->frame[t->nr - 1].code |=
					CPROF_PYFRAME_ENTRY;
			continue;
		}
		if (t->nr == max)
			return CPROF_PY_DEPTH;
		if (f.code & (sizeof(long) - 1) ||
		    !cprof_py_read_code(py, acc, f.code, &type, &first))
			return CPROF_PY_FAULT;
		if (type != code_type)
			return CPROF_PY_NOT_CODE;
		/* a frame not started points just before the first unit */
		idx = ((long)f.instr - (long)(f.code + py->code_adaptive)) / 2;
		if (idx < -1 || idx >= (long)CPROF_PY_INSTR_MAX)
			idx = -1;
		t->frame[t->nr++] = (struct cprof_pyframe){
			.code = f.code | (f.is_entry ? CPROF_PYFRAME_ENTRY : 0),
			.instr = idx,
			.firstlineno = first,
		};
	}
	return CPROF_PY_COMPLETE;
}

/**
 * cprof_pywalk() - the Python frames of the interrupted thread
 * @tsk: the interrupted task, current
 * @h: from the user walk: the interpreter's layout, @h->found set
 * @t: where the record goes: its header and frame[]
 * @max: room in @t->frame[]
 * @acc: the tick's user accesses, each read taking one: a walk that runs
 *	out of them ends CPROF_PY_DEPTH
 *
 * Never sleeps or faults: user memory is read with page faults disabled.
 *
 * Context: the tick (hard interrupt).
 * Return: the number of frames written, also in @t->nr.
 */
int cprof_pywalk(struct task_struct *tsk, const struct cprof_pyhint *h,
		 struct cprof_pytrail *t, int max, struct cprof_uaccess *acc)
{
	const struct cprof_upy *py = &h->py;
	unsigned long ts = 0, frame;

	*t = (struct cprof_pytrail){
		.type = CPROF_TRAIL_PYTHON,
		.text = h->text,
	};
	pagefault_disable();
	t->status = cprof_py_thread(py, acc, h->base + py->runtime,
				    task_pid_vnr(tsk), &ts);
	if (!t->status)
		t->status = cprof_py_first_frame(py, acc, ts, &frame) ?
			    cprof_py_chain(py, acc, h->base, frame, t, max) :
			    CPROF_PY_FAULT;
	pagefault_enable();
	/* a read refused, not failed: cut short, as at the depth */
	if (t->status != CPROF_PY_COMPLETE && cprof_uaccess_spent(acc))
		t->status = CPROF_PY_DEPTH;
	return t->nr;
}
