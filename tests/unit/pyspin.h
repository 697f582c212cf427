/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * pyspin.h - a live CPython for the tests of Python frames (test_pycode,
 * test_pyframes): a script whose thread spins in a method two calls deep
 * (Spinner.cprof_hot_loop at line 5, called from middle at 7, from outer
 * at 10), and its frames walked from outside as the module's tick walks
 * them (kmod/pywalk.c), with process_vm_readv().  After testutil.h.
 */
#ifndef CPROF_PYSPIN_H
#define CPROF_PYSPIN_H

#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cprof_format.h"
#include "python/pyrt.h"

/*
 * python (a path, or a name PATH has) running script (written here), its
 * output in out: its pid, and in *tid its spinning thread's native id
 * once it printed it (0 if it did not within 10 s); -1 if the script
 * could not be written.
 */
static inline pid_t pyspin_start(const char *python, const char *script,
				 const char *out, uint32_t *tid)
{
	char *text = NULL;
	pid_t pid;
	int i;

	*tid = 0;
	if (run("cat > '%s' <<'EOF'\n"
		"import threading\n"
		"class Spinner:\n"
		"    def cprof_hot_loop(self):\n"
		"        x = 0\n"
		"        while True: x = x + 1\n"
		"def middle():\n"
		"    Spinner().cprof_hot_loop()\n"
		"def outer():\n"
		"    print(threading.get_native_id(), flush=True)\n"
		"    middle()\n"
		"outer()\n"
		"EOF\n", script))
		return -1;
	pid = fork();
	if (pid == 0) {
		int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600);

		dup2(fd, 1);
		execlp(python, python, script, (char *)NULL);
		_exit(127);
	}
	for (i = 0; i < 100 && !*tid; i++) {
		usleep(100000);
		free(text);
		text = slurp(out, NULL);
		*tid = text ? (uint32_t)strtoul(text, NULL, 10) : 0;
	}
	free(text);
	return pid;
}

static inline int pyspin_peek(pid_t pid, uint64_t addr, void *v, size_t n)
{
	struct iovec l = { v, n }, r = { (void *)(uintptr_t)addr, n };

	return process_vm_readv(pid, &l, 1, &r, 1, 0) == (ssize_t)n ? 0 : -1;
}

/*
 * The Python frames of thread tid of pid, its interpreter of layout rt
 * mapped at bias, as the tick records them, innermost first: each code
 * object (| CPROF_PYFRAME_ENTRY on the outermost frame of one C call of
 * the loop), instruction, first line.  How many (at most max), or -1.
 */
static inline int pyspin_walk(pid_t pid, uint32_t tid, const struct pyrt *rt,
			      uint64_t bias, struct cprof_pyframe *out,
			      int max)
{
	uint64_t interp, ts, cframe, frame, code, instr, v;
	int n = 0, i, j;

	if (pyspin_peek(pid, rt->runtime + bias + rt->interp_head, &interp, 8))
		return -1;
	for (i = 0; interp && i < 16; i++) {
		if (pyspin_peek(pid, interp + rt->threads_head, &ts, 8))
			return -1;
		for (j = 0; ts && j < 256; j++) {
			if (pyspin_peek(pid, ts + rt->ts_native_tid, &v, 8))
				return -1;
			if ((uint32_t)v == tid)
				goto found;
			if (pyspin_peek(pid, ts + rt->ts_next, &ts, 8))
				return -1;
		}
		if (pyspin_peek(pid, interp + rt->interp_next, &interp, 8))
			return -1;
	}
	return -1;
found:
	if (rt->ts_frame != PYRT_NONE) {
		if (pyspin_peek(pid, ts + rt->ts_frame, &frame, 8))
			return -1;
	} else if (pyspin_peek(pid, ts + rt->ts_cframe, &cframe, 8) ||
		   pyspin_peek(pid, cframe + rt->cframe_current, &frame, 8)) {
		return -1;
	}
	while (frame && n < max) {
		uint8_t owner = 0, entry = 0;
		int32_t first;

		if (pyspin_peek(pid, frame + rt->fr_owner, &owner, 1) ||
		    (rt->fr_is_entry != PYRT_NONE &&
		     pyspin_peek(pid, frame + rt->fr_is_entry, &entry, 1)))
			return -1;
		/* 3.12+: a C-stack entry frame holds no Python function */
		if (rt->fr_is_entry == PYRT_NONE &&
		    owner == PYRT_OWNED_BY_CSTACK) {
			if (n)
				out[n - 1].code |= CPROF_PYFRAME_ENTRY;
		} else {
			if (pyspin_peek(pid, frame + rt->fr_code, &code, 8) ||
			    pyspin_peek(pid, frame + rt->fr_instr, &instr, 8) ||
			    pyspin_peek(pid, code + rt->code_firstlineno,
					&first, 4))
				return -1;
			out[n].code = code | (entry ? CPROF_PYFRAME_ENTRY : 0);
			out[n].instr = (int32_t)(((int64_t)instr -
						  (int64_t)(code +
							    rt->code_adaptive)) / 2);
			out[n].firstlineno = first;
			n++;
		}
		if (pyspin_peek(pid, frame + rt->fr_previous, &frame, 8))
			return -1;
	}
	return n;
}

#endif /* CPROF_PYSPIN_H */
