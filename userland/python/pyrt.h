/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * pyrt - where a CPython interpreter keeps its threads' Python frames, from
 * its ELF file: the executable or libpython that defines _PyRuntime.
 *
 * A file is CPython if its dynamic symbols define _PyRuntime, PyCode_Type
 * and Py_Version (3.11 and later); Py_Version's value, read from the file,
 * is the version (PY_VERSION_HEX), and the layout of the structures on the
 * path from _PyRuntime to a frame's code object is chosen by its minor
 * version (3.11, 3.12, 3.13: x86_64, checked against each version's debug
 * information).  The path, for the thread whose Linux tid is T:
 *
 *   _PyRuntime + interp_head -> PyInterpreterState (+ interp_next ...)
 *     + threads_head -> PyThreadState (+ ts_next ...) whose
 *     + ts_native_tid == T
 *   3.11, 3.12: + ts_cframe -> _PyCFrame + cframe_current -> frame
 *   3.13:       + ts_frame -> frame
 *   frame (_PyInterpreterFrame): + fr_code -> PyCodeObject,
 *     + fr_instr -> the instruction, + fr_previous -> the caller's frame;
 *     + fr_owner == 3 (3.12+): a C-stack entry frame, no Python function;
 *     3.11: + fr_is_entry != 0: the outermost frame of one C call of the
 *     interpreter loop
 *   code: + code_adaptive: its first instruction (2-byte code units).
 *
 * A shortcut to the thread that holds the GIL, which the tick tries before
 * the lists: 3.11: _PyRuntime + tstate_current -> PyThreadState; 3.12+:
 * PyInterpreterState + interp_gil -> the GIL + gil_holder -> its last
 * holder's PyThreadState (3.12 from its debug information, 3.13 from
 * _Py_DebugOffsets).
 *
 * Addresses here are the file's (link-time); a process that maps the file
 * at a bias adds it.  text_delta is p_vaddr - p_offset of the file's
 * executable segment: a process that maps it at start, from file offset
 * pgoff, maps the file at bias start - pgoff - text_delta (a file whose
 * executable segments disagree on it is refused).
 */
#ifndef CPROF_PYRT_H
#define CPROF_PYRT_H

#include <stdbool.h>
#include <stdint.h>

#include <libelf.h>

#include "cprof_format.h"

#define PYRT_NONE	0xffff	/* an offset this version has no field for */

struct pyrt {
	uint32_t version;	/* PY_VERSION_HEX, e.g. 0x030b02f0 */
	uint64_t runtime;	/* &_PyRuntime */
	uint64_t code_type;	/* &PyCode_Type */
	uint64_t text_delta;	/* the executable PT_LOAD's p_vaddr - p_offset */
	/* byte offsets in the structures above */
	uint16_t tstate_current, interp_gil, gil_holder;
	uint16_t interp_head, interp_next, threads_head;
	uint16_t ts_next, ts_native_tid, ts_cframe, ts_frame;
	uint16_t cframe_current;
	uint16_t fr_code, fr_previous, fr_instr, fr_owner, fr_is_entry;
	uint16_t code_firstlineno, code_filename, code_name, code_qualname;
	uint16_t code_linetable, code_adaptive;
	/* where a compact string's characters start: ASCII, and others */
	uint16_t str_ascii_data, str_compact_data;
};

/* fr_owner's value for a C-stack entry frame (3.12, 3.13) */
#define PYRT_OWNED_BY_CSTACK	3

/*
 * Is elf a CPython interpreter whose layout is known?  1 with *rt filled,
 * 0 if it is no CPython (or one of another version: *why says which), -1
 * if its symbols could not be read (*why says why).
 */
int pyrt_detect(Elf *elf, struct pyrt *rt, const char **why);

/*
 * pyrt_detect() of the file open at fd (read with pread(), never mapped:
 * a file that shrinks does not raise SIGBUS), which the caller chose
 * safely (safeopen.h); -1 too if it is no ELF file.
 */
int pyrt_detect_fd(int fd, struct pyrt *rt, const char **why);

/*
 * rt as the module takes it with the file's unwind table: addresses in
 * the file's offset space (less text_delta).
 */
void pyrt_upy(const struct pyrt *rt, struct cprof_upy *upy);

/*
 * The str layout (str_ascii_data, str_compact_data) of CPython version
 * (PY_VERSION_HEX) into rt, as a CPROF_REC_PYCODE's objects are decoded
 * without the interpreter's file; false for a version not known.
 */
bool pyrt_str_layout(uint32_t version, struct pyrt *rt);

#endif /* CPROF_PYRT_H */
